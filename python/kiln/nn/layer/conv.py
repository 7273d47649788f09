"""Convolution layers: MindSpore's nn.Conv2d, nn.Conv1d, nn.Conv2dTranspose, nn.Conv1dTranspose (NCHW; MindSpore
2.x mindspore/nn/layer/conv.py for names, defaults, initializers, checks and output sizes).

Weights: Conv2d (out_channels, in_channels/group, KH, KW); Conv1d (out_channels, in_channels/group, 1, K) — 4-D as
MindSpore's, so checkpoints load unchanged; the transposed layers (in_channels, out_channels/group, ...). Default
initializers: weight HeUniform(negative_slope=√5); bias (has_bias=True) Uniform(1/√fan_in), fan_in from the weight
shape. The bias is added with a broadcast Add after the convolution op (kiln.ops Conv2D, src/ops/conv.cpp).
"""
import math
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, _calculate_fan_in_and_fan_out, initializer
from ...common.parameter import Parameter
from ...ops import nn_func as NF
from ..cell import Cell
from .basic import _check_positive_int

__all__ = ["Conv2d", "Conv1d", "Conv2dTranspose", "Conv1dTranspose"]


def _twice(value, name, cls_name, allow4=False):
    """int → (v, v); a tuple of 2 (or of 4 = (1, 1, h, w) when allow4) → (h, w); every value a positive int."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (int(value), int(value))
    ok_len = (2, 4) if allow4 else (2,)
    if not isinstance(value, tuple) or len(value) not in ok_len or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        raise TypeError(f"For '{cls_name}', the '{name}' must be an int or a tuple of {' or '.join(map(str, ok_len))} "
                        f"ints, but got {value!r}.")
    value = tuple(int(v) for v in value[-2:])
    if any(v < 1 for v in value):
        raise ValueError(f"For '{cls_name}', the '{name}' must be positive, but got {value}.")
    return value


def _check_bool(value, name, cls_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


class _Conv(Cell):
    """Shared construction of the convolution layers: argument checks, the weight and bias Parameters, the repr."""

    _mp_casts_params = True  # casts its weight and bias under to_float itself (nn/_mixed_precision.py)

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                 weight_init, bias_init, data_format="NCHW", transposed=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.in_channels = _check_positive_int(in_channels, "in_channels", name)
        self.out_channels = _check_positive_int(out_channels, "out_channels", name)
        self.group = _check_positive_int(group, "group", name)
        if in_channels % group != 0 or out_channels % group != 0:
            raise ValueError(f"The argument 'group' should be divisible by 'in_channels' and 'out_channels', but got "
                             f"group:{group}, in_channels:{in_channels}, out_channels:{out_channels}.")
        self.kernel_size = kernel_size
        self.stride = stride
        self.dilation = dilation
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
            raise ValueError(f"For '{name}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], but got "
                             f"{pad_mode!r}.")
        self.pad_mode = pad_mode
        if isinstance(padding, bool) or not isinstance(padding, (numbers.Integral, tuple)):
            raise TypeError(f"For '{name}', the type of 'padding' must be int or tuple(int), but got "
                            f"{type(padding).__name__}.")
        pads = (padding,) * 4 if isinstance(padding, numbers.Integral) else padding
        if len(pads) != 4 or not all(isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in pads):
            raise ValueError(f"For '{name}', the 'padding' must be an int or a tuple of 4 ints, but got {padding!r}.")
        if any(p < 0 for p in pads):
            raise ValueError(f"For '{name}', the 'padding' must be non-negative, but got {padding!r}.")
        if pad_mode.lower() != "pad" and any(pads):
            raise ValueError(f"For '{name}', the 'padding' must be zero when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        self.padding = padding
        self._pads = tuple(int(p) for p in pads)
        if not isinstance(data_format, str) or data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"For '{name}', the 'format' must be one of ['NCHW', 'NHWC'], but got {data_format!r}.")
        if data_format == "NHWC":
            raise ValueError(f"For '{name}', the \"NHWC\" format only support in GPU target, but got the 'format' is "
                             f"NHWC and the platform is CPU.")
        self.data_format = data_format
        self.has_bias = _check_bool(has_bias, "has_bias", name)
        if transposed:
            shape = [in_channels, out_channels // group, *kernel_size]
        else:
            shape = [out_channels, in_channels // group, *kernel_size]
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight_init = weight_init
        self.weight = Parameter(initializer(weight_init, shape, dtype=dtype), name="weight")
        self.bias_init = bias_init
        self.bias = None
        if self.has_bias:
            if bias_init is None:
                fan_in, _ = _calculate_fan_in_and_fan_out(shape)
                bias_init = Uniform(1 / math.sqrt(fan_in)) if fan_in != 0 else "zeros"
                self.bias_init = bias_init
            self.bias = Parameter(initializer(bias_init, [out_channels], dtype=dtype), name="bias")

    def _params_in(self, dtype):
        """(weight, bias) cast to the mixed-precision dtype when set (Cell.to_float)."""
        w, b = self.weight, self.bias
        if self._mp_dtype is not None:
            w = _kernels.cast(w, self._mp_dtype)
            b = _kernels.cast(b, self._mp_dtype) if b is not None else None
        return w, b

    def _check_input(self, x, ndim, layout):
        name = self.cls_name
        if not isinstance(x, _Tensor):
            raise TypeError(f"For '{name}', the input must be a Tensor, but got {type(x).__name__}.")
        if x.ndim != ndim:
            raise ValueError(f"For '{name}', the input must be a {ndim}-D tensor {layout}, but got {x.ndim}-D with "
                             f"shape {tuple(x.shape)}.")
        if x.shape[1] != self.in_channels:
            raise ValueError(f"For '{name}', the input channels (x.shape[1]) must be equal to in_channels "
                             f"{self.in_channels}, but got {x.shape[1]} (x shape {tuple(x.shape)}).")

    def _add_bias(self, y, b):
        if b is None:
            return y
        return _ops.add(y, _kernels.reshape(b, [1, -1] + [1] * (y.ndim - 2)))

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}, "
                f"weight_init={self.weight_init}, bias_init={self.bias_init}, format={self.data_format}")


class Conv2d(_Conv):
    r"""2-D convolution layer: y = Conv2D(x, weight) (+ bias), NCHW.

    Args:
        in_channels, out_channels (int): positive; both divisible by `group`.
        kernel_size (int or (h, w)), stride (int or (h, w) or (1, 1, h, w); default 1), dilation (likewise,
            default 1).
        pad_mode (str): 'same' (default: output ⌈H/stride⌉, padding split with the odd one at the bottom/right),
            'valid' (no padding) or 'pad' (use `padding`).
        padding (int or (top, bottom, left, right)): only with pad_mode='pad'. Default 0.
        group (int): grouped convolution (default 1).
        has_bias (bool): default False.
        weight_init, bias_init: Initializer / name / number / Tensor; defaults HeUniform(√5) and
            Uniform(1/√fan_in).
        data_format: 'NCHW' ('NHWC' is GPU-only in MindSpore: ValueError here).
        dtype: Parameter dtype (default float32).

    Inputs: x (N, in_channels, H, W). Outputs: (N, out_channels, OH, OW).
    Parameters: `weight` (out_channels, in_channels/group, KH, KW), `bias` (out_channels,).
    Attributes `conv2d` (MindSpore's Conv2D primitive with these settings: conv2d(x, weight)) and `bias_add`
    (BiasAdd), for subclasses that call them.
    Raises:
        TypeError / ValueError: bad arguments (as MindSpore); ValueError for an input that is not 4-D or whose
        channel count differs from in_channels ("For 'Conv2d', the input channels ...").
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCHW", dtype=mstype.float32):
        name = type(self).__name__
        kernel_size = _twice(kernel_size, "kernel_size", name)
        stride = _twice(stride, "stride", name, allow4=True)
        dilation = _twice(dilation, "dilation", name, allow4=True)
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, data_format, dtype=dtype)
        # MindSpore's attributes, which model-zoo subclasses call in their construct (mindcv's StdConv2d:
        # `self.conv2d(x, standardized_weight)`): the Conv2D primitive with this layer's settings, and BiasAdd
        from ...ops.math_func import BiasAdd
        from ...ops.primitives_nn import Conv2D
        self.conv2d = Conv2D(out_channel=self.out_channels, kernel_size=self.kernel_size, mode=1,
                             pad_mode=self.pad_mode, pad=self.padding, stride=self.stride, dilation=self.dilation,
                             group=self.group)
        self.bias_add = BiasAdd()

    def construct(self, x):
        self._check_input(x, 4, "(N, C_in, H, W)")
        w, b = self._params_in(x.dtype)
        pads = NF._resolve_pads(self.pad_mode, self._pads, x.shape[2:], self.kernel_size, self.stride, self.dilation,
                                self.cls_name)
        y = _kernels.conv2d(x, w, list(self.stride), list(pads), list(self.dilation), self.group)
        return self._add_bias(y, b)


class Conv1d(_Conv):
    r"""1-D convolution layer over (N, C_in, L): a Conv2D over (N, C_in, 1, L) with a (1, K) kernel.

    Args as Conv2d, with int kernel_size, stride, padding (both ends) and dilation. The weight is 4-D,
    (out_channels, in_channels/group, 1, kernel_size), as MindSpore's.
    Inputs: x (N, in_channels, L). Outputs: (N, out_channels, L_out).
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        name = type(self).__name__
        for arg, v, lo in (("kernel_size", kernel_size, 1), ("stride", stride, 1), ("padding", padding, 0),
                           ("dilation", dilation, 1)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"For '{name}', the '{arg}' must be int, but got {type(v).__name__}.")
            if v < lo:
                raise ValueError(f"For '{name}', the '{arg}' must be {'>= 0' if lo == 0 else 'positive'}, but got "
                                 f"{v}.")
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode, padding, (1, dilation),
                         group, has_bias, _weight_1d(weight_init), bias_init, dtype=dtype)
        self._pads = (0, 0, int(padding), int(padding))
        self.padding = (0, 0, padding, padding)

    def construct(self, x):
        self._check_input(x, 3, "(N, C_in, L)")
        w, b = self._params_in(x.dtype)
        x4 = _kernels.expand_dims(x, 2)
        pads = NF._resolve_pads(self.pad_mode, self._pads, x4.shape[2:], self.kernel_size, self.stride,
                                self.dilation, self.cls_name)
        y = _kernels.conv2d(x4, w, list(self.stride), list(pads), list(self.dilation), self.group)
        return _kernels.squeeze(self._add_bias(y, b), [2])


def _deconv_len(mode, size, k, s, d, pad):
    """Output length of a transposed convolution (MindSpore's nn.Conv2dTranspose)."""
    fk = k + (k - 1) * (d - 1)
    if mode == "valid":
        return size * s + max(fk - s, 0)
    if mode == "same":
        return size * s
    return size * s - pad + fk - s


class Conv2dTranspose(_Conv):
    r"""2-D transposed convolution (the gradient of Conv2d w.r.t. its input), NCHW.

    Args as Conv2d plus output_padding (int or (h, w), only with pad_mode='pad', each < max(stride, dilation)): zeros
    appended at the bottom/right of the output. The weight is (in_channels, out_channels/group, KH, KW).
    Output size: 'same' H·stride; 'valid' H·stride + max(dilation·(KH−1) + 1 − stride, 0); 'pad'
    H·stride − (top + bottom) + dilation·(KH−1) + 1 − stride (+ output_padding).
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, output_padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        name = type(self).__name__
        kernel_size = _twice(kernel_size, "kernel_size", name)
        stride = _twice(stride, "stride", name)
        dilation = _twice(dilation, "dilation", name)
        if isinstance(output_padding, bool) or not isinstance(output_padding, (numbers.Integral, tuple)):
            raise TypeError(f"For '{name}', the type of 'output_padding' must be int or tuple(int), but got "
                            f"{type(output_padding).__name__}.")
        op = (output_padding,) * 2 if isinstance(output_padding, numbers.Integral) else output_padding
        if len(op) != 2:
            raise ValueError(f"For '{name}', the 'output_padding' must be an int or a tuple of 2 ints, but got "
                             f"{output_padding!r}.")
        for i in range(2):
            if op[i] < 0 or op[i] >= max(dilation[i], stride[i]):
                raise ValueError(f"For '{name}', the 'output_padding' must be in range of [0, max(stride, dilation)), "
                                 f"but got {output_padding!r}.")
        if pad_mode.lower() != "pad" and any(op):
            raise ValueError(f"For '{name}', when 'output_padding' is not zero, 'pad_mode' must be 'pad'.")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, transposed=True, dtype=dtype)
        self.output_padding = output_padding
        self._out_pad = tuple(int(v) for v in op)

    def _out_hw(self, hw):
        mode = self.pad_mode.lower()
        p = self._pads
        return [_deconv_len(mode, hw[i], self.kernel_size[i], self.stride[i], self.dilation[i], p[2 * i] + p[2 * i + 1])
                for i in range(2)]

    def _transpose(self, x, w):
        oh, ow = self._out_hw(x.shape[2:])
        pads = NF._resolve_pads(self.pad_mode, self._pads, (oh, ow), self.kernel_size, self.stride, self.dilation,
                                self.cls_name)
        return _kernels.conv2d_backprop_input(x, w, [x.shape[0], self.out_channels, oh, ow], list(self.stride),
                                           list(pads), list(self.dilation), self.group)

    def _pad_output(self, y):
        oph, opw = self._out_pad
        if oph:
            y = _kernels.concat([y, _kernels.full([y.shape[0], y.shape[1], oph, y.shape[3]], 0.0, y.dtype)], 2)
        if opw:
            y = _kernels.concat([y, _kernels.full([y.shape[0], y.shape[1], y.shape[2], opw], 0.0, y.dtype)], 3)
        return y

    def construct(self, x):
        self._check_input(x, 4, "(N, C_in, H, W)")
        w, b = self._params_in(x.dtype)
        return self._pad_output(self._add_bias(self._transpose(x, w), b))


def _weight_1d(weight_init):
    """A 3-D weight_init Tensor (C0, C1, K) of Conv1d/Conv1dTranspose as the (C0, C1, 1, K) weight (MindSpore)."""
    if isinstance(weight_init, _Tensor) and weight_init.ndim == 3:
        return _kernels.expand_dims(weight_init, 2)
    return weight_init


class Conv1dTranspose(Conv2dTranspose):
    r"""1-D transposed convolution over (N, C_in, L): Conv2dTranspose over (N, C_in, 1, L) with a (1, K) kernel.
    Weight (in_channels, out_channels/group, 1, kernel_size). int kernel_size, stride, padding, dilation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        name = type(self).__name__
        for arg, v, lo in (("kernel_size", kernel_size, 1), ("stride", stride, 1), ("padding", padding, 0),
                           ("dilation", dilation, 1)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"For '{name}', the '{arg}' must be int, but got {type(v).__name__}.")
            if v < lo:
                raise ValueError(f"For '{name}', the '{arg}' must be {'>= 0' if lo == 0 else 'positive'}, but got "
                                 f"{v}.")
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode, (0, 0, padding, padding),
                         0, (1, dilation), group, has_bias, _weight_1d(weight_init), bias_init, dtype=dtype)

    def construct(self, x):
        self._check_input(x, 3, "(N, C_in, L)")
        w, b = self._params_in(x.dtype)
        y = self._add_bias(self._transpose(_kernels.expand_dims(x, 2), w), b)
        return _kernels.squeeze(y, [2])
