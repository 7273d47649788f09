"""Loss-scale managers (MindSpore's mindspore.train.LossScaleManager / FixedLossScaleManager /
DynamicLossScaleManager): they give Model the loss scale and the update cell of its
nn.TrainOneStepWithLossScaleCell."""
import numbers

from .. import nn

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


class LossScaleManager:
    """Base class: get_loss_scale() (the scale), update_loss_scale(overflow) (called by Model after each step whose
    drop_overflow_update is set) and get_update_cell() (the Cell TrainOneStepWithLossScaleCell calls)."""

    def get_loss_scale(self):
        """The loss scale."""

    def update_loss_scale(self, overflow):
        """Updates the scale from the overflow flag of the last step."""

    def get_update_cell(self):
        """The update Cell (or None)."""


def _number(value, name, api):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{api}', the '{name}' must be a number, but got {type(value).__name__}.")
    return value


class FixedLossScaleManager(LossScaleManager):
    """A fixed loss scale.

    Args:
        loss_scale (float ≥ 1): default 128.0.
        drop_overflow_update (bool): skip the optimizer on overflow (default True: Model trains with
            TrainOneStepWithLossScaleCell and a FixedLossScaleUpdateCell). With False, Model uses
            TrainOneStepCell(sens=loss_scale): set the optimizer's loss_scale to the same value.
    Raises:
        ValueError: loss_scale < 1. TypeError: a non-number loss_scale, a non-bool drop_overflow_update.
    """

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        _number(loss_scale, "loss_scale", "FixedLossScaleManager")
        if loss_scale < 1:
            raise ValueError(f"The argument 'loss_scale' must be >= 1, but got {loss_scale}")
        if not isinstance(drop_overflow_update, bool):
            raise TypeError(f"For 'FixedLossScaleManager', the 'drop_overflow_update' must be bool, but got "
                            f"{type(drop_overflow_update).__name__}.")
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        """The loss scale."""
        return self._loss_scale

    def get_drop_overflow_update(self):
        """Whether a step with overflow skips the update."""
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """Nothing: the scale is fixed."""

    def get_update_cell(self):
        """FixedLossScaleUpdateCell(loss_scale), or None when drop_overflow_update is False."""
        if not self._drop_overflow_update:
            return None
        return nn.FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """A loss scale that halves (÷ scale_factor, at least 1) on overflow and grows (× scale_factor) after
    scale_window steps without overflow.

    Args:
        init_loss_scale (float ≥ 1): default 2**24. scale_factor (number > 0): default 2.
        scale_window (int > 0): default 2000.
    `update_loss_scale(overflow)` keeps a host-side copy of the rule (MindSpore's; Model calls it each step); the
    scale the step uses is the update cell's (DynamicLossScaleUpdateCell).

    Raises:
        ValueError: init_loss_scale < 1, scale_factor <= 0, scale_window <= 0; RuntimeError from update_loss_scale
            after more than 1000 overflows in a row. TypeError: non-numbers, a non-int scale_window.
    """

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        api = "DynamicLossScaleManager"
        _number(init_loss_scale, "init_loss_scale", api)
        _number(scale_factor, "scale_factor", api)
        if init_loss_scale < 1.0:
            raise ValueError(f"The argument 'init_loss_scale' must be > 1, but got {init_loss_scale}")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int):
            raise TypeError(f"For '{api}', the 'scale_window' must be int, but got {type(scale_window).__name__}.")
        if scale_window <= 0:
            raise ValueError(f"For '{api}', the 'scale_window' must be a positive int, but got {scale_window}.")
        if scale_factor <= 0:
            raise ValueError(f"The argument 'scale_factor' must be > 0, but got {scale_factor}")
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        """The current (host-side) loss scale."""
        return self.loss_scale

    def update_loss_scale(self, overflow):
        """MindSpore's host-side rule (see the class docstring)."""
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale Continuous overflow {self.bad_step} times, has exceeded maximum "
                               "threshold.")
        self.cur_iter += 1

    def get_drop_overflow_update(self):
        """Always True."""
        return True

    def get_update_cell(self):
        """DynamicLossScaleUpdateCell(loss_scale, scale_factor, scale_window)."""
        return nn.DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
