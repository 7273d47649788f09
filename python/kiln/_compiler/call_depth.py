"""`kiln.set_recursion_limit` (MindSpore 2.10's `mindspore.set_recursion_limit(recursion_limit=1000)`): the limit on
the depth of nested function calls while a function is compiled (jit / GRAPH_MODE).

Kiln compiles by tracing: the function runs in Python with symbolic tensors, and every call of a user function
(module, helper, method: kiln/_compiler/ast_rewrite.py's `callee`) is one level, the compiled function itself level 1.
  - Deeper than the limit: RuntimeError "Exceed function call depth limit N, (function call depth: D)." (MindSpore's
    message; MindSpore counts some internal calls as well, so its depth for the same code is a few levels more).
  - Up to the limit the trace must not stop at Python's own recursion limit (1000 Python frames, and a traced call
    takes several frames: Kiln's call wrappers): while tracing, Python's limit is raised to the current depth + limit ×
    frames per level (restored afterwards, once no thread is tracing). As MindSpore warns, a very large limit needs a
    large thread stack too (threading.stack_size), or deep recursion crashes the process.
Per process, as MindSpore's (the setting is global); the depth count is per thread."""
import contextlib
import functools
import sys
import threading

_limit = [1000]
_FRAMES_PER_LEVEL = 8  # Python frames a traced call takes (measured 4-5 for rewritten functions; slack for wrappers)
_state = threading.local()
_lock = threading.Lock()
_active = [0, None]  # threads tracing now, Python's recursion limit before the first of them raised it


def set_recursion_limit(recursion_limit=1000):
    """MindSpore's set_recursion_limit(recursion_limit=1000): the maximum depth of nested function calls in a function
    being compiled (module docstring). Raises TypeError for a non-int (bool included), ValueError for a value ≤ 0."""
    if type(recursion_limit) is not int:
        raise TypeError(f"The input value must be int, but got '{type(recursion_limit).__name__}'")
    if recursion_limit <= 0:
        raise ValueError(f"The input value must be int and must > 0, but got '{recursion_limit}' with type 'int'.")
    _limit[0] = recursion_limit


def get_recursion_limit():
    """The current limit (int)."""
    return _limit[0]


def _frame_depth():
    f, n = sys._getframe(1), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


@contextlib.contextmanager
def trace_scope():
    """Around one trace: the call depth starts at 1 in this thread and Python's recursion limit leaves room for the
    configured depth."""
    saved_depth = getattr(_state, "depth", None)
    _state.depth = 1
    need = _frame_depth() + _limit[0] * _FRAMES_PER_LEVEL + 100
    with _lock:
        if _active[0] == 0:
            _active[1] = sys.getrecursionlimit()
        _active[0] += 1
        if need > sys.getrecursionlimit():
            sys.setrecursionlimit(need)
    try:
        yield
    finally:
        _state.depth = saved_depth
        with _lock:
            _active[0] -= 1
            if _active[0] == 0:
                sys.setrecursionlimit(_active[1])


def counted(fn):
    """`fn` counting one call level while it runs (raises RuntimeError past the limit); `fn` itself outside a
    trace_scope."""
    if getattr(_state, "depth", None) is None:
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        depth = _state.depth + 1
        if depth > _limit[0]:
            raise RuntimeError(f"Exceed function call depth limit {_limit[0]}, (function call depth: {depth}). "
                               "Raise it with mindspore.set_recursion_limit(n) if the recursion is intended.")
        _state.depth = depth
        try:
            return fn(*args, **kwargs)
        finally:
            _state.depth = depth - 1
    return call
