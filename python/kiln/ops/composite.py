"""MindSpore's `mindspore.ops.composite` (imported as C): GradOperation, MultitypeFuncGraph, HyperMap, Map, partial
and constexpr.

Kiln traces Graph mode by running the Python (DESIGN.md), so these are Python objects that work the same in PyNative
and while a graph is traced: a MultitypeFuncGraph dispatches on the Python types of its arguments, HyperMap/Map loop
over tuples at trace time (the graph gets the unrolled ops), GradOperation is `grad` with MindSpore's GradOperation
return structures and an optional sens (cotangent) input.
"""
import functools
import numbers
import threading

import numpy as np

from ..common.api import _transform
from ..common.parameter import Parameter
from ..common.tensor import Tensor

__all__ = ["GradOperation", "MultitypeFuncGraph", "HyperMap", "Map", "partial", "constexpr", "add_flags"]


class GradOperation:
    """GradOperation(get_all=False, get_by_list=False, sens_param=False): makes gradient functions, as MindSpore's.

    `GradOperation(...)(fn, weights=None)` returns g; `g(*inputs)` (with sens_param, `g(*inputs, sens)`) returns:
      - get_all=False, get_by_list=False: the gradient w.r.t. the first input (a Tensor);
      - get_all=True: a tuple with the gradient w.r.t. every Tensor input (inputs that are not Tensors are skipped);
      - get_by_list=True: a tuple with the gradient w.r.t. each of `weights` (default: fn.trainable_params() for a
        Cell); for `weights` a single Parameter, its gradient alone (as MindSpore);
      - both: (inputs' tuple, weights' tuple).
    Keyword arguments are passed to fn and not differentiated (MindSpore's get_all also returns the gradients of
    keyword Tensors; Kiln returns those of the positional Tensors). The outputs are differentiated with cotangent
    ones (the gradient of the sum of all Tensor outputs), or with
    `sens` when sens_param=True: a Tensor for one output, a tuple of Tensors for several, each of its output's shape.
    Works in PyNative and Graph mode (inside a Cell's construct or kiln.jit).

    Raises TypeError for non-bool flags, a non-callable fn, non-Parameter weights, or a first input that is not a
    Tensor (get_all=False); ValueError when get_by_list=True without weights for a fn that has no
    trainable_params, or a sens that does not match the outputs.
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        for name, v in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'GradOperation', the '{name}' must be bool, but got {type(v).__name__}.")
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn, weights=None):
        if not callable(fn):
            raise TypeError(f"For 'GradOperation', the 'fn' must be a function or a Cell, but got "
                            f"{type(fn).__name__}.")
        if self.get_by_list:
            if weights is None:
                if not hasattr(fn, "trainable_params"):
                    raise ValueError("For 'GradOperation', get_by_list=True needs 'weights' (a ParameterTuple or a "
                                     "list of Parameters) when 'fn' is not a Cell.")
                weights = fn.trainable_params()
            single_weight = isinstance(weights, Parameter)  # MindSpore then returns that one gradient, no tuple
            weights = [weights] if single_weight else weights
            if isinstance(weights, (list, tuple)) or hasattr(weights, "__iter__"):
                weights = list(weights)  # a list: the weight gradients always come back as a tuple
        else:
            weights = None
            single_weight = False
        get_all, get_by_list, sens_param = self.get_all, self.get_by_list, self.sens_param
        transforms = {}  # positions -> the grad function (each keeps its own compiled graphs in GRAPH_MODE)
        lock = threading.Lock()

        @functools.wraps(fn)
        def grad_fn(*args, **kwargs):
            inputs = args[:-1] if sens_param else args
            if get_all:
                positions = tuple(i for i, a in enumerate(inputs) if isinstance(a, Tensor))
            elif not get_by_list:
                positions = (0,)
            else:
                positions = None
            with lock:
                g = transforms.get(positions)
                if g is None:
                    g = _transform(fn, positions, weights, False, False, False, sens_param, api="GradOperation")
                    transforms[positions] = g
            out = g(*args, **kwargs)
            if get_all and get_by_list:
                gi, gw = out
                return (gi if isinstance(gi, tuple) else (gi,)), (gw[0] if single_weight else tuple(gw))
            if get_all:
                return out if isinstance(out, tuple) else (out,)
            if get_by_list and positions is None:
                return out[0] if single_weight else tuple(out)
            return out

        return grad_fn


def _type_matches(value, name):
    """Whether `value` is of MindSpore's registered type `name` ("Tensor", "Number", "Tuple", ...)."""
    if name == "Tensor":
        return isinstance(value, Tensor)
    if name == "Number":
        return isinstance(value, (numbers.Number, np.number, np.bool_)) and not isinstance(value, Tensor)
    if name == "Bool":
        return isinstance(value, (bool, np.bool_))
    if name == "Int":
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if name == "Int64":  # a Python int is MindSpore's Int64 scalar
        return isinstance(value, (int, np.int64)) and not isinstance(value, bool)
    if name == "Float":
        return isinstance(value, (float, np.floating))
    if name == "Tuple":
        return isinstance(value, tuple)
    if name == "List":
        return isinstance(value, list)
    if name in ("Dictionary", "Dict"):
        return isinstance(value, dict)
    if name == "String":
        return isinstance(value, str)
    if name in ("None", "NoneType"):
        return value is None
    if name == "Function":
        return callable(value) and not isinstance(value, Tensor)
    if name == "RowTensor":  # a sparse gradient (optimizers and loss scalers register a RowTensor case)
        from ..common.row_tensor import RowTensor
        return isinstance(value, RowTensor)
    return False


_TYPE_NAMES = ("Tensor", "Number", "Bool", "Int", "Float", "Tuple", "List", "Dictionary", "Dict", "String", "None",
               "NoneType", "Function", "RowTensor", "Int64")
_SPECIFIC = {"Bool": 2, "Int": 2, "Float": 2, "Int64": 2}  # preferred over "Number" for the same argument


class MultitypeFuncGraph:
    """MultitypeFuncGraph(name): a function with one implementation per signature of argument types.

    `@f.register("Tensor", "Number")` adds an implementation for (Tensor, number) arguments; `f(*args)` calls the
    implementation whose types match the arguments (Bool/Int/Float are preferred over Number; otherwise the first
    registered). Type names: Tensor, Number, Bool, Int, Float, Tuple, List, Dictionary, String, None, Function,
    RowTensor (a kiln.RowTensor, which is not a Tensor), Int64 (a Python int or NumPy int64 scalar).
    Raises ValueError for an unknown type name at registration and when no signature matches a call.
    """

    def __init__(self, name, read_value=False):
        if not isinstance(name, str):
            raise TypeError(f"For 'MultitypeFuncGraph', the 'name' must be a str, but got {type(name).__name__}.")
        self.name = name
        self._entries = []

    def register(self, *type_names):
        """Decorator: registers the decorated function for arguments of these MindSpore type names."""
        for t in type_names:
            if t not in _TYPE_NAMES:
                raise ValueError(f"For 'MultitypeFuncGraph' '{self.name}', unknown type name {t!r} in register(); "
                                 f"expected one of {', '.join(_TYPE_NAMES)}.")

        def deco(fn):
            self._entries.append((tuple(type_names), fn))
            return fn
        return deco

    def __call__(self, *args):
        best, best_score = None, -1
        for sig, fn in self._entries:
            if len(sig) != len(args) or not all(_type_matches(a, t) for a, t in zip(args, sig)):
                continue
            score = sum(_SPECIFIC.get(t, 1) for t in sig)
            if score > best_score:
                best, best_score = fn, score
        if best is None:
            sigs = ", ".join("(" + ", ".join(sig) + ")" for sig, _ in self._entries) or "none"
            got = ", ".join(type(a).__name__ for a in args)
            raise ValueError(f"For 'MultitypeFuncGraph' '{self.name}', no registered signature matches the arguments "
                             f"({got}); registered: {sigs}.")
        return best(*args)


def _hyper_map(fn, args, recursive):
    """fn applied leaf-wise over parallel tuples/lists (`recursive`: into nested ones too); lists give tuples."""
    seqs = [a for a in args if isinstance(a, (tuple, list))]
    if not seqs:
        return fn(*args)
    if len(seqs) != len(args):
        raise TypeError("For 'HyperMap', the arguments must all be sequences or all leaves at each level, but got "
                        f"({', '.join(type(a).__name__ for a in args)}).")
    n = len(seqs[0])
    if any(len(s) != n for s in seqs):
        raise ValueError(f"For 'HyperMap', the sequences must have one length, but got {[len(s) for s in seqs]}.")
    if recursive:
        return tuple(_hyper_map(fn, items, True) for items in zip(*seqs))
    return tuple(fn(*items) for items in zip(*seqs))


class HyperMap:
    """HyperMap(ops=None, reverse=False): applies a function leaf-wise over (nested) tuples/lists.

    `HyperMap()(fn, *seqs)` or `HyperMap(fn)(*seqs)`: for sequences of one length, a tuple of fn applied to the i-th
    elements, recursively for nested sequences; leaves are passed to fn as they are. Used with a
    MultitypeFuncGraph to treat a tuple of gradients (e.g. clipping, scaling). Raises ValueError for sequences of
    different lengths, TypeError for a sequence beside a leaf.
    """

    _recursive = True

    def __init__(self, ops=None, reverse=False):
        if ops is not None and not callable(ops):
            raise TypeError(f"For '{type(self).__name__}', the 'ops' must be callable, but got {type(ops).__name__}.")
        self.ops, self.reverse = ops, bool(reverse)

    def __call__(self, *args):
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0] if args else None, args[1:])
        if not callable(fn):
            raise TypeError(f"For '{type(self).__name__}', the first argument must be the function to apply, but got "
                            f"{type(fn).__name__}.")
        if not seqs:
            raise TypeError(f"For '{type(self).__name__}', at least one sequence is required.")
        return _hyper_map(fn, seqs, self._recursive)


class Map(HyperMap):
    """Map(ops=None, reverse=False): like HyperMap, one level deep: `Map()(fn, *seqs)` is the tuple of fn applied to
    the i-th elements of the sequences (nested sequences are passed to fn whole)."""

    _recursive = False


def partial(func, *args, **kwargs):
    """MindSpore's ops.partial(func, *args, **kwargs): func with its first arguments and the given keyword arguments
    bound (functools.partial; later keyword arguments override bound ones). Works the same in PyNative and inside
    compiled functions. Raises TypeError when func is not callable."""
    if not callable(func):
        raise TypeError(f"For 'partial', the 'func' must be callable, but got {type(func).__name__}.")
    return functools.partial(func, *args, **kwargs)


def constexpr(fn=None, get_instance=True, reuse_result=True, check=True):
    """MindSpore's @constexpr: marks a function of constants (shapes, Python numbers) evaluated at compile time.

    Kiln traces Graph mode by running the Python, so the function already runs once at trace time on the Python
    values it gets, and its result is a constant of the graph; in PyNative it simply runs. The decorator returns the
    function unchanged (with or without arguments: `@constexpr` and `@constexpr(...)`)."""
    if fn is None:
        return lambda f: f
    return fn


def add_flags(fn=None, **flags):
    """MindSpore's ops.add_flags(fn=None, **flags): records `flags` in `fn._func_graph_flags` (a dict, created on first
    use; later calls update it) and returns `fn`; without `fn`, a decorator doing that. `fn` is a function or a
    Cell. MindSpore's graph compiler reads some of these flags (e.g. has_effect, for side effects); Kiln's tracer
    finds side effects and the like itself, so for Kiln they are recorded only (readable, copied with the object).

    Raises TypeError when `fn` can not hold attributes (a builtin)."""
    def deco(f):
        d = getattr(f, "_func_graph_flags", None)
        if d is None:
            try:
                f._func_graph_flags = d = {}
            except (AttributeError, TypeError):
                raise TypeError(f"For 'add_flags', 'fn' must be a function or a Cell that can hold attributes, but "
                                f"got {type(f).__name__}.") from None
        d.update(flags)
        return f
    return deco if fn is None else deco(fn)
