"""3-D convolution and its transpose: MindSpore 2.10's ops.conv3d and ops.conv3d_transpose, exact compositions of
Kiln's 2-D kernels (gradients from the building blocks; Graph mode traces them):
- conv3d: out[:, :, od] = Σ_kd conv2d(x[:, :, od·s + kd·dil], w[:, :, kd]) — one Conv2D per kernel depth over the
  depth slices batched into N (zero depth padding concatenated first);
- conv3d_transpose: one Conv2DBackpropInput per kernel depth over the input's depth slices, each result placed
  `stride` apart along depth and shifted by kd·dilation, summed, then cropped / padded per MindSpore's pad_mode.
"""
from .._loader import _core
from ._opdef import defop
from .nn_func import _int_tuple, _is_int, _same_pad, conv2d
from .nnpool_func import _float_nd, _pads6

__all__ = ["conv3d", "conv3d_transpose"]


def _triple(value, name, op, minimum=1):
    """int, (d, h, w), or 5 ints (N, C, d, h, w: MindSpore's Conv3D form) → (d, h, w)."""
    if isinstance(value, (tuple, list)) and len(value) == 5:
        value = tuple(value)[2:]
    return _int_tuple(value, 3, name, op, minimum=minimum)


# ---------------------------------------------------------------------------------------------- conv3d

@defop()
def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """MindSpore's ops.conv3d(input, weight, bias=None, stride=1, pad_mode='valid', padding=0, dilation=1, groups=1):
    3-D cross-correlation, NCDHW.

    input (N, C, D, H, W) float; weight (C_out, C/groups, KD, KH, KW) of input's dtype; bias (C_out,) or None.
    stride, dilation: int or (d, h, w) (or 5 ints whose last 3 are used); padding: int, (d, h, w) or (front, back,
    top, bottom, left, right), only with pad_mode 'pad' (a non-zero padding with 'valid' means 'pad'); 'same' pads
    to ⌈in/stride⌉ (odd element at the back/bottom/right); 'valid' none. Output (N, C_out, OD, OH, OW) with
    O = ⌊(in + pads − dilation·(k − 1) − 1)/stride⌋ + 1. Computed as one Conv2D per kernel depth (module
    docstring), gradients for input, weight and bias.

    Raises TypeError for non-Tensors / non-float dtypes / bad argument types, ValueError for ranks, channel counts
    (C must equal weight.shape[1]·groups, C_out divisible by groups), a bad pad_mode or a kernel larger than the
    padded input."""
    op = "conv3d"
    if isinstance(padding, str):
        pad_mode, padding = padding, 0
    x = _float_nd(input, (5,), op)
    w = _float_nd(weight, (5,), op, "weight")
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{op}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], but got {pad_mode!r}.")
    mode = pad_mode.lower()
    pads = _pads6(padding, op)
    if mode == "valid" and any(pads):
        mode = "pad"
    if mode == "same" and any(pads):
        raise ValueError(f"For '{op}', the 'padding' must be zero when 'pad_mode' is 'same', but got {padding!r}.")
    s = _triple(stride, "stride", op)
    d = _triple(dilation, "dilation", op)
    if not _is_int(groups) or groups < 1:
        raise ValueError(f"For '{op}', the 'groups' must be a positive int, but got {groups!r}.")
    n, c, depth, h, wd = x.shape
    cout, cin_g, kd, kh, kw = w.shape
    if c != cin_g * groups or cout % groups:
        raise ValueError(f"For '{op}', the input channels ({c}) must equal weight.shape[1] ({cin_g}) · groups "
                         f"({groups}) and the output channels ({cout}) must be divisible by groups; got input shape "
                         f"{tuple(x.shape)} and weight shape {tuple(w.shape)}.")
    if mode == "same":
        pads = _same_pad(depth, kd, s[0], d[0]) + _same_pad(h, kh, s[1], d[1]) + _same_pad(wd, kw, s[2], d[2])
    elif mode == "valid":
        pads = (0,) * 6
    span = depth + pads[0] + pads[1] - d[0] * (kd - 1)
    if span < 1 or h + pads[2] + pads[3] - d[1] * (kh - 1) < 1 or wd + pads[4] + pads[5] - d[2] * (kw - 1) < 1:
        raise ValueError(f"For '{op}', the (dilated) kernel {tuple(w.shape[2:])} is larger than the padded input "
                         f"{tuple(x.shape[2:])} with pads {pads}.")
    if w.dtype != x.dtype:
        raise TypeError(f"For '{op}', the 'weight' must have the input's dtype {x.dtype}, but got {w.dtype}.")
    od = (span - 1) // s[0] + 1
    if pads[0] or pads[1]:
        parts = ([_core.full([n, c, pads[0], h, wd], 0.0, x.dtype)] if pads[0] else []) + [x] + \
            ([_core.full([n, c, pads[1], h, wd], 0.0, x.dtype)] if pads[1] else [])
        x = _core.concat(parts, 2)
    out = None
    for k in range(kd):
        start = k * d[0]
        sl = _core.strided_slice(x, [0, 0, start, 0, 0], [n, c, start + (od - 1) * s[0] + 1, h, wd],
                                 [1, 1, s[0], 1, 1])  # (N, C, OD, H, W)
        sl = _core.reshape(_core.transpose(sl, [0, 2, 1, 3, 4]), [n * od, c, h, wd])
        wk = _core.reshape(_core.strided_slice(w, [0, 0, k, 0, 0], [cout, cin_g, k + 1, kh, kw], [1] * 5),
                           [cout, cin_g, kh, kw])
        y = conv2d(sl, wk, None, s[1:], "pad", pads[2:], d[1:], groups)
        out = y if out is None else _core.add(out, y)
    oh, ow = out.shape[2], out.shape[3]
    out = _core.transpose(_core.reshape(out, [n, od, cout, oh, ow]), [0, 2, 1, 3, 4])
    if bias is not None:
        b = _float_nd(bias, (1,), op, "bias")
        if b.shape[0] != cout:
            raise ValueError(f"For '{op}', the 'bias' must have shape ({cout},), but got {tuple(b.shape)}.")
        out = _core.add(out, _core.reshape(b, [1, cout, 1, 1, 1]))
    return out


def _interleave(y, s, axis):
    """y with s − 1 zeros after every element along `axis` (the last element's trailing zeros dropped)."""
    if s == 1:
        return y
    shape = list(y.shape)
    z = _core.full(shape[:axis + 1] + [s - 1] + shape[axis + 1:], 0.0, y.dtype)
    y = _core.concat([_core.expand_dims(y, axis + 1), z], axis + 1)
    y = _core.reshape(y, shape[:axis] + [shape[axis] * s] + shape[axis + 1:])
    begin, end = [0] * y.ndim, list(y.shape)
    end[axis] = (shape[axis] - 1) * s + 1
    return _core.strided_slice(y, begin, end, [1] * y.ndim)


def _crop_pad(y, axis, front, length):
    """y[front : front + length] along axis, zeros where that runs past the end."""
    n = y.shape[axis]
    take = max(0, min(length, n - front))
    begin, end = [0] * y.ndim, list(y.shape)
    begin[axis], end[axis] = front, front + take
    out = _core.strided_slice(y, begin, end, [1] * y.ndim)
    if take < length:
        shape = list(y.shape)
        shape[axis] = length - take
        out = _core.concat([out, _core.full(shape, 0.0, y.dtype)], axis)
    return out


@defop()
def conv3d_transpose(inputs, weight, pad_mode="valid", padding=0, stride=1, dilation=1, group=1,
                     output_padding=0):
    """MindSpore's ops.conv3d_transpose(inputs, weight, pad_mode='valid', padding=0, stride=1, dilation=1, group=1,
    output_padding=0): the transposed 3-D convolution (the gradient of conv3d w.r.t. its input), NCDHW.

    inputs (N, C_in, D, H, W) float; weight (C_in, C_out/group, KD, KH, KW) of its dtype. Per dim, the full output
    has L = (in − 1)·stride + dilation·(k − 1) + 1 positions; 'valid' keeps them all, 'pad' drops padding[front]
    and padding[back] (int, (d, h, w) or 6 pads), 'same' keeps in·stride (dropping max(L − in·stride, 0), the odd
    one at the back); output_padding (int or (d, h, w)) then appends that many positions (zeros beyond L). Computed
    as one Conv2DBackpropInput per kernel depth, the depth slices placed `stride` apart (exact; gradients for both).
    Raises TypeError for non-float / mismatched dtypes or bad argument types, ValueError for ranks, channels or
    pad_mode."""
    op = "conv3d_transpose"
    x = _float_nd(inputs, (5,), op, "inputs")
    w = _float_nd(weight, (5,), op, "weight")
    if w.dtype != x.dtype:
        raise TypeError(f"For '{op}', the 'weight' must have the inputs' dtype {x.dtype}, but got {w.dtype}.")
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{op}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], but got {pad_mode!r}.")
    mode = pad_mode.lower()
    pads = _pads6(padding, op)
    if mode != "pad" and any(pads):
        raise ValueError(f"For '{op}', the 'padding' must be zero when 'pad_mode' is not 'pad', but got {padding!r}.")
    s = _triple(stride, "stride", op)
    d = _triple(dilation, "dilation", op)
    opad = _triple(output_padding, "output_padding", op, minimum=0)
    if not _is_int(group) or group < 1:
        raise ValueError(f"For '{op}', the 'group' must be a positive int, but got {group!r}.")
    n, cin, depth, h, wd = x.shape
    cout_g, kd, kh, kw = w.shape[1:]
    if w.shape[0] != cin or cin % group:
        raise ValueError(f"For '{op}', the weight must be (C_in = {cin}, C_out/group, KD, KH, KW) with C_in divisible "
                         f"by group {group}, but got weight shape {tuple(w.shape)}.")
    cout = cout_g * group
    full = [(v - 1) * s[i] + d[i] * (k - 1) + 1 for i, (v, k) in enumerate(((depth, kd), (h, kh), (wd, kw)))]
    full_hw = full[1:]
    x2 = _core.reshape(_core.transpose(x, [0, 2, 1, 3, 4]), [n * depth, cin, h, wd])
    total = None
    for k in range(kd):
        wk = _core.reshape(_core.strided_slice(w, [0, 0, k, 0, 0], [cin, cout_g, k + 1, kh, kw], [1] * 5),
                           [cin, cout_g, kh, kw])
        yk = _core.conv2d_backprop_input(x2, wk, [n * depth, cout] + full_hw, list(s[1:]), [0, 0, 0, 0], list(d[1:]),
                                         int(group))
        yk = _core.transpose(_core.reshape(yk, [n, depth, cout] + full_hw), [0, 2, 1, 3, 4])  # (N, C, D, H', W')
        yk = _interleave(yk, s[0], 2)
        front = k * d[0]
        parts = ([_core.full([n, cout, front] + full_hw, 0.0, x.dtype)] if front else []) + [yk]
        back = full[0] - front - yk.shape[2]
        if back:
            parts.append(_core.full([n, cout, back] + full_hw, 0.0, x.dtype))
        yk = _core.concat(parts, 2) if len(parts) > 1 else yk
        total = yk if total is None else _core.add(total, yk)
    ins = (depth, h, wd)
    for i in range(3):
        if mode == "same":
            cut = max(full[i] - ins[i] * s[i], 0)
            front, length = cut // 2, full[i] - cut
        elif mode == "pad":
            front, length = pads[2 * i], full[i] - pads[2 * i] - pads[2 * i + 1]
        else:
            front, length = 0, full[i]
        length += opad[i]
        if length < 1:
            raise ValueError(f"For '{op}', the output would have no positions along spatial dim {i} (full length "
                             f"{full[i]}, pads {pads}).")
        if front or length != full[i]:
            total = _crop_pad(total, 2 + i, front, length)
    return total
