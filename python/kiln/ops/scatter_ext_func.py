"""Scatter ops with a reduction, element scatters and segment reductions: MindSpore 2.10's ops.tensor_scatter_mul /
div / max / min, scatter_mul / div / max / min (rows of axis 0), scatter_nd_mul / div / max / min (in place on a
Parameter), tensor_scatter_elements, scatter, select_scatter, slice_scatter and unsorted_segment_sum / max / min /
prod, with their Primitive classes and Tensor methods where MindSpore has them.

The nd scatters (tensor_scatter_*, scatter_nd_*, scatter_* rows) are one TensorScatterReduce op each and the
element scatters (tensor_scatter_elements, scatter) one TensorScatterElements op (src/ops/scatter.cpp): repeated
indices combine in row order (MindSpore's CPU kernels'); gradients to the data and the updates (max/min: shared by
the input and the updates equal to the result, MindSpore's TensorScatterMax/Min bprop; mul/div: the exact
derivative with repeats). The segment reductions are built from UnsortedSegmentSum, Select and ReduceMax/Min/Prod:
the updates are laid out on an (items × segments) grid (the other cells hold the reduction's identity) and reduced
over the items — O(items · segments) memory; a max/min's gradient is shared equally by tied winners (MindSpore's
UnsortedSegmentMax/Min gradient).
Indices are checked when the op runs, in both modes: an index outside the target's range is a ValueError naming
the op (MindSpore's CPU kernels raise RuntimeError)."""
import builtins

import numpy as np

from .._loader import _core
from .._args import _got, _is_int, int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .function import _tensor_arg
from .scatter_func import write_into

__all__ = ["tensor_scatter_mul", "tensor_scatter_div", "tensor_scatter_max", "tensor_scatter_min", "scatter_mul",
           "scatter_div", "scatter_max", "scatter_min", "scatter_nd_mul", "scatter_nd_div", "scatter_nd_max",
           "scatter_nd_min", "tensor_scatter_elements", "scatter", "select_scatter", "slice_scatter",
           "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"]


def _limits(dtype):
    """(lowest, highest) finite values of a dtype (the identity of max / min where no update lands)."""
    np_dt = np.dtype(mstype.dtype_to_nptype(dtype))
    if np_dt.kind == "f":
        info = np.finfo(np_dt)
        return float(info.min), float(info.max)
    if np_dt.kind == "b":
        return 0.0, 1.0
    info = np.iinfo(np_dt)
    return float(info.min), float(info.max)


def _segment_reduce(data, ids, num, kind):
    """data (N, *inner), ids Int64 (N,) in [0, num): (num, *inner) reduced by `kind` ("sum", "max", "min", "prod");
    segments with no item get 0 / lowest / highest / 1."""
    if kind == "sum":
        return _core.unsorted_segment_sum(data, ids, num)
    inner = list(data.shape[1:])
    hit = _core.equal(_core.reshape(ids, [-1, 1] + [1] * len(inner)),
                      Tensor(np.arange(num, dtype=np.int64).reshape([1, num] + [1] * len(inner))))
    lo, hi = _limits(data.dtype)
    fill = {"max": lo, "min": hi, "prod": 1.0}[kind]
    grid = _core.select(hit, _core.expand_dims(data, 1), _core.full([], fill, data.dtype))
    if data.shape[0] == 0:
        return _core.full([num] + inner, fill, data.dtype)
    if kind == "max":
        return _core.amax(grid, [0], False)
    if kind == "min":
        return _core.amin(grid, [0], False)
    out = _core.prod(grid, [0], False)
    return out if out.dtype == data.dtype else _core.cast(out, data.dtype)  # (ReduceProd widens integers)


def _num_segments(num_segments, op):
    if isinstance(num_segments, Tensor):
        if num_segments.ndim != 0 or num_segments.dtype not in mstype.int_type:
            raise TypeError(f"For '{op}', a Tensor 'num_segments' must be a 0-d integer Tensor, but got "
                            f"{_got(num_segments)}.")
        num_segments = int(num_segments.asnumpy())
    return int_arg(op, "num_segments", num_segments, 1)


def _segment_op(x, segment_ids, num_segments, kind, op):
    x = _tensor_arg(x, op, "x")
    ids = _tensor_arg(segment_ids, op, "segment_ids")
    if ids.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', 'segment_ids' must be an int32 or int64 Tensor, but got {ids.dtype}.")
    num = _num_segments(num_segments, op)
    k = ids.ndim
    if k == 0 or tuple(x.shape[:k]) != tuple(ids.shape):
        raise ValueError(f"For '{op}', the shape of 'segment_ids' {tuple(ids.shape)} must be a non-empty prefix of "
                         f"x's shape {tuple(x.shape)}.")
    ids = _core.cast(ids, mstype.int64) if ids.dtype != mstype.int64 else ids
    if ids.size:
        ids = _core.check_range(ids, op, "segment_ids", 0.0, float(num), False, None)
    data = _core.reshape(x, [-1] + list(x.shape[k:]))
    return _segment_reduce(data, _core.reshape(ids, [-1]), num, kind)


@defop(primitive="UnsortedSegmentSum")
def unsorted_segment_sum(input_x, segment_ids, num_segments):
    """MindSpore's ops.unsorted_segment_sum(input_x, segment_ids, num_segments): out[s] = Σ input_x[j...] over the
    j... with segment_ids[j...] == s; segment_ids (int32/int64) has the shape of a prefix of input_x's; the output
    has shape (num_segments,) + input_x.shape[segment_ids.ndim:] (0 for an empty segment). num_segments: an int >= 1
    or a 0-d integer Tensor. Gradient: gather at the ids. ValueError for an id outside [0, num_segments) or shapes
    that do not fit, TypeError for bad types."""
    return _segment_op(_tensor_arg(input_x, "unsorted_segment_sum", "input_x"), segment_ids, num_segments, "sum",
                       "unsorted_segment_sum")


@defop(primitive="UnsortedSegmentMax", tensor="unsorted_segment_max")
def unsorted_segment_max(x, segment_ids, num_segments):
    """MindSpore's ops.unsorted_segment_max(x, segment_ids, num_segments): the per-segment maximum (shapes as
    unsorted_segment_sum); an empty segment holds the lowest finite value of x's dtype (as MindSpore). NaN wins.
    Gradient: to the maximal items, shared equally by ties. Errors as unsorted_segment_sum."""
    return _segment_op(x, segment_ids, num_segments, "max", "unsorted_segment_max")


@defop(primitive="UnsortedSegmentMin", tensor="unsorted_segment_min")
def unsorted_segment_min(x, segment_ids, num_segments):
    """MindSpore's ops.unsorted_segment_min(x, segment_ids, num_segments): the per-segment minimum; an empty
    segment holds the highest finite value of x's dtype. Gradient shared by ties. Errors as
    unsorted_segment_sum."""
    return _segment_op(x, segment_ids, num_segments, "min", "unsorted_segment_min")


@defop(primitive="UnsortedSegmentProd", tensor="unsorted_segment_prod")
def unsorted_segment_prod(x, segment_ids, num_segments):
    """MindSpore's ops.unsorted_segment_prod(x, segment_ids, num_segments): the per-segment product; an empty
    segment holds 1. Errors as unsorted_segment_sum."""
    return _segment_op(x, segment_ids, num_segments, "prod", "unsorted_segment_prod")


# ---------------------------------------------------------------------------------------------- nd scatters

def _nd_reduce(input_x, indices, updates, kind, op, rows=False):
    """input_x combined with `updates` at the index rows `indices` by `kind` ('add', 'sub', 'mul', 'div', 'max',
    'min'): one TensorScatterReduce op (src/ops/scatter.cpp), which checks the shapes, the updates' dtype and every
    index (ValueError naming `op`, in both modes)."""
    x = _tensor_arg(input_x, op, "input_x")
    idx = _tensor_arg(indices, op, "indices")
    upd = _tensor_arg(updates, op, "updates")
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeError(f"For '{op}', 'indices' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    return _core.tensor_scatter_reduce(x, idx, upd, kind, op, rows)


_INDEX_DTYPES = (mstype.int32, mstype.int64)


def _tensor_scatter(input_x, indices, updates, kind, op):
    return _nd_reduce(input_x, indices, updates, kind, op)


@defop(primitive="TensorScatterMul", tensor="scatter_mul")
def tensor_scatter_mul(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_mul(input_x, indices, updates): a copy of input_x multiplied, at the index
    tuples `indices` (int32/int64, shape (..., k), k <= rank), by `updates` (shape indices.shape[:-1] +
    input_x.shape[k:], input_x's dtype); repeated indices multiply in turn. Gradient w.r.t. input_x and updates.
    TypeError for bad dtypes, ValueError for bad shapes or an index out of range."""
    return _tensor_scatter(input_x, indices, updates, "mul", "tensor_scatter_mul")


@defop(primitive="TensorScatterDiv", tensor="scatter_div")
def tensor_scatter_div(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_div(input_x, indices, updates): a copy of input_x divided at `indices` by
    `updates` (repeated indices divide in turn; integers round toward zero, as MindSpore). Shapes and errors as
    tensor_scatter_mul."""
    return _tensor_scatter(input_x, indices, updates, "div", "tensor_scatter_div")


@defop(primitive="TensorScatterMax", tensor="scatter_max")
def tensor_scatter_max(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_max(input_x, indices, updates): a copy of input_x where each indexed place
    holds the maximum of its value and the updates landing there (NaN propagates). Gradient: at each place shared
    equally by input_x and the updates equal to the result (MindSpore 2.10's). Shapes and errors as
    tensor_scatter_mul."""
    return _tensor_scatter(input_x, indices, updates, "max", "tensor_scatter_max")


@defop(primitive="TensorScatterMin", tensor="scatter_min")
def tensor_scatter_min(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_min(input_x, indices, updates): a copy of input_x where each indexed place
    holds the minimum of its value and the updates landing there (NaN propagates). Gradient as tensor_scatter_max.
    Shapes and errors as tensor_scatter_mul."""
    return _tensor_scatter(input_x, indices, updates, "min", "tensor_scatter_min")


def _scatter_nd_kind(input_x, indices, updates, kind, op):
    return write_into(input_x, _nd_reduce(input_x, indices, updates, kind, op), op)


@defop(primitive="ScatterNdMul", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_nd_mul(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_mul(input_x, indices, updates, use_locking=False): input_x (a Parameter or a
    Tensor) multiplied in place (and returned; scatter_func.py, Note [scatter writes]) at `indices` by `updates`, as tensor_scatter_mul."""
    return _scatter_nd_kind(input_x, indices, updates, "mul", "scatter_nd_mul")


@defop(primitive="ScatterNdDiv", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_nd_div(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_div(input_x, indices, updates, use_locking=False): input_x divided at `indices`
    by `updates` (in place, Note [scatter writes]), as tensor_scatter_div."""
    return _scatter_nd_kind(input_x, indices, updates, "div", "scatter_nd_div")


@defop(primitive="ScatterNdMax", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_nd_max(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_max(input_x, indices, updates, use_locking=False): the maximum of input_x and
    the updates at `indices` (in place, Note [scatter writes]), as tensor_scatter_max."""
    return _scatter_nd_kind(input_x, indices, updates, "max", "scatter_nd_max")


@defop(primitive="ScatterNdMin", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_nd_min(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_min(input_x, indices, updates, use_locking=False): the minimum of input_x and
    the updates at `indices` (in place, Note [scatter writes]), as tensor_scatter_min."""
    return _scatter_nd_kind(input_x, indices, updates, "min", "scatter_nd_min")


def _scatter_rows(input_x, indices, updates, kind, op):
    """The rows form (MindSpore's ScatterMul/Div/Max/Min): indices of any shape holding row numbers into axis 0."""
    return write_into(input_x, _nd_reduce(input_x, indices, updates, kind, op, rows=True), op)


@defop(primitive="ScatterMul", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_mul(input_x, indices, updates, *, use_locking=False):
    """MindSpore's ops.scatter_mul(input_x, indices, updates): rows input_x[indices[i]] *= updates[i] (indices of
    any shape into axis 0; updates of shape indices.shape + input_x.shape[1:]); in place into input_x (a Parameter or
    a Tensor; returned: scatter_func.py, Note [scatter writes]). Errors as tensor_scatter_mul."""
    return _scatter_rows(input_x, indices, updates, "mul", "scatter_mul")


@defop(primitive="ScatterDiv", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_div(input_x, indices, updates, *, use_locking=False):
    """MindSpore's ops.scatter_div(input_x, indices, updates): rows input_x[indices[i]] /= updates[i] (integers
    round toward zero), in place (Note [scatter writes]). Shapes and errors as scatter_mul."""
    return _scatter_rows(input_x, indices, updates, "div", "scatter_div")


@defop(primitive="ScatterMax", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_max(input_x, indices, updates, *, use_locking=False):
    """MindSpore's ops.scatter_max(input_x, indices, updates): rows input_x[indices[i]] = max(that row,
    updates[i]), in place (Note [scatter writes]). Shapes and errors as scatter_mul."""
    return _scatter_rows(input_x, indices, updates, "max", "scatter_max")


@defop(primitive="ScatterMin", prim_attrs={"use_locking": ("use_locking", False)})
def scatter_min(input_x, indices, updates, *, use_locking=False):
    """MindSpore's ops.scatter_min(input_x, indices, updates): rows input_x[indices[i]] = min(that row,
    updates[i]), in place (Note [scatter writes]). Shapes and errors as scatter_mul."""
    return _scatter_rows(input_x, indices, updates, "min", "scatter_min")


# ---------------------------------------------------------------------------------------------- element scatters

def _element_scatter(x, idx, upd, axis, reduction, op):
    """One TensorScatterElements op (src/ops/scatter.cpp): it checks the ranks, shapes, dtypes and every index
    (ValueError naming `op`, in both modes) and wraps the negative indices."""
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeError(f"For '{op}', the index must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if x.ndim == 0:
        raise ValueError(f"For '{op}', the input must have rank >= 1, but got a 0-d Tensor.")
    ax = axis if type(axis) is int else int_arg(op, "axis", axis)
    if not -x.ndim <= ax < x.ndim:
        raise ValueError(f"For '{op}', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {ax}.")
    return _core.tensor_scatter_elements(x, idx, upd, ax, reduction, False, op)


@defop(primitive="TensorScatterElements", prim_attrs={"axis": ("axis", 0), "reduction": ("reduction", "none")})
def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """MindSpore's ops.tensor_scatter_elements(input_x, indices, updates, axis=0, reduction='none'): a copy of
    input_x with out[..., indices[i][j][k], ...] (the index replacing coordinate `axis`) set to (reduction='none')
    or increased by ('add') updates[i][j][k]. indices (int32/int64) has input_x's rank and at most its length on
    every other axis; updates has indices' shape and input_x's dtype; negative indices count from the end. With
    'none' a repeated target keeps the last update. Gradient w.r.t. input_x (zero where overwritten) and updates.
    ValueError for a reduction other than 'none'/'add', bad shapes or an index outside [-n, n) (MindSpore skips
    those silently); TypeError for bad dtypes."""
    x = _tensor_arg(input_x, "tensor_scatter_elements", "input_x")
    idx = _tensor_arg(indices, "tensor_scatter_elements", "indices")
    upd = _tensor_arg(updates, "tensor_scatter_elements", "updates")
    if reduction not in ("none", "add"):
        raise ValueError(f"For 'tensor_scatter_elements', 'reduction' must be 'none' or 'add', but got "
                         f"{reduction!r}.")
    return _element_scatter(x, idx, upd, axis, reduction, "tensor_scatter_elements")


@defop(tensor="scatter")
def scatter(input, axis, index, src):
    """MindSpore's ops.scatter(input, axis, index, src): a copy of input with out[..., index[i][j], ...] =
    src[i][j] along `axis` (PyTorch's Tensor.scatter; tensor_scatter_elements with reduction 'none'); src is a
    Tensor of index's shape (a number fills every indexed place). Gradient w.r.t. input and src. Errors as
    tensor_scatter_elements."""
    x = _tensor_arg(input, "scatter")
    idx = _tensor_arg(index, "scatter", "index")
    if isinstance(src, Tensor):
        upd = src
    elif isinstance(src, (int, float, np.number)) and not isinstance(src, bool):
        upd = Tensor(np.full(tuple(idx.shape), src, mstype.dtype_to_nptype(x.dtype)), x.dtype)
    else:
        raise TypeError(f"For 'scatter', 'src' must be a Tensor or a number, but got {_got(src)}.")
    return _element_scatter(x, idx, upd, axis, "none", "scatter")


def _embed(x, src, ax, positions, op):
    """x with its slices at the static `positions` along `ax` replaced by src's slices, in order."""
    n = x.shape[ax]
    where = np.zeros(n, bool)
    where[positions] = True
    src_of = np.zeros(n, np.int64)
    src_of[positions] = np.arange(len(positions))
    mshape = [1] * x.ndim
    mshape[ax] = n
    if len(positions) == 0:
        return _core.identity(x)
    spread = _core.gather(src, Tensor(src_of), ax)
    return _core.select(Tensor(where.reshape(mshape)), spread, x)


def _src_arg(src, x, want, op):
    s = _tensor_arg(src, op, "src")
    if s.dtype != x.dtype:
        raise TypeError(f"For '{op}', 'src' must have the input's dtype ({x.dtype}), but got {s.dtype}.")
    if tuple(s.shape) != tuple(want):
        raise ValueError(f"For '{op}', 'src' must have shape {tuple(want)}, but got {tuple(s.shape)}.")
    return s


@defop(tensor="select_scatter")
def select_scatter(input, src, axis, index):
    """MindSpore's ops.select_scatter(input, src, axis, index): a copy of input whose slice at `index` along `axis`
    (negative counts from the end) is src (input's shape without that axis, input's dtype). Gradient w.r.t. input
    and src. TypeError for bad types, ValueError for a bad axis, index or src shape."""
    x = _tensor_arg(input, "select_scatter")
    if x.ndim == 0:
        raise ValueError("For 'select_scatter', the input must have rank >= 1, but got a 0-d Tensor.")
    ax = int_arg("select_scatter", "axis", axis)
    if not -x.ndim <= ax < x.ndim:
        raise ValueError(f"For 'select_scatter', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {ax}.")
    ax %= x.ndim
    n = x.shape[ax]
    index = int_arg("select_scatter", "index", index)
    if not -n <= index < n:
        raise IndexError(f"For 'select_scatter', 'index' must be in [{-n}, {n}) for axis {ax}, but got {index}.")
    want = tuple(x.shape[:ax]) + tuple(x.shape[ax + 1:])
    s = _src_arg(src, x, want, "select_scatter")
    return _embed(x, _core.expand_dims(s, ax), ax, [index % n], "select_scatter")


@defop(tensor="slice_scatter")
def slice_scatter(input, src, axis=0, start=None, end=None, step=1):
    """MindSpore's ops.slice_scatter(input, src, axis=0, start=None, end=None, step=1): a copy of input whose slice
    start:end:step along `axis` (Python slice rules; None = the ends) is src (input's shape with the slice's length
    on `axis`, input's dtype). Gradient w.r.t. input and src. TypeError for bad types, ValueError for a bad axis,
    step <= 0 or a src of the wrong shape."""
    x = _tensor_arg(input, "slice_scatter")
    if x.ndim == 0:
        raise ValueError("For 'slice_scatter', the input must have rank >= 1, but got a 0-d Tensor.")
    ax = int_arg("slice_scatter", "axis", axis)
    if not -x.ndim <= ax < x.ndim:
        raise ValueError(f"For 'slice_scatter', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {ax}.")
    ax %= x.ndim
    for name, v in (("start", start), ("end", end)):
        if v is not None and not _is_int(v):
            raise TypeError(f"For 'slice_scatter', '{name}' must be an int or None, but got {_got(v)}.")
    step = int_arg("slice_scatter", "step", step)
    if step <= 0:
        raise ValueError(f"For 'slice_scatter', 'step' must be > 0, but got {step}.")
    positions = list(range(x.shape[ax]))[builtins.slice(start, end, step)]
    want = list(x.shape)
    want[ax] = len(positions)
    s = _src_arg(src, x, want, "slice_scatter")
    return _embed(x, s, ax, positions, "slice_scatter")
