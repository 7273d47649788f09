"""Gradients given in Python instead of derived by autodiff: a Cell's custom `bprop`, `ops.HookBackward`,
`Tensor.register_hook` and the Cell backward (pre-)hooks.

All of them are one mechanism: `_engine.record_custom(inputs, values, bprop)` returns aliases of `values` whose tape
history is ONE node over `inputs`; the reverse pass calls `bprop(inputs, outputs, gouts)` there instead of
differentiating what produced `values` (kiln/autodiff.h, record_custom). The Python bprop is written with Kiln ops,
so it is itself recorded when an outer transform differentiates the reverse pass (grad of grad), and, in Graph mode,
traced into the compiled graph (the grad transform runs while the function is traced: the bprop's ops become graph
nodes; a Python side effect in it, such as a print, runs once per compilation, not once per run).

Outside a grad transform (or when no input has history) nothing is recorded: the values come back as they are,
at the cost of one alias each.
"""
import itertools
import threading

import numpy as np

from .. import _engine
from ..ops import _kernels
from ..common.tensor import Tensor
from ..common.parameter import Parameter

_hook_ids = itertools.count(1)


def _zeros_for(gouts, outs):
    return [g if g is not None else _kernels.zeros_like(o) for g, o in zip(gouts, outs)]


def _walk_leaves(v, leaves):
    if isinstance(v, Tensor):
        leaves.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _walk_leaves(x, leaves)


def _build(v, it):
    if isinstance(v, Tensor):
        return next(it)
    if isinstance(v, tuple):
        items = [_build(x, it) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    if isinstance(v, list):
        return [_build(x, it) for x in v]
    return v


def _flatten(value):
    """The Tensors of a (nested) tuple/list structure, in order, and a function rebuilding the structure from a
    list of replacements. (Module-level helpers, not self-referencing closures: a recursive closure is a reference
    cycle, which kept the Tensors — and their autodiff history — alive until the next garbage collection.)"""
    leaves = []
    _walk_leaves(value, leaves)
    return leaves, lambda new: _build(value, iter(new))


def _fits(g_shape, shape):
    """Whether a gradient of shape g_shape can stand for a tensor of `shape` (equal, or summed over broadcast dims)."""
    try:
        return np.broadcast_shapes(tuple(shape), tuple(g_shape)) == tuple(g_shape)
    except ValueError:
        return False


def _check_shapes(grads, shapes, what, noun="input"):
    """ValueError naming `what` (e.g. "the bprop of Cell 'C'") when a gradient's shape does not fit its tensor's.
    `shapes`: {index: shape} of the tensors the gradients are for."""
    for i, shape in shapes.items():
        g = grads[i]
        if isinstance(g, Tensor) and not _fits(g.shape, shape):
            raise ValueError(f"{what} returned a gradient of shape {list(g.shape)} for {noun} {i} of shape "
                             f"{list(shape)}: each gradient must have the shape of its {noun} (or a shape it "
                             "broadcasts to, summed back).")


def _as_grad_tuple(res, n, who, checked=None):
    """A hook's/bprop's result as a list of n cotangents (Tensor or None). A single Tensor counts as a 1-tuple.
    `checked`: the indices that must be Tensors or None (default all; a bprop's entries for non-Tensor arguments
    are ignored)."""
    if isinstance(res, Tensor):
        res = (res,)
    if not isinstance(res, (tuple, list)):
        raise TypeError(f"For '{who}', the result must be a Tensor or a tuple of Tensors, but got "
                        f"{type(res).__name__}.")
    if len(res) != n:
        raise ValueError(f"For '{who}', the result must have {n} gradient(s) (one per input), but got {len(res)}.")
    for i, r in enumerate(res):
        if (checked is None or i in checked) and r is not None and not isinstance(r, Tensor):
            raise TypeError(f"For '{who}', each returned gradient must be a Tensor, but got {type(r).__name__}.")
    return list(res)


# ---------------------------------------------------------------------------------------------- Cell.bprop
def call_with_bprop(cell, args, kwargs, run):
    """Runs `run(args, kwargs)` (the cell's construct) so that the reverse pass uses `cell.bprop(*args, out, dout)`
    for the Tensor arguments instead of differentiating construct (MindSpore's custom bprop, both modes).

    bprop gets the original arguments (non-Tensors as they are), the output and its cotangent (same structure as the
    output; zeros where nothing flows back) and returns one gradient per positional argument (a tuple; a Tensor is
    accepted for a single argument). Gradients of the cell's own Parameters are zero (as MindSpore)."""
    if _engine.grad_level() == 0:
        return run(args, kwargs)
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    detached = list(args)
    for i in tensor_pos:
        detached[i] = _kernels.detach(args[i])
    out = run(tuple(detached), kwargs)
    leaves, rebuild = _flatten(out)
    if not leaves or not tensor_pos:
        return out
    n_args = len(args)
    tensor_set = set(tensor_pos)
    template = list(args)
    who = f"{type(cell).__name__}.bprop"

    def bprop(ins, outs, gouts):
        call = list(template)
        for i, t in zip(tensor_pos, ins):
            call[i] = t
        res = cell.bprop(*call, rebuild(outs), rebuild(_zeros_for(gouts, outs)))
        grads = _as_grad_tuple(res, n_args, who, tensor_set)
        _check_shapes(grads, {i: tuple(t.shape) for i, t in zip(tensor_pos, ins)},
                      f"The bprop of Cell '{type(cell).__name__}'")
        return [grads[i] for i in tensor_pos]

    new = _engine.record_custom([args[i] for i in tensor_pos], leaves, bprop)
    return rebuild(new)


def has_custom_bprop(cls):
    """Whether a Cell class defines its own `bprop` method."""
    return callable(getattr(cls, "bprop", None))


# ---------------------------------------------------------------------------------------- Cell backward hooks
class HookHandle:
    """Returned by every Cell/Tensor hook registration: `remove()` unregisters that hook (idempotent). Each
    registration gets its own handle, also for the same function registered twice."""

    def __init__(self, hooks, key, on_change=None):
        self._hooks, self._key, self._on_change = hooks, key, on_change

    def remove(self):
        """Unregisters the hook; later calls do nothing."""
        if self._hooks is not None:
            self._hooks.pop(self._key, None)
            if self._on_change is not None:
                self._on_change()
        self._hooks = None


def register(hooks, fn, api, on_change=None):
    """Adds fn to the ordered dict `hooks` under a fresh key; returns its HookHandle."""
    if not callable(fn):
        raise TypeError(f"For '{api}', the 'hook_fn' must be a function, but got {type(fn).__name__}.")
    key = next(_hook_ids)
    hooks[key] = fn
    if on_change is not None:
        on_change()
    return HookHandle(hooks, key, on_change)


def backward_hook_inputs(cell, args):
    """The backward hooks' input boundary (MindSpore's order: after the forward pre-hooks, before construct).
    Returns (args, state): args with their Tensors passed through a node whose reverse pass calls each
    `hook(cell, grad_input, grad_output)` (grad_input: the cotangents of these Tensor arguments, a tuple;
    grad_output: what the output boundary saw); a non-None result (a tuple, or a Tensor for one input) replaces
    grad_input. Nothing is recorded outside a grad transform."""
    state = {"grad_output": (), "from_output": 0}
    hooks = cell._backward_hooks
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if _engine.grad_level() == 0 or not hooks:
        return args, state
    tracked = [args[i]._tracked for i in tensor_pos]
    if not any(tracked):
        # No gradient can reach the inputs (e.g. only weights are differentiated): as MindSpore, the hooks then
        # fire from the output boundary with grad_input None per Tensor input (their results are not used).
        state["from_output"] = len(tensor_pos)
        return args, state
    name = type(cell).__name__

    def in_bprop(ins, outs, gouts):
        grad_input = tuple(None if not tr else (g if g is not None else _kernels.zeros_like(o))
                           for tr, g, o in zip(tracked, gouts, outs))
        for h in list(hooks.values()):
            res = h(cell, grad_input, state["grad_output"])
            if res is not None:
                grad_input = tuple(_as_grad_tuple(res, len(grad_input), f"{name} backward hook"))
                _check_shapes(grad_input, {k: tuple(o.shape) for k, o in enumerate(outs)},
                              f"The backward hook {_hook_name(h)} of Cell '{name}'")
        return list(grad_input)
    a = list(args)
    new = _engine.record_custom([args[i] for i in tensor_pos], [args[i] for i in tensor_pos], in_bprop)
    for i, t in zip(tensor_pos, new):
        a[i] = t
    return tuple(a), state


def backward_hook_outputs(cell, out, state):
    """The backward hooks' output boundary (after the forward hooks): its reverse pass saves the cotangents of the
    call's Tensor outputs (a tuple) as the grad_output the input boundary's hooks get."""
    if _engine.grad_level() == 0 or not cell._backward_hooks:
        return out
    leaves, rebuild = _flatten(out)
    if not leaves:
        return out

    def out_bprop(ins, outs, gouts):
        g = _zeros_for(gouts, outs)
        state["grad_output"] = tuple(g)
        if state["from_output"]:
            for h in list(cell._backward_hooks.values()):
                h(cell, (None,) * state["from_output"], state["grad_output"])
        return g
    return rebuild(_engine.record_custom(leaves, leaves, out_bprop))


def backward_pre_hook_outputs(cell, out):
    """The backward pre-hooks' boundary, outermost: its reverse pass calls each `hook(cell, grad_output)` with the
    cotangents of the call's Tensor outputs (a tuple); a non-None result (a tuple, or a Tensor for one output)
    replaces them."""
    pre_hooks = cell._backward_pre_hooks
    if _engine.grad_level() == 0 or not pre_hooks:
        return out
    leaves, rebuild = _flatten(out)
    if not leaves:
        return out
    name = type(cell).__name__

    def pre_bprop(ins, outs, gouts):
        grad_output = tuple(_zeros_for(gouts, outs))
        for h in list(pre_hooks.values()):
            res = h(cell, grad_output)
            if res is not None:
                grad_output = tuple(_as_grad_tuple(res, len(grad_output), f"{name} backward pre-hook"))
                _check_shapes(grad_output, {k: tuple(o.shape) for k, o in enumerate(outs)},
                              f"The backward pre-hook {_hook_name(h)} of Cell '{name}'", "output")
        return list(grad_output)
    return rebuild(_engine.record_custom(leaves, leaves, pre_bprop))


# ------------------------------------------------------------------------------------------- HookBackward
class HookBackward:
    """ops.HookBackward(hook_fn, cell_id=""): an identity op whose reverse pass calls `hook_fn(grad)`.

    `hook(*inputs)` returns its inputs unchanged (the Tensor for one input, a tuple for several). When gradients flow
    back through it, `hook_fn` gets the cotangents of its outputs as a tuple (one Tensor per input); it may return
    None (keep them) or new cotangents: a tuple with one Tensor per input, or a Tensor for a single input.
    Works in PyNative; in Graph mode the hook runs while the grad function is compiled (its ops are compiled into
    the graph; a print in it prints once per compilation).

    Raises:
        TypeError: hook_fn not callable; cell_id not a str; an input that is not a Tensor; a hook result of another
            type than None/Tensor/tuple of Tensors.
        ValueError: no inputs; a hook result with the wrong number of gradients.
    """

    def __init__(self, hook_fn, cell_id=""):
        if not callable(hook_fn):
            raise TypeError(f"For 'HookBackward', the 'hook_fn' must be a function, but got "
                            f"{type(hook_fn).__name__}.")
        if not isinstance(cell_id, str):
            raise TypeError(f"For 'HookBackward', the 'cell_id' must be a str, but got {type(cell_id).__name__}.")
        self.hook_fn, self.cell_id = hook_fn, cell_id
        self.name = "HookBackward"

    def __repr__(self):
        return "Prim[HookBackward]"

    def __call__(self, *inputs):
        if not inputs:
            raise ValueError("For 'HookBackward', at least one input Tensor is required, but got none.")
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"For 'HookBackward', every input must be a Tensor, but input {i} is "
                                f"{type(x).__name__}.")
        hook_fn, n = self.hook_fn, len(inputs)

        def bprop(ins, outs, gouts):
            g = tuple(_zeros_for(gouts, outs))
            res = hook_fn(g)
            if res is None:
                return list(g)
            grads = _as_grad_tuple(res, n, "HookBackward")
            _check_shapes(grads, {k: tuple(o.shape) for k, o in enumerate(outs)},
                          f"The hook_fn {_hook_name(hook_fn)} of HookBackward")
            return grads
        out = _engine.record_custom(list(inputs), list(inputs), bprop)
        return out[0] if n == 1 else tuple(out)


class InsertGradientOf:
    """ops.InsertGradientOf(f): an identity op whose reverse pass replaces the gradient g flowing back through it by
    f(g) (e.g. gradient clipping at a point of the network). `f` gets and returns a Tensor (f's result is cast and
    summed to the input's dtype and shape). Raises TypeError for a non-callable f, a non-Tensor input, or an f that
    does not return a Tensor."""

    def __init__(self, f):
        if not callable(f):
            raise TypeError(f"For 'InsertGradientOf', the 'f' must be a function, but got {type(f).__name__}.")
        self.f = f
        self.name = "InsertGradientOf"

    def __repr__(self):
        return "Prim[InsertGradientOf]"

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'InsertGradientOf', the input must be a Tensor, but got {type(x).__name__}.")
        f = self.f

        def bprop(ins, outs, gouts):
            g = gouts[0] if gouts[0] is not None else _kernels.zeros_like(outs[0])
            r = f(g)
            if not isinstance(r, Tensor):
                raise TypeError(f"For 'InsertGradientOf', the function must return a Tensor, but got "
                                f"{type(r).__name__}.")
            _check_shapes([r], {0: tuple(outs[0].shape)}, f"The function {_hook_name(f)} of InsertGradientOf")
            return [r]
        return _engine.record_custom([x], [x], bprop)[0]


# ----------------------------------------------------------------------------------------- Tensor hooks
_leaf_lock = threading.Lock()


def _hook_name(h):
    return repr(getattr(h, "__qualname__", None) or getattr(h, "__name__", None) or type(h).__name__)


def _apply_tensor_hooks(hooks, g, shape):
    """g after the hooks (each may replace it); `shape`: the hooked tensor's shape (a result must fit it)."""
    for h in list(hooks.values()):
        res = h(g)
        if res is not None:
            if not isinstance(res, Tensor):
                raise TypeError(f"For 'Tensor.register_hook', the hook must return None or a Tensor, but got "
                                f"{type(res).__name__}.")
            if not _fits(res.shape, shape):
                raise ValueError(f"The hook {_hook_name(h)} registered with Tensor.register_hook returned a gradient "
                                 f"of shape {list(res.shape)} for a tensor of shape {list(shape)}: the gradient must "
                                 "have the tensor's shape.")
            g = res
    return g


def register_hook(self, hook):
    """Tensor.register_hook(hook): `hook(grad)` runs when the gradient with respect to this Tensor is computed; a
    Tensor result replaces that gradient, None keeps it. Returns a handle whose remove() unregisters the hook.

    On a Tensor that a grad transform differentiates (an input given to `grad`/`value_and_grad`/`GradOperation` or
    a Parameter among their weights) the hook sees the whole gradient of that input. Inside the differentiated
    function, on an intermediate result, it sees the gradient flowing back through the uses that come after the
    registration. Raises TypeError when hook is not callable."""
    if not callable(hook):
        raise TypeError(f"For 'Tensor.register_hook', the 'hook' must be a function, but got {type(hook).__name__}.")
    origin = getattr(self, "__dict__", {}).get("_hook_origin")
    if origin is not None:  # an input of a grad transform, inside fn: the hook goes on the caller's Tensor
        return register_hook(origin, hook)
    if _engine.grad_level() > 0 and self._tracked and not isinstance(self, Parameter):
        # Inside a transform, on a Tensor with history (or a watched input): later uses of this object go through a
        # node that runs the hook on the gradient flowing back (unless the handle was removed by then).
        node_hooks = {}
        handle = register(node_hooks, hook, "Tensor.register_hook")

        def bprop(ins, outs, gouts):
            g = gouts[0] if gouts[0] is not None else _kernels.zeros_like(outs[0])
            return [_apply_tensor_hooks(node_hooks, g, tuple(outs[0].shape))]
        self._rebind(_engine.record_custom([self], [self], bprop)[0])
        return handle
    with _leaf_lock:
        hooks = self.__dict__.get("_grad_hooks")
        if hooks is None:
            hooks = {}
            self._grad_hooks = hooks
    return register(hooks, hook, "Tensor.register_hook")


def leaf_hooks(t):
    """The hooks registered on a Tensor object with register_hook (a dict, maybe empty)."""
    d = getattr(t, "__dict__", None)
    return d.get("_grad_hooks") or {} if d else {}


def apply_leaf_hooks(t, g):
    """g after the hooks registered on the leaf t (the gradient the transform returns for t)."""
    hooks = leaf_hooks(t)
    return _apply_tensor_hooks(hooks, g, tuple(t.shape)) if hooks else g


Tensor.register_hook = register_hook
