"""3-D pooling, 1-D average pooling, adaptive max/avg pooling, Lp pooling, max unpooling and local response
normalization: MindSpore 2.10's ops.max_pool3d, avg_pool3d, avg_pool1d, adaptive_max_pool1d/2d/3d,
adaptive_avg_pool3d, lp_pool1d/2d, max_unpool1d/2d/3d, lrn (and the Primitive classes with the same call: LRN,
AdaptiveAvgPool3D).

All are compositions of Kiln's 2-D kernels (Conv2D, MaxPool, AvgPool, AdaptiveAvgPool2D) and data movement, exact
by construction (no approximation); gradients come from the building blocks and Graph mode traces them:
- max/avg pooling over a box is separable: max_{d,h,w} = max_d(max_{h,w}), and the average's divisor is a product
  of per-dim counts (padded window, unpadded elements or the divisor override), so a 3-D pool is a 2-D pool over
  (H, W) followed by one over (D, ·). max_pool3d's indices are d·H·W + h·W + w of the input (the first maximum in
  (d, h, w) order, as PyTorch).
- adaptive max pooling: bin i spans [⌊i·L/O⌋, ⌈(i + 1)·L/O⌉) per dim (PyTorch/MindSpore bins); the argmax of each
  bin is found per dim (slices + argmax, under stop_gradient) and the values are gathered from the input at it, so
  the gradient goes to the chosen element only (as MaxPool's).
- lp_pool: (avg_pool(xᵖ)·k)^(1/p) with k the window size — MindSpore's and PyTorch's formula (p = 1: the signed
  sum; an odd p with a negative window sum gives NaN; in ceil_mode a window cut by the border is divided by its
  clipped size before ·k, as both do).
- max_unpool: a zero tensor with x's values written at the indices (TensorScatterUpdate; a repeated index keeps the
  last value, as MindSpore's CPU kernel); the gradient of x gathers dy at the indices.
- lrn: x·(bias + α·Σ_{|c'−c|≤r} x_{c'}²)^(−β) (TensorFlow's / MindSpore's LRN: α not divided by the window size),
  the channel sum an AvgPool with divisor 1.
"""
import numbers

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .nn_func import _check_ndim, _int_tuple, _is_int

__all__ = ["max_pool3d", "avg_pool3d", "avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_avg_pool3d", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "lrn", "fractional_max_pool2d", "fractional_max_pool3d"]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _float_nd(x, ranks, op, name="input"):
    _check_ndim(x, ranks, op, name)
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {x.dtype}.")
    return x


def _pads6(padding, op):
    """padding: int, (d, h, w) or (front, back, top, bottom, left, right) → 6-tuple of ints ≥ 0."""
    if _is_int(padding):
        p = (int(padding),) * 6
    elif isinstance(padding, (tuple, list)) and all(_is_int(v) for v in padding) and len(padding) in (1, 3, 6):
        v = tuple(int(a) for a in padding)
        p = v * 6 if len(v) == 1 else ((v[0], v[0], v[1], v[1], v[2], v[2]) if len(v) == 3 else v)
    else:
        raise TypeError(f"For '{op}', the 'padding' must be an int or a tuple of 3 or 6 ints, but got {padding!r}.")
    if any(a < 0 for a in p):
        raise ValueError(f"For '{op}', the 'padding' must be non-negative, but got {padding!r}.")
    return p


# ---------------------------------------------------------------------------------------------- 3-D pooling

def _as5d(x, op):
    _check_ndim(x, (4, 5), op)
    return (_core.expand_dims(x, 0), True) if x.ndim == 4 else (x, False)


@defop()
def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """MindSpore's ops.max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
    return_indices=False): 3-D max pooling of x (N, C, D, H, W) (or (C, D, H, W), returned 4-D).

    kernel_size, stride (None: kernel_size), padding, dilation: int or (d, h, w); padding symmetric, at most half
    the kernel per dim (padded positions never win). Output O = ⌊(in + 2·pad − dilation·(k − 1) − 1)/stride⌋ + 1
    (⌈⌉ with ceil_mode, a last window starting in the padding dropped). With return_indices also the Int64 flat
    index d·H·W + h·W + w of each maximum in its input plane (the first in (d, h, w) order). Gradient to the chosen
    element. NaN wins (as MaxPool).

    Raises TypeError for a non-Tensor or non-float x and bad argument types, ValueError for a bad rank, non-positive
    sizes or a padding larger than half the kernel."""
    op = "max_pool3d"
    x5, squeeze = _as5d(x, op)
    if x5.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'x' must be a float Tensor, but got {x5.dtype}.")
    k = _int_tuple(kernel_size, 3, "kernel_size", op)
    s = k if stride is None else _int_tuple(stride, 3, "stride", op)
    p = _int_tuple(padding, 3, "padding", op, minimum=0)
    d = _int_tuple(dilation, 3, "dilation", op)
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise ValueError(f"For '{op}', the padding must be at most half of the kernel size, but got padding {p} and "
                         f"kernel_size {k}.")
    y, idx = _max_pool3d(x5, k, s, (p[0], p[0], p[1], p[1], p[2], p[2]), d, ceil_mode, return_indices)
    if squeeze:
        y = _core.squeeze(y, [0])
        idx = _core.squeeze(idx, [0]) if return_indices else None
    return (y, idx) if return_indices else y


def _check_window(x5, k, p, d, op):
    """ValueError (naming op) where a (dilated) window is larger than the padded input along some dim."""
    for i in range(3):
        if x5.shape[2 + i] + p[2 * i] + p[2 * i + 1] < d[i] * (k[i] - 1) + 1:
            raise ValueError(f"For '{op}', the (dilated) kernel {tuple(k)} is larger than the padded input "
                             f"{tuple(x5.shape[2:])} with pads {tuple(p)}.")


def _max_pool3d(x5, k, s, p, d, ceil_mode, return_indices):
    """(values, Int64 indices or None) of the 3-D max pooling of x5 (N, C, D, H, W) with the 6 pads p (front, back,
    top, bottom, left, right): the separable two-stage form of the module docstring (shared with nn.MaxPool3d)."""
    n, c, depth, h, w = x5.shape
    _check_window(x5, k, p, d, "max_pool3d")
    # stage 1: (H, W) windows of every depth slice (depth as channels)
    y1, i1 = _core.max_pool2d(_core.reshape(x5, [n * c, depth, h, w]), list(k[1:]), list(s[1:]),
                              [p[2], p[3], p[4], p[5]], list(d[1:]), bool(ceil_mode), True)
    oh, ow = y1.shape[2], y1.shape[3]
    # stage 2: depth windows of the stage-1 maxima
    y2, i2 = _core.max_pool2d(_core.reshape(y1, [n * c, 1, depth, oh * ow]), [k[0], 1], [s[0], 1],
                              [p[0], p[1], 0, 0], [d[0], 1], bool(ceil_mode), True)
    od = y2.shape[2]
    y = _core.reshape(y2, [n, c, od, oh, ow])
    if not return_indices:
        return y, None
    from .index_func import gather_elements
    dsel = _core.floor_div(_core.reshape(i2, [n * c, od, oh * ow]), oh * ow)  # depth of each winner
    hw = gather_elements(_core.reshape(i1, [n * c, depth, oh * ow]), 1, dsel)
    idx = _core.reshape(_core.add(_core.mul(dsel, h * w), hw), [n, c, od, oh, ow])
    return y, _core.stop_gradient(_core.cast(idx, mstype.int64))


def _avg_divisor(divisor_override, op):
    if divisor_override is None:
        return 0
    if not _is_int(divisor_override) or divisor_override < 0:
        raise ValueError(f"For '{op}', the 'divisor_override' must be a non-negative int, but got "
                         f"{divisor_override!r}.")
    return int(divisor_override)


@defop()
def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """MindSpore's ops.avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=0): 3-D average pooling of (N, C, D, H, W) (or (C, D, H, W)).

    kernel_size, stride: int or (d, h, w) (stride None: kernel_size); padding: int, (d, h, w) or (front, back, top,
    bottom, left, right), the two pads of a dim summing to at most its kernel. Divisor: divisor_override when
    non-zero, else the window volume within the padded input (count_include_pad) or the number of input elements
    in the window. Output as max_pool3d's (ceil_mode likewise).

    Raises TypeError for a non-float input or bad argument types, ValueError for a bad rank, sizes, pads or
    divisor_override."""
    op = "avg_pool3d"
    x5, squeeze = _as5d(input_x, op)
    if x5.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'input_x' must be a float Tensor, but got {x5.dtype}.")
    k = _int_tuple(kernel_size, 3, "kernel_size", op)
    s = k if stride is None else _int_tuple(stride, 3, "stride", op)
    p = _pads6(padding, op)
    if p[0] + p[1] > k[0] or p[2] + p[3] > k[1] or p[4] + p[5] > k[2]:
        raise ValueError(f"For '{op}', the pads of the two sides of a dim must sum to at most the kernel size, but "
                         f"got padding {padding!r} and kernel_size {kernel_size!r}.")
    y = _avg_pool3d(x5, k, s, p, ceil_mode, count_include_pad, _avg_divisor(divisor_override, op))
    return _core.squeeze(y, [0]) if squeeze else y


def _avg_pool3d(x5, k, s, p, ceil_mode, count_include_pad, div):
    """3-D average pooling of x5 (N, C, D, H, W), 6 pads p, divisor override div (0: none): separable."""
    stage_div = 1 if div else 0  # with an override both stages sum; the total is divided once
    n, c, depth, h, w = x5.shape
    _check_window(x5, k, p, (1, 1, 1), "avg_pool3d")
    y1 = _core.avg_pool2d(_core.reshape(x5, [n * c, depth, h, w]), list(k[1:]), list(s[1:]), list(p[2:]),
                          bool(ceil_mode), bool(count_include_pad), stage_div)
    oh, ow = y1.shape[2], y1.shape[3]
    y2 = _core.avg_pool2d(_core.reshape(y1, [n * c, 1, depth, oh * ow]), [k[0], 1], [s[0], 1], [p[0], p[1], 0, 0],
                          bool(ceil_mode), bool(count_include_pad), stage_div)
    y = _core.reshape(y2, [n, c, y2.shape[2], oh, ow])
    return _core.div(y, float(div)) if div else y


@defop()
def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True):
    """MindSpore's ops.avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
    count_include_pad=True): 1-D average pooling of (N, C, L) (or (C, L)) — AvgPool over (N, C, 1, L).

    kernel_size, stride: int (or a 1-tuple; stride None: kernel_size); padding: int or (left, right), at most the
    kernel in sum. Divisor: the window within the padded input (count_include_pad) or the unpadded elements in it.
    Raises TypeError for a non-float input or bad argument types, ValueError for a bad rank or sizes."""
    op = "avg_pool1d"
    _check_ndim(input_x, (2, 3), op, "input_x")
    if input_x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'input_x' must be a float Tensor, but got {input_x.dtype}.")
    k = _int_tuple(kernel_size, 1, "kernel_size", op)[0]
    s = k if stride is None else _int_tuple(stride, 1, "stride", op)[0]
    if _is_int(padding):
        pl = pr = int(padding)
    elif isinstance(padding, (tuple, list)) and len(padding) in (1, 2) and all(_is_int(v) for v in padding):
        pl, pr = (int(padding[0]),) * 2 if len(padding) == 1 else (int(padding[0]), int(padding[1]))
    else:
        raise TypeError(f"For '{op}', the 'padding' must be an int or a tuple of 1 or 2 ints, but got {padding!r}.")
    if pl < 0 or pr < 0 or pl + pr > k:
        raise ValueError(f"For '{op}', the padding must be non-negative and sum to at most the kernel size {k}, but "
                         f"got {padding!r}.")
    x = input_x if input_x.ndim == 3 else _core.expand_dims(input_x, 0)
    y = _core.avg_pool2d(_core.expand_dims(x, 2), [1, k], [1, s], [0, 0, pl, pr], bool(ceil_mode),
                         bool(count_include_pad), 0)
    y = _core.squeeze(y, [2])
    return y if input_x.ndim == 3 else _core.squeeze(y, [0])


# ---------------------------------------------------------------------------------------------- adaptive pooling

def _adaptive_out(output_size, spatial, op):
    nd = len(spatial)
    if _is_int(output_size) or output_size is None:
        output_size = (output_size,) * nd
    if not isinstance(output_size, (tuple, list)) or len(output_size) != nd or not all(
            v is None or _is_int(v) for v in output_size):
        raise TypeError(f"For '{op}', the 'output_size' must be an int or a tuple of {nd} ints (or None), but got "
                        f"{output_size!r}.")
    out = [spatial[i] if output_size[i] is None else int(output_size[i]) for i in range(nd)]
    if any(v < 1 for v in out):
        raise ValueError(f"For '{op}', the 'output_size' must be positive, but got {output_size!r}.")
    return out


def _adaptive_max(x, output_size, nd, return_indices, op, index_dtype=mstype.int64):
    _check_ndim(x, (nd + 1, nd + 2), op)
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'input' must be a float Tensor, but got {x.dtype}.")
    if not isinstance(return_indices, bool):
        raise TypeError(f"For '{op}', the 'return_indices' must be a bool, but got {_got(return_indices)}.")
    out_sizes = _adaptive_out(output_size, list(x.shape[x.ndim - nd:]), op)
    if x.size == 0:
        raise ValueError(f"For '{op}', the input must not be empty, but got shape {tuple(x.shape)}.")
    # one C++ AdaptiveMaxPool op (src/ops/pool.cpp); the 1-D op skips NaN, the 2-D/3-D ones count a NaN only as a
    # bin's first element (MindSpore 2.10's CPU kernels)
    y, idx = _core.adaptive_max_pool(x, out_sizes, nd == 1)
    if not return_indices:
        return y
    return y, (idx if index_dtype == mstype.int64 else _core.cast(idx, index_dtype))


@defop(mint="nn.functional.adaptive_max_pool1d")
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """MindSpore's ops.adaptive_max_pool1d(input, output_size) (and mint's return_indices): adaptive 1-D max pooling
    of (N, C, L) or (C, L) to output_size bins, bin i = [⌊i·L/O⌋, ⌈(i + 1)·L/O⌉) (MindSpore's ops version also
    requires L divisible by output_size; Kiln takes any L, giving the same result where MindSpore does). With
    return_indices also the Int64 index of each maximum along L. Gradient to the chosen element.
    Raises TypeError for a non-float input, ValueError for a bad rank, an empty input or output_size < 1."""
    return _adaptive_max(input, output_size, 1, return_indices, "adaptive_max_pool1d")


@defop(mint="nn.functional.adaptive_max_pool2d")
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """MindSpore's ops.adaptive_max_pool2d(input, output_size, return_indices=False): adaptive 2-D max pooling of
    (N, C, H, W) or (C, H, W); output_size int or (OH, OW) (None keeps that size); bins as adaptive_max_pool1d's
    per dim. With return_indices also the Int64 flat index h·W + w of each maximum. Gradient to the chosen element.
    Raises TypeError for a non-float input, ValueError for a bad rank, an empty input or a bad output_size."""
    return _adaptive_max(input, output_size, 2, return_indices, "adaptive_max_pool2d")


@defop()
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """MindSpore's ops.adaptive_max_pool3d(input, output_size, return_indices=False): adaptive 3-D max pooling of
    (N, C, D, H, W) or (C, D, H, W); output_size int or (OD, OH, OW) (None keeps that size). With return_indices
    also the Int32 (MindSpore's dtype here) flat index d·H·W + h·W + w of each maximum.
    Raises TypeError for a non-float input, ValueError for a bad rank, an empty input or a bad output_size."""
    return _adaptive_max(input, output_size, 3, return_indices, "adaptive_max_pool3d", mstype.int32)


@defop(primitive="AdaptiveAvgPool3D", prim_attrs={"output_size": ("output_size", None)},
       mint="nn.functional.adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    """MindSpore's ops.adaptive_avg_pool3d(input, output_size): adaptive 3-D average pooling of (N, C, D, H, W) or
    (C, D, H, W) to output_size (int or (OD, OH, OW), None keeping that size); bins as adaptive_max_pool3d's. The
    mean over a bin is separable: AdaptiveAvgPool2D over (H, W), then over (D, ·).
    Raises TypeError for a non-float input, ValueError for a bad rank or output_size."""
    op = "adaptive_avg_pool3d"
    x5, squeeze = _as5d(input, op)
    if x5.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'input' must be a float Tensor, but got {x5.dtype}.")
    od, oh, ow = _adaptive_out(output_size, list(x5.shape[2:]), op)
    n, c, depth, h, w = x5.shape
    y1 = _core.adaptive_avg_pool2d(_core.reshape(x5, [n * c, depth, h, w]), [oh, ow])
    y2 = _core.adaptive_avg_pool2d(_core.reshape(y1, [n * c, 1, depth, oh * ow]), [od, oh * ow])
    y = _core.reshape(y2, [n, c, od, oh, ow])
    return _core.squeeze(y, [0]) if squeeze else y


# ---------------------------------------------------------------------------------------------- Lp pooling

def _norm_type(norm_type, op):
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"For '{op}', the 'norm_type' must be an int or float, but got {_got(norm_type)}.")
    if norm_type == 0:
        raise ValueError(f"For '{op}', the 'norm_type' must not be 0, but got {norm_type}.")
    return float(norm_type)


def _lp(x4, p, k, s, ceil_mode):
    xp = _core.pow(x4, p) if p != 2.0 else _core.square(x4)
    a = _core.avg_pool2d(xp, list(k), list(s), [0, 0, 0, 0], bool(ceil_mode), True, 0)
    total = _core.mul(a, float(k[0] * k[1]))
    return total if p == 1.0 else _core.pow(total, 1.0 / p)


@defop()
def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """MindSpore's ops.lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False): (Σ_window xᵖ)^(1/p) over
    (N, C, L) or (C, L), computed as (avg_pool(xᵖ)·k)^(1/p) (module docstring: p = 1 is the signed sum, an odd p
    with a negative sum gives NaN, as MindSpore and PyTorch). kernel_size/stride: int (stride None: kernel_size).
    Raises TypeError for a non-float x or bad argument types, ValueError for a bad rank, sizes or norm_type 0."""
    op = "lp_pool1d"
    _check_ndim(x, (2, 3), op, "x")
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'x' must be a float Tensor, but got {x.dtype}.")
    p = _norm_type(norm_type, op)
    k = _int_tuple(kernel_size, 1, "kernel_size", op)[0]
    s = k if stride is None else _int_tuple(stride, 1, "stride", op)[0]
    x3 = x if x.ndim == 3 else _core.expand_dims(x, 0)
    y = _core.squeeze(_lp(_core.expand_dims(x3, 2), p, (1, k), (1, s), ceil_mode), [2])
    return y if x.ndim == 3 else _core.squeeze(y, [0])


@defop()
def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """MindSpore's ops.lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False): (Σ_window xᵖ)^(1/p) over
    (N, C, H, W) or (C, H, W); kernel_size/stride int or (h, w) (stride None: kernel_size); formula as lp_pool1d's.
    Raises TypeError for a non-float x or bad argument types, ValueError for a bad rank, sizes or norm_type 0."""
    op = "lp_pool2d"
    _check_ndim(x, (3, 4), op, "x")
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'x' must be a float Tensor, but got {x.dtype}.")
    p = _norm_type(norm_type, op)
    k = _int_tuple(kernel_size, 2, "kernel_size", op)
    s = k if stride is None else _int_tuple(stride, 2, "stride", op)
    x4 = x if x.ndim == 4 else _core.expand_dims(x, 0)
    y = _lp(x4, p, k, s, ceil_mode)
    return y if x.ndim == 4 else _core.squeeze(y, [0])


# ---------------------------------------------------------------------------------------------- max unpooling

def _max_unpool(x, indices, kernel_size, stride, padding, output_size, nd, op):
    if not isinstance(x, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"For '{op}', 'x' and 'indices' must be Tensors, but got {type(x).__name__} and "
                        f"{type(indices).__name__}.")
    _check_ndim(x, (nd + 1, nd + 2), op, "x")
    if indices.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the 'indices' must be an int32 or int64 Tensor, but got {indices.dtype}.")
    if tuple(indices.shape) != tuple(x.shape):
        raise ValueError(f"For '{op}', the 'indices' must have the shape of 'x' {tuple(x.shape)}, but got "
                         f"{tuple(indices.shape)}.")
    k = _int_tuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else _int_tuple(stride, nd, "stride", op)
    p = _int_tuple(padding, nd, "padding", op, minimum=0)
    spatial_in = list(x.shape[x.ndim - nd:])
    default = [(spatial_in[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        out = default
    else:
        if not isinstance(output_size, (tuple, list)) or not all(_is_int(v) for v in output_size) or \
                len(output_size) not in (nd, x.ndim):
            raise TypeError(f"For '{op}', the 'output_size' must be a tuple of {nd} (or {x.ndim}) ints, but got "
                            f"{output_size!r}.")
        out = [int(v) for v in output_size][-nd:]
        for i in range(nd):
            if not default[i] - s[i] < out[i] < default[i] + s[i]:
                raise ValueError(f"For '{op}', the 'output_size' {tuple(output_size)} must be within a stride of the "
                                 f"default output size {tuple(default)} on each dim.")
    if any(v < 1 for v in out):
        raise ValueError(f"For '{op}', the output size {tuple(out)} must be positive (input shape "
                         f"{tuple(x.shape)}, kernel {k}, stride {s}, padding {p}).")
    lead = list(x.shape[:x.ndim - nd])
    planes = 1
    for v in lead:
        planes *= v
    per_in = 1
    for v in spatial_in:
        per_in *= v
    per_out = 1
    for v in out:
        per_out *= v
    idx = _core.reshape(indices, [planes, per_in])
    idx = _core.cast(idx, mstype.int64) if idx.dtype != mstype.int64 else idx
    if idx.size:
        idx = _core.check_range(idx, op, f"indices (output plane of {per_out} = {tuple(out)} elements)", 0.0,
                                float(per_out), False, None)
    base = _core.reshape(_core.arange(0, planes * per_out, per_out, mstype.int64), [planes, 1])
    flat_idx = _core.reshape(_core.add(idx, base), [-1, 1])
    zeros = _core.full([planes * per_out], 0.0, x.dtype)
    y = _core.tensor_scatter_update(zeros, flat_idx, _core.reshape(x, [-1]))
    return _core.reshape(y, lead + out)


@defop()
def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """MindSpore's ops.max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None): the partial
    inverse of max_pool1d: a zero tensor (N, C, L_out) (or (C, L_out)) with x's values at `indices` (int32/int64, x's
    shape, positions in [0, L_out)). L_out = (L − 1)·stride − 2·padding + kernel_size, or output_size ((L_out,) or
    (N, C, L_out)), which must be within a stride of that. A repeated index keeps the last value. Gradient of x:
    dy gathered at the indices.
    Raises TypeError for non-Tensors / non-int indices / bad argument types, ValueError for shapes, sizes or an
    index out of range (checked in both modes)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


@defop()
def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """MindSpore's ops.max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None): the partial
    inverse of max_pool2d on (N, C, H, W) or (C, H, W): indices are flat h·W_out + w positions in the output plane;
    output (H − 1)·stride − 2·padding + kernel per dim, or output_size ((H, W) or (N, C, H, W)). Otherwise as
    max_unpool1d."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


@defop()
def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """MindSpore's ops.max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None): the partial
    inverse of max_pool3d on (N, C, D, H, W) or (C, D, H, W) (indices d·H·W + h·W + w in the output volume).
    Otherwise as max_unpool1d."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


# ---------------------------------------------------------------------------------------------- LRN

@defop(primitive="LRN", prim_attrs={"depth_radius": ("depth_radius", 5), "bias": ("bias", 1.0),
                                    "alpha": ("alpha", 1.0), "beta": ("beta", 0.5),
                                    "norm_region": ("norm_region", "ACROSS_CHANNELS")})
def lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
    """MindSpore's ops.lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region='ACROSS_CHANNELS'):
    local response normalization across channels [Krizhevsky et al. 2012, TensorFlow's form]:
        y[n, c, h, w] = x[n, c, h, w] · (bias + alpha·Σ_{|c' − c| ≤ depth_radius} x[n, c', h, w]²)^(−beta).
    x: a 4-D float Tensor (N, C, H, W); depth_radius int ≥ 0; bias, alpha, beta floats. Result of x's shape/dtype.
    Raises TypeError for a non-float or non-4-D x and bad argument types, ValueError for depth_radius < 0 or a
    norm_region other than 'ACROSS_CHANNELS'."""
    op = "lrn"
    x = _float_nd(x, (4,), op, "x")
    if not _is_int(depth_radius):
        raise TypeError(f"For '{op}', the 'depth_radius' must be an int, but got {_got(depth_radius)}.")
    if depth_radius < 0:
        raise ValueError(f"For '{op}', the 'depth_radius' must be non-negative, but got {depth_radius}.")
    for name, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For '{op}', the '{name}' must be a float, but got {_got(v)}.")
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError(f"For '{op}', the 'norm_region' must be 'ACROSS_CHANNELS', but got {norm_region!r}.")
    n, c, h, w = x.shape
    r = int(depth_radius)
    sq = _core.reshape(_core.square(x), [n, 1, c, h * w])
    if r > 0:
        zeros = _core.full([n, 1, r, h * w], 0.0, x.dtype)
        sq = _core.concat([zeros, sq, zeros], 2)
    s = _core.avg_pool2d(sq, [2 * r + 1, 1], [1, 1], [0, 0, 0, 0], False, True, 1)  # window sums
    s = _core.reshape(s, [n, c, h, w])
    scale = _core.add(_core.mul(s, float(alpha)), float(bias))
    return _core.mul(x, _core.pow(scale, -float(beta)))


# --------------------------------------------------------------------------------------------- fractional max pool
def _fractional_starts(u, length, k, out):
    """Window starts (Int64, (P, out)) of fractional max pooling along one dim, one row per plane: with
    α = (length − k) / (out − 1), start_i = ⌊(i + u)·α⌋ − ⌊u·α⌋ for i < out − 1 and start_{out−1} = length − k
    (Graham, "Fractional Max-Pooling", arXiv:1412.6071, the pseudo-random overlapping sequence; MindSpore's
    FractionalMaxPoolWithFixedKsize and PyTorch use the same rule). u: (P,) Float64 samples in [0, 1)."""
    p = u.shape[0]
    last = _core.full([p, 1], float(length - k), mstype.int64)
    if out == 1:
        return last
    alpha = _core.full([], (length - k) / (out - 1), mstype.float64)
    i = _core.arange(0.0, float(out - 1), 1.0, mstype.float64)
    uc = _core.reshape(u, [p, 1])
    seq = _core.sub(_core.floor(_core.mul(_core.add(_core.reshape(i, [1, out - 1]), uc), alpha)),
                    _core.floor(_core.mul(uc, alpha)))
    return _core.concat([_core.cast(seq, mstype.int64), last], 1)


def _fractional_max(x, kernel_size, output_size, output_ratio, return_indices, samples, nd, op):
    """fractional_max_pool2d/3d: window starts per plane from `samples` (N, C, nd) (samples[..., 0] drives W in 2-D
    but D in 3-D: MindSpore's and PyTorch's convention), the first maximum of each
    kernel-sized window (h outer, w inner), gathered so the gradient reaches the chosen element."""
    from .index_func import gather_elements
    _check_ndim(x, (nd + 1, nd + 2), op)
    if x.dtype == mstype.bool_ or x.dtype in (mstype.complex64, mstype.complex128):
        raise TypeError(f"For '{op}', the 'input' must be a real number Tensor, but got {x.dtype}.")
    if not isinstance(return_indices, bool):
        raise TypeError(f"For '{op}', the 'return_indices' must be a bool, but got {_got(return_indices)}.")
    ks = _int_tuple(kernel_size, nd, "kernel_size", op)
    spatial = [int(s) for s in x.shape[x.ndim - nd:]]
    if output_size is None and output_ratio is None:
        raise ValueError(f"For '{op}', 'output_size' and 'output_ratio' can not be None at the same time.")
    if output_size is not None:
        outs = list(_int_tuple(output_size, nd, "output_size", op))
    else:
        ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        if len(ratios) != nd or not all(isinstance(r, numbers.Real) and not isinstance(r, bool) for r in ratios):
            raise TypeError(f"For '{op}', the 'output_ratio' must be a float or a tuple of {nd} floats, but got "
                            f"{output_ratio!r}.")
        for j, r in enumerate(ratios):
            if not 0.0 < float(r) < 1.0:
                raise ValueError(f"For '{op}', the 'output_ratio[{j}]' must be in range of (0.0, 1.0), but got {r}.")
        outs = [int(s * float(r)) for s, r in zip(spatial, ratios)]
    names = ("depth", "height", "width")[3 - nd:]
    for j in range(nd):
        if outs[j] < 1:  # output_ratio too small for this input (output_size < 1 is refused by _int_tuple)
            raise ValueError(f"For '{op}', the output {names[j]} must be positive, but output_ratio[{j}] = "
                             f"{output_ratio if not isinstance(output_ratio, (tuple, list)) else output_ratio[j]} of "
                             f"the input {names[j]} {spatial[j]} gives {outs[j]} (input shape {tuple(x.shape)}).")
        if ks[j] + outs[j] - 1 > spatial[j]:
            raise ValueError(f"For '{op}', kernel {names[j]} {ks[j]} + output {names[j]} {outs[j]} - 1 must be <= "
                             f"the input {names[j]} {spatial[j]} (input shape {tuple(x.shape)}).")
    lead = [int(s) for s in x.shape[:x.ndim - nd]]
    n, c = (1, lead[0]) if len(lead) == 1 else lead
    planes = n * c
    if samples is None:
        from .random_func import _uniform
        u = _uniform([n, c, nd], mstype.float32, op, None)
    else:
        if not isinstance(samples, Tensor) or samples.dtype not in _FLOATS:
            raise TypeError(f"For '{op}', '_random_samples' must be a float Tensor, but got {_got(samples)}.")
        if tuple(samples.shape) != (n, c, nd):
            raise ValueError(f"For '{op}', '_random_samples' must have shape {(n, c, nd)} for an input of shape "
                             f"{tuple(x.shape)}, but got {tuple(samples.shape)}.")
        u = samples
        if not (_core.tracing() and samples._symbolic):
            import numpy as np
            v = samples.asnumpy()
            if v.size and not (np.all(v >= 0.0) and np.all(v <= 1.0)):
                raise ValueError(f"For '{op}', '_random_samples' must be in [0, 1], but got min {np.min(v)}, "
                                 f"max {np.max(v)}.")
    u = _core.reshape(_core.cast(_core.stop_gradient(u), mstype.float64), [planes, nd])
    # starts per spatial dim j: u's column nd - 1 - j drives dim j in 2-D (W first), column j in 3-D (D first)
    starts = []
    for j in range(nd):
        cj = nd - 1 - j if nd == 2 else j
        col = _core.strided_slice(u, [0, cj], [planes, cj + 1], [1, 1])
        starts.append(_fractional_starts(_core.reshape(col, [planes]), spatial[j], ks[j], outs[j]))
    # flat candidate index of every (output position, window offset): Σ_j (start_j + off_j) · stride_j
    strides = [1] * nd
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * spatial[j + 1]
    full_shape = [planes] + outs + list(ks)
    idx = None
    for j in range(nd):
        view = [planes] + [outs[i] if i == j else 1 for i in range(nd)] + [1] * nd
        off_view = [1] + [1] * nd + [ks[i] if i == j else 1 for i in range(nd)]
        pos = _core.add(_core.reshape(starts[j], view),
                        _core.reshape(_core.arange(0.0, float(ks[j]), 1.0, mstype.int64), off_view))
        term = _core.mul(pos, _core.full([], float(strides[j]), mstype.int64))
        idx = term if idx is None else _core.add(idx, term)
    npos, kk = 1, 1
    for o in outs:
        npos *= o
    for k in ks:
        kk *= k
    idx = _core.reshape(_core.broadcast_to(idx, full_shape), [planes, npos, kk])
    if planes == 0:
        # An empty batch or no channels: an empty result (MindSpore 2.10's CPU kernel dies with SIGFPE here; the
        # window argmax below would raise on the empty candidates).
        y = _core.full(lead + outs, 0.0, x.dtype)
        return (y, _core.full(lead + outs, 0.0, mstype.int64)) if return_indices else y
    flat_x = _core.reshape(x, [planes, -1])
    cand = _core.reshape(gather_elements(_core.stop_gradient(flat_x), 1, _core.reshape(idx, [planes, -1])),
                         [planes, npos, kk])
    am = _core.argmax(cand, 2, True)  # the first maximum of each window (NaN wins)
    chosen = _core.reshape(gather_elements(idx, 2, am), [planes, npos])
    y = _core.reshape(gather_elements(flat_x, 1, chosen), lead + outs)
    if not return_indices:
        return y
    return y, _core.reshape(chosen, lead + outs)


@defop()
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """MindSpore's ops.fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
    return_indices=False, _random_samples=None): fractional max pooling (Graham 2014) of (N, C, H, W) or (C, H, W):
    kernel_size-sized windows at pseudo-random overlapping starts (see _fractional_starts), output (OH, OW) =
    output_size, or ⌊(H, W)·output_ratio⌋ (ratios in (0, 1)). `_random_samples` (N, C, 2) float in [0, 1)
    (1 for an unbatched input) fixes the starts ([..., 0] for W, [..., 1] for H); None draws them uniformly (from
    Kiln's generator: not MindSpore's stream). With return_indices also the Int64 flat index h·W + w of each
    maximum. Real dtypes (int too, as MindSpore); gradient to the chosen element.
    Raises TypeError (non-Tensor, bool/complex input, bad argument types), ValueError (rank, neither output_size
    nor output_ratio, a ratio outside (0, 1), kernel + output − 1 larger than the input, samples of another shape)."""
    return _fractional_max(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
                           "fractional_max_pool2d")


@defop()
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """MindSpore's ops.fractional_max_pool3d(...): fractional_max_pool2d over (N, C, D, H, W) or (C, D, H, W);
    `_random_samples` (N, C, 3) ([..., 0] for D, [..., 1] for H, [..., 2] for W); indices d·H·W + h·W + w (Int64).
    Raises as fractional_max_pool2d."""
    return _fractional_max(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
                           "fractional_max_pool3d")
