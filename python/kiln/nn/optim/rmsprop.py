"""nn.RMSProp with MindSpore's formulas (ApplyRMSProp / ApplyCenteredRMSProp)."""
from ... import ops as _ops
from ...ops import _kernels
from ._validate import check_non_negative, check_positive, check_type
from .optimizer import Optimizer

__all__ = ["RMSProp"]


def _step_lr(lr, dtype):
    """A learning rate (0-d or shape (1,) Tensor) as a 0-d tensor of `dtype`."""
    if lr.ndim:
        lr = _kernels.reshape(lr, [])
    return lr if lr.dtype == dtype else _kernels.cast(lr, dtype)


class RMSProp(Optimizer):
    r"""Root Mean Square Propagation [Hinton, Neural Networks for ML, lecture 6, slide 29] as MindSpore's
    ApplyRMSProp / ApplyCenteredRMSProp kernels compute it (ε inside the square root):

        (weight decay, gradient centralization and loss scale as nn.Optimizer; ρ = decay, β = momentum)
        s ← ρ·s + (1 − ρ)·g²
        m ← β·m + lr·g / √(s + ε)                   centered:  ḡ ← ρ·ḡ + (1 − ρ)·g,
        w ← w − m                                               m ← β·m + lr·g / √(s − ḡ² + ε)

    Args:
        params, learning_rate (default 0.1), loss_scale, weight_decay: see nn.Optimizer.
        decay (float ≥ 0, default 0.9), momentum (float ≥ 0, default 0.0), epsilon (float > 0, default 1e-10),
        use_locking (bool; no effect), centered (bool, default False).
    State Parameters: `mean_square.<name>` (initialized to ONES, as MindSpore), `moment.<name>` (zeros),
        `mean_grad.<name>` (zeros, centered only); plus `global_step`, `learning_rate`.
    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.
    Raises:
        TypeError: decay/momentum/epsilon not float (ints are rejected), use_locking/centered not bool.
        ValueError: decay or momentum < 0, epsilon ≤ 0; and the nn.Optimizer errors.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        name = self.cls_name
        check_type(decay, (float,), "decay", name)
        check_non_negative(decay, "decay", name)
        check_type(momentum, (float,), "momentum", name)
        check_non_negative(momentum, "momentum", name)
        check_type(epsilon, (float,), "epsilon", name)
        check_positive(epsilon, "epsilon", name)
        check_type(use_locking, (bool,), "use_locking", name)
        check_type(centered, (bool,), "centered", name)
        self.centered = centered
        self.use_locking = use_locking
        self.decay = decay
        self.momentum = momentum
        self.epsilon = epsilon
        if centered:
            self.mg = self._parameters.clone(prefix="mean_grad", init="zeros")
        self.ms = self._parameters.clone(prefix="mean_square", init="ones")
        self.moment = self._parameters.clone(prefix="moment", init="zeros")

    def construct(self, gradients):
        grads, lrs = self._prepare(gradients)
        rho, beta, eps = self.decay, self.momentum, self.epsilon
        mgs = self.mg if self.centered else (None,) * self.param_length
        for p, ms, mom, mg, g, lr in zip(self._parameters, self.ms, self.moment, mgs, grads, lrs):
            dt = p.dtype
            if g.dtype != dt:
                g = _kernels.cast(g, dt)
            ms_new = _ops.add(_ops.mul(ms, rho), _ops.mul(_ops.square(g), 1.0 - rho))
            denom = ms_new
            if mg is not None:
                mg_new = _ops.add(_ops.mul(mg, rho), _ops.mul(g, 1.0 - rho))
                denom = _ops.sub(ms_new, _ops.square(mg_new))
                _kernels.assign(mg, mg_new)
            step = _kernels.div(_ops.mul(g, _step_lr(lr, dt)), _ops.sqrt(_ops.add(denom, eps)))
            mom_new = _ops.add(_ops.mul(mom, beta), step) if beta != 0.0 else step
            _kernels.assign(ms, ms_new)
            _kernels.assign(mom, mom_new)
            _kernels.assign(p, _ops.sub(p, mom_new))
        return True
