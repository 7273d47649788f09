// Binary elementwise ops: arithmetic, comparisons, logical ops and select. NumPy broadcasting; the result dtype
// is promote_types of the inputs (true division and pow of integers: see each op).
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "families.h"
#include "vmath.h"

namespace kiln {
namespace special {
double hurwitz_zeta(double s, double q);  // s > 1, q > 0 (elementwise_unary.cpp, Note [gamma family])
}  // namespace special
namespace {

using ew::binary_dtype;
using ew::reduce_grad;


// Runs `F` (a functor template instantiated per compute type) with both inputs cast to the result dtype.
template <template <typename> class F>
void run_arith(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
  DType t = out[0].dtype();
  Tensor a = ew::as_dtype(in[0], t), b = ew::as_dtype(in[1], t);
  KILN_DISPATCH_ALL(t, [&](auto tag) {
    using T = decltype(tag);
    ew::binary_loop<T, T>(a, b, out[0], F<compute_t<T>>{});
  });
}

// Integer +, −, × wrap modulo 2^bits as NumPy's: computed in the unsigned type at least as wide as int (C++ would
// promote uint16 × uint16 to a signed int, whose overflow is undefined, as is int32/int64 overflow).
template <typename C> using wrap_t = std::make_unsigned_t<std::common_type_t<C, unsigned>>;
template <typename C> C wrap_add(C x, C y) {
  if constexpr (std::is_integral_v<C>) return C(wrap_t<C>(x) + wrap_t<C>(y)); else return x + y;
}
template <typename C> C wrap_sub(C x, C y) {
  if constexpr (std::is_integral_v<C>) return C(wrap_t<C>(x) - wrap_t<C>(y)); else return x - y;
}
template <typename C> C wrap_mul(C x, C y) {
  if constexpr (std::is_integral_v<C>) return C(wrap_t<C>(x) * wrap_t<C>(y)); else return x * y;
}
template <typename C> struct AddF { C operator()(C x, C y) const { if constexpr (std::is_same_v<C, bool>) return x || y; else return wrap_add(x, y); } };
template <typename C> struct SubF { C operator()(C x, C y) const { if constexpr (std::is_same_v<C, bool>) return x != y; else return wrap_sub(x, y); } };
template <typename C> struct MulF { C operator()(C x, C y) const { if constexpr (std::is_same_v<C, bool>) return x && y; else return wrap_mul(x, y); } };
template <typename C> struct DivF { C operator()(C x, C y) const { return x / y; } };
// Float floor division as Python's // and NumPy's floor_divide (CPython float_divmod, NumPy npy_divmod): the
// quotient is derived from the exact remainder fmod(x, y), so x == (x // y)·y + x % y holds with ModF below, and
// floor(x / y) is not used (it is wrong when x / y rounds up to an integer: 1 // 0.1 = 9, not 10; and for an
// infinite divisor: −1000 // inf = −1, as NumPy and PyTorch). y = 0 gives x / y (±inf, or NaN for 0 / 0).
template <typename C> C float_floor_div(C x, C y) {
  const C m = std::fmod(x, y);
  if (y == C(0)) return x / y;
  C q = (x - m) / y;
  if (m != C(0) && ((y < C(0)) != (m < C(0)))) q -= C(1);
  if (q == C(0)) return std::copysign(C(0), x / y);
  C f = std::floor(q);
  if (q - f > C(0.5)) f += C(1);  // q is within rounding of an integer: round to it
  return f;
}
template <typename C> struct FloorDivF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) return float_floor_div(x, y);
    else if constexpr (std::is_same_v<C, bool>) return x;
    else {
      if (y == 0) return C(0);  // NumPy gives 0 with a warning for integer division by zero
      // x / -1 traps (SIGFPE) for x = the most negative value: negate with two's-complement wrap-around, as NumPy.
      if constexpr (std::is_signed_v<C>) {
        if (y == C(-1)) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
      }
      C q = x / y;
      return (x % y != 0 && ((x < 0) != (y < 0))) ? C(q - 1) : q;
    }
  }
};
template <typename C> struct ModF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      C r = std::fmod(x, y);
      if (r == 0) return std::copysign(C(0), y);  // NumPy: a zero remainder takes the divisor's sign
      return ((r < 0) != (y < 0)) ? r + y : r;
    } else if constexpr (std::is_same_v<C, bool>) {
      return false;
    } else {
      if (y == 0) return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (y == C(-1)) return C(0);  // x % -1 traps for the most negative x
      }
      C r = x % y;
      return (r != 0 && ((r < 0) != (y < 0))) ? C(r + y) : r;
    }
  }
};
// fmod: C's remainder with the sign of the dividend (std::fmod: exact, fmod(a, +-inf) = a for finite a, as C,
// NumPy and PyTorch). Integers: the truncating remainder of C's %; a divisor of 0 gives the dividend (MindSpore
// 2.10's ops.fmod on Int32: fmod(5, 0) = 5, fmod(-7, 0) = -7); x % -1 is 0 (it traps for the most negative x).
template <typename C> struct FmodF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fmod(x, y);
    } else if constexpr (std::is_same_v<C, bool>) {
      return false;
    } else {
      if (y == 0) return x;
      if constexpr (std::is_signed_v<C>) {
        if (y == C(-1)) return C(0);
      }
      return C(x % y);
    }
  }
};
// Hurwitz zeta(s, q) = Σₖ (q + k)^−s in double (the Euler–Maclaurin sum shared with Polygamma, for s > 1, q > 0).
// Outside that domain MindSpore 2.10's values (its CPU kernel, Cephes' zeta as ported by Eigen; oracle): inf at
// s = 1; NaN for s < 1 and NaN inputs; at the poles q = 0, −1, −2, ... inf for an even integer s, NaN otherwise (SciPy
// gives inf for every s there); q < 0 elsewhere: the series itself for an integer s (its first terms summed until
// q + k > 0, then the sum from there), NaN for other s; ζ(inf, q) = 0 for q > 1, 1 at q = 1, inf below; ζ(s, inf) = 0.
inline double zeta_d(double s, double q) {
  if (s != s || q != q) return NAN;
  if (s == 1.0) return INFINITY;
  if (!(s > 1.0)) return NAN;
  if (q <= 0.0) {
    if (std::isinf(q)) return NAN;
    const bool int_s = s == std::floor(s);
    if (q == std::floor(q)) return int_s && std::fmod(s, 2.0) == 0.0 ? INFINITY : NAN;
    if (!int_s) return NAN;
    double head = 0.0;
    for (; q < 0.0; q += 1.0) head += std::pow(q, -s);
    return head + zeta_d(s, q);
  }
  if (std::isinf(s)) return q > 1.0 ? 0.0 : (q == 1.0 ? 1.0 : INFINITY);
  if (std::isinf(q)) return 0.0;
  return special::hurwitz_zeta(s, q);
}
template <typename C> struct ZetaF {
  C operator()(C s, C q) const {
    if constexpr (std::is_same_v<C, bool>) return false;
    else return C(zeta_d(double(s), double(q)));
  }
};
template <typename C> struct PowF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) return std::pow(x, y);
    else if constexpr (std::is_same_v<C, bool>) return x || !y;
    else {
      if (y < 0) return x == 1 ? C(1) : (x == C(-1) ? ((y % 2) ? C(-1) : C(1)) : C(0));
      C r = 1, b = x;
      for (C e = y; e > 0; e >>= 1) { if (e & 1) r = wrap_mul(r, b); b = wrap_mul(b, b); }
      return r;
    }
  }
};
template <typename C> struct MaxF { C operator()(C x, C y) const { if constexpr (std::is_floating_point_v<C>) { if (std::isnan(x) || std::isnan(y)) return x + y; } return x > y ? x : y; } };
template <typename C> struct MinF { C operator()(C x, C y) const { if constexpr (std::is_floating_point_v<C>) { if (std::isnan(x) || std::isnan(y)) return x + y; } return x < y ? x : y; } };

// atan2: C99 Annex F values (signed zeros, infinities). Float32 (and float16/bfloat16, which compute in float) go
// through vmath's double-lane kernel (Note [vectorized atan2], vmath.h; a strided or broadcast element takes the
// same code one packet at a time, so its value does not depend on the layout); float64 through libm's atan2.
template <typename C> struct Atan2F {
  C operator()(C y, C x) const {
    if constexpr (std::is_same_v<C, float>) return vmath::atan2_scalar(y, x);
    else if constexpr (std::is_floating_point_v<C>) return std::atan2(y, x);
    else return C(std::atan2(double(y), double(x)));
  }
};

// hypot: C99's std::hypot (no overflow or underflow; +inf where either input is ±inf, even beside a NaN). Float16
// and bfloat16 compute in float. Integer instantiations exist only to compile (the promote_float rule never sends
// integers here).
template <typename C> struct HypotF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) return std::hypot(x, y);
    else return C(std::hypot(double(x), double(y)));
  }
};
// logaddexp(x, y) = log(e^x + e^y) = max + log1p(e^−|x−y|); x == y returns x + log 2 (so equal infinities give
// that infinity, not inf − inf); a NaN input gives NaN. logaddexp2 is the same in base 2 (numpy.logaddexp2).
template <typename C> struct LogAddExpF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x == y) return x + C(0.693147180559945309417232121458176568);
      C d = x - y;
      if (std::isnan(d)) return d;
      return (d > 0 ? x : y) + std::log1p(std::exp(-std::abs(d)));
    } else {
      return C(0);
    }
  }
};
template <typename C> struct LogAddExp2F {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x == y) return x + C(1);
      C d = x - y;
      if (std::isnan(d)) return d;
      return (d > 0 ? x : y) + std::log1p(std::exp2(-std::abs(d))) * C(1.442695040888963407359924681001892137);
    } else {
      return C(0);
    }
  }
};

// copysign as C, NumPy and PyTorch define it: |x| with the sign bit of other, so copysign(1, −0.0) = −1 and a NaN
// other gives its sign bit. (MindSpore 2.10 selects on other < 0 instead, counting −0.0 and −NaN as positive:
// docs/decisions/differences-from-mindspore.md.) Integer instantiations exist only to compile (the promote_float
// rule never sends integers here).
template <typename C> struct CopysignF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::copysign(x, y);
    } else {
      return x;
    }
  }
};
// xlogy: x·log(y), and +0 where x == 0 and y is not NaN (SciPy's and PyTorch's rule; MindSpore 2.10's CPU kernel
// computes x·log(y) plainly, NaN at x = 0 for y <= 0 or y = inf).
template <typename C> struct XlogyF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x == C(0) && !std::isnan(y)) return C(0);
      return x * std::log(y);
    } else {
      return C(0);
    }
  }
};
// fmax/fmin: the maximum/minimum ignoring NaN (NaN only where both are NaN; C's fmax, NumPy's np.fmax). Integers
// and bool: max/min.
template <typename C> struct FmaxF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return y;
      if (std::isnan(y)) return x;
    }
    return x < y ? y : x;
  }
};
template <typename C> struct FminF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return y;
      if (std::isnan(y)) return x;
    }
    return y < x ? y : x;
  }
};
// truncate_div: x / y rounded toward zero. Floats: trunc(x / y) (IEEE division first: x/0 = ±inf, 0/0 = NaN).
// Integers: C's truncating division; a zero divisor gives the dtype's largest value for x > 0, its lowest for x < 0
// and 0 for x = 0 (MindSpore 2.10's TruncateDiv on Int32: 7/0 = 2147483647, −5/0 = −2147483648, 0/0 = 0); x / −1
// negates with two's-complement wrap-around (it traps for the most negative x).
template <typename C> struct TruncateDivF {
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::trunc(x / y);
    } else if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (y == 0 && x < 0) return std::numeric_limits<C>::lowest();
        if (y == C(-1)) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
      }
      if (y == 0) return x == 0 ? C(0) : std::numeric_limits<C>::max();
      return C(x / y);
    }
  }
};

// heaviside(x, v): 0 where x < 0, v where x == 0, 1 where x > 0, and 0 for NaN (MindSpore 2.10's and PyTorch's
// kernels, which test x == 0 and x > 0; NumPy gives NaN).
template <typename C> struct HeavisideF {
  C operator()(C x, C v) const { return x == C(0) ? v : (x > C(0) ? C(1) : C(0)); }
};

// The dtype a comparison runs in: the promoted dtype, except that a Python int outside an integer tensor's range
// compares exactly in Int64 (NumPy 2: uint8_array == 300 is False, uint8_array < 300 is True).
DType compare_dtype(const Tensor& a, const Tensor& b) {
  DType t = binary_dtype(a, b);
  for (const Tensor* w : {&a, &b}) {
    if (w->weak() && w->dtype() == DType::Int64 && is_integral(t) && !w->is_symbolic() &&
        !int_fits(*w->data<int64_t>(), t))
      return DType::Int64;
  }
  return t;
}

// Atan2: contiguous float32 operands of the output's shape run whole packets (threaded by parallel_runs); the
// rest goes through run_arith's broadcasting loop.
void run_atan2(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs& a) {
  const Tensor& o = out[0];
  if (o.dtype() == DType::Float32) {
    Tensor y = ew::as_dtype(in[0], DType::Float32), x = ew::as_dtype(in[1], DType::Float32);
    if (y.shape() == o.shape() && x.shape() == o.shape() && y.is_contiguous() && x.is_contiguous() &&
        o.is_contiguous()) {
      const float *py = y.data<float>(), *px = x.data<float>();
      float* po = o.data<float>();
      cpu::parallel_runs(o.numel(), [&](int64_t s, int64_t m) { vmath::atan2_f32(py + s, px + s, po + s, m); });
      return;
    }
  }
  run_arith<Atan2F>(in, out, a);
}

// Bit operations on integer and Bool dtypes (the schema's `integer` dtype rule rejects the others at inference).
// Runs `F` with both inputs cast to the result dtype; F is instantiated for the integer types and bool only.
template <template <typename> class F>
void run_integer(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
  DType t = out[0].dtype();
  Tensor a = ew::as_dtype(in[0], t), b = ew::as_dtype(in[1], t);
  KILN_DISPATCH_ALL(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) ew::binary_loop<T, T>(a, b, out[0], F<T>{});
    else fail_unsupported_dtype(t);
  });
}
template <typename C> struct BitAndF { C operator()(C x, C y) const { return C(x & y); } };
template <typename C> struct BitOrF { C operator()(C x, C y) const { return C(x | y); } };
template <typename C> struct BitXorF { C operator()(C x, C y) const { return C(x ^ y); } };
// Shifts as NumPy and PyTorch define them for any count: x << n wraps to the dtype (computed on the unsigned bits,
// since a signed left shift that overflows is undefined in C++17); a count outside [0, bits) gives 0 for a left
// shift and the sign fill (0 or -1) for an arithmetic right shift (C++ leaves both undefined; MindSpore's CPU kernel
// masks the count, giving other values there).
template <typename C> constexpr int bits_of() { return std::is_same_v<C, bool> ? 1 : int(sizeof(C) * 8); }
template <typename C> bool shift_out_of_range(C n) {
  if constexpr (std::is_signed_v<C>) {
    if (n < 0) return true;
  }
  return uint64_t(n) >= uint64_t(bits_of<C>());
}
template <typename C> struct LeftShiftF {
  C operator()(C x, C n) const {
    if constexpr (std::is_same_v<C, bool>) return n ? false : x;
    else {
      if (shift_out_of_range(n)) return C(0);
      using U = std::make_unsigned_t<C>;
      return C(U(U(x) << int(n)));
    }
  }
};
template <typename C> struct RightShiftF {
  C operator()(C x, C n) const {
    if constexpr (std::is_same_v<C, bool>) return n ? false : x;
    else {
      if (shift_out_of_range(n)) {
        if constexpr (std::is_signed_v<C>) return x < 0 ? C(-1) : C(0);
        else return C(0);
      }
      return C(x >> int(n));  // arithmetic for signed types (GCC's definition; C++20's rule)
    }
  }
};
// gcd/lcm on |a|, |b| in the unsigned type (|most negative| fits there; the result wraps back as NumPy's does).
template <typename C> std::make_unsigned_t<C> uabs(C x) {
  using U = std::make_unsigned_t<C>;
  if constexpr (std::is_signed_v<C>) return x < 0 ? U(U(0) - U(x)) : U(x);
  else return U(x);
}
template <typename U> U ugcd(U a, U b) {
  while (b != 0) { U r = U(a % b); a = b; b = r; }
  return a;
}
template <typename C> struct GcdF {
  C operator()(C x, C y) const {
    if constexpr (std::is_same_v<C, bool>) return x || y;
    else return C(ugcd(uabs(x), uabs(y)));
  }
};
template <typename C> struct LcmF {
  C operator()(C x, C y) const {
    if constexpr (std::is_same_v<C, bool>) return x && y;
    else {
      using U = std::make_unsigned_t<C>;
      const U a = uabs(x), b = uabs(y);
      if (a == 0 || b == 0) return C(0);
      return C(U(U(a / ugcd(a, b)) * b));
    }
  }
};

// Comparisons: inputs cast to their promoted dtype (see compare_dtype), output Bool.
template <template <typename> class F>
void run_compare(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
  DType t = compare_dtype(in[0], in[1]);
  Tensor a = ew::as_dtype(in[0], t), b = ew::as_dtype(in[1], t);
  KILN_DISPATCH_ALL(t, [&](auto tag) {
    using T = decltype(tag);
    ew::binary_loop<T, bool>(a, b, out[0], F<compute_t<T>>{});
  });
}
template <typename C> struct EqF { bool operator()(C x, C y) const { return x == y; } };
template <typename C> struct NeF { bool operator()(C x, C y) const { return x != y; } };
template <typename C> struct GtF { bool operator()(C x, C y) const { return x > y; } };
template <typename C> struct GeF { bool operator()(C x, C y) const { return x >= y; } };
template <typename C> struct LtF { bool operator()(C x, C y) const { return x < y; } };
template <typename C> struct LeF { bool operator()(C x, C y) const { return x <= y; } };

// Logical ops: inputs cast to Bool.
template <template <typename> class F>
void run_logical(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
  Tensor a = ew::as_dtype(in[0], DType::Bool), b = ew::as_dtype(in[1], DType::Bool);
  ew::binary_loop<bool, bool>(a, b, out[0], F<bool>{});
}
template <typename C> struct AndF { bool operator()(bool x, bool y) const { return x && y; } };
template <typename C> struct OrF { bool operator()(bool x, bool y) const { return x || y; } };
template <typename C> struct XorF { bool operator()(bool x, bool y) const { return x != y; } };


using TV = std::vector<Tensor>;

TV bprop_add(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {reduce_grad(g[0], in[0]), reduce_grad(g[0], in[1])};
}
TV bprop_sub(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {reduce_grad(g[0], in[0]), reduce_grad(ops::neg(g[0]), in[1])};
}
TV bprop_mul(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {reduce_grad(ops::mul(g[0], in[1]), in[0]), reduce_grad(ops::mul(g[0], in[0]), in[1])};
}
// d(a/b) = g/b, -g·a/b²
TV bprop_div(const TV& in, const TV&, const TV& g, const Attrs&) {
  Tensor ga = ops::div(g[0], in[1]);
  Tensor gb = ops::neg(ops::div(ops::mul(ga, in[0]), in[1]));
  return {reduce_grad(ga, in[0]), reduce_grad(gb, in[1])};
}
// d(a mod b) = g, -g·floor(a/b)
TV bprop_mod(const TV& in, const TV&, const TV& g, const Attrs&) {
  return {reduce_grad(g[0], in[0]), reduce_grad(ops::neg(ops::mul(g[0], ops::floor_div(in[0], in[1]))), in[1])};
}
// fmod(a, b) = a − trunc(a/b)·b: d/da = 1, d/db = −trunc(a/b), with trunc(a/b) formed as (a − fmod(a, b))/b (the
// exact quotient of the remainder, not a rounded a/b). Where b = 0 the gradient for b is taken as 0.
TV bprop_fmod(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor &a = in[0], &b = in[1];
  Tensor zero = ops::equal(b, Tensor::scalar(0.0, b.dtype(), true));
  Tensor bs = ops::select(zero, ops::ones_like(b), b);
  Tensor q = ops::select(zero, ops::zeros_like(out[0]), ops::div(ops::sub(a, out[0]), bs));
  return {reduce_grad(g[0], a), reduce_grad(ops::neg(ops::mul(g[0], q)), b)};
}
// d zeta(s, q)/dq = −s·zeta(s + 1, q) (Σₖ −s (q + k)^(−s−1)); s gets no gradient (MindSpore's Zeta bprop gives
// none, nor does PyTorch's special.zeta).
TV bprop_zeta(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor &s = in[0], &q = in[1];
  const Tensor s1 = ops::add(s, Tensor::scalar(1.0, s.dtype(), true));
  return {Tensor(), reduce_grad(ops::neg(ops::mul(g[0], ops::mul(s, ops::zeta(s1, q)))), q)};
}
// d(a^b) = g·b·a^(b-1), g·a^b·log(a) (taken as 0 where a <= 0, as MindSpore and PyTorch do for the exponent)
TV bprop_pow(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor &a = in[0], &b = in[1];
  Tensor one = Tensor::scalar(1.0, b.dtype(), true);
  Tensor ga = ops::mul(g[0], ops::mul(b, ops::pow(a, ops::sub(b, one))));
  Tensor pos = ops::greater(a, Tensor::scalar(0.0, a.dtype(), true));
  Tensor safe_a = ops::select(pos, a, ops::ones_like(a));
  Tensor y = out[0];
  Tensor gb = ops::mul(g[0], ops::select(pos, ops::mul(y, ops::log(safe_a)), ops::zeros_like(y)));
  return {reduce_grad(ga, a), reduce_grad(gb, b)};
}
// Maximum/Minimum gradients (MindSpore's MaximumGrad/MinimumGrad and PyTorch's maximum/minimum backward agree):
// g goes to the selected input, split 0.5/0.5 at ties (a == b). An input loses g only where it compares as not
// selected (a < b for Maximum), so where either input is NaN (the output is NaN) both inputs get g.
TV bprop_extreme_pair(const TV& in, const TV& g, bool is_max) {
  const Tensor &a = in[0], &b = in[1];
  Tensor z = ops::zeros_like(g[0]);
  Tensor shared = ops::select(ops::equal(a, b), ops::div(g[0], Tensor::scalar(2.0, g[0].dtype(), true)), g[0]);
  Tensor a_loses = is_max ? ops::less(a, b) : ops::greater(a, b);
  Tensor b_loses = is_max ? ops::greater(a, b) : ops::less(a, b);
  return {reduce_grad(ops::select(a_loses, z, shared), a), reduce_grad(ops::select(b_loses, z, shared), b)};
}
// d atan2(y, x) = (x, −y)/(x² + y²), written with both scaled by m = max(|x|, |y|) (no overflow of x² + y², and
// 0 beside an infinite input, as the composite formula gave); 0 at (0, 0), the value the former composite gave
// (the registry's kinks {0.0: None} leave that point unchecked; tests/python/test_erfinv_atan2.py pins it).
TV bprop_atan2(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor &y = in[0], &x = in[1];
  Tensor m = ops::maximum(ops::abs(x), ops::abs(y));
  Tensor zero = ops::equal(m, Tensor::scalar(0.0, m.dtype(), true));
  Tensor one = Tensor::scalar(1.0, m.dtype(), true);
  Tensor ms = ops::select(zero, one, m);
  Tensor xs = ops::div(x, ms), ys = ops::div(y, ms);
  Tensor d = ops::select(zero, one, ops::mul(ops::add(ops::square(xs), ops::square(ys)), ms));
  Tensor gd = ops::div(g[0], d);
  return {reduce_grad(ops::mul(gd, xs), y), reduce_grad(ops::neg(ops::mul(gd, ys)), x)};
}
// d hypot/da = a/h, d hypot/db = b/h; 0 at the origin (where h = 0), as PyTorch.
TV bprop_hypot(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor& h = out[0];
  Tensor zero = ops::equal(h, Tensor::scalar(0.0, h.dtype(), true));
  Tensor hs = ops::select(zero, Tensor::scalar(1.0, h.dtype(), true), h);
  Tensor gh = ops::select(zero, ops::zeros_like(h), ops::div(g[0], hs));
  return {reduce_grad(ops::mul(gh, in[0]), in[0]), reduce_grad(ops::mul(gh, in[1]), in[1])};
}
// d logaddexp/da = e^(a − out) (the softmax weight of a), likewise b; base 2: 2^(a − out).
static TV bprop_logaddexp_base(const TV& in, const TV& out, const TV& g, double ln_base) {
  auto weight = [&](const Tensor& x) {
    Tensor d = ops::sub(x, out[0]);
    if (ln_base != 1.0) d = ops::mul(d, Tensor::scalar(ln_base, d.dtype(), true));
    return ops::mul(g[0], ops::exp(d));
  };
  return {reduce_grad(weight(in[0]), in[0]), reduce_grad(weight(in[1]), in[1])};
}
TV bprop_logaddexp(const TV& in, const TV& out, const TV& g, const Attrs&) {
  return bprop_logaddexp_base(in, out, g, 1.0);
}
TV bprop_logaddexp2(const TV& in, const TV& out, const TV& g, const Attrs&) {
  return bprop_logaddexp_base(in, out, g, 0.693147180559945309417232121458176568);
}
// d copysign(x, y)/dx = sign(x)·(±1 as the result's sign) = sign(x)·sign(out) (0 at x = 0, MindSpore 2.10's
// gradient through abs); y gets none (MindSpore: 0).
TV bprop_copysign(const TV& in, const TV& out, const TV& g, const Attrs&) {
  return {reduce_grad(ops::mul(g[0], ops::mul(ops::sign(in[0]), ops::sign(out[0]))), in[0]), Tensor()};
}
// d xlogy/dx = log(y), d/dy = x/y; both 0 where x == 0 and y <= 0 or y = inf (the points where the value is the
// defined 0, not x·log y). At x == 0 with 0 < y < inf d/dx stays log(y) (MindSpore 2.10's gradient).
TV bprop_xlogy(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor &x = in[0], &y = in[1];
  Tensor zero = Tensor::scalar(0.0, g[0].dtype(), true);
  Tensor cut = ops::logical_and(ops::equal(x, Tensor::scalar(0.0, x.dtype(), true)),
                                ops::logical_or(ops::less_equal(y, Tensor::scalar(0.0, y.dtype(), true)),
                                                ops::equal(y, Tensor::scalar(INFINITY, y.dtype(), true))));
  Tensor ys = ops::select(cut, Tensor::scalar(1.0, y.dtype(), true), y);
  Tensor gx = ops::select(cut, zero, ops::mul(g[0], ops::log(ys)));
  Tensor gy = ops::select(cut, zero, ops::div(ops::mul(g[0], x), ys));
  return {reduce_grad(gx, x), reduce_grad(gy, y)};
}
// fmax/fmin gradients as MindSpore 2.10's Fmax bprop (oracle): g goes to a where a >= b (fmax; a <= b for fmin) or b
// is NaN, else to b: ties (0.0 vs -0.0 too) go to a, where both are NaN to a (MindSpore 2.10: the gradients of
// fmax([2, 0], [2, -0]).sum() are [1, 1] and [0, 0]; PyTorch's fmax/fmin backward give a tie to a as well).
static TV bprop_fminmax(const TV& in, const TV& g, bool is_max) {
  const Tensor &a = in[0], &b = in[1];
  Tensor z = Tensor::scalar(0.0, g[0].dtype(), true);
  Tensor a_wins = ops::logical_or(is_max ? ops::greater_equal(a, b) : ops::less_equal(a, b), ops::not_equal(b, b));
  return {reduce_grad(ops::select(a_wins, g[0], z), a), reduce_grad(ops::select(a_wins, z, g[0]), b)};
}
TV bprop_fmax(const TV& in, const TV&, const TV& g, const Attrs&) { return bprop_fminmax(in, g, true); }
TV bprop_fmin(const TV& in, const TV&, const TV& g, const Attrs&) { return bprop_fminmax(in, g, false); }
TV bprop_maximum(const TV& in, const TV&, const TV& g, const Attrs&) { return bprop_extreme_pair(in, g, true); }
TV bprop_minimum(const TV& in, const TV&, const TV& g, const Attrs&) { return bprop_extreme_pair(in, g, false); }

// ---- select(cond, x, y) ----
std::vector<TensorMeta> infer_select(const std::vector<Tensor>& in, const Attrs&) {
  KILN_CHECK(in[0].dtype() == DType::Bool, Type, "For 'Select', the condition must be a Bool tensor, but got ",
             dtype_name(in[0].dtype()), ".");
  Shape s = broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape(), "Select"), in[2].shape(), "Select");
  return {{s, binary_dtype(in[1], in[2])}};
}
void run_select(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
  DType t = out[0].dtype();
  const Tensor& c = in[0];
  Tensor x = ew::as_dtype(in[1], t), y = ew::as_dtype(in[2], t);
  const Shape& os = out[0].shape();
  cpu::DimVec sc, sx, sy;
  cpu::broadcast_strides(c.shape(), c.strides(), os, sc);
  cpu::broadcast_strides(x.shape(), x.strides(), os, sx);
  cpu::broadcast_strides(y.shape(), y.strides(), os, sy);
  KILN_DISPATCH_ALL(t, [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = c.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out[0].data<T>();
    std::array<const int64_t*, 4> st{out[0].strides().data(), sc.data(), sx.data(), sy.data()};
    cpu::strided_loop_par<4>(os, st, [&](const int64_t* off, int64_t n, const int64_t* s) {
      T* o = po + off[0];
      const bool* c1 = pc + off[1];
      const T* x1 = px + off[2];
      const T* y1 = py + off[3];
      // Contiguous runs (and a broadcast scalar x or y: the bprops' zero) are branch-free blends GCC vectorizes:
      // ew::blend picks by bit masks, not a (mispredicted) branch.
      if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
        cpu::parallel_runs(n, [&](int64_t st, int64_t m) {
          for (int64_t i = st; i < st + m; ++i) o[i] = ew::blend(c1[i], x1[i], y1[i]);
        });
      } else if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 0) {
        const T b = *y1;
        cpu::parallel_runs(n, [&](int64_t st, int64_t m) {
          for (int64_t i = st; i < st + m; ++i) o[i] = ew::blend(c1[i], x1[i], b);
        });
      } else if (s[0] == 1 && s[1] == 1 && s[2] == 0 && s[3] == 1) {
        const T a = *x1;
        cpu::parallel_runs(n, [&](int64_t st, int64_t m) {
          for (int64_t i = st; i < st + m; ++i) o[i] = ew::blend(c1[i], a, y1[i]);
        });
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = ew::blend(c1[i * s[1]], x1[i * s[2]], y1[i * s[3]]);
      }
    });
  });
}
TV bprop_select(const TV& in, const TV&, const TV& g, const Attrs&) {
  // A 0-d weak zero broadcasts: same result as zeros_like(g) without filling a whole tensor.
  Tensor z = Tensor::scalar(0.0, g[0].dtype(), true);
  return {Tensor(), reduce_grad(ops::select(in[0], g[0], z), in[1]), reduce_grad(ops::select(in[0], z, g[0]), in[2])};
}

}  // namespace

namespace ops_impl {
void register_elementwise_binary() {
  // The arithmetic, comparison and logical ops: their rows in src/ops/schema/ops.yaml (kernel, dtype rule, bprop).
#include "registry_elementwise_binary.inc"
  OpDef d;
  d.id = OpId::Select;
  d.infer = infer_select;
  d.cpu = run_select;
  d.bprop = bprop_select;
  register_op(d);
}
}  // namespace ops_impl

namespace ops {
Tensor select(const Tensor& c, const Tensor& x, const Tensor& y) { return apply1(OpId::Select, {c, x, y}); }
}  // namespace ops
}  // namespace kiln
