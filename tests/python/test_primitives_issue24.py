"""Primitive classes and ops model zoos use (issue 24): Erf, ReLU6, Softplus, MaskedFill, KLDivLoss, BCEWithLogitsLoss,
LpNorm, Padding, MatrixSolve / ops.matrix_solve, ResizeLinear1D, CropAndResize, UniformCandidateSampler and
StridedSlice with Tensor begin/end/strides.

Expected values marked "MindSpore 2.10" were printed by MindSpore 2.10.0 (CPU, PyNative) for the same inputs
(/work/shared/tools/ms_oracle.py style runs); each is also checked against a NumPy formula where one exists.
Each op runs in PyNative and in Graph mode (kiln.jit); gradients are compared with float64 central differences;
bad input raises MindSpore's exception type."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops
from kiln.ops import operations as P

from helpers import central_difference, check_grad

X = np.array([[-1.5, 0.0, 0.3], [2.0, -0.7, 1.2]], np.float32)


def _both(fn, *args):
    """fn(*args) in PyNative and under kiln.jit, as NumPy arrays (asserting they agree)."""
    eager = fn(*args)
    graph = ms.jit(fn)(*args)
    e = eager.asnumpy() if isinstance(eager, Tensor) else [t.asnumpy() for t in eager]
    g = graph.asnumpy() if isinstance(graph, Tensor) else [t.asnumpy() for t in graph]
    np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    return e


def _grad32(fn, x, ref64, rtol=1e-3, atol=1e-4):
    """Kiln's gradient of sum(fn(x)) at a float32 x vs float64 central differences of the NumPy reference."""
    g = ops.grad(lambda t: fn(t).sum())(Tensor(x.astype(np.float32))).asnumpy()
    want = central_difference(lambda a: float(np.sum(ref64(a))), x.astype(np.float64))
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------- Erf, ReLU6, Softplus

def _erf(a):
    return np.vectorize(math.erf)(a)


def test_erf():
    out = _both(lambda t: P.Erf()(t), Tensor(X))
    ms_210 = [[-0.9661051630973816, 0.0, 0.3286267817020416], [0.9953222870826721, -0.6778011918067932,
                                                                0.9103139638900757]]  # MindSpore 2.10
    np.testing.assert_allclose(out, ms_210, rtol=2e-6)
    np.testing.assert_allclose(out, _erf(X), rtol=2e-6)
    assert out.dtype == np.float32
    assert abs(P.Erf()(Tensor(np.array([0.5]))).asnumpy()[0] - 0.5204998778130465) < 1e-12  # MindSpore 2.10, f64
    check_grad(lambda t: P.Erf()(t), [X])
    with pytest.raises(TypeError, match="Erf"):
        P.Erf()(Tensor(np.array([1, 2], np.int32)))  # MindSpore 2.10: TypeError


def test_relu6():
    x = np.array([-1.0, 3.0, 7.0, 0.5, 6.5], np.float32)
    out = _both(lambda t: P.ReLU6()(t), Tensor(x))
    np.testing.assert_array_equal(out[:3], [0.0, 3.0, 6.0])  # MindSpore 2.10
    np.testing.assert_array_equal(out, np.clip(x, 0, 6))
    _grad32(lambda t: P.ReLU6()(t), x, lambda a: np.clip(a, 0, 6))
    with pytest.raises(TypeError, match="ReLU6"):
        P.ReLU6()(Tensor(np.array([-1, 3, 7], np.int32)))  # MindSpore 2.10: TypeError (float16/float32 only)


def test_hsigmoid_primitive():
    # MindSpore 2.10 has ops.HSigmoid / P.HSigmoid (the hardsigmoid primitive): relu6(x + 3) / 6
    x = np.array([-4.0, -3.0, -1.5, 0.0, 0.7, 3.0, 12.0], np.float32)
    out = _both(lambda t: P.HSigmoid()(t), Tensor(x))
    np.testing.assert_allclose(out, [0.0, 0.0, 0.25, 0.5, 0.6166667, 1.0, 1.0], rtol=1e-6)  # MindSpore 2.10
    np.testing.assert_allclose(out, np.clip(x + 3, 0, 6) / 6, rtol=1e-6)
    assert ops.HSigmoid is P.HSigmoid
    x64 = np.array([-1.5, 0.7, 2.0])
    np.testing.assert_allclose(P.HSigmoid()(Tensor(x64)).asnumpy(), np.clip(x64 + 3, 0, 6) / 6, rtol=1e-15)
    _grad32(lambda t: P.HSigmoid()(t), np.array([-2.0, -0.5, 1.0, 2.5]), lambda a: np.clip(a + 3, 0, 6) / 6)
    # MindSpore 2.10 raises TypeError for UInt8, Bool and Complex64 (its int8..int64 kernels truncate to ints: Kiln
    # refuses ints here, as its HSwish primitive)
    for a in (np.array([1, 2], np.uint8), np.array([True, False]), np.array([1, 2], np.int32),
              np.array([1 + 1j], np.complex64)):
        with pytest.raises(TypeError, match="HSigmoid"):
            P.HSigmoid()(Tensor(a))


def test_softplus():
    out = _both(lambda t: P.Softplus()(t), Tensor(X))
    ms_210 = [[0.20141321420669556, 0.6931470036506653, 0.8543546199798584],
              [2.1269280910491943, 0.40318599343299866, 1.4632827043533325]]  # MindSpore 2.10
    np.testing.assert_allclose(out, ms_210, rtol=2e-6)
    np.testing.assert_allclose(out, np.log1p(np.exp(X.astype(np.float64))), rtol=2e-6)
    big = P.Softplus()(Tensor(np.array([30.0, 100.0, -100.0], np.float32))).asnumpy()
    np.testing.assert_allclose(big, [30.00000762939453, 100.0, 0.0], rtol=1e-6, atol=1e-30)  # MindSpore 2.10
    check_grad(lambda t: P.Softplus()(t), [X])
    with pytest.raises(TypeError, match="Softplus"):
        P.Softplus()(Tensor(np.array([1, 2], np.int32)))  # MindSpore 2.10: TypeError


# ---------------------------------------------------------------------------------------------- MaskedFill

def test_masked_fill():
    m = np.array([[True, False, True], [False, False, True]])
    out = _both(lambda t, mm, v: P.MaskedFill()(t, mm, v), Tensor(X), Tensor(m), Tensor(np.float32(5.0)))
    np.testing.assert_allclose(out, [[5.0, 0.0, 5.0], [2.0, -0.7, 5.0]], rtol=1e-6)  # MindSpore 2.10
    np.testing.assert_array_equal(out, np.where(m, np.float32(5.0), X))
    np.testing.assert_array_equal(P.MaskedFill()(Tensor(X), Tensor(m), 5.0).asnumpy(), out)  # a float value
    bc = P.MaskedFill()(Tensor(X), Tensor(np.array([True, False, False])), Tensor(np.float32(-1.0))).asnumpy()
    np.testing.assert_allclose(bc, [[-1.0, 0.0, 0.3], [-1.0, -0.7, 1.2]], rtol=1e-6)  # MindSpore 2.10 (broadcast)
    it = P.MaskedFill()(Tensor(np.array([1, 2, 3], np.int32)), Tensor(np.array([True, False, True])),
                        Tensor(np.int32(9))).asnumpy()
    assert it.dtype == np.int32 and it.tolist() == [9, 2, 9]  # MindSpore 2.10
    # gradient: input where the mask is False, the value summed over the masked places
    gx, gv = ops.grad(lambda t, v: P.MaskedFill()(t, Tensor(m), v).sum(), grad_position=(0, 1))(
        Tensor(X), Tensor(np.float32(5.0)))
    np.testing.assert_array_equal(gx.asnumpy(), (~m).astype(np.float32))
    assert float(gv.asnumpy()) == 3.0
    with pytest.raises(TypeError, match="mask"):
        P.MaskedFill()(Tensor(X), Tensor(np.array([1, 0, 1], np.int32)), Tensor(np.float32(5.0)))  # MS: TypeError
    with pytest.raises(TypeError, match="MaskedFill"):
        P.MaskedFill()(Tensor(X), Tensor(m), Tensor(np.int32(5)))  # MindSpore 2.10: TypeError (dtype)


# ---------------------------------------------------------------------------------------------- KLDivLoss, BCE

LP = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], np.float32)
LG = np.array([[-0.5, 1.0, 0.2], [-1.3, 0.4, 0.0]], np.float32)


def _kl_ref(lg, lp, reduction):
    v = lp * (np.log(lp) - lg)
    return {"none": v, "sum": v.sum(), "mean": v.mean(), "batchmean": v.sum() / v.shape[0]}[reduction]


@pytest.mark.parametrize("reduction, ms_210", [
    ("mean", -0.2745997905731201), ("sum", -1.6475987434387207), ("batchmean", -0.8237993717193604),
    ("none", [[-0.22188758850097656, -0.8465735912322998, -0.42119187116622925],
              [0.4735046327114105, -0.27025851607322693, -0.36119186878204346]])])  # MindSpore 2.10
def test_kldiv_loss(reduction, ms_210):
    out = _both(lambda a, b: P.KLDivLoss(reduction)(a, b), Tensor(LG), Tensor(LP))
    np.testing.assert_allclose(out, ms_210, rtol=1e-5)
    np.testing.assert_allclose(out, _kl_ref(LG.astype(np.float64), LP.astype(np.float64), reduction), rtol=1e-5)
    check_grad(lambda a: P.KLDivLoss(reduction)(a, Tensor(LP.astype(np.float64))), [LG])


def test_kldiv_loss_errors():
    with pytest.raises(ValueError, match="reduction"):
        P.KLDivLoss("foo")  # MindSpore 2.10: ValueError


TG = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]], np.float32)
W = np.array([1.0, 2.0, 0.5], np.float32)
PW = np.array([1.5, 1.0, 2.0], np.float32)


def _bce_ref(x, y, w, pw):
    sp = np.log1p(np.exp(-x))
    return w * ((1 - y) * x + (1 + (pw - 1) * y) * sp)


@pytest.mark.parametrize("reduction, ms_210", [
    ("mean", 0.6060482263565063), ("sum", 3.636289358139038),
    ("none", [[0.20141339302062988, 1.3862943649291992, 0.554355263710022],
              [0.19039207696914673, 0.8063722848892212, 0.49746185541152954]])])  # MindSpore 2.10
def test_bce_with_logits_loss(reduction, ms_210):
    out = _both(lambda a, b, c, d: P.BCEWithLogitsLoss(reduction)(a, b, c, d), Tensor(X), Tensor(TG), Tensor(W),
                Tensor(PW))
    np.testing.assert_allclose(out, ms_210, rtol=2e-6)
    ref = _bce_ref(X.astype(np.float64), TG, W, PW)
    np.testing.assert_allclose(out, {"none": ref, "sum": ref.sum(), "mean": ref.mean()}[reduction], rtol=2e-6)
    check_grad(lambda a: P.BCEWithLogitsLoss(reduction)(a, Tensor(TG.astype(np.float64)),
                                                       Tensor(W.astype(np.float64)), Tensor(PW.astype(np.float64))),
               [X])


def test_bce_with_logits_loss_defaults_and_errors():
    for out in (P.BCEWithLogitsLoss()(Tensor(X), Tensor(TG)), P.BCEWithLogitsLoss()(Tensor(X), Tensor(TG), None, None)):
        np.testing.assert_allclose(out.asnumpy(), 0.4737187325954437, rtol=2e-6)  # MindSpore 2.10
    with pytest.raises(ValueError, match="reduction"):
        P.BCEWithLogitsLoss("foo")  # MindSpore 2.10: ValueError


# ---------------------------------------------------------------------------------------------- LpNorm

X3 = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [-7.0, 8.0]]], np.float32)


def _lp_ref(a, axis, p, keep):
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keep).astype(a.dtype)
    return np.sum(np.abs(a) ** p, axis=axis, keepdims=keep) ** (1.0 / p)


@pytest.mark.parametrize("kw, ms_210", [
    (dict(axis=[0, 1], p=2), [9.165151596069336, 10.954451560974121]),
    (dict(axis=1, p=1, keep_dims=True), [[[4.0, 6.0]], [[12.0, 14.0]]]),
    (dict(axis=(0, 2), p=3), [7.047298908233643, 9.816659927368164]),
    (dict(axis=2, p=0), [[2.0, 2.0], [2.0, 2.0]])])  # MindSpore 2.10
def test_lp_norm(kw, ms_210):
    out = _both(lambda t: P.LpNorm(**kw)(t), Tensor(X3))
    np.testing.assert_allclose(out, ms_210, rtol=1e-6)
    axis = tuple(kw["axis"]) if isinstance(kw["axis"], (list, tuple)) else kw["axis"]
    np.testing.assert_allclose(out, _lp_ref(X3.astype(np.float64), axis, kw["p"], kw.get("keep_dims", False)),
                               rtol=1e-6)
    if kw["p"]:
        _grad32(lambda t: P.LpNorm(**kw)(t), X3, lambda a: _lp_ref(a, axis, kw["p"], False))


def test_lp_norm_epsilon():
    z = Tensor(np.zeros((2, 2), np.float32))
    np.testing.assert_allclose(P.LpNorm(axis=0, p=2)(z).asnumpy(), [9.999999960041972e-13] * 2)  # MindSpore 2.10
    np.testing.assert_allclose(P.LpNorm(axis=0, p=1, epsilon=0.5)(z).asnumpy(), [0.5, 0.5])  # MindSpore 2.10


def test_lp_norm_errors():  # MindSpore 2.10's exception types
    with pytest.raises(TypeError, match="'p'"):
        P.LpNorm(axis=0, p=2.0)
    with pytest.raises(TypeError, match="'epsilon'"):
        P.LpNorm(axis=0, epsilon=1)
    with pytest.raises(TypeError, match="'axis'"):
        P.LpNorm(axis=0.5)
    with pytest.raises(ValueError, match="'p'"):
        P.LpNorm(axis=0, p=-1)
    with pytest.raises(TypeError, match="LpNorm"):
        P.LpNorm(axis=0)(Tensor(np.array([3, 4], np.int32)))
    with pytest.raises(TypeError, match="LpNorm"):
        P.LpNorm(axis=0)(Tensor(np.array([3.0, 4.0], np.float64)))
    with pytest.raises(ValueError, match="axis"):
        P.LpNorm(axis=3)(Tensor(X3))
    with pytest.raises(ValueError, match="axis"):
        P.LpNorm(axis=())(Tensor(X3))


# ---------------------------------------------------------------------------------------------- Padding

def test_padding():
    out = _both(lambda t: P.Padding(4)(t), Tensor(np.array([[8.0], [10.0]], np.float32)))
    np.testing.assert_array_equal(out, [[8.0, 0.0, 0.0, 0.0], [10.0, 0.0, 0.0, 0.0]])  # MindSpore 2.10
    d = P.Padding()(Tensor(np.array([[[1], [2]]], np.int32))).asnumpy()
    assert d.dtype == np.int32 and d.shape == (1, 2, 8)  # MindSpore 2.10
    np.testing.assert_array_equal(d[..., 0], [[1, 2]])
    np.testing.assert_array_equal(d[..., 1:], 0)
    np.testing.assert_array_equal(P.Padding(1)(Tensor(np.array([[8.0], [10.0]], np.float32))).asnumpy(),
                                  [[8.0], [10.0]])  # MindSpore 2.10
    g = ops.grad(lambda t: (P.Padding(3)(t) * Tensor(np.array([2.0, 5.0, 7.0], np.float32))).sum())(
        Tensor(np.array([[1.0], [2.0]], np.float32)))
    np.testing.assert_array_equal(g.asnumpy(), [[2.0], [2.0]])
    with pytest.raises(ValueError, match="last dimension"):
        P.Padding(4)(Tensor(np.ones((2, 2), np.float32)))  # MindSpore 2.10: ValueError
    with pytest.raises(ValueError, match="pad_dim_size"):
        P.Padding(0)  # MindSpore 2.10: ValueError
    with pytest.raises(ValueError, match="rank"):
        P.Padding(3)(Tensor(np.array([8.0], np.float32)))  # MindSpore 2.10: ValueError


# ---------------------------------------------------------------------------------------------- MatrixSolve

A = np.array([[1.0, 4.0], [2.0, 7.0]], np.float32)
B = np.array([[1.0], [3.0]], np.float32)


def test_matrix_solve():
    out = _both(lambda a, b: P.MatrixSolve()(a, b), Tensor(A), Tensor(B))
    np.testing.assert_allclose(out, [[5.0], [-1.0]], rtol=1e-5, atol=1e-6)  # MindSpore 2.10
    adj = _both(lambda a, b: ops.matrix_solve(a, b, adjoint=True), Tensor(A), Tensor(B))
    np.testing.assert_allclose(adj, [[-1.0], [1.0]], rtol=1e-5, atol=1e-6)  # MindSpore 2.10
    np.testing.assert_allclose(adj, np.linalg.solve(A.T, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(P.MatrixSolve(adjoint=True)(Tensor(A), Tensor(B)).asnumpy(), adj)
    f64 = P.MatrixSolve()(Tensor(np.array([[2.0, 1], [1, 3]])), Tensor(np.array([[1.0, 2], [3, 4]]))).asnumpy()
    assert f64.dtype == np.float64
    np.testing.assert_allclose(f64, [[0.0, 0.3999999999999999], [1.0, 1.2000000000000002]], atol=1e-15)  # MS 2.10
    ab = np.array([[[2.0, 1], [1, 3]], [[1, 2], [3, 4]]], np.float32)
    bb = np.array([[[1.0], [3]], [[1], [0]]], np.float32)
    np.testing.assert_allclose(P.MatrixSolve()(Tensor(ab), Tensor(bb)).asnumpy(),
                               [[[0.0], [1.0]], [[-2.000000238418579], [1.5000001192092896]]],
                               rtol=1e-5, atol=1e-6)  # MindSpore 2.10
    a3 = np.array([[3.0, 1.0, 0.5], [0.2, 2.0, -1.0], [1.0, 0.3, 4.0]])
    b3 = np.array([[1.0, -2.0], [0.5, 1.0], [2.0, 0.0]])
    for adjoint in (False, True):
        check_grad(lambda a, b: P.MatrixSolve(adjoint)(a, b), [a3, b3], rtol=1e-5, atol=1e-7)


def test_matrix_solve_errors():  # MindSpore 2.10's exception types
    with pytest.raises(TypeError, match="adjoint"):
        P.MatrixSolve(adjoint=1)
    with pytest.raises(TypeError, match="adjoint"):
        ops.matrix_solve(Tensor(A), Tensor(B), adjoint=1)
    with pytest.raises(TypeError, match="MatrixSolve"):
        P.MatrixSolve()(Tensor(np.array([[2, 1], [1, 3]], np.int32)), Tensor(np.array([[1], [3]], np.int32)))
    with pytest.raises(TypeError, match="same"):
        P.MatrixSolve()(Tensor(A), Tensor(B.astype(np.float64)))
    with pytest.raises(ValueError, match="dimension"):
        P.MatrixSolve()(Tensor(np.array([1.0, 2.0], np.float32)), Tensor(B))
    with pytest.raises(ValueError, match="M"):
        P.MatrixSolve()(Tensor(np.ones((2, 3), np.float32)), Tensor(B))
    with pytest.raises(ValueError, match="M"):
        P.MatrixSolve()(Tensor(A), Tensor(np.ones((3, 1), np.float32)))
    with pytest.raises(ValueError, match="dimension"):
        P.MatrixSolve()(Tensor(A), Tensor(np.ones((1, 2, 1), np.float32)))
    with pytest.raises(ValueError, match="not invertible"):
        P.MatrixSolve()(Tensor(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)), Tensor(B))


# ---------------------------------------------------------------------------------------------- ResizeLinear1D

XR = np.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], np.float32)


def _linear_ref(x, w, align):
    n = x.shape[-1]
    if w == 1:
        return x[..., :1]
    if align:
        src = np.arange(w) * (n - 1) / (w - 1)
    else:
        src = np.clip((np.arange(w) + 0.5) * n / w - 0.5, 0, None)
    i0 = np.minimum(np.floor(src).astype(int), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    t = src - i0
    return x[..., i0] * (1 - t) + x[..., i1] * t


@pytest.mark.parametrize("mode, w, ms_210", [
    ("align_corners", 6, [[[1.0, 1.4, 1.8, 2.2, 2.6, 3.0], [4.0, 4.4, 4.8, 5.2, 5.6, 6.0]]]),
    ("align_corners", 2, [[[1.0, 3.0], [4.0, 6.0]]]),
    ("align_corners", 1, [[[1.0], [4.0]]]),
    ("half_pixel", 6, [[[1.0, 1.25, 1.75, 2.25, 2.75, 3.0], [4.0, 4.25, 4.75, 5.25, 5.75, 6.0]]]),
    ("half_pixel", 2, [[[1.25, 2.75], [4.25, 5.75]]]),
    ("half_pixel", 1, [[[1.0], [4.0]]])])  # MindSpore 2.10
def test_resize_linear_1d(mode, w, ms_210):
    out = _both(lambda t: P.ResizeLinear1D(mode)(t, (w,)), Tensor(XR))
    np.testing.assert_allclose(out, ms_210, rtol=1e-6)
    np.testing.assert_allclose(out, _linear_ref(XR.astype(np.float64), w, mode == "align_corners"), rtol=1e-6)
    np.testing.assert_allclose(P.ResizeLinear1D(mode)(Tensor(XR), Tensor(np.array([w], np.int64))).asnumpy(), out)
    check_grad(lambda t: P.ResizeLinear1D(mode)(t, (w,)), [XR])


def test_resize_linear_1d_dtypes_and_errors():
    np.testing.assert_allclose(P.ResizeLinear1D()(Tensor(XR), Tensor(np.array([5], np.int32))).asnumpy(),
                               [[[1.0, 1.5, 2.0, 2.5, 3.0], [4.0, 4.5, 5.0, 5.5, 6.0]]])  # MindSpore 2.10
    for dt in (np.float16, np.float64):
        o = P.ResizeLinear1D()(Tensor(np.array([[[1.0, 3.0]]], dt)), (3,)).asnumpy()
        assert o.dtype == dt
        np.testing.assert_allclose(o, [[[1.0, 2.0, 3.0]]])  # MindSpore 2.10
    with pytest.raises(ValueError, match="rank"):
        P.ResizeLinear1D()(Tensor(np.ones((2, 3), np.float32)), (5,))  # MindSpore 2.10: ValueError
    with pytest.raises(TypeError, match="ResizeLinear1D"):
        P.ResizeLinear1D()(Tensor(np.ones((1, 2, 3), np.int32)), (5,))  # MindSpore 2.10: TypeError
    with pytest.raises(TypeError, match="ResizeLinear1D"):  # Kiln: a Tensor size must be known while compiling
        ms.jit(lambda t, n: P.ResizeLinear1D()(t, n))(Tensor(XR), Tensor(np.array([5], np.int64)))
    with pytest.raises(ValueError, match="coordinate_transformation_mode"):
        P.ResizeLinear1D("asymmetric")  # MindSpore 2.10 fails too (AttributeError inside its constructor)


# ---------------------------------------------------------------------------------------------- CropAndResize

IMG = np.arange(2 * 4 * 5 * 2, dtype=np.float32).reshape(2, 4, 5, 2)
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.5, 0.5, 1.3]], np.float32)
BI = np.array([1, 0, 1], np.int32)


def _car_ref(img, boxes, bi, crop, method="bilinear", extrapolation=0.0):
    """TensorFlow's crop_and_resize, written out in NumPy (float64)."""
    _, h, w, c = img.shape
    ch, cw = crop
    out = np.zeros((len(boxes), ch, cw, c))
    for n, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        for i in range(ch):
            y = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 else 0.5 * (y1 + y2) * (h - 1)
            for j in range(cw):
                x = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 else 0.5 * (x1 + x2) * (w - 1)
                if not (0 <= y <= h - 1 and 0 <= x <= w - 1):
                    out[n, i, j] = extrapolation
                    continue
                im = img[bi[n]].astype(np.float64)
                if method == "nearest":  # the position in float32 arithmetic, as the kernels round it
                    f = np.float32
                    yf = f(y1) * f(h - 1) + f(i) * ((f(y2) - f(y1)) * f((h - 1) / (ch - 1))) if ch > 1 else y
                    xf = f(x1) * f(w - 1) + f(j) * ((f(x2) - f(x1)) * f((w - 1) / (cw - 1))) if cw > 1 else x
                    out[n, i, j] = im[int(np.floor(yf + f(0.5))), int(np.floor(xf + f(0.5)))]
                    continue
                t, b, lf, r = int(np.floor(y)), int(np.ceil(y)), int(np.floor(x)), int(np.ceil(x))
                yl, xl = y - t, x - lf
                top = im[t, lf] + (im[t, r] - im[t, lf]) * xl
                bot = im[b, lf] + (im[b, r] - im[b, lf]) * xl
                out[n, i, j] = top + (bot - top) * yl
    return out


CAR_BILINEAR = [  # MindSpore 2.10, CropAndResize()(IMG, BOXES, BI, (3, 2))
    [[[44.599998474121094, 45.599998474121094], [50.20000076293945, 51.20000076293945]],
     [[55.099998474121094, 56.099998474121094], [60.69999694824219, 61.69999694824219]],
     [[65.5999984741211, 66.5999984741211], [71.19999694824219, 72.19999694824219]]],
    [[[0.0, 1.0], [8.0, 9.0]], [[15.0, 16.0], [23.0, 24.0]], [[30.0, 31.0], [38.0, 39.0]]],
    [[[0.0, 0.0], [0.0, 0.0]], [[48.5, 49.5], [0.0, 0.0]], [[59.0, 60.0], [0.0, 0.0]]]]
CAR_NEAREST = [  # MindSpore 2.10, CropAndResize("nearest", 0.5)(IMG, BOXES, BI, (3, 2))
    [[[42.0, 43.0], [48.0, 49.0]], [[52.0, 53.0], [58.0, 59.0]], [[62.0, 63.0], [68.0, 69.0]]],
    [[[0.0, 1.0], [8.0, 9.0]], [[20.0, 21.0], [28.0, 29.0]], [[30.0, 31.0], [38.0, 39.0]]],
    [[[0.5, 0.5], [0.5, 0.5]], [[44.0, 45.0], [0.5, 0.5]], [[54.0, 55.0], [0.5, 0.5]]]]


def test_crop_and_resize():
    args = (Tensor(IMG), Tensor(BOXES), Tensor(BI))
    out = _both(lambda a, b, c: P.CropAndResize()(a, b, c, (3, 2)), *args)
    assert out.dtype == np.float32 and out.shape == (3, 3, 2, 2)
    np.testing.assert_allclose(out, CAR_BILINEAR, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, _car_ref(IMG, BOXES, BI, (3, 2)), rtol=1e-5, atol=1e-5)
    near = _both(lambda a, b, c: P.CropAndResize("nearest", 0.5)(a, b, c, (3, 2)), *args)
    np.testing.assert_allclose(near, CAR_NEAREST)
    np.testing.assert_allclose(near, _car_ref(IMG, BOXES, BI, (3, 2), "nearest", 0.5))
    one = P.CropAndResize()(*args, (1, 1)).asnumpy()
    np.testing.assert_allclose(one, [[[[57.900001525878906, 58.900001525878906]]], [[[19.0, 20.0]]],
                                     [[[51.70000076293945, 52.70000076293945]]]], rtol=1e-5)  # MindSpore 2.10
    np.testing.assert_allclose(P.CropAndResize()(*args, Tensor(np.array([3, 2], np.int32))).asnumpy(), out)
    flip = P.CropAndResize()(Tensor(IMG), Tensor(np.array([[0.8, 0.9, 0.1, 0.2]], np.float32)),
                             Tensor(np.array([0], np.int32)), (3, 2)).asnumpy()
    np.testing.assert_allclose(flip, [[[[31.2, 32.2], [25.6, 26.6]], [[20.7, 21.7], [15.1, 16.1]],
                                       [[10.2, 11.2], [4.6, 5.6]]]], rtol=1e-5)  # MindSpore 2.10 (flipped box)
    ints = P.CropAndResize()(Tensor(np.arange(40, dtype=np.int32).reshape(1, 4, 5, 2)), Tensor(BOXES[:1]),
                             Tensor(np.array([0], np.int32)), (3, 2)).asnumpy()
    assert ints.dtype == np.float32
    np.testing.assert_allclose(ints[0, :, 0], [[4.6, 5.6], [15.1, 16.1], [25.6, 26.6]], rtol=1e-5)  # MS 2.10


def _car_v2_ref(img, boxes, bi, crop):
    """MindSpore's bilinear_v2 rule (kiln CropAndResize's docstring), in NumPy: whole-pixel corners, centred samples
    clamped into the box and the image, bilinear interpolation (checked against MindSpore 2.10 on 40 random boxes,
    flipped and outside ones included, for 5 crop sizes: within 1.1e-6)."""
    _, h, w, c = img.shape
    ch, cw = crop
    out = np.zeros((len(boxes), ch, cw, c))
    for n, (y1, x1, y2, x2) in enumerate(boxes):
        y1p, y2p = int(np.float32(y1) * np.float32(h)), int(np.float32(y2) * np.float32(h))
        x1p, x2p = int(np.float32(x1) * np.float32(w)), int(np.float32(x2) * np.float32(w))
        im = img[bi[n]].astype(np.float64)
        for i in range(ch):
            y = min(max(max(min(y1p + (i + 0.5) * (y2p - y1p + 1) / ch - 0.5, y2p), y1p), 0), h - 1)
            for j in range(cw):
                x = min(max(max(min(x1p + (j + 0.5) * (x2p - x1p + 1) / cw - 0.5, x2p), x1p), 0), w - 1)
                t, b, lf, r = int(np.floor(y)), int(np.ceil(y)), int(np.floor(x)), int(np.ceil(x))
                top = im[t, lf] + (im[t, r] - im[t, lf]) * (x - lf)
                bot = im[b, lf] + (im[b, r] - im[b, lf]) * (x - lf)
                out[n, i, j] = top + (bot - top) * (y - t)
    return out


CAR_BILINEAR_V2 = [  # MindSpore 2.10, CropAndResize("bilinear_v2", -1.0)(IMG, BOXES, BI, (3, 2))
    [[[44.666664123535156, 45.66666793823242], [48.66666793823242, 49.666664123535156]],
     [[58.0, 59.0], [62.0, 63.0]],
     [[71.33333587646484, 72.33332824707031], [75.33333587646484, 76.33332824707031]]],
    [[[5.3333330154418945, 6.3333330154418945], [11.333333015441895, 12.333333015441895]],
     [[22.0, 23.0], [28.0, 29.0]], [[32.0, 33.0], [38.0, 39.0]]],
    [[[45.5, 46.5], [48.0, 49.0]], [[55.5, 56.5], [58.0, 59.0]], [[65.5, 66.5], [68.0, 69.0]]]]


def test_crop_and_resize_bilinear_v2():
    out = _both(lambda a, b, c: P.CropAndResize("bilinear_v2", -1.0)(a, b, c, (3, 2)), Tensor(IMG), Tensor(BOXES),
                Tensor(BI))
    np.testing.assert_allclose(out, CAR_BILINEAR_V2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, _car_v2_ref(IMG, BOXES, BI, (3, 2)), rtol=1e-5, atol=1e-5)
    rng = np.random.default_rng(0)
    img = rng.uniform(-1, 1, (2, 6, 7, 3)).astype(np.float32)
    boxes = rng.uniform(-1.5, 2.5, (20, 4)).astype(np.float32)
    bi = rng.integers(0, 2, 20).astype(np.int32)
    for crop in ((3, 4), (5, 2), (1, 3)):
        got = P.CropAndResize("bilinear_v2")(Tensor(img), Tensor(boxes), Tensor(bi), crop).asnumpy()
        np.testing.assert_allclose(got, _car_v2_ref(img, boxes, bi, crop), rtol=1e-5, atol=2e-6)
    wts = rng.uniform(-1, 1, (20, 3, 4, 3))
    gi = ops.grad(lambda a: (P.CropAndResize("bilinear_v2")(a, Tensor(boxes), Tensor(bi), (3, 4))
                             * Tensor(wts.astype(np.float32))).sum())(Tensor(img)).asnumpy()
    want = central_difference(lambda a: float(np.sum(_car_v2_ref(a, boxes, bi, (3, 4)) * wts)), img)
    np.testing.assert_allclose(gi, want, rtol=1e-4, atol=1e-5)


def test_crop_and_resize_gradients():
    rng = np.random.default_rng(0)
    img = rng.uniform(-1, 1, (2, 4, 5, 2)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.05, 0.13, 0.66, 0.71]], np.float32)
    bi = np.array([1, 0], np.int32)
    wts = rng.uniform(-1, 1, (2, 3, 4, 2))

    def loss(a, b):
        return (P.CropAndResize()(a, b, Tensor(bi), (3, 4)) * Tensor(wts.astype(np.float32))).sum()

    gi, gb = ops.grad(loss, grad_position=(0, 1))(Tensor(img), Tensor(boxes))
    want_i = central_difference(lambda a: float(np.sum(_car_ref(a, boxes, bi, (3, 4)) * wts)), img)
    want_b = central_difference(lambda b: float(np.sum(_car_ref(img, b, bi, (3, 4)) * wts)), boxes)
    np.testing.assert_allclose(gi.asnumpy(), want_i, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb.asnumpy(), want_b, rtol=1e-3, atol=1e-4)


def test_crop_and_resize_errors():  # MindSpore 2.10's exception types
    with pytest.raises(ValueError, match="method"):
        P.CropAndResize("cubic")
    with pytest.raises(TypeError, match="extrapolation_value"):
        P.CropAndResize(extrapolation_value=1)
    with pytest.raises(ValueError, match="box_index"):
        P.CropAndResize()(Tensor(IMG), Tensor(BOXES), Tensor(np.array([1, 0, 2], np.int32)), (3, 2))
    with pytest.raises(ValueError, match="rank"):
        P.CropAndResize()(Tensor(IMG[0]), Tensor(BOXES), Tensor(BI), (3, 2))


# ---------------------------------------------------------------------------------------------- UniformCandidateSampler

TC = np.array([[1], [3], [4], [6], [3]], np.int64)


def test_uniform_candidate_sampler_shapes_and_counts():
    # MindSpore 2.10 (seed=1): shapes (3,), (5, 1), (3,); Int64 / Float32 / Float32; expected count 0.75 = 3/4
    s, t, c = P.UniformCandidateSampler(1, 3, False, 4, 1)(Tensor(TC))
    assert s.shape == (3,) and t.shape == (5, 1) and c.shape == (3,)
    assert s.dtype == ms.int64 and t.dtype == ms.float32 and c.dtype == ms.float32
    assert np.all((s.asnumpy() >= 0) & (s.asnumpy() < 4))
    np.testing.assert_allclose(t.asnumpy(), 0.75)
    np.testing.assert_allclose(c.asnumpy(), 0.75)
    s32 = P.UniformCandidateSampler(1, 3, True, 8, 1)(Tensor(TC.astype(np.int32)))[0]
    assert s32.dtype == ms.int32


def test_uniform_candidate_sampler_unique_and_accidental_hits():
    for seed in range(1, 30):
        s, t, c = P.UniformCandidateSampler(1, 4, True, 8, seed)(Tensor(TC))
        v = s.asnumpy()
        assert len(set(v.tolist())) == 4 and np.all((v >= 0) & (v < 8))
        # TensorFlow's / MindSpore 2.10's expected count: num_sampled/range_max if every try was kept, else
        # 1 − (1 − 1/range_max)^num_tries (MindSpore 2.10 prints 0.6073041 = 1 − (7/8)^7 for 7 tries)
        e = float(c.asnumpy()[0])
        tries = [k for k in range(4, 200) if abs(-np.expm1(k * np.log1p(-1 / 8)) - e) < 1e-6 or
                 (k == 4 and abs(e - 0.5) < 1e-7)]
        assert tries, e
        np.testing.assert_allclose(t.asnumpy(), e)
        r = P.UniformCandidateSampler(1, 3, True, 8, seed, True)(Tensor(TC))[0].asnumpy()
        assert not set(r.tolist()) & {1, 3, 4, 6} and len(set(r.tolist())) == 3
    a = P.UniformCandidateSampler(1, 3, False, 10, 7)(Tensor(TC))[0].asnumpy()
    b = P.UniformCandidateSampler(1, 3, False, 10, 7)(Tensor(TC))[0].asnumpy()
    np.testing.assert_array_equal(a, b)  # an op-level seed repeats the draw


def test_uniform_candidate_sampler_errors():  # MindSpore 2.10's exception types
    with pytest.raises(ValueError, match="num_sampled"):
        P.UniformCandidateSampler(1, 5, True, 4, 1)
    with pytest.raises(ValueError, match="num_true"):
        P.UniformCandidateSampler(2, 3, True, 8, 1)(Tensor(TC))
    with pytest.raises(TypeError, match="true_classes"):
        P.UniformCandidateSampler(1, 3, True, 8, 1)(Tensor(TC.astype(np.float32)))
    with pytest.raises(TypeError, match="unique"):
        P.UniformCandidateSampler(1, 3, 1, 8, 1)
    with pytest.raises(ValueError, match="dimension"):
        P.UniformCandidateSampler(1, 3, True, 8, 1)(Tensor(np.array([1, 3], np.int64)))
    with pytest.raises(RuntimeError, match="UniformCandidateSampler"):  # Kiln: PyNative only
        ms.jit(lambda t: P.UniformCandidateSampler(1, 3, True, 8, 1)(t))(Tensor(TC))


# ---------------------------------------------------------------------------------------------- StridedSlice(Tensor)

XS = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_strided_slice_tensor_begin_end_strides():
    want = [[[5.0, 7.0], [9.0, 11.0]], [[17.0, 19.0], [21.0, 23.0]]]  # MindSpore 2.10
    np.testing.assert_array_equal(XS[0:2, 1:3, 1:4:2], want)
    for dt in (np.int64, np.int32):
        b, e, s = (Tensor(np.array(v, dt)) for v in ([0, 1, 1], [2, 3, 4], [1, 1, 2]))
        np.testing.assert_array_equal(P.StridedSlice()(Tensor(XS), b, e, s).asnumpy(), want)
    b = Tensor(np.array([0, 1, 1], np.int64))
    np.testing.assert_array_equal(P.StridedSlice()(Tensor(XS), b, (2, 3, 4), (1, 1, 2)).asnumpy(), want)  # mixed
    m = P.StridedSlice(begin_mask=1, shrink_axis_mask=2)(Tensor(XS), b, Tensor(np.array([2, 3, 4])),
                                                          Tensor(np.array([1, 1, 2]))).asnumpy()
    np.testing.assert_array_equal(m, [[5.0, 7.0], [17.0, 19.0]])  # MindSpore 2.10
    neg = ops.strided_slice(Tensor(XS), Tensor(np.array([-1, 0, 0])), Tensor(np.array([-3, 3, 4])),
                            Tensor(np.array([-1, 2, 3]))).asnumpy()
    np.testing.assert_array_equal(neg, [[[12.0, 15.0], [20.0, 23.0]], [[0.0, 3.0], [8.0, 11.0]]])  # MindSpore 2.10
    g = ops.grad(lambda t: P.StridedSlice()(t, b, Tensor(np.array([2, 3, 4])), Tensor(np.array([1, 1, 2]))).sum())(
        Tensor(XS)).asnumpy()
    mask = np.zeros_like(XS)
    mask[0:2, 1:3, 1:4:2] = 1
    np.testing.assert_array_equal(g, mask)
    # Graph mode: constant tuples compile; MindSpore 2.10 also takes Tensor graph inputs (dynamic shape), which
    # Kiln's static-shape graphs refuse with a TypeError naming the op
    np.testing.assert_array_equal(ms.jit(lambda t: P.StridedSlice()(t, (0, 1, 1), (2, 3, 4), (1, 1, 2)))(
        Tensor(XS)).asnumpy(), want)
    with pytest.raises(TypeError, match="strided_slice"):
        ms.jit(lambda t, bb: P.StridedSlice()(t, bb, (2, 3, 4), (1, 1, 2)))(Tensor(XS), b)


def test_strided_slice_tensor_errors():  # MindSpore 2.10: TypeError for a float or 2-D Tensor, ValueError lengths
    e, s = Tensor(np.array([2, 3, 4])), Tensor(np.array([1, 1, 2]))
    with pytest.raises(TypeError, match="begin"):
        P.StridedSlice()(Tensor(XS), Tensor(np.array([0.0, 1, 1])), e, s)
    with pytest.raises(TypeError, match="begin"):
        P.StridedSlice()(Tensor(XS), Tensor(np.array([[0, 1, 1]])), e, s)
    with pytest.raises(ValueError):
        P.StridedSlice()(Tensor(XS), Tensor(np.int64(1)), e, s)


# ---------------------------------------------------------------------------------------------- fused sparse optimizers

VAR0 = np.arange(12, dtype=np.float32).reshape(3, 2, 2) * 0.1
SG = np.array([[[0.5, -1.0], [2.0, 0.3]], [[-0.4, 0.1], [1.0, 1.5]]], np.float32)
IDX = {"idx": np.array([0, 2], np.int32), "dup": np.array([2, 2], np.int32)}
HYPER = dict(b1p=0.9, b2p=0.999, lr=0.01, b1=0.9, b2=0.999, eps=1e-8)


def _dense(grad, idx, rows):
    g = np.zeros((rows,) + grad.shape[1:], np.float64)
    np.add.at(g, idx, grad)
    hit = np.zeros(rows, bool)
    hit[idx] = True
    return g, hit.reshape((rows,) + (1,) * (grad.ndim - 1))


def _np_adam(var, m, v, grad, idx, lazy, nesterov, b1p, b2p, lr, b1, b2, eps):
    g, hit = _dense(grad, idx, var.shape[0])
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    m1, v1 = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    num = b1 * m1 + (1 - b1) * g if nesterov else m1
    if nesterov and not lazy:
        num = np.where(hit, num, 0.0)
    var1 = var - lr_t * num / (np.sqrt(v1) + eps)
    if lazy:
        return tuple(np.where(hit, new, old) for new, old in ((var1, var), (m1, m), (v1, v)))
    return var1, m1, v1


ADAM_MS = {  # MindSpore 2.10: var after one step (fresh kernels), m / v checked through the NumPy formula
    ("FusedSparseAdam", False, "idx"): [-0.0009898191783577204, 0.10007057338953018, 0.19796861708164215,
                                        0.2991512417793274, 0.39936330914497375, 0.4993633031845093,
                                        0.5993633270263672, 0.6993632912635803, 0.7996464371681213,
                                        0.8992925882339478, 0.9986591935157776, 1.0983116626739502],
    ("FusedSparseAdam", False, "dup"): [-0.0006367102614603937, 0.0993632897734642, 0.19936329126358032,
                                        0.29936331510543823, 0.39936330914497375, 0.4993633031845093,
                                        0.5993633270263672, 0.6993632912635803, 0.7992925643920898,
                                        0.9000000357627869, 0.9973010420799255, 1.0981051921844482],
    ("FusedSparseLazyAdam", False, "dup"): [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.7992925643920898,
                                            0.9000000357627869, 0.9973010420799255, 1.0981051921844482],
    ("FusedSparseAdam", True, "idx"): [-0.0012443441664800048, 0.10076920688152313, 0.1967707872390747,
                                       0.29902395606040955, 0.4, 0.5, 0.6, 0.7, 0.7999646663665771,
                                       0.8992925882339478, 0.9980875849723816, 1.0974252223968506],
    ("FusedSparseLazyAdam", True, "dup"): [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.7992925643920898,
                                           0.9006354808807373, 0.9954947829246521, 1.0970314741134644],
}
ADAM_M_MS = {  # MindSpore 2.10: m after one step
    ("FusedSparseAdam", "idx"): [0.14, -0.01, 0.29, 0.12, 0.09, 0.09, 0.09, 0.09, 0.05, 0.1, 0.19, 0.24],
    ("FusedSparseLazyAdam", "idx"): [0.14, -0.01, 0.29, 0.12, 0.1, 0.1, 0.1, 0.1, 0.05, 0.1, 0.19, 0.24],
}


def _adam_state():
    return (ms.Parameter(Tensor(VAR0.copy()), name="var"), ms.Parameter(Tensor(np.full((3, 2, 2), 0.1, np.float32)),
            name="m"), ms.Parameter(Tensor(np.full((3, 2, 2), 0.2, np.float32)), name="v"))


@pytest.mark.parametrize("name", ["FusedSparseAdam", "FusedSparseLazyAdam"])
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("which", ["idx", "dup"])
@pytest.mark.parametrize("graph", [False, True])
def test_fused_sparse_adam(name, nesterov, which, graph):
    var, m, v = _adam_state()
    op = getattr(P, name)(use_nesterov=nesterov)
    h = {k: Tensor(np.float32(x)) for k, x in HYPER.items()}

    def step(g, i):
        return op(var, m, v, h["b1p"], h["b2p"], h["lr"], h["b1"], h["b2"], h["eps"], g, i)

    out = (ms.jit(step) if graph else step)(Tensor(SG), Tensor(IDX[which]))
    want = _np_adam(VAR0.astype(np.float64), np.full((3, 2, 2), 0.1), np.full((3, 2, 2), 0.2), SG.astype(np.float64),
                    IDX[which], name.endswith("LazyAdam"), nesterov, **HYPER)
    for got, w in zip((var, m, v), want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out[0].asnumpy(), var.asnumpy())
    if (name, nesterov, which) in ADAM_MS:
        np.testing.assert_allclose(var.asnumpy().ravel(), ADAM_MS[name, nesterov, which], rtol=1e-5, atol=1e-7)
    if not nesterov and (name, which) in ADAM_M_MS:
        np.testing.assert_allclose(m.asnumpy().ravel(), ADAM_M_MS[name, which], rtol=1e-5, atol=1e-7)


def _np_ftrl(var, accum, linear, grad, idx, lr, l1, l2, lr_power):
    g, hit = _dense(grad, idx, var.shape[0])
    a = accum + g * g
    lin = linear + g - (a ** -lr_power - accum ** -lr_power) / lr * var
    q = a ** -lr_power / lr + 2 * l2
    nv = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / q, 0.0)
    return np.where(hit, nv, var), np.where(hit, a, accum), np.where(hit, lin, linear)


FTRL_MS = {  # MindSpore 2.10: FusedSparseFtrl(lr=0.01, l1=0.1, l2=0.2, lr_power=-0.5), var and linear after a step
    "idx": ([-0.010073739103972912, 0.07623235881328583, 0.1570960283279419, 0.0679684728384018, 0.4, 0.5, 0.6, 0.7,
             0.3034418821334839, 0.02946781925857067, 0.6834869384765625, 0.859103798866272],
            [0.7, -8.125810623168945, -31.97235870361328, -3.089864492416382, 0.2, 0.2, 0.2, 0.2, -15.693939208984375,
             -1.0891242027282715, -72.05810546875, -132.14175415039062]),
    "dup": ([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.024869533255696297, 0.6054040789604187, 0.8830611705780029,
             0.8962123394012451],
            [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, -0.9347769618034363, -58.09402847290039, -266.83929443359375,
             -164.2472686767578])}


@pytest.mark.parametrize("which", ["idx", "dup"])
@pytest.mark.parametrize("graph", [False, True])
def test_fused_sparse_ftrl(which, graph):
    var = ms.Parameter(Tensor(VAR0.copy()), name="var")
    accum = ms.Parameter(Tensor(np.full((3, 2, 2), 0.1, np.float32)), name="accum")
    linear = ms.Parameter(Tensor(np.full((3, 2, 2), 0.2, np.float32)), name="linear")
    op = P.FusedSparseFtrl(lr=0.01, l1=0.1, l2=0.2, lr_power=-0.5)

    def step(g, i):
        return op(var, accum, linear, g, i)

    (ms.jit(step) if graph else step)(Tensor(SG), Tensor(IDX[which]))
    want = _np_ftrl(VAR0.astype(np.float64), np.full((3, 2, 2), 0.1), np.full((3, 2, 2), 0.2),
                    SG.astype(np.float64), IDX[which], 0.01, 0.1, 0.2, -0.5)
    for got, w in zip((var, accum, linear), want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.asnumpy().ravel(), FTRL_MS[which][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(linear.asnumpy().ravel(), FTRL_MS[which][1], rtol=1e-5, atol=1e-5)


def _np_prox_adagrad(var, accum, grad, idx, lr, l1, l2):
    g, hit = _dense(grad, idx, var.shape[0])
    a = accum + g * g
    eta = lr / np.sqrt(a)
    u = var - eta * g
    nv = np.sign(u) * np.maximum(np.abs(u) - eta * l1, 0) / (1 + eta * l2)
    return np.where(hit, nv, var), np.where(hit, a, accum)


PADA_MS = {  # MindSpore 2.10: FusedSparseProximalAdagrad()(…, lr=0.01, l1=0.1, l2=0.2, …), var after a step
    "idx": [-0.006738452706485987, 0.10837450623512268, 0.1894417107105255, 0.2894950807094574, 0.4, 0.5, 0.6, 0.7,
            0.8027348518371582, 0.8886113166809082, 0.987628698348999, 1.0881431102752686],
    "dup": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.7892107367515564, 0.9064858555793762, 0.989067792892456,
            1.0884125232696533]}


@pytest.mark.parametrize("which", ["idx", "dup"])
@pytest.mark.parametrize("graph", [False, True])
def test_fused_sparse_proximal_adagrad(which, graph):
    var = ms.Parameter(Tensor(VAR0.copy()), name="var")
    accum = ms.Parameter(Tensor(np.full((3, 2, 2), 0.1, np.float32)), name="accum")
    op = P.FusedSparseProximalAdagrad()

    def step(g, i):
        return op(var, accum, Tensor(np.float32(0.01)), Tensor(np.float32(0.1)), Tensor(np.float32(0.2)), g, i)

    out = (ms.jit(step) if graph else step)(Tensor(SG), Tensor(IDX[which]))
    assert len(out) == 2
    want = _np_prox_adagrad(VAR0.astype(np.float64), np.full((3, 2, 2), 0.1), SG.astype(np.float64), IDX[which],
                            0.01, 0.1, 0.2)
    for got, w in zip((var, accum), want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(var.asnumpy().ravel(), PADA_MS[which], rtol=1e-5, atol=1e-7)


def test_fused_sparse_optimizer_errors():  # MindSpore 2.10's exception types for the attributes
    with pytest.raises(TypeError, match="use_nesterov"):
        P.FusedSparseAdam(use_nesterov=1)
    with pytest.raises(TypeError, match="use_locking"):
        P.FusedSparseProximalAdagrad(use_locking=0)
    with pytest.raises(TypeError, match="lr"):
        P.FusedSparseFtrl(lr=1, l1=0.1, l2=0.2, lr_power=-0.5)
    with pytest.raises(ValueError, match="lr_power"):
        P.FusedSparseFtrl(lr=0.01, l1=0.1, l2=0.2, lr_power=0.5)
    var, m, v = _adam_state()
    args = [Tensor(np.float32(x)) for x in HYPER.values()]
    with pytest.raises(TypeError, match="Parameter"):
        P.FusedSparseAdam()(Tensor(VAR0), m, v, *args, Tensor(SG), Tensor(IDX["idx"]))
    with pytest.raises(ValueError, match="grad"):
        P.FusedSparseAdam()(var, m, v, *args, Tensor(SG[:1]), Tensor(IDX["idx"]))
    with pytest.raises(TypeError, match="indices"):
        P.FusedSparseAdam()(var, m, v, *args, Tensor(SG), Tensor(np.array([0.0, 2.0], np.float32)))
    with pytest.raises(ValueError, match="indices"):
        P.FusedSparseAdam()(var, m, v, *args, Tensor(SG), Tensor(np.array([0, 3], np.int32)))


def test_repeated_axis_error_names_the_values():
    """A repeated reduction axis is named by its values, not its type (a tester's report: 'tuple (int, int)')."""
    x = Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(0, -2\).*axes \[0, 0\]"):
        ops.LpNorm(axis=[0, -2], p=2)(x)
