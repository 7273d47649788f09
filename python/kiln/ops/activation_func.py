"""Activation functions whose naive formulas overflow or have the wrong gradient at a kink: MindSpore 2.x's
`ops.log1p`, `ops.softplus`, `ops.logsigmoid`, `ops.relu6`, `ops.hardsigmoid`, composed of Kiln ops (so Graph mode
compiles them and autodiff uses the ops' bprops). kiln.nn's activation cells and losses use these helpers.

Numerical rules (checked by tests/python/test_op_registry.py's special-value tests at 0, ±1000, ±inf and NaN):
- softplus(z) = log(1 + eᶻ) is computed as max(z, 0) + log1p(exp(−|z|)): exp never overflows and log1p keeps the
  tail exp(−|z|) < eps (M. Mächler, "Accurately Computing log(1 − exp(−|a|))", Rmpfr vignette 2012, eq. (10):
  log1pexp). Its gradient is σ(z) everywhere, 0.5 at z = 0: −|z| is written as select(z > 0, −z, z), whose
  gradient at the tie z = 0 takes the z branch, while relu's gradient at 0 is 0, so the two kinks cancel exactly.
- logsigmoid(x) = log σ(x) = −softplus(−x) = min(x, 0) − log1p(exp(−|x|)): −1000 → −1000 (gradient 1), +1000 → 0
  (gradient 0), gradient 0.5 at 0.
- relu6 / hardsigmoid have MindSpore's gradients at the corners: ReLU6Grad is dy·[0 < x ≤ 6], HSigmoidGrad
  dy/6·[−3 < x < 3] (PyTorch agrees except relu6 at 6).
- NaN in gives NaN out (relu and max/min propagate NaN, as NumPy).
"""
from .._loader import _core

__all__ = ["log1p", "softplus", "logsigmoid", "relu6", "hardsigmoid"]


def log1p(input):
    """log(1 + x), accurate for |x| ≪ 1 (C's log1p); gradient 1 / (1 + x). Integer inputs give float32."""
    return _core.log1p(input)


def _neg_abs(z):
    """−|z| with gradient 1 at z = 0 (the z branch of the select), not abs's 0: see the module docstring."""
    return _core.select(_core.greater(z, 0.0), _core.neg(z), z)


def _softplus(z):
    """log(1 + exp(z)) = relu(z) + log1p(exp(−|z|)) for a float Tensor z (Mächler 2012, eq. (10))."""
    return _core.add(_core.relu(z), _core.log1p(_core.exp(_neg_abs(z))))


def softplus(input, beta=1, threshold=20):
    """Softplus: log(1 + exp(beta·x)) / beta, and x itself where beta·x > threshold (MindSpore/PyTorch's linear
    regime). Computed stably for every x (no overflow at x = ±1000); gradient σ(beta·x), 0.5 at x = 0.

    Raises TypeError for a non-number beta/threshold."""
    for name, v in (("beta", beta), ("threshold", threshold)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"For 'softplus', the '{name}' must be a number, but got {type(v).__name__}.")
    if not isinstance(input, _core.Tensor):
        raise TypeError(f"For 'softplus', the 'input' must be a Tensor, but got {type(input).__name__}.")
    z = input if beta == 1 else _core.mul(input, float(beta))
    sp = _softplus(z)
    if beta != 1:
        sp = _core.div(sp, float(beta))
    return _core.select(_core.greater(z, float(threshold)), input, sp)


def logsigmoid(x):
    """log(sigmoid(x)) = min(x, 0) − log1p(exp(−|x|)) (stable: −1000 → −1000 with gradient 1, +1000 → 0 with
    gradient 0); gradient σ(−x), 0.5 at 0."""
    return _core.neg(_softplus(_core.neg(x)))


def relu6(x):
    """min(max(x, 0), 6); NaN stays NaN. Gradient dy·[0 < x ≤ 6] (MindSpore's ReLU6Grad: 0 at x = 0, 1 at 6)."""
    # select, not minimum: Minimum splits the gradient 0.5/0.5 at the tie x = 6
    return _core.select(_core.greater(x, 6.0), 6.0, _core.relu(x))


def hardsigmoid(input):
    """relu6(x + 3) / 6 (MindSpore's HSigmoid); gradient dy/6·[−3 < x < 3] (0 at both corners, as HSigmoidGrad
    and PyTorch); NaN stays NaN."""
    # select, not minimum: Minimum splits the gradient 0.5/0.5 at the tie x = 3
    r = _core.div(_core.relu(_core.add(input, 3.0)), 6.0)
    return _core.select(_core.greater_equal(input, 3.0), 1.0, r)
