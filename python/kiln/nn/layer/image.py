"""Image layers: MindSpore's nn.Upsample (resizing via ops.interpolate)."""
from ...ops.resize_func import interpolate
from ..cell import Cell

__all__ = ["Upsample"]


class Upsample(Cell):
    """nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None):
    resizes (N, C, *spatial) inputs with ops.interpolate and these arguments (see its docstring for modes and
    coordinate rules). Raises ValueError as ops.interpolate, at the first call."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extend_repr(self):
        return f"size={self.size}, scale_factor={self.scale_factor}, mode={self.mode}"
