"""Views and functional writes (Tensor.__setitem__, Tensor.assign_value) under a gradient and in compiled code.

In plain PyNative a view (basic indexing, reshape/view, transpose/T, squeeze, expand_dims, ...) shares its base's
storage, so an in-place write through either is seen by both (NumPy, MindSpore's PyNative). Under a gradient transform
and inside compiled code the write is functional instead (TensorScatterUpdate and a rebinding of the Python object),
so sharing storage no longer carries it. This module keeps the view relation on the Python side there:

- a view (made by Tensor.__getitem__ with basic indices, reshape/view/flatten/ravel, transpose/permute/T/mT,
  squeeze, expand_dims/unsqueeze, diagonal, and the ops.* functions of the same names) remembers its ROOT (the tensor object
  it was derived from, through any chain of views) and the chain of view steps (each a tuple (kind, args...) of
  STEPS below: a NumPy function of an index array, to find the positions, and the Kiln op, to re-derive the view);
- the root remembers (weakly) the views derived from it;
- a functional write into a view becomes a write into the root: root ← root with the view's positions set to the
  updated view; the root object is rebound to that (or assigned, for a Parameter), and every live view of the root,
  the written one included, is rebound to its re-derivation from the new root. Views taken earlier therefore see a
  later write, as in PyNative, and gradients flow as through the in-place write.

Nothing here is kept longer than the tensors it describes: the root holds weak references to its views, and a view's
strong reference to its root is what a storage view holds anyway.

The common views are recorded in C++ (python/src/bind_views.cpp, the fast paths of Tensor.__getitem__, reshape,
transpose, ...): the same records, made by the same rules as note_view below, with steps of the same kinds."""
import weakref

import numpy as np

from .. import _engine
from ..ops import _kernels


def _getitem_step(t, key):
    from ._indexing import _getitem  # (_indexing imports this module)
    return _getitem(t, key)


# kind -> (NumPy function of (index array, args...), Kiln function of (tensor, args...)). A step is (kind, args...).
STEPS = {
    "getitem": (lambda a, key: a[key], _getitem_step),
    "reshape": (lambda a, out: a.reshape(out), lambda t, out: _kernels.reshape(t, list(out))),
    "transpose": (lambda a, perm: a.transpose(perm), lambda t, perm: _kernels.transpose(t, list(perm))),
    "squeeze": (lambda a, axes, out: a.reshape(out), lambda t, axes, out: _kernels.squeeze(t, axes)),
    "expand_dims": (lambda a, axis, out: a.reshape(out), lambda t, axis, out: _kernels.expand_dims(t, axis)),
    "diagonal": (lambda a, offset, d1, d2: np.diagonal(a, offset, d1, d2),
                 lambda t, offset, d1, d2: _kernels.diagonal(t, offset, d1, d2)),
}


def tracking():
    """True where writes are functional (a grad transform is active, or a function is being compiled)."""
    return _engine.grad_level() > 0 or _engine.tracing()


def note_view(x, y, step):
    """Records that `y` was derived from `x` by the view op `step` ((kind, args...), a kind of STEPS: its NumPy
    function maps an index array of x's shape to y's layout, its Kiln function re-derives y from a tensor like x).
    Returns y. Does nothing when y is a copy rather than a view. Views are recorded in plain PyNative too: a view
    taken there and written under a gradient later must reach its base."""
    if y is x or not isinstance(y, _engine.Tensor):
        return y
    if not (x._symbolic or y._symbolic) and not y._shares_storage(x):
        return y  # the op copied (not a view): a write to y is not a write to x, as in PyNative
    info = view_info(x)
    root, chain = info if info is not None else (x, ())
    if _engine.tracing() and root._is_state_while_tracing:
        # A view of a Parameter / outside tensor inside a compiled function: the write through it is an Assign of the
        # root; the relation lives on the (traced) view only, nothing of the trace is stored on the outside tensor.
        y._kiln_view = (root, tuple(root.shape), chain + (step,))
        return y
    y._kiln_view = (root, tuple(root.shape), chain + (step,))
    views = root.__dict__.get("_kiln_views")
    if views is None:
        views = root._kiln_views = []
    views.append(weakref.ref(y))
    if len(views) > 32 and len(views) > 2 * root.__dict__.get("_kiln_views_live", 0):
        views[:] = [r for r in views if r() is not None]
        root._kiln_views_live = len(views)
    return y


def view_info(x):
    """(root, chain) when x is a recorded view (a tensor's shape and dtype never change in place: set_data keeps
    them, so the chain stays valid); else None."""
    d = getattr(x, "__dict__", None)
    info = d.get("_kiln_view") if d else None
    return None if info is None else (info[0], info[2])


def positions(shape, chain):
    """Flat positions in a C-ordered tensor of `shape` of the elements of the view `chain` derives, in its layout."""
    a = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    for step in chain:
        a = STEPS[step[0]][0](a, *step[1:])
    return np.asarray(a)


def derive(t, chain):
    """The view `chain` applied to t (the Kiln ops)."""
    for step in chain:
        t = STEPS[step[0]][1](t, *step[1:])
    return t


def refresh_views(root, value, skip_storage_sharing):
    """Rebinds every live view of `root` to its re-derivation from `value` (root's new value). With
    `skip_storage_sharing` (a write into the root's storage in PyNative) views that share that storage already see
    it and are left alone. While compiling, views made outside the function are left alone too (nothing of the trace
    may be bound to them; they share the storage that the root's Assign writes at run time)."""
    tracing = _engine.tracing()
    for r in list(root.__dict__.get("_kiln_views", ())):
        w = r()
        if w is None:
            continue
        info = w.__dict__.get("_kiln_view")
        if info is None or info[0] is not root:
            continue
        if skip_storage_sharing and not w._symbolic and w._shares_storage(root):
            continue
        if tracing and w._is_state_while_tracing:
            continue  # a view made outside the compiled function: it shares the storage the Assign writes

        w._rebind(derive(value, info[2]))


def write_through(x, out):
    """x (a tensor, possibly a view) becomes `out` (same shape and dtype), functionally. Returns (target, new value,
    chain) where target is x, or x's root when x is a view, the new value is what target must become and chain the
    view steps from target to x."""
    info = view_info(x)
    if info is None:
        return x, out, ()
    root, chain = info
    pos = positions(tuple(root.shape), chain)
    if pos.size == 0:
        return root, root, chain
    flat = _kernels.reshape(root, [-1])
    idx = _engine.Tensor._from_numpy(np.ascontiguousarray(pos.reshape(-1, 1)))
    new = _kernels.tensor_scatter_update(flat, idx, _kernels.reshape(out, [-1]))
    return root, _kernels.reshape(new, list(root.shape)), chain
