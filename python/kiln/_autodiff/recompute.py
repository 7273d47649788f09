"""Recompute (activation checkpointing): `Cell.recompute()` and `mindspore.recompute(block, *args)`
(`Primitive.recompute()`, Graph mode only in MindSpore, is not provided: docs/distributed.md).

A recomputed call runs its forward without keeping anything for the backward pass but its inputs and its outputs:
`_engine.record_custom` gives the outputs ONE tape node over the call's Tensor arguments and the Parameters it reads,
whose bprop runs the forward again (recorded, under a fresh tape) and differentiates that copy with the cotangents
that reached the outputs. So the activations inside the call live only while the forward runs through it, and
again, briefly, when the reverse pass gets there (Chen et al. 2016, "Training deep nets with sublinear memory cost";
PyTorch's torch.utils.checkpoint and MindSpore's reentrant `_RecomputeCell` work the same way).

Both modes use this one mechanism. In Graph mode (kiln.jit, GRAPH_MODE) the grad transform runs while the function
is traced, so the bprop traces the forward a second time: the graph gets copies of the forward nodes, placed where
the reverse pass needs them (after the cotangent of the call's outputs exists), and the executor's liveness plan
frees the forward's intermediates as soon as the forward has used them. The copies read their Tensor arguments
through `Depend(x, cotangent)`: a new value, so common-subexpression elimination cannot merge a copy back into the
forward node it repeats (which would keep the activation alive again), and the copy cannot run early.

Random draws (dropout masks, ops.rand...) are not drawn again: the draws made while the forward ran through a
recomputed call are kept, and the recomputation takes them in the same order (`draw`), so a dropout inside a
recomputed Cell applies the same mask in the recomputation (the aim of PyTorch's preserve_rng_state; in Graph mode
the random offsets are taken when the graph runs, so keeping the draws is what works in both modes). The kept draws
are the only activations a recomputed call holds besides its inputs and outputs.

Gradients equal those without recompute (the same ops on the same values, in the same order within the call).
Higher derivatives through a recomputed call work when the reverse pass is itself recorded (grad of grad): the
recomputation is then recorded as well.
"""
import threading

from .. import _engine
from ..ops import _kernels
from ..common.tensor import Tensor
from .custom_grad import _flatten

_tls = threading.local()


def _frames():
    f = getattr(_tls, "frames", None)
    if f is None:
        f = _tls.frames = []
    return f


class _Frame:
    """One recomputed call on this thread: 'record' while its forward runs (its random draws are appended to
    `draws`), 'replay' while its bprop recomputes (the draws are handed back in order)."""

    def __init__(self, mode, draws):
        self.mode, self.draws, self.next = mode, draws, 0

    def __enter__(self):
        _frames().append(self)
        return self

    def __exit__(self, *exc):
        _frames().remove(self)
        return False


_DRAW_KERNELS = {"uniform_real": _kernels.uniform_real, "standard_normal": _kernels.standard_normal,
                 "uniform_int": _kernels.uniform_int, "random_gamma": _kernels.random_gamma}


def _draw_kernel(kind):
    """The random kernel `draw` runs for `kind`."""
    return _DRAW_KERNELS[kind]


def draw(kind, *args):
    """A random draw: `kiln._core.uniform_real / standard_normal / uniform_int / random_gamma(*args)` (kind names it;
    args[0] is the output shape). Inside the
    recomputation of a recomputed call, the draw the forward made at this point instead; inside a recomputed call's
    forward the draw is also kept for that recomputation. Raises RuntimeError when the recomputation draws more (or
    other shapes) than the forward did (the call is not deterministic in its structure)."""
    frames = getattr(_tls, "frames", None)
    if not frames:
        return _draw_kernel(kind)(*args)
    replay = next((f for f in reversed(frames) if f.mode == "replay"), None)
    if replay is None:
        out = _draw_kernel(kind)(*args)
    else:
        if replay.next >= len(replay.draws):
            raise RuntimeError(f"recompute: the recomputation of a recomputed Cell draws more random numbers "
                               f"({kind}, shape {list(args[0])}) than its forward did ({len(replay.draws)} draws): "
                               "its computation must not depend on anything but its inputs and Parameters.")
        out = replay.draws[replay.next]
        if list(out.shape) != list(args[0]):
            raise RuntimeError(f"recompute: random draw {replay.next} of a recomputed Cell has shape "
                               f"{list(args[0])} in the recomputation but {list(out.shape)} in the forward: its "
                               "computation must not depend on anything but its inputs and Parameters.")
        replay.next += 1
    for f in frames:
        if f.mode == "record":
            f.draws.append(out)
    return out


def _contexts(context_fn, who):
    """context_fn() checked: two context managers (TypeError, as MindSpore raises, but naming what was expected)."""
    got = context_fn()
    if not (isinstance(got, (tuple, list)) and len(got) == 2
            and all(hasattr(c, "__enter__") and hasattr(c, "__exit__") for c in got)):
        raise TypeError(f"For 'recompute' of {who}, 'context_fn' must return a tuple of two context managers (one "
                        f"around the forward, one around the recomputation), but it returned {got!r}.")
    return got


def call(run, args, kwargs, params, who, context_fn=None, check_params=False):
    """Runs `run(args, kwargs)` as a recomputed call (see the module docstring).

    args, kwargs: the positional and keyword arguments (their Tensors are differentiated, keyword ones too, as
    MindSpore 2.10's recompute differentiates them); params: the Parameters `run` reads (the Cell's), whose
    gradients flow through the recomputation; who: the name used in error messages; context_fn: None or a callable
    returning two context managers, entered around the forward and around the recomputation; check_params: raise
    TypeError when the forward reads a differentiated Tensor that is neither an argument nor in `params` (a plain
    function given to kiln.recompute). Outside a grad transform, or when neither a Tensor argument nor a Parameter
    is differentiated, it is a plain call."""
    if _engine.grad_level() == 0:
        return run(args, kwargs)
    # the Tensor arguments, positional (int) and keyword (str) alike: before, a keyword Tensor was used as a
    # constant inside the recomputation and its gradient was silently 0 (MindSpore differentiates it)
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)] + \
        [k for k, a in kwargs.items() if isinstance(a, Tensor)]
    params = [p for p in params if p._tracked]

    def get(i):
        return args[i] if isinstance(i, int) else kwargs[i]

    def with_tensors(values):
        a, k = list(args), dict(kwargs)
        for i, v in zip(tensor_pos, values):
            if isinstance(i, int):
                a[i] = v
            else:
                k[i] = v
        return tuple(a), k

    if not params and not any(get(i)._tracked for i in tensor_pos):
        return run(args, kwargs)
    detached_args, detached_kwargs = with_tensors([_kernels.detach(get(i)) for i in tensor_pos])
    draws = []
    fwd_ctx, rec_ctx = _contexts(context_fn, who) if context_fn is not None else (None, None)
    with _Frame("record", draws):
        if fwd_ctx is not None:
            with fwd_ctx:
                out = run(detached_args, detached_kwargs)
        else:
            out = run(detached_args, detached_kwargs)
    leaves, rebuild = _flatten(out)
    if not leaves:
        return out
    if check_params and not params and any(t._tracked for t in leaves):
        raise TypeError(f"For 'recompute', {who} reads a differentiated Tensor (a Parameter) that is not one of its "
                        "arguments: Kiln recomputes a function only when it knows the Parameters it reads; pass a "
                        "Cell (or a method of a Cell) as the block instead.")
    n_args = len(tensor_pos)

    def bprop(ins, outs, gouts):
        if all(g is None for g in gouts):
            return [None] * len(ins)
        anchor = next(g for g in gouts if g is not None)
        # The reverse pass is recorded (an outer transform differentiates it): recompute on that tape, so that the
        # recomputation is differentiated too. Else a fresh tape (the outermost reverse pass records nothing).
        isolated = _engine.IsolatedTape() if _engine.grad_level() == 0 else None
        if isolated is not None:
            isolated.__enter__()
        try:
            with _engine.GradScope() as scope:
                watched = []
                inner = []
                for k in range(n_args):
                    x = ins[k]
                    if _engine.tracing():  # a new graph value: CSE keeps the copy apart, and it runs after the forward
                        x = _kernels.depend(x, anchor)
                    c = scope.watch_input(x)
                    watched.append(c)
                    inner.append(Tensor(c))
                call_args, call_kwargs = with_tensors(watched)
                for p in params:
                    scope.watch(p)
                    inner.append(p)
                with _Frame("replay", draws):
                    if rec_ctx is not None:
                        with rec_ctx:
                            out2 = run(call_args, call_kwargs)
                    else:
                        out2 = run(call_args, call_kwargs)
                targets, _ = _flatten(out2)
                if len(targets) != len(gouts):
                    raise RuntimeError(f"recompute: the recomputation of {who} returned {len(targets)} Tensors, "
                                       f"but its forward returned {len(gouts)}.")
                pairs = [(t, g) for t, g in zip(targets, gouts) if g is not None]
                grads = _engine.gradient([t for t, _ in pairs], [g for _, g in pairs], inner)
        finally:
            if isolated is not None:
                isolated.__exit__(None, None, None)
        return list(grads[:n_args]) + list(grads[n_args:])

    new = _engine.record_custom([get(i) for i in tensor_pos] + params, leaves, bprop)
    return rebuild(new)


def recompute(block, *args, use_reentrant=True, output_recompute=False, early_stop=True, context_fn=None, **kwargs):
    """mindspore.recompute(block, *args, use_reentrant=True, output_recompute=False, early_stop=True,
    context_fn=None, **kwargs): block(*args, **kwargs), with the activations inside block recomputed in the backward
    pass instead of kept (its inputs and outputs are kept; see Cell.recompute). PyNative and Graph mode.

    block: a Cell; with use_reentrant=False (or output_recompute=True) also a method of a Cell or a function that
    reads no Parameter but its arguments. kwargs are passed to block (save_rng_state is accepted and dropped:
    random draws are always reused). Returns block's result.

    Raises:
        TypeError: block not a Cell with use_reentrant=True (MindSpore's message); a function that reads a
            differentiated Parameter not among its arguments (Kiln cannot recompute it); a context_fn that is not
            callable or does not return two context managers (MindSpore raises TypeError too, Python's own).
        ValueError: context_fn with use_reentrant=True.
    """
    from ..nn.cell import Cell
    kwargs.pop("save_rng_state", None)
    if output_recompute:
        use_reentrant = False
    if not isinstance(block, Cell) and use_reentrant:
        raise TypeError("Recompute function now only support block which inherited from Cell when use_reentrant=True!")
    if use_reentrant and context_fn is not None:
        raise ValueError("context_fn is only supported when use_reentrant=False.")
    if context_fn is not None and not callable(context_fn):
        raise TypeError(f"For 'recompute', the 'context_fn' must be callable, but got {type(context_fn).__name__}.")
    if not callable(block):
        raise TypeError(f"For 'recompute', the 'block' must be a Cell or a function, but got {type(block).__name__}.")
    owner = block if isinstance(block, Cell) else getattr(block, "__self__", None)
    params = list(owner.get_parameters()) if isinstance(owner, Cell) else []
    name = type(block).__name__ if isinstance(block, Cell) else getattr(block, "__qualname__", repr(block))

    def run(a, k):
        return block(*a, **k)
    return call(run, tuple(args), kwargs, params, f"'{name}'", context_fn, check_params=not isinstance(owner, Cell))
