"""MindSpore's `LearningRateScheduler` callback: a Python function of (current lr, step number) sets the optimizer's
learning rate after every step."""
import math

import numpy as np

from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ... import log as _log
from ._callback import Callback

__all__ = ["LearningRateScheduler"]


class LearningRateScheduler(Callback):
    """LearningRateScheduler(learning_rate_function): after each training step, `learning_rate_function(lr, step)`
    (lr: the optimizer's current learning rate as a Python float, rounded to float32 as it is stored; step: the
    1-based global step number, `cur_step_num`) returns the new learning rate, which is written into the optimizer's
    learning-rate Parameter when it differs (relative tolerance 1e-10), so compiled steps use it from the next step
    on (MindSpore's formula and order).

    Raises:
        TypeError: learning_rate_function is not callable (at construction).
        ValueError (at a step end): the optimizer has a dynamic (schedule) or per-group learning rate, which has no
            single value to change; the function returns something that is not a real number.
    """

    def __init__(self, learning_rate_function):
        super().__init__()
        if not callable(learning_rate_function):
            raise TypeError(f"For 'LearningRateScheduler', the 'learning_rate_function' must be callable, but got "
                            f"{type(learning_rate_function).__name__}.")
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        """Calls the function with the current learning rate and step number; writes a changed value."""
        cb_params = run_context.original_args()
        optimizer = cb_params.get("optimizer")
        cur = getattr(optimizer, "learning_rate", None)
        if not isinstance(cur, Parameter) or tuple(cur.shape) != () or getattr(optimizer, "is_group_lr", False):
            raise ValueError("For 'LearningRateScheduler', the optimizer must have one fixed learning rate (a 0-d "
                             "Parameter); a dynamic or per-group learning rate has no single value to change.")
        lr = float(np.float32(cur.asnumpy()))
        new_lr = self.learning_rate_function(lr, cb_params.cur_step_num)
        if isinstance(new_lr, bool) or not isinstance(new_lr, (int, float, np.floating, np.integer)):
            raise ValueError(f"For 'LearningRateScheduler', the learning_rate_function must return a real number, "
                             f"but got {type(new_lr).__name__}.")
        if not math.isclose(lr, float(new_lr), rel_tol=1e-10):
            cur.set_data(_kernels.full([], float(new_lr), mstype.float32))
            _log.info(f"At step {cb_params.cur_step_num}, learning_rate change to {new_lr}")
