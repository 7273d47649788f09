// Fused ops made by the graph passes (src/graph/passes/fusion.cpp), defined in src/ops/fused.cpp and
// src/ops/fused_matmul.cpp: the encodings of their attributes, shared by the passes and the kernels, and the
// scalar activation functions shared by both kernels.
//
// Note [fused kernels compute what the unfused ops compute]: every scalar function below is the expression of the
// functor of the op it stands for (src/ops/elementwise_unary.cpp, elementwise_binary.cpp), evaluated in the same
// dtype, one op at a time (results are stored between ops, so no FMA contraction crosses an op boundary). A fused
// graph therefore gives the unfused graph's numbers bit for bit, except where a kernel uses oneDNN's matmul
// primitive (large MatMulBiasAct problems: another summation order, oneDNN's activation approximations).
#pragma once
#include <cmath>
#include <cstdint>

#include "kiln/op.h"

namespace kiln::fused {

// ---- FusedElementwise ----
// Attributes: "program" (vector<int64_t>) and "dtype" (Float32 or Float64, the dtype of every value of the group).
// The program is a flat list of instructions (opcode, a, b): each defines the next register; registers
// 0..n_inputs-1 hold the inputs, the last register is the output; b = -1 for unary ops. An input is either of
// the output's shape and dtype, or 0-d (any dtype: converted to `dtype` as the unfused op would).
enum class EwOp : int64_t {
  Add, Sub, Mul, Div, Pow, Maximum, Minimum,                                     // binary
  Neg, Exp, Log, Sqrt, Rsqrt, Abs, Square, Erf, Relu, Sigmoid, Tanh, GeluErf, GeluTanh,  // unary
  Log1p,                                                                                 // unary
  kCount
};
inline bool is_binary(EwOp op) { return op <= EwOp::Minimum; }
// The EwOp of a graph node, if its op is one the elementwise fusion takes (false otherwise).
bool ew_opcode(OpId op, const Attrs& attrs, EwOp* out);
// The op and attributes an EwOp stands for (used by the bprop, which re-runs the ops).
OpId ew_op_id(EwOp op);
Attrs ew_attrs(EwOp op);

// ---- MatMulBiasAct ----
// Inputs: a (2-D), b (2-D), bias (N,) or (1, N), all Float32. Attributes: transpose_a, transpose_b (bool),
// activation (int64, an Act). Output: act(op(a)·op(b) + bias), Float32 (M, N).
enum class Act : int64_t { None, Relu, Sigmoid, Tanh, GeluErf, GeluTanh };
const char* act_name(Act a);
// The epilogue an activation op folds into (the schema's `act` fields; Act::None for any other op).
Act epilogue_act(OpId op, const Attrs& attrs);
// MatMulBiasAct's kernel: oneDNN's matmul primitive with post-ops, or sgemm and a fused bias + activation loop.
// Auto picks by problem size (fused_matmul.cpp); forcing one is for tests and benchmarks.
enum class MatMulPath { Auto, Sgemm, Primitive };
void set_matmul_path(MatMulPath path);

// ---- scalar functions (the unfused functors' expressions) ----
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluC = 0.044715;
// NaN propagates (as the unfused ReLU: np.maximum(nan, 0) = nan).
template <typename T> inline T relu_f(T x) { return (x > T(0) || std::isnan(x)) ? x : T(0); }
template <typename T> inline T sigmoid_f(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <typename T> inline T tanh_f(T x) { return std::tanh(x); }
template <typename T> inline T gelu_erf_f(T x) { return T(0.5) * x * (T(1) + std::erf(x / T(kSqrt2))); }
template <typename T> inline T gelu_tanh_f(T x) {
  return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x)));
}
template <typename T> inline T max_f(T x, T y) {
  if (std::isnan(x) || std::isnan(y)) return x + y;
  return x > y ? x : y;
}
template <typename T> inline T min_f(T x, T y) {
  if (std::isnan(x) || std::isnan(y)) return x + y;
  return x < y ? x : y;
}

}  // namespace kiln::fused
