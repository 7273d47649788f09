"""Image layers: MindSpore's nn.Upsample (resizing via ops.interpolate), nn.PSNR and nn.SSIM (image quality)."""
import math
import numbers

import numpy as np

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...ops.nn_func import conv2d
from ...ops.resize_func import interpolate
from ..cell import Cell

__all__ = ["Upsample", "PSNR", "SSIM", "PixelShuffle", "PixelUnshuffle"]


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


def _check_real(value, name, cls, positive=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or (positive and value <= 0):
        raise TypeError(f"For '{cls}', '{name}' must be a positive number, but got {value!r}.")
    return float(value)


def _check_images(img1, img2, cls):
    for n, v in (("img1", img1), ("img2", img2)):
        if not isinstance(v, _Tensor):
            raise TypeError(f"For '{cls}', '{n}' must be a Tensor, but got {type(v).__name__}.")
    if img1.ndim != 4 or tuple(img1.shape) != tuple(img2.shape):
        raise ValueError(f"For '{cls}', 'img1' and 'img2' must be 4-D (N, C, H, W) of one shape, but got "
                         f"{tuple(img1.shape)} and {tuple(img2.shape)}.")
    if not mstype.is_float(img1.dtype) or img1.dtype != img2.dtype:
        raise TypeError(f"For '{cls}', the images must be float Tensors of one dtype, but got {img1.dtype} and "
                        f"{img2.dtype}.")


class PSNR(Cell):
    """nn.PSNR(max_val=1.0)(img1, img2): the peak signal-to-noise ratio of each image pair, (N,) float:
    10·log10(max_val² / MSE) with the MSE over (C, H, W). Inputs (N, C, H, W) floats of one shape.
    Raises TypeError / ValueError for bad max_val or inputs."""

    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _check_real(max_val, "max_val", "PSNR")

    def construct(self, img1, img2):
        _check_images(img1, img2, "PSNR")
        mse = _kernels.mean(_ops.square(_ops.sub(img1, img2)), [1, 2, 3], False)
        return _ops.mul(_ops.log(_kernels.div(self.max_val ** 2, mse)), 10.0 / math.log(10.0))


class SSIM(Cell):
    """nn.SSIM(max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03)(img1, img2): the mean structural
    similarity of each image pair, (N,) float (Wang et al. 2004):
        SSIM = ((2·μ1μ2 + C1)(2·σ12 + C2)) / ((μ1² + μ2² + C1)(σ1² + σ2² + C2)),  C1 = (k1·L)², C2 = (k2·L)²,
    with local means/variances from a filter_size×filter_size Gaussian window (σ = filter_sigma) applied per
    channel without padding, averaged over channels and positions. Inputs (N, C, H, W) floats, H and W at least
    filter_size. Raises TypeError / ValueError for bad arguments or inputs."""

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self.max_val = _check_real(max_val, "max_val", "SSIM")
        if isinstance(filter_size, bool) or not isinstance(filter_size, numbers.Integral) or filter_size < 1:
            raise ValueError(f"For 'SSIM', 'filter_size' must be a positive int, but got {filter_size!r}.")
        self.filter_size = int(filter_size)
        self.filter_sigma = _check_real(filter_sigma, "filter_sigma", "SSIM")
        self.k1 = _check_real(k1, "k1", "SSIM")
        self.k2 = _check_real(k2, "k2", "SSIM")

    def _window(self, channels, np_dtype):
        x = np.arange(self.filter_size, dtype=np.float64) - (self.filter_size - 1) / 2.0
        g = np.exp(-(x * x) / (2.0 * self.filter_sigma ** 2))
        g /= g.sum()
        w = np.outer(g, g)[None, None].repeat(channels, 0)  # depthwise: (C, 1, k, k)
        return _Tensor(w.astype(np_dtype))

    def construct(self, img1, img2):
        _check_images(img1, img2, "SSIM")
        n, c, h, w = img1.shape
        if h < self.filter_size or w < self.filter_size:
            raise ValueError(f"For 'SSIM', the images ({h}×{w}) must be at least filter_size = {self.filter_size} "
                             f"on each side.")
        win = self._window(c, mstype.dtype_to_nptype(img1.dtype))
        blur = lambda t: conv2d(t, win, groups=c)
        mu1, mu2 = blur(img1), blur(img2)
        mu1_sq, mu2_sq, mu12 = _ops.square(mu1), _ops.square(mu2), _ops.mul(mu1, mu2)
        s1 = _ops.sub(blur(_ops.square(img1)), mu1_sq)
        s2 = _ops.sub(blur(_ops.square(img2)), mu2_sq)
        s12 = _ops.sub(blur(_ops.mul(img1, img2)), mu12)
        c1, c2 = (self.k1 * self.max_val) ** 2, (self.k2 * self.max_val) ** 2
        num = _ops.mul(_ops.add(_ops.mul(mu12, 2.0), c1), _ops.add(_ops.mul(s12, 2.0), c2))
        den = _ops.mul(_ops.add(_ops.add(mu1_sq, mu2_sq), c1), _ops.add(_ops.add(s1, s2), c2))
        return _kernels.mean(_kernels.div(num, den), [1, 2, 3], False)


class PixelShuffle(Cell):
    r"""PixelShuffle(upscale_factor): sub-pixel convolution's rearrangement (Shi et al. 2016): (*, C·r², H, W) ->
    (*, C, H·r, W·r), out[..., c, h·r + i, w·r + j] = in[..., c·r² + i·r + j, h, w] (ops.pixel_shuffle).

    Inputs: a Tensor of rank ≥ 3 whose third-to-last dim is divisible by r². Output: its dtype.
    Raises (at the call, as MindSpore): TypeError for a non-int factor or a non-Tensor input, ValueError for r ≤ 0,
    rank < 3 or channels not divisible by r².
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input):
        from ...ops.diag_func import pixel_shuffle
        return pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    r"""PixelUnshuffle(downscale_factor): the inverse of PixelShuffle, (*, C, H·r, W·r) -> (*, C·r², H, W)
    (ops.pixel_unshuffle).

    Inputs: a Tensor of rank ≥ 3 whose last two dims are divisible by r. Output: its dtype.
    Raises (at the call, as MindSpore): TypeError for a non-int factor or a non-Tensor input, ValueError for r ≤ 0,
    rank < 3 or H, W not divisible by r.
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def construct(self, input):
        from ...ops.diag_func import pixel_unshuffle
        return pixel_unshuffle(input, self.downscale_factor)
