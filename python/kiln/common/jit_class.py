"""`kiln.jit_class`: a user-defined class whose objects compiled functions create, read and call.

Kiln compiles by tracing the Python that runs (kiln/_compiler/capture.py), so instances of any class can be created and
their attributes and methods used inside compiled functions; their methods run at trace time and the tensor ops
they call become nodes of the graph. What `@jit_class` adds is MindSpore's static-graph semantics inside the
methods: while a graph is traced they run with the graph built-ins (range/zip/map/... give tuples, print prints at
every run: kiln/_compiler/graph_builtins.py), as the compiled function itself does. Outside a trace the methods run as
written.
"""
import functools
import inspect
import types

from .. import _engine
from .._compiler import ast_rewrite as _ast_rewrite
from .._compiler import graph_builtins as _graph_builtins


def _graph_method(fn):
    @functools.wraps(fn)
    def method(*args, **kwargs):
        if _engine.tracing():
            # graph built-ins, and the method's tensor-dependent control flow compiled (kiln/_compiler/ast_rewrite.py)
            return _graph_builtins.graph_function(_ast_rewrite.converted(fn))(*args, **kwargs)
        return fn(*args, **kwargs)

    method.__kiln_graph_method__ = True
    return method


def jit_class(cls):
    """Class decorator: objects of `cls` may be created and used inside compiled functions, their methods running
    with the graph semantics of Python built-ins while traced (see the module docstring). Subclasses inherit it.
    Sets `cls.__ms_class__ = True` and returns `cls`.

    Raises:
        TypeError: `cls` is not a class, or is an nn.Cell subclass (a Cell is compiled through its `construct`).
    """
    from ..nn.cell import Cell
    if not inspect.isclass(cls):
        raise TypeError(f"Decorator jit_class can only be used for class type, but got {cls!r}.")
    if issubclass(cls, Cell):
        raise TypeError(f"Decorator jit_class is used for user-defined classes and cannot be used for nn.Cell: "
                        f"{cls}.")
    for name, value in list(vars(cls).items()):
        if isinstance(value, types.FunctionType) and not getattr(value, "__kiln_graph_method__", False):
            setattr(cls, name, _graph_method(value))
        elif isinstance(value, (staticmethod, classmethod)) and isinstance(value.__func__, types.FunctionType):
            setattr(cls, name, type(value)(_graph_method(value.__func__)))
    cls.__ms_class__ = True
    return cls
