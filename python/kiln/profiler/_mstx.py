"""`mindspore.profiler.mstx`: user marks and ranges in the profiler's trace.

MindSpore 2.10 records them only on Ascend (on its CPU build they are no-ops returning None / 0). Kiln records them
on the CPU, into the trace of every Profiler that is recording and was made with `mstx=True`: `mark` as an
instant event ("i"), `range_start`/`range_end` as one complete event ("X") on the "mstx" track of the trace, with
the domain in its args. Without such a Profiler they do nothing and `range_start` returns 0, as MindSpore's.
A message that is not a non-empty str, or a domain that is not a non-empty str, is logged as a warning and the call
does nothing (MindSpore's behaviour); `stream` is accepted for MindSpore's signature and unused.
"""
import itertools
import threading

from .. import log as _log
from . import _trace

__all__ = ["mstx"]

_IDS = itertools.count(1)
_OPEN = {}  # range id -> (message, domain, start ns, thread id)
_ENABLED = []  # (event list, domains included, domains excluded) of the mstx-enabled recording Profilers
_LOCK = threading.Lock()


def _enable(events, include=(), exclude=()):
    """Records marks and ranges into `events` too (a recording Profiler made with mstx=True): only the domains in
    `include` when it is not empty, else all but those in `exclude`."""
    with _LOCK:
        _ENABLED.append((events, tuple(include), tuple(exclude)))


def _disable(events):
    with _LOCK:
        _ENABLED[:] = [e for e in _ENABLED if e[0] is not events]


def _sinks(domain):
    with _LOCK:
        ids = {id(ev) for ev, inc, exc in _ENABLED if (domain in inc if inc else domain not in exc)}
    return [s for s in _trace._SINKS if id(s) in ids]


def _valid(fn, message, domain):
    if not message or not isinstance(message, str):
        _log.warning("Invalid message for mstx.%s func. Please input valid message string.", fn)
        return False
    if not isinstance(domain, str) or domain == "":
        _log.warning("Invalid domain for mstx.%s func. Please input valid domain string.", fn)
        return False
    return True


class mstx:
    """mstx.mark / mstx.range_start / mstx.range_end (module docstring)."""

    @staticmethod
    def mark(message, stream=None, domain="default"):
        """Records an instant event named `message` (returns None)."""
        if not _ENABLED or not _valid("mark", message, domain):
            return
        sinks = _sinks(domain)
        t = _trace.now()
        ev = (message, "mstx", threading.get_native_id(), t, None, {"domain": domain})
        for s in sinks:
            s.append(ev)

    @staticmethod
    def range_start(message, stream=None, domain="default"):
        """Opens a range named `message`; returns its id (an int > 0), or 0 when nothing records."""
        if not _ENABLED or not _valid("range_start", message, domain) or not _sinks(domain):
            return 0
        rid = next(_IDS)
        with _LOCK:
            _OPEN[rid] = (message, domain, _trace.now(), threading.get_native_id())
        return rid

    @staticmethod
    def range_end(range_id, domain="default"):
        """Closes the range `range_id` (from range_start) and records it; an unknown id or 0 does nothing."""
        t1 = _trace.now()
        with _LOCK:
            item = _OPEN.pop(range_id, None) if isinstance(range_id, int) else None
        if item is None:
            return
        message, dom, t0, tid = item
        ev = (message, "mstx_range", tid, t0, t1, {"domain": dom, "range_id": range_id})
        for s in _sinks(dom):
            s.append(ev)
