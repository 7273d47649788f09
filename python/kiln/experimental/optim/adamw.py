"""kiln.experimental.optim.AdamW (MindSpore's mindspore.experimental.optim.AdamW)."""
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...nn.optim.adamw import adamw_update
from .optimizer import Optimizer

__all__ = ["AdamW"]


class AdamW(Optimizer):
    r"""Adam with decoupled weight decay [Loshchilov & Hutter 2019], PyTorch's formulation (as MindSpore's
    experimental AdamW), per group with its lr γ, betas (β1, β2), eps ε, weight_decay λ, amsgrad, maximize; t is
    the step count including this step (the `state_step` Parameter after its increment):

        g ← −g if maximize
        w ← w·(1 − γλ)
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        w ← w − γ/(1 − β1ᵗ) · m / (√v/√(1 − β2ᵗ) + ε)        (amsgrad: v_max ← max(v_max, v) in place of v)

    Args:
        params: Parameters, or group dicts ('params' plus any of the options below).
        lr (float/int ≥ 0 or a 0-d Tensor, default 1e-3), betas (tuple of two floats in [0, 1), default
        (0.9, 0.999)), eps (float ≥ 0, default 1e-8), weight_decay (float ≥ 0, default 1e-2), amsgrad (bool).
    Keyword Args: maximize (bool): maximize the objective.
    State Parameters: `exp_avg.<name>`, `exp_avg_sq.<name>`, `max_exp_avg_sq.<name>` (zeros), `state_step` (int32,
        0-d), and each group's lr `learning_rate_group_<i>`.
    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.
    Raises:
        ValueError: lr < 0, eps < 0, a beta outside [0, 1), weight_decay < 0; and the Optimizer errors.
        TypeError: amsgrad/maximize not bool.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        if not isinstance(lr, _Tensor) and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        for flag, v in (("amsgrad", amsgrad), ("maximize", maximize)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'AdamW', the '{flag}' must be bool, but got {type(v).__name__}.")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults)
        self._adam_state()

    def construct(self, gradients):
        self._check_gradients(gradients)
        # t is computed before the increment is assigned (the same value in PyNative and in a graph).
        step = _ops.add(_kernels.cast(self.state_step, mstype.float32), 1.0)
        _kernels.assign(self.state_step, _ops.add(self.state_step, 1))
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            for i in range(start, end):
                p = self.parameters[i]
                adamw_update(p, gradients[i], self.exp_avg[i], self.exp_avg_sq[i], self.max_exp_avg_sq[i],
                             self._group_lr(group, p.dtype), group["weight_decay"], beta1, beta2,
                             float(group["eps"]), step, group["amsgrad"], group["maximize"])
        return True
