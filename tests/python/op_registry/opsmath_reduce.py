"""Registry entries of kiln/ops/math_reduce_func.py: reductions, statistics, scans, histograms and distances, with
NumPy/SciPy references (written independently of Kiln's formulas)."""

import math

import numpy as np
import scipy.spatial.distance
import scipy.special

import kiln
from kiln import Tensor, ops

from .base import BOOL, F32, F64, I32, I64, NC, OpInfo, Sample, arr, np_value, register

FL = (F32, F64)


def _in_dtype(s):
    return np_value(s.args[0]).dtype


def _reg(name, cname, fn, ref, cases, dtypes=FL, low=-2.0, high=2.0, **kw):
    """cases: (shape, kwargs) pairs (shape None: kwargs['x'] is the array)."""
    def gen(dtype, rng):
        for i, (shape, kwargs) in enumerate(cases):
            kwargs = dict(kwargs)
            desc = str(kwargs)
            grad = kwargs.pop("_grad", True)
            yield Sample((arr(rng, shape, dtype, low, high),), kwargs, desc=desc, grad=grad)
    kw.setdefault("differentiable", True)
    register(OpInfo(name, cname if isinstance(cname, tuple) else (cname,), fn, ref, gen, dtypes, **kw))


# ---------------------------------------------------------------------------------------------- moments

def _np_var(x, axis=None, ddof=0, keepdims=False):
    ax = tuple(axis) if isinstance(axis, (tuple, list)) else axis
    n = x.size if ax is None else int(np.prod([x.shape[a] for a in np.atleast_1d(ax)]))
    v = np.var(x, axis=ax, ddof=0, keepdims=keepdims) * n
    return v / (n - int(ddof)) if n - int(ddof) > 0 else np.full_like(v, np.nan)


_MOM = [((2, 3), {}), ((2, 3), dict(axis=1, ddof=1, keepdims=True)), ((3, 2, 2), dict(axis=(0, 2), ddof=True)),
        ((4,), dict(axis=0, ddof=2)), ((1, 3), dict(axis=0, ddof=1, _grad=False)), (NC, None)]


def _mom_cases():
    return [c for c in _MOM if c[0] is not NC]


_SKIP_MOM = "sums of squares: the special values of x - mean and its square (VarMean's two passes)"
_reg("var", ("VarMean",), lambda x, **k: ops.var(x, **k), _np_var, _mom_cases(),
     special_skip=_SKIP_MOM)
_reg("std", ("VarMean",), lambda x, **k: ops.std(x, **k), lambda x, **k: np.sqrt(_np_var(x, **k)),
     _mom_cases(), special_skip=_SKIP_MOM)
_reg("var_mean", ("VarMean",), lambda x, **k: ops.var_mean(x, **k),
     lambda x, axis=None, ddof=0, keepdims=False: (
         _np_var(x, axis, ddof, keepdims),
         np.mean(x, axis=tuple(axis) if isinstance(axis, (tuple, list)) else axis, keepdims=keepdims)),
     _mom_cases(), special_skip=_SKIP_MOM)
_reg("std_mean", ("VarMean",), lambda x, **k: ops.std_mean(x, **k),
     lambda x, axis=None, ddof=0, keepdims=False: (
         np.sqrt(_np_var(x, axis, ddof, keepdims)),
         np.mean(x, axis=tuple(axis) if isinstance(axis, (tuple, list)) else axis, keepdims=keepdims)),
     _mom_cases(), special_skip=_SKIP_MOM)


def _with_nans(dtype, rng, shape):
    x = arr(rng, shape, dtype)
    if dtype.kind == "f":
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, flat.size // 3, replace=False)] = np.nan
    return x


def _nan_samples(kws):
    def gen(dtype, rng):
        for kw in kws:
            yield Sample((_with_nans(dtype, rng, (3, 4)),), kw, desc=str(kw))
        yield Sample((arr(rng, (2, 3), dtype),), {}, desc="no NaN")
    return gen


def _ax(axis):
    return tuple(axis) if isinstance(axis, (tuple, list)) else axis


register(OpInfo("nansum", ("ReduceSum", "Select"), lambda x, **k: ops.nansum(x, **k),
                lambda x, axis=None, keepdims=False: np.nansum(x, axis=_ax(axis), keepdims=keepdims).astype(x.dtype),
                _nan_samples([{}, dict(axis=1), dict(axis=(0, 1), keepdims=True)]), FL + (I32,),
                differentiable=True, special_skip="the samples hold NaN"))
register(OpInfo("nanmean", ("ReduceSum", "Div"), lambda x, **k: ops.nanmean(x, **k),
                lambda x, axis=None, keepdims=False: np.nanmean(x, axis=_ax(axis), keepdims=keepdims),
                _nan_samples([{}, dict(axis=0), dict(axis=1, keepdims=True)]), FL, differentiable=True,
                special_skip="the samples hold NaN"))


def _np_count_nonzero(x, axis=(), keep_dims=False, dtype=None):
    ax = None if axis == () else _ax(axis)
    return np.count_nonzero(x, axis=ax, keepdims=keep_dims).astype(np.int32)


def _cnz_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, -1, 1) if dtype.kind != "f" else np.round(arr(rng, (3, 4), dtype, -1, 1))
    yield Sample((x,))
    yield Sample((x,), dict(axis=1, keep_dims=True))
    yield Sample((x,), dict(axis=(0, 1)))


register(OpInfo("count_nonzero", ("CountNonZero", "Cast"), lambda x, **k: ops.count_nonzero(x, **k),
                _np_count_nonzero, _cnz_samples, FL + (I32, BOOL), out_dtype=lambda s: I32))


def _all_any_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, -1, 1) if dtype.kind != "f" else np.round(arr(rng, (3, 4), dtype, -1, 1))
    x[1] = 1  # a row with no zero
    yield Sample((x,))
    yield Sample((x,), dict(axis=1, keep_dims=True))
    yield Sample((x,), dict(axis=(0, 1)))
    yield Sample((np.zeros((2, 3), dtype),), dict(axis=0))


for _name, _npf in (("all", np.all), ("any", np.any)):
    register(OpInfo(_name, ("ReduceAll" if _name == "all" else "ReduceAny",),
                    lambda x, _f=getattr(ops, _name), **k: _f(x, **k),
                    lambda x, axis=None, keep_dims=False, _f=_npf: _f(x, axis=_ax(axis), keepdims=keep_dims),
                    _all_any_samples, FL + (I32, BOOL), out_dtype=lambda s: BOOL))


def _np_aminmax(x, axis=0, keepdims=False):
    return np.min(x, axis=axis, keepdims=keepdims), np.max(x, axis=axis, keepdims=keepdims)


_reg("aminmax", ("ReduceMin", "ReduceMax"), lambda x, **k: ops.aminmax(x, **k), _np_aminmax,
     [((3, 4), {}), ((3, 4), dict(axis=1, keepdims=True)), ((2, 3), dict(axis=None))], FL + (I32,),
     special_skip="amin's and amax's special values")


# ---------------------------------------------------------------------------------------------- scans

def _np_cum(x, axis, mx=True):
    """Running max/min with the index of its last occurrence; NaN sticks and each later NaN takes the index (MindSpore
    2.10 CPU: [nan, 1, 2, nan, 0] gives indices [0, 0, 0, 3, 3] for cummax and cummin)."""
    x = np.moveaxis(x, axis, -1)
    vals, idx = np.empty_like(x), np.zeros(x.shape, np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        best, bi = None, 0
        for i, v in enumerate(x[pos]):
            if best is None or np.isnan(v) or (not np.isnan(best) and (v >= best if mx else v <= best)):
                best, bi = v, i
            vals[pos + (i,)], idx[pos + (i,)] = best, bi
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def _cum_samples(dtype, rng):
    yield Sample((np.round(arr(rng, (3, 7), dtype, -3, 3)),), dict(axis=1), desc="ties", grad=False)
    yield Sample((arr(rng, (5, 2), dtype),), dict(axis=0))
    yield Sample((arr(rng, (2, 3, 4), dtype),), dict(axis=-1))
    if dtype.kind == "f":
        x = arr(rng, (2, 5), dtype)
        x[0, 2] = x[1, 1] = x[1, 3] = np.nan
        yield Sample((x,), dict(axis=1), desc="NaN sticks", grad=False)
    yield Sample((arr(rng, (2, 0), dtype),), dict(axis=1), desc="empty", grad=False)
    yield Sample((np.round(arr(rng, (4, 3, 5), dtype, -2, 2)),), dict(axis=-3), desc="ties, negative outer axis",
                 grad=False)
    # more than cpu::kParallelMin elements: the lines go to the OpenMP threads (src/ops/scan.cpp)
    yield Sample((arr(rng, (40, 30, 30), dtype, -1, 1),), dict(axis=1), desc="threaded lines", grad=False)


register(OpInfo("cummax", ("CumMax",), lambda x, axis: ops.cummax(x, axis),
                lambda x, axis: _np_cum(x, axis, True), _cum_samples, FL + (I32, I64), differentiable=True,
                special_skip="the samples hold NaN; selection of existing elements"))
register(OpInfo("cummin", ("CumMin",), lambda x, axis: ops.cummin(x, axis),
                lambda x, axis: (lambda v, i: (v, i.astype(np.int32)))(*_np_cum(x, axis, False)), _cum_samples,
                FL + (I32, I64), differentiable=True,
                special_skip="the samples hold NaN; selection of existing elements"))


def _np_lcse(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


_reg("logcumsumexp", ("LogCumSumExp",), lambda x, axis: ops.logcumsumexp(x, axis), _np_lcse,
     [((3, 7), dict(axis=1)), ((5, 2), dict(axis=0)), ((2, 3, 4), dict(axis=-2)), ((1, 4), dict(axis=0)),
      ((2, 0), dict(axis=1, _grad=False)), ((40, 30, 30), dict(axis=1, _grad=False))], low=-5.0, high=5.0,
     special_skip="a scan: a special value spreads along its line (test_issue23_kernels.py checks -inf, inf, NaN)")


# ---------------------------------------------------------------------------------------------- order statistics

def _np_median(x, axis=-1, keepdims=False, nan=False):
    x = np.moveaxis(x, axis, -1)
    vals = np.empty(x.shape[:-1], x.dtype)
    idx = np.zeros(x.shape[:-1], np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        row = x[pos]
        order = np.argsort(row, kind="stable")  # NaN last
        k = int(np.sum(~np.isnan(row))) if row.dtype.kind == "f" else row.size
        if nan:
            j = max((k - 1) // 2, 0)
        else:
            j = k if k < row.size else (row.size - 1) // 2
        vals[pos], idx[pos] = row[order[j]], order[j]
    if keepdims:
        vals, idx = np.expand_dims(vals, axis), np.expand_dims(idx, axis)
    return vals, idx


def _median_samples(dtype, rng):
    yield Sample((arr(rng, (3, 5), dtype, -9, 9),), {})
    yield Sample((arr(rng, (4, 3), dtype, -9, 9),), dict(axis=0, keepdims=True), desc="even count")
    yield Sample((arr(rng, (2, 3, 2), dtype, -9, 9),), dict(axis=1))
    if dtype.kind == "f":
        x = arr(rng, (3, 4), dtype)
        x[0, 1] = x[1, 0] = x[1, 2] = np.nan
        x[2, :] = np.nan
        yield Sample((x,), {}, desc="NaN", grad=False)


register(OpInfo("median", ("Median",), lambda x, **k: ops.median(x, **k),
                lambda x, **k: _np_median(x, **k), _median_samples, FL + (I32,), differentiable=True,
                out_dtype=None, special_skip="the samples hold NaN"))
register(OpInfo("nanmedian", ("Median",), lambda x, **k: ops.nanmedian(x, **k),
                lambda x, **k: _np_median(x, nan=True, **k), _median_samples, FL, differentiable=True,
                special_skip="the samples hold NaN"))


def _q_samples(dtype, rng):
    yield Sample((arr(rng, (3, 5), dtype),), dict(q=0.3))
    yield Sample((arr(rng, (3, 4), dtype),), dict(q=np.array([0.25, 0.5, 1.0], dtype), axis=1, keepdims=True),
                 desc="tensor q")
    yield Sample((arr(rng, (2, 3, 2), dtype),), dict(q=0.0, axis=0))
    yield Sample((arr(rng, (4, 3), dtype),), dict(q=0.75, keepdims=True), desc="all, keepdims")
    x = arr(rng, (3, 4), dtype)
    x[0, 1] = x[1, 0] = x[1, 2] = np.nan
    x[2, :] = np.nan
    yield Sample((x,), dict(q=np.array([0.4, 0.9], dtype), axis=1), desc="NaN", grad=False)


def _kq(x, q, **k):
    return ops.quantile(x, Tensor(q) if isinstance(q, np.ndarray) else q, **k)


def _knq(x, q, **k):
    return ops.nanquantile(x, Tensor(q) if isinstance(q, np.ndarray) else q, **k)


register(OpInfo("quantile", ("ArgSort", "GatherD", "Floor"), _kq,
                lambda x, q, axis=None, keepdims=False: np.quantile(x, q, axis=axis, keepdims=keepdims),
                _q_samples, FL, differentiable=True, out_dtype=_in_dtype, special_skip="the samples hold NaN"))
register(OpInfo("nanquantile", ("ArgSort", "GatherD", "Floor"), _knq,
                lambda x, q, axis=None, keepdims=False: np.nanquantile(x, q, axis=axis, keepdims=keepdims),
                _q_samples, FL, differentiable=True, out_dtype=_in_dtype, special_skip="the samples hold NaN"))


# ---------------------------------------------------------------------------------------------- histograms

def _np_histc(x, bins=100, min=0.0, max=0.0):
    lo, hi = (min, max) if min != max else ((x.min(), x.max()) if x.size else (min, max))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(x, bins, (lo, hi))[0].astype(x.dtype)


def _histc_samples(dtype, rng):
    yield Sample((arr(rng, (3, 4), dtype, -3, 3),), dict(bins=4))
    yield Sample((arr(rng, (20,), dtype, -3, 3),), dict(bins=5, min=-1.0, max=2.0), desc="range")
    yield Sample((np.full((3,), 2, dtype),), dict(bins=3), desc="constant")


register(OpInfo("histc", ("UnsortedSegmentSum", "Floor"), lambda x, **k: ops.histc(x, **k), _np_histc,
                _histc_samples, FL + (I32,), ref_upcast=False, special_skip="counts; NaN is outside every bin"))


def _bincount_samples(dtype, rng):
    yield Sample((rng.integers(-1, 6, (10,)).astype(dtype),), {})
    yield Sample((rng.integers(0, 4, (7,)).astype(dtype),), dict(weights=rng.uniform(-1, 1, 7).astype(np.float32),
                                                                 minlength=6), desc="weights")
    yield Sample((np.zeros((0,), dtype),), dict(minlength=2), desc="empty")


def _np_bincount(x, weights=None, minlength=0):
    keep = x >= 0
    w = None if weights is None else weights[keep]
    return np.bincount(x[keep], w, minlength=max(minlength, int(x.max()) + 1 if x.size else 0)).astype(np.float32)


register(OpInfo("bincount", ("UnsortedSegmentSum", "Select"),
                lambda x, weights=None, minlength=0: ops.bincount(x, None if weights is None else Tensor(weights),
                                                                   minlength), _np_bincount, _bincount_samples,
                (I32, I64), out_dtype=lambda s: F32, graph=False,
                graph_reason="the output length is max(input) + 1: it reads the data (as MindSpore's dynamic shape)"))


# ---------------------------------------------------------------------------------------------- covariance, calculus

def _cov_samples(dtype, rng):
    yield Sample((arr(rng, (3, 5), dtype),), {})
    yield Sample((arr(rng, (6,), dtype),), dict(correction=0), desc="1-D")
    yield Sample((arr(rng, (2, 4), dtype),), dict(fweights=np.array([1, 2, 1, 3], np.int32),
                                                  aweights=np.array([0.5, 1.0, 2.0, 0.25], np.float32)),
                 desc="weights")


def _kcov(x, **k):
    return ops.cov(x, **{n: Tensor(v) if isinstance(v, np.ndarray) else v for n, v in k.items()})


def _np_cov(x, correction=1, fweights=None, aweights=None):
    return np.cov(x, ddof=correction, fweights=fweights, aweights=aweights)


register(OpInfo("cov", ("BatchMatMul", "ReduceSum", "Div"), _kcov, _np_cov, _cov_samples, FL + (I32,),
                differentiable=True, out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32,
                special_skip="a matmul of centred data: BatchMatMul's special values"))


def _trapz_samples(dtype, rng):
    yield Sample((arr(rng, (2, 5), dtype),), {})
    yield Sample((arr(rng, (3, 4), dtype),), dict(x=np.sort(arr(rng, (4,), dtype))), desc="1-D x")
    yield Sample((arr(rng, (4, 3), dtype),), dict(dx=0.5, dim=0), desc="dx")
    yield Sample((arr(rng, (2, 3), dtype),), dict(x=arr(rng, (2, 3), dtype)), desc="x like y")


def _ktrapz(y, x=None, **k):
    return ops.trapz(y, None if x is None else Tensor(x), **k)


def _np_trapz(y, x=None, dx=1.0, dim=-1):
    if x is not None and x.ndim == 1:
        return np.trapezoid(y, x.astype(np.float64), axis=dim)
    return np.trapezoid(y, None if x is None else x.astype(np.float64), dx=dx, axis=dim)


register(OpInfo("trapz", ("Add", "Mul", "ReduceSum"), _ktrapz, _np_trapz, _trapz_samples, FL + (I32,),
                differentiable=True, out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32,
                special_skip="sums of products: Add's, Mul's and ReduceSum's special values", tol={F32: (1e-5, 1e-5)}))


def _diff_samples(dtype, rng):
    yield Sample((arr(rng, (2, 5), dtype),), {})
    yield Sample((arr(rng, (4, 3), dtype),), dict(n=2, axis=0), desc="n=2")
    yield Sample((arr(rng, (2, 3), dtype),), dict(prepend=arr(rng, (2, 1), dtype), append=arr(rng, (2, 2), dtype)),
                 desc="prepend/append")
    yield Sample((arr(rng, (3,), dtype),), dict(n=4), desc="n > length")


def _kdiff(x, **k):
    return ops.diff(x, **{n: Tensor(v) if isinstance(v, np.ndarray) else v for n, v in k.items()})


register(OpInfo("diff", ("Sub", "StridedSlice"), _kdiff, lambda x, n=1, axis=-1, **k: np.diff(x, n, axis, **k),
                _diff_samples, FL + (I32, BOOL), differentiable=True, out_dtype=_in_dtype,
                special_skip="differences: Sub's special values"))


# ---------------------------------------------------------------------------------------------- distances and norms

def _np_pnorm(d, p, axis):
    a = np.abs(d)
    if p == np.inf:
        return a.max(axis)
    if p == 0:
        return (d != 0).sum(axis).astype(d.dtype)
    return (a ** p).sum(axis) ** (1 / p)


def _np_cdist(a, b, p=2.0):
    return _np_pnorm(a[..., :, None, :] - b[..., None, :, :], p, -1)


def _cdist_samples(dtype, rng):
    yield Sample((arr(rng, (3, 2), dtype), arr(rng, (4, 2), dtype)), {})
    yield Sample((arr(rng, (2, 3, 3), dtype), arr(rng, (2, 2, 3), dtype)), dict(p=1.0), desc="batched, p=1")
    yield Sample((arr(rng, (3, 2), dtype), arr(rng, (2, 2), dtype)), dict(p=np.inf), desc="inf")
    yield Sample((arr(rng, (3, 2), dtype), arr(rng, (2, 2), dtype)), dict(p=3.0), desc="p=3")
    x = arr(rng, (2, 3), dtype)
    yield Sample((x, x.copy()), desc="zero distances (gradient 0)")


register(OpInfo("cdist", ("Sub", "ReduceSum", "Sqrt"), lambda a, b, **k: ops.cdist(a, b, **k), _np_cdist,
                _cdist_samples, FL, differentiable=True, special_skip="norms of differences: Sub's/Sqrt's special "
                "values", kinks={0.0: None}))
register(OpInfo("dist", ("Sub", "ReduceSum"), lambda a, b, **k: ops.dist(a, b, **k),
                lambda a, b, p=2: _np_pnorm((a - b).reshape(-1), p, 0),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype))),
                                         Sample((arr(rng, (4,), dtype), arr(rng, (4,), dtype)), dict(p=3)),
                                         Sample((arr(rng, (2, 2), dtype), arr(rng, (2, 2), dtype)), dict(p=0),
                                                grad=False)]),
                FL, differentiable=True, special_skip="as cdist", kinks={0.0: None}))
def _np_pdist(x, p=2.0):
    if p == 0:
        i, j = np.triu_indices(x.shape[0], 1)
        return (x[i] != x[j]).sum(1).astype(x.dtype)
    return scipy.spatial.distance.pdist(x, "minkowski", p=p) if p != np.inf else \
        scipy.spatial.distance.pdist(x, "chebyshev")


# The gradients at a pair at distance 0, at an equal coordinate for p < 1 and at ties of the largest |difference|
# for p = inf (not differentiable there) are MindSpore 2.10's, checked in test_issue23_fold_pdist.py.
register(OpInfo("pdist", ("Pdist", "PdistGrad"), lambda x, **k: ops.pdist(x, **k), _np_pdist,
                lambda dtype, rng: iter([Sample((arr(rng, (4, 3), dtype),)),
                                         Sample((arr(rng, (3, 2), dtype),), dict(p=1.0)),
                                         Sample((arr(rng, (3, 2), dtype),), dict(p=np.inf)),
                                         Sample((arr(rng, (4, 3), dtype),), dict(p=0.5), desc="p < 1"),
                                         Sample((arr(rng, (3, 4), dtype),), dict(p=3.0), desc="p = 3"),
                                         Sample((arr(rng, (3, 2), dtype),), dict(p=0.0), desc="p = 0: a count",
                                                grad=False),
                                         Sample((arr(rng, (1, 3), dtype),), desc="one row: no pairs")]),
                FL, differentiable=True, special_skip="as cdist",
                notes="one Pdist op; its gradient PdistGrad (PyTorch's and MindSpore's pdist backward)"))


def _np_renorm(x, p, axis, maxnorm):
    others = tuple(i for i in range(x.ndim) if i != axis)
    n = (np.abs(x) ** p).sum(others, keepdims=True) ** (1 / p)
    return x * np.where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)


register(OpInfo("renorm", ("ReduceSum", "Select", "Mul"), lambda x, **k: ops.renorm(x, **k), _np_renorm,
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(p=2, axis=0, maxnorm=1.5)),
                                         Sample((arr(rng, (2, 3, 2), dtype),), dict(p=1, axis=1, maxnorm=2.0))]),
                FL, differentiable=True, special_skip="a scaled norm: ReduceSum's special values"))


def _np_vector_norm(x, ord=2, axis=None, keepdims=False, dtype=None):
    ax = _ax(axis)
    a = np.abs(x)
    if ord == np.inf:
        return a.max(ax, keepdims=keepdims)
    if ord == -np.inf:
        return a.min(ax, keepdims=keepdims)
    if ord == 0:
        return (x != 0).sum(ax, keepdims=keepdims).astype(x.dtype)
    return (a ** ord).sum(ax, keepdims=keepdims) ** (1 / ord)


_reg("vector_norm", ("ReduceSum", "Sqrt"), lambda x, **k: ops.vector_norm(x, **k), _np_vector_norm,
     [((2, 3), {}), ((2, 3), dict(ord=1, axis=1)), ((3, 2, 2), dict(ord=3, axis=(0, 2), keepdims=True)),
      ((2, 4), dict(ord=np.inf, axis=1)), ((2, 4), dict(ord=-np.inf)), ((2, 4), dict(ord=0, axis=0, _grad=False)),
      ((4,), dict(ord=0.5))], FL + (I32,), special_skip="as ops.norm",
     out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32)


def _np_matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False):
    return np.linalg.norm(x, ord, tuple(axis), keepdims)


_reg("matrix_norm", ("ReduceSum", "ReduceMax"), lambda x, **k: ops.matrix_norm(x, **k), _np_matrix_norm,
     [((2, 3), {}), ((2, 3), dict(ord=1)), ((2, 3, 3), dict(ord=-1)), ((3, 2), dict(ord=np.inf, keepdims=True)),
      ((2, 2, 3), dict(ord=-np.inf, axis=(0, 2)))], FL + (I32,), special_skip="as ops.norm",
     out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32)


# ---------------------------------------------------------------------------------------------- more public functions
# cumsum, reduce_sum, clip_by_value, clip_by_global_norm: functions of kiln.ops that only their Primitive classes
# (CumSum, ReduceSum) or Cells reached before.

def _cumsum_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((2, 5)), 1))
    yield Sample((a((4, 3)), -2), desc="negative axis")
    yield Sample((NC(a((3, 4)), "T"), 0), desc="view")
    yield Sample((a((0, 3)), 1), desc="empty")


register(OpInfo("cumsum", ("CumSum",), lambda x, axis: ops.cumsum(x, axis),
                lambda x, axis: np.cumsum(x, axis).astype(x.dtype), _cumsum_samples, (F32, F64, I32, I64),
                differentiable=True, ref_upcast=False,
                special_skip="a running sum: one inf/NaN fills the rest of its row, as NumPy's (checked by CumSum)"))
register(OpInfo("cumsum_dtype", ("CumSum", "Cast"), lambda x, axis: ops.cumsum(x, axis, dtype=kiln.float64),
                lambda x, axis: np.cumsum(x.astype(np.float64), axis), _cumsum_samples, (I32, F32),
                ref_upcast=False, out_dtype=lambda s: F64,
                notes="dtype= casts the input first (MindSpore 2.10: Int32 in, Float64 out)"))


def _reduce_sum_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((2, 3, 4)),), dict(axis=1))
    yield Sample((a((2, 3, 4)),), dict(axis=(0, 2)), desc="two axes")
    yield Sample((NC(a((3, 4)), "T"),), dict(axis=()), desc="all axes (the default ())")


register(OpInfo("reduce_sum", ("ReduceSum",), lambda x, axis=(): ops.reduce_sum(x, axis),
                lambda x, axis=(): np.sum(x, axis=None if axis == () else axis), _reduce_sum_samples,
                (F32, F64, I32), differentiable=True, tol={F32: (1e-5, 1e-5)}))


def _clip_value_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((3, 4)), -0.5, 0.75), desc="Python bounds")
    yield Sample((a((3, 4)), np.asarray(-1.0, dtype), np.asarray(1.0, dtype)), desc="0-d Tensor bounds")
    yield Sample((NC(a((3, 4)), "T"), None, 0.5), desc="upper bound only, view")
    yield Sample((a((2, 3)), -0.5, None), desc="lower bound only")


register(OpInfo("clip_by_value", ("Maximum", "Minimum"), lambda x, lo, hi: ops.clip_by_value(x, lo, hi),
                lambda x, lo, hi: np.clip(x, lo, hi), _clip_value_samples, (F32, F64), differentiable=True,
                grad_args=(0,), notes="samples keep inputs off the bounds; gradient 1 inside, 0 outside"))


def _np_clip_global(xs, clip_norm=1.0):
    norm = math.sqrt(sum(float(np.sum(x.astype(np.float64) ** 2)) for x in xs))
    return tuple(x * clip_norm / max(norm, clip_norm) for x in xs)


def _clip_global_samples(dtype, rng):
    a = lambda s, lo=-2, hi=2: arr(rng, s, dtype, lo, hi)
    yield Sample((a((3, 4)), a((5,))), dict(clip_norm=1.0), desc="norm above clip_norm: scaled")
    yield Sample((a((2, 2), -0.1, 0.1), a((3,), -0.1, 0.1)), dict(clip_norm=5.0), desc="norm below: unchanged")


register(OpInfo("clip_by_global_norm", ("Square", "ReduceSum", "Sqrt", "Maximum", "Div", "Mul"),
                lambda *xs, clip_norm=1.0: ops.clip_by_global_norm(xs, clip_norm),
                lambda *xs, clip_norm=1.0: _np_clip_global(xs, clip_norm), _clip_global_samples, (F32, F64),
                differentiable=True, special_skip="one global norm over every input: a NaN/inf anywhere scales all"))
