// Unary elementwise ops, activations, cast, identity and stop_gradient.
#include <cmath>

#include "elementwise.h"
#include "kiln/autodiff.h"
#include "kiln/graph.h"
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

// Note [gamma family]: lgamma, digamma and polygamma in double (float16/bfloat16/float32 inputs are widened per
// element and the result rounded once).
// - lgamma: C's lgamma_r (glibc: exact 0 at 1 and 2, +inf at 0, the negative integers and ±inf; reentrant, unlike
//   std::lgamma, whose sign global the OpenMP threads would share).
// - digamma ψ(x), x > 0: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10, then the asymptotic series
//   ψ(y) ~ ln y − 1/(2y) − Σₖ B₂ₖ/(2k·y²ᵏ), k = 1..7 (DLMF 5.11.2; the 8th term is below 1e-17 at y = 10);
//   x < 0: the reflection ψ(x) = ψ(1 − x) − π·cot(πx) (DLMF 5.5.4) with cot(πx) from the fractional part of x (no
//   loss of the argument for large |x|). ψ(+0) = −inf, ψ(−0) = +inf, NaN at the negative integers and −inf, +inf at
//   +inf (PyTorch's values; MindSpore 2.10 agrees).
// - polygamma ψ⁽ⁿ⁾(x), n ≥ 1: (−1)ⁿ⁺¹·n!·ζ(n + 1, x) for x > 0 with the Hurwitz zeta by Euler–Maclaurin summation
//   (DLMF 25.11.5 route: 9 terms, then the integral, half term and 12 Bernoulli corrections B₂ⱼ/(2j)!); x < 0: the
//   reflection ψ⁽ⁿ⁾(x) = (−1)ⁿ·ψ⁽ⁿ⁾(1 − x) − πⁿ⁺¹·Pₙ(cot πx) (DLMF 5.15.6), where dⁿ/dzⁿ cot z = Pₙ(cot z),
//   P₀ = c, Pₖ₊₁ = −(1 + c²)·Pₖ'(c). (−1)ⁿ⁺¹·inf at the poles 0, −1, −2, ... and at −inf, NaN at +inf
//   (MindSpore 2.10's values; SciPy agrees but at +inf, where it gives the limit 0).
double cot_pi(double x) {  // cot(πx) from the fractional part f of x: cot(πf), f ≥ 1/2 as −cot(π(1 − f))
  const double f = x - std::floor(x);
  const double m = f < 0.5 ? f : 1.0 - f;
  const double c = std::cos(M_PI * m) / std::sin(M_PI * m);
  return f < 0.5 ? c : -c;
}
double digamma_d(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::signbit(x) ? INFINITY : -INFINITY;
  if (std::isinf(x)) return x > 0 ? x : NAN;
  double refl = 0.0;
  if (x < 0) {
    if (x == std::floor(x)) return NAN;
    refl = -M_PI * cot_pi(x);
    x = 1.0 - x;
  }
  double acc = 0.0;
  while (x < 10.0) { acc += 1.0 / x; x += 1.0; }
  const double r = 1.0 / (x * x);
  // B₂ₖ/(2k) for k = 1..7: 1/12, −1/120, 1/252, −1/240, 1/132, −691/32760, 1/12
  const double series =
      r * (1.0 / 12 + r * (-1.0 / 120 + r * (1.0 / 252 + r * (-1.0 / 240 + r * (1.0 / 132 + r * (-691.0 / 32760 + r / 12))))));
  return std::log(x) - 0.5 / x - series - acc + refl;
}
double hurwitz_zeta_d(double s, double q) {  // s > 1, q > 0
  constexpr int kN = 9, kM = 12;
  // B₂ⱼ/(2j)! for j = 1..12
  static const double kC[kM] = {1.0 / 6 / 2,
                                -1.0 / 30 / 24,
                                1.0 / 42 / 720,
                                -1.0 / 30 / 40320,
                                5.0 / 66 / 3628800,
                                -691.0 / 2730 / 479001600,
                                7.0 / 6 / 87178291200.0,
                                -3617.0 / 510 / 20922789888000.0,
                                43867.0 / 798 / 6402373705728000.0,
                                -174611.0 / 330 / 2432902008176640000.0,
                                854513.0 / 138 / 1.1240007277776077e21,
                                -236364091.0 / 2730 / 6.204484017332394e23};
  double acc = 0.0;
  for (int k = 0; k < kN; ++k) acc += std::pow(q + k, -s);
  const double a = q + kN, a_s = std::pow(a, -s);
  acc += a_s * a / (s - 1.0) + 0.5 * a_s;
  // term_j = s(s+1)…(s+2j−2)·a^(−s−2j+1) as one running product (no factorial-sized factor alone)
  double term = a_s / a * s;
  const double inv_a2 = 1.0 / (a * a);
  for (int j = 1; j <= kM; ++j) {
    acc += term * kC[j - 1];
    term *= (s + 2 * j - 1) * inv_a2 * (s + 2 * j);
  }
  return acc;
}
struct PolygammaD {
  int64_t n;
  double sign_fact;          // (−1)ⁿ⁺¹·n!
  std::vector<double> poly;  // Pₙ's coefficients, lowest first
  explicit PolygammaD(int64_t n_) : n(n_) {
    double f = 1.0;
    for (int64_t k = 2; k <= n; ++k) f *= double(k);
    sign_fact = (n % 2 ? 1.0 : -1.0) * f;
    poly = {0.0, 1.0};
    for (int64_t k = 0; k < n; ++k) {
      std::vector<double> d(poly.size() + 1, 0.0), p(poly.size() + 1, 0.0);
      for (size_t i = 1; i < poly.size(); ++i) d[i - 1] = double(i) * poly[i];
      for (size_t i = 0; i < p.size(); ++i) p[i] = -(d[i] + (i >= 2 ? d[i - 2] : 0.0));
      poly = std::move(p);
    }
  }
  double operator()(double x) const {
    if (n == 0) return digamma_d(x);
    if (std::isnan(x) || x == INFINITY) return NAN;
    // the poles and −inf: (−1)ⁿ⁺¹·inf, the limit from the right (MindSpore 2.10 and SciPy)
    if (x == -INFINITY || (x <= 0 && x == std::floor(x))) return sign_fact > 0 ? INFINITY : -INFINITY;
    if (x > 0) return sign_fact * hurwitz_zeta_d(double(n + 1), x);
    const double c = cot_pi(x);
    double pv = 0.0;
    for (size_t i = poly.size(); i-- > 0;) pv = pv * c + poly[i];
    return (n % 2 ? -1.0 : 1.0) * sign_fact * hurwitz_zeta_d(double(n + 1), 1.0 - x) - std::pow(M_PI, double(n + 1)) * pv;
  }
};
double lgamma_d(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}
template <typename C> C gamma_family_v(double (*f)(double), C x) {
  if constexpr (std::is_floating_point_v<C>) return C(f(double(x)));
  else return C(0);  // never instantiated for a kernel: the float dtype rule sends integers as float32
}
FUNCTOR(LgammaF, gamma_family_v<C>(lgamma_d, x))
FUNCTOR(DigammaF, gamma_family_v<C>(digamma_d, x))
template <typename C> struct PolygammaF {
  PolygammaD f;  // built once per kernel call (Pₙ's coefficients, n!)
  explicit PolygammaF(const Attrs& attrs) : f(attrs.i("n")) {}
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return C(f(double(x)));
    else return C(0);
  }
};
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
// round: halves to even (std::nearbyint in the default rounding mode: 0.5 → 0, 1.5 → 2, −0.5 → −0; MindSpore
// 2.10's Round and NumPy's rint); integers and bools unchanged.
template <typename C> C round_v(C x) { if constexpr (std::is_floating_point_v<C>) return std::nearbyint(x); else return x; }
FUNCTOR(RoundF, round_v(x))
// trunc: toward zero (−2.7 → −2, −0.5 → −0); integers and bools unchanged.
template <typename C> C trunc_v(C x) { if constexpr (std::is_floating_point_v<C>) return std::trunc(x); else return x; }
FUNCTOR(TruncF, trunc_v(x))
// sinc(x) = sin(πx)/(πx), 1 at x = 0 (the normalised sinc), with πx formed in the compute type as MindSpore 2.10 does
// (its float32 sinc(1) is −2.78e-8, not 0); NaN at ±inf.
template <typename C> C sinc_v(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    if (x == C(0)) return C(1);
    const C px = C(M_PI) * x;
    return std::sin(px) / px;
  } else {
    return C(0);  // never instantiated for a kernel: the float dtype rule sends integers as float32
  }
}
FUNCTOR(SincF, sinc_v(x))
FUNCTOR(CeilF, ceil_v(x))
// Activations (issue 23: one kernel each, were compositions). Float-only: C is float or double (float16 computes in
// float). Comparisons with NaN are false, so NaN falls to the middle branch and propagates.
// hardswish: x·relu6(x + 3)/6 written by branch, so −inf gives 0 (MindSpore 2.10's value), not −inf·0.
template <typename C> C hswish_v(C x) { return x <= C(-3) ? C(0) : (x >= C(3) ? x : x * (x + C(3)) / C(6)); }
template <typename C> C hsigmoid_v(C x) { return x <= C(-3) ? C(0) : (x >= C(3) ? C(1) : (x + C(3)) / C(6)); }
constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;
template <typename C> C selu_v(C x) {
  return x >= C(0) ? to_c<C>(kSeluScale) * x : to_c<C>(kSeluScale * kSeluAlpha) * std::expm1(x);
}
// log(1 + eˣ) = max(x, 0) + log1p(e^−|x|) (Mächler 2012, eq. (10)): no overflow; x itself above 20 (the default
// threshold of ops.softplus; the tail there is < 2.1e-9, below float32's rounding of x).
template <typename C> C softplus_v(C x) {
  if (x > C(20)) return x;
  return (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::abs(x)));
}
// log σ(x) = −softplus(−x) = min(x, 0) − log1p(e^−|x|)
template <typename C> C logsigmoid_v(C x) { return (x < C(0) ? x : C(0)) - std::log1p(std::exp(-std::abs(x))); }
template <typename C> C mish_v(C x) { return x * std::tanh(softplus_v(x)); }
FUNCTOR(HSwishF, hswish_v(x))
FUNCTOR(HSigmoidF, hsigmoid_v(x))
FUNCTOR(SeLUF, selu_v(x))
FUNCTOR(SoftplusF, softplus_v(x))
FUNCTOR(LogSigmoidF, logsigmoid_v(x))
FUNCTOR(MishF, mish_v(x))
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
// d sinc(x) = (cos(πx) − sinc(x))/x, 0 at x = 0 (MindSpore 2.10's gradient there).
TV bp_sinc(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = is_floating(in[0].dtype()) ? in[0] : ops::cast(in[0], o[0].dtype());
  Tensor zero = ops::equal(x, sc(0.0, x));
  Tensor xs = ops::select(zero, sc(1.0, x), x);
  Tensor d = ops::div(ops::sub(ops::cos(ops::mul(x, sc(M_PI, x))), o[0]), xs);
  return {ops::mul(g[0], ops::select(zero, sc(0.0, x), d))};
}
// Activation gradients. The input is a float Tensor here (the row's dtype rule casts integers; the bprop receives
// the original input, so cast it to the output's dtype first).
static Tensor float_in(const TV& in, const TV& o) {
  return is_floating(in[0].dtype()) ? in[0] : ops::cast(in[0], o[0].dtype());
}
// hardswish: 0 below −3, (2x + 3)/6 on [−3, 3] (−0.5 at −3, 1.5 at 3: MindSpore 2.10's and PyTorch's), 1 above 3.
TV bp_hswish(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = float_in(in, o);
  Tensor mid = ops::add(ops::mul(x, sc(1.0 / 3.0, x)), sc(0.5, x));
  Tensor d = ops::select(ops::less(x, sc(-3.0, x)), sc(0.0, x), ops::select(ops::greater(x, sc(3.0, x)), sc(1.0, x), mid));
  return {ops::mul(g[0], d)};
}
// hardsigmoid: 1/6 on (−3, 3), 0 elsewhere (MindSpore 2.10's HSigmoidGrad: 0 at both corners).
TV bp_hsigmoid(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = float_in(in, o);
  Tensor inside = ops::logical_and(ops::greater(x, sc(-3.0, x)), ops::less(x, sc(3.0, x)));
  return {ops::select(inside, ops::mul(g[0], sc(1.0 / 6.0, g[0])), sc(0.0, g[0]))};
}
// selu: scale at and above 0 (MindSpore 2.10's value at 0), scale·α·eˣ below (the derivative).
TV bp_selu(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = float_in(in, o);
  Tensor neg = ops::mul(ops::exp(x), sc(kSeluScale * kSeluAlpha, x));
  return {ops::mul(g[0], ops::select(ops::greater_equal(x, sc(0.0, x)), sc(kSeluScale, x), neg))};
}
// softplus: σ(x), 1 above the threshold 20 (where the forward is x).
TV bp_softplus(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = float_in(in, o);
  return {ops::mul(g[0], ops::select(ops::greater(x, sc(20.0, x)), sc(1.0, x), ops::sigmoid(x)))};
}
// logsigmoid: σ(−x).
TV bp_logsigmoid(const TV& in, const TV& o, const TV& g, const Attrs&) {
  return {ops::mul(g[0], ops::sigmoid(ops::neg(float_in(in, o))))};
}
// mish: with t = tanh(softplus(x)), t + x·(1 − t²)·σ(x).
TV bp_mish(const TV& in, const TV& o, const TV& g, const Attrs&) {
  const Tensor x = float_in(in, o);
  Tensor t = ops::tanh(ops::softplus(x));
  Tensor d = ops::add(t, ops::mul(ops::mul(x, ops::sub(sc(1.0, t), ops::square(t))), ops::sigmoid(x)));
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

Tensor polygamma_op(const Tensor& x, int64_t n) { return apply1(OpId::Polygamma, {x}, {{"n", n}}); }
std::vector<TensorMeta> infer_polygamma(const TV& in, const Attrs& a) {
  KILN_CHECK(a.i("n") >= 0, Value, "For 'Polygamma', 'n' must be >= 0, but got ", a.i("n"), ".");
  return infer_unary<true>(in, a);
}
// d lgamma = ψ(x); d ψ = ψ⁽¹⁾(x); d ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾(x) (Note [gamma family]).
TV bp_lgamma(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor x = is_floating(in[0].dtype()) ? in[0] : ops::cast(in[0], g[0].dtype());
  return {ops::mul(g[0], ops::digamma(x))};
}
TV bp_digamma(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::mul(g[0], polygamma_op(in[0], 1))}; }
TV bp_polygamma(const TV& in, const TV&, const TV& g, const Attrs& a) {
  return {ops::mul(g[0], polygamma_op(in[0], a.i("n") + 1))};
}

void reg(OpId id, InferFn infer, KernelFn cpu, BpropFn bprop) { ew::schema_register(id, infer, cpu, bprop); }

}  // namespace

namespace special {
// The Hurwitz zeta for s > 1, q > 0 (Euler–Maclaurin, above), for the binary Zeta op (elementwise_binary.cpp).
double hurwitz_zeta(double s, double q) { return hurwitz_zeta_d(s, q); }
// e^-|x| I0(x) (Note [Bessel I]), for the KaiserWindow op (creation.cpp).
double bessel_i0e(double x) { return bessel_i<0, true>(x); }
}  // namespace special

namespace ops_impl {
void register_elementwise_unary() {
  // The ops with a generated signature: their rows in src/ops/schema/ops.yaml (kernel, dtype rule, bprop).
#include "registry_elementwise_unary.inc"
  reg(OpId::Gelu, infer_unary<true>, run_gelu, bp_gelu);
  reg(OpId::Polygamma, infer_polygamma, run_float<PolygammaF>, bp_polygamma);
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
  //
  // When nothing records a gradient and no graph is traced (PyNative without a grad transform: clamp_ and clamp on
  // small tensors, issue 23), the value alone in two ops instead of seven. maximum(lo, x) and minimum(hi, r) return
  // their second operand on ties, so the result is x itself where lo <= x <= hi (a -0.0 at a 0.0 bound stays -0.0,
  // as the select below), the bound outside, NaN where x or a bound is NaN; dtypes and broadcasting are those of
  // the composite. The two forms differ only for bounds that compare equal with different signs of zero, so bounds
  // of one element each are compared (equal bounds keep the composite) and larger tensor bounds keep it too.
  if (autodiff::grad_level() == 0 && !graph::tracing() && !x.is_symbolic() && !is_complex(x.dtype()) &&
      (!lo.defined() || !hi.defined() || (lo.numel() == 1 && hi.numel() == 1 && lo.item() != hi.item()))) {
    Tensor v = x;
    if (lo.defined()) v = maximum(lo, v);
    if (hi.defined()) v = minimum(hi, v);
    return v;
  }
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
