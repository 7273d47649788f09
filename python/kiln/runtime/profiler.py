"""Kiln's per-op profiler: which ops a piece of code spends its time in, in PyNative and in Graph mode.

    with kiln.runtime.profile() as prof:
        train_step(x, y)
    print(prof.table())          # top ops by total time
    rows = prof.stats()          # the same as a list of dicts

Kiln's own tool (MindSpore's `mindspore.Profiler` writes trace files for its own viewer; this one answers "which ops
cost the time" in a few lines). It times every kernel that the eager dispatcher runs (PyNative: each op call, each op
of the backward pass, each optimizer update) and every instruction of a compiled graph (`@jit`, Graph mode), summed
per (op, mode). Timing is off by default and costs one atomic load per op then; while a `profile()` is open an op
costs two clock reads more. The counters are process-wide, lock-free and bounded (one entry per op and mode):
ops run by other threads while a profile is open count in it too. Only the outermost op of a thread is timed, so the
total is not counted twice. Times are wall-clock and exclude PyNative's per-op dispatch work (argument conversion,
shape inference, output allocation, tape recording) and all Python code: `wall_ms - total_ms` is that overhead.
"""
import time

from .. import _engine

__all__ = ["profile", "OpProfile", "is_profiling"]


def _counters():
    return {(name, mode): (calls, ns) for name, mode, calls, ns in _engine._profiler_snapshot()}


class OpProfile:
    """The per-op timings of one `with kiln.runtime.profile():` block (filled when the block ends).

    Attributes:
        wall_ms (float): wall-clock milliseconds of the whole block (None while it is open).
        total_ms (float): milliseconds spent in timed kernels, summed over all rows.
    """

    def __init__(self):
        self._start = None
        self._rows = None
        self._t0 = None
        self.wall_ms = None

    def __enter__(self):
        if self._start is not None:
            raise RuntimeError("For 'profile', a profile object can be entered only once; make a new one with "
                               "kiln.runtime.profile().")
        _engine._profiler_enable()
        self._start = _counters()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self._t0
        end = _counters()
        _engine._profiler_disable()
        self.wall_ms = wall * 1e3
        rows = []
        for key, (calls, ns) in end.items():
            c0, n0 = self._start.get(key, (0, 0))
            if calls > c0:
                rows.append({"op": key[0], "mode": key[1], "calls": calls - c0, "total_ms": (ns - n0) / 1e6})
        rows.sort(key=lambda r: (-r["total_ms"], r["op"], r["mode"]))
        self._rows = rows
        return False

    def _check_done(self, what):
        if self._rows is None:
            raise RuntimeError(f"For 'OpProfile.{what}', the profile has no results yet: call it after the "
                               "`with kiln.runtime.profile() as prof:` block has ended.")

    @property
    def total_ms(self):
        self._check_done("total_ms")
        return sum(r["total_ms"] for r in self._rows)

    def stats(self, mode=None):
        """The timed ops, by total time (largest first; ties by op name, then mode).

        Args:
            mode (str, optional): "PyNative" or "Graph" keeps only that mode's rows. Default: None (both).

        Returns:
            list[dict]: one per (op, mode) that ran: {"op": str (MindSpore primitive name, e.g. "Conv2D"),
            "mode": "PyNative" | "Graph", "calls": int, "total_ms": float, "mean_us": float,
            "percent": float (of `wall_ms`)}.

        Raises:
            RuntimeError: while the `with` block is still open.
            ValueError: `mode` is not None, "PyNative" or "Graph".
            TypeError: `mode` is not a str.
        """
        self._check_done("stats")
        if mode is not None:
            if not isinstance(mode, str):
                raise TypeError(f"For 'OpProfile.stats', 'mode' must be a str or None, but got "
                                f"{type(mode).__name__}.")
            if mode not in ("PyNative", "Graph"):
                raise ValueError(f"For 'OpProfile.stats', 'mode' must be 'PyNative', 'Graph' or None, but got "
                                 f"{mode!r}.")
        wall = self.wall_ms or 0.0
        out = []
        for r in self._rows:
            if mode is not None and r["mode"] != mode:
                continue
            out.append(dict(r, mean_us=r["total_ms"] * 1e3 / r["calls"],
                            percent=100.0 * r["total_ms"] / wall if wall > 0 else 0.0))
        return out

    def table(self, top=20, mode=None):
        """The `top` rows of `stats(mode)` as a text table, with a last line for the time outside the kernels.

        Args:
            top (int): rows shown (the rest are summed into one line). Default: 20.
            mode (str, optional): as in `stats`.

        Returns:
            str.

        Raises:
            TypeError: `top` is not an int. ValueError: `top` < 1. As `stats` otherwise.
        """
        if not isinstance(top, int) or isinstance(top, bool):
            raise TypeError(f"For 'OpProfile.table', 'top' must be an int, but got {type(top).__name__}.")
        if top < 1:
            raise ValueError(f"For 'OpProfile.table', 'top' must be >= 1, but got {top}.")
        rows = self.stats(mode)
        lines = [f"{'op':<28} {'mode':<9} {'calls':>7} {'total ms':>10} {'mean us':>10} {'% wall':>7}",
                 "-" * 76]
        for r in rows[:top]:
            lines.append(f"{r['op']:<28} {r['mode']:<9} {r['calls']:>7} {r['total_ms']:>10.3f} {r['mean_us']:>10.1f} "
                         f"{r['percent']:>6.1f}%")
        rest = rows[top:]
        wall = self.wall_ms or 0.0
        if rest:
            ms = sum(r["total_ms"] for r in rest)
            lines.append(f"{f'({len(rest)} more ops)':<28} {'':<9} {sum(r['calls'] for r in rest):>7} {ms:>10.3f} "
                         f"{'':>10} {100 * ms / wall if wall else 0:>6.1f}%")
        other = wall - self.total_ms  # all modes' kernels: the rest is Python and dispatch work
        lines.append(f"{'(outside kernels)':<28} {'':<9} {'':>7} {other:>10.3f} {'':>10} "
                     f"{100 * other / wall if wall else 0:>6.1f}%")
        lines.append(f"{'(wall)':<28} {'':<9} {'':>7} {wall:>10.3f}")
        return "\n".join(lines)


def profile():
    """Opens a per-op profile: `with kiln.runtime.profile() as prof:` times every op the block runs.

    Returns:
        OpProfile: fill on exit of the `with` block; read it with `prof.stats()` / `prof.table()` /
        `prof.total_ms` / `prof.wall_ms`. Profiles may nest and overlap (also across threads); each sees the ops
        of the whole process during its block. One object can be entered once.
    """
    return OpProfile()


def is_profiling():
    """True while some `kiln.runtime.profile()` block is open (in any thread)."""
    return bool(_engine._profiler_enabled())

