"""Argument checks of the experimental optimizers and schedulers (MindSpore's messages where it has one; a clear
TypeError where MindSpore fails inside a comparison)."""
import numbers

from ...common.tensor import Tensor as _Tensor

__all__ = ["number", "lr_value", "beta_pair", "flag", "pair"]


def number(value, name, cls_name, lower=None, strict=False, upper=None, upper_strict=True, types="int or float"):
    """`value` as a float: TypeError unless a real number (bool rejected); ValueError outside the bounds
    (lower ≤ value, or lower < value with strict; value < upper, or ≤ with upper_strict=False)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the '{name}' must be {types}, but got {type(value).__name__}.")
    v = float(value)
    if lower is not None and (v <= lower if strict else v < lower):
        rel = "greater than" if strict else "greater than or equal to"
        raise ValueError(f"For '{cls_name}', the '{name}' must be {rel} {lower}, but got {value}.")
    if upper is not None and (v >= upper if upper_strict else v > upper):
        rel = "less than" if upper_strict else "less than or equal to"
        raise ValueError(f"For '{cls_name}', the '{name}' must be {rel} {upper}, but got {value}.")
    return v


def lr_value(lr, cls_name, strict=False):
    """Checks a learning rate: an int/float, or a 0-d Tensor (its value is checked); ≥ 0 (> 0 with strict)."""
    if isinstance(lr, _Tensor):
        if lr.ndim != 0:
            raise ValueError(f"For '{cls_name}', a Tensor 'lr' must be a scalar (0-d) Tensor, but got shape "
                             f"{tuple(lr.shape)}.")
        value = float(lr.asnumpy())
    else:
        value = lr
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the 'lr' must be int, float or a 0-d Tensor, but got "
                        f"{type(lr).__name__}.")
    if value < 0.0 or (strict and value == 0.0):
        raise ValueError(f"Invalid learning rate: {value} (for '{cls_name}', 'lr' must be "
                         f"{'> 0' if strict else '>= 0'}).")
    return lr


def pair(value, name, cls_name):
    """A tuple/list of two numbers, as a tuple."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"For '{cls_name}', the '{name}' must be a tuple of two floats, but got {value!r}.")
    for i, v in enumerate(value):
        number(v, f"{name}[{i}]", cls_name)
    return tuple(value)


def beta_pair(betas, cls_name):
    """betas: two numbers in [0, 1) (MindSpore's message for one outside)."""
    betas = pair(betas, "betas", cls_name)
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b} (for '{cls_name}', each beta must be in "
                             f"[0, 1)).")
    return betas


def flag(value, name, cls_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value
