"""Cumulative sums and products: MindSpore 2.10's ops.cumsum, ops.cumprod and the CumSum / CumProd primitives.

Real dtypes: one C++ op each (CumSum, CumProd with the attributes axis, exclusive, reverse; src/ops/scan.cpp): one
sequential pass per line, lines on the threads; the gradients are a reverse CumSum and CumProdGrad (exact through
zeros, no division; second derivatives of cumprod are not supported).

Complex inputs: a scan along one axis as log2(n) shifted adds (Hillis & Steele 1986, "Data parallel algorithms"): after step j every
element holds the combination of the 2^j elements ending at it. Each step is one Concat of a slice with the identity
padding and one Add/Mul, so gradients (including cumprod's through zeros) come from those ops, Graph mode sees plain
ops, and the cost is ⌈log2 n⌉ elementwise passes; sums are formed in a tree order (no less accurate than the
sequential order). exclusive shifts the result by one (the identity first); reverse scans from the end."""
import math

from .._loader import _core
from .._args import _got, int_arg
from ..common import dtype as mstype
from .function import _tensor_arg
from .primitives import Primitive

__all__ = ["cumsum", "cumprod", "CumSum", "CumProd"]


def _shift(x, axis, k, fill):
    """x shifted by k along axis towards higher indices, the first k positions set to `fill`."""
    n = x.shape[axis]
    lead = (slice(None),) * axis
    pad_shape = list(x.shape)
    pad_shape[axis] = min(k, n)
    pad = _core.full(pad_shape, fill, x.dtype)
    if k >= n:
        return pad
    return _core.concat([pad, x[lead + (slice(0, n - k),)]], axis)


def _scan(x, axis, exclusive, reverse, op, fill, name):
    x = _tensor_arg(x, name)
    if x.dtype == mstype.bool_:
        raise TypeError(f"For '{name}', the input must be a number Tensor, but got Bool.")
    if x.ndim == 0:
        return _core.full([], fill, x.dtype) if exclusive else _core.identity(x)
    axis = int_arg(name, "axis", axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"For '{name}', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {axis}.")
    axis %= x.ndim
    if x.dtype not in mstype.complex_type:
        # one C++ CumSum / CumProd op (src/ops/scan.cpp): a sequential pass per line, any (dynamic) axis size
        return (_core.cumsum if op is _core.add else _core.cumprod)(x, axis, exclusive, reverse)
    return _scan_complex(x, axis, exclusive, reverse, op, fill)


def _scan_complex(x, axis, exclusive, reverse, op, fill):
    """Complex inputs (which the C++ scan does not take): the log-step scan of the module docstring."""
    n = x.shape[axis]
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    y = x[flip] if reverse else x
    if n > 0:
        if exclusive:
            y = _shift(y, axis, 1, fill)
        k = 1
        for _ in range(math.ceil(math.log2(n)) if n > 1 else 0):
            y = op(y, _shift(y, axis, k, fill))
            k *= 2
    y = y[flip] if reverse else y
    return y if y is not x else _core.identity(y)


def _with_dtype(x, dtype, name):
    if dtype is None:
        return _tensor_arg(x, name)
    return _core.cast(_tensor_arg(x, name), mstype.to_dtype(dtype, "dtype", name))


def cumsum(x, axis, dtype=None):
    """MindSpore's ops.cumsum(x, axis, dtype=None): y[i] = x[0] + ... + x[i] along `axis` (same shape; x's dtype,
    or `dtype` when given, the input cast first). Raises TypeError (non-Tensor, Bool), ValueError (axis)."""
    return _scan(_with_dtype(x, dtype, "cumsum"), axis, False, False, _core.add, 0.0, "cumsum")


def cumprod(input, dim, dtype=None):
    """MindSpore's ops.cumprod(input, dim, dtype=None): y[i] = x[0]·...·x[i] along `dim` (gradient exact through
    zeros); integer inputs give Int64 (MindSpore 2.10) unless dtype is given. Raises as cumsum."""
    x = _with_dtype(input, dtype, "cumprod")
    if dtype is None and x.dtype in mstype.int_type and x.dtype != mstype.int64:
        x = _core.cast(x, mstype.int64)  # MindSpore 2.10: integer products accumulate in Int64
    return _scan(x, dim, False, False, _core.mul, 1.0, "cumprod")


class _ScanPrimitive(Primitive):
    def __init__(self, exclusive=False, reverse=False):
        super().__init__(type(self).__name__)
        for n, v in (("exclusive", exclusive), ("reverse", reverse)):
            if not isinstance(v, bool):
                raise TypeError(f"For '{self.name}', '{n}' must be bool, but got {_got(v)}.")
        self.exclusive, self.reverse = exclusive, reverse


class CumSum(_ScanPrimitive):
    """CumSum(exclusive=False, reverse=False)(x, axis): cumulative sums along `axis`; exclusive leaves each element
    out of its own sum (the first is 0), reverse sums from the end."""

    def __call__(self, x, axis):
        return _scan(x, axis, self.exclusive, self.reverse, _core.add, 0.0, "CumSum")


class CumProd(_ScanPrimitive):
    """CumProd(exclusive=False, reverse=False)(x, axis): cumulative products along `axis`; exclusive leaves each
    element out of its own product (the first is 1), reverse multiplies from the end."""

    def __call__(self, x, axis):
        return _scan(x, axis, self.exclusive, self.reverse, _core.mul, 1.0, "CumProd")
