"""mindspore.vmap / ops.vmap: the vectorizing map.

Kiln maps by running `fn` once per batch element on slices (taken with `unstack` along each mapped axis) and
stacking the results along `out_axes` — the general rule, correct for every op, differentiable (slicing and stacking
have bprops: grad of vmap and vmap of grad work) and traceable (inside kiln.jit / Graph mode the loop unrolls into
the graph). There are no per-op batching rules yet: the cost is one call of fn per batch element (see
docs/decisions/vjp-jvp-vmap.md).
"""
import threading

from .. import _engine
from ..common.tensor import Tensor
from ..common.api import _detach_tree


class VmapError(ValueError, RuntimeError):
    """A bad in_axes/out_axes or mismatched axis sizes. MindSpore raises RuntimeError; Kiln's error is both a
    ValueError and a RuntimeError so that either `except` catches it."""


def _check_axes_spec(spec, name):
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(s, name)
        return
    raise VmapError(f"For 'vmap', the base elements of '{name}' must be None or int, but got "
                    f"{type(spec).__name__}.")


def _has_none(spec):
    if spec is None:
        return True
    if isinstance(spec, (tuple, list)):
        return any(_has_none(s) for s in spec)
    return False


def _all_none(spec):
    if spec is None:
        return True
    if isinstance(spec, (tuple, list)):
        return all(_all_none(s) for s in spec)
    return False


def _norm_axis(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise VmapError(f"For 'vmap', the axis {axis} of {what} is out of bounds: expected in [{-ndim}, {ndim}).")
    return axis + ndim if axis < 0 else axis


def _split(value, axis, what, sizes, watch):
    """value sliced along its mapped axes: a callable i -> the i-th slice (None axis: value itself). `watch` maps a
    mapped Tensor to the Tensor that is sliced (a watched leaf when the dependence of outputs is tracked)."""
    if axis is None:
        return lambda i: value
    if isinstance(value, Tensor):
        ax = _norm_axis(axis, len(value.shape), what) if len(value.shape) else None
        if ax is None:
            raise VmapError(f"For 'vmap', {what} is a scalar Tensor and can not be mapped along axis {axis}.")
        sizes.append(int(value.shape[ax]))
        from ..ops import unstack
        parts = unstack(watch(value), ax)
        return lambda i: parts[i]
    if isinstance(value, (tuple, list)):
        if isinstance(axis, int):
            subs = [_split(v, axis, f"{what}[{k}]", sizes, watch) for k, v in enumerate(value)]
        else:
            if len(axis) != len(value):
                raise VmapError(f"For 'vmap', the in_axes for {what} must have {len(value)} element(s), but got "
                                f"{len(axis)}.")
            subs = [_split(v, a, f"{what}[{k}]", sizes, watch) for k, (v, a) in enumerate(zip(value, axis))]
        return lambda i: type(value)(s(i) for s in subs)
    if isinstance(axis, int):
        raise VmapError(f"For 'vmap', {what} is a {type(value).__name__}, which can not be mapped along axis {axis}; "
                        f"give it in_axes None.")
    return lambda i: value


def _same_for_all(results):
    """Whether an output given out_axes None is the same for every batch element. Concrete values are compared
    (NaN equal to NaN); while tracing, the tape tells whether it depends on a mapped input (watched by `batched`
    when no outer transform runs; inside one the check is skipped)."""
    first = results[0]
    if first._symbolic:
        return not (_engine.grad_level() == 1 and first._tracked) if getattr(_check_tape, "on", False) else True
    import numpy as np
    a = first.asnumpy()
    for r in results[1:]:
        if not isinstance(r, Tensor) or r.shape != first.shape:
            return False
        if not np.array_equal(a, r.asnumpy(), equal_nan=a.dtype.kind in "fc"):
            return False
    return True


_check_tape = threading.local()  # .on: `batched` watches the mapped inputs for _same_for_all (this thread)


def _merge(results, axis, what):
    """The per-element results stacked along out axis `axis` (None: the first element's, unmapped)."""
    first = results[0]
    if isinstance(first, (tuple, list)):
        axes = axis if isinstance(axis, (tuple, list)) else [axis] * len(first)
        if len(axes) != len(first):
            raise VmapError(f"For 'vmap', the out_axes for {what} must have {len(first)} element(s), but got "
                            f"{len(axes)}.")
        return type(first)(_merge([r[k] for r in results], a, f"{what}[{k}]") for k, a in enumerate(axes))
    if isinstance(axis, (tuple, list)):
        raise VmapError(f"For 'vmap', {what} is a single value but its out_axes is a sequence {axis}.")
    if axis is None:
        if isinstance(first, Tensor) and not _same_for_all(results):
            raise VmapError(f"For 'vmap', {what} depends on a mapped input, so its out_axes can not be None (it "
                            f"is invalid that source is not None and dst is None).")
        return first
    from ..ops import stack
    items = [r if isinstance(r, Tensor) else Tensor(r) for r in results]
    ndim = len(items[0].shape) + 1
    return stack(items, _norm_axis(axis, ndim, what))


def vmap(fn, in_axes=0, out_axes=0):
    """Vectorizing map: `vmap(fn, in_axes, out_axes)(*args)` is fn applied to each slice of the args along their
    mapped axes, the results stacked along `out_axes`.

    Args:
        fn: a function or Cell; or a CellList (model ensembling: the i-th cell is applied to the i-th slice; its
            length must equal the mapped size).
        in_axes: an int (every argument mapped along it), or a tuple/list with one entry per positional argument;
            each entry None (not mapped), an int in [-ndim, ndim), or for a tuple/list argument a nested tuple.
        out_axes: an int, or a tuple/list with one entry per output (None: the output is not mapped — it must not
            depend on a mapped input — and its value is returned as it is).
    Returns:
        The batched function.
    Raises (ValueError that is also a RuntimeError, as MindSpore raises RuntimeError):
        a base element of in_axes/out_axes neither None nor int; all in_axes None; in_axes of another length than the
        arguments; mapped sizes that differ; an axis out of bounds; out_axes None for an output that depends on a
        mapped input. TypeError if fn is not callable.
    Every op is supported, through the general rule (one call of fn per batch element, then a stack).
    """
    from ..nn.layer.container import CellList
    ensemble = isinstance(fn, CellList)
    if not ensemble and not callable(fn):
        raise TypeError(f"For 'vmap', the 'fn' must be a function, a Cell or a CellList, but got "
                        f"{type(fn).__name__}.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if _all_none(in_axes):
        raise VmapError("For 'vmap', all of the base elements of 'in_axes' are None: at least one argument must be "
                        "mapped.")

    def batched(*args):
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise VmapError(f"For 'vmap', the length of 'in_axes' ({len(in_axes)}) must equal the number of "
                                f"positional arguments ({len(args)}).")
            axes = list(in_axes)
        else:
            axes = [in_axes] * len(args)
        if not (_has_none(out_axes) and _engine.tracing() and _engine.grad_level() == 0):
            return run(args, axes, lambda t: t)
        # Tracing (values unknown): an output with out_axes None must not depend on a mapped input, which the tape
        # tells when the mapped inputs are the only watched leaves.
        with _engine.GradScope() as scope:
            _check_tape.on = True
            try:
                res = run(args, axes, scope.watch_input)
            finally:
                _check_tape.on = False
        return _detach_tree(res, True)

    def run(args, axes, watch):
        sizes = []
        getters = [_split(a, ax, f"argument {k}", sizes, watch) for k, (a, ax) in enumerate(zip(args, axes))]
        if not sizes:
            raise VmapError("For 'vmap', no argument is mapped (every mapped axis is on a non-Tensor).")
        if len(set(sizes)) != 1:
            raise VmapError(f"For 'vmap', the 'axis_size' of each argument in the scope of 'vmap' should be equal, "
                            f"but got {' and '.join(str(s) for s in dict.fromkeys(sizes))}.")
        n = sizes[0]
        if ensemble and len(fn) != n:
            raise VmapError(f"For 'vmap', the CellList has {len(fn)} cells but the mapped size is {n}.")
        results = []
        for i in range(n):
            f = fn[i] if ensemble else fn
            results.append(f(*[g(i) for g in getters]))
        return _merge(results, out_axes, "the output")

    return batched
