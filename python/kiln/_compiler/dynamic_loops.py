"""Loops over dynamic sizes in dynamic-shape graphs (docs/decisions/graph-scalars-class-paths-dynamic-flow.md):
while a dynamic-shape graph is compiled
(kiln/_compiler/dynamic.py), `x.shape[0]` is a SymInt holding the probe trace's size. A `for` over the rows of such a
tensor, over `range(x.shape[0])`, or over `enumerate(x)` / `zip(x, y)` would unroll to the probe size (the probe
traces then differ: a structure error); _control_flow.for_stmt compiles them into one While node over the run-time
size instead, with the size as an int64 constant of each probe trace that the constant fit maps to the size."""
from ..common.tensor import Tensor
from .graph_python import is_symbolic


def size_bound(a):
    """A start/stop of range() that is a dynamic size (a SymInt: `x.shape[0]` in a dynamic-shape graph) as an int64
    tensor holding the run-time value (a constant of this probe trace, fitted to the size); anything else as is."""
    from .symint import SymInt
    if isinstance(a, SymInt):
        import numpy as np
        return Tensor(np.array(int(a), np.int64))
    return a


class Rows:
    """enumerate(x) / zip(x, y, ...) in a `for` header over tensors whose first dimension is a dynamic size (iterated by
    for_stmt as a compiled loop over the run-time size)."""
    __slots__ = ("tensors", "start", "size")

    def __init__(self, tensors, start, size):
        self.tensors, self.start, self.size = tensors, start, size


def dynamic_rows(t):
    """The SymInt first dimension of a symbolic tensor in a dynamic-shape graph, or None."""
    from .symint import SymInt
    if is_symbolic(t) and len(t.shape) > 0 and isinstance(t.shape[0], SymInt):
        return t.shape[0]
    return None


def rows_of(name, fn, *args):
    """`fn(*args)` in a `for` header where `fn` is named enumerate or zip: when it is the built-in and its sequences
    are tensors whose first dimension is one dynamic size, a Rows that for_stmt compiles into one loop over the
    run-time size; else fn(*args) as written."""
    from . import graph_builtins as _graph_builtins  # (imports _control_flow's helpers late)
    builtin = getattr(_graph_builtins._bi, name)
    if fn is not builtin and fn is not _graph_builtins.OVERLAY.get(name):
        return fn(*args)
    if name == "enumerate":
        if len(args) not in (1, 2):
            return fn(*args)
        seqs, start = args[:1], (args[1] if len(args) == 2 else 0)
    else:
        seqs, start = args, None
    sizes = [dynamic_rows(a) for a in seqs]
    if sizes and all(n is not None for n in sizes) and len({(int(n), n._text) for n in sizes}) == 1 and \
            (start is None or (isinstance(start, int) and not isinstance(start, bool))):
        return Rows(tuple(seqs), start, sizes[0])
    return fn(*args)
