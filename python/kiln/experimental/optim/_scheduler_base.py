"""LRScheduler, the base of kiln.experimental.optim.lr_scheduler (MindSpore 2.10's
mindspore.experimental.optim.lr_scheduler.LRScheduler).

A scheduler changes the optimizer's learning rates in place: its `_last_lr` are the optimizer's lr Parameters
(`optimizer.lrs`, one 0-d float32 Parameter per group), so a compiled training step sees every change, and
`last_epoch` is a 0-d float32 Parameter named `last_epoch_<class name>`, as MindSpore's. The built-in schedules
compute in Python floats (float64) from the current lr values and write float32; a subclass written for MindSpore
(a `get_lr` with Tensor arithmetic on `self._last_lr` / `self.last_epoch`, returning Tensors) works too.
`step()` is called eagerly (between training steps), not inside a compiled function.
"""
import numbers

import numpy as np

from ... import _engine
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from .optimizer import Optimizer

__all__ = ["LRScheduler"]


def _copy(t):
    """A float32 Tensor holding t's current value (not sharing its storage)."""
    return _kernels.cast(_ops.mul(t, 1.0), mstype.float32) if isinstance(t, _Tensor) else \
        _kernels.full([], float(t), mstype.float32)


def _scalar(v):
    """A Python float from a number or a one-element Tensor."""
    if isinstance(v, _Tensor):
        return float(np.asarray(v.asnumpy()).reshape(-1)[0])
    return float(v)


def _assign_lr(param, value):
    """Writes `value` (a number or a Tensor) into the 0-d float32 lr Parameter."""
    if isinstance(value, _Tensor):
        if value.ndim:
            value = _kernels.reshape(value, [])
        value = value if value.dtype == mstype.float32 else _kernels.cast(value, mstype.float32)
    else:
        value = _kernels.full([], float(value), mstype.float32)
    _kernels.assign(param, value)


def check_eager(scheduler):
    """RuntimeError when a scheduler is stepped while a function is being compiled (the built-in schedules read
    the current lr values in Python)."""
    if _engine.tracing():
        raise RuntimeError(f"For '{type(scheduler).__name__}', step() runs eagerly: call it outside the compiled "
                           f"(@jit) function, between training steps; the optimizer inside the compiled step reads "
                           f"the lr Parameters it sets.")


def check_optimizer(optimizer, cls_name):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"For '{cls_name}', the 'optimizer' must be a kiln.experimental.optim.Optimizer (an optimizer "
                        f"with param_groups), but got {type(optimizer).__name__}.")


def check_int(value, name, cls_name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the '{name}' must be int, but got {type(value)}.")
    return value


def check_float(value, name, cls_name, allow_int=False):
    ok = isinstance(value, float) or (allow_int and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise TypeError(f"For '{cls_name}', the '{name}' must be float{' or int' if allow_int else ''}, but got "
                        f"{type(value)}.")
    return float(value)


def per_group(value, optimizer, name):
    """`value` repeated per group, or a list/tuple with one value per group (ValueError for another length)."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"Expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


class LRScheduler:
    """Base class of the learning-rate schedulers (mindspore.experimental.optim.lr_scheduler.LRScheduler).

    A subclass defines `get_lr()` (the new lr of each group, numbers or 0-d Tensors, from `self.last_epoch`,
    `self._last_lr` (the current lrs) and `self.base_lrs`), and optionally `_get_closed_form_lr()` used by
    `step(epoch)`.

    Args:
        optimizer (kiln.experimental.optim.Optimizer): the optimizer whose groups' lr it changes.
        last_epoch (int, default -1): the index of the last epoch; -1 starts afresh (each group's 'initial_lr' is
            set to its lr), otherwise each group must already hold 'initial_lr' (resuming).
    Attributes: optimizer, base_lrs (the groups' 'initial_lr', 0-d Tensors), last_epoch (0-d float32 Parameter).
    The constructor takes the first step (last_epoch becomes last_epoch + 1).
    Raises:
        TypeError: optimizer not an experimental Optimizer; last_epoch not int.
        ValueError: last_epoch < -1.
        KeyError: resuming (last_epoch ≥ 0) with a group without 'initial_lr'.
    """

    def __init__(self, optimizer, last_epoch=-1):
        name = type(self).__name__
        check_optimizer(optimizer, name)
        check_int(last_epoch, "last_epoch", name)
        if last_epoch < -1:
            raise ValueError(f"For '{name}', invalid last_epoch: {last_epoch} (expected -1 or an epoch index >= 0).")
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   f"optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.optimizer = optimizer
        self._last_lr = list(optimizer.lrs)
        self.groups_num = len(optimizer.param_groups)
        self.last_epoch = Parameter(_kernels.full([], float(last_epoch), mstype.float32), name="last_epoch_" + name)
        self.step()

    def get_lr(self):
        """The groups' new learning rates at `last_epoch` (defined by each scheduler)."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr() (LRScheduler is the base class).")

    def get_last_lr(self):
        """The learning rate of each group, as 0-d float32 Tensors (copies: later steps do not change them)."""
        return [_copy(lr) for lr in self._last_lr]

    # Helpers of the built-in schedules.
    def _epoch(self):
        return _scalar(self.last_epoch)

    def _lrs(self):
        return [_scalar(lr) for lr in self._last_lr]

    def _bases(self):
        return [_scalar(b) for b in self.base_lrs]

    def step(self, epoch=None):
        """Advances last_epoch by one and sets each group's lr to get_lr(); with `epoch` (a number), jumps to that
        epoch (the closed form of the schedule where it has one, else get_lr()). Returns True.
        Raises RuntimeError inside a function being compiled."""
        check_eager(self)
        if epoch is None:
            _kernels.assign(self.last_epoch, _ops.add(self.last_epoch, 1.0))
            values = self.get_lr()
        else:
            if not isinstance(epoch, (numbers.Real, _Tensor)) or isinstance(epoch, bool):
                raise TypeError(f"For '{type(self).__name__}.step', the 'epoch' must be a number, but got "
                                f"{type(epoch).__name__}.")
            _kernels.assign(self.last_epoch, _kernels.full([], _scalar(epoch), mstype.float32))
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for i in range(self.groups_num):
            _assign_lr(self._last_lr[i], values[i])
        return True
