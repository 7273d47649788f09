"""`kiln.jit`: compiles a Python function into a graph that the C++ engine runs (Graph mode).

The function is traced once per signature with symbolic tensors: every op call records a node (the same op
definitions and bprops as PyNative), Python values and `self.training` are fixed at trace time and Python control
flow on them unrolls. The graph is verified, optimized (kiln._core.Graph.optimize: DCE, CSE, constant folding,
simplification, fusion) and lowered to a flat instruction list run with no Python per op.

Cache key: (input shapes/dtypes, non-tensor arguments, the cells' training flags, mixed-precision level, device).
A new key traces and compiles a new graph; `input_signature` fixes the key up front."""
import functools
import os
import threading
import time

from .._loader import _core
from .. import context
from .tensor import Tensor
from . import seed as _seed

_tensor_signature = _core._tensor_signature
_train_state = [0]  # bumped whenever a Cell's training flag changes: part of every cache key
_lock = threading.Lock()


def _bump_train_state():
    _train_state[0] += 1


class _Leaf:
    """Marks a tensor position in a flattened structure."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<tensor {self.index}>"


def _flatten(obj, tensors):
    """Structure of `obj` with every Tensor replaced by a _Leaf (tensors appended to `tensors`)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
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
    if isinstance(struct, tuple):
        return tuple(_unflatten(v, tensors) for v in struct)
    if isinstance(struct, list):
        return [_unflatten(v, tensors) for v in struct]
    if isinstance(struct, dict):
        return {k: _unflatten(v, tensors) for k, v in struct.items()}
    return struct


def _key_of(struct):
    """A hashable key for the non-tensor parts of an argument structure."""
    if isinstance(struct, _Leaf):
        return ("T",)
    if isinstance(struct, (tuple, list)):
        return (type(struct).__name__,) + tuple(_key_of(v) for v in struct)
    if isinstance(struct, dict):
        return ("dict",) + tuple((k, _key_of(v)) for k, v in sorted(struct.items(), key=lambda kv: repr(kv[0])))
    try:
        hash(struct)
        return (type(struct).__name__, struct)
    except TypeError:
        return (type(struct).__name__, id(struct))


class CompiledGraph:
    """One compiled signature of a jit function: the graph before and after the passes, and the executable."""

    def __init__(self, name, graph_before, graph, executable, pass_log, compile_seconds, out_struct):
        self.name = name
        self.graph_before = graph_before
        self.graph = graph
        self.executable = executable
        self.pass_log = pass_log
        self.compile_seconds = compile_seconds
        self._out_struct = out_struct

    @property
    def planned_peak_bytes(self):
        """Peak bytes of intermediate buffers under the executor's liveness plan."""
        return self.executable.planned_peak_bytes

    def __repr__(self):
        return (f"CompiledGraph({self.name}: {self.graph_before.num_nodes} → {self.graph.num_nodes} nodes, "
                f"compiled in {self.compile_seconds * 1e3:.1f} ms)")


class JitFunction:
    """A function compiled per signature (see kiln.jit). `graphs` lists the compiled signatures; `trace_count`
    counts traces (a cache hit does not trace)."""

    def __init__(self, fn, input_signature=None, name=None, key_extra=None):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", getattr(fn, "__name__", "fn"))
        self.input_signature = input_signature
        self._key_extra = key_extra
        self._cache = {}
        self._fast = {}  # (tensor signature, train state, device) -> entry, for calls with positional Tensors only
        self.trace_count = 0

    @property
    def graphs(self):
        """The CompiledGraph of every signature compiled so far, in compile order."""
        return list(self._cache.values())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        bound = self.__dict__.get("_bound")
        if bound is None:
            bound = self.__dict__["_bound"] = {}
        jf = bound.get(id(obj))
        if jf is None:
            jf = JitFunction(self.fn.__get__(obj, objtype), self.input_signature, self.name)
            bound[id(obj)] = jf
        return jf

    def __call__(self, *args, **kwargs):
        # Inside another compiled function: inline. Under a PyNative grad transform (value_and_grad of a function
        # that calls this one): run eagerly, so that the tape sees the ops and gradients flow through.
        if _core.tracing() or _core.grad_level() > 0:
            return self.fn(*args, **kwargs)
        if not kwargs and self._key_extra is None:
            sig = _tensor_signature(*args)
            if sig is not None:  # fast path: positional Tensors only
                entry = self._fast.get((sig, _train_state[0], context._context["device_target"], _seed._global_seed))
                if entry is not None:
                    out = entry.executable.run(list(args))
                    return _unflatten(entry._out_struct, out)
        tensors = []
        struct = _flatten((args, kwargs), tensors)
        key = (_key_of(struct), tuple((t.shape, t.dtype) for t in tensors), _train_state[0],
               context.get_context("device_target"), self._key_extra() if self._key_extra else None,
               _seed._global_seed)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile(struct, tensors, key)
            if not kwargs and all(isinstance(a, Tensor) for a in args):
                self._fast[(_tensor_signature(*args), key[2], key[3], key[5])] = entry
        outs = entry.executable.run(tensors)
        return _unflatten(entry._out_struct, outs)

    def _compile(self, struct, tensors, key):
        if self.input_signature is not None:
            _check_signature(self.input_signature, tensors, self.name)
        t0 = time.perf_counter()
        self.trace_count += 1
        with _core.Trace(self.name) as tr:
            sym = [tr.input(t.shape, t.dtype) for t in tensors]
            args, kwargs = _unflatten(struct, sym)
            out = self.fn(*args, **kwargs)
            out_tensors = []
            out_struct = _flatten(out, out_tensors)
            graph = tr.finish(out_tensors)
        before = graph.copy()
        log = graph.optimize()
        exe = _core.Executable(graph)
        entry = CompiledGraph(self.name, before, graph, exe, log, time.perf_counter() - t0, out_struct)
        self._cache[key] = entry
        _save_graphs(entry, len(self._cache))
        return entry


def _check_signature(signature, tensors, name):
    sig = list(signature) if isinstance(signature, (tuple, list)) else [signature]
    if len(sig) != len(tensors):
        raise ValueError(f"For jit '{name}', input_signature has {len(sig)} tensors but the call passes "
                         f"{len(tensors)}.")
    for i, (s, t) in enumerate(zip(sig, tensors)):
        shape_ok = len(s.shape) == len(t.shape) and all(a is None or a == -1 or a == b for a, b in zip(s.shape, t.shape))
        if s.dtype != t.dtype or not shape_ok:
            raise ValueError(f"For jit '{name}', argument {i} is {t.dtype}{list(t.shape)} but input_signature says "
                             f"{s.dtype}{list(s.shape)}.")


def _save_graphs(entry, index):
    level = context.get_context("save_graphs")
    if not level:
        return
    path = context.get_context("save_graphs_path")
    os.makedirs(path, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in entry.name)
    for tag, g in (("before", entry.graph_before), ("after", entry.graph)):
        base = os.path.join(path, f"{safe}_{index}_{tag}")
        with open(base + ".ir", "w") as f:
            f.write(g.to_text())
            if tag == "after":
                f.write("\n# passes: " + "; ".join(entry.pass_log))
                f.write(f"\n# planned peak bytes: {entry.planned_peak_bytes}\n")
        with open(base + ".dot", "w") as f:
            f.write(g.to_dot())


def jit(function=None, *args, input_signature=None, hash_args=None, jit_config=None, compile_once=False,
        capture_mode="ast", jit_level="O1", dynamic=0, fullgraph=False, backend="", **options):
    """Compiles `function` into a graph run by the C++ engine (usable as `@jit` or `@jit(...)`).

    Accepts both MindSpore spellings: 2.2's `jit(fn=None, input_signature=None, hash_args=None, jit_config=None,
    compile_once=False)` and 2.6+'s `jit(function=None, *, capture_mode, jit_level, dynamic, fullgraph, backend)`;
    options other than input_signature do not change Kiln's compilation.

    Returns a JitFunction: calling it traces `function` once per signature (input shapes/dtypes, non-tensor
    arguments, training flags, device) and runs the compiled graph. Inside another compiled function it is inlined;
    called under a PyNative value_and_grad/grad, it runs eagerly so that gradients flow through it (compile the
    whole step, gradients included, to get both).
    Raises (at trace time) the op's error with the user's file:line for shape/dtype errors, and RuntimeError for
    `if`/`while`/bool() on a tensor's value (use ops.select / ops.where).
    """
    if args and input_signature is None and not isinstance(args[0], str):
        input_signature = args[0]

    def wrap(fn):
        if isinstance(fn, JitFunction):
            return fn
        return JitFunction(fn, input_signature)

    if function is None:
        return wrap
    return wrap(function)


def symbolic_error(what):
    """The error for reading a tensor's value while compiling, naming the user's line."""
    loc = _core._user_location()
    return RuntimeError(
        f"{what} of a tensor's value is not supported in a compiled (graph-mode) function, at {loc}: the value is "
        "not known while compiling. Compute both branches and choose with ops.select(cond, x, y) / ops.where, or "
        "run this code in PyNative mode (set_context(mode=PYNATIVE_MODE)). Control flow on tensor values is not "
        "compiled yet.")
