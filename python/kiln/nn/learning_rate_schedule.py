"""Learning-rate schedules as Cells (MindSpore's `nn.LearningRateSchedule` family; reference §5.3): an optimizer
given one calls it with its `global_step` (an Int32 tensor of shape (1,)) at every step and uses the result.

All schedules are tensor code (no host reads), so they run inside compiled optimizer updates and kiln.jit steps.

Formulas (p = global_step / decay_steps, floored when is_stair):
  ExponentialDecayLR:  lr · decay_rate^p
  NaturalExpDecayLR:   lr · exp(−decay_rate · p)
  InverseDecayLR:      lr / (1 + decay_rate · p)
  CosineDecayLR:       min_lr + 0.5·(max_lr − min_lr)·(1 + cos(π · min(step, decay_steps) / decay_steps))
  PolynomialDecayLR:   (lr − end_lr)·(1 − min(step, decay_steps)/decay_steps)^power + end_lr
                       (update_decay_steps: decay_steps ← decay_steps · max(1, ⌈step/decay_steps⌉))
  WarmUpLR:            lr · min(step, warmup_steps) / warmup_steps
"""
import math

from .. import ops as _ops
from ..ops import _kernels
from ..common import dtype as mstype
from .cell import Cell

__all__ = ["LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR",
           "PolynomialDecayLR", "WarmUpLR"]


def _check_positive_float(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cls}', the '{name}' must be float, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls}', the '{name}' must be greater than 0, but got {value}.")
    return float(value)


def _check_non_negative_float(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cls}', the '{name}' must be float, but got {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"For '{cls}', the '{name}' must be at least 0, but got {value}.")
    return float(value)


def _check_positive_int(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls}', the '{name}' must be greater than 0, but got {value}.")
    return value


def _step_f32(global_step):
    return _kernels.cast(global_step, mstype.float32)


class LearningRateSchedule(Cell):
    """Base class: `construct(global_step)` returns the learning rate (float32 Tensor) for that step.

    Write construct with Kiln ops on tensors: optimizers compile their update (schedule included) into a graph, in
    which a tensor's value is unknown (`.asnumpy()`, `float(t)` or `if t > 0:` raise). A user schedule that must
    compute on the host can set the class attribute `_host_side = True`: optimizers using it then run their
    update eagerly (op by op) instead of compiling it."""

    _host_side = False

    def construct(self, global_step):
        raise NotImplementedError


class _DecayBase(LearningRateSchedule):
    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _check_positive_float(learning_rate, "learning_rate", cls)
        self.decay_rate = _check_positive_float(decay_rate, "decay_rate", cls)
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", cls)
        if not isinstance(is_stair, bool):
            raise TypeError(f"For '{cls}', the 'is_stair' must be bool, but got {type(is_stair).__name__}.")
        self.is_stair = is_stair

    def _p(self, global_step):
        p = _kernels.div(_step_f32(global_step), float(self.decay_steps))
        if self.is_stair:
            p = _kernels.floor(p)
        return p


class ExponentialDecayLR(_DecayBase):
    """lr · decay_rate^(step/decay_steps) (exponent floored when is_stair)."""

    def construct(self, global_step):
        return _ops.mul(_kernels.pow(self.decay_rate, self._p(global_step)), self.learning_rate)


class NaturalExpDecayLR(_DecayBase):
    """lr · exp(−decay_rate · step/decay_steps) (floored when is_stair)."""

    def construct(self, global_step):
        return _ops.mul(_ops.exp(_ops.mul(self._p(global_step), -self.decay_rate)), self.learning_rate)


class InverseDecayLR(_DecayBase):
    """lr / (1 + decay_rate · step/decay_steps) (floored when is_stair)."""

    def construct(self, global_step):
        return _kernels.div(self.learning_rate, _ops.add(_ops.mul(self._p(global_step), self.decay_rate), 1.0))


class CosineDecayLR(LearningRateSchedule):
    """min_lr + 0.5·(max_lr − min_lr)·(1 + cos(π·min(step, decay_steps)/decay_steps)), in float32.

    Args: min_lr (float ≥ 0), max_lr (float > min_lr), decay_steps (int > 0).
    Raises TypeError/ValueError for bad arguments (max_lr ≤ min_lr: ValueError).
    Pure tensor code: usable inside compiled optimizer updates and kiln.jit steps."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        cls = type(self).__name__
        self.min_lr = _check_non_negative_float(min_lr, "min_lr", cls)
        self.max_lr = _check_positive_float(max_lr, "max_lr", cls)
        if self.min_lr >= self.max_lr:
            raise ValueError(f"For '{cls}', the 'max_lr' should be greater than 'min_lr', but got 'max_lr' value "
                             f"{max_lr} and 'min_lr' value {min_lr}.")
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", cls)
        self.__dict__["_delta"] = 0.5 * (self.max_lr - self.min_lr)

    def construct(self, global_step):
        p = _ops.minimum(_step_f32(global_step), float(self.decay_steps))
        cos = _kernels.cos(_ops.mul(p, math.pi / self.decay_steps))
        return _ops.add(_ops.mul(_ops.add(cos, 1.0), self._delta), self.min_lr)


class PolynomialDecayLR(LearningRateSchedule):
    """(lr − end_lr)·(1 − step/D)^power + end_lr, in float32, with step = min(global_step, decay_steps) and
    D = decay_steps; with update_decay_steps: step = global_step and D = decay_steps·max(⌈step/decay_steps⌉, 1).

    Args: learning_rate (float > 0), end_learning_rate (float ≥ 0), decay_steps (int > 0), power (float > 0),
        update_decay_steps (bool).
    Pure tensor code: usable inside compiled optimizer updates and kiln.jit steps."""

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        cls = type(self).__name__
        self.start_learning_rate = _check_positive_float(learning_rate, "learning_rate", cls)
        self.end_learning_rate = _check_non_negative_float(end_learning_rate, "end_learning_rate", cls)
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", cls)
        self.power = _check_positive_float(power, "power", cls)
        if not isinstance(update_decay_steps, bool):
            raise TypeError(f"For '{cls}', the 'update_decay_steps' must be bool.")
        self.update_decay_steps = update_decay_steps
        self.__dict__["_diff"] = self.start_learning_rate - self.end_learning_rate

    def construct(self, global_step):
        step = _step_f32(global_step)
        steps = float(self.decay_steps)
        if self.update_decay_steps:
            decay = _ops.mul(_ops.maximum(_kernels.ceil(_kernels.div(step, steps)), 1.0), steps)
            p = _kernels.div(step, decay)
        else:
            p = _kernels.div(_ops.minimum(step, steps), steps)
        return _ops.add(_ops.mul(_kernels.pow(_ops.sub(1.0, p), self.power), self._diff), self.end_learning_rate)


class WarmUpLR(LearningRateSchedule):
    """lr · min(step, warmup_steps) / warmup_steps."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _check_positive_float(learning_rate, "learning_rate", cls)
        self.warmup_steps = _check_positive_int(warmup_steps, "warmup_steps", cls)

    def construct(self, global_step):
        p = _kernels.div(_ops.minimum(_step_f32(global_step), float(self.warmup_steps)), float(self.warmup_steps))
        return _ops.mul(p, self.learning_rate)
