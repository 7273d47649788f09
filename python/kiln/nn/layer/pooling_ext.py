"""3-D convolution (and its transpose), 3-D / adaptive / Lp pooling, max unpooling and LRN layers of MindSpore 2.10's
nn: Conv3d, Conv3dTranspose, MaxPool3d, AvgPool3d, AdaptiveMaxPool1d/2d/3d, AdaptiveAvgPool3d, LPPool1d/2d,
MaxUnpool1d/2d/3d, LRN. Each checks its arguments at construction and calls the functional op of
kiln/ops/nnpool_func.py and nnconv_func.py (one implementation), which documents the formulas, shapes and errors.

pad_mode of the 3-D pools (case-insensitive, as nn.MaxPool2d): 'valid' (default: no padding), 'same' (output
⌈in/stride⌉, the padding split with the odd element at the back/bottom/right; AvgPool3d counts the padding in the
divisor unless count_include_pad=False, as MindSpore's CPU kernel) or 'pad' (the explicit `padding`).
"""
import math

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, _calculate_fan_in_and_fan_out, initializer
from ...common.parameter import Parameter
from ...ops import nn_func as NF
from ...ops import nnconv_func as C
from ...ops import nnpool_func as P
from ..._args import _is_int
from ..cell import Cell
from .basic import _check_positive_int

__all__ = ["Conv3d", "Conv3dTranspose", "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LRN"]


def _pad_mode(pad_mode, name):
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{name}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], but got "
                         f"{pad_mode!r}.")
    return pad_mode.lower()


class Conv3d(Cell):
    r"""MindSpore's nn.Conv3d: 3-D convolution, NCDHW — kiln.ops.conv3d(x, weight, bias, stride, pad_mode, padding,
    dilation, group).

    Args:
        in_channels, out_channels (int): positive, both divisible by `group`.
        kernel_size, stride (default 1), dilation (default 1): int or (d, h, w).
        pad_mode (str): 'same' (default), 'valid' or 'pad'. padding: int or (front, back, top, bottom, left, right),
            only with 'pad' (ValueError otherwise when non-zero).
        group (int, default 1); has_bias (bool, default False); weight_init / bias_init: defaults HeUniform(√5) and
            Uniform(1/√fan_in); data_format 'NCDHW' only; dtype: the Parameters' dtype (default float32).
    Inputs: x (N, in_channels, D, H, W). Outputs: (N, out_channels, OD, OH, OW).
    Parameters: weight (out_channels, in_channels/group, KD, KH, KW), bias (out_channels,).
    Raises TypeError / ValueError for bad arguments, and for an input that is not 5-D or has other channels."""

    _mp_casts_params = True

    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.in_channels = _check_positive_int(in_channels, "in_channels", name)
        self.out_channels = _check_positive_int(out_channels, "out_channels", name)
        self.group = _check_positive_int(group, "group", name)
        if in_channels % group or out_channels % group:
            raise ValueError(f"For '{name}', 'group' must divide 'in_channels' and 'out_channels', but got group "
                             f"{group}, in_channels {in_channels}, out_channels {out_channels}.")
        self.kernel_size = C._triple(kernel_size, "kernel_size", name)
        self.stride = C._triple(stride, "stride", name)
        self.dilation = C._triple(dilation, "dilation", name)
        self.pad_mode = _pad_mode(pad_mode, name)
        pads = P._pads6(padding, name)
        if self.pad_mode != "pad" and any(pads):
            raise ValueError(f"For '{name}', the 'padding' must be zero when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        self.padding = padding
        self._pads = pads
        if data_format != "NCDHW":
            raise ValueError(f"For '{name}', the 'data_format' must be 'NCDHW', but got {data_format!r}.")
        self.data_format = data_format
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{name}', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.has_bias = has_bias
        # transposed (Conv3dTranspose): (in, out/group, ...), the shape a user's weight_init Tensor is checked against
        shape = ([in_channels, out_channels // group] if self._transposed else [out_channels, in_channels // group])
        shape += list(self.kernel_size)
        self.weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
        self.weight = Parameter(initializer(self.weight_init, shape, dtype=dtype), name="weight")
        self.bias_init, self.bias = bias_init, None
        if has_bias:
            if bias_init is None:
                fan_in, _ = _calculate_fan_in_and_fan_out(shape)
                self.bias_init = Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"
            self.bias = Parameter(initializer(self.bias_init, [out_channels], dtype=dtype), name="bias")

    def _checked_weights(self, x):
        """(weight, bias) for input x — cast to the cell's to_float dtype — after checking x is a 5-D Tensor with
        in_channels channels (TypeError / ValueError naming the cell)."""
        if not isinstance(x, _Tensor):
            raise TypeError(f"For '{self.cls_name}', the input must be a Tensor, but got {type(x).__name__}.")
        if x.ndim != 5 or x.shape[1] != self.in_channels:
            raise ValueError(f"For '{self.cls_name}', the input must be 5-D (N, {self.in_channels}, D, H, W), but got "
                             f"shape {tuple(x.shape)}.")
        w, b = self.weight, self.bias
        if self._mp_dtype is not None:
            w = _kernels.cast(w, self._mp_dtype)
            b = _kernels.cast(b, self._mp_dtype) if b is not None else None
        return w, b

    def construct(self, x):
        w, b = self._checked_weights(x)
        return C.conv3d(x, w, b, self.stride, self.pad_mode, self._pads, self.dilation, self.group)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}, "
                f"format={self.data_format}")


class Conv3dTranspose(Conv3d):
    r"""MindSpore's nn.Conv3dTranspose: transposed 3-D convolution, NCDHW — kiln.ops.conv3d_transpose(x, weight,
    pad_mode, padding, stride, dilation, group, output_padding) (+ bias).

    Args as Conv3d, plus output_padding (int or (d, h, w), default 0); default pad_mode 'same' (output in·stride).
    Parameters: weight (in_channels, out_channels/group, KD, KH, KW), bias (out_channels,); default initializers
    HeUniform(√5) and Uniform(1/√fan_in) with fan_in from the weight shape (as Conv2dTranspose).
    Inputs: x (N, in_channels, D, H, W). Raises TypeError / ValueError for bad arguments or inputs."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, output_padding=0, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, data_format, dtype)
        self.output_padding = C._triple(output_padding, "output_padding", self.cls_name, minimum=0)

    def construct(self, x):
        w, b = self._checked_weights(x)
        y = C.conv3d_transpose(x, w, self.pad_mode, self._pads, self.stride, self.dilation, self.group,
                               self.output_padding)
        return y if b is None else _ops.add(y, _kernels.reshape(b, [1, -1, 1, 1, 1]))


class _Pool3d(Cell):
    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode):
        super().__init__()
        name = self.cls_name
        self.kernel_size = NF._int_tuple(kernel_size, 3, "kernel_size", name)
        self.stride = NF._int_tuple(stride, 3, "stride", name)
        self.pad_mode = _pad_mode(pad_mode, name)
        pads = P._pads6(padding, name)
        if self.pad_mode != "pad" and any(pads):
            raise ValueError(f"For '{name}', the 'padding' must be zero when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        self._pads, self.padding = pads, padding
        if not isinstance(ceil_mode, bool):
            raise TypeError(f"For '{name}', the 'ceil_mode' must be bool, but got {type(ceil_mode).__name__}.")
        self.ceil_mode = ceil_mode

    def _input(self, x, dilation=(1, 1, 1)):
        x5, squeeze = P._as5d(x, self.cls_name)
        if self.pad_mode == "same":
            pads = ()
            for i in range(3):
                pads += NF._same_pad(x5.shape[2 + i], self.kernel_size[i], self.stride[i], dilation[i])
        else:
            pads = self._pads
        return x5, squeeze, pads

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool3d(_Pool3d):
    """MindSpore's nn.MaxPool3d(kernel_size=1, stride=1, pad_mode='valid', padding=0, dilation=1,
    return_indices=False, ceil_mode=False) over (N, C, D, H, W) or (C, D, H, W): kiln.ops.max_pool3d's separable
    pooling (indices Int64 d·H·W + h·W + w with return_indices). padding: int, (d, h, w) or 6 pads (pad_mode 'pad')."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        self.dilation = NF._int_tuple(dilation, 3, "dilation", self.cls_name)
        if not isinstance(return_indices, bool):
            raise TypeError(f"For '{self.cls_name}', the 'return_indices' must be bool, but got "
                            f"{type(return_indices).__name__}.")
        self.return_indices = return_indices

    def construct(self, x):
        x5, squeeze, pads = self._input(x, self.dilation)
        if x5.dtype not in P._FLOATS:
            raise TypeError(f"For '{self.cls_name}', the input must be a float Tensor, but got {x5.dtype}.")
        y, idx = P._max_pool3d(x5, self.kernel_size, self.stride, pads, self.dilation, self.ceil_mode,
                               self.return_indices)
        if squeeze:
            y = _kernels.squeeze(y, [0])
            idx = _kernels.squeeze(idx, [0]) if idx is not None else None
        return (y, idx) if self.return_indices else y


class AvgPool3d(_Pool3d):
    """MindSpore's nn.AvgPool3d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None) over (N, C, D, H, W) or (C, D, H, W): kiln.ops.avg_pool3d's
    separable pooling."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"For '{self.cls_name}', the 'count_include_pad' must be bool, but got "
                            f"{type(count_include_pad).__name__}.")
        self.count_include_pad = count_include_pad
        self.divisor_override = P._avg_divisor(divisor_override, self.cls_name)

    def construct(self, x):
        x5, squeeze, pads = self._input(x)
        if x5.dtype not in P._FLOATS:
            raise TypeError(f"For '{self.cls_name}', the input must be a float Tensor, but got {x5.dtype}.")
        if pads[0] + pads[1] > self.kernel_size[0] or pads[2] + pads[3] > self.kernel_size[1] or \
                pads[4] + pads[5] > self.kernel_size[2]:
            raise ValueError(f"For '{self.cls_name}', the pads {pads} of a dim must sum to at most its kernel size "
                             f"{self.kernel_size}.")
        y = P._avg_pool3d(x5, self.kernel_size, self.stride, pads, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)
        return _kernels.squeeze(y, [0]) if squeeze else y


class _Adaptive(Cell):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if not isinstance(return_indices, bool):
            raise TypeError(f"For '{self.cls_name}', the 'return_indices' must be bool, but got "
                            f"{type(return_indices).__name__}.")
        self.return_indices = return_indices

    def construct(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_Adaptive):
    """MindSpore's nn.AdaptiveMaxPool1d(output_size): kiln.ops.adaptive_max_pool1d over (N, C, L) or (C, L).
    Raises ValueError for output_size < 1 (at construction)."""
    _fn = staticmethod(P.adaptive_max_pool1d)

    def __init__(self, output_size):
        if not _is_int(output_size):
            raise TypeError(f"For 'AdaptiveMaxPool1d', the 'output_size' must be an int, but got "
                            f"{type(output_size).__name__}.")
        if output_size < 1:
            raise ValueError(f"For 'AdaptiveMaxPool1d', the 'output_size' must be positive, but got {output_size}.")
        super().__init__(output_size)

    def construct(self, x):
        return P.adaptive_max_pool1d(x, self.output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """MindSpore's nn.AdaptiveMaxPool2d(output_size, return_indices=False): kiln.ops.adaptive_max_pool2d."""
    _fn = staticmethod(P.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_Adaptive):
    """MindSpore's nn.AdaptiveMaxPool3d(output_size, return_indices=False): kiln.ops.adaptive_max_pool3d (Int32
    indices)."""
    _fn = staticmethod(P.adaptive_max_pool3d)


class AdaptiveAvgPool3d(Cell):
    """MindSpore's nn.AdaptiveAvgPool3d(output_size): kiln.ops.adaptive_avg_pool3d."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return P.adaptive_avg_pool3d(input, self.output_size)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class _LPPool(Cell):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = P._norm_type(norm_type, self.cls_name)
        self.kernel_size, self.stride, self.ceil_mode = kernel_size, stride, ceil_mode

    def extend_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}"


class LPPool1d(_LPPool):
    """MindSpore's nn.LPPool1d(norm_type, kernel_size, stride=None, ceil_mode=False): kiln.ops.lp_pool1d."""

    def construct(self, x):
        return P.lp_pool1d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPool):
    """MindSpore's nn.LPPool2d(norm_type, kernel_size, stride=None, ceil_mode=False): kiln.ops.lp_pool2d."""

    def construct(self, x):
        return P.lp_pool2d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpool(Cell):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        name = self.cls_name
        self.kernel_size = NF._int_tuple(kernel_size, self._nd, "kernel_size", name)
        self.stride = self.kernel_size if stride is None else NF._int_tuple(stride, self._nd, "stride", name)
        self.padding = NF._int_tuple(padding, self._nd, "padding", name, minimum=0)

    def construct(self, x, indices, output_size=None):
        return P._max_unpool(x, indices, self.kernel_size, self.stride, self.padding, output_size, self._nd,
                             self.cls_name)

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """MindSpore's nn.MaxUnpool1d(kernel_size, stride=None, padding=0)(x, indices, output_size=None):
    kiln.ops.max_unpool1d."""
    _nd = 1


class MaxUnpool2d(_MaxUnpool):
    """MindSpore's nn.MaxUnpool2d(kernel_size, stride=None, padding=0)(x, indices, output_size=None):
    kiln.ops.max_unpool2d."""
    _nd = 2


class MaxUnpool3d(_MaxUnpool):
    """MindSpore's nn.MaxUnpool3d(kernel_size, stride=None, padding=0)(x, indices, output_size=None):
    kiln.ops.max_unpool3d."""
    _nd = 3


class LRN(Cell):
    """MindSpore's nn.LRN(depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region='ACROSS_CHANNELS'):
    kiln.ops.lrn — x·(bias + alpha·Σ_{|c'−c|≤r} x_{c'}²)^(−beta) over (N, C, H, W)."""

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
        super().__init__()
        if not _is_int(depth_radius):
            raise TypeError(f"For 'LRN', the 'depth_radius' must be an int, but got {type(depth_radius).__name__}.")
        if depth_radius < 0:
            raise ValueError(f"For 'LRN', the 'depth_radius' must be non-negative, but got {depth_radius}.")
        if norm_region != "ACROSS_CHANNELS":
            raise ValueError(f"For 'LRN', the 'norm_region' must be 'ACROSS_CHANNELS', but got {norm_region!r}.")
        self.depth_radius, self.bias, self.alpha, self.beta = depth_radius, bias, alpha, beta
        self.norm_region = norm_region

    def construct(self, input_x):
        return P.lrn(input_x, self.depth_radius, self.bias, self.alpha, self.beta, self.norm_region)
