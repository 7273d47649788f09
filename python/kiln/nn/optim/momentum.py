"""nn.Momentum with MindSpore's formulas (../shared/reference/mindspore_api.md §5.3)."""
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ._validate import check_type
from .optimizer import Optimizer

__all__ = ["Momentum"]


class Momentum(Optimizer):
    r"""Momentum SGD (MindSpore's ApplyMomentum):

        (weight decay and loss scale as nn.Optimizer)
        v ← μ·v + g
        w ← w − lr·v                 (use_nesterov: w ← w − lr·(g + μ·v))

    Args:
        params, learning_rate (required), weight_decay, loss_scale: see nn.Optimizer.
        momentum (float ≥ 0, required; ints are rejected), use_nesterov (bool).
    State Parameters: `momentum` (float32 0-d), `moments.<name>` (zeros). Returns True.

    Raises:
        TypeError: momentum not a float, use_nesterov not bool.
        ValueError: momentum < 0; and the nn.Optimizer errors.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        name = self.cls_name
        check_type(momentum, (float,), "momentum", name)
        if momentum < 0.0:
            raise ValueError(f"For '{name}', the argument 'momentum' must be at least 0.0, but got {momentum}.")
        check_type(use_nesterov, (bool,), "use_nesterov", name)
        self.momentum = Parameter(_kernels.full([], momentum, mstype.float32), name="momentum")
        self.params = self.parameters
        self.use_nesterov = use_nesterov
        self.moments = self._parameters.clone(prefix="moments", init="zeros")
        self.__dict__["_momentum_value"] = momentum

    def construct(self, gradients):
        grads, lrs = self._prepare(gradients)
        apply = _kernels.apply_momentum
        mom, nest = self._momentum_value, self.use_nesterov
        for p, acc, g, lr in zip(self._parameters, self.moments, grads, lrs):
            apply(p, acc, lr, g, mom, nest)
        return True
