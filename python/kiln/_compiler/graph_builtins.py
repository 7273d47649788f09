"""Python's built-in functions inside compiled functions, with MindSpore's static-graph semantics.

Graph mode traces Python by running it with symbolic tensors (kiln/_compiler/capture.py). Plain Python built-ins then
behave as in Python: `map`, `zip`, `filter`, `range`, `enumerate` return lazy iterators (MindSpore's graph mode
returns tuples and lists), `max(t)` / `all(t)` on a tensor iterate it and ask a symbolic value for its truth (an
error), and `print` prints once, while tracing. MindSpore's graph mode gives these built-ins graph meanings.

Note [graph built-ins] (docs/decisions/graph-builtins-overlay.md):
* Mechanism. A function that runs while a graph is traced — the jit function itself, each Cell's `construct`
  called during the trace, the methods of `@jit_class` objects, and every function or lambda defined while they
  run — runs with an overlay of the built-ins: `graph_function(fn)` is `fn` with the same code, closure and
  defaults but a globals dict whose `__builtins__` is OVERLAY (CPython binds a function's built-ins from its
  globals when the function object is made). The globals are a copy of the module's, one per module per trace
  (`trace_scope`), so the functions of one module see each other's global writes while tracing. Functions of the
  user's program called from compiled code get the overlay too: the AST rewrite (ast_rewrite.py) routes every call
  through its `callee` hook, which applies graph_function.
* Semantics (MindSpore 2.10's graph mode, checked against it): `range`, `zip`, `enumerate` give tuples; `map`
  gives a list when every sequence is a list, else a tuple; `filter` gives a list; `max`/`min` of one 1-D tensor
  is its largest/smallest element (a 0-d tensor), of several one-element tensors (or a sequence of them) their
  element-wise maximum/minimum, `sum(t, start)` is `start + t.sum(0)`; `all`/`any` of a tensor reduce it (a bool
  0-d tensor); `print` adds a Print node to the graph, so it prints on every run
  of the compiled graph, in program order, with that run's values.
* Outside a trace (PyNative, or a function defined while tracing and called later) every overlay function is
  exactly Python's built-in.
"""
import builtins as _bi
import os
import re
import sys
import threading
import traceback
import types
import warnings

from .. import _engine
from ..ops import _kernels
from ..common.tensor import Tensor

_local = threading.local()  # .copies: {id(module globals): (module globals, overlay globals)} of the current trace

_range, _zip, _map, _filter, _enumerate = _bi.range, _bi.zip, _bi.map, _bi.filter, _bi.enumerate
_max, _min, _sum, _all, _any, _print = _bi.max, _bi.min, _bi.sum, _bi.all, _bi.any, _bi.print


def _tracing():
    return _engine.tracing()


# ---------------------------------------------------------------------------------------------- sequences
def _range_g(*args):
    """range(stop) / range(start, stop[, step]): a tuple of ints while tracing (MindSpore's graph range)."""
    if not _tracing():
        return _range(*args)
    return tuple(_range(*args))


def _zip_g(*iterables, **kwargs):
    """zip(*iterables): a tuple of tuples while tracing."""
    if not _tracing():
        return _zip(*iterables, **kwargs)
    return tuple(_zip(*iterables, **kwargs))


def _enumerate_g(iterable, start=0):
    """enumerate(iterable, start=0): a tuple of (index, item) pairs while tracing; a Tensor is enumerated along its
    first dimension."""
    if not _tracing():
        return _enumerate(iterable, start)
    return tuple(_enumerate(iterable, start))


def _map_g(function, *iterables):
    """map(function, *iterables): while tracing, a list when every iterable is a list, else a tuple."""
    if not _tracing():
        return _map(function, *iterables)
    out = _map(function, *iterables)
    if iterables and _all(isinstance(s, list) for s in iterables):
        return list(out)
    return tuple(out)


def _filter_g(function, iterable):
    """filter(function, iterable): a list while tracing (as MindSpore's graph filter, whatever the input)."""
    if not _tracing():
        return _filter(function, iterable)
    return list(_filter(function, iterable))


# ------------------------------------------------------------------------------------------ reductions
def _one_element(t, fname):
    """Checks that a tensor in a sequence given to max/min/all/any has one element (its truth value is defined)."""
    if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != 1):
        raise ValueError(f"For '{fname}', the truth value of a tensor with more than one element is ambiguous: got "
                         f"a tensor of shape {list(t.shape)} among its arguments; use ops.maximum / ops.minimum "
                         f"for element-wise results.")


def _iter_tensor(t, fname):
    """Checks that a tensor given alone to max/min/sum/all/any can be iterated, and its items have a truth value."""
    if t.ndim == 0:
        raise TypeError(f"For '{fname}', cannot iterate over a 0-d tensor (shape []).")


def _extreme(fname, data, kwargs, reduce_name, pair):
    if len(data) == 1:
        x = data[0]
        if isinstance(x, Tensor):
            _iter_tensor(x, fname)
            if x.ndim >= 2:
                raise ValueError(f"For '{fname}', the truth value of a tensor with more than one element is "
                                 f"ambiguous: got a tensor of shape {list(x.shape)}; use x.{reduce_name}(axis) "
                                 f"instead.")
            if x.shape[0] == 0:
                raise ValueError(f"For '{fname}', the argument is an empty tensor.")
            return getattr(x, reduce_name)()
        if isinstance(x, dict):
            x = tuple(x)
        if not isinstance(x, (tuple, list)):
            x = tuple(x)
        items = x
    else:
        items = data
    if kwargs or not _any(isinstance(v, Tensor) for v in items):
        return (_max if fname == "max" else _min)(*data, **kwargs)
    if not items:
        raise ValueError(f"{fname}() arg is an empty sequence")
    for v in items:
        if isinstance(v, Tensor):
            _one_element(v, fname)
        elif isinstance(v, (tuple, list, dict)):
            raise TypeError(f"For '{fname}', a tensor and a sequence cannot be compared: got "
                            f"{[type(i).__name__ for i in items]}.")
    out = items[0]
    for v in items[1:]:
        out = pair(out, v)
    return out


def _max_g(*data, **kwargs):
    """max(...) with MindSpore's graph semantics for tensors (see the module note)."""
    if not _tracing() or not data:
        return _max(*data, **kwargs)
    from .. import ops
    return _extreme("max", data, kwargs, "max", lambda a, b: ops.maximum(a, b))


def _min_g(*data, **kwargs):
    """min(...) with MindSpore's graph semantics for tensors (see the module note)."""
    if not _tracing() or not data:
        return _min(*data, **kwargs)
    from .. import ops
    return _extreme("min", data, kwargs, "min", lambda a, b: ops.minimum(a, b))


def _sum_g(iterable, /, start=0):
    """sum(iterable, start=0): a Tensor sums along its first dimension (start + t.sum(0)), as MindSpore's graph sum."""
    if not _tracing():
        return _sum(iterable, start)
    if isinstance(iterable, Tensor):
        _iter_tensor(iterable, "sum")
        return start + iterable.sum(0)
    if isinstance(iterable, dict):
        iterable = tuple(iterable)
    return _sum(iterable, start)


def _truth(fname, x, reduce_all):
    from .. import ops
    if isinstance(x, Tensor):
        _iter_tensor(x, fname)
        if x.ndim >= 2:
            raise ValueError(f"For '{fname}', the truth value of each row of a tensor of shape {list(x.shape)} is "
                             f"ambiguous; use ops.{fname}(x) to reduce every element.")
        if x.shape[0] == 0:
            return reduce_all
        return ops.all(x) if reduce_all else ops.any(x)
    items = tuple(x.keys()) if isinstance(x, dict) else tuple(x)
    tensors = [v for v in items if isinstance(v, Tensor)]
    if not tensors:
        return (_all if reduce_all else _any)(items)
    # Python values decide now; tensors (one element each) are reduced in the graph.
    rest = [v for v in items if not isinstance(v, Tensor)]
    if reduce_all and not _all(rest):
        return False
    if not reduce_all and _any(rest):
        return True
    flags = []
    for t in tensors:
        _one_element(t, fname)
        flags.append(ops.cast(ops.reshape(t, ()), _bool_dtype()))
    out = flags[0]
    for f in flags[1:]:
        out = ops.logical_and(out, f) if reduce_all else ops.logical_or(out, f)
    return out


def _bool_dtype():
    from ..common import dtype as mstype
    return mstype.bool_


def _all_g(iterable, /):
    """all(iterable): a Tensor (1-D) reduces to a bool 0-d tensor; tensors in a sequence are combined in the graph."""
    if not _tracing():
        return _all(iterable)
    return _truth("all", iterable, True)


def _any_g(iterable, /):
    """any(iterable): a Tensor (1-D) reduces to a bool 0-d tensor; tensors in a sequence are combined in the graph."""
    if not _tracing():
        return _any(iterable)
    return _truth("any", iterable, False)


# --------------------------------------------------------------------------------------------- printing
def _number_text(v):
    """A Python number as MindSpore's graph print shows it: bools as 1/0, floats as C's %g (1.0 -> 1)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return "%g" % v
    return str(v)


def _is_number(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, Tensor)


def _print_lines(v, tensors, out, flat=False):
    """Appends the printed lines of one print() argument (MindSpore's graph print layout) to `out`; each Tensor
    becomes the placeholder \x1f (formatted at run time) and is appended to `tensors`."""
    if isinstance(v, Tensor):
        tensors.append(v)
        out.append("\x1f")
    elif _is_symint(v):  # a size of a dynamic dimension: its run-time value (a constant the dynamic compiler fits)
        tensors.append(_symint_tensor(v))
        out.append("\x1f")
    elif isinstance(v, _GraphText()):  # an f-string of graph tensors: \x1e slots, str(tensor) at run time
        text = []
        for p in v.pieces:
            if isinstance(p, Tensor):
                tensors.append(p)
                text.append("\x1e")
            else:
                text.append(str(p).replace("\x1f", " ").replace("\x1d", " ").replace("\x1e", " "))
        out.append("".join(text))
    elif isinstance(v, str):
        out.append(v.replace("\x1f", " ").replace("\x1d", " ").replace("\x1e", " "))
    elif v is None or _is_number(v):
        out.append("None" if v is None else _number_text(v))
    elif isinstance(v, (tuple, list, dict)):
        items = tuple(v.values()) if isinstance(v, dict) else tuple(v)
        if items and not flat and _all(_is_number(i) for i in items):
            if _any(_is_symint(i) for i in items) and not _any(isinstance(i, float) for i in items):
                slots = []  # a shape with dynamic sizes: (\x1f, 3), each slot the run-time size
                for i in items:
                    if _is_symint(i):
                        tensors.append(_symint_tensor(i))
                        slots.append("\x1f")
                    else:
                        slots.append(_number_text(i))
                out.append("(" + ", ".join(slots) + ")")
            elif _any(isinstance(i, float) for i in items):  # printed as a float tensor's values
                out.append("(" + " ".join("%15.8e" % i for i in items) + ")")
            else:
                out.append("(" + ", ".join(_number_text(i) for i in items) + ")")
        else:  # strings, tensors, nested sequences: one line each
            for i in items:
                _print_lines(i, tensors, out, True)
    else:
        out.append(str(v).replace("\x1f", " ").replace("\x1e", " "))


def _is_symint(v):
    from .symint import SymInt
    return isinstance(v, SymInt)


def _symint_tensor(v):
    """A SymInt (a dynamic size while tracing) as a 0-d int64 tensor: a constant of each probe trace, which the
    dynamic-shape compiler fits to the run-time size, so print shows the size of each run (as MindSpore)."""
    import numpy as np
    return Tensor(np.array(int(v), np.int64))


def _print_g(*values, sep=" ", end="\n", file=None, flush=False):
    """print(...) in compiled code: a Print node of the graph, so it prints on every run of the compiled graph, in
    program order, with that run's tensor values. As MindSpore's graph mode, each argument prints on its own line
    (a tuple/list/dict of numbers on one line as `(1, 2)`, other sequences one item per line; Python floats as %g,
    bools as 1/0; a 0-d tensor as its value, other tensors as `Tensor(shape=..., dtype=..., value=...)`).
    `sep` and `end` must keep their defaults and `file` must be None or sys.stdout (TypeError otherwise)."""
    if not _tracing():
        return _print(*values, sep=sep, end=end, file=file, flush=flush)
    if file is not None and file is not sys.stdout:
        raise TypeError(f"For 'print' in a compiled (graph-mode) function, 'file' must be None or sys.stdout (the "
                        f"graph prints to standard output at run time), but got {file!r}.")
    if sep not in (" ", None) or end not in ("\n", None):
        raise TypeError(f"For 'print' in a compiled (graph-mode) function, 'sep' and 'end' are not supported (each "
                        f"argument prints on its own line, as in MindSpore's graph mode), but got sep={sep!r}, "
                        f"end={end!r}. Build the text with str.join / an f-string instead.")
    tensors, lines = [], []
    for v in values:
        _print_lines(v, tensors, lines)
    _kernels.print_("\x1d" + "\n".join(lines), tensors)  # \x1d: MindSpore's graph-print tensor format (print.cpp)


def _GraphText():
    from .graph_python import GraphText
    return GraphText


def write_text_slots(text, tensors):
    """The print sink of texts with '\x1e' slots (src/ops/print.cpp): each slot becomes str() of the next tensor (a
    kiln Tensor of the run-time value), and the text goes to sys.stdout. A text starting with '\x1c' is a summary
    op's channel (kiln/ops/summary_ops.py): its tensor goes to the summary cache instead."""
    if text[:1] == "\x1c":
        from ..ops.summary_ops import _deliver
        if _deliver(text, tensors):
            return
    parts = text.split("\x1e")
    out = [parts[0]]
    for p, t in _zip(parts[1:], tensors):
        out.append(str(t if isinstance(t, Tensor) else Tensor(t)))
        out.append(p)
    sys.stdout.write("".join(out))


class _TypeLike(type):
    """Metaclass of the overlay's range/zip/map/filter/enumerate: calling one runs the graph version, while
    `isinstance(v, range)` and `issubclass(C, zip)` still test Python's type (these built-ins are classes)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._python_type)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls._python_type)

    def __repr__(cls):
        return repr(cls._python_type)


def _type_like(python_type, graph_fn):
    def __new__(cls, *args, **kwargs):
        return graph_fn(*args, **kwargs)
    return _TypeLike(python_type.__name__, (), {"_python_type": python_type, "__new__": __new__,
                                                "__doc__": graph_fn.__doc__})


OVERLAY = dict(_bi.__dict__)
OVERLAY.update(range=_type_like(_range, _range_g), zip=_type_like(_zip, _zip_g),
               enumerate=_type_like(_enumerate, _enumerate_g), map=_type_like(_map, _map_g),
               filter=_type_like(_filter, _filter_g), max=_max_g, min=_min_g, sum=_sum_g, all=_all_g, any=_any_g,
               print=_print_g)


def materialize(out):
    """The output of a traced function with lazy Python iterables made concrete, as MindSpore's graph mode returns
    them: a generator (a generator expression) and a filter object become lists; map/zip/enumerate/reversed objects
    and ranges (made by helper code that kept Python's built-ins) become tuples.
    Tuples, lists and dicts are walked; anything else is returned as is."""
    if isinstance(out, types.GeneratorType):
        return [materialize(v) for v in out]
    if isinstance(out, (_map, _zip, _enumerate, _range, reversed)):
        return tuple(materialize(v) for v in out)
    if isinstance(out, _filter):
        return [materialize(v) for v in out]
    if type(out) in (tuple, list):
        items = [materialize(v) for v in out]
        if _all(a is b for a, b in _zip(items, out)):
            return out  # unchanged: the same object (a returned global list stays that list)
        return type(out)(items)
    if type(out) is dict:
        items = {k: materialize(v) for k, v in out.items()}
        return out if _all(items[k] is v for k, v in out.items()) else items
    return out


# ---------------------------------------------------------------------------------------------- functions
class trace_scope:
    """Context manager around one trace (nestable): overlay globals made inside are shared per module and dropped
    when the outermost scope ends."""

    def __enter__(self):
        depth = getattr(_local, "depth", 0)
        if depth == 0:
            _local.copies = {}
        _local.depth = depth + 1
        return self

    def __exit__(self, *exc):
        _local.depth -= 1
        if _local.depth == 0:
            _local.copies = None
        return False


def _overlay_globals(g):
    copies = getattr(_local, "copies", None)
    if copies is None:  # no trace scope (a trace started by other code): one copy for this call
        new = dict(g)
        new["__builtins__"] = OVERLAY
        return new
    hit = copies.get(id(g))
    if hit is not None and hit[0] is g:
        return hit[1]
    new = dict(g)
    new["__builtins__"] = OVERLAY
    copies[id(g)] = (g, new)
    return new


def graph_function(fn):
    """`fn` with the graph built-ins (module note [graph built-ins]): a plain Python function (or a bound method of
    one) becomes a function with the same code, closure, defaults and attributes whose built-ins are OVERLAY. Any
    other callable (a Cell, a JitFunction, a builtin, functools.partial) is returned unchanged."""
    if isinstance(fn, types.MethodType):
        f = graph_function(fn.__func__)
        return fn if f is fn.__func__ else types.MethodType(f, fn.__self__)
    if type(fn) is not types.FunctionType:
        return fn
    g = fn.__globals__
    if g.get("__builtins__") is OVERLAY:
        return fn
    new = types.FunctionType(fn.__code__, _overlay_globals(g), fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    if fn.__dict__:
        new.__dict__.update(fn.__dict__)
    return new


def call(fn, args, kwargs):
    """Calls fn(*args, **kwargs), with the graph built-ins while a trace is active."""
    if _tracing():
        fn = graph_function(fn)
    return fn(*args, **kwargs)


# ----------------------------------------------------------------------------------------- attribute writes
def attribute_writes(roots):
    """[(object, attribute name, symbolic tensor)] at the end of a trace: the attributes of the Cells in `roots`
    (with their sub-cells) and of the @jit_class objects those Cells hold that were set, while tracing, to tensors
    computed in the graph (`self.attr = x + 1` in construct). The compiled function returns these tensors as extra
    outputs and sets the attributes to them after every run, as MindSpore does."""
    from ..nn.cell import Cell
    from ..common.parameter import Parameter
    out, seen = [], set()

    def scan(obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for name, v in list(getattr(obj, "__dict__", {}).items()):
            if isinstance(v, Tensor) and v._symbolic and not isinstance(v, Parameter):  # (Parameters: assign)
                out.append((obj, name, v))
            elif getattr(type(v), "__ms_class__", False) and not isinstance(v, type):
                scan(v)

    for root in roots:
        if isinstance(root, Cell):
            for _, c in root.cells_and_names():
                scan(c)
    return out


# ------------------------------------------------------------------------------------- LAX: Python value reads
_VALUE_READS = ("int() of a tensor's value", "float() of a tensor's value", "item() of a tensor's value",
                "asnumpy() of a tensor inside a compiled")
# Ops whose output shape depends on the input's values (NonZero and what uses it: masked_select, argwhere, nonzero;
# unique, unique_consecutive; indexing with a Bool mask computed in the graph). Their trace-time errors (RuntimeError,
# ValueError, IndexError) carry one of these phrases.
_DYNAMIC_SHAPES = ("output shape depends on", "shape depends on the data", "shape depends on its value")
_KILN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EagerOnly(RuntimeError):
    """Raised while tracing by a Kiln construct that runs in PyNative only (an AutoParallel call, a PipelineCell with
    pipeline_stages > 1): the jit function (or Graph-mode Cell) being compiled then runs in PyNative for this
    signature, with one RuntimeWarning, whatever jit_syntax_level is (runs_eagerly). MindSpore compiles these; Kiln
    gives the same values without compiling."""


class EagerEntry:
    """A compile-cache entry of a signature that runs in PyNative (see runs_eagerly): no graph, no executable."""
    executable = None
    graph = graph_before = None
    from_disk = False

    def __init__(self, name, why, why_warning=None):
        self.name = name
        self.why = why
        self.why_warning = why_warning  # the RuntimeWarning's text (runs_eagerly), issued by warn_eager
        self._used = 0
        self._fast_keys = []
        self._pins = []

    def __repr__(self):
        return f"EagerEntry({self.name}: {self.why})"


def runs_eagerly(exc, name):
    """True when a trace of `name` failed with `exc` because the Python code reads a tensor's value (x.asnumpy(),
    int(x), float(x), x.item() on a value computed in the graph: a RuntimeError), or calls an op whose output shape
    depends on the values (unique, nonzero, masked_select, argwhere, x[mask] with a mask computed in the graph: the
    RuntimeError, ValueError or IndexError those raise while tracing), and context jit_syntax_level is LAX
    (MindSpore's default, where such code runs in the Python interpreter at run time, and its dynamic-shape ops
    compile): the function then runs in PyNative for this signature — the same values, not compiled — with one
    RuntimeWarning naming the line: returned here as its text (warn_eager issues it, once per signature, from the
    thread whose EagerEntry enters the compile cache). An EagerOnly error runs eagerly at either level. Under STRICT
    (and for every other error) None: the error propagates."""
    from .. import context
    if isinstance(exc, EagerOnly):
        return (f"Kiln: '{name}' runs in PyNative mode (not compiled) for these argument types: "
                f"{str(exc).splitlines()[0]}")
    if context._context.get("jit_syntax_level") != context.LAX:
        return None
    msg = str(exc)
    if isinstance(exc, RuntimeError) and _any(m in msg for m in _VALUE_READS):
        what = "reads a tensor's value in Python"
        fix = "Keep the value a Tensor to compile it"
    elif isinstance(exc, (RuntimeError, ValueError, IndexError)) and _any(m in msg for m in _DYNAMIC_SHAPES):
        op = re.search(r"For '([^']+)'", msg)
        what = ("calls " + (f"'{op.group(1)}'" if op else "indexing with a Bool tensor") +
                ", whose output shape depends on tensor values,")
        fix = "Keep shapes static (ops.select(mask, x, other), a padded result) to compile it"
    else:
        return None
    where = "?"
    for fr in traceback.extract_tb(exc.__traceback__):
        if not os.path.abspath(fr.filename).startswith(_KILN_DIR + os.sep):
            where = f"{fr.filename}:{fr.lineno} ({(fr.line or '').strip()})"
    return (f"Kiln: '{name}' {what} at {where}; with jit_syntax_level=LAX it runs in PyNative mode (not compiled) "
            f"for these argument types. {fix}, or set_context(jit_syntax_level=STRICT) to get an error instead.")


def warn_eager(entry):
    """Issues the RuntimeWarning of an EagerEntry (runs_eagerly's text), pointing at the first caller outside Kiln.
    Called once per entry, by the thread that put it into the compile cache: threads that meet the same new
    signature at once trace it each, but only one entry is kept, so one warning is printed."""
    f, level = sys._getframe(0), 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_KILN_DIR + os.sep):
        f, level = f.f_back, level + 1
    warnings.warn(entry.why_warning, RuntimeWarning, stacklevel=level)
