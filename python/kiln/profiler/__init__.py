"""`mindspore.profiler.Profiler` on Kiln's per-op timers (kiln.runtime.profiler).

The way MindSpore scripts use it::

    profiler = Profiler(output_path="./prof")    # collection starts here (start_profile=True)
    model.train(...)                             # or any PyNative / Graph-mode code
    profiler.analyse()                           # stops, writes the op statistics

What is collected: the kernel time of every op the process runs while the profiler is started (PyNative ops, the
backward pass, optimizer updates, every instruction of compiled graphs), summed per op type — Kiln's per-op
profiler, see kiln/runtime/profiler.py for what a kernel time includes. `analyse()` writes MindSpore's CPU
op-statistics table, `<output_path>/kiln_<pid>_<YYYYmmddHHMMSS>/FRAMEWORK/cpu_op_type_info_<rank>.csv`, with MindSpore's
columns (op_type, type_occurrences, execution_frequency(per-step), total_compute_time in ms, avg_time(ms),
percent of the summed kernel time), and returns nothing, as MindSpore's does. MindSpore's timeline
(trace_view.json), per-instance op details, memory and Ascend/GPU hardware counters are not produced: Kiln's timers
are per op type, not per call. The keyword options that select those (profiler_level, activities, profile_memory,
with_stack, data_process, aic_metrics, l2_cache, hbm_ddr, pcie, parallel_strategy, sync_enable,
data_simplification, record_shapes, schedule, on_trace_ready, mstx, export_type) are accepted and change nothing;
an unknown keyword is logged as a warning and ignored, as MindSpore 2.10 does.
"""
import csv
import os
import threading
import time

from .._loader import _core
from .. import log as _log

__all__ = ["Profiler"]

_ACCEPTED = ("profiler_level", "activities", "profile_memory", "with_stack", "data_process", "aic_metrics",
             "l2_cache", "hbm_ddr", "pcie", "parallel_strategy", "sync_enable", "data_simplification",
             "record_shapes", "schedule", "on_trace_ready", "mstx", "export_type", "profile_communication",
             "profile_framework", "timeline_limit", "host_stack", "op_time")


def _snapshot():
    """{op: (calls, ns)} summed over modes, from the process-wide counters."""
    out = {}
    for name, _mode, calls, ns in _core._profiler_snapshot():
        c, n = out.get(name, (0, 0))
        out[name] = (c + calls, n + ns)
    return out


class Profiler:
    """Profiler(output_path="./data", start_profile=True, **options): per-op-type kernel times (see the module
    docstring).

    Args:
        output_path (str): the folder `analyse()` writes under (made if missing). Default "./data".
        start_profile (bool): start collecting now. Default True; with False, call `start()`.
        **options: MindSpore's collection options; accepted and without effect in Kiln (module docstring).

    Raises:
        TypeError: output_path not a str; start_profile not a bool.
        ValueError: output_path names an existing file.
    """

    def __init__(self, **kwargs):
        output_path = kwargs.pop("output_path", "./data")
        start_profile = kwargs.pop("start_profile", True)
        if not isinstance(output_path, str):
            raise TypeError(f"For 'Profiler', 'output_path' must be a str, but got {type(output_path).__name__}.")
        if not isinstance(start_profile, bool):
            raise TypeError(f"For 'Profiler', 'start_profile' must be a bool, but got "
                            f"{type(start_profile).__name__}.")
        if os.path.exists(output_path) and not os.path.isdir(output_path):
            raise ValueError(f"For 'Profiler', 'output_path' must be a folder (made if missing), but "
                             f"{output_path!r} is a file.")
        for key in kwargs:
            if key not in _ACCEPTED:
                _log.warning("For 'Profiler', the option %r is not known; it is ignored.", key)
        self._output_path = os.path.abspath(output_path)
        self._lock = threading.Lock()
        self._totals = {}  # op -> [calls, ns] over the started periods so far
        self._start = None  # the counters when the current period began (None: stopped)
        self._steps = 0
        self._analysed = False
        if start_profile:
            self.start()

    def start(self):
        """Starts collecting (no effect if already started). RuntimeError after analyse()."""
        with self._lock:
            if self._analysed:
                raise RuntimeError("For 'Profiler.start', this profiler has already been analysed: make a new one.")
            if self._start is None:
                _core._profiler_enable()
                self._start = _snapshot()

    def stop(self):
        """Stops collecting and keeps what was collected (no effect if not started)."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self):
        if self._start is None:
            return
        end = _snapshot()
        _core._profiler_disable()
        for op, (calls, ns) in end.items():
            c0, n0 = self._start.get(op, (0, 0))
            if calls > c0:
                tot = self._totals.setdefault(op, [0, 0])
                tot[0] += calls - c0
                tot[1] += ns - n0
        self._start = None

    def step(self):
        """Marks the end of one training step: `execution_frequency(per-step)` is occurrences / steps (1 step when
        step() is never called)."""
        with self._lock:
            self._steps += 1

    def op_stats(self):
        """The collected statistics so far, largest total first: a list of dicts {"op_type", "type_occurrences",
        "execution_frequency", "total_compute_time" (ms), "avg_time" (ms), "percent" (of the summed kernel
        time, 0..1)}. Includes the running period when the profiler is started."""
        with self._lock:
            totals = {op: list(v) for op, v in self._totals.items()}
            if self._start is not None:
                for op, (calls, ns) in _snapshot().items():
                    c0, n0 = self._start.get(op, (0, 0))
                    if calls > c0:
                        tot = totals.setdefault(op, [0, 0])
                        tot[0] += calls - c0
                        tot[1] += ns - n0
            steps = max(self._steps, 1)
        all_ns = sum(ns for _, ns in totals.values())
        rows = [{"op_type": op, "type_occurrences": calls, "execution_frequency": calls / steps,
                 "total_compute_time": ns / 1e6, "avg_time": ns / 1e6 / calls,
                 "percent": ns / all_ns if all_ns else 0.0}
                for op, (calls, ns) in totals.items()]
        rows.sort(key=lambda r: (-r["total_compute_time"], r["op_type"]))
        return rows

    def analyse(self, offline_path=None, pretty=False, step_list=None, mode="sync"):
        """Stops collecting and writes `<output_path>/kiln_<pid>_<time>/FRAMEWORK/cpu_op_type_info_<rank>.csv`
        (module docstring). `offline_path`, `pretty`, `step_list` and `mode` are MindSpore's options for its
        Ascend data and change nothing here. Returns None; the folder written is `self.output_dir`.

        Raises:
            OSError: the folder cannot be made or written.
        """
        with self._lock:
            self._stop_locked()
            self._analysed = True
        rows = self.op_stats()
        from ..communication.management import GlobalComm, get_rank
        rank = get_rank() if GlobalComm.INITED else 0
        folder = os.path.join(self._output_path, f"kiln_{os.getpid()}_{time.strftime('%Y%m%d%H%M%S')}",
                              "FRAMEWORK")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"cpu_op_type_info_{rank}.csv")
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["op_type", "type_occurrences", "execution_frequency(per-step)", "total_compute_time",
                        "avg_time(ms)", "percent"])
            for r in rows:
                w.writerow([r["op_type"], r["type_occurrences"], f"{r['execution_frequency']:g}",
                            f"{r['total_compute_time']:.6g}", f"{r['avg_time']:.6g}", f"{r['percent']:.6g}"])
        self.output_dir = os.path.dirname(folder)
        return None

    def __del__(self):
        # A profiler dropped while started must not leave the process-wide timers on.
        try:
            if self._start is not None:
                _core._profiler_disable()
                self._start = None
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
