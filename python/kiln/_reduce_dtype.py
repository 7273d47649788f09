"""Reductions with a `dtype` argument (ops.sum(x, dtype=...), Tensor.sum, mindspore.numpy.sum, mint.prod/mean,
nansum) without a widened copy of the input (issue 22, item 4).

Their meaning is "cast x to dtype, then reduce", and a cast of 64 MiB of int8 to Int64 is 512 MiB. Kiln's reduction
kernels read any input dtype and accumulate in int64 / uint64 / double in registers, so where the cast keeps every
value of x's dtype and reducing x directly gives the same numbers, the cast is applied to the (small) result instead:

  sum, prod, integer/bool x to a wider integer dtype: the kernel accumulates both in 64 bits with wrap-around (as
      NumPy), so the result's bits are the same.
  sum, x of at most 16 bits (Bool, Int8, UInt8, Int16, UInt16) to Float32/Float64: the integer sum is exact and so is
      the double sum of the cast values (below 2**53 for fewer than 2**37 elements); both are rounded once to dtype.
  mean, the same x to Float32: the mean of an integer tensor is already computed in double and returned as Float32.

The result is returned in `dtype` (cast from the kernel's Int64/UInt64/double result), as MindSpore's "desired data
type of the returned Tensor" and NumPy's `dtype=`. Every other combination (a narrowing or value-changing cast, floats to a wider float, whose sum would be rounded to
the narrow dtype first) keeps the explicit cast."""
from .ops import _kernels
from .common import dtype as mstype

_RANGE = {mstype.bool_: (0, 1), mstype.uint8: (0, 2**8 - 1), mstype.int8: (-2**7, 2**7 - 1),
          mstype.uint16: (0, 2**16 - 1), mstype.int16: (-2**15, 2**15 - 1), mstype.uint32: (0, 2**32 - 1),
          mstype.int32: (-2**31, 2**31 - 1), mstype.uint64: (0, 2**64 - 1), mstype.int64: (-2**63, 2**63 - 1)}
_NARROW = (mstype.bool_, mstype.int8, mstype.uint8, mstype.int16, mstype.uint16)


def _int_holds(src, dst):
    """True if every value of the integer/bool dtype `src` is a value of the integer dtype `dst`."""
    if src not in _RANGE or dst not in _RANGE or dst == mstype.bool_:
        return False
    return _RANGE[dst][0] <= _RANGE[src][0] and _RANGE[src][1] <= _RANGE[dst][1]


def reduce_as(kind, x, dtype, axes, keep_dims):
    """`kind` ('sum', 'prod' or 'mean') of x cast to `dtype` (a Kiln dtype, or None: x's own) over `axes` (a list,
    None or [] for all axes) with keep_dims: the value and dtype of `_core.<kind>(_kernels.cast(x, dtype), axes,
    keep_dims)` returned in `dtype`, without the cast's copy of x where the rules above allow."""
    fn = {"sum": _kernels.sum, "prod": _kernels.prod, "mean": _kernels.mean}[kind]
    src = x.dtype
    if dtype is None:
        return fn(x, axes, keep_dims)
    direct = False
    if dtype == src:
        direct = True
    elif kind in ("sum", "prod") and _int_holds(src, dtype):
        direct = True
    elif kind == "sum" and src in _NARROW and dtype in (mstype.float32, mstype.float64):
        direct = True
    elif kind == "mean" and src in _NARROW and dtype == mstype.float32:
        direct = True
    out = fn(x, axes, keep_dims) if direct else fn(_kernels.cast(x, dtype), axes, keep_dims)
    # MindSpore's `dtype` is "the desired data type of the returned Tensor" (ops.sum, mint.prod/mean), as NumPy's:
    # an integer sum accumulated in 64 bits is returned in the asked dtype (wrapping as NumPy's does).
    return out if out.dtype == dtype else _kernels.cast(out, dtype)
