"""kiln.experimental.optim.lr_scheduler — MindSpore 2.10's mindspore.experimental.optim.lr_scheduler: schedules
that change the learning rate of each parameter group of an experimental optimizer, with PyTorch's semantics
(torch.optim.lr_scheduler; the formulas below are PyTorch's and MindSpore's).

    optimizer = optim.Adam(net.trainable_params(), lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(...)          # optimizer(grads) reads the group lr Parameters
        scheduler.step()
    scheduler.get_last_lr()           # [Tensor(shape=[], dtype=Float32, value= 0.0001)]

e is `last_epoch` after the step, lr the group's current lr, base its 'initial_lr'. Most schedules are chainable
(they scale the current lr, so they compose with other schedules and manual changes); `step(epoch)` jumps to an
epoch with the closed form where the schedule has one.
"""
from bisect import bisect_right
from collections import Counter
import math

from ._scheduler_base import LRScheduler, check_float, check_int
from ._scheduler_more import CosineAnnealingWarmRestarts, CyclicLR, ReduceLROnPlateau, SequentialLR

__all__ = ["StepLR", "LinearLR", "LRScheduler", "ExponentialLR", "PolynomialLR", "MultiplicativeLR", "ConstantLR",
           "MultiStepLR", "LambdaLR", "SequentialLR", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
           "CosineAnnealingLR"]


class StepLR(LRScheduler):
    """Multiplies each group's lr by gamma every step_size epochs: lr = base·gamma^⌊e / step_size⌋.

    Args: optimizer, step_size (int > 0), gamma (float, default 0.1), last_epoch (int, default -1).
    Raises: TypeError for a non-int step_size or non-float gamma; ValueError for step_size ≤ 0; the LRScheduler
        errors."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = check_int(step_size, "step_size", "StepLR")
        if step_size <= 0:
            raise ValueError(f"For 'StepLR', the 'step_size' must be > 0, but got {step_size}.")
        self.gamma = check_float(gamma, "gamma", "StepLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = self._epoch()
        if e == 0 or e % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self._epoch() // self.step_size) for b in self._bases()]


class LinearLR(LRScheduler):
    """Scales each group's lr by a factor going linearly from start_factor to end_factor over total_iters epochs:
    lr = base·(s + (f − s)·min(e, total_iters)/total_iters).

    Args: optimizer, start_factor (in (0, 1], default 1/3), end_factor (in [0, 1], default 1.0), total_iters (int,
        default 5), last_epoch (int, default -1).
    Raises: ValueError for a factor outside its range; TypeError for a non-int total_iters."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(f"For 'LinearLR', the starting multiplicative factor expected to be greater than 0 and "
                             f"less than or equal to 1, but got {start_factor}.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(f"For 'LinearLR', the ending multiplicative factor expected to be between 0 and 1, but "
                             f"got {end_factor}.")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = check_int(total_iters, "total_iters", "LinearLR")
        if total_iters <= 0:
            raise ValueError(f"For 'LinearLR', the 'total_iters' must be > 0, but got {total_iters}.")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, s, f = self._epoch(), self.start_factor, self.end_factor
        if e == 0:
            return [lr * s for lr in self._lrs()]
        if e > self.total_iters:
            return self._lrs()
        factor = 1.0 + (f - s) / (self.total_iters * s + (e - 1) * (f - s))
        return [lr * factor for lr in self._lrs()]

    def _get_closed_form_lr(self):
        e, s, f = self._epoch(), self.start_factor, self.end_factor
        return [b * (s + (f - s) * min(self.total_iters, e) / self.total_iters) for b in self._bases()]


class ExponentialLR(LRScheduler):
    """Multiplies each group's lr by gamma every epoch: lr = base·gamma^e.

    Args: optimizer, gamma (float), last_epoch (int, default -1). Raises: TypeError for a non-float gamma."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = check_float(gamma, "gamma", "ExponentialLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._epoch() == 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** self._epoch() for b in self._bases()]


class PolynomialLR(LRScheduler):
    """Decays each group's lr polynomially to 0 over total_iters epochs: lr = base·(1 − min(e, T)/T)^power.

    Args: optimizer, total_iters (int, default 5), power (float ≥ 0, default 1.0), last_epoch (int, default -1).
    Raises: TypeError for a non-float power or non-int total_iters; ValueError for power < 0."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.power = check_float(power, "power", "PolynomialLR")
        if power < 0:
            raise ValueError(f"For 'PolynomialLR', the 'power' must be >= 0, but got {power}.")
        self.total_iters = check_int(total_iters, "total_iters", "PolynomialLR")
        if total_iters <= 0:
            raise ValueError(f"For 'PolynomialLR', the 'total_iters' must be > 0, but got {total_iters}.")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, t = self._epoch(), self.total_iters
        if e == 0 or e > t:
            return self._lrs()
        factor = ((1.0 - e / t) / (1.0 - (e - 1) / t)) ** self.power
        return [lr * factor for lr in self._lrs()]

    def _get_closed_form_lr(self):
        e, t = self._epoch(), self.total_iters
        return [b * (1.0 - min(t, e) / t) ** self.power for b in self._bases()]


def _lambdas(lr_lambda, optimizer):
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
        fns = list(lr_lambda)
    else:
        fns = [lr_lambda] * n
    for fn in fns:
        if not callable(fn):
            raise TypeError(f"The 'lr_lambda' must be a function of the epoch (or a list of them, one per group), but "
                            f"got {type(fn).__name__}.")
    return fns


class LambdaLR(LRScheduler):
    """Sets each group's lr to base·lr_lambda(e) (e passed as an int).

    Args: optimizer, lr_lambda (a function of the epoch, or a list with one per group), last_epoch (int, default
        -1). Raises: ValueError for a list of another length than the groups; TypeError for a non-callable."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _lambdas(lr_lambda, optimizer)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = int(self._epoch())
        return [b * float(fn(e)) for fn, b in zip(self.lr_lambdas, self._bases())]


class MultiplicativeLR(LRScheduler):
    """Multiplies each group's lr by lr_lambda(e) every epoch after the first (e passed as an int).

    Args and errors as LambdaLR."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _lambdas(lr_lambda, optimizer)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = int(self._epoch())
        if e > 0:
            return [lr * float(fn(e)) for fn, lr in zip(self.lr_lambdas, self._lrs())]
        return self._lrs()


class MultiStepLR(LRScheduler):
    """Multiplies each group's lr by gamma at each milestone (by gamma^k for a milestone listed k times):
    lr = base·gamma^(number of milestones ≤ e).

    Args: optimizer, milestones (list of ints), gamma (float or int, default 0.1), last_epoch (int, default -1).
    Raises: TypeError for milestones not a list of ints, or a non-number gamma."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        if not isinstance(milestones, list):
            raise TypeError(f"For 'MultiStepLR', the 'milestones' must be a list of int, but got {type(milestones)}.")
        for m in milestones:
            check_int(m, "milestones", "MultiStepLR")
        self.gamma = check_float(gamma, "gamma", "MultiStepLR", allow_int=True)
        self.milestones = Counter(milestones)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = self._epoch()
        if e == int(e) and int(e) in self.milestones:
            k = self.milestones[int(e)]
            return [lr * self.gamma ** k for lr in self._lrs()]
        return self._lrs()

    def _get_closed_form_lr(self):
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, self._epoch()) for b in self._bases()]


class ConstantLR(LRScheduler):
    """Scales each group's lr by factor until epoch total_iters: lr = base·factor for e < total_iters, then base.

    Args: optimizer, factor (in [0, 1], default 1/3), total_iters (int, default 5), last_epoch (int, default -1).
    Raises: ValueError for factor outside [0, 1]; TypeError for a non-int total_iters."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError(f"For 'ConstantLR', the constant multiplicative factor expected to be between 0 and 1, "
                             f"but got {factor}.")
        self.factor = float(factor)
        self.total_iters = check_int(total_iters, "total_iters", "ConstantLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = self._epoch()
        if e == 0:
            return [lr * self.factor for lr in self._lrs()]
        if e != self.total_iters:
            return self._lrs()
        return [lr / self.factor for lr in self._lrs()]

    def _get_closed_form_lr(self):
        on = 1.0 if self._epoch() >= self.total_iters else 0.0
        return [b * (self.factor + on * (1 - self.factor)) for b in self._bases()]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing [Loshchilov & Hutter, SGDR 2017] without restarts:
    lr = eta_min + (base − eta_min)·(1 + cos(π·e/T_max))/2 (chainable form: it follows manual lr changes).

    Args: optimizer, T_max (int, the half period), eta_min (float or int, default 0.0), last_epoch (int, default
        -1). Raises: TypeError for a non-int T_max or non-number eta_min."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.eta_min = check_float(eta_min, "eta_min", "CosineAnnealingLR", allow_int=True)
        self.T_max = check_int(T_max, "T_max", "CosineAnnealingLR")
        if T_max <= 0:
            raise ValueError(f"For 'CosineAnnealingLR', the 'T_max' must be > 0, but got {T_max}.")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, t, lo = self._epoch(), self.T_max, self.eta_min
        if e == 0:
            return self._lrs()
        if (e - 1 - t) % (2 * t) == 0:
            return [lr + (b - lo) * (1 - math.cos(math.pi / t)) / 2 for b, lr in zip(self._bases(), self._lrs())]
        ratio = (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
        return [ratio * (lr - lo) + lo for lr in self._lrs()]

    def _get_closed_form_lr(self):
        e, t, lo = self._epoch(), self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / t)) / 2 for b in self._bases()]
