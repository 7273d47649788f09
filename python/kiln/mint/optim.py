"""kiln.mint.optim — MindSpore 2.10's `mindspore.mint.optim`: PyTorch's AdamW, Adam and SGD with parameter groups,
on kiln.experimental.optim's Optimizer base (groups, lr Parameters, one compiled update per gradient signature).

    optimizer = mint.optim.AdamW(net.trainable_params(), lr=1e-3)
    optimizer(grads)      # grads aligned with optimizer.parameters; returns True

The formulas are PyTorch's (torch.optim.AdamW / Adam / SGD, which MindSpore's mint.optim follows); t is the step
count including this step."""
from .. import ops as _ops
from ..common.tensor import Tensor as _Tensor
from ..ops import _kernels
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..experimental.optim.adamw import AdamW as _ExperimentalAdamW
from ..experimental.optim.optimizer import Optimizer as _Optimizer
from ..nn.optim.adamw import adamw_update

__all__ = ["AdamW", "Adam", "SGD"]



class AdamW(_ExperimentalAdamW):
    r"""mint.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False): Adam with decoupled weight decay [Loshchilov & Hutter 2019]:

        g ← −g if maximize;   w ← w·(1 − γλ)
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        w ← w − γ/(1 − β1ᵗ) · m / (√v/√(1 − β2ᵗ) + ε)        (amsgrad: v_max ← max(v_max, v) in place of v)

    The same optimizer as kiln.experimental.optim.AdamW (its docstring lists the state and the errors)."""


class Adam(_ExperimentalAdamW):
    r"""mint.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
    maximize=False): Adam [Kingma & Ba 2015] with L2 weight decay added to the gradient (PyTorch's Adam):

        g ← −g if maximize;   g ← g + λ·w
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        w ← w − γ/(1 − β1ᵗ) · m / (√v/√(1 − β2ᵗ) + ε)        (amsgrad as AdamW)

    State and errors as mint.optim.AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

    def construct(self, gradients):
        self._check_gradients(gradients)
        step = _ops.add(_kernels.cast(self.state_step, mstype.float32), 1.0)
        _kernels.assign(self.state_step, _ops.add(self.state_step, 1))
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                adamw_update(p, g, self.exp_avg[i], self.exp_avg_sq[i], self.max_exp_avg_sq[i],
                             self._group_lr(group, p.dtype), 0.0,
                             beta1, beta2, float(group["eps"]), step, group["amsgrad"], False)
        return True


class SGD(_Optimizer):
    r"""mint.optim.SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False):
    stochastic gradient descent with momentum μ, dampening τ and L2 weight decay λ (PyTorch's SGD):

        g ← −g if maximize;   g ← g + λ·w
        b ← g at the first step, else μ·b + (1 − τ)·g        (when μ ≠ 0)
        g ← g + μ·b if nesterov, else b                       (when μ ≠ 0)
        w ← w − γ·g

    Args: params (Parameters or group dicts), lr (float ≥ 0 or 0-d Tensor; required), momentum (≥ 0), dampening,
    weight_decay (≥ 0), nesterov (bool; needs momentum > 0 and dampening 0), maximize (bool).
    State: `momentum_buffer.<name>` (zeros) and `state_step` (int32, 0-d). Inputs: gradients aligned with
    `optimizer.parameters`. Returns True.
    Raises: ValueError for a negative lr/momentum/weight_decay or nesterov with momentum 0 or dampening ≠ 0;
    TypeError for non-bool nesterov/maximize; the Optimizer errors."""

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False):
        if not isinstance(lr, _Tensor) and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        for flag, v in (("nesterov", nesterov), ("maximize", maximize)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'SGD', the '{flag}' must be bool, but got {type(v).__name__}.")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=float(momentum), dampening=float(dampening), weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)
        self._param_state("momentum_buffer", "momentum_buffer")
        self.state_step = Parameter(_kernels.full([], 0, mstype.int32), "state_step")

    def construct(self, gradients):
        self._check_gradients(gradients)
        first = _ops.equal(self.state_step, 0)
        _kernels.assign(self.state_step, _ops.add(self.state_step, 1))
        for group, start, end in self._group_ranges():
            mu, tau = group["momentum"], group["dampening"]
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                if mu != 0.0:
                    buf = self.momentum_buffer[i]
                    new = _kernels.select(first, g, _ops.add(_ops.mul(buf, mu), _ops.mul(g, 1.0 - tau)))
                    _kernels.assign(buf, new)
                    g = _ops.add(g, _ops.mul(new, mu)) if group["nesterov"] else new
                _kernels.assign(p, _ops.sub(p, _ops.mul(g, self._group_lr(group, p.dtype))))
        return True
