// GeLUGrad(dy, x), attr approximate (bool) → dx = dy·GeLU'(x): GeLU's backward in one pass (MindSpore's GeLUGrad).
// dy, x: one float dtype and shape; dx has it. The derivative (the formulas of GeLU's composite bprop,
// elementwise_unary.cpp, evaluated in the same order):
//   tanh form: with u2 = 2√(2/π)·(x + c·x³) (c = 0.044715) and s = σ(u2) = ½(1 + tanh(u2/2)),
//              GeLU'(x) = s + (x·(1 − s))·(s·2√(2/π)(1 + 3c·x²))                   [Hendrycks & Gimpel 2016]
//   erf form:  GeLU'(x) = Φ(x) + x·φ(x) = ½(1 + erf(x/√2)) + x·exp(−x²/2)/√(2π).
// Float32 runs on vmath's packets (vector sigmoid, erf and exp: Note [vectorized float32 transcendentals]); Float64
// on libm; Float16/BFloat16 are computed in float32. Contiguous inputs are split over the OpenMP threads from
// cpu::kParallelMin elements (each element's value does not depend on the split).
//
// Note [fused GeLU backward]: GeLU's bprop composed 13 elementwise ops; in Graph mode they fused into one
// FusedElementwise block of 19 instructions, which still cost ~4 ns per element (2.1 ms for the Transformer's
// (16, 64, 512) activation on one thread, against 0.41 ms for GeLU's forward), each instruction a pass over the block.
// GeLU's bprop emits this op when the backward pass is not itself recorded (autodiff::grad_level() == 0), in both
// modes, so PyNative and Graph mode compute the same numbers; a recorded backward (higher derivatives) keeps the
// composition, whose own gradients are exact. The kernel has no bprop (differentiable = false).
#include <cmath>

#include "../backend/cpu/loops.h"
#include "elementwise.h"
#include "families.h"
#include "fused.h"
#include "vmath.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using fused::kGeluC;
using fused::kSqrt2;
using fused::kSqrt2OverPi;
constexpr double kSqrtPi = 1.7724538509055159;

std::vector<TensorMeta> infer_gelu_grad(const TV& in, const Attrs&) {
  const Tensor &dy = in[0], &x = in[1];
  KILN_CHECK(is_floating(x.dtype()) && dy.dtype() == x.dtype() && dy.shape() == x.shape(), Type,
             "For 'GeLUGrad', 'dy' and 'x' must be float tensors of one shape and dtype, but got ",
             dtype_name(dy.dtype()), shape_str(dy.shape()), " and ", dtype_name(x.dtype()), shape_str(x.shape()), ".");
  return {{x.shape(), x.dtype()}};
}

// The derivative for one value, in the compute type C (Float64; the float32 tail shares the packet code).
template <typename C>
C gelu_grad_scalar(C x, bool approximate) {
  if (approximate) {
    const C x2 = x * x;
    const C u2 = x * (x2 * C(2 * kSqrt2OverPi * kGeluC) + C(2 * kSqrt2OverPi));
    const C e = std::exp(-u2), s = C(1) / (C(1) + e);
    const C oms = u2 < C(0) ? C(1) - s : e * s;  // 1 − s without cancellation (see gelu_grad_p)
    const C du2 = x2 * C(6 * kSqrt2OverPi * kGeluC) + C(2 * kSqrt2OverPi);
    return s + (x * oms) * (s * du2);
  }
  const C cdf = C(0.5) * (C(1) + std::erf(x * C(1.0 / kSqrt2)));
  const C pdf = C(1.0 / (kSqrt2 * kSqrtPi)) * std::exp((x * x) * C(-0.5));
  return cdf + x * pdf;
}

// dx = dy·GeLU'(x) for one packet.
template <bool Approx>
vmath::Packet gelu_grad_p(const vmath::Packet& dy, const vmath::Packet& x) {
  namespace ei = vmath::ei;
  using P = vmath::Packet;
  const P one = ei::pset1<P>(1.0f);
  const P x2 = ei::pmul(x, x);
  P d;
  if constexpr (Approx) {
    const P b = ei::pset1<P>(float(2 * kSqrt2OverPi));
    const P u2 = ei::pmul(x, ei::padd(ei::pmul(x2, ei::pset1<P>(float(2 * kSqrt2OverPi * kGeluC))), b));
    // s = σ(u2) = 1/(1 + e), e = exp(−u2) (vmath's sigmoid), and 1 − s = e·s for u2 ≥ 0: 1 − s rounded s's last
    // bits away where s is near 1 (x ≈ 4–6: absolute error 2e-6 on a derivative of ~1; fresh tester). For u2 < 0
    // (e may be inf) 1 − s has no cancellation.
    const P e = vmath::exp_p(ei::pnegate(u2));
    const P s = ei::pdiv(one, ei::padd(one, e));
    const P oms = ei::pselect(ei::pcmp_lt(u2, ei::pset1<P>(0.0f)), ei::psub(one, s), ei::pmul(e, s));
    const P du2 = ei::padd(ei::pmul(x2, ei::pset1<P>(float(6 * kSqrt2OverPi * kGeluC))), b);
    d = ei::padd(s, ei::pmul(ei::pmul(x, oms), ei::pmul(s, du2)));
  } else {
    const P cdf = ei::pmul(ei::pset1<P>(0.5f),
                           ei::padd(one, vmath::erf_p(ei::pmul(x, ei::pset1<P>(float(1.0 / kSqrt2))))));
    const P pdf = ei::pmul(ei::pset1<P>(float(1.0 / (kSqrt2 * kSqrtPi))),
                           vmath::exp_p(ei::pmul(x2, ei::pset1<P>(-0.5f))));
    d = ei::padd(cdf, ei::pmul(x, pdf));
  }
  return ei::pmul(dy, d);
}

// n contiguous floats; whole packets only (a tail is padded into one packet), as vmath::apply.
template <bool Approx>
void gelu_grad_f32(const float* dy, const float* x, float* dx, int64_t n) {
  namespace ei = vmath::ei;
  using P = vmath::Packet;
  constexpr int64_t L = vmath::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) ei::pstoreu(dx + i, gelu_grad_p<Approx>(ei::ploadu<P>(dy + i), ei::ploadu<P>(x + i)));
  if (i < n) {
    alignas(64) float bd[L] = {}, bx[L] = {};
    for (int64_t k = 0; k < n - i; ++k) { bd[k] = dy[i + k]; bx[k] = x[i + k]; }
    ei::pstore(bd, gelu_grad_p<Approx>(ei::pload<P>(bd), ei::pload<P>(bx)));
    for (int64_t k = 0; k < n - i; ++k) dx[i + k] = bd[k];
  }
}

void run_gelu_grad(const TV& in, TV& out, const Attrs& a) {
  const bool approx = a.b("approximate");
  const DType t = out[0].dtype();
  const int64_t n = out[0].numel();
  if (t == DType::Float64) {
    Tensor dy = in[0].contiguous(), x = in[1].contiguous();
    const double *pd = dy.data<double>(), *px = x.data<double>();
    double* po = out[0].data<double>();
    cpu::parallel_runs(n, [&](int64_t s, int64_t len) {
      for (int64_t i = s; i < s + len; ++i) po[i] = pd[i] * gelu_grad_scalar<double>(px[i], approx);
    });
    return;
  }
  Tensor dy = ew::as_dtype(in[0], DType::Float32).contiguous(), x = ew::as_dtype(in[1], DType::Float32).contiguous();
  Tensor o = t == DType::Float32 ? out[0] : Tensor::empty(out[0].shape(), DType::Float32);
  const float *pd = dy.data<float>(), *px = x.data<float>();
  float* po = o.data<float>();
  cpu::parallel_runs(n, [&](int64_t s, int64_t len) {
    if (approx) gelu_grad_f32<true>(pd + s, px + s, po + s, len);
    else gelu_grad_f32<false>(pd + s, px + s, po + s, len);
  });
  if (t != DType::Float32) copy_into(o, out[0]);
}

}  // namespace

namespace ops_impl {
void register_gelu_grad() {
  OpDef d;
  d.id = OpId::GeluGrad;
  d.infer = infer_gelu_grad;
  d.cpu = run_gelu_grad;
  d.differentiable = false;  // emitted only by unrecorded backward passes (Note [fused GeLU backward])
  register_op(d);
}
}  // namespace ops_impl
}  // namespace kiln
