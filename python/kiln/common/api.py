"""Functional autodiff: `value_and_grad` and `grad`, with MindSpore's argument semantics and return structures
(../shared/reference/mindspore_api.md §6).

PyNative: the forward runs eagerly under a kiln._core.GradScope that records a tape; the reverse pass runs the ops'
bprops (written with Kiln ops, so gradients of gradients work when transforms nest)."""
import functools

from .. import _engine
from ..ops import _kernels
from .parameter import Parameter, ParameterTuple
from .tensor import Tensor
from .._compiler.jit import JitFunction
from .._compiler.jit import jit  # noqa: F401 (mindspore.common.api.jit: MindSpore keeps jit here; the same function as kiln.jit)
from .jit_class import jit_class  # noqa: F401 (mindspore.common.api.jit_class, as MindSpore's module)
from .mutable import mutable  # noqa: F401 (mindspore.common.api.mutable, as MindSpore's module)
from .._compiler.call_depth import set_recursion_limit  # noqa: F401 (mindspore.common.api.set_recursion_limit)
from .._compiler import ast_rewrite as _ast_rewrite
from .._compiler import graph_builtins as _graph_builtins
from .._autodiff import custom_grad as _custom_grad  # also attaches Tensor.register_hook
from ..context import _graph as _graph_flag
from ..parallel import _op_shard, _semi_auto_dp


def _normalize_positions(grad_position, api="grad"):
    """grad_position (None, an int ≥ 0 or a tuple of distinct ints ≥ 0; bools count as ints) → None or a tuple."""
    if grad_position is None:
        return None
    if isinstance(grad_position, bool):
        grad_position = int(grad_position)
    if isinstance(grad_position, int):
        if grad_position < 0:
            raise ValueError(f"For '{api}', the 'grad_position' must be >= 0, but got {grad_position}.")
        return (grad_position,)
    if isinstance(grad_position, tuple):
        out = []
        for p in grad_position:
            if isinstance(p, bool):
                p = int(p)
            if not isinstance(p, int):
                raise TypeError(f"For '{api}', the 'grad_position' must be int or tuple of ints, but got an element "
                                f"of type {type(p).__name__}.")
            if p < 0:
                raise ValueError(f"For '{api}', the elements of 'grad_position' must be >= 0, but got "
                                 f"{grad_position}.")
            out.append(p)
        if len(set(out)) != len(out):
            raise ValueError(f"For '{api}', there are duplicate positions in `grad_position`: {grad_position}.")
        return tuple(out)
    raise TypeError(f"For '{api}', the 'grad_position' must be int or tuple of ints, but got "
                    f"{type(grad_position).__name__}.")


def _normalize_weights(weights, api="grad"):
    """weights (None, a Parameter, a list/tuple of Parameters or a ParameterTuple) → (list of Parameters or None,
    single?). TypeError for anything else (a plain Tensor is not a Parameter: it has no identity to update)."""
    if weights is None:
        return None, False
    if isinstance(weights, Parameter):
        return [weights], True
    if isinstance(weights, (list, tuple, ParameterTuple)):
        ws = list(weights)
        for w in ws:
            if not isinstance(w, Parameter):
                raise TypeError(f"For '{api}', the 'weights' must be a Parameter, a list/tuple of Parameters or a "
                                f"ParameterTuple, but got an element of type {type(w).__name__}.")
        return ws, False
    if hasattr(weights, "trainable_params"):
        raise TypeError(f"For '{api}', the 'weights' must be Parameters; pass net.trainable_params().")
    raise TypeError(f"For '{api}', the 'weights' must be a Parameter, a list/tuple of Parameters or a ParameterTuple, "
                    f"but got {type(weights).__name__}.")


def _detach_tree(x, outermost):
    if not outermost:
        return x
    if isinstance(x, Tensor):
        return _kernels.detach(x)
    if isinstance(x, tuple):
        return tuple(_detach_tree(v, True) for v in x)
    if isinstance(x, list):
        return [_detach_tree(v, True) for v in x]
    return x


def _stop_gradient_tree(x):
    """x with every Tensor inside tuples/lists/dicts passed through StopGradient (other leaves unchanged)."""
    from ..ops.function import stop_gradient
    return stop_gradient(x)


def _tensors_of(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        r = []
        for v in out:
            r.extend(_tensors_of(v))
        return r
    return []


def _check_positional_inputs(args, positions, api):
    """The positions of `positions` whose arguments are Tensors (as MindSpore, a Python number there gets no gradient
    and is left out of the result). They must exist (IndexError), and at least one must be a Tensor (TypeError:
    MindSpore returns an empty tuple there, which hides the mistake)."""
    for p in positions:
        if p >= len(args):
            raise IndexError(f"For '{api}', the 'grad_position' {p} is out of range: the function was called with "
                             f"{len(args)} positional argument(s) (Position index {p} is exceed input size "
                             f"{len(args)}).")
    kept = tuple(p for p in positions if isinstance(args[p], Tensor))
    if not kept:
        p = positions[0]
        raise TypeError(f"For '{api}', the argument at grad_position {p} must be a Tensor (only Tensors are "
                        f"differentiable inputs), but got {type(args[p]).__name__}. Pass it as a Tensor, or leave "
                        f"position {p} out of grad_position.")
    return kept


def _cotangents(sens, targets, api):
    """The cotangents for `targets` (the differentiated outputs, flattened) from a sens argument of the same
    structure (a Tensor for one output; a tuple/list for several). ValueError on a count or shape mismatch."""
    cots = _tensors_of(sens)
    if len(cots) != len(targets):
        raise ValueError(f"For '{api}', the sens (last input, sens_param=True) must match the network's outputs: "
                         f"{len(targets)} Tensor output(s), but got {len(cots)} sens Tensor(s) in "
                         f"{type(sens).__name__}.")
    for c, t in zip(cots, targets):
        if tuple(c.shape) != tuple(t.shape):
            raise ValueError(f"For '{api}', each sens Tensor must have its output's shape: output {tuple(t.shape)}, "
                             f"sens {tuple(c.shape)}.")
    return cots


def _inputs_have_hooks(args, positions):
    """Whether a differentiated positional input carries Tensor.register_hook hooks (its gradient is then computed
    eagerly: a compiled graph sees its inputs, not the caller's Tensor objects that hold the hooks)."""
    for p in positions or ():
        a = args[p] if p < len(args) else None
        if a is not None and _custom_grad.leaf_hooks(a):
            return True
    return False


def _transform(fn, grad_position, weights, has_aux, return_ids, with_value, sens_param=False, api=None):
    api = api or ("value_and_grad" if with_value else "grad")
    if not callable(fn):
        raise TypeError(f"For '{api}', the 'fn' must be a function or a Cell, but got {type(fn).__name__}.")
    for flag, v in (("has_aux", has_aux), ("return_ids", return_ids)):
        if not isinstance(v, bool):
            raise TypeError(f"For '{api}', the '{flag}' must be bool, but got {type(v).__name__}.")
    positions = _normalize_positions(grad_position, api)
    weight_list, single_weight = _normalize_weights(weights, api)
    if positions is None and weight_list is None:
        raise ValueError(f"For '{api}', `grad_position` and `weight` can not be None at the same time.")

    compiled = []

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # GRAPH_MODE: the grad function is compiled (once per signature; keyword arguments are part of the key).
        # The JitFunction lives as long as this wrapper: dropping the wrapper frees its graphs.
        if _op_shard._strategies_made[0] and _engine.grad_level() == 0 and weight_list:  # operator parallel
            _op_shard.check_full_batch_inputs(api, args, weight_list)
        if _graph_flag[0] and not _engine.tracing() and not _inputs_have_hooks(args, positions):
            if not compiled:
                compiled.append(JitFunction(run, name=f"grad({getattr(fn, '__qualname__', type(fn).__name__)})"))
            return compiled[0](*args, **kwargs)
        return run(*args, **kwargs)

    def run(*args, **kwargs):
        sens = None
        if sens_param:
            if not args:
                raise TypeError(f"For '{api}', sens_param=True needs the sens as the last positional input, but the "
                                "function was called with none.")
            args, sens = args[:-1], args[-1]
        sel = positions
        if sel is not None:
            sel = _check_positional_inputs(args, sel, api)
        outermost = _engine.grad_level() == 0
        with _engine.GradScope() as scope:
            call_args = list(args)
            leaves = []
            kinds = []  # ("pos", index) or ("w", param)
            if sel is not None:
                for p in sel:
                    call_args[p] = scope.watch_input(args[p])  # a Tensor: checked by _check_positional_inputs
                    # fn's register_hook on this input registers on the caller's Tensor (as MindSpore, which
                    # passes that very object): the hook stays and fires on the input's gradient.
                    call_args[p]._hook_origin = args[p]
                    # A second handle on the same leaf: item assignment inside fn rebinds the object fn receives
                    # (Tensor.__setitem__), and the gradient is w.r.t. the value fn was called with.
                    leaves.append(Tensor(call_args[p]))
                    kinds.append(("pos", p))
            wl = weight_list or []
            for w in wl:
                scope.watch(w)
                leaves.append(w)
                kinds.append(("w", w))
            # While tracing, fn's tensor-dependent control flow compiles (kiln/_compiler/ast_rewrite.py) and its
            # built-ins are the graph ones (kiln/_compiler/graph_builtins.py), as for the function jit compiles.
            if _engine.tracing():
                out = _graph_builtins.call(_ast_rewrite.converted(fn), call_args, kwargs)
            else:
                out = fn(*call_args, **kwargs)
            if has_aux:
                if not isinstance(out, tuple) or len(out) < 2:
                    raise ValueError(f"For '{api}', when has_aux is True, origin fn requires more than one outputs, "
                                     f"but got {type(out).__name__}.")
                targets = _tensors_of(out[0])
            else:
                targets = _tensors_of(out)
            if not targets:
                raise TypeError(f"For '{api}', the function must return a Tensor (or a tuple starting with one), "
                                f"but got {type(out).__name__}.")
            cots = [None] * len(targets) if sens is None else _cotangents(sens, targets, api)
            grads = _engine.gradient(targets, cots, leaves) if leaves else []
            # Hooks registered on the differentiated inputs/Parameters (Tensor.register_hook) see their gradients.
            grads = [_custom_grad.apply_leaf_hooks(args[k[1]] if k[0] == "pos" else k[1], g)
                     for g, k in zip(grads, kinds)]
        grads = [_detach_tree(g, outermost) for g in grads]
        if outermost and weight_list and _semi_auto_dp.applies():  # semi-auto's data-parallel gradient all-reduce
            grads = _semi_auto_dp.average(grads) if sel is None else \
                [g if k[0] == "pos" else _semi_auto_dp.average([g])[0] for g, k in zip(grads, kinds)]
        gi = [g for g, k in zip(grads, kinds) if k[0] == "pos"]
        gw = [g for g, k in zip(grads, kinds) if k[0] == "w"]
        if return_ids:
            gi = [(k[1], g) for g, k in zip(grads, kinds) if k[0] == "pos"]
            gw = [(k[1].name, g) for g, k in zip(grads, kinds) if k[0] == "w"]
        if sel is not None:
            gi_out = gi[0] if len(gi) == 1 else tuple(gi)
        if weight_list is not None:
            gw_out = gw[0] if single_weight else tuple(gw)
        if sel is not None and weight_list is not None:
            g_out = (gi_out, gw_out)
        elif sel is not None:
            g_out = gi_out
        else:
            g_out = gw_out
        if has_aux:
            aux = tuple(_stop_gradient_tree(a) for a in out[1:])
            value = (out[0],) + aux
        else:
            value = out
        value = _detach_tree(value, outermost)
        if with_value:
            return value, g_out
        if has_aux:
            return g_out, _detach_tree(tuple(value[1:]), outermost)
        return g_out

    return wrapper


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """A function that returns (value, gradients) of `fn`, as mindspore.value_and_grad.

    Args:
        fn: a function or Cell returning a Tensor, or a tuple whose first element is the loss (has_aux=True).
        grad_position: None, an int or a tuple of ints: the positional arguments to differentiate.
        weights: None, a Parameter, a list/tuple of Parameters, or a ParameterTuple (e.g. optimizer.parameters).
        has_aux: only fn's first output is differentiated; the value returned is still the whole tuple.
        return_ids: each gradient becomes (position or parameter name, gradient).
    Returns:
        f(*args) -> (value, grads): grads is the input gradient(s) (one Tensor if one position, else a tuple), the
        weight gradients (a tuple; a Tensor for a single Parameter), or (inputs, weights) when both are requested.
        The cotangent is ones_like(output): a non-scalar output gives the gradient of its sum.
    Raises:
        ValueError: grad_position and weights both None; negative or duplicate positions; has_aux with one output.
        TypeError: fn not callable; has_aux/return_ids not bool; grad_position not an int or tuple of ints;
            weights not Parameters; at call time, an argument selected by grad_position that is not a Tensor
            (a Python number, a tuple, a NumPy array: only Tensors are differentiable inputs).
        IndexError: a position beyond the number of positional call arguments.
    The same checks run in PyNative and Graph mode (and inside kiln.jit); keyword arguments are passed to fn in
    both modes (they are never differentiated).
    """
    return _transform(fn, grad_position, weights, has_aux, return_ids, True)


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """A function that returns the gradients of `fn` (and `aux`, a tuple, with has_aux=True), as mindspore.grad.

    Arguments, return structure and errors as value_and_grad, without the value."""
    return _transform(fn, grad_position, weights, has_aux, return_ids, False)


def get_grad(gradients, identifier):
    """Looks up one gradient in the output of grad/value_and_grad with return_ids=True by position or Parameter."""
    key = identifier.name if isinstance(identifier, Parameter) else identifier

    def search(g):
        if isinstance(g, tuple) and len(g) == 2 and not isinstance(g[0], (tuple, Tensor)) and g[0] == key:
            return g[1]
        if isinstance(g, tuple):
            for v in g:
                r = search(v)
                if r is not None:
                    return r
        return None

    r = search(gradients)
    if r is None:
        raise ValueError(f"get_grad: no gradient with identifier {key!r}.")
    return r


class _PyNativeExecutor:
    """MindSpore's `mindspore.common.api._PyNativeExecutor`, of which real code uses the one instance
    `_pynative_executor` to wait for the device: `_pynative_executor.sync()` (before timing a step, in tests).

    Kiln runs every PyNative op synchronously on the CPU (an op has finished, its output written, when the call
    returns), so there is never queued work: `sync()` returns at once, and results read after it are final, as
    after MindSpore's sync."""

    def sync(self):
        """Waits until every op launched so far has finished (Kiln: they all have). Returns None."""
        return None


_pynative_executor = _PyNativeExecutor()
