"""Array functions of mindspore.ops built from Kiln's existing ops (so autodiff, PyNative and Graph mode come with
them): tile, one_hot, gather_nd, repeat_elements, reciprocal, dtype.

Each is a composition of C++ ops; the registry (tests/python/op_registry.py) checks each against NumPy, its gradient
against float64 finite differences and PyNative against Graph mode, like any op.
"""
import math

import numpy as np

from .._loader import _core
from .._args import int_arg, shape_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg

__all__ = ["tile", "one_hot", "gather_nd", "repeat_elements", "reciprocal", "dtype"]


def tile(input, dims):  # noqa: A002
    """MindSpore's ops.tile(input, dims): `input` repeated dims[i] times along axis i.

    input: a Tensor of shape s (any dtype). dims: a tuple/list of ints ≥ 0. When len(dims) < input.ndim, dims is
    padded with leading 1s; when len(dims) > input.ndim, input's shape is padded with leading 1s (NumPy's np.tile).
    Returns shape (dims[i] · s[i], ...), input's dtype. Gradient: the sum over the copies.
    Raises TypeError for a non-Tensor input or non-int dims, ValueError for a negative dim.

    Computed as reshape → broadcast_to → reshape: x viewed as (1, s0, 1, s1, ...) broadcast to (d0, s0, d1, s1, ...).
    """
    x = _tensor_arg(input, "Tile")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"For 'Tile', 'dims' must be a tuple or list of ints, but got {type(dims).__name__}.")
    dims = [int_arg("Tile", "dims", d) for d in dims]
    for i, d in enumerate(dims):
        if d < 0:
            raise ValueError(f"For 'Tile', 'dims' cannot contain negative integer numbers, but got {d} in {i}th.")
    shape = list(x.shape)
    n = max(len(shape), len(dims))
    shape = [1] * (n - len(shape)) + shape
    dims = [1] * (n - len(dims)) + dims
    if all(d == 1 for d in dims):
        return _core.reshape(x, shape) if len(shape) != x.ndim else _core.identity(x)
    inter = [v for s in shape for v in (1, s)]
    target = [v for d, s in zip(dims, shape) for v in (d, s)]
    y = _core.broadcast_to(_core.reshape(x, inter), target)
    return _core.reshape(y, [d * s for d, s in zip(dims, shape)])


def _scalar_tensor(value, op, name):
    """A 0-d Tensor from a Python number or a one-element Tensor (MindSpore's on_value/off_value)."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"For '{op}', '{name}' must be a number or a Tensor with one element, but got shape "
                             f"{value.shape}.")
        return _core.reshape(value, [])
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"For '{op}', '{name}' must be a number or a Tensor, but got {type(value).__name__}.")
    return Tensor(value)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """MindSpore's ops.one_hot(indices, depth, on_value=1, off_value=0, axis=-1).

    indices: an int32/int64 Tensor of shape S. depth: int ≥ 0. on_value/off_value: numbers or one-element Tensors
    of one dtype (Python ints give int64, as MindSpore 2.10). axis: where the new dim of size depth goes, in
    [-1, len(S)]. Returns shape S with depth inserted at axis, on_value's dtype: on_value where indices[...] == the
    position along the new dim, off_value elsewhere (an index outside [0, depth), e.g. -1, gives a row of
    off_value). Raises TypeError for float indices or mismatched on/off dtypes, ValueError for a bad depth/axis.
    """
    idx = _tensor_arg(indices, "OneHot", "indices")
    if idx.dtype not in (mstype.int32, mstype.int64, mstype.uint8):
        raise TypeError(f"For 'OneHot', 'indices' must be an int32, int64 or uint8 Tensor, but got {idx.dtype}.")
    depth = int_arg("OneHot", "depth", depth, minimum=0)
    axis = int_arg("OneHot", "axis", axis)
    if not -1 <= axis <= idx.ndim:
        raise ValueError(f"For 'OneHot', 'axis' must be in range [-1, {idx.ndim}], but got {axis}.")
    on = _scalar_tensor(on_value, "OneHot", "on_value")
    off = _scalar_tensor(off_value, "OneHot", "off_value")
    if on.dtype != off.dtype:
        raise TypeError(f"For 'OneHot', 'on_value' and 'off_value' must have one dtype, but got {on.dtype} and "
                        f"{off.dtype}.")
    pos = idx.ndim if axis == -1 else axis
    positions = _core.arange(0.0, float(depth), 1.0, idx.dtype)
    positions = _core.reshape(positions, [depth] + [1] * (idx.ndim - pos))
    hit = _core.equal(_core.expand_dims(idx, pos), positions)
    return _core.select(hit, on, off)


def gather_nd(input_x, indices):
    """MindSpore's ops.gather_nd(input_x, indices): slices of input_x picked by index tuples.

    input_x: shape (s0, ..., s_{r-1}). indices: an int32/int64 Tensor of shape (..., K), K ≤ r; each index tuple
    must lie inside s0..s_{K-1} (ValueError naming the first bad index otherwise, also in Graph mode: checked when
    the op runs; MindSpore raises RuntimeError). Returns shape
    (..., s_K, ..., s_{r-1}), input_x's dtype. Gradient: a scatter-add into input_x's shape.
    Computed as a gather along axis 0 of input_x reshaped to (s0·…·s_{K-1}, s_K, ...) at the linear indices
    Σ_k indices[..., k] · stride_k.
    """
    x = _tensor_arg(input_x, "GatherNd", "input_x")
    idx = _tensor_arg(indices, "GatherNd", "indices")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'GatherNd', 'indices' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if idx.ndim < 1:
        raise ValueError("For 'GatherNd', 'indices' must have rank >= 1 (its last dim is the index tuple), but got a "
                         "0-d Tensor.")
    k = idx.shape[-1]
    if k > x.ndim:
        raise ValueError(f"For 'GatherNd', the last dim of 'indices' ({k}) must be at most the rank of 'input_x' "
                         f"({x.ndim}); got indices shape {idx.shape} and input_x shape {x.shape}.")
    lead, rest = list(x.shape[:k]), list(x.shape[k:])
    idx64 = _core.cast(idx, mstype.int64)
    linear = None
    stride = 1
    for j in reversed(range(k)):
        comp = _core.strided_slice(idx64, [0] * (idx.ndim - 1) + [j], list(idx.shape[:-1]) + [j + 1],
                                   [1] * idx.ndim)
        comp = _core.check_range(comp, "GatherNd", f"indices[..., {j}] (dim {j} of input_x shape {tuple(x.shape)})",
                                 0.0, float(lead[j]))
        term = comp if stride == 1 else _core.mul(comp, Tensor(np.int64(stride)))
        linear = term if linear is None else _core.add(linear, term)
        stride *= lead[j]
    out_lead = list(idx.shape[:-1])
    if linear is None:  # K == 0: every index tuple is empty and picks the whole input
        linear = _core.full(out_lead + [1], 0.0, mstype.int64)
    linear = _core.reshape(linear, out_lead)
    flat = _core.reshape(x, [math.prod(lead)] + rest)
    return _core.gather(flat, linear, 0)


def repeat_elements(x, rep, axis=0):
    """MindSpore's ops.repeat_elements(x, rep, axis=0): each element repeated `rep` times along `axis` (np.repeat
    with an int count). x: any Tensor of rank ≥ 1; rep: int ≥ 1. Returns x.shape with shape[axis] · rep. Gradient:
    the sum over the copies. Raises TypeError/ValueError for bad rep or axis."""
    x = _tensor_arg(x, "repeat_elements", "x")
    rep = int_arg("repeat_elements", "rep", rep, minimum=1)
    axis = int_arg("repeat_elements", "axis", axis)
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"For 'repeat_elements', 'axis' must be in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"but got {axis}.")
    axis %= x.ndim
    shape = list(x.shape)
    y = _core.expand_dims(x, axis + 1)
    y = _core.broadcast_to(y, shape[:axis + 1] + [rep] + shape[axis + 1:])
    return _core.reshape(y, shape[:axis] + [shape[axis] * rep] + shape[axis + 1:])


def reciprocal(input):  # noqa: A002
    """MindSpore's ops.reciprocal(input): 1 / input elementwise. Integer and bool inputs give float32 (as MindSpore
    2.10); 1/0 gives inf. Gradient: −1/input²."""
    x = _tensor_arg(input, "Reciprocal")
    if not mstype.is_float(x.dtype):
        x = _core.cast(x, mstype.float32)
    return _core.div(1.0, x)  # a Python scalar is weak: the result keeps x's dtype


def dtype(input):  # noqa: A002
    """MindSpore's ops.dtype(input): the Tensor's dtype (a kiln dtype such as kiln.float32)."""
    return _tensor_arg(input, "DType").dtype
