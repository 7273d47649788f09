"""MindSpore's module layout of `mindspore.ops.operations.<sub>` and `mindspore.ops.function.<sub>`, as modules that
re-export Kiln's one definition of each name.

Real MindSpore code imports Primitive classes and functions from where MindSpore keeps them
(`from mindspore.ops.operations.math_ops import MatMul`, `from mindspore.ops.operations import _grad_ops as G`,
`from mindspore.ops.function.math_func import matmul`). Each such Kiln module (kiln/ops/operations/<sub>.py,
kiln/ops/function/<sub>.py) calls `reexport`, which binds in it every name that MindSpore 2.10 keeps in that module
(the table in _ms_layout_table.py, generated from MindSpore by tools/gen_ms_layout.py) and that Kiln has:

- operations.<sub>: the attribute of `kiln.ops.operations` (P) of that name, when it is a class (the Primitive
  classes and ReduceOp): `kiln.ops.operations.math_ops.MatMul is kiln.ops.operations.MatMul`.
- function.<sub>: the attribute of `kiln.ops` of that name, when it is neither a class nor a module:
  `kiln.ops.function.math_func.matmul is kiln.ops.matmul`.

There is never a second implementation: the submodules hold references only (tests/python/test_ms_module_layout.py
checks that every name is the very object of kiln.ops). A name MindSpore keeps in the module that Kiln does not
implement raises AttributeError saying so, e.g. "module 'kiln.ops.operations._grad_ops' has no attribute
'ReluGrad': MindSpore 2.10.0 has mindspore.ops.operations._grad_ops.ReluGrad; Kiln does not implement it"; so
`from mindspore.ops.operations import _grad_ops as G` at the top of a file imports, and only the line that uses a
missing class fails, naming it.

The submodules are imported at the end of kiln/ops/__init__.py, once kiln.ops is assembled, so a Primitive class
or function added to kiln.ops anywhere appears in the submodule where MindSpore keeps it without any edit here.
"""
import builtins
import importlib
import types

from . import _ms_layout_table as _table


def _missing_attribute(module_name, ms_module, known):
    """The module-level __getattr__ of a layout module: AttributeError naming MindSpore's module for the names
    MindSpore keeps there that Kiln lacks; Python's usual AttributeError for any other name."""
    def __getattr__(name):
        if name in known:
            raise AttributeError(f"module '{module_name}' has no attribute '{name}': MindSpore "
                                 f"{_table.MINDSPORE_VERSION} has {ms_module}.{name}; Kiln does not implement it")
        raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
    return __getattr__


def reexport(namespace, package, sub):
    """Binds into `namespace` (a layout module's globals()) the names MindSpore keeps in
    `mindspore.ops.<package>.<sub>` that Kiln has, as the objects of kiln.ops (see the module docstring).

    package: "operations" or "function"; sub: the submodule name ("math_ops", "math_func", ...).
    Sets the module's __all__ (the bound names, sorted) and __getattr__ (the AttributeError for the names MindSpore
    keeps there that Kiln lacks). Raises KeyError for a submodule not in the table."""
    ops = importlib.import_module("kiln.ops")
    if package == "operations":
        names, source = _table.OPERATIONS[sub].split(), ops.operations

        def wanted(v):
            return isinstance(v, type)
    elif package == "function":
        names, source = _table.FUNCTION[sub].split(), ops

        def wanted(v):
            return not isinstance(v, (type, types.ModuleType)) and callable(v)
    else:
        raise ValueError(f"reexport: package must be 'operations' or 'function', but got {package!r}.")
    bound = []
    for name in names:
        value = getattr(source, name, None)
        if value is not None and wanted(value):
            namespace[name] = value
            bound.append(name)
    ms_module = f"mindspore.ops.{package}.{sub}"
    namespace["__getattr__"] = _missing_attribute(namespace["__name__"], ms_module, frozenset(names) - set(bound))
    namespace["__all__"] = bound


_BUILTINS = frozenset(vars(builtins))
OPERATIONS_MODULES = tuple(_table.OPERATIONS)
FUNCTION_MODULES = tuple(_table.FUNCTION)


def import_all():
    """Imports every layout submodule (called at the end of kiln/ops/__init__.py, so that `P.math_ops` and
    `kiln.ops.function.math_func` are attributes as in MindSpore) and gives `kiln.ops.function` the functions its
    submodules hold (as MindSpore's package holds all of them), except the ones named like a Python built-in that
    the module does not define itself (range, slice, round, all, any: its own code calls the built-ins; they are in
    the submodules and kiln.ops). `kiln.ops.function.grad` stays the function `grad`, not the submodule of that
    name, as in MindSpore."""
    ops = importlib.import_module("kiln.ops")
    function = ops.function
    for sub in OPERATIONS_MODULES:
        importlib.import_module(f"kiln.ops.operations.{sub}")
    for sub in FUNCTION_MODULES:
        module = importlib.import_module(f"kiln.ops.function.{sub}")
        for name in module.__all__:
            # (not over a Python built-in: kiln/ops/function/__init__.py's own code calls range(), slice(), ...)
            if not hasattr(function, name) and name not in _BUILTINS:
                setattr(function, name, getattr(module, name))
    for sub in FUNCTION_MODULES:  # a function named like a submodule (grad) is the function, as in MindSpore
        value = getattr(ops, sub, None)
        if value is not None and not isinstance(value, types.ModuleType) and callable(value):
            setattr(function, sub, value)
