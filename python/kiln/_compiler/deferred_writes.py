"""Writes into Parameters under a gradient inside a compiled function: values, not in-place ops (issue 11).

Note [deferred state writes]. In a compiled (top-level) trace, `ops.assign(self.w, v)` records an in-place Assign
node. Without a gradient that is exact: the executor runs the nodes in order, so a read of w before the Assign sees
the old value and one after it the new. Under a gradient transform it is not: a backward node that uses w (the
derivative of x * w is w) reads w's buffer when the backward runs, after every Assign, so a loop that assigns
0, 1, 2 to w and sums x * w got the gradient 3 * 2 instead of 0 + 1 + 2. MindSpore 2.10's graph mode gives each
read the value current at that point (its auto-monad), so its gradient is 3.

So while a gradient is recorded in a top-level trace, a write into a Parameter (or other state tensor from outside
the function) does not write: the Python object is rebound to the new (symbolic) value, so later reads, forward
and backward, use that value, while the backward of earlier reads keeps reading the untouched buffer. When the
trace ends, every such object gets its real tensor back and one Assign per object, recorded after everything else,
writes the final value (`flush`). Sub-graph traces (branches and loop bodies) keep the in-place Assign: a frame of
None marks them; a Parameter already rebound in the outer trace can not be written inside one (RuntimeError).
"""
import threading

import numpy as np

from .. import _engine
from ..ops import _kernels

_local = threading.local()


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


class scope:
    """`with scope(top):` around a trace: top=True for a jit's trace (writes may be deferred), False for a
    sub-graph trace (writes stay in place). Yields the frame (a dict, or None); `flush(frame)` before the trace
    finishes; leaving the scope always gives every rebound object its real tensor back."""

    def __init__(self, top):
        self.frame = {} if top else None

    def __enter__(self):
        _stack().append(self.frame)
        return self.frame

    def __exit__(self, *exc):
        _stack().pop()
        if self.frame:
            for obj, real in self.frame.values():
                obj._rebind(real)
            self.frame.clear()
        return False


def real_tensor(target):
    """The tensor that target stands for outside the trace (target itself unless rebound by a deferred write)."""
    s = getattr(_local, "stack", None)
    if s:
        frame = s[-1]
        if frame and id(target) in frame and frame[id(target)][0] is target:
            return frame[id(target)][1]
    return target


def defer(target, new, what):
    """Rebinds the state tensor target to `new` instead of assigning in place, when the innermost trace is a
    top-level one and a gradient is being recorded (or target was already rebound there). Returns True when it
    did; False: the caller assigns in place."""
    s = getattr(_local, "stack", None)
    if not s:
        return False
    frame = s[-1]
    if frame is None:
        for outer in s:
            if outer and id(target) in outer and outer[id(target)][0] is target:
                raise RuntimeError(
                    f"{what}: this Parameter was written under a gradient earlier in the compiled function, so it "
                    f"can not be written again inside a tensor-dependent branch or loop, at "
                    f"{_engine._user_location()}. Compute the new value with ops.select / the loop's result and "
                    "assign it once after the branch or loop.")
        return False
    known = id(target) in frame and frame[id(target)][0] is target
    if not known and _engine.grad_level() == 0:
        return False
    if not known:
        real = _engine.Tensor._from_numpy(np.zeros((), np.float32))
        real._rebind(target)
        frame[id(target)] = (target, real)
    # MindSpore's reads after an Assign load the Parameter: no gradient flows back through the assigned value.
    target._rebind(_kernels.stop_gradient(new))
    return True


def flush(frame):
    """Gives every rebound object its real tensor back and records one Assign of its final value (after every node
    recorded so far). Call inside the trace, before it finishes."""
    if not frame:
        return
    items = list(frame.values())
    frame.clear()
    for obj, real in items:
        final = _engine.Tensor._from_numpy(np.zeros((), np.float32))
        final._rebind(obj)
        obj._rebind(real)
        _kernels.assign(obj, final)
