"""Special functions built from Kiln's Exp, Log, Erf, Sin, Cos, Pow and arithmetic kernels (MindSpore 2.10's
ops.erfc, erfinv, lgamma, digamma, polygamma, zeta, i0, bessel_i0, bessel_i0e, bessel_i1, bessel_i1e and their
Primitive classes / Tensor methods). Gradients come from the building blocks (so d lgamma = digamma, d i0 = i1 to
the accuracy of the formulas). float16/bfloat16 compute in float32. Written for Kiln from the textbook formulas:

  erfc(x): one C++ op (Erfc): libm's erfc in the compute type (accurate in the right tail).
  erfinv(x): one C++ op (Erfinv): M. Giles' single-precision polynomials (GPU Computing Gems, 2011) on float32
      packets (3.6 ulps at most), float64 refined by Newton steps in double (Note [vectorized erfinv], vmath.h).
  lgamma, digamma, polygamma: C++ ops (Lgamma, Digamma, Polygamma with the attribute n), computed in double: C's
      lgamma_r; ψ by the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10 and the asymptotic series ln x − 1/(2x) −
      Σₖ₌₁⁷ B₂ₖ/(2k·x²ᵏ) (DLMF 5.11.2), the reflection ψ(x) = ψ(1 − x) − π·cot(πx) for x < 0 (DLMF 5.5.4); ψ⁽ⁿ⁾ by
      the zeta route below (Note [gamma family] in src/ops/elementwise_unary.cpp).
  zeta(s, q) (Hurwitz): one C++ op (Zeta, in double): Euler–Maclaurin summation, Σₖ₌₀⁸ (q + k)^−s +
      (q + 9)^(1−s)/(s − 1) + (q + 9)^−s/2 + Σⱼ₌₁¹² B₂ⱼ/(2j)!·s(s + 1)…(s + 2j − 2)·(q + 9)^(−s−2j+1) (the scheme of
      Cephes' zeta.c); polygamma(n, x) = (−1)ⁿ⁺¹ n! ζ(n + 1, x) for x > 0, and for
      x < 0 the reflection ψ⁽ⁿ⁾(x) = (−1)ⁿ ψ⁽ⁿ⁾(1 − x) − πⁿ⁺¹ Pₙ(cot πx) (DLMF 5.15.6, A&S 6.4.7), in C++.
  I0, I1 (modified Bessel functions of the first kind): the power series Σₖ (x²/4)ᵏ/(k!·(k + ν)!)·(x/2)^ν (50 terms)
      for |x| ≤ 30, and the asymptotic series e^|x|/√(2π|x|)·Σₖ (−1)ᵏ Πⱼ₌₁ᵏ (4ν² − (2j − 1)²)/(8j)/|x|ᵏ (20 terms)
      above (A&S 9.7.1); i0e/i1e scale by e^−|x| (the asymptotic branch never forms e^|x|, so they do not overflow).
      These four are C++ ops (BesselI0/I0e/I1/I1e, computed in double: Note [Bessel I] in
      src/ops/elementwise_unary.cpp); the others are compositions of Kiln ops.
"""

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop

__all__ = ["erfc", "erfinv", "lgamma", "digamma", "polygamma", "zeta", "i0", "bessel_i0", "bessel_i0e",
           "bessel_i1", "bessel_i1e"]

_LOW = (mstype.float16, mstype.bfloat16)


def _float_only(x, op, name="input"):
    x = _tensor_arg(x, op, name)
    if not mstype.is_float(x.dtype):
        raise TypeError(f"For '{op}', '{name}' must be a float Tensor, but got {_got(x)}.")
    return x


# ---------------------------------------------------------------------------------------------- erfc, erfinv

@defop(primitive="Erfc", tensor="erfc", mint="erfc")
def erfc(input):
    """MindSpore's ops.erfc(input): the complementary error function 1 − erf(x), accurate in the right tail; one C++
    op (Erfc: libm's erfc, float16/bfloat16 computed in float32). Same float dtype. Raises TypeError for a
    non-Tensor or an integer/bool input."""
    return _core.erfc(_float_only(input, "erfc"))


@defop(primitive="Erfinv", tensor="erfinv", mint="erfinv")
def erfinv(input):
    """MindSpore's ops.erfinv(input): the inverse error function on (−1, 1); ±inf at ±1, NaN outside. Same float
    dtype; one C++ op (Erfinv, src/ops/elementwise_unary.cpp and Note [vectorized erfinv] in src/ops/vmath.h).
    Raises TypeError for a non-Tensor or an integer/bool input."""
    x = _float_only(input, "erfinv")
    return _core.erfinv(x)


# ---------------------------------------------------------------------------------------------- gamma family

def _gamma_arg(op, input, ints_ok):
    """The Tensor a gamma-family kernel takes: float as it is; integers (ints_ok) go to the kernel, which gives
    float32; bool, complex and (unless ints_ok) integers raise TypeError."""
    x = _tensor_arg(input, op)
    if not mstype.is_float(x.dtype) and (not ints_ok or x.dtype == mstype.bool_ or mstype.is_complex(x.dtype)):
        raise TypeError(f"For '{op}', 'input' must be a float Tensor, but got {_got(x)}.")
    return x


@defop(primitive="Lgamma", tensor="lgamma")
def lgamma(input):
    """MindSpore's ops.lgamma(input): log|Γ(x)| (+inf at 0, the negative integers and ±inf; exactly 0 at 1 and 2);
    integer inputs give float32 (MindSpore). One C++ op (Lgamma: C's lgamma_r in double, Note [gamma family] in
    src/ops/elementwise_unary.cpp). Gradient digamma(x). Raises TypeError for a non-Tensor or bool."""
    return _core.lgamma(_gamma_arg("lgamma", input, True))


@defop(primitive="Digamma", tensor="digamma")
def digamma(input):
    """MindSpore's ops.digamma(input): ψ(x) = d/dx lgamma(x) (−inf at +0, +inf at −0, NaN at the negative integers
    and −inf; PyTorch's). Same float dtype. One C++ op (Digamma, in double: the recurrence to x ≥ 10 and the
    asymptotic series DLMF 5.11.2; the reflection DLMF 5.5.4 below 0; Note [gamma family]). Gradient
    polygamma(1, x). Raises TypeError for a non-Tensor or an integer/bool input."""
    return _core.digamma(_gamma_arg("digamma", input, False))


@defop(primitive="Zeta")
def zeta(input, other):
    """MindSpore's ops.zeta(input, other): the Hurwitz zeta function ζ(s = input, q = other) = Σₖ (q + k)^−s, for
    s > 1 and q > 0 (MindSpore 2.10's values outside it: inf at s = 1; NaN for s < 1; at the poles q = 0, −1, ...
    inf for an even integer s, NaN otherwise; q < 0 elsewhere: the sum for an integer s, NaN for other s). Float32
    or float64 Tensors of one dtype, broadcasting. One C++ op (Zeta, in double: the Euler–Maclaurin sum that
    Polygamma uses, Note [gamma family] in src/ops/elementwise_unary.cpp). Gradient for q only (−s·ζ(s + 1, q); MindSpore's Zeta has none for s).
    Raises TypeError (non-Tensor, non-float32/64 input, different dtypes), ValueError (shapes that do not broadcast)."""
    s, q = input, other
    for name, t in (("input", s), ("other", q)):
        if not isinstance(t, Tensor) or t.dtype not in _ZETA_DTYPES:  # MindSpore 2.10's Zeta: float32/float64 only
            raise TypeError(f"For 'zeta', '{name}' must be a float32 or float64 Tensor, but got {_got(t)}.")
    if s.dtype != q.dtype:
        raise TypeError(f"For 'zeta', 'input' and 'other' must have the same dtype, but got {s.dtype} and {q.dtype}.")
    # one C++ Zeta op (src/ops/elementwise_binary.cpp, in double); shapes that do not broadcast raise its ValueError
    return _core.zeta(s, q)


_ZETA_DTYPES = (mstype.float32, mstype.float64)


@defop(primitive="Polygamma")
def polygamma(n, input):
    """MindSpore's ops.polygamma(n, input): ψ⁽ⁿ⁾(x), the n-th derivative of digamma (n = 0: digamma itself);
    n ≥ 1 uses (−1)ⁿ⁺¹ n! ζ(n + 1, x) for x > 0 and the reflection formula (DLMF 5.15.6) for x < 0 ((−1)ⁿ⁺¹·inf
    at the poles 0, −1, −2, ... and at −inf, NaN at +inf: MindSpore 2.10's values). One C++ op (Polygamma, in
    double; Note [gamma family] in src/ops/elementwise_unary.cpp). Gradient ψ⁽ⁿ⁺¹⁾(x). n: a non-negative int or a
    0-d integer Tensor (its value is read). Same float dtype. Raises TypeError (non-Tensor input, integer input,
    non-integer n), ValueError (n < 0; MindSpore 2.10 gives NaN everywhere there)."""
    x = _float_only(input, "polygamma")
    if isinstance(n, Tensor):
        if n.dtype not in mstype.int_type or n.ndim != 0:
            raise TypeError(f"For 'polygamma', 'n' must be an int or a 0-d integer Tensor, but got {_got(n)}.")
        n = int(n.asnumpy())
    elif not _is_int(n):
        raise TypeError(f"For 'polygamma', 'n' must be an int or a 0-d integer Tensor, but got {_got(n)}.")
    n = int(n)
    if n < 0:
        raise ValueError(f"For 'polygamma', 'n' must be >= 0, but got {n}.")
    return _core.polygamma(n, x)  # one C++ op (Polygamma, attribute n; Note [gamma family])


# ---------------------------------------------------------------------------------------------- Bessel I0, I1
# One C++ op each (BesselI0, BesselI0e, BesselI1, BesselI1e: power series for |x| <= 30, asymptotic expansion beyond,
# in double; Note [Bessel I] in src/ops/elementwise_unary.cpp). The wrappers keep MindSpore's argument rules.

def _bessel_op(op, input, kernel, name):
    return kernel(_float_only(input, op, name))


def _i0(input, op):
    return _bessel_op(op, input, _core.bessel_i0, "x" if op != "i0" else "input")


@defop(tensor="i0")
def i0(input):
    """MindSpore's ops.i0(input): the modified Bessel function of the first kind of order 0, I0(x) (even; grows as
    e^|x|/√(2π|x|), inf beyond ~713 in float64). Same float dtype. Method: module docstring. Raises TypeError for a
    non-Tensor or an integer/bool input."""
    return _i0(input, "i0")


@defop(primitive="BesselI0")
def bessel_i0(x):
    """MindSpore's ops.bessel_i0(x): I0(x), the same as ops.i0. Raises TypeError for a non-Tensor or an
    integer/bool input."""
    return _i0(x, "bessel_i0")


@defop(primitive="BesselI0e")
def bessel_i0e(x):
    """MindSpore's ops.bessel_i0e(x): e^−|x|·I0(x), the exponentially scaled I0 (never overflows; gradient 0 at the
    kink x = 0, PyTorch's). Same float dtype. Raises TypeError for a non-Tensor or an integer/bool input."""
    return _bessel_op("bessel_i0e", x, _core.bessel_i0e, "x")


@defop(primitive="BesselI1")
def bessel_i1(x):
    """MindSpore's ops.bessel_i1(x): the modified Bessel function of the first kind of order 1, I1(x) (odd). Same
    float dtype. Method: module docstring. Raises TypeError for a non-Tensor or an integer/bool input."""
    return _bessel_op("bessel_i1", x, _core.bessel_i1, "x")


@defop(primitive="BesselI1e")
def bessel_i1e(x):
    """MindSpore's ops.bessel_i1e(x): e^−|x|·I1(x), the exponentially scaled I1. Same float dtype. Raises TypeError
    for a non-Tensor or an integer/bool input."""
    return _bessel_op("bessel_i1e", x, _core.bessel_i1e, "x")
