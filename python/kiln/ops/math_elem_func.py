"""Elementwise math built from Kiln's existing kernels (MindSpore 2.10's ops.atan/arctan, asin/arcsin, acos/arccos,
atan2/arctan2, deg2rad, rad2deg, exp2, log2, log10, logaddexp, logaddexp2, logit, frac, trunc, truncate_div,
truncate_mod, fmod, fmax, fmin, float_power, with their Primitive classes and Tensor methods; signs, predicates
and the other binary ops are in math_misc_func.py). Gradients come from the building blocks; the branch an elementwise `select` does not take is fed
a harmless value, so no NaN/inf leaks into a gradient from the other side.

atan/asin/acos and log2/log10 are one C++ op each (libm; src/ops/elementwise_unary.cpp), as is atan2 (Atan2,
src/ops/elementwise_binary.cpp). Formulas of the composites (accurate over the whole domain, not only where the
textbook identity is):
  logaddexp(a, b) = max + log1p(exp(−|a − b|)) (a == b, infinities included: max + log 2);
  hypot(a, b) = m·√(1 + (n/m)²), m = max(|a|, |b|), n = min (no overflow; inf wins over NaN as in C);
  fmod/truncate_mod: the remainder with the sign of the dividend; truncate_div rounds the quotient toward 0.
Dtypes follow MindSpore 2.10 (checked on CPU): ops that MindSpore computes in float only raise TypeError for
integer/bool inputs; exp2, copysign, ldexp, sinc, xlogy of integers compute in float32; float_power in float64."""
import math
import numbers


from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop

__all__ = ["atan", "arctan", "asin", "arcsin", "acos", "arccos", "atan2", "arctan2", "deg2rad", "rad2deg", "exp2",
           "log2", "log10", "logaddexp", "logaddexp2", "logit", "frac", "trunc", "truncate_div", "truncate_mod",
           "fmod", "fmax", "fmin", "float_power"]

_LOW = (mstype.float16, mstype.bfloat16)


# ---------------------------------------------------------------------------------------------- argument helpers

def _float_only(x, op, name="input"):
    """A float Tensor; TypeError naming the op for a non-Tensor or an integer/bool Tensor (MindSpore's rule)."""
    x = _tensor_arg(x, op, name)
    if not mstype.is_float(x.dtype):
        raise TypeError(f"For '{op}', '{name}' must be a float Tensor, but got {_got(x)}.")
    return x


def _as_float(x, op, name="input"):
    """A Tensor in float: integer and bool inputs become float32."""
    x = _tensor_arg(x, op, name)
    return mstype.as_float_input(x, op)


def _operand(op, name, v):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, numbers.Number) and not isinstance(v, complex):
        return v
    raise TypeError(f"For '{op}', '{name}' must be a Tensor or a number, but got {_got(v)}.")


def _pair(op, a, b, names=("input", "other")):
    a, b = _operand(op, names[0], a), _operand(op, names[1], b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"For '{op}', at least one of '{names[0]}' and '{names[1]}' must be a Tensor, but got "
                        f"{_got(a)} and {_got(b)}.")
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        sa, sb = a.shape, b.shape
        if sa != sb and not _broadcastable(sa, sb):
            raise ValueError(f"For '{op}', the shapes {tuple(sa)} and {tuple(sb)} do not broadcast.")
    return a, b


def _broadcastable(sa, sb):
    """True when shapes sa and sb broadcast (NumPy's rule: trailing dims equal or 1). A plain loop: NumPy's
    broadcast_shapes costs microseconds per call, more than the kernels of small tensors."""
    for x, y in zip(reversed(sa), reversed(sb)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _result_dtype(a, b):
    """The dtype MindSpore's arithmetic gives a op b (a Python number is weak: it only lifts int to float32)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return _core.promote_types(a.dtype, b.dtype)
    t, s = (a, b) if isinstance(a, Tensor) else (b, a)
    if isinstance(s, float) and not mstype.is_float(t.dtype):
        return mstype.float32
    if isinstance(s, numbers.Integral) and not isinstance(s, bool) and t.dtype == mstype.bool_:
        return mstype.int64
    return t.dtype


def _cast_to(v, dtype):
    if isinstance(v, Tensor):
        return v if v.dtype == dtype else _core.cast(v, dtype)
    return v


def _same_float_tensors(a, b):
    """True for two Tensors of one float dtype and one shape: the case a binary float kernel takes as it is, so the
    wrappers call it directly (their argument checks cost more than the kernel on small tensors)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        dt = a.dtype
        return dt == b.dtype and dt in mstype.float_type and a.shape == b.shape
    return False


def _float_pair(op, a, b, names=("input", "other"), ints="float32"):
    """(a, b) in their common float dtype. ints: "float32" (integer results compute in float32) or "error"
    (TypeError when the common dtype is not float, as MindSpore's float-only kernels). A complex common dtype raises
    TypeError naming the op (a cast to float would drop the imaginary part)."""
    a, b = _pair(op, a, b, names)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype == b.dtype and a.dtype in mstype.float_type:
        return a, b  # the common case, without the promotion lookups
    dt = _result_dtype(a, b)
    if mstype.is_complex(dt):
        raise TypeError(f"For '{op}', the dtype {dt} is not supported (Kiln's complex ops: "
                        "docs/decisions/complex-dtypes.md).")
    if not mstype.is_float(dt):
        if ints == "error":
            raise TypeError(f"For '{op}', the inputs must be float (or one float Tensor with a number), but got "
                            f"{_got(a)} and {_got(b)}.")
        dt = mstype.float32
    return _cast_to(a, dt), _cast_to(b, dt)


def _full_like(x, value, dtype=None):
    return _core.full(list(x.shape), value, dtype or x.dtype)


def _bshape(*vs):
    return list(_broadcast_shapes(*(tuple(v.shape) for v in vs if isinstance(v, Tensor))))


def _tensor(v, dtype, shape=None):
    """v as a Tensor of `dtype` (a Python number becomes a 0-d tensor)."""
    if isinstance(v, Tensor):
        return _cast_to(v, dtype)
    return _core.full([] if shape is None else shape, float(v), dtype)


def _up(x):
    """float16/bfloat16 compute in float32 (the polynomial/series steps would lose the few bits they have)."""
    return _core.cast(x, mstype.float32) if x.dtype in _LOW else x


def _down(y, dtype):
    return y if y.dtype == dtype else _core.cast(y, dtype)


# ---------------------------------------------------------------------------------------------- inverse trig

def _unit_sign(neg, like):
    """−1 where `neg`, else 1 (so |x| = x·s has derivative s at 0 too, not abs's 0)."""
    return _core.select(neg, _full_like(like, -1.0), _full_like(like, 1.0))


@defop(primitive="Atan", tensor="atan", mint="atan")
def atan(input):
    """MindSpore's ops.atan(input) (arctan): the inverse tangent in (−π/2, π/2), same float dtype; one C++ op (Atan:
    libm's atan, float16/bfloat16 computed in float32). Raises TypeError for a non-Tensor or an integer/bool input."""
    return _core.atan(_float_only(input, "atan"))


@defop(name="arctan", tensor="arctan", mint="arctan")
def arctan(input):
    """MindSpore's ops.arctan(input): the same as ops.atan (the inverse tangent)."""
    return _core.atan(_float_only(input, "arctan"))


@defop(primitive="Atan2", tensor="atan2", mint="atan2")
def atan2(input, other):
    """MindSpore's ops.atan2(input, other) (arctan2): the angle of the point (other, input) — atan(input/other) in
    the right quadrant, in [−π, π], with C99's ±0/±inf rules (atan2(±0, −0) = ±π, atan2(±inf, ±inf) = ±π/4 or ±3π/4).
    Broadcasting; a number may stand for one side. Float results (an integer Tensor with a float number gives
    float32); two integer inputs raise TypeError (MindSpore's rule), as does a non-Tensor pair."""
    if _same_float_tensors(input, other):
        return _core.atan2(input, other)
    y, x = _float_pair("atan2", input, other, ints="error")
    # one C++ Atan2 op (elementwise_binary.cpp: libm's atan2, float16/bfloat16 in float32, broadcasting); a number
    # stays a weak scalar, so the Tensor's float dtype is the result's
    return _core.atan2(y if isinstance(y, Tensor) else float(y), x if isinstance(x, Tensor) else float(x))


@defop(name="arctan2", tensor="arctan2", mint="arctan2")
def arctan2(input, other):
    """MindSpore's ops.arctan2(input, other): the same as ops.atan2."""
    return atan2(input, other)


@defop(primitive="Asin", tensor="asin", mint="asin")
def asin(input):
    """MindSpore's ops.asin(input) (arcsin): the inverse sine in [−π/2, π/2], NaN outside [−1, 1]. Same float dtype;
    one C++ op (Asin: libm's asin, float16/bfloat16 in float32). Raises TypeError for a non-Tensor or an
    integer/bool input."""
    return _core.asin(_float_only(input, "asin"))


@defop(name="arcsin", tensor="arcsin", mint="arcsin")
def arcsin(x):
    """MindSpore's ops.arcsin(x): the same as ops.asin."""
    return _core.asin(_float_only(x, "arcsin", "x"))


@defop(primitive="ACos", tensor="acos", mint="acos")
def acos(input):
    """MindSpore's ops.acos(input) (arccos): the inverse cosine in [0, π], NaN outside [−1, 1]. Same float dtype;
    one C++ op (ACos: libm's acos, float16/bfloat16 in float32). Raises TypeError for a non-Tensor or an
    integer/bool input."""
    return _core.acos(_float_only(input, "acos"))


@defop(name="arccos", tensor="arccos", mint="arccos")
def arccos(input):
    """MindSpore's ops.arccos(input): the same as ops.acos."""
    return _core.acos(_float_only(input, "arccos"))


@defop(tensor="deg2rad")
def deg2rad(x):
    """MindSpore's ops.deg2rad(x): x·π/180 (degrees to radians), same float dtype. Raises TypeError for a non-Tensor
    or an integer/bool input."""
    return _core.mul(_float_only(x, "deg2rad", "x"), math.pi / 180.0)


@defop(tensor="rad2deg")
def rad2deg(x):
    """MindSpore's ops.rad2deg(x): x·180/π (radians to degrees), same float dtype. Raises TypeError for a
    non-Tensor or an integer/bool input."""
    return _core.mul(_float_only(x, "rad2deg", "x"), 180.0 / math.pi)


# ---------------------------------------------------------------------------------------------- exp / log

@defop(mint="exp2")
def exp2(input):
    """MindSpore's ops.exp2(input): 2ˣ; integer and bool inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.pow(2.0, _as_float(input, "exp2"))


@defop(tensor="log2", mint="log2")
def log2(input):
    """MindSpore's ops.log2(input): log₂ x (−inf at 0, NaN below; exact at powers of two), same float dtype; one
    C++ op (Log2: libm's log2). Raises TypeError for a non-Tensor or an integer/bool input."""
    return _core.log2(_float_only(input, "log2"))


@defop(tensor="log10", mint="log10")
def log10(input):
    """MindSpore's ops.log10(input): log₁₀ x (−inf at 0, NaN below), same float dtype; one C++ op (Log10: libm's
    log10). Raises TypeError for a non-Tensor or an integer/bool input."""
    return _core.log10(_float_only(input, "log10"))


def _logaddexp(op, a, b, base2):
    if _same_float_tensors(a, b):
        return (_core.logaddexp2 if base2 else _core.logaddexp)(a, b)
    for name, v in (("input", a), ("other", b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"For '{op}', '{name}' must be a Tensor, but got {_got(v)}.")
        if not mstype.is_float(v.dtype):
            raise TypeError(f"For '{op}', the dtype of 'input' and 'other' must be float, but got {a.dtype} and "
                            f"{b.dtype}.")
    a, b = _pair(op, a, b)
    return (_core.logaddexp2 if base2 else _core.logaddexp)(a, b)  # the LogAddExp(2) kernels


@defop(tensor="logaddexp", mint="logaddexp")
def logaddexp(input, other):
    """MindSpore's ops.logaddexp(input, other): log(eˣ + eʸ) without overflow (max + log1p(e^−|x−y|)); broadcasting.
    Raises TypeError unless both are float Tensors (MindSpore's rule), ValueError for shapes that do not
    broadcast."""
    return _logaddexp("logaddexp", input, other, False)


@defop(tensor="logaddexp2", mint="logaddexp2")
def logaddexp2(input, other):
    """MindSpore's ops.logaddexp2(input, other): log₂(2ˣ + 2ʸ) without overflow; broadcasting. Raises TypeError
    unless both are float Tensors, ValueError for shapes that do not broadcast."""
    return _logaddexp("logaddexp2", input, other, True)


@defop(primitive="Logit", prim_attrs={"eps": ("eps", -1.0)}, tensor="logit")
def logit(input, eps=None):
    """MindSpore's ops.logit(input, eps=None): log(x/(1 − x)) = log x − log1p(−x); with eps (a float ≥ 0) x is first
    clamped to [eps, 1 − eps] (eps None or negative: no clamping, so NaN outside [0, 1], ±inf at 1 and 0). Same float
    dtype. Raises TypeError for a non-Tensor, an integer/bool input or a non-float eps."""
    x = _float_only(input, "logit")
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
            raise TypeError(f"For 'logit', 'eps' must be a float or None, but got {_got(eps)}.")
        if eps >= 0:
            x = _core.clip(x, float(eps), 1.0 - float(eps))
    return _core.sub(_core.log(x), _core.log1p(_core.neg(x)))


# ---------------------------------------------------------------------------------------------- rounding / remainders

@defop(primitive="Trunc", tensor="trunc", mint="trunc")
def trunc(input):
    """MindSpore's ops.trunc(input): x rounded toward zero (−2.7 → −2.0, −0.5 → −0.0), one Trunc kernel
    (elementwise_unary.cpp: std::trunc); integer and bool inputs are returned unchanged. Zero gradient. Raises
    TypeError for a non-Tensor or a complex Tensor (MindSpore 2.10)."""
    x = mstype.refuse_complex(_tensor_arg(input, "trunc"), "trunc")
    return _core.trunc(x) if mstype.is_float(x.dtype) else _core.identity(x)


@defop(tensor="frac")
def frac(x):
    """MindSpore's ops.frac(x): x − trunc(x), the fractional part with x's sign; integer inputs give zeros of their
    dtype (bool gives Int64 zeros, as MindSpore). Gradient 1. Raises TypeError for a non-Tensor or a complex
    Tensor (MindSpore 2.10)."""
    t = mstype.refuse_complex(_tensor_arg(x, "frac", "x"), "frac")
    if not mstype.is_float(t.dtype):
        return _core.zeros_like(t if t.dtype != mstype.bool_ else _core.cast(t, mstype.int64))
    return _core.sub(t, _core.stop_gradient(_core.trunc(t)))


def _int_trunc_div(a, b):
    q = _core.floor_div(a, b)
    r = _core.sub(a, _core.mul(q, b))
    fix = _core.logical_and(_core.not_equal(r, 0), _core.not_equal(_core.less(a, 0), _core.less(b, 0)))
    return _core.select(fix, _core.add(q, 1), q)


@defop(primitive="TruncateDiv")
def truncate_div(x, y):
    """MindSpore's ops.truncate_div(x, y): x / y rounded toward zero (7 / −4 → −1); integers stay integers, floats
    give trunc(x / y). One TruncateDiv kernel (elementwise_binary.cpp); an integer zero divisor gives the dtype's
    largest value for x > 0, its lowest for x < 0 and 0 for x = 0 (MindSpore 2.10's Int32 values). Broadcasting; a
    number may stand for one side. Not differentiable. Raises TypeError (no Tensor, bool inputs), ValueError (shapes
    that do not broadcast)."""
    if _same_float_tensors(x, y):
        return _core.truncate_div(x, y)
    a, b, dt = _numeric_pair("truncate_div", x, y, ("x", "y"))
    return _core.truncate_div(a, b)


def _numeric_pair(op, a, b, names):
    """(a, b) as Tensors of their result dtype (a number becomes a 0-d Tensor; the kernels broadcast), and that dtype.
    Raises TypeError for bool inputs or no Tensor, ValueError for shapes that do not broadcast."""
    a, b = _pair(op, a, b, names)
    for v in (a, b):
        if isinstance(v, Tensor) and v.dtype == mstype.bool_:
            raise TypeError(f"For '{op}', the inputs must be numeric, but got {_got(v)}.")
    dt = _result_dtype(a, b)
    return _tensor_or_int(a, dt), _tensor_or_int(b, dt), dt


def _tensor_or_int(v, dtype):
    """v as a Tensor of `dtype`; a Python int for an integer dtype stays exact (no float round trip)."""
    if isinstance(v, Tensor):
        return _cast_to(v, dtype)
    if not mstype.is_float(dtype) and isinstance(v, numbers.Integral):
        return _core.full([], int(v), dtype)
    return _core.full([], float(v), dtype)


def _trunc_mod(op, x, y, names):
    if _same_float_tensors(x, y):
        return _core.fmod(x, y)  # the common case, without the promotion lookups
    a, b = _pair(op, x, y, names)
    for v in (a, b):
        if isinstance(v, Tensor) and v.dtype == mstype.bool_:
            raise TypeError(f"For '{op}', the inputs must be numeric, but got {_got(v)}.")
    dt = _result_dtype(a, b)
    # one C++ Fmod op (elementwise_binary.cpp: std::fmod for floats, C's truncating % for integers with a zero
    # divisor giving the dividend, as MindSpore 2.10); broadcasting in the kernel, a number stays a weak scalar
    return _core.fmod(_cast_to(a, dt), _cast_to(b, dt))


@defop(primitive="TruncateMod")
def truncate_mod(x, y):
    """MindSpore's ops.truncate_mod(x, y): x − truncate_div(x, y)·y, the remainder with the sign of x (C's fmod).
    Broadcasting. Raises TypeError (no Tensor, bool inputs), ValueError (shapes that do not broadcast)."""
    return _trunc_mod("truncate_mod", x, y, ("x", "y"))


@defop(tensor="fmod", mint="fmod")
def fmod(input, other):
    """MindSpore's ops.fmod(input, other): the remainder of input / other with the sign of input (C's fmod; compare
    ops.remainder, which has the sign of other), one Fmod kernel. Integers stay integers (a divisor of 0 gives input,
    as MindSpore 2.10); an integer Tensor with a float number gives float32; fmod(x, ±inf) = x for finite x (C,
    NumPy and PyTorch; MindSpore 2.10 gives NaN there). Gradient: 1 for input, −trunc(input/other) for other. Raises TypeError (no Tensor, bool inputs),
    ValueError (shapes that do not broadcast)."""
    return _trunc_mod("fmod", input, other, ("input", "other"))


def _fminmax(op, a, b, kernel):
    if _same_float_tensors(a, b):
        return kernel(a, b)  # the common case, without the promotion lookups
    a, b, _ = _numeric_pair(op, a, b, ("input", "other"))
    return kernel(a, b)


@defop(primitive="Fmax", tensor="fmax")
def fmax(input, other):
    """MindSpore's ops.fmax(input, other): the elementwise maximum ignoring NaN (NaN only where both are NaN; NumPy's
    fmax), one Fmax kernel (elementwise_binary.cpp). Broadcasting; result dtype the promoted one. Gradient as
    MindSpore 2.10's: to input where input >= other or other is NaN, else to other (ties go to input). Raises
    TypeError (no Tensor, bool inputs), ValueError (shapes that do not broadcast)."""
    return _fminmax("fmax", input, other, _core.fmax)


@defop(primitive="Fmin", tensor="fmin")
def fmin(input, other):
    """MindSpore's ops.fmin(input, other): the elementwise minimum ignoring NaN (NumPy's fmin; MindSpore 2.10's CPU
    kernel fails, Kiln follows PyTorch), one Fmin kernel. Broadcasting. Gradient fmax's rule (to input where
    input <= other or other is NaN, else to other; ties go to input, as PyTorch). Raises TypeError (no Tensor, bool inputs), ValueError."""
    return _fminmax("fmin", input, other, _core.fmin)


@defop(tensor="float_power", mint="float_power")
def float_power(input, exponent):
    """MindSpore's ops.float_power(input, exponent): input ** exponent computed in float64 (the result is always
    Float64, as MindSpore and PyTorch). Broadcasting; a number may stand for one side. Raises TypeError (no
    Tensor, a complex Tensor: Kiln has no complex power), ValueError (shapes that do not broadcast)."""
    a, b = _pair("float_power", input, exponent, ("input", "exponent"))
    for v in (a, b):
        if isinstance(v, Tensor):
            mstype.refuse_complex(v, "float_power")
    a = _cast_to(a, mstype.float64) if isinstance(a, Tensor) else float(a)
    b = _cast_to(b, mstype.float64) if isinstance(b, Tensor) else b
    return _core.pow(a, b)
