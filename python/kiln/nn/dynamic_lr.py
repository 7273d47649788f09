"""Learning-rate lists (MindSpore's `nn.exponential_decay_lr`, ...): each returns a Python list of `total_step`
floats to pass as an optimizer's `learning_rate` (step i uses element i). With e = ⌊i / step_per_epoch⌋ (the epoch
of step i):

  piecewise_constant_lr(milestone, lrs):  lrs[t] for i ∈ [milestone[t−1], milestone[t])
  exponential_decay_lr:  lr · decay_rate^(e/decay_epoch)            (stair: the exponent floored)
  natural_exp_decay_lr:  lr · exp(−decay_rate · e)                  (stair: e → ⌊e/decay_epoch⌋·decay_epoch)
  inverse_decay_lr:      lr / (1 + decay_rate · e/decay_epoch)      (stair: e/decay_epoch floored)
  cosine_decay_lr:       min_lr + 0.5·(max_lr − min_lr)·(1 + cos(π · min(e, decay_epoch)/decay_epoch))
  polynomial_decay_lr:   (lr − end_lr)·(1 − min(e, D)/D)^power + end_lr, D = decay_epoch
                         (update_decay_epoch: no min, D = decay_epoch · max(⌈e/decay_epoch⌉, 1))
  warmup_lr:             lr · min(e, warmup_epoch)/warmup_epoch
"""
import math

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
           "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def _pos_int(v, name, fn):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"For '{fn}', the '{name}' must be a positive int, but got {type(v).__name__}.")
    if v <= 0:
        raise ValueError(f"For '{fn}', the '{name}' must be a positive int, but got {v}.")


def _float(v, name, fn, positive=True):
    if isinstance(v, bool) or not isinstance(v, float):
        raise TypeError(f"For '{fn}', the '{name}' must be float, but got {type(v).__name__}.")
    if (positive and v <= 0) or v < 0:
        raise ValueError(f"For '{fn}', the '{name}' must be {'> 0' if positive else '>= 0'}, but got {v}.")


def _check(fn, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair):
    _pos_int(total_step, "total_step", fn)
    _pos_int(step_per_epoch, "step_per_epoch", fn)
    _pos_int(decay_epoch, "decay_epoch", fn)
    _float(learning_rate, "learning_rate", fn)
    _float(decay_rate, "decay_rate", fn)
    if not isinstance(is_stair, bool):
        raise TypeError(f"For '{fn}', the 'is_stair' must be bool, but got {type(is_stair).__name__}.")


def piecewise_constant_lr(milestone, learning_rates):
    """lr[i] = learning_rates[t] for milestone[t−1] ≤ i < milestone[t]; a list of milestone[−1] floats.

    Raises TypeError/ValueError for non-list arguments, different lengths, or non-increasing milestones."""
    fn = "piecewise_constant_lr"
    if not isinstance(milestone, (list, tuple)) or not isinstance(learning_rates, (list, tuple)):
        raise TypeError(f"For '{fn}', 'milestone' and 'learning_rates' must be lists or tuples.")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For '{fn}', the size of 'milestone' must be same with the size of 'learning_rates', but "
                         f"got 'milestone' size: {len(milestone)}, 'learning_rates' size: {len(learning_rates)}.")
    out, last = [], 0
    for i, (m, lr) in enumerate(zip(milestone, learning_rates)):
        _pos_int(m, f"milestone[{i}]", fn)
        _float(lr, f"learning_rates[{i}]", fn, positive=False)
        if m < last:
            raise ValueError(f"For '{fn}', the value of milestone[{i}] must be greater than milestone[{i - 1}], but "
                             f"got milestone[{i}]: {m}, milestone[{i - 1}]: {last}.")
        out += [lr] * (m - last)
        last = m
    return out


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr · decay_rate^(e/decay_epoch) per step (see the module docstring)."""
    _check("exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        p = (i // step_per_epoch) / decay_epoch
        out.append(learning_rate * decay_rate ** (math.floor(p) if is_stair else p))
    return out


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr · exp(−decay_rate · e) per step (see the module docstring)."""
    _check("natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        e = i // step_per_epoch
        if is_stair:
            e = (e // decay_epoch) * decay_epoch
        out.append(learning_rate * math.e ** (-decay_rate * e))
    return out


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr / (1 + decay_rate · e/decay_epoch) per step (see the module docstring)."""
    _check("inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        p = (i // step_per_epoch) / decay_epoch
        out.append(learning_rate / (1 + decay_rate * (math.floor(p) if is_stair else p)))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """min_lr + 0.5·(max_lr − min_lr)·(1 + cos(π·min(e, decay_epoch)/decay_epoch)) per step."""
    fn = "cosine_decay_lr"
    _float(min_lr, "min_lr", fn, positive=False)
    _float(max_lr, "max_lr", fn)
    for n, v in (("total_step", total_step), ("step_per_epoch", step_per_epoch), ("decay_epoch", decay_epoch)):
        _pos_int(v, n, fn)
    if min_lr >= max_lr:
        raise ValueError(f"For '{fn}', the 'max_lr' should be greater than the 'min_lr', but got 'max_lr' value: "
                         f"{max_lr}, 'min_lr' value: {min_lr}.")
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(i // step_per_epoch, decay_epoch) / decay_epoch))
            for i in range(total_step)]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power,
                        update_decay_epoch=False):
    """(lr − end_lr)·(1 − e'/D)^power + end_lr per step (see the module docstring)."""
    fn = "polynomial_decay_lr"
    _float(learning_rate, "learning_rate", fn)
    _float(end_learning_rate, "end_learning_rate", fn, positive=False)
    _float(power, "power", fn)
    for n, v in (("total_step", total_step), ("step_per_epoch", step_per_epoch), ("decay_epoch", decay_epoch)):
        _pos_int(v, n, fn)
    if not isinstance(update_decay_epoch, bool):
        raise TypeError(f"For '{fn}', the 'update_decay_epoch' must be bool.")
    delta = learning_rate - end_learning_rate
    out = []
    for i in range(total_step):
        e = i // step_per_epoch
        if update_decay_epoch:
            d = decay_epoch * max(math.ceil(e / decay_epoch), 1)
        else:
            d, e = decay_epoch, min(e, decay_epoch)
        out.append(delta * (1 - e / d) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """lr · min(e, warmup_epoch)/warmup_epoch per step."""
    fn = "warmup_lr"
    _float(learning_rate, "learning_rate", fn, positive=False)
    for n, v in (("total_step", total_step), ("step_per_epoch", step_per_epoch), ("warmup_epoch", warmup_epoch)):
        _pos_int(v, n, fn)
    return [learning_rate * min(i // step_per_epoch, warmup_epoch) / warmup_epoch for i in range(total_step)]
