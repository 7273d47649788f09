"""MindSpore's functional control flow: ops.WhileLoop, ops.ForiLoop, ops.Scan and ops.switch.

In PyNative mode they run as the Python they describe. In Graph mode (inside `jit` / a GRAPH_MODE construct) a loop
whose condition or bound is a symbolic tensor compiles into one While node and a switch on a symbolic condition into an
If node (kiln/_compiler/control_flow.py; src/graph/control_flow.cpp); gradients flow through both. A loop with Python
bounds unrolls, as MindSpore's does with unroll=True.
"""
import types

from .._compiler import control_flow as _cf
from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ["WhileLoop", "ForiLoop", "Scan", "switch"]

_FUNCS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.LambdaType)


def _check_fn(name, value, prim):
    if not callable(value) or isinstance(value, type):
        raise TypeError(f"For '{prim}', the argument '{name}' must be a function, but got {type(value).__name__}.")


class WhileLoop(Primitive):
    """WhileLoop()(cond_func, loop_func, init_val): `val = init_val; while cond_func(val): val = loop_func(val)`;
    returns val.

    init_val: a Tensor, a number, or a (nested) tuple/list/dict of them; loop_func returns the same structure, each
    tensor with the same shape and dtype. In Graph mode a tensor condition makes one While node (loop-carried values:
    the tensors of val; gradients: the chain rule over the trips run). Raises TypeError if cond_func/loop_func is not
    callable; ValueError if loop_func changes the structure, a shape or a dtype of val."""

    def __init__(self):
        super().__init__("WhileLoop")

    def __call__(self, cond_func, loop_func, init_val):
        _check_fn("cond_func", cond_func, "WhileLoop")
        _check_fn("loop_func", loop_func, "WhileLoop")
        return _cf.while_loop(cond_func, loop_func, init_val)


class ForiLoop(Primitive):
    """ForiLoop()(lower, upper, loop_func, init_val, unroll=True): `for i in range(lower, upper): val = loop_func(i,
    val)`; returns val.

    lower/upper: int or Tensor (a one-element integer tensor). With Python ints and unroll=True the loop runs as Python
    (unrolled into the graph when compiling); with a symbolic tensor bound, or unroll=False inside a compiled function,
    it is one While node whose index `i` is an int64 tensor. Raises TypeError for a bound that is not an int or a
    Tensor, or a loop_func that is not callable; ValueError if loop_func changes val's structure, shapes or dtypes."""

    def __init__(self):
        super().__init__("ForiLoop")

    def __call__(self, lower, upper, loop_func, init_val, unroll=True):
        for name, v in (("lower", lower), ("upper", upper)):
            if isinstance(v, bool) or not isinstance(v, (int, Tensor)):
                raise TypeError(f"For 'ForiLoop', the argument '{name}' must be int or Tensor, but got "
                                f"{type(v).__name__}.")
        _check_fn("loop_func", loop_func, "ForiLoop")
        if not isinstance(unroll, bool):
            raise TypeError(f"For 'ForiLoop', the argument 'unroll' must be bool, but got {type(unroll).__name__}.")
        compiled = _cf.is_symbolic(lower) or _cf.is_symbolic(upper) or (not unroll and _cf._engine.tracing())
        if not compiled:
            val = init_val
            for i in range(int(lower), int(upper)):
                val = loop_func(i, val)
            return val
        from ..common import dtype as mstype
        from . import function as F
        i0 = lower.astype(mstype.int64).reshape(()) if isinstance(lower, Tensor) else Tensor(lower, mstype.int64)
        hi = upper.astype(mstype.int64).reshape(()) if isinstance(upper, Tensor) else Tensor(upper, mstype.int64)
        state = _cf.while_loop(lambda s: F.less(s[0], hi), lambda s: (s[0] + 1, loop_func(s[0], s[1])),
                               (i0, init_val))
        return state[1]


class Scan(Primitive):
    """Scan()(loop_func, init, xs, length=None, unroll=True): `carry = init; for x in xs: carry, y = loop_func(carry,
    x); ys.append(y)`; returns (carry, ys) with ys a list.

    xs: a tuple/list (or None with `length`: loop_func then gets None). Runs as Python (unrolled into the graph when
    compiling). With unroll=False while compiling, a scan over tensors of one shape and dtype whose loop_func returns a
    single tensor y is one While node (xs stacked, the ys written into one tensor); other scans unroll. An empty xs
    returns (init, []). Raises TypeError for a loop_func that is not callable, xs that is not a tuple/list/None, a
    length that is not an int, or an unroll that is not a bool; ValueError if loop_func does not return a pair."""

    def __init__(self):
        super().__init__("Scan")

    def __call__(self, loop_func, init, xs, length=None, unroll=True):
        _check_fn("loop_func", loop_func, "Scan")
        if xs is not None and not isinstance(xs, (tuple, list)):
            raise TypeError(f"For 'Scan', the argument 'xs' must be tuple, list or None, but got {type(xs).__name__}.")
        if not isinstance(unroll, bool):
            raise TypeError(f"For 'Scan', the argument 'unroll' must be bool, but got {type(unroll).__name__}.")
        if xs is None:
            if isinstance(length, bool) or not isinstance(length, int):
                raise TypeError(f"For 'Scan', the argument 'length' must be int when xs is None, but got "
                                f"{type(length).__name__}.")
            xs = [None] * length
        if not unroll and _cf._engine.tracing() and len(xs) > 0:
            compiled = _scan_loop(loop_func, init, xs)
            if compiled is not None:
                return compiled
        carry = init
        ys = []
        for x in xs:
            out = loop_func(carry, x)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise ValueError("For 'Scan', loop_func must return a pair (carry, y), but it returned "
                                 f"{type(out).__name__}.")
            carry, y = out
            ys.append(y)
        return carry, ys


def _scan_loop(loop_func, init, xs):
    """Scan as one While node (unroll=False while compiling): xs stacked into one tensor indexed by the trip counter,
    each y written into a preallocated [len(xs), ...] tensor. Returns None (the caller unrolls) unless every x is a
    tensor of one shape and dtype (or all are None) and loop_func returns a single tensor as y."""
    from ..common import dtype as mstype
    from .._loader import _core
    from . import function as F
    if all(x is None for x in xs):
        stacked = None
    elif all(isinstance(x, Tensor) for x in xs) and len({(tuple(x.shape), x.dtype) for x in xs}) == 1:
        stacked = F.stack(list(xs), 0)
    else:
        return None
    probe = loop_func(init, xs[0])  # for y's shape and dtype (its nodes are dead code, removed by the passes)
    if not isinstance(probe, (tuple, list)) or len(probe) != 2:
        raise ValueError("For 'Scan', loop_func must return a pair (carry, y), but it returned "
                         f"{type(probe).__name__}.")
    y0 = probe[1]
    if not isinstance(y0, Tensor):
        return None
    n = len(xs)
    buf = F.zeros((n,) + tuple(y0.shape), y0.dtype)

    def body(state):
        i, carry, ys = state
        carry, y = loop_func(carry, None if stacked is None else stacked[i])
        ys = _core.tensor_scatter_update(ys, i.reshape((1, 1)), y.reshape((1,) + tuple(y.shape)))
        return i + 1, carry, ys
    _, carry, ys = _cf.while_loop(lambda s: F.less(s[0], n), body, (Tensor(0, mstype.int64), init, buf))
    return carry, [ys[k] for k in range(n)]


def switch(cond, true_branch, false_branch):
    """ops.switch(cond, true_branch, false_branch): true_branch if cond else false_branch.

    cond: a bool, or a one-element Tensor. The branches are values (Tensors: the result is the chosen tensor) or
    functions (the result is a function that calls the chosen one). With a symbolic condition (Graph mode) the choice
    is one If node: for tensors, both must have the same shape and dtype; for functions, the returned function's call
    compiles both and both must return the same structure of shapes and dtypes. (MindSpore accepts switch in Graph mode
    only; Kiln also runs it in PyNative.) Raises ValueError for a tensor condition with more than one element."""
    if isinstance(cond, Tensor) and cond.size != 1:
        raise ValueError(f"For 'switch', the condition must be a bool or a tensor with one element, but got shape "
                         f"{list(cond.shape)}.")
    if not _cf.is_symbolic(cond):
        return true_branch if cond else false_branch
    if callable(true_branch) and callable(false_branch) and not isinstance(true_branch, Tensor):
        def chosen(*args):
            return _cf.cond(cond, true_branch, false_branch, *args)
        return chosen
    return _cf.cond(cond, lambda: true_branch, lambda: false_branch)
