"""Capture: a jit function's Python code run with symbolic tensors, recorded as a graph (kiln._core Trace).

The function is traced once per signature: every op call records a node (the same op definitions and bprops as
PyNative), Python values and `self.training` are fixed at trace time, Python control flow on them unrolls, and
tensor-dependent control flow becomes If/While nodes (ast_rewrite.py, control_flow.py). While the trace runs, the
Python built-ins have their graph meaning (graph_builtins.py), calls are counted (call_depth.py), writes into
Parameters under a gradient are deferred (deferred_writes.py) and the Cells that run are recorded (guards.py). With
dynamic dimensions the function is traced at N_PROBES sizes and the traces fitted into one graph (dynamic.py).

Note [writes into inputs] (docs/decisions/writes-into-graph-inputs.md): inside a trace an input is a symbolic
tensor, and an in-place write to it (ops.assign & co., add_/copy_/zero_..., x[i] = v, through a view of it, inside a
compiled if/while) rebinds it to a new graph value, so reads follow program order. trace() compares each input's
value at the end with the one it started as; the final values of the written inputs become extra graph outputs
(out = (result, attribute values, input values)), and after every run compiled._write_back copies them into the caller's
tensors (`_kernels.assign`: a Parameter, a plain Tensor, a view of a caller's tensor all keep their identity and
storage). One tensor object passed twice is traced as one symbolic input (a write through one name is read through
the other), and the key records that aliasing (key[6]); such a graph is never on the fast path nor on disk, and a
graph that writes inputs leaves the fast path for a call that passes one tensor twice."""
import threading

from .. import _engine
from . import dynamic as _dynamic
from . import disk_cache as _disk_cache
from . import graph_builtins as _graph_builtins
from . import deferred_writes as _deferred_writes
from . import call_depth as _call_depth
from .guards import _lock, _recording, _local as _guard_local
from .structure import _flatten, _unflatten, _keep_identity, _globals_ids, _key_of, _aliases

_local = threading.local()  # .param_inputs: this thread's stack of sets of the symbolic inputs Parameters are traced as


def trace(jf, struct, tensors, recorded, record_sources):
    """Traces `jf` (a JitFunction) for one signature: (graph, copy before passes, output structure, files of the
    Python code that ran (None when not recorded), attribute writes, indices of the inputs written in place)."""
    with jf._lock:
        jf.trace_count += 1
    stack = getattr(_guard_local, "records", None)
    if stack is None:
        stack = _guard_local.records = []
    stack.append(recorded)
    with _lock:
        _recording[0] += 1
    sources = None
    stands = getattr(_local, "param_inputs", None)
    if stands is None:
        stands = _local.param_inputs = []
    depth = len(stands)
    try:
        with _engine.Trace(jf.name) as tr, _graph_builtins.trace_scope(), _call_depth.trace_scope(), \
                _deferred_writes.scope(True) as dw:
            sym = [tr.input(t.shape, t.dtype) for t in tensors]
            alias = _aliases(tensors)
            if alias is not None:  # one tensor passed twice: one symbolic tensor, so a write is seen by both
                sym = [sym[j] for j in alias]
            ids = [t._id for t in sym]
            from ..common.parameter import Parameter
            stands.append({id(sym[i]) for i, t in enumerate(tensors) if isinstance(t, Parameter)})
            a, k = _unflatten(struct, sym)
            if record_sources:
                with _disk_cache.SourceRecorder() as rec:
                    out = jf._python(a, k)
                sources = rec.files
            else:
                out = jf._python(a, k)
            out = _graph_builtins.materialize(out)  # returned generators/iterators: lists/tuples, as MindSpore
            target = jf._target()
            writes = _graph_builtins.attribute_writes(([target] if target is not None else []) + recorded)
            # Inputs written in place (ops.assign, add_, x[i] = v, ... rebind the symbolic input to a new value,
            # Note [writes into inputs]): their final values are extra outputs, copied into the caller's
            # tensors after every run.
            in_writes = tuple(i for i, t in enumerate(sym) if t._id != ids[i] and (alias is None or alias[i] == i))
            if writes or in_writes:  # extra outputs, set after every run (compiled._write_back)
                out = (out, tuple(t for _, _, t in writes), tuple(sym[i] for i in in_writes))
            out_tensors = []
            out_struct = _keep_identity(out, _flatten(out, out_tensors), _globals_ids(jf.fn))
            _deferred_writes.flush(dw)  # Note [deferred state writes]
            graph = tr.finish(out_tensors)
    finally:
        stack.pop()
        del stands[depth:]
        with _lock:
            _recording[0] -= 1
    return graph, graph.copy(), out_struct, sources, [(o, n) for o, n, _ in writes], in_writes


def trace_dynamic(jf, struct, spec, recorded):
    """Compiles `jf` (a JitFunction) with dynamic input dimensions once (Note [dynamic shapes by probe traces]):
    traces it at the probe sizes, optimizes each trace, and fits what differs. Returns trace()'s tuple plus the pass
    log of the first trace and its DynamicExecutable; ValueError when the graph depends on a size in a way that
    cannot be fitted."""
    descs, states = [], []
    first = None
    try:
        for t in range(_dynamic.N_PROBES):
            with _dynamic.probing(t, spec.axes) as state:
                states.append(state)
                res = trace(jf, struct, _dynamic.probe_tensors(spec, t), recorded if t == 0 else [], False)
            graph, before, out_struct, _, writes, in_writes = res
            log = graph.optimize()
            if first is None:
                first = (graph, before, out_struct, None, writes, in_writes, log)
                out_key = repr(_key_of(out_struct, []))
            elif repr(_key_of(out_struct, [])) != out_key:
                raise _dynamic.StructureError(
                    f"For jit '{jf.name}', the function returns a Python value that depends on the size of a "
                    f"dynamic (None) dimension ({first[2]!r} vs {out_struct!r} in traces with different sizes); "
                    "return it as a Tensor (ops.shape / ops.tensor_shape / ops.size) or give static shapes.")
            descs.append(_dynamic.describe(graph, jf.name))
        attr_fits, const_fits = _dynamic.build_template(jf.name, descs, spec.axes)
    except _dynamic.StructureError as e:
        raise _dynamic.with_guards(e, states) from None
    exe = _dynamic.DynamicExecutable(jf.name, first[0], spec.axes, spec, attr_fits, const_fits,
                                     _dynamic.common_guards(states))
    return first + (exe,)


def stands_for_parameter(x):
    """True when x is the symbolic input that a Parameter argument of a function being compiled (on this thread) is
    traced as: ops.assign_add & co. accept it as they accept the Parameter."""
    return any(id(x) in s for s in getattr(_local, "param_inputs", None) or ())


def symbolic_error(what):
    """The error for reading a tensor's value while compiling, naming the user's line."""
    loc = _engine._user_location()
    if what.startswith("`if`") or "bool" in what:  # control flow: a choice between values can be compiled
        advice = ("Kiln compiles `if`/`while`/`for`, `x if c else y` and and/or/not on tensors in the compiled "
                  "function, Cell constructs and the functions of your program they call (docs/graph_mode.md); this "
                  "one was not: the value is converted with bool() directly, or the code is in a lambda, a library "
                  "function or code without a source file. Write the condition as an `if`/`while` in your function, "
                  "use ops.switch / ops.WhileLoop / ops.select(cond, x, y), or run this code in PyNative mode "
                  "(set_context(mode=PYNATIVE_MODE)).")
    else:  # float() / int() / item(): a Python number can not be made from a value computed later
        advice = ("Keep the value as a Tensor (use it in tensor ops directly, e.g. x * t instead of x * t.item()), "
                  "return it from the compiled function and convert it outside, or run this code in PyNative mode "
                  "(set_context(mode=PYNATIVE_MODE)).")
    return RuntimeError(f"{what} of a tensor's value is not supported in a compiled (graph-mode) function, at "
                        f"{loc}: the value is not known while compiling. {advice}")
