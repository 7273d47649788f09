"""NumPy-style indexing of Tensors: basic indexing (ints, slices, None, Ellipsis) gives views through
StridedSlice; integer-array and boolean indexing gather through Gather on a flattened block of axes.

Index arithmetic of advanced indices (bounds checks, linearization) is done in NumPy: indices are data, not
differentiable, and the gathered values keep their gradient through Gather."""
import numbers

import numpy as np

from .._loader import _core


def _is_tensor(x):
    return isinstance(x, _core.Tensor)


def _is_advanced(k):
    return _is_tensor(k) or isinstance(k, (list, np.ndarray)) or (isinstance(k, tuple))


_SEPARATOR = object()  # an empty Ellipsis: consumes no dim, but separates array indices


def _normalize_key(key, ndim):
    """Key as a list with Ellipsis expanded; returns (items, n_consumed)."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if _is_tensor(k) and k._symbolic:
            raise IndexError("Indexing with a tensor computed inside a compiled (graph-mode) function is not "
                             "supported yet: its values are not known while compiling. Use ops.gather(x, index, "
                             "axis) instead, or pass the index as a Python int.")
        if _is_tensor(k):
            k = k.asnumpy() if k.ndim > 0 or k.dtype == _core.DType.Bool else int(k._item())
        elif isinstance(k, list):
            k = np.asarray(k)
        elif isinstance(k, np.generic):
            k = k.item()
        if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
            raise IndexError(f"Tensor index arrays must be integer or bool, but got dtype {k.dtype}.")
        items.append(k)
    consumed = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else
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


def getitem(x, key):
    """x[key] with NumPy semantics. Raises IndexError for out-of-range indices, naming the index and dim size."""
    items = _normalize_key(key, x.ndim)
    # None (and a bare True/False) adds a size-1 axis; NumPy's result is that of indexing the tensor with the axis
    # already inserted and `:` (True) or `0:0` (False) on it, which also places the axis right among array indices.
    dim = 0
    plain = []
    separated = False  # a slice/None/Ellipsis between two array indices: NumPy moves the index block to the front
    seen_array = pending_sep = False
    has_array = any(isinstance(k, np.ndarray) for k in items)
    for k in items:
        if isinstance(k, np.ndarray) or (has_array and isinstance(k, numbers.Integral) and not isinstance(k, bool)):
            if seen_array and pending_sep:
                separated = True
            seen_array, pending_sep = True, False
        elif seen_array and (k is None or k is _SEPARATOR or isinstance(k, (slice, bool))):
            pending_sep = True
        if k is _SEPARATOR:
            continue
        if k is None or isinstance(k, bool):
            x = _core.expand_dims(x, dim)
            plain.append(slice(0, 0) if k is False else slice(None))
            dim += 1
        else:
            plain.append(k)
            dim += k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
    items = plain
    shape = x.shape
    if any(isinstance(k, np.ndarray) for k in items):
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
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
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
                    raise IndexError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension {dim} with size {n}")
                adv.append((dim, np.where(idx < 0, idx + n, idx)))
                begin.append(0); end.append(n); step.append(1)
                dim += 1
            continue
        raise IndexError(f"Tensor indices must be integers, slices, None, Ellipsis, bool or integer tensors/lists, "
                         f"but got {type(k).__name__}.")
    y = x
    if any(b != 0 or e != n or s != 1 for b, e, s, n in zip(begin, end, step, shape)):
        y = _core.strided_slice(x, begin, end, step)
    if adv:
        y = _gather_advanced(y, adv, separated)
    if squeeze_axes:
        y = _core.squeeze(y, squeeze_axes)
    return y


def _gather_advanced(y, adv, separated=False):
    """Applies integer-array indices `adv` [(axis, int array)] to y (NumPy placement rules: the broadcast index
    block replaces adjacent indexed axes in place, and goes to the front when they were separated)."""
    axes = [a for a, _ in adv]
    arrays = np.broadcast_arrays(*[i for _, i in adv])
    bshape = arrays[0].shape
    dims = [y.shape[a] for a in axes]
    lin = np.zeros(bshape, dtype=np.int64)
    for arr, d in zip(arrays, dims):
        lin = lin * d + arr
    rest = [i for i in range(y.ndim) if i not in axes]
    adjacent = not separated and axes == list(range(axes[0], axes[0] + len(axes)))
    perm = axes + rest
    t = _core.transpose(y, perm) if perm != list(range(y.ndim)) else y
    t = _core.reshape(t, [int(np.prod(dims))] + [y.shape[i] for i in rest])
    idx = _core.Tensor._from_numpy(np.asarray(lin, order="C"))
    out = _core.gather(t, idx, 0)  # shape: bshape + rest
    if adjacent and axes[0] != 0:
        nb = len(bshape)
        first = axes[0]
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, out.ndim))
        out = _core.transpose(out, order)
    return out


def setitem(x, key, value):
    """x[key] = value, in place (PyNative). Basic indices write through a view; advanced ones through NumPy."""
    try:
        basic = not any(_is_advanced(k) for k in (key if isinstance(key, tuple) else (key,)))
    except TypeError:
        basic = False
    if basic:
        view = getitem(x, key)
        _core.assign(view, value)
        return
    arr = x.asnumpy()  # shares storage
    if _is_tensor(key):
        key = key.asnumpy()
    elif isinstance(key, tuple):
        key = tuple(k.asnumpy() if _is_tensor(k) else k for k in key)
    # Python numbers go to NumPy as they are: an int that does not fit x's dtype raises OverflowError (NumPy 2).
    v = value.asnumpy() if _is_tensor(value) else value if isinstance(value, (bool, int, float)) else np.asarray(value)
    try:
        arr[key] = v
    except IndexError as e:
        raise IndexError(str(e)) from None
    except ValueError as e:
        raise ValueError(f"Tensor setitem: {e}") from None
