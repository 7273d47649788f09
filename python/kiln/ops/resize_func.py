"""Resizing: MindSpore 2.10's ops.interpolate and the ResizeNearestNeighbor / ResizeBilinearV2 primitives.

Each spatial axis is resampled separately with Gather: nearest modes take one source index per output index,
(bi/tri)linear modes blend two neighbours with weights computed on the host (constants of the graph), so the gradient
is Gather's scatter-add and Graph mode sees plain Gather/Mul/Add. 'area' is adaptive average pooling.

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

import numpy as np

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from .nn_func import adaptive_avg_pool1d, adaptive_avg_pool2d
from .primitives import Primitive

__all__ = ["interpolate", "ResizeNearestNeighbor", "ResizeBilinearV2"]

_MODES = {"nearest": 0, "nearest-exact": 0, "linear": 1, "bilinear": 2, "trilinear": 3, "area": 0}


def _gather(x, idx, axis):
    return _core.gather(x, Tensor(np.ascontiguousarray(idx, dtype=np.int64)), axis)


def _nearest_axis(x, axis, src):
    n = x.shape[axis]
    return _gather(x, np.clip(src, 0, n - 1), axis)


def _linear_axis(x, axis, src):
    n = x.shape[axis]
    src = np.clip(src, 0.0, n - 1)
    i0 = np.floor(src).astype(np.int64)
    i1 = np.minimum(i0 + 1, n - 1)
    w = (src - i0).astype(np.float64)
    shape = [1] * x.ndim
    shape[axis] = len(src)
    wt = Tensor(w.reshape(shape).astype(_np_float(x)))
    a, b = _gather(x, i0, axis), _gather(x, i1, axis)
    return _core.add(a, _core.mul(_core.sub(b, a), wt))


def _np_float(x):
    return mstype.dtype_to_nptype(x.dtype)


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
    computes it. Gradients flow to input. Same dtype (float).

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
    y = x
    for k in range(nsp):
        axis = x.ndim - nsp + k
        n, m, s = x.shape[axis], out[k], scales[k]
        d = np.arange(m, dtype=np.float64)
        if mode == "nearest":
            y = _nearest_axis(y, axis, np.floor(d * s).astype(np.int64))
        elif mode == "nearest-exact":
            y = _nearest_axis(y, axis, np.floor((d + 0.5) * s).astype(np.int64))
        elif align_corners:
            y = _linear_axis(y, axis, d * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m))
        else:
            y = _linear_axis(y, axis, (d + 0.5) * s - 0.5)
    return y


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


def _input4(x, op):
    x = _tensor_arg(x, op, "x")
    if x.ndim != 4:
        raise ValueError(f"For '{op}', 'x' must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
    return x


class ResizeNearestNeighbor(Primitive):
    """ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(x): x (N, C, H, W) resized to
    `size` = (new_height, new_width) by nearest neighbour, TensorFlow's coordinate rules (module docstring)."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        super().__init__("ResizeNearestNeighbor")
        self.size = _size2(size, "ResizeNearestNeighbor")
        _check_flags("ResizeNearestNeighbor", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, x):
        x = _input4(x, "ResizeNearestNeighbor")
        y = x
        for axis, m in ((2, self.size[0]), (3, self.size[1])):
            n = x.shape[axis]
            d = np.arange(m, dtype=np.float64)
            if self.align_corners:
                src = np.floor(d * ((n - 1) / (m - 1)) + 0.5) if m > 1 else np.zeros(m)
            elif self.half_pixel_centers:
                src = np.floor((d + 0.5) * (n / m))
            else:
                src = np.floor(d * (n / m))
            y = _nearest_axis(y, axis, src.astype(np.int64))
        return y


class ResizeBilinearV2(Primitive):
    """ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size): x (N, C, H, W) resized to `size` =
    (new_height, new_width) by bilinear interpolation, TensorFlow's coordinate rules (module docstring)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        super().__init__("ResizeBilinearV2")
        _check_flags("ResizeBilinearV2", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, x, size):
        x = _input4(x, "ResizeBilinearV2")
        if not mstype.is_float(x.dtype):
            raise TypeError(f"For 'ResizeBilinearV2', 'x' must be a float Tensor, but got {x.dtype}.")
        size = _size2(size, "ResizeBilinearV2")
        y = x
        for axis, m in ((2, size[0]), (3, size[1])):
            n = x.shape[axis]
            d = np.arange(m, dtype=np.float64)
            if self.align_corners:
                src = d * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m)
            elif self.half_pixel_centers:
                src = (d + 0.5) * (n / m) - 0.5
            else:
                src = d * (n / m)
            y = _linear_axis(y, axis, src)
        return y
