"""The AdamW update (PyTorch-style decoupled weight decay), written once with Kiln ops.

MindSpore offers AdamW as `mindspore.experimental.optim.AdamW` (a PyTorch-like optimizer with param_groups), which
Kiln provides as kiln.experimental.optim.AdamW on top of `adamw_update` below; mindspore.nn has no AdamW class.
`nn.AdamWeightDecay` is MindSpore's other flavour (no bias correction, the decay added to the Adam update)."""
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels

__all__ = ["adamw_update"]


def adamw_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, weight_decay, beta1, beta2, eps, step,
                 amsgrad=False, maximize=False):
    r"""One AdamW step for one Parameter, in place (MindSpore's experimental AdamW = PyTorch's AdamW):

        g ← −g if maximize
        w' = w·(1 − lr·λ)
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        denom = √v / √(1 − β2ᵗ) + ε        (amsgrad: v_max ← max(v_max, v), √v_max in place of √v)
        w ← w' − (lr / (1 − β1ᵗ))·m / denom

    Args: param/exp_avg/exp_avg_sq/max_exp_avg_sq Parameters of one shape; grad a Tensor of that shape; lr a 0-d
    float Tensor (or float); weight_decay, beta1, beta2, eps floats; step the step count t ≥ 1 (0-d float32 Tensor,
    or a number); amsgrad, maximize bools. Written with Kiln ops, so it runs eagerly and inside graphs."""
    dt = param.dtype
    if grad.dtype != dt:
        grad = _kernels.cast(grad, dt)
    if maximize:
        grad = _ops.neg(grad)
    if isinstance(lr, _Tensor):
        if lr.ndim:
            lr = _kernels.reshape(lr, [])
        if lr.dtype != dt:
            lr = _kernels.cast(lr, dt)
    decayed = _ops.mul(param, _ops.sub(1.0, _ops.mul(lr, weight_decay))) if weight_decay != 0.0 else param
    m = _ops.add(_ops.mul(exp_avg, beta1), _ops.mul(grad, 1.0 - beta1))
    v = _ops.add(_ops.mul(exp_avg_sq, beta2), _ops.mul(_ops.square(grad), 1.0 - beta2))
    bc1 = _ops.sub(1.0, _kernels.pow(beta1, step))
    bc2 = _ops.sub(1.0, _kernels.pow(beta2, step))
    if isinstance(bc1, _Tensor) and bc1.dtype != dt:
        bc1, bc2 = _kernels.cast(bc1, dt), _kernels.cast(bc2, dt)
    _kernels.assign(exp_avg, m)
    _kernels.assign(exp_avg_sq, v)
    if amsgrad:
        v = _ops.maximum(max_exp_avg_sq, v)
        _kernels.assign(max_exp_avg_sq, v)
    denom = _ops.add(_kernels.div(_ops.sqrt(v), _ops.sqrt(bc2)), eps)
    step_size = _kernels.div(lr, bc1)
    _kernels.assign(param, _ops.sub(decayed, _ops.mul(_kernels.div(m, denom), step_size)))
    return True
