"""The AdamW update (PyTorch-style decoupled weight decay), written once with Kiln ops.

MindSpore offers AdamW as `mindspore.experimental.optim.AdamW` (a PyTorch-like optimizer with param_groups), which
Kiln provides as kiln.experimental.optim.AdamW on top of `adamw_update` below; mindspore.nn has no AdamW class.
`nn.AdamWeightDecay` is MindSpore's other flavour (no bias correction, the decay added to the Adam update)."""
from ..._loader import _core

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
        grad = _core.cast(grad, dt)
    if maximize:
        grad = _core.neg(grad)
    if isinstance(lr, _core.Tensor):
        if lr.ndim:
            lr = _core.reshape(lr, [])
        if lr.dtype != dt:
            lr = _core.cast(lr, dt)
    decayed = _core.mul(param, _core.sub(1.0, _core.mul(lr, weight_decay))) if weight_decay != 0.0 else param
    m = _core.add(_core.mul(exp_avg, beta1), _core.mul(grad, 1.0 - beta1))
    v = _core.add(_core.mul(exp_avg_sq, beta2), _core.mul(_core.square(grad), 1.0 - beta2))
    bc1 = _core.sub(1.0, _core.pow(beta1, step))
    bc2 = _core.sub(1.0, _core.pow(beta2, step))
    if isinstance(bc1, _core.Tensor) and bc1.dtype != dt:
        bc1, bc2 = _core.cast(bc1, dt), _core.cast(bc2, dt)
    _core.assign(exp_avg, m)
    _core.assign(exp_avg_sq, v)
    if amsgrad:
        v = _core.maximum(max_exp_avg_sq, v)
        _core.assign(max_exp_avg_sq, v)
    denom = _core.add(_core.div(_core.sqrt(v), _core.sqrt(bc2)), eps)
    step_size = _core.div(lr, bc1)
    _core.assign(param, _core.sub(decayed, _core.mul(_core.div(m, denom), step_size)))
    return True
