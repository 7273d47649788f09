"""Signs, predicates and further elementwise ops built from Kiln's existing kernels (MindSpore 2.10's ops.copysign,
heaviside, sgn, signbit, isfinite, isnan, isinf, isposinf, isneginf, isreal, positive, hypot, ldexp, nan_to_num,
sinc, xdivy, xlogy, inv, with their Primitive classes and Tensor methods). Formulas, dtype rules and the helpers are
those of math_elem_func.py (its module docstring)."""
import math
import numbers

import numpy as np

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop
from .math_elem_func import (_bshape, _float_only, _float_pair, _full_like, _int_trunc_div, _pair,
                             _same_float_tensors, _tensor)

__all__ = ["copysign", "heaviside", "sgn", "signbit", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal",
           "positive", "hypot", "ldexp", "nan_to_num", "sinc", "xdivy", "xlogy", "inv"]


# ---------------------------------------------------------------------------------------------- signs

@defop(tensor="copysign")
def copysign(x, other):
    """MindSpore's ops.copysign(x, other): |x| with the sign bit of other, as C's copysign, NumPy and PyTorch:
    copysign(1, −0.0) = −1 (MindSpore 2.10 compares other < 0 and gives 1; docs/decisions/differences-from-mindspore.md).
    Float result (integers compute in float32). One Copysign kernel (elementwise_binary.cpp). Gradient: sign(x)·sign(result) for
    x, 0 at x = 0, and 0 for other (MindSpore 2.10's). Raises TypeError (non-Tensor x, bool x), ValueError (shapes
    that do not broadcast)."""
    if _same_float_tensors(x, other):
        return _core.copysign(x, other)
    t = _tensor_arg(x, "copysign", "x")
    if t.dtype == mstype.bool_:
        raise TypeError(f"For 'copysign', 'x' must not be bool, but got {_got(t)}.")
    a, b = _float_pair("copysign", t, other, ("x", "other"))
    return _core.copysign(a, b if isinstance(b, Tensor) else float(b))


@defop(primitive="Heaviside", tensor="heaviside")
def heaviside(input, values):
    """MindSpore's ops.heaviside(input, values): 0 where input < 0, `values` where input == 0, 1 where input > 0, and
    0 where input is NaN (MindSpore 2.10's and PyTorch's value; NumPy gives NaN). One Heaviside kernel
    (elementwise_binary.cpp). Both Tensors of the same dtype (MindSpore's rule); broadcasting. Not differentiable
    (zero gradient). Raises TypeError (non-Tensor, different dtypes, bool), ValueError (shapes)."""
    x, v = _tensor_arg(input, "heaviside"), _tensor_arg(values, "heaviside", "values")
    if x.dtype != v.dtype or x.dtype == mstype.bool_:
        raise TypeError(f"For 'heaviside', 'input' and 'values' must have the same numeric dtype, but got {x.dtype} "
                        f"and {v.dtype}.")
    x, v = _pair("heaviside", x, v, ("input", "values"))
    return _core.heaviside(x, v)


@defop(tensor="sgn")
def sgn(input):
    """MindSpore's ops.sgn(input): the sign (−1, 0, 1; NaN stays NaN) of a real Tensor (complex inputs do not exist
    in Kiln), same dtype. Zero gradient. Raises TypeError for a non-Tensor or bool input."""
    x = _tensor_arg(input, "sgn")
    if x.dtype == mstype.bool_:
        raise TypeError(f"For 'sgn', the input must be numeric, but got {_got(x)}.")
    return _core.sign(x)


@defop(tensor="signbit")
def signbit(input):
    """MindSpore's ops.signbit(input): Bool, True where input < 0 (MindSpore 2.10's definition and CPU values:
    −0.0 and NaN give False, unlike NumPy's and PyTorch's sign-bit test, which give True for −0.0); False for bool
    inputs. One Less node. Raises TypeError for a non-Tensor."""
    x = _tensor_arg(input, "signbit")
    if x.dtype == mstype.bool_:
        return _core.full(list(x.shape), 0.0, mstype.bool_)
    return _core.less(x, 0)


# ---------------------------------------------------------------------------------------------- predicates

def _pred(op, x, fn, other, complex_any=None):
    """fn(x) for a float Tensor x; `other` (0 or 1) everywhere for integer and bool Tensors. A complex Tensor:
    complex_any True gives fn(real) | fn(imag), False fn(real) & fn(imag) (NumPy's isnan/isinf and isfinite of
    complex; MindSpore 2.10's kernels refuse complex), None raises TypeError (isposinf/isneginf, as PyTorch)."""
    x = _tensor_arg(x, op)
    if mstype.is_float(x.dtype):
        return fn(x)
    if mstype.is_complex(x.dtype):
        if complex_any is None:
            raise TypeError(f"For '{op}', the dtype {x.dtype} is not supported (Kiln's complex ops: "
                            "docs/decisions/complex-dtypes.md).")
        p = _core.view_as_real(x)
        re, im = fn(p[..., 0]), fn(p[..., 1])
        return _core.logical_or(re, im) if complex_any else _core.logical_and(re, im)
    return _core.full(list(x.shape), other, mstype.bool_)


@defop(primitive="IsFinite", tensor="isfinite", mint="isfinite")
def isfinite(input):
    """MindSpore's ops.isfinite(input): Bool, True where x is neither NaN nor ±inf (always True for integer and bool
    inputs; for complex, both parts finite, as NumPy). Raises TypeError for a non-Tensor."""
    return _pred("isfinite", input, lambda x: _core.equal(_core.sub(x, x), 0.0), 1.0, complex_any=False)


@defop(primitive="IsNan", tensor="isnan")
def isnan(input):
    """MindSpore's ops.isnan(input): Bool, True where x is NaN (always False for integer and bool inputs; for complex,
    either part NaN, as NumPy). Raises TypeError for a non-Tensor."""
    return _pred("isnan", input, lambda x: _core.not_equal(x, x), 0.0, complex_any=True)


@defop(primitive="IsInf", tensor="isinf", mint="isinf")
def isinf(input):
    """MindSpore's ops.isinf(input): Bool, True where x is ±inf (False for integer and bool inputs, as PyTorch;
    MindSpore's CPU kernel rejects them; for complex, either part ±inf, as NumPy). Raises TypeError for a
    non-Tensor."""
    return _pred("isinf", input, lambda x: _core.equal(_core.abs(x), math.inf), 0.0, complex_any=True)


@defop(tensor="isposinf")
def isposinf(input):
    """MindSpore's ops.isposinf(input): Bool, True where x is +inf (False for integer and bool inputs). Raises
    TypeError for a non-Tensor or a complex Tensor (as PyTorch; MindSpore 2.10's kernel refuses complex)."""
    return _pred("isposinf", input, lambda x: _core.equal(x, math.inf), 0.0)


@defop(tensor="isneginf", mint="isneginf")
def isneginf(input):
    """MindSpore's ops.isneginf(input): Bool, True where x is −inf (False for integer and bool inputs). Raises
    TypeError for a non-Tensor or a complex Tensor (as PyTorch; MindSpore 2.10's kernel refuses complex)."""
    return _pred("isneginf", input, lambda x: _core.equal(x, -math.inf), 0.0)


@defop(tensor="isreal")
def isreal(input):
    """MindSpore's ops.isreal(input): Bool, True where the imaginary part is 0 (every element of a real dtype).
    Raises TypeError for a non-Tensor."""
    x = _tensor_arg(input, "isreal")
    if mstype.is_complex(x.dtype):
        return _core.equal(_core.view_as_real(x)[..., 1], 0.0)
    return _core.full(list(x.shape), 1.0, mstype.bool_)


@defop(tensor="positive")
def positive(input):
    """MindSpore's ops.positive(input): +x — the input Tensor itself, as MindSpore 2.10 returns it (`ops.positive(x)
    is x`, any dtype, Bool included). Raises TypeError for a non-Tensor."""
    return _tensor_arg(input, "positive")


# ---------------------------------------------------------------------------------------------- misc binary

@defop(primitive="Hypot", tensor="hypot")
def hypot(input, other):
    """MindSpore's ops.hypot(input, other): √(x² + y²) without overflow or underflow (module docstring); inf where
    either is ±inf (even beside NaN, as C). Float result; two integer inputs raise TypeError (MindSpore's rule).
    Broadcasting. Gradient x/h, y/h (0 at the origin, PyTorch's)."""
    if _same_float_tensors(input, other):
        return _core.hypot(input, other)
    a, b = _float_pair("hypot", input, other, ints="error")
    dt = (a if isinstance(a, Tensor) else b).dtype
    return _core.hypot(_tensor(a, dt), _tensor(b, dt))  # the Hypot kernel (std::hypot)


@defop(tensor="ldexp")
def ldexp(x, other):
    """MindSpore's ops.ldexp(x, other): x·2^other; float result (integers compute in float32). Broadcasting; a
    number may stand for either side. Raises TypeError (no Tensor), ValueError (shapes that do not broadcast)."""
    a, b = _float_pair("ldexp", x, other, ("x", "other"))
    return _core.mul(a, _core.pow(2.0, b) if isinstance(b, Tensor) else 2.0 ** float(b))


@defop(primitive="NanToNum", prim_attrs={"nan": ("nan", None), "posinf": ("posinf", None),
                                         "neginf": ("neginf", None)}, tensor="nan_to_num", mint="nan_to_num")
def nan_to_num(input, nan=None, posinf=None, neginf=None):
    """MindSpore's ops.nan_to_num(input, nan=None, posinf=None, neginf=None): NaN → nan (default 0.0), +inf → posinf
    (default the dtype's largest finite value), −inf → neginf (default the lowest). Same float dtype; gradient 1
    where x is finite, 0 where it was replaced. Raises TypeError (non-Tensor, integer/bool input, non-number
    replacement)."""
    x = _float_only(input, "nan_to_num")
    fi = np.finfo(mstype.dtype_to_nptype(x.dtype)) if x.dtype != mstype.bfloat16 else None
    big = float(fi.max) if fi is not None else 3.3895313892515355e38
    vals = []
    for name, v, default in (("nan", nan, 0.0), ("posinf", posinf, big), ("neginf", neginf, -big)):
        if v is None:
            v = default
        elif isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'nan_to_num', '{name}' must be a number or None, but got {_got(v)}.")
        vals.append(float(v))
    out = _core.select(_core.not_equal(x, x), _full_like(x, vals[0]), x)
    out = _core.select(_core.equal(x, math.inf), _full_like(x, vals[1]), out)
    return _core.select(_core.equal(x, -math.inf), _full_like(x, vals[2]), out)


@defop(primitive="Sinc", tensor="sinc", mint="sinc")
def sinc(input):
    """MindSpore's ops.sinc(input): sin(πx)/(πx), 1 at x = 0 (the normalised sinc; NumPy's), NaN at ±inf; πx is
    formed in the input's float dtype, as MindSpore 2.10 does (float32 sinc(1) = −2.78e-8). One Sinc kernel
    (elementwise_unary.cpp). Integer and bool inputs give float32. Gradient (cos(πx) − sinc(x))/x, 0 at 0. Raises
    TypeError for a non-Tensor."""
    return _core.sinc(_tensor_arg(input, "sinc"))


@defop(primitive="Xdivy", tensor="xdivy")
def xdivy(x, y):
    """MindSpore's ops.xdivy(x, y): x / y, and 0 where x == 0 (whatever y is). Float result; two integer inputs
    raise TypeError (MindSpore's rule). Broadcasting; a number may stand for one side."""
    a, b = _float_pair("xdivy", x, y, ("x", "y"), ints="error")
    dt = (a if isinstance(a, Tensor) else b).dtype
    shape = _bshape(a, b)
    a, b = _core.broadcast_to(_tensor(a, dt), shape), _core.broadcast_to(_tensor(b, dt), shape)
    zero = _core.equal(a, 0.0)
    bs = _core.select(zero, _full_like(b, 1.0), b)
    return _core.select(zero, _core.zeros_like(a), _core.div(a, bs))


@defop(primitive="Xlogy", tensor="xlogy", mint="xlogy")
def xlogy(input, other):
    """MindSpore's ops.xlogy(input, other): x·log(y), and 0 where x == 0 unless y is NaN (SciPy's and PyTorch's rule;
    MindSpore 2.10's CPU kernel computes x·log(y) plainly: NaN at x = 0 for y <= 0 and y = inf, 0 for 0 < y < inf).
    One Xlogy kernel (elementwise_binary.cpp). Gradient wrt x: log(y), also at x = 0 (MindSpore 2.10), 0 there when
    y <= 0 or y = inf; wrt y: x/y (0 at those points). Float result (integers compute in float32). Broadcasting; a
    Python number may stand for one side: it is a float32 Tensor, as MindSpore 2.10's scalar_to_tensor makes it, so
    a float16/bfloat16 Tensor with a number gives float32 (float64 stays float64). Raises TypeError (no Tensor),
    ValueError (shapes)."""
    if _same_float_tensors(input, other):
        return _core.xlogy(input, other)
    input, other = (_core.full([], float(v), mstype.float32) if isinstance(v, numbers.Real) else v
                    for v in (input, other))
    a, b = _float_pair("xlogy", input, other)
    dt = (a if isinstance(a, Tensor) else b).dtype
    return _core.xlogy(_tensor(a, dt), _tensor(b, dt))


@defop(primitive="Inv", tensor="inv")
def inv(x):
    """MindSpore's ops.inv(x): 1/x elementwise; integer inputs give the integer quotient 1/x rounded toward zero
    (1, −1 or 0), as MindSpore; complex inputs give 1/z (MindSpore 2.10). Raises TypeError for a non-Tensor or bool
    input."""
    t = _tensor_arg(x, "inv", "x")
    if t.dtype == mstype.bool_:
        raise TypeError(f"For 'inv', the input must be numeric, but got {_got(t)}.")
    if mstype.is_float(t.dtype) or mstype.is_complex(t.dtype):
        return _core.div(1.0, t)
    return _int_trunc_div(_core.ones_like(t), t)
