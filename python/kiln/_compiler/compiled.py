"""One compiled signature of a jit function and how it runs: the CompiledGraph (the graph before and after the
passes, its executable, the structure of its outputs), the run itself (a failed run-time assert becomes
AssertionError, Note [run-time assert] in graph_assert.py), the write-back of attribute and input writes after a
run (Note [writes into inputs] in capture.py), and `save_graphs`' dump of the IR."""
import itertools
import os
import weakref

from ..ops import _kernels
from .. import context
from . import graph_assert as _graph_assert
from .structure import _unflatten

_clock = itertools.count(1)  # use stamps for the LRU (next() is atomic under the GIL)


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
        self._used = next(_clock)  # LRU stamp, refreshed on every hit
        self._fast_keys = []  # the fast-path keys that lead to this entry (dropped with it)
        self._pins = []  # unhashable non-tensor arguments keyed by id (see _key_of)
        self.from_disk = False  # loaded from the compile cache on disk (graph_before is then the optimized graph)
        self._writes = ()  # (object or weakref, attribute) set from the graph's extra outputs after every run
        self._in_writes = ()  # indices (in the flattened inputs) of the inputs the graph writes in place
        self._post = False  # _writes or _in_writes: the outputs are (result, attribute values, input values)

    @property
    def planned_peak_bytes(self):
        """Peak bytes of intermediate buffers under the executor's liveness plan."""
        return self.executable.planned_peak_bytes

    def __repr__(self):
        return (f"CompiledGraph({self.name}: {self.graph_before.num_nodes} → {self.graph.num_nodes} nodes, "
                f"compiled in {self.compile_seconds * 1e3:.1f} ms)")


def _reraise_assert(err):
    """Raises the AssertionError a failed run-time `assert` stands for (Note [run-time assert]), else err itself."""
    a = _graph_assert.assertion_from(err)
    if a is None:
        raise err
    raise a from None


def _weak_or_strong(obj):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _run_entry(entry, inputs):
    """Runs a compiled graph on the call's flat input tensors: a failed run-time assert becomes AssertionError
    (Note [run-time assert]); attribute and input writes are applied (_write_back); returns the call's result."""
    try:
        out = entry.executable.run(inputs)
    except ValueError as e:
        _reraise_assert(e)
    if entry._post:
        return _write_back(entry, out, inputs)
    return _unflatten(entry._out_struct, out)


def _write_back(entry, outs, tensors):
    """The result of a graph that sets object attributes or writes its inputs: sets the attributes to this run's
    values, copies the written inputs' final values into the caller's tensors (`tensors`: the flattened inputs of
    the call; None: inputs the caller cannot see, e.g. a data sink's batches), returns the rest."""
    res, values, inputs = _unflatten(entry._out_struct, outs)
    for (ref, name), v in zip(entry._writes, values):
        obj = ref()
        if obj is not None:
            setattr(obj, name, v)
    if tensors is not None:
        for i, v in zip(entry._in_writes, inputs):
            _kernels.assign(tensors[i], v)
    return res


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
