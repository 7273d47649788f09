"""`kiln.jit`: compiles a Python function into a graph that the C++ engine runs (Graph mode).

The function is traced once per signature with symbolic tensors: every op call records a node (the same op
definitions and bprops as PyNative), Python values and `self.training` are fixed at trace time and Python control
flow on them unrolls. The graph is verified, optimized (kiln._core.Graph.optimize: DCE, CSE, constant folding,
simplification, fusion) and lowered to a flat instruction list run with no Python per op.

This module is the front of the compiler: `jit` and the JitFunction it returns (binding, the call path, the cache
key, the in-memory cache and its fast paths). A miss goes to the compile cache on disk (disk_cache.py), else to
capture.py (the trace; guards.py notes the Cells it depends on); the result is a CompiledGraph (compiled.py), which
also runs it. structure.py flattens arguments and results to tensors and back.

Cache key: (input shapes/dtypes, non-tensor arguments, the training flags and mixed-precision dtypes (to_float /
kiln.amp) of the cells involved, device, seed).
A new key traces and compiles a new graph; `input_signature` fixes the key up front. With dynamic dimensions
(`Tensor(shape=[None, 10], dtype=...)` in input_signature or Cell.set_inputs) the key holds None for them: one graph
serves every size (kiln/_compiler/dynamic.py, Note [dynamic shapes by probe traces]), with a plan per concrete shape.

Note [the compile cache] (docs/decisions/compile-cache.md):
* Training flags. The key holds the actual `training` flags of the cells a function depends on — its guard
  cells: the Cell a method is bound to, every Cell called while tracing, and the Cells the function names (closure,
  globals), each with its whole sub-tree. Toggling `set_train` back and forth therefore reuses the graphs of the
  first epoch. The flag tuple is memoized per function and recomputed only after some Cell's flag changed (a global
  epoch, bumped after every change), so the fast path pays one integer comparison.
* Bound. Each function keeps at most `cache_size` graphs (jit's argument; default: set_context(jit_cache_size=...),
  32); beyond that the least recently used graph is dropped and re-traced when needed again.
* Lifetime. A jit method bound to an instance lives in that instance's `__dict__` and refers to the instance
  weakly, so dropping a Cell (or a function) drops its graphs; guard cells are weak references too.
* Threads. Lookups are plain dict reads; every mutation of a cache (insert, evict, guard update, trace count)
  happens under the function's lock. Tracing runs outside the lock (a trace is per thread), so two threads may
  compile different signatures of one function at the same time.
* On disk. With set_context(enable_compile_cache=True) (or MS_COMPILER_CACHE_ENABLE=1) a miss first looks for the
  graph in the cache directory (kiln/_compiler/disk_cache.py, docs/compile_cache.md): a usable file is loaded, its
  captures re-bound by name, and no trace happens; otherwise the function is traced and the optimized graph written
  (when every capture can be named)."""
import functools
import threading
import time
import warnings
import weakref

from .. import _engine
from .. import context
from ..common.tensor import Tensor
from ..common import seed as _seed
from ..common import _deferred_init
from . import disk_cache as _disk_cache
from . import dynamic as _dynamic
from . import ast_rewrite as _ast_rewrite
from . import graph_builtins as _graph_builtins
from . import capture as _capture
from .guards import _flags_epoch, _flag_of, _cells_named_by
from .structure import _flatten, _key_of, _aliases, _distinct
from .compiled import CompiledGraph, _clock, _run_entry, _weak_or_strong, _save_graphs

_tensor_signature = _engine._tensor_signature
_DYN_FAST_MAX = 256  # fast-path keys of dynamic-shape graphs kept per function (JitFunction._dyn_fast)


def _default_cache_size():
    return context._context["jit_cache_size"]


def _check_cache_size(size, name):
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"For jit '{name}', the argument 'cache_size' must be int, but got {type(size).__name__}.")
    if size < 1:
        raise ValueError(f"For jit '{name}', the argument 'cache_size' must be >= 1, but got {size}.")
    return size


class JitFunction:
    """A function compiled per signature (see kiln.jit and the module note [the compile cache]).

    `graphs` lists the cached compiled signatures (compile order); `trace_count` counts traces (a cache hit does not
    trace); `disk_loads` counts graphs loaded from the compile cache on disk (no trace); `disk_skipped` is None or
    why a graph could not be written to disk (it stays in memory); `compile_count` counts the graphs compiled by
    tracing (a dynamic-shape graph counts once, though it traces its N_PROBES probe traces, and a new size only
    re-plans it); `cache_size` is the most graphs kept (least
    recently used dropped first); `evictions` counts the graphs dropped so far. Used as a method decorator, each
    instance gets its own JitFunction (and cache), kept in the instance's `__dict__` and bound to the instance
    weakly."""

    def __init__(self, fn, input_signature=None, name=None, key_extra=None, cache_size=None, bound_to=None,
                 signature_source=None):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", getattr(fn, "__name__", "fn"))
        self.input_signature = input_signature
        self._key_extra = key_extra
        self._cache_size = None if cache_size is None else _check_cache_size(cache_size, self.name)
        self._self_ref = None if bound_to is None else weakref.ref(bound_to)
        self._cache = {}  # full key -> CompiledGraph, in compile order
        self._fast = {}  # (tensor signature, flags, device, seed) -> entry, for calls with positional Tensors only
        self._guard = ((), None, ())  # (weakrefs of the guard cells, epoch of the memo, their training flags)
        self._lock = threading.RLock()
        self.trace_count = 0
        self.evictions = 0
        self.disk_loads = 0  # graphs loaded from the compile cache on disk (no trace)
        self.disk_skipped = None  # why the last graph that could not go to disk stayed in memory (None: none)
        self.compile_count = 0  # graphs compiled by tracing (a dynamic-shape graph counts once: dynamic.py)
        # The dynamic-shape Spec of input_signature (None: none or no None dimension), computed now: the registry of
        # placeholder signatures is bounded. Without input_signature, `signature_source` (a Cell's set_inputs) gives
        # the Spec.
        self._sig_spec = _dynamic.spec_of(input_signature)
        self._signature_source = signature_source
        # Fast path of dynamic-shape graphs: (tensor signature, flags, device, seed) -> entry, for calls with positional
        # Tensors only; bounded (cleared when it reaches _DYN_FAST_MAX; the plans themselves live in the entry's LRU).
        self._dyn_fast = {}
        self._pending = {}  # dynamic-shape key being compiled -> its lock (see _compile_shared)

    @property
    def graphs(self):
        """The CompiledGraph of every cached signature, in compile order."""
        with self._lock:
            return [e for e in self._cache.values() if e.executable is not None]

    @property
    def cache_size(self):
        """The most compiled graphs this function keeps (jit's `cache_size`, else context `jit_cache_size`)."""
        return self._cache_size if self._cache_size is not None else _default_cache_size()

    @cache_size.setter
    def cache_size(self, size):
        self._cache_size = _check_cache_size(size, self.name)
        with self._lock:
            self._evict()

    def clear_cache(self):
        """Drops every compiled graph of this function (the next call traces again)."""
        with self._lock:
            self._cache.clear()
            self._fast.clear()
            self._dyn_fast.clear()

    # ----------------------------------------------------------------------------------------- binding
    def __get__(self, obj, objtype=None):
        if obj is None or self._self_ref is not None:
            return self
        d = getattr(obj, "__dict__", None)
        if d is None:  # an instance without __dict__ (slots): a fresh binding, which compiles on every access
            return self._bind(obj)
        bound = d.get("__jit_bound__")
        if bound is None:
            bound = d["__jit_bound__"] = {}
        jf = bound.get(self)
        if jf is None or jf._target() is not obj:  # a copied instance: bind afresh
            jf = bound[self] = self._bind(obj)
        return jf

    def _bind(self, obj):
        try:
            weakref.ref(obj)
        except TypeError:  # not weak-referenceable: hold the bound method (a cycle through obj.__dict__, which
            # the garbage collector frees)
            return JitFunction(self.fn.__get__(obj, type(obj)), self.input_signature, self.name, self._key_extra,
                               self._cache_size)
        return JitFunction(self.fn, self.input_signature, self.name, self._key_extra, self._cache_size,
                           bound_to=obj)

    def _target(self):
        """The instance this function is bound to (None when unbound or when the instance is gone)."""
        ref = self._self_ref
        if ref is None:
            return getattr(self.fn, "__self__", None)
        return ref()

    def __deepcopy__(self, memo):
        # Compiled graphs are not copied: the copy compiles on its first call (bound to the copied instance when
        # the instance is being copied too).
        target = self._target() if self._self_ref is not None else None
        new_target = memo.get(id(target)) if target is not None else None
        if new_target is not None:
            return JitFunction(self.fn, self.input_signature, self.name, self._key_extra, self._cache_size,
                               bound_to=new_target)
        return JitFunction(self.fn, self.input_signature, self.name, self._key_extra, self._cache_size,
                           bound_to=target)

    def _python(self, args, kwargs, eager_graph=False):
        """Runs the Python function itself (eagerly, or traced when a trace is active). `eager_graph`: a LAX-mode eager
        run (it reads tensor values) runs the rewritten code: float()/int() of arrays mean what they compile to."""
        ref = self._self_ref
        # While tracing: the Python built-ins with graph semantics (Note [graph built-ins]), and the function's
        # tensor-dependent control flow compiled (kiln/_compiler/ast_rewrite.py).
        fn = (_graph_builtins.graph_function(_ast_rewrite.converted(self.fn)) if _engine.tracing()
              else _ast_rewrite.converted(self.fn) if eager_graph else self.fn)
        if ref is None:
            return fn(*args, **kwargs)
        obj = ref()
        if obj is None:
            raise ReferenceError(f"For jit '{self.name}', the instance this method was bound to no longer exists.")
        return fn(obj, *args, **kwargs)

    # ----------------------------------------------------------------------------------- training flags
    def _train_flags(self):
        """The training flags of the guard cells (memoized until some Cell's flag changes)."""
        epoch = _flags_epoch[0]  # read before the flags: a change after this read bumps the epoch again
        g = self._guard
        if g[1] == epoch:
            return g[2]
        with self._lock:
            g = self._guard
            flags = tuple(_flag_of(r) for r in g[0])
            self._guard = (g[0], epoch, flags)
        return flags

    def _add_guard_cells(self, recorded):
        """Adds the cells this trace depended on (with their sub-trees) to the guard. Must hold self._lock.
        Returns True when the guard grew (older keys, over fewer flags, can no longer be looked up)."""
        from ..nn.cell import Cell
        roots = []
        target = self._target()
        if isinstance(target, Cell):
            roots.append(target)
        roots += recorded
        roots += _cells_named_by(self.fn)
        refs = list(self._guard[0])
        seen = {id(c) for c in (r() for r in refs) if c is not None}
        for root in roots:
            for _, c in root.cells_and_names():
                if id(c) not in seen:
                    seen.add(id(c))
                    refs.append(weakref.ref(c))
        if len(refs) == len(self._guard[0]):
            return False
        self._guard = (tuple(refs), None, ())
        return True

    # --------------------------------------------------------------------------------------------- calls
    def __call__(self, *args, **kwargs):
        # Inside another compiled function: inline. Under a PyNative grad transform (value_and_grad of a function
        # that calls this one): run eagerly, so that the tape sees the ops and gradients flow through.
        if _engine.tracing() or _engine.grad_level() > 0:
            return self._python(args, kwargs)
        g = self._guard
        flags = g[2] if g[1] == _flags_epoch[0] else self._train_flags()
        spec = self._spec()
        if spec is not None and not kwargs and self._key_extra is None:
            sig = _tensor_signature(*args)
            if sig is not None:
                entry = self._dyn_fast.get((sig, flags, context._context["device_target"], _seed._global_seed))
                if entry is not None:
                    entry._used = next(_clock)
                    if not entry._in_writes or _distinct(args):
                        return _run_entry(entry, args)
        elif not kwargs and self._key_extra is None:
            sig = _tensor_signature(*args)
            if sig is not None:  # fast path: positional Tensors only
                entry = self._fast.get((sig, flags, context._context["device_target"], _seed._global_seed))
                if entry is not None:
                    entry._used = next(_clock)
                    if not entry._in_writes or _distinct(args):  # f(a, a) of a graph writing a: the slow path
                        return _run_entry(entry, args)  # a tuple converts as a list does (no copy in Python)
        entry, tensors, key, hit = self._lookup(args, kwargs, flags)
        if hit:
            entry._used = next(_clock)
            if not kwargs and self._key_extra is None and all(isinstance(a, Tensor) for a in args):
                self._remember_fast(entry, args, key)
        if entry.executable is None:  # jit_syntax_level=LAX, code that reads tensor values: runs in PyNative
            return self._python(args, kwargs, eager_graph=True)
        return _run_entry(entry, tensors)

    def compile(self, *args, **kwargs):
        """Compiles the graph for these arguments (as a call would, into the same cache) WITHOUT running it: a later
        call with arguments of the same signature runs that graph without compiling. Returns the CompiledGraph
        (None when jit_syntax_level=LAX made the function run eagerly). Errors of tracing (a shape mismatch, an
        unsupported construct) are raised here. Inside a function being compiled it is an error (RuntimeError)."""
        if _engine.tracing():
            raise RuntimeError(f"'{self.name}.compile' can not be called inside a function being compiled.")
        g = self._guard
        flags = g[2] if g[1] == _flags_epoch[0] else self._train_flags()
        entry = self._lookup(args, kwargs, flags)[0]
        return entry if isinstance(entry, CompiledGraph) else None

    def _lookup(self, args, kwargs, flags):
        """(entry, the flattened tensors, key, whether the cache held it) for these arguments: the cached entry of
        their signature, compiled on a miss (_compile_for)."""
        tensors = []
        struct = _flatten((args, kwargs), tensors)
        key = self._key(struct, tensors, flags, [])  # pins of a miss: _compile_for keys again with the entry's own
        entry = self._cache.get(key)
        if entry is not None:
            return entry, tensors, key, True
        return self._compile_for(key, struct, tensors, args, kwargs), tensors, key, False

    def _compile_for(self, key, struct, tensors, args, kwargs):
        """Compiles the graph of a cache miss: with dynamic dimensions one graph serves every size, so threads that
        meet it first wait for one compile (_compile_shared); else a trace of this signature."""
        if self._spec() is not None:
            return self._compile_shared(key, struct, tensors, args, kwargs)
        return self._compile(struct, tensors, args, kwargs)

    def _key(self, struct, tensors, flags, pins):
        spec = self._spec()
        if spec is None:
            shapes = tuple((t.shape, t.dtype) for t in tensors)
        else:  # dynamic dimensions: one key (and graph) for every size (the call is checked against the signature)
            shapes = ("dynamic", _dynamic.check_call(spec, tensors, self.name), tuple(t.dtype for t in tensors))
        return (_key_of(struct, pins), shapes, flags,
                context.get_context("device_target"), self._key_extra() if self._key_extra else None,
                _seed._global_seed, _aliases(tensors))

    def _spec(self):
        """The dynamic-shape Spec of the input signature (input_signature, else the Cell's set_inputs), or None when
        it has no dynamic (None) dimension."""
        if self.input_signature is not None:
            return self._sig_spec
        src = self._signature_source
        return None if src is None else src()

    def _remember_fast(self, entry, args, key):
        if entry.executable is None or key[6] is not None:  # an EagerEntry, or a graph for one tensor passed twice
            return
        if isinstance(entry.executable, _dynamic.DynamicExecutable):  # keyed per concrete signature, bounded
            sig = _tensor_signature(*args)
            if sig is not None:
                with self._lock:
                    if self._cache.get(key) is entry:
                        if len(self._dyn_fast) >= _DYN_FAST_MAX:
                            self._dyn_fast.clear()
                        self._dyn_fast[(sig, key[2], key[3], key[5])] = entry
            return
        fk = (_tensor_signature(*args), key[2], key[3], key[5])
        with self._lock:
            if self._cache.get(key) is entry and fk not in self._fast:
                self._fast[fk] = entry
                entry._fast_keys.append(fk)

    def _compile(self, struct, tensors, args, kwargs):
        _deferred_init.materialize_all()  # nn.no_init_parameters(): drawn now, not as writes inside the graph
        spec = self._spec()
        if self.input_signature is not None and spec is None:
            _check_signature(self.input_signature, tensors, self.name)
        t0 = time.perf_counter()
        # (A call passing one tensor twice gets its own graph (key[6]); the disk cache does not key that: memory only.)
        lookup = self._disk_lookup(struct, tensors) if spec is None and _aliases(tensors) is None else None
        recorded = []
        loaded = None
        if lookup is not None:
            try:
                loaded = _disk_cache.load(lookup, recorded)
                if loaded is not None:
                    loaded = loaded + (_engine.Executable(loaded[0]),)
            except Exception as e:  # noqa: BLE001 — the cache must never break a program: compile instead
                warnings.warn(f"Kiln compile cache: could not use {lookup.path} ({type(e).__name__}: {e}); "
                              "compiling.", RuntimeWarning, stacklevel=3)
                recorded.clear()
                loaded = None
        if loaded is not None:  # from the compile cache on disk: no trace
            graph, out_struct, log, in_writes, exe = loaded
            entry = CompiledGraph(self.name, graph, graph, exe, log, time.perf_counter() - t0, out_struct)
            entry._in_writes = in_writes
            entry._post = bool(in_writes)
            entry.from_disk = True
            with self._lock:
                self.disk_loads += 1
        else:
            try:
                if spec is not None:
                    graph, before, out_struct, sources, writes, in_writes, log, exe = \
                        _capture.trace_dynamic(self, struct, spec, recorded)
                else:
                    graph, before, out_struct, sources, writes, in_writes = _capture.trace(
                        self, struct, tensors, recorded, lookup is not None)
            except (RuntimeError, ValueError, IndexError) as e:
                warning = _graph_builtins.runs_eagerly(e, self.name)
                if warning is None:
                    raise
                graph = None
                entry = _graph_builtins.EagerEntry(self.name, str(e).split("\n")[0], warning)
        if loaded is None and graph is not None:
            with self._lock:
                self.compile_count += 1
            if spec is None:
                log = graph.optimize()
                exe = _engine.Executable(graph)
            entry = CompiledGraph(self.name, before, graph, exe, log, time.perf_counter() - t0, out_struct)
            entry._writes = tuple((_weak_or_strong(o), n) for o, n in writes)
            entry._in_writes = in_writes
            entry._post = bool(writes or in_writes)
            if writes and lookup is not None:
                self._note_unstorable("it sets object attributes or writes its input tensors from the graph (kept in "
                                      "memory)")
                lookup = None
            if lookup is not None:
                try:
                    _disk_cache.save(lookup, graph, out_struct, log, recorded, sources, in_writes)
                except _disk_cache.Unstorable as e:
                    self._note_unstorable(str(e))
                except Exception as e:  # noqa: BLE001 — the graph is compiled; only the file is missing
                    self._note_unstorable(f"{type(e).__name__}: {e}")
        with self._lock:
            if self._add_guard_cells(recorded):
                n = len(self._guard[0])
                for old in [k for k in self._cache if len(k[2]) != n]:
                    self._drop(old)
            # The key over the (possibly grown) guard, with the flags this trace saw.
            key = self._key(struct, tensors, tuple(_flag_of(r) for r in self._guard[0]), entry._pins)
            existing = self._cache.get(key)
            if existing is not None:  # another thread compiled the same signature meanwhile
                entry = existing
                new = False
            else:
                self._cache[key] = entry
                self._evict(keep=entry)
                new = True
            index = len(self._cache)
        if new and entry.executable is None:  # jit_syntax_level=LAX ran it eagerly: warned once (not per thread)
            _graph_builtins.warn_eager(entry)
        if not kwargs and self._key_extra is None and all(isinstance(a, Tensor) for a in args):
            self._remember_fast(entry, args, key)
        if entry.executable is not None:
            _save_graphs(entry, index)
        return entry

    def _compile_shared(self, key, struct, tensors, args, kwargs):
        """_compile for a dynamic-shape key, once: a thread that finds the key being compiled by another waits for
        it (a per-key lock, dropped afterwards) instead of compiling the same graph again."""
        with self._lock:
            lk = self._pending.get(key)
            if lk is None:
                lk = self._pending[key] = threading.Lock()
        try:
            with lk:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._compile(struct, tensors, args, kwargs)
                elif not kwargs and self._key_extra is None and all(isinstance(a, Tensor) for a in args):
                    self._remember_fast(entry, args, key)
        finally:
            with self._lock:
                if self._pending.get(key) is lk:
                    del self._pending[key]
        return entry

    def _disk_lookup(self, struct, tensors):
        """The compile cache's disk key of this call, or None (cache off, or a signature that cannot be stored)."""
        if _disk_cache.cache_dir() is None:
            return None
        try:
            return _disk_cache.Lookup(self, struct, tensors, self._key_extra() if self._key_extra else None)
        except _disk_cache.Unstorable as e:
            self._note_unstorable(str(e))
            return None
        except Exception as e:  # noqa: BLE001 — e.g. an argument whose repr/hash fails: stay in memory
            self._note_unstorable(f"{type(e).__name__}: {e}")
            return None

    def _note_unstorable(self, why):
        """Records (and warns once per function) why a graph stays in memory only."""
        with self._lock:
            first = self.disk_skipped is None
            self.disk_skipped = why
        if first:
            warnings.warn(f"Kiln compile cache: the graph of '{self.name}' stays in memory only: {why}.",
                          RuntimeWarning, stacklevel=4)

    def _drop(self, key):
        """Removes one cached graph and its fast-path keys. Must hold self._lock."""
        entry = self._cache.pop(key)
        if isinstance(entry.executable, _dynamic.DynamicExecutable):
            self._dyn_fast.clear()
        for fk in entry._fast_keys:
            if self._fast.get(fk) is entry:
                del self._fast[fk]
        entry._fast_keys = []

    def _evict(self, keep=None):
        """Drops least recently used graphs beyond cache_size. Must hold self._lock."""
        size = self.cache_size
        while len(self._cache) > size:
            victim = min((kv for kv in self._cache.items() if kv[1] is not keep), key=lambda kv: kv[1]._used)
            self._drop(victim[0])
            self.evictions += 1


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


def jit(function=None, *args, input_signature=None, hash_args=None, jit_config=None, compile_once=False,
        capture_mode="ast", jit_level="O1", dynamic=0, fullgraph=False, backend="", cache_size=None, **options):
    """Compiles `function` into a graph run by the C++ engine (usable as `@jit` or `@jit(...)`).

    Accepts both MindSpore spellings: 2.2's `jit(fn=None, input_signature=None, hash_args=None, jit_config=None,
    compile_once=False)` and 2.6+'s `jit(function=None, *, capture_mode, jit_level, dynamic, fullgraph, backend)`;
    options other than input_signature do not change Kiln's compilation. An input_signature with dynamic dimensions
    (`Tensor(shape=[None, 10], dtype=ms.float32)`) compiles one graph for every size of them (docs/graph_mode.md,
    "Dynamic shapes"); calls must match the signature (ValueError naming the argument otherwise), and code whose
    graph depends on a dynamic size in a way Kiln cannot follow raises ValueError naming the line when compiling.
    Kiln's own `cache_size` (int >= 1) bounds
    the number of compiled graphs kept for this function (default: set_context(jit_cache_size=...), 32); beyond
    it the least recently used graph is dropped and traced again when needed.

    Returns a JitFunction: calling it traces `function` once per signature (input shapes/dtypes, non-tensor
    arguments, training flags of the cells involved, device) and runs the compiled graph. Inside another compiled
    function it is inlined; called under a PyNative value_and_grad/grad, it runs eagerly so that gradients flow
    through it (compile the whole step, gradients included, to get both).
    Raises (at trace time) the op's error with the user's file:line for shape/dtype errors, and RuntimeError for
    `if`/`while`/bool() on a tensor's value (use ops.select / ops.where); TypeError/ValueError for a bad
    cache_size.
    """
    if args and input_signature is None and not isinstance(args[0], str):
        input_signature = args[0]

    def wrap(fn):
        if isinstance(fn, JitFunction):
            if cache_size is not None:
                fn.cache_size = cache_size
            return fn
        return JitFunction(fn, input_signature, cache_size=cache_size)

    if function is None:
        return wrap
    return wrap(function)
