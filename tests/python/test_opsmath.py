"""The math ops of kiln/ops/math_elem_func.py, math_reduce_func.py, math_special_func.py, math_int_func.py and
linalg_func.py beyond their registry rows: values and dtypes pinned against MindSpore 2.10 (CPU) where its semantics
are particular, the derived surfaces (Primitive classes, Tensor methods, aliases), and bad input (clear TypeError /
ValueError naming the op)."""
import math

import numpy as np
import pytest

import kiln
from kiln import Tensor, ops


def _t(a, dt=np.float32):
    return Tensor(np.asarray(a, dt))


X = _t([[1., 2., 4.], [3., -1., 0.5]])
XI = _t([[1, 2, 4], [3, -1, 0]], np.int32)
XN = _t([[1., np.nan, 4.], [3., -1., np.nan]])


def _close(t, want, dtype=None, rtol=1e-5):
    got = t.asnumpy()
    np.testing.assert_allclose(got, np.asarray(want, np.float64), rtol=rtol, atol=1e-6, equal_nan=True)
    if dtype is not None:
        assert t.dtype == dtype, t.dtype


# ---------------------------------------------------------------------------------------------- MindSpore-pinned

def test_statistics_match_mindspore():
    _close(ops.std(X), 1.6435904, kiln.float32)
    _close(ops.std(X, axis=1, ddof=True, keepdims=True), [[1.5275253], [2.020726]])
    v, m = ops.var_mean(X, 1)
    _close(v, [1.5555557, 2.7222223])
    _close(m, [2.3333333, 0.8333333])
    _close(ops.var(X[:, :1], 1, ddof=1), [np.nan, np.nan])  # N − ddof = 0
    _close(ops.nanmean(XN), 1.75)
    _close(ops.nansum(XN, 0, True, dtype=kiln.float64), [[4.0, -1.0, 4.0]], kiln.float64)
    assert ops.nansum(XI).dtype == kiln.int32 and int(ops.nansum(XI).asnumpy()) == 9
    c = ops.count_nonzero(X, 1, True, kiln.int64)
    assert c.dtype == kiln.int64 and c.asnumpy().tolist() == [[3], [3]]
    assert ops.count_nonzero(XI).dtype == kiln.int32 and int(ops.count_nonzero(XI).asnumpy()) == 5


def test_median_and_scans_match_mindspore():
    v, i = ops.median(X)
    assert v.asnumpy().tolist() == [2.0, 0.5] and i.asnumpy().tolist() == [1, 2] and i.dtype == kiln.int64
    v, i = ops.median(_t([1., 2., 3., 4.]))
    assert float(v.asnumpy()) == 2.0 and int(i.asnumpy()) == 1  # the lower middle value
    v, i = ops.median(XN)
    assert np.isnan(v.asnumpy()).all() and i.asnumpy().tolist() == [1, 2]
    v, i = ops.nanmedian(XN)
    assert v.asnumpy().tolist() == [1.0, -1.0] and i.asnumpy().tolist() == [0, 1]
    v, i = ops.cummax(_t([[1., 3., 2., 3.], [0., -1., 5., 5.]]), 1)
    assert v.asnumpy().tolist() == [[1, 3, 3, 3], [0, 0, 5, 5]] and i.asnumpy().tolist() == [[0, 1, 1, 3], [0, 0, 2, 3]]
    assert i.dtype == kiln.int64
    v, i = ops.cummin(_t([[1., 3., 0., 0.], [0., -1., 5., -1.]]), 1)
    assert i.dtype == kiln.int32 and i.asnumpy().tolist() == [[0, 0, 2, 3], [0, 1, 1, 3]]
    v, i = ops.cummax(XN, 1)
    assert i.asnumpy().tolist() == [[0, 1, 1], [0, 0, 2]]
    _close(ops.logcumsumexp(X, 1), [[1.0, 2.3132617, 4.169846], [3.0, 3.0181499, 3.0956743]])


def test_histograms_and_distances_match_mindspore():
    _close(ops.histc(X, 4), [1, 2, 1, 2], kiln.float32)
    h = ops.histc(XI, 3)
    assert h.dtype == kiln.int32 and h.asnumpy().tolist() == [2, 2, 2]
    b = ops.bincount(_t([1, -1, 3], np.int32))
    assert b.dtype == kiln.float32 and b.asnumpy().tolist() == [0, 1, 0, 1]  # negatives ignored (MindSpore)
    _close(ops.cov(X), [[2.3333333, -1.4166666], [-1.4166666, 4.0833335]])
    _close(ops.cov(X, fweights=_t([1, 2, 1], np.int32), aweights=_t([0.5, 1., 2.])),
           [[1.8571428, 0.0357143], [0.0357143, 2.2321429]])
    _close(ops.trapz(X, _t([0., 1., 3.])), [7.5, 0.5])
    _close(ops.cdist(X, X * 2, float("inf")), [[4, 5], [7.5, 3]])
    _close(ops.cdist(X, X * 2, 0.0), [[3, 3], [3, 3]])
    _close(ops.dist(X, X * 2, 3), 4.6589303)
    _close(ops.pdist(_t(np.arange(12).reshape(4, 3)), 1.0), [9, 18, 27, 9, 18, 9])
    _close(ops.renorm(X, 2, 0, 3.0), [[0.6546537, 1.3093073, 2.6186147], [2.8111277, -0.9370425, 0.4685213]])
    _close(ops.vector_norm(XI), 5.5677643, kiln.float32)
    _close(ops.matrix_norm(X, 1), 4.5)


def test_elementwise_dtypes_match_mindspore():
    ai, bi = _t([7, -7, 6], np.int32), _t([3, 3, -4], np.int32)
    assert ops.truncate_div(ai, bi).asnumpy().tolist() == [2, -2, -1]
    assert ops.truncate_mod(ai, bi).asnumpy().tolist() == [1, -1, 2]
    assert ops.fmod(ai, 2).dtype == kiln.int32 and ops.fmod(ai, 2.5).dtype == kiln.float32
    _close(ops.fmod(ai, 2.5), [2.0, -2.0, 1.0])
    assert ops.float_power(ai, bi).dtype == kiln.float64
    # the sign bit of other, as NumPy: −0.0 counts as negative (MindSpore 2.10 selects on other < 0: [7, 7, −6])
    _close(ops.copysign(ai, _t([-0.0, 1.0, -2.0])), [-7, 7, -6], kiln.float32)
    assert ops.inv(_t([1, -2, 3], np.int32)).asnumpy().tolist() == [1, 0, 0]
    assert ops.exp2(_t([True, False])).dtype == kiln.float32
    assert ops.lgamma(_t([1, 3], np.int32)).dtype == kiln.float32
    assert ops.frac(_t([True], np.bool_)).dtype == kiln.int64
    _close(ops.atan2(_t([0.0, -0.0, 1.0]), _t([-0.0, -0.0, np.inf])), [math.pi, -math.pi, 0.0])
    _close(ops.heaviside(_t([-1., 0., 2.]), _t([0.5, 0.5, 0.5])), [0, 0.5, 1])
    _close(ops.xdivy(_t([0., 1.]), _t([0., 4.])), [0, 0.25])
    _close(ops.nan_to_num(_t([np.nan, np.inf, -np.inf])), [0.0, np.finfo(np.float32).max, np.finfo(np.float32).min])
    # MindSpore 2.10's signbit is x < 0 (its values: [False, False, True]; NumPy's sign bit gives True for −0.0)
    assert ops.signbit(_t([-0.0, 0.0, -1.0])).asnumpy().tolist() == [False, False, True]


def test_integer_ops_match_mindspore():
    a, b = _t([12, -7, 0, 5, -8], np.int32), _t([18, 21, 5, 0, -12], np.int32)
    assert ops.gcd(a, b).asnumpy().tolist() == [6, 7, 5, 5, 4]
    assert ops.lcm(a, b).asnumpy().tolist() == [36, 21, 0, 0, 24]
    p = ops.population_count(_t([1, -1, 127, -128], np.int8))
    assert p.dtype == kiln.uint8 and p.asnumpy().tolist() == [1, 8, 7, 1]
    assert ops.invert(_t([0, 255, 5], np.uint8)).asnumpy().tolist() == [255, 0, 250]
    x, n = _t([1, -8, 5], np.int32), _t([0, 1, 31], np.int32)
    assert ops.bitwise_left_shift(x, n).asnumpy().tolist() == [1, -16, -2 ** 31]
    assert ops.bitwise_right_shift(x, n).asnumpy().tolist() == [1, -4, 0]
    assert ops.bitwise_and(_t([5, -1], np.int64), 3).asnumpy().tolist() == [1, 3]


def test_products_match_mindspore():
    assert ops.batch_dot(_t(np.ones((2, 3))), _t(np.ones((2, 3)))).shape == (2, 1)
    assert ops.dot(_t(np.ones((2, 2, 3))), _t(np.ones((4, 3, 2)))).shape == (2, 2, 4, 2)
    r = np.random.default_rng(0)
    a, b = r.standard_normal((2, 3, 4)), r.standard_normal((4, 3, 2))
    np.testing.assert_allclose(ops.einsum("ijk,kjl->il", Tensor(a), Tensor(b)).asnumpy(),
                               np.einsum("ijk,kjl->il", a, b), rtol=1e-12)
    np.testing.assert_allclose(ops.einsum("ij,jk", [Tensor(a[0]), Tensor(b[:, 0])]).asnumpy(), a[0] @ b[:, 0],
                               rtol=1e-12)
    _close(ops.addmm(_t(np.full((2, 2), np.nan)), _t(np.eye(2)), _t(np.eye(2)), beta=0), np.eye(2))


# ---------------------------------------------------------------------------------------------- surfaces

def test_lu_ops_match_mindspore():
    a = _t(np.arange(9).reshape(3, 3) / 3 + np.eye(3))
    _close(ops.det(a), 3.0, kiln.float32)
    s, l = ops.slogdet(a)
    _close(s, 1.0)
    _close(l, 1.0986123)
    _close(ops.inverse(_t([[1 + 0.0, 1 / 3], [2 / 3, 2.0]])), [[1.125, -0.1875], [-0.375, 0.5625]])
    s, l = ops.slogdet(_t([[1., 2.], [2., 4.]]))
    assert float(s.asnumpy()) == 0.0 and float(l.asnumpy()) == -np.inf  # singular


def test_derived_surfaces():
    x = _t([0.25, -0.5])
    for got in (ops.Atan()(x), x.atan(), ops.arctan(x), x.arctan()):
        _close(got, np.arctan([0.25, -0.5]))
    _close(ops.ACos()(x), np.arccos([0.25, -0.5]))
    _close(ops.Logit(eps=0.3)(_t([0.1, 0.5])), [np.log(0.3 / 0.7), 0.0])
    _close(ops.NanToNum(nan=2.0)(_t([np.nan])), [2.0])
    _close(ops.CountNonZero(dims=1)(_t([[1, 0], [0, 0]])), [1, 0])
    _close(X.std(), 1.6435904)
    assert XI.bitwise_xor(XI).asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    assert ops.operations.Gcd is ops.Gcd


def test_gradients_at_conventions():
    g = kiln.grad(lambda a: ops.sum(ops.std(a)))(_t([2.0, 2.0, 2.0], np.float64))
    assert g.asnumpy().tolist() == [0.0, 0.0, 0.0]  # √var at var = 0
    g = kiln.grad(lambda a: ops.sum(ops.cdist(a, a)))(_t([[1.0, 2.0], [3.0, 5.0]], np.float64))
    assert np.isfinite(g.asnumpy()).all()  # zero distances on the diagonal: gradient 0 there, not NaN
    g = kiln.grad(lambda a: ops.sum(ops.atan(a)))(_t([0.0, 1.0], np.float64))
    np.testing.assert_allclose(g.asnumpy(), [1.0, 0.5])


# ---------------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, match", [
    (lambda: ops.acos([0.5]), TypeError, "acos"),
    (lambda: ops.acos(XI), TypeError, "acos.*float"),
    (lambda: ops.atan2(XI, XI), TypeError, "atan2"),
    (lambda: ops.logaddexp(X, 2.0), TypeError, "logaddexp.*Tensor"),
    (lambda: ops.hypot(X, _t([1., 2.])), ValueError, "hypot.*broadcast"),
    (lambda: ops.heaviside(X, XI), TypeError, "heaviside.*same"),
    (lambda: ops.fmod(_t([True], np.bool_), 2), TypeError, "fmod"),
    (lambda: ops.logit(X, eps="a"), TypeError, "logit.*eps"),
    (lambda: ops.std(XI), TypeError, "std.*float"),
    (lambda: ops.var(X, axis=3), ValueError, "var.*out of range"),
    (lambda: ops.var(X, ddof=0.5), TypeError, "var.*ddof"),
    (lambda: ops.median(X, 2), ValueError, "median"),
    (lambda: ops.quantile(X, 1.5), ValueError, "quantile.*q"),
    (lambda: ops.quantile(XI, 0.5), TypeError, "quantile"),
    (lambda: ops.histc(X, 0), ValueError, "histc.*bins"),
    (lambda: ops.bincount(X), TypeError, "bincount.*integer"),
    (lambda: ops.bincount(_t([[1]], np.int32)), ValueError, "bincount.*1-D"),
    (lambda: ops.cdist(X, _t(np.ones((2, 4)))), ValueError, "cdist"),
    (lambda: ops.dist(X, X, -1), ValueError, "dist.*p"),
    (lambda: ops.matrix_norm(X, "nuc"), ValueError, "matrix_norm.*singular"),
    (lambda: ops.diff(X, n=-1), ValueError, "diff.*n"),
    (lambda: ops.cummax(_t(1.0), 0), ValueError, "cummax"),
    (lambda: ops.mm(X, X), ValueError, "mm.*contracted"),
    (lambda: ops.mm(_t(np.ones(3)), X), ValueError, "mm.*2-D"),
    (lambda: ops.bmm(_t(np.ones((2, 2, 3))), _t(np.ones((1, 3, 2)))), ValueError, "bmm.*batch"),
    (lambda: ops.einsum("ij,jk->ik", X), ValueError, "einsum.*2 operands"),
    (lambda: ops.einsum("ij->k", X), ValueError, "einsum.*output label"),
    (lambda: ops.einsum("ij,jk", X, X), ValueError, "einsum.*sizes"),
    (lambda: ops.einsum(3, X), TypeError, "einsum.*str"),
    (lambda: ops.tensor_dot(X, X, "a"), TypeError, "tensor_dot.*axes"),
    (lambda: ops.cross(X[:, :2], X[:, :2]), ValueError, "cross.*size 3"),
    (lambda: ops.matrix_power(X, 2), ValueError, "matrix_power.*square"),
    (lambda: ops.matrix_power(_t(np.eye(2), np.int32), -1), TypeError, "matrix_power.*float"),
    (lambda: ops.addmm(X, X, _t(np.ones((3, 3))), beta="x"), TypeError, "addmm.*beta"),
    (lambda: ops.bitwise_and(X, X), TypeError, "bitwise_and.*integer"),
    (lambda: ops.bitwise_left_shift(XI, _t([1], np.int64)), TypeError, "bitwise_left_shift.*same dtype"),  # and/or/xor promote (MindSpore)
    (lambda: ops.gcd(XI, 2), TypeError, "gcd"),
    (lambda: ops.invert(_t([True], np.bool_)), TypeError, "invert"),
    (lambda: ops.polygamma(-1, X), ValueError, "polygamma.*n"),
    (lambda: ops.zeta(X, XI), TypeError, "zeta"),
    (lambda: ops.erfinv(XI), TypeError, "erfinv"),
    (lambda: ops.det(X), ValueError, "det.*square"),
    (lambda: ops.inverse(_t(np.eye(2), np.int32)), TypeError, "inverse.*float"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
