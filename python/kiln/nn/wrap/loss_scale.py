"""TrainOneStepWithLossScaleCell and the loss-scale update cells (MindSpore's mindspore.nn.wrap.loss_scale).

A training step with a loss scale s: back-propagation starts from s (the gradients of s·loss, so small float16
gradients do not underflow), the gradients are divided by s, an overflow check looks for inf/NaN in them, the
update cell (if any) adjusts s, and the optimizer runs only when there was no overflow.

Overflow check: a gradient overflows when some element is not finite, i.e. |g| <= the largest finite value of its
dtype is False (true for ±inf and NaN); cond is a 0-d bool, True on overflow (MindSpore's GPU check: FloatStatus
per gradient, summed, 1 <= sum).

Skipping the update: in PyNative the optimizer is simply not called. In a compiled graph there is no data-dependent
branch, so the optimizer's state (its Parameters: weights, moments, learning rate, global_step) is copied before the
update and put back with a select when cond is True: the same numbers as PyNative, at the cost of one copy of the
optimizer state per step in GRAPH_MODE."""
import numbers

import numpy as np

from ... import _engine
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.api import value_and_grad
from ...common.parameter import Parameter
from ... import ops as F
from ..cell import Cell
from .cell_wrapper import TrainOneStepCell

__all__ = ["TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell"]



def _scalar(value, dtype):
    return _kernels.full([], value, dtype)


def _finite_max(dtype):
    return float(np.finfo(mstype.dtype_to_nptype(dtype)).max)


def _grads_overflow(grads):
    """0-d bool Tensor: True when some gradient has an inf or NaN element."""
    bad = None
    for g in grads:
        finite = F.less_equal(F.abs(g), _scalar(_finite_max(g.dtype), g.dtype))
        n_bad = F.cast(_kernels.count_nonzero(F.logical_not(finite), None, False), mstype.float32)
        bad = n_bad if bad is None else bad + n_bad
    if bad is None:
        return _kernels.full([], False, mstype.bool_)
    return F.less_equal(_scalar(1.0, mstype.float32), bad)


class DynamicLossScaleUpdateCell(Cell):
    """Dynamic loss scale (MindSpore's DynamicLossScaleUpdateCell): called as `cell(loss_scale, overflow)` with
    the loss-scale Parameter; on overflow the scale becomes max(scale / scale_factor, 1); after `scale_window`
    steps without overflow it is multiplied by scale_factor, unless that would exceed the largest finite value of
    the scale's dtype (the scale then stays). Returns overflow.

    Args:
        loss_scale_value (float): the initial scale (get_loss_scale() returns it).
        scale_factor (int/float > 0): the factor.
        scale_window (int > 0): steps without overflow before the scale grows.
    State Parameters: current_iterator_step (int32, starts at 1), last_overflow_iterator_step (int32, 0).

    Raises:
        TypeError: a non-number argument. ValueError: scale_factor or scale_window not positive.
    """

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        for name, v in (("loss_scale_value", loss_scale_value), ("scale_factor", scale_factor),
                        ("scale_window", scale_window)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"For 'DynamicLossScaleUpdateCell', the '{name}' must be a number, but got "
                                f"{type(v).__name__}.")
        if scale_factor <= 0 or scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaleUpdateCell', 'scale_factor' and 'scale_window' must be positive, "
                             f"but got {scale_factor} and {scale_window}.")
        self.loss_scale_value = loss_scale_value
        self.__dict__["_window"] = int(scale_window)
        self.__dict__["_factor"] = float(scale_factor)
        self.cur_iter = Parameter(_kernels.full([], 1, mstype.int32), name="current_iterator_step")
        self.last_overflow_iter = Parameter(_kernels.full([], 0, mstype.int32), name="last_overflow_iterator_step")

    def get_loss_scale(self):
        """The initial loss scale."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        factor = F.cast(_scalar(self._factor, mstype.float32), loss_scale.dtype)
        one = F.cast(_scalar(1.0, mstype.float32), loss_scale.dtype)
        on_overflow = F.select(overflow, F.maximum(loss_scale / factor, one), loss_scale)
        should_inc = F.less_equal(_scalar(self._window, mstype.int32), self.cur_iter - self.last_overflow_iter)
        last_iter_cond = F.logical_or(overflow, should_inc)
        last_overflow_iter = F.select(last_iter_cond, self.cur_iter, self.last_overflow_iter)
        update = F.logical_and(should_inc, F.logical_not(overflow))
        grown = on_overflow * factor
        # No growth past the dtype's largest finite value (MindSpore's cell would reach inf; its
        # amp.DynamicLossScaler keeps the scale, as here).
        grown_ok = F.less_equal(F.abs(grown), F.cast(_scalar(_finite_max(loss_scale.dtype), mstype.float32),
                                                      loss_scale.dtype))
        new_scale = F.select(F.logical_and(update, grown_ok), grown, on_overflow)
        next_iter = self.cur_iter + _scalar(1, mstype.int32)
        F.assign(self.last_overflow_iter, last_overflow_iter)
        F.assign(loss_scale, F.reshape(new_scale, loss_scale.shape))
        F.assign(self.cur_iter, next_iter)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """A fixed loss scale: `cell(loss_scale, overflow)` returns overflow and leaves the scale unchanged.

    Args:
        loss_scale_value (float): the scale (get_loss_scale() returns it).
    """

    def __init__(self, loss_scale_value):
        super().__init__()
        if isinstance(loss_scale_value, bool) or not isinstance(loss_scale_value, numbers.Real):
            raise TypeError(f"For 'FixedLossScaleUpdateCell', the 'loss_scale_value' must be a number, but got "
                            f"{type(loss_scale_value).__name__}.")
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        """The loss scale."""
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """One training step with loss scaling (MindSpore's TrainOneStepWithLossScaleCell).

    Args:
        network (Cell): returns the loss (a Tensor).
        optimizer (Cell): an nn.Optimizer.
        scale_sense (Tensor or Cell): a Tensor of shape () or (1,): a fixed scale, stored in the Parameter
            `scale_sense` (change it with set_sense_scale); or an update cell (DynamicLossScaleUpdateCell,
            FixedLossScaleUpdateCell): the Parameter starts at its get_loss_scale() (float32) and the cell updates
            it after each step.
    Output: (loss, cond, scale): the loss, the 0-d bool overflow flag (True: the gradients had inf/NaN and the
        optimizer did not run), and the scale used for this step (a copy; the Parameter may since have been
        updated by the update cell).

    Raises:
        TypeError: scale_sense neither a Tensor nor a Cell; set_sense_scale with a non-Tensor.
        ValueError: a scale_sense Tensor of another shape.
    """

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(network, optimizer, sens=None)
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            self.scale_sense = Parameter(_kernels.full([], float(scale_sense.get_loss_scale()), mstype.float32),
                                         name="scale_sense")
        elif isinstance(scale_sense, _Tensor):
            if scale_sense.shape not in ((1,), ()):
                raise ValueError(f"For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be (1,) or "
                                 f"(), but got {scale_sense.shape}.")
            self.scale_sense = Parameter(_Tensor(scale_sense), name="scale_sense")
        else:
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell or Tensor, but got "
                            f"'scale_sense' type: {type(scale_sense)}.")
        network_ref = network

        def scaled(*inputs):
            loss = network_ref(*inputs)
            if not isinstance(loss, _Tensor):
                raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the network must return the loss as a Tensor, "
                                f"but got {type(loss).__name__}.")
            # Back-propagation starts from the scale (MindSpore's sens = ones_like(loss) * scale).
            return F.reshape(loss * F.cast(self.scale_sense, loss.dtype), loss.shape), loss

        self.__dict__["_scaled_grad_fn"] = value_and_grad(scaled, None, self.weights, has_aux=True)
        self.__dict__["_opt_state"] = list(optimizer.get_parameters())

    def construct(self, *inputs):
        scale = F.reshape(self.scale_sense * 1, self.scale_sense.shape)  # the value used for this step
        (_, loss), grads = self._scaled_grad_fn(*inputs)
        grads = tuple(g * F.cast(_scalar(1.0, mstype.float32) / F.cast(scale, mstype.float32), g.dtype)
                      for g in grads)
        if self.reducer_flag:  # data-parallel: every process then sees the same gradients and the same overflow
            grads = self.grad_reducer(grads)
        cond = _grads_overflow(grads)
        if self.reducer_flag and self.grad_reducer._shards is not None:
            cond = self.grad_reducer._any(cond)  # optimizer parallel: each process checked its slices only
        overflow = cond
        if self.loss_scaling_manager is not None:
            overflow = self.loss_scaling_manager(self.scale_sense, cond)
        if _engine.tracing():
            # No data-dependent branch in a graph: copy the optimizer state, update, put it back on overflow.
            olds = [F.depend(p * 1, grads) for p in self._opt_state]
            done = self.optimizer(F.depend(grads, olds))
            for p, old in zip(self._opt_state, olds):
                F.assign(p, F.depend(F.select(overflow, old, p), done))
            loss = F.depend(loss, done)
        elif not bool(overflow.asnumpy()):
            loss = F.depend(loss, self.optimizer(grads))
        return loss, cond, scale

    def set_sense_scale(self, sens):
        """Sets the loss scale Parameter to `sens` (a Tensor). Raises TypeError for another type."""
        if not isinstance(sens, _Tensor):
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be Tensor, but got "
                            f"{type(sens)}")
        self.scale_sense.set_data(sens)
