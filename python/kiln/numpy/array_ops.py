"""Shape manipulation of kiln.numpy (MindSpore's mindspore.numpy): reshape, ravel, expand_dims, squeeze,
transpose, swapaxes, moveaxis, concatenate, stack, hstack, vstack, split, tile, repeat, broadcast_to, flip, fliplr,
flipud, roll, tril, triu, atleast_1d/2d/3d, where, meshgrid, size. Array-like inputs go through asarray; the
results are those of the kiln.ops functions they call (same gradients, Graph mode)."""
import builtins
import numbers

import numpy as np

from ..ops import _kernels
from .._args import _got
from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .array_creations import asarray

__all__ = ["reshape", "ravel", "expand_dims", "squeeze", "transpose", "swapaxes", "moveaxis", "concatenate", "stack",
           "hstack", "vstack", "split", "tile", "repeat", "broadcast_to", "flip", "fliplr", "flipud", "roll", "tril",
           "triu", "atleast_1d", "atleast_2d", "atleast_3d", "where", "meshgrid", "size"]


def _axis(axis, ndim, op, name="axis"):
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"For '{op}', '{name}' must be an int, but got {_got(axis)}.")
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"For '{op}', '{name}' {axis} is out of range for a {ndim}-D array.")
    return int(axis) % builtins.max(ndim, 1)


def reshape(x, new_shape):
    """mindspore.numpy.reshape(x, new_shape): x with a new shape (one dim may be -1)."""
    return ops.reshape(asarray(x), (new_shape,) if isinstance(new_shape, numbers.Integral) else new_shape)


def ravel(x):
    """mindspore.numpy.ravel(x): x flattened to 1-D."""
    return _kernels.reshape(asarray(x), [-1])


def expand_dims(a, axis):
    """mindspore.numpy.expand_dims(a, axis): a with a size-1 axis inserted at `axis` (an int or a tuple)."""
    t = asarray(a)
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    nd = t.ndim + len(axes)
    shape = list(t.shape)
    for ax in sorted(_axis(v, nd, "expand_dims") for v in axes):
        shape.insert(ax, 1)
    return _kernels.reshape(t, shape)


def squeeze(a, axis=None):
    """mindspore.numpy.squeeze(a, axis=None): a without its size-1 axes (or only those in `axis`)."""
    return ops.squeeze(asarray(a), axis)


def transpose(a, axes=None):
    """mindspore.numpy.transpose(a, axes=None): a with its axes permuted (reversed when axes is None)."""
    t = asarray(a)
    return ops.transpose(t, tuple(range(t.ndim))[::-1] if axes is None else tuple(axes))


def swapaxes(x, axis1, axis2):
    """mindspore.numpy.swapaxes(x, axis1, axis2): x with two axes exchanged."""
    t = asarray(x)
    perm = list(range(t.ndim))
    a, b = _axis(axis1, t.ndim, "swapaxes", "axis1"), _axis(axis2, t.ndim, "swapaxes", "axis2")
    perm[a], perm[b] = perm[b], perm[a]
    return _kernels.transpose(t, perm)


def moveaxis(a, source, destination):
    """mindspore.numpy.moveaxis(a, source, destination): axes moved to new positions, the others keeping order."""
    t = asarray(a)
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"For 'moveaxis', 'source' and 'destination' must have the same length, but got "
                         f"{len(src)} and {len(dst)}.")
    src = [_axis(s, t.ndim, "moveaxis", "source") for s in src]
    dst = [_axis(d, t.ndim, "moveaxis", "destination") for d in dst]
    order = [i for i in range(t.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _kernels.transpose(t, order)


def _arrays(arrays, op):
    if isinstance(arrays, Tensor):
        return list(ops.unstack(arrays, 0))
    if not isinstance(arrays, (tuple, list)) or not arrays:
        raise TypeError(f"For '{op}', the input must be a non-empty tuple or list of arrays, but got "
                        f"{_got(arrays)}.")
    return [asarray(a) for a in arrays]


def concatenate(arrays, axis=0):
    """mindspore.numpy.concatenate(arrays, axis=0): the arrays joined along `axis` (axis=None flattens them first)."""
    ts = _arrays(arrays, "concatenate")
    if axis is None:
        ts, axis = [_kernels.reshape(t, [-1]) for t in ts], 0
    return ops.concat(ts, axis)


def stack(arrays, axis=0):
    """mindspore.numpy.stack(arrays, axis=0): same-shape arrays joined along a new axis."""
    return ops.stack(_arrays(arrays, "stack"), axis)


def atleast_1d(*arys):
    """mindspore.numpy.atleast_1d(*arys): each input with at least 1 dim (a list when several are given)."""
    out = [t if t.ndim >= 1 else _kernels.reshape(t, [1]) for t in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """mindspore.numpy.atleast_2d(*arys): each input with at least 2 dims (leading size-1 dims added)."""
    out = [t if t.ndim >= 2 else _kernels.reshape(t, [1] * (2 - t.ndim) + list(t.shape)) for t in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """mindspore.numpy.atleast_3d(*arys): each input with at least 3 dims (NumPy's rule: (N,) → (1, N, 1),
    (M, N) → (M, N, 1))."""
    def up(t):
        if t.ndim == 0:
            return _kernels.reshape(t, [1, 1, 1])
        if t.ndim == 1:
            return _kernels.reshape(t, [1, t.shape[0], 1])
        if t.ndim == 2:
            return _kernels.reshape(t, list(t.shape) + [1])
        return t
    out = [up(t) for t in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def hstack(tup):
    """mindspore.numpy.hstack(tup): arrays joined along axis 1 (axis 0 for 1-D arrays)."""
    ts = _arrays(tup, "hstack")
    return ops.concat(ts, 0 if builtins.all(t.ndim == 1 for t in ts) else 1)


def vstack(tup):
    """mindspore.numpy.vstack(tup): arrays joined along axis 0, 1-D arrays as rows."""
    ts = _arrays(tup, "vstack")
    return ops.concat([t if t.ndim >= 2 else _kernels.reshape(t, [1] * (2 - t.ndim) + list(t.shape)) for t in ts], 0)


def split(x, indices_or_sections, axis=0):
    """mindspore.numpy.split(x, indices_or_sections, axis=0): a list of sub-arrays: `indices_or_sections` equal
    sections (an int that divides the axis; ValueError otherwise) or the split points (a tuple/list of indices)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim, "split")
    n = t.shape[ax]
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(indices_or_sections, bool):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"For 'split', {k} sections do not divide axis {ax} of length {n} equally.")
        bounds = [i * (n // k) for i in range(k + 1)]
    elif isinstance(indices_or_sections, (tuple, list)):
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), n) for i in indices_or_sections] + [n]
    else:
        raise TypeError(f"For 'split', 'indices_or_sections' must be an int or a tuple/list of ints, but got "
                        f"{_got(indices_or_sections)}.")
    lead = (slice(None),) * ax
    return [t[lead + (slice(b, builtins.max(b, e)),)] for b, e in zip(bounds[:-1], bounds[1:])]


def tile(a, reps):
    """mindspore.numpy.tile(a, reps): a repeated reps[i] times along axis i (NumPy's rank rules)."""
    t = asarray(a)
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    if len(reps) < t.ndim:
        reps = (1,) * (t.ndim - len(reps)) + reps
    return ops.tile(t, reps)


def repeat(a, repeats, axis=None):
    """mindspore.numpy.repeat(a, repeats, axis=None): each element repeated `repeats` (an int) times along axis
    (on the flattened array when axis is None)."""
    t = asarray(a)
    if axis is None:
        t, axis = _kernels.reshape(t, [-1]), 0
    ax = _axis(axis, t.ndim, "repeat")
    if isinstance(repeats, (tuple, list)):  # one count per element along the axis: a Gather of repeated indices
        n = t.shape[ax]
        if len(repeats) != n or not builtins.all(isinstance(r, numbers.Integral) and not isinstance(r, bool)
                                                 and r >= 0 for r in repeats):
            raise ValueError(f"For 'repeat', 'repeats' must be an int or {n} non-negative ints (the length of axis "
                             f"{ax}), but got {_got(repeats)}.")
        idx = np.repeat(np.arange(n, dtype=np.int64), [int(r) for r in repeats])
        return _kernels.gather(t, Tensor(idx), ax)
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or repeats < 0:
        raise TypeError(f"For 'repeat', 'repeats' must be a non-negative int or a list of them, but got "
                        f"{_got(repeats)}.")
    return ops.repeat_elements(t, int(repeats), ax)


def broadcast_to(array, shape):
    """mindspore.numpy.broadcast_to(array, shape): array broadcast to `shape`."""
    return ops.broadcast_to(asarray(array), tuple(shape) if not isinstance(shape, numbers.Integral) else (shape,))


def flip(m, axis=None):
    """mindspore.numpy.flip(m, axis=None): m reversed along `axis` (all axes when None)."""
    t = asarray(m)
    return ops.flip(t, tuple(range(t.ndim)) if axis is None else axis)


def fliplr(m):
    """mindspore.numpy.fliplr(m): m reversed along axis 1 (m must be at least 2-D)."""
    t = asarray(m)
    if t.ndim < 2:
        raise ValueError(f"For 'fliplr', the input must be at least 2-D, but got shape {tuple(t.shape)}.")
    return ops.flip(t, 1)


def flipud(m):
    """mindspore.numpy.flipud(m): m reversed along axis 0."""
    return ops.flip(asarray(m), 0)


def roll(a, shift, axis=None):
    """mindspore.numpy.roll(a, shift, axis=None): elements shifted along axis (the flattened array when None)."""
    return ops.roll(asarray(a), shift, axis)


def tril(m, k=0):
    """mindspore.numpy.tril(m, k=0): the lower triangle (col − row <= k) of the last two axes, zeros elsewhere."""
    return ops.tril(asarray(m), k)


def triu(m, k=0):
    """mindspore.numpy.triu(m, k=0): the upper triangle (col − row >= k) of the last two axes."""
    return ops.triu(asarray(m), k)


def where(condition, x=None, y=None):
    """mindspore.numpy.where(condition, x, y): x where condition else y (broadcasting, NumPy's dtype promotion of
    x and y). Both x and y are required (the one-argument form has a data-dependent shape: use ops.nonzero)."""
    if x is None or y is None:
        raise ValueError("For 'where', both 'x' and 'y' must be given (for the indices of non-zero elements use "
                         "kiln.ops.nonzero).")
    c = asarray(condition)
    if c.dtype != mstype.bool_:
        c = ops.not_equal(c, 0)
    xt = x if isinstance(x, (Tensor, int, float, bool)) else asarray(x)
    yt = y if isinstance(y, (Tensor, int, float, bool)) else asarray(y)
    return ops.where(c, xt, yt)


def meshgrid(*xi, sparse=False, indexing="xy"):
    """mindspore.numpy.meshgrid(*xi, sparse=False, indexing='xy'): coordinate arrays from 1-D arrays (a list);
    sparse=True keeps each with size-1 axes instead of broadcasting."""
    ts = [asarray(t) for t in xi]
    if len(ts) < 2:
        return [_kernels.reshape(t, [-1]) for t in ts]
    grids = list(ops.meshgrid(*ts, indexing=indexing))
    if not sparse:
        return grids
    out = []
    n = len(ts)
    for i, t in enumerate(ts):
        shape = [1] * n
        pos = i if indexing == "ij" or n < 2 else ({0: 1, 1: 0}.get(i, i))
        shape[pos] = t.shape[0]
        out.append(_kernels.reshape(t, shape))
    return out


def size(a, axis=None):
    """mindspore.numpy.size(a, axis=None): the number of elements (along `axis` when given), a Python int."""
    t = asarray(a)
    return t.size if axis is None else t.shape[_axis(axis, t.ndim, "size")]
