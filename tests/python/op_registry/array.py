"""Registry entries: reductions, shape ops, index ops (gather, scatter, sort, topk, pad, ...), item assignment."""

import numpy as np

import kiln
from kiln import Tensor, _core, ops


from .base import (
    ALL, BOOL, F16, F32, F64, FLOATS, I32, I64, NC, NUMERIC, OpInfo, Sample, UINTS, arr, np_broadcast_to,
    np_strided_slice_grad, np_uss, register, unary_samples)


# ---------------------------------------------------------------------------------------------- reductions

def _reduce_samples(low=-2.0, high=2.0, away=0.0, empty=True):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, low, high, away)
        yield Sample((a((3, 4)),), dict(axis=None, keepdims=False), desc="all")
        yield Sample((a((3, 4)),), dict(axis=1, keepdims=True))
        yield Sample((a((2, 3, 4)),), dict(axis=(0, 2), keepdims=False), desc="tuple axis")
        yield Sample((a((2, 3, 4)),), dict(axis=-1, keepdims=False), desc="negative axis")
        yield Sample((a((2, 3, 2)),), dict(axis=(-1, -3), keepdims=True), desc="negative tuple, keepdims")
        yield Sample((a(()),), dict(axis=None, keepdims=False), desc="0-d")
        yield Sample((a((1, 4)),), dict(axis=0, keepdims=False), desc="size-1 axis")
        yield Sample((NC(a((4, 3)), "T"),), dict(axis=0, keepdims=False), desc="transposed view")
        yield Sample((NC(a((2, 6)), "step"),), dict(axis=None, keepdims=True), desc="stepped view, all, keepdims")
        if empty:
            yield Sample((a((0, 3)),), dict(axis=0, keepdims=False), desc="empty reduced axis")
            yield Sample((a((0, 3)),), dict(axis=1, keepdims=True), desc="empty kept axis")
    return gen


def _np_reduce(fn):
    def ref(x, axis=None, keepdims=False):
        return np.asarray(fn(x, axis=axis, keepdims=keepdims))
    return ref


register(OpInfo("sum", ("ReduceSum",), lambda x, axis=None, keepdims=False: ops.sum(x, axis, keepdims),
                _np_reduce(np.sum), _reduce_samples(), ALL + UINTS, differentiable=True,
                notes="int32/bool sums are Int64 (as NumPy on Linux); UInt16/32/64 sums are UInt64 (NumPy)"))
register(OpInfo("tensor.sum", ("ReduceSum",), lambda x, axis=None, keepdims=False: x.sum(axis, keepdims=keepdims),
                _np_reduce(np.sum), _reduce_samples(empty=False), (F32,), differentiable=True))
register(OpInfo("mean", ("ReduceMean",), lambda x, axis=None, keepdims=False: ops.mean(x, axis, keepdims),
                _np_reduce(np.mean), _reduce_samples(empty=False), FLOATS + (I32,) + UINTS, differentiable=True,
                notes="int input → Float32 (R-f32); the mean over an empty axis is NaN (not sampled: NumPy warns)"))
register(OpInfo("prod", ("ReduceProd",), lambda x, axis=None, keepdims=False: ops.prod(x, axis, keepdims),
                _np_reduce(np.prod), _reduce_samples(0.5, 1.5, 0.5), FLOATS + (I32,) + UINTS, differentiable=True,
                tol={F16: (4e-3, 4e-3)}))
register(OpInfo("amax", ("ReduceMax",), lambda x, axis=None, keepdims=False: ops.amax(x, axis, keepdims),
                _np_reduce(np.max), _reduce_samples(empty=False), NUMERIC + (BOOL,) + UINTS, differentiable=True,
                nan_wins=np.inf, ties="split",
                notes="an empty reduced axis raises ValueError (no identity), as NumPy"))
register(OpInfo("amin", ("ReduceMin",), lambda x, axis=None, keepdims=False: ops.amin(x, axis, keepdims),
                _np_reduce(np.min), _reduce_samples(empty=False), NUMERIC + UINTS, differentiable=True,
                nan_wins=-np.inf, ties="split"))


def _arg_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)  # ints: ties → the first index, as NumPy
    yield Sample((a((3, 4)),), dict(axis=None, keepdims=False), desc="flattened")
    yield Sample((a((3, 4)),), dict(axis=1, keepdims=False))
    yield Sample((a((2, 3, 4)),), dict(axis=-2, keepdims=True), desc="negative axis, keepdims")
    yield Sample((a((5,)),), dict(axis=0, keepdims=False), desc="1-D")
    yield Sample((a(()),), dict(axis=None, keepdims=False), desc="0-d")
    yield Sample((NC(a((4, 3)), "T"),), dict(axis=0, keepdims=False), desc="transposed view")


register(OpInfo("argmax", ("Argmax",), lambda x, axis=None, keepdims=False: ops.argmax(x, axis, keepdims),
                lambda x, axis=None, keepdims=False: np.asarray(np.argmax(x, axis=axis, keepdims=keepdims)),
                _arg_samples, NUMERIC + UINTS, ref_upcast=False))
register(OpInfo("argmin", ("Argmin",), lambda x, axis=None, keepdims=False: ops.argmin(x, axis, keepdims),
                lambda x, axis=None, keepdims=False: np.asarray(np.argmin(x, axis=axis, keepdims=keepdims)),
                _arg_samples, NUMERIC + UINTS, ref_upcast=False))
register(OpInfo("max_with_indices", ("Gather", "Argmax"), lambda x, axis: ops.max(x, axis),
                lambda x, axis: (np.max(x, axis), np.argmax(x, axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(axis=1)),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"),), dict(axis=-1))]),
                (F32, F64), ref_upcast=False, differentiable=True, nan_wins=np.inf, ties="first",
                notes="ops.max with an int axis returns (values, indices) as MindSpore 2.x; the gradient goes to "
                      "the returned index (ArgMaxWithValue)"))
register(OpInfo("min_with_indices", ("Gather", "Argmin"), lambda x, axis: ops.min(x, axis),
                lambda x, axis: (np.min(x, axis), np.argmin(x, axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(axis=0))]),
                (F32, F64), ref_upcast=False, differentiable=True, nan_wins=-np.inf, ties="first"))


# ---------------------------------------------------------------------------------------------- shapes

def _reshape_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3, 4)),), dict(shape=(6, 4)))
    yield Sample((a((2, 3, 4)),), dict(shape=(-1,)), desc="-1")
    yield Sample((a((2, 6)),), dict(shape=(3, -1, 2)), desc="-1 in the middle")
    yield Sample((a(()),), dict(shape=(1, 1)), desc="0-d to 2-D")
    yield Sample((a((1,)),), dict(shape=()), desc="to 0-d")
    yield Sample((a((0, 3)),), dict(shape=(3, 0)), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), dict(shape=(12,)), desc="transposed view (copies)")
    yield Sample((NC(a((2, 4)), "step"),), dict(shape=(4, 2)), desc="stepped view")


register(OpInfo("reshape", ("Reshape",), ops.reshape, np.reshape, _reshape_samples, ALL + UINTS, differentiable=True))


def _transpose_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3, 4)),), dict(input_perm=(2, 0, 1)))
    yield Sample((a((3, 4)),), dict(input_perm=(1, 0)))
    yield Sample((a(()),), dict(input_perm=()), desc="0-d")
    yield Sample((a((1, 3, 1)),), dict(input_perm=(2, 1, 0)), desc="size-1 dims")
    yield Sample((a((2, 0, 3)),), dict(input_perm=(1, 2, 0)), desc="empty")
    yield Sample((a((2, 3, 4)),), dict(input_perm=(-1, 0, -2)), desc="negative axes")
    yield Sample((NC(a((3, 4, 2)), "T"),), dict(input_perm=(0, 2, 1)), desc="transposed view")


register(OpInfo("transpose", ("Transpose",), ops.transpose, lambda x, input_perm: np.transpose(x, input_perm),
                _transpose_samples, ALL + UINTS, differentiable=True))
register(OpInfo("tensor.T", ("Transpose",), lambda x: x.T, lambda x: x.T,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 4), dtype),)), Sample((arr(rng, (5,), dtype),))]),
                (F32,), differentiable=True))


def _bcast_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((3, 1)),), dict(shape=(2, 3, 4)))
    yield Sample((a((4,)),), dict(shape=(3, 4)))
    yield Sample((a(()),), dict(shape=(2, 2)), desc="0-d")
    yield Sample((a((1, 4)),), dict(shape=(3, -1)), desc="-1 keeps a dim")
    yield Sample((a((1,)),), dict(shape=(2, 0)), desc="to empty")
    yield Sample((NC(a((1, 3)), "step"),), dict(shape=(2, 2, 3)), desc="view")
    yield Sample((a((2, 3)),), dict(shape=(2, 3)), desc="same shape")


register(OpInfo("broadcast_to", ("BroadcastTo",), ops.broadcast_to, np_broadcast_to, _bcast_samples, ALL + UINTS,
                differentiable=True))


def _concat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)), a((1, 3))), dict(axis=0))
    yield Sample((a((2, 3)), a((2, 1)), a((2, 2))), dict(axis=-1), desc="three, negative axis")
    yield Sample((a((0, 3)), a((2, 3))), dict(axis=0), desc="empty part")
    yield Sample((a((2, 3, 2)), NC(a((2, 3, 2)), "step")), dict(axis=1), desc="view")
    yield Sample((a((3,)),), dict(axis=0), desc="one tensor")
    if dtype.kind == "f":
        yield Sample((a((2, 2)), arr(rng, (1, 2), I32)), dict(axis=0), desc="float with int: promoted")


register(OpInfo("concat", ("Concat",), lambda *xs, axis: ops.concat(xs, axis),
                lambda *xs, axis: np.concatenate(xs, axis), _concat_samples, ALL + UINTS, differentiable=True))
register(OpInfo("stack", ("Reshape", "Concat"), lambda *xs, axis: ops.stack(xs, axis),
                lambda *xs, axis: np.stack(xs, axis),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)), dict(axis=1)),
                                         Sample((arr(rng, (), dtype), arr(rng, (), dtype)), dict(axis=0),
                                                desc="0-d"),
                                         Sample((arr(rng, (3,), dtype), NC(arr(rng, (3,), dtype), "rev")),
                                                dict(axis=-1), desc="negative axis, view")]),
                (F32, F64, I32), differentiable=True))
register(OpInfo("split", ("StridedSlice",), lambda x, sizes, axis: ops.split(x, sizes, axis),
                lambda x, sizes, axis: tuple(np.split(x, np.cumsum(sizes)[:-1] if isinstance(sizes, list) else
                                                      range(sizes, x.shape[axis], sizes), axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (4, 3), dtype),), dict(sizes=2, axis=0)),
                                         Sample((arr(rng, (2, 5), dtype),), dict(sizes=[1, 3, 1], axis=-1),
                                                desc="sections, negative axis"),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"),), dict(sizes=3, axis=1),
                                                desc="uneven, view")]),
                (F32, F64, I32), differentiable=True))
register(OpInfo("expand_dims_squeeze", ("Reshape",),
                lambda x, axis: (ops.expand_dims(x, axis), ops.squeeze(ops.expand_dims(x, axis), axis)),
                lambda x, axis: (np.expand_dims(x, axis), x.copy()),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),), dict(axis=1)),
                                         Sample((arr(rng, (2, 3), dtype),), dict(axis=-1), desc="negative axis"),
                                         Sample((arr(rng, (), dtype),), dict(axis=0), desc="0-d")]),
                (F32, F64, BOOL), differentiable=True))
register(OpInfo("flatten", ("Reshape",), lambda x: ops.flatten(x), lambda x: x.reshape(x.shape[0], -1),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 4), dtype),)),
                                         Sample((NC(arr(rng, (2, 3), dtype), "T"),), desc="view")]),
                (F32, F64), differentiable=True))


# Basic indexing → StridedSlice (views), Reshape for int/None keys.
_BASIC_KEYS = [
    (slice(1, 3),),
    (slice(None, None, -1),),
    (slice(None), slice(None, None, 2)),
    (1, Ellipsis, None),
    (-1,),
    (None, slice(1, None), -2),
    (slice(None, None, -2), 1),
    (Ellipsis, slice(4, 1, -2)),
    (slice(2, 2),),  # empty
]


def _basic_index_samples(dtype, rng):
    for i, key in enumerate(_BASIC_KEYS):
        x = arr(rng, (4, 5), dtype)
        yield Sample((NC(x, "T") if i == 2 else x,), dict(key=key), desc=f"x[{key!r}]")
    yield Sample((arr(rng, (3,), dtype),), dict(key=(Ellipsis,)), desc="x[...]")
    yield Sample((arr(rng, (), dtype),), dict(key=(None,)), desc="0-d x[None]")


register(OpInfo("getitem_basic", ("StridedSlice", "Reshape"), lambda x, key: x[key], lambda x, key: x[key].copy(),
                _basic_index_samples, (F32, F64, F16, I32, BOOL) + UINTS, differentiable=True,
                notes="ints, slices with negative steps, None, Ellipsis; results are views"))

_ADV_KEYS = [
    ([0, 2],),
    (slice(None), [1, 0, 1]),
    (np.array([[0, 1], [3, 2]]),),
    ([0, 1], [1, 3]),
    (np.array([True, False, True, False]),),
    (np.array([[True, False, False, True, True]] * 4),),
    (slice(1, None), np.array([-1, 0])),
    (1, [4, 0]),
]


def _adv_index_samples(dtype, rng):
    for i, key in enumerate(_ADV_KEYS):
        x = arr(rng, (4, 5), dtype)
        yield Sample((NC(x, "T") if i == 1 else x,), dict(key=key), desc=f"x[{key!r}]".replace("\n", ""))


register(OpInfo("getitem_advanced", ("Gather", "Reshape"), lambda x, key: x[key], lambda x, key: x[key],
                _adv_index_samples, (F32, F64, I32, BOOL) + UINTS, differentiable=True,
                notes="integer arrays and boolean masks (converted with np.nonzero in Python, so NonZero is not "
                      "used); gradients scatter back through Gather's bprop (repeated indices accumulate)"))


def _ssg_samples(dtype, rng):
    for key in [(slice(1, None), slice(None, None, 2)), (slice(None, None, -1), 1), (Ellipsis, slice(3, 0, -2))]:
        x = arr(rng, (3, 4), dtype)
        dy = arr(rng, x[key].shape, dtype)
        yield Sample((x, dy), dict(key=key), desc=f"key={key!r}")


def _strided_slice_grad(x, dy, key):
    """The gradient of x[key] with cotangent dy: StridedSliceGrad(dy) (a function of dy, linear)."""
    return kiln.grad(lambda a: ops.sum(ops.mul(a[key], dy)))(x)


register(OpInfo("strided_slice_grad", ("StridedSliceGrad", "StridedSlice"), _strided_slice_grad,
                np_strided_slice_grad, _ssg_samples, (F32, F64), differentiable=True, grad_args=(1,),
                notes="the gradient of basic indexing; differentiating it w.r.t. the cotangent checks "
                      "StridedSliceGrad's own bprop (StridedSlice) — a gradient of a gradient"))


# ---------------------------------------------------------------------------------------------- index ops

def _gather_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((5, 3)), np.array([4, 0, 2, 0])), dict(axis=0), desc="repeated indices")
    yield Sample((a((3, 5)), np.array([[1, 2], [4, 1]], np.int32)), dict(axis=1), desc="2-D int32 indices")
    yield Sample((a((2, 3, 4)), np.array([3, 0])), dict(axis=-1), desc="negative axis")
    yield Sample((a((3, 4)), np.array(2)), dict(axis=0), desc="0-d index")
    yield Sample((a((3, 4)), np.zeros((0,), np.int64)), dict(axis=0), desc="empty indices")
    yield Sample((NC(a((4, 3)), "T"), np.array([1, 1, 2])), dict(axis=1), desc="view")


register(OpInfo("gather", ("Gather",), lambda x, idx, axis: ops.gather(x, idx, axis),
                lambda x, idx, axis: np.take(x, idx, axis=axis), _gather_samples, (F32, F64, F16, I32, BOOL) + UINTS,
                differentiable=True, grad_args=(0,)))


def _tile_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)),), dict(dims=(2, 2)))
    yield Sample((a((2, 3)),), dict(dims=(3,)), desc="fewer dims than rank: leading 1s")
    yield Sample((a((3,)),), dict(dims=(2, 1, 2)), desc="more dims than rank: input gets leading 1s")
    yield Sample((a((2, 3)),), dict(dims=(0, 2)), desc="zero copies")
    yield Sample((a(()),), dict(dims=(4,)), desc="0-d input")
    yield Sample((NC(a((3, 2)), "T"),), dict(dims=(1, 2)), desc="view")


register(OpInfo("tile", ("Reshape", "BroadcastTo"), lambda x, dims: ops.tile(x, dims),
                lambda x, dims: np.tile(x, dims), _tile_samples, ALL, differentiable=True))


def _repeat_elements_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)),), dict(rep=2, axis=1))
    yield Sample((a((2, 3)),), dict(rep=3, axis=0))
    yield Sample((a((2, 3, 2)),), dict(rep=1, axis=-1), desc="rep 1, negative axis")
    yield Sample((NC(a((3, 2)), "T"),), dict(rep=2, axis=0), desc="view")


register(OpInfo("repeat_elements", ("Reshape", "BroadcastTo"), lambda x, rep, axis: ops.repeat_elements(x, rep, axis),
                lambda x, rep, axis: np.repeat(x, rep, axis), _repeat_elements_samples, ALL, differentiable=True))


def _one_hot_samples(dtype, rng):
    on, off = np.array(3, dtype), np.array(-1 if dtype.kind != "b" else 0, dtype)
    if dtype.kind == "b":
        on = np.array(True)
    yield Sample((np.array([0, 2, 1, 2], np.int32),), dict(depth=3, on_value=on, off_value=off, axis=-1))
    yield Sample((np.array([[0, 4], [-1, 1]], np.int64),), dict(depth=4, on_value=on, off_value=off, axis=0),
                 desc="out of range and -1 give off rows; axis 0")
    yield Sample((np.array([[1, 0, 2]], np.int32),), dict(depth=3, on_value=on, off_value=off, axis=1),
                 desc="middle axis")
    yield Sample((np.array(2, np.int32),), dict(depth=3, on_value=on, off_value=off, axis=-1), desc="0-d indices")


def np_one_hot(indices, depth, on_value, off_value, axis):
    pos = indices.ndim if axis == -1 else axis
    hit = np.expand_dims(indices, pos) == np.arange(depth).reshape([depth] + [1] * (indices.ndim - pos))
    return np.where(hit, on_value, off_value).astype(np.asarray(on_value).dtype)


register(OpInfo("one_hot", ("Equal", "Select"), lambda i, depth, on_value, off_value, axis: ops.one_hot(
                    i, depth, Tensor(on_value), Tensor(off_value), axis),
                np_one_hot, _one_hot_samples, ALL, ref_upcast=False,
                out_dtype=lambda sample: np.asarray(sample.kwargs["on_value"]).dtype,
                notes="indices outside [0, depth) give a row of off_value (MindSpore 2.10)"))


def _gather_nd_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((3, 4)), np.array([[0, 1], [2, 3], [0, 1]], np.int32)), desc="full index tuples, repeated")
    yield Sample((a((3, 4, 2)), np.array([[2], [0]], np.int64)), desc="partial tuples pick slices")
    yield Sample((a((3, 4)), np.array([[[1, 0]], [[2, 2]]], np.int32)), desc="batched indices")
    yield Sample((a((3, 4)), np.array([1, 3], np.int32)), desc="1-D indices: one tuple")
    yield Sample((NC(a((4, 3)), "T"), np.array([[2, 1]], np.int32)), desc="view")


def np_gather_nd(x, idx):
    idx = np.asarray(idx)
    return x[tuple(np.moveaxis(idx, -1, 0))]


register(OpInfo("gather_nd", ("Gather", "CheckRange"), ops.gather_nd, np_gather_nd, _gather_nd_samples,
                (F32, F64, F16, I32, BOOL), differentiable=True, grad_args=(0,)))


register(OpInfo("reciprocal", ("Div",), ops.reciprocal, lambda x: 1.0 / x, unary_samples(away=0.5), FLOATS,
                differentiable=True))


def _pad_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)),), dict(padding=(1, 2), mode="constant"))
    yield Sample((a((2, 3)),), dict(padding=(1, 0, 0, 2), mode="constant", value=3), desc="two dims, value")
    yield Sample((a((2, 4)),), dict(padding=(-1, 1), mode="constant"), desc="negative crops")
    yield Sample((a((2, 3)),), dict(padding=(2, 1), mode="reflect"))
    yield Sample((a((3, 3)),), dict(padding=(1, 2, 2, 0), mode="replicate"), desc="replicate two dims")
    yield Sample((a((2, 3)),), dict(padding=(3, 1), mode="circular"), desc="circular, a full wrap")
    yield Sample((NC(a((3, 2)), "T"),), dict(padding=(1, 1), mode="reflect"), desc="view")


def np_pad(x, padding, mode, value=None):
    pairs = [(0, 0)] * x.ndim
    for k in range(len(padding) // 2):
        pairs[x.ndim - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))
    pairs = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if mode == "constant":
        return np.pad(x[crop], pairs, mode="constant", constant_values=0 if value is None else value)
    return np.pad(x, pairs, mode={"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode])


register(OpInfo("pad", ("Gather", "Concat", "MirrorPad", "MirrorPadGrad"), lambda x, padding, mode, value=None: ops.pad(x, padding, mode, value),
                np_pad, _pad_samples, ALL, differentiable=True,
                notes="constant mode concatenates fills (Concat), reflect is one MirrorPad op, replicate and circular gather "
                      "(Gather)"))


def _sort_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    ties = np.array([[3, 1, 2, 1, 3], [0, 0, 2, 2, 1]], dtype)
    yield Sample((a((3, 5)),), dict(axis=-1, descending=False))
    yield Sample((a((4, 3)),), dict(axis=0, descending=True), desc="axis 0, descending")
    # (ties: not differentiable there — a perturbation reorders them — so no finite differences)
    yield Sample((ties,), dict(axis=1, descending=False), desc="ties keep index order", grad=False)
    yield Sample((ties,), dict(axis=1, descending=True), desc="ties keep index order, descending", grad=False)
    yield Sample((a((2, 3, 4)),), dict(axis=1, descending=False), desc="middle axis")
    yield Sample((NC(a((3, 4)), "T"),), dict(axis=-1, descending=True), desc="view")


def np_sort_desc(x, axis, descending):
    """NumPy's stable argsort (NaN last); descending: NaN first, then -x stably, so equal values keep index order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    xf = x.astype(np.float64)
    nan = np.isnan(xf)
    return np.lexsort((np.where(nan, 0.0, -xf), ~nan), axis=axis)  # the last key is the primary one


def np_sort(x, axis, descending):
    idx = np_sort_desc(x, axis, descending)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int32)


register(OpInfo("sort", ("ArgSort", "GatherD"), lambda x, axis, descending: ops.sort(x, axis, descending), np_sort,
                _sort_samples, (F32, F64, F16, I32, I64), differentiable=True, ref_upcast=False))
register(OpInfo("argsort", ("ArgSort",), lambda x, axis, descending: ops.argsort(x, axis, descending),
                lambda x, axis, descending: np_sort_desc(x, axis, descending).astype(np.int32), _sort_samples,
                (F32, F64, F16, I32, I64), ref_upcast=False))


def _topk_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((3, 5)),), dict(k=2, dim=None, largest=True))
    yield Sample((a((4, 3)),), dict(k=3, dim=0, largest=False), desc="smallest, along dim 0")
    yield Sample((np.array([[3, 1, 3, 2]], dtype),), dict(k=2, dim=-1, largest=True), desc="ties", grad=False)
    yield Sample((a((2, 4)),), dict(k=0, dim=1, largest=True), desc="k = 0")
    yield Sample((NC(a((3, 4)), "T"),), dict(k=4, dim=-1, largest=True), desc="k = n, view")


def np_topk(x, k, dim, largest):
    """(values, the input's values at the indices): which of equal values' indices topk returns is MindSpore 2.10's
    nth_element's (pinned in test_values_issue24.py), so the indices are checked through the values they pick."""
    axis = -1 if dim is None else dim
    idx = np_sort_desc(x, axis, largest)
    idx = np.take(idx, np.arange(k), axis=axis)
    v = np.take_along_axis(x, idx, axis)
    return v, v


def _topk_picked(x, k, dim, largest):
    v, i = ops.topk(x, k, dim, largest)
    return v, ops.gather_elements(x, -1 if dim is None else dim, i)


register(OpInfo("topk", ("ArgSort", "GatherD"), _topk_picked, np_topk,
                _topk_samples, (F32, F64, F16, I32, I64), differentiable=True, ref_upcast=False,
                notes="indices checked through the values they pick (ties: MindSpore 2.10's nth_element order)"))


def _uss_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((5, 3)), np.array([0, 2, 0, 1, 2]), 3))
    yield Sample((a((2, 3, 2)), np.array([[0, 1, 1], [3, 0, 2]], np.int32), 4), desc="2-D ids")
    yield Sample((a((4,)), np.array([0, -1, 2, 5]), 3), desc="ids out of range dropped")
    yield Sample((NC(a((3, 4)), "T"), np.array([1, 1, 0]), 2), desc="view")
    yield Sample((a((3, 2)), np.array([0, 0, 0]), 1), desc="one segment")


register(OpInfo("unsorted_segment_sum", ("UnsortedSegmentSum",), _core.unsorted_segment_sum, np_uss, _uss_samples,
                (F32, F64, I32), differentiable=True, grad_args=(0,),
                notes="not exposed as kiln.ops.unsorted_segment_sum yet (MindSpore has it): called via kiln._core; "
                      "negative / out-of-range ids are dropped (MindSpore)"))


def _nonzero_samples(dtype, rng):
    v = [0, 1] if dtype == BOOL else [0, 0, 1, -2]
    a = lambda s: rng.choice(v, s).astype(dtype)
    yield Sample((a((3, 4)),))
    yield Sample((a((6,)),), desc="1-D")
    yield Sample((a((2, 2, 3)),), desc="3-D")
    yield Sample((np.zeros((2, 3), dtype),), desc="all zero")
    yield Sample((a((0, 3)),), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), desc="view")


register(OpInfo("nonzero", ("NonZero",), _core.nonzero, lambda x: np.argwhere(x), _nonzero_samples,
                (BOOL, F32, I32), graph=False,
                graph_reason="data-dependent output shape: cannot be compiled; under jit it raises RuntimeError "
                             "(test_nonzero_in_graph_raises)",
                notes="not exposed as kiln.ops.nonzero (MindSpore has it); boolean-mask indexing does not use it"))


# ---- TensorScatterUpdate, TensorCopy, item assignment (functional: differentiable and traceable) ----

def np_tensor_scatter_update(x, indices, updates):
    y = np.array(x, copy=True)
    n = indices.shape[-1]
    for row, u in zip(indices.reshape(-1, n), updates.reshape((-1,) + x.shape[n:])):
        y[tuple(row)] = u
    return y


def _tsu_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((4, 3)), np.array([[3], [1]]), a((2, 3))), desc="rows")
    yield Sample((a((4, 3)), np.array([[0, 2], [3, 1], [1, 1]], np.int32), a((3,))), desc="elements, int32 indices")
    yield Sample((a((2, 3, 2)), np.array([[[1, 0]], [[0, 2]]]), a((2, 1, 2))), desc="3-D, batched indices")
    yield Sample((a((5,)), np.array([[2], [4], [2]]), a((3,))), desc="repeated index: the last update wins")
    yield Sample((a((4, 3)), np.zeros((0, 1), np.int64), a((0, 3))), desc="no update")
    yield Sample((NC(a((3, 4)), "T"), np.array([[1], [0]]), a((2, 4))), desc="view")


register(OpInfo("tensor_scatter_update", ("TensorScatterUpdate",), _core.tensor_scatter_update,
                np_tensor_scatter_update, _tsu_samples, (F32, F64, F16, I32, BOOL), differentiable=True,
                grad_args=(0, 2), notes="MindSpore's TensorScatterUpdate; out-of-range indices raise IndexError; "
                "the gradient of an update that a repeated index overwrote is zero"))
register(OpInfo("tensor_copy", ("TensorCopy",), lambda x: x.copy(), lambda x: x.copy(), unary_samples(),
                ALL + UINTS, differentiable=True, notes="Tensor.copy()/clone(): a new tensor, differentiable, traced"))


def _setitem_fn(x, value, key):
    y = x.copy()
    y[key] = value
    return y


def _np_setitem(x, value, key):
    y = np.array(x, copy=True)
    y[key] = value
    return y


_SETITEM_CASES = [  # (key, shape of the tensor value; None: a Python scalar)
    ((slice(0, 2),), (2, 5)),
    ((slice(0, 2),), (5,)),
    ((slice(None), 1), None),
    ((Ellipsis, slice(None, None, -2)), (4, 1)),
    ((None, 1, slice(1, 4)), (1, 3)),
    (([0, 2],), (2, 5)),
    ((slice(1, None), [4, 0]), (3, 1)),
    ((np.array([True, False, True, True]),), (5,)),
    ((np.array([[True, False, False, True, True]] * 4),), (12,)),
    (([1, 3, 1],), (3, 5)),
    ((2, [0, 0, 4]), (3,)),
]


def _setitem_samples(dtype, rng):
    for key, vshape in _SETITEM_CASES:
        v = (2.5 if dtype.kind == "f" else 3) if vshape is None else arr(rng, vshape, dtype)
        yield Sample((arr(rng, (4, 5), dtype), v), dict(key=key), desc=f"x[{key!r}] = {vshape}".replace("\n", ""))


register(OpInfo("setitem_functional", ("TensorScatterUpdate", "TensorCopy"), _setitem_fn, _np_setitem,
                _setitem_samples, (F32, F64, I32, BOOL), differentiable=True,
                notes="y = x.copy(); y[key] = value: basic, integer-array and boolean keys, Python-scalar and "
                      "broadcast tensor values, repeated indices (last wins); under a gradient and in graphs it is "
                      "TensorScatterUpdate (gradient zero at overwritten positions; the value's gradient summed over "
                      "its broadcast), in plain PyNative an in-place write"))


def _check_range_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)),))
    yield Sample((a(()),), desc="0-d")
    yield Sample((a((0, 4)),), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), desc="view")


register(OpInfo("check_range", ("CheckRange",), lambda x: _core.check_range(x, "Test", "value", -2.0, 2.0, True),
                lambda x: x.copy(), _check_range_samples, (F32, F64, F16, I32), differentiable=True,
                special_skip="a range check: NaN and values outside [lo, hi] raise ValueError by definition "
                             "(test_setitem_copy_checks.py tests those errors)",
                notes="returns its input after checking the values (ValueError naming the first bad value and "
                      "its index; test_setitem_copy_checks.py checks the errors in both modes)"))
