"""The Cells a compiled graph depends on (its guard cells): their `training` flags (and mixed-precision dtype,
Cell.recompute()) are part of the compile cache's key (Note [the compile cache] in jit.py).

Cells report here: `_record_cell` when one runs while a trace is recording (nn/cell.py), `_bump_train_state` when
one's flag changes (set_train, load_state_dict); a JitFunction memoizes its guard cells' flags until the epoch moves."""
import threading

_lock = threading.Lock()
_flags_epoch = [0]  # bumped (under _lock) after any Cell's training flag changed: memoized flag tuples are stale
_recording = [0]  # number of traces in progress on any thread: Cell calls are recorded only when non-zero
_local = threading.local()  # .records: this thread's stack of lists of the Cells called while tracing


def _bump_train_state():
    """Called after a Cell's `training` flag changed: every function recomputes its flag tuple on its next call."""
    with _lock:
        _flags_epoch[0] += 1


def _record_cell(cell):
    """Notes that `cell` ran while this thread traces (its training flag then keys the graph being compiled)."""
    stack = getattr(_local, "records", None)
    if stack:
        stack[-1].append(cell)


def _flag_of(ref):
    """A guard cell's part of the key: its training flag, and with mixed precision (Cell.to_float, kiln.amp) the
    dtype it runs in too, so a network converted after a first compile is traced again (and Cell.recompute())."""
    cell = ref()
    if cell is None:
        return None
    d = cell.__dict__
    mp = d.get("_mp_dtype")
    flag = d.get("training") if mp is None else (d.get("training"), str(mp))
    return flag if d.get("_recompute") is None else (flag, "recompute")  # Cell.recompute() after a compile


def _cells_named_by(fn):
    """The Cells a plain function names through its closure or its globals (one level; calls are recorded)."""
    from ..nn.cell import Cell
    out = [fn] if isinstance(fn, Cell) else []
    self_obj = getattr(fn, "__self__", None)
    if isinstance(self_obj, Cell):
        out.append(self_obj)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return out
    for c in getattr(fn, "__closure__", None) or ():
        try:
            v = c.cell_contents
        except ValueError:  # an empty closure cell
            continue
        if isinstance(v, Cell):
            out.append(v)
    glb = getattr(fn, "__globals__", None) or {}
    for name in code.co_names:
        v = glb.get(name)
        if isinstance(v, Cell):
            out.append(v)
    return out
