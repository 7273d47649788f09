"""Image patches as channels: the computation of MindSpore 2.10's ExtractImagePatches primitive (TensorFlow's
extract_image_patches on NCHW data), behind nn.Unfold (kiln/nn/layer/basic.py).

MindSpore's kernel (its GPU / Ascend builds; the CPU build has none) transposes NCHW to NHWC, takes every
kr × kc patch (rows rate_row apart, columns rate_col apart) at stride (stride_row, stride_col) and stacks it in
the depth dimension with the channel fastest: output channel (i·kc + j)·C + c holds input channel c at patch cell
(i, j). Padding 'VALID': out = ⌈(in − eff + 1) / stride⌉, eff = k + (k − 1)(rate − 1), no padding. 'SAME':
out = ⌈in / stride⌉, the patch grid shifted up / left by trunc(((out − 1)·stride + eff − in) / 2) (C++ division, as
the kernel), cells outside the image 0.

Built as one Gather from a zero-padded copy of the input (index tables from NumPy over the static shape), so the
gradient is Gather's scatter-add and Graph mode traces it.
"""
import math

import numpy as np

from .._loader import _core
from ..common.tensor import Tensor
from .array_func import pad_pairs
from .function import _tensor_arg

__all__ = []


def _axis_table(size, k, stride, rate, padding):
    """Input positions (or -1 outside the image) of each (kernel offset, output position), and the output size."""
    eff = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        out = math.ceil((size - eff + 1) / stride)
        shift = 0
    else:
        out = math.ceil(size / stride)
        total = (out - 1) * stride + eff - size
        shift = int(total / 2)  # C++ integer division (toward zero), as MindSpore's kernel
    if out <= 0:
        return None, out
    pos = np.arange(out)[None, :] * stride + np.arange(k)[:, None] * rate - shift
    pos[(pos < 0) | (pos >= size)] = -1
    return pos, out


def extract_image_patches(input_x, ksizes, strides, rates, padding="VALID", op="ExtractImagePatches"):
    """Patches of a 4-D (N, C, H, W) input stacked as channels: output (N, kr·kc·C, out_rows, out_cols), channel
    (i·kc + j)·C + c = input channel c at patch cell (i, j) (see the module docstring for sizes and padding).

    Args: ksizes, strides, rates: pairs (row, col) of positive ints; padding: 'VALID' or 'SAME' (any case).
    Raises TypeError for a non-Tensor input, ValueError for a non-4-D input, a bad padding or a patch larger than
    the input under 'VALID' (no output position)."""
    x = _tensor_arg(input_x, op, "input_x")
    if x.ndim != 4:
        raise ValueError(f"For '{op}', the input must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
    if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME"):
        raise ValueError(f"For '{op}', the 'padding' must be 'VALID' or 'SAME', but got {padding!r}.")
    padding = padding.upper()
    n, c, h, w = x.shape
    (kr, kc), (sr, sc), (rr, rc) = ksizes, strides, rates
    rows, oh = _axis_table(h, kr, sr, rr, padding)
    cols, ow = _axis_table(w, kc, sc, rc, padding)
    if rows is None or cols is None:
        raise ValueError(f"For '{op}', the patch {kr}×{kc} with rates ({rr}, {rc}) does not fit the input "
                         f"{h}×{w} with padding 'VALID' (output size {oh}×{ow}).")
    # index into the input plane padded by one zero row and column at the end: (h, w) is the zero cell
    plane_w = w + 1
    r = np.where(rows < 0, h, rows)  # (kr, oh)
    q = np.where(cols < 0, w, cols)  # (kc, ow)
    table = r[:, None, :, None] * plane_w + q[None, :, None, :]  # (kr, kc, oh, ow)
    padded = pad_pairs(x, [(0, 0), (0, 0), (0, 1), (0, 1)], "constant", 0, op)
    flat = _core.reshape(padded, [n, c, (h + 1) * plane_w])
    cols_ = _core.gather(flat, Tensor(table.reshape(-1).astype(np.int64)), 2)  # (N, C, kr·kc·oh·ow)
    y = _core.reshape(cols_, [n, c, kr * kc, oh, ow])
    y = _core.transpose(y, [0, 2, 1, 3, 4])
    return _core.reshape(y, [n, kr * kc * c, oh, ow])
