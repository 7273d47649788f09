"""Names that survive a process: how the compile cache on disk finds a graph's captures again (docs/compile_cache.md).

A compiled graph reads Parameters, optimizer state and Cell tensor attributes by reference ("captures"). In a new
process those are different objects, so a graph on disk names each capture by a *path* from the jit function:

* the walk starts at the JitFunction: the instance a method is bound to (`self`), the function's closure variables
  (`c:<name>`), defaults (`d:`) and the globals its code names (`g:<name>`, nested code objects included); it
  follows what it finds there — functions (closures, defaults, globals, `__wrapped__`), bound methods,
  functools.partial, JitFunctions, lists/tuples/dicts, and the attributes (`a:<name>`) of the user's own objects
  (a config object, a trainer) — up to depth 6, and stops at each Cell; Kiln's own functions are followed through
  their closures only (their globals are Kiln's);
* a capture's name is `<path of a reached Cell>::<name in cell.parameters_and_names()>` for Parameters (optimizer
  moments, global_step and learning_rate are Parameters of the optimizer Cell) or `...::<sub-cell>.<attribute>` for
  a plain Tensor attribute of a Cell.

Tensors reached otherwise (a global plain Tensor, a tensor in a closure) have no name: a graph that reads one is
kept in memory only. A name that two different tensors claim is dropped (never guessed). The same walk gives the
*structure fingerprint* that keys a file: for every reached Cell and sub-cell its class, `training` flag, plain
Python attributes (bool/int/float/str/None and short tuples/lists/dicts of them) and its Parameters' names, shapes,
dtypes and requires_grad; plus every plain value met on the walk (closure values, defaults, globals, attributes of
config objects). Two processes with different network configurations (has_bias, dropout rate, hidden size,
set_train, a `scale` in a closure, `cfg.num_layers`) therefore never share a file."""
import functools
import types

_MAX_DEPTH = 6
_SIMPLE = (type(None), bool, int, float, str)
# Attributes Kiln sets lazily as run-time caches (not configuration): left out of the fingerprint so that an entry
# compiled before a Cell's first call and one compiled after it share a file.
_VOLATILE = frozenset({"_checked", "_fast", "_host_schedules"})


def _simple(v, depth=0):
    """A plain value: None/bool/int/float/str, or a short tuple/list/dict of them (two levels)."""
    if isinstance(v, _SIMPLE):
        return True
    if isinstance(v, (tuple, list)) and depth < 2 and len(v) <= 64:
        return all(_simple(x, depth + 1) for x in v)
    if isinstance(v, dict) and depth < 2 and len(v) <= 64:
        return all(isinstance(k, _SIMPLE) and _simple(x, depth + 1) for k, x in v.items())
    return False


def _code_names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


class Walk:
    """The Cells reachable from a jit function, by path, and the plain globals its functions read."""

    def __init__(self, jf):
        from ..nn.cell import Cell
        from .jit import JitFunction
        from .tensor import Tensor
        self._Cell, self._Jit, self._Tensor = Cell, JitFunction, Tensor
        self.cells = {}  # path -> Cell reached by the walk (first path to each Cell)
        self.globals = []  # (path, repr of a plain value)
        self._seen = set()
        self._visit(jf, "", 0)
        # One pass over each reached Cell's tree (Cell.cells_and_names / parameters_and_names are recursive
        # generators: they are read once here and reused by every method below).
        self._trees = {path: (list(cell.cells_and_names()), list(cell.parameters_and_names()))
                       for path, cell in self.cells.items()}
        self.all_cells = {}  # path ("<walk path>" or "<walk path>::<sub-cell name>") -> Cell, sub-cells included
        self.cell_paths = {}  # id(Cell) -> its first path in all_cells
        for path, (subs, _) in self._trees.items():
            for sub_name, sub in subs:
                p = f"{path}::{sub_name}" if sub_name else path
                self.all_cells[p] = sub
                self.cell_paths.setdefault(id(sub), p)

    def _step(self, path, step):
        return f"{path}/{step}" if path else step

    def _visit(self, obj, path, depth):
        if _simple(obj):  # a plain value the traced code may read (closure, global, attribute, default)
            if path:
                self.globals.append((path, repr(obj)))
            return
        if depth > _MAX_DEPTH or id(obj) in self._seen:
            return
        self._seen.add(id(obj))
        if isinstance(obj, self._Cell):
            self.cells[path or "fn"] = obj
            return
        if isinstance(obj, self._Jit):
            target = obj._target() if obj._self_ref is not None else None
            if target is not None:
                self._visit(target, self._step(path, "self"), depth + 1)
            self._visit(obj.fn, path, depth + 1)
            return
        if isinstance(obj, types.MethodType):
            self._visit(obj.__self__, self._step(path, "self"), depth + 1)
            self._visit(obj.__func__, path, depth + 1)
            return
        if isinstance(obj, functools.partial):
            self._visit(obj.func, self._step(path, "func"), depth + 1)
            for i, a in enumerate(obj.args):
                self._visit(a, self._step(path, f"arg{i}"), depth + 1)
            for k in sorted(obj.keywords, key=str):
                self._visit(obj.keywords[k], self._step(path, f"kw:{k}"), depth + 1)
            return
        if isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj[:256]):
                self._visit(v, self._step(path, f"[{i}]"), depth + 1)
            return
        if isinstance(obj, dict):
            for i, (k, v) in enumerate(obj.items()):
                if i >= 256:
                    break
                self._visit(v, self._step(path, f"[{k!r}]"), depth + 1)
            return
        if isinstance(obj, types.FunctionType):
            code = obj.__code__
            for name, cell in zip(code.co_freevars, obj.__closure__ or ()):
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                self._visit(v, self._step(path, "c:" + name), depth + 1)
            for i, v in enumerate(obj.__defaults__ or ()):
                self._visit(v, self._step(path, f"d:{i}"), depth + 1)
            for k, v in sorted((obj.__kwdefaults__ or {}).items()):
                self._visit(v, self._step(path, f"d:{k}"), depth + 1)
            # Kiln's own functions (value_and_grad's wrappers...): their closures hold the user's objects, their
            # globals are Kiln's (covered by Kiln's fingerprint).
            if not (getattr(obj, "__module__", None) or "").startswith("kiln."):
                glb = obj.__globals__
                for name in sorted(_code_names(code, set())):
                    if name in glb:
                        self._visit(glb[name], self._step(path, "g:" + name), depth + 1)
            w = getattr(obj, "__wrapped__", None)
            if w is not None:
                self._visit(w, self._step(path, "w"), depth + 1)
            return
        # Any other object of the user's (a config object, a trainer the jit method is bound to): its plain
        # attributes key the graph and its Cells/functions are followed. Modules, classes, tensors and Kiln's own
        # objects are not entered.
        if isinstance(obj, (types.ModuleType, type, self._Tensor)) or \
                type(obj).__module__.split(".")[0] in ("kiln", "builtins", "numpy"):
            return
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            for i, k in enumerate(sorted(d, key=str)):
                if i >= 256:
                    break
                self._visit(d[k], self._step(path, f"a:{k}"), depth + 1)

    # ------------------------------------------------------------------------------------------------ names
    def _named_tensors(self):
        """(name, tensor) of every Parameter and plain Tensor attribute of the reached Cells."""
        from .tensor import Tensor
        from .parameter import Parameter
        for path, (subs, params) in self._trees.items():
            for name, p in params:
                yield f"{path}::{name}", p
            for sub_name, sub in subs:
                for k, v in vars(sub).items():
                    if isinstance(v, Tensor) and not isinstance(v, Parameter):
                        yield f"{path}::{sub_name + '.' if sub_name else ''}{k}", v

    def tensors_by_name(self):
        """{name: tensor} of every nameable tensor; a name two different tensors claim is left out (ambiguous)."""
        out, bad = {}, set()
        for name, t in self._named_tensors():
            old = out.get(name)
            if old is not None and old._id != t._id:
                bad.add(name)
            out[name] = t
        for name in bad:
            del out[name]
        return out

    def tensor_names(self):
        """{tensor id: name}: the first unambiguous name of each nameable tensor."""
        names = {}
        for name, t in self.tensors_by_name().items():
            names.setdefault(t._id, name)
        return names

    def fingerprint(self):
        """A JSON-able description of the configuration the graph depends on (see the module docstring)."""
        cells = []
        for path, (subs, params) in self._trees.items():
            for sub_name, sub in subs:
                t = type(sub)
                attrs = sorted((k, repr(v)) for k, v in vars(sub).items()
                               if not k.startswith("__") and k not in _VOLATILE and _simple(v))
                cells.append([path, sub_name, f"{t.__module__}.{t.__qualname__}", attrs])
            cells.append([path, "::params", [[n, list(p.shape), str(p.dtype), bool(p.requires_grad)]
                                             for n, p in params]])
        return {"cells": cells, "globals": self.globals}
