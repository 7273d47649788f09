"""kiln.value_and_grad / kiln.grad: MindSpore's argument semantics and return structures (reference §6),
gradient values against finite differences, and gradients of gradients."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, ParameterTuple, Tensor, ops


def f2(x, y):
    return ops.sum(x * x * y)


X = np.array([1.0, 2.0, 3.0], np.float32)
Y = np.array([0.5, -1.0, 2.0], np.float32)


def test_grad_position_forms():
    x, y = Tensor(X), Tensor(Y)
    g = ms.grad(f2)(x, y)
    np.testing.assert_allclose(g.asnumpy(), 2 * X * Y)
    g = ms.grad(f2, grad_position=(0,))(x, y)  # a 1-tuple still gives one Tensor
    assert isinstance(g, Tensor)
    gx, gy = ms.grad(f2, grad_position=(0, 1))(x, y)
    np.testing.assert_allclose(gy.asnumpy(), X * X)
    gy2, gx2 = ms.grad(f2, grad_position=(1, 0))(x, y)
    np.testing.assert_allclose(gx2.asnumpy(), gx.asnumpy())


def test_weights_forms_and_value():
    w = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")
    b = Parameter(Tensor(np.array(0.5, np.float32)), name="b")
    unused = Parameter(Tensor(np.ones(3, np.float32)), name="unused")

    def net(x):
        return ops.sum(ops.matmul(x, w) + b)

    x = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    v, (gw, gb, gu) = ms.value_and_grad(net, None, [w, b, unused])(x)
    np.testing.assert_allclose(v.asnumpy(), ((x.asnumpy() @ w.asnumpy()) + 0.5).sum())
    np.testing.assert_allclose(gw.asnumpy(), x.asnumpy().sum(0))
    np.testing.assert_allclose(gb.asnumpy(), 2.0)
    np.testing.assert_array_equal(gu.asnumpy(), np.zeros(3))  # an unused weight gets zeros
    g = ms.grad(net, None, w)(x)  # a single Parameter gives a Tensor
    assert isinstance(g, Tensor)
    gs = ms.grad(net, None, ParameterTuple([w]))(x)  # a ParameterTuple gives a tuple, even of length 1
    assert isinstance(gs, tuple) and len(gs) == 1
    (gi, gws) = ms.grad(net, 0, [w, b])(x)
    np.testing.assert_allclose(gi.asnumpy(), np.tile(w.asnumpy(), (2, 1)))
    assert isinstance(gws, tuple) and len(gws) == 2


def test_has_aux_returns_whole_value():
    w = Parameter(Tensor(np.array([2.0], np.float32)), name="w")

    def fwd(x):
        logits = x * w
        return ops.sum(logits * logits), logits

    x = Tensor(np.array([1.0, 3.0], np.float32))
    (loss, logits), grads = ms.value_and_grad(fwd, None, [w], has_aux=True)(x)
    np.testing.assert_allclose(loss.asnumpy(), 40.0)
    np.testing.assert_allclose(logits.asnumpy(), [2.0, 6.0])
    np.testing.assert_allclose(grads[0].asnumpy(), [2 * 2.0 * (1 + 9)])
    g, aux = ms.grad(fwd, None, [w], has_aux=True)(x)
    assert isinstance(aux, tuple) and len(aux) == 1
    with pytest.raises(ValueError, match="more than one outputs"):
        ms.grad(lambda x: ops.sum(x), 0, has_aux=True)(x)


def test_tuple_output_without_aux_sums_all_outputs():
    x = Tensor(X)
    g = ms.grad(lambda x: (ops.sum(x * x), ops.sum(x)))(x)
    np.testing.assert_allclose(g.asnumpy(), 2 * X + 1)


def test_non_scalar_output_uses_ones_sens():
    g = ms.grad(lambda x: x * x)(Tensor(X))
    np.testing.assert_allclose(g.asnumpy(), 2 * X)


def test_argument_errors():
    with pytest.raises(ValueError, match="can not be None at the same time"):
        ms.grad(f2, None, None)
    with pytest.raises(ValueError, match=">= 0"):
        ms.grad(f2, -1)
    with pytest.raises(ValueError, match="duplicate"):
        ms.grad(f2, (0, 0))
    with pytest.raises(TypeError):
        ms.grad(f2, "0")
    with pytest.raises(IndexError, match="exceed"):
        ms.grad(f2, 5)(Tensor(X), Tensor(Y))
    with pytest.raises(TypeError):
        ms.grad(f2, None, [Tensor(X)])


def test_scalar_positions_raise():
    """grad_position only on Python numbers is an error (issue 7: MindSpore silently returns ()); next to a Tensor
    position it is left out, as MindSpore does (the static-graph tutorial relies on it); the scalar still works as a
    non-differentiated argument."""
    with pytest.raises(TypeError, match="argument at grad_position 1 must be a Tensor"):
        ms.grad(lambda x, s: ops.sum(x * s), (1,))(Tensor(X), 3.0)
    g = ms.grad(lambda x, s: ops.sum(x * s), (0, 1))(Tensor(X), 3.0)
    np.testing.assert_allclose(g.asnumpy(), 3.0)
    g = ms.grad(lambda x, s: ops.sum(x * s), 0)(Tensor(X), 3.0)
    np.testing.assert_allclose(g.asnumpy(), 3.0)


def test_grad_of_grad():
    x = Tensor(np.array([0.5, 1.5, -2.0], np.float64))
    d1 = ms.grad(lambda x: ops.sum(x ** 3))
    d2 = ms.grad(lambda x: ops.sum(d1(x)))
    d3 = ms.grad(lambda x: ops.sum(d2(x)))
    np.testing.assert_allclose(d1(x).asnumpy(), 3 * x.asnumpy() ** 2)
    np.testing.assert_allclose(d2(x).asnumpy(), 6 * x.asnumpy())
    np.testing.assert_allclose(d3(x).asnumpy(), 6.0)
    # mixed: d/dx of (d/dy f) for f = sum(x² y³)
    gxy = ms.grad(lambda x, y: ops.sum(ms.grad(lambda x, y: ops.sum(x * x * y ** 3), 1)(x, y)), 0)
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(gxy(Tensor(xv), Tensor(yv)).asnumpy(), 2 * xv * 3 * yv ** 2)


def test_results_are_detached_and_no_recording_outside():
    x = Tensor(X)
    v, g = ms.value_and_grad(lambda x: ops.sum(ops.exp(x)))(x)
    assert not v._has_grad_fn and not g._has_grad_fn
    assert ms._core.grad_level() == 0
    y = ops.exp(x)
    assert not y._has_grad_fn


def test_mlp_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4))
    t = rng.standard_normal((5, 2))
    w1 = Parameter(Tensor(rng.standard_normal((3, 4))), name="w1")
    w2 = Parameter(Tensor(rng.standard_normal((2, 3))), name="w2")

    def loss(x):
        h = ops.tanh(ops.matmul(x, w1.T))
        y = ops.matmul(h, w2.T)
        return ops.mean((y - Tensor(t)) ** 2)

    grads = ms.grad(loss, None, [w1, w2])(Tensor(x))
    for p, g in zip([w1, w2], grads):
        base = p.asnumpy().copy()
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            for sgn in (1, -1):
                q = base.copy()
                q[i] += sgn * 1e-6
                p.set_data(Tensor(q))
                num[i] += sgn * loss(Tensor(x)).asnumpy() / 2e-6
        p.set_data(Tensor(base))
        np.testing.assert_allclose(g.asnumpy(), num, rtol=1e-5, atol=1e-8)
