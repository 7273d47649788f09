// MatMulBiasAct: act(op(a)·op(b) + bias) for 2-D Float32 operands, made by the graph pass
// fuse_matmul_bias_activation (src/graph/passes/fusion.cpp), never by user code.
//
// Two kernels for the product and the bias (docs/decisions/graph-fusion-passes.md), chosen per call by
// use_primitive(); the activation is always Kiln's own (Note [activation outside oneDNN]):
// - oneDNN's matmul primitive with the bias fused (no post-op), then the activation over the output. Primitives
//   are cached per (M, N, K, operand layouts, threading) in a cpu::dnnl::PrimCache; a run only swaps the data
//   handles; a configuration oneDNN has no primitive for runs the sgemm kernel. oneDNN's matmul sums in its own
//   order: results match the unfused ops to ~1e-6 relative, not bit for bit.
// - sgemm, as BatchMatMul does, then the bias and the activation in one loop over the output: bit for bit the
//   unfused graph's numbers.
// Measured on the 2-core dev machine, one thread, Dense-sized problems (µs per call, sgemm+loop vs primitive):
//   32x10·10x16 ReLU 1.5–2.0 vs 2.2–2.3; 32x16·16x1 ReLU 1.0 vs 2.2; 64x64·64x64 ReLU 6.3 vs 5.6.
// So: the primitive from 2·64³ flops up, sgemm below.
//
// Note [activation outside oneDNN]: until issue 22 the primitive ran the activation as an oneDNN eltwise post-op.
// oneDNN JIT-compiles its post-ops per ISA, with approximations of its own: on AVX-512 (Zen 4) the erf-GeLU
// post-op gave NaN for ±inf inputs where the unfused GeLU gives ±inf/0 (71 of 6,912 elements of the registry's
// special-value test), while the AVX2 kernel happened to agree. A fused op must give the unfused ops' values on
// every CPU, so the activation now runs through the same vectorized functions as the unfused Float32 kernels
// (vmath.h; compiled once for x86-64-v3, with no runtime dispatch), over the rows of the output, split over the
// threads for large outputs. Kiln uses no other oneDNN eltwise primitive or post-op (tests/python/
// test_isa_independence.py checks the source for them). The cost is one more pass over the output, against a
// product of 2·K flops per output element.
#include <omp.h>

#include <algorithm>

#include "../backend/cpu/dnnl_utils.h"
#include "elementwise.h"
#include "families.h"
#include "fused.h"
#include "vmath.h"

namespace kiln {
namespace fused {
namespace {
MatMulPath g_path = MatMulPath::Auto;
}
void set_matmul_path(MatMulPath p) { g_path = p; }
}  // namespace fused

namespace {
using TV = std::vector<Tensor>;
using fused::Act;
namespace dn = cpu::dnnl;

Act act_of(const Attrs& a) {
  int64_t v = a.i("activation");
  KILN_CHECK(v >= 0 && v <= int64_t(Act::GeluTanh), Value, "For 'MatMulBiasAct', unknown activation ", v, ".");
  return Act(v);
}

std::vector<TensorMeta> infer_mba(const TV& in, const Attrs& a) {
  const Tensor &x = in[0], &y = in[1], &bias = in[2];
  act_of(a);
  KILN_CHECK(x.ndim() == 2 && y.ndim() == 2, Value, "For 'MatMulBiasAct', both operands must be 2-D, but got ",
             shape_str(x.shape()), " and ", shape_str(y.shape()), ".");
  KILN_CHECK(x.dtype() == DType::Float32 && y.dtype() == DType::Float32 && bias.dtype() == DType::Float32, Type,
             "For 'MatMulBiasAct', all inputs must be Float32, but got ", dtype_name(x.dtype()), ", ",
             dtype_name(y.dtype()), " and ", dtype_name(bias.dtype()), ".");
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  int64_t M = x.shape()[ta ? 1 : 0], K = x.shape()[ta ? 0 : 1];
  int64_t K2 = y.shape()[tb ? 1 : 0], N = y.shape()[tb ? 0 : 1];
  KILN_CHECK(K == K2, Value, "For 'MatMulBiasAct', the inner dimensions must match, but got ", K, " and ", K2, ".");
  KILN_CHECK(bias.shape() == Shape{N} || bias.shape() == (Shape{1, N}), Value, "For 'MatMulBiasAct', the bias must be "
             "of shape [", N, "] or [1, ", N, "], but got ", shape_str(bias.shape()), ".");
  return {{{M, N}, DType::Float32}};
}

// Threads only pay off for large products (the rule of BatchMatMul, src/ops/matmul.cpp).
struct Threads {
  int saved;
  bool single;
  explicit Threads(double flops) : saved(omp_get_max_threads()), single(flops < 2.0 * 128 * 128 * 128) {
    if (single) omp_set_num_threads(1);
  }
  ~Threads() { omp_set_num_threads(saved); }
};

// How a 2-D operand sits in memory (as BatchMatMul's kernel reads it): row-major with leading dimension ld, or
// column-major (trans flips), or neither (then it is copied).
struct Layout { bool ok; bool trans; int64_t ld; };
Layout layout(const Tensor& t, bool logical_trans) {
  int64_t rows = t.shape()[0], cols = t.shape()[1], s0 = t.strides()[0], s1 = t.strides()[1];
  if ((s1 == 1 || cols == 1) && s0 >= std::max<int64_t>(cols, 1)) return {true, logical_trans, s0};
  if ((s0 == 1 || rows == 1) && s1 >= std::max<int64_t>(rows, 1)) return {true, !logical_trans, s1};
  return {false, false, 0};
}

// Outputs from this many elements up have their epilogue split over the threads (an elementwise pass; the values
// do not depend on the split: vmath.h works in whole packets of 8 at any offset).
constexpr int64_t kParallelEpilogueMin = int64_t(1) << 15;

// For each row i of the M x N output: row += bias (when bias is not null), then row = act(row). Relu keeps NaN
// (fused::relu_f, as the unfused op); Sigmoid/Tanh/GeLU use vmath's functions, as the unfused Float32 kernels do,
// so that the results match them bit for bit.
void epilogue(float* o, const float* bias, int64_t M, int64_t N, Act act) {
  const bool par = M > 1 && M * N >= kParallelEpilogueMin && omp_get_max_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t i = 0; i < M; ++i) {
    float* row = o + i * N;
    if (bias)
      for (int64_t j = 0; j < N; ++j) row[j] = row[j] + bias[j];
    switch (act) {
      case Act::None: break;
      case Act::Relu:
        for (int64_t j = 0; j < N; ++j) row[j] = fused::relu_f(row[j]);
        break;
      case Act::Sigmoid: vmath::apply(vmath::Fn::Sigmoid, row, row, N); break;
      case Act::Tanh: vmath::apply(vmath::Fn::Tanh, row, row, N); break;
      case Act::GeluErf: vmath::apply(vmath::Fn::GeluErf, row, row, N); break;
      case Act::GeluTanh: vmath::apply(vmath::Fn::GeluTanh, row, row, N); break;
    }
  }
}

// ---- the oneDNN primitive path (src/backend/cpu/dnnl_utils.h: engine, stream, Note [primitive cache]) ----
// Logical (rows, cols) with row-major (trans = false) or column-major storage of leading dimension ld.
dnnl_memory_desc_t md2(int64_t rows, int64_t cols, bool trans, int64_t ld) {
  dnnl_memory_desc_t md = nullptr;
  dnnl_dims_t dims = {rows, cols};
  dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
  if (dnnl_memory_desc_create_with_strides(&md, 2, dims, dnnl_f32, strides) != dnnl_success) return nullptr;
  return md;
}

// The matmul primitive with the bias (no post-op: Note [activation outside oneDNN]); an empty Prim if oneDNN
// refuses.
dn::PrimPtr make_prim(int64_t M, int64_t N, int64_t K, Layout la, Layout lb) {
  dnnl_memory_desc_t src = md2(M, K, la.trans, la.ld), wei = md2(K, N, lb.trans, lb.ld);
  dnnl_memory_desc_t bias = md2(1, N, false, N), dst = md2(M, N, false, N);
  dn::Attr attr;  // user-managed scratchpad (dnnl_utils.h, Note [threads])
  dnnl_primitive_desc_t pd = nullptr;
  bool ok = src && wei && bias && dst;
  ok = ok && dnnl_matmul_primitive_desc_create(&pd, dn::engine(), src, wei, bias, dst, attr.a) == dnnl_success;
  dn::PrimPtr p;
  if (ok)
    p = dn::make_prim(pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
  for (auto m : {src, wei, bias, dst})
    if (m) dnnl_memory_desc_destroy(m);
  return p;
}

// Runs the cached primitive; false if oneDNN has none for this configuration (the caller uses sgemm).
bool run_primitive(const float* A, Layout la, const float* B, Layout lb, const float* bias, float* C, int64_t M,
                   int64_t N, int64_t K, bool single_thread) {
  static auto* cache = new dn::PrimCache();  // never destroyed: primitives outlive static destruction order
  std::vector<int64_t> key{M, N, K, la.trans, la.ld, lb.trans, lb.ld, single_thread};
  return cache->run(key, [&] { return make_prim(M, N, K, la, lb); },
                    {const_cast<float*>(A), const_cast<float*>(B), const_cast<float*>(bias), C}, "MatMulBiasAct");
}

bool use_primitive(double flops) {
  switch (fused::g_path) {
    case fused::MatMulPath::Sgemm: return false;
    case fused::MatMulPath::Primitive: return true;
    default: break;
  }
  return flops >= 2.0 * 64 * 64 * 64;
}

void run_mba(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0], y = in[1], bias = in[2].contiguous();
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  Act act = act_of(a);
  Layout lx = layout(x, ta), ly = layout(y, tb);
  if (!lx.ok) { x = x.contiguous(); lx = layout(x, ta); }
  if (!ly.ok) { y = y.contiguous(); ly = layout(y, tb); }
  const int64_t M = out[0].shape()[0], N = out[0].shape()[1], K = x.shape()[ta ? 0 : 1];
  float* C = out[0].data<float>();
  if (M == 0 || N == 0) return;
  const double flops = 2.0 * double(M) * double(N) * double(K);
  Threads threads(flops);
  // The primitive adds the bias; the activation is Kiln's (Note [activation outside oneDNN]). (oneDNN's relu
  // post-op also turned NaN into 0, where ReLU keeps it, as NumPy's maximum, torch.relu and the unfused op do.)
  if (K > 0 && use_primitive(flops) &&
      run_primitive(x.data<float>(), lx, y.data<float>(), ly, bias.data<float>(), C, M, N, K, threads.single)) {
    epilogue(C, nullptr, M, N, act);
    return;
  }
  if (K == 0) {
    std::fill(C, C + M * N, 0.f);
  } else {
    dnnl_status_t st = dnnl_sgemm(lx.trans ? 'T' : 'N', ly.trans ? 'T' : 'N', M, N, K, 1.0f, x.data<float>(), lx.ld,
                                  y.data<float>(), ly.ld, 0.0f, C, N);
    KILN_CHECK(st == dnnl_success, Runtime, "For 'MatMulBiasAct', oneDNN sgemm failed with status ", int(st), ".");
  }
  epilogue(C, bias.data<float>(), M, N, act);
}

// Decomposed with kiln::ops: the activation's gradient (from the output; GeLU re-computes its input), the bias
// gradient summed over rows, and BatchMatMul's bprop for the product.
TV bprop_mba(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor &A = in[0], &B = in[1], &bias = in[2], &y = out[0];
  Act act = act_of(a);
  if (!g[0].defined()) return {Tensor(), Tensor(), Tensor()};
  Attrs mm{{"transpose_a", a.b("transpose_a")}, {"transpose_b", a.b("transpose_b")}};
  auto sc = [&](double v) { return Tensor::scalar(v, y.dtype(), true); };
  Tensor dz;
  switch (act) {
    case Act::None: dz = g[0]; break;
    case Act::Relu: dz = ops::select(ops::greater(y, sc(0.0)), g[0], ops::zeros_like(g[0])); break;
    case Act::Sigmoid: dz = ops::mul(g[0], ops::mul(y, ops::sub(sc(1.0), y))); break;
    case Act::Tanh: dz = ops::mul(g[0], ops::sub(sc(1.0), ops::square(y))); break;
    case Act::GeluErf:
    case Act::GeluTanh: {
      Attrs ga{{"approximate", act == Act::GeluTanh}};
      Tensor z = ops::add(apply1(OpId::MatMul, {A, B}, mm), bias);
      dz = get_op(OpId::Gelu).bprop({z}, {y}, g, ga)[0];
      break;
    }
  }
  TV gab = get_op(OpId::MatMul).bprop({A, B}, {}, {dz}, mm);
  return {gab[0], gab[1], ew::reduce_grad(dz, bias)};
}

}  // namespace

namespace ops_impl {
void register_fused_matmul() {
  OpDef d;
  d.id = OpId::MatMulBiasAct;
  d.infer = infer_mba;
  d.cpu = run_mba;
  d.bprop = bprop_mba;
  register_op(d);
}
}  // namespace ops_impl
}  // namespace kiln
