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
from .. import _engine
from .._loader import _core
from ..common import dtype as _mstype

__all__ = ["log1p", "softplus", "logsigmoid", "relu6", "hardsigmoid"]


def _tensor_in(x, op):
    """x itself when it is a Tensor; TypeError naming op otherwise (MindSpore 2.10 takes no list, number or array)."""
    if not isinstance(x, _core.Tensor):
        raise TypeError(f"For '{op}', the 'input' must be a Tensor, but got {type(x).__name__}.")
    return x


def log1p(input):
    """log(1 + x), accurate for |x| ≪ 1 (C's log1p); gradient 1 / (1 + x). Integer inputs give float32. Raises
    TypeError for a non-Tensor input (as MindSpore 2.10)."""
    return _core.log1p(_tensor_in(input, "log1p"))


def _neg_abs(z):
    """−|z| with gradient 1 at z = 0 (the z branch of the select), not abs's 0: see the module docstring."""
    return _core.select(_core.greater(z, 0.0), _core.neg(z), z)


def _softplus(z):
    """log(1 + exp(z)) = relu(z) + log1p(exp(−|z|)) for a float Tensor z (Mächler 2012, eq. (10))."""
    return _core.add(_core.relu(z), _core.log1p(_core.exp(_neg_abs(z))))


def softplus(input, beta=1, threshold=20):
    """Softplus: log(1 + exp(beta·x)) / beta, and x itself where beta·x > threshold (MindSpore/PyTorch's linear
    regime). Computed stably for every x (no overflow at x = ±1000; NaN stays NaN, where MindSpore 2.10's CPU kernel
    gives +inf); gradient σ(beta·x), 0.5 at x = 0. beta = 1, threshold = 20 (the defaults) is one Softplus kernel
    (elementwise_unary.cpp, whose threshold is 20); other values scale around it (Mul, Softplus, Div, Select).

    input: a float16/float32/float64 Tensor; beta, threshold: numbers or one-element Tensors (as MindSpore 2.10).
    Raises TypeError for a non-number beta/threshold or an input that is not a float Tensor, ValueError for
    beta == 0 (as MindSpore 2.10: "the value of 'beta' cannot be 0"; a Tensor beta only in PyNative mode)."""
    if not isinstance(input, _core.Tensor):
        raise TypeError(f"For 'softplus', the 'input' must be a Tensor, but got {type(input).__name__}.")
    if not _mstype.is_float(input.dtype):
        raise TypeError(f"For 'softplus', the 'input' must be a float16, float32 or float64 Tensor, but got "
                        f"{input.dtype}.")
    if type(beta) is int and type(threshold) is int and beta == 1 and threshold == 20:  # the defaults: one kernel
        return _core.softplus(input)
    beta, threshold = _softplus_number("beta", beta), _softplus_number("threshold", threshold)
    if isinstance(beta, _core.Tensor) or isinstance(threshold, _core.Tensor):  # Graph mode, Tensor arguments
        b = _core.cast(beta, input.dtype) if isinstance(beta, _core.Tensor) else float(beta)
        t = _core.cast(threshold, input.dtype) if isinstance(threshold, _core.Tensor) else float(threshold)
        z = _core.mul(input, b)
        return _core.select(_core.greater(z, t), input, _core.div(_core.softplus(z), b))
    if beta == 0:
        raise ValueError(f"For 'softplus', the value of 'beta' cannot be 0, but got {beta}.")
    if beta == 1 and threshold == 20:
        return _core.softplus(input)
    z = _core.mul(input, float(beta))
    sp = _core.div(_core.softplus(z), float(beta))
    return _core.select(_core.greater(z, float(threshold)), input, sp)


def _softplus_number(name, v):
    """softplus's beta / threshold as a Python number: a one-element non-bool Tensor is its value (MindSpore 2.10
    takes Tensor(2.0)); while compiling (Graph mode) such a Tensor stays a 0-d Tensor, whose value (0 included)
    cannot be checked then. TypeError for anything else that is not an int or float, ValueError for a Tensor of
    another size."""
    if isinstance(v, _core.Tensor) and v.dtype != _mstype.bool_ and not _mstype.is_complex(v.dtype):
        if v.size != 1:
            raise ValueError(f"For 'softplus', the '{name}' Tensor must have only one element, but got shape "
                             f"{tuple(v.shape)}.")
        if _engine.tracing():  # its value is not known while compiling: computed with as a 0-d Tensor
            return _core.reshape(v, [])
        v = v.asnumpy().reshape(()).item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"For 'softplus', the '{name}' must be a number, but got {type(v).__name__}.")
    return v


def logsigmoid(x):
    """log(sigmoid(x)) = min(x, 0) − log1p(exp(−|x|)) (stable: −1000 → −1000 with gradient 1, +1000 → 0 with
    gradient 0; MindSpore 2.10's CPU composition gives −inf at −1000); gradient σ(−x), 0.5 at 0. One LogSigmoid
    kernel (elementwise_unary.cpp); integer inputs give float32. Raises TypeError for a non-Tensor input (as
    MindSpore 2.10)."""
    return _core.logsigmoid(_tensor_in(x, "logsigmoid"))


def relu6(x):
    """min(max(x, 0), 6); NaN stays NaN. Gradient dy·[0 < x ≤ 6] (MindSpore's ReLU6Grad: 0 at x = 0, 1 at 6).
    Raises TypeError for a non-Tensor input (as MindSpore 2.10)."""
    # select, not minimum: Minimum splits the gradient 0.5/0.5 at the tie x = 6
    x = _tensor_in(x, "relu6")
    return _core.select(_core.greater(x, 6.0), 6.0, _core.relu(x))


def hardsigmoid(input):
    """relu6(x + 3) / 6 (MindSpore's HSigmoid); gradient dy/6·[−3 < x < 3] (0 at both corners, as HSigmoidGrad
    and PyTorch); NaN stays NaN. One HSigmoid kernel (elementwise_unary.cpp); integer inputs give float32. Raises
    TypeError for a non-Tensor input (as MindSpore 2.10)."""
    return _core.hardsigmoid(_tensor_in(input, "hardsigmoid"))
