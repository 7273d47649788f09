"""kiln.experimental.optim.Adam (MindSpore's mindspore.experimental.optim.Adam)."""
from ... import ops as _ops
from ...ops import _kernels
from ...common import dtype as mstype
from ...nn.optim.adam import _amsgrad_update
from . import _checks
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam [Kingma & Ba 2015] with PyTorch-style parameter groups, computed as MindSpore 2.10's experimental Adam
    computes it (its fused Adam kernel: ε is added after the bias correction is folded into the step size, which
    MindSpore's documentation notes differs from the paper; `kiln.mint.optim.Adam` is PyTorch's exact formula).
    Per group with lr γ, betas (β1, β2), eps ε, weight_decay λ; t is the step count including this step:

        g ← −g if maximize;   g ← g + λ·w
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        w ← w − γ·√(1 − β2ᵗ)/(1 − β1ᵗ) · m / (√v + ε)
        amsgrad: v_max ← max(v_max, v), √v_max in place of √v (MindSpore's ApplyAdamWithAmsgrad; MindSpore 2.10's
        experimental Adam accepts amsgrad but ignores it, Kiln applies it)

    The update of each parameter runs on Kiln's fused Adam kernel (the one nn.Adam uses).

    Args:
        params: Parameters, or group dicts ('params' plus any of the options below).
        lr (int/float ≥ 0 or a 0-d Tensor, default 1e-3), betas (two floats in [0, 1), default (0.9, 0.999)),
        eps (float ≥ 0, default 1e-8), weight_decay (float ≥ 0, default 0.0), amsgrad (bool, default False).
    Keyword Args: maximize (bool, default False): maximize the objective.
    State Parameters: `exp_avg.<name>`, `exp_avg_sq.<name>`, `max_exp_avg_sq.<name>` (zeros), `state_step`
        (int32, 0-d), and each group's lr `learning_rate_group_<i>`.
    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.
    Raises:
        ValueError: lr < 0, eps < 0, a beta outside [0, 1), weight_decay < 0; and the Optimizer errors.
        TypeError: lr/eps/weight_decay not numbers, betas not a pair, amsgrad/maximize not bool.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name)
        _checks.number(eps, "eps", name, lower=0.0)
        _checks.beta_pair(betas, name)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.flag(amsgrad, "amsgrad", name)
        _checks.flag(maximize, "maximize", name)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize}
        super().__init__(params, defaults)
        self._adam_state()

    def construct(self, gradients):
        self._check_gradients(gradients)
        step_i = _ops.add(self.state_step, 1)
        _kernels.assign(self.state_step, step_i)
        step = _kernels.cast(step_i, mstype.float32)
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            eps = float(group["eps"])
            b1p = _kernels.pow(_kernels.full([], beta1, mstype.float32), step)
            b2p = _kernels.pow(_kernels.full([], beta2, mstype.float32), step)
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                lr = self._group_lr(group, mstype.float32)
                if group["amsgrad"]:
                    _amsgrad_update(p, self.exp_avg[i], self.exp_avg_sq[i], self.max_exp_avg_sq[i], b1p, b2p, lr,
                                    beta1, beta2, eps, g)
                else:
                    _kernels.adam(p, self.exp_avg[i], self.exp_avg_sq[i], b1p, b2p, lr, beta1, beta2, eps, g)
        return True
