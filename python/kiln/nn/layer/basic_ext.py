"""nn.ChannelShuffle, nn.Dropout1d and nn.BiDense of MindSpore 2.10 over kiln.ops.channel_shuffle, dropout1d and
bidense (kiln/ops/nnmisc_func.py)."""
import math

from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter
from ...ops import nnmisc_func as _F
from ..cell import Cell
from .basic import _check_positive_int

__all__ = ["ChannelShuffle", "Dropout1d", "BiDense"]


class ChannelShuffle(Cell):
    """MindSpore's nn.ChannelShuffle(groups): kiln.ops.channel_shuffle(x, groups) over (N, C, *).
    Raises ValueError for groups < 1 (at construction)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = _check_positive_int(groups, "groups", "ChannelShuffle")

    def construct(self, x):
        return _F.channel_shuffle(x, self.groups)


class Dropout1d(Cell):
    """MindSpore's nn.Dropout1d(p=0.5): in training, kiln.ops.dropout1d(x, p) (whole channels of (N, C, L) zeroed);
    in evaluation x unchanged. Raises TypeError / ValueError for p outside [0, 1]."""

    def __init__(self, p=0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"For 'Dropout1d', the 'p' must be float, but got {type(p).__name__}.")
        if not 0 <= p <= 1:
            raise ValueError(f"For 'Dropout1d', the 'p' must be in range [0, 1], but got {p}.")
        self.p = float(p)

    def construct(self, x):
        return _F.dropout1d(x, self.p, self.training)

    def extend_repr(self):
        return f"p={self.p}"


class BiDense(Cell):
    """MindSpore's nn.BiDense(in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None,
    has_bias=True, dtype=float32): y = x1ᵀ·W·x2 + b (kiln.ops.bidense) with weight (out, in1, in2) and bias (out,),
    both initialized Uniform(1/√in1_channels) by default (MindSpore's and PyTorch's Bilinear default)."""

    def __init__(self, in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 dtype=mstype.float32):
        super().__init__()
        name = "BiDense"
        self.in1_channels = _check_positive_int(in1_channels, "in1_channels", name)
        self.in2_channels = _check_positive_int(in2_channels, "in2_channels", name)
        self.out_channels = _check_positive_int(out_channels, "out_channels", name)
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{name}', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.has_bias = has_bias
        bound = 1 / math.sqrt(in1_channels)
        self.weight = Parameter(initializer(Uniform(bound) if weight_init is None else weight_init,
                                            [out_channels, in1_channels, in2_channels], dtype=dtype), name="weight")
        self.bias = Parameter(initializer(Uniform(bound) if bias_init is None else bias_init, [out_channels],
                                          dtype=dtype), name="bias") if has_bias else None

    def construct(self, input1, input2):
        return _F.bidense(input1, input2, self.weight, self.bias)

    def extend_repr(self):
        return (f"in1_channels={self.in1_channels}, in2_channels={self.in2_channels}, "
                f"output_channels={self.out_channels}, has_bias={self.has_bias}")
