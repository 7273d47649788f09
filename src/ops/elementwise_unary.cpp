// Unary elementwise ops, activations, cast, identity and stop_gradient.
#include <cmath>

#include "elementwise.h"
#include "kiln/autodiff.h"
#include "families.h"
#include "vmath.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
constexpr double kSqrt2 = 1.4142135623730951, kSqrtPi = 1.7724538509055159;
constexpr double kSqrt2OverPi = 0.7978845608028654;  // √(2/π)
constexpr double kGeluC = 0.044715;                  // tanh approximation, Hendrycks & Gimpel (2016)

Tensor sc(double v, const Tensor& like) { return Tensor::scalar(v, like.dtype(), true); }

// Output dtype: same as the input, or float32 for integer/bool inputs of float-only ops.
template <bool FloatOnly>
std::vector<TensorMeta> infer_unary(const TV& in, const Attrs&) {
  return {{in[0].shape(), FloatOnly ? ew::float_dtype(in[0].dtype()) : in[0].dtype()}};
}

// Float-only functors are instantiated for the float types only (their inputs were converted to float).
template <template <typename> class F, bool FloatOnly = false>
void run_unary(const TV& in, TV& out, const Attrs& attrs) {
  DType t = out[0].dtype();
  Tensor x = ew::as_dtype(in[0], t);
  KILN_DISPATCH(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!FloatOnly || std::is_floating_point_v<compute_t<T>>) ew::unary_loop<T, T>(x, out[0], F<compute_t<T>>{attrs});
  });
}
template <template <typename> class F> void run_float(const TV& in, TV& out, const Attrs& a) { run_unary<F, true>(in, out, a); }
// Float32 goes through the vectorized vmath functions (the same as the fused kernels'), other dtypes through F.
template <template <typename> class F, vmath::Fn V>
void run_vec(const TV& in, TV& out, const Attrs& a) {
  if (out[0].dtype() == DType::Float32) vmath::run_float32(V, ew::as_dtype(in[0], DType::Float32), out[0]);
  else run_unary<F, true>(in, out, a);
}

// Bit operations on integer and Bool dtypes (the schema's `integer` rule rejects the others at inference).
template <template <typename> class F>
void run_integer_unary(const TV& in, TV& out, const Attrs& attrs) {
  DType t = out[0].dtype();
  Tensor x = ew::as_dtype(in[0], t);
  KILN_DISPATCH_ALL(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) ew::unary_loop<T, T>(x, out[0], F<T>{attrs});
    else fail_unsupported_dtype(t);
  });
}

#define FUNCTOR(NAME, EXPR)                                           \
  template <typename C> struct NAME {                                 \
    const Attrs& attrs;                                               \
    C operator()(C x) const { return EXPR; }                          \
  };

template <typename C> C neg_v(C x) { if constexpr (std::is_same_v<C, bool>) return x; else if constexpr (std::is_unsigned_v<C>) return C(-x); else return -x; }
template <typename C> C abs_v(C x) { if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>) return x; else return x < 0 ? C(-x) : (x == C(0) ? C(0) : x); }  // -0.0 → +0.0 (NumPy)
// NaN propagates through sign and relu as in NumPy (np.sign(nan) = nan, np.maximum(nan, 0) = nan) and PyTorch
// (torch.relu(nan) = nan): comparisons with NaN are false, so the plain formulas would turn NaN into 0.
template <typename C> C sign_v(C x) {
  if constexpr (std::is_same_v<C, bool>) return x;
  else if constexpr (std::is_floating_point_v<C>) return std::isnan(x) ? x : C((C(0) < x) - (x < C(0)));
  else return C((C(0) < x) - (x < C(0)));
}
template <typename C> C relu_v(C x) {
  if constexpr (std::is_floating_point_v<C>) return (x > C(0) || std::isnan(x)) ? x : C(0);
  else return x > C(0) ? x : C(0);
}
template <typename C> C to_c(double v) { return static_cast<C>(v); }

template <typename C> C invert_v(C x) { if constexpr (std::is_same_v<C, bool>) return !x; else return C(~x); }
FUNCTOR(InvertF, invert_v(x))
FUNCTOR(NegF, neg_v(x))
FUNCTOR(ExpF, std::exp(x))
FUNCTOR(LogF, std::log(x))
FUNCTOR(Log1pF, std::log1p(x))
FUNCTOR(SqrtF, std::sqrt(x))
FUNCTOR(RsqrtF, C(1) / std::sqrt(x))
FUNCTOR(AbsF, abs_v(x))
FUNCTOR(SignF, sign_v(x))
template <typename C> C square_v(C x) { if constexpr (std::is_same_v<C, bool>) return x; else return C(x * x); }
FUNCTOR(SquareF, square_v(x))
FUNCTOR(ErfF, std::erf(x))
// erfinv: float (float16/bfloat16 computed in float32) through vmath's formula (Note [vectorized erfinv]); double
// from that start refined by Newton steps in double: on erf(y) = |x| for |x| <= 1/2, on log erfc(y) = log(1 − |x|)
// above (1 − |x| is exact there, and log erfc is nearly linear in y², so the tail converges from the float start).
double erfinv_f64(double x) {
  const double a = std::fabs(x);
  if (!(a <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (a == 0.0) return x;
  double y = std::fabs(double(vmath::erfinv_scalar(float(a))));
  if (a < 1.0) {
    if (!(y > 0.0) || !std::isfinite(y)) y = std::sqrt(-std::log((1.0 - a) * (1.0 + a)));  // float under/overflow
    constexpr double kTwoOverSqrtPi = 1.1283791670955126;
    if (a <= 0.5) {
      for (int k = 0; k < 3; ++k) y -= (std::erf(y) - a) / (kTwoOverSqrtPi * std::exp(-y * y));
    } else {
      const double t = 1.0 - a, log_t = std::log(t);
      for (int k = 0; k < 4; ++k) {
        const double e = std::erfc(y);
        // d/dy log erfc(y) = −(2/√π)·e^(−y²)/erfc(y)
        y += (std::log(e) - log_t) * e / (kTwoOverSqrtPi * std::exp(-y * y));
      }
    }
  }
  return std::copysign(y, x);
}
template <typename C> C erfinv_v(C x) {
  if constexpr (std::is_same_v<C, double>) return erfinv_f64(x);
  else return C(vmath::erfinv_scalar(float(x)));
}
FUNCTOR(ErfinvF, erfinv_v(x))
// Note [Bessel I]: the modified Bessel functions of the first kind I0, I1 (and their scaled forms e^−|x|·Iν) in
// double: for |x| <= 30 the power series Σₖ (x²/4)ᵏ/(k!(k+ν)!)·(x/2)^ν (50 terms: every term is positive, no
// cancellation; the 50th is below 1e-17 of the sum at |x| = 30), beyond it the asymptotic expansion
// e^|x|/√(2π|x|)·Σₖ cₖ/|x|ᵏ with c₀ = 1, cₖ = −cₖ₋₁·(4ν² − (2k−1)²)/(8k) (20 terms; at |x| > 30 the smallest term is
// below 1e-17). e^|x| and √(2π|x|) are combined in one exp so that I0(x) stays finite up to |x| ≈ 713. I1 is odd.
// At ±inf: NaN for I0/I1, ±0 for the scaled forms (MindSpore 2.10's values).
template <int Nu, bool Scaled> double bessel_i(double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  // ±inf: the scaled forms go to ±0; I0(±inf), I1(±inf) are NaN, as MindSpore 2.10 (and Cephes/SciPy) give them
  if (std::isinf(a)) return Scaled ? (Nu == 1 && x < 0 ? -0.0 : 0.0) : std::numeric_limits<double>::quiet_NaN();
  double r;
  if (a <= 30.0) {
    const double t = 0.25 * x * x;
    double term = 1.0, acc = 1.0;  // 1/ν! = 1 for ν = 0 and 1
    for (int k = 1; k < 50; ++k) {
      term *= t / double(k * (k + Nu));
      acc += term;
      if (term <= acc * 1e-17) break;  // the rest cannot change the double sum (terms only shrink from here)
    }
    if (Nu == 1) acc *= 0.5 * a;
    r = Scaled ? acc * std::exp(-a) : acc;
  } else {
    const double inv = 1.0 / a;
    double coef = 1.0, p = 1.0, acc = 1.0;
    for (int k = 1; k < 20; ++k) {
      coef *= -(4.0 * Nu * Nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
      p *= inv;
      acc += coef * p;
    }
    const double log_scale = -0.5 * std::log(2.0 * M_PI * a);
    r = Scaled ? acc * std::exp(log_scale) : acc * std::exp(a + log_scale);
  }
  return Nu == 1 && x < 0 ? -r : r;
}
template <int Nu, bool Scaled, typename C> C bessel_v(C x) {
  if constexpr (std::is_floating_point_v<C>) return C(bessel_i<Nu, Scaled>(double(x)));
  else return C(0);  // never instantiated for a kernel: the float dtype rule sends integers as float32
}
FUNCTOR(BesselI0F, (bessel_v<0, false>(x)))
FUNCTOR(BesselI0eF, (bessel_v<0, true>(x)))
FUNCTOR(BesselI1F, (bessel_v<1, false>(x)))
FUNCTOR(BesselI1eF, (bessel_v<1, true>(x)))
FUNCTOR(ReluF, relu_v(x))
FUNCTOR(SigmoidF, C(1) / (C(1) + std::exp(-x)))
FUNCTOR(TanhF, std::tanh(x))
FUNCTOR(CosF, std::cos(x))
FUNCTOR(SinF, std::sin(x))
// Inverse trig, hyperbolic, expm1/log2/log10/erfc: libm in the compute type (float16/bfloat16 in float, float64 is
// exactly libm's double value); one op each instead of the former Python composites (issue 23, "kernels, not chains").
FUNCTOR(AcosF, std::acos(x))
FUNCTOR(AsinF, std::asin(x))
FUNCTOR(AtanF, std::atan(x))
FUNCTOR(SinhF, std::sinh(x))
FUNCTOR(CoshF, std::cosh(x))
FUNCTOR(TanF, std::tan(x))
FUNCTOR(AsinhF, std::asinh(x))
FUNCTOR(AcoshF, std::acosh(x))
FUNCTOR(AtanhF, std::atanh(x))
FUNCTOR(Expm1F, std::expm1(x))
FUNCTOR(Log2F, std::log2(x))
FUNCTOR(Log10F, std::log10(x))
FUNCTOR(ErfcF, std::erfc(x))
// Floor/Ceil keep the input dtype; integers and bools are already whole.
template <typename C> C floor_v(C x) { if constexpr (std::is_floating_point_v<C>) return std::floor(x); else return x; }
template <typename C> C ceil_v(C x) { if constexpr (std::is_floating_point_v<C>) return std::ceil(x); else return x; }
FUNCTOR(FloorF, floor_v(x))
FUNCTOR(CeilF, ceil_v(x))
template <typename C> struct GeluF {
  const bool approximate;  // resolved once per kernel call (not looked up per element)
  explicit GeluF(const Attrs& attrs) : approximate(attrs.b("approximate")) {}
  C operator()(C x) const {
    if (approximate)
      return C(0.5) * x * (C(1) + std::tanh(to_c<C>(kSqrt2OverPi) * (x + to_c<C>(kGeluC) * x * x * x)));
    return C(0.5) * x * (C(1) + std::erf(x / to_c<C>(kSqrt2)));
  }
};
void run_gelu(const TV& in, TV& out, const Attrs& a) {
  if (out[0].dtype() == DType::Float32)
    vmath::run_float32(a.b("approximate") ? vmath::Fn::GeluTanh : vmath::Fn::GeluErf,
                       ew::as_dtype(in[0], DType::Float32), out[0]);
  else run_unary<GeluF, true>(in, out, a);
}

void run_logical_not(const TV& in, TV& out, const Attrs&) {
  Tensor x = ew::as_dtype(in[0], DType::Bool);
  ew::unary_loop<bool, bool>(x, out[0], [](bool v) { return !v; });
}

// ---- bprops, written with Kiln ops ----
TV bp_neg(const TV&, const TV&, const TV& g, const Attrs&) { return {ops::neg(g[0])}; }
TV bp_exp(const TV& in, const TV& o, const TV& g, const Attrs&) {
  return {ops::mul(g[0], o[0])};
}
TV bp_log(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], in[0])}; }
// d log1p(x) = 1 / (1 + x)
TV bp_log1p(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], ops::add(in[0], sc(1.0, in[0])))}; }
TV bp_sqrt(const TV& in, const TV& o, const TV& g, const Attrs&) {
  Tensor y = o[0];
  return {ops::div(ops::mul(g[0], sc(0.5, g[0])), y)};
}
// d rsqrt(x) = -½ x^(-3/2) = -½ y³
TV bp_rsqrt(const TV& in, const TV& o, const TV& g, const Attrs&) {
  Tensor y = o[0];
  return {ops::mul(ops::mul(g[0], sc(-0.5, g[0])), ops::mul(y, ops::square(y)))};
}
TV bp_abs(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::sign(in[0]))}; }
TV bp_square(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::mul(in[0], sc(2.0, in[0])))}; }
// d erf(x) = 2/√π · exp(-x²)
TV bp_erf(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::mul(sc(2.0 / kSqrtPi, in[0]), ops::exp(ops::neg(ops::square(in[0])))))};
}
// d erfinv(x) = √π/2 · exp(erfinv(x)²)  (+inf at ±1, NaN outside [−1, 1])
TV bp_erfinv(const TV& in, const TV& o, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::mul(sc(kSqrtPi / 2, o[0]), ops::exp(ops::square(o[0]))))};
}
// ReLU: dy·[y > 0] (0 at x = 0, as MindSpore).
TV bp_relu(const TV&, const TV& o, const TV& g, const Attrs&) {
  return {ops::select(ops::greater(o[0], sc(0.0, o[0])), g[0], sc(0.0, g[0]))};
}
TV bp_sigmoid(const TV& in, const TV& o, const TV& g, const Attrs&) {
  Tensor y = o[0];
  return {ops::mul(g[0], ops::mul(y, ops::sub(sc(1.0, y), y)))};
}
TV bp_tanh(const TV& in, const TV& o, const TV& g, const Attrs&) {
  Tensor y = o[0];
  return {ops::mul(g[0], ops::sub(sc(1.0, y), ops::square(y)))};
}
// exact: Φ(x) + x·φ(x).
// tanh form: with u = √(2/π)(x + c x³), ½(1 + tanh u) = σ(2u), so GeLU(x) = x·σ(2u) and
//   d/dx = s + (x·(1 − s))·(s·2u'),  s = σ(2u),  2u' = 2√(2/π)(1 + 3c x²).
// 13 elementwise ops instead of the 19 of ½(1+t) + ½x(1−t²)·u' (one fused block in Graph mode: ~15% less time on
// the Transformer's (16,64,512) activations, docs/benchmarks.md); σ(2u) also avoids the cancellation of 1 + tanh u
// for negative u (relative error against float64 3.3e-5 where |d| > 1e-3, was 4.1e-4;
// docs/decisions/softmax-matmul-gelu-kernels.md). The products are grouped so that no factor overflows where the old
// form was finite (|x| up to ~1e19: s or 1 − s is exactly 0 there); ±inf give NaN, as the old form did. When this
// backward pass is not itself recorded, the fused GeLUGrad kernel computes the same formulas in one pass
// (src/ops/gelu_grad.cpp, Note [fused GeLU backward]); a recorded one (higher derivatives) composes Kiln ops.
TV bp_gelu(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  if (autodiff::grad_level() == 0 && g[0].defined() && g[0].dtype() == x.dtype())
    return {apply1(OpId::GeluGrad, {g[0], x}, {{"approximate", a.b("approximate")}})};
  Tensor d;
  if (a.b("approximate")) {
    Tensor x2 = ops::square(x);
    Tensor u2 = ops::mul(x, ops::add(ops::mul(x2, sc(2 * kSqrt2OverPi * kGeluC, x)), sc(2 * kSqrt2OverPi, x)));
    Tensor s = ops::sigmoid(u2);
    Tensor du2 = ops::add(ops::mul(x2, sc(6 * kSqrt2OverPi * kGeluC, x)), sc(2 * kSqrt2OverPi, x));
    d = ops::add(s, ops::mul(ops::mul(x, ops::sub(sc(1.0, x), s)), ops::mul(s, du2)));
  } else {
    Tensor cdf = ops::mul(sc(0.5, x), ops::add(sc(1.0, x), ops::erf(ops::mul(x, sc(1.0 / kSqrt2, x)))));
    Tensor pdf = ops::mul(sc(1.0 / (kSqrt2 * kSqrtPi), x), ops::exp(ops::mul(ops::square(x), sc(-0.5, x))));
    d = ops::add(cdf, ops::mul(x, pdf));
  }
  return {ops::mul(g[0], d)};
}
// d cos(x) = −sin(x); d sin(x) = cos(x).
TV bp_cos(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::neg(ops::mul(g[0], ops::sin(in[0])))}; }
TV bp_sin(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::cos(in[0]))}; }
// (1 − x)(1 + x) rather than 1 − x²: no cancellation near |x| = 1.
Tensor one_minus_sq(const Tensor& x) { return ops::mul(ops::sub(sc(1.0, x), x), ops::add(sc(1.0, x), x)); }
// d acos(x) = −1/√(1 − x²); d asin(x) = 1/√(1 − x²); d atan(x) = 1/(1 + x²).
TV bp_acos(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::neg(ops::div(g[0], ops::sqrt(one_minus_sq(in[0]))))}; }
TV bp_asin(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], ops::sqrt(one_minus_sq(in[0])))}; }
TV bp_atan(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], ops::add(sc(1.0, in[0]), ops::square(in[0])))}; }
// d sinh = cosh; d cosh = sinh; d tan(x) = 1 + tan(x)².
TV bp_sinh(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::cosh(in[0]))}; }
TV bp_cosh(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::sinh(in[0]))}; }
TV bp_tan(const TV&, const TV& o, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::add(sc(1.0, o[0]), ops::square(o[0])))}; }
// d asinh(x) = 1/√(1 + x²); d acosh(x) = 1/√((x − 1)(x + 1)); d atanh(x) = 1/((1 − x)(1 + x)).
TV bp_asinh(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {ops::div(g[0], ops::sqrt(ops::add(sc(1.0, in[0]), ops::square(in[0]))))};
}
TV bp_acosh(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor& x = in[0];
  return {ops::div(g[0], ops::sqrt(ops::mul(ops::sub(x, sc(1.0, x)), ops::add(x, sc(1.0, x)))))};
}
TV bp_atanh(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], one_minus_sq(in[0]))}; }
// d expm1(x) = eˣ = y + 1
TV bp_expm1(const TV&, const TV& o, const TV& g, const Attrs&) { return {ops::mul(g[0], ops::add(o[0], sc(1.0, o[0])))}; }
// d log2(x) = 1/(x ln 2); d log10(x) = 1/(x ln 10)
TV bp_log2(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], ops::mul(in[0], sc(0.6931471805599453, in[0])))}; }
TV bp_log10(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::div(g[0], ops::mul(in[0], sc(2.302585092994046, in[0])))}; }
// d erfc(x) = −2/√π · exp(−x²)
TV bp_erfc(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::mul(sc(-2.0 / kSqrtPi, in[0]), ops::exp(ops::neg(ops::square(in[0])))))};
}
// Bessel gradients (Note [Bessel I]): I0' = I1, I1' = I0 − I1/x (1/2 at 0); i0e' = i1e − sign(x)·i0e,
// i1e' = i0e − i1e·(sign(x) + 1/x) (1/2 at 0).
static Tensor over_x_or_half(const Tensor& num, const Tensor& x) {  // num/x, with the limit 1/2 where x == 0
  Tensor zero = ops::equal(x, sc(0.0, x));
  Tensor xs = ops::select(zero, sc(1.0, x), x);
  return ops::select(zero, sc(0.5, x), ops::div(num, xs));
}
TV bp_bessel_i0(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::bessel_i1(in[0]))};
}
TV bp_bessel_i1(const TV& in, const TV& out, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::sub(ops::bessel_i0(in[0]), over_x_or_half(out[0], in[0])))};
}
TV bp_bessel_i0e(const TV& in, const TV& out, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::sub(ops::bessel_i1e(in[0]), ops::mul(ops::sign(in[0]), out[0])))};
}
TV bp_bessel_i1e(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor& x = in[0];
  Tensor d = ops::sub(ops::bessel_i0e(x), ops::add(ops::mul(ops::sign(x), out[0]), over_x_or_half(out[0], x)));
  return {ops::mul(g[0], d)};
}
TV bp_identity(const TV&, const TV&, const TV& g, const Attrs&) { return {g[0]}; }
TV bp_cast(const TV& in, const TV&, const TV& g, const Attrs&) {
  if (!is_floating(in[0].dtype()) && !is_complex(in[0].dtype())) return {Tensor()};
  return {ops::cast(g[0], in[0].dtype())};
}

void reg(OpId id, InferFn infer, KernelFn cpu, BpropFn bprop) { ew::schema_register(id, infer, cpu, bprop); }

}  // namespace

namespace ops_impl {
void register_elementwise_unary() {
  // The ops with a generated signature: their rows in src/ops/schema/ops.yaml (kernel, dtype rule, bprop).
#include "registry_elementwise_unary.inc"
  reg(OpId::Gelu, infer_unary<true>, run_gelu, bp_gelu);
  reg(OpId::Cast, [](const TV& in, const Attrs& a) { return std::vector<TensorMeta>{{in[0].shape(), a.dtype("dtype")}}; },
      [](const TV& in, TV& out, const Attrs&) { copy_into(in[0], out[0]); }, bp_cast);
  // Identity and StopGradient copy nothing: their outputs alias the input storage.
  OpDef id;
  id.id = OpId::Identity;
  id.direct = [](const TV& in, const Attrs&) { return TV{in[0].alias()}; };
  id.infer = infer_unary<false>;
  id.bprop = bp_identity;
  register_op(id);
  OpDef sg;
  sg.id = OpId::StopGradient;
  sg.direct = [](const TV& in, const Attrs&) { return TV{in[0].alias()}; };
  sg.infer = infer_unary<false>;
  sg.differentiable = false;
  register_op(sg);
}
}  // namespace ops_impl

namespace ops {
Tensor gelu(const Tensor& x, bool approximate) { return apply1(OpId::Gelu, {x}, {{"approximate", approximate}}); }
Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype && !x.weak()) return x;
  return apply1(OpId::Cast, {x}, {{"dtype", dtype}});
}
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  // Value: min(max(x, lo), hi) (NaN stays NaN). Gradient (PyTorch's clamp backward, MindSpore's ops.clamp): x gets g
  // where lo <= x <= hi, bounds included, and 0 outside and at NaN; a bound gets g where it is the result.
  Tensor r = stop_gradient(x);
  Tensor inside;
  if (lo.defined()) {
    r = maximum(r, lo);
    inside = greater_equal(x, lo);
  }
  if (hi.defined()) {
    r = minimum(r, hi);
    Tensor below = less_equal(x, hi);
    inside = inside.defined() ? logical_and(inside, below) : below;
  }
  if (!inside.defined()) return x;
  return select(inside, x, r);
}
}  // namespace ops
}  // namespace kiln
