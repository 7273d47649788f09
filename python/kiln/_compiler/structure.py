"""Python structures of a compiled function's arguments and results, flattened to a list of tensors and back:
the structure with each tensor replaced by a _Leaf is what the compile cache keys (non-tensor values included) and
what a compiled graph's outputs are rebuilt from. Also the aliasing of a call (one tensor object passed twice)."""
from ..common.tensor import Tensor
from ..common import mutable as _mutable


class _Leaf:
    """Marks a tensor position in a flattened structure."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<tensor {self.index}>"


class _Same:
    """Marks, in a compiled function's output structure, a list or dict that holds no tensor: the call returns that
    very object (as MindSpore returns a global list the function returns: `id(out) == id(global_list)`)."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __repr__(self):
        return f"<same {type(self.obj).__name__}>"


def _keep_identity(obj, struct, globals_ids):
    """`struct` (obj flattened) with each list/dict of obj that holds no tensor and is a global variable of the
    compiled function's module (its id in `globals_ids`) replaced by _Same(obj). (A list made inside the function
    stays a fresh copy per call, so that a caller changing it does not change later results.)"""
    if not globals_ids:
        return struct
    if isinstance(obj, (list, dict)) and id(obj) in globals_ids and type(struct) is type(obj) \
            and not _has_leaf(struct):
        return _Same(obj)
    if isinstance(obj, (tuple, list)) and isinstance(struct, (tuple, list)) and len(obj) == len(struct):
        out = [_keep_identity(o, st, globals_ids) for o, st in zip(obj, struct)]
        return tuple(out) if isinstance(struct, tuple) else out
    if isinstance(obj, dict) and isinstance(struct, dict):
        return {k: _keep_identity(obj[k], st, globals_ids) for k, st in struct.items()}
    return struct


def _globals_ids(fn):
    """ids of the lists and dicts that are global variables of fn's module (fn: a function or bound method)."""
    g = getattr(getattr(fn, "__func__", fn), "__globals__", None)
    if not isinstance(g, dict):
        return set()
    return {id(v) for v in list(g.values()) if type(v) in (list, dict)}


def _has_leaf(struct):
    if isinstance(struct, _Leaf):
        return True
    if isinstance(struct, (tuple, list)):
        return any(_has_leaf(v) for v in struct)
    if isinstance(struct, dict):
        return any(_has_leaf(v) for v in struct.values())
    return False


def _flatten(obj, tensors):
    """Structure of `obj` with every Tensor replaced by a _Leaf (tensors appended to `tensors`)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return _Leaf(len(tensors) - 1)
    if type(obj) in _mutable.SCALARS:  # kiln.mutable(number): a 0-d tensor input, not a constant of the graph
        tensors.append(_mutable.scalar_tensor(obj))
        return _Leaf(len(tensors) - 1)
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_flatten(v, tensors) for v in obj)
    if isinstance(obj, list):
        return [_flatten(v, tensors) for v in obj]
    if isinstance(obj, dict):
        return {k: _flatten(v, tensors) for k, v in obj.items()}
    return obj


def _unflatten(struct, tensors):
    if isinstance(struct, _Leaf):
        return tensors[struct.index]
    if isinstance(struct, _Same):
        return struct.obj
    if isinstance(struct, tuple):
        return tuple(_unflatten(v, tensors) for v in struct)
    if isinstance(struct, list):
        return [_unflatten(v, tensors) for v in struct]
    if isinstance(struct, dict):
        return {k: _unflatten(v, tensors) for k, v in struct.items()}
    return struct


def _key_of(struct, pins):
    """A hashable key for the non-tensor parts of an argument structure. An unhashable value is keyed by its id and
    appended to `pins`: the compiled entry keeps it alive, so its id cannot be reused by another object while the
    entry exists."""
    if isinstance(struct, _Leaf):
        return ("T",)
    if isinstance(struct, (tuple, list)):
        return (type(struct).__name__,) + tuple(_key_of(v, pins) for v in struct)
    if isinstance(struct, dict):
        return ("dict",) + tuple((k, _key_of(v, pins))
                                 for k, v in sorted(struct.items(), key=lambda kv: repr(kv[0])))
    try:
        hash(struct)
        return (type(struct).__name__, struct)
    except TypeError:
        pins.append(struct)
        return (type(struct).__name__, id(struct))


def _distinct(args):
    """True when no tensor object occurs twice among `args`."""
    return len(args) < 2 or len({id(a) for a in args}) == len(args)


def _aliases(tensors):
    """None when every tensor of a call is a distinct object; else, for each position, the first position holding
    the same object (part of the compile key: a write through one argument must be seen through the other)."""
    if _distinct(tensors):
        return None
    first = {}
    return tuple(first.setdefault(id(t), i) for i, t in enumerate(tensors))
