"""MindSpore's graph-mode meaning of some Python that the AST rewrite (ast_rewrite.py) routes here, only while
tracing: f-strings and str.format of graph tensors (GraphText, printed with the tensors' run-time values), dict
keys/values/items/has_key, tuple()/list() of a NumPy array and float()/int()/bool() of a one-element NumPy array.
Called by rewritten code through _control_flow (`_kiln_cf.joined`, `.method`, `.sequence`, `.scalar`)."""
from .. import _engine
from ..common.tensor import Tensor


def is_symbolic(x):
    """True for a tensor computed by the graph being traced."""
    return isinstance(x, Tensor) and _engine.tracing() and x._symbolic


def callee(f):
    """See _ast_rewrite.callee."""
    from .ast_rewrite import callee as c
    return c(f)


def sequence(kind, iterable):
    """`tuple(x)` / `list(x)` in rewritten code (`kind` is what the name means there): a 1-D NumPy array gives Python
    numbers, as in MindSpore's graph mode (its items are NumPy scalars in Python)."""
    if kind in (tuple, list):
        import numpy as np
        if isinstance(iterable, np.ndarray) and iterable.ndim == 1:
            return kind(iterable.tolist())
    return kind(iterable)


def scalar(kind, value):
    """`float(x)` / `int(x)` / `bool(x)` in rewritten code (`kind` is what the name means there). MindSpore's graph
    mode implements these built-ins itself: a NumPy array with exactly one element, of any rank, converts to its
    element (`float(x.asnumpy())` of a Tensor of shape [1] is a Python float), where NumPy 2 accepts only 0-d arrays.
    An array with another number of elements raises TypeError (float, int: MindSpore's message) or NumPy's
    ValueError (bool). `bool()` of a one-element tensor of the graph being traced is its truth value as a 0-d Bool
    tensor (a tensor condition for `if`, as in MindSpore). Other tensors and everything else convert as Python converts
    them (Tensor.__float__ accepts one element of any rank)."""
    if kind is float or kind is int or kind is bool:
        import numpy as np
        if isinstance(value, np.ndarray) and value.ndim > 0:
            if value.size == 1:
                return kind(value.reshape(()))
            if kind is not bool:
                raise TypeError(f"only length-1 arrays can be converted to Python scalars: {kind.__name__}() got a "
                                f"NumPy array of shape {value.shape} ({value.size} elements), expected one element.")
        if kind is bool and is_symbolic(value) and value.size == 1:
            # bool() of a one-element tensor of the graph: its truth value as a 0-d Bool tensor, so that
            # `if bool(x.sum() > 0):` compiles as the tensor condition, as in MindSpore's graph mode.
            from .. import ops
            return ops.not_equal(value.reshape(()), 0)
    return kind(value)


class GraphText(str):
    """A str made by an f-string or str.format from tensors computed in the graph being traced. As a str it is the
    text Python makes (the tensors shown as symbolic); print() in compiled code prints it with each such tensor's
    run-time value as str(tensor) shows it (`print(f"loss: {loss}")` prints `loss: 0.25` at every run, as MindSpore's
    graph mode). `pieces`: the strs and tensors it is made of, in order."""
    __slots__ = ("pieces",)

    def __new__(cls, pieces):
        self = super().__new__(cls, "".join(p if isinstance(p, str) else str(p) for p in pieces))
        self.pieces = tuple(pieces)
        return self


_CONVERSIONS = {-1: None, 115: "s", 114: "r", 97: "a"}


def _format_piece(value, conversion, spec):
    """One replacement field of an f-string / str.format: a tensor of the graph (no conversion or !s, no spec) stays a
    tensor; anything else is formatted as Python does."""
    if is_symbolic(value) and conversion in (None, "s") and not spec:
        return value
    from .symint import SymInt
    if isinstance(value, SymInt) and conversion in (None, "s", "r") and not spec:
        import numpy as np  # a dynamic size: printed as its run-time value (a fitted constant; _graph_builtins)
        return Tensor(np.array(int(value), np.int64))
    if conversion == "s":
        value = str(value)
    elif conversion == "r":
        value = repr(value)
    elif conversion == "a":
        value = ascii(value)
    return format(value, spec)


def _text(pieces):
    merged = []
    for p in pieces:
        if isinstance(p, GraphText):
            merged.extend(p.pieces)
        else:
            merged.append(p)
    if any(isinstance(p, Tensor) for p in merged):
        return GraphText(merged)
    return "".join(merged)


def joined(parts):
    """An f-string: `parts` are strs and (value, conversion code, format spec) triples (see GraphText)."""
    pieces = []
    for p in parts:
        if isinstance(p, tuple):
            pieces.append(_format_piece(p[0], _CONVERSIONS.get(p[1]), str(p[2])))
        else:
            pieces.append(p)
    return _text(pieces)


def _str_format(template, args, kwargs):
    """template.format(*args, **kwargs) (see GraphText); the fields are string.Formatter's."""
    import string
    fm = string.Formatter()
    pieces, auto = [], 0
    for literal, field, spec, conv in fm.parse(template):
        pieces.append(literal)
        if field is None:
            continue
        if field == "" or field[0] in ".[":
            field = str(auto) + field
            auto += 1
        value, _ = fm.get_field(field, args, kwargs)
        if spec and ("{" in spec):
            spec = _str_format(spec, args, kwargs)
        pieces.append(_format_piece(value, conv, str(spec or "")))
    return _text(pieces)


def method(obj, name):
    """obj.<name> for a call `obj.name(...)` in rewritten code (only while tracing). For a dict, MindSpore's graph
    forms: keys() and values() are tuples and items() a list of (key, value) tuples, taken when called (not live views),
    and has_key(k) is `k in d`; a str's format() keeps tensors of the graph for print (GraphText). Anything else:
    getattr(obj, name)."""
    if isinstance(obj, dict):
        if name == "keys":
            return lambda: tuple(obj.keys())
        if name == "values":
            return lambda: tuple(obj.values())
        if name == "items":
            return lambda: list(obj.items())
        if name == "has_key":
            return lambda key: key in obj
    if name == "format" and type(obj) is str:
        return lambda *args, **kwargs: _str_format(obj, args, kwargs)
    return callee(getattr(obj, name))
