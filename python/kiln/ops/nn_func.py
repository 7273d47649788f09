"""Functional convolution, pooling and normalization: MindSpore 2.x's `ops.conv2d`, `ops.max_pool2d`,
`ops.avg_pool2d`, `ops.adaptive_avg_pool2d`, `ops.batch_norm`, `ops.layer_norm`, `ops.group_norm`, ... (NCHW).

Each function turns its arguments (pad modes, ints or tuples, 3-D inputs) into one C++ op of src/ops/conv.cpp,
pool.cpp or norm.cpp; those ops define the shapes, kernels and gradients. The pad helpers here are shared with the
layers of kiln.nn (conv.py, pooling.py).

Pad modes (MindSpore's Conv2D / MaxPool / AvgPool): "valid" — no padding; "same" — output size ⌈in / stride⌉, the
needed padding max(0, (out − 1)·stride + dilation·(k − 1) + 1 − in) split with the odd element at the bottom/right;
"pad" — the explicit `padding`.
"""

from .._loader import _core
from ..common.tensor import Tensor
from .._args import _is_int, int_arg, number_arg, shape_arg

__all__ = ["conv2d", "conv1d", "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
           "adaptive_avg_pool1d", "batch_norm", "layer_norm", "group_norm"]


# ---- argument helpers (shared with kiln.nn) ----
def _int_tuple(value, n, name, op, minimum=1, allow=(1,)):
    """`value` (an int, or a tuple/list whose length is n or in `allow`) as an n-tuple of ints ≥ minimum."""
    if _is_int(value):
        vals = (int(value),) * n
    elif isinstance(value, (tuple, list)) and all(_is_int(v) for v in value) and (len(value) == n or
                                                                                 len(value) in allow):
        vals = tuple(int(v) for v in value)
        if len(vals) != n:
            vals = vals * (n // len(vals)) if n % len(vals) == 0 else vals
    else:
        raise TypeError(f"For '{op}', the '{name}' must be an int or a tuple of {n} ints, but got {value!r}.")
    if any(v < minimum for v in vals):
        kind = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"For '{op}', the '{name}' must be {kind}, but got {value!r}.")
    return vals


def _same_pad(size, k, s, d):
    """(before, after) padding of MindSpore's "same" mode for one spatial dim."""
    out = -(-size // s)
    need = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
    return need // 2, need - need // 2


def _pads4(padding, op):
    """padding: int, (vertical, horizontal) or (top, bottom, left, right) → 4-tuple."""
    if _is_int(padding):
        p = (int(padding),) * 4
    elif isinstance(padding, (tuple, list)) and all(_is_int(v) for v in padding) and len(padding) in (1, 2, 4):
        p = tuple(int(v) for v in padding)
        p = p * 4 if len(p) == 1 else ((p[0], p[0], p[1], p[1]) if len(p) == 2 else p)
    else:
        raise TypeError(f"For '{op}', the 'padding' must be an int or a tuple of 2 or 4 ints, but got {padding!r}.")
    if any(v < 0 for v in p):
        raise ValueError(f"For '{op}', the 'padding' must be non-negative, but got {padding!r}.")
    return p


def _resolve_pads(pad_mode, padding, hw, kernel, stride, dilation, op):
    """The 4 explicit pads (top, bottom, left, right) for pad_mode 'same' / 'valid' / 'pad' (case-insensitive)."""
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{op}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], but got {pad_mode!r}.")
    mode = pad_mode.lower()
    pads = _pads4(padding, op)
    if mode != "pad":
        if any(pads):
            raise ValueError(f"For '{op}', the 'padding' must be zero when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        if mode == "same":
            t, b = _same_pad(hw[0], kernel[0], stride[0], dilation[0])
            left, r = _same_pad(hw[1], kernel[1], stride[1], dilation[1])
            return (t, b, left, r)
    return pads


def _check_ndim(x, allowed, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    if x.ndim not in allowed:
        dims = " or ".join(str(a) for a in allowed)
        raise ValueError(f"For '{op}', the '{name}' must be a {dims}-D tensor, but got {x.ndim}-D with shape "
                         f"{tuple(x.shape)}.")


def _add_bias(y, bias, op):
    if bias is None:
        return y
    if bias.ndim != 1 or bias.shape[0] != y.shape[1]:
        raise ValueError(f"For '{op}', the bias must have shape ({y.shape[1]},), but got {tuple(bias.shape)}.")
    return _core.add(y, _core.reshape(bias, [1, -1] + [1] * (y.ndim - 2)))


# ---- convolution ----
def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation), NCHW: input (N, C, H, W), weight (C_out, C/groups, KH, KW), optional
    bias (C_out,). stride/dilation: int or (h, w); padding: int, (vertical, horizontal), (top, bottom, left, right)
    or the strings 'same'/'valid'; pad_mode 'valid' (default), 'same' or 'pad' (use `padding`).

    Output (N, C_out, OH, OW): 'same' → ⌈H/stride⌉; otherwise ⌊(H + pads − dilation·(KH − 1) − 1)/stride⌋ + 1.
    Raises TypeError for bad argument types or dtypes, ValueError for inconsistent shapes (naming 'Conv2D')."""
    if isinstance(padding, str):
        pad_mode, padding = padding, 0
    elif padding != 0 and pad_mode == "valid":
        pad_mode = "pad"
    _check_ndim(input, (4,), "conv2d")
    _check_ndim(weight, (4,), "conv2d", "weight")
    s = _int_tuple(stride, 2, "stride", "conv2d", allow=(1, 4))
    d = _int_tuple(dilation, 2, "dilation", "conv2d", allow=(1, 4))
    s, d = s[-2:], d[-2:]
    k = tuple(weight.shape[2:])
    pads = _resolve_pads(pad_mode, padding, input.shape[2:], k, s, d, "conv2d")
    y = _core.conv2d(input, weight, list(s), list(pads), list(d), int(groups))
    return _add_bias(y, bias, "conv2d")


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """1-D convolution: input (N, C, L), weight (C_out, C/groups, K), optional bias. A Conv2D over (N, C, 1, L)."""
    if isinstance(padding, str):
        pad_mode, padding = padding, 0
    elif padding != 0 and pad_mode == "valid":
        pad_mode = "pad"
    _check_ndim(input, (3,), "conv1d")
    _check_ndim(weight, (3,), "conv1d", "weight")
    p = _int_tuple(padding, 1, "padding", "conv1d", minimum=0)[0] if not isinstance(padding, str) else 0
    y = conv2d(_core.expand_dims(input, 2), _core.expand_dims(weight, 2), None,
               (1, _int_tuple(stride, 1, "stride", "conv1d")[0]), pad_mode, (0, 0, p, p),
               (1, _int_tuple(dilation, 1, "dilation", "conv1d")[0]), groups)
    return _add_bias(_core.squeeze(y, [2]), bias, "conv1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input): input (N, C_in, H, W), weight
    (C_in, C_out/groups, KH, KW). Output (N, C_out, (H − 1)·stride − 2·padding + dilation·(KH − 1) + output_padding
    + 1, ...) — PyTorch's conv_transpose2d."""
    _check_ndim(input, (4,), "conv_transpose2d")
    _check_ndim(weight, (4,), "conv_transpose2d", "weight")
    s = _int_tuple(stride, 2, "stride", "conv_transpose2d")
    d = _int_tuple(dilation, 2, "dilation", "conv_transpose2d")
    p = _int_tuple(padding, 2, "padding", "conv_transpose2d", minimum=0)
    op = _int_tuple(output_padding, 2, "output_padding", "conv_transpose2d", minimum=0)
    n, _, h, w = input.shape
    kh, kw = weight.shape[2:]
    out = [n, weight.shape[1] * groups,
           (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1,
           (w - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1]
    y = _core.conv2d_backprop_input(input, weight, out, list(s), [p[0], p[0], p[1], p[1]], list(d), int(groups))
    return _add_bias(y, bias, "conv_transpose2d")


# ---- pooling ----
def _as4d(x, op):
    _check_ndim(x, (3, 4), op)
    return (_core.expand_dims(x, 0), True) if x.ndim == 3 else (x, False)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
    """2-D max pooling of x (N, C, H, W) or (C, H, W). kernel_size/stride/dilation: int or (h, w) (stride None =
    kernel_size); padding: int or (h, w), symmetric, each at most half the kernel. With return_indices also the Int64
    argmax (h·W + w in each plane). Padded positions never win."""
    x4, squeeze = _as4d(x, "max_pool2d")
    k = _int_tuple(kernel_size, 2, "kernel_size", "max_pool2d")
    s = k if stride is None else _int_tuple(stride, 2, "stride", "max_pool2d")
    d = _int_tuple(dilation, 2, "dilation", "max_pool2d")
    p = _int_tuple(padding, 2, "padding", "max_pool2d", minimum=0)
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise ValueError(f"For 'max_pool2d', the padding must be at most half of the kernel size, but got padding "
                         f"{p} and kernel_size {k}.")
    r = _core.max_pool2d(x4, list(k), list(s), [p[0], p[0], p[1], p[1]], list(d), bool(ceil_mode),
                         bool(return_indices))
    if squeeze:
        r = tuple(_core.squeeze(t, [0]) for t in r) if return_indices else _core.squeeze(r, [0])
    return r


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """2-D average pooling of (N, C, H, W) or (C, H, W). padding: int, (h, w) or (top, bottom, left, right).
    The divisor is divisor_override when non-zero, else the window area (count_include_pad) or the number of
    unpadded elements."""
    x4, squeeze = _as4d(input_x, "avg_pool2d")
    k = _int_tuple(kernel_size, 2, "kernel_size", "avg_pool2d")
    s = k if stride is None else _int_tuple(stride, 2, "stride", "avg_pool2d")
    pads = _pads4(padding, "avg_pool2d")
    if pads[0] + pads[1] > k[0] or pads[2] + pads[3] > k[1]:  # MindSpore's AvgPool rule, as max_pool2d's
        raise ValueError(f"For 'avg_pool2d', the pads of the two sides of a dim must sum to at most the kernel size, "
                         f"but got padding {padding!r} and kernel_size {kernel_size!r}.")
    if divisor_override is None:
        divisor_override = 0
    if not _is_int(divisor_override) or divisor_override < 0:
        raise ValueError(f"For 'avg_pool2d', the 'divisor_override' must be a non-negative int, but got "
                         f"{divisor_override!r}.")
    y = _core.avg_pool2d(x4, list(k), list(s), list(pads), bool(ceil_mode), bool(count_include_pad),
                         int(divisor_override))
    return _core.squeeze(y, [0]) if squeeze else y


def _adaptive_size(output_size, hw, op):
    if _is_int(output_size) or output_size is None:
        output_size = (output_size, output_size)
    if not isinstance(output_size, (tuple, list)) or len(output_size) != 2:
        raise TypeError(f"For '{op}', the 'output_size' must be an int or a tuple of 2 ints (or None), but got "
                        f"{output_size!r}.")
    out = [hw[i] if output_size[i] is None else output_size[i] for i in range(2)]
    if not all(_is_int(v) and v >= 1 for v in out):
        raise ValueError(f"For '{op}', the 'output_size' must be positive ints, but got {output_size!r}.")
    return [int(v) for v in out]


def adaptive_avg_pool2d(input, output_size):
    """Adaptive average pooling of (N, C, H, W) or (C, H, W) to output_size (int, or (OH, OW) where None keeps that
    input size). Bin i spans [⌊i·H/OH⌋, ⌈(i + 1)·H/OH⌉)."""
    x4, squeeze = _as4d(input, "adaptive_avg_pool2d")
    y = _core.adaptive_avg_pool2d(x4, _adaptive_size(output_size, x4.shape[2:], "adaptive_avg_pool2d"))
    return _core.squeeze(y, [0]) if squeeze else y


def adaptive_avg_pool1d(input, output_size):
    """Adaptive average pooling of (N, C, L) to (N, C, output_size)."""
    _check_ndim(input, (3,), "adaptive_avg_pool1d")
    if not _is_int(output_size) or output_size < 1:
        raise ValueError(f"For 'adaptive_avg_pool1d', the 'output_size' must be a positive int, but got "
                         f"{output_size!r}.")
    y = _core.adaptive_avg_pool2d(_core.expand_dims(input, 2), [1, int(output_size)])
    return _core.squeeze(y, [2])


# ---- normalization ----
def _unbias_factor(x, name):
    """M/(M − 1) for the M = x.size / x.shape[1] elements per channel that batch statistics of x (N, C, ...) use
    (the biased → unbiased variance factor of the moving-variance update). ValueError when M < 2: the unbiased
    variance of one value is undefined (PyTorch raises the same; MindSpore would store NaN)."""
    per_channel = x.size // x.shape[1] if x.shape[1] else 0
    if per_channel < 2:
        raise ValueError(f"For '{name}', batch statistics in training need more than 1 value per channel (the "
                         f"moving variance uses the unbiased batch variance), but got input shape {tuple(x.shape)} "
                         f"({per_channel} value(s) per channel).")
    return per_channel / (per_channel - 1.0)


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization over every axis but 1 of input_x (N, C, ...). training: normalizes with the batch mean and
    biased variance and updates running_mean/running_var in place (MindSpore's ops.batch_norm convention):
        running_mean = (1 − momentum)·running_mean + momentum·batch_mean
        running_var  = (1 − momentum)·running_var  + momentum·batch_var·M/(M − 1)   (the unbiased batch variance;
    M = elements per channel); else normalizes with running_mean/running_var.
    Raises ValueError for an input of rank < 2 or > 8, and in training for M < 2 (one value per channel)."""
    _check_ndim(input_x, tuple(range(2, 9)), "batch_norm", "input_x")
    if training:
        unbias = _unbias_factor(input_x, "batch_norm")
    y, bm, bv = _core.batch_norm(input_x, weight, bias, running_mean, running_var, bool(training), float(eps))
    if training:
        bm, bv = _core.stop_gradient(bm), _core.stop_gradient(bv)
        _core.assign(running_mean, _core.add(_core.mul(running_mean, 1.0 - momentum), _core.mul(bm, momentum)))
        _core.assign(running_var, _core.add(_core.mul(running_var, 1.0 - momentum), _core.mul(bv, momentum * unbias)))
    return y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last len(normalized_shape) dims (biased variance), then ·weight + bias (both of
    shape normalized_shape, optional)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'layer_norm', the 'input' must be a Tensor, but got {type(input).__name__}.")
    normalized_shape = shape_arg("layer_norm", "normalized_shape", normalized_shape)
    n = len(normalized_shape)
    if n == 0 or tuple(input.shape[input.ndim - n:]) != normalized_shape:
        raise ValueError(f"For 'layer_norm', the normalized_shape {normalized_shape} must match the trailing dims "
                         f"of the input shape {tuple(input.shape)}.")
    return _core.layer_norm(input, weight, bias, input.ndim - n, input.ndim - n, number_arg("layer_norm", "eps", eps))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization of (N, C, ...): statistics over each group of C/num_groups channels and all positions;
    then per-channel ·weight + bias ((C,), optional)."""
    return _core.group_norm(input, int_arg("group_norm", "num_groups", num_groups, minimum=1), weight, bias,
                            number_arg("group_norm", "eps", eps))

