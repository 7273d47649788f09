"""Shape and layout ops built from Kiln's Reshape, Transpose, Concat, StridedSlice, Gather, BroadcastTo, Select and
Cast kernels (so gradients and Graph mode are those kernels'): MindSpore 2.10's ops.atleast_1d/2d/3d, hstack,
vstack/row_stack, dstack, column_stack, chunk, tensor_split, hsplit, vsplit, dsplit, expand, expand_as, fliplr,
flipud, rot90, moveaxis/movedim, swapaxes/swapdims, t, narrow, ravel, repeat_interleave, reverse_sequence,
sequence_mask, take, tril_indices, triu_indices, type_as, view_as, size, is_tensor, is_floating_point, is_complex,
is_nonzero and fills (cartesian_prod, combinations, block_diag and vander: kiln/ops/build_func.py).

Argument names, defaults, output shapes and dtypes are MindSpore 2.10's (checked against MindSpore 2.10 on CPU);
where MindSpore 2.10's CPU build cannot run an op (take, type_as, view_as, fills: "kernel unregistered") they follow
its documentation and PyTorch."""
import builtins
import itertools

import numpy as np

from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, _is_int, axes_arg, dtype_arg, int_arg, shape_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .array_func import _take_along
from .function import _tensor_arg
from .index_func import flip as _flip

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "expand", "expand_as", "fliplr", "flipud", "rot90",
           "moveaxis", "movedim", "swapaxes", "swapdims", "t", "narrow", "ravel", "repeat_interleave",
           "reverse_sequence", "sequence_mask", "take", "tril_indices", "triu_indices", "type_as", "view_as", "size",
           "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "fills"]


def _dim(op, name, axis, ndim):
    """`axis` normalised into [0, ndim) (ValueError naming the op otherwise)."""
    axis = int_arg(op, name, axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"For '{op}', '{name}' must be in [{-ndim}, {builtins.max(ndim, 1)}), but got {axis}.")
    return axis % builtins.max(ndim, 1)


def _tensor_list(op, name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (tuple, list)) or not tensors:
        raise TypeError(f"For '{op}', '{name}' must be a non-empty tuple or list of Tensors, but got {_got(tensors)}.")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', '{name}[{i}]' must be a Tensor, but got {_got(t)}.")
    return list(tensors)


# ---------------------------------------------------------------------------------------------- at least n-d

def _atleast(inputs, n, op):
    def one(x):
        shape = list(x.shape)
        if len(shape) >= n:
            return x
        if n == 1:
            new = [1]
        elif n == 2:
            new = [1] * (2 - len(shape)) + shape
        else:  # 3: NumPy's rule: () -> (1,1,1), (k,) -> (1,k,1), (a,b) -> (a,b,1)
            new = {0: [1, 1, 1], 1: [1] + shape + [1], 2: shape + [1]}[len(shape)]
        return _core.reshape(x, new)

    if isinstance(inputs, Tensor):
        return one(inputs)
    if isinstance(inputs, (tuple, list)):
        return tuple(one(_tensor_arg(x, op, "inputs")) for x in inputs)
    raise TypeError(f"For '{op}', 'inputs' must be a Tensor or a tuple/list of Tensors, but got {_got(inputs)}.")


@defop()
def atleast_1d(inputs):
    """MindSpore's ops.atleast_1d(inputs): a 0-d Tensor as shape (1,), others unchanged; a tuple/list of Tensors
    gives a tuple. TypeError for anything that is not a Tensor or a sequence of Tensors."""
    return _atleast(inputs, 1, "atleast_1d")


@defop()
def atleast_2d(inputs):
    """MindSpore's ops.atleast_2d(inputs): () -> (1, 1), (n,) -> (1, n), rank >= 2 unchanged; a tuple/list of
    Tensors gives a tuple. TypeError for anything else."""
    return _atleast(inputs, 2, "atleast_2d")


@defop()
def atleast_3d(inputs):
    """MindSpore's ops.atleast_3d(inputs): () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1), rank >= 3
    unchanged (NumPy's rule); a tuple/list of Tensors gives a tuple. TypeError for anything else."""
    return _atleast(inputs, 3, "atleast_3d")


# ---------------------------------------------------------------------------------------------- stacking

@defop(mint="hstack")
def hstack(tensors):
    """MindSpore's ops.hstack(tensors): concatenation along axis 1 (along axis 0 when the inputs are 1-D; 0-d
    inputs count as 1-D). Dtypes are promoted as ops.concat's. TypeError for a non-sequence or a non-Tensor item,
    ValueError for shapes that do not fit."""
    ts = _atleast(_tensor_list("hstack", "tensors", tensors), 1, "hstack")
    return _core.concat(list(ts), 0 if ts[0].ndim == 1 else 1)


@defop()
def vstack(inputs):
    """MindSpore's ops.vstack(inputs): the inputs made at least 2-D ((n,) -> (1, n)) and concatenated along axis 0.
    TypeError for a non-sequence or a non-Tensor item, ValueError for shapes that do not fit."""
    return _core.concat(list(_atleast(_tensor_list("vstack", "inputs", inputs), 2, "vstack")), 0)


@defop()
def row_stack(tensors):
    """MindSpore's ops.row_stack(tensors): the same as ops.vstack."""
    return _core.concat(list(_atleast(_tensor_list("row_stack", "tensors", tensors), 2, "row_stack")), 0)


@defop(mint="dstack")
def dstack(tensors):
    """MindSpore's ops.dstack(tensors): the inputs made at least 3-D (atleast_3d) and concatenated along axis 2.
    TypeError for a non-sequence or a non-Tensor item, ValueError for shapes that do not fit."""
    return _core.concat(list(_atleast(_tensor_list("dstack", "tensors", tensors), 3, "dstack")), 2)


@defop()
def column_stack(tensors):
    """MindSpore's ops.column_stack(tensors): 0-d and 1-D inputs become columns ((n,) -> (n, 1)), then all are
    concatenated along axis 1. TypeError for a non-sequence or non-Tensor item, ValueError for shapes that do not
    fit."""
    ts = _tensor_list("column_stack", "tensors", tensors)
    cols = [_core.reshape(t, [-1, 1]) if t.ndim < 2 else t for t in ts]
    return _core.concat(cols, 1)


# ---------------------------------------------------------------------------------------------- splitting

def _pieces(x, axis, bounds):
    """x split along `axis` at the sorted, clamped positions `bounds` (views sharing x's gradient)."""
    n = x.shape[axis]
    edges = [0] + [builtins.min(builtins.max(b, 0), n) for b in bounds] + [n]
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        hi = builtins.max(hi, lo)
        begin = [0] * x.ndim
        end = list(x.shape)
        begin[axis], end[axis] = lo, hi
        out.append(_core.strided_slice(x, begin, end, [1] * x.ndim))
    return tuple(out)


def _tensor_split(x, indices_or_sections, axis, op):
    if _is_int(indices_or_sections):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(f"For '{op}', the number of sections must be > 0, but got {k}.")
        n = x.shape[axis]
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        return _pieces(x, axis, list(itertools.accumulate(sizes))[:-1])
    if isinstance(indices_or_sections, (tuple, list)) and builtins.all(_is_int(v) for v in indices_or_sections):
        n = x.shape[axis]
        return _pieces(x, axis, [int(v) + n if int(v) < 0 else int(v) for v in indices_or_sections])
    raise TypeError(f"For '{op}', 'indices_or_sections' must be an int or a tuple/list of ints, but got "
                    f"{_got(indices_or_sections)}.")


@defop(tensor="tensor_split")
def tensor_split(input, indices_or_sections, axis=0):
    """MindSpore's ops.tensor_split(input, indices_or_sections, axis=0): a tuple of views of `input` along `axis`.
    An int k gives k pieces, the first n % k one longer (n the axis' length); a tuple/list of ints gives the pieces
    between those positions (negative counts from the end, clamped to [0, n], so pieces may be empty).
    TypeError for a non-Tensor or a bad indices_or_sections, ValueError for k <= 0 or a bad axis."""
    x = _tensor_arg(input, "tensor_split")
    if x.ndim == 0:
        raise ValueError("For 'tensor_split', the input must have rank >= 1, but got a 0-d Tensor.")
    return _tensor_split(x, indices_or_sections, _dim("tensor_split", "axis", axis, x.ndim), "tensor_split")


def _nsplit(input, indices_or_sections, axis, min_rank, op):
    x = _tensor_arg(input, op)
    if x.ndim < min_rank:
        raise ValueError(f"For '{op}', the input must have rank >= {min_rank}, but got shape {tuple(x.shape)}.")
    return _tensor_split(x, indices_or_sections, axis, op)


@defop(tensor="hsplit")
def hsplit(input, indices_or_sections):
    """MindSpore's ops.hsplit(input, indices_or_sections): tensor_split along axis 1 (rank >= 2); sections as
    tensor_split's. ValueError for rank < 2."""
    return _nsplit(input, indices_or_sections, 1, 2, "hsplit")


@defop(tensor="vsplit")
def vsplit(input, indices_or_sections):
    """MindSpore's ops.vsplit(input, indices_or_sections): tensor_split along axis 0 (rank >= 2); sections as
    tensor_split's. ValueError for rank < 2."""
    return _nsplit(input, indices_or_sections, 0, 2, "vsplit")


@defop(tensor="dsplit")
def dsplit(input, indices_or_sections):
    """MindSpore's ops.dsplit(input, indices_or_sections): tensor_split along axis 2 (rank >= 3); sections as
    tensor_split's. ValueError for rank < 3."""
    return _nsplit(input, indices_or_sections, 2, 3, "dsplit")


@defop(tensor="chunk")
def chunk(input, chunks, axis=0):
    """MindSpore's ops.chunk(input, chunks, axis=0): a tuple of at most `chunks` views along `axis`, each of length
    ceil(n / chunks) but the last (so 6 elements in 4 chunks give 3 pieces of 2, as PyTorch). TypeError for a
    non-int chunks, ValueError for chunks <= 0, a 0-d input or a bad axis."""
    x = _tensor_arg(input, "chunk")
    chunks = int_arg("chunk", "chunks", chunks)
    if chunks <= 0:
        raise ValueError(f"For 'chunk', 'chunks' must be > 0, but got {chunks}.")
    if x.ndim == 0:
        raise ValueError("For 'chunk', the input must have rank >= 1, but got a 0-d Tensor.")
    axis = _dim("chunk", "axis", axis, x.ndim)
    n = x.shape[axis]
    size = builtins.max(-(-n // chunks), 1)
    return _pieces(x, axis, list(range(size, n, size)))


# ---------------------------------------------------------------------------------------------- broadcasting, views

@defop(primitive="Expand", tensor=None)
def expand(input_x, size):
    """MindSpore's ops.expand(input_x, size): input_x broadcast to `size` (a 1-D integer Tensor, as MindSpore takes
    it, or a tuple/list of ints); -1 keeps that dim; new leading dims may be added. TypeError for a bad size,
    ValueError for a size input_x cannot broadcast to."""
    x = _tensor_arg(input_x, "expand", "input_x")
    shape = list(shape_arg("expand", "size", size))
    if len(shape) < x.ndim:
        raise ValueError(f"For 'expand', 'size' {tuple(shape)} has fewer dims than input_x of shape "
                         f"{tuple(x.shape)}.")
    lead = len(shape) - x.ndim
    for i, s in enumerate(shape):
        d = x.shape[i - lead] if i >= lead else None
        if s == -1 and d is None:
            raise ValueError(f"For 'expand', -1 in 'size' {tuple(shape)} is not allowed in a new leading dim.")
        if s == -1:
            shape[i] = d
        elif s < 0 or (d is not None and d != 1 and d != s):
            raise ValueError(f"For 'expand', input_x of shape {tuple(x.shape)} cannot be expanded to {tuple(shape)}.")
    return _core.broadcast_to(x, shape)


@defop()
def expand_as(input, other):
    """MindSpore's ops.expand_as(input, other): input broadcast to other's shape. ValueError where it cannot be."""
    y = _core._view_expand_as(input, other)  # C++ for concrete tensors that broadcast
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input, "expand_as")
    o = _tensor_arg(other, "expand_as", "other")
    try:
        _broadcast_shapes(tuple(x.shape), tuple(o.shape))
        ok = len(o.shape) >= x.ndim and builtins.all(
            a in (1, b) for a, b in zip(x.shape[::-1], o.shape[::-1]))
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"For 'expand_as', input of shape {tuple(x.shape)} cannot be expanded to {tuple(o.shape)}.")
    return _core.broadcast_to(x, list(o.shape))


@defop(tensor="fliplr")
def fliplr(input):
    """MindSpore's ops.fliplr(input): input reversed along axis 1 (rank >= 2; ValueError otherwise)."""
    x = _tensor_arg(input, "fliplr")
    if x.ndim < 2:
        raise ValueError(f"For 'fliplr', the input must have rank >= 2, but got shape {tuple(x.shape)}.")
    return _flip(x, (1,))


@defop(tensor="flipud")
def flipud(input):
    """MindSpore's ops.flipud(input): input reversed along axis 0 (rank >= 1; ValueError otherwise)."""
    x = _tensor_arg(input, "flipud")
    if x.ndim < 1:
        raise ValueError("For 'flipud', the input must have rank >= 1, but got a 0-d Tensor.")
    return _flip(x, (0,))


def _perm_swap(ndim, a, b):
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


@defop(tensor="rot90")
def rot90(input, k, dims):
    """MindSpore's ops.rot90(input, k, dims): input rotated by k·90° in the plane of the two axes `dims`, from
    dims[0] towards dims[1] (NumPy's rot90; k may be negative). TypeError for a non-int k or bad dims, ValueError
    for rank < 2, equal dims or dims out of range."""
    x = _tensor_arg(input, "rot90")
    k = int_arg("rot90", "k", k)
    if not isinstance(dims, (tuple, list)) or len(dims) != 2:
        raise TypeError(f"For 'rot90', 'dims' must be a tuple/list of two ints, but got {_got(dims)}.")
    if x.ndim < 2:
        raise ValueError(f"For 'rot90', the input must have rank >= 2, but got shape {tuple(x.shape)}.")
    a, b = (_dim("rot90", "dims", d, x.ndim) for d in dims)
    if a == b:
        raise ValueError(f"For 'rot90', the two dims must differ, but got {tuple(dims)}.")
    k %= 4
    if k == 0:
        return _core.identity(x)
    if k == 2:
        return _flip(x, (a, b))
    if k == 1:
        return _core.transpose(_flip(x, (b,)), _perm_swap(x.ndim, a, b))
    return _flip(_core.transpose(x, _perm_swap(x.ndim, a, b)), (b,))


def _moveaxis(x, source, destination, op):
    src = axes_arg(op, "source", source, allow_none=False)
    dst = axes_arg(op, "destination", destination, allow_none=False)
    src = (src,) if isinstance(src, int) else src
    dst = (dst,) if isinstance(dst, int) else dst
    if len(src) != len(dst):
        raise ValueError(f"For '{op}', 'source' and 'destination' must have the same number of axes, but got "
                         f"{src} and {dst}.")
    src = [_dim(op, "source", s, x.ndim) for s in src]
    dst = [_dim(op, "destination", d, x.ndim) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"For '{op}', repeated axis in 'source' {tuple(src)} or 'destination' {tuple(dst)}.")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _core.transpose(x, order)


@defop(tensor="moveaxis")
def moveaxis(x, source, destination):
    """MindSpore's ops.moveaxis(x, source, destination): x with the axes `source` (int or tuple) moved to the
    positions `destination`, the others keeping their order (NumPy's moveaxis). ValueError for axes out of range,
    repeated or of different counts."""
    y = _core._view_moveaxis(x, source, destination)  # C++ for a concrete tensor and two valid plain ints
    if y is not NotImplemented:
        return y
    return _moveaxis(_tensor_arg(x, "moveaxis", "x"), source, destination, "moveaxis")


@defop(tensor="movedim")
def movedim(x, source, destination):
    """MindSpore's ops.movedim(x, source, destination): the same as ops.moveaxis."""
    y = _core._view_moveaxis(x, source, destination)  # C++ for a concrete tensor and two valid plain ints
    if y is not NotImplemented:
        return y
    return _moveaxis(_tensor_arg(x, "movedim", "x"), source, destination, "movedim")


@defop(tensor="swapaxes", mint="swapaxes")
def swapaxes(input, axis0, axis1):
    """MindSpore's ops.swapaxes(input, axis0, axis1): input with the two axes exchanged (a transpose). ValueError
    for an axis out of range."""
    y = _core._view_swap(input, axis0, axis1)  # C++ for a concrete tensor and valid plain ints
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input, "swapaxes")
    if x.ndim == 0:
        _dim("swapaxes", "axis0", axis0, 0), _dim("swapaxes", "axis1", axis1, 0)
        return _core.identity(x)
    return _core.transpose(x, _perm_swap(x.ndim, _dim("swapaxes", "axis0", axis0, x.ndim),
                                         _dim("swapaxes", "axis1", axis1, x.ndim)))


@defop(tensor="swapdims")
def swapdims(input, dim0, dim1):
    """MindSpore's ops.swapdims(input, dim0, dim1): the same as ops.swapaxes."""
    y = _core._view_swap(input, dim0, dim1)  # C++ for a concrete tensor and valid plain ints
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input, "swapdims")
    if x.ndim == 0:
        _dim("swapdims", "dim0", dim0, 0), _dim("swapdims", "dim1", dim1, 0)
        return _core.identity(x)
    return _core.transpose(x, _perm_swap(x.ndim, _dim("swapdims", "dim0", dim0, x.ndim),
                                         _dim("swapdims", "dim1", dim1, x.ndim)))


@defop(tensor="t")
def t(input):
    """MindSpore's ops.t(input): a 2-D input transposed; 0-d and 1-D inputs unchanged. ValueError for rank > 2
    (as MindSpore documents)."""
    x = _tensor_arg(input, "t")
    if x.ndim > 2:
        raise ValueError(f"For 't', the input must have rank <= 2, but got shape {tuple(x.shape)}.")
    return _core.transpose(x, [1, 0]) if x.ndim == 2 else _core.identity(x)


@defop(tensor="narrow")
def narrow(input, axis, start, length):
    """MindSpore's ops.narrow(input, axis, start, length): the slice [start, start + length) of `input` along
    `axis` (a view). start must be in [0, n] and start + length <= n (n the axis' length); negative start is a
    ValueError, as in MindSpore. TypeError for non-int arguments."""
    y = _core._view_narrow(input, axis, start, length)  # C++ for a concrete tensor and valid plain ints
    if y is not NotImplemented:
        return y
    x = _tensor_arg(input, "narrow")
    if x.ndim == 0:
        raise ValueError("For 'narrow', the input must have rank >= 1, but got a 0-d Tensor.")
    axis = _dim("narrow", "axis", axis, x.ndim)
    start = int_arg("narrow", "start", start)
    length = int_arg("narrow", "length", length)
    n = x.shape[axis]
    if not 0 <= start <= n:
        raise ValueError(f"For 'narrow', 'start' must be in [0, {n}], but got {start}.")
    if length < 0 or start + length > n:
        raise ValueError(f"For 'narrow', 'length' must be in [0, {n - start}] (start={start}, dim {axis} of length "
                         f"{n}), but got {length}.")
    begin, end = [0] * x.ndim, list(x.shape)
    begin[axis], end[axis] = start, start + length
    return _core.strided_slice(x, begin, end, [1] * x.ndim)  # one StridedSlice (the C++ fast path's op)


@defop(mint="ravel")
def ravel(input):
    """MindSpore's ops.ravel(input): input flattened to 1-D in row-major order (a 0-d input gives shape (1,))."""
    return _core.reshape(_tensor_arg(input, "ravel"), [-1])


def _int_values(op, name, value):
    """A list of ints from an int, a tuple/list of ints or an integer Tensor (0-d or 1-D; read in PyNative)."""
    if _is_int(value):
        return [int(value)]
    if isinstance(value, Tensor):
        if value.dtype not in mstype.int_type or value.ndim > 1:
            raise TypeError(f"For '{op}', '{name}' must be an integer Tensor of rank <= 1, but got {_got(value)}.")
        return [int(v) for v in value.asnumpy().reshape(-1)]
    if isinstance(value, (tuple, list)) and builtins.all(_is_int(v) for v in value):
        return [int(v) for v in value]
    raise TypeError(f"For '{op}', '{name}' must be an int, a tuple/list of ints or an integer Tensor, but got "
                    f"{_got(value)}.")


@defop(tensor="repeat_interleave")
def repeat_interleave(input, repeats, axis=None):
    """MindSpore's ops.repeat_interleave(input, repeats, axis=None): each element (axis None: of the flattened
    input) or each slice along `axis` repeated `repeats` times: an int for all, or one count per element (tuple,
    list or 1-D integer Tensor, read in PyNative). Gradient: the repeated copies' gradients summed. TypeError for bad
    repeats, ValueError for negative counts, a count list of the wrong length or a bad axis."""
    x = _tensor_arg(input, "repeat_interleave")
    reps = _int_values("repeat_interleave", "repeats", repeats)
    if axis is None:
        x = _core.reshape(x, [-1])
        axis = 0
    elif x.ndim == 0:
        x = _core.reshape(x, [1])
        axis = _dim("repeat_interleave", "axis", axis, 1)
    else:
        axis = _dim("repeat_interleave", "axis", axis, x.ndim)
    n = x.shape[axis]
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"For 'repeat_interleave', 'repeats' must be >= 0, but got {reps}.")
    if len(reps) == 1:
        reps = reps * n
    if len(reps) != n:
        raise ValueError(f"For 'repeat_interleave', 'repeats' must have 1 or {n} (the length of axis {axis}) "
                         f"values, but got {len(reps)}.")
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    return _core.gather(x, Tensor(idx), axis)


@defop(primitive="ReverseSequence", prim_attrs={"seq_dim": ("seq_dim", 0), "batch_dim": ("batch_dim", 0)})
def reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0):
    """MindSpore's ops.reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0): for each batch entry b (along
    `batch_dim`), the first seq_lengths[b] elements along `seq_dim` reversed, the rest unchanged. seq_lengths: a 1-D
    int32/int64 Tensor with one value in [0, x.shape[seq_dim]] per batch entry (ValueError otherwise, checked when
    the op runs, also in Graph mode). Gradient: the same reversal of the incoming gradient."""
    x = _tensor_arg(x, "reverse_sequence", "x")
    lens = _tensor_arg(seq_lengths, "reverse_sequence", "seq_lengths")
    if lens.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'reverse_sequence', 'seq_lengths' must be int32 or int64, but got {lens.dtype}.")
    if x.ndim < 2:
        raise ValueError(f"For 'reverse_sequence', x must have rank >= 2, but got shape {tuple(x.shape)}.")
    sd = _dim("reverse_sequence", "seq_dim", seq_dim, x.ndim)
    bd = _dim("reverse_sequence", "batch_dim", batch_dim, x.ndim)
    if sd == bd:
        raise ValueError(f"For 'reverse_sequence', 'seq_dim' and 'batch_dim' must differ, but both are {sd}.")
    if lens.ndim != 1 or lens.shape[0] != x.shape[bd]:
        raise ValueError(f"For 'reverse_sequence', 'seq_lengths' must have shape ({x.shape[bd]},) (the batch dim of "
                         f"x), but got {tuple(lens.shape)}.")
    n = x.shape[sd]
    lens = _core.cast(lens, mstype.int64)
    if lens.size:
        lens = _core.check_range(lens, "reverse_sequence", "seq_lengths", 0.0, float(n), True, None)
    bshape = [1] * x.ndim
    bshape[bd] = x.shape[bd]
    sshape = [1] * x.ndim
    sshape[sd] = n
    L = _core.reshape(lens, bshape)
    s = Tensor(np.arange(n, dtype=np.int64).reshape(sshape))
    idx = _core.select(_core.less(s, L), _core.sub(_core.sub(L, 1), s), _core.add(s, _core.mul(L, 0)))
    idx = _core.broadcast_to(idx, list(x.shape))
    return _take_along(x, idx, sd)


@defop()
def sequence_mask(lengths, maxlen=None):
    """MindSpore's ops.sequence_mask(lengths, maxlen=None): the Bool mask of shape lengths.shape + (maxlen,) that
    is True at positions j < lengths[...]; maxlen None takes max(lengths) (read in PyNative). lengths: an int32/int64
    Tensor. TypeError for a non-integer lengths or maxlen, ValueError for maxlen <= 0."""
    lens = _tensor_arg(lengths, "sequence_mask", "lengths")
    if lens.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'sequence_mask', 'lengths' must be int32 or int64, but got {lens.dtype}.")
    if maxlen is None:
        maxlen = int(lens.asnumpy().max()) if lens.size else 0
    else:
        maxlen = int_arg("sequence_mask", "maxlen", maxlen)
        if maxlen <= 0:
            raise ValueError(f"For 'sequence_mask', 'maxlen' must be > 0, but got {maxlen}.")
    pos = Tensor(np.arange(maxlen, dtype=mstype.dtype_to_nptype(lens.dtype)))
    return _core.less(pos, _core.expand_dims(lens, lens.ndim))


@defop(mint="take")
def take(input, index):
    """MindSpore's ops.take(input, index): the elements of the flattened input at the int32/int64 `index` (any
    shape; negative counts from the end); the output has index's shape and input's dtype. Gradient: scatter-add into
    input. TypeError for non-Tensors or a non-integer index, ValueError for an index outside [-n, n) (checked when
    the op runs, also in Graph mode)."""
    x = _tensor_arg(input, "take")
    idx = _tensor_arg(index, "take", "index")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'take', 'index' must be int32 or int64, but got {idx.dtype}.")
    n = x.size
    flat = _core.reshape(x, [-1]) if x.ndim != 1 else x
    if idx.size:  # ValueError naming take (as MindSpore); Gather counts negative indices from the end itself
        idx = _core.check_range(idx, "take", "index", float(-n), float(n), False, None)
    return _core.gather(flat, idx, 0)


def _tri_indices(row, col, offset, dtype, op, lower):
    row = int_arg(op, "row", row, 0)
    col = int_arg(op, "col", col, 0)
    offset = int_arg(op, "offset", offset)
    dtype = dtype_arg(op, "dtype", dtype, mstype.int64)
    if dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', 'dtype' must be int32 or int64, but got {dtype}.")
    # one C++ TrilIndices / TriuIndices op (src/ops/creation.cpp)
    return _core.tri_indices(row, col, offset, lower, dtype)


@defop(primitive="TrilIndices", prim_attrs={"row": ("row", 0), "col": ("col", 0), "offset": ("offset", 0),
                                                "dtype": ("dtype", mstype.int32)})
def tril_indices(row, col, offset=0, *, dtype=mstype.int64):
    """MindSpore's ops.tril_indices(row, col, offset=0, *, dtype=int64): the (2, N) coordinates of the lower
    triangle (j <= i + offset) of a row × col matrix, row-major. TypeError for non-int sizes or a non-int32/int64
    dtype, ValueError for negative sizes."""
    return _tri_indices(row, col, offset, dtype, "tril_indices", True)


@defop(primitive="TriuIndices", prim_attrs={"row": ("row", 0), "col": ("col", 0), "offset": ("offset", 0),
                                                "dtype": ("dtype", mstype.int32)})
def triu_indices(row, col, offset=0, *, dtype=mstype.int64):
    """MindSpore's ops.triu_indices(row, col, offset=0, *, dtype=int64): the (2, N) coordinates of the upper
    triangle (j >= i + offset) of a row × col matrix, row-major. Errors as tril_indices."""
    return _tri_indices(row, col, offset, dtype, "triu_indices", False)


@defop(tensor="type_as")
def type_as(input, other):
    """MindSpore's ops.type_as(input, other): input cast to other's dtype (ops.cast's rules)."""
    x = _tensor_arg(input, "type_as")
    o = _tensor_arg(other, "type_as", "other")
    return _core.identity(x) if x.dtype == o.dtype else _core.cast(x, o.dtype)


@defop(tensor="view_as")
def view_as(input, other):
    """MindSpore's ops.view_as(input, other): input reshaped to other's shape. ValueError where the element counts
    differ."""
    x = _tensor_arg(input, "view_as")
    o = _tensor_arg(other, "view_as", "other")
    if x.size != o.size:
        raise ValueError(f"For 'view_as', input of shape {tuple(x.shape)} cannot be viewed as shape "
                         f"{tuple(o.shape)}.")
    return _core.reshape(x, list(o.shape))


# ---------------------------------------------------------------------------------------------- queries

@defop(primitive="Size")
def size(input_x):
    """MindSpore's ops.size(input_x): the number of elements, a Python int. TypeError for a non-Tensor."""
    return int(_tensor_arg(input_x, "size", "input_x").size)


@defop()
def is_tensor(obj):
    """MindSpore's ops.is_tensor(obj): True when obj is a Tensor (or a Parameter), else False."""
    return isinstance(obj, Tensor)


@defop()
def is_floating_point(input):
    """MindSpore's ops.is_floating_point(input): True for float16/bfloat16/float32/float64 Tensors."""
    return bool(mstype.is_float(_tensor_arg(input, "is_floating_point").dtype))


@defop(tensor="is_complex")
def is_complex(input):
    """MindSpore's ops.is_complex(input): True for a Complex64/Complex128 Tensor. TypeError for a non-Tensor."""
    x = _tensor_arg(input, "is_complex")
    return bool(mstype.is_complex(x.dtype))


@defop()
def is_nonzero(input):
    """MindSpore's ops.is_nonzero(input): whether the single element of `input` is non-zero, a Python bool (read in
    PyNative). ValueError when input has not exactly one element."""
    x = _tensor_arg(input, "is_nonzero")
    if x.size != 1:
        raise ValueError(f"For 'is_nonzero', the input must have exactly 1 element, but got shape {tuple(x.shape)}.")
    return bool(x.asnumpy().reshape(-1)[0] != 0)


@defop(primitive="Fills", tensor="fills")
def fills(x, value):
    """MindSpore's ops.fills(x, value): a Tensor of x's shape and dtype filled with `value` (a number or a 0-d
    Tensor, cast to x's dtype: 2.5 in an int32 Tensor is 2). TypeError for another value."""
    x = _tensor_arg(x, "fills", "x")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"For 'fills', a Tensor 'value' must be 0-d, but got shape {tuple(value.shape)}.")
        v = value if value.dtype == x.dtype else _core.cast(value, x.dtype)
        return _core.broadcast_to(v, list(x.shape))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"For 'fills', 'value' must be a number or a 0-d Tensor, but got {_got(value)}.")
    return Tensor(np.full(tuple(x.shape), np.asarray(value).astype(mstype.dtype_to_nptype(x.dtype))), x.dtype)
