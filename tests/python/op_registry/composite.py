"""Entries of the ops Kiln builds from other ops in Python (kiln/ops/index_func.py, math_func.py, loss_func.py and
the primitive classes over them): slicing with masks, flips, rolls, triangles, masked_fill, gather_elements,
scatter_nd, unstack, meshgrid, round, logsumexp, lerp, isclose, norm, addn, linspace, bias_add, L2Normalize,
DepthToSpace and the random primitives. Their `ops` name the kernels they are made of (checked to be traced)."""
import numpy as np
import scipy.special

import kiln
from kiln import Tensor, ops

from .base import (BOOL, F16, F32, F64, I32, I64, NC, OpInfo, Sample, arr, register)

FL = (F32, F64)


# ---------------------------------------------------------------------------------------------- slicing

def _slice_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype),), dict(begin=(1, 0), size=(-1, 2)))
    yield Sample((arr(rng, (2, 3, 4), dtype),), dict(begin=(0, 1, 1), size=(2, 2, 3)))
    yield Sample((NC(arr(rng, (4, 3), dtype), "T"),), dict(begin=(0, 2), size=(3, 0)), desc="empty block, view")


register(OpInfo("slice", ("StridedSlice",), lambda x, begin, size: ops.slice(x, begin, size),
                lambda x, begin, size: x[tuple(slice(b, x.shape[i] if s == -1 else b + s)
                                               for i, (b, s) in enumerate(zip(begin, size)))].copy(),
                _slice_samples, FL + (I32, BOOL), differentiable=True))


# (begin, end, strides, masks, the NumPy key the call means) — the keys written out by hand from the TensorFlow /
# MindSpore mask rules, so the reference does not reuse Kiln's translation.
_SS_CASES = [
    ((0, 1, 0), (2, 3, 4), (1, 1, 2), dict(shrink_axis_mask=1), (0, slice(1, 3), slice(0, 4, 2))),
    ((1, 1, 0), (2, 2, 1), (1, 1, 1), dict(begin_mask=2, end_mask=4), (slice(1, 2), slice(0, 2), slice(0, None))),
    ((0, 0, 1), (1, 1, 3), (1, 1, 1), dict(ellipsis_mask=1, new_axis_mask=2), (Ellipsis, None, slice(1, 3))),
    ((-1, 2), (-3, 0), (-1, -1), {}, (slice(-1, -3, -1), slice(2, 0, -1))),
    ((0,), (10,), (2,), {}, (slice(0, 10, 2),)),
]


def _ss_samples(dtype, rng):
    for b, e, s, masks, key in _SS_CASES:
        yield Sample((arr(rng, (2, 3, 4), dtype),), dict(begin=b, end=e, strides=s, masks=masks, key=key),
                     desc=f"{b}:{e}:{s} {masks}")


register(OpInfo("strided_slice", ("StridedSlice",),
                lambda x, begin, end, strides, masks, key: ops.strided_slice(x, begin, end, strides, **masks),
                lambda x, begin, end, strides, masks, key: x[key].copy(),
                _ss_samples, FL + (I32,), differentiable=True))


def _flip_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype),), dict(dims=(0, 1)))
    yield Sample((arr(rng, (2, 3, 4), dtype),), dict(dims=-1), desc="int dim")
    yield Sample((NC(arr(rng, (3, 4), dtype), "step"),), dict(dims=(1,)), desc="view")


register(OpInfo("flip", ("StridedSlice",), lambda x, dims: ops.flip(x, dims),
                lambda x, dims: np.flip(x, dims).copy(), _flip_samples, FL + (I32,), differentiable=True))
register(OpInfo("ReverseV2", ("StridedSlice",), lambda x, dims: ops.ReverseV2(axis=dims)(x),
                lambda x, dims: np.flip(x, dims).copy(),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),), dict(dims=(1,)))]), FL,
                differentiable=True))


def _roll_samples(dtype, rng):
    yield Sample((arr(rng, (2, 5), dtype),), dict(shifts=2, dims=1))
    yield Sample((arr(rng, (3, 4), dtype),), dict(shifts=(-1, 5), dims=(0, 1)), desc="negative and wrapping shifts")
    yield Sample((arr(rng, (2, 3), dtype),), dict(shifts=4, dims=None), desc="flattened")


register(OpInfo("roll", ("Concat",), lambda x, shifts, dims: ops.roll(x, shifts, dims),
                lambda x, shifts, dims: np.roll(x, shifts, dims), _roll_samples, FL + (I32,), differentiable=True))


def _tri_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype),), dict(diagonal=0))
    yield Sample((arr(rng, (2, 3, 3), dtype),), dict(diagonal=-1), desc="batched, below")
    yield Sample((arr(rng, (4, 2), dtype),), dict(diagonal=1), desc="above")


register(OpInfo("tril", ("Select",), lambda x, diagonal: ops.tril(x, diagonal),
                lambda x, diagonal: np.tril(x, diagonal), _tri_samples, FL + (I32, BOOL), differentiable=True))
register(OpInfo("triu", ("Select",), lambda x, diagonal: ops.triu(x, diagonal),
                lambda x, diagonal: np.triu(x, diagonal), _tri_samples, FL + (I32,), differentiable=True))


def _masked_fill_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), BOOL)), dict(value=0.5 if dtype.kind == "f" else 7))
    yield Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), BOOL)), dict(value=-2), desc="broadcast mask")


register(OpInfo("masked_fill", ("Select",), lambda x, m, value: ops.masked_fill(x, m, value),
                lambda x, m, value: np.where(m, np.asarray(value, x.dtype), x), _masked_fill_samples, FL + (I32,),
                differentiable=True, grad_args=(0,)))


def _gather_elements_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype),), dict(dim=1, index=rng.integers(0, 4, (3, 2))))
    yield Sample((arr(rng, (3, 4), dtype),), dict(dim=0, index=rng.integers(-3, 3, (2, 4))), desc="negative indices")
    yield Sample((arr(rng, (2, 3, 2), dtype),), dict(dim=-1, index=rng.integers(0, 2, (2, 2, 3))),
                 desc="index smaller on other axes")


def _np_gather_elements(x, dim, index):
    idx = np.where(index < 0, index + x.shape[dim], index)
    key = tuple(slice(0, s) if ax != dim % x.ndim else slice(None) for ax, s in enumerate(index.shape))
    return np.take_along_axis(x[key], idx, dim)


register(OpInfo("gather_elements", ("GatherD", "GatherDGrad"),
                lambda x, dim, index: ops.gather_elements(x, dim, Tensor(index)), _np_gather_elements,
                _gather_elements_samples, FL + (I32,), differentiable=True))
register(OpInfo("GatherD", ("GatherD",), lambda x, dim, index: ops.GatherD()(x, dim, Tensor(index.astype(np.int32))),
                _np_gather_elements,
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),),
                                                dict(dim=1, index=rng.integers(0, 4, (3, 4))))]),
                FL, differentiable=True))


def _gather_d_grad(x, dy, dim, index):
    """The gradient of gather_elements(x, dim, index) with cotangent dy: GatherDGrad(dy) (a function of dy, linear;
    its own gradient is GatherD)."""
    return kiln.grad(lambda a: ops.sum(ops.mul(ops.gather_elements(a, dim, Tensor(index)), dy)))(x)


def _np_gather_d_grad(x, dy, dim, index):
    out = np.zeros_like(dy, shape=x.shape)
    idx = np.where(index < 0, index + x.shape[dim], index)
    coords = list(np.indices(index.shape))
    coords[dim] = idx
    np.add.at(out, tuple(coords), dy)
    return out


def _gather_d_grad_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype), arr(rng, (3, 5), dtype)), dict(dim=1, index=rng.integers(-4, 4, (3, 5))),
                 desc="repeated indices accumulate")
    yield Sample((arr(rng, (4, 2, 3), dtype), arr(rng, (2, 2, 2), dtype)), dict(dim=0, index=rng.integers(0, 4, (2, 2, 2))),
                 desc="index smaller than x, dim 0")


register(OpInfo("gather_d_grad", ("GatherDGrad", "GatherD"), _gather_d_grad, _np_gather_d_grad,
                _gather_d_grad_samples, (F32, F64), differentiable=True, grad_args=(1,),
                notes="the gradient of gather_elements; differentiating it w.r.t. the cotangent checks GatherDGrad's "
                      "own bprop (GatherD) — a gradient of a gradient"))


def _np_scatter_nd(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, tuple(np.moveaxis(indices, -1, 0)), updates)
    return out


def _scatter_nd_samples(dtype, rng):
    yield Sample((arr(rng, (3,), dtype),), dict(indices=np.array([[0], [2], [0]]), shape=(4,)), desc="duplicates")
    yield Sample((arr(rng, (2, 3), dtype),), dict(indices=np.array([[1, 0], [0, 2]]), shape=(2, 3, 3)),
                 desc="slices")
    yield Sample((arr(rng, (2, 2), dtype),), dict(indices=np.array([[[1], [3]], [[0], [1]]]), shape=(5,)),
                 desc="batched indices")


register(OpInfo("scatter_nd", ("UnsortedSegmentSum",),
                lambda u, indices, shape: ops.scatter_nd(Tensor(indices.astype(np.int32)), u, shape),
                lambda u, indices, shape: _np_scatter_nd(indices, u, shape), _scatter_nd_samples, FL + (I32,),
                differentiable=True))


def _unstack_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype),), dict(axis=1))
    yield Sample((arr(rng, (3, 2, 2), dtype),), dict(axis=-3), desc="negative axis")


register(OpInfo("unstack", ("StridedSlice",), lambda x, axis: ops.unstack(x, axis),
                lambda x, axis: tuple(np.moveaxis(x, axis, 0).copy()), _unstack_samples, FL + (I32,),
                differentiable=True))


def _meshgrid_samples(dtype, rng):
    yield Sample((arr(rng, (3,), dtype), arr(rng, (2,), dtype)), dict(indexing="xy"))
    yield Sample((arr(rng, (3,), dtype), arr(rng, (2,), dtype), arr(rng, (4,), dtype)), dict(indexing="ij"),
                 desc="three, ij")
    yield Sample((arr(rng, (2,), dtype), arr(rng, (3,), dtype), arr(rng, (1,), dtype)), dict(indexing="xy"),
                 desc="three, xy")


register(OpInfo("meshgrid", ("BroadcastTo",), lambda *xs, indexing: ops.meshgrid(*xs, indexing=indexing),
                lambda *xs, indexing: tuple(a.copy() for a in np.meshgrid(*xs, indexing=indexing)),
                _meshgrid_samples, FL + (I32,), differentiable=True))


def _np_depth_to_space(x, b):
    n, c, h, w = x.shape
    co = c // (b * b)
    out = np.empty((n, co, h * b, w * b), x.dtype)
    for i in range(b):
        for j in range(b):
            for ch in range(co):
                out[:, ch, i::b, j::b] = x[:, (i * b + j) * co + ch]
    return out


register(OpInfo("DepthToSpace", ("Transpose",), lambda x, b: ops.DepthToSpace(b)(x), _np_depth_to_space,
                lambda dtype, rng: iter([Sample((arr(rng, (1, 8, 2, 3), dtype),), dict(b=2)),
                                         Sample((arr(rng, (2, 9, 1, 2), dtype),), dict(b=3), desc="b=3")]),
                FL + (I32,), differentiable=True))


# ---------------------------------------------------------------------------------------------- math

def _round_samples(dtype, rng):
    yield Sample((np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 0.0], dtype),), desc="halves to even")
    yield Sample((arr(rng, (3, 4), dtype, -50.0, 50.0),))
    if dtype.kind == "f":
        yield Sample((np.array([1.25, 1.35, -2.55], dtype),), dict(decimals=1), desc="decimals")
        yield Sample((np.array([15.0, 25.0, -35.0, 1234.0], dtype),), dict(decimals=-1), desc="negative decimals")


register(OpInfo("round", ("Round",), lambda x, decimals=0: ops.round(x, decimals=decimals),
                lambda x, decimals=0: np.round(x, decimals), _round_samples, FL + (F16,),
                out_dtype=lambda s: s.args[0].dtype, ref_upcast=False, special_skip="rounds like floor: covered by "
                "floor's special values"))
register(OpInfo("round_int", (), lambda x: ops.Round()(x), lambda x: x.copy(),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype, -9, 9),))]), (I32, I64)))


def _lse_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype),), dict(dim=1))
    yield Sample((arr(rng, (2, 3, 2), dtype, -5, 5),), dict(dim=(0, 2), keepdim=True), desc="two axes, keepdim")
    yield Sample((np.array([[1000.0, 1000.0], [-1000.0, 0.0]], dtype),), dict(dim=-1), desc="no overflow",
                 grad=False)


register(OpInfo("logsumexp", ("Exp", "Log", "ReduceMax"), lambda x, dim, keepdim=False: ops.logsumexp(x, dim, keepdim),
                lambda x, dim, keepdim=False: scipy.special.logsumexp(x, axis=dim, keepdims=keepdim),
                _lse_samples, FL, differentiable=True, special_skip="the max shift is checked by the 'no overflow' "
                "sample"))


register(OpInfo("lerp", ("Sub", "Mul", "Add"),
                lambda a, b, w=None, weight=None: ops.lerp(a, b, w if w is not None else weight),
                lambda a, b, w=None, weight=None: a + (w if w is not None else weight) * (b - a),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype),
                                                 arr(rng, (3,), dtype, 0, 1))),
                                         Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype)),
                                                dict(weight=0.25), desc="float weight")]),
                FL, differentiable=True))


def _isclose_samples(dtype, rng):
    a = np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 0.0, 1e-9], dtype)
    b = np.array([1.000001, np.nan, 2.1, np.inf, np.inf, 1e-9, 0.0], dtype)
    yield Sample((a, b), dict(equal_nan=False))
    yield Sample((a, b), dict(equal_nan=True), desc="equal_nan")
    yield Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype)), dict(rtol=0.5, atol=0.1), desc="broadcast")


register(OpInfo("isclose", ("Abs", "LessEqual"),
                lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: ops.isclose(a, b, rtol, atol, equal_nan),
                lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: np.isclose(a, b, rtol, atol, equal_nan),
                _isclose_samples, (F32, F64), special_skip="special values are in the samples"))


_NORM_CASES = [
    ((2, 3), dict()),
    ((2, 3), dict(ord=1)),
    ((2, 3), dict(ord=-1)),
    ((2, 3), dict(ord=np.inf)),
    ((2, 3), dict(ord=-np.inf)),
    ((2, 3), dict(ord="fro")),
    ((2, 3, 2), dict(ord=3, dim=1, keepdim=True)),
    ((4,), dict(ord=0)),
    ((4,), dict(ord=np.inf)),
    ((2, 4), dict(ord=-np.inf, dim=1)),
    ((2, 4), dict(ord=0.5, dim=-1)),
    ((3, 2, 2), dict(ord=np.inf, dim=(1, 2))),
    ((2, 3, 2), dict(dim=(0, 2), keepdim=True)),
]


def _norm_samples(dtype, rng):
    for shape, kw in _NORM_CASES:
        yield Sample((arr(rng, shape, dtype, away=0.25),), kw, desc=str(kw),
                     grad=kw.get("ord") != 0)


def _np_norm(x, ord=None, dim=None, keepdim=False):
    if dim is None and ord is None:
        r = np.linalg.norm(x.reshape(-1))
        return r.reshape([1] * x.ndim) if keepdim else r
    return np.linalg.norm(x, ord, dim, keepdim)


register(OpInfo("norm", ("ReduceSum",), lambda x, **kw: ops.norm(x, **kw), _np_norm, _norm_samples, FL,
                differentiable=True, special_skip="a composite of abs/pow/sum/max: those ops' special values"))

register(OpInfo("addn", ("Add",), lambda *xs: ops.addn(xs), lambda *xs: sum(xs[1:], xs[0]).copy(),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype),
                                                 arr(rng, (2, 3), dtype)))]),
                FL + (I32,), differentiable=True))
register(OpInfo("linspace", ("Mul", "Select"), lambda s, e, steps: ops.linspace(s, e, steps),
                lambda s, e, steps: np.linspace(s, e, steps),
                lambda dtype, rng: iter([Sample((arr(rng, (), dtype), arr(rng, (), dtype, 3, 5)), dict(steps=5)),
                                         Sample((arr(rng, (), dtype), arr(rng, (), dtype)), dict(steps=1),
                                                desc="one step")]),
                FL, differentiable=True, special_ok=lambda s: s.kwargs["steps"] != 1,
                notes="steps=1 gives [start] (PyTorch's rule), whatever end is"))
register(OpInfo("bias_add", ("Add",), lambda x, b, fmt="NCHW": ops.BiasAdd(fmt)(x, b),
                lambda x, b, fmt="NCHW": x + (b.reshape([1, -1] + [1] * (x.ndim - 2)) if fmt == "NCHW" else b),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 2, 2), dtype), arr(rng, (3,), dtype))),
                                         Sample((arr(rng, (2, 2, 3), dtype), arr(rng, (3,), dtype)),
                                                dict(fmt="NHWC"), desc="NHWC")]),
                FL, differentiable=True))


def _np_l2n(x, axis, eps):
    return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), eps))


register(OpInfo("L2Normalize", ("ReduceSum", "Rsqrt"), lambda x, axis, eps: ops.L2Normalize(axis, eps)(x), _np_l2n,
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(axis=1, eps=1e-4)),
                                         Sample((arr(rng, (2, 3, 2), dtype),), dict(axis=(0, 2), eps=1e-4),
                                                desc="two axes"),
                                         Sample((np.array([[3.0, 4.0], [0.0, 0.0]], dtype),), dict(axis=0, eps=1e-4),
                                                desc="zero row: epsilon", grad=False)]),
                FL, differentiable=True, special_skip="a composite of square/sum/max/rsqrt"))


# ---------------------------------------------------------------------------------------------- random

def _check_moments(mean, std):
    def check(x, dtype):
        x = x.astype(np.float64)
        assert abs(x.mean() - mean) < 0.2 * std + 0.05, x.mean()
        assert abs(x.std() - std) < 0.2 * std, x.std()
    return check


register(OpInfo("normal", ("StandardNormal", "Mul", "Add"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.normal(tuple(shape), Tensor(np.float32(2.0)),
                                                                Tensor(np.float32(3.0)), seed=seed),
                check=_check_moments(2.0, 3.0)))
register(OpInfo("StandardNormal", ("StandardNormal",), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.StandardNormal(seed or 0)(tuple(shape)),
                check=_check_moments(0.0, 1.0)))
register(OpInfo("UniformReal", ("UniformReal",), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.UniformReal(seed or 0)(tuple(shape)),
                check=_check_moments(0.5, (1 / 12) ** 0.5)))


# ---------------------------------------------------------------------------------------------- resizing

def _np_resize_axis(x, axis, m, mode, align=False, tf_legacy=False):
    """Per-output-index loop (independent of Kiln's kernel and its index tables). mode: 'nearest' (floor(d·n/m)),
    'nearest-exact' (floor((d + 0.5)·n/m)) or 'linear'."""
    n = x.shape[axis]
    out = []
    for d in range(m):
        if mode == "nearest":
            out.append(np.take(x, min(int(np.floor(d * n / m)), n - 1), axis))
            continue
        if mode == "nearest-exact":
            out.append(np.take(x, min(int(np.floor((d + 0.5) * n / m)), n - 1), axis))
            continue
        if align:
            src = d * (n - 1) / (m - 1) if m > 1 else 0.0
        elif tf_legacy:
            src = d * n / m
        else:
            src = max((d + 0.5) * n / m - 0.5, 0.0)
        src = min(src, n - 1)
        i0 = int(np.floor(src))
        i1 = min(i0 + 1, n - 1)
        w = src - i0
        out.append(np.take(x, i0, axis) * (1 - w) + np.take(x, i1, axis) * w)
    return np.stack(out, axis)


def _np_interpolate(x, size, mode, align_corners=None):
    y = x
    nsp = x.ndim - 2
    for k in range(nsp):
        y = _np_resize_axis(y, x.ndim - nsp + k, size[k], mode if mode.startswith("nearest") else "linear",
                            bool(align_corners))
    return y


def _interp_samples(dtype, rng):
    yield Sample((arr(rng, (2, 2, 3, 4), dtype),), dict(size=(5, 7), mode="bilinear"), desc="up")
    yield Sample((arr(rng, (1, 2, 5, 6), dtype),), dict(size=(3, 2), mode="bilinear"), desc="down")
    yield Sample((arr(rng, (1, 1, 3, 4), dtype),), dict(size=(4, 6), mode="bilinear", align_corners=True),
                 desc="align_corners")
    yield Sample((arr(rng, (2, 1, 5), dtype),), dict(size=(8,), mode="linear"), desc="linear")
    yield Sample((arr(rng, (1, 2, 3, 4), dtype),), dict(size=(5, 6), mode="nearest"), desc="nearest up")
    yield Sample((arr(rng, (1, 1, 2, 3, 2), dtype),), dict(size=(3, 2, 4), mode="trilinear"), desc="trilinear")
    yield Sample((arr(rng, (2, 3, 5, 7), dtype),), dict(size=(3, 4), mode="nearest-exact"), desc="nearest-exact down")
    yield Sample((arr(rng, (1, 2, 4), dtype),), dict(size=(7,), mode="nearest"), desc="nearest 1-D")
    yield Sample((arr(rng, (1, 2, 2, 3, 2), dtype),), dict(size=(3, 5, 3), mode="nearest-exact"),
                 desc="nearest-exact 3-D")
    yield Sample((arr(rng, (1, 1, 2, 3, 3), dtype),), dict(size=(4, 2, 5), mode="trilinear", align_corners=True),
                 desc="trilinear align_corners")
    yield Sample((NC(arr(rng, (4, 3, 2, 2), dtype), "T"),), dict(size=(3, 5), mode="bilinear"), desc="view")
    yield Sample((NC(arr(rng, (2, 1, 3, 4), dtype), "step"),), dict(size=(5, 3), mode="nearest"),
                 desc="strided nearest")


_RESIZE_OPS = ("ResizeLinear", "ResizeLinearGrad", "ResizeNearest", "ResizeNearestGrad")
register(OpInfo("interpolate", _RESIZE_OPS,
                lambda x, size, mode, align_corners=None: ops.interpolate(x, size, mode=mode,
                                                                          align_corners=align_corners),
                _np_interpolate, _interp_samples, FL, differentiable=True,
                special_skip="copies and blends: NaN/inf propagate through the taps as in any weighted sum"))


def _np_rbl(x, size, align_corners=False, half_pixel_centers=False):
    if half_pixel_centers:  # TensorFlow's half-pixel rule: PyTorch's align_corners=False coordinate
        return _np_interpolate(x, size, "bilinear")
    return _np_resize_axis(_np_resize_axis(x, 2, size[0], "linear", align_corners, not align_corners), 3, size[1],
                           "linear", align_corners, not align_corners)


register(OpInfo("ResizeBilinearV2", ("ResizeLinear", "ResizeLinearGrad"),
                lambda x, size, align_corners=False, half_pixel_centers=False:
                ops.ResizeBilinearV2(align_corners, half_pixel_centers)(x, size),
                _np_rbl,
                lambda dtype, rng: iter([Sample((arr(rng, (1, 2, 3, 4), dtype),), dict(size=(5, 6))),
                                         Sample((arr(rng, (1, 1, 4, 4), dtype),), dict(size=(2, 3)), desc="down"),
                                         Sample((arr(rng, (2, 1, 3, 5), dtype),),
                                                dict(size=(4, 7), align_corners=True), desc="align_corners"),
                                         Sample((arr(rng, (1, 2, 5, 3), dtype),),
                                                dict(size=(3, 4), half_pixel_centers=True), desc="half_pixel")]),
                FL, differentiable=True, special_skip="as interpolate"))


def _np_rnn(x, size, align_corners=False, half_pixel_centers=False):
    """TensorFlow's nearest rules: floor(d·s), round-half-up(d·(n − 1)/(m − 1)), floor((d + 0.5)·s)."""
    y = x
    for axis, m in ((2, size[0]), (3, size[1])):
        n = x.shape[axis]
        idx = []
        for d in range(m):
            if align_corners:
                i = int(np.floor(d * (n - 1) / (m - 1) + 0.5)) if m > 1 else 0
            elif half_pixel_centers:
                i = int(np.floor((d + 0.5) * n / m))
            else:
                i = int(np.floor(d * n / m))
            idx.append(min(i, n - 1))
        y = np.take(y, idx, axis)
    return y


register(OpInfo("ResizeNearestNeighbor", ("ResizeNearest", "ResizeNearestGrad"),
                lambda x, size, align_corners=False, half_pixel_centers=False:
                ops.ResizeNearestNeighbor(size, align_corners, half_pixel_centers)(x),
                _np_rnn,
                lambda dtype, rng: iter([Sample((arr(rng, (1, 2, 3, 4), dtype),), dict(size=(5, 6))),
                                         Sample((arr(rng, (2, 1, 5, 7), dtype),), dict(size=(3, 4)), desc="down"),
                                         Sample((arr(rng, (1, 1, 3, 5), dtype),),
                                                dict(size=(4, 7), align_corners=True), desc="align_corners"),
                                         Sample((arr(rng, (1, 2, 5, 3), dtype),),
                                                dict(size=(3, 4), half_pixel_centers=True), desc="half_pixel")]),
                FL, differentiable=True, special_skip="a copy"))


def _interpolate_grad(x, dy, size, mode, align_corners=None):
    """The gradient of interpolate(x, size, mode) with cotangent dy: ResizeLinearGrad / ResizeNearestGrad of dy
    (linear in dy; differentiating it w.r.t. dy checks their own bprops, the forward ops)."""
    return kiln.grad(lambda a: ops.sum(ops.mul(ops.interpolate(a, size, mode=mode, align_corners=align_corners),
                                               dy)))(x)


def _np_interpolate_grad(x, dy, size, mode, align_corners=None):
    """The adjoint of the NumPy reference, column by column: dx[j] = Σ_i dy[i]·∂y[i]/∂x[j]."""
    flat = np.zeros(x.size, np.float64)
    dyf = dy.astype(np.float64).reshape(-1)
    for j in range(x.size):
        e = np.zeros(x.size, np.float64)
        e[j] = 1
        flat[j] = _np_interpolate(e.reshape(x.shape), size, mode, align_corners).reshape(-1) @ dyf
    return flat.reshape(x.shape).astype(dy.dtype)


register(OpInfo("interpolate_grad", _RESIZE_OPS, _interpolate_grad, _np_interpolate_grad,
                lambda dtype, rng: iter([
                    Sample((arr(rng, (1, 2, 3, 4), dtype), arr(rng, (1, 2, 5, 6), dtype)),
                           dict(size=(5, 6), mode="bilinear")),
                    Sample((arr(rng, (2, 1, 5), dtype), arr(rng, (2, 1, 3), dtype)),
                           dict(size=(3,), mode="linear", align_corners=True), desc="linear align_corners"),
                    Sample((arr(rng, (1, 1, 2, 2, 3), dtype), arr(rng, (1, 1, 3, 3, 2), dtype)),
                           dict(size=(3, 3, 2), mode="trilinear"), desc="trilinear"),
                    Sample((arr(rng, (1, 2, 3, 4), dtype), arr(rng, (1, 2, 5, 3), dtype)),
                           dict(size=(5, 3), mode="nearest"), desc="nearest"),
                    Sample((arr(rng, (1, 1, 4), dtype), arr(rng, (1, 1, 6), dtype)),
                           dict(size=(6,), mode="nearest-exact"), desc="nearest-exact 1-D")]),
                FL, differentiable=True, grad_args=(1,), special_skip="as interpolate",
                notes="the gradient of interpolate (ResizeLinearGrad / ResizeNearestGrad, scatter-adds of dy); "
                      "differentiating it w.r.t. dy checks those ops' own bprops (ResizeLinear / ResizeNearest)"))


# ---------------------------------------------------------------------------------------------- scans

def _np_scan(x, axis, exclusive=False, reverse=False, prod=False):
    f = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if reverse else x
    out = f(y, axis=axis)
    if exclusive:
        ident = np.ones_like(np.take(y, [0], axis)) if prod else np.zeros_like(np.take(y, [0], axis))
        out = np.concatenate([ident, np.delete(out, -1, axis)], axis) if y.shape[axis] else out
    return (np.flip(out, axis) if reverse else out).astype(x.dtype)


def _scan_samples(dtype, rng):
    yield Sample((arr(rng, (2, 5), dtype, -2, 2),), dict(axis=1))
    yield Sample((arr(rng, (7, 3), dtype, -2, 2),), dict(axis=0, exclusive=True), desc="exclusive")
    yield Sample((arr(rng, (3, 4, 2), dtype, -2, 2),), dict(axis=-2, reverse=True), desc="reverse")
    yield Sample((arr(rng, (9,), dtype, -2, 2),), dict(axis=0, exclusive=True, reverse=True), desc="both")
    yield Sample((arr(rng, (1, 3), dtype),), dict(axis=0), desc="length 1")
    yield Sample((arr(rng, (0, 3), dtype),), dict(axis=0), desc="empty")
    yield Sample((NC(arr(rng, (4, 6), dtype, -2, 2), "T"),), dict(axis=1), desc="view")
    # more than cpu::kParallelMin elements: the lines go to the OpenMP threads (src/ops/scan.cpp)
    yield Sample((arr(rng, (40, 30, 30), dtype, -1, 1),), dict(axis=1, reverse=True), desc="threaded lines",
                 grad=False)


def _cumprod_samples(dtype, rng):
    yield from _scan_samples(dtype, rng)
    z = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5], [0.5, 2.0, -1.5, 0.0]], dtype)
    yield Sample((z,), dict(axis=1), desc="zeros (gradient through them)")
    yield Sample((z,), dict(axis=1, exclusive=True), desc="zeros, exclusive")
    yield Sample((z,), dict(axis=1, reverse=True), desc="zeros, reverse")
    yield Sample((z.T.copy(),), dict(axis=0, exclusive=True, reverse=True), desc="zeros, both, axis 0")


register(OpInfo("CumSum", ("CumSum",),
                lambda x, axis, exclusive=False, reverse=False: ops.CumSum(exclusive, reverse)(x, axis),
                lambda x, axis, exclusive=False, reverse=False: _np_scan(x, axis, exclusive, reverse),
                _scan_samples, FL + (I32, I64), differentiable=True,
                out_dtype=lambda s: s.args[0].dtype if not isinstance(s.args[0], NC) else s.args[0].value.dtype,
                special_skip="a scan: a special value spreads along its line (test_issue23_kernels.py checks it against NumPy)"))
register(OpInfo("CumProd", ("CumProd", "CumProdGrad"),
                lambda x, axis, exclusive=False, reverse=False: ops.CumProd(exclusive, reverse)(x, axis),
                lambda x, axis, exclusive=False, reverse=False: _np_scan(x, axis, exclusive, reverse, prod=True),
                _cumprod_samples,
                FL + (I32,), differentiable=True,
                out_dtype=lambda s: s.args[0].dtype if not isinstance(s.args[0], NC) else s.args[0].value.dtype,
                special_skip="a scan: a special value spreads along its line (test_issue23_kernels.py checks it against NumPy)"))


# ---------------------------------------------------------------------------------------------- trig / hyperbolic

def _trig(name, cname, ref, low=-2.0, high=2.0, **kw):
    from .base import unary_samples
    register(OpInfo(name, (cname,), getattr(ops, name), ref, unary_samples(low, high), FL + (F16, I32),
                    differentiable=True, **kw))


_trig("expm1", "Expm1", np.expm1)
_trig("sinh", "Sinh", np.sinh)
_trig("cosh", "Cosh", np.cosh)
_trig("tan", "Tan", np.tan, -1.2, 1.2)
_trig("asinh", "Asinh", np.arcsinh, -3.0, 3.0)
_trig("acosh", "Acosh", np.arccosh, 1.1, 4.0)
_trig("atanh", "Atanh", np.arctanh, -0.9, 0.9)


def _np_tensor_scatter_add(x, updates, indices, sign=1):
    out = x.copy()
    np.add.at(out, tuple(np.moveaxis(indices, -1, 0)), sign * updates)
    return out


register(OpInfo("tensor_scatter_add", ("TensorScatterReduce",),
                lambda x, u, indices: ops.tensor_scatter_add(x, Tensor(indices.astype(np.int32)), u),
                lambda x, u, indices: _np_tensor_scatter_add(x, u, indices),
                lambda dtype, rng: iter([Sample((arr(rng, (4, 3), dtype), arr(rng, (3, 3), dtype)),
                                                dict(indices=np.array([[1], [3], [1]]))),
                                         Sample((arr(rng, (2, 3), dtype), arr(rng, (2,), dtype)),
                                                dict(indices=np.array([[0, 2], [1, 0]])), desc="elements")]),
                FL + (I32,), differentiable=True))
register(OpInfo("tensor_scatter_sub", ("TensorScatterReduce",),
                lambda x, u, indices: ops.tensor_scatter_sub(x, Tensor(indices.astype(np.int32)), u),
                lambda x, u, indices: _np_tensor_scatter_add(x, u, indices, -1),
                lambda dtype, rng: iter([Sample((arr(rng, (4, 3), dtype), arr(rng, (3, 3), dtype)),
                                                dict(indices=np.array([[1], [3], [1]])))]),
                FL, differentiable=True))
