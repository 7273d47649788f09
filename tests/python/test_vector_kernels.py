"""The vectorized / branch-free kernels (src/ops/vmath.h, vec_unary.cpp, ew::blend in elementwise.h): accuracy
against NumPy float64 over a wide range, special values, identical numbers for contiguous, strided and fused
(Graph mode) inputs, and Select's blend with NaN, signed zeros and broadcast operands."""
import numpy as np
import pytest
import scipy.special

import kiln
from kiln import Tensor, _core, ops

X = np.linspace(-20, 20, 200_003, dtype=np.float32)  # above the threading threshold (32k elements)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


FUNCS = {
    "exp": (ops.exp, np.exp, 2e-7),
    "tanh": (ops.tanh, np.tanh, 4e-7),
    "sigmoid": (ops.sigmoid, lambda x: 1 / (1 + np.exp(-x)), 4e-7),
    "erf": (ops.erf, scipy.special.erf, 4e-7),
    "gelu_erf": (lambda t: ops.gelu(t, approximate="none"), lambda x: 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2))),
                 1e-6),
    "gelu_tanh": (lambda t: ops.gelu(t, approximate="tanh"), _gelu_tanh, 1e-6),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_accuracy(name):
    f, ref, tol = FUNCS[name]
    y = f(Tensor(X)).asnumpy()
    r = ref(X.astype(np.float64))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, r, rtol=tol, atol=1e-30 if name in ("exp", "sigmoid") else tol)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_strided_contiguous_and_fused_agree_bitwise(name):
    f = FUNCS[name][0]
    x = X[:4099]  # not a multiple of the packet size: the tail is padded, never computed by another formula
    y = f(Tensor(x)).asnumpy()
    wide = np.stack([x, -x], axis=1)  # column 0 is x with stride 2
    ys = f(Tensor(wide)[:, 0]).asnumpy()
    np.testing.assert_array_equal(ys, y)
    np.testing.assert_array_equal(f(Tensor(x[::-1].copy())[::-1]).asnumpy(), y)  # negative strides
    # Graph mode: exp(f(x) * 0.5) becomes one FusedElementwise op whose blocks use the same functions.
    g = lambda t: ops.exp(ops.mul(f(t), 0.5))
    jf = kiln.jit(g)
    np.testing.assert_array_equal(jf(Tensor(x)).asnumpy(), g(Tensor(x)).asnumpy())
    assert "FusedElementwise" in jf.graphs[0].graph.to_text()


def test_special_values():
    s = np.array([np.nan, np.inf, -np.inf, 1000, -1000, 0.0, -0.0, -95.0, -88.0, 1e-30], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ops.exp(Tensor(s)).asnumpy(), np.exp(s))  # subnormals and 0, not 2.9e-39
        np.testing.assert_array_equal(ops.tanh(Tensor(s)).asnumpy()[:7], np.tanh(s)[:7])
        np.testing.assert_array_equal(ops.erf(Tensor(s)).asnumpy()[:7], scipy.special.erf(s)[:7])
        sg = ops.sigmoid(Tensor(s)).asnumpy()
    assert np.isnan(sg[0]) and sg[1] == 1 and sg[2] == 0 and sg[3] == 1 and sg[4] == 0 and sg[5] == 0.5
    s64 = s.astype(np.float64)
    with np.errstate(all="ignore"):
        refs = {"none": FUNCS["gelu_erf"][1](s64), "tanh": _gelu_tanh(s64)}
    for approximate, ref in refs.items():
        g = ops.gelu(Tensor(s), approximate=approximate).asnumpy()
        np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-30)  # NaN where the reference is NaN (−inf·0)


def test_select_blend_keeps_bits_and_broadcasts():
    rng = np.random.default_rng(0)
    c = rng.random(100_001) > 0.5
    a = rng.standard_normal(100_001).astype(np.float32)
    b = rng.standard_normal(100_001).astype(np.float32)
    a[:4] = [np.nan, -0.0, np.inf, -np.inf]
    b[:4] = [-0.0, np.nan, 1.0, np.nan]
    c[:4] = [True, True, True, False]
    want = np.where(c, a, b)
    got = _core.select(Tensor(c), Tensor(a), Tensor(b)).asnumpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # NaN payloads and -0.0 kept
    np.testing.assert_array_equal(_core.select(Tensor(c), Tensor(a), 0.0).asnumpy(), np.where(c, a, np.float32(0)))
    np.testing.assert_array_equal(_core.select(Tensor(c), 2.5, Tensor(b)).asnumpy(), np.where(c, np.float32(2.5), b))
    # strided operands and an int64 / bool dtype
    cs, ai = c[::3], np.arange(100_001, dtype=np.int64)
    got = _core.select(Tensor(c)[::3], Tensor(ai)[::3], Tensor(-ai)[::3]).asnumpy()
    np.testing.assert_array_equal(got, np.where(cs, ai[::3], -ai[::3]))
    bb = rng.random(100_001) > 0.3
    np.testing.assert_array_equal(_core.select(Tensor(c), Tensor(bb), Tensor(~bb)).asnumpy(), np.where(c, bb, ~bb))


def test_relu_gradient_mask():
    x = np.array([-1.0, 0.0, 2.0, np.nan, -np.inf, np.inf, 3.0], np.float32)
    g = kiln.grad(lambda t: ops.sum(ops.mul(ops.relu(t), Tensor(np.arange(7, dtype=np.float32)))))(Tensor(x))
    np.testing.assert_array_equal(g.asnumpy(), [0, 0, 2, 0, 0, 5, 6])  # 0 at x = 0 and at NaN, as before


def test_threaded_binary_and_unary_kernels_match_numpy():
    """Runs above the threading threshold (cpu::kParallelMin = 32768) split into chunks: values as NumPy's."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(100_003).astype(np.float32)
    b = rng.standard_normal(100_003).astype(np.float32)
    ia = rng.integers(-1000, 1000, 100_003).astype(np.int32)
    np.testing.assert_array_equal(ops.add(Tensor(a), Tensor(b)).asnumpy(), a + b)
    np.testing.assert_array_equal(ops.mul(Tensor(a), 3.0).asnumpy(), a * np.float32(3.0))
    np.testing.assert_array_equal(ops.sub(2.0, Tensor(a)).asnumpy(), np.float32(2.0) - a)
    np.testing.assert_array_equal(ops.greater(Tensor(a), Tensor(b)).asnumpy(), a > b)
    np.testing.assert_array_equal(ops.neg(Tensor(ia)).asnumpy(), -ia)
    np.testing.assert_array_equal(ops.relu(Tensor(a)).asnumpy(), np.maximum(a, 0))
    np.testing.assert_array_equal(ops.square(Tensor(ia)).asnumpy(), ia * ia)


def test_gradient_only_for_requested_inputs():
    """Conv2D/MatMul bprops skip the cotangent of an input nothing asked for (autodiff::input_needs_grad); the
    requested gradients are unchanged, and second derivatives still see every path."""
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float64))
    w = Tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float64))
    m = Tensor(rng.standard_normal((4 * 4 * 4, 5)).astype(np.float64))

    def f(xx, ww, mm):
        h = ops.relu(ops.conv2d(xx, ww))
        return ops.sum(ops.square(ops.matmul(ops.reshape(h, (2, -1)), mm)))

    both = kiln.grad(f, grad_position=(0, 1, 2))(x, w, m)
    only_w = kiln.grad(f, grad_position=1)(x, w, m)
    only_m = kiln.grad(f, grad_position=2)(x, w, m)
    np.testing.assert_array_equal(only_w.asnumpy(), both[1].asnumpy())
    np.testing.assert_array_equal(only_m.asnumpy(), both[2].asnumpy())
    # d/dx of (d/dm f): the inner reverse pass must still build what the outer one differentiates.
    gg = kiln.grad(lambda xx: ops.sum(kiln.grad(f, grad_position=2)(xx, w, m)))(x).asnumpy()
    eps = 1e-6
    xn = x.asnumpy()
    d = np.zeros_like(xn)
    d[0, 1, 2, 3] = eps
    fd = (ops.sum(kiln.grad(f, grad_position=2)(Tensor(xn + d), w, m)).asnumpy()
          - ops.sum(kiln.grad(f, grad_position=2)(Tensor(xn - d), w, m)).asnumpy()) / (2 * eps)
    np.testing.assert_allclose(gg[0, 1, 2, 3], fd, rtol=1e-5, atol=1e-6)
