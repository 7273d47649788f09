"""Pooling layers: MindSpore's nn.MaxPool2d, nn.AvgPool2d, nn.MaxPool1d, nn.AvgPool1d, nn.AdaptiveAvgPool2d,
nn.AdaptiveAvgPool1d (NCHW; MindSpore 2.x mindspore/nn/layer/pooling.py for names, defaults and checks).

pad_mode (case-insensitive, stored upper-case as MindSpore): 'VALID' (default, no padding), 'SAME' (output
⌈H/stride⌉, padding split with the odd one at the bottom/right; average pooling then divides by the number of real
elements — TensorFlow's SAME semantics, which oneDNN's pooling_avg (= exclude padding) gives MindSpore's CPU kernel),
or 'PAD' (explicit symmetric `padding`, and only then dilation/return_indices/ceil_mode (max) or
ceil_mode/count_include_pad/divisor_override (avg)). 3-D inputs (C, H, W) are accepted and returned 3-D.
"""

from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...ops import nn_func as NF
from ...ops import nnpool_func as PF
from ..._args import _is_int
from ..cell import Cell

__all__ = ["MaxPool2d", "AvgPool2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool1d",
           "FractionalMaxPool2d", "FractionalMaxPool3d"]


class _PoolNd(Cell):
    """Shared argument checks (kernel_size, stride, pad_mode, data_format) and the repr."""

    def __init__(self, kernel_size, stride, pad_mode, data_format="NCHW"):
        super().__init__()
        name = self.cls_name
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{name}', the 'pad_mode' must be str, but got {type(pad_mode).__name__}.")
        if pad_mode.upper() not in ("VALID", "SAME", "PAD"):
            raise ValueError(f"For '{name}', the 'pad_mode' must be one of ['VALID', 'SAME', 'PAD'], but got "
                             f"{pad_mode}.")
        self.pad_mode = pad_mode.upper()
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"For '{name}', the 'format' must be one of ['NCHW', 'NHWC'], but got {data_format!r}.")
        if data_format == "NHWC":
            raise ValueError(f"For '{name}, the 'NHWC' format only support in GPU target, but got device target CPU.")
        self.format = data_format

        def check(arg, value):
            if not (_is_int(value) or isinstance(value, tuple)):
                raise TypeError(f"For '{name}', the '{arg}' must be int or tuple, but got {type(value).__name__}.")
            msg = f"For '{name}', the '{arg}' must be an positive int number or a tuple, but got {value}"
            if _is_int(value):
                if value <= 0:
                    raise ValueError(msg)
                return int(value)
            if not value or not all(_is_int(v) and v > 0 for v in value):
                raise ValueError(msg)
            return value[0] if len(value) == 1 else tuple(int(v) for v in value)

        self.kernel_size = check("kernel_size", kernel_size)
        self.stride = check("stride", stride)

    def _pair(self, value, arg):
        if _is_int(value):
            return (value, value)
        if len(value) != 2:
            raise ValueError(f"For {self.cls_name}, the length of {arg} must be equal to 2, but got {len(value)}.")
        return value

    def _as4d(self, x, allowed=(3, 4)):
        if not isinstance(x, _Tensor):
            raise TypeError(f"For '{self.cls_name}', the input must be a Tensor, but got {type(x).__name__}.")
        if x.ndim not in allowed:
            raise ValueError(f"For '{self.cls_name}', the input must be a {' or '.join(map(str, allowed))}-D tensor, "
                             f"but got {x.ndim}-D with shape {tuple(x.shape)}.")
        return (_kernels.expand_dims(x, 0), True) if x.ndim == allowed[0] else (x, False)

    def _pads(self, hw, k, s, d=(1, 1)):
        if self.pad_mode == "SAME":
            t, b = NF._same_pad(hw[0], k[0], s[0], d[0])
            left, r = NF._same_pad(hw[1], k[1], s[1], d[1])
            return [t, b, left, r]
        if self.pad_mode == "PAD":
            p = self._padding
            return [p[0], p[0], p[1], p[1]]
        return [0, 0, 0, 0]

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


def _padding_pair(padding, nd, name):
    """MaxPool/AvgPool padding (int, or a tuple/list of 1 or nd ints ≥ 0) → nd-tuple."""
    if _is_int(padding):
        vals = (int(padding),) * nd
    elif isinstance(padding, (tuple, list)) and all(_is_int(v) for v in padding) and len(padding) in (1, nd):
        vals = tuple(int(v) for v in padding) * (nd if len(padding) == 1 else 1)
    else:
        raise ValueError(f"For {name}, the padding must be a int or tuple/list contains 1 or {nd} int, but got "
                         f"{padding!r}.")
    if any(v < 0 for v in vals):
        raise ValueError(f"For '{name}', the 'padding' must be non-negative, but got {padding!r}.")
    return vals


class MaxPool2d(_PoolNd):
    r"""2-D max pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size (int or (h, w)): default 1. stride (int or (h, w)): default 1.
        pad_mode: 'valid' (default), 'same' or 'pad'.
        padding (int or (h, w)), dilation (int or (h, w)), return_indices (bool), ceil_mode (bool): only with
            pad_mode='pad' (ValueError otherwise); padding at most half the kernel.
        data_format: 'NCHW'.
    Outputs: the pooled tensor; with return_indices a tuple (output, Int64 argmax h·W + w).
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, data_format)
        name = self.cls_name
        self.return_indices = return_indices
        self._k = self._pair(self.kernel_size, "kernel_size")
        self._s = self._pair(self.stride, "stride")
        if self.pad_mode == "PAD":
            self._padding = _padding_pair(padding, 2, name)
            if isinstance(dilation, tuple) and len(dilation) == 1:
                dilation = dilation[0]
            if not (_is_int(dilation) and dilation >= 1) and not (
                    isinstance(dilation, tuple) and len(dilation) == 2 and all(_is_int(v) and v >= 1 for v in dilation)):
                raise ValueError(f"For {name}, the 'dilation' must be a positive int or a tuple of 1 or 2 positive "
                                 f"ints, but got {dilation!r}.")
            self._d = self._pair(dilation, "dilation")
            for i in range(2):
                if self._padding[i] > self._k[i] // 2:
                    raise ValueError(f"For '{name}', the 'padding' must be at most half of 'kernel_size', but got "
                                     f"padding {padding!r} and kernel_size {kernel_size!r}.")
            self.padding = padding
            self.ceil_mode = bool(ceil_mode)
        else:
            if padding != 0 or dilation != 1 or return_indices or ceil_mode:
                raise ValueError(f"For MaxPool2d, the parameter 'padding', 'dilation', 'return_indices', 'ceil_mode' "
                                 f"can not be set to non-default value when pad_mode is not 'pad', but got "
                                 f"pad_mode:{pad_mode}.")
            self._d = (1, 1)
            self.ceil_mode = False

    def construct(self, x):
        x4, squeeze = self._as4d(x)
        pads = self._pads(x4.shape[2:], self._k, self._s, self._d)
        r = _kernels.max_pool2d(x4, list(self._k), list(self._s), pads, list(self._d), self.ceil_mode,
                             bool(self.return_indices))
        if squeeze:
            r = tuple(_kernels.squeeze(t, [0]) for t in r) if self.return_indices else _kernels.squeeze(r, [0])
        return r


class AvgPool2d(_PoolNd):
    r"""2-D average pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size, stride (int or (h, w)): default 1. pad_mode: 'valid' (default), 'same', 'pad'.
        padding (int or (h, w)), ceil_mode, count_include_pad (default True), divisor_override (None or a positive
            int): non-default values need pad_mode='pad' in MindSpore's CPU kernel set; here they are accepted with
            'valid' too (padding only with 'pad').
        data_format: 'NCHW'.
    The divisor: divisor_override, else the window area (count_include_pad) or the number of unpadded elements;
    'same' always excludes its implicit padding.
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, data_format)
        name = self.cls_name
        self._k = self._pair(self.kernel_size, "kernel_size")
        self._s = self._pair(self.stride, "stride")
        if divisor_override is not None and (not _is_int(divisor_override) or divisor_override <= 0):
            raise ValueError(f"For '{name}', the 'divisor_override' must be > 0, but got {divisor_override}.")
        self._padding = _padding_pair(padding, 2, name)
        if self.pad_mode != "PAD" and any(self._padding):
            raise ValueError(f"For '{name}', the 'padding' must be 0 when 'pad_mode' is not 'pad', but got padding "
                             f"{padding!r} and pad_mode {pad_mode}.")
        for i in range(2):  # MindSpore's rule (pads of both sides ≤ kernel), the same as MaxPool2d's
            if self._padding[i] > self._k[i] // 2:
                raise ValueError(f"For '{name}', the 'padding' must be at most half of 'kernel_size', but got "
                                 f"padding {padding!r} and kernel_size {kernel_size!r}.")
        self.padding = padding
        self.ceil_mode = bool(ceil_mode)
        self.count_include_pad = bool(count_include_pad) and self.pad_mode != "SAME"
        self.divisor_override = 0 if divisor_override is None else int(divisor_override)

    def construct(self, x):
        x4, squeeze = self._as4d(x)
        pads = self._pads(x4.shape[2:], self._k, self._s)
        y = _kernels.avg_pool2d(x4, list(self._k), list(self._s), pads, self.ceil_mode, self.count_include_pad,
                             self.divisor_override)
        return _kernels.squeeze(y, [0]) if squeeze else y


class MaxPool1d(MaxPool2d):
    r"""1-D max pooling over (N, C, L) or (C, L): MaxPool2d over (N, C, 1, L). int kernel_size/stride/padding/
    dilation (padding etc. only with pad_mode='pad')."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        for arg, v in (("kernel_size", kernel_size), ("stride", stride)):
            if not _is_int(v) or v < 1:
                raise ValueError(f"For '{type(self).__name__}', the '{arg}' must be a positive int, but got {v!r}.")
        pad = padding[0] if isinstance(padding, (tuple, list)) and len(padding) == 1 else padding
        dil = dilation[0] if isinstance(dilation, tuple) and len(dilation) == 1 else dilation
        mode_pad = isinstance(pad_mode, str) and pad_mode.upper() == "PAD"
        super().__init__((1, kernel_size), (1, stride), pad_mode, (0, pad) if mode_pad else pad,
                         (1, dil) if mode_pad else dil, return_indices, ceil_mode)
        self.kernel_size, self.stride = kernel_size, stride

    def construct(self, x):
        x3, squeeze = self._as4d(x, (2, 3))
        r = super().construct(_kernels.expand_dims(x3, 2))
        r = tuple(_kernels.squeeze(t, [2]) for t in r) if self.return_indices else _kernels.squeeze(r, [2])
        if squeeze:
            r = tuple(_kernels.squeeze(t, [0]) for t in r) if self.return_indices else _kernels.squeeze(r, [0])
        return r


class AvgPool1d(AvgPool2d):
    r"""1-D average pooling over (N, C, L) or (C, L): AvgPool2d over (N, C, 1, L)."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True):
        for arg, v in (("kernel_size", kernel_size), ("stride", stride)):
            if not _is_int(v) or v < 1:
                raise ValueError(f"For '{type(self).__name__}', the '{arg}' must be a positive int, but got {v!r}.")
        pad = padding[0] if isinstance(padding, (tuple, list)) and len(padding) == 1 else padding
        super().__init__((1, kernel_size), (1, stride), pad_mode, (0, pad) if _is_int(pad) else pad, ceil_mode,
                         count_include_pad)
        self.kernel_size, self.stride = kernel_size, stride

    def construct(self, x):
        x3, squeeze = self._as4d(x, (2, 3))
        y = _kernels.squeeze(super().construct(_kernels.expand_dims(x3, 2)), [2])
        return _kernels.squeeze(y, [0]) if squeeze else y


class AdaptiveAvgPool2d(Cell):
    r"""Adaptive 2-D average pooling to output_size: an int, or (OH, OW) where None keeps that input size.
    Inputs (N, C, H, W) or (C, H, W). Bin i spans [⌊i·H/OH⌋, ⌈(i + 1)·H/OH⌉) (PyTorch/MindSpore bins)."""

    def __init__(self, output_size):
        super().__init__()
        if not (_is_int(output_size) or (isinstance(output_size, tuple) and len(output_size) == 2 and all(
                v is None or _is_int(v) for v in output_size))):
            raise TypeError(f"For 'AdaptiveAvgPool2d', the 'output_size' must be an int or a tuple of 2 ints (or "
                            f"None), but got {output_size!r}.")
        self.output_size = output_size

    def construct(self, x):
        return NF.adaptive_avg_pool2d(x, self.output_size)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(Cell):
    r"""Adaptive 1-D average pooling of (N, C, L) to (N, C, output_size) (bins as AdaptiveAvgPool2d; MindSpore
    additionally requires L divisible by output_size — Kiln does not)."""

    def __init__(self, output_size):
        super().__init__()
        if not _is_int(output_size):
            raise TypeError(f"For 'AdaptiveAvgPool1d', the 'output_size' must be int, but got "
                            f"{type(output_size).__name__}.")
        if output_size < 1:
            raise ValueError(f"For 'AdaptiveAvgPool1d', the 'output_size' must be positive, but got {output_size}.")
        self.output_size = output_size

    def construct(self, x):
        return NF.adaptive_avg_pool1d(x, self.output_size)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class _FractionalMaxPool(Cell):
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError(f"For '{self.cls_name}', 'output_size' and 'output_ratio' can not be None at the same "
                             "time.")
        if not isinstance(return_indices, bool):
            raise TypeError(f"For '{self.cls_name}', the 'return_indices' must be bool, but got "
                            f"{type(return_indices).__name__}.")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices, self._random_samples = return_indices, _random_samples

    def construct(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              self._random_samples)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, output_size={self.output_size}, "
                f"output_ratio={self.output_ratio}")


class FractionalMaxPool2d(_FractionalMaxPool):
    """MindSpore's nn.FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None): kiln.ops.fractional_max_pool2d over (N, C, H, W) or (C, H, W) (without
    `_random_samples`, fresh window starts at every call). Raises ValueError at construction when neither
    output_size nor output_ratio is given."""
    _fn = staticmethod(PF.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPool):
    """MindSpore's nn.FractionalMaxPool3d(...): kiln.ops.fractional_max_pool3d over (N, C, D, H, W) or
    (C, D, H, W)."""
    _fn = staticmethod(PF.fractional_max_pool3d)
