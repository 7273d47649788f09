// Vectorized float32 transcendentals (exp, tanh, sigmoid, erf, erfinv, GELU; atan2) on Eigen's packet math, shared by the
// unfused kernels (elementwise_unary.cpp), FusedElementwise (fused.cpp) and MatMulBiasAct's epilogue
// (fused_matmul.cpp), so that every path gives the same numbers bit for bit (Note [fused kernels compute what the
// unfused ops compute], fused.h).
//
// Note [vectorized float32 transcendentals]: each element's result depends only on its value, never on its
// position: arrays are processed in whole packets of 8 (a tail is padded into one packet), never with Eigen's
// scalar peeling, so a strided gather, a contiguous run and a fused block agree. Accuracy against a float64
// reference (measured on 2M points in [-20, 20], see docs/decisions/vectorized-transcendentals.md): exp ≤ 1.2e-7
// relative, tanh ≤ 2.7e-7, erf ≤ 3.3e-7 absolute; sigmoid is 1/(1+exp(−x)) on the vector exp. Special values: NaN
// propagates, ±inf give the limits (exp(−inf) = 0, tanh(±inf) = ±1, erf(±inf) = ±1). Eigen's exp flushes x < −88.38
// to 2.9e-39 instead of the subnormal (or 0) result: those lanes (rare) are recomputed with std::exp. Float64 keeps
// the scalar libm.
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
// Note [vectorized atan2]: float32 atan2(y, x) computed in double lanes (two Packet4d per packet of 8 floats):
// r = min(|x|, |y|)/max(|x|, |y|) in [0, 1]; above tan(π/8), atan r = π/4 + atan((r − 1)/(r + 1)), so the argument
// u has |u| ≤ tan(π/8) and the Taylor series Σₖ₌₀¹⁶ (−1)ᵏ u²ᵏ⁺¹/(2k + 1) is within 1e-15 relative; then π/2 − t
// where |y| > |x|, π − t where x < 0, and y's sign. The double result is rounded once to float: at most 0.5 ulp +
// ~2^-29 from the exact angle. Packets holding a zero, an infinity or a NaN (C99 Annex F's cases, the signed
// zeros) (and any zero: its sign decides the result) go through std::atan2 lane by lane, which gives the same correctly rounded values where both apply.
#ifdef EIGEN_VECTORIZE_AVX
using PacketD = Eigen::internal::Packet4d;
#else
using PacketD = Eigen::internal::Packet2d;
#endif
constexpr int kLanesD = Eigen::internal::unpacket_traits<PacketD>::size;

inline PacketD atan2_pd(const PacketD& y, const PacketD& x) {
  const PacketD ax = ei::pabs(x), ay = ei::pabs(y);
  const PacketD y_big = ei::pcmp_lt(ax, ay);
  const PacketD hi = ei::pselect(y_big, ay, ax), lo = ei::pselect(y_big, ax, ay);
  const PacketD one = ei::pset1<PacketD>(1.0);
  const PacketD r = ei::pdiv(lo, hi);
  const PacketD big = ei::pcmp_lt(ei::pset1<PacketD>(0.41421356237309503), r);
  const PacketD u = ei::pselect(big, ei::pdiv(ei::psub(r, one), ei::padd(r, one)), r);
  const PacketD z = ei::pmul(u, u);
  PacketD p = ei::pset1<PacketD>(1.0 / 33.0);
  for (int k = 15; k >= 0; --k) p = ei::pmadd(p, z, ei::pset1<PacketD>((k % 2 ? -1.0 : 1.0) / (2 * k + 1)));
  PacketD t = ei::pmul(p, u);
  t = ei::padd(t, ei::pand(big, ei::pset1<PacketD>(0.78539816339744831)));
  t = ei::pselect(y_big, ei::psub(ei::pset1<PacketD>(1.5707963267948966), t), t);
  const PacketD x_neg = ei::pcmp_lt(x, ei::pzero(x));
  t = ei::pselect(x_neg, ei::psub(ei::pset1<PacketD>(3.141592653589793), t), t);
  return ei::pselect(ei::pcmp_lt(y, ei::pzero(y)), ei::pnegate(t), t);
}
// o[i] = atan2(y[i], x[i]) for n floats (contiguous), whole packets only (as apply above).
inline void atan2_block(const float* y, const float* x, float* o) {  // kLanes floats
  alignas(64) double yd[kLanes], xd[kLanes], od[kLanes];
  bool special = false;
  for (int i = 0; i < kLanes; ++i) {
    yd[i] = y[i];
    xd[i] = x[i];
    special |= !(std::isfinite(yd[i]) && std::isfinite(xd[i])) || yd[i] == 0.0 || xd[i] == 0.0;
  }
  if (special) {
    for (int i = 0; i < kLanes; ++i) o[i] = float(std::atan2(yd[i], xd[i]));
    return;
  }
  for (int i = 0; i < kLanes; i += kLanesD)
    ei::pstore(od + i, atan2_pd(ei::pload<PacketD>(yd + i), ei::pload<PacketD>(xd + i)));
  for (int i = 0; i < kLanes; ++i) o[i] = float(od[i]);
}
inline void atan2_f32(const float* y, const float* x, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) atan2_block(y + i, x + i, o + i);
  if (i < n) {
    alignas(64) float by[kLanes] = {}, bx[kLanes], bo[kLanes];
    for (int k = 0; k < kLanes; ++k) bx[k] = 1.0f;
    for (int64_t k = 0; k < n - i; ++k) { by[k] = y[i + k]; bx[k] = x[i + k]; }
    atan2_block(by, bx, bo);
    for (int64_t k = 0; k < n - i; ++k) o[i + k] = bo[k];
  }
}
inline float atan2_scalar(float y, float x) {
  float o;
  atan2_f32(&y, &x, &o, 1);
  return o;
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
