"""kiln.numpy (mindspore.numpy): values against NumPy, mindspore.numpy's dtype defaults (checked against MindSpore
2.10), gradients through it against finite differences, Graph mode against PyNative, and bad input."""
import numpy as np
import pytest

import kiln
import kiln.numpy as mnp
from kiln import Tensor

RNG = np.random.default_rng(0)
A = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
B = RNG.uniform(-2.0, 2.0, (3, 4)).astype(np.float32)


def _np(x):
    return x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)


UNARY = ["negative", "positive", "absolute", "abs", "fabs", "sign", "sqrt", "square", "reciprocal", "exp", "expm1",
         "exp2", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsinh", "arctanh",
         "floor", "ceil",
         "trunc", "rint", "isnan", "isinf", "isfinite"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "float_power",
          "remainder", "mod", "fmod", "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "less",
          "less_equal", "logaddexp"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(name):
    x = A if name in ("sqrt", "log", "log2", "log10", "log1p", "reciprocal") else B
    x = np.clip(x, -0.9, 0.9) if name == "arctanh" else x
    got = getattr(mnp, name)(Tensor(x))
    np.testing.assert_allclose(_np(got), getattr(np, name)(x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(name):
    y = A if name in ("power", "float_power") else B
    x = A if name in ("power", "float_power", "divide", "true_divide", "floor_divide", "remainder", "mod",
                      "fmod") else B
    a, b = (y, x) if name in ("power", "float_power") else (B, x)
    got = getattr(mnp, name)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(_np(got), getattr(np, name)(a, b), rtol=2e-6, atol=1e-6)
    got_s = getattr(mnp, name)(Tensor(a), 1.5)  # a Python scalar stays weak: float32 result
    assert got_s.dtype == kiln.float32 or got_s.dtype == kiln.bool_
    np.testing.assert_allclose(_np(got_s), getattr(np, name)(a, np.float32(1.5)), rtol=2e-6, atol=1e-6)


def test_creation_dtypes_follow_mindspore():
    assert mnp.arange(5).dtype == kiln.int32 and mnp.arange(5).asnumpy().tolist() == [0, 1, 2, 3, 4]
    assert mnp.arange(0, 1, 0.25).dtype == kiln.float32
    assert mnp.arange(3, dtype=mnp.float32).asnumpy().tolist() == [0.0, 1.0, 2.0]
    assert mnp.zeros((2, 3)).dtype == kiln.float32 and mnp.zeros(2, mnp.int32).dtype == kiln.int32
    assert mnp.ones(3).asnumpy().tolist() == [1.0, 1.0, 1.0]
    assert mnp.array([1, 2]).dtype == kiln.int32 and mnp.array([1.0, 2]).dtype == kiln.float32
    assert mnp.array(np.array([1.0, 2.0])).dtype == kiln.float64  # NumPy arrays keep their dtype
    assert mnp.full((2,), 3).dtype == kiln.int32 and mnp.full((2,), True).dtype == kiln.bool_
    assert mnp.ones_like(mnp.array([1, 2])).dtype == kiln.int32
    assert mnp.array([[1, 2]], ndmin=3).shape == (1, 1, 2)
    np.testing.assert_array_equal(mnp.eye(2, 3, 1).asnumpy(), np.eye(2, 3, 1))
    np.testing.assert_array_equal(mnp.identity(3).asnumpy(), np.identity(3))
    np.testing.assert_allclose(mnp.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    vals, step = mnp.linspace(0, 1, 4, endpoint=False, retstep=True)
    assert isinstance(step, Tensor) and float(step.asnumpy()) == 0.25  # MindSpore: a 0-d Tensor
    assert vals.asnumpy().tolist() == [0.0, 0.25, 0.5, 0.75]
    np.testing.assert_array_equal(mnp.tri(3, 4, 1).asnumpy(), np.tri(3, 4, 1))
    assert mnp.rand(2, 3).shape == (2, 3) and mnp.randn((4,)).shape == (4,)
    r = mnp.randint(3, 7, (100,))
    assert r.dtype == kiln.int32 and 3 <= r.asnumpy().min() and r.asnumpy().max() < 7
    with pytest.raises(TypeError, match="asarray"):
        mnp.asarray("abc")
    with pytest.raises(TypeError, match="asarray"):
        mnp.asarray([[1, 2], [3]])
    with pytest.raises(ValueError, match="step"):
        mnp.arange(0, 5, 0)


def test_reductions_match_numpy_and_mindspore_dtypes():
    s = mnp.sum(mnp.array([[1, 2], [3, 4]]), axis=0)
    assert s.dtype == kiln.int64 and s.asnumpy().tolist() == [4, 6]  # MindSpore 2.10: Int64
    m = mnp.mean(mnp.array([1, 2]))
    assert m.dtype == kiln.int32 and int(m.asnumpy()) == 1  # MindSpore 2.10 truncates an int mean
    assert float(mnp.mean(mnp.array([1, 2]), dtype=mnp.float32).asnumpy()) == 1.5
    x = Tensor(B)
    for name, ref in (("amax", np.amax), ("amin", np.amin), ("max", np.max), ("min", np.min), ("ptp", np.ptp)):
        np.testing.assert_allclose(getattr(mnp, name)(x, axis=1).asnumpy(), ref(B, axis=1), rtol=1e-6)
    np.testing.assert_allclose(mnp.std(x, axis=0, ddof=1).asnumpy(), np.std(B, axis=0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(mnp.var(x).asnumpy(), np.var(B), rtol=1e-5)
    assert int(mnp.argmax(x).asnumpy()) == int(np.argmax(B))
    assert mnp.argmin(x, axis=1).asnumpy().tolist() == np.argmin(B, axis=1).tolist()
    np.testing.assert_allclose(mnp.average(x, axis=1, weights=Tensor(A[0])).asnumpy(),
                               np.average(B, axis=1, weights=A[0]), rtol=1e-5)
    avg, wsum = mnp.average(x, returned=True)
    assert float(wsum.asnumpy()) == 12.0 and float(avg.asnumpy()) == pytest.approx(float(B.mean()), rel=1e-5)
    assert float(mnp.norm(mnp.array([3.0, 4.0])).asnumpy()) == 5.0
    assert float(mnp.sum(x, initial=10.0).asnumpy()) == pytest.approx(float(B.sum()) + 10.0, rel=1e-5)


def test_shape_functions_match_numpy():
    x = Tensor(A)
    cases = [
        (mnp.reshape(x, (4, 3)), A.reshape(4, 3)), (mnp.ravel(x), A.ravel()),
        (mnp.expand_dims(x, (0, 2)), np.expand_dims(A, (0, 2))), (mnp.squeeze(mnp.ones((1, 2, 1))), np.ones(2)),
        (mnp.transpose(x), A.T), (mnp.swapaxes(Tensor(A[None]), 0, 2), np.swapaxes(A[None], 0, 2)),
        (mnp.moveaxis(Tensor(A[None]), 0, -1), np.moveaxis(A[None], 0, -1)),
        (mnp.concatenate((x, x), axis=1), np.concatenate((A, A), 1)),
        (mnp.concatenate((x, x), axis=None), np.concatenate((A, A), None)),
        (mnp.stack([x, x], axis=1), np.stack([A, A], 1)), (mnp.hstack((x, x)), np.hstack((A, A))),
        (mnp.vstack((mnp.ones(2), mnp.zeros(2))), np.vstack((np.ones(2), np.zeros(2)))),
        (mnp.tile(mnp.array([1, 2]), 2), np.tile([1, 2], 2)), (mnp.tile(x, (2, 1, 1)), np.tile(A, (2, 1, 1))),
        (mnp.repeat(x, 2, axis=1), np.repeat(A, 2, 1)), (mnp.repeat(x, 2), np.repeat(A, 2)),
        (mnp.broadcast_to(mnp.array([1, 2]), (3, 2)), np.broadcast_to([1, 2], (3, 2))),
        (mnp.flip(x), np.flip(A)), (mnp.fliplr(x), np.fliplr(A)), (mnp.flipud(x), np.flipud(A)),
        (mnp.roll(x, 2, 1), np.roll(A, 2, 1)), (mnp.roll(x, 5), np.roll(A, 5)),
        (mnp.tril(x, -1), np.tril(A, -1)), (mnp.triu(x, 1), np.triu(A, 1)),
        (mnp.atleast_3d(mnp.ones(3)), np.atleast_3d(np.ones(3))), (mnp.atleast_2d(mnp.array(1.0)), np.ones((1, 1))),
        (mnp.where(mnp.array([True, False]), mnp.array([1.0, 2]), mnp.array([3.0, 4])), [1.0, 4.0]),
        (mnp.clip(mnp.array([1.0, 5.0]), 2, 3), [2.0, 3.0]),
        (mnp.dot(x, Tensor(A.T)), A @ A.T), (mnp.dot(mnp.ones((2, 3)), mnp.ones((4, 3, 5))),
                                            np.dot(np.ones((2, 3)), np.ones((4, 3, 5)))),
        (mnp.matmul(x, Tensor(A.T)), A @ A.T), (mnp.outer(mnp.array([1, 2]), mnp.array([3, 4, 5])),
                                                np.outer([1, 2], [3, 4, 5])),
        (mnp.inner(x, x), np.inner(A, A)), (mnp.diag(mnp.array([1.0, 2.0]), -1), np.diag([1.0, 2.0], -1)),
        (mnp.diag(x, 1), np.diag(A, 1)), (mnp.trace(x, 1), np.trace(A, 1)),
        (mnp.isclose(mnp.array([1.0, 2.0]), mnp.array([1.0, 2.1])), [True, False]),
    ]
    for i, (got, want) in enumerate(cases):
        np.testing.assert_allclose(_np(got), np.asarray(want), rtol=1e-5, err_msg=f"case {i}")
    parts = mnp.split(mnp.arange(6), 3)
    assert [p.asnumpy().tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]
    assert [p.shape for p in mnp.split(x, [1, 3], axis=1)] == [(3, 1), (3, 2), (3, 1)]
    grids = mnp.meshgrid(mnp.arange(3), mnp.arange(2))
    for g, w in zip(grids, np.meshgrid(np.arange(3), np.arange(2))):
        np.testing.assert_array_equal(g.asnumpy(), w)
    assert mnp.size(x) == 12 and mnp.size(x, 1) == 4
    with pytest.raises(ValueError, match="sections"):
        mnp.split(x, 5, axis=1)
    with pytest.raises(ValueError, match="both"):
        mnp.where(mnp.array([1, 0]))
    with pytest.raises(ValueError, match="same length"):
        mnp.moveaxis(x, (0, 1), 0)


def test_gradients_flow_through_numpy_functions():
    x = RNG.uniform(0.5, 2.0, (2, 3))

    def f(t):
        return mnp.sum(mnp.multiply(mnp.log(t), mnp.sqrt(t)) + mnp.square(mnp.tile(t, (1, 2))[:, :3]))

    g = kiln.grad(f)(Tensor(x)).asnumpy()
    ref = (np.sqrt(x) / x + np.log(x) / (2 * np.sqrt(x))) + 2 * x
    np.testing.assert_allclose(g, ref, rtol=1e-10)


def test_graph_mode_matches_pynative():
    def f(t):
        return mnp.concatenate((mnp.std(t, axis=1, keepdims=True), mnp.logaddexp(t, 1.0)), axis=1)

    x = Tensor(B)
    np.testing.assert_allclose(kiln.jit(f)(x).asnumpy(), f(x).asnumpy(), rtol=1e-6)
