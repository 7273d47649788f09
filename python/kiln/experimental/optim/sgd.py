"""kiln.experimental.optim.SGD (MindSpore's mindspore.experimental.optim.SGD)."""
from ...ops import _kernels
from ...common import dtype as mstype
from . import _checks
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum μ, dampening τ, L2 weight decay λ and Nesterov momentum, per group
    (PyTorch's SGD formula, which MindSpore's experimental SGD computes with its SGD kernel; Kiln runs the same
    fused kernel as nn.SGD):

        g ← −g if maximize;   g ← g + λ·w
        b ← g at the first step, else μ·b + (1 − τ)·g        (when μ > 0)
        g ← g + μ·b if nesterov, else b                       (when μ > 0)
        w ← w − γ·g

    Args:
        params: Parameters, or group dicts. lr (int/float ≥ 0 or 0-d Tensor; required), momentum (≥ 0, default 0),
        dampening (default 0), weight_decay (≥ 0, default 0.0), nesterov (bool; needs momentum > 0 and dampening
        0).
    Keyword Args: maximize (bool, default False).
    Groups also hold 'grad_centralization': False, as MindSpore's (which stores the key and never reads it).
    State Parameters: `accum.<name>` (zeros), `stat.<name>` (ones: "first step" flags).
    Inputs: gradients aligned with `optimizer.parameters`. Returns True.
    Raises: ValueError for a negative lr/momentum/weight_decay, or nesterov with momentum 0 or dampening ≠ 0;
        TypeError for a non-number lr/momentum/dampening, non-bool nesterov/maximize; the Optimizer errors.
    """

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0.0, nesterov=False, *, maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name)
        momentum = _checks.number(momentum, "momentum", name, lower=0.0)
        _checks.number(dampening, "dampening", name)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.flag(nesterov, "nesterov", name)
        _checks.flag(maximize, "maximize", name)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError(f"For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must equal "
                             f"to 0.0, but got 'momentum' {momentum}, 'dampening' {dampening}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, grad_centralization=False)
        super().__init__(params, defaults)
        for group in self.param_groups:
            group["dampening"] = _checks.number(group["dampening"], "dampening", name)
            group["momentum"] = _checks.number(group["momentum"], "momentum", name, lower=0.0)
        self._param_state("accum", "accum")
        self._param_state("stat", "stat", "ones")

    def construct(self, gradients):
        self._check_gradients(gradients)
        for group, start, end in self._group_ranges():
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], 0.0, group["maximize"])
                _kernels.sgd(p, g, self._group_lr(group, mstype.float32), self.accum[i], self.stat[i],
                          float(group["momentum"]), float(group["dampening"]), float(group["weight_decay"]),
                          bool(group["nesterov"]))
        return True
