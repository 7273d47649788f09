"""More `mindspore.mint.nn` layers: each is a Cell whose construct is the mint.nn.functional function of the same
name (PyTorch's constructor arguments, the same Kiln ops, gradients and Graph mode as the functional form)."""
from ...nn.cell import Cell
from . import functional as F

__all__ = ["Hardtanh", "Hardswish", "SELU", "GLU", "PixelShuffle", "AvgPool3d", "Softshrink", "Hardshrink",
           "Threshold"]


class Hardtanh(Cell):
    """mint.nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False): input clipped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if not min_val < max_val:
            raise ValueError(f"For 'mint.nn.Hardtanh', 'min_val' must be less than 'max_val', but got {min_val} and "
                             f"{max_val}.")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def construct(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)


class Hardswish(Cell):
    """mint.nn.Hardswish(): x · relu6(x + 3) / 6."""

    def construct(self, input):
        return F.hardswish(input)


class SELU(Cell):
    """mint.nn.SELU(): scale · (max(0, x) + min(0, alpha · (exp(x) − 1))), scale ≈ 1.0507, alpha ≈ 1.6733."""

    def construct(self, input):
        return F.selu(input)


class GLU(Cell):
    """mint.nn.GLU(dim=-1): a · sigmoid(b) for the halves a, b of the input along dim."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def construct(self, input):
        return F.glu(input, self.dim)


class PixelShuffle(Cell):
    """mint.nn.PixelShuffle(upscale_factor): (*, C·r², H, W) -> (*, C, H·r, W·r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)


class AvgPool3d(Cell):
    """mint.nn.AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None): average pooling of (N, C, D, H, W) or (C, D, H, W); stride None = kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def construct(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class Softshrink(Cell):
    """mint.nn.Softshrink(lambd=0.5): x − lambd above lambd, x + lambd below −lambd, 0 between."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def construct(self, input):
        return F.softshrink(input, self.lambd)


class Hardshrink(Cell):
    """mint.nn.Hardshrink(lambd=0.5): x where |x| > lambd, 0 elsewhere."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def construct(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Cell):
    """mint.nn.Threshold(threshold, value, inplace=False): input where input > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def construct(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)
