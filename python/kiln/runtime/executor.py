"""`mindspore.runtime.launch_blocking`: run ops synchronously."""

__all__ = ["launch_blocking"]

_STATE = {"blocking": False}


def launch_blocking():
    """Makes every op finish before the Python call that launched it returns, so an op's error is raised at the
    line that called it (MindSpore 2.10: device ops otherwise run asynchronously).

    Kiln's kernels run on the CPU and always finish before the call returns (PyNative and compiled graphs alike),
    so this only records the request (`is_launch_blocking()` is then True); it changes no result and no timing.
    Returns None.
    """
    _STATE["blocking"] = True


def is_launch_blocking():
    """True once `launch_blocking()` was called (Kiln's own)."""
    return _STATE["blocking"]
