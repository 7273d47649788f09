"""MindSpore's primitive classes for convolution and pooling (ops.Conv2D, ops.MaxPool, ops.AvgPool): each instance
holds its attributes and runs the same kernels as ops.conv2d and nn.MaxPool2d / nn.AvgPool2d (the pooling kernels
directly: kiln.ops does not import kiln.nn), so gradients and Graph mode are theirs. Argument names and defaults are MindSpore 2.10's."""
from .._args import _got, _is_int
from .._loader import _core
from .function import _tensor_arg
from .nn_func import _same_pad, adaptive_avg_pool2d, conv2d
from .primitives import Primitive

__all__ = ["Conv2D", "MaxPool", "AvgPool", "AdaptiveAvgPool2D", "LayerNorm"]


def _pair(value, name, op):
    if _is_int(value):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and len(value) in (2, 4) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value[-2:])
    raise TypeError(f"For '{op}', '{name}' must be an int or a tuple of 2 (or 4) ints, but got {_got(value)}.")


class Conv2D(Primitive):
    """Conv2D(out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, stride=1, dilation=1, group=1,
    data_format='NCHW')(x, weight): 2-D convolution of x (N, C, H, W) with weight (out_channel, C/group, KH, KW);
    see ops.conv2d for shapes and padding ('valid', 'same', or 'pad' with `pad` an int or (top, bottom, left,
    right)). Raises ValueError when weight's shape disagrees with out_channel/kernel_size, for mode ≠ 1 or an
    NHWC data_format (Kiln's kernels are NCHW)."""

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1, dilation=1, group=1,
                 data_format="NCHW"):
        super().__init__("Conv2D")
        if not _is_int(out_channel) or out_channel < 1:
            raise ValueError(f"For 'Conv2D', 'out_channel' must be a positive int, but got {_got(out_channel)}.")
        if mode != 1:
            raise ValueError(f"For 'Conv2D', 'mode' must be 1 (cross-correlation), but got {mode!r}.")
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError(f"For 'Conv2D', 'pad_mode' must be 'valid', 'same' or 'pad', but got {pad_mode!r}.")
        if data_format != "NCHW":
            raise ValueError(f"For 'Conv2D', Kiln supports data_format='NCHW' only, but got {data_format!r}.")
        if pad_mode.lower() != "pad" and pad not in (0, (0, 0, 0, 0)):
            raise ValueError(f"For 'Conv2D', 'pad' must be 0 when 'pad_mode' is not 'pad', but got {pad!r}.")
        self.out_channel = int(out_channel)
        self.kernel_size = _pair(kernel_size, "kernel_size", "Conv2D")
        self.mode, self.pad_mode, self.pad = mode, pad_mode.lower(), pad
        self.stride = _pair(stride, "stride", "Conv2D")
        self.dilation = _pair(dilation, "dilation", "Conv2D")
        if not _is_int(group) or group < 1:
            raise ValueError(f"For 'Conv2D', 'group' must be a positive int, but got {_got(group)}.")
        self.group, self.data_format = int(group), data_format

    def __call__(self, x, weight):
        x = _tensor_arg(x, "Conv2D", "x")
        if x.ndim != 4:
            raise ValueError(f"For 'Conv2D', 'x' must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
        w = _tensor_arg(weight, "Conv2D", "weight")
        if w.ndim != 4 or w.shape[0] != self.out_channel or tuple(w.shape[2:]) != self.kernel_size:
            raise ValueError(f"For 'Conv2D', 'weight' must have shape ({self.out_channel}, C/group, "
                             f"{self.kernel_size[0]}, {self.kernel_size[1]}), but got {tuple(w.shape)}.")
        return conv2d(x, w, None, self.stride, self.pad_mode, self.pad, self.dilation, self.group)


class _Pool(Primitive):
    """MaxPool/AvgPool: 2-D pooling with MindSpore's primitive attributes (pad_mode 'valid' or 'same', NCHW)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__(type(self).__name__)
        if data_format != "NCHW":
            raise ValueError(f"For '{self.name}', Kiln supports data_format='NCHW' only, but got {data_format!r}.")
        k = _pair(kernel_size, "kernel_size", self.name)
        s = _pair(strides, "strides", self.name)
        if min(k + s) < 1:
            raise ValueError(f"For '{self.name}', 'kernel_size' and 'strides' must be positive, but got {k} and {s}.")
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{self.name}', the 'pad_mode' must be str, but got {type(pad_mode).__name__}.")
        if pad_mode.upper() not in ("VALID", "SAME"):
            raise ValueError(f"For '{self.name}', the 'pad_mode' must be one of ['VALID', 'SAME'], but got "
                             f"{pad_mode}.")
        self.kernel_size, self.strides, self.pad_mode, self.data_format = k, s, pad_mode.upper(), data_format

    def _pads(self, x):
        if self.pad_mode != "SAME":
            return [0, 0, 0, 0]
        (h, w), (kh, kw), (sh, sw) = x.shape[2:], self.kernel_size, self.strides
        return list(_same_pad(h, kh, sh, 1)) + list(_same_pad(w, kw, sw, 1))

    def __call__(self, x):
        x = _tensor_arg(x, self.name, "x")
        if x.ndim != 4:
            raise ValueError(f"For '{self.name}', 'x' must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
        return self._pool(x, list(self.kernel_size), list(self.strides), self._pads(x))


class MaxPool(_Pool):
    """MaxPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x): 2-D max pooling of x
    (N, C, H, W); 'same' pads so the output is ⌈H/stride⌉ (padding never wins), 'valid' does not pad. See
    nn.MaxPool2d."""

    @staticmethod
    def _pool(x, k, s, pads):
        return _core.max_pool2d(x, k, s, pads, [1, 1], False, False)


class AvgPool(_Pool):
    """AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x): 2-D average pooling of x
    (N, C, H, W); with 'same' each window averages only its unpadded elements. See nn.AvgPool2d."""

    @staticmethod
    def _pool(x, k, s, pads):
        return _core.avg_pool2d(x, k, s, pads, False, not any(pads), 0)  # 'same': only the unpadded elements count


class AdaptiveAvgPool2D(Primitive):
    """AdaptiveAvgPool2D(output_size)(x): 2-D adaptive average pooling of x (N, C, H, W) or (C, H, W) to
    output_size (an int, or (h, w) where None keeps that input size); see ops.adaptive_avg_pool2d."""

    def __init__(self, output_size):
        super().__init__("AdaptiveAvgPool2D")
        self.output_size = output_size

    def __call__(self, x):
        return adaptive_avg_pool2d(x, self.output_size)


class LayerNorm(Primitive):
    """LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(input_x, gamma, beta) -> (output, mean,
    variance): layer normalization over the axes begin_norm_axis … R − 1 (biased variance), then ·gamma + beta
    (both of shape input_x.shape[begin_params_axis:]); mean and variance keep the normalized axes as size 1
    (shape input_x.shape[:begin_norm_axis] + (1, ...)). MindSpore 2.10's primitive; nn.LayerNorm holds one as its
    `layer_norm` attribute, which model-zoo subclasses call (`y, _, _ = self.layer_norm(x, self.gamma, self.beta)`).

    Raises TypeError for non-int axes, a non-float epsilon or non-Tensor inputs; ValueError (from the kernel) for
    gamma / beta shapes that do not match."""

    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        super().__init__("LayerNorm")
        for name, v in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if not _is_int(v):
                raise TypeError(f"For 'LayerNorm', the type of '{name}' must be 'int', but got {_got(v)}.")
        if isinstance(epsilon, bool) or not isinstance(epsilon, float):
            raise TypeError(f"For 'LayerNorm', the type of 'epsilon' must be 'float', but got {_got(epsilon)}.")
        self.begin_norm_axis, self.begin_params_axis, self.epsilon = begin_norm_axis, begin_params_axis, epsilon

    def __call__(self, input_x, gamma, beta):
        x = _tensor_arg(input_x, "LayerNorm", "input_x")
        g = _tensor_arg(gamma, "LayerNorm", "gamma")
        b = _tensor_arg(beta, "LayerNorm", "beta")
        y = _core.layer_norm(x, g, b, self.begin_norm_axis, self.begin_params_axis, self.epsilon)
        start = self.begin_norm_axis % x.ndim if x.ndim else 0
        axes = list(range(start, x.ndim))
        mean = _core.mean(x, axes, True)
        var = _core.mean(_core.square(_core.sub(x, mean)), axes, True)
        return y, mean, var
