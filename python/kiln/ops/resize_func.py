"""Resizing: MindSpore 2.10's ops.interpolate and the ResizeNearestNeighbor / ResizeBilinearV2 primitives.

Every mode but 'area' is one C++ op (src/ops/resize.cpp): ResizeNearest (nearest modes) or ResizeLinear (linear,
bilinear, trilinear), over 1 to 3 spatial axes, with the coordinate rules below as attributes (ONNX Resize's
coordinate_transformation_mode and nearest_mode names); their gradients are the ops ResizeNearestGrad /
ResizeLinearGrad (scatter-adds of dy onto the taps). 'area' is adaptive average pooling. 'bicubic' is refused.

Source coordinate of output index d on an axis of input length n and output length m (PyTorch's and MindSpore's
definitions; `s` = n/m, or 1/scale_factor when a scale factor is given and not recomputed):
    nearest:            floor(d·s)                      nearest-exact: floor((d + 0.5)·s)
    linear family:      (d + 0.5)·s − 0.5, clamped at 0  (align_corners=False)
                        d·(n − 1)/(m − 1)                (align_corners=True)
ResizeNearestNeighbor (TensorFlow's rules): floor(d·s); align_corners: round-half-up(d·(n − 1)/(m − 1));
half_pixel_centers: floor((d + 0.5)·s). ResizeBilinearV2: d·s (legacy), (d + 0.5)·s − 0.5 (half_pixel_centers),
d·(n − 1)/(m − 1) (align_corners). Indices are clipped to [0, n − 1]."""
import math
import numbers

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from .nn_func import adaptive_avg_pool1d, adaptive_avg_pool2d
from .primitives import Primitive

__all__ = ["interpolate", "ResizeNearestNeighbor", "ResizeBilinearV2"]

_MODES = {"nearest": 0, "nearest-exact": 0, "linear": 1, "bilinear": 2, "trilinear": 3, "area": 0}


def _resize(x, size, scales, mode, coord, nearest_mode="floor"):
    """One ResizeNearest / ResizeLinear op (src/ops/resize.cpp) over the trailing len(size) axes."""
    return _core.resize(x, [int(v) for v in size], [float(v) for v in scales], mode, coord, nearest_mode)


def _sizes(x, size, scale_factor, recompute, nsp, op):
    """(output sizes, coordinate scales) for the nsp trailing axes."""
    in_sz = list(x.shape[-nsp:])
    if (size is None) == (scale_factor is None):
        raise ValueError(f"For '{op}', exactly one of 'size' and 'scale_factor' must be given.")
    if size is not None:
        sz = [size] * nsp if _is_int(size) else list(size) if isinstance(size, (tuple, list)) else None
        if sz is None or len(sz) != nsp or not all(_is_int(v) and v > 0 for v in sz):
            raise ValueError(f"For '{op}', 'size' must be a positive int or a tuple of {nsp} positive ints, but got "
                             f"{_got(size)}.")
        return [int(v) for v in sz], [n / m for n, m in zip(in_sz, sz)]
    sf = [scale_factor] * nsp if isinstance(scale_factor, numbers.Real) and not isinstance(scale_factor, bool) \
        else list(scale_factor) if isinstance(scale_factor, (tuple, list)) else None
    if sf is None or len(sf) != nsp or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0
                                               for v in sf):
        raise ValueError(f"For '{op}', 'scale_factor' must be a positive number or a tuple of {nsp} of them, but got "
                         f"{_got(scale_factor)}.")
    out = [int(math.floor(n * f)) for n, f in zip(in_sz, sf)]
    if any(o < 1 for o in out):
        raise ValueError(f"For '{op}', 'scale_factor' {scale_factor} makes an empty output from input size {in_sz}.")
    scales = [n / o for n, o in zip(in_sz, out)] if recompute else [1.0 / f for f in sf]
    return out, scales


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    """MindSpore's ops.interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None): input (N, C, *spatial) resized to `size` (or spatial·scale_factor, floored).

    Modes: 'nearest' and 'nearest-exact' (any of 1–3 spatial dims), 'linear' (3-D input), 'bilinear' (4-D),
    'trilinear' (5-D), 'area' (adaptive average pooling, 3-D/4-D). align_corners (linear modes only) maps the corner
    pixels onto each other. With scale_factor, coordinates use 1/scale_factor unless recompute_scale_factor (then
    input/output sizes), as PyTorch; MindSpore 2.10's CPU kernel refuses scale_factor with most 4-D modes, Kiln
    computes it. One C++ op, ResizeNearest or ResizeLinear (src/ops/resize.cpp; 'area': adaptive average pooling);
    gradients flow to input (ResizeNearestGrad / ResizeLinearGrad). Same dtype (float; float16/bfloat16 blended in
    float32).

    Raises TypeError (non-Tensor, integer input), ValueError (unknown mode, a mode for another rank, both or neither
    of size/scale_factor, align_corners with a nearest/area mode)."""
    x = _tensor_arg(input, "interpolate")
    if not mstype.is_float(x.dtype):
        raise TypeError(f"For 'interpolate', the input must be a float Tensor, but got {x.dtype}.")
    if mode not in _MODES and mode != "bicubic":
        raise ValueError(f"For 'interpolate', 'mode' must be one of {sorted(_MODES)}, but got {mode!r}.")
    if mode == "bicubic":
        raise ValueError("For 'interpolate', Kiln does not support mode='bicubic' yet; use 'bilinear'.")
    nsp = x.ndim - 2
    if nsp < 1 or nsp > 3:
        raise ValueError(f"For 'interpolate', the input must be 3-D, 4-D or 5-D (N, C, *spatial), but got shape "
                         f"{tuple(x.shape)}.")
    need = _MODES[mode]
    if need and need != nsp:
        raise ValueError(f"For 'interpolate', mode '{mode}' needs a {need + 2}-D input, but got shape "
                         f"{tuple(x.shape)}.")
    linear = need > 0
    if align_corners is not None and not linear:
        raise ValueError(f"For 'interpolate', 'align_corners' can only be set with the linear modes, but got mode "
                         f"{mode!r}.")
    out, scales = _sizes(x, size, scale_factor, bool(recompute_scale_factor), nsp, "interpolate")
    if mode == "area":
        if nsp == 3:
            raise ValueError("For 'interpolate', mode 'area' supports 3-D and 4-D inputs.")
        return adaptive_avg_pool1d(x, out[0]) if nsp == 1 else adaptive_avg_pool2d(x, tuple(out))
    if mode == "nearest":
        return _resize(x, out, scales, "nearest", "asymmetric")
    if mode == "nearest-exact":
        return _resize(x, out, scales, "nearest", "half_pixel", "round_prefer_ceil")
    return _resize(x, out, scales, "linear", "align_corners" if align_corners else "half_pixel")


def _size2(size, op):
    if isinstance(size, Tensor):
        size = tuple(int(v) for v in size.asnumpy().reshape(-1))
    if not isinstance(size, (tuple, list)) or len(size) != 2 or not all(_is_int(v) and v > 0 for v in size):
        raise ValueError(f"For '{op}', 'size' must be a tuple of 2 positive ints (new_height, new_width), but got "
                         f"{_got(size)}.")
    return tuple(int(v) for v in size)


def _check_flags(op, align_corners, half_pixel_centers):
    for n, v in (("align_corners", align_corners), ("half_pixel_centers", half_pixel_centers)):
        if not isinstance(v, bool):
            raise TypeError(f"For '{op}', '{n}' must be bool, but got {_got(v)}.")
    if align_corners and half_pixel_centers:
        raise ValueError(f"For '{op}', 'align_corners' and 'half_pixel_centers' can not both be True.")


def _tf_resize(x, size, mode, align_corners, half_pixel_centers):
    """TensorFlow's rules (module docstring) as one ResizeNearest / ResizeLinear op; nearest rounds (half up) with
    align_corners and half_pixel_centers, floors otherwise."""
    coord = "align_corners" if align_corners else "half_pixel" if half_pixel_centers else "asymmetric"
    nearest_mode = "round_prefer_ceil" if mode == "nearest" and coord != "asymmetric" else "floor"
    # nearest with half_pixel_centers: floor((d + 0.5)·s) = floor(((d + 0.5)·s − 0.5) + 0.5), half_pixel rounded
    scales = [n / m for n, m in zip(x.shape[2:], size)]
    return _resize(x, size, scales, mode, coord, nearest_mode)


def _input4(x, op):
    x = _tensor_arg(x, op, "x")
    if x.ndim != 4:
        raise ValueError(f"For '{op}', 'x' must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
    return x


class ResizeNearestNeighbor(Primitive):
    """ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(x): x (N, C, H, W) resized to
    `size` = (new_height, new_width) by nearest neighbour, TensorFlow's coordinate rules (module docstring): one
    ResizeNearest op; any real dtype (a copy). Raises ValueError for a bad size, both flags set or a non-4-D x."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        super().__init__("ResizeNearestNeighbor")
        self.size = _size2(size, "ResizeNearestNeighbor")
        _check_flags("ResizeNearestNeighbor", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, x):
        x = _input4(x, "ResizeNearestNeighbor")
        return _tf_resize(x, self.size, "nearest", self.align_corners, self.half_pixel_centers)


class ResizeBilinearV2(Primitive):
    """ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size): x (N, C, H, W) resized to `size` =
    (new_height, new_width) by bilinear interpolation, TensorFlow's coordinate rules (module docstring): one
    ResizeLinear op. Raises TypeError for a non-float x, ValueError for a bad size, both flags or a non-4-D x."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        super().__init__("ResizeBilinearV2")
        _check_flags("ResizeBilinearV2", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, x, size):
        x = _input4(x, "ResizeBilinearV2")
        if not mstype.is_float(x.dtype):
            raise TypeError(f"For 'ResizeBilinearV2', 'x' must be a float Tensor, but got {x.dtype}.")
        size = _size2(size, "ResizeBilinearV2")
        return _tf_resize(x, size, "linear", self.align_corners, self.half_pixel_centers)
