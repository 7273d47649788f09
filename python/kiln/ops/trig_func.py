"""Trigonometric, hyperbolic and exponential functions built from Kiln's Exp, Log, Log1p, Sin, Cos and Sqrt kernels
(MindSpore 2.10's ops.tan, sinh, cosh, asinh/arcsinh, acosh/arccosh, atanh/arctanh, expm1 and the Tan, Sinh, Cosh,
Asinh, Acosh, Atanh, Expm1 primitives). Gradients come from the building blocks.

The formulas are chosen to stay accurate to float rounding over the whole domain, not only where the textbook
identity is (the references are NumPy's; tests/python/op_registry/composite.py checks them with special values):
  expm1(x) = (u − 1)·x / log(u), u = eˣ, for |x| < 1/2 (Kahan's trick, "Miscellaneous remarks on rounding
             errors", 1990; x where u == 1), and u − 1 elsewhere;
  sinh(x)  = (expm1(x) − expm1(−x))/2 (no cancellation near 0); cosh(x) = (eˣ + e⁻ˣ)/2; both
             ±e^(|x| − log 2) for |x| > 20 (finite as long as the result is); tan = sin/cos;
  asinh(x) = sign(x)·log1p(|x| + x²/(1 + √(1 + x²))), and sign(x)·(log|x| + log 2) for |x| > B;
  acosh(x) = log1p(t + √(2t + t²)) with t = x − 1, and log x + log 2 for x > B (NaN below 1);
             B = 2⁷ (float16), 2¹⁴ (float32), 2²⁸ (float64): beyond B, 1/(4x²) is below the rounding;
  atanh(x) = ½·log1p(2x/(1 − x)) (±inf at ±1, NaN outside [−1, 1]).
Integer inputs compute in float32."""
import math

from .._loader import _core
from ..common import dtype as mstype
from .function import _tensor_arg
from ._opdef import defop

# The Primitive classes (Tan, Sinh, ...), the Tensor methods and the aliases (arcsinh, ...) are derived from the
# @defop declarations by kiln/ops/_opdef.py.
__all__ = ["tan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1"]

def _f(x, op):
    x = _tensor_arg(x, op)
    return x if mstype.is_float(x.dtype) else _core.cast(x, mstype.float32)


def _expm1(x):
    u = _core.exp(x)
    um1 = _core.sub(u, 1.0)
    # Kahan's form only where u − 1 cancels (|x| < 1/2); elsewhere u − 1 is accurate (and cannot overflow a product)
    small = _core.less(_core.abs(x), 0.5)
    one = _core.full([], 1.0, x.dtype)
    u_s = _core.select(small, u, _core.full([], 2.0, x.dtype))  # the branch not taken sees a harmless u
    # log(u) is 0 where u == 1: those take x itself; the divide there is masked out (and gets no gradient)
    safe_log = _core.select(_core.equal(u_s, 1.0), one, _core.log(u_s))
    kahan = _core.div(_core.mul(_core.sub(u_s, 1.0), x), safe_log)
    kahan = _core.select(_core.equal(u_s, 1.0), x, kahan)
    return _core.select(small, kahan, um1)


@defop(primitive="Expm1", tensor="expm1", mint="expm1")
def expm1(input):
    """MindSpore's ops.expm1(input): eˣ − 1, accurate for small |x| (Kahan's formula, module docstring)."""
    return _expm1(_f(input, "expm1"))


def _exp_half(a):
    """e^a / 2 without overflowing where e^a does but e^a / 2 does not: e^(a − log 2)."""
    return _core.exp(_core.sub(a, math.log(2.0)))


@defop(primitive="Sinh", tensor="sinh", mint="sinh")
def sinh(input):
    """MindSpore's ops.sinh(input): (eˣ − e⁻ˣ)/2 via expm1 (accurate near 0); sign(x)·e^(|x| − log 2) for |x| > 20
    (finite up to the dtype's limit)."""
    x = _f(input, "sinh")
    a = _core.abs(x)
    big = _core.greater(a, 20.0)
    xs = _core.select(big, _core.zeros_like(x), x)
    small = _core.mul(_core.sub(_expm1(xs), _expm1(_core.neg(xs))), 0.5)
    large = _exp_half(a)
    return _core.select(big, _core.select(_core.less(x, 0.0), _core.neg(large), large), small)


@defop(primitive="Cosh", tensor="cosh", mint="cosh")
def cosh(input):
    """MindSpore's ops.cosh(input): (eˣ + e⁻ˣ)/2, as e^(|x| − log 2) for |x| > 20."""
    x = _f(input, "cosh")
    a = _core.abs(x)
    big = _core.greater(a, 20.0)
    a_s = _core.select(big, _core.zeros_like(a), a)
    small = _core.mul(_core.add(_core.exp(a_s), _core.exp(_core.neg(a_s))), 0.5)
    return _core.select(big, _exp_half(a), small)


@defop(primitive="Tan", tensor="tan", mint="tan")
def tan(input):
    """MindSpore's ops.tan(input): sin x / cos x."""
    x = _f(input, "tan")
    return _core.div(_core.sin(x), _core.cos(x))


def _big(x):
    """Where the log form takes over: beyond it 1/(4x²) is below the dtype's rounding and x² is still finite."""
    return {mstype.float16: 2.0 ** 7, mstype.bfloat16: 2.0 ** 7, mstype.float32: 2.0 ** 14}.get(x.dtype, 2.0 ** 28)


@defop(primitive="Asinh", tensor="asinh", mint=("asinh", "arcsinh"), aliases=("arcsinh",))
def asinh(input):
    """MindSpore's ops.asinh(input) (arcsinh): the inverse hyperbolic sine (module docstring for the formula)."""
    x = _f(input, "asinh")
    s = _core.select(_core.less(x, 0.0), _core.full([], -1.0, x.dtype), _core.full([], 1.0, x.dtype))
    a = _core.mul(x, s)  # |x|, with derivative s also at 0 (so asinh'(0) = 1)
    big = _core.greater(a, _big(x))
    a_small = _core.select(big, _core.zeros_like(a), a)  # keeps x² finite on the branch not taken
    sq = _core.square(a_small)
    small = _core.log1p(_core.add(a_small, _core.div(sq, _core.add(_core.sqrt(_core.add(sq, 1.0)), 1.0))))
    large = _core.add(_core.log(_core.select(big, a, _core.full([], 1.0, x.dtype))), math.log(2.0))
    return _core.mul(_core.select(big, large, small), s)


@defop(primitive="Acosh", tensor="acosh", mint=("acosh", "arccosh"), aliases=("arccosh",))
def acosh(input):
    """MindSpore's ops.acosh(input) (arccosh): the inverse hyperbolic cosine, NaN for x < 1."""
    x = _f(input, "acosh")
    one = _core.full([], 1.0, x.dtype)
    big = _core.greater(x, _big(x))
    inside = _core.logical_and(_core.greater_equal(x, 1.0), _core.logical_not(big))
    t = _core.sub(_core.select(inside, x, one), 1.0)
    small = _core.log1p(_core.add(t, _core.sqrt(_core.add(_core.mul(t, 2.0), _core.square(t)))))
    large = _core.add(_core.log(_core.select(big, x, one)), math.log(2.0))
    out = _core.select(big, large, small)
    below = _core.logical_not(_core.greater_equal(x, 1.0))  # x < 1, or NaN
    return _core.select(below, _core.full([], float("nan"), x.dtype), out)


@defop(primitive="Atanh", tensor="atanh", mint=("atanh", "arctanh"), aliases=("arctanh",))
def atanh(input):
    """MindSpore's ops.atanh(input) (arctanh): ½·log((1 + x)/(1 − x)), ±inf at ±1, NaN outside [−1, 1]."""
    x = _f(input, "atanh")
    return _core.mul(_core.log1p(_core.div(_core.mul(x, 2.0), _core.sub(1.0, x))), 0.5)
