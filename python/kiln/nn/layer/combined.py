"""Combined layers: MindSpore's nn.Conv2dBnAct and nn.DenseBnAct (convolution / dense, optional BatchNorm,
optional activation), made of Kiln's Conv2d, Dense, BatchNorm2d/1d and activation cells so that parameter names
match MindSpore's checkpoints ('conv.weight', 'batchnorm.gamma', 'dense.weight', ...)."""
from ...common import dtype as mstype
from ..cell import Cell
from .activation import LeakyReLU, get_activation
from .basic import Dense
from .conv import Conv2d
from .normalization import BatchNorm1d, BatchNorm2d

__all__ = ["Conv2dBnAct", "DenseBnAct"]


def _activation(activation, alpha, name):
    if activation is None or isinstance(activation, Cell):
        return activation
    if isinstance(activation, str) and activation == "leakyrelu":
        return LeakyReLU(alpha)
    if not isinstance(activation, str):
        raise TypeError(f"For '{name}', the 'activation' must be str, Cell or None, but got "
                        f"{type(activation).__name__}.")
    return get_activation(activation, name)


class Conv2dBnAct(Cell):
    """Conv2d → (BatchNorm2d if has_bn) → (activation if given).

    Args: in_channels, out_channels, kernel_size, stride (1), pad_mode ('same'), padding (0), dilation (1),
    group (1), has_bias (False), weight_init ('normal'), bias_init ('zeros'): as nn.Conv2d; has_bn (False),
    momentum (0.997), eps (1e-5): the BatchNorm2d's; activation (None, a name for get_activation, 'leakyrelu' with
    slope alpha (0.2), or a Cell); after_fake (True; quantization-aware training only in MindSpore, unused here).
    Input (N, in_channels, H, W); output (N, out_channels, H', W')."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init="normal", bias_init="zeros", has_bn=False, momentum=0.997,
                 eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                           has_bias, weight_init, bias_init)
        if not isinstance(has_bn, bool):
            raise TypeError(f"For 'Conv2dBnAct', the 'has_bn' must be bool, but got {type(has_bn).__name__}.")
        self.has_bn = has_bn
        self.has_act = activation is not None
        self.after_fake = after_fake
        if has_bn:
            self.batchnorm = BatchNorm2d(out_channels, eps, momentum)
        self.activation = _activation(activation, alpha, "Conv2dBnAct")

    def construct(self, x):
        x = self.conv(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class DenseBnAct(Cell):
    """Dense → (BatchNorm1d if has_bn) → (activation if given).

    Args: in_channels, out_channels, weight_init ('normal'), bias_init ('zeros'), has_bias (True): as nn.Dense;
    has_bn (False), momentum (0.9), eps (1e-5): the BatchNorm1d's; activation, alpha, after_fake as Conv2dBnAct.
    Input (N, in_channels); output (N, out_channels)."""

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros", has_bias=True,
                 has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias, dtype=mstype.float32)
        if not isinstance(has_bn, bool):
            raise TypeError(f"For 'DenseBnAct', the 'has_bn' must be bool, but got {type(has_bn).__name__}.")
        self.has_bn = has_bn
        self.has_act = activation is not None
        self.after_fake = after_fake
        if has_bn:
            self.batchnorm = BatchNorm1d(out_channels, eps, momentum)
        self.activation = _activation(activation, alpha, "DenseBnAct")

    def construct(self, x):
        x = self.dense(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x
