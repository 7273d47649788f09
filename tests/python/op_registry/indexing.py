"""Registry entries of kiln/ops/search_func.py and kiln/ops/scatter_ext_func.py: index_select/fill/add,
masked_select, argwhere, msort, top_k, searchsorted, bucketize, unique*, the reducing scatters, element scatters and
segment reductions. References are NumPy loops (np.*.at for the scatters)."""
import numpy as np

from kiln import ops

from .base import BOOL, F16, F32, F64, FLOATS, I32, I64, NC, OpInfo, Sample, arr, np_value, register
from .state import _param, _run_stateful

FL = (F32, F64)
MOVE = FLOATS + (I32,)
PYNATIVE = "the output shape depends on the values: PyNative only (as ops.nonzero)"


def _row(name, kernels, op, ref, samples, dtypes=MOVE, differentiable=True, **kw):
    register(OpInfo(name, kernels, op, ref, samples, dtypes, differentiable=differentiable, **kw))


def _gen(*make):
    def gen(dtype, rng):
        a = lambda s, lo=-2.0, hi=2.0: arr(rng, s, dtype, lo, hi)
        for m in make:
            yield m(a, rng)
    return gen


def _ix(*v, dt=np.int32):
    return np.array(v, dt)


# ---------------------------------------------------------------------------------------------- index_*

_row("index_select", ("Gather",), lambda x, axis, idx: ops.index_select(x, axis, idx),
     lambda x, axis, idx: np.take(x, idx, axis),
     _gen(lambda a, r: Sample((a((2, 3)), 1, _ix(2, 0, 2))),
          lambda a, r: Sample((NC(a((4, 2)), "T"), -2, _ix(-1, 0, dt=np.int64)), desc="negative, view"),
          lambda a, r: Sample((a((3,)), 0, np.zeros((0,), np.int32)), desc="empty index")), grad_args=(0,))


def _np_index_fill(x, axis, idx, value):
    y = np.array(x, copy=True)
    sl = [slice(None)] * x.ndim
    sl[axis] = np.asarray(idx).reshape(-1)
    y[tuple(sl)] = value
    return y


_row("index_fill", ("TensorScatterElements",), lambda x, axis, idx, value: ops.index_fill(x, axis, idx, value), _np_index_fill,
     _gen(lambda a, r: Sample((a((2, 3)), 1, _ix(0, -1), 2.0)),
          lambda a, r: Sample((a((3, 2)), 0, _ix(1, 1, dt=np.int64), -1.0), desc="repeated index"),
          lambda a, r: Sample((a((3, 2)), -1, np.array(0, np.int32), a(())), desc="0-d index, Tensor value")),
     grad_args=(0,))


def _np_index_add(x, idx, y, axis):
    out = np.array(x, copy=True)
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, np.asarray(idx) % x.shape[axis], np.moveaxis(y, axis, 0))
    return out


_row("index_add", ("TensorScatterElements",), lambda x, idx, y, axis: ops.index_add(x.copy(), idx, y, axis),
     _np_index_add,
     _gen(lambda a, r: Sample((a((2, 3)), _ix(0, 2, 0), a((2, 3)), 1), desc="duplicates accumulate"),
          lambda a, r: Sample((a((3, 2)), _ix(-1, dt=np.int64), a((1, 2)), 0), desc="negative index"),
          lambda a, r: Sample((NC(a((2, 4)), "T"), _ix(3, 0), a((2, 2)), -1), desc="view")),
     grad_args=(0, 2))
_row("masked_select", ("NonZero", "Gather"), lambda x, m: ops.masked_select(x, m),
     lambda x, m: np.broadcast_to(x, np.broadcast_shapes(x.shape, m.shape))[
         np.broadcast_to(m, np.broadcast_shapes(x.shape, m.shape))],
     _gen(lambda a, r: Sample((a((2, 3)), r.random((2, 3)) < 0.5)),
          lambda a, r: Sample((a((2, 3)), np.array([True, False, True])), desc="broadcast mask"),
          lambda a, r: Sample((a((3, 1)), r.random((1, 2)) < 0.5), desc="both broadcast")),
     graph=False, graph_reason=PYNATIVE, grad_args=(0,))
_row("argwhere", ("NonZero",), ops.argwhere, np.argwhere,
     _gen(lambda a, r: Sample((np.where(r.random((3, 4)) < 0.5, a((3, 4)), 0),)),
          lambda a, r: Sample((a(()),), desc="0-d")),
     MOVE + (BOOL,), differentiable=False, graph=False, graph_reason=PYNATIVE,
     special_skip="NaN and ±inf are non-zero: covered by the forward samples")
_row("msort", ("ArgSort", "GatherD"), ops.msort, lambda x: np.sort(x, axis=0),
     _gen(lambda a, r: Sample((a((4, 3)),)), lambda a, r: Sample((NC(a((2, 5)), "T"),), desc="view"),
          lambda a, r: Sample((a((5,)),), desc="1-D")))


def _np_top_k(x, k, sorted=True):
    """(values, the input's values at the indices): ties' indices are MindSpore 2.10's (test_values_issue24.py)."""
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    v = np.take_along_axis(x, idx, -1)
    return v, v


def _top_k_picked(x, k):
    v, i = ops.top_k(x, k)
    return v, ops.gather_elements(x, -1, i)


_row("top_k", ("ArgSort", "GatherD"), _top_k_picked, _np_top_k,
     _gen(lambda a, r: Sample((a((3, 5)), 2)), lambda a, r: Sample((a((4,)), 4), desc="k = n")),
     ref_upcast=False, special_skip="ops.topk's entry covers NaN ordering; top_k is topk with dim=-1")


# ---------------------------------------------------------------------------------------------- search

def _np_searchsorted(seq, v, sorter=None, out_int32=False, right=False, side=None):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side)
    else:
        out = np.stack([np.searchsorted(s, vv, side) for s, vv in zip(seq.reshape(-1, seq.shape[-1]),
                                                                         v.reshape(-1, v.shape[-1]))])
        out = out.reshape(v.shape)
    return np.asarray(out).astype(np.int32 if out_int32 else np.int64)


def _ss_samples(dtype, rng):
    s = np.sort(arr(rng, (6,), dtype, -3, 3))
    yield Sample((s, arr(rng, (2, 3), dtype, -4, 4)))
    yield Sample((s, s[[0, 2, 5]].copy()), dict(right=True), desc="values on the sequence, right")
    yield Sample((s, s[[0, 3]].copy()), dict(side="left", out_int32=True), desc="side='left', out_int32")
    yield Sample((np.sort(arr(rng, (2, 4), dtype, -3, 3), -1), arr(rng, (2, 3), dtype, -3, 3)), desc="batched")
    perm = rng.permutation(6)
    yield Sample((s[perm].copy(), arr(rng, (3,), dtype, -4, 4), np.argsort(s[perm], kind="stable")),
                 desc="sorter")


_row("searchsorted", ("Less", "LessEqual", "CountNonZero"),
     lambda seq, v, sorter=None, **kw: ops.searchsorted(seq, v, sorter=sorter, **kw), _np_searchsorted, _ss_samples,
     FLOATS + (I32, I64),
     differentiable=False, ref_upcast=False,
     special_ok=lambda s: s.args[0].ndim == 1 and len(s.args) == 2,
     special_args=(1,), notes="NaN values sort last (NumPy's order)")


def _np_bucketize(x, boundaries, right=False):
    return np.searchsorted(np.asarray(boundaries), x, "right" if right else "left").astype(np.int32)


_row("bucketize", ("Less", "LessEqual", "CountNonZero"),
     lambda x, boundaries, right=False: ops.bucketize(x, boundaries, right=right), _np_bucketize,
     _gen(lambda a, r: Sample((a((2, 3), -3, 3), [-1.0, 0.0, 1.5])),
          lambda a, r: Sample((np.array([[1, 3, 5], [7, 9, 0]]).astype(a(()).dtype), [1.0, 3.0, 5.0, 7.0, 9.0]),
                              dict(right=True), desc="on the boundaries, right"),
          lambda a, r: Sample((a(()), [0.0]), desc="0-d")),
     FLOATS + (I32,), differentiable=False, ref_upcast=False)


# ---------------------------------------------------------------------------------------------- unique

def _np_unique(x):
    flat = x.reshape(-1)
    _, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return flat[first[order]], rank[inv.reshape(-1)].reshape(x.shape).astype(np.int64 if x.dtype == I64 else
                                                                              np.int32)


def _dup_samples(dtype, rng):
    yield Sample((np.array([3, 1, 3, 2, 2, 1], dtype),))
    yield Sample((arr(rng, (2, 3), dtype, -1, 1).round(),), desc="2-D")
    yield Sample((np.zeros((0,), dtype),), desc="empty")


_row("unique", (), ops.unique, _np_unique, _dup_samples, FLOATS + (I32, I64), differentiable=False,
     graph=False, graph_reason=PYNATIVE, ref_upcast=False)


def _np_unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    a = x.reshape(-1) if dim is None else np.moveaxis(x, dim, 0)
    n = a.shape[0]
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = np.any((a[1:] != a[:-1]).reshape(n - 1, -1), axis=1)
    starts = np.flatnonzero(change)
    out = a[starts] if dim is None else np.moveaxis(a[starts], 0, dim)
    res = [out]
    if return_inverse:
        res.append((np.cumsum(change) - 1).reshape(x.shape if dim is None else (n,)).astype(np.int64))
    if return_counts:
        res.append(np.diff(np.r_[starts, n]).astype(np.int64))
    return tuple(res) if len(res) > 1 else res[0]


_row("unique_consecutive", (),
     lambda x, *a: ops.unique_consecutive(x, *a), _np_unique_consecutive,
     lambda dtype, rng: iter([Sample((np.array([1, 1, 2, 2, 3, 1], dtype), True, True)),
                              Sample((np.array([[1, 1], [1, 1], [2, 3]], dtype), True, True, 0), desc="dim 0"),
                              Sample((np.array([[1, 1, 2], [1, 1, 3]], dtype), False, True, 1), desc="dim 1"),
                              Sample((np.array([[1, 1], [2, 2]], dtype),), desc="output only")]),
     FLOATS + (I32, I64), differentiable=False, graph=False, graph_reason=PYNATIVE, ref_upcast=False)


def _np_unique_with_pad(x, pad):
    y, idx = _np_unique(x)
    return np.r_[y, np.full(x.size - y.size, pad, x.dtype)].astype(x.dtype), idx.astype(x.dtype)


_row("unique_with_pad", ("Gather", "Concat"), ops.unique_with_pad, _np_unique_with_pad,
     lambda dtype, rng: iter([Sample((np.array([1, 1, 2, 3, 3, 3, 4, 5], dtype), 0)),
                              Sample((np.array([7, -1, 7], dtype), -9), desc="negative pad")]),
     (I32, I64), differentiable=False, graph=False, graph_reason=PYNATIVE)


# ---------------------------------------------------------------------------------------------- segment reductions

def _np_segment(kind):
    def ref(x, ids, num):
        inner = x.shape[ids.ndim:]
        if kind == "sum":
            out = np.zeros((num,) + inner, x.dtype)
        elif kind == "prod":
            out = np.ones((num,) + inner, x.dtype)
        else:
            info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
            out = np.full((num,) + inner, info.min if kind == "max" else info.max, x.dtype)
        fn = {"sum": np.add, "prod": np.multiply, "max": np.fmax, "min": np.fmin}[kind]
        if kind in ("max", "min"):
            fn = np.maximum if kind == "max" else np.minimum
        fn.at(out, ids.reshape(-1), x.reshape((-1,) + inner))
        return out
    return ref


def _seg_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((5, 3)), _ix(0, 2, 0, 1, 2), 4), desc="an empty segment (its ±max fill defeats finite "
                 "differences)", grad=False)
    yield Sample((a((5, 3)), _ix(0, 2, 0, 1, 2), 3), desc="every segment hit")
    yield Sample((a((2, 3, 2)), np.array([[0, 1, 1], [2, 0, 2]], np.int64), 3), desc="2-D ids")
    yield Sample((NC(a((3, 4)), "T"), _ix(1, 1, 0), 2), desc="view")
    yield Sample((a((3,)), _ix(0, 0, 0), 1), desc="one segment")


for _kind, _kernels in (("sum", ("UnsortedSegmentSum",)), ("max", ("ReduceMax", "Select")),
                        ("min", ("ReduceMin", "Select")), ("prod", ("ReduceProd", "Select"))):
    _row(f"unsorted_segment_{_kind}", _kernels, getattr(ops, f"unsorted_segment_{_kind}"), _np_segment(_kind),
         _seg_samples, FL + (F16, I32), grad_args=(0,), ref_upcast=False,
         special_skip="" if _kind == "sum" else "the empty-segment fill is the dtype's lowest/highest value, which "
                                                 "the special-value pass rescales",
         # ties are shared equally within a segment (tests/python/test_ops_array_ext.py); the registry's tie test
         # assumes equal-sized slices, which segments are not
         **({"nan_wins": np.inf if _kind == "max" else -np.inf} if _kind in ("max", "min") else {}))


# ---------------------------------------------------------------------------------------------- reducing scatters

def _np_nd_reduce(kind, rows=False):
    def ref(x, idx, upd):
        out = np.array(x, copy=True)
        if rows:
            idx = idx[..., None]
        k = idx.shape[-1]
        for row, u in zip(idx.reshape(-1, k), upd.reshape((-1,) + x.shape[k:])):
            t = tuple(row)
            if kind == "mul":
                out[t] = out[t] * u
            elif kind == "div":
                out[t] = (out[t] / u) if x.dtype.kind == "f" else np.trunc(out[t] / u).astype(x.dtype)
            elif kind == "max":
                out[t] = np.maximum(out[t], u)
            else:
                out[t] = np.minimum(out[t], u)
        return out
    return ref


def _nonzero(v):
    v = np.array(v, copy=True)
    v[v == 0] = 1
    return v


def _nd_samples(kind):
    def gen(dtype, rng):
        away = 0.5 if kind == "div" else 0.0
        a = lambda s: arr(rng, s, dtype, -2.0, 2.0, away if dtype.kind == "f" else 0)
        d = (lambda s: _nonzero(a(s))) if kind == "div" else a  # no integer division by 0
        yield Sample((a((3, 2)), _ix([0], [2], [0]), d((3, 2))), desc="rows, a duplicate")
        yield Sample((a((2, 3)), _ix([0, 1], [1, 2], dt=np.int64), d((2,))), desc="elements")
        yield Sample((NC(a((3, 2)), "T"), _ix([1], [1]), d((2, 2))), desc="view, duplicate")
    return gen


for _kind in ("mul", "div", "max", "min"):
    _row(f"tensor_scatter_{_kind}", ("TensorScatterReduce",),
         getattr(ops, f"tensor_scatter_{_kind}"), _np_nd_reduce(_kind), _nd_samples(_kind), FL + (F16, I32),
         grad_args=(0, 2), ref_upcast=False)
    _row(f"scatter_nd_{_kind}", ("TensorScatterReduce",),
         lambda x, i, u, _f=getattr(ops, f"scatter_nd_{_kind}"): _f(x.copy(), i, u), _np_nd_reduce(_kind),
         _nd_samples(_kind), FL + (I32,), grad_args=(0, 2), ref_upcast=False, graph=False,
         graph_reason="the values of tensor_scatter_" + _kind + " (covered there) written into input_x: "
                      "tests/python/test_scatter_writes.py", special_skip="as tensor_scatter_" + _kind,
         notes="writes into input_x (a copy here, so that repeated calls see the sample's values)")


def _rows_samples(kind):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -2.0, 2.0, 0.5 if kind == "div" and dtype.kind == "f" else 0)
        u = (lambda s: _nonzero(a(s))) if kind == "div" else a
        yield Sample((a((3, 2)), _ix(0, 2, 0), u((3, 2))), desc="duplicate rows")
        yield Sample((a((4,)), _ix([1, 3], [3, 0]), u((2, 2))), desc="2-D indices")
    return gen


for _kind in ("mul", "div", "max", "min"):
    _row(f"scatter_{_kind}", ("TensorScatterReduce",),
         lambda x, i, u, _f=getattr(ops, f"scatter_{_kind}"): _f(x.copy(), i, u),
         _np_nd_reduce(_kind, rows=True), _rows_samples(_kind), FL + (I32,), grad_args=(0, 2), ref_upcast=False,
         graph=False, graph_reason="the rows form of scatter_nd_" + _kind + " (Graph parity there)",
         special_skip="as tensor_scatter_" + _kind,
         notes="writes into input_x (a copy here, so that repeated calls see the sample's values)")


# ---------------------------------------------------------------------------------------------- element scatters

def _np_scatter_elements(x, idx, upd, axis=0, reduction="none"):
    out = np.array(x, copy=True)
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[axis] = idx[pos] % x.shape[axis]
        if reduction == "add":
            out[tuple(t)] += upd[pos]
        else:
            out[tuple(t)] = upd[pos]
    return out


def _se_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)), _ix([0, 2], [1, 0]), a((2, 2))), dict(axis=1, reduction="add"), desc="add")
    yield Sample((a((3, 3)), _ix([0, 2, 1], dt=np.int64), a((1, 3))), dict(axis=0), desc="none")
    yield Sample((a((2, 4)), _ix([-1], [3]), a((2, 1))), dict(axis=-1, reduction="none"), desc="negative index")
    yield Sample((a((3, 2)), _ix([0, 1], [0, 1], [2, 0]), a((3, 2))), dict(axis=0, reduction="add"),
                 desc="add, duplicates")


_row("tensor_scatter_elements", ("TensorScatterElements",),
     lambda x, i, u, **kw: ops.tensor_scatter_elements(x, i, u, **kw), _np_scatter_elements, _se_samples,
     FLOATS + (I32,), grad_args=(0, 2))
_row("scatter", ("TensorScatterElements",), lambda x, axis, i, src: ops.scatter(x, axis, i, src),
     lambda x, axis, i, src: _np_scatter_elements(x, i, src if isinstance(src, np.ndarray) else
                                                  np.full(i.shape, src, x.dtype), axis),
     _gen(lambda a, r: Sample((a((2, 3)), 1, _ix([0, 2], [2, 1], dt=np.int64), a((2, 2)))),
          lambda a, r: Sample((a((3, 2)), 0, _ix([1, 0]), a((1, 2))), desc="axis 0"),
          lambda a, r: Sample((a((3, 2)), 0, _ix([1, 0]), 1.0), desc="scalar src")),
     FLOATS + (I32,))  # gradient w.r.t. input and a Tensor src (every float array argument)


def _np_select_scatter(x, src, axis, index):
    out = np.array(x, copy=True)
    sl = [slice(None)] * x.ndim
    sl[axis] = index
    out[tuple(sl)] = src
    return out


_row("select_scatter", ("Gather", "Select"), lambda x, s, axis, index: ops.select_scatter(x, s, axis, index),
     _np_select_scatter,
     _gen(lambda a, r: Sample((a((2, 3)), a((2,)), 1, -1)),
          lambda a, r: Sample((a((3, 2, 2)), a((2, 2)), 0, 1), desc="3-D"),
          lambda a, r: Sample((NC(a((3, 2)), "T"), a((2,)), 0, 0), desc="view")))


def _np_slice_scatter(x, src, axis=0, start=None, end=None, step=1):
    out = np.array(x, copy=True)
    sl = [slice(None)] * x.ndim
    sl[axis] = slice(start, end, step)
    out[tuple(sl)] = src
    return out


_row("slice_scatter", ("Gather", "Select"), lambda x, s, **kw: ops.slice_scatter(x, s, **kw), _np_slice_scatter,
     _gen(lambda a, r: Sample((a((4, 3)), a((2, 3))), dict(axis=0, start=0, end=4, step=2)),
          lambda a, r: Sample((a((2, 5)), a((2, 2))), dict(axis=-1, start=-3, end=None, step=2), desc="negative"),
          lambda a, r: Sample((a((2, 3)), a((2, 3))), desc="defaults: everything")))


# ---------------------------------------------------------------------------------------------- gather_d, inplace_*

_row("gather_d", ("GatherD",), lambda x, dim, idx: ops.gather_d(x, dim, idx),
     lambda x, dim, idx: np.take_along_axis(x, idx, dim),
     _gen(lambda a, r: Sample((a((2, 3)), 1, _ix([0, 2], [1, 1], dt=np.int64))),
          lambda a, r: Sample((a((3, 2)), 0, _ix([2, 0])), desc="dim 0")), grad_args=(0,))


def _np_inplace(kind):
    def ref(x, v, indices):
        out = np.array(x, copy=True)
        idx = np.atleast_1d(np.asarray(indices)) % x.shape[0]
        for i, row in zip(idx, v):
            out[i] = row if kind == "update" else (out[i] + row if kind == "add" else out[i] - row)
        return out
    return ref


for _kind in ("update", "add", "sub"):
    _row(f"inplace_{_kind}", ("TensorScatterUpdate",) if _kind == "update" else ("UnsortedSegmentSum",),
         lambda x, v, i, _f=getattr(ops, f"inplace_{_kind}"): _f(x, v, i), _np_inplace(_kind),
         _gen(lambda a, r: Sample((a((3, 2)), a((1, 2)), _ix(1))),
              lambda a, r: Sample((a((4, 2, 2)), a((2, 2, 2)), _ix(3, -4, dt=np.int64)), desc="negative index"),
              lambda a, r: Sample((a((3, 2)), a((1, 2)), 2), desc="int index")), FLOATS + (I32,),
         grad_args=(0, 1))


# ---------------------------------------------------------------------------------------------- add / sub / update
# scatter_add, scatter_update (rows) and scatter_nd_add/sub/update: in place on a Parameter (these entries) or a
# Tensor (tests/python/test_scatter_writes.py), as MindSpore 2.10.

def _np_nd_accumulate(kind, rows=False):
    def ref(x, idx, upd):
        out = np.array(x, copy=True)
        if rows:
            idx = idx[..., None]
        k = idx.shape[-1]
        where = tuple(np.moveaxis(idx.reshape(-1, k), -1, 0))
        upd = upd.reshape((-1,) + x.shape[k:])
        if kind == "update":
            out[where] = upd
        else:
            np.add.at(out, where, upd if kind == "add" else -upd)
        return out
    return ref


def _acc_nd_samples(kind):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)
        dup = kind != "update"  # a repeated index accumulates; for update the winner is unspecified (MindSpore)
        yield Sample((a((3, 2)), _ix([0], [2], [0]) if dup else _ix([0], [2]), a((3, 2) if dup else (2, 2))),
                     desc="rows" + (", a duplicate" if dup else ""))
        yield Sample((a((2, 3)), _ix([0, 1], [1, 2], dt=np.int64), a((2,))), desc="elements")
        yield Sample((NC(a((3, 2)), "T"), _ix([1], [0]), a((2, 2))), desc="view")
    return gen


def _acc_rows_samples(kind):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)
        yield Sample((a((3, 2)), _ix(0, 2, 0) if kind != "update" else _ix(0, 2),
                      a((3, 2) if kind != "update" else (2, 2))), desc="rows")
        yield Sample((a((4,)), _ix([1, 3], [2, 0]), a((2, 2))), desc="2-D indices")
    return gen


def _scatter_state(name, fn, ref, samples):
    """A 'state' entry: fn(Parameter, indices, updates) updates the Parameter in place and returns it."""
    def run(sample, use_jit):
        x, idx, upd = (np_value(a) for a in sample.args)
        p = _param(x, name + "_var")
        return _run_stateful(lambda i, u: fn(p, i, u), [p], [idx, upd], use_jit)

    def state_ref(sample):
        new = ref(*(np_value(a) for a in sample.args))
        return [new, new]

    register(OpInfo(name, ("TensorScatterUpdate",) if name.endswith("update") else ("TensorScatterReduce",),
                    kind="state", samples=samples, dtypes=FL + (I32,), run=run, ref=state_ref,
                    notes="in place on a Parameter; returns it (MindSpore 2.10)"))


for _kind in ("add", "sub", "update"):
    _scatter_state(f"scatter_nd_{_kind}", getattr(ops, f"scatter_nd_{_kind}"), _np_nd_accumulate(_kind),
                   _acc_nd_samples(_kind))
for _kind in ("add", "update"):
    _scatter_state(f"scatter_{_kind}", getattr(ops, f"scatter_{_kind}"), _np_nd_accumulate(_kind, rows=True),
                   _acc_rows_samples(_kind))
_row("ops.tensor_scatter_update", ("TensorScatterUpdate",), lambda x, i, u: ops.tensor_scatter_update(x, i, u),
     _np_nd_accumulate("update"), _acc_nd_samples("update"), FL + (F16, I32, BOOL), grad_args=(0, 2),
     ref_upcast=False, notes="the public function over the TensorScatterUpdate kernel (entry tensor_scatter_update)")
# MindSpore 2.10's Tensor.scatter_add(indices, updates) / scatter_sub: tensor_scatter_add / _sub (a new Tensor); the
# (dim, index, src) overload of scatter_add is tested in tests/python/test_scatter_writes.py.
for _kind in ("add", "sub"):
    _row(f"Tensor.scatter_{_kind}", ("TensorScatterReduce",),
         lambda x, i, u, _m=f"scatter_{_kind}": getattr(x, _m)(i, u),
         _np_nd_accumulate(_kind), _acc_nd_samples(_kind), FL + (I32,), grad_args=(0, 2), ref_upcast=False,
         notes="tensor_scatter_" + _kind + " as a method")
