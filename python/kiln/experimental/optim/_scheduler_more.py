"""CyclicLR, CosineAnnealingWarmRestarts, SequentialLR and ReduceLROnPlateau of
kiln.experimental.optim.lr_scheduler (MindSpore 2.10's classes of those names; PyTorch's semantics)."""
from bisect import bisect_right
import math
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ._scheduler_base import (LRScheduler, _assign_lr, _copy, _scalar, check_eager, check_float, check_int,
                              check_optimizer, per_group)

__all__ = ["CyclicLR", "CosineAnnealingWarmRestarts", "SequentialLR", "ReduceLROnPlateau"]


def _f32(value):
    return _kernels.full([], float(value), mstype.float32)


class CyclicLR(LRScheduler):
    """Cyclical learning rate [Smith 2017]: each group's lr cycles between base_lr and max_lr, up over
    step_size_up epochs and down over step_size_down; with c = ⌊1 + e/(up + down)⌋ the cycle and
    x = 1 + e/(up + down) − c its phase, lr = base_lr + (max_lr − base_lr)·h(x)·scale(c or e), h rising 0 → 1
    over the up part and falling back. Modes: 'triangular' (scale 1), 'triangular2' (scale 1/2^(c−1)), 'exp_range'
    (scale gamma^e); or a custom scale_fn with scale_mode 'cycle' or 'iterations'. The constructor sets each
    group's lr to base_lr (when last_epoch is -1).

    Args: optimizer, base_lr, max_lr (float, or a list with one per group), step_size_up (default 2000),
        step_size_down (default: step_size_up), mode (default 'triangular'), gamma (default 1.0), scale_fn (a
        function of one argument, default None), scale_mode ('cycle' or 'iterations'), last_epoch (default -1).
    Raises: ValueError for a list of another length than the groups, an unknown mode without scale_fn, an unknown
        scale_mode, or step sizes ≤ 0; the LRScheduler errors."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", last_epoch=-1):
        check_optimizer(optimizer, "CyclicLR")
        base_lrs = [float(v) for v in per_group(base_lr, optimizer, "base_lr")]
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _assign_lr(group["lr"], lr)
        self.max_lrs = [float(v) for v in per_group(max_lr, optimizer, "max_lr")]
        up = float(step_size_up)
        down = up if step_size_down is None else float(step_size_down)
        if up <= 0 or down <= 0:
            raise ValueError(f"For 'CyclicLR', 'step_size_up' and 'step_size_down' must be > 0, but got {up} and "
                             f"{down}.")
        self.total_step_size = up + down
        self.step_up_ratio = up / self.total_step_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"For 'CyclicLR', mode is invalid and scale_fn is None: mode {mode!r} (expected "
                             f"'triangular', 'triangular2' or 'exp_range', or a scale_fn).")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"For 'CyclicLR', the 'scale_fn' must be a function, but got {type(scale_fn).__name__}.")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"For 'CyclicLR', the 'scale_mode' must be 'cycle' or 'iterations', but got "
                             f"{scale_mode!r}.")
        self.mode, self.gamma = mode, float(gamma)
        self._scale_fn_custom = scale_fn
        if scale_fn is None:
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        super().__init__(optimizer, last_epoch)
        self.base_lrs = [_f32(v) for v in base_lrs]

    def scale_fn(self, x):
        """The amplitude scale at x (the cycle, or the epoch for scale_mode 'iterations')."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        e = self._epoch()
        cycle = math.floor(1 + e / self.total_step_size)
        x = 1.0 + e / self.total_step_size - cycle
        if x <= self.step_up_ratio:
            factor = x / self.step_up_ratio
        else:
            factor = (x - 1) / (self.step_up_ratio - 1)
        scale = float(self.scale_fn(cycle if self.scale_mode == "cycle" else e))
        return [b + (m - b) * factor * scale for b, m in zip(self._bases(), self.max_lrs)]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts [Loshchilov & Hutter, SGDR 2017]: lr = eta_min + (base − eta_min)·
    (1 + cos(π·T_cur/T_i))/2, T_cur counting epochs since the last restart, the period T_i starting at T_0 and
    multiplied by T_mult at each restart. `step(epoch)` accepts fractional epochs (as PyTorch's).

    Args: optimizer, T_0 (int > 0), T_mult (int ≥ 1, default 1), eta_min (float or int, default 0), last_epoch
        (default -1). Attributes: T_0, T_i, T_cur (0-d float32 Parameters, as MindSpore's).
    Raises: ValueError for T_0 ≤ 0, T_mult < 1 (or non-int), a negative epoch; TypeError for a non-number eta_min;
        the LRScheduler errors."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1):
        if not isinstance(T_0, int) or isinstance(T_0, bool) or T_0 <= 0:
            raise ValueError(f"T_0 should be an integer greater than 0, but got {T_0}")
        if not isinstance(T_mult, int) or isinstance(T_mult, bool) or T_mult < 1:
            raise ValueError(f"T_mult should be an integer and equal or greater than 1, but got {T_mult}")
        self.T_0 = Parameter(_f32(T_0), name="T_0")
        self.T_i = Parameter(_f32(T_0), name="T_i")
        self.T_mult = T_mult
        self.eta_min = check_float(eta_min, "eta_min", "CosineAnnealingWarmRestarts", allow_int=True)
        self.T_cur = Parameter(_f32(last_epoch), name="T_cur")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        pct = math.pi * _scalar(self.T_cur) / _scalar(self.T_i)
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(pct)) / 2 for b in self._bases()]

    def step(self, epoch=None):
        """Advances one epoch (restarting when T_cur reaches T_i), or jumps to `epoch` (≥ 0, may be
        fractional). Returns True."""
        check_eager(self)
        if epoch is None and self._epoch() < 0:
            epoch = 0.0
        t_i, t_0 = _scalar(self.T_i), _scalar(self.T_0)
        if epoch is None:
            epoch = self._epoch() + 1
            t_cur = _scalar(self.T_cur) + 1
            if t_cur >= t_i:
                t_cur, t_i = t_cur - t_i, t_i * self.T_mult
        else:
            epoch = _scalar(epoch)
            if epoch < 0:
                raise ValueError(f"epoch should be a non-negative integer, but got {epoch}")
            if epoch >= t_0:
                if self.T_mult == 1:
                    t_cur = epoch % t_0
                else:
                    n = int(math.log(epoch / t_0 * (self.T_mult - 1) + 1, self.T_mult))
                    t_cur = epoch - t_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    t_i = t_0 * self.T_mult ** n
            else:
                t_i, t_cur = t_0, epoch
        _kernels.assign(self.T_cur, _f32(t_cur))
        _kernels.assign(self.T_i, _f32(t_i))
        _kernels.assign(self.last_epoch, _f32(math.floor(epoch)))
        for lr, value in zip(self._last_lr, self.get_lr()):
            _assign_lr(lr, value)
        return True


class SequentialLR:
    """Runs schedulers one after another: schedulers[i] from milestone i−1 (epoch 0 for the first) to milestone
    i; at a milestone the next scheduler starts from its epoch 0 (`step(0)`).

    Args: optimizer, schedulers (list of LRSchedulers of this optimizer), milestones (list of ints, one fewer than
        schedulers), last_epoch (int, default -1).
    The constructor resets each group's lr to its 'initial_lr', steps every scheduler's last_epoch back by one and
    takes the first scheduler's first step.
    Raises: ValueError for a scheduler of another optimizer or a milestones list of the wrong length; TypeError for
        a non-scheduler."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        check_optimizer(optimizer, "SequentialLR")
        schedulers = list(schedulers)
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler):
                raise TypeError(f"For 'SequentialLR', schedulers[{i}] must be an LRScheduler, but got "
                                f"{type(s).__name__}.")
            if s.optimizer is not optimizer:
                raise ValueError(f"Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
                                 f"got scheduler at index {i} is different from the optimizer passed in.")
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones {len(milestones)}")
        check_int(last_epoch, "last_epoch", "SequentialLR")
        self._schedulers = schedulers
        self.milestones = milestones
        self.optimizer = optimizer
        self.last_epoch = Parameter(_f32(last_epoch + 1), name="last_epoch_SequentialLR")
        for group in optimizer.param_groups:
            _assign_lr(group["lr"], group["initial_lr"])
        for s in schedulers:
            _kernels.assign(s.last_epoch, _ops.sub(s.last_epoch, 1.0))
        schedulers[0].step()
        self._last_lr = schedulers[0]._last_lr

    def step(self):
        """Advances one epoch on the scheduler whose span holds it. Returns True."""
        check_eager(self)
        _kernels.assign(self.last_epoch, _ops.add(self.last_epoch, 1.0))
        e = int(_scalar(self.last_epoch))
        idx = bisect_right(self.milestones, e)
        if idx > 0 and self.milestones[idx - 1] == e:
            self._schedulers[idx].step(0)
        else:
            self._schedulers[idx].step()
        return True

    def get_last_lr(self):
        """The learning rate of each group, as 0-d float32 Tensors (copies)."""
        return [_copy(lr) for lr in self._last_lr]


class ReduceLROnPlateau:
    """Reduces each group's lr by factor when a metric has stopped improving for more than patience epochs.

    A metric improves on the best so far when (mode 'min') it is below best·(1 − threshold) ('rel') or
    best − threshold ('abs'); (mode 'max') above best·(1 + threshold) or best + threshold. After a reduction
    (lr ← max(lr·factor, min_lr), skipped when it would change lr by eps or less) cooldown epochs pass before
    counting again.

    Args: optimizer, mode ('min' or 'max', default 'min'), factor (< 1, default 0.1), patience (default 10),
        threshold (default 1e-4), threshold_mode ('rel' or 'abs', default 'rel'), cooldown (default 0), min_lr
        (number or a list with one per group, default 0), eps (default 1e-8).
    Attributes: last_epoch (0-d int32 Parameter), best, wait, cooldown_counter (0-d float32 Parameters).
    Raises: ValueError for factor ≥ 1, an unknown mode/threshold_mode, a min_lr list of the wrong length;
        TypeError for a non-optimizer."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError(f"The lr factor should be less than 1.0, but got {factor}.")
        check_optimizer(optimizer, "ReduceLROnPlateau")
        if mode not in ("min", "max"):
            raise ValueError(f"`mode` should be 'min' or 'max', but got {mode}.")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"`threshold mode` should be 'rel' or 'abs', but got {threshold_mode}.")
        for name, v in (("patience", patience), ("cooldown", cooldown), ("threshold", threshold), ("eps", eps)):
            if not isinstance(v, numbers.Real) or isinstance(v, bool):
                raise TypeError(f"For 'ReduceLROnPlateau', the '{name}' must be a number, but got {type(v)}.")
        self.factor = float(factor)
        self.optimizer = optimizer
        self.min_lrs = [float(v) for v in per_group(min_lr, optimizer, "min_lr")]
        self.mode, self.threshold_mode = mode, threshold_mode
        self.patience, self.threshold, self.cooldown, self.eps = patience, float(threshold), cooldown, float(eps)
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = Parameter(_kernels.full([], 0, mstype.int32), name="last_epoch_ReduceLROnPlateau")
        self.best = Parameter(_f32(self.mode_worse), name="best")
        self.cooldown_counter = Parameter(_f32(0), name="cooldown_counter")
        self.wait = Parameter(_f32(0), name="wait")
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_improvement(self, current, best):
        if self.mode == "min":
            return current < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return current > (best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold)

    def in_cooldown(self):
        return _scalar(self.cooldown_counter) > 0

    def step(self, metrics):
        """Takes the epoch's metric (a number or a one-element Tensor). Returns True."""
        check_eager(self)
        if not isinstance(metrics, (numbers.Real, _Tensor)) or isinstance(metrics, bool):
            raise TypeError(f"For 'ReduceLROnPlateau.step', the 'metrics' must be a number or a one-element Tensor, "
                            f"but got {type(metrics).__name__}.")
        current = float(_scalar(_f32(_scalar(metrics))))  # compared in float32, as MindSpore's
        _kernels.assign(self.last_epoch, _ops.add(self.last_epoch, 1))
        wait = _scalar(self.wait)
        if self._is_improvement(current, _scalar(self.best)):
            _kernels.assign(self.best, _f32(current))
            wait = 0.0
        else:
            wait += 1
        if self.in_cooldown():
            _kernels.assign(self.cooldown_counter, _f32(_scalar(self.cooldown_counter) - 1))
            wait = 0.0
        if wait > self.patience:
            for lr, min_lr in zip(self._last_lr, self.min_lrs):
                old = _scalar(lr)
                new = max(old * self.factor, min_lr)
                if old > new + self.eps:
                    _assign_lr(lr, new)
            _kernels.assign(self.cooldown_counter, _f32(self.cooldown))
            wait = 0.0
        _kernels.assign(self.wait, _f32(wait))
        return True

    def get_last_lr(self):
        """The learning rate of each group, as 0-d float32 Tensors (copies)."""
        return [_copy(lr) for lr in self._last_lr]
