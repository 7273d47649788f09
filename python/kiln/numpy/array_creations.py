"""Array creation of kiln.numpy (MindSpore's mindspore.numpy): array, asarray, arange, zeros, ones, full, empty,
eye, identity, linspace, the *_like functions and the random draws rand, randn, randint.

Dtypes follow mindspore.numpy (checked against MindSpore 2.10): Python ints become Int32, Python floats Float32,
bools Bool; NumPy arrays keep their dtype; `dtype=` converts."""
import builtins
import numbers

import numpy as np

from ..ops import _kernels
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .. import ops

__all__ = ["array", "asarray", "asfarray", "arange", "zeros", "ones", "full", "empty", "eye", "identity",
           "linspace", "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "randint", "tri"]


def _dtype(dtype, op):
    return None if dtype is None else mstype.to_dtype(dtype, "dtype", op)


def _np_of_python(obj, op):
    """A NumPy array of a Python number / nested list / tuple with mindspore.numpy's default dtypes."""
    try:
        a = np.asarray(obj)
    except (ValueError, TypeError) as e:
        raise TypeError(f"For '{op}', the input must be a number, bool, Tensor, NumPy array or a (nested) list/tuple "
                        f"of those, but got {_got(obj)} ({e}).") from None
    if a.dtype == object:
        if builtins.any(isinstance(v, Tensor) for v in np.ravel(a)):
            return np.asarray([v.asnumpy() if isinstance(v, Tensor) else v for v in obj])
        raise TypeError(f"For '{op}', the input must be a rectangular (nested) list of numbers, but got {_got(obj)}.")
    if a.dtype.kind in "iu" and not isinstance(obj, np.ndarray):
        return a.astype(np.int32)
    if a.dtype.kind == "f" and not isinstance(obj, np.ndarray):
        return a.astype(np.float32)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"For '{op}', the input must hold numbers or bools, but got NumPy dtype {a.dtype}.")
    return a


def asarray(a, dtype=None):
    """mindspore.numpy.asarray(a, dtype=None): `a` as a Tensor (a Tensor is returned as is when no dtype change is
    asked). Python ints → Int32, floats → Float32, bools → Bool; NumPy arrays keep their dtype. Raises TypeError for
    other inputs (strings, ragged lists)."""
    dt = _dtype(dtype, "asarray")
    if isinstance(a, Tensor):
        return a if dt is None or dt == a.dtype else _kernels.cast(a, dt)
    t = Tensor(_np_of_python(a, "asarray"))
    return t if dt is None or dt == t.dtype else _kernels.cast(t, dt)


def array(obj, dtype=None, copy=True, ndmin=0):
    """mindspore.numpy.array(obj, dtype=None, copy=True, ndmin=0): a new Tensor of `obj` (copied when obj is a
    Tensor and copy=True), with at least `ndmin` dims (size-1 dims prepended). Dtypes as asarray."""
    t = asarray(obj, dtype)
    if copy and t is obj:
        t = _kernels.identity(t)
    if ndmin > t.ndim:
        t = _kernels.reshape(t, [1] * (ndmin - t.ndim) + list(t.shape))
    return t


def asfarray(a, dtype=mstype.float32):
    """mindspore.numpy.asfarray(a, dtype=float32): `a` as a float Tensor (an integer dtype argument gives float32)."""
    dt = _dtype(dtype, "asfarray")
    if not mstype.is_float(dt):
        dt = mstype.float32
    return asarray(a, dt)


def arange(start, stop=None, step=None, dtype=None):
    """mindspore.numpy.arange(start, stop=None, step=None, dtype=None): evenly spaced values in [start, stop).
    All-int arguments give Int32, any float gives Float32 (unless dtype). Raises TypeError for non-numbers,
    ValueError for step 0."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    for n, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'arange', '{n}' must be a number, but got {_got(v)}.")
    if step == 0:
        raise ValueError("For 'arange', 'step' must not be 0.")
    dt = _dtype(dtype, "arange")
    if dt is None:
        dt = mstype.float32 if builtins.any(isinstance(v, float) for v in (start, stop, step)) else mstype.int32
    return _kernels.arange(float(start), float(stop), float(step), dt)


def _shape(shape, op):
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not builtins.all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise TypeError(f"For '{op}', 'shape' must be a non-negative int or a tuple/list of them, but got "
                        f"{_got(shape)}.")
    return [int(s) for s in shape]


def zeros(shape, dtype=mstype.float32):
    """mindspore.numpy.zeros(shape, dtype=float32): a Tensor of zeros."""
    return _kernels.full(_shape(shape, "zeros"), 0.0, _dtype(dtype, "zeros"))


def ones(shape, dtype=mstype.float32):
    """mindspore.numpy.ones(shape, dtype=float32): a Tensor of ones."""
    return _kernels.full(_shape(shape, "ones"), 1.0, _dtype(dtype, "ones"))


def empty(shape, dtype=mstype.float32):
    """mindspore.numpy.empty(shape, dtype=float32): a new Tensor (Kiln fills it with zeros, so reads are defined)."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """mindspore.numpy.full(shape, fill_value, dtype=None): a Tensor filled with fill_value (a number, bool or a
    Tensor broadcast to shape). Without dtype: Int32 for an int, Float32 for a float, Bool for a bool."""
    shp = _shape(shape, "full")
    dt = _dtype(dtype, "full")
    if isinstance(fill_value, Tensor):
        t = fill_value if dt is None else _kernels.cast(fill_value, dt)
        return _kernels.broadcast_to(t, shp)
    if not isinstance(fill_value, (numbers.Number, np.bool_)):
        raise TypeError(f"For 'full', 'fill_value' must be a number, bool or Tensor, but got {_got(fill_value)}.")
    if dt is None:
        dt = mstype.bool_ if isinstance(fill_value, (bool, np.bool_)) else (
            mstype.int32 if isinstance(fill_value, numbers.Integral) else mstype.float32)
    return _kernels.full(shp, float(fill_value), dt)


def _like(a, dtype, shape, op):
    t = asarray(a)
    return (_shape(shape, op) if shape is not None else list(t.shape)), (_dtype(dtype, op) or t.dtype)


def zeros_like(a, dtype=None, shape=None):
    """mindspore.numpy.zeros_like(a, dtype=None, shape=None): zeros with a's shape and dtype unless given."""
    s, d = _like(a, dtype, shape, "zeros_like")
    return _kernels.full(s, 0.0, d)


def ones_like(a, dtype=None, shape=None):
    """mindspore.numpy.ones_like(a, dtype=None, shape=None): ones with a's shape and dtype unless given."""
    s, d = _like(a, dtype, shape, "ones_like")
    return _kernels.full(s, 1.0, d)


def empty_like(prototype, dtype=None, shape=None):
    """mindspore.numpy.empty_like: as zeros_like (Kiln fills new Tensors)."""
    return zeros_like(prototype, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """mindspore.numpy.full_like(a, fill_value, dtype=None, shape=None): fill_value with a's shape and dtype."""
    s, d = _like(a, dtype, shape, "full_like")
    return full(s, fill_value, d)


def eye(N, M=None, k=0, dtype=mstype.float32):
    """mindspore.numpy.eye(N, M=None, k=0, dtype=float32): an N×M Tensor with ones on diagonal k."""
    M = N if M is None else M
    for n, v in (("N", N), ("M", M), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"For 'eye', '{n}' must be an int, but got {_got(v)}.")
    return Tensor(np.eye(N, M, k).astype(mstype.dtype_to_nptype(_dtype(dtype, "eye"))), _dtype(dtype, "eye"))


def identity(n, dtype=mstype.float32):
    """mindspore.numpy.identity(n, dtype=float32): the n×n identity."""
    return eye(n, n, 0, dtype)


def tri(N, M=None, k=0, dtype=mstype.float32):
    """mindspore.numpy.tri(N, M=None, k=0, dtype=float32): ones at and below diagonal k of an N×M Tensor."""
    M = N if M is None else M
    return Tensor(np.tri(N, M, k).astype(mstype.dtype_to_nptype(_dtype(dtype, "tri"))), _dtype(dtype, "tri"))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """mindspore.numpy.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0): `num`
    evenly spaced Float32 values over [start, stop] (or [start, stop) without endpoint); retstep also returns the
    step (a 0-d Tensor, as MindSpore). Scalar start/stop only (axis must be 0). Raises TypeError / ValueError for bad arguments."""
    if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 0:
        raise ValueError(f"For 'linspace', 'num' must be a non-negative int, but got {_got(num)}.")
    if axis != 0:
        raise ValueError(f"For 'linspace', Kiln supports scalar start/stop (axis=0) only, but got axis={axis}.")
    dt = _dtype(dtype, "linspace") or mstype.float32
    s = float(start.asnumpy()) if isinstance(start, Tensor) else start
    e = float(stop.asnumpy()) if isinstance(stop, Tensor) else stop
    values, step = np.linspace(s, e, num, endpoint=endpoint, retstep=True)
    out = Tensor(values.astype(mstype.dtype_to_nptype(dt)), dt)
    return (out, Tensor(np.asarray(step, dtype=mstype.dtype_to_nptype(dt)), dt)) if retstep else out


def rand(*shape, dtype=mstype.float32):
    """mindspore.numpy.rand(*shape, dtype=float32): uniform samples in [0, 1) (the seed of kiln.set_seed)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return ops.rand(*shape, dtype=_dtype(dtype, "rand"))


def randn(*shape, dtype=mstype.float32):
    """mindspore.numpy.randn(*shape, dtype=float32): standard normal samples."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return ops.randn(*shape, dtype=_dtype(dtype, "randn"))


def randint(minval, maxval=None, shape=None, dtype=mstype.int32):
    """mindspore.numpy.randint(minval, maxval=None, shape=None, dtype=int32): integers uniform in [minval, maxval)
    ([0, minval) when maxval is None)."""
    if maxval is None:
        minval, maxval = 0, minval
    shape = () if shape is None else (tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    return ops.randint(minval, maxval, shape, dtype=_dtype(dtype, "randint"))
