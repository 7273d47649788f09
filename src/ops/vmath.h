// Vectorized float32 transcendentals (exp, tanh, sigmoid, erf, erfinv, GELU) on Eigen's packet math, shared by the
// unfused kernels (elementwise_unary.cpp), FusedElementwise (fused.cpp) and MatMulBiasAct's epilogue
// (fused_matmul.cpp), so that every path gives the same numbers bit for bit (Note [fused kernels compute what the
// unfused ops compute], fused.h).
//
// Note [vectorized float32 transcendentals]: each element's result depends only on its value, never on its
// position: arrays are processed in whole packets of 8 (a tail is padded into one packet), never with Eigen's
// scalar peeling, so a strided gather, a contiguous run and a fused block agree. Accuracy against a float64
// reference (measured on 2M points in [-20, 20], see docs/decisions.md): exp ≤ 1.2e-7 relative, tanh ≤ 2.7e-7,
// erf ≤ 3.3e-7 absolute; sigmoid is 1/(1+exp(−x)) on the vector exp. Special values: NaN propagates, ±inf give the
// limits (exp(−inf) = 0, tanh(±inf) = ±1, erf(±inf) = ±1). Eigen's exp flushes x < −88.38 to 2.9e-39 instead of
// the subnormal (or 0) result: those lanes (rare) are recomputed with std::exp. Float64 keeps the scalar libm.
#pragma once
#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::vmath {

#ifdef EIGEN_VECTORIZE_AVX
using Packet = Eigen::internal::Packet8f;
#else
using Packet = Eigen::internal::Packet4f;
#endif
constexpr int kLanes = Eigen::internal::unpacket_traits<Packet>::size;

namespace ei = Eigen::internal;

inline Packet exp_p(const Packet& x) {
  Packet y = ei::pexp(x);
  const Packet low = ei::pcmp_lt(x, ei::pset1<Packet>(-87.0f));
  if (ei::predux_any(low)) {  // subnormal / zero results: libm (Eigen clamps them to 2.9e-39)
    alignas(64) float xs[kLanes], ys[kLanes];
    ei::pstore(xs, x);
    ei::pstore(ys, y);
    for (int i = 0; i < kLanes; ++i)
      if (xs[i] < -87.0f) ys[i] = std::exp(xs[i]);
    y = ei::pload<Packet>(ys);
  }
  return y;
}
inline Packet tanh_p(const Packet& x) { return ei::ptanh(x); }
inline Packet erf_p(const Packet& x) { return ei::generic_fast_erf_float(x); }
// 1 / (1 + exp(−x)), the unfused Sigmoid's formula.
inline Packet sigmoid_p(const Packet& x) {
  const Packet one = ei::pset1<Packet>(1.0f);
  return ei::pdiv(one, ei::padd(one, exp_p(ei::pnegate(x))));
}
// Note [vectorized erfinv]: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), the
// single-precision form: w = −log((1 − x)(1 + x)); x·P(w − 2.5) for w < 5, else x·Q(√w − 3) (degree-8
// polynomials). Max error 3.6 float32 ulps against SciPy's float64 erfinv over (−1, 1), the last ulps below 1
// included (measured on a dense grid: tests/python/test_erfinv_atan2.py). ±1 give ±inf (w = inf, √w·... = inf,
// times x), |x| > 1 and NaN give NaN (log of a negative). 1 − x is exact for x ≥ ½, so the tail keeps its bits.
inline Packet erfinv_p(const Packet& x) {
  static constexpr float kA[9] = {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f,
                                  0.00021858087f, -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f};
  static constexpr float kB[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f,
                                  0.00573950773f, -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f};
  const Packet one = ei::pset1<Packet>(1.0f);
  const Packet w = ei::pnegate(ei::plog(ei::pmul(ei::psub(one, x), ei::padd(one, x))));
  const Packet small = ei::pcmp_lt(w, ei::pset1<Packet>(5.0f));
  const Packet t1 = ei::psub(w, ei::pset1<Packet>(2.5f));
  const Packet t2 = ei::psub(ei::psqrt(w), ei::pset1<Packet>(3.0f));
  Packet p = ei::pset1<Packet>(kA[0]), q = ei::pset1<Packet>(kB[0]);
  for (int k = 1; k < 9; ++k) {
    p = ei::pmadd(p, t1, ei::pset1<Packet>(kA[k]));
    q = ei::pmadd(q, t2, ei::pset1<Packet>(kB[k]));
  }
  const Packet y = ei::pmul(ei::pselect(small, p, q), x);
  // |x| == 1: w = +inf, where Q(inf) = −inf (its leading coefficient): ±inf set here; outside [−1, 1] the log of
  // a negative number is NaN already, as is NaN in.
  const Packet edge = ei::pcmp_eq(ei::pabs(x), one);
  return ei::pselect(edge, ei::pmul(ei::pset1<Packet>(std::numeric_limits<float>::infinity()), x), y);
}
// The same formula for one float (float16/bfloat16 compute in float32 through it).
inline float erfinv_scalar(float x) {
  alignas(64) float buf[kLanes] = {};
  buf[0] = x;
  ei::pstore(buf, erfinv_p(ei::pload<Packet>(buf)));
  return buf[0];
}
// ½·x·(1 + erf(x/√2))
inline Packet gelu_erf_p(const Packet& x) {
  const Packet e = erf_p(ei::pdiv(x, ei::pset1<Packet>(1.4142135623730951f)));
  return ei::pmul(ei::pmul(ei::pset1<Packet>(0.5f), x), ei::padd(ei::pset1<Packet>(1.0f), e));
}
// ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (Hendrycks & Gimpel 2016)
inline Packet gelu_tanh_p(const Packet& x) {
  const Packet x3 = ei::pmul(ei::pmul(ei::pmul(ei::pset1<Packet>(0.044715f), x), x), x);
  const Packet t = tanh_p(ei::pmul(ei::pset1<Packet>(0.7978845608028654f), ei::padd(x, x3)));
  return ei::pmul(ei::pmul(ei::pset1<Packet>(0.5f), x), ei::padd(ei::pset1<Packet>(1.0f), t));
}

// y[i] = f(x[i]) for n floats (x and y may be the same array); whole packets only (see the Note).
template <typename F>
inline void apply(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) ei::pstoreu(y + i, f(ei::ploadu<Packet>(x + i)));
  if (i < n) {
    alignas(64) float buf[kLanes] = {};
    for (int64_t k = 0; k < n - i; ++k) buf[k] = x[i + k];
    ei::pstore(buf, f(ei::pload<Packet>(buf)));
    for (int64_t k = 0; k < n - i; ++k) y[i + k] = buf[k];
  }
}

// The vectorized functions, by name, for the kernels' dispatch.
enum class Fn { Exp, Tanh, Sigmoid, Erf, Erfinv, GeluErf, GeluTanh };
inline void apply(Fn fn, const float* x, float* y, int64_t n) {
  switch (fn) {
    case Fn::Exp: apply(x, y, n, exp_p); break;
    case Fn::Tanh: apply(x, y, n, tanh_p); break;
    case Fn::Sigmoid: apply(x, y, n, sigmoid_p); break;
    case Fn::Erf: apply(x, y, n, erf_p); break;
    case Fn::Erfinv: apply(x, y, n, erfinv_p); break;
    case Fn::GeluErf: apply(x, y, n, gelu_erf_p); break;
    case Fn::GeluTanh: apply(x, y, n, gelu_tanh_p); break;
  }
}

}  // namespace kiln::vmath

namespace kiln {
class Tensor;
namespace vmath {
// out = fn(x) for Float32 `x` (any strides) into contiguous Float32 `out` of the same shape (vec_unary.cpp).
void run_float32(Fn fn, const Tensor& x, const Tensor& out);
}  // namespace vmath
}  // namespace kiln
