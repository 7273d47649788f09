"""Reductions, statistics, scans and distances built from Kiln's ReduceSum/ReduceMax/ReduceMin, ArgSort, Gather,
Concat, Select and UnsortedSegmentSum kernels (MindSpore 2.10's ops.std, var, std_mean, var_mean, nansum, nanmean,
median, nanmedian, quantile, nanquantile, count_nonzero, aminmax, logcumsumexp, cummax, cummin, histc, bincount,
cov, trapz, diff; the norms and distances are in math_norm_func.py). Gradients come from the building blocks
(selections — median, quantile, cummax — send the gradient to the element they picked).

Conventions (MindSpore 2.10, checked on CPU, and PyTorch where MindSpore's CPU kernel fails):
  var/std: Σ(x − mean)²/(N − ddof); ddof=True means 1; NaN where N − ddof ≤ 0. Float inputs only (TypeError).
  median: the lower of the two middle values for an even count (PyTorch's), its index (Int64); NaN if the slice
      holds NaN (index of the first NaN); nanmedian ignores NaN (NaN and index 0 for an all-NaN slice).
  quantile: linear interpolation between the sorted values at q·(N − 1) (NumPy's default method); NaN if the slice
      holds NaN; nanquantile ignores NaN.
  cummax/cummin: running max/min with the index of its last occurrence; NaN, once met, stays (each later NaN takes
      the index); one C++ CumMax / CumMin op (src/ops/scan.cpp).
  norms with p = 2 (vector_norm, cdist, dist, pdist, renorm): gradient 0 at a zero vector (PyTorch's)."""
import builtins
import math
import numbers

import numpy as np

from .._loader import _core
from .._args import _got, _is_int, dtype_arg
from .._reduce_dtype import reduce_as
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop
from .math_elem_func import _as_float, _float_only  # the shared argument helpers

__all__ = ["std", "var", "std_mean", "var_mean", "nansum", "nanmean", "median", "nanmedian", "quantile",
           "nanquantile", "count_nonzero", "aminmax", "logcumsumexp", "cummax", "cummin", "histc", "bincount", "cov",
           "trapz", "diff"]


# ---------------------------------------------------------------------------------------------- helpers

def _axes(op, axis, ndim, name="axis"):
    """None → all axes; an int or a tuple/list of ints → a sorted list of distinct non-negative axes."""
    if axis is None:
        return list(range(ndim))
    raw = [axis] if _is_int(axis) else list(axis) if isinstance(axis, (tuple, list)) else None
    if raw is None or not builtins.all(_is_int(a) for a in raw):
        raise TypeError(f"For '{op}', '{name}' must be None, an int or a tuple of ints, but got {_got(axis)}.")
    n = builtins.max(ndim, 1)
    out = []
    for a in raw:
        if not -n <= a < n:
            raise ValueError(f"For '{op}', '{name}' {a} is out of range [{-n}, {n}) for a tensor with {ndim} dims.")
        out.append(int(a) % n)
    if len(set(out)) != len(out):
        raise ValueError(f"For '{op}', '{name}' must not repeat an axis, but got {tuple(int(a) for a in raw)} "
                         f"(axes {out} of a tensor with {ndim} dims).")
    return sorted(out) if ndim else []


def _axis1(op, axis, ndim, name="axis"):
    if not _is_int(axis):
        raise TypeError(f"For '{op}', '{name}' must be an int, but got {_got(axis)}.")
    n = builtins.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError(f"For '{op}', '{name}' {axis} is out of range [{-n}, {n}) for a tensor with {ndim} dims.")
    return int(axis) % n


def _count(x, axes):
    # plain ints (int() of a dynamic trace's SymInt sizes, as NumPy's product gave: no guard on the count)
    return math.prod([int(x.shape[a]) for a in axes]) if axes else 1


def _full_like(x, v, dtype=None):
    return _core.full(list(x.shape), v, dtype or x.dtype)


def _safe_sqrt(s):
    """√s with gradient 0 (not inf·0 = NaN) where s == 0."""
    zero = _core.equal(s, 0.0)
    r = _core.sqrt(_core.select(zero, _full_like(s, 1.0), s))
    return _core.select(zero, _core.zeros_like(s), r)


def _bool_arg(op, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"For '{op}', '{name}' must be a bool, but got {_got(v)}.")
    return bool(v)


# ---------------------------------------------------------------------------------------------- moments

def _ddof(op, ddof):
    if isinstance(ddof, (bool, np.bool_)):
        return int(ddof)
    if not _is_int(ddof):
        raise TypeError(f"For '{op}', 'ddof' must be an int or a bool, but got {_got(ddof)}.")
    return int(ddof)


def _var_mean(op, input, axis, ddof, keepdims, std=False):
    """[var (std: its square root), mean]: one VarMean op (src/ops/reduce.cpp: two passes in double per slice)."""
    x = _float_only(input, op)
    axes = _axes(op, axis, x.ndim)
    ddof = _ddof(op, ddof)
    keepdims = _bool_arg(op, "keepdims", keepdims)
    return _core.var_mean(x, axes, ddof, keepdims, std)


@defop()  # Tensor.var: both MindSpore overloads (kiln/common/_tensor_methods.py)
def var(input, axis=None, ddof=0, keepdims=False):
    """MindSpore's ops.var(input, axis=None, ddof=0, keepdims=False): the variance over `axis` (None: all; an int or a tuple), Σ(x − mean)²/(N − ddof) (ddof an int; True means 1; NaN where
    N − ddof ≤ 0); keepdims keeps the reduced axes as size 1. Same float dtype. Raises TypeError (non-Tensor,
    integer/bool input, non-int ddof), ValueError (axis out of range or repeated)."""
    return _var_mean("var", input, axis, ddof, keepdims)[0]


@defop()  # Tensor.std: both MindSpore overloads (kiln/common/_tensor_methods.py)
def std(input, axis=None, ddof=0, keepdims=False):
    """MindSpore's ops.std(input, axis=None, ddof=0, keepdims=False): the standard deviation √var (gradient 0 where
    var is 0), var over `axis` (None: all; an int or a tuple), Σ(x − mean)²/(N − ddof) (ddof an int; True means 1; NaN where
    N − ddof ≤ 0); keepdims keeps the reduced axes as size 1. Same float dtype. Raises TypeError (non-Tensor,
    integer/bool input, non-int ddof), ValueError (axis out of range or repeated)."""
    return _var_mean("std", input, axis, ddof, keepdims, True)[0]


@defop()
def var_mean(input, axis=None, ddof=0, keepdims=False):
    """MindSpore's ops.var_mean(input, axis=None, ddof=0, keepdims=False): (variance, mean), the variance over `axis` (None: all; an int or a tuple), Σ(x − mean)²/(N − ddof) (ddof an int; True means 1; NaN where
    N − ddof ≤ 0); keepdims keeps the reduced axes as size 1. Same float dtype. Raises TypeError (non-Tensor,
    integer/bool input, non-int ddof), ValueError (axis out of range or repeated)."""
    return tuple(_var_mean("var_mean", input, axis, ddof, keepdims))


@defop()
def std_mean(input, axis=None, ddof=0, keepdims=False):
    """MindSpore's ops.std_mean(input, axis=None, ddof=0, keepdims=False): (standard deviation, mean), the variance
    over `axis` (None: all; an int or a tuple), Σ(x − mean)²/(N − ddof) (ddof an int; True means 1; NaN where
    N − ddof ≤ 0); keepdims keeps the reduced axes as size 1. Same float dtype. Raises TypeError (non-Tensor,
    integer/bool input, non-int ddof), ValueError (axis out of range or repeated)."""
    return tuple(_var_mean("std_mean", input, axis, ddof, keepdims, True))


def _nan_zero(x):
    return _core.select(_core.not_equal(x, x), _core.zeros_like(x), x) if mstype.is_float(x.dtype) else x


@defop(tensor="nansum")
def nansum(input, axis=None, keepdims=False, *, dtype=None):
    """MindSpore's ops.nansum(input, axis=None, keepdims=False, *, dtype=None): the sum over `axis` with NaN counted
    as 0. Integer inputs keep their dtype (MindSpore), `dtype` casts the input first. Gradient 1 (0 at NaN).
    Raises TypeError (non-Tensor, bad dtype), ValueError (axis out of range)."""
    x = _tensor_arg(input, "nansum")
    dt = None if dtype is None else dtype_arg("nansum", "dtype", dtype)
    axes = _axes("nansum", axis, x.ndim)
    keepdims = _bool_arg("nansum", "keepdims", keepdims)
    if dt is not None and not mstype.is_float(x.dtype):  # no NaN to skip: the sum of x cast to dt, without the copy
        out = reduce_as("sum", x, dt, axes, keepdims)
        return out if out.dtype == dt or dt == mstype.bool_ else _core.cast(out, dt)
    if dt is not None:
        x = _core.cast(x, dt)
    out = _core.sum(_nan_zero(x), axes, keepdims)
    return out if out.dtype == x.dtype or x.dtype == mstype.bool_ else _core.cast(out, x.dtype)


@defop(tensor="nanmean")
def nanmean(input, axis=None, keepdims=False, *, dtype=None):
    """MindSpore's ops.nanmean(input, axis=None, keepdims=False, *, dtype=None): the mean of the non-NaN elements
    over `axis` (NaN where all are NaN). Float inputs only (TypeError otherwise); `dtype` casts the result.
    Raises TypeError, ValueError (axis out of range)."""
    x = _float_only(input, "nanmean")
    axes = _axes("nanmean", axis, x.ndim)
    keepdims = _bool_arg("nanmean", "keepdims", keepdims)
    ok = _core.cast(_core.equal(x, x), x.dtype)
    out = _core.div(_core.sum(_nan_zero(x), axes, keepdims), _core.sum(ok, axes, keepdims))
    return out if dtype is None else _core.cast(out, dtype_arg("nanmean", "dtype", dtype))


@defop(primitive="CountNonZero", prim_attrs={"dims": ("axis", None)})
def count_nonzero(x, axis=(), keep_dims=False, dtype=mstype.int32):
    """MindSpore's ops.count_nonzero(x, axis=(), keep_dims=False, dtype=mindspore.int32): the number of non-zero
    elements over `axis` (() or None: all axes; an int or a tuple), in `dtype` (NaN counts as non-zero, -0.0 does
    not). Any input dtype; Kiln's CountNonZero kernel tests each element as it reads it, so the memory used is the
    output's (no mask, no widened copy of x). Not differentiable. Raises TypeError (non-Tensor, bad dtype),
    ValueError (axis out of range)."""
    t = _tensor_arg(x, "count_nonzero", "x")
    axes = _axes("count_nonzero", None if axis == () else axis, t.ndim)
    dtype = dtype_arg("count_nonzero", "dtype", dtype)
    out = _core.count_nonzero(t, axes, _bool_arg("count_nonzero", "keep_dims", keep_dims))
    return _core.cast(out, dtype)


@defop(tensor="aminmax")
def aminmax(input, *, axis=0, keepdims=False):
    """MindSpore's ops.aminmax(input, *, axis=0, keepdims=False): (min, max) over `axis` (an int, or None for all
    elements). Ties share the gradient (as amin/amax). Raises TypeError (non-Tensor), ValueError (axis out of
    range, an empty reduction)."""
    x = _tensor_arg(input, "aminmax")
    axes = _axes("aminmax", axis, x.ndim) if axis is None else [_axis1("aminmax", axis, x.ndim)] if x.ndim else []
    if _count(x, axes) == 0 and x.size == 0:
        raise ValueError(f"For 'aminmax', the reduction is empty (input shape {tuple(x.shape)}).")
    keepdims = _bool_arg("aminmax", "keepdims", keepdims)
    return _core.amin(x, axes, keepdims), _core.amax(x, axes, keepdims)


# ---------------------------------------------------------------------------------------------- scans

def _cum_select(op, input, axis, idx_dtype):
    x = _tensor_arg(input, op)
    if x.dtype == mstype.bool_:
        raise TypeError(f"For '{op}', the input must be numeric, but got {_got(x)}.")
    if x.ndim == 0:
        raise ValueError(f"For '{op}', the input must have at least 1 dim, but got a 0-d Tensor.")
    ax = _axis1(op, axis, x.ndim)
    values, idx = (_core.cummax if op == "cummax" else _core.cummin)(x, ax)  # the CumMax / CumMin op (scan.cpp)
    return values, (idx if idx_dtype == mstype.int64 else _core.cast(idx, idx_dtype))


def _gather_along(x, axis, idx):
    from .index_func import gather_elements
    return gather_elements(x, axis, idx)


@defop(primitive=None, tensor="cummax")
def cummax(input, axis):
    """MindSpore's ops.cummax(input, axis): (values, indices Int64) — the running maximum along `axis` and the index
    of its last occurrence; a NaN, once met, stays the maximum and each later NaN takes the index (MindSpore 2.10
    CPU's). One C++ CumMax op; the values' gradient goes to the picked elements (GatherDGrad).
    Raises TypeError (non-Tensor, bool input, non-int axis), ValueError (0-d input, axis out of range)."""
    return _cum_select("cummax", input, axis, mstype.int64)


@defop(primitive=None, tensor="cummin")
def cummin(input, axis):
    """MindSpore's ops.cummin(input, axis): (values, indices Int32, as MindSpore) — the running minimum along `axis`
    and the index of its last occurrence; NaN stays once met (later NaNs take the index). One C++ CumMin op.
    Raises TypeError, ValueError as cummax."""
    return _cum_select("cummin", input, axis, mstype.int32)


@defop(tensor="logcumsumexp")
def logcumsumexp(input, axis):
    """MindSpore's ops.logcumsumexp(input, axis): log Σ_{j ≤ i} exp(x_j) along `axis`, without overflow: one C++
    LogCumSumExp op, each step a stable logaddexp (max + log1p(exp(−|a − b|))); −inf is the identity. Float inputs
    only. Gradient: MindSpore's / PyTorch's sign-split formula in the log domain (src/ops/scan.cpp).
    Raises TypeError (non-Tensor, integer/bool input), ValueError (0-d input, axis out of range)."""
    x = _float_only(input, "logcumsumexp")
    if x.ndim == 0:
        raise ValueError("For 'logcumsumexp', the input must have at least 1 dim, but got a 0-d Tensor.")
    ax = _axis1("logcumsumexp", axis, x.ndim)
    return _core.logcumsumexp(x, ax, False)


# ---------------------------------------------------------------------------------------------- order statistics

def _sorted_along(x, ax):
    """(sorted values, their original indices Int64) along ax; NaN sorts last."""
    idx = _core.argsort(x, ax, False)
    return _gather_along(x, ax, idx), idx


_MEDIAN_DTYPES = (mstype.float32, mstype.float64, mstype.int16, mstype.int32, mstype.int64)


def _median(op, input, axis, keepdims, ignore_nan):
    x = _tensor_arg(input, op)
    if x.dtype not in _MEDIAN_DTYPES:  # MindSpore 2.10's Median primitive takes these only
        raise TypeError(f"For '{op}', the input must be a float32, float64, int16, int32 or int64 Tensor, but got "
                        f"{_got(x)}.")
    keepdims = _bool_arg(op, "keepdims", keepdims)
    if x.ndim == 0:
        return _core.identity(x), _core.zeros_like(_core.cast(x, mstype.int64))
    ax = _axis1(op, axis, x.ndim)
    if x.shape[ax] == 0:
        raise ValueError(f"For '{op}', the axis {axis} is empty (input shape {tuple(x.shape)}).")
    v, i = _core.median(x, ax, keepdims, ignore_nan)  # one C++ Median op (src/ops/scan.cpp)
    return v, i


@defop(primitive=None, tensor="median")
def median(input, axis=-1, keepdims=False):
    """MindSpore's ops.median(input, axis=-1, keepdims=False): (values, indices Int64) — the median along `axis`, the
    lower middle value for an even count, and its index; NaN (and the first NaN's index) where the slice holds NaN.
    Same dtype. One C++ Median op. Gradient to the picked element. Raises TypeError (non-Tensor; a dtype other than
    float32/float64/int16/int32/int64, MindSpore 2.10's; non-int axis), ValueError (axis out of range or empty)."""
    return _median("median", input, axis, keepdims, False)


@defop(tensor="nanmedian")
def nanmedian(input, axis=-1, keepdims=False):
    """MindSpore's ops.nanmedian(input, axis=-1, keepdims=False): (values, indices Int64) — the median of the non-NaN
    elements along `axis` (lower middle value for an even count); an all-NaN slice gives NaN and the index of its
    first element. Raises TypeError, ValueError as median."""
    return _median("nanmedian", input, axis, keepdims, True)


def _quantile(op, input, q, axis, keepdims, ignore_nan):
    x = _float_only(input, op)
    keepdims = _bool_arg(op, "keepdims", keepdims)
    if isinstance(q, Tensor):
        if q.ndim > 1 or not mstype.is_float(q.dtype):
            raise TypeError(f"For '{op}', a Tensor 'q' must be a 0-d or 1-D float Tensor, but got {_got(q)}.")
        qv = q.asnumpy().astype(np.float64)
        scalar_q = q.ndim == 0
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        qv, scalar_q = np.array(float(q)), True
    else:
        raise TypeError(f"For '{op}', 'q' must be a float or a Tensor, but got {_got(q)}.")
    if np.any((qv < 0) | (qv > 1)) or np.any(np.isnan(qv)):
        raise ValueError(f"For '{op}', 'q' must be in [0, 1], but got {qv.tolist()}.")
    qv = qv.reshape(-1)
    if axis is None:
        t, ax = _core.reshape(x, [-1]), 0
        out_keep = [1] * x.ndim
    else:
        ax = _axis1(op, axis, x.ndim)
        t = x
        out_keep = None
    n = t.shape[ax]
    if n == 0:
        raise ValueError(f"For '{op}', the reduced axis is empty (input shape {tuple(x.shape)}).")
    vals, _ = _sorted_along(t, ax)
    kshape = list(t.shape)
    kshape[ax] = 1
    valid = _core.cast(_core.count_nonzero(_core.equal(t, t), [ax], True), t.dtype)
    has_nan = _core.less(valid, float(n))
    cnt = valid if ignore_nan else _core.full(kshape, float(n), t.dtype)
    outs = []
    for qq in qv:
        pos = _core.mul(_core.maximum(_core.sub(cnt, 1.0), _core.zeros_like(cnt)), float(qq))
        lo = _core.floor(pos)
        hi = _core.minimum(_core.add(lo, 1.0), _core.maximum(_core.sub(cnt, 1.0), _core.zeros_like(cnt)))
        w = _core.sub(pos, lo)
        vlo = _gather_along(vals, ax, _core.cast(lo, mstype.int64))
        vhi = _gather_along(vals, ax, _core.cast(hi, mstype.int64))
        r = _core.add(vlo, _core.mul(_core.sub(vhi, vlo), w))
        if ignore_nan:
            r = _core.select(_core.equal(valid, 0.0), _full_like(r, math.nan), r)
        else:
            r = _core.select(has_nan, _full_like(r, math.nan), r)
        if axis is None:
            r = _core.reshape(r, out_keep if keepdims else [])
        elif not keepdims:
            r = _core.squeeze(r, [ax])
        outs.append(r)
    return outs[0] if scalar_q else _core.stack(outs, 0)


@defop(primitive=None, tensor="quantile")
def quantile(input, q, axis=None, keepdims=False):
    """MindSpore's ops.quantile(input, q, axis=None, keepdims=False): the q-th quantiles along `axis` (None: of the
    flattened input), linear interpolation between sorted values at q·(N − 1); q a float or a 0-d/1-D float Tensor
    in [0, 1] (1-D: the quantiles are stacked on a new first axis). NaN where the slice holds NaN. Float inputs
    only. Raises TypeError (non-Tensor, integer input, bad q), ValueError (q outside [0, 1], axis out of range)."""
    return _quantile("quantile", input, q, axis, keepdims, False)


@defop(tensor="nanquantile")
def nanquantile(input, q, axis=None, keepdims=False):
    """MindSpore's ops.nanquantile(input, q, axis=None, keepdims=False): as quantile over the non-NaN elements of
    each slice (NaN for an all-NaN slice). Raises TypeError, ValueError as quantile."""
    return _quantile("nanquantile", input, q, axis, keepdims, True)


# ---------------------------------------------------------------------------------------------- histograms

@defop(tensor="histc")
def histc(input, bins=100, min=0.0, max=0.0):
    """MindSpore's ops.histc(input, bins=100, min=0.0, max=0.0): the histogram of the elements in `bins` equal bins
    over [min, max] (min == max: the data's own min and max, widened by 1 each side when they are equal); elements
    outside are ignored, max falls in the last bin. Result in input's dtype (counts). Not differentiable.
    Raises TypeError (non-Tensor, complex input as MindSpore 2.10, non-int bins), ValueError (bins < 1, min > max)."""
    x = mstype.refuse_complex(_tensor_arg(input, "histc"), "histc")
    if not _is_int(bins):
        raise TypeError(f"For 'histc', 'bins' must be an int, but got {_got(bins)}.")
    if bins < 1:
        raise ValueError(f"For 'histc', 'bins' must be >= 1, but got {bins}.")
    for name, v in (("min", min), ("max", max)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'histc', '{name}' must be a number, but got {_got(v)}.")
    if min > max:
        raise ValueError(f"For 'histc', 'min' must be <= 'max', but got {min} and {max}.")
    t = _core.stop_gradient(_core.cast(_core.reshape(x, [-1]), mstype.float64))
    if min == max:
        if t.shape[0] == 0:
            lo, hi = _core.full([], float(min), mstype.float64), _core.full([], float(max), mstype.float64)
        else:
            lo, hi = _core.amin(t, [0], False), _core.amax(t, [0], False)
        same = _core.equal(lo, hi)
        lo = _core.select(same, _core.sub(lo, 1.0), lo)
        hi = _core.select(same, _core.add(hi, 1.0), hi)
    else:
        lo, hi = _core.full([], float(min), mstype.float64), _core.full([], float(max), mstype.float64)
    inside = _core.logical_and(_core.greater_equal(t, lo), _core.less_equal(t, hi))
    b = _core.floor(_core.div(_core.mul(_core.sub(t, lo), float(bins)), _core.sub(hi, lo)))
    b = _core.minimum(b, _core.full([], float(bins - 1), mstype.float64))
    seg = _core.cast(_core.select(inside, b, _core.full([], float(bins), mstype.float64)), mstype.int64)
    counts = _core.unsorted_segment_sum(_core.ones_like(t), seg, bins + 1)
    counts = _core.strided_slice(counts, [0], [bins], [1])
    return _core.cast(counts, x.dtype)


@defop(primitive=None, tensor="bincount", mint="bincount")
def bincount(input, weights=None, minlength=0):
    """MindSpore's ops.bincount(input, weights=None, minlength=0): the count (or the sum of `weights`) of each value
    0, 1, ..., max(input) in a 1-D integer Tensor; length max(max(input) + 1, minlength); negative values are ignored
    (as MindSpore). Float32 result (MindSpore 2.10). The length depends on the data, so this reads the input (not
    usable inside kiln.jit). Raises TypeError (non-Tensor, non-integer input, non-int minlength), ValueError (not
    1-D, weights of another shape, minlength < 0)."""
    x = _tensor_arg(input, "bincount")
    if x.dtype not in mstype.int_type:
        raise TypeError(f"For 'bincount', the input must be an integer Tensor, but got {_got(x)}.")
    if x.ndim != 1:
        raise ValueError(f"For 'bincount', the input must be 1-D, but got shape {tuple(x.shape)}.")
    if not _is_int(minlength):
        raise TypeError(f"For 'bincount', 'minlength' must be an int, but got {_got(minlength)}.")
    if minlength < 0:
        raise ValueError(f"For 'bincount', 'minlength' must be >= 0, but got {minlength}.")
    data = x.asnumpy()
    length = builtins.max(int(data.max()) + 1 if data.size else 0, int(minlength), 0)
    if weights is None:
        w = _core.ones_like(_core.cast(x, mstype.float32))
    else:
        w = _tensor_arg(weights, "bincount", "weights")
        if tuple(w.shape) != tuple(x.shape):
            raise ValueError(f"For 'bincount', 'weights' must have the input's shape {tuple(x.shape)}, but got "
                             f"{tuple(w.shape)}.")
        w = _core.cast(w, mstype.float32)
    seg = _core.cast(_core.select(_core.less(x, 0), _core.full([], length, x.dtype), x), mstype.int64)
    out = _core.unsorted_segment_sum(w, seg, length + 1)
    return _core.strided_slice(out, [0], [length], [1])


# ---------------------------------------------------------------------------------------------- covariance, calculus

@defop(tensor="cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """MindSpore's ops.cov(input, *, correction=1, fweights=None, aweights=None): the covariance matrix of the
    variables in input's rows (observations in columns; a 1-D input is one variable and gives a 0-d variance), with
    integer frequency weights and float observation weights (NumPy's np.cov formula: Σw·(x − x̄)(y − ȳ)/(Σw −
    correction·Σw·a/Σw), w = fweights·aweights). Integer inputs compute in float32. Raises TypeError (non-Tensor,
    non-int correction), ValueError (more than 2 dims, weights of the wrong length)."""
    x = _as_float(input, "cov")
    if x.ndim > 2:
        raise ValueError(f"For 'cov', the input must be 1-D or 2-D, but got shape {tuple(x.shape)}.")
    if not _is_int(correction) and not isinstance(correction, bool):
        raise TypeError(f"For 'cov', 'correction' must be an int, but got {_got(correction)}.")
    one_var = x.ndim < 2
    m = _core.reshape(x, [1, -1]) if one_var else x
    n = m.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        wt = _tensor_arg(wt, "cov", name)
        if wt.ndim != 1 or wt.shape[0] != n:
            raise ValueError(f"For 'cov', '{name}' must be 1-D of length {n}, but got shape {tuple(wt.shape)}.")
        wt = _core.cast(wt, m.dtype)
        w = wt if w is None else _core.mul(w, wt)
    if w is None:
        w = _core.full([n], 1.0, m.dtype)
    wsum = _core.sum(w, [0], False)
    avg = _core.div(_core.sum(_core.mul(m, w), [1], True), wsum)
    if aweights is None:
        fact = _core.sub(wsum, float(correction))
    else:
        aw = _core.cast(_tensor_arg(aweights, "cov", "aweights"), m.dtype)
        fact = _core.sub(wsum, _core.div(_core.mul(_core.sum(_core.mul(w, aw), [0], False), float(correction)),
                                         wsum))
    fact = _core.maximum(fact, _core.zeros_like(fact))
    d = _core.sub(m, avg)
    c = _core.div(_core.matmul(_core.mul(d, w), _core.transpose(d, [1, 0])), fact)
    return _core.reshape(c, []) if one_var else c


@defop()
def trapz(y, x=None, *, dx=1.0, dim=-1):
    """MindSpore's ops.trapz(y, x=None, *, dx=1.0, dim=-1): the trapezoidal rule Σ (y[i] + y[i+1])/2·Δ along `dim`,
    with Δ = diff(x) (x 1-D of y's length on dim, or y's shape) or the constant dx. Integer inputs compute in float32.
    Raises TypeError (non-Tensor y, non-number dx), ValueError (x of the wrong shape, dim out of range)."""
    t = _as_float(y, "trapz", "y")
    ax = _axis1("trapz", dim, t.ndim, "dim")
    n = t.shape[ax]
    if n < 2:
        shape = [s for i, s in enumerate(t.shape) if i != ax]
        return _core.full(shape, 0.0, t.dtype)
    lo = _slice_axis(t, ax, 0, n - 1)
    hi = _slice_axis(t, ax, 1, n)
    mid = _core.mul(_core.add(lo, hi), 0.5)
    if x is None:
        if isinstance(dx, bool) or not isinstance(dx, numbers.Real):
            raise TypeError(f"For 'trapz', 'dx' must be a number, but got {_got(dx)}.")
        return _core.mul(_core.sum(mid, [ax], False), float(dx))
    xs = _as_float(x, "trapz", "x")
    if xs.ndim == 1:
        if xs.shape[0] != n:
            raise ValueError(f"For 'trapz', a 1-D 'x' must have length {n}, but got {xs.shape[0]}.")
        shape = [1] * t.ndim
        shape[ax] = n
        xs = _core.reshape(xs, shape)
        xax = ax
    elif tuple(xs.shape) == tuple(t.shape):
        xax = ax
    else:
        raise ValueError(f"For 'trapz', 'x' must be 1-D or have y's shape {tuple(t.shape)}, but got "
                         f"{tuple(xs.shape)}.")
    d = _core.sub(_slice_axis(xs, xax, 1, n), _slice_axis(xs, xax, 0, n - 1))
    return _core.sum(_core.mul(mid, _core.cast(d, mid.dtype)), [ax], False)


def _slice_axis(t, ax, start, stop):
    begin = [0] * t.ndim
    end = list(t.shape)
    begin[ax], end[ax] = start, stop
    return _core.strided_slice(t, begin, end, [1] * t.ndim)


@defop(tensor="diff")
def diff(x, n=1, axis=-1, prepend=None, append=None):
    """MindSpore's ops.diff(x, n=1, axis=-1, prepend=None, append=None): the n-th forward difference x[i+1] − x[i]
    along `axis`, after concatenating `prepend` and `append` (Tensors) there; bool inputs give x[i+1] XOR x[i]
    (PyTorch's). n larger than the length gives an empty axis. Raises TypeError (non-Tensor, non-int n), ValueError
    (n < 0, axis out of range, 0-d input)."""
    t = _tensor_arg(x, "diff", "x")
    if not _is_int(n):
        raise TypeError(f"For 'diff', 'n' must be an int, but got {_got(n)}.")
    if n < 0:
        raise ValueError(f"For 'diff', 'n' must be >= 0, but got {n}.")
    if t.ndim == 0:
        raise ValueError("For 'diff', the input must have at least 1 dim, but got a 0-d Tensor.")
    ax = _axis1("diff", axis, t.ndim)
    parts = []
    for name, v in (("prepend", prepend), (None, t), ("append", append)):
        if v is None:
            continue
        v = _tensor_arg(v, "diff", name) if name else v
        parts.append(v)
    if len(parts) > 1:
        t = _core.concat(parts, ax)
    for _ in range(int(n)):
        m = t.shape[ax]
        if m == 0:
            break
        hi, lo = _slice_axis(t, ax, 1, m), _slice_axis(t, ax, 0, m - 1)
        t = _core.logical_xor(hi, lo) if t.dtype == mstype.bool_ else _core.sub(hi, lo)
    return t
