"""Issue 23's "kernels, not chains" ops as single C++ kernels: Fmod, Lgamma, Digamma, Polygamma, CumSum, CumProd
(+ CumProdGrad), GatherD (+ GatherDGrad), TrilIndices / TriuIndices, CumMax / CumMin, LogCumSumExp; since stop 33
Median, MatrixDeterminant / LogMatrixDeterminant / MatrixInverse, AdaptiveMaxPool and Zeta; since stop 34
RandomGamma / Gamma, GridSampler2D / GridSampler3D (+ their Grad ops) and KaiserWindow. The registry
rows (tests/python/op_registry) check values against NumPy/SciPy, float64 finite-difference gradients, PyNative against Graph mode and the one
node; here: MindSpore 2.10's values at the edges (obtained with the oracle, /work/shared/tools/ms_oracle.py),
special values against the math module, the threaded scan path against float64 NumPy, and errors."""
import math
import re

import numpy as np
import pytest
import scipy.special
import scipy.stats

import kiln
from kiln import Tensor, ops

INF, NAN = math.inf, math.nan


def _same(got, want, rtol=1e-6, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype), rtol=rtol, atol=atol,
                               equal_nan=True)


# ---------------------------------------------------------------------------------------------- fmod

def test_fmod_integers_mindspore_values():
    # MindSpore 2.10: ops.fmod on Int32, a zero divisor gives the dividend
    a = Tensor(np.array([7, -7, 7, -7, 0, 5], np.int32))
    b = Tensor(np.array([3, 3, -3, -3, 0, 0], np.int32))
    out = ops.fmod(a, b)
    assert out.dtype == kiln.int32
    np.testing.assert_array_equal(out.asnumpy(), [1, -1, 1, -1, 0, 5])
    # an integer Tensor with a float number gives float32 (MindSpore 2.10: [2, -2, 2, -2, 0, 0])
    out = ops.fmod(a, 2.5)
    assert out.dtype == kiln.float32
    _same(out.asnumpy(), [2.0, -2.0, 2.0, -2.0, 0.0, 0.0])


def test_fmod_float_special_values():
    x = np.array([5.5, -5.5, 0.0, INF, NAN, 3.0, 1.0, -1e30, 1e-30], np.float64)
    y = np.array([2.0, 2.0, 1.0, 2.0, 1.0, INF, 0.0, 3.0, -7.0], np.float64)
    want = [math.fmod(a, b) if not (math.isinf(a) or math.isnan(a) or b == 0) else NAN for a, b in zip(x, y)]
    _same(ops.fmod(Tensor(x), Tensor(y)).asnumpy(), want, rtol=0)
    # the sign of the dividend (MindSpore 2.10: fmod(-5.5, 2) = -1.5); fmod(3, inf) = 3 as C/NumPy/PyTorch (MindSpore
    # 2.10 gives NaN there: a − trunc(a/b)·b)
    f32 = ops.fmod(Tensor(x.astype(np.float32)), Tensor(y.astype(np.float32))).asnumpy()
    assert f32[1] == np.float32(-1.5) and f32[5] == 3.0


def test_fmod_broadcast_and_empty():
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    y = np.array([2.5, -3.0, 4.0, 1.5], np.float32)
    _same(ops.fmod(Tensor(x), Tensor(y)).asnumpy(), np.fmod(x, y))
    assert ops.fmod(Tensor(np.zeros((0, 3), np.float32)), Tensor(y[:3])).shape == (0, 3)
    with pytest.raises(TypeError, match="fmod"):
        ops.fmod(Tensor(np.array([True])), Tensor(np.array([True])))


# ---------------------------------------------------------------------------------------------- gamma family

_GAMMA_X = [0.0, -0.0, -1.0, -2.5, INF, -INF, NAN, 1.0, 2.0, 0.5]


def test_lgamma_mindspore_values():
    out = ops.lgamma(Tensor(np.array(_GAMMA_X, np.float32))).asnumpy()
    # MindSpore 2.10's ops.lgamma on these float32 values
    _same(out, [INF, INF, INF, -0.05624371, INF, INF, NAN, 0.0, 0.0, 0.5723649], rtol=1e-6)
    assert out[7] == 0.0 and out[8] == 0.0  # exactly, as C's lgamma
    # integer input gives float32
    assert ops.lgamma(Tensor(np.array([1, 3, 5], np.int32))).dtype == kiln.float32
    x = np.array([1e-8, 0.3, 1.4616321, 7.5, 170.5, 1e10, -3.7, -100.25], np.float64)
    _same(ops.lgamma(Tensor(x)).asnumpy(), [math.lgamma(v) for v in x], rtol=1e-14)


def test_digamma_mindspore_values():
    out = ops.digamma(Tensor(np.array(_GAMMA_X, np.float32))).asnumpy()
    # MindSpore 2.10's ops.digamma: −inf at +0, +inf at −0, NaN at the negative integers and −inf
    _same(out, [-INF, INF, NAN, 1.1031566, INF, NAN, NAN, -0.5772159, 0.4227842, -1.9635109], rtol=1e-6)
    # float64 against exact identities and SciPy's psi (MindSpore 2.10 gives −1000.5755244 at float32's 1e-3 in
    # float64, 5e-8 relative from the true ψ; Kiln keeps double accuracy)
    _same(ops.digamma(Tensor(np.array([1.0, 0.5], np.float64))).asnumpy(),
          [-0.5772156649015329, -0.5772156649015329 - 2 * math.log(2)], rtol=1e-15)
    x = np.array([1e-3, 0.7, 1.4616321449683622, 3.3, 12.0, 250.0, -0.3, -7.6], np.float64)
    _same(ops.digamma(Tensor(x)).asnumpy(), scipy.special.psi(x), rtol=1e-13, atol=1e-15)
    with pytest.raises(TypeError, match="digamma"):
        ops.digamma(Tensor(np.array([1, 2], np.int32)))


def test_polygamma_values():
    x = np.array([0.0, -0.0, -1.0, -2.5, 1.0, 0.5, INF, -INF, NAN, -0.3], np.float32)
    # MindSpore 2.10's ops.polygamma(n, x) for n = 1, 2, 3: (−1)ⁿ⁺¹·inf at the poles and at −inf, NaN at +inf
    # (π²/6 at 1, π²/2 at 1/2)
    _same(ops.polygamma(1, Tensor(x)).asnumpy(),
          [INF, INF, INF, 9.539247512817383, 1.644934058189392, 4.934802055358887, NAN, INF, NAN, 13.945160865783691])
    _same(ops.polygamma(2, Tensor(x)).asnumpy(),
          [-INF, -INF, -INF, -0.10820414870977402, -2.404114007949829, -16.828794479370117, NAN, -INF, NAN,
           67.63908386230469], rtol=2e-6)
    _same(ops.polygamma(3, Tensor(x.astype(np.float64))).asnumpy(),
          [INF, INF, INF, 194.74787621918756, 6.493939402266829, 97.40909103400242, NAN, INF, NAN, 766.6197744066671],
          rtol=1e-10)
    # ψ⁽²⁾(1) = −2ζ(3), ψ⁽³⁾(1) = π⁴/15, ψ⁽¹⁾(1/2) = π²/2, n = 0 is digamma
    z3 = 1.2020569031595942
    _same(ops.polygamma(2, Tensor(np.array([1.0]))).asnumpy(), [-2 * z3], rtol=1e-14)
    _same(ops.polygamma(3, Tensor(np.array([1.0]))).asnumpy(), [math.pi ** 4 / 15], rtol=1e-14)
    _same(ops.polygamma(0, Tensor(np.array([0.5]))).asnumpy(), [-0.5772156649015329 - 2 * math.log(2)], rtol=1e-15)
    # reflection: ψ⁽¹⁾(x) + ψ⁽¹⁾(1 − x) = π² / sin²(πx)
    xr = np.array([-0.3, -2.7, -10.4], np.float64)
    got = ops.polygamma(1, Tensor(xr)).asnumpy() + ops.polygamma(1, Tensor(1 - xr)).asnumpy()
    _same(got, math.pi ** 2 / np.sin(math.pi * xr) ** 2, rtol=1e-12)
    with pytest.raises(ValueError, match="polygamma"):
        ops.polygamma(-1, Tensor(x))


def test_gamma_gradients_chain():
    """d lgamma = digamma, d digamma = polygamma(1), d polygamma(n) = polygamma(n + 1): one kernel each, also
    twice differentiated."""
    x = Tensor(np.array([0.7, 2.5, -1.3], np.float64))
    g = kiln.grad(lambda t: ops.lgamma(t).sum())(x)
    _same(g.asnumpy(), ops.digamma(x).asnumpy(), rtol=1e-15)
    gg = kiln.grad(lambda t: kiln.grad(lambda u: ops.lgamma(u).sum())(t).sum())(x)
    _same(gg.asnumpy(), ops.polygamma(1, x).asnumpy(), rtol=1e-15)
    g3 = kiln.grad(lambda t: ops.polygamma(2, t).sum())(x)
    _same(g3.asnumpy(), ops.polygamma(3, x).asnumpy(), rtol=1e-15)


# ---------------------------------------------------------------------------------------------- scans

def test_scan_flags_mindspore_values():
    t = Tensor(np.array([[1., 2, 3], [4, 5, 6]], np.float32))
    # MindSpore 2.10's CumSum(exclusive=True, reverse=True) and CumProd(exclusive=True) along axis 1
    np.testing.assert_array_equal(ops.CumSum(exclusive=True, reverse=True)(t, 1).asnumpy(), [[5, 3, 0], [11, 6, 0]])
    np.testing.assert_array_equal(ops.CumProd(exclusive=True, reverse=False)(t, 1).asnumpy(), [[1, 1, 2], [1, 4, 20]])
    # dtypes (MindSpore 2.10): cumsum keeps Int8, cumprod of Int32 gives Int64
    assert ops.cumsum(Tensor(np.array([1, 2, 3], np.int8)), 0).dtype == kiln.int8
    assert ops.cumprod(Tensor(np.array([1, 2, 3], np.int32)), 0).dtype == kiln.int64


def test_scan_special_values_and_integers():
    x = np.array([1.0, INF, -INF, 2.0, NAN, 3.0], np.float64)
    _same(ops.cumsum(Tensor(x), 0).asnumpy(), np.cumsum(x))
    _same(ops.cumprod(Tensor(x), 0).asnumpy(), np.cumprod(x))
    i = np.array([[100, 100, 100], [-7, 3, 9]], np.int8)
    np.testing.assert_array_equal(ops.cumsum(Tensor(i), 1).asnumpy(), np.cumsum(i, 1, dtype=np.int8))  # wraps
    assert ops.cumsum(Tensor(np.zeros((3, 0), np.float32)), 1).shape == (3, 0)
    np.testing.assert_array_equal(ops.CumSum(exclusive=True)(Tensor(np.float32(4.0)), 0).asnumpy(), 0.0)


def test_scan_threaded_lines_match_float64():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 100, 9)).astype(np.float32)
    for axis in (0, 1, 2):
        got = ops.CumSum(reverse=True)(Tensor(x), axis).asnumpy()
        want = np.flip(np.cumsum(np.flip(x.astype(np.float64), axis), axis), axis)
        _same(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)])
def test_cumprod_second_derivative(exclusive, reverse):
    """The recorded backward pass (Kiln ops, not the CumProdGrad kernel): its gradient against float64 central
    differences of the first derivative (the kernel's), on a line without zeros; and the first derivative through
    zeros the same either way."""
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.5, 1.5, (2, 5)) * rng.choice([-1.0, 1.0], (2, 5))
    w = rng.standard_normal((2, 5))
    prim = ops.CumProd(exclusive, reverse)

    def first(a):
        return kiln.grad(lambda u: ops.sum(ops.mul(prim(u, 1), Tensor(w))))(a)

    v = rng.standard_normal((2, 5))
    second = kiln.grad(lambda a: ops.sum(ops.mul(first(a), Tensor(v))))(Tensor(x0)).asnumpy()
    h, fd = 1e-6, np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += h
        xm[idx] -= h
        fd[idx] = ((first(Tensor(xp)).asnumpy() - first(Tensor(xm)).asnumpy()) * v).sum() / (2 * h)
    np.testing.assert_allclose(second, fd, rtol=1e-6, atol=1e-7)
    # the composed first derivative (inside a recorded pass) equals the kernel's, zeros included
    xz = x0.copy()
    xz[0, 1] = xz[1, 3] = xz[1, 4] = 0.0
    want = first(Tensor(xz)).asnumpy()  # the CumProdGrad kernel
    inner = {}

    def outer(a):
        inner["d"] = first(a)  # recorded: the composition
        return ops.sum(ops.mul(inner["d"], Tensor(v)))

    kiln.grad(outer)(Tensor(xz))
    np.testing.assert_allclose(inner["d"].asnumpy(), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(want, _np_cumprod_grad(xz, w, exclusive, reverse), rtol=1e-12, atol=1e-15)


def _np_cumprod_grad(x, w, exclusive, reverse):
    """dx of Σ w·CumProd(x) along axis 1 by the definition (products of the other factors), O(n²) per line."""
    out = np.zeros_like(x)
    n = x.shape[1]
    order = list(range(n))[::-1] if reverse else list(range(n))
    for r in range(x.shape[0]):
        for pos_i, i in enumerate(order):
            factors = order[:pos_i] if exclusive else order[:pos_i + 1]
            for k in factors:
                out[r, k] += w[r, i] * np.prod([x[r, j] for j in factors if j != k])
    return out


def test_scan_errors():
    with pytest.raises(TypeError, match="Bool"):
        ops.cumsum(Tensor(np.array([True, False])), 0)
    with pytest.raises(ValueError, match="axis"):
        ops.cumsum(Tensor(np.ones((2, 3), np.float32)), 2)


# ---------------------------------------------------------------------------------------------- gather_d

def test_gather_d_mindspore_values_and_errors():
    t = Tensor(np.array([[1., 2, 3], [4, 5, 6]], np.float32))
    # MindSpore 2.10: ops.gather_d(t, 1, [[0, -1], [2, 1]]) = [[1, 3], [6, 5]] (a negative index counts from the end)
    np.testing.assert_array_equal(ops.gather_d(t, 1, Tensor(np.array([[0, -1], [2, 1]], np.int32))).asnumpy(),
                                  [[1, 3], [6, 5]])
    assert ops.gather_elements(t, 0, Tensor(np.zeros((0, 3), np.int64))).shape == (0, 3)
    with pytest.raises(ValueError, match="out of range"):
        ops.gather_elements(t, 1, Tensor(np.array([[3]], np.int64)))
    with pytest.raises(ValueError, match="out of range"):
        kiln.jit(lambda a, i: ops.gather_elements(a, 1, i))(t, Tensor(np.array([[-4]], np.int64)))


def test_gather_d_gradient_accumulates_repeated_indices():
    x = Tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    idx = Tensor(np.array([[2, 2, 0, 2], [1, 1, 1, 0]], np.int64))
    g = kiln.grad(lambda a: (ops.gather_elements(a, 1, idx) * Tensor(np.arange(1.0, 9.0).reshape(2, 4))).sum())(x)
    np.testing.assert_array_equal(g.asnumpy(), [[3, 0, 1 + 2 + 4], [8, 5 + 6 + 7, 0]])


# ---------------------------------------------------------------------------------------------- tril/triu_indices

def test_tri_indices_mindspore_values():
    # MindSpore 2.10: triu_indices(3, 4, 1) = [[0 0 0 1 1 2], [1 2 3 2 3 3]]; tril_indices(0, 3) and
    # tril_indices(3, 3, -5) are empty
    np.testing.assert_array_equal(ops.triu_indices(3, 4, 1).asnumpy(), [[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]])
    assert ops.tril_indices(0, 3).shape == (2, 0) and ops.tril_indices(3, 3, -5).shape == (2, 0)
    for r, c, k in ((5, 3, -1), (4, 6, 2), (3, 3, 9), (6, 2, -8)):
        np.testing.assert_array_equal(ops.tril_indices(r, c, k).asnumpy(), np.stack(np.tril_indices(r, k, c)))
        np.testing.assert_array_equal(ops.triu_indices(r, c, k).asnumpy(), np.stack(np.triu_indices(r, k, c)))
    assert ops.triu_indices(3, 3, dtype=kiln.int32).dtype == kiln.int32


# ---------------------------------------------------------------------------------------------- cummax / cummin

def test_cummax_cummin_mindspore_values():
    """MindSpore 2.10 CPU's values (oracle): ties take the later index; a NaN stays the value once met and each later
    NaN takes the index; cummax indices Int64, cummin Int32; a negative axis counts from the end."""
    x = Tensor(np.array([[3., 1, 3, 1, 2, 5, 5], [NAN, 1, 2, NAN, 0, -1, 4]], np.float32))
    for axis in (1, -1):
        v, i = ops.cummax(x, axis)
        _same(v.asnumpy(), [[3, 3, 3, 3, 3, 5, 5], [NAN] * 7])
        np.testing.assert_array_equal(i.asnumpy(), [[0, 0, 2, 2, 2, 5, 6], [0, 0, 0, 3, 3, 3, 3]])
        assert i.dtype == kiln.int64
        v, i = ops.cummin(x, axis)
        _same(v.asnumpy(), [[3, 1, 1, 1, 1, 1, 1], [NAN] * 7])
        np.testing.assert_array_equal(i.asnumpy(), [[0, 1, 1, 3, 3, 3, 3], [0, 0, 0, 3, 3, 3, 3]])
        assert i.dtype == kiln.int32
    # infinities: [1, inf, -inf, inf] -> cummax indices [0, 1, 1, 3], cummin [0, 0, 2, 2]
    y = Tensor(np.array([1., INF, -INF, INF], np.float32))
    np.testing.assert_array_equal(ops.cummax(y, 0)[1].asnumpy(), [0, 1, 1, 3])
    np.testing.assert_array_equal(ops.cummin(y, 0)[0].asnumpy(), [1, 1, -INF, -INF])
    np.testing.assert_array_equal(ops.cummin(y, 0)[1].asnumpy(), [0, 0, 2, 2])


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.int64, np.float16, np.float64])
def test_cummax_cummin_dtypes(dt):
    # MindSpore 2.10: the values keep the input dtype; [1, 3, 2, 3, 0] -> cummax indices [0, 1, 1, 3, 3],
    # cummin [0, 0, 0, 0, 4]
    x = Tensor(np.array([1, 3, 2, 3, 0], dt))
    v, i = ops.cummax(x, 0)
    assert v.dtype == x.dtype and i.dtype == kiln.int64
    np.testing.assert_array_equal(v.asnumpy(), np.array([1, 3, 3, 3, 3], dt))
    np.testing.assert_array_equal(i.asnumpy(), [0, 1, 1, 3, 3])
    v, i = ops.cummin(x, 0)
    assert v.dtype == x.dtype and i.dtype == kiln.int32
    np.testing.assert_array_equal(v.asnumpy(), np.array([1, 1, 1, 1, 0], dt))
    np.testing.assert_array_equal(i.asnumpy(), [0, 0, 0, 0, 4])


def test_cummax_cummin_edges_and_gradient():
    # MindSpore 2.10: an empty axis gives empty values and indices; a 0-d input raises ValueError
    v, i = ops.cummax(Tensor(np.zeros((2, 0), np.float32)), 1)
    assert v.shape == (2, 0) and i.shape == (2, 0)
    for f in (ops.cummax, ops.cummin):
        with pytest.raises(ValueError, match="0-d"):
            f(Tensor(np.float32(2.0)), 0)
        with pytest.raises(TypeError, match="cumm"):
            f(Tensor(np.array([True, False])), 0)
        with pytest.raises(ValueError, match="axis"):
            f(Tensor(np.ones((2, 3), np.float32)), 2)
    # the values' gradient adds each cotangent at the index picked (ties: the later element)
    w = np.array([1., 2, 3, 4])
    g = kiln.grad(lambda t: ops.sum(ops.mul(ops.cummax(t, 0)[0], Tensor(w))))(Tensor(np.array([1., 3, 3, 2])))
    _same(g.asnumpy(), [1, 2, 7, 0])
    g = kiln.grad(lambda t: ops.sum(ops.mul(ops.cummin(t, 0)[0], Tensor(w))))(Tensor(np.array([1., 3, 1, 2])))
    _same(g.asnumpy(), [3, 0, 7, 0])  # indices [0, 0, 2, 2]


# ---------------------------------------------------------------------------------------------- logcumsumexp

def test_logcumsumexp_mindspore_values():
    # MindSpore 2.10: float16 keeps Float16 ([1, 2, 3] -> [1, 2.312, 3.408]); float64 [1, 2.31326169, 3.40760596];
    # along axis -2 of [[1, 2], [3, 4]]: [[1, 2], [3.126928, 4.126928]]; 1e30 stays finite in float32
    r = ops.logcumsumexp(Tensor(np.array([1, 2, 3], np.float16)), 0)
    assert r.dtype == kiln.float16
    _same(r.asnumpy(), [1.0, 2.312, 3.408], rtol=1e-3)
    _same(ops.logcumsumexp(Tensor(np.array([1., 2, 3])), 0).asnumpy(), [1., 2.31326169, 3.40760596], rtol=1e-8)
    _same(ops.logcumsumexp(Tensor(np.array([[1., 2], [3, 4]], np.float32)), -2).asnumpy(),
          [[1, 2], [3.126928, 4.126928]])
    big = ops.logcumsumexp(Tensor(np.array([1e30, 1e30, 88., 100.], np.float32)), 0).asnumpy()
    _same(big, [1e30] * 4)
    assert ops.logcumsumexp(Tensor(np.zeros((2, 0), np.float32)), 1).shape == (2, 0)
    with pytest.raises(TypeError, match="logcumsumexp"):
        ops.logcumsumexp(Tensor(np.array([1, 2, 3], np.int32)), 0)
    with pytest.raises(ValueError, match="0-d"):
        ops.logcumsumexp(Tensor(np.float32(2.0)), 0)
    # the gradient (MindSpore 2.10): d/dx Σ w·logcumsumexp(x) at [0.5, -1, 2], w = [1, -2, 0.5]
    gw = Tensor(np.array([1., -2, 0.5], np.float32))
    g = kiln.grad(lambda t: ops.sum(ops.mul(ops.logcumsumexp(t, 0), gw)))(Tensor(np.array([0.5, -1., 2.], np.float32)))
    _same(g.asnumpy(), [-0.54750395, -0.3452941, 0.3927983], rtol=1e-5)


def test_logcumsumexp_special_values():
    """-inf is the identity, +inf stays, NaN spreads: as NumPy's np.logaddexp.accumulate. MindSpore 2.10's CPU kernel
    differs here (not mirrored): it gives NaN for logaddexp(-inf, -inf) and then log 2 for a following 0, and after a
    NaN it continues with finite values ([1e30, 1e30, -1e30, nan, 2] -> [..., nan, 2.693])."""
    x = np.array([[-INF, -INF, 0., INF, 1.], [1e30, 1e30, -1e30, NAN, 2.], [5., INF, INF, -INF, 3.]], np.float32)
    got = ops.logcumsumexp(Tensor(x), 1).asnumpy()
    with np.errstate(invalid="ignore"):  # NumPy warns on -inf - -inf inside logaddexp
        want = np.logaddexp.accumulate(x.astype(np.float64), axis=1).astype(np.float32)
    _same(got, want)
    assert got[0, 1] == -INF and got[0, 2] == 0.0


def test_logcumsumexp_gradients_float64():
    """The first and second derivatives against float64 central differences, with values spread so that exp alone
    would overflow (x up to 800)."""
    rng = np.random.default_rng(3)
    x0 = rng.uniform(-3, 3, (2, 6)) + np.array([[0.0], [800.0]])
    w = rng.standard_normal((2, 6))

    def f(a):
        return ops.sum(ops.mul(ops.logcumsumexp(a, 1), Tensor(w)))

    def first(a):
        return kiln.grad(f)(a)

    g = first(Tensor(x0)).asnumpy()
    h = 1e-6
    fd = np.zeros_like(x0)
    v = rng.standard_normal((2, 6))
    fd2 = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += h
        xm[idx] -= h
        fd[idx] = (float(f(Tensor(xp)).asnumpy()) - float(f(Tensor(xm)).asnumpy())) / (2 * h)
        fd2[idx] = ((first(Tensor(xp)).asnumpy() - first(Tensor(xm)).asnumpy()) * v).sum() / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    second = kiln.grad(lambda a: ops.sum(ops.mul(first(a), Tensor(v))))(Tensor(x0)).asnumpy()
    np.testing.assert_allclose(second, fd2, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------- median / nanmedian

def test_median_mindspore_values():
    """MindSpore 2.10 CPU's values (oracle): the lower middle value; equal values ordered by index (a stable sort's
    k-th: [2, 1, 2, 2, 3] -> index 2, [5, 5, 1, 1, 0] -> index 3); a line holding NaN gives its first NaN; nanmedian
    the median of the non-NaN values."""
    x = Tensor(np.array([[2., 1., 2., 2., 3.], [5., 5., 1., 1., 0.], [1., 1., 1., 1., 1.]], np.float32))
    v, i = ops.median(x)
    _same(v.asnumpy(), [2, 1, 1])
    np.testing.assert_array_equal(i.asnumpy(), [2, 3, 2])
    assert v.dtype == kiln.float32 and i.dtype == kiln.int64
    v, i = ops.median(x, 0)
    _same(v.asnumpy(), [2, 1, 1, 1, 1])
    np.testing.assert_array_equal(i.asnumpy(), [0, 2, 2, 2, 2])
    v, i = ops.median(Tensor(np.array([[3, 1, 3, 2], [7, 7, 7, 7]], np.int32)), 1, True)
    assert v.dtype == kiln.int32 and v.shape == (2, 1)
    np.testing.assert_array_equal(v.asnumpy(), [[2], [7]])
    np.testing.assert_array_equal(i.asnumpy(), [[3], [1]])
    xn = Tensor(np.array([[NAN, 1., 2., NAN, 0.], [NAN, NAN, 1, 1, 1], [NAN] * 5], np.float32))
    v, i = ops.median(xn)
    assert np.isnan(v.asnumpy()).all()
    np.testing.assert_array_equal(i.asnumpy(), [0, 0, 0])
    v, i = ops.nanmedian(xn)
    _same(v.asnumpy(), [1, 1, NAN])
    # MindSpore 2.10 reports index 2 for the all-NaN row (its CPU kernel's index there depends on the length: 0, 0, 0,
    # 2, 2, 3, 5 for 1..7 NaN); Kiln gives the first element's index 0 (not mirrored)
    np.testing.assert_array_equal(i.asnumpy(), [1, 3, 0])
    v, i = ops.nanmedian(Tensor(np.array([[3., NAN, 3, 3, 1.]])))
    assert float(v.asnumpy()[0]) == 3.0 and int(i.asnumpy()[0]) == 0


def test_median_threaded_lines_and_edges():
    rng = np.random.default_rng(5)
    x = rng.integers(-20, 20, (64, 301, 3)).astype(np.float64)  # many ties; lines above the threading threshold
    v, i = ops.median(Tensor(x), 1)
    xs = np.sort(x, axis=1, kind="stable")
    _same(v.asnumpy(), xs[:, 150, :], rtol=0)
    # the index is the stable sort's: position 150 of argsort(kind="stable")
    np.testing.assert_array_equal(i.asnumpy(), np.argsort(x, axis=1, kind="stable")[:, 150, :])
    v, i = ops.median(Tensor(np.float32(4.5)))
    assert float(v.asnumpy()) == 4.5 and int(i.asnumpy()) == 0
    with pytest.raises(ValueError, match="median"):
        ops.median(Tensor(np.zeros((2, 0), np.float32)))
    # MindSpore 2.10's Median takes float32/float64/int16/int32/int64 only
    for bad in (np.array([True, False]), np.array([1, 2], np.float16), np.array([1, 2], np.int8)):
        with pytest.raises(TypeError, match="median"):
            ops.median(Tensor(bad))
    v, i = ops.nanmedian(Tensor(np.array([[1, 3, 2]], np.int16)))
    assert v.dtype == kiln.int16 and int(v.asnumpy()[0]) == 2 and int(i.asnumpy()[0]) == 2
    # the gradient goes to the picked element; PyNative and Graph mode agree
    w = Tensor(np.array([1., -2.]))
    xt = Tensor(np.array([[4., 1., 3., 3.], [0., 2., 2., 9.]]))

    def f(t):
        return ops.sum(ops.mul(ops.median(t, 1)[0], w))

    _same(kiln.grad(f)(xt).asnumpy(), [[0, 0, 1, 0], [0, -2, 0, 0]])
    _same(kiln.jit(kiln.grad(f))(xt).asnumpy(), [[0, 0, 1, 0], [0, -2, 0, 0]])


# ---------------------------------------------------------------------------------------------- det / slogdet / inverse

def test_lu_ops_mindspore_values():
    # MindSpore 2.10 (oracle): a singular float32 matrix: det -0.0, slogdet (0, -inf), logdet -inf; a permutation-like
    # float64 matrix: det -6, slogdet (-1, log 6), its inverse and the gradients below
    a = Tensor(np.array([[1., 2.], [2., 4.]], np.float32))
    assert float(ops.det(a).asnumpy()) == 0.0
    s, la = ops.slogdet(a)
    assert float(s.asnumpy()) == 0.0 and float(la.asnumpy()) == -INF
    assert float(ops.logdet(a).asnumpy()) == -INF
    b = np.array([[0., 2., 1.], [1., 0., 0.], [0., 0., 3.]])
    _same(ops.det(Tensor(b)).asnumpy(), -6.0, rtol=1e-15)
    s, la = ops.slogdet(Tensor(b))
    assert isinstance(ops.slogdet(Tensor(b)), tuple)
    _same(s.asnumpy(), -1.0)
    _same(la.asnumpy(), 1.791759469228055, rtol=1e-15)
    _same(ops.inverse(Tensor(b)).asnumpy(), [[0, 1, 0], [0.5, 0, -1 / 6], [0, 0, 1 / 3]], rtol=1e-15, atol=1e-17)
    g = kiln.grad(lambda x: ops.det(x))(Tensor(b))
    _same(g.asnumpy(), [[0, -3, 0], [-6, 0, 0], [0, 1, -2]], rtol=1e-14, atol=1e-14)
    g = kiln.grad(lambda x: ops.slogdet(x)[1])(Tensor(b))
    _same(g.asnumpy(), [[0, 0.5, 0], [1, 0, 0], [0, -1 / 6, 1 / 3]], rtol=1e-14, atol=1e-14)
    w = Tensor(np.arange(9.).reshape(3, 3))
    g = kiln.grad(lambda x: ops.sum(ops.mul(ops.inverse(x), w)))(Tensor(b))
    _same(g.asnumpy(), [[-2.0, -0.33333333333333337, -0.8333333333333333],
                        [-1.0, 0.3333333333333333, -0.6666666666666666],
                        [-1.6666666666666665, -0.4444444444444445, -0.6111111111111112]], rtol=1e-13)
    # errors name the op; a 0 x 0 matrix gives det 1 (MindSpore 2.10 raises ValueError there: not mirrored)
    with pytest.raises(TypeError, match="det"):
        ops.det(Tensor(np.eye(2, dtype=np.int32)))
    with pytest.raises(ValueError, match="inverse"):
        ops.inverse(Tensor(np.ones((2, 3), np.float32)))
    assert float(ops.det(Tensor(np.zeros((0, 0), np.float32))).asnumpy()) == 1.0


def test_lu_ops_batched_threads_and_second_derivative():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40, 12, 12))
    _same(ops.det(Tensor(x)).asnumpy(), np.linalg.det(x), rtol=1e-10)
    s, la = ops.slogdet(Tensor(x))
    ws, wl = np.linalg.slogdet(x)
    _same(s.asnumpy(), ws)
    _same(la.asnumpy(), wl, rtol=1e-12)
    _same(ops.inverse(Tensor(x)).asnumpy(), np.linalg.inv(x), rtol=1e-9, atol=1e-11)
    _same(ops.det(Tensor(x.astype(np.float32))).asnumpy(), np.linalg.det(x), rtol=1e-4)
    # MindSpore 2.10: det/slogdet of float16 keep Float16 (det [[2, 1], [1, 3]] = 5, log|det| 1.609); MatrixInverse
    # refuses float16 (TypeError)
    h = Tensor(np.array([[2., 1.], [1., 3.]], np.float16))
    assert ops.det(h).dtype == kiln.float16 and float(ops.det(h).asnumpy()) == 5.0
    _same(ops.slogdet(h)[1].asnumpy(), 1.609, rtol=1e-3)
    with pytest.raises(TypeError, match="inverse"):
        ops.inverse(h)
    # second derivatives (the bprops are Kiln ops) against float64 central differences of the first
    a0 = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    v = rng.standard_normal((3, 3))
    for f in (lambda t: ops.det(t), lambda t: ops.slogdet(t)[1], lambda t: ops.sum(ops.inverse(t))):
        def first(t, f=f):
            return kiln.grad(f)(t)

        second = kiln.grad(lambda t, first=first: ops.sum(ops.mul(first(t), Tensor(v))))(Tensor(a0)).asnumpy()
        h, fd = 1e-6, np.zeros((3, 3))
        for idx in np.ndindex(3, 3):
            ap, am = a0.copy(), a0.copy()
            ap[idx] += h
            am[idx] -= h
            fd[idx] = ((first(Tensor(ap)).asnumpy() - first(Tensor(am)).asnumpy()) * v).sum() / (2 * h)
        np.testing.assert_allclose(second, fd, rtol=1e-5, atol=1e-6)
    jf = kiln.jit(lambda t: (ops.det(t), ops.inverse(t)))
    d, inv = jf(Tensor(x[:3]))
    _same(d.asnumpy(), np.linalg.det(x[:3]), rtol=1e-10)
    _same(inv.asnumpy(), np.linalg.inv(x[:3]), rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------------------------------------- adaptive max pool

def test_adaptive_max_pool_mindspore_values():
    """MindSpore 2.10 CPU (oracle): the first maximum of each bin; 2-D/3-D count a NaN only when it is the bin's
    first element, the 1-D op skips NaN."""
    x = np.array([[[1., 3., 3., 0., 2.], [3., 1., NAN, 2., 2.], [0., 3., 1., NAN, 5.]]], np.float32)  # (1, 3, 5)
    v, i = ops.adaptive_max_pool2d(Tensor(x), (2, 2), True)
    _same(v.asnumpy(), [[[3, 3], [3, NAN]]])
    np.testing.assert_array_equal(i.asnumpy(), [[[1, 2], [5, 7]]])
    assert i.dtype == kiln.int64
    x4 = np.array([[[[1., NAN], [0., 5.]], [[NAN, 1.], [7., 0.]]]], np.float32)
    v, i = ops.adaptive_max_pool2d(Tensor(x4), 1, True)
    _same(v.asnumpy(), [[[[5]], [[NAN]]]])
    np.testing.assert_array_equal(i.asnumpy(), [[[[3]], [[0]]]])
    x3 = np.zeros((1, 1, 2, 2, 3), np.float32)
    x3[0, 0, 1, 0, 0] = NAN
    x3[0, 0, 1, 1, 2] = 4
    v, i = ops.adaptive_max_pool3d(Tensor(x3), (1, 1, 2), True)
    _same(v.asnumpy(), [[[[[0, 4]]]]])
    np.testing.assert_array_equal(i.asnumpy(), [[[[[0, 11]]]]])
    assert i.dtype == kiln.int32
    x1 = np.array([[[1., NAN, 3., 0., 2., 2.], [NAN, 1., 0, 2., 2., 9.]]], np.float32)
    _same(ops.adaptive_max_pool1d(Tensor(x1), 2).asnumpy(), [[[3, 2], [1, 9]]])
    # a 1-D bin of NaN only gives NaN; of -inf only -inf (MindSpore 2.10 gives the float's lowest value for both:
    # not mirrored)
    x1 = np.array([[[NAN, NAN, 3., -INF, -INF, -INF]]], np.float32)
    _same(ops.adaptive_max_pool1d(Tensor(x1), 3).asnumpy(), [[[NAN, 3, -INF]]])


def test_adaptive_max_pool_gradient_and_graph():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 9, 7))
    w = Tensor(rng.standard_normal((2, 3, 4, 3)))

    def f(t):
        return ops.sum(ops.mul(ops.adaptive_max_pool2d(t, (4, 3)), w))

    g = kiln.grad(f)(Tensor(x)).asnumpy()
    _, idx = ops.adaptive_max_pool2d(Tensor(x), (4, 3), True)
    want = np.zeros((2, 3, 63))
    np.add.at(want, (np.arange(2)[:, None, None], np.arange(3)[None, :, None], idx.asnumpy().reshape(2, 3, -1)),
              w.asnumpy().reshape(2, 3, -1))
    _same(g, want.reshape(x.shape), rtol=1e-15)
    _same(kiln.jit(kiln.grad(f))(Tensor(x)).asnumpy(), g, rtol=1e-15)


# ---------------------------------------------------------------------------------------------- zeta

def test_zeta_mindspore_values():
    # MindSpore 2.10 (oracle), float64: poles inf for an even integer s, NaN otherwise; q < 0 the series for an
    # integer s; s = inf: 0 for q > 1, 1 at q = 1, inf below; q = inf: 0
    s = [2.0, 3.0, 4.0, 2.5, 2.0, 3.0, 2.0, INF, INF, INF, 2.0, 1.5, 2.0, 30.0, 2.0, -INF, NAN, 1.0, 0.5]
    q = [0.0, 0.0, -2.0, -2.0, -2.5, -20.5, INF, 1.0, 0.5, 2.0, 1e9, -INF, 1e-30, 0.5, -1e-3, 1.0, 1.0, 1.0, 1.0]
    want = [INF, NAN, INF, NAN, 9.539246644989124, 0.0011331449598196328, 0.0, 1.0, INF, 0.0, 1.0000000004999997e-09,
            NAN, 9.999999999999998e+59, 1073741824.0000052, 1000001.6473414316, NAN, NAN, INF, NAN]
    # (q = -20.5: the first terms alternate in sign, so both sums round differently: 1.7e-12 apart)
    _same(ops.zeta(Tensor(np.array(s)), Tensor(np.array(q))).asnumpy(), want, rtol=1e-11)
    r = ops.zeta(Tensor(np.array([2.0, 3.5], np.float32)), Tensor(np.array([1.0, 0.7], np.float32)))
    assert r.dtype == kiln.float32
    _same(r.asnumpy(), [1.644934058189392, 3.692768096923828])
    # the gradient (MindSpore 2.10): none for s (zeros), -s zeta(s + 1, q) for q
    gs, gq = kiln.grad(lambda a, b: ops.sum(ops.zeta(a, b)), grad_position=(0, 1))(
        Tensor(np.array([2.0, 3.5])), Tensor(np.array([1.5, 0.7])))
    _same(gs.asnumpy(), [0.0, 0.0])
    _same(gq.asnumpy(), [-0.8287966442343201, -17.800702404580683], rtol=1e-13)
    # MindSpore 2.10's Zeta takes float32/float64 only
    with pytest.raises(TypeError, match="zeta"):
        ops.zeta(Tensor(np.array([2.0], np.float16)), Tensor(np.array([1.0], np.float16)))
    with pytest.raises(TypeError, match="zeta"):
        ops.zeta(2.0, Tensor(np.array([1.0])))
    with pytest.raises(TypeError, match="same dtype"):
        ops.zeta(Tensor(np.array([2.0])), Tensor(np.array([1.0], np.float32)))
    with pytest.raises(ValueError, match="Zeta"):
        ops.zeta(Tensor(np.ones(2)), Tensor(np.ones(3)))
    # broadcasting, against SciPy
    a, b = np.array([[1.5], [4.0]]), np.array([0.3, 2.0, 11.0])
    _same(ops.zeta(Tensor(a), Tensor(b)).asnumpy(), scipy.special.zeta(a, b), rtol=1e-13)


# ---------------------------------------------------------------------------------------------- kaiser_window

def test_kaiser_window_mindspore_values():
    # MindSpore 2.10 (np.i0 inside): periodic, beta 12, float64; symmetric float32 beta 5; a negative beta (I0 even)
    _same(ops.kaiser_window(8).asnumpy(),
          [5.2773441320097665e-05, 0.021278376581138674, 0.2156727447589671, 0.6945160085071692, 1.0,
           0.6945160085071692, 0.2156727447589671, 0.021278376581138674], rtol=1e-14)
    w = ops.kaiser_window(5, False, 5.0, dtype=kiln.float32)
    assert w.dtype == kiln.float32
    _same(w.asnumpy(), [0.036710891872644424, 0.5528517961502075, 1.0, 0.5528517961502075, 0.036710891872644424])
    _same(ops.kaiser_window(6, True, -3.0).asnumpy(),
          [0.2048847564012536, 0.5530529017405882, 0.8712418740795513, 1.0, 0.8712418740795513, 0.5530529017405882],
          rtol=1e-14)
    # beta = 800: I0 overflows float64; MindSpore 2.10 (np.i0(x) / np.i0(beta)) gives NaN in the middle, Kiln the
    # ratio from the scaled i0e: e^(|x| - beta) i0e(x) / i0e(beta) (not mirrored)
    big = ops.kaiser_window(7, False, 800.0).asnumpy()
    assert big[3] == 1.0 and np.isfinite(big).all()
    _same(big[2], math.exp(800 * (math.sqrt(1 - (1 / 3) ** 2) - 1)) * scipy.special.i0e(800 * math.sqrt(8 / 9))
          / scipy.special.i0e(800.0), rtol=1e-12)


def test_window_number_arguments_raise_naming_the_op():
    # MindSpore 2.10: kaiser_window(5, True, "a") and (…, None) raise TypeError (from NumPy); hamming_window's alpha /
    # beta "must be float" (TypeError for a str, None or bool). Kiln raised ValueError/TypeError from float() without
    # the op's name.
    for beta in ("a", None, [1.0]):
        with pytest.raises(TypeError, match=r"For 'kaiser_window', the 'beta' must be a number"):
            ops.kaiser_window(5, True, beta)
    for kw in ({"alpha": "a"}, {"beta": None}, {"alpha": True}):
        with pytest.raises(TypeError, match=r"For 'hamming_window', the '(alpha|beta)' must be a number"):
            ops.hamming_window(5, True, **kw)
    # beta = True is 1.0 in MindSpore 2.10's kaiser_window (np.i0(True · …)): [0.789848, 0.92137, 0.991094, …]
    _same(ops.kaiser_window(5, True, True).asnumpy(), ops.kaiser_window(5, True, 1.0).asnumpy(), rtol=0)
    _same(ops.kaiser_window(5, True, np.float32(3.0)).asnumpy(), ops.kaiser_window(5, True, 3.0).asnumpy(), rtol=0)


# ---------------------------------------------------------------------------------------------- random_gamma / gamma

def _check_gamma_sample(x, alpha, scale=1.0):
    """x holds Gamma(alpha, scale) samples: mean alpha*scale and variance alpha*scale^2 within 5 standard errors
    (the sample variance's: sqrt((mu4 - sigma^4) / n), mu4 = 3 alpha (alpha + 2) scale^4), and a KS test."""
    x = np.asarray(x, np.float64).ravel() / scale
    n = x.size
    assert np.all(np.isfinite(x)) and np.all(x >= 0)
    assert abs(x.mean() - alpha) < 5 * math.sqrt(alpha / n), (alpha, x.mean())
    assert abs(x.var() - alpha) < 5 * math.sqrt((2 * alpha ** 2 + 6 * alpha) / n), (alpha, x.var())
    assert scipy.stats.kstest(x, scipy.stats.gamma(alpha).cdf).pvalue > 1e-4


@pytest.mark.parametrize("alpha", [0.05, 0.4, 1.0, 2.5, 30.0])
def test_random_gamma_moments(alpha):
    # 200k samples per alpha (the alpha < 1 boost for 0.05 and 0.4), float64 and float32
    x = ops.random_gamma((200_000,), Tensor(np.array(alpha)), seed=3).asnumpy()
    _check_gamma_sample(x, alpha)
    x32 = ops.random_gamma((100_000,), Tensor(np.array([alpha], np.float32)), seed=4)
    assert x32.dtype == kiln.float32 and x32.shape == (100_000, 1)
    _check_gamma_sample(x32.asnumpy(), alpha)


def test_random_gamma_per_element_alpha_and_gamma_scale():
    # one draw for several alphas (output shape + alpha.shape): each column has its own distribution
    a = np.array([[0.3, 1.7], [4.0, 9.0]])
    x = ops.random_gamma((50_000,), Tensor(a), seed=9).asnumpy()
    assert x.shape == (50_000, 2, 2)
    for i in range(2):
        for j in range(2):
            _check_gamma_sample(x[:, i, j], a[i, j])
    # ops.gamma: beta is the scale (MindSpore's Gamma density e^(-x/beta) / beta^alpha ...; its documented examples
    # give means alpha * beta), shape, alpha and beta broadcast
    g = ops.gamma((40_000, 1, 2), Tensor(np.array([[3.0, 4.0], [5.0, 0.5]])), Tensor(np.array([1.0, 2.5])), 7)
    assert g.shape == (40_000, 2, 2) and g.dtype == kiln.float64
    g = g.asnumpy()
    for (i, j), (al, be) in {(0, 0): (3.0, 1.0), (0, 1): (4.0, 2.5), (1, 0): (5.0, 1.0), (1, 1): (0.5, 2.5)}.items():
        _check_gamma_sample(g[:, i, j], al, be)
    assert ops.Gamma(seed=2)((3,), Tensor(np.array([2.0], np.float32)), Tensor(np.array([1.0], np.float32))).shape \
        == (3,)


def test_random_gamma_threads_do_not_change_numbers():
    # every element has its own Philox counters: a big draw (threaded) begins with the small draw's numbers
    a = Tensor(np.array([0.7, 2.0], np.float32))
    kiln.set_seed(2)  # restarts the streams: both draws take the stream's first offset
    big = ops.random_gamma((40_000,), a, seed=11).asnumpy()
    kiln.set_seed(2)
    small = ops.random_gamma((3,), a, seed=11).asnumpy()
    np.testing.assert_array_equal(big[:3], small)


def test_random_gamma_seeds_pynative_and_graph():
    a = Tensor(np.array([0.5, 1.5, 6.0], np.float32))

    def draw():
        return ops.random_gamma((4,), a), ops.random_gamma((4,), a, seed=5), ops.gamma((4, 3), a, a, 5)

    kiln.set_seed(123)
    first = [t.asnumpy() for t in draw()]
    second = [t.asnumpy() for t in draw()]
    assert not np.array_equal(first[0], second[0]) and not np.array_equal(first[1], second[1])
    kiln.set_seed(123)
    jf = kiln.jit(draw)
    g1 = [t.asnumpy() for t in jf()]
    g2 = [t.asnumpy() for t in jf()]
    for want, got in zip(first + second, g1 + g2):
        np.testing.assert_array_equal(got, want)
    ops_in_graph = [n for g in jf.graphs for n in re.findall(r"= (\w+)\(", g.graph_before.to_text())]
    assert sorted(ops_in_graph) == ["Gamma", "RandomGamma", "RandomGamma"]
    # the Primitive with seed/seed2, and random_gamma with a Tensor shape (MindSpore's form)
    kiln.set_seed(1)
    p1 = ops.RandomGamma(seed=3, seed2=4)(Tensor(np.array([2, 2], np.int64)), a).asnumpy()
    kiln.set_seed(1)
    p2 = ops.RandomGamma(3, 4)((2, 2), a).asnumpy()
    assert p1.shape == (2, 2, 3)
    np.testing.assert_array_equal(p1, p2)


def test_random_gamma_dtypes_and_errors():
    # MindSpore 2.10: the output has alpha's dtype (Float16/32/64) and shape shape + alpha.shape
    for dt in (np.float16, np.float32, np.float64):
        r = ops.random_gamma((3, 2), Tensor(np.array([0.5, 1.5], dt)), seed=5)
        assert r.shape == (3, 2, 2) and r.asnumpy().dtype == dt
    assert ops.random_gamma((), Tensor(np.array(2.0, np.float32)), seed=5).shape == ()
    assert ops.random_gamma((0, 2), Tensor(np.array([1.0], np.float32))).shape == (0, 2, 1)
    # an infinite alpha gives inf (MindSpore 2.10 too)
    assert np.isinf(ops.random_gamma((2,), Tensor(np.array([np.inf], np.float32))).asnumpy()).all()
    with pytest.raises(TypeError, match="random_gamma.*Float16, Float32 or Float64"):
        ops.random_gamma((2,), Tensor(np.array([1, 2], np.int32)))  # MindSpore 2.10: TypeError
    with pytest.raises(TypeError, match="random_gamma"):
        ops.random_gamma((2,), Tensor(np.array([1.0]), kiln.bfloat16))  # MindSpore 2.10: TypeError
    with pytest.raises(TypeError, match="random_gamma"):
        ops.random_gamma((2,), np.array([1.0], np.float32))
    with pytest.raises(ValueError, match="random_gamma"):
        ops.random_gamma((3, -2), Tensor(np.array([1.0], np.float32)))
    # alpha <= 0 or NaN: ValueError when the op runs, in both modes (MindSpore 2.10 returns 0 / NaN: not mirrored)
    for bad in (0.0, -1.5, np.nan):
        with pytest.raises(ValueError, match="random_gamma.*alpha.*positive"):
            ops.random_gamma((2,), Tensor(np.array([1.0, bad], np.float32)))
    with pytest.raises(ValueError, match="random_gamma.*alpha.*positive"):
        kiln.jit(lambda t: ops.random_gamma((2,), t))(Tensor(np.array([-1.0], np.float32)))
    with pytest.raises(ValueError, match="gamma.*beta.*positive"):
        ops.gamma((2,), Tensor(np.array([1.0])), Tensor(np.array([0.0])))
    with pytest.raises(TypeError, match="gamma.*one dtype"):
        ops.gamma((2,), Tensor(np.array([1.0])), Tensor(np.array([1.0], np.float32)))
    with pytest.raises(ValueError, match="gamma.*broadcast"):
        ops.gamma((3, 2), Tensor(np.array([3.0, 1, 1])), Tensor(np.array([1.0])))
    with pytest.raises(ValueError, match="RandomGamma"):
        ops.RandomGamma(seed=-3)
    # not differentiable (MindSpore 2.10: "RandomGamma's bprop not defined"): no gradient reaches alpha
    g = kiln.grad(lambda t: ops.sum(ops.random_gamma((4,), t, seed=5)))(Tensor(np.array([0.5, 1.5])))
    np.testing.assert_array_equal(g.asnumpy(), [0.0, 0.0])


# ---------------------------------------------------------------------------------------------- grid_sample

def _gs_ms_inputs():
    """The inputs of tests/python/data/grid_sample_ms210.json (MindSpore 2.10's values)."""
    x = (np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) ** 1.5 / 10).astype(np.float32)
    g = np.array([[[[-1.1, -0.3], [0.25, 0.9], [1.2, -1.05]], [[0.6, 0.1], [-0.45, 1.3], [0.0, 0.0]]]], np.float32)
    x5 = (np.arange(48, dtype=np.float32).reshape(1, 2, 2, 3, 4) ** 1.2 / 10).astype(np.float32)
    g5 = np.array([[[[[-0.7, 0.2, -0.4], [0.5, -0.95, 0.8]], [[1.1, 0.35, 0.1], [0.05, -0.6, -1.2]]]]], np.float32)
    return x, g, x5, g5


def test_grid_sample_mindspore_values_and_gradients():
    import json
    import os
    data = json.load(open(os.path.join(os.path.dirname(__file__), "data", "grid_sample_ms210.json")))["cases"]
    x, g, x5, g5 = _gs_ms_inputs()
    w = Tensor(np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3) - 5)
    assert len(data) == 16
    for key, want in data.items():
        nd, mode, pm, ac = key.split()
        ac = ac == "True"
        xi, gi = (x, g) if nd == "2d" else (x5, g5)
        out = ops.grid_sample(Tensor(xi), Tensor(gi), mode, pm, ac)
        _same(out.asnumpy().ravel(), want["out"], rtol=2e-6, atol=2e-6)

        def loss(a, b):
            o = ops.grid_sample(a, b, mode, pm, ac)
            return ops.sum(ops.mul(o, w)) if nd == "2d" else ops.sum(ops.square(o))
        dx, dg = kiln.grad(loss, grad_position=(0, 1))(Tensor(xi), Tensor(gi))
        _same(dx.asnumpy().ravel(), want["dinput"], rtol=2e-5, atol=2e-5)
        _same(dg.asnumpy().ravel(), want["dgrid"], rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_gradients_float64_and_graph(nd):
    # the grid gradient against float64 central differences (points away from pixel boundaries and clip points),
    # every padding mode; PyNative against Graph mode and one op each way
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3) + ((4, 5) if nd == 2 else (3, 4, 5)))
    g = rng.uniform(-1.25, 1.25, (2,) + ((3, 4) if nd == 2 else (2, 2, 3)) + (nd,))
    wt = rng.standard_normal((2, 3) + g.shape[1:-1])
    for pm in ("zeros", "border", "reflection"):
        for ac in (False, True):
            def f(a, b):
                return ops.sum(ops.mul(ops.grid_sample(a, b, "bilinear", pm, ac), Tensor(wt)))
            dx, dg = kiln.grad(f, grad_position=(0, 1))(Tensor(x), Tensor(g))
            num = np.zeros_like(g)
            for idx in np.ndindex(*g.shape):
                e = np.zeros_like(g)
                e[idx] = 1e-6
                num[idx] = (f(Tensor(x), Tensor(g + e)).asnumpy() - f(Tensor(x), Tensor(g - e)).asnumpy()) / 2e-6
            _same(dg.asnumpy(), num, rtol=1e-6, atol=1e-7)
            jx, jg = kiln.jit(kiln.grad(f, grad_position=(0, 1)))(Tensor(x), Tensor(g))
            _same(jx.asnumpy(), dx.asnumpy(), rtol=0)
            _same(jg.asnumpy(), dg.asnumpy(), rtol=0)
    jf = kiln.jit(lambda a, b: ops.grid_sample(a, b, "nearest", "border", True))
    _same(jf(Tensor(x), Tensor(g)).asnumpy(), ops.grid_sample(Tensor(x), Tensor(g), "nearest", "border", True).asnumpy(),
          rtol=0)
    assert [n for gr in jf.graphs for n in re.findall(r"= (\w+)\(", gr.graph_before.to_text())] == \
        [f"GridSampler{nd}D"]


# MindSpore 2.10 CPU (oracle, /tmp scripts run in /work/ms-venv): points NaN-x, NaN-y, NaN-both, (0.2, 0.3), +inf-x,
# -inf-x, 1e30-x (y = 0 where not given) on a 1x1x3x4 input 1..12; for (mode, padding_mode, align_corners)
_GS_NAN_MS210 = {
    ("bilinear", "zeros", False): [0, 0, 0, 8.7, 0, 0, 0],
    ("bilinear", "zeros", True): [0, 0, 0, 8.0, 0, 0, 0],
    ("bilinear", "border", False): [8, 10.5, 12, 8.7, 8, 5, 8],
    ("bilinear", "border", True): [8, 10.5, 12, 8.0, 8, 5, 8],
    ("bilinear", "reflection", False): [8, 10.5, 12, 8.7, 8, 8, 5],
    ("bilinear", "reflection", True): [8, 10.5, 12, 8.0, 8, 8, 6],
    ("nearest", "zeros", False): [0, 0, 0, 7, 0, 0, 0],
    ("nearest", "zeros", True): [0, 0, 0, 7, 0, 0, 0],
    ("nearest", "border", False): [8, 11, 12, 7, 8, 5, 8],
    ("nearest", "border", True): [8, 11, 12, 7, 8, 5, 8],
    ("nearest", "reflection", False): [8, 11, 12, 7, 8, 8, 5],
    ("nearest", "reflection", True): [8, 11, 12, 7, 8, 8, 6],
}
# 3-D, align_corners=False, input 1..24 of shape 1x1x2x3x4: (NaN, 0, 0), (0, NaN, 0), (0, 0, NaN), (inf, -inf, NaN),
# (0.2, 0.3, -0.1)
_GS3_NAN_MS210 = {
    ("bilinear", "zeros"): [0, 0, 0, 0, 13.5], ("bilinear", "border"): [14, 16.5, 18.5, 16, 13.5],
    ("bilinear", "reflection"): [14, 16.5, 18.5, 24, 13.5], ("nearest", "zeros"): [0, 0, 0, 0, 7],
    ("nearest", "border"): [20, 23, 19, 16, 7], ("nearest", "reflection"): [20, 23, 19, 24, 7],
}


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
def test_grid_sample_nan_and_inf_coordinates_mindspore_values(use_jit):
    """NaN and infinite grid coordinates give MindSpore 2.10's values (no crash, no out-of-bounds read): 'zeros' reads
    them as outside; 'border'/'reflection' clip a NaN to the last pixel (PyTorch's 3-D CPU kernel does the same; its
    2-D one clips to the first); reflection turns ±inf into NaN first. Gradients stay finite."""
    x = Tensor(np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4))
    g = Tensor(np.array([[[[NAN, 0], [0, NAN], [NAN, NAN], [0.2, 0.3], [INF, 0], [-INF, 0], [1e30, 0]]]], np.float32))
    for (mode, pm, ac), want in _GS_NAN_MS210.items():
        f = lambda a, b, mode=mode, pm=pm, ac=ac: ops.grid_sample(a, b, mode, pm, ac)
        out = (kiln.jit(f) if use_jit else f)(x, g).asnumpy().ravel()
        _same(out, want, rtol=1e-6, atol=1e-6)
        dx, dg = kiln.grad(lambda a, b: ops.sum(f(a, b)), grad_position=(0, 1))(x, g)
        assert np.isfinite(dx.asnumpy()).all() and np.isfinite(dg.asnumpy()[0, 0, :3]).all(), (mode, pm, ac)
        assert dg.asnumpy()[0, 0, :3].tolist() == [[0.0, 0.0]] * 3 or pm != "zeros"
    x5 = Tensor(np.arange(1, 25, dtype=np.float32).reshape(1, 1, 2, 3, 4))
    g5 = Tensor(np.array([[[[[NAN, 0, 0], [0, NAN, 0], [0, 0, NAN], [INF, -INF, NAN], [0.2, 0.3, -0.1]]]]],
                         np.float32))
    for (mode, pm), want in _GS3_NAN_MS210.items():
        f = lambda a, b, mode=mode, pm=pm: ops.grid_sample(a, b, mode, pm, False)
        _same((kiln.jit(f) if use_jit else f)(x5, g5).asnumpy().ravel(), want, rtol=1e-6, atol=1e-6)


def test_grid_sample_threaded_and_errors():
    # a large grid runs on the OpenMP threads: the same numbers as point by point in NumPy (the registry reference)
    from op_registry.nnfunc_loss import _np_grid_sample
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 8, 9, 10))
    g = rng.uniform(-1.1, 1.1, (2, 20, 30, 2))
    _same(ops.grid_sample(Tensor(x), Tensor(g), "bilinear", "reflection", False).asnumpy(),
          _np_grid_sample(x, g, "bilinear", "reflection", False), rtol=1e-12, atol=1e-13)
    # float16 in float32 arithmetic (MindSpore 2.10's float16 kernel gives inf for some of these points)
    x16, g16 = x[:, :2, :4, :5].astype(np.float16), g[:, :3, :4].astype(np.float16)
    out16 = ops.grid_sample(Tensor(x16), Tensor(g16))
    assert out16.dtype == kiln.float16
    _same(out16.asnumpy().astype(np.float64), _np_grid_sample(x16.astype(np.float64), g16.astype(np.float64)),
          rtol=2e-3, atol=2e-3)
    # a NaN coordinate reads as outside: 0 and no gradient
    gn = g[:1, :1, :2].copy()
    gn[0, 0, 0, 0] = np.nan
    dx, dg = kiln.grad(lambda a, b: ops.sum(ops.grid_sample(a, b)), grad_position=(0, 1))(Tensor(x[:1]), Tensor(gn))
    assert ops.grid_sample(Tensor(x[:1]), Tensor(gn)).asnumpy()[0, :, 0, 0].tolist() == [0.0] * 8
    assert dg.asnumpy()[0, 0, 0].tolist() == [0.0, 0.0]
    t = Tensor(x[:1, :1, :3, :3].astype(np.float32))
    with pytest.raises(TypeError, match="grid_sample.*one dtype"):
        ops.grid_sample(t, Tensor(np.zeros((1, 1, 1, 2))))  # MindSpore 2.10: TypeError
    with pytest.raises(ValueError, match="grid_sample.*4-D .* or 5-D"):
        ops.grid_sample(Tensor(np.zeros((1, 3, 3), np.float32)), Tensor(np.zeros((1, 1, 2), np.float32)))
    with pytest.raises(ValueError, match="grid_sample.*grid"):
        ops.grid_sample(t, Tensor(np.zeros((1, 1, 1, 3), np.float32)))
    with pytest.raises(ValueError, match="grid_sample.*mode"):
        ops.grid_sample(t, Tensor(np.zeros((1, 1, 1, 2), np.float32)), "bicubic")  # MindSpore 2.10: ValueError
    with pytest.raises(TypeError, match="grid_sample.*align_corners"):
        ops.grid_sample(t, Tensor(np.zeros((1, 1, 1, 2), np.float32)), align_corners=1)
    # the Primitives
    p = ops.GridSampler2D("bilinear", "border", True)(t, Tensor(np.full((1, 1, 1, 2), 0.5, np.float32)))
    _same(p.asnumpy(), _np_grid_sample(x[:1, :1, :3, :3], np.full((1, 1, 1, 2), 0.5), "bilinear", "border", True),
          rtol=1e-6)
    with pytest.raises(ValueError, match="GridSampler3D"):
        ops.GridSampler3D()(t, Tensor(np.zeros((1, 1, 1, 2), np.float32)))
