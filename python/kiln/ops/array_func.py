"""Array functions of mindspore.ops built from Kiln's existing ops (so autodiff, PyNative and Graph mode come with
them): tile, one_hot, gather_nd, repeat_elements, reciprocal, dtype, pad, sort, argsort, topk.

Each is a composition of C++ ops; the registry (tests/python/op_registry/) checks each against NumPy, its gradient
against float64 finite differences and PyNative against Graph mode, like any op.
"""
import math

import numpy as np

from .._loader import _core
from .._args import int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg

__all__ = ["tile", "one_hot", "gather_nd", "repeat_elements", "reciprocal", "dtype", "pad", "sort", "argsort", "topk"]


def tile(input, dims):
    """MindSpore's ops.tile(input, dims): `input` repeated dims[i] times along axis i.

    input: a Tensor of shape s (any dtype). dims: a tuple/list of ints ≥ 0. When len(dims) < input.ndim, dims is
    padded with leading 1s; when len(dims) > input.ndim, input's shape is padded with leading 1s (NumPy's np.tile).
    Returns shape (dims[i] · s[i], ...), input's dtype. Gradient: the sum over the copies.
    Raises TypeError for a non-Tensor input or non-int dims, ValueError for a negative dim.

    Computed as reshape → broadcast_to → reshape: x viewed as (1, s0, 1, s1, ...) broadcast to (d0, s0, d1, s1, ...).
    """
    x = _tensor_arg(input, "Tile")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"For 'Tile', 'dims' must be a tuple or list of ints, but got {type(dims).__name__}.")
    dims = [int_arg("Tile", "dims", d) for d in dims]
    for i, d in enumerate(dims):
        if d < 0:
            raise ValueError(f"For 'Tile', 'dims' cannot contain negative integer numbers, but got {d} in {i}th.")
    shape = list(x.shape)
    n = max(len(shape), len(dims))
    shape = [1] * (n - len(shape)) + shape
    dims = [1] * (n - len(dims)) + dims
    if all(d == 1 for d in dims):
        return _core.reshape(x, shape) if len(shape) != x.ndim else _core.identity(x)
    inter = [v for s in shape for v in (1, s)]
    target = [v for d, s in zip(dims, shape) for v in (d, s)]
    y = _core.broadcast_to(_core.reshape(x, inter), target)
    return _core.reshape(y, [d * s for d, s in zip(dims, shape)])


def _scalar_tensor(value, op, name):
    """A 0-d Tensor from a Python number or a one-element Tensor (MindSpore's on_value/off_value)."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"For '{op}', '{name}' must be a number or a Tensor with one element, but got shape "
                             f"{value.shape}.")
        return _core.reshape(value, [])
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"For '{op}', '{name}' must be a number or a Tensor, but got {type(value).__name__}.")
    return Tensor(value)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """MindSpore's ops.one_hot(indices, depth, on_value=1, off_value=0, axis=-1).

    indices: an int32/int64 Tensor of shape S. depth: int ≥ 0. on_value/off_value: numbers or one-element Tensors
    of one dtype (Python ints give int64, as MindSpore 2.10). axis: where the new dim of size depth goes, in
    [-1, len(S)]. Returns shape S with depth inserted at axis, on_value's dtype: on_value where indices[...] == the
    position along the new dim, off_value elsewhere (an index outside [0, depth), e.g. -1, gives a row of
    off_value). Raises TypeError for float indices or mismatched on/off dtypes, ValueError for a bad depth/axis.
    """
    idx = _tensor_arg(indices, "OneHot", "indices")
    if idx.dtype not in (mstype.int32, mstype.int64, mstype.uint8):
        raise TypeError(f"For 'OneHot', 'indices' must be an int32, int64 or uint8 Tensor, but got {idx.dtype}.")
    depth = int_arg("OneHot", "depth", depth, minimum=0)
    axis = int_arg("OneHot", "axis", axis)
    if not -1 <= axis <= idx.ndim:
        raise ValueError(f"For 'OneHot', 'axis' must be in range [-1, {idx.ndim}], but got {axis}.")
    on = _scalar_tensor(on_value, "OneHot", "on_value")
    off = _scalar_tensor(off_value, "OneHot", "off_value")
    if on.dtype != off.dtype:
        raise TypeError(f"For 'OneHot', 'on_value' and 'off_value' must have one dtype, but got {on.dtype} and "
                        f"{off.dtype}.")
    pos = idx.ndim if axis == -1 else axis
    positions = _core.arange(0.0, float(depth), 1.0, idx.dtype)
    positions = _core.reshape(positions, [depth] + [1] * (idx.ndim - pos))
    hit = _core.equal(_core.expand_dims(idx, pos), positions)
    return _core.select(hit, on, off)


def gather_nd(input_x, indices):
    """MindSpore's ops.gather_nd(input_x, indices): slices of input_x picked by index tuples.

    input_x: shape (s0, ..., s_{r-1}). indices: an int32/int64 Tensor of shape (..., K), K ≤ r; each index tuple
    must lie inside s0..s_{K-1} (ValueError naming the first bad index otherwise, also in Graph mode: checked when
    the op runs; MindSpore raises RuntimeError). Returns shape
    (..., s_K, ..., s_{r-1}), input_x's dtype. Gradient: a scatter-add into input_x's shape.
    Computed as a gather along axis 0 of input_x reshaped to (s0·…·s_{K-1}, s_K, ...) at the linear indices
    Σ_k indices[..., k] · stride_k.
    """
    x = _tensor_arg(input_x, "GatherNd", "input_x")
    idx = _tensor_arg(indices, "GatherNd", "indices")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For 'GatherNd', 'indices' must be an int32 or int64 Tensor, but got {idx.dtype}.")
    if idx.ndim < 1:
        raise ValueError("For 'GatherNd', 'indices' must have rank >= 1 (its last dim is the index tuple), but got a "
                         "0-d Tensor.")
    k = idx.shape[-1]
    if k > x.ndim:
        raise ValueError(f"For 'GatherNd', the last dim of 'indices' ({k}) must be at most the rank of 'input_x' "
                         f"({x.ndim}); got indices shape {idx.shape} and input_x shape {x.shape}.")
    lead, rest = list(x.shape[:k]), list(x.shape[k:])
    idx64 = _core.cast(idx, mstype.int64)
    linear = None
    stride = 1
    for j in reversed(range(k)):
        comp = _core.strided_slice(idx64, [0] * (idx.ndim - 1) + [j], list(idx.shape[:-1]) + [j + 1],
                                   [1] * idx.ndim)
        comp = _core.check_range(comp, "GatherNd", f"indices[..., {j}] (dim {j} of input_x shape {tuple(x.shape)})",
                                 0.0, float(lead[j]))
        term = comp if stride == 1 else _core.mul(comp, Tensor(np.int64(stride)))
        linear = term if linear is None else _core.add(linear, term)
        stride *= lead[j]
    out_lead = list(idx.shape[:-1])
    if linear is None:  # K == 0: every index tuple is empty and picks the whole input
        linear = _core.full(out_lead + [1], 0.0, mstype.int64)
    linear = _core.reshape(linear, out_lead)
    flat = _core.reshape(x, [math.prod(lead)] + rest)
    return _core.gather(flat, linear, 0)


def repeat_elements(x, rep, axis=0):
    """MindSpore's ops.repeat_elements(x, rep, axis=0): each element repeated `rep` times along `axis` (np.repeat
    with an int count). x: any Tensor of rank ≥ 1; rep: int ≥ 1. Returns x.shape with shape[axis] · rep. Gradient:
    the sum over the copies. Raises TypeError/ValueError for bad rep or axis."""
    x = _tensor_arg(x, "repeat_elements", "x")
    rep = int_arg("repeat_elements", "rep", rep, minimum=1)
    axis = int_arg("repeat_elements", "axis", axis)
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"For 'repeat_elements', 'axis' must be in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"but got {axis}.")
    axis %= x.ndim
    shape = list(x.shape)
    y = _core.expand_dims(x, axis + 1)
    y = _core.broadcast_to(y, shape[:axis + 1] + [rep] + shape[axis + 1:])
    return _core.reshape(y, shape[:axis] + [shape[axis] * rep] + shape[axis + 1:])


def reciprocal(input):
    """MindSpore's ops.reciprocal(input): 1 / input elementwise. Integer and bool inputs give float32 (as MindSpore
    2.10); 1/0 gives inf. Gradient: −1/input²."""
    x = _tensor_arg(input, "Reciprocal")
    if not mstype.is_float(x.dtype) and not mstype.is_complex(x.dtype):  # complex: 1 / x as a complex division
        x = _core.cast(x, mstype.float32)
    return _core.div(1.0, x)  # a Python scalar is weak: the result keeps x's dtype


def dtype(input):
    """MindSpore's ops.dtype(input): the Tensor's dtype (a kiln dtype such as kiln.float32)."""
    return _tensor_arg(input, "DType").dtype


# mode of ops.pad -> NumPy's np.pad mode that gives the same index map along one axis
_INDEX_MODES = {"reflect": "reflect", "symmetric": "symmetric", "replicate": "edge", "circular": "wrap"}


def pad_pairs(x, pairs, mode, value, op):
    """x padded by pairs[i] = (before, after) along axis i (len(pairs) == x.ndim).

    mode "constant": `value` (0 when None) fills the new elements; a negative amount crops. The index modes
    ("reflect": mirror without the edge, "symmetric": mirror with it, "replicate": repeat the edge, "circular": wrap
    around) gather x at the indices np.pad's reflect/symmetric/edge/wrap give for arange(n) (reflect and symmetric:
    one MirrorPad op), so the gradient adds up every copy; their amounts must be ≥ 0, below n for reflect and at most n for symmetric and circular (ValueError
    naming `op`, as MindSpore's MirrorPad)."""
    if mode == "replicate" and any(b < 0 or a < 0 for b, a in pairs):
        # MindSpore's PadV3 'edge' crops the negative amounts first and repeats the edges of what is left
        x = pad_pairs(x, [(min(b, 0), min(a, 0)) for b, a in pairs], "constant", None, op)
        pairs = [(max(b, 0), max(a, 0)) for b, a in pairs]
    for i, (b, a) in enumerate(pairs):
        if mode != "constant" and (b < 0 or a < 0):
            raise ValueError(f"For '{op}', negative padding is only supported in 'constant' and 'replicate' modes, but "
                             f"got ({b}, {a}) for dim {i} in mode '{mode}'.")
        n = x.shape[i]
        if mode != "constant" and n == 0 and (b or a):
            raise ValueError(f"For '{op}', '{mode}' padding needs a non-empty dim {i} to copy from, but it has size "
                             "0.")
        limit = {"reflect": n - 1, "symmetric": n, "circular": n}.get(mode)
        if limit is not None and (b > limit or a > limit):
            raise ValueError(f"For '{op}', '{mode}' padding of dim {i} (size {n}) must be at most {limit}, but got "
                             f"({b}, {a}).")
    if mode in ("reflect", "symmetric"):
        if not any(b or a for b, a in pairs):
            return x
        # one MirrorPad op (src/ops/im2col.cpp): the same index map, its gradient the fold-back sum
        return _core.mirror_pad(x, [v for q in pairs for v in q], mode.upper())
    if mode != "constant":
        y = x
        for i, (b, a) in enumerate(pairs):
            if b or a:
                idx = np.pad(np.arange(x.shape[i]), (b, a), mode=_INDEX_MODES[mode])
                y = _core.gather(y, Tensor(idx.astype(np.int64)), i)
        return y
    # crop the negative amounts, then concatenate blocks of `value` for the positive ones
    shape = list(x.shape)
    begin = [max(-b, 0) for b, _ in pairs]
    end = [n - max(-a, 0) for n, (_, a) in zip(shape, pairs)]
    for i, (lo, hi) in enumerate(zip(begin, end)):
        if hi < lo:
            raise ValueError(f"For '{op}', the negative padding of dim {i} crops more than its size {shape[i]}: "
                             f"{pairs[i]}.")
    y = x
    if any(begin) or end != shape:
        y = _core.strided_slice(x, begin, end, [1] * x.ndim)
    fill = 0.0 if value is None else value
    if isinstance(fill, Tensor):
        fill = fill.asnumpy().item()
    for i, (b, a) in enumerate(pairs):
        if b <= 0 and a <= 0:
            continue
        parts = []
        cur = list(y.shape)
        if b > 0:
            parts.append(_core.full(cur[:i] + [b] + cur[i + 1:], float(fill), y.dtype))
        parts.append(y)
        if a > 0:
            parts.append(_core.full(cur[:i] + [a] + cur[i + 1:], float(fill), y.dtype))
        y = _core.concat(parts, i)
    return y


def pad(input_x, padding, mode="constant", value=None):
    """MindSpore's ops.pad(input_x, padding, mode='constant', value=None) (PyTorch's F.pad order).

    input_x: a Tensor of rank r. padding: a tuple/list of 2k ints, k ≤ r: (before, after) for the last dim, then
    for the one before it, and so on. mode: 'constant' (fill with `value`, 0 when None; negative amounts crop),
    'reflect', 'replicate' (negative amounts crop first, as MindSpore's PadV3) or 'circular' (see pad_pairs for
    their rules); negative amounts that leave a dim of size 0 (or crop more than it has) raise ValueError (as MindSpore). Returns input_x's dtype, each padded dim
    grown by before + after. Gradient: the sum over the copies of each element (constant fill gets none).
    Raises TypeError for a non-Tensor input or non-int padding, ValueError for an odd-length or too long padding,
    an unknown mode, a value given in a non-constant mode, or amounts the mode does not allow.
    """
    x = _tensor_arg(input_x, "pad", "input_x")
    if not isinstance(padding, (tuple, list)):
        raise TypeError(f"For 'pad', 'padding' must be a tuple or list of ints, but got {type(padding).__name__}.")
    padding = [int_arg("pad", "padding", p) for p in padding]
    if len(padding) % 2 or len(padding) > 2 * x.ndim:
        raise ValueError(f"For 'pad', 'padding' must have an even length of at most 2 * rank = {2 * x.ndim}, but got "
                         f"{len(padding)} values for input_x of shape {tuple(x.shape)}.")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"For 'pad', 'mode' must be one of 'constant', 'reflect', 'replicate', 'circular', but got "
                         f"{mode!r}.")
    if mode != "constant" and value is not None:
        raise ValueError(f"For 'pad', 'value' is only used in 'constant' mode, but got value={value!r} with mode "
                         f"{mode!r}.")
    pairs = [(0, 0)] * x.ndim
    for k in range(len(padding) // 2):
        pairs[x.ndim - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    for i, ((b, a), n) in enumerate(zip(pairs, x.shape)):
        if (b < 0 or a < 0) and n + b + a == 0:
            raise ValueError(f"For 'pad', the output size must be greater than 0, but padding ({b}, {a}) of dim {i} "
                             f"(size {n}) gives {n + b + a}.")
    return pad_pairs(x, pairs, mode, value, "pad")


def paddings_arg(paddings, x, op):
    """MindSpore's `paddings` ((before, after) per dim of x, non-negative ints) as a list of pairs; errors name op."""
    if not isinstance(paddings, (tuple, list)) or not all(isinstance(p, (tuple, list)) and len(p) == 2
                                                          for p in paddings):
        raise TypeError(f"For '{op}', 'paddings' must be a tuple of (before, after) pairs, but got {paddings!r}.")
    pairs = [(int_arg(op, "paddings", b, minimum=0), int_arg(op, "paddings", a, minimum=0)) for b, a in paddings]
    if len(pairs) != x.ndim:
        raise ValueError(f"For '{op}', the length of 'paddings' must be equal to the rank of 'input_x', but got "
                         f"{len(pairs)} vs {x.ndim}")
    return pairs


def _take_along(x, idx, axis):
    """x's elements at the Int64 `idx` (x's shape except along `axis`, where any length) along `axis` — NumPy's
    take_along_axis — as one GatherD (its gradient the scatter-add GatherDGrad); complex x, which GatherD does not
    take, as one Gather on the flattened x."""
    if not mstype.is_complex(x.dtype):
        return _core.gather_d(x, axis, idx)
    shape = list(x.shape)
    outer = math.prod(shape[:axis])
    n, inner = shape[axis], math.prod(shape[axis + 1:])
    m = idx.shape[axis]
    # linear index of x[o, idx[o, k, i], i] in x's row-major order: (o·n + idx)·inner + i
    o = np.arange(outer, dtype=np.int64).reshape([outer, 1, 1]) * (n * inner)
    i = np.arange(inner, dtype=np.int64).reshape([1, 1, inner])
    base = Tensor(o + i)
    lin = _core.add(_core.mul(_core.reshape(idx, [outer, m, inner]), Tensor(np.int64(inner))), base)
    flat = _core.gather(_core.reshape(x, [-1]), _core.reshape(lin, [-1]), 0)
    return _core.reshape(flat, list(idx.shape))


def _sort_axis(x, axis, op):
    axis = int_arg(op, "axis", axis)
    if x.ndim == 0:
        if axis not in (0, -1):
            raise ValueError(f"For '{op}', 'axis' must be 0 or -1 for a 0-d input, but got {axis}.")
        return 0
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"For '{op}', 'axis' must be in [{-x.ndim}, {x.ndim}) for input of shape {tuple(x.shape)}, "
                         f"but got {axis}.")
    return axis % x.ndim


def argsort(input, axis=-1, descending=False):
    """MindSpore's ops.argsort(input, axis=-1, descending=False): Int32 indices that sort `input` along `axis`.

    The sort is stable (equal values keep their order) and NaN counts as the largest value (NumPy's and PyTorch's
    rule; MindSpore 2.10's CPU kernels place NaN inconsistently). Raises TypeError for a non-Tensor or Bool input,
    ValueError for an axis out of range."""
    x = _tensor_arg(input, "argsort")
    axis = _sort_axis(x, axis, "argsort")
    if x.ndim == 0:
        return _core.full([], 0.0, mstype.int32)
    return _core.cast(_core.argsort(x, axis, bool(descending)), mstype.int32)


def sort(input_x, axis=-1, descending=False):
    """MindSpore's ops.sort(input_x, axis=-1, descending=False) → (values, indices Int32) along `axis`.

    Stable; NaN counts as the largest value (see argsort). Gradient: each value's gradient goes back to the element
    it came from. Raises TypeError for a non-Tensor or Bool input, ValueError for an axis out of range."""
    x = _tensor_arg(input_x, "sort", "input_x")
    axis = _sort_axis(x, axis, "sort")
    if x.ndim == 0:
        return _core.identity(x), _core.full([], 0.0, mstype.int32)
    idx = _core.argsort(x, axis, bool(descending))
    return _take_along(x, idx, axis), _core.cast(idx, mstype.int32)


def topk(input, k, dim=None, largest=True, sorted=True):
    """MindSpore's ops.topk(input, k, dim=None, largest=True, sorted=True) → (values, indices Int32): the k largest
    (largest=False: smallest) elements along `dim` (None: the last).

    The order is MindSpore 2.10's CPU kernel's, index for index (std::nth_element at k, then std::stable_sort: of
    the whole row when k > n/2, else of the first k; see src/ops/index.cpp): sorted=True gives the values in
    descending (largest=False: ascending) order; sorted=False gives them in nth_element's order, which is not
    sorted (k = n: the input's order). Among equal values, which indices are picked at the boundary and their order
    are nth_element's, as MindSpore's (not always the lower index first, whatever MindSpore's documentation says).
    A row holding a NaN (where MindSpore's comparator returns values that are not the k largest) is taken in the
    stable sorted order with NaN as the largest value, for both `sorted` values. Gradient: to the elements picked.
    Raises TypeError for a non-Tensor/Bool input or a non-int k, ValueError for k outside [0, size of dim] or a
    bad dim."""
    x = _tensor_arg(input, "topk")
    k = int_arg("topk", "k", k)
    axis = _sort_axis(x, -1 if dim is None else dim, "topk")
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n:
        raise ValueError(f"For 'topk', the k must be in [0, {n}] (the size of dim {axis} of input shape "
                         f"{tuple(x.shape)}), but got {k}.")
    if x.ndim == 0:
        return _core.identity(x), _core.full([], 0.0, mstype.int32)
    idx = _core.argsort_topk(x, axis, bool(largest), k, bool(sorted))
    if k < n:
        begin = [0] * x.ndim
        end = list(x.shape)
        end[axis] = k
        idx = _core.strided_slice(idx, begin, end, [1] * x.ndim)
    return _take_along(x, idx, axis), _core.cast(idx, mstype.int32)
