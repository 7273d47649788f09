"""kiln.amp (MindSpore's mindspore.amp): mixed precision and loss scaling.

* Network conversion: auto_mixed_precision, custom_mixed_precision, get_white_list, get_black_list,
  build_train_network (kiln/train/amp.py; the levels and where their casts go are described there).
* Loss scaling for hand-written training steps: StaticLossScaler / DynamicLossScaler (scale, unscale, adjust) and
  all_finite; for Model / TrainOneStepWithLossScaleCell: FixedLossScaleManager / DynamicLossScaleManager.

The scalers keep their state in Parameters (`scale_value` float32, `counter` int32) and update it with
ops.assign, so a training step compiled with kiln.jit updates them in the graph with no host round trip.
"""
import numbers
from abc import ABC, abstractmethod

from .common.tensor import Tensor as _Tensor
from .ops import _kernels
from .common import dtype as mstype
from .common.parameter import Parameter
from . import ops as F
from .train.amp import (auto_mixed_precision, custom_mixed_precision, get_white_list, get_black_list,
                        build_train_network)
from .train.loss_scale_manager import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager

__all__ = ["DynamicLossScaleManager", "LossScaleManager", "FixedLossScaleManager", "build_train_network",
           "DynamicLossScaler", "StaticLossScaler", "LossScaler", "auto_mixed_precision", "all_finite",
           "custom_mixed_precision", "get_white_list", "get_black_list"]



def _tensor_seq(inputs, api):
    if isinstance(inputs, _Tensor):
        return None
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"For '{api}', the inputs must be a Tensor or a tuple/list of Tensors, but got "
                        f"{type(inputs).__name__}.")
    for i, t in enumerate(inputs):
        if not isinstance(t, _Tensor):
            raise TypeError(f"For '{api}', every input must be a Tensor, but element {i} is {type(t).__name__}.")
    return inputs


def _all_finite_one(t):
    """0-d bool: no inf/NaN in float Tensor `t`. x·0 is 0 for finite x and NaN for ±inf/NaN, so the sum of t·0 is
    0 exactly when every element is finite (one multiply and one reduction; NaN compares unequal to 0)."""
    zero = _kernels.full([], 0.0, t.dtype)
    return F.equal(F.sum(F.cast(t * zero, mstype.float32)), _kernels.full([], 0.0, mstype.float32))


def _is_finite_scalar(x):
    """0-d bool: |x| ≤ the largest finite float32 (False for ±inf and NaN)."""
    return F.less_equal(F.abs(x), _kernels.full([], 3.4028234663852886e38, mstype.float32))


def all_finite(inputs):
    """True when every element of every Tensor in `inputs` is finite (no inf, no NaN) (MindSpore's
    mindspore.amp.all_finite).

    Args:
        inputs (tuple/list of Tensor): e.g. the gradients; any float or integer dtypes, any shapes; empty → True.
    Returns:
        Tensor: shape (), bool.
    Raises:
        TypeError: inputs not a tuple/list, or an element not a Tensor.
    """
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"For 'all_finite', the 'inputs' must be a tuple or list of Tensors, but got "
                        f"{type(inputs).__name__}.")
    _tensor_seq(inputs, "all_finite")
    status = None
    for t in inputs:
        if not mstype.is_float(t.dtype) or t.size == 0:
            continue
        ok = _all_finite_one(t)
        status = ok if status is None else F.logical_and(status, ok)
    if status is None:
        return _kernels.full([], True, mstype.bool_)
    return status


def _scale_map(inputs, scale, api, reciprocal):
    seq = _tensor_seq(inputs, api)
    s = F.reciprocal(scale) if reciprocal else scale
    if seq is None:
        return inputs * F.cast(s, inputs.dtype)
    return type(inputs)(t * F.cast(s, t.dtype) for t in seq)


def _check_scale_value(scale_value, api):
    if isinstance(scale_value, bool) or not isinstance(scale_value, (int, float)):
        raise TypeError(f"For '{api}', the 'scale_value' must be float or int, but got "
                        f"{type(scale_value).__name__}.")
    if scale_value < 1.0:
        raise ValueError(f"For '{api}', the argument 'scale_value' must be >= 1, but got {scale_value}.")


def _check_positive_int(value, name, api):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{api}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{api}', the '{name}' must be a positive int, but got {value}.")
    return int(value)


class LossScaler(ABC):
    """Base of the loss scalers: scale(inputs) multiplies the loss (or gradients) by the scale, unscale(inputs)
    divides by it, adjust(grads_finite) updates the scale from the overflow status of the step."""

    @abstractmethod
    def scale(self, inputs):
        """The inputs (a Tensor or tuple/list of Tensors) times the scale."""

    @abstractmethod
    def unscale(self, inputs):
        """The inputs (a Tensor or tuple/list of Tensors) divided by the scale."""

    @abstractmethod
    def adjust(self, grads_finite):
        """Updates the scale from `grads_finite` (a 0-d bool Tensor)."""


class StaticLossScaler(LossScaler):
    """A fixed loss scale (MindSpore's mindspore.amp.StaticLossScaler).

    Args:
        scale_value (float or int ≥ 1): the scale, held in the float32 Parameter `scale_value`.
    scale / unscale multiply / divide each Tensor by it (cast to the Tensor's dtype; a tuple/list in gives the
    same type out); adjust returns False and changes nothing.

    Raises:
        TypeError: scale_value not a float/int (bool included). ValueError: scale_value < 1. scale/unscale:
            TypeError for inputs that are not Tensors.
    """

    def __init__(self, scale_value):
        _check_scale_value(scale_value, "StaticLossScaler")
        self.scale_value = Parameter(_kernels.full([], float(scale_value), mstype.float32), name="scale_value")

    def scale(self, inputs):
        """inputs × scale_value (each Tensor in its own dtype)."""
        return _scale_map(inputs, self.scale_value, "StaticLossScaler.scale", False)

    def unscale(self, inputs):
        """inputs × (1 / scale_value) (each Tensor in its own dtype)."""
        return _scale_map(inputs, self.scale_value, "StaticLossScaler.unscale", True)

    def adjust(self, grads_finite):
        """The scale is fixed: returns False."""
        return False


class DynamicLossScaler(LossScaler):
    """A loss scale that adapts to overflow (MindSpore's mindspore.amp.DynamicLossScaler).

    Args:
        scale_value (float or int ≥ 1): the initial scale (float32 Parameter `scale_value`).
        scale_factor (int > 0): the factor the scale grows / shrinks by.
        scale_window (int > 0): the number of consecutive finite steps after which the scale grows.

    adjust(grads_finite): when the gradients are not finite the scale becomes max(scale / scale_factor, 1) and
    the counter restarts at 0; when they are finite the counter counts the step, and on the scale_window-th
    finite step in a row the scale is multiplied by scale_factor — unless that would overflow float32 (the scale
    then stays). The counter is an int32 Parameter `counter`. Returns True.

    Raises:
        TypeError: scale_value not float/int; scale_factor or scale_window not int. ValueError: scale_value < 1,
            scale_factor or scale_window not positive.
    """

    def __init__(self, scale_value, scale_factor, scale_window):
        _check_scale_value(scale_value, "DynamicLossScaler")
        self.scale_value = Parameter(_kernels.full([], float(scale_value), mstype.float32), name="scale_value")
        self.scale_window = _check_positive_int(scale_window, "scale_window", "DynamicLossScaler")
        self.scale_factor = _check_positive_int(scale_factor, "scale_factor", "DynamicLossScaler")
        self.counter = Parameter(_kernels.full([], 0, mstype.int32), name="counter")

    def scale(self, inputs):
        """inputs × scale_value (each Tensor in its own dtype)."""
        return _scale_map(inputs, self.scale_value, "DynamicLossScaler.scale", False)

    def unscale(self, inputs):
        """inputs × (1 / scale_value) (each Tensor in its own dtype)."""
        return _scale_map(inputs, self.scale_value, "DynamicLossScaler.unscale", True)

    def adjust(self, grads_finite):
        """Updates scale_value and counter from `grads_finite` (0-d bool Tensor); returns True."""
        if not isinstance(grads_finite, _Tensor):
            raise TypeError(f"For 'DynamicLossScaler.adjust', the 'grads_finite' must be a bool Tensor, but got "
                            f"{type(grads_finite).__name__}.")
        finite = F.cast(F.reshape(grads_finite, ()), mstype.bool_)
        one = _kernels.full([], 1.0, mstype.float32)
        factor = _kernels.full([], float(self.scale_factor), mstype.float32)
        grown = self.scale_value * factor
        at_window = F.equal(self.counter, _kernels.full([], self.scale_window - 1, mstype.int32))
        on_finite = F.select(at_window, F.select(_is_finite_scalar(grown), grown, self.scale_value), self.scale_value)
        new_scale = F.select(finite, on_finite, F.maximum(one, self.scale_value / factor))
        window = _kernels.full([], self.scale_window, mstype.int32)
        counter = ((self.counter + _kernels.full([], 1, mstype.int32)) % window) * F.cast(finite, mstype.int32)
        F.assign(self.scale_value, new_scale)
        F.assign(self.counter, counter)
        return True
