"""`mindspore.profiler.profiler`: Profiler, profile and tensorboard_trace_handler (MindSpore 2.10's API) on Kiln's
per-op kernel counters (kiln/runtime/profiler.py) and host-event hooks (_trace.py). See docs/profiling.md.

What a recorded period holds:
- host events: each Cell call (forward of every layer, the train cell, the optimizer), each dataset iterator
  `next`, each callback hook of Model.train/eval, per Python thread, as complete ("X") events; the user's
  `mstx` marks and ranges when the Profiler was made with `mstx=True`;
- kernel events: the C++ per-op counters (every kernel of PyNative, the backward pass, the optimizer and compiled
  graphs), read at each step boundary and shown per step as one slice per (op, mode) on the "CPU OP" track, laid
  end to end from the step's start (decision: docs/decisions/profiler.md — totals per step, not one slice per call);
- steps: one "ProfilerStep#N" slice per step on the "Step" track;
- a derived "Backward" slice inside each PyNative TrainOneStepCell call: between its forward (the loss cell) and
  its optimizer, where the backward pass runs (it calls no Cell, so it has no host event of its own).

Output (MindSpore's CPU layout): `<dir>/<host>_<pid>_<YYYYmmddHHMMSSfff>_ascend_ms/` with
ASCEND_PROFILER_OUTPUT/trace_view.json (Chrome trace-event JSON; opens in https://ui.perfetto.dev),
FRAMEWORK/cpu_op_type_info_<rank>.csv (MindSpore's per-op-type table) and FRAMEWORK/kiln_step_op_info_<rank>.csv
(Kiln's per-step view).
"""
import csv
import json
import os
import socket
import threading
import time

from .. import _engine
from .. import log as _log
from . import _trace
from . import _mstx as _mstx_mod
from .common import ProfilerActivity, ProfilerLevel
from .experimental_config import _ExperimentalConfig, _checked as _checked_config
from .schedule import ProfilerAction, Schedule, _default_schedule_fn

__all__ = ["Profiler", "profile", "tensorboard_trace_handler"]

_ACCEPTED = ("profiler_level", "activities", "profile_memory", "with_stack", "data_process", "aic_metrics",
             "l2_cache", "hbm_ddr", "pcie", "parallel_strategy", "sync_enable", "data_simplification",
             "record_shapes", "schedule", "on_trace_ready", "mstx", "export_type", "profile_communication",
             "profile_framework", "timeline_limit", "host_stack", "op_time", "experimental_config",
             "mstx_domain_include", "mstx_domain_exclude", "sys_io", "sys_interconnection", "host_sys")
_BOOL_OPTS = ("profile_memory", "with_stack", "data_process", "parallel_strategy", "hbm_ddr", "pcie",
              "sync_enable", "record_shapes", "mstx", "l2_cache", "data_simplification", "profile_communication")
# The trace's synthetic processes (MindSpore's trace_view.json also labels its tracks with small pids).
_PID_KERNEL, _PID_STEP, _PID_MSTX = 2, 3, 4


def _counters():
    """The raw cumulative counters [(op, mode, calls, ns)]: one C++ call; turned into differences only when the
    data is read (`_diff`), so that a step boundary costs one snapshot."""
    return _engine._profiler_snapshot()


def _diff(end, start):
    base = {(name, mode): (calls, ns) for name, mode, calls, ns in start}
    out = {}
    for name, mode, calls, ns in end:
        c0, n0 = base.get((name, mode), (0, 0))
        if calls > c0:
            out[(name, mode)] = (calls - c0, ns - n0)
    return out


class _Session:
    """The data of one recording period (MindSpore's init ... clear)."""

    def __init__(self):
        self.events = []          # host events (_trace tuples)
        self.raw_steps = []       # (step number, t0 ns, t1 ns, start counters, end counters)
        self.window = None        # (step number, t0 ns, counter snapshot) while recording
        self.t_origin = _trace.now()

    @property
    def steps(self):
        """[(step number, t0 ns, t1 ns, {(op, mode): (calls, ns)})] of the closed step windows."""
        return [(st, t0, t1, _diff(end, base)) for st, t0, t1, base, end in self.raw_steps]


def _rank():
    from ..communication.management import GlobalComm, get_rank
    return get_rank() if GlobalComm.INITED else 0


class Profiler:
    """Profiler(**kwargs): records host and kernel events and writes a trace and op tables (module docstring).

    Keyword Args (MindSpore 2.10's; the others it accepts are accepted and change nothing):
        output_path (str): where `analyse()` writes. Default "./data".
        start_profile (bool): start at once. Default True.
        schedule (schedule): which steps record (see `schedule`); then `step()` drives it and `on_trace_ready`
            receives each finished period. Default None: everything between start and stop records.
        on_trace_ready (callable): called with this Profiler when a scheduled period ends, e.g.
            `tensorboard_trace_handler(dir)`. Default None.
        mstx (bool): record `mstx` marks and ranges. Default False.
        experimental_config (_ExperimentalConfig): its `mstx` (or-ed with `mstx`), `mstx_domain_include` /
            `mstx_domain_exclude` and `profiler_level` (unless given) are used. Default None.
        profiler_level (ProfilerLevel), activities (list of ProfilerActivity): accepted; Kiln records the same
            events for all.

    A value of a wrong type for schedule / on_trace_ready / profiler_level / activities / the bool options is
    logged as a warning and reset to its default, as MindSpore 2.10 does; an unknown keyword is logged and ignored.

    Raises:
        TypeError: output_path not a str; start_profile not a bool (Kiln is stricter here than MindSpore, which
            resets them).
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
        for key in _BOOL_OPTS:
            if key in kwargs and not isinstance(kwargs[key], bool):
                _log.warning("For Profiler, the type of %s should be <class 'bool'>, but got %s, reset to default.",
                             key, type(kwargs[key]))
                kwargs.pop(key)
        level = kwargs.get("profiler_level", ProfilerLevel.Level0)
        if not isinstance(level, ProfilerLevel):
            _log.warning("For Profiler, the type of profiler_level should be <enum 'ProfilerLevel'>, but got %s, "
                         "reset to ProfilerLevel.Level0.", type(level))
            level = ProfilerLevel.Level0
        acts = kwargs.get("activities", [ProfilerActivity.CPU, ProfilerActivity.NPU])
        if not isinstance(acts, (list, tuple, set)) or not all(isinstance(a, ProfilerActivity) for a in acts):
            _log.warning("For Profiler, activities value is Invalid, reset to [CPU, NPU].")
            acts = [ProfilerActivity.CPU, ProfilerActivity.NPU]
        sched = kwargs.get("schedule")
        if sched is not None and not isinstance(sched, Schedule):
            _log.warning("For Profiler, schedule value is Invalid, reset to Schedule(wait=0, active=1, warmup=0, "
                         "repeat=0, skip_first=0)")
            sched = Schedule(wait=0, active=1)
        ready = kwargs.get("on_trace_ready")
        if ready is not None and not callable(ready):
            _log.warning("For Profiler, on_trace_ready value is Invalid, reset to None.")
            ready = None
        exp = kwargs.get("experimental_config")
        if exp is not None and not isinstance(exp, _ExperimentalConfig):
            _log.warning("For Profiler, experimental_config value is Invalid, reset to None.")
            exp = None
        self.profiler_level, self.activities = level, list(acts)
        self._mstx = kwargs.get("mstx", False)
        self._mstx_domains = ((), ())
        if exp is not None:
            exp_level, exp_mstx, include, exclude = _checked_config(exp)
            if "profiler_level" not in kwargs:
                self.profiler_level = exp_level
            self._mstx = self._mstx or exp_mstx
            self._mstx_domains = (include, exclude)
        self._output_path = os.path.abspath(output_path)
        self._on_trace_ready = ready
        self.schedule_arg = kwargs.get("schedule")
        self.schedule = sched if self.schedule_arg is not None else _default_schedule_fn
        self._no_step_yet = self.schedule_arg is not None
        self._lock = threading.RLock()
        self._session = None
        self._recording = False
        self._has_started = False
        self._analysed = False
        self._in_ready = False
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.output_dir = None  # the folder the last analyse() / trace handler wrote
        if start_profile:
            self.start()

    # ---------------------------------------------------------------- MindSpore's ProfilerInterface actions
    def _init(self):
        self._session = _Session()

    def _start(self):
        if self._recording:
            return
        if self._session is None:
            self._init()
        self._recording = True
        _engine._profiler_enable()
        _trace.add_sink(self._session.events)
        if self._mstx:
            _mstx_mod._enable(self._session.events, *self._mstx_domains)
        self._open_window()

    def _stop(self):
        if not self._recording:
            return
        self._close_window()
        if self._mstx:
            _mstx_mod._disable(self._session.events)
        _trace.remove_sink(self._session.events)
        _engine._profiler_disable()
        self._recording = False

    def _clear(self):
        self._session = None

    def _trace_ready(self):
        if self._on_trace_ready is not None:
            self._in_ready = True
            try:
                self._on_trace_ready(self)
            finally:
                self._in_ready = False

    def _open_window(self, snap=None):
        self._session.window = (self.step_num, _trace.now(), _counters() if snap is None else snap)

    def _close_window(self):
        """Ends the open step window; returns the counter snapshot taken (None when no window was open)."""
        s = self._session
        if s is None or s.window is None:
            return None
        step, t0, base = s.window
        t1, snap = _trace.now(), _counters()
        s.raw_steps.append((step, t0, t1, base, snap))
        s.window = None
        return snap

    def _transit(self, prev, cur):
        """MindSpore 2.10's ProfilerActionController action map."""
        a = ProfilerAction
        if prev is a.NONE and cur in (a.WARM_UP,):
            self._init()
        elif prev is a.NONE and cur in (a.RECORD, a.RECORD_AND_SAVE):
            if self._session is None or self.schedule_arg is not None:
                self._init()
            self._start()
        elif prev is a.WARM_UP and cur is a.NONE:
            _log.warning("Incorrect schedule: WARMUP followed by NONE")
            self._clear()
        elif prev is a.WARM_UP and cur in (a.RECORD, a.RECORD_AND_SAVE):
            self._start()
        elif prev is a.RECORD and cur in (a.NONE, a.WARM_UP):
            _log.warning("Incorrect schedule: RECORD followed by %s", cur.name)
            self._stop()
            self._clear()
        elif prev is a.RECORD_AND_SAVE and cur is not None:
            self._stop()
            self._trace_ready()
            self._clear()
            if cur is not a.NONE:
                self._init()
            if cur in (a.RECORD, a.RECORD_AND_SAVE):
                self._start()
        elif cur is None:  # stop() with a schedule
            if prev is a.WARM_UP:
                _log.warning("Incorrect schedule: Stop profiler while current state is WARMUP which will result "
                             "in empty parsed data.")
                self._clear()
            elif prev in (a.RECORD, a.RECORD_AND_SAVE):
                self._stop()
                self._trace_ready()
                self._clear()

    # ---------------------------------------------------------------- public API
    def start(self):
        """Starts collecting (no effect if already started).

        Raises:
            RuntimeError: this Profiler was analysed already (make a new one).
        """
        with self._lock:
            if self._analysed:
                raise RuntimeError("For 'Profiler.start', this profiler has already been analysed: make a new one.")
            if self._has_started:
                return
            self._has_started = True
            self._transit(ProfilerAction.NONE, self.current_action)

    def stop(self):
        """Stops collecting. Without a schedule the data is kept for `analyse()`; with one, a recording period
        in progress is handed to `on_trace_ready`. Not started: logged as an error (MindSpore's), no effect."""
        with self._lock:
            if not self._has_started:
                _log.error("The profiler has not started. Do not turn off again in the closed state.")
                return
            self._has_started = False
            if self.schedule_arg is not None:
                if self._no_step_yet:
                    # MindSpore warns and keeps collecting, never saving; Kiln warns and drops the data
                    _log.warning("The profiler has schedule. Please use step() to collect data.")
                    self._stop()
                    self._clear()
                    return
                self._transit(self.current_action, None)
            else:
                self._stop()

    def step(self):
        """Ends the current step. With a schedule: moves to the next step's action (MindSpore 2.10's semantics:
        the steps with RECORD / RECORD_AND_SAVE are recorded; after each RECORD_AND_SAVE step `on_trace_ready` is
        called). Without one (MindSpore ignores it; Kiln marks a step boundary for the per-step view and the
        `execution_frequency(per-step)` column). Stopped: logged as an error, no effect."""
        with self._lock:
            if not self._has_started:
                _log.error("Profiler is stopped, step takes no effect!")
                return
            snap = self._close_window() if self._recording else None
            session = self._session
            prev = self.current_action
            self.step_num += 1
            if self.schedule_arg is not None:
                self._no_step_yet = False
                self.current_action = self.schedule(self.step_num)
                self._transit(prev, self.current_action)
            if self._recording and self._session.window is None:
                # the same snapshot ends one step and begins the next when recording goes on
                self._open_window(snap if self._session is session else None)

    def _stats(self, steps):
        totals = {}
        for _step, _t0, _t1, diff in steps:
            for (op, _mode), (calls, ns) in diff.items():
                c, n = totals.get(op, (0, 0))
                totals[op] = (c + calls, n + ns)
        return totals

    def op_stats(self):
        """The collected per-op-type statistics so far (including a running period), largest total first: dicts
        {"op_type", "type_occurrences", "execution_frequency" (occurrences / steps), "total_compute_time" (ms),
        "avg_time" (ms), "percent" (of the summed kernel time, 0..1)}."""
        with self._lock:
            s = self._session
            if s is None:
                return []
            steps = list(s.steps)
            if s.window is not None:
                step, t0, base = s.window
                steps.append((step, t0, _trace.now(), _diff(_counters(), base)))
        return _op_rows(self._stats(steps), max(len({st[0] for st in steps}), 1))

    def step_stats(self):
        """The per-step view: one dict per (step, op, mode) recorded: {"step", "op_type", "mode", "calls",
        "total_time" (ms), "avg_time" (ms), "percent" (of that step's kernel time, 0..1)}, by step then time."""
        with self._lock:
            steps = list(self._session.steps) if self._session is not None else []
        return _step_rows(steps)

    def analyse(self, offline_path=None, pretty=False, step_list=None, mode="sync"):
        """Stops collecting and writes the trace and tables under `output_path` (module docstring); the folder is
        then `self.output_dir`. `offline_path`, `step_list` and `mode` change nothing here; `pretty` indents the
        JSON. With a schedule it only logs a warning (MindSpore's: use on_trace_ready), unless called from the
        on_trace_ready callback. Returns None.

        Raises:
            OSError: the folder cannot be made or written.
        """
        with self._lock:
            if self.schedule_arg is not None and not self._in_ready:
                _log.warning("The profiler has schedule. Please use 'on_trace_ready' to analyse data.")
                return None
            self._stop()
            if not self._in_ready:
                self._has_started = False
                self._analysed = True
            self._write(self._output_path, None, pretty)
        return None

    def _write(self, out_dir, worker_name, pretty=False):
        s = self._session or _Session()
        if s.window is not None:
            self._close_window()
        t = time.time()
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(t)) + f"{int(t * 1000) % 1000:03d}"
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        root = os.path.join(out_dir, f"{worker}_{stamp}_ascend_ms")
        n = 1
        while os.path.exists(root):  # two saves in one millisecond
            root = os.path.join(out_dir, f"{worker}_{stamp}_{n}_ascend_ms")
            n += 1
        rank = _rank()
        os.makedirs(os.path.join(root, "ASCEND_PROFILER_OUTPUT"))
        os.makedirs(os.path.join(root, "FRAMEWORK"))
        with open(os.path.join(root, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "w") as fh:
            json.dump(_trace_json(s), fh, indent=1 if pretty else None)
        steps = s.steps
        rows = _op_rows(self._stats(steps), max(len({st[0] for st in steps}), 1))
        with open(os.path.join(root, "FRAMEWORK", f"cpu_op_type_info_{rank}.csv"), "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["op_type", "type_occurrences", "execution_frequency(per-step)", "total_compute_time",
                        "avg_time(ms)", "percent"])
            for r in rows:
                w.writerow([r["op_type"], r["type_occurrences"], f"{r['execution_frequency']:g}",
                            f"{r['total_compute_time']:.6g}", f"{r['avg_time']:.6g}", f"{r['percent']:.6g}"])
        with open(os.path.join(root, "FRAMEWORK", f"kiln_step_op_info_{rank}.csv"), "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["step", "op_type", "mode", "calls", "total_time(ms)", "avg_time(ms)", "percent"])
            for r in _step_rows(steps):
                w.writerow([r["step"], r["op_type"], r["mode"], r["calls"], f"{r['total_time']:.6g}",
                            f"{r['avg_time']:.6g}", f"{r['percent']:.6g}"])
        self.output_dir = root
        return root

    def __enter__(self):
        if not self._has_started:
            self.start()
        return self

    def __exit__(self, *exc):
        if self._has_started:
            self.stop()
        return False

    def __del__(self):
        # A profiler dropped while recording must not leave the timers and hooks on.
        try:
            if self._recording:
                self._stop()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


def _op_rows(totals, steps):
    all_ns = sum(ns for _, ns in totals.values())
    rows = [{"op_type": op, "type_occurrences": calls, "execution_frequency": calls / steps,
             "total_compute_time": ns / 1e6, "avg_time": ns / 1e6 / calls,
             "percent": ns / all_ns if all_ns else 0.0} for op, (calls, ns) in totals.items()]
    rows.sort(key=lambda r: (-r["total_compute_time"], r["op_type"]))
    return rows


def _step_rows(steps):
    out = []
    for step, _t0, _t1, diff in steps:
        tot = sum(ns for _, ns in diff.values())
        rows = [{"step": step, "op_type": op, "mode": mode, "calls": calls, "total_time": ns / 1e6,
                 "avg_time": ns / 1e6 / calls, "percent": ns / tot if tot else 0.0}
                for (op, mode), (calls, ns) in diff.items()]
        rows.sort(key=lambda r: (-r["total_time"], r["op_type"], r["mode"]))
        out.extend(rows)
    return out


def _lanes(ranges):
    """Assigns (t0, t1) ranges to lanes in which they nest properly; returns the lane of each (in input order)."""
    order = sorted(range(len(ranges)), key=lambda i: (ranges[i][0], -ranges[i][1]))
    stacks, lane_of = [], [0] * len(ranges)
    for i in order:
        t0, t1 = ranges[i]
        for k, st in enumerate(stacks):
            while st and st[-1] <= t0:
                st.pop()
            if not st or t1 <= st[-1]:
                st.append(t1)
                lane_of[i] = k
                break
        else:
            stacks.append([t1])
            lane_of[i] = len(stacks) - 1
    return lane_of


_TRAIN_CELLS = ("TrainOneStepCell", "TrainOneStepWithLossScaleCell")


def _backward_events(events):
    """A derived "Backward" slice inside each PyNative train-cell call: from the end of its first child (the
    forward: the loss cell) to the start of its last child (the optimizer). The backward pass runs no Cell, so it
    has no host event of its own; this is the time between the two."""
    out = []
    by_tid = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "cell":
            by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        for i, parent in enumerate(evs):
            if parent["name"] not in _TRAIN_CELLS:
                continue
            end = parent["ts"] + parent["dur"]
            children, last_end = [], parent["ts"]
            for e in evs[i + 1:]:
                if e["ts"] >= end:
                    break
                if e["ts"] >= last_end:  # a direct child (not inside the previous one)
                    children.append(e)
                    last_end = e["ts"] + e["dur"]
            if len(children) >= 2:
                t0 = children[0]["ts"] + children[0]["dur"]
                t1 = children[-1]["ts"]
                out.append({"name": "Backward", "cat": "backward", "ph": "X", "pid": parent["pid"],
                            "tid": parent["tid"], "ts": t0, "dur": round(max(t1 - t0, 0.0), 3),
                            "args": {"forward": children[0]["name"], "optimizer": children[-1]["name"]}})
    return out


def _trace_json(s):
    """The session as a Chrome trace-event JSON object (ts/dur in µs since the session began)."""
    origin = s.t_origin

    def us(ns):
        return round((ns - origin) / 1000.0, 3)

    pid = os.getpid()
    names = dict(_trace.NAMES)
    names.update((t.native_id, t.name) for t in threading.enumerate())
    meta, ev = [], []

    def proc(p, name, sort):
        meta.append({"ph": "M", "name": "process_name", "pid": p, "tid": 0, "ts": 0, "args": {"name": name}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": p, "tid": 0, "ts": 0, "args": {"sort_index": sort}})

    def thread(p, t, name):
        meta.append({"ph": "M", "name": "thread_name", "pid": p, "tid": t, "ts": 0, "args": {"name": name}})

    proc(pid, f"Python (pid {pid})", 1)
    proc(_PID_KERNEL, "CPU OP (kernel time per op, per step)", 2)
    proc(_PID_STEP, "Step", 0)
    threads, ranges = set(), []
    for name, cat, tid, t0, t1, args in s.events:
        if cat == "mstx_range":
            ranges.append((name, tid, t0, t1, args))
            continue
        threads.add(tid)
        e = {"name": name, "cat": cat, "pid": pid, "tid": tid, "ts": us(t0), "args": dict(args or {})}
        if t1 is None:
            e.update(ph="i", s="t")
        else:
            e.update(ph="X", dur=max(round((t1 - t0) / 1000.0, 3), 0.0))
        ev.append(e)
    ev.extend(_backward_events(ev))
    for t in sorted(threads):
        thread(pid, t, f"{names.get(t, 'thread')} ({t})")
    if ranges:
        proc(_PID_MSTX, "mstx", 3)
        lanes = _lanes([(r[2], r[3]) for r in ranges])
        for (name, tid, t0, t1, args), lane in zip(ranges, lanes):
            ev.append({"name": name, "cat": "mstx", "ph": "X", "pid": _PID_MSTX, "tid": lane, "ts": us(t0),
                       "dur": round((t1 - t0) / 1000.0, 3), "args": dict(args, thread=tid)})
        for lane in sorted(set(lanes)):
            thread(_PID_MSTX, lane, f"mstx ranges {lane}")
    thread(_PID_KERNEL, 0, "kernels")
    thread(_PID_STEP, 0, "steps")
    cursor = None
    for step, t0, t1, diff in s.steps:
        ev.append({"name": f"ProfilerStep#{step}", "cat": "step", "ph": "X", "pid": _PID_STEP, "tid": 0,
                   "ts": us(t0), "dur": round((t1 - t0) / 1000.0, 3), "args": {"step": step}})
        c = t0 if cursor is None else max(t0, cursor)
        for (op, mode), (calls, ns) in sorted(diff.items(), key=lambda kv: (-kv[1][1], kv[0])):
            ev.append({"name": op, "cat": "kernel", "ph": "X", "pid": _PID_KERNEL, "tid": 0, "ts": us(c),
                       "dur": round(us(c + ns) - us(c), 3),
                       "args": {"step": step, "mode": mode, "calls": calls, "avg_us": ns / 1000.0 / calls}})
            c += ns
        cursor = c
    ev.sort(key=lambda e: (e["pid"], e["tid"], e["ts"], -e.get("dur", 0.0)))
    return {"traceEvents": meta + ev, "displayTimeUnit": "ms",
            "otherData": {"producer": "kiln.profiler", "start_time_unix_us": _trace.to_us(origin)}}


def tensorboard_trace_handler(dir_name=None, worker_name=None, analyse_flag=True, async_mode=False):
    """The `on_trace_ready` callback that saves each recorded period under `dir_name` (default "./data") as a
    `<worker_name>_<timestamp>_ascend_ms` folder (default worker name `<host>_<pid>`), laid out as `analyse()`'s.

    Bad values are logged as warnings and reset to the defaults, as MindSpore 2.10 does; `async_mode` is accepted
    and the save is synchronous. With `analyse_flag=False` nothing is written.
    """
    if not isinstance(dir_name, str) or not dir_name.strip():
        if dir_name is not None:
            _log.warning("Invalid parameter dir_name, reset it to default.")
        dir_name = "./data"
    if worker_name is not None and (not isinstance(worker_name, str) or not worker_name.strip()):
        _log.warning("Invalid parameter worker_name, reset it to default.")
        worker_name = None
    if not isinstance(analyse_flag, bool):
        _log.warning("analyse_flag is not bool, set by default.")
        analyse_flag = True
    if not isinstance(async_mode, bool):
        _log.warning("async_mode is not bool, set by default.")
    out = os.path.abspath(dir_name)

    def handler_fn(prof_inst):
        if analyse_flag:
            os.makedirs(out, exist_ok=True)
            prof_inst._write(out, worker_name)

    return handler_fn


class profile(Profiler):
    """profile(activities=None, with_stack=False, profile_memory=False, data_process=False,
    parallel_strategy=False, start_profile=True, hbm_ddr=False, pcie=False, sync_enable=True, record_shapes=False,
    schedule=None, on_trace_ready=None, experimental_config=None): MindSpore 2.10's newer profiler class, a
    Profiler with these keywords (its results go to `on_trace_ready`; `analyse()` writes under "./data").
    `experimental_config` (a `_ExperimentalConfig`) may turn on mstx and filter its domains."""

    def __init__(self, activities=None, with_stack=False, profile_memory=False, data_process=False,
                 parallel_strategy=False, start_profile=True, hbm_ddr=False, pcie=False, sync_enable=True,
                 record_shapes=False, schedule=None, on_trace_ready=None, experimental_config=None):
        kw = dict(with_stack=with_stack, profile_memory=profile_memory, data_process=data_process,
                  parallel_strategy=parallel_strategy, start_profile=start_profile, hbm_ddr=hbm_ddr, pcie=pcie,
                  sync_enable=sync_enable, record_shapes=record_shapes, on_trace_ready=on_trace_ready)
        if experimental_config is not None:
            kw["experimental_config"] = experimental_config
        if activities is not None:
            kw["activities"] = activities
        if schedule is not None:
            kw["schedule"] = schedule
        super().__init__(**kw)
