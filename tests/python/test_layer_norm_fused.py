"""The fused LayerNorm op and its fused backward (src/ops/layer_norm.cpp, Note [fused layer norm]) at the sizes where
they engage: forward values against float64 NumPy, the gradients of x, gamma and beta against the float64 analytic
gradient (and float64 finite differences on small shapes in the op registry), second derivatives through the
composite backward, PyNative against Graph mode for nn.LayerNorm, results independent of the thread count, and the
cases that keep the composition (Float16, no gamma/beta, params over more axes)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import _core, nn, ops


def np_layer_norm(x, g, b, axes, eps=1e-5):
    x = x.astype(np.float64)
    mu = x.mean(axes, keepdims=True)
    rs = 1.0 / np.sqrt(((x - mu) ** 2).mean(axes, keepdims=True) + eps)
    return (x - mu) * rs * g + b, mu, rs


def np_layer_norm_grads(x, g, dy, axes, eps=1e-5):
    """dx, dgamma, dbeta of <LayerNorm(x)·gamma + beta, dy> in float64 (Ba et al. 2016's normalization)."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mu = x.mean(axes, keepdims=True)
    rs = 1.0 / np.sqrt(((x - mu) ** 2).mean(axes, keepdims=True) + eps)
    xh = (x - mu) * rs
    gg = dy * g
    dx = rs * (gg - gg.mean(axes, keepdims=True) - xh * (gg * xh).mean(axes, keepdims=True))
    rows = tuple(i for i in range(x.ndim) if i not in axes)
    return dx, (dy * xh).sum(rows), dy.sum(rows)


SHAPES = [((300, 128), 1), ((4, 37, 96), 2), ((2, 3, 5, 8), 2), ((1, 7), 1)]


@pytest.mark.parametrize("shape,bn", SHAPES, ids=lambda v: str(v))
def test_forward_and_gradients_float32_match_float64_numpy(shape, bn):
    r = np.random.default_rng(0)
    x = (r.standard_normal(shape) * 3 + 7).astype(np.float32)  # a large mean: the two-pass variance keeps it exact
    ps = shape[bn:]
    g, b = r.uniform(0.5, 1.5, ps).astype(np.float32), r.standard_normal(ps).astype(np.float32)
    dy = r.standard_normal(shape).astype(np.float32)
    axes = tuple(range(bn, len(shape)))
    net = nn.LayerNorm(ps, begin_norm_axis=bn, begin_params_axis=bn)
    net.gamma.set_data(ms.Tensor(g))
    net.beta.set_data(ms.Tensor(b))
    y = net(ms.Tensor(x)).asnumpy()
    ref, _, _ = np_layer_norm(x, g, b, axes)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=2e-5)

    def f(xt):
        return (net(xt) * ms.Tensor(dy)).sum()

    gf = ms.value_and_grad(f, 0, net.trainable_params())
    _, (dx, (dgam, dbet)) = gf(ms.Tensor(x))
    rdx, rdg, rdb = np_layer_norm_grads(x, g, dy, axes)
    np.testing.assert_allclose(dx.asnumpy(), rdx, rtol=1e-4, atol=1e-4)
    # Σ over up to 300 rows of float32 terms
    np.testing.assert_allclose(dgam.asnumpy(), rdg, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dbet.asnumpy(), rdb, rtol=1e-4, atol=1e-3)


def test_float64_gradient_and_second_derivative_match_finite_differences():
    r = np.random.default_rng(1)
    x0 = r.standard_normal((3, 6))
    g = ms.Tensor(r.uniform(0.5, 1.5, (6,)))
    b = ms.Tensor(r.standard_normal((6,)))
    w = ms.Tensor(r.standard_normal((3, 6)))

    def f(x):
        return (ops.layer_norm(x, (6,), g, b) * w).sum()

    def gsq(x):  # a function of the first derivative: its gradient needs second derivatives
        return (ms.grad(f)(x) ** 2).sum()

    def fd(fun, x, h=1e-6):
        out = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = h
            out[i] = (float(fun(ms.Tensor(x + e)).asnumpy()) - float(fun(ms.Tensor(x - e)).asnumpy())) / (2 * h)
        return out

    np.testing.assert_allclose(ms.grad(f)(ms.Tensor(x0)).asnumpy(), fd(f, x0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ms.grad(gsq)(ms.Tensor(x0)).asnumpy(), fd(gsq, x0), rtol=1e-5, atol=1e-6)


class _Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(64, 64)
        self.ln = nn.LayerNorm((64,))

    def construct(self, x):
        return self.ln(x + self.fc(x)).sum()


def test_pynative_and_graph_agree_and_the_graph_uses_the_fused_ops():
    r = np.random.default_rng(2)
    x = ms.Tensor(r.standard_normal((8, 16, 64)).astype(np.float32))
    net = _Block()
    gf = ms.value_and_grad(net, None, net.trainable_params())
    v0, g0 = gf(x)
    step = ms.jit(lambda t: gf(t))
    v1, g1 = step(x)
    np.testing.assert_array_equal(v0.asnumpy(), v1.asnumpy())
    for a, c in zip(g0, g1):
        np.testing.assert_allclose(a.asnumpy(), c.asnumpy(), rtol=1e-6, atol=1e-6)
    graph = step.graphs[0].graph
    assert graph.count("LayerNorm") == 1 and graph.count("LayerNormGrad") == 1, graph.to_text()
    assert graph.count("ReduceMean") == 0, graph.to_text()


_THREADS_SCRIPT = r"""
import sys
import numpy as np
import kiln as ms
from kiln import nn
r = np.random.default_rng(3)
x = ms.Tensor(r.standard_normal((257, 128)).astype(np.float32) * 2 + 1)
net = nn.LayerNorm((128,))
dy = ms.Tensor(r.standard_normal((257, 128)).astype(np.float32))
_, (dx, (dg, db)) = ms.value_and_grad(lambda t: (net(t) * dy).sum(), 0, net.trainable_params())(x)
np.save(sys.argv[1], np.concatenate([net(x).asnumpy().ravel(), dx.asnumpy().ravel(), dg.asnumpy(), db.asnumpy()]))
"""


def test_results_do_not_depend_on_the_thread_count(tmp_path):
    # The installed kiln (CI runs the tests against it): the child finds it where this process found it.
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ms.__file__)))
    out = []
    for n in (1, 2):
        path = tmp_path / f"t{n}.npy"
        subprocess.run([sys.executable, "-c", _THREADS_SCRIPT, str(path)], check=True, timeout=120,
                       env=dict(env, OMP_NUM_THREADS=str(n)))
        out.append(np.load(path))
    np.testing.assert_array_equal(out[0], out[1])


def test_cases_that_keep_the_composition():
    r = np.random.default_rng(4)
    x = r.standard_normal((4, 3, 5))
    g, b = r.uniform(0.5, 1.5, (3, 5)), r.standard_normal((3, 5))
    # Float16: computed by the composition in Float16
    y16 = ops.layer_norm(ms.Tensor(x.astype(np.float16)), (5,), ms.Tensor(g[0].astype(np.float16)),
                         ms.Tensor(b[0].astype(np.float16)))
    assert y16.dtype == ms.float16
    np.testing.assert_allclose(y16.asnumpy().astype(np.float64), np_layer_norm(x, g[0], b[0], (2,))[0], atol=1e-2)
    # no gamma/beta
    y = ops.layer_norm(ms.Tensor(x), (5,))
    np.testing.assert_allclose(y.asnumpy(), np_layer_norm(x, 1.0, 0.0, (2,))[0], rtol=1e-12, atol=1e-12)
    # normalized over the last axis, gamma/beta over the last two (begin_params_axis < begin_norm_axis)
    y = _core.layer_norm(ms.Tensor(x), ms.Tensor(g), ms.Tensor(b), 2, 1, 1e-5)
    np.testing.assert_allclose(y.asnumpy(), np_layer_norm(x, g, b, (2,))[0], rtol=1e-12, atol=1e-12)


def test_bad_parameters_name_the_op_and_the_shapes():
    x = ms.Tensor(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match=r"LayerNorm.*\[4\].*got \[3\]"):
        _core.layer_norm(x, ms.Tensor(np.ones((3,), np.float32)), ms.Tensor(np.ones((4,), np.float32)), 1, 1, 1e-5)
    with pytest.raises(TypeError, match="LayerNorm.*float"):
        _core.layer_norm(ms.Tensor(np.ones((2, 4), np.int32)), None, None, 1, 1, 1e-5)


def test_large_values_do_not_overflow_and_large_means_keep_their_digits():
    # (a fresh tester's findings: the row sums were float32 — Σ(x − μ)² overflowed for |x| ~ 1e19 though the
    # variance is finite, and rows with a large mean lost digits against the composition and MindSpore)
    o, z = ms.Tensor(np.ones(4, np.float32)), ms.Tensor(np.zeros(4, np.float32))
    a = np.array([[1e19, 2e19, 3e19, 4e19]], np.float32)
    want = np.array([[-1.3416408, -0.4472136, 0.4472136, 1.3416408]])
    np.testing.assert_allclose(ops.layer_norm(ms.Tensor(a), (4,), o, z).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(nn.LayerNorm((4,))(ms.Tensor(a)).asnumpy(), want, rtol=1e-6)
    # MindSpore 2.10 and the composition: [0, 0, nan] (x − μ overflows float32 in the last element)
    y = ops.layer_norm(ms.Tensor(np.array([[3.4e38, 3.4e38, -3.4e38]], np.float32)), (3,),
                       ms.Tensor(np.ones(3, np.float32)), ms.Tensor(np.zeros(3, np.float32))).asnumpy()
    assert y[0, 0] == 0 and y[0, 1] == 0 and np.isnan(y[0, 2])
    r = np.random.RandomState(0)
    x = (1e5 + r.randn(8, 4096)).astype(np.float32)
    ref, _, _ = np_layer_norm(x, 1.0, 0.0, (1,))
    fused = ops.layer_norm(ms.Tensor(x), (4096,), ms.Tensor(np.ones(4096, np.float32)),
                           ms.Tensor(np.zeros(4096, np.float32))).asnumpy()
    composite = ops.layer_norm(ms.Tensor(x), (4096,)).asnumpy()
    # x itself is rounded to float32's 2^-7 at 1e5: ~4e-3 of a unit-variance row is the input's own error
    assert np.abs(fused - ref).max() <= 1.2 * np.abs(composite - ref).max() + 1e-6
    assert np.abs(fused - ref).max() < 5e-3
