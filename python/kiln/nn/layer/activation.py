"""Activation cells (MindSpore's `nn.ReLU`, `nn.GELU`, ...) and `get_activation(name)` used by Dense's
`activation='relu'`. Each is a thin Cell over one Kiln op (or a short composition), so gradients come from the
ops' bprops. Formulas are in the class docstrings."""
import numbers

import numpy as np

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common.parameter import Parameter
from ...ops import activation_func as _act
from ...ops import nnact_func as _nnact
from ..cell import Cell

__all__ = ["ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "FastGelu", "Softmax", "LogSoftmax", "LeakyReLU", "SiLU",
           "ELU", "HSigmoid", "HSwish", "Softsign", "Softplus", "LogSigmoid", "Mish", "PReLU", "get_activation"]


class ReLU(Cell):
    """max(x, 0) element-wise; gradient dy·[x > 0] (0 at x = 0)."""

    def construct(self, x):
        return _ops.relu(x)


class ReLU6(Cell):
    """min(max(x, 0), 6); gradient dy·[0 < x ≤ 6] (MindSpore's ReLU6Grad); NaN stays NaN."""

    def construct(self, x):
        return _act.relu6(x)


class Sigmoid(Cell):
    """1 / (1 + exp(−x))."""

    def construct(self, x):
        return _ops.sigmoid(x)


class Tanh(Cell):
    """tanh(x)."""

    def construct(self, x):
        return _ops.tanh(x)


class GELU(Cell):
    """GELU [Hendrycks & Gimpel 2016]: x·Φ(x). approximate=True (MindSpore's default) uses
    0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); False the exact erf form."""

    def __init__(self, approximate=True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"For 'GELU', the 'approximate' must be bool, but got {type(approximate).__name__}.")
        self.approximate = approximate

    def construct(self, x):
        return _kernels.gelu(x, self.approximate)


class FastGelu(Cell):
    """x / (1 + exp(−1.702·|x|)) · exp(0.851·(x − |x|)) = x·sigmoid(1.702·x) (MindSpore's FastGelu; kiln.ops.fast_gelu
    without its dtype check)."""

    def construct(self, x):
        return _nnact._fast_gelu(x)


class Softmax(Cell):
    """exp(x − max) / Σ exp(x − max) along `axis` (default −1)."""

    def __init__(self, axis=-1):
        super().__init__()
        if isinstance(axis, (tuple, list)):
            if len(axis) != 1:
                raise ValueError(f"For 'Softmax', Kiln supports one axis, but got {axis}.")
            axis = axis[0]
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'Softmax', the 'axis' must be int, but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        return _kernels.softmax(x, self.axis)


class LogSoftmax(Cell):
    """x − max − log Σ exp(x − max) along `axis` (default −1)."""

    def __init__(self, axis=-1):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'LogSoftmax', the 'axis' must be int, but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        return _kernels.log_softmax(x, self.axis)


class LeakyReLU(Cell):
    """x if x ≥ 0 else alpha·x, computed as max(alpha·x, x) (alpha ≤ 1) or min(alpha·x, x) (alpha > 1)."""

    def __init__(self, alpha=0.2):
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise TypeError(f"For 'LeakyReLU', the 'alpha' must be a number, but got {type(alpha).__name__}.")
        self.alpha = float(alpha)

    def construct(self, x):
        return _nnact.leaky_relu(x, self.alpha)  # gradient (1 + alpha)/2 at x = 0 (MindSpore 2.10)


class SiLU(Cell):
    """x · sigmoid(x) (kiln.ops.silu)."""

    def construct(self, x):
        return _nnact.silu(x)


class ELU(Cell):
    """x if x > 0 else alpha·(exp(x) − 1) (kiln.ops.elu)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"For 'ELU', the 'alpha' must be a float, but got {type(alpha).__name__}.")
        self.alpha = float(alpha)

    def construct(self, x):
        return _nnact.elu(x, self.alpha)


class HSigmoid(Cell):
    """relu6(x + 3) / 6; gradient dy/6·[−3 < x < 3] (MindSpore's HSigmoidGrad)."""

    def construct(self, x):
        return _act.hardsigmoid(x)


class HSwish(Cell):
    """x · relu6(x + 3) / 6; gradient 0 below −3, (2x + 3)/6 on [−3, 3), 1.5 at 3 and 1 above (MindSpore's and
    PyTorch's values at the corners: −0.5 at −3, 1.5 at 3)."""

    def construct(self, x):
        return _nnact.hardswish(x)


class Softsign(Cell):
    """x / (1 + |x|) (kiln.ops.softsign)."""

    def construct(self, x):
        return _nnact.softsign(x)


class Softplus(Cell):
    """log(1 + exp(beta·x)) / beta, and x itself where beta·x > threshold (kiln.ops.softplus, computed stably;
    gradient σ(beta·x)). MindSpore 2.10 has no such Cell (only ops.softplus); the arguments are PyTorch's
    nn.Softplus(beta=1.0, threshold=20.0). beta and threshold: numbers (beta != 0); ValueError/TypeError as
    ops.softplus raises them, when the Cell runs."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        for name, v in (("beta", beta), ("threshold", threshold)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"For 'Softplus', '{name}' must be a number, but got {type(v).__name__}.")
        if beta == 0:
            raise ValueError("For 'Softplus', the value of 'beta' cannot be 0.")
        self.beta, self.threshold = beta, threshold

    def construct(self, x):
        if self.beta == 1 and self.threshold == 20:
            return _act.softplus(x)
        return _act.softplus(x, self.beta, self.threshold)


class LogSigmoid(Cell):
    """log(sigmoid(x)) = min(x, 0) − log1p(exp(−|x|)) (kiln.ops.logsigmoid): LogSigmoid(−1000) = −1000 with
    gradient 1, LogSigmoid(1000) = 0 with gradient 0, gradient 0.5 at 0."""

    def construct(self, x):
        return _act.logsigmoid(x)


class Mish(Cell):
    """x · tanh(softplus(x)) [Misra 2019], with the stable softplus (kiln.ops.mish)."""

    def construct(self, x):
        return _nnact.mish(x)


class PReLU(Cell):
    """Parametric ReLU (He et al. 2015): x where x >= 0, else w·x, with a trainable slope per channel.

    Args: channel (int ≥ 1, default 1): the length of the slope Parameter `a` (1: one slope shared by all
        channels, else the input's axis 1 must have `channel` elements); w (float, list of floats or Tensor of
        shape (channel,), default 0.25): its initial value.
    Inputs: x of any rank (rank ≥ 2 when channel > 1). Output: x's shape and dtype.
    Raises TypeError / ValueError for a bad channel or w, and for an input whose axis 1 differs from channel."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        name = self.cls_name
        if isinstance(channel, bool) or not isinstance(channel, numbers.Integral) or channel < 1:
            raise ValueError(f"For '{name}', the 'channel' must be a positive int, but got {channel!r}.")
        if isinstance(w, _Tensor):
            init = w.asnumpy().astype(np.float32).reshape(-1)
        elif isinstance(w, (list, tuple)):
            init = np.asarray(w, dtype=np.float32).reshape(-1)
        elif isinstance(w, numbers.Real) and not isinstance(w, bool):
            init = np.full((channel,), float(w), np.float32)
        else:
            raise TypeError(f"For '{name}', the 'w' must be a float, a list of floats or a Tensor, but got "
                            f"{type(w).__name__}.")
        if init.shape != (channel,):
            raise ValueError(f"For '{name}', the 'w' must have {channel} values (channel), but got {init.size}.")
        self.channel = int(channel)
        self.w = Parameter(_Tensor(init), name="a")

    def construct(self, x):
        if not isinstance(x, _Tensor):
            raise TypeError(f"For '{self.cls_name}', the input must be a Tensor, but got {type(x).__name__}.")
        if self.channel > 1 and (x.ndim < 2 or x.shape[1] != self.channel):
            raise ValueError(f"For '{self.cls_name}', the input's axis 1 must have {self.channel} channels, but "
                             f"got shape {tuple(x.shape)}.")
        return _nnact.prelu(x, self.w)

    def extend_repr(self):
        return f"channel={self.channel}"


_ACTIVATIONS = {
    "softmax": Softmax, "logsoftmax": LogSoftmax, "relu": ReLU, "relu6": ReLU6, "tanh": Tanh, "gelu": GELU,
    "fast_gelu": FastGelu, "elu": ELU, "sigmoid": Sigmoid, "leakyrelu": LeakyReLU, "hswish": HSwish,
    "hsigmoid": HSigmoid, "logsigmoid": LogSigmoid, "softsign": Softsign, "silu": SiLU, "mish": Mish,
    "softplus": Softplus,
}


def get_activation(name, prim_name=None):
    """A new activation cell for `name` ('relu', 'sigmoid', 'tanh', 'gelu', 'softmax', ...), or None for None.

    Raises KeyError for an unknown name (listing the known ones)."""
    if name is None:
        return None
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    if not isinstance(name, str) or name not in _ACTIVATIONS:
        raise KeyError(f"{prefix} 'name' must be in {list(_ACTIVATIONS)}, but got {name}.")
    return _ACTIVATIONS[name]()

