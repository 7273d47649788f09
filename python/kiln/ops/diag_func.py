"""Diagonal, band and block-rearranging ops: MindSpore 2.10's ops.diagonal, diagonal_scatter, diag_embed,
diagflat, diag, matrix_band_part, pixel_shuffle, pixel_unshuffle, space_to_batch_nd,
batch_to_space_nd, mirror_pad, unfold (im2col), fold (col2im), matrix_diag, matrix_diag_part and
matrix_set_diag, with their Primitive classes and Tensor methods where MindSpore has them.

diagonal is the C++ view op Diagonal; diag_embed, diagflat and diag are DiagEmbed (src/ops/shape_ops.cpp). The
others are built from Kiln's Transpose, Reshape, Gather, Select, UnsortedSegmentSum and StridedSlice kernels (pads from
ops.pad), so gradients and Graph mode are theirs. Index tables (which element lands where) are computed with NumPy
from the static shapes."""
import builtins
import math

import numpy as np

from .._loader import _core
from .._args import _got, _is_int, int_arg, shape_arg
from ..common import dtype as mstype
from ..common import _views
from ..common.tensor import Tensor
from ._opdef import defop
from .array_func import pad_pairs
from .function import _static_tables, _tensor_arg

__all__ = ["diagonal", "diagonal_scatter", "diag_embed", "diagflat", "diag", "matrix_band_part", "pixel_shuffle",
           "pixel_unshuffle", "space_to_batch_nd", "batch_to_space_nd", "mirror_pad", "unfold",
           "fold", "matrix_diag_part", "matrix_diag", "matrix_set_diag"]


def _dim(op, name, axis, ndim):
    axis = int_arg(op, name, axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"For '{op}', '{name}' must be in [{-ndim}, {builtins.max(ndim, 1)}), but got {axis}.")
    return axis % builtins.max(ndim, 1)


def _diag_cells(n1, n2, offset):
    """Flat positions (row·n2 + col) of the offset diagonal of an n1 × n2 matrix, in order."""
    if offset >= 0:
        length = builtins.max(0, builtins.min(n1, n2 - offset))
        rows = np.arange(length)
        cols = rows + offset
    else:
        length = builtins.max(0, builtins.min(n1 + offset, n2))
        cols = np.arange(length)
        rows = cols - offset
    return (rows * n2 + cols).astype(np.int64)


def _diag_tables(n1, n2, offset):
    """(k, gather index, spread tables) of the offset diagonal of n1 × n2 matrices, cached per (n1, n2, offset): k the
    diagonal's length, the index its flat cells as a Tensor, the spread tables (where, src_of) as _spread takes them
    (None when k = 0)."""
    def build():
        cells = _diag_cells(n1, n2, offset)
        m = n1 * n2
        spread = None
        if len(cells):
            where = np.zeros(m, bool)
            where[cells] = True
            src_of = np.zeros(m, np.int64)
            src_of[cells] = np.arange(len(cells))
            spread = (Tensor(where), Tensor(src_of))
        return len(cells), Tensor(cells), spread
    return _static_tables(("diag", n1, n2, offset), build)


def _to_end(x, d1, d2):
    """x with axes d1, d2 moved last (perm; no Transpose when they are last already) and the inverse permutation."""
    perm = [d for d in range(x.ndim) if d not in (d1, d2)] + [d1, d2]
    if perm == list(range(x.ndim)):
        return x, perm
    inv = [int(i) for i in np.argsort(perm)]
    return _core.transpose(x, perm), inv


def _diag_dims(x, dim1, dim2, op):
    if x.ndim < 2:
        raise ValueError(f"For '{op}', the input must have rank >= 2, but got shape {tuple(x.shape)}.")
    d1, d2 = _dim(op, "dim1", dim1, x.ndim), _dim(op, "dim2", dim2, x.ndim)
    if d1 == d2:
        raise ValueError(f"For '{op}', 'dim1' and 'dim2' must differ, but both are {d1}.")
    return d1, d2


@defop(tensor="diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """MindSpore's ops.diagonal(input, offset=0, dim1=0, dim2=1): the diagonal (offset > 0: above, < 0: below the
    main one) of the matrices spanned by dim1 and dim2; those axes are removed and the diagonal is appended as the
    last axis (length 0 when offset is past the matrix). One C++ op, Diagonal: a view of the input (no copy, as
    PyTorch's; recorded as a view, so a write into it reaches the input under a gradient too). Gradient: DiagEmbed
    (into the diagonal of zeros). ValueError for rank < 2 or bad dims."""
    if isinstance(input, Tensor) and type(offset) is int and type(dim1) is int and type(dim2) is int:
        nd = input.ndim  # fast path: plain ints in range (the checks below, without their argument conversions)
        if nd >= 2 and -nd <= dim1 < nd and -nd <= dim2 < nd and dim1 % nd != dim2 % nd:
            d1, d2 = dim1 % nd, dim2 % nd
            return _views.note_view(input, _core.diagonal(input, offset, d1, d2), ("diagonal", offset, d1, d2))
    x = _tensor_arg(input, "diagonal")
    offset = int_arg("diagonal", "offset", offset)
    d1, d2 = _diag_dims(x, dim1, dim2, "diagonal")
    return _views.note_view(x, _core.diagonal(x, offset, d1, d2), ("diagonal", offset, d1, d2))


@defop(tensor="diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """MindSpore's ops.diagonal_scatter(input, src, offset=0, dim1=0, dim2=1): a copy of input whose diagonal
    (as ops.diagonal(input, offset, dim1, dim2) picks it) is src (that diagonal's shape, input's dtype). Gradient
    w.r.t. input (off the diagonal) and src. TypeError for bad types, ValueError for bad dims or src's shape."""
    x = _tensor_arg(input, "diagonal_scatter")
    s = _tensor_arg(src, "diagonal_scatter", "src")
    offset = int_arg("diagonal_scatter", "offset", offset)
    d1, d2 = _diag_dims(x, dim1, dim2, "diagonal_scatter")
    n1, n2 = x.shape[d1], x.shape[d2]
    k, _, spread = _diag_tables(n1, n2, offset)
    moved, inv = _to_end(x, d1, d2)
    want = tuple(moved.shape[:-2]) + (k,)
    if tuple(s.shape) != want:
        raise ValueError(f"For 'diagonal_scatter', 'src' must have shape {want}, but got {tuple(s.shape)}.")
    if s.dtype != x.dtype:
        raise TypeError(f"For 'diagonal_scatter', 'src' must have the input's dtype ({x.dtype}), but got "
                        f"{s.dtype}.")
    flat = _core.reshape(moved, list(moved.shape[:-2]) + [n1 * n2])
    out = _core.reshape(_spread(flat, s, spread), list(moved.shape))
    return out if inv == list(range(len(inv))) else _core.transpose(out, inv)


def _spread(base, src, tables):
    """base (..., m) with src's last-axis values (..., k) written at the static positions of `tables` (where,
    src_of: _diag_tables'; None when k = 0)."""
    if tables is None:
        return _core.identity(base)
    where, src_of = tables
    return _core.select(where, _core.gather(src, src_of, src.ndim - 1), base)


@defop()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """MindSpore's ops.diag_embed(input, offset=0, dim1=-2, dim2=-1): a Tensor of rank input.ndim + 1 whose
    matrices over (dim1, dim2) (positions in the output) hold input's last axis on their offset diagonal (size
    n + |offset| each), zeros elsewhere. One C++ op, DiagEmbed; gradient: Diagonal (the diagonal back). ValueError
    for equal or out-of-range dims."""
    x = _tensor_arg(input, "diag_embed")
    offset = int_arg("diag_embed", "offset", offset)
    if x.ndim == 0:
        raise ValueError("For 'diag_embed', the input must have rank >= 1, but got a 0-d Tensor.")
    r = x.ndim + 1
    d1, d2 = _dim("diag_embed", "dim1", dim1, r), _dim("diag_embed", "dim2", dim2, r)
    if d1 == d2:
        raise ValueError(f"For 'diag_embed', 'dim1' and 'dim2' must differ, but both are {d1}.")
    m = x.shape[-1] + abs(offset)
    lead = iter(x.shape[:-1])
    shape = [m if d in (d1, d2) else next(lead) for d in range(r)]
    return _core.diag_embed(x, shape, offset, d1, d2)


@defop(tensor="diagflat")
def diagflat(input, offset=0):
    """MindSpore's ops.diagflat(input, offset=0): the flattened input on the offset diagonal of a square matrix of
    side numel + |offset|, zeros elsewhere (DiagEmbed of the flattened input)."""
    x = _tensor_arg(input, "diagflat")
    offset = int_arg("diagflat", "offset", offset)
    m = x.size + abs(offset)
    return _core.diag_embed(_core.reshape(x, [-1]), [m, m], offset, 0, 1)


@defop(primitive="Diag", tensor="diag")
def diag(input):
    """MindSpore's ops.diag(input): the Tensor of rank 2k (input of rank k >= 1) with out[i..., i...] = input[i...]
    and zeros elsewhere (for a 1-D input, the diagonal matrix; DiagEmbed of the flattened input, reshaped).
    ValueError for a 0-d input."""
    x = _tensor_arg(input, "diag")
    if x.ndim == 0:
        raise ValueError("For 'diag', the input must have rank >= 1, but got a 0-d Tensor.")
    n = x.size
    out = _core.diag_embed(x if x.ndim == 1 else _core.reshape(x, [-1]), [n, n], 0, 0, 1)
    return out if x.ndim == 1 else _core.reshape(out, list(x.shape) * 2)


def _band_arg(v, op, name):
    if isinstance(v, Tensor):
        if v.size != 1 or v.dtype not in mstype.int_type:
            raise TypeError(f"For '{op}', a Tensor '{name}' must be one integer, but got {_got(v)}.")
        return int(v.asnumpy().reshape(-1)[0])
    return int_arg(op, name, v)


@defop(primitive="MatrixBandPart")
def matrix_band_part(x, lower, upper):
    """MindSpore's ops.matrix_band_part(x, lower, upper): x (rank >= 2) with every element of its last two axes
    outside the band zeroed: kept where (lower < 0 or i − j <= lower) and (upper < 0 or j − i <= upper).
    lower/upper: ints or one-element integer Tensors. ValueError for rank < 2."""
    x = _tensor_arg(x, "matrix_band_part", "x")
    if x.ndim < 2:
        raise ValueError(f"For 'matrix_band_part', x must have rank >= 2, but got shape {tuple(x.shape)}.")
    lo = _band_arg(lower, "matrix_band_part", "lower")
    up = _band_arg(upper, "matrix_band_part", "upper")
    m, n = x.shape[-2:]
    i = np.arange(m).reshape(m, 1)
    j = np.arange(n).reshape(1, n)
    keep = np.ones((m, n), bool)
    if lo >= 0:
        keep &= i - j <= lo
    if up >= 0:
        keep &= j - i <= up
    return _core.select(Tensor(keep), x, _core.full([], 0.0, x.dtype))


# ---------------------------------------------------------------------------------------------- block rearranging

@defop()
def pixel_shuffle(input, upscale_factor):
    """MindSpore's ops.pixel_shuffle(input, upscale_factor): (*, C·r², H, W) -> (*, C, H·r, W·r): out[..., c, h·r +
    i, w·r + j] = in[..., c·r² + i·r + j, h, w] (rank >= 3). TypeError for a non-int factor, ValueError for r <= 0,
    rank < 3 or channels not divisible by r²."""
    x = _tensor_arg(input, "pixel_shuffle")
    r = int_arg("pixel_shuffle", "upscale_factor", upscale_factor)
    if r <= 0:
        raise ValueError(f"For 'pixel_shuffle', 'upscale_factor' must be > 0, but got {r}.")
    if x.ndim < 3:
        raise ValueError(f"For 'pixel_shuffle', the input must have rank >= 3, but got shape {tuple(x.shape)}.")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"For 'pixel_shuffle', the channels ({c}) must be divisible by upscale_factor² ({r * r}).")
    k = len(lead)
    y = _core.reshape(x, lead + [c // (r * r), r, r, h, w])
    y = _core.transpose(y, list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2])
    return _core.reshape(y, lead + [c // (r * r), h * r, w * r])


@defop()
def pixel_unshuffle(input, downscale_factor):
    """MindSpore's ops.pixel_unshuffle(input, downscale_factor): the inverse of pixel_shuffle, (*, C, H·r, W·r) ->
    (*, C·r², H, W). ValueError for r <= 0, rank < 3 or H, W not divisible by r."""
    x = _tensor_arg(input, "pixel_unshuffle")
    r = int_arg("pixel_unshuffle", "downscale_factor", downscale_factor)
    if r <= 0:
        raise ValueError(f"For 'pixel_unshuffle', 'downscale_factor' must be > 0, but got {r}.")
    if x.ndim < 3:
        raise ValueError(f"For 'pixel_unshuffle', the input must have rank >= 3, but got shape {tuple(x.shape)}.")
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"For 'pixel_unshuffle', height {h} and width {w} must be divisible by {r}.")
    k = len(lead)
    y = _core.reshape(x, lead + [c, h // r, r, w // r, r])
    y = _core.transpose(y, list(range(k)) + [k, k + 2, k + 4, k + 1, k + 3])
    return _core.reshape(y, lead + [c * r * r, h // r, w // r])


def _block_arg(block, m_default, op, name):
    if _is_int(block):
        return [int(block)] * m_default
    return list(shape_arg(op, name, block, 1))


def _pairs(p, m, op, name):
    if isinstance(p, Tensor):
        p = p.asnumpy().tolist()
    try:
        pairs = [tuple(int(v) for v in q) for q in p]
    except TypeError:
        raise TypeError(f"For '{op}', '{name}' must be a list of [begin, end] pairs, but got {_got(p)}.") from None
    if len(pairs) != m or any(len(q) != 2 or min(q) < 0 for q in pairs):
        raise ValueError(f"For '{op}', '{name}' must hold {m} non-negative [begin, end] pairs, but got {p}.")
    return pairs


@defop(primitive="SpaceToBatchND", prim_attrs={"block_shape": ("block_size", 1), "paddings": ("paddings", ())})
def space_to_batch_nd(input_x, block_size, paddings):
    """MindSpore's ops.space_to_batch_nd(input_x, block_size, paddings): the last M axes of input_x (N, C, *spatial)
    are padded (paddings: M [begin, end] pairs) and cut into blocks: output (N·Πb, C, *(padded_i / b_i)), the batch
    index being (block offset) · N + n (block offsets row-major). block_size: an int (M = 2) or M ints. ValueError
    for padded sizes not divisible by the block, bad pairs or rank."""
    x = _tensor_arg(input_x, "space_to_batch_nd", "input_x")
    block = _block_arg(block_size, 2, "space_to_batch_nd", "block_size")
    m = len(block)
    if x.ndim < m + 1:
        raise ValueError(f"For 'space_to_batch_nd', input_x must have rank >= {m + 1}, but got shape "
                         f"{tuple(x.shape)}.")
    pairs = _pairs(paddings, m, "space_to_batch_nd", "paddings")
    full = [(0, 0)] * (x.ndim - m) + pairs
    if any(pairs_i != (0, 0) for pairs_i in pairs):
        x = pad_pairs(x, full, "constant", 0, "space_to_batch_nd")
    lead = list(x.shape[:x.ndim - m])
    sp = list(x.shape[x.ndim - m:])
    for s, b in zip(sp, block):
        if s % b:
            raise ValueError(f"For 'space_to_batch_nd', padded spatial sizes {sp} must be divisible by block "
                             f"{block}.")
    n, rest = lead[0], lead[1:]
    shape = [n] + rest
    for s, b in zip(sp, block):
        shape += [s // b, b]
    y = _core.reshape(x, shape)
    k = len(rest)
    block_axes = [1 + k + 2 * i + 1 for i in range(m)]
    out_axes = [1 + k + 2 * i for i in range(m)]
    y = _core.transpose(y, block_axes + [0] + list(range(1, 1 + k)) + out_axes)
    return _core.reshape(y, [n * math.prod(block)] + rest + [s // b for s, b in zip(sp, block)])


@defop(primitive="BatchToSpaceND", prim_attrs={"block_shape": ("block_shape", 1), "crops": ("crops", ())})
def batch_to_space_nd(input_x, block_shape, crops):
    """MindSpore's ops.batch_to_space_nd(input_x, block_shape, crops): the inverse of space_to_batch_nd: input_x
    (N·Πb, C, *spatial) -> (N, C, *(spatial_i·b_i − crop_begin_i − crop_end_i)). ValueError for a batch not
    divisible by Πb, bad crops or rank."""
    x = _tensor_arg(input_x, "batch_to_space_nd", "input_x")
    block = _block_arg(block_shape, 2, "batch_to_space_nd", "block_shape")
    m = len(block)
    if x.ndim < m + 1:
        raise ValueError(f"For 'batch_to_space_nd', input_x must have rank >= {m + 1}, but got shape "
                         f"{tuple(x.shape)}.")
    crops = _pairs(crops, m, "batch_to_space_nd", "crops")
    nb = math.prod(block)
    if x.shape[0] % nb:
        raise ValueError(f"For 'batch_to_space_nd', the batch {x.shape[0]} must be divisible by Πblock_shape "
                         f"({nb}).")
    n = x.shape[0] // nb
    rest = list(x.shape[1:x.ndim - m])
    sp = list(x.shape[x.ndim - m:])
    k = len(rest)
    y = _core.reshape(x, block + [n] + rest + sp)
    perm = [m] + list(range(m + 1, m + 1 + k))
    for i in range(m):
        perm += [m + 1 + k + i, i]
    y = _core.transpose(y, perm)
    full = [s * b for s, b in zip(sp, block)]
    y = _core.reshape(y, [n] + rest + full)
    begin = [0] * (1 + k) + [c[0] for c in crops]
    end = [n] + rest + [f - c[1] for f, c in zip(full, crops)]
    if any(e < b for b, e in zip(begin, end)):
        raise ValueError(f"For 'batch_to_space_nd', crops {crops} exceed the output sizes {full}.")
    return _core.strided_slice(y, begin, end, [1] * y.ndim)


@defop(primitive="MirrorPad", prim_attrs={"mode": ("mode", "REFLECT")})
def mirror_pad(input_x, paddings, mode="REFLECT"):
    """MindSpore's ops.mirror_pad(input_x, paddings, mode): input_x padded by reflection: paddings is an (rank, 2)
    integer Tensor (or nested list) of [before, after] counts per axis; 'REFLECT' mirrors without repeating the
    edge (counts < the axis' length), 'SYMMETRIC' repeats it (counts <= the length). One C++ op, MirrorPad
    (src/ops/im2col.cpp); gradient: MirrorPadGrad (each padded copy adds to the cell it copies). ValueError for a bad
    mode or counts, TypeError for a bad paddings."""
    x = _tensor_arg(input_x, "mirror_pad", "input_x")
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"For 'mirror_pad', 'mode' must be 'REFLECT' or 'SYMMETRIC', but got {mode!r}.")
    pairs = _pairs(paddings, x.ndim, "mirror_pad", "paddings")
    for ax, ((b, e), n) in enumerate(zip(pairs, x.shape)):
        limit = n - 1 if mode == "REFLECT" else n
        if b > limit or e > limit:
            raise ValueError(f"For 'mirror_pad', paddings {pairs[ax]} on axis {ax} (length {n}) must be <= "
                             f"{limit} in {mode} mode.")
    return _core.mirror_pad(x, [v for q in pairs for v in q], mode)


def _pair2(v, op, name, minimum):
    vals = [v, v] if _is_int(v) else list(v) if isinstance(v, (tuple, list)) else None
    if vals is None or len(vals) != 2 or not all(_is_int(a) for a in vals):
        raise TypeError(f"For '{op}', '{name}' must be an int or a pair of ints, but got {_got(v)}.")
    vals = [int(a) for a in vals]
    if any(a < minimum for a in vals):
        raise ValueError(f"For '{op}', '{name}' must be >= {minimum}, but got {vals}.")
    return vals


def _block_grid(h, w, kernel, dilation, padding, stride, op):
    """The block grid (oh, ow) of a kernel over an h × w plane padded by `padding` on each side; ValueError naming
    `op` when the kernel does not fit."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    hp, wp = h + 2 * ph, w + 2 * pw
    eh, ew = hp - dh * (kh - 1) - 1, wp - dw * (kw - 1) - 1
    if eh < 0 or ew < 0:
        raise ValueError(f"For '{op}', the kernel {kernel} (dilation {dilation}) does not fit the padded input "
                         f"{hp}×{wp}.")
    return eh // sh + 1, ew // sw + 1


@defop(tensor="unfold", mint="nn.functional.unfold")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """MindSpore's ops.unfold(input, kernel_size, dilation=1, padding=0, stride=1) (im2col): the sliding kH × kW
    blocks of a 4-D (N, C, H, W) input (zero-padded by `padding` on each side) as columns: (N, C·kH·kW, L), L the
    number of block positions, channel-major then kernel row-major. Arguments: ints or pairs. One C++ op, Im2Col
    (src/ops/im2col.cpp); gradient: Col2Im (fold). ValueError for a non-4-D input, non-positive sizes or a kernel
    larger than the padded input; TypeError for non-int arguments."""
    x = _tensor_arg(input, "unfold")
    if x.ndim != 4:
        raise ValueError(f"For 'unfold', the input must be 4-D (N, C, H, W), but got shape {tuple(x.shape)}.")
    kernel = _pair2(kernel_size, "unfold", "kernel_size", 1)
    dil = _pair2(dilation, "unfold", "dilation", 1)
    pad = _pair2(padding, "unfold", "padding", 0)
    st = _pair2(stride, "unfold", "stride", 1)
    _block_grid(x.shape[2], x.shape[3], kernel, dil, pad, st, "unfold")
    return _core.im2col(x, kernel, dil, pad, st)


@defop(tensor="fold", mint="nn.functional.fold")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """MindSpore's ops.fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) (col2im): the
    adjoint of unfold: columns (N, C·kH·kW, L) summed back into an (N, C, H, W) image, H, W = output_size (a pair of
    ints or a 2-element integer Tensor); overlapping blocks add. One C++ op, Col2Im (src/ops/im2col.cpp); gradient:
    Im2Col (unfold). ValueError for a non-3-D input or shapes that do not match the block grid; TypeError for
    non-int arguments."""
    x = _tensor_arg(input, "fold")
    size = list(shape_arg("fold", "output_size", output_size, 1))
    if len(size) != 2:
        raise ValueError(f"For 'fold', 'output_size' must have 2 values, but got {size}.")
    kernel = _pair2(kernel_size, "fold", "kernel_size", 1)
    dil = _pair2(dilation, "fold", "dilation", 1)
    pad = _pair2(padding, "fold", "padding", 0)
    st = _pair2(stride, "fold", "stride", 1)
    if x.ndim != 3:
        raise ValueError(f"For 'fold', the input must be 3-D (N, C·kH·kW, L), but got shape {tuple(x.shape)}.")
    oh, ow = _block_grid(size[0], size[1], kernel, dil, pad, st, "fold")
    kk, length = kernel[0] * kernel[1], oh * ow
    if x.shape[1] % kk or x.shape[2] != length:
        raise ValueError(f"For 'fold', the input of shape {tuple(x.shape)} does not match kernel {kernel} over "
                         f"output_size {size} ((N, C·{kk}, {length}) expected).")
    return _core.col2im(x, size, kernel, dil, pad, st)


# ---------------------------------------------------------------------------------------------- matrix_diag family
# TensorFlow's MatrixDiagV3 / MatrixDiagPartV3 / MatrixSetDiagV3 semantics, which MindSpore 2.10 follows: the
# diagonals k[0] <= d <= k[1] of an M × N matrix are stacked from d = k[1] down to k[0], each padded to the longest
# one's length; `align` ("RIGHT_LEFT" by default) says how superdiagonals (d >= 0, the first word) and subdiagonals
# (the second word) sit in their padded rows.

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _k_range(k, op):
    if isinstance(k, Tensor):
        if k.dtype not in mstype.int_type or k.size not in (1, 2):
            raise TypeError(f"For '{op}', a Tensor 'k' must hold 1 or 2 integers, but got {_got(k)}.")
        vals = [int(v) for v in k.asnumpy().reshape(-1)]
    elif _is_int(k):
        vals = [int(k)]
    elif isinstance(k, (tuple, list)) and len(k) in (1, 2) and all(_is_int(v) for v in k):
        vals = [int(v) for v in k]
    else:
        raise TypeError(f"For '{op}', 'k' must be an int, a pair of ints or an integer Tensor, but got {_got(k)}.")
    k0, k1 = vals[0], vals[-1]
    if k0 > k1:
        raise ValueError(f"For '{op}', k[0] ({k0}) must be <= k[1] ({k1}).")
    return k0, k1


def _align_arg(align, op):
    if align not in _ALIGNS:
        raise ValueError(f"For '{op}', 'align' must be one of {_ALIGNS}, but got {align!r}.")
    return align


def _diag_table(m, n, k0, k1, align, op):
    """(cells, slots, max_len): the flat matrix positions of the diagonals k1 … k0 and, for each, its flat slot
    (row · max_len + j) in the stacked (num_diags, max_len) layout."""
    for d in (k0, k1):
        if not -m < d < n and not (m == 0 or n == 0):
            raise ValueError(f"For '{op}', the diagonal {d} is outside a {m} × {n} matrix.")
    lens = {d: builtins.max(0, builtins.min(m + builtins.min(0, d), n - builtins.max(0, d)))
            for d in range(k0, k1 + 1)}
    max_len = builtins.max(lens.values()) if lens else 0
    super_right, sub_right = align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT"
    cells, slots = [], []
    for row, d in enumerate(range(k1, k0 - 1, -1)):
        length = lens[d]
        right = super_right if d >= 0 else sub_right
        shift = max_len - length if right else 0
        for j in range(length):
            r, c = (j, j + d) if d >= 0 else (j - d, j)
            cells.append(r * n + c)
            slots.append(row * max_len + shift + j)
    return np.array(cells, np.int64), np.array(slots, np.int64), max_len


def _pad_value(v, dtype, op):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"For '{op}', 'padding_value' must have one element, but got shape {tuple(v.shape)}.")
        v = _core.reshape(v, [])
        return v if v.dtype == dtype else _core.cast(v, dtype)
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        raise TypeError(f"For '{op}', 'padding_value' must be a number or a one-element Tensor, but got {_got(v)}.")
    return Tensor(np.asarray(v).astype(mstype.dtype_to_nptype(dtype)), dtype)


@defop(primitive="MatrixDiagPartV3", prim_attrs={"align": ("align", "RIGHT_LEFT")})
def matrix_diag_part(x, k, padding_value, align="RIGHT_LEFT"):
    """MindSpore's ops.matrix_diag_part(x, k, padding_value, align='RIGHT_LEFT'): the diagonals k (an int, a pair
    (k0, k1) or a Tensor of them) of the last two axes of x (..., M, N): shape (..., max_len) for one diagonal,
    (..., k1 − k0 + 1, max_len) for a range (from k1 down to k0), shorter diagonals padded with padding_value as
    `align` places them (module section); one diagonal is a copy of the Diagonal view (TensorCopy). Gradient: into
    the diagonals. ValueError for rank < 2, k outside the matrix, k0 > k1 or a bad align."""
    x = _tensor_arg(x, "matrix_diag_part", "x")
    if x.ndim < 2:
        raise ValueError(f"For 'matrix_diag_part', x must have rank >= 2, but got shape {tuple(x.shape)}.")
    k0, k1 = _k_range(k, "matrix_diag_part")
    align = _align_arg(align, "matrix_diag_part")
    m, n = x.shape[-2:]
    if k0 == k1:  # one diagonal: no padding, so align and padding_value (checked) play no part
        if isinstance(padding_value, Tensor):
            _pad_value(padding_value, x.dtype, "matrix_diag_part")
        elif isinstance(padding_value, bool) or not isinstance(padding_value, (int, float, np.number)):
            raise TypeError("For 'matrix_diag_part', 'padding_value' must be a number or a one-element Tensor, but "
                            f"got {_got(padding_value)}.")
        if not -m < k0 < n and not (m == 0 or n == 0):
            raise ValueError(f"For 'matrix_diag_part', the diagonal {k0} is outside a {m} × {n} matrix.")
        # a copy of the Diagonal view: MindSpore's result is a new tensor (a write into it must not reach x)
        return _core.tensor_copy(_core.diagonal(x, k0, -2, -1))
    def build():
        cells, slots, max_len = _diag_table(m, n, k0, k1, align, "matrix_diag_part")
        idx = np.full((k1 - k0 + 1) * max_len, m * n, np.int64)  # m·n: the padding slot
        idx[slots] = cells
        return Tensor(idx), max_len
    idx, max_len = _static_tables(("matrix_diag_part", m, n, k0, k1, align), build)
    nd = k1 - k0 + 1
    lead = list(x.shape[:-2])
    pad = _core.broadcast_to(_pad_value(padding_value, x.dtype, "matrix_diag_part"), lead + [1])
    flat = _core.concat([_core.reshape(x, lead + [m * n]), pad], len(lead))
    out = _core.gather(flat, idx, len(lead))
    return _core.reshape(out, lead + ([max_len] if nd == 1 else [nd, max_len]))


def _diagonals_in(diag, k0, k1, op):
    nd = k1 - k0 + 1
    if nd == 1:
        if diag.ndim < 1:
            raise ValueError(f"For '{op}', the diagonal must have rank >= 1, but got a 0-d Tensor.")
        return list(diag.shape[:-1]), diag.shape[-1]
    if diag.ndim < 2 or diag.shape[-2] != nd:
        raise ValueError(f"For '{op}', the diagonals of k = ({k0}, {k1}) must have shape (..., {nd}, max_len), but "
                         f"got {tuple(diag.shape)}.")
    return list(diag.shape[:-2]), diag.shape[-1]


def _diag_set_tables(m, n, k0, k1, align, op):
    """(longest diagonal, spread tables (where, src_of) or None) of the diagonals k0 … k1 of m × n matrices in the
    `align` layout, cached per (m, n, k0, k1, align): where marks the flat cells on them, src_of the flat slot of the
    stacked (num_diags, max_len) diagonals each cell takes."""
    def build():
        cells, slots, max_len = _diag_table(m, n, k0, k1, align, op)
        if len(cells) == 0:
            return max_len, None
        where = np.zeros(m * n, bool)
        where[cells] = True
        src_of = np.zeros(m * n, np.int64)
        src_of[cells] = slots
        return max_len, (Tensor(where), Tensor(src_of))
    return _static_tables(("diag_set", m, n, k0, k1, align), build)


def _scatter_diagonals(base, diag, tables, lead):
    """base (lead..., size) with diag's flattened (lead..., nd·max_len) values written as `tables` (where, src_of:
    _diag_set_tables'; None: no cell) place them."""
    if tables is None:
        return base
    where, src_of = tables
    spread = _core.gather(_core.reshape(diag, lead + [-1]), src_of, len(lead))
    return _core.select(where, spread, base)


@defop(primitive="MatrixDiagV3", prim_attrs={"align": ("align", "RIGHT_LEFT")})
def matrix_diag(x, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """MindSpore's ops.matrix_diag(x, k=0, num_rows=-1, num_cols=-1, padding_value=0, align='RIGHT_LEFT'): matrices
    (..., num_rows, num_cols) with the diagonals k taken from x ((..., max_len) for one diagonal, (..., k1 − k0 +
    1, max_len) for a range, rows from k1 down to k0, placed as `align` says) and padding_value elsewhere. -1 sizes
    take the smallest square that holds the diagonals (TensorFlow's MatrixDiagV3 rule); one diagonal with padding 0
    is one DiagEmbed. Gradient: the diagonals back. ValueError for shapes or sizes that do not fit."""
    x = _tensor_arg(x, "matrix_diag", "x")
    k0, k1 = _k_range(k, "matrix_diag")
    align = _align_arg(align, "matrix_diag")
    lead, max_len = _diagonals_in(x, k0, k1, "matrix_diag")
    num_rows = int_arg("matrix_diag", "num_rows", num_rows)
    num_cols = int_arg("matrix_diag", "num_cols", num_cols)
    min_rows = max_len - builtins.min(k1, 0)
    min_cols = max_len + builtins.max(k0, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = builtins.max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    want, tables = _diag_set_tables(num_rows, num_cols, k0, k1, align, "matrix_diag")
    if want != max_len:
        raise ValueError(f"For 'matrix_diag', diagonals of length {max_len} do not fit a {num_rows} × {num_cols} "
                         f"matrix with k = ({k0}, {k1}) (its longest diagonal has length {want}).")
    if k0 == k1 and type(padding_value) in (int, float) and padding_value == 0 and math.copysign(1.0, padding_value) > 0:
        return _core.diag_embed(x, lead + [num_rows, num_cols], k0, -2, -1)  # one diagonal on zeros: DiagEmbed
    size = num_rows * num_cols
    base = _core.broadcast_to(_pad_value(padding_value, x.dtype, "matrix_diag"), lead + [size])
    out = _scatter_diagonals(base, x, tables, lead)
    return _core.reshape(out, lead + [num_rows, num_cols])


@defop(primitive="MatrixSetDiagV3", prim_attrs={"align": ("align", "RIGHT_LEFT")})
def matrix_set_diag(x, diagonal, k=0, align="RIGHT_LEFT"):
    """MindSpore's ops.matrix_set_diag(x, diagonal, k=0, align='RIGHT_LEFT'): a copy of x (..., M, N) whose
    diagonals k are replaced by `diagonal` (the layout matrix_diag_part returns for k and align, x's dtype).
    Gradient w.r.t. x (off those diagonals) and diagonal. ValueError for shapes that do not match, TypeError for
    dtypes that differ."""
    x = _tensor_arg(x, "matrix_set_diag", "x")
    dg = _tensor_arg(diagonal, "matrix_set_diag", "diagonal")
    if x.ndim < 2:
        raise ValueError(f"For 'matrix_set_diag', x must have rank >= 2, but got shape {tuple(x.shape)}.")
    if dg.dtype != x.dtype:
        raise TypeError(f"For 'matrix_set_diag', 'diagonal' must have x's dtype ({x.dtype}), but got {dg.dtype}.")
    k0, k1 = _k_range(k, "matrix_set_diag")
    align = _align_arg(align, "matrix_set_diag")
    m, n = x.shape[-2:]
    max_len, tables = _diag_set_tables(m, n, k0, k1, align, "matrix_set_diag")
    nd = k1 - k0 + 1
    lead = list(x.shape[:-2])
    want = tuple(lead) + ((max_len,) if nd == 1 else (nd, max_len))
    if tuple(dg.shape) != want:
        raise ValueError(f"For 'matrix_set_diag', 'diagonal' must have shape {want}, but got {tuple(dg.shape)}.")
    out = _scatter_diagonals(_core.reshape(x, lead + [m * n]), dg, tables, lead)
    return _core.reshape(out, list(x.shape))
