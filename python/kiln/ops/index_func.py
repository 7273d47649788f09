"""Slicing, reversing, masking and scattering ops built from Kiln's StridedSlice, Select, Gather, Concat and
UnsortedSegmentSum (so gradients and Graph mode are those ops'): MindSpore 2.10's ops.slice, strided_slice, flip,
reverse, roll, tril, triu, masked_fill, gather_elements, scatter_nd, nonzero, unstack, unbind, meshgrid, identity and
the Primitive classes Slice, StridedSlice, ReverseV2, GatherD, ScatterNd, ScatterNdUpdate, Unstack, Meshgrid,
DepthToSpace, Identity.

Argument names, defaults and output dtypes are MindSpore 2.10's (checked against MindSpore 2.10 on CPU)."""
import builtins
import math

import numpy as np

from .._loader import _core
from .._args import _got, _is_int, int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _static_tables, _tensor_arg
from .primitives import Primitive

__all__ = ["slice", "strided_slice", "flip", "reverse", "roll", "tril", "triu", "masked_fill", "gather_elements",
           "scatter_nd", "nonzero", "unstack", "unbind", "meshgrid", "identity",
           "Slice", "StridedSlice", "ReverseV2", "GatherD", "ScatterNd", "ScatterNdUpdate", "Unstack", "Meshgrid",
           "DepthToSpace", "Identity"]


def _int_seq(op, name, value, length=None):
    """A tuple of ints from a tuple/list of ints (or an int when length is None and scalars are allowed)."""
    if isinstance(value, (tuple, list)) and builtins.all(_is_int(v) for v in value):
        out = tuple(int(v) for v in value)
    else:
        raise TypeError(f"For '{op}', '{name}' must be a tuple or list of ints, but got {_got(value)}.")
    if length is not None and len(out) != length:
        raise ValueError(f"For '{op}', '{name}' must have {length} elements, but got {len(out)}.")
    return out


def _tensor_to_ints(op, name, value):
    """`value` unchanged unless it is a Tensor: an integer Tensor of rank 0 or 1 becomes a tuple of ints (as
    MindSpore 2.10 converts StridedSlice's Tensor begin/end/strides). TypeError for another dtype or rank, and in a
    compiled function for a Tensor whose value is not known while compiling."""
    if not isinstance(value, Tensor):
        return value
    if value.dtype not in (mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.uint8) or value.ndim > 1:
        raise TypeError(f"For '{op}', a Tensor '{name}' must be an integer Tensor of rank 0 or 1 (converted to a "
                        f"tuple of int), but got shape {tuple(value.shape)} and dtype {value.dtype}.")
    try:
        return tuple(int(v) for v in np.asarray(value.asnumpy()).reshape(-1))
    except RuntimeError as e:
        raise TypeError(f"For '{op}', the Tensor '{name}' must have a value known while compiling (a constant) in "
                        f"a compiled function: Kiln's graphs have static shapes. Pass a tuple of ints.") from e


def _axis(op, name, axis, ndim):
    axis = int_arg(op, name, axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"For '{op}', '{name}' must be in [{-ndim}, {ndim}), but got {axis}.")
    return axis % builtins.max(ndim, 1)


def slice(input_x, begin, size):
    """MindSpore's ops.slice(input_x, begin, size): the block starting at `begin` (one int per axis) of extent
    `size` (one int per axis; -1 = to the end of that axis). Same dtype as input_x.

    Raises TypeError (non-Tensor input, non-int begin/size), ValueError (lengths differ from input_x's rank, or a
    block that does not fit: begin < 0, size < -1 or begin + size > dim)."""
    y = _core._view_slice(input_x, begin, size)  # C++ for a concrete tensor and plain ints that fit (the same view)
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input_x, "slice", "input_x")
    begin = _int_seq("slice", "begin", begin, x.ndim)
    size = _int_seq("slice", "size", size, x.ndim)
    key = []
    for ax, (b, s, d) in enumerate(zip(begin, size, x.shape)):
        e = d if s == -1 else b + s
        if b < 0 or s < -1 or e > d or b > d:
            raise ValueError(f"For 'slice', the block begin={begin}, size={size} does not fit input_x of shape "
                             f"{tuple(x.shape)} (axis {ax}).")
        key.append(builtins.slice(b, e))
    return x[tuple(key)]


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0):
    """MindSpore's ops.strided_slice (TensorFlow's StridedSlice semantics): position i of begin/end/strides is
    ellipsis if bit i of ellipsis_mask is set, a new axis of size 1 if bit i of new_axis_mask is set, the single
    index begin[i] (the axis removed) if bit i of shrink_axis_mask is set, else the slice begin[i]:end[i]:strides[i]
    where bit i of begin_mask / end_mask replaces begin[i] / end[i] by the full extent. Indices count from the end
    when negative and clamp like Python slices. Axes after the positions are taken whole.

    begin, end and strides may also be integer Tensors of rank 0 or 1 (MindSpore 2.10 converts them to tuples of
    ints); their values must be known, so in a compiled function they must be constants, not graph inputs.

    Raises TypeError (non-Tensor input, non-int tuples or masks, a float or rank > 1 Tensor begin/end/strides),
    ValueError (begin/end/strides of different lengths, a zero stride, more than one ellipsis), IndexError (a
    shrink index outside its axis)."""
    begin, end, strides = (_tensor_to_ints("strided_slice", n, v) for n, v in
                           (("begin", begin), ("end", end), ("strides", strides)))
    y = _core._view_strided_slice(input_x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                  shrink_axis_mask)  # C++ for a concrete tensor and plain ints (the same key and view)
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input_x, "strided_slice", "input_x")
    begin = _int_seq("strided_slice", "begin", begin)
    end = _int_seq("strided_slice", "end", end, len(begin))
    strides = _int_seq("strided_slice", "strides", strides, len(begin))
    masks = [int_arg("strided_slice", n, v, 0) for n, v in (("begin_mask", begin_mask), ("end_mask", end_mask),
             ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
             ("shrink_axis_mask", shrink_axis_mask))]
    bm, em, ellm, nam, sam = masks
    if bin(ellm).count("1") > 1:
        raise ValueError(f"For 'strided_slice', at most one bit of 'ellipsis_mask' may be set, but got {ellm}.")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellm & bit:
            key.append(Ellipsis)
        elif nam & bit:
            key.append(None)
        elif sam & bit:
            # the single index begin[i]; with the begin_mask bit set MindSpore takes the axis' first index (its
            # last for a negative stride), as the masked slice would start there
            key.append(b if not bm & bit else (0 if s > 0 else -1))
        else:
            if s == 0:
                raise ValueError(f"For 'strided_slice', 'strides' must not contain 0, but got {strides}.")
            key.append(builtins.slice(None if bm & bit else b, None if em & bit else e, s))
    return x[tuple(key)]


def _flip_key(x, dims, op):
    key = [builtins.slice(None)] * x.ndim
    seen = set()
    for d in dims:
        a = _axis(op, "dims", d, x.ndim)
        if a in seen:
            raise ValueError(f"For '{op}', the axes must not repeat, but got {tuple(dims)}.")
        seen.add(a)
        key[a] = builtins.slice(None, None, -1)
    return tuple(key)


def flip(input, dims):
    """MindSpore's ops.flip(input, dims): `input` with the order of its elements reversed along each axis in `dims`
    (an int or a tuple/list of ints). Same shape and dtype. Raises TypeError / ValueError for a bad axis."""
    y = _core._view_flip(input, dims)  # C++ for a concrete tensor and valid plain ints (the same view)
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input, "flip")
    dims = (dims,) if _is_int(dims) else _int_seq("flip", "dims", dims)
    return x[_flip_key(x, dims, "flip")] if x.ndim else x


def reverse(x, axis):
    """MindSpore's ops.reverse(x, axis) (the ReverseV2 primitive): ops.flip along the axes in `axis`."""
    y = _core._view_flip(x, axis)  # C++ for a concrete tensor and valid plain ints (the same view)
    if y is not NotImplemented:
        return y
    t = _tensor_arg(x, "reverse", "x")
    axis = (axis,) if _is_int(axis) else _int_seq("reverse", "axis", axis)
    return t[_flip_key(t, axis, "reverse")] if t.ndim else t


def roll(input, shifts, dims=None):
    """MindSpore's ops.roll(input, shifts, dims=None): elements shifted by `shifts` along `dims` (ints or equal-length
    tuples), wrapping around; dims=None rolls the flattened tensor and restores the shape (PyTorch's torch.roll).
    Made of two slices and a Concat per axis. Raises ValueError when shifts and dims differ in length."""
    x = _tensor_arg(input, "roll")
    shifts_t = (shifts,) if _is_int(shifts) else _int_seq("roll", "shifts", shifts)
    if dims is None:
        if len(shifts_t) != 1:
            raise ValueError(f"For 'roll', 'shifts' must be one int when 'dims' is None, but got {shifts_t}.")
        flat = _core.reshape(x, [-1])
        return _core.reshape(_roll1(flat, shifts_t[0], 0), list(x.shape))
    dims_t = (dims,) if _is_int(dims) else _int_seq("roll", "dims", dims)
    if len(dims_t) != len(shifts_t):
        raise ValueError(f"For 'roll', 'shifts' and 'dims' must have the same length, but got {len(shifts_t)} and "
                         f"{len(dims_t)}.")
    for s, d in zip(shifts_t, dims_t):
        x = _roll1(x, s, _axis("roll", "dims", d, x.ndim))
    return x


def _roll1(x, shift, axis):
    n = x.shape[axis]
    if n == 0 or shift % n == 0:
        return x
    k = shift % n
    head = [builtins.slice(None)] * x.ndim
    tail = list(head)
    head[axis] = builtins.slice(n - k, None)
    tail[axis] = builtins.slice(0, n - k)
    return _core.concat([x[tuple(head)], x[tuple(tail)]], axis)


def _triangle(x, diagonal, op, lower):
    x = _tensor_arg(x, op)
    diagonal = int_arg(op, "diagonal", diagonal)
    if x.ndim < 2:
        raise ValueError(f"For '{op}', the input must have rank >= 2, but got shape {tuple(x.shape)}.")
    r, c = x.shape[-2:]

    def build():
        ii, jj = np.arange(r)[:, None], np.arange(c)[None, :]
        return Tensor((jj - ii <= diagonal) if lower else (jj - ii >= diagonal))
    keep = _static_tables(("tril" if lower else "triu", r, c, diagonal), build)
    return _core.select(keep, x, _core.zeros_like(x))


def tril(input, diagonal=0):
    """MindSpore's ops.tril(input, diagonal=0): the lower triangle of the last two axes (elements with
    col − row <= diagonal) kept, the rest 0. Same shape and dtype. ValueError for rank < 2."""
    return _triangle(input, diagonal, "tril", True)


def triu(input, diagonal=0):
    """MindSpore's ops.triu(input, diagonal=0): the upper triangle of the last two axes (col − row >= diagonal)
    kept, the rest 0. Same shape and dtype. ValueError for rank < 2."""
    return _triangle(input, diagonal, "triu", False)


def masked_fill(input_x, mask, value):
    """MindSpore's ops.masked_fill(input_x, mask, value): `value` (a number or a 0-d Tensor, cast to input_x's
    dtype) where the Bool `mask` is True, input_x elsewhere; mask broadcasts against input_x. The gradient flows to
    input_x where mask is False and to a Tensor `value` summed over the masked places.

    Raises TypeError (non-Tensor input_x/mask, a non-Bool mask, a value that is neither number nor Tensor),
    ValueError (a value Tensor that is not 0-d)."""
    x = _tensor_arg(input_x, "masked_fill", "input_x")
    m = _tensor_arg(mask, "masked_fill", "mask")
    if m.dtype != mstype.bool_:
        raise TypeError(f"For 'masked_fill', the 'mask' must be a Bool Tensor, but got {m.dtype}.")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"For 'masked_fill', a Tensor 'value' must be 0-d, but got shape {tuple(value.shape)}.")
        v = value if value.dtype == x.dtype else _core.cast(value, x.dtype)
    elif isinstance(value, (bool, int, float, np.number)):
        if not mstype.is_float(x.dtype) and isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise TypeError(f"For 'masked_fill', a float 'value' ({value}) cannot fill an integer Tensor "
                            f"({x.dtype}).")
        if (x.dtype == mstype.float32 or x.dtype == mstype.float64) and \
                (value.__class__ is float or (value.__class__ is int and -2 ** 53 <= value <= 2 ** 53)):
            v = _core.full([], float(value), x.dtype)  # an exact double rounded once, as NumPy's (~1 us, not ~10)
        else:
            v = Tensor(np.asarray(value, dtype=mstype.dtype_to_nptype(x.dtype)), x.dtype)
    else:
        raise TypeError(f"For 'masked_fill', the 'value' must be a number or a 0-d Tensor, but got {_got(value)}.")
    return _core.select(m, v, x)


_GATHER_D_INDEX = (mstype.int32, mstype.int64)


def gather_elements(input, dim, index):
    """MindSpore's ops.gather_elements(input, dim, index) (the GatherD primitive): out[i][j][k] =
    input[index[i][j][k]][j][k] for dim=0 (and so on): `index` (int32/int64) has input's rank and, on every axis but
    `dim`, at most input's length; the output has index's shape and input's dtype. One GatherD kernel; gradient:
    scatter-add into input (GatherDGrad).

    Raises TypeError (non-Tensors, a non-integer index), ValueError (rank mismatch, index larger than input on an
    axis other than dim, an index value outside [-n, n) — checked in both modes)."""
    if isinstance(input, Tensor) and isinstance(index, Tensor) and type(dim) is int and input.ndim and \
            index.dtype in _GATHER_D_INDEX:
        # the common call: straight to the kernel, which makes the checks below (naming GatherD); a bad call falls
        # through to them for MindSpore's messages naming gather_elements
        try:
            return _core.gather_d(input, dim, index)
        except (TypeError, ValueError):
            pass
    x = _tensor_arg(input, "gather_elements")
    idx = _tensor_arg(index, "gather_elements", "index")
    if idx.dtype not in _GATHER_D_INDEX:
        raise TypeError(f"For 'gather_elements', the 'index' must be int32 or int64, but got {idx.dtype}.")
    if idx.ndim != x.ndim:
        raise ValueError(f"For 'gather_elements', 'index' must have the rank of 'input' ({x.ndim}), but got shape "
                         f"{tuple(idx.shape)}.")
    axis = _axis("gather_elements", "dim", dim, x.ndim)
    for ax, (a, b) in enumerate(zip(idx.shape, x.shape)):
        if ax != axis and a > b:
            raise ValueError(f"For 'gather_elements', 'index' of shape {tuple(idx.shape)} is larger than 'input' of "
                             f"shape {tuple(x.shape)} on axis {ax}.")
    if x.ndim == 0:
        return x
    # one C++ GatherD op (src/ops/index.cpp): it checks every index value (ValueError, in both modes) and wraps the
    # negative ones; gradient GatherDGrad (a scatter-add)
    return _core.gather_d(x, axis, idx)


def scatter_nd(indices, updates, shape):
    """MindSpore's ops.scatter_nd(indices, updates, shape): a zero tensor of `shape` (updates' dtype) into which
    `updates` are added at `indices` (int32/int64 of shape (..., k), k <= len(shape); updates of shape
    indices.shape[:-1] + shape[k:]); duplicate indices accumulate. Gradient of updates: gather at the indices.

    Raises TypeError (non-Tensors, non-integer indices, a bad shape), ValueError (updates' shape, k too large, an
    index outside [0, shape[j]) — checked in both modes)."""
    return _scatter_nd(indices, updates, shape, "scatter_nd")


def _scatter_nd(indices, updates, shape, op):
    """scatter_nd, its errors naming `op` (the function the user called)."""
    idx = _tensor_arg(indices, op, "indices")
    upd = _tensor_arg(updates, op, "updates")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the 'indices' must be int32 or int64, but got {idx.dtype}.")
    shape = _int_seq(op, "shape", shape)
    if not shape or builtins.any(s <= 0 for s in shape):
        raise ValueError(f"For '{op}', 'shape' must be non-empty with positive dims, but got {shape}.")
    if idx.ndim < 1 or not 1 <= idx.shape[-1] <= len(shape):
        raise ValueError(f"For '{op}', the last dim of 'indices' must be in [1, {len(shape)}], but got "
                         f"indices of shape {tuple(idx.shape)}.")
    k = idx.shape[-1]
    expect = tuple(idx.shape[:-1]) + shape[k:]
    if tuple(upd.shape) != expect:
        raise ValueError(f"For '{op}', 'updates' must have shape {expect} (indices.shape[:-1] + shape[{k}:]), "
                         f"but got {tuple(upd.shape)}.")
    idx = _core.cast(idx, mstype.int64) if idx.dtype != mstype.int64 else idx
    lin = None
    stride = 1
    for j in reversed(range(k)):
        col = idx[..., j]
        if col.size:
            col = _core.check_range(col, op, f"indices[..., {j}]", 0.0, float(shape[j]), False, None)
        term = _core.mul(col, Tensor(np.int64(stride)))
        lin = term if lin is None else _core.add(lin, term)
        stride *= shape[j]
    rows = math.prod(shape[:k])
    flat_upd = _core.reshape(upd, [-1] + list(shape[k:]))
    out = _core.unsorted_segment_sum(flat_upd, _core.reshape(lin, [-1]), rows)
    return _core.reshape(out, list(shape))


def nonzero(input, *, as_tuple=False):
    """MindSpore's ops.nonzero(input, *, as_tuple=False): the Int64 coordinates of the non-zero elements, shape
    (count, rank) in row-major order; as_tuple=True gives a tuple of rank 1-D Int64 Tensors, one per axis. Its
    output shape depends on the values, so it runs in PyNative only (ValueError inside a compiled function)."""
    x = _tensor_arg(input, "nonzero")
    out = _core.nonzero(x)
    if not as_tuple:
        return out
    return tuple(out[:, i] for i in range(builtins.max(x.ndim, 1)))


def unstack(input_x, axis=0):
    """MindSpore's ops.unstack(input_x, axis=0): the tuple of the input's slices along `axis` (each with that axis
    removed). ValueError for a 0-d input or an axis out of range."""
    x = _tensor_arg(input_x, "unstack", "input_x")
    if x.ndim == 0:
        raise ValueError("For 'unstack', the input must have rank >= 1, but got a 0-d Tensor.")
    axis = _axis("unstack", "axis", axis, x.ndim)
    lead = (builtins.slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


def unbind(input, dim=0):
    """MindSpore's ops.unbind(input, dim=0): ops.unstack along `dim`."""
    return unstack(_tensor_arg(input, "unbind"), dim)


def meshgrid(*inputs, indexing="xy"):
    """MindSpore's ops.meshgrid(*inputs, indexing='xy'): for N 1-D Tensors of lengths (n1, ..., nN), N Tensors
    of shape (n2, n1, n3, ...) ('xy', Cartesian) or (n1, ..., nN) ('ij', matrix) that repeat each input along the
    other axes. A single tuple/list of Tensors is accepted too. Raises TypeError (non-Tensors, inputs of different
    dtypes), ValueError (a bad indexing, inputs that are not 1-D, fewer than 2 inputs)."""
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"For 'meshgrid', 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
    if len(inputs) < 2:
        raise ValueError(f"For 'meshgrid', at least 2 inputs are needed, but got {len(inputs)}.")
    ts = [_tensor_arg(t, "meshgrid", f"inputs[{i}]") for i, t in enumerate(inputs)]
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(f"For 'meshgrid', every input must be 1-D, but inputs[{i}] has shape {tuple(t.shape)}.")
        if t.dtype != ts[0].dtype:
            raise TypeError(f"For 'meshgrid', all inputs must have one dtype, but got {ts[0].dtype} and {t.dtype}.")
    lengths = [t.shape[0] for t in ts]
    n = len(ts)
    order = list(range(n))
    if indexing == "xy":
        order[0], order[1] = 1, 0
    out_shape = [lengths[a] for a in order]  # the output's axis p holds input order[p]
    outs = []
    for i, t in enumerate(ts):
        shape = [1] * n
        shape[order.index(i)] = lengths[i]
        outs.append(_core.broadcast_to(_core.reshape(t, shape), out_shape))
    return tuple(outs)


def identity(x):
    """MindSpore's ops.identity(x): a copy of x (same shape, dtype and values; gradient passes unchanged)."""
    return _core.identity(_tensor_arg(x, "identity", "x"))


# ---------------------------------------------------------------------------------------------- Primitive classes

class Slice(Primitive):
    """Slice()(input_x, begin, size): see ops.slice."""

    def __call__(self, input_x, begin, size):
        return slice(input_x, begin, size)


class StridedSlice(Primitive):
    """StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0)(input_x, begin,
    end, strides): see ops.strided_slice."""

    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
        super().__init__("StridedSlice")
        for n, v in (("begin_mask", begin_mask), ("end_mask", end_mask), ("ellipsis_mask", ellipsis_mask),
                     ("new_axis_mask", new_axis_mask), ("shrink_axis_mask", shrink_axis_mask)):
            setattr(self, n, int_arg("StridedSlice", n, v, 0))

    def __call__(self, input_x, begin, end, strides):
        return strided_slice(input_x, begin, end, strides, self.begin_mask, self.end_mask, self.ellipsis_mask,
                             self.new_axis_mask, self.shrink_axis_mask)


class ReverseV2(Primitive):
    """ReverseV2(axis)(input_x): input_x reversed along the axes in `axis` (a tuple/list of ints); see ops.flip."""

    def __init__(self, axis):
        super().__init__("ReverseV2")
        self.axis = _int_seq("ReverseV2", "axis", axis)

    def __call__(self, input_x):
        return reverse(input_x, self.axis)


class GatherD(Primitive):
    """GatherD()(x, dim, index): see ops.gather_elements."""

    def __call__(self, x, dim, index):
        return gather_elements(x, dim, index)


class ScatterNd(Primitive):
    """ScatterNd()(indices, updates, shape): see ops.scatter_nd."""

    def __call__(self, indices, updates, shape):
        return scatter_nd(indices, updates, shape)


class ScatterNdUpdate(Primitive):
    """ScatterNdUpdate(use_locking=True)(input_x, indices, updates): writes `updates` into input_x (a Parameter or
    a Tensor) at `indices` (shape (..., k); updates of shape indices.shape[:-1] + input_x.shape[k:]) in place and
    returns it (scatter_func.py, Note [scatter writes]). Raises TypeError (input_x not a Tensor, non-integer
    indices), ValueError (shapes)."""

    def __init__(self, use_locking=True):
        super().__init__("ScatterNdUpdate")
        if not isinstance(use_locking, bool):
            raise TypeError(f"For 'ScatterNdUpdate', 'use_locking' must be bool, but got {_got(use_locking)}.")
        self.use_locking = use_locking

    def __call__(self, input_x, indices, updates):
        return nd_update(input_x, indices, updates, "ScatterNdUpdate")


def nd_update(input_x, indices, updates, op):
    """input_x <- updates at `indices` in place (scatter_func.py, Note [scatter writes]); every error names `op`."""
    from .scatter_func import write_into
    _tensor_arg(input_x, op, "input_x")
    idx = _tensor_arg(indices, op, "indices")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the 'indices' must be int32 or int64, but got {idx.dtype}.")
    upd = _tensor_arg(updates, op, "updates")
    if upd.dtype != input_x.dtype:
        upd = _core.cast(upd, input_x.dtype)
    return write_into(input_x, _core.tensor_scatter_update(input_x, idx, upd, op), op)


class Unstack(Primitive):
    """Unstack(axis=0, num=None)(input_x): see ops.unstack; `num`, when given, must equal input_x.shape[axis]."""

    def __init__(self, axis=0, num=None):
        super().__init__("Unstack")
        self.axis = int_arg("Unstack", "axis", axis)
        self.num = None if num is None else int_arg("Unstack", "num", num, 1)

    def __call__(self, input_x):
        out = unstack(input_x, self.axis)
        if self.num is not None and self.num != len(out):
            raise ValueError(f"For 'Unstack', 'num' ({self.num}) must equal the length of axis {self.axis} "
                             f"({len(out)}).")
        return out


class Meshgrid(Primitive):
    """Meshgrid(indexing='xy')(inputs): see ops.meshgrid (inputs: a tuple of 1-D Tensors)."""

    def __init__(self, indexing="xy"):
        super().__init__("Meshgrid")
        if indexing not in ("xy", "ij"):
            raise ValueError(f"For 'Meshgrid', 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
        self.indexing = indexing

    def __call__(self, inputs):
        if not isinstance(inputs, (tuple, list)):
            raise TypeError(f"For 'Meshgrid', the input must be a tuple of Tensors, but got {_got(inputs)}.")
        return meshgrid(*inputs, indexing=self.indexing)


class DepthToSpace(Primitive):
    """DepthToSpace(block_size)(x): x of shape (N, C·b², H, W) rearranged to (N, C, H·b, W·b) with
    out[n, c, h·b + i, w·b + j] = x[n, (i·b + j)·C + c, h, w] (MindSpore's DCR order; b = block_size >= 2).
    Raises ValueError (block_size < 2, x not 4-D, channels not divisible by b²)."""

    def __init__(self, block_size):
        super().__init__("DepthToSpace")
        self.block_size = int_arg("DepthToSpace", "block_size", block_size, 2)

    def __call__(self, x):
        x = _tensor_arg(x, "DepthToSpace", "x")
        b = self.block_size
        if x.ndim != 4 or x.shape[1] % (b * b):
            raise ValueError(f"For 'DepthToSpace', 'x' must be 4-D (N, C, H, W) with C divisible by "
                             f"block_size² = {b * b}, but got shape {tuple(x.shape)}.")
        n, c, h, w = x.shape
        co = c // (b * b)
        y = _core.reshape(x, [n, b, b, co, h, w])
        y = _core.transpose(y, [0, 3, 4, 1, 5, 2])
        return _core.reshape(y, [n, co, h * b, w * b])


class Identity(Primitive):
    """Identity()(x): see ops.identity."""

    def __call__(self, x):
        return identity(x)
