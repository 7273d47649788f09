"""NumPy-style indexing of Tensors: basic indexing (ints, slices, None, Ellipsis) gives views through
StridedSlice; integer-array and boolean indexing gather through Gather on a flattened block of axes. Item
assignment (setitem) is the TensorScatterUpdate op on the flattened tensor (see `setitem`).

Index arithmetic of advanced indices (bounds checks, linearization) is done in NumPy when the indices are known
(concrete tensors, lists, arrays): indices are data, not differentiable, and the gathered values keep their gradient
through Gather. An integer index tensor computed inside the function being compiled (`x[idx]` with idx made by ops
of the same graph: `_symbolic` True, no values while tracing) is handled by the same rules with Kiln ops instead
(CheckRange, Select, Mul/Add, BroadcastTo, Gather), so that the whole index computation is graph nodes run at
every call: see `_symbolic_index` and docs/decisions/graph-tensor-index.md."""
import math
import numbers

import numpy as np

from .. import _engine
from .. import ops as _ops
from ..ops import _kernels
from . import _views
from .._compiler import deferred_writes as _deferred_writes
from .._compiler.symint import SymInt


def _is_tensor(x):
    return isinstance(x, _engine.Tensor)


def _is_advanced(k):
    return _is_tensor(k) or isinstance(k, (list, np.ndarray)) or (isinstance(k, tuple))


_SEPARATOR = object()  # an empty Ellipsis: consumes no dim, but separates array indices


def _list_index(k):
    """A list used as an index, as a NumPy array; IndexError for a ragged (non-rectangular) or non-numeric list."""
    try:
        return np.asarray(k)
    except (ValueError, TypeError):
        raise IndexError(f"For 'Tensor indexing', the index list {k!r} is ragged (its sublists have different "
                         "lengths) or holds non-numbers: an index list must be rectangular, of ints or bools.") from None


def _normalize_key(key, ndim):
    """Key as a list with Ellipsis expanded; returns (items, n_consumed)."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if _is_tensor(k) and k._symbolic:
            items.append(_symbolic_index(k))  # kept as a Tensor: an integer index array of unknown values
            continue
        if _is_tensor(k):
            k = k.asnumpy() if k.ndim > 0 or k.dtype == _engine.DType.Bool else int(k._item())
        elif isinstance(k, list):
            k = _list_index(k)
        elif isinstance(k, np.generic):
            k = k.item()
        if isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == np.bool_:
            k = bool(k)  # a 0-d Bool tensor / array is the Python bool (NumPy: x[True] adds an axis)
        if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
            raise IndexError(f"Tensor index arrays must be integer or bool, but got dtype {k.dtype}.")
        items.append(k)
    consumed = sum(k.ndim if (isinstance(k, np.ndarray) and k.dtype == np.bool_) or _is_bool_tensor(k) else
                   (0 if (k is None or k is Ellipsis or isinstance(k, bool)) else 1) for k in items)
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("An index can only have a single ellipsis ('...').")
    if consumed > ndim:
        raise IndexError(f"Too many indices for a tensor of rank {ndim}: {consumed} indices given.")
    if n_ell:
        i = next(j for j, k in enumerate(items) if k is Ellipsis)
        # An Ellipsis that covers no dims still separates array indices around it (NumPy's placement rule).
        fill = [slice(None)] * (ndim - consumed) or [_SEPARATOR]
        items = items[:i] + fill + items[i + 1:]
    else:
        items = items + [slice(None)] * (ndim - consumed)
    return items


_INT_DTYPES = frozenset((_engine.DType.Int8, _engine.DType.Int16, _engine.DType.Int32, _engine.DType.Int64,
                         _engine.DType.UInt8, _engine.DType.UInt16, _engine.DType.UInt32, _engine.DType.UInt64))


def _symbolic_index(k):
    """k, an index tensor computed inside the function being compiled, checked: an integer tensor of any shape is
    returned (an advanced index whose values are known only when the graph runs). A Bool tensor raises IndexError
    (x[mask] has as many elements as the mask has True values: a shape that depends on the data), another dtype
    IndexError as for concrete index arrays."""
    if k.dtype == _engine.DType.Bool and k.ndim == 0:
        raise IndexError(
            "Indexing with a 0-d Bool tensor of a compiled (graph-mode) function (an input of the function, or "
            "computed in it) adds an axis of length 1 (True) or 0 (False): the result's shape depends on its value, "
            "and Kiln's graph mode needs every shape while compiling. Pass a Python bool (a constant of the "
            "function), or keep the shape with ops.select(flag, x, other); x[flag] = value compiles.")
    if k.dtype == _engine.DType.Bool:
        return k  # a mask: its shape is checked against the indexed dims, then _graph_mask_error (_getitem)
    if k.dtype not in _INT_DTYPES:
        raise IndexError(f"Tensor index arrays must be integer or bool, but got dtype {k.dtype}.")
    return k


def _graph_mask_error(k):
    """The IndexError of x[mask] for a Bool tensor of a compiled (graph-mode) function (an input of the function or
    computed in it), whose shape matches the indexed dims: the result's shape depends on the mask's values."""
    return IndexError(
        f"Indexing with a boolean mask tensor of a compiled (graph-mode) function (an input of the function, or "
        f"computed in it; a Bool tensor of shape {tuple(k.shape)}) gives a result whose shape depends on the data (the "
        "number of True elements), and Kiln's graph mode needs every shape while compiling. Keep the shape with "
        "ops.select(mask, x, other) (or x * mask) and reduce it; assign through the mask (x[mask] = scalar "
        "compiles); or use ops.masked_select(x, mask) in PyNative (its shape is data-dependent too).")


def _is_bool_tensor(k):
    return _is_tensor(k) and k.dtype == _engine.DType.Bool


def _i64(v):
    """A constant Int64 tensor with the value(s) v (a Python int or NumPy integer array)."""
    return _engine.Tensor._from_numpy(np.asarray(v, dtype=np.int64, order="C"))  # (ascontiguousarray makes 0-d 1-d)


def _checked_index(k, dim, n, shape):
    """k (an integer tensor of the graph indexing dimension `dim`, of size n, of the indexed tensor of `shape`) as
    Int64 in [0, n): checked when the graph runs (IndexError naming the bad value, the dim and its size, for a value
    outside [-n, n), as NumPy raises for a known index; CheckRange, so it is never folded away) and wrapped (i + n
    where i < 0)."""
    i = k if k.dtype == _engine.DType.Int64 else _kernels.cast(k, _engine.DType.Int64)
    if any(isinstance(d, SymInt) for d in shape):  # a dynamic size: the text is the same at every probe trace
        what = f"index into dimension {dim} (a dynamic size)"
    else:
        what = f"index into dimension {dim} (size {n}) of the tensor of shape {tuple(shape)}"
    # The bounds are attributes: in a graph with dynamic shapes they are fitted to the run-time size.
    i = _kernels.check_range(i, "Tensor indexing", what, float(-n), float(n), False, None, True)
    return _kernels.select(_ops.less(i, _i64(0)), _ops.add(i, _i64(n)), i)


def getitem(x, key):
    """x[key] with NumPy semantics. Raises IndexError for out-of-range indices, naming the index and dim size.
    Integer index tensors computed inside the function being compiled (any shape, any integer dtype; with ints,
    slices, None, Ellipsis and other index arrays beside them) are gathered at their run-time values: the result's
    shape is NumPy's (index arrays broadcast; the index block in place, or first when separated by a slice); an
    out-of-range value raises IndexError when the graph runs; the gradient w.r.t. x sums the cotangent over repeated
    indices (Gather's gradient, an UnsortedSegmentSum). A Bool mask computed in the graph raises IndexError (the
    result's shape would depend on the data).
    Basic indices (ints, slices, None, Ellipsis) give a view that remembers x (see _views), so that a functional
    write through it (under a grad transform, in compiled code) reaches x.
    Tensor.__getitem__ is C++ (python/src/bind_views.cpp): keys of plain ints, slices of plain ints, None and one
    Ellipsis on a concrete tensor outside a trace are indexed there by these rules (the same ops and view record);
    it calls this function for every other key, in graph mode, and for every key that raises."""
    y = _getitem(x, key)
    if _is_basic(key):
        y = _views.note_view(x, y, ("getitem", key))
    return y


def _bools_are_advanced(items):
    """True when the bool scalars among the index items act as NumPy's advanced indices (a 0-d boolean array: a new
    axis of length 1 or 0 with index [0] or [] on it, broadcast with the other index arrays, and making every int an
    index array) in a way that differs from a new axis taken whole (True) or empty (False): beside an index array,
    another bool, or an int (NumPy then places the broadcast block first when a slice separates them)."""
    bools = sum(1 for k in items if isinstance(k, (bool, np.bool_)))
    if not bools:
        return False
    return bools > 1 or any(_is_array(k) or isinstance(k, (list, tuple)) or
                            (isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_)))
                            for k in items)


def _is_basic(key):
    """True for a key of ints, slices, None, Ellipsis and bools only (NumPy's basic indexing: a view), where the
    bools do not act as advanced indices (see _bools_are_advanced)."""
    items = key if isinstance(key, tuple) else (key,)
    if _bools_are_advanced(items):
        return False
    return all(k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral)) and not isinstance(k, np.ndarray)
               for k in items)


def _symbolic_scalar_index(x, k):
    """x[k] for a one-element Int32/Int64 tensor k computed by the graph being traced (a loop counter: `xs[t]` in a
    compiled loop): a Gather along axis 0 (no CheckRange: Gather itself raises IndexError for k outside [-n, n)).
    Returns None for any other key (the general path in _getitem handles every other graph index)."""
    if not (_is_tensor(k) and k._symbolic and k.size == 1 and k.ndim <= 1 and x.ndim >= 1
            and k.dtype in (_engine.DType.Int32, _engine.DType.Int64)):
        return None
    # Gather takes [-n, n) (negative counts from the end) and raises IndexError for any other value when it runs.
    out = _kernels.gather(x, _kernels.reshape(k, [1]), 0)
    return _kernels.reshape(out, list(x.shape[1:])) if k.ndim == 0 else out


def _getitem(x, key):
    sym = _symbolic_scalar_index(x, key)
    if sym is not None:
        return sym
    items = _normalize_key(key, x.ndim)
    x_shape = tuple(x.shape)  # before new axes: errors name the dimension of x (as NumPy's axis)
    # None (and a bare True/False) adds a size-1 axis; NumPy's result is that of indexing the tensor with the axis
    # already inserted and `:` (True) or `0:0` (False) on it, which also places the axis right among array indices.
    dim = 0
    new_axes = 0  # axes inserted so far: an index at dim (of the expanded tensor) indexes x's dim - new_axes
    x_dim = {}
    plain = []
    separated = False  # a slice/None/Ellipsis between two array indices: NumPy moves the index block to the front
    seen_array = pending_sep = False
    bool_adv = _bools_are_advanced(items)  # bools as NumPy's 0-d boolean index arrays
    has_array = bool_adv or any(_is_array(k) for k in items)
    for k in items:
        if _is_array(k) or (has_array and isinstance(k, numbers.Integral) and (bool_adv or not isinstance(k, bool))):
            if seen_array and pending_sep:
                separated = True
            seen_array, pending_sep = True, False
        elif seen_array and (k is None or k is _SEPARATOR or isinstance(k, (slice, bool))):
            pending_sep = True
        if k is _SEPARATOR:
            continue
        if k is None or isinstance(k, bool):
            x = _kernels.expand_dims(x, dim)
            if isinstance(k, bool) and bool_adv:  # index [0] (True) or [] (False) on the new axis of length 1
                plain.append(np.zeros((1 if k else 0,), np.int64))
            else:
                plain.append(slice(0, 0) if k is False else slice(None))
            dim += 1
            new_axes += 1
        else:
            x_dim[dim] = dim - new_axes
            plain.append(k)
            dim += k.ndim if (isinstance(k, np.ndarray) and k.dtype == np.bool_) or _is_bool_tensor(k) else 1
    items = plain
    shape = x.shape
    if has_array:
        # With array indices present, NumPy treats integer indices as 0-d advanced indices.
        items = [np.asarray(int(k)) if isinstance(k, numbers.Integral) else k for k in items]
    begin, end, step, squeeze_axes = [], [], [], []
    adv = []  # (axis, int index array)
    dim = 0
    for k in items:
        if isinstance(k, numbers.Integral):
            n = shape[dim]
            i = int(k)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for dimension {x_dim.get(dim, dim)} with size {n}")
            i = i + n if i < 0 else i
            begin.append(i); end.append(i + 1); step.append(1)
            squeeze_axes.append(dim)
            dim += 1
            continue
        if isinstance(k, slice):
            b, e, s = k.indices(shape[dim])
            begin.append(b); end.append(e); step.append(s)
            dim += 1
            continue
        if _is_bool_tensor(k):  # a mask of the graph: a wrong shape is an error as for a NumPy mask, else unsupported
            sub = tuple(shape[dim:dim + k.ndim])
            if not any(isinstance(d, SymInt) for d in sub + tuple(k.shape)) and tuple(k.shape) != sub:
                raise IndexError(f"The boolean index of shape {tuple(k.shape)} does not match the indexed dimensions "
                                 f"{sub}.")
            raise _graph_mask_error(k)
        if _is_tensor(k):  # an integer index tensor of the graph: checked and wrapped when it runs
            adv.append((dim, _checked_index(k, x_dim.get(dim, dim), shape[dim], x_shape)))
            begin.append(0); end.append(shape[dim]); step.append(1)
            dim += 1
            continue
        if isinstance(k, np.ndarray):
            if k.dtype == np.bool_:
                sub = shape[dim:dim + k.ndim]
                if tuple(k.shape) != tuple(sub):
                    raise IndexError(f"The boolean index of shape {k.shape} does not match the indexed dimensions "
                                     f"{tuple(sub)}.")
                for j, idx in enumerate(np.nonzero(k)):
                    adv.append((dim + j, idx.astype(np.int64)))
                    begin.append(0); end.append(shape[dim + j]); step.append(1)
                dim += k.ndim
            else:
                n = shape[dim]
                idx = k.astype(np.int64)
                bad = (idx < -n) | (idx >= n)
                if bad.any():
                    raise IndexError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension "
                                     f"{x_dim.get(dim, dim)} with size {n}")
                adv.append((dim, np.where(idx < 0, idx + n, idx)))
                begin.append(0); end.append(n); step.append(1)
                dim += 1
            continue
        raise IndexError(f"Tensor indices must be integers, slices, None, Ellipsis, bool or integer tensors/lists, "
                         f"but got {type(k).__name__}.")
    y = x
    if any(_maybe_ne(b, 0) or _maybe_ne(e, n) or s != 1 for b, e, s, n in zip(begin, end, step, shape)):
        y = _kernels.strided_slice(x, begin, end, step)
    if adv:
        y = _gather_advanced(y, adv, separated)
    if squeeze_axes:
        y = _kernels.squeeze(y, squeeze_axes)
    return y


def _is_array(k):
    """True for an index array of a normalized key: a NumPy array, or an integer tensor computed in the graph."""
    return isinstance(k, np.ndarray) or _is_tensor(k)


def _maybe_ne(a, b):
    """a != b, where a dynamic size (a SymInt of a probe trace) counts as different from every other value without
    recording a guard: skipping a slice that covers a whole axis is an optimization, so the compiled graph slices
    (a no-op for the sizes where it is whole) rather than depend on a condition on the size."""
    if isinstance(a, SymInt) or isinstance(b, SymInt):
        return not (isinstance(a, SymInt) and isinstance(b, SymInt) and a._text == b._text)
    return a != b


def _gather_advanced(y, adv, separated=False):
    """Applies integer-array indices `adv` [(axis, int array)] to y (NumPy placement rules: the broadcast index
    block replaces adjacent indexed axes in place, and goes to the front when they were separated)."""
    if any(_is_tensor(i) for _, i in adv):
        return _gather_symbolic(y, adv, separated)
    axes = [a for a, _ in adv]
    try:
        arrays = np.broadcast_arrays(*[i for _, i in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(i.shape)) for _, i in adv)) from None
    bshape = arrays[0].shape
    dims = [y.shape[a] for a in axes]
    lin = np.zeros(bshape, dtype=np.int64)
    for arr, d in zip(arrays, dims):
        lin = lin * d + arr
    return _gather_linear(y, axes, dims, _engine.Tensor._from_numpy(np.asarray(lin, order="C")), bshape, separated)


def _gather_symbolic(y, adv, separated):
    """_gather_advanced when some index arrays are tensors computed in the graph (already checked and wrapped by
    _checked_index; known ones were checked and wrapped in NumPy): the same placement rules, with the index
    arithmetic as graph ops. The indices are broadcast together (IndexError naming the shapes when they do not
    broadcast) and linearized over the indexed axes (i0 * n1 + i1 ...), then one Gather. A single index array gathers
    along its axis directly (no transpose). Shape: NumPy's x[key]; dtype: y's."""
    axes = [a for a, _ in adv]
    dims = [y.shape[a] for a in axes]
    idxs = [i if _is_tensor(i) else _i64(i) for _, i in adv]
    try:
        bshape = tuple(np.broadcast_shapes(*[tuple(i.shape) for i in idxs]))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(i.shape)) for i in idxs)) from None
    if len(idxs) == 1:
        return _kernels.gather(y, idxs[0], axes[0])
    lin = None
    for i, d in zip(idxs, dims):
        if tuple(i.shape) != bshape:
            i = _kernels.broadcast_to(i, list(bshape))
        lin = i if lin is None else _ops.add(_ops.mul(lin, _i64(d)), i)
    return _gather_linear(y, axes, dims, lin, bshape, separated)


def _gather_linear(y, axes, dims, lin, bshape, separated):
    """One Gather of y at the linearized index `lin` (shape bshape; i0 * n1 + i1 ... over the indexed `axes` of
    sizes `dims`), with NumPy's placement of the index block: in place of the indexed axes when they are adjacent
    and not separated by a slice, else in front. Shared by the concrete and the graph-computed index paths."""
    rest = [i for i in range(y.ndim) if i not in axes]
    adjacent = not separated and axes == list(range(axes[0], axes[0] + len(axes)))
    perm = axes + rest
    t = _kernels.transpose(y, perm) if perm != list(range(y.ndim)) else y
    t = _kernels.reshape(t, [math.prod(dims)] + [y.shape[i] for i in rest])  # math.prod keeps a SymInt
    out = _kernels.gather(t, lin, 0)  # shape: bshape + rest
    if adjacent and axes[0] != 0:
        nb = len(bshape)
        first = axes[0]
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, out.ndim))
        out = _kernels.transpose(out, order)
    return out


def _numpy_key(key):
    """The key with Tensors as NumPy arrays (their values are the index data); the key holds no graph tensor."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if _is_tensor(k):
            k = k.asnumpy()
            if k.dtype.kind not in "biu":
                raise IndexError(f"Tensor index arrays must be integer or bool, but got dtype {k.dtype}.")
        elif isinstance(k, list):
            k = _list_index(k)
            if k.size and k.dtype.kind not in "biu":
                raise IndexError(f"Tensor index arrays must be integer or bool, but got dtype {k.dtype}.")
            if not k.size:
                k = k.astype(np.int64)
        out.append(k)
    return tuple(out)


def _has_graph_tensor(key):
    """True when key (or an item of the tuple key) is a tensor computed inside the function being compiled."""
    return any(_is_tensor(k) and k._symbolic for k in (key if isinstance(key, tuple) else (key,)))


def _region_positions(shape, key):
    """Flat positions (into a C-ordered tensor of `shape`) of the elements x[key] selects, with x[key]'s shape:
    NumPy's own indexing of an arange, so basic, integer-array and boolean indices follow NumPy exactly.
    With an index tensor computed in the graph, an Int64 Tensor instead: getitem (its symbolic path: checked and
    wrapped indices, NumPy's placement) applied to an arange made by the graph."""
    size = int(np.prod(shape, dtype=np.int64))
    if _has_graph_tensor(key):
        base = _kernels.reshape(_kernels.arange(0.0, float(size), 1.0, _engine.DType.Int64), list(shape))
        return _getitem(base, key)
    try:
        return np.arange(size, dtype=np.int64).reshape(shape)[_numpy_key(key)]
    except IndexError as e:
        raise IndexError(str(e)) from None


def _value_for(value, region_shape, dtype):
    """`value` as a tensor of `dtype` broadcast to the indexed region (NumPy's assignment rule: leading size-1 dims
    of the value may be dropped)."""
    if _is_tensor(value):
        v = value
    elif isinstance(value, (bool, numbers.Number, list, tuple)) and not isinstance(value, np.generic):
        # Python values are converted straight to x's dtype: an int that does not fit raises OverflowError (NumPy 2)
        from .._convert import make_tensor
        v = make_tensor(value, dtype)
    else:
        try:
            v = _engine.Tensor._from_numpy(np.ascontiguousarray(np.asarray(value)))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Tensor setitem: the value of type {type(value).__name__} can not be converted to a "
                            f"Tensor ({e}).") from None
    if v.dtype != dtype:
        v = _kernels.cast(v, dtype)
    vs = tuple(v.shape)
    while len(vs) > len(region_shape) and vs[0] == 1:
        vs = vs[1:]
    try:
        ok = len(vs) <= len(region_shape) and np.broadcast_shapes(vs, region_shape) == tuple(region_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"Tensor setitem: the value of shape {tuple(v.shape)} can not be broadcast to the indexed "
                         f"region of shape {tuple(region_shape)}.")
    if vs != tuple(v.shape):
        v = _kernels.reshape(v, list(vs))
    if vs != tuple(region_shape):
        v = _kernels.broadcast_to(v, list(region_shape))
    return v


def _updated(x, pos, v):
    """A new tensor: x with the flat positions `pos` (region-shaped; a NumPy array, or an Int64 Tensor of the graph)
    set to `v` (region-shaped), through the TensorScatterUpdate op (differentiable in x and v, traceable; a repeated
    position keeps the last value in row-major order, as NumPy, and only that value gets a gradient)."""
    flat = _kernels.reshape(x, [-1])
    idx = _kernels.reshape(pos, [-1, 1]) if _is_tensor(pos) else \
        _engine.Tensor._from_numpy(np.ascontiguousarray(pos.reshape(-1, 1)))
    out = _kernels.tensor_scatter_update(flat, idx, _kernels.reshape(v, [-1]))
    return _kernels.reshape(out, list(x.shape))


def setitem(x, key, value):
    """x[key] = value with NumPy's indexing (ints, slices, None, Ellipsis, integer arrays/lists/tensors, boolean
    masks); `value` (a Python scalar, array or Tensor) is cast to x's dtype and broadcast to the indexed region.

    Semantics (MindSpore's PyNative: item assignment makes a new tensor that the same Python object then stands for):
    - a tensor that a grad transform records (or whose value is recorded: a value computed from watched tensors),
      and any tensor inside a compiled function: the update is the TensorScatterUpdate op, and `x` is rebound to its
      result. Earlier uses of x keep the old value and gradient; the gradient w.r.t. the old x is zero at the
      overwritten positions and the value's gradient is the cotangent summed over its broadcast region.
      A Parameter (or a tensor made outside the function being compiled) keeps its identity: its storage is
      written (an Assign in graphs, run at every call); inside a gradient of that Parameter this raises.
    - otherwise (PyNative, no gradient recorded) the write is in place, so views of x see it, as in NumPy.
    An integer index tensor computed inside the function being compiled (any shape, beside ints, slices, None,
    Ellipsis and other index arrays) selects the region at its run-time values (the flat positions are getitem of
    an arange, made by graph ops), so `x[idx] = v` and `x[idx] += v` compile; out-of-range values raise IndexError
    when the graph runs. With a repeated index the last write (row-major) wins, as NumPy (MindSpore's
    TensorScatterUpdate leaves the order undefined): only that write reaches the value's gradient.
    Raises IndexError (bad or out-of-range index), ValueError (value not broadcastable), TypeError.
    Tensor.__setitem__ is C++ (python/src/bind_views.cpp): the in-place write of a basic key (plain ints, slices,
    None, Ellipsis) with a Python float/bool/int or a concrete Tensor value, outside a grad transform and a trace,
    is done there (the same Assign into the view); it calls this function for everything else."""
    from .parameter import Parameter  # noqa: F401 (import cycle: parameter imports tensor)
    if (isinstance(value, int) and not isinstance(value, bool) and x.dtype == _engine.DType.UInt64
            and 2**63 <= value < 2**64):  # a Python int only UInt64 holds (Python ints are Int64 scalars otherwise)
        value = _engine.Tensor._from_numpy(np.array(value, np.uint64))
    symbolic = x._symbolic or (_is_tensor(value) and value._symbolic)
    tracing = _engine.tracing()
    recorded = _engine.grad_level() > 0 and (x._tracked or (_is_tensor(value) and value._tracked) or
                                           _is_recorded_view(x))
    mask = _symbolic_mask(key, x.ndim)
    if not (symbolic or tracing or recorded or mask is not None):
        _setitem_in_place(x, key, value)
        return
    if mask is not None:  # x[mask] = scalar with a mask computed in the graph (x[x < 0] = 0): a Select
        out = _masked_fill(x, mask[1], mask[0], value)
        pos = None
    else:
        sym = _symbolic_index_of_key(key, x.ndim)
        if sym is not None:  # y[i] = v with a loop counter i computed in the graph
            static_key, dim, k = sym
            pos = _region_positions(tuple(x.shape), static_key)
            v = _value_for(value, pos.shape, x.dtype)
            out = _updated_at(x, pos, v, dim, k) if pos.size else x
        else:
            pos = _region_positions(tuple(x.shape), key)  # a Tensor when the key holds a graph index tensor
            v = _value_for(value, tuple(pos.shape), x.dtype)
            out = _updated(x, pos, v) if pos.size else x
    commit_write(x, out, "Tensor setitem")


def _symbolic_index_of_key(key, ndim):
    """(the key with its symbolic index replaced by 0, the dim it indexes, the index tensor) when `key` holds exactly
    one integer tensor with one element computed inside the function being compiled (`y[i] = v`, `y[i, :] = v`,
    `y[:, i] = v` with a loop counter i), the other items being ints, slices, None or one Ellipsis; else None."""
    items = key if isinstance(key, tuple) else (key,)
    syms = [j for j, k in enumerate(items) if _is_tensor(k) and k._symbolic]
    if len(syms) != 1:
        return None
    j = syms[0]
    k = items[j]
    if k.size != 1 or k.ndim > 1 or k.dtype not in (_engine.DType.Int32, _engine.DType.Int64, _engine.DType.Int16,
                                                      _engine.DType.Int8, _engine.DType.UInt8):
        return None
    if not all(i == j or m is None or m is Ellipsis or isinstance(m, (slice, numbers.Integral))
               for i, m in enumerate(items)):
        return None
    consumes = lambda m: not (m is None or m is Ellipsis or isinstance(m, bool))
    if any(m is Ellipsis for m in items[:j]):
        dim = ndim - sum(1 for m in items[j:] if consumes(m))
    else:
        dim = sum(1 for m in items[:j] if consumes(m))
    if dim >= ndim:
        raise IndexError(f"Too many indices for a tensor of rank {ndim}.")
    zero = 0 if k.ndim == 0 else np.zeros((1,), np.int64)
    return tuple(zero if i == j else m for i, m in enumerate(items)), dim, k


def _updated_at(x, pos, v, dim, k):
    """_updated, with the positions of index 0 along `dim` moved to the index `k` (a one-element integer tensor of the
    graph; negative counts from the end): TensorScatterUpdate with each element's coordinates. The index is checked
    before it is wrapped (_checked_index: an IndexError naming the user's value, the dim and [-n, n) when the graph
    runs, as getitem's), since a wrapped -7 into a size of 6 (-1) would be reported as the wrong value."""
    n = x.shape[dim]
    coords = np.stack(np.unravel_index(pos.reshape(-1), tuple(x.shape)), -1).astype(np.int64)
    onehot = np.zeros((x.ndim,), np.int64)
    onehot[dim] = 1
    i = _kernels.reshape(_checked_index(k, dim, n, tuple(x.shape)), [])
    idx = _engine.Tensor._from_numpy(np.ascontiguousarray(coords)) + _engine.Tensor._from_numpy(onehot) * i
    return _kernels.tensor_scatter_update(x, idx, _kernels.reshape(v, [-1]))


def _is_recorded_view(x):
    """True when x is a view (possibly taken before the grad transform, so itself unrecorded): under a gradient a
    write into it is functional, since its storage may be that of a recorded tensor (a differentiated argument shares
    the storage of the tensor passed in) whose saved value the gradient still needs."""
    return _views.view_info(x) is not None


def commit_write(x, out, what):
    """Makes tensor x (possibly a view) stand for `out` after a functional write (setitem, assign_value): the write
    reaches x's root when x is a view (see _views), the root is rebound (or assigned, for a Parameter or a tensor
    from outside the function being compiled), and the root's live views are re-derived from its new value.
    Raises RuntimeError for a write into a Parameter that is being differentiated."""
    from .parameter import Parameter  # import cycle: parameter imports tensor
    if out is x:
        return
    tracing = _engine.tracing()
    target, new, chain = _views.write_through(x, out)
    keeps_identity = isinstance(target, Parameter) or (tracing and target._is_state_while_tracing)
    real = _deferred_writes.real_tensor(target) if tracing else target
    if real is not target:  # rebound by a deferred write earlier in this trace
        keeps_identity = True
    if keeps_identity and real._tracked and _engine.grad_level() > 0:
        name = getattr(target, "name", "")
        via = " through a view of it" if target is not x else ""
        raise RuntimeError(f"{what}: {'Parameter ' + repr(name) if name else 'this tensor'} is being "
                           f"differentiated, so it can not be written in place{via} (its gradient would ignore the "
                           f"write), at {_engine._user_location()}. Write into a copy instead: y = x.copy(); "
                           "y[...] = value.")
    if keeps_identity and tracing and target is x and new is not target and \
            _deferred_writes.defer(target, new, what):
        # Note [deferred state writes]: the object stands for the new value; one Assign when the trace ends.
        _views.refresh_views(target, new, skip_storage_sharing=False)
    elif keeps_identity:
        if new is not target:
            _kernels.assign(target, new)
        if tracing:
            if target is not x and not x._is_state_while_tracing:  # a view made outside shares the storage
                x._rebind(_views.derive(new, chain))
            _views.refresh_views(target, new, skip_storage_sharing=False)
        elif target is not x and not x._shares_storage(target):
            x._rebind(_views.derive(target, chain))
    else:
        if new is not target:
            target._rebind(new)
        if target is not x:
            x._rebind(_views.derive(target, chain))
        _views.refresh_views(target, target, skip_storage_sharing=False)


def _symbolic_mask(key, ndim):
    """(first axis, mask) when `key` is one boolean tensor computed inside the function being compiled, alone or
    after full slices / an Ellipsis (x[m], x[:, m], x[..., m]); else None."""
    items = key if isinstance(key, tuple) else (key,)
    masks = [k for k in items if _is_tensor(k) and k._symbolic and k.dtype == _engine.DType.Bool]
    if len(masks) != 1:
        return None
    mask = masks[0]
    i = next(j for j, k in enumerate(items) if k is mask)
    before, after = items[:i], items[i + 1:]
    full = lambda k: isinstance(k, slice) and k == slice(None)
    if not all(full(k) or k is Ellipsis for k in before) or not all(full(k) for k in after):
        return None
    if any(k is Ellipsis for k in before):
        return (ndim - mask.ndim - len(after), mask) if sum(k is Ellipsis for k in before) == 1 else None
    return (len(before), mask)


def _masked_fill(x, mask, axis, value):
    """select(mask, value, x) for a boolean mask over x's dims [axis, axis + mask.ndim) and a one-element value
    (NumPy's x[..., mask] = v when v broadcasts to every selected element); the value's gradient is the sum over the
    selected elements."""
    dims = tuple(x.shape[axis:axis + mask.ndim]) if axis >= 0 else ()
    if axis < 0 or axis + mask.ndim > x.ndim or tuple(mask.shape) != dims:
        raise IndexError(f"The boolean index of shape {tuple(mask.shape)} does not match the indexed dimensions "
                         f"{dims} of the tensor of shape {tuple(x.shape)}.")
    v = value if _is_tensor(value) else _engine.Tensor._from_numpy(np.ascontiguousarray(np.asarray(value)))
    if v.size != 1:
        raise IndexError("Item assignment with a boolean mask computed inside a compiled (graph-mode) function "
                         f"needs a one-element value (its number of selected elements is not known while "
                         f"compiling), but got a value of shape {tuple(v.shape)}.")
    if v.dtype != x.dtype:
        v = _kernels.cast(v, x.dtype)
    v = _kernels.reshape(v, [])
    m = mask if mask.ndim == x.ndim else \
        _kernels.reshape(mask, [1] * axis + list(mask.shape) + [1] * (x.ndim - axis - mask.ndim))
    return _kernels.select(m, v, x)


def _setitem_in_place(x, key, value):
    """PyNative item assignment without a recorded gradient: basic indices write through a view, advanced ones
    write x's storage with the TensorScatterUpdate result."""
    try:
        items = key if isinstance(key, tuple) else (key,)
        basic = not any(_is_advanced(k) for k in items) and not _bools_are_advanced(items)
    except TypeError:
        basic = False
    if basic:
        view = x[key]  # (Tensor.__getitem__: C++ for the common keys)
        _kernels.assign(view, value)
        return
    pos = _region_positions(tuple(x.shape), key)
    v = _value_for(value, pos.shape, x.dtype)  # checked also when nothing is selected (NumPy's shape error)
    if pos.size:
        _kernels.assign(x, _updated(x, pos, v))


def assign(variable, value, what="Assign"):
    """variable ← value (broadcast, cast to variable's dtype); returns variable. The in-place write (the Assign op)
    in plain PyNative and for Parameters / tensors from outside a compiled function; a functional write (a new value
    that the Python object is rebound to, reaching the root when variable is a view) where the write must be seen by
    a gradient or a trace: variable or value recorded by a grad transform, or a tensor made inside the function being
    compiled. Used by Tensor.assign_value, ops.assign and ops.Assign. Raises ValueError (shapes), RuntimeError (a
    Parameter being differentiated). Tensor's in-place methods (_tensor_methods.py) reach the Assign kernel without
    this function when it would only call the kernel (C++ write_same, python/src/bind_views.cpp): a change to the
    `functional` rule below must be made there too."""
    if not _is_tensor(variable):
        return _kernels.assign(variable, value)  # its TypeError names the op and the argument
    value_t = _is_tensor(value)
    functional = (variable._symbolic or (value_t and value._symbolic) or _engine.tracing() or
                  (_engine.grad_level() > 0 and (variable._tracked or (value_t and value._tracked) or
                                               _is_recorded_view(variable))))
    if not functional:
        return _kernels.assign(variable, value)
    v = value if value_t else _engine.Tensor._from_numpy(np.asarray(value, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    if v.dtype != variable.dtype:
        v = _kernels.cast(v, variable.dtype)
    try:
        ok = np.broadcast_shapes(tuple(v.shape), tuple(variable.shape)) == tuple(variable.shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"For '{what}', the shape of 'value' {list(v.shape)} can not be broadcast to the shape of "
                         f"'variable' {list(variable.shape)}.")
    out = _kernels.broadcast_to(v, list(variable.shape)) if tuple(v.shape) != tuple(variable.shape) else \
        _kernels.tensor_copy(v)
    commit_write(variable, out, f"For '{what}'")
    return variable
