"""The host-event recorder of kiln.profiler: hooks installed only while some Profiler records.

While no Profiler records, nothing here runs: Cell.__call__, the dataset iterators and the callback manager are
Kiln's own functions, untouched. When the first Profiler starts recording, `install()` replaces them with timing
wrappers; when the last one stops, `uninstall()` puts the originals back. Each event is a tuple
(name, category, thread id, start ns, end ns, args) appended to the list of every recording Profiler (`_SINKS`,
replaced as a whole under a lock, so appending from any thread needs no lock: list.append is atomic in CPython).
Times are `time.perf_counter_ns()`; `to_us` turns them into µs since the Unix epoch for the trace file.
"""
import functools
import threading
import time

_LOCK = threading.Lock()
_SINKS = ()  # the event lists of the recording Profilers
_SAVED = []  # (owner, attribute name, original) of the installed hooks
_EPOCH_NS = time.time_ns() - time.perf_counter_ns()
NAMES = {}  # native thread id -> thread name, of the threads that recorded events


def now():
    """The recorder's clock, ns."""
    return time.perf_counter_ns()


def to_us(ns):
    """A recorder time (ns) as µs since the Unix epoch (the trace file's ts)."""
    return (ns + _EPOCH_NS) / 1000.0


def emit(name, cat, t0, t1, args=None, tid=None):
    """Appends one complete event to every recording Profiler (no effect when none records)."""
    sinks = _SINKS
    if sinks:
        if tid is None:
            tid = threading.get_native_id()
            if tid not in NAMES:  # the thread's name, for the trace's track (the thread may be gone by then)
                NAMES[tid] = threading.current_thread().name
        ev = (name, cat, tid, t0, t1, args)
        for s in sinks:
            s.append(ev)


def recording():
    """True while some Profiler records."""
    return bool(_SINKS)


def _timed(fn, cat, name_of):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _SINKS:
            return fn(*args, **kwargs)
        t0 = time.perf_counter_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            emit(name_of(args), cat, t0, time.perf_counter_ns())
    wrapper._kiln_profiler_hook = True
    return wrapper


def _hook_targets():
    from ..nn.cell import Cell
    from ..dataset.engine import iterators
    from ..train.callback import _callback
    out = [(Cell, "__call__", "cell", lambda a: type(a[0]).__name__),
           (iterators._Iterator, "_next_row", "dataset", lambda a: "Dataset.next")]
    for hook in _callback._HOOKS:
        out.append((_callback._CallbackManager, hook, "callback", lambda a, h=hook: f"Callback.{h}"))
    return out


def add_sink(events):
    """Starts recording into `events`; installs the hooks for the first one."""
    global _SINKS
    with _LOCK:
        if not _SINKS:
            for owner, attr, cat, name_of in _hook_targets():
                orig = owner.__dict__[attr]
                _SAVED.append((owner, attr, orig))
                setattr(owner, attr, _timed(orig, cat, name_of))
        _SINKS = _SINKS + (events,)


def remove_sink(events):
    """Stops recording into `events`; removes the hooks after the last one (no effect if not recording)."""
    global _SINKS
    with _LOCK:
        if not any(s is events for s in _SINKS):
            return
        _SINKS = tuple(s for s in _SINKS if s is not events)
        if not _SINKS:
            while _SAVED:
                owner, attr, orig = _SAVED.pop()
                setattr(owner, attr, orig)


def hooks_installed():
    """True while the timing wrappers replace Kiln's functions (for tests of the 'no overhead when off' rule)."""
    return bool(_SAVED)
