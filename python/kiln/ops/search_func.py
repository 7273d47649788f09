"""Index, search and set ops: MindSpore 2.10's ops.index_select, index_fill, index_add, masked_select, argwhere,
msort, top_k, searchsorted, bucketize, unique, unique_consecutive, unique_with_pad, gather_d and inplace_update /
add / sub (with their Primitive classes and Tensor methods where MindSpore has them).

Built from Kiln's Gather, UnsortedSegmentSum, Select, Less/LessEqual + ReduceSum, NonZero and ArgSort kernels, so
gradients and Graph mode are those kernels'. Ops whose output shape depends on the values (masked_select, argwhere,
unique*) run in PyNative only, as ops.nonzero. Index arguments are checked when the op runs (in both modes): an
index out of range is a ValueError naming the op."""
import builtins

import numpy as np

from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, _is_int, int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .array_func import _take_along, sort as _sort, topk as _topk
from .function import _tensor_arg
from .index_func import gather_elements as _gather_elements

__all__ = ["index_select", "index_fill", "index_add", "masked_select", "argwhere", "msort", "top_k", "searchsorted",
           "bucketize", "unique", "unique_consecutive", "unique_with_pad", "gather_d", "inplace_update", "inplace_add",
           "inplace_sub"]


_INDEX_DTYPES = (mstype.int32, mstype.int64)
_FILL_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


def _dim(op, name, axis, ndim):
    axis = int_arg(op, name, axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"For '{op}', '{name}' must be in [{-ndim}, {builtins.max(ndim, 1)}), but got {axis}.")
    return axis % builtins.max(ndim, 1)


def _index_vector(index, op, n, name="index", allow_0d=True, wrap=True):
    """An int32/int64 index Tensor (1-D, or 0-d when allowed) as Int64 in [0, n): negative counts from the end; a
    value outside [-n, n) is a ValueError naming the op (checked when the op runs). wrap=False: only checked (its
    dtype kept, negatives left for a kernel that counts them from the end itself, as Gather)."""
    idx = _tensor_arg(index, op, name)
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', '{name}' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if idx.ndim > 1 or (idx.ndim == 0 and not allow_0d):
        raise ValueError(f"For '{op}', '{name}' must be 1-D, but got shape {tuple(idx.shape)}.")
    if not wrap:
        return _core.check_range(idx, op, name, float(-n), float(n), False, None) if idx.size else idx
    idx = _core.cast(idx, mstype.int64) if idx.dtype != mstype.int64 else idx
    if idx.size:
        idx = _core.check_range(idx, op, name, float(-n), float(n), False, None)
    return _core.select(_core.less(idx, 0), _core.add(idx, n), idx)


@defop(tensor="index_select")
def index_select(input, axis, index):
    """MindSpore's ops.index_select(input, axis, index): the slices of `input` along `axis` at the 1-D int32/int64
    `index` (negative counts from the end); the output has input's rank with index's length on `axis`. Gradient:
    scatter-add into input. TypeError for a non-Tensor or non-integer index, ValueError for a bad axis, a
    non-1-D index or an index outside [-n, n)."""
    x = _tensor_arg(input, "index_select")
    if x.ndim == 0:
        raise ValueError("For 'index_select', the input must have rank >= 1, but got a 0-d Tensor.")
    axis = _dim("index_select", "axis", axis, x.ndim)
    # checked here (ValueError, as MindSpore); Gather counts negative indices from the end itself
    idx = _index_vector(index, "index_select", x.shape[axis], allow_0d=False, wrap=False)
    return _core.gather(x, idx, axis)


@defop(primitive="IndexFill", tensor="index_fill")
def index_fill(x, axis, index, value):
    """MindSpore's ops.index_fill(x, axis, index, value): a copy of x with the slices at `index` (an int32/int64
    Tensor of rank <= 1; negative counts from the end) along `axis` set to `value` (a number or a 0-d Tensor, cast
    to x's dtype). Gradient: to x where not filled, to a Tensor value summed over the filled places. TypeError for
    bad argument types, ValueError for a bad axis or an index outside [-n, n)."""
    x = _tensor_arg(x, "index_fill", "x")
    if x.ndim == 0:
        x0, axis_n = _core.reshape(x, [1]), 0
        _dim("index_fill", "axis", axis, 1)
    else:
        x0, axis_n = x, _dim("index_fill", "axis", axis, x.ndim)
    idx = _tensor_arg(index, "index_fill", "index")
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeError(f"For 'index_fill', 'index' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if idx.ndim > 1:
        raise ValueError(f"For 'index_fill', 'index' must be 1-D, but got shape {tuple(idx.shape)}.")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"For 'index_fill', a Tensor 'value' must be 0-d, but got shape {tuple(value.shape)}.")
        v = value if value.dtype == x.dtype else _core.cast(value, x.dtype)
    elif type(value) in (int, float) and x.dtype in _FILL_FLOATS:
        v = _core.full([], float(value), x.dtype)  # the number rounded to x's float dtype (as NumPy's astype)
    elif isinstance(value, (bool, int, float, np.number)):
        v = Tensor(np.asarray(value).astype(mstype.dtype_to_nptype(x.dtype)), x.dtype)
    else:
        raise TypeError(f"For 'index_fill', 'value' must be a number or a 0-d Tensor, but got {_got(value)}.")
    # one TensorScatterElements op filling whole slices (it checks every index: ValueError, both modes)
    out = _core.tensor_scatter_elements(x0, idx, v, axis_n, "none", True, "index_fill")
    return _core.reshape(out, []) if x.ndim == 0 else out


@defop(primitive="IndexAdd", prim_attrs={"axis": ("axis", 0), "use_lock": ("use_lock", True),
                                         "check_index_bound": ("check_index_bound", True)}, tensor="index_add")
def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    """MindSpore's ops.index_add(x, indices, y, axis, use_lock=True, check_index_bound=True): x with the slices of y
    added at the positions `indices` (1-D int32/int64, one per slice of y along `axis`; duplicates accumulate) along
    `axis`. y has x's shape except y.shape[axis] == len(indices). x (a Parameter or a Tensor) is updated in place
    and returned, as MindSpore 2.10 (scatter_func.py, Note [scatter writes]). Gradient: to x unchanged, to y
    gathered at indices. use_lock has no effect: the read-modify-write is not atomic across Python threads (guard
    a Tensor that two threads update, as in PyTorch; docs/robustness.md, "Threads"). Indices are always checked:
    ValueError for one outside [-n, n), a bad axis or shapes that differ; TypeError for non-Tensors or y of another
    dtype."""
    from .scatter_func import write_into
    xt = _tensor_arg(x, "index_add", "x")
    yt = _tensor_arg(y, "index_add", "y")
    if xt.dtype != yt.dtype:
        raise TypeError(f"For 'index_add', 'y' must have the dtype of 'x' ({xt.dtype}), but got {yt.dtype}.")
    if xt.ndim == 0:
        raise ValueError("For 'index_add', 'x' must have rank >= 1, but got a 0-d Tensor.")
    ax = _dim("index_add", "axis", axis, xt.ndim)
    idx = _tensor_arg(indices, "index_add", "indices")
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeError(f"For 'index_add', 'indices' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if idx.ndim != 1:
        raise ValueError(f"For 'index_add', 'indices' must be 1-D, but got shape {tuple(idx.shape)}.")
    # one TensorScatterElements op adding whole slices (it checks y's shape and every index: ValueError, both modes)
    out = _core.tensor_scatter_elements(xt, idx, yt, ax, "add", True, "index_add")
    return write_into(x, out, "index_add")


@defop(primitive="MaskedSelect", tensor="masked_select", mint="masked_select")
def masked_select(input, mask):
    """MindSpore's ops.masked_select(input, mask): the 1-D Tensor of input's elements where the Bool `mask` is True
    (input and mask broadcast together), in row-major order. Gradient: scatter into input. Its output shape depends
    on the values, so it runs in PyNative only. TypeError for non-Tensors or a non-Bool mask, ValueError for shapes
    that do not broadcast."""
    x = _tensor_arg(input, "masked_select")
    m = _tensor_arg(mask, "masked_select", "mask")
    if m.dtype != mstype.bool_:
        raise TypeError(f"For 'masked_select', 'mask' must be a Bool Tensor, but got {m.dtype}.")
    try:
        shape = list(_broadcast_shapes(tuple(x.shape), tuple(m.shape)))
    except ValueError:
        raise ValueError(f"For 'masked_select', input of shape {tuple(x.shape)} and mask of shape "
                         f"{tuple(m.shape)} do not broadcast.") from None
    xb = _core.broadcast_to(x, shape) if list(x.shape) != shape else x
    mb = _core.broadcast_to(m, shape) if list(m.shape) != shape else m
    flat_idx = _core.reshape(_core.nonzero(_core.reshape(mb, [-1])), [-1])
    return _core.gather(_core.reshape(xb, [-1]), flat_idx, 0)


@defop(tensor="argwhere")
def argwhere(input):
    """MindSpore's ops.argwhere(input): the Int64 coordinates (count, rank) of input's non-zero elements in
    row-major order (as ops.nonzero). PyNative only (value-dependent shape)."""
    return _core.nonzero(_tensor_arg(input, "argwhere"))


@defop(tensor="msort")
def msort(input):
    """MindSpore's ops.msort(input): input sorted ascending along axis 0 (ops.sort(input, axis=0)[0]; stable, NaN
    last). Gradient: back to each element's source. ValueError for a 0-d input."""
    x = _tensor_arg(input, "msort")
    if x.ndim == 0:
        raise ValueError("For 'msort', the input must have rank >= 1, but got a 0-d Tensor.")
    return _sort(x, 0)[0]


@defop(tensor="top_k")
def top_k(input_x, k, sorted=True):
    """MindSpore's ops.top_k(input_x, k, sorted=True) (the TopK primitive's functional form): (values, Int32
    indices) of the k largest elements along the last axis (ops.topk with dim=-1: sorted=True largest first,
    sorted=False in MindSpore 2.10's unsorted order, index for index). Errors as ops.topk."""
    return _topk(input_x, k, -1, True, sorted)


def _count_below(seq, vals, right, n):
    """For each value, the number of `seq` elements (the last axis) below it (right=False: <, True: <=), NaN
    counting as the largest value (NumPy's and PyTorch's order)."""
    s = _core.expand_dims(seq, seq.ndim - 1)  # (..., 1, n)
    v = _core.expand_dims(vals, vals.ndim)  # (..., m, 1)
    hit = _core.less_equal(s, v) if right else _core.less(s, v)
    cnt = _core.count_nonzero(hit, [-1], False)
    if mstype.is_float(vals.dtype):  # a NaN value sits after every number (and, for right, after the NaNs too)
        v_nan = _core.not_equal(vals, vals)
        not_nan = _core.count_nonzero(_core.equal(s, s), [-1], False)
        cnt = _core.select(v_nan, _core.full([], float(n), mstype.int64) if right else not_nan, cnt)
    return cnt


@defop(mint="searchsorted")
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """MindSpore's ops.searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
    sorter=None): for each value, the index where it would be inserted into the sorted last axis of
    sorted_sequence to keep it sorted — the first such place (right=False / side='left') or the last (right=True /
    side='right'). sorted_sequence is 1-D (shared by all values) or has values' leading dims; `sorter` (Int64, its
    shape) gives the sorting order of an unsorted sequence. Returns Int64 (Int32 with out_int32) of values' shape.
    NaN sorts last. TypeError for non-Tensors or dtypes that differ, ValueError for a conflicting side/right, shapes
    that do not match or a bad side."""
    seq = _tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    vals = values if isinstance(values, Tensor) else None
    if vals is None:
        if isinstance(values, (bool, int, float)) and not isinstance(values, bool):
            vals = Tensor(np.asarray(values, mstype.dtype_to_nptype(seq.dtype)), seq.dtype)
        else:
            raise TypeError(f"For 'searchsorted', 'values' must be a Tensor or a number, but got {_got(values)}.")
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"For 'searchsorted', 'side' must be 'left' or 'right', but got {side!r}.")
        if right and side == "left":
            raise ValueError("For 'searchsorted', side='left' conflicts with right=True.")
        right = side == "right"
    if seq.ndim == 0:
        raise ValueError("For 'searchsorted', 'sorted_sequence' must have rank >= 1, but got a 0-d Tensor.")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or tuple(vals.shape[:-1]) != tuple(seq.shape[:-1])):
        raise ValueError(f"For 'searchsorted', 'values' of shape {tuple(vals.shape)} must have the leading dims of "
                         f"'sorted_sequence' of shape {tuple(seq.shape)}.")
    if sorter is not None:
        srt = _tensor_arg(sorter, "searchsorted", "sorter")
        if srt.dtype not in (mstype.int32, mstype.int64) or tuple(srt.shape) != tuple(seq.shape):
            raise ValueError(f"For 'searchsorted', 'sorter' must be an integer Tensor of shape {tuple(seq.shape)}, "
                             f"but got {_got(srt)}.")
        srt = _core.check_range(_core.cast(srt, mstype.int64), "searchsorted", "sorter", 0.0,
                                float(seq.shape[-1]), False, None) if srt.size else _core.cast(srt, mstype.int64)
        seq = _take_along(seq, srt, seq.ndim - 1)
    if vals.dtype != seq.dtype:
        dt = _core.promote_types(seq.dtype, vals.dtype)
        seq = _core.cast(seq, dt) if seq.dtype != dt else seq
        vals = _core.cast(vals, dt) if vals.dtype != dt else vals
    v = vals if vals.ndim else _core.reshape(vals, [1])
    out = _count_below(seq, v, bool(right), seq.shape[-1])
    out = out if vals.ndim else _core.reshape(out, [])
    return _core.cast(out, mstype.int32) if out_int32 else out


@defop(primitive="Bucketize", prim_attrs={"boundaries": ("boundaries", ())})
def bucketize(input, boundaries, *, right=False):
    """MindSpore's ops.bucketize(input, boundaries, *, right=False): for each element x the Int32 index of its
    bucket among the increasing `boundaries` (a list of numbers): right=False gives i with boundaries[i-1] < x <=
    boundaries[i], right=True gives boundaries[i-1] <= x < boundaries[i] (0 below all, len(boundaries) above).
    TypeError for a non-Tensor or non-numeric boundaries, ValueError for boundaries that are not increasing."""
    x = _tensor_arg(input, "bucketize")
    if not isinstance(boundaries, (list, tuple)) or not builtins.all(
            isinstance(b, (int, float, np.number)) and not isinstance(b, bool) for b in boundaries):
        raise TypeError(f"For 'bucketize', 'boundaries' must be a list of numbers, but got {_got(boundaries)}.")
    b = np.asarray(boundaries, np.float64)
    if b.size > 1 and not np.all(np.diff(b) > 0):
        raise ValueError(f"For 'bucketize', 'boundaries' must be strictly increasing, but got {list(boundaries)}.")
    dt = x.dtype if mstype.is_float(x.dtype) else mstype.float64
    seq = Tensor(b.astype(mstype.dtype_to_nptype(dt)), dt)
    xv = x if x.dtype == dt else _core.cast(x, dt)
    v = xv if x.ndim else _core.reshape(xv, [1])
    out = _count_below(seq, v, bool(right), b.size)
    return _core.cast(out if x.ndim else _core.reshape(out, []), mstype.int32)


def _values(x, op):
    if _core.tracing():
        raise ValueError(f"For '{op}', the output shape depends on the values: it runs in PyNative mode only (not "
                         f"inside a compiled function).")
    if x.dtype == mstype.bfloat16:  # NumPy has no bfloat16; float32 holds every bfloat16 value exactly
        return _core.cast(x, mstype.float32).asnumpy()
    return x.asnumpy()


@defop(primitive="Unique")
def unique(input):
    """MindSpore's ops.unique(input) -> (output, idx): the distinct elements of the flattened input in order of
    first appearance (as MindSpore 2.10's CPU kernel), and for each input element the index of its value in output
    (input's shape; Int64 for an Int64 input, else Int32, as MindSpore). Every NaN is a value of its own (NaN !=
    NaN, as MindSpore 2.10's kernel: [nan, 1, nan] gives output [nan, 1, nan], idx [0, 1, 2]); -0.0 equals 0.0.
    PyNative only (value-dependent shape)."""
    x = _tensor_arg(input, "unique")
    a = _values(x, "unique").reshape(-1)
    nan = np.isnan(a) if a.dtype.kind == "f" or mstype.is_float(x.dtype) else None
    if nan is not None and nan.any():
        # rows (value, 0) for numbers, (0, position + 1) for each NaN: np.unique merges equal rows only
        v = a.astype(np.float64)
        keys = np.stack([np.where(nan, 0.0, v), np.where(nan, np.arange(1, a.size + 1, dtype=np.float64), 0.0)], 1)
        _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(a, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    out = _core.gather(_core.reshape(x, [-1]), Tensor(first[order].astype(np.int64)), 0)
    idx_dt = np.int64 if x.dtype == mstype.int64 else np.int32
    return out, Tensor(rank[inv.reshape(-1)].reshape(tuple(x.shape)).astype(idx_dt))


@defop(primitive="UniqueConsecutive", prim_attrs={"return_inverse": ("return_inverse", False),
                                                  "return_counts": ("return_counts", False), "dim": ("dim", None)},
       tensor="unique_consecutive", mint="unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """MindSpore's ops.unique_consecutive(input, return_inverse=False, return_counts=False, dim=None): input with
    each run of equal consecutive elements (dim None: of the flattened input) or equal consecutive slices along
    `dim` collapsed to one. Returns the output alone, or a tuple adding the Int64 inverse indices (input's shape, or
    the length of dim) and/or the Int64 run lengths. PyNative only (value-dependent shape). ValueError for a bad
    dim."""
    x = _tensor_arg(input, "unique_consecutive")
    a = _values(x, "unique_consecutive")
    if dim is None:
        flat = a.reshape(-1)
        n = flat.size
        change = np.ones(n, bool)
        if n > 1:
            change[1:] = ~((flat[1:] == flat[:-1]) | (np.isnan(flat[1:]) & np.isnan(flat[:-1]))
                           if flat.dtype.kind == "f" else flat[1:] == flat[:-1])
        starts = np.flatnonzero(change)
        out = _core.gather(_core.reshape(x, [-1]), Tensor(starts.astype(np.int64)), 0)
        inv_shape = tuple(x.shape)
    else:
        d = _dim("unique_consecutive", "dim", dim, x.ndim)
        n = a.shape[d]
        moved = np.moveaxis(a, d, 0).reshape(n, -1)
        change = np.ones(n, bool)
        if n > 1:
            change[1:] = ~np.all(moved[1:] == moved[:-1], axis=1)
        starts = np.flatnonzero(change)
        out = _core.gather(x, Tensor(starts.astype(np.int64)), d)
        inv_shape = (n,)
    inverse = Tensor((np.cumsum(change) - 1).reshape(inv_shape).astype(np.int64))
    counts = Tensor(np.diff(np.r_[starts, n]).astype(np.int64))
    res = (out,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return res[0] if len(res) == 1 else res


@defop(primitive="UniqueWithPad", tensor="unique_with_pad")
def unique_with_pad(x, pad_num):
    """MindSpore's ops.unique_with_pad(x, pad_num) -> (y, idx): ops.unique of the 1-D x (first-appearance order)
    with y padded by pad_num to x's length; idx (x's dtype, int32/int64) as ops.unique's. TypeError for a
    non-integer x or pad_num, ValueError for x not 1-D. PyNative only."""
    x = _tensor_arg(x, "unique_with_pad", "x")
    if x.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'unique_with_pad', 'x' must be an int32 or int64 Tensor, but got {x.dtype}.")
    if x.ndim != 1:
        raise ValueError(f"For 'unique_with_pad', 'x' must be 1-D, but got shape {tuple(x.shape)}.")
    if isinstance(pad_num, Tensor):
        pad_num = pad_num.asnumpy().item()
    if not _is_int(pad_num):
        raise TypeError(f"For 'unique_with_pad', 'pad_num' must be an int, but got {_got(pad_num)}.")
    y, idx = unique(x)
    k = y.shape[0]
    pad = Tensor(np.full((x.shape[0] - k,), int(pad_num), mstype.dtype_to_nptype(x.dtype)))
    return _core.concat([y, pad], 0), _core.cast(idx, x.dtype)


@defop()
def gather_d(x, dim, index):
    """MindSpore's ops.gather_d(x, dim, index): the same op as ops.gather_elements(x, dim, index) (the GatherD
    primitive): out[i][j] = x[index[i][j]][j] for dim 0, and so on. Errors as gather_elements."""
    return _gather_elements(x, dim, index)


def _inplace_rows(x, v, indices, op, kind):
    x = _tensor_arg(x, op, "x")
    v = _tensor_arg(v, op, "v")
    if x.ndim == 0:
        raise ValueError(f"For '{op}', 'x' must have rank >= 1, but got a 0-d Tensor.")
    if isinstance(indices, Tensor):
        idx = indices
    elif _is_int(indices):
        idx = Tensor(np.array([int(indices)], np.int32))
    elif isinstance(indices, (tuple, list)) and builtins.all(_is_int(i) for i in indices):
        idx = Tensor(np.array([int(i) for i in indices], np.int32))
    else:
        raise TypeError(f"For '{op}', 'indices' must be an int, a tuple of ints or an integer Tensor, but got "
                        f"{_got(indices)}.")
    if idx.ndim == 0:
        idx = _core.reshape(idx, [1])
    if v.dtype != x.dtype:
        raise TypeError(f"For '{op}', 'v' must have x's dtype ({x.dtype}), but got {v.dtype}.")
    want = (idx.shape[0],) + tuple(x.shape[1:])
    if tuple(v.shape) != want:
        raise ValueError(f"For '{op}', 'v' must have shape {want} (len(indices),) + x.shape[1:], but got "
                         f"{tuple(v.shape)}.")
    n = x.shape[0]
    i64 = _index_vector(idx, op, n, "indices", allow_0d=False)
    i64 = _core.reshape(i64, [-1, 1])
    if kind == "update":
        return _core.tensor_scatter_update(x, i64, v)
    delta = _core.unsorted_segment_sum(v, _core.reshape(i64, [-1]), n)
    return _core.add(x, delta) if kind == "add" else _core.sub(x, delta)


@defop(primitive="InplaceUpdate", prim_attrs={"indices": ("indices", ())})
def inplace_update(x, v, indices):
    """MindSpore's ops.inplace_update(x, v, indices): a copy of x whose rows x[indices[i]] are v[i] (indices: an
    int, a tuple of ints or a 1-D int32/int64 Tensor; negative counts from the end; v of shape (len(indices),) +
    x.shape[1:] and x's dtype; a repeated index keeps the last row). x itself is not changed (as MindSpore 2.10).
    Gradient w.r.t. x (zero on the replaced rows) and v. TypeError / ValueError for bad arguments or an index
    outside [-n, n)."""
    return _inplace_rows(x, v, indices, "inplace_update", "update")


@defop(primitive="InplaceAdd", prim_attrs={"indices": ("indices", ())})
def inplace_add(x, v, indices):
    """MindSpore's ops.inplace_add(x, v, indices): a copy of x with v[i] added to the rows x[indices[i]]
    (repeated indices accumulate). Arguments and errors as inplace_update."""
    return _inplace_rows(x, v, indices, "inplace_add", "add")


@defop(primitive="InplaceSub", prim_attrs={"indices": ("indices", ())})
def inplace_sub(x, v, indices):
    """MindSpore's ops.inplace_sub(x, v, indices): a copy of x with v[i] subtracted from the rows x[indices[i]]
    (repeated indices accumulate). Arguments and errors as inplace_update."""
    return _inplace_rows(x, v, indices, "inplace_sub", "sub")
