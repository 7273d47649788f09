"""Names that survive a process: how the compile cache on disk finds a graph's captures again (docs/compile_cache.md).

A compiled graph reads Parameters, optimizer state and Cell tensor attributes by reference ("captures"). In a new
process those are different objects, so a graph on disk names each capture by a *path* from the jit function:

* the walk starts at the JitFunction: the instance a method is bound to (`self`), the function's closure variables
  (`c:<name>`), defaults (`d:`) and the globals its code names (`g:<name>`, nested code objects included); it
  follows what it finds there — functions (closures, defaults, `__wrapped__`, and for the user's functions the
  globals they name, recursively), bound methods, functools.partial, JitFunctions, lists/tuples/dicts, user classes
  (methods, class attributes), the attributes (`a:<name>`) of objects (a config object, a trainer, a primitive) —
  up to depth 8, and stops at each Cell; then every reached Cell's sub-cells are walked too: their non-plain
  attributes (`<cell path>.<attr>`: a function held as `self.act`, a partial, an array) and their user classes;
* a capture's name is `<path of a reached Cell>::<name in cell.parameters_and_names()>` for Parameters (optimizer
  moments, global_step and learning_rate are Parameters of the optimizer Cell) or `...::<sub-cell>.<attribute>` for
  a plain Tensor attribute of a Cell.

Tensors reached otherwise (a global plain Tensor, a tensor in a closure) have no name: a graph that captures one is
kept in memory only. A name that two different tensors claim is dropped (never guessed). The same walk gives the
*configuration fingerprint* that keys a file (the principle: whatever can change the traced graph without changing
the rest of the key is described here, or the graph stays in memory): for every reached Cell and sub-cell its class,
`training` flag, plain Python attributes and its Parameters' names, shapes, dtypes and requires_grad; plus a
description of every other value met (`Walk.globals`): plain values by repr, functions by module, qualified name and
code digest, C functions by module and name, NumPy arrays / scalars and Tensors outside the Cells' trees by dtype,
shape and content hash (bounded), objects by class and attributes. A value the walk cannot describe (no `__dict__`
and no known type, too large, too deep) raises Unstorable. Two processes with different configurations (has_bias,
hidden size, set_train, a `scale` in a closure, `cfg.num_layers`, `self.act = ops.relu` or `ops.sigmoid`, a global
`MEAN` array, a partial's keyword) therefore never share a file."""
import enum
import functools
import hashlib
import os
import sys
import sysconfig
import types

_MAX_DEPTH = 8  # steps from the function (or from a Cell, for its attributes); a deeper non-plain value: unstorable
_MAX_ITEMS = 1 << 16  # elements of one container walked one by one; longer ones only when all plain (hashed)
_MAX_PLAIN_ITEMS = 1 << 20  # a longer list of plain values: unstorable
_MAX_ARRAY_BYTES = 64 << 20  # arrays / tensors hashed up to this size; larger ones: unstorable
_SIMPLE = (type(None), bool, int, float, str)
# Attributes Kiln sets lazily as run-time caches (not configuration): left out of the fingerprint so that an entry
# compiled before a Cell's first call and one compiled after it share a file.
_VOLATILE = frozenset({"_checked", "_fast", "_host_schedules", "_jit_construct", "_jit_owner"})
# A Cell's own bookkeeping walked elsewhere: sub-cells and Parameters are in its tree (fingerprinted by structure).
_CELL_SKIP = frozenset({"_params", "_cells"})
_KILN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIB_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                          if k in ("stdlib", "platstdlib", "purelib", "platlib")}))


class Unstorable(Exception):
    """This graph (or signature) cannot go to disk; it stays in memory. The message says why."""


def _user_file(path):
    """True for a source file of the user's (not Kiln, not the standard library, not an installed package)."""
    if not path or path.startswith("<"):
        return not path.startswith("<frozen")
    p = os.path.abspath(path)
    return not (p.startswith(_KILN_DIR) or p.startswith(_LIB_DIRS) or
                os.sep + "site-packages" + os.sep in p or os.sep + "dist-packages" + os.sep in p)


def _user_module(mod):
    name = getattr(mod, "__name__", "") or ""
    if name == "__main__":
        return True
    if name.split(".")[0] == "kiln" or name in sys.builtin_module_names:
        return False
    return _user_file(getattr(mod, "__file__", None) or "")


def _user_class(cls):
    mod = sys.modules.get(getattr(cls, "__module__", None) or "")
    return mod is not None and _user_module(mod)


def _simple(v, depth=0):
    """A plain value: None/bool/int/float/str, or a short tuple/list/dict of them (two levels)."""
    if type(v) in _SIMPLE or isinstance(v, _SIMPLE):
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


def _qualname(obj):
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def _array_digest(a, what, path):
    import numpy as np
    a = np.asarray(a)
    if a.dtype.hasobject:
        raise Unstorable(f"{what} of dtype object at {path} cannot be fingerprinted")
    if a.nbytes > _MAX_ARRAY_BYTES:
        raise Unstorable(f"{what} of {a.nbytes} bytes at {path} is larger than the {_MAX_ARRAY_BYTES} bytes the key "
                         "hashes")
    h = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
    return f"{what} {a.dtype.str}{list(a.shape)} {h}"


def code_digest(code):
    """SHA-256 of a code object's bytecode, constants (nested code objects recursively), names and first line: the
    same in every process for the same source (marshal's output is not: it depends on reference counts)."""
    h = hashlib.sha256()

    def add(c):
        h.update(c.co_code)
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars, c.co_firstlineno,
                       c.co_argcount, c.co_kwonlyargcount, c.co_flags)).encode())
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                add(k)
            elif isinstance(k, frozenset):  # its order depends on the process's hash seed
                h.update(repr(sorted(repr(x) for x in k)).encode())
            else:
                h.update(repr(k).encode())
    add(code)
    return h.hexdigest()


_C_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
                types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType)


class Walk:
    """The Cells reachable from a jit function, by path, and a description of every value its code can read
    (`globals`: (path, description) pairs). Raises Unstorable for a value it cannot describe."""

    def __init__(self, jf):
        from ..nn.cell import Cell
        from .jit import JitFunction
        from ..common.tensor import Tensor
        from ..common.parameter import Parameter
        self._Cell, self._Jit, self._Tensor, self._Parameter = Cell, JitFunction, Tensor, Parameter
        self.cells = {}  # path -> Cell reached by the walk (first path to each Cell)
        self.globals = []  # (path, description of a value: repr of a plain value, a function's identity, ...)
        self._seen = {}  # id -> first path of every non-plain value met
        self._keep = []  # the values in _seen, held so that their ids stay theirs during the walk
        self._trees = {}
        self._plain = {}  # id(Cell) -> its plain attributes
        self.all_cells = {}  # path ("<walk path>" or "<walk path>::<sub-cell name>") -> Cell, sub-cells included
        self.cell_paths = {}  # id(Cell) -> its first path in all_cells
        self._visit(jf, "", 0)
        self._expand()

    def _expand(self):
        """Reads each reached Cell's tree once (Cell.cells_and_names / parameters_and_names are recursive generators,
        reused by every method below) and walks every sub-cell's class and non-plain attributes (functions,
        partials, arrays, objects), which may reach further Cells."""
        done = set()
        while True:
            new = [(p, c) for p, c in self.cells.items() if p not in self._trees]
            if not new:
                return
            for path, cell in new:
                subs, params = list(cell.cells_and_names()), list(cell.parameters_and_names())
                self._trees[path] = (subs, params)
                for sub_name, sub in subs:
                    p = f"{path}::{sub_name}" if sub_name else path
                    self.all_cells[p] = sub
                    self.cell_paths.setdefault(id(sub), p)
                    if id(sub) not in self._seen:
                        self._seen[id(sub)] = p
                        self._keep.append(sub)
                    if id(sub) not in done:
                        done.add(id(sub))
                        self._cell_values(sub, p)

    def _cell_values(self, cell, path):
        cls = type(cell)
        if _user_class(cls):
            self._visit(cls, f"{path}#class", 1)
        d = vars(cell)
        plain = self._plain[id(cell)] = []  # (name, repr) of its plain attributes, for fingerprint()
        for k in sorted(d, key=str):
            if k.startswith("__") or k in _VOLATILE or k in _CELL_SKIP:
                continue
            v = d[k]
            if _simple(v):
                plain.append((k, repr(v)))
            elif not isinstance(v, (self._Tensor, self._Cell)):  # tensors: captures (by name); Cells: in the tree
                self._visit(v, f"{path}.{k}", 1)

    def _step(self, path, step):
        return f"{path}/{step}" if path else step

    def _note(self, path, what):
        self.globals.append((path or "fn", what))

    def _visit(self, obj, path, depth):
        if _simple(obj):  # a plain value the traced code may read (closure, global, attribute, default)
            if path:
                self.globals.append((path, repr(obj)))
            return
        first = self._seen.get(id(obj))
        if first is not None:
            self._note(path, "= " + first)
            return
        if depth > _MAX_DEPTH:
            raise Unstorable(f"a {type(obj).__name__} at {path} is more than {_MAX_DEPTH} steps from the function "
                             "(too deep to fingerprint)")
        self._seen[id(obj)] = path or "fn"
        self._keep.append(obj)
        self._visit_new(obj, path, depth)

    def _visit_new(self, obj, path, depth):
        step = self._step
        if isinstance(obj, self._Cell):
            self.cells[path or "fn"] = obj
            return
        if isinstance(obj, self._Jit):
            self._note(path, "jit")
            target = obj._target() if obj._self_ref is not None else None
            if target is not None:
                self._visit(target, step(path, "self"), depth + 1)
            self._visit(obj.fn, step(path, "fn"), depth + 1)
            return
        if isinstance(obj, self._Parameter):  # read by reference (a capture): its identity, not its value
            self._note(path, "parameter " + obj.name)  # (its shape/dtype: in its Cell's tree, or it has no name)
            return
        if isinstance(obj, self._Tensor):  # a tensor outside the Cells' trees: its value may become a constant
            n = 1
            for s in obj.shape:
                n *= s
            if n > _MAX_ARRAY_BYTES:  # (checked before copying it to the host)
                raise Unstorable(f"a Tensor{list(obj.shape)} at {path} is too large to fingerprint")
            from ..common import dtype as mstype
            if obj.dtype == mstype.bfloat16:  # (NumPy has no bfloat16; float32 holds every value exactly)
                self._note(path, _array_digest(obj.astype(mstype.float32).asnumpy(), "tensor bf16", path))
            else:
                self._note(path, _array_digest(obj.asnumpy(), "tensor", path))
            return
        mod = type(obj).__module__
        if mod == "numpy":
            import numpy as np
            if isinstance(obj, np.ndarray):
                self._note(path, _array_digest(obj, "array", path))
                return
            if isinstance(obj, np.generic):
                self._note(path, _array_digest(np.asarray(obj), "scalar", path))
                return
            if isinstance(obj, np.dtype):
                self._note(path, f"dtype {obj.str}")
                return
        if isinstance(obj, enum.Enum):
            self._note(path, f"enum {_qualname(type(obj))}.{obj.name}")
            return
        if isinstance(obj, (bytes, bytearray)):
            self._note(path, f"bytes {hashlib.sha256(obj).hexdigest()}")
            return
        if isinstance(obj, (complex, range, slice)):
            self._note(path, repr(obj))
            return
        if isinstance(obj, types.ModuleType):
            self._note(path, f"module {obj.__name__}")
            return
        if isinstance(obj, types.MethodType):
            self._note(path, "method")
            self._visit(obj.__self__, step(path, "self"), depth + 1)
            self._visit(obj.__func__, step(path, "func"), depth + 1)
            return
        if isinstance(obj, functools.partial):
            self._note(path, f"partial {len(obj.args)} {sorted(map(str, obj.keywords))}")
            self._visit(obj.func, step(path, "func"), depth + 1)
            for i, a in enumerate(obj.args):
                self._visit(a, step(path, f"arg{i}"), depth + 1)
            for k in sorted(obj.keywords, key=str):
                self._visit(obj.keywords[k], step(path, f"kw:{k}"), depth + 1)
            return
        if isinstance(obj, types.FunctionType):
            self._function(obj, path, depth)
            return
        if isinstance(obj, _C_CALLABLES) or type(obj).__name__ in ("nb_func", "nb_method", "ufunc"):
            # C code: its module and name identify it (its library's version is not part of the key)
            self._note(path, f"builtin {_qualname(obj)}")
            owner = getattr(obj, "__self__", None)
            if owner is not None and not isinstance(owner, (types.ModuleType, type)):
                self._visit(owner, step(path, "self"), depth + 1)
            return
        if isinstance(obj, (types.MemberDescriptorType, types.GetSetDescriptorType)):  # a slot of a class
            self._note(path, "slot")
            return
        if isinstance(obj, (staticmethod, classmethod)):
            self._visit(obj.__func__, path, depth + 1)
            return
        if isinstance(obj, property):
            for part in ("fget", "fset"):
                if getattr(obj, part) is not None:
                    self._visit(getattr(obj, part), step(path, part), depth + 1)
            return
        if isinstance(obj, type):
            self._note(path, f"class {_qualname(obj)}")
            if _user_class(obj):  # its methods and class attributes may be read while tracing
                for k in sorted(obj.__dict__, key=str):
                    if not (k.startswith("__") and k.endswith("__")) or k == "__call__":
                        self._visit(obj.__dict__[k], step(path, k), depth + 1)
            return
        if isinstance(obj, (list, tuple)):
            self._sequence(obj, path, depth)
            return
        if isinstance(obj, dict):
            self._mapping(obj, path, depth)
            return
        if isinstance(obj, (set, frozenset)):
            if len(obj) > _MAX_PLAIN_ITEMS or not all(isinstance(v, _SIMPLE) for v in obj):
                raise Unstorable(f"a set at {path} holds values that cannot be fingerprinted")
            self._note(path, "set " + hashlib.sha256(repr(sorted(repr(v) for v in obj)).encode()).hexdigest())
            return
        if mod == "logging" and hasattr(obj, "getEffectiveLevel"):  # a Logger: its calls do not change graphs
            self._note(path, f"logger {getattr(obj, 'name', '?')}")
            return
        # Any other object (a config object, a trainer the jit method is bound to, a Kiln primitive with its
        # attributes): its class and its attributes.
        d = getattr(obj, "__dict__", None)
        if not isinstance(d, dict):
            d = self._slots(obj, path)
        self._note(path, f"object {_qualname(type(obj))}")
        if _user_class(type(obj)):
            self._visit(type(obj), step(path, "class"), depth + 1)
        if len(d) > _MAX_ITEMS:
            raise Unstorable(f"the object at {path} has more than {_MAX_ITEMS} attributes")
        for k in sorted(d, key=str):
            self._visit(d[k], step(path, f"a:{k}"), depth + 1)

    def _slots(self, obj, path):
        """{name: value} of the slots of an instance of a user class with __slots__ and no __dict__."""
        cls = type(obj)
        names = []
        for c in cls.__mro__:
            sl = c.__dict__.get("__slots__", ())
            names += [sl] if isinstance(sl, str) else list(sl)
        if not _user_class(cls) or not names:
            raise Unstorable(f"a {_qualname(cls)} at {path} cannot be fingerprinted")
        return {n: getattr(obj, n) for n in names if n not in ("__weakref__", "__dict__") and hasattr(obj, n)}

    def _function(self, obj, path, depth):
        code = obj.__code__
        self._note(path, f"function {_qualname(obj)} {code_digest(code)}")
        step = self._step
        for name, cell in zip(code.co_freevars, obj.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            self._visit(v, step(path, "c:" + name), depth + 1)
        for i, v in enumerate(obj.__defaults__ or ()):
            self._visit(v, step(path, f"d:{i}"), depth + 1)
        for k, v in sorted((obj.__kwdefaults__ or {}).items()):
            self._visit(v, step(path, f"d:{k}"), depth + 1)
        # The user's functions: the globals their code names (recursively: the functions they call are globals
        # too), and for a global that is a user module, its attributes the code names (`config.hidden`). Kiln's
        # and libraries' functions are followed through their closures only (value_and_grad's wrappers hold the
        # user's function); their globals are their own.
        if _user_file(code.co_filename):
            glb = obj.__globals__
            names = sorted(_code_names(code, set()))
            for name in names:
                if name not in glb:
                    continue
                v = glb[name]
                self._visit(v, step(path, "g:" + name), depth + 1)
                if isinstance(v, types.ModuleType) and _user_module(v):
                    md = vars(v)
                    for attr in names:
                        if attr in md and attr != name:
                            self._visit(md[attr], step(path, f"g:{name}/m:{attr}"), depth + 2)
        w = getattr(obj, "__wrapped__", None)
        if w is not None:
            self._visit(w, step(path, "w"), depth + 1)

    def _sequence(self, obj, path, depth):
        kind = _qualname(type(obj))
        if len(obj) <= _MAX_PLAIN_ITEMS and all(type(v) in _SIMPLE for v in obj):  # one note for plain values
            self._note(path, f"{kind} {len(obj)} " + hashlib.sha256(repr(obj).encode()).hexdigest())
        elif len(obj) <= _MAX_ITEMS:
            self._note(path, f"{kind} {len(obj)}")
            for i, v in enumerate(obj):
                self._visit(v, self._step(path, f"[{i}]"), depth + 1)
        else:
            raise Unstorable(f"a {kind} of {len(obj)} values at {path} is too long to fingerprint")

    def _mapping(self, obj, path, depth):
        kind = _qualname(type(obj))
        if len(obj) <= _MAX_ITEMS:
            self._note(path, f"{kind} {len(obj)}")
            for i, (k, v) in enumerate(obj.items()):
                if isinstance(k, _SIMPLE):
                    self._visit(v, self._step(path, f"[{k!r}]"), depth + 1)
                else:
                    self._visit(k, self._step(path, f"key{i}"), depth + 1)
                    self._visit(v, self._step(path, f"[#{i}]"), depth + 1)
        elif len(obj) <= _MAX_PLAIN_ITEMS and all(isinstance(k, _SIMPLE) and isinstance(v, _SIMPLE)
                                                   for k, v in obj.items()):
            self._note(path, f"{kind} {len(obj)} " + hashlib.sha256(repr(list(obj.items())).encode()).hexdigest())
        else:
            raise Unstorable(f"a {kind} of {len(obj)} entries at {path} is too long to fingerprint")

    # ------------------------------------------------------------------------------------------------ names
    def _named_tensors(self):
        """(name, tensor) of every Parameter and plain Tensor attribute of the reached Cells."""
        from ..common.tensor import Tensor
        from ..common.parameter import Parameter
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
                cells.append([path, sub_name, f"{t.__module__}.{t.__qualname__}", self._plain[id(sub)]])
            cells.append([path, "::params", [[n, list(p.shape), str(p.dtype), bool(p.requires_grad)]
                                             for n, p in params]])
        return {"cells": cells, "globals": self.globals}
