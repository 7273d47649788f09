"""Kernels tuned for the Transformer encoder step (issue 9): Float32 softmax / log-softmax rows with the max and the
sum in vector packets (src/ops/softmax.cpp, Note [vectorized softmax rows]) and BatchMatMul's transposed-A product
computed as the swapped product and transposed back (src/ops/matmul.cpp, Note [transposed-A products]), and the
GeLU (tanh form) gradient written as x·σ(2u) (src/ops/elementwise_unary.cpp, bp_gelu).

Checked against NumPy in float64 and float64 finite differences, on odd sizes (packet tails), non-contiguous
operands, special values, 1 and 2 OpenMP threads, and PyNative against Graph mode."""
import ctypes

import numpy as np
import pytest

import kiln
from kiln import Tensor, _core, ops

from helpers import assert_within_summation_bound

_gomp = ctypes.CDLL("libgomp.so.1")


@pytest.fixture
def threads():
    saved = _gomp.omp_get_max_threads()
    yield _gomp.omp_set_num_threads
    _gomp.omp_set_num_threads(saved)


def _softmax64(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- softmax ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 16, 63, 64, 65, 1000])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_softmax_rows_match_float64(n, nthreads, threads):
    threads(nthreads)
    rng = np.random.default_rng(n)
    rows = max(2, 40_000 // n)  # above the 32k-element threading threshold
    x = (rng.standard_normal((rows, n)) * 6).astype(np.float32)
    ref = _softmax64(x)
    y = ops.softmax(Tensor(x), -1).asnumpy()
    ly = ops.log_softmax(Tensor(x), -1).asnumpy()
    assert y.dtype == np.float32 and ly.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ly, np.log(ref), rtol=2e-6, atol=2e-5)
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=3e-6)


def test_softmax_same_bits_on_1_and_2_threads_and_for_views(threads):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4, 64, 67)).astype(np.float32)
    threads(1)
    y1 = ops.softmax(Tensor(x), -1).asnumpy()
    l1 = ops.log_softmax(Tensor(x), -1).asnumpy()
    threads(2)
    np.testing.assert_array_equal(ops.softmax(Tensor(x), -1).asnumpy(), y1)
    np.testing.assert_array_equal(ops.log_softmax(Tensor(x), -1).asnumpy(), l1)
    # Non-contiguous inputs (every other element of a wider array; a transposed view) are made contiguous by the
    # kernel: the same numbers as the contiguous copy.
    wide = np.repeat(x, 2, axis=3)
    np.testing.assert_array_equal(ops.softmax(Tensor(wide)[:, :, :, ::2], -1).asnumpy(), y1)
    xt = np.ascontiguousarray(np.swapaxes(x, 2, 3))
    np.testing.assert_array_equal(ops.softmax(ops.transpose(Tensor(xt), (0, 1, 3, 2)), -1).asnumpy(), y1)


def test_softmax_other_axis_and_float64_unchanged():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 9, 11)).astype(np.float32)
    np.testing.assert_allclose(ops.softmax(Tensor(x), 1).asnumpy(), _softmax64(x, 1), rtol=2e-6, atol=1e-7)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(ops.softmax(Tensor(xd), -1).asnumpy(), _softmax64(xd), rtol=1e-13, atol=1e-15)


def test_softmax_special_values():
    nan, inf = np.nan, np.inf
    x = np.array([[1, nan, 2, 3, 4, 5, 6, 7, 8],       # NaN anywhere: the whole row is NaN (as NumPy)
                  [nan, 1, 2, 3, 4, 5, 6, 7, 8],
                  [1, 2, 3, 4, 5, 6, 7, 8, inf],       # +inf: inf - inf in the exponent, NaN (as NumPy)
                  [-inf] * 9,                          # all -inf: NaN
                  [0, -inf, 1, -inf, 2, -inf, 3, -inf, 4],  # -inf entries get probability 0
                  [1e30, -1e30, 0, 1e30, 5, 6, 7, 8, 9]], np.float32)  # huge values stay finite
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = _softmax64(x)
        lref = np.log(ref)
    y = ops.softmax(Tensor(x), -1).asnumpy()
    ly = ops.log_softmax(Tensor(x), -1).asnumpy()
    assert np.isnan(y[:4]).all() and np.isnan(ly[:4]).all()
    np.testing.assert_allclose(y[4:], ref[4:], rtol=2e-6, atol=1e-7)
    assert y[4, 1] == 0 and np.isneginf(ly[4, 1])
    np.testing.assert_allclose(y[5], [0.5, 0, 0, 0.5, 0, 0, 0, 0, 0], atol=1e-7)
    np.testing.assert_allclose(ly[4, ::2], lref[4, ::2], rtol=2e-6)


def test_softmax_gradient_matches_float64_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 13)).astype(np.float32)
    w = rng.standard_normal((3, 13))

    def f64(v):
        return float((_softmax64(v) * w).sum())

    g = kiln.grad(lambda t: ops.sum(ops.mul(ops.softmax(t, -1), Tensor(w.astype(np.float32)))))(Tensor(x)).asnumpy()
    x64, eps, fd = x.astype(np.float64), 1e-6, np.zeros_like(w)
    for idx in np.ndindex(x.shape):
        p, m = x64.copy(), x64.copy()
        p[idx] += eps
        m[idx] -= eps
        fd[idx] = (f64(p) - f64(m)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-6)


def test_softmax_graph_matches_pynative_bitwise():
    rng = np.random.default_rng(3)
    x = Tensor(rng.standard_normal((16, 4, 64, 64)).astype(np.float32))

    def f(t):
        return ops.log_softmax(ops.softmax(t, -1) * 3.0, -1)

    np.testing.assert_array_equal(kiln.jit(f)(x).asnumpy(), f(x).asnumpy())


# ---- transposed-A matmul --------------------------------------------------------------------------------------

# (M, N, K): M >= 4N takes the swapped product above 64^3 multiply-adds; the others are the plain sgemm call.
MM_SHAPES = [(512, 128, 1024), (257, 64, 333), (65, 16, 1000), (64, 16, 256), (128, 128, 300), (100, 30, 999)]


@pytest.mark.parametrize("m,n,k", MM_SHAPES)
@pytest.mark.parametrize("nthreads", [1, 2])
def test_transposed_a_matmul_matches_float64(m, n, k, nthreads, threads):
    threads(nthreads)
    rng = np.random.default_rng(m * 7 + n)
    a = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    ref = a.astype(np.float64).T @ b.astype(np.float64)
    tol = dict(rtol=1e-5, atol=2e-5 * np.sqrt(k))
    np.testing.assert_allclose(_core.matmul(Tensor(a), Tensor(b), True, False).asnumpy(), ref, **tol)
    np.testing.assert_allclose(ops.matmul(ops.transpose(Tensor(a), (1, 0)), Tensor(b)).asnumpy(), ref, **tol)
    # Operands with a leading dimension larger than their width (column slices of wider arrays).
    aw = np.concatenate([a, rng.standard_normal((k, 5)).astype(np.float32)], axis=1)
    bw = np.concatenate([b, rng.standard_normal((k, 3)).astype(np.float32)], axis=1)
    got = _core.matmul(Tensor(aw)[:, :m], Tensor(bw)[:, :n], True, False).asnumpy()
    np.testing.assert_allclose(got, ref, **tol)
    # A row-strided view (every other row) goes to sgemm with its row stride as the leading dimension, its copy
    # with the width: oneDNN may pick another kernel for another leading dimension (on AVX-512 it does, not on
    # AVX2), so the two agree within the error bound of any summation order, not bit for bit (docs/robustness.md,
    # "Every CPU").
    a2 = np.repeat(a, 2, axis=0)
    b2 = np.repeat(b, 2, axis=0)
    view = _core.matmul(Tensor(a2)[::2], Tensor(b2)[::2], True, False).asnumpy()
    copy = _core.matmul(Tensor(np.ascontiguousarray(a2[::2])), Tensor(np.ascontiguousarray(b2[::2])), True,
                        False).asnumpy()
    assert_within_summation_bound(view, copy, a, b, transpose_a=True)


def test_transposed_a_matmul_equals_the_mirror_product_transposed():
    # For M >= 4N the kernel computes Cᵀ = Bᵀ·A with the plain call and transposes it: the result is, bit for bit,
    # the transpose of matmul(B, A, transpose_a=True) (M < 4N there, the plain call), and close to float64.
    rng = np.random.default_rng(4)
    a = rng.standard_normal((1024, 512)).astype(np.float32)
    b = rng.standard_normal((1024, 128)).astype(np.float32)
    swapped = _core.matmul(Tensor(a), Tensor(b), True, False).asnumpy()
    np.testing.assert_allclose(swapped, a.astype(np.float64).T @ b.astype(np.float64), rtol=1e-5, atol=1e-3)
    mirror = _core.matmul(Tensor(b), Tensor(a), True, False).asnumpy()
    np.testing.assert_array_equal(swapped, mirror.T)


def test_dense_weight_gradient_graph_matches_pynative():
    # A Dense 128 -> 512 on 1024 rows: its weight gradient (512, 128) = Gᵀ·X is the swapped product.
    rng = np.random.default_rng(5)
    net = kiln.nn.Dense(128, 512)
    x = Tensor(rng.standard_normal((1024, 128)).astype(np.float32))
    w = Tensor(rng.standard_normal((1024, 512)).astype(np.float32))

    def loss(inp):
        return ops.sum(ops.mul(net(inp), w))

    grad_fn = kiln.value_and_grad(loss, None, net.trainable_params())
    _, g_py = grad_fn(x)
    _, g_jit = kiln.jit(grad_fn)(x)
    for a, b in zip(g_py, g_jit):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    dw = w.asnumpy().astype(np.float64).T @ x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(g_py[0].asnumpy(), dw, rtol=1e-5, atol=2e-3)
    np.testing.assert_allclose(g_py[1].asnumpy(), w.asnumpy().sum(0), rtol=1e-5, atol=1e-3)


def test_transposed_a_matmul_gradient_matches_finite_differences():
    # d/dA and d/dB of sum(W * (Aᵀ·B)) through the swapped forward (M = 64 >= 4·N = 64, 64·16·256 MACs).
    rng = np.random.default_rng(6)
    a = rng.standard_normal((256, 64)).astype(np.float32)
    b = rng.standard_normal((256, 16)).astype(np.float32)
    w = rng.standard_normal((64, 16)).astype(np.float32)
    ga, gb = kiln.grad(lambda p, q: ops.sum(ops.mul(_core.matmul(p, q, True, False), Tensor(w))),
                       grad_position=(0, 1))(Tensor(a), Tensor(b))
    # The loss is bilinear: its exact derivatives are B·Wᵀ and A·W (finite differences in float64 give these
    # to rounding; checked on a few entries).
    a64, b64, w64 = a.astype(np.float64), b.astype(np.float64), w.astype(np.float64)
    np.testing.assert_allclose(ga.asnumpy(), b64 @ w64.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gb.asnumpy(), a64 @ w64, rtol=1e-5, atol=1e-4)
    f = lambda p: float((w64 * (p.T @ b64)).sum())
    for idx in [(0, 0), (17, 63), (255, 5)]:
        p, m = a64.copy(), a64.copy()
        p[idx] += 1e-4
        m[idx] -= 1e-4
        assert abs((f(p) - f(m)) / 2e-4 - ga.asnumpy()[idx]) < 1e-3


def test_matmul_bad_inputs_still_raise():
    a = Tensor(np.ones((8, 4), np.float32))
    with pytest.raises(ValueError, match="MatMul"):
        _core.matmul(a, Tensor(np.ones((7, 2), np.float32)), True, False)
    with pytest.raises(TypeError, match="MatMul"):
        _core.matmul(a, Tensor(np.ones((8, 2), np.float64)), True, False)


# ---- GeLU (tanh form) gradient: x·σ(2u) form (src/ops/elementwise_unary.cpp, bp_gelu) ---------------------------

def _gelu_tanh_grad64(x):
    x = x.astype(np.float64)
    k, c = np.sqrt(2 / np.pi), 0.044715
    t = np.tanh(k * (x + c * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)


def _gelu_grad(x, approximate="tanh"):
    return kiln.grad(lambda t: ops.sum(ops.gelu(t, approximate=approximate)))(x)


def test_gelu_tanh_gradient_matches_float64():
    x = np.linspace(-12, 12, 40_001, dtype=np.float32)  # above the threading threshold
    g = _gelu_grad(Tensor(x)).asnumpy()
    ref = _gelu_tanh_grad64(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, ref, rtol=1e-4, atol=3e-6)
    big = np.abs(ref) > 1e-3
    assert (np.abs(g - ref)[big] / np.abs(ref[big])).max() < 1e-4


def test_gelu_tanh_gradient_finite_differences_and_float64_dtype():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(37) * 3
    g = _gelu_grad(Tensor(x)).asnumpy()
    assert g.dtype == np.float64

    def f(v):
        k, c = np.sqrt(2 / np.pi), 0.044715
        return 0.5 * v * (1 + np.tanh(k * (v + c * v ** 3)))

    fd = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_gelu_tanh_gradient_special_values():
    x = np.array([1e3, -1e3, 1e13, -1e13, 1e19, -1e19, 0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    g = _gelu_grad(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(g[:8], [1, 0, 1, 0, 1, 0, 0.5, 0.5])
    assert np.isnan(g[8:]).all()  # as the former ½(1+t) + ½x(1−t²)u' form: inf·0 in the derivative


def test_gelu_gradients_graph_match_pynative_bitwise():
    rng = np.random.default_rng(8)
    x = Tensor(rng.standard_normal((16, 64, 512)).astype(np.float32) * 3)
    w = Tensor(rng.standard_normal((16, 64, 512)).astype(np.float32))
    for approximate in ("tanh", "none"):
        def loss(t, approximate=approximate):
            return ops.sum(ops.mul(ops.gelu(t, approximate=approximate), w))
        np.testing.assert_array_equal(kiln.jit(kiln.grad(loss))(x).asnumpy(), kiln.grad(loss)(x).asnumpy())
