"""Math of kiln.numpy (MindSpore's mindspore.numpy): elementwise functions, comparisons, reductions and products.

Elementwise functions take array-likes (Tensors, numbers, lists; Python numbers stay weak scalars next to a Tensor,
so int32 + 2.5 → float32 as in MindSpore) and an optional `dtype` that casts the result. Integer inputs of the
transcendental functions compute in float32. Reductions follow mindspore.numpy's dtypes (checked against MindSpore
2.10): sum of an integer array is Int64 unless dtype says otherwise; mean keeps the input dtype (so mean of ints
truncates, as in MindSpore) unless dtype is given."""
import builtins
import math
import numbers

import numpy as np

from .. import _engine
from ..ops import _kernels
from .._reduce_dtype import reduce_as
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .. import ops
from .array_creations import asarray

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "float_power",
           "remainder", "mod", "fmod", "maximum", "minimum", "negative", "positive", "absolute", "abs", "fabs", "sign",
           "sqrt", "square", "reciprocal", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sin", "cos",
           "tan", "tanh", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "clip", "equal", "not_equal",
           "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_not",
           "logical_xor", "isnan", "isinf", "isfinite", "isclose", "sum", "mean", "amax", "amin", "max", "min",
           "std", "var", "argmax", "argmin", "ptp", "average", "norm", "dot", "matmul", "outer", "inner", "trace",
           "diag", "logaddexp", "cumsum", "cumprod"]


def _arg(x):
    """A Tensor, or a Python number kept as a (weak) scalar."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return x
    return asarray(x)


def _finish(out, dtype, op):
    if dtype is None:
        return out
    return _kernels.cast(out, mstype.to_dtype(dtype, "dtype", op))


def _float(x):
    t = asarray(x)
    return mstype.as_float_input(t, "mindspore.numpy")


def _binary(name, fn, doc):
    def f(x1, x2, dtype=None):
        a, b = _arg(x1), _arg(x2)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = asarray(a)
        return _finish(fn(a, b), dtype, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"mindspore.numpy.{name}(x1, x2, dtype=None): {doc} (elementwise, broadcasting)."
    return f


def _unary(name, fn, doc, floats=False):
    def f(x, dtype=None):
        t = _float(x) if floats else asarray(x)
        return _finish(fn(t), dtype, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"mindspore.numpy.{name}(x, dtype=None): {doc} (elementwise)."
    return f


add = _binary("add", ops.add, "x1 + x2")
subtract = _binary("subtract", ops.sub, "x1 − x2")
multiply = _binary("multiply", ops.mul, "x1 · x2")
divide = _binary("divide", _kernels.div, "x1 / x2 (true division; ints give float32)")
true_divide = _binary("true_divide", _kernels.div, "x1 / x2 (true division)")
floor_divide = _binary("floor_divide", ops.floor_div, "⌊x1 / x2⌋")
power = _binary("power", _kernels.pow, "x1 ** x2")
remainder = _binary("remainder", _kernels.mod, "x1 − ⌊x1 / x2⌋·x2 (the sign of x2, as NumPy's mod)")
mod = _binary("mod", _kernels.mod, "x1 − ⌊x1 / x2⌋·x2 (the sign of x2)")
maximum = _binary("maximum", ops.maximum, "max(x1, x2)")
minimum = _binary("minimum", ops.minimum, "min(x1, x2)")
equal = _binary("equal", ops.equal, "x1 == x2 (Bool)")
not_equal = _binary("not_equal", ops.not_equal, "x1 != x2 (Bool)")
greater = _binary("greater", ops.greater, "x1 > x2 (Bool)")
greater_equal = _binary("greater_equal", ops.greater_equal, "x1 >= x2 (Bool)")
less = _binary("less", ops.less, "x1 < x2 (Bool)")
less_equal = _binary("less_equal", ops.less_equal, "x1 <= x2 (Bool)")
logical_and = _binary("logical_and", ops.logical_and, "x1 AND x2 (Bool)")
logical_or = _binary("logical_or", ops.logical_or, "x1 OR x2 (Bool)")
logical_xor = _binary("logical_xor", ops.logical_xor, "x1 XOR x2 (Bool)")


def float_power(x1, x2, dtype=None):
    """mindspore.numpy.float_power(x1, x2, dtype=None): x1 ** x2 computed in float (ints become float32; Kiln
    keeps float32 where NumPy would use float64)."""
    return power(_float(x1), x2 if isinstance(x2, (int, float)) else _float(x2), dtype)


def fmod(x1, x2, dtype=None):
    """mindspore.numpy.fmod(x1, x2, dtype=None): the remainder with the sign of x1 (C's fmod; kiln.ops.fmod)."""
    a, b = _arg(x1), _arg(x2)
    if not isinstance(a, Tensor):
        a = asarray(a)
    return _finish(ops.fmod(a, b), dtype, "fmod")


negative = _unary("negative", ops.neg, "−x")
positive = _unary("positive", _kernels.identity, "+x (a copy)")
absolute = _unary("absolute", ops.abs, "|x|")
abs = _unary("abs", ops.abs, "|x|")
fabs = _unary("fabs", ops.abs, "|x| in float", floats=True)
sign = _unary("sign", ops.sign, "−1, 0 or 1")
sqrt = _unary("sqrt", ops.sqrt, "√x", floats=True)
square = _unary("square", ops.square, "x²")
reciprocal = _unary("reciprocal", lambda t: _kernels.div(1.0, t), "1 / x", floats=True)
exp = _unary("exp", ops.exp, "eˣ", floats=True)
expm1 = _unary("expm1", ops.expm1, "eˣ − 1, accurate near 0", floats=True)
exp2 = _unary("exp2", ops.exp2, "2ˣ (kiln.ops.exp2)", floats=True)
log = _unary("log", ops.log, "ln x", floats=True)
log1p = _unary("log1p", _kernels.log1p, "ln(1 + x)", floats=True)
log2 = _unary("log2", ops.log2, "log₂ x (kiln.ops.log2)", floats=True)
log10 = _unary("log10", ops.log10, "log₁₀ x (kiln.ops.log10)", floats=True)
sin = _unary("sin", _kernels.sin, "sin x", floats=True)
cos = _unary("cos", _kernels.cos, "cos x", floats=True)
tan = _unary("tan", ops.tan, "tan x", floats=True)
tanh = _unary("tanh", ops.tanh, "tanh x", floats=True)
sinh = _unary("sinh", ops.sinh, "sinh x", floats=True)
cosh = _unary("cosh", ops.cosh, "cosh x", floats=True)
arcsinh = _unary("arcsinh", ops.asinh, "asinh x", floats=True)
arccosh = _unary("arccosh", ops.acosh, "acosh x", floats=True)
arctanh = _unary("arctanh", ops.atanh, "atanh x", floats=True)
floor = _unary("floor", _kernels.floor, "⌊x⌋")
ceil = _unary("ceil", _kernels.ceil, "⌈x⌉")
trunc = _unary("trunc", ops.trunc, "x rounded toward 0 (kiln.ops.trunc)")
rint = _unary("rint", lambda t: ops.round(t), "x rounded to the nearest integer, halves to even")
logical_not = _unary("logical_not", lambda t: ops.logical_not(t), "NOT x (Bool)")
isnan = _unary("isnan", ops.isnan, "x is NaN (Bool; kiln.ops.isnan)")


def isinf(x, dtype=None):
    """mindspore.numpy.isinf(x, dtype=None): x is ±inf (Bool; kiln.ops.isinf)."""
    return _finish(ops.isinf(asarray(x)), dtype, "isinf")


def isfinite(x, dtype=None):
    """mindspore.numpy.isfinite(x, dtype=None): x is neither NaN nor ±inf (Bool; kiln.ops.isfinite)."""
    return _finish(ops.isfinite(asarray(x)), dtype, "isfinite")


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """mindspore.numpy.isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False): see kiln.ops.isclose."""
    return ops.isclose(asarray(a), asarray(b), rtol, atol, equal_nan)


def clip(x, xmin, xmax, dtype=None):
    """mindspore.numpy.clip(x, xmin, xmax, dtype=None): x limited to [xmin, xmax] (either may be None)."""
    if xmin is None and xmax is None:
        raise ValueError("For 'clip', 'xmin' and 'xmax' must not both be None.")
    return _finish(ops.clamp(asarray(x), xmin, xmax), dtype, "clip")


def logaddexp(x1, x2, dtype=None):
    """mindspore.numpy.logaddexp(x1, x2, dtype=None): log(eˣ¹ + eˣ²) without overflow (kiln.ops.logaddexp; integer
    inputs compute in float32)."""
    a, b = _float(x1), _float(x2)
    dt = _engine.promote_types(a.dtype, b.dtype)
    a = _kernels.cast(a, dt) if a.dtype != dt else a
    b = _kernels.cast(b, dt) if b.dtype != dt else b
    return _finish(ops.logaddexp(a, b), dtype, "logaddexp")


# ---------------------------------------------------------------------------------------------- reductions

def _axes(axis):
    if axis is None:
        return None
    return [axis] if isinstance(axis, numbers.Integral) else list(axis)


def sum(a, axis=None, dtype=None, keepdims=False, initial=None):
    """mindspore.numpy.sum(a, axis=None, dtype=None, keepdims=False, initial=None): the sum over `axis` (all axes
    when None), plus `initial`. Integer and Bool inputs sum to Int64 (MindSpore 2.10) unless dtype is given."""
    t = asarray(a)
    if dtype is None and not mstype.is_float(t.dtype) and not mstype.is_complex(t.dtype):
        dtype = mstype.int64
    elif dtype is not None:
        dtype = mstype.to_dtype(dtype, "dtype", "sum")
    out = reduce_as("sum", t, dtype, _axes(axis), keepdims)  # no widened copy of t where the cast keeps its values
    if dtype == mstype.int64 and out.dtype != mstype.int64:  # UInt16/32/64 sum to UInt64: Int64 asked
        out = _kernels.cast(out, mstype.int64)
    return out if initial is None else ops.add(out, initial)


def mean(a, axis=None, keepdims=False, dtype=None):
    """mindspore.numpy.mean(a, axis=None, keepdims=False, dtype=None): the mean over `axis`, in a's dtype (MindSpore
    2.10: an integer mean is truncated to the integer dtype) unless dtype is given."""
    t = asarray(a)
    out = _kernels.mean(_float(t), _axes(axis), keepdims)
    if dtype is not None:
        return _kernels.cast(out, mstype.to_dtype(dtype, "dtype", "mean"))
    return out if out.dtype == t.dtype else _kernels.cast(out, t.dtype)


def amax(a, axis=None, keepdims=False, initial=None, where=True):
    """mindspore.numpy.amax(a, axis=None, keepdims=False, initial=None, where=True): the maximum over `axis`
    (with `initial` taking part). A `where` mask other than True is not supported (ValueError)."""
    if where is not True:
        raise ValueError("For 'amax', Kiln supports where=True only.")
    out = _kernels.amax(asarray(a), _axes(axis), keepdims)
    return out if initial is None else ops.maximum(out, initial)


def amin(a, axis=None, keepdims=False, initial=None, where=True):
    """mindspore.numpy.amin(a, axis=None, keepdims=False, initial=None, where=True): the minimum over `axis`."""
    if where is not True:
        raise ValueError("For 'amin', Kiln supports where=True only.")
    out = _kernels.amin(asarray(a), _axes(axis), keepdims)
    return out if initial is None else ops.minimum(out, initial)


max = amax
min = amin


def var(x, axis=None, ddof=0, keepdims=False):
    """mindspore.numpy.var(x, axis=None, ddof=0, keepdims=False): Σ(x − mean)²/(N − ddof) over `axis`, in float
    (kiln.ops.var; integer inputs compute in float32)."""
    return ops.var(_float(x), axis, ddof, keepdims)


def std(x, axis=None, ddof=0, keepdims=False):
    """mindspore.numpy.std(x, axis=None, ddof=0, keepdims=False): √var (kiln.ops.std)."""
    return ops.std(_float(x), axis, ddof, keepdims)


def argmax(a, axis=None):
    """mindspore.numpy.argmax(a, axis=None): the Int64 index of the maximum (of the flattened array when None)."""
    t = asarray(a)
    if axis is None:
        return _kernels.argmax(_kernels.reshape(t, [-1]), 0, False)
    return _kernels.argmax(t, axis, False)


def argmin(a, axis=None):
    """mindspore.numpy.argmin(a, axis=None): the Int64 index of the minimum."""
    t = asarray(a)
    if axis is None:
        return _kernels.argmin(_kernels.reshape(t, [-1]), 0, False)
    return _kernels.argmin(t, axis, False)


def ptp(x, axis=None, keepdims=False):
    """mindspore.numpy.ptp(x, axis=None, keepdims=False): max − min over `axis`."""
    t = asarray(x)
    return ops.sub(_kernels.amax(t, _axes(axis), keepdims), _kernels.amin(t, _axes(axis), keepdims))


def average(x, axis=None, weights=None, returned=False):
    """mindspore.numpy.average(x, axis=None, weights=None, returned=False): the (weighted) mean over `axis`;
    returned=True also gives the sum of the weights. weights: x's shape, or 1-D along a single axis."""
    t = _float(x)
    if weights is None:
        out = _kernels.mean(t, _axes(axis), False)
        n = t.size if axis is None else math.prod(t.shape[a] for a in _axes(axis))
        return (out, _kernels.full(list(out.shape), float(n), out.dtype)) if returned else out
    w = _float(weights)
    if w.ndim == 1 and t.ndim > 1:
        if axis is None or not isinstance(axis, numbers.Integral):
            raise ValueError("For 'average', 1-D weights need a single int 'axis'.")
        shape = [1] * t.ndim
        shape[axis] = w.shape[0]
        w = _kernels.reshape(w, shape)
    wsum = _kernels.sum(_kernels.broadcast_to(w, list(t.shape)), _axes(axis), False)
    out = _kernels.div(_kernels.sum(ops.mul(t, w), _axes(axis), False), wsum)
    return (out, wsum) if returned else out


def norm(x, ord=None, axis=None, keepdims=False):
    """mindspore.numpy.norm(x, ord=None, axis=None, keepdims=False): see kiln.ops.norm (vector and matrix norms)."""
    return ops.norm(_float(x), ord, axis, keepdims)


# ---------------------------------------------------------------------------------------------- products

def matmul(x1, x2, dtype=None):
    """mindspore.numpy.matmul(x1, x2, dtype=None): the matrix product with NumPy's broadcasting and 1-D rules."""
    return _finish(_kernels.matmul(asarray(x1), asarray(x2)), dtype, "matmul")


def dot(a, b):
    """mindspore.numpy.dot(a, b): NumPy's dot: scalars multiply, 1-D·1-D is the inner product, N-D·1-D contracts the
    last axis, N-D·M-D contracts a's last axis with b's second-to-last."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return ops.mul(x, y)
    if y.ndim <= 2:
        return _kernels.matmul(x, y)
    # contract x's last axis with y's axis −2: move it last, matmul over the flattened rest
    yt = _kernels.transpose(y, list(range(y.ndim - 2)) + [y.ndim - 1, y.ndim - 2])  # (..., m, k)
    ym = _kernels.reshape(yt, [-1, y.shape[-2]])  # (prod(rest), k)
    out = _kernels.matmul(_kernels.reshape(x, [-1, x.shape[-1]]), _kernels.transpose(ym, [1, 0]))
    return _kernels.reshape(out, list(x.shape[:-1]) + list(y.shape[:-2]) + [y.shape[-1]])


def outer(a, b):
    """mindspore.numpy.outer(a, b): the outer product of the flattened inputs, shape (a.size, b.size)."""
    x, y = _kernels.reshape(asarray(a), [-1, 1]), _kernels.reshape(asarray(b), [1, -1])
    return ops.mul(x, y)


def inner(a, b):
    """mindspore.numpy.inner(a, b): the sum product over the last axes (scalars multiply)."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return ops.mul(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"For 'inner', the last dims must match, but got shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)}.")
    out = _kernels.matmul(_kernels.reshape(x, [-1, x.shape[-1]]),
                          _kernels.transpose(_kernels.reshape(y, [-1, y.shape[-1]]), [1, 0]))
    return _kernels.reshape(out, list(x.shape[:-1]) + list(y.shape[:-1]))


def diag(v, k=0):
    """mindspore.numpy.diag(v, k=0): for 1-D v, the square matrix with v on diagonal k (zeros elsewhere); for 2-D
    v, its k-th diagonal (1-D). Made of Gather and Select, so gradients flow to v."""
    t = asarray(v)
    if t.ndim == 1:
        m = t.shape[0]
        n = m + builtins.abs(k)
        rows, cols = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        idx = np.clip(rows if k >= 0 else cols, 0, builtins.max(m - 1, 0)).astype(np.int64)
        vals = _kernels.gather(t, Tensor(idx), 0)
        return _kernels.select(Tensor(np.eye(n, n, k).astype(bool)), vals, _kernels.zeros_like(vals))
    if t.ndim == 2:
        return _diagonal(t, k)
    raise ValueError(f"For 'diag', the input must be 1-D or 2-D, but got shape {tuple(t.shape)}.")


def _diagonal(t, k):
    """The k-th diagonal of a 2-D Tensor (1-D), via one Gather on the flattened matrix."""
    r, c = t.shape
    i = np.arange(builtins.max(0, -k), builtins.min(r, c - k))
    return _kernels.gather(_kernels.reshape(t, [-1]), Tensor((i * c + i + k).astype(np.int64)), 0)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """mindspore.numpy.trace(a, offset=0, axis1=0, axis2=1, dtype=None): the sum of diagonal `offset` of the 2-D
    slices on (axis1, axis2). Kiln supports 2-D inputs (ValueError otherwise)."""
    t = asarray(a)
    if t.ndim != 2 or sorted((axis1 % 2, axis2 % 2)) != [0, 1]:
        raise ValueError(f"For 'trace', Kiln supports 2-D inputs with axis1/axis2 = 0/1, but got shape "
                         f"{tuple(t.shape)}.")
    if axis1 % 2 == 1:
        t = _kernels.transpose(t, [1, 0])
    out = _kernels.sum(_diagonal(t, offset), [0], False)
    return _finish(out, dtype, "trace")


def cumsum(a, axis=None, dtype=None):
    """mindspore.numpy.cumsum(a, axis=None, dtype=None): cumulative sums along `axis` (of the flattened array when
    None); see kiln.ops.cumsum."""
    t = asarray(a)
    if axis is None:
        t, axis = _kernels.reshape(t, [-1]), 0
    return ops.cumsum(t, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """mindspore.numpy.cumprod(a, axis=None, dtype=None): cumulative products along `axis` (flattened when None)."""
    t = asarray(a)
    if axis is None:
        t, axis = _kernels.reshape(t, [-1]), 0
    return ops.cumprod(t, axis, dtype)
