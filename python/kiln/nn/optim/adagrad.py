"""nn.Adagrad with MindSpore's formula (ApplyAdagrad)."""
from ... import ops as _ops
from ...ops import _kernels
from ._validate import check_non_negative, check_type
from .optimizer import Optimizer
from .rmsprop import _step_lr

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad [Duchi et al. 2011] as MindSpore's ApplyAdagrad kernel computes it (no ε):

        (weight decay, gradient centralization and loss scale as nn.Optimizer)
        h ← h + g²            (only when update_slots)
        w ← w − lr·g / √h

    Args:
        params, learning_rate (default 0.001), loss_scale, weight_decay: see nn.Optimizer.
        accum (float ≥ 0, default 0.1): the initial value of h. update_slots (bool, default True).
    State Parameters: `accum.<name>` (filled with `accum`); plus `global_step`, `learning_rate`.
    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.
    Note: MindSpore 2.x's Adagrad advances global_step twice per step when the learning rate is dynamic (get_lr
        and an extra increment); Kiln advances it once, like every other optimizer.
    Raises:
        TypeError: accum not a float (ints are rejected), update_slots not bool.
        ValueError: accum < 0; and the nn.Optimizer errors.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        name = self.cls_name
        check_type(accum, (float,), "accum", name)
        check_type(update_slots, (bool,), "update_slots", name)
        check_non_negative(accum, "accum", name)
        self.update_slots = update_slots
        self.accum = self._parameters.clone(prefix="accum", init=accum)

    def construct(self, grads):
        grads, lrs = self._prepare(grads)
        update = self.update_slots
        for p, h, g, lr in zip(self._parameters, self.accum, grads, lrs):
            dt = p.dtype
            if g.dtype != dt:
                g = _kernels.cast(g, dt)
            if update:
                h_new = _ops.add(h, _ops.square(g))
                _kernels.assign(h, h_new)
            else:
                h_new = h
            _kernels.assign(p, _ops.sub(p, _kernels.div(_ops.mul(g, _step_lr(lr, dt)), _ops.sqrt(h_new))))
        return True
