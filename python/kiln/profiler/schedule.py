"""`mindspore.profiler.schedule`: which steps a Profiler records (MindSpore 2.10's Schedule and ProfilerAction).

The cycle (MindSpore's): skip the first `skip_first` steps, then repeat [wait steps (NONE), warmup steps (WARM_UP),
active steps (RECORD, the last one RECORD_AND_SAVE)]; `repeat` cycles (0: until the profiler stops). A bad value of
wait/warmup/repeat/skip_first (not an int >= 0) or of active (not an int >= 1) is logged as a warning and reset to
0 (active: 1), as MindSpore 2.10 does; a missing `wait` or `active` is Python's TypeError.
"""
from enum import Enum

from .. import log as _log

__all__ = ["ProfilerAction", "Schedule"]


class ProfilerAction(Enum):
    """What the profiler does in one step: NONE, WARM_UP, RECORD, RECORD_AND_SAVE (record, then save the trace)."""
    NONE = 0
    WARM_UP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3

    @staticmethod
    def get_by_value(value):
        """The member whose value is `value`, or None."""
        return {a.value: a for a in ProfilerAction}.get(value)


def _bad_int(v, low):
    return not isinstance(v, int) or isinstance(v, bool) or v < low


class Schedule:
    """schedule(*, wait, active, warmup=0, repeat=0, skip_first=0): the action of each step (module docstring).

    Calling it with a step number (int >= 0) returns that step's ProfilerAction.

    Raises:
        TypeError: `wait` or `active` not given (keyword-only).
        ValueError: (on call) a negative step.
    """

    def __init__(self, *, wait, active, warmup=0, repeat=0, skip_first=0):
        self.wait, self.active, self.warmup, self.repeat, self.skip_first = wait, active, warmup, repeat, skip_first
        for name in ("wait", "warmup", "repeat", "skip_first"):
            if _bad_int(getattr(self, name), 0):
                _log.warning("Parameter '%s' should be of type int, but got %s. reset to int 0.", name,
                             type(getattr(self, name)).__name__)
                setattr(self, name, 0)
        if _bad_int(self.active, 1):
            _log.warning("Parameter 'active' should be of type int, but got %s. reset to int 1.",
                         type(self.active).__name__)
            self.active = 1
        if self.warmup == 0:
            _log.warning("Profiler won't be using warmup, this can skew profiler results")

    def __call__(self, step):
        if step < 0:
            raise ValueError("Invalid parameter step, which must be not less than 0.")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        cycle = self.wait + self.warmup + self.active
        if 0 < self.repeat <= step / cycle:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < self.wait:
            return ProfilerAction.NONE
        if mod < self.wait + self.warmup:
            return ProfilerAction.WARM_UP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    def __repr__(self):
        return (f"Schedule(wait={self.wait!r}, active={self.active!r}, warmup={self.warmup!r}, "
                f"repeat={self.repeat!r}, skip_first={self.skip_first!r})")

    def to_dict(self):
        """{'wait', 'active', 'warmup', 'repeat', 'skip_first'}."""
        return {"wait": self.wait, "active": self.active, "warmup": self.warmup, "repeat": self.repeat,
                "skip_first": self.skip_first}


def _default_schedule_fn(_step):
    """Without a schedule: every step records."""
    return ProfilerAction.RECORD
