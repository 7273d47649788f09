"""The optimized kernels of issue 9 at the sizes where they engage: convolutions on oneDNN's blocked layouts (channel
counts that are multiples of 8/16, a 3-channel stem, stride 2, groups, odd channel counts that keep plain layouts),
the float32 BatchNorm forward and the fused BatchNormGrad backward (against float64 NumPy, large means, (N, C)
inputs), and MaxPool's saved argmax (the backward scatter equals MaxPoolGrad bit for bit, ties and overlapping
windows included, and second derivatives still work). Kernels are threaded: every case runs with the process's
OpenMP threads (the suite's default), and the numbers must not depend on it (the summation-order tolerances are the
ones documented in docs/decisions/conv-layouts.md and batchnorm-kernels.md)."""
import numpy as np
import pytest

import kiln as ms
from kiln import _core, ops
from conv_refs import np_conv2d
from helpers import N, T


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------------------------- convolution
# x shape, w shape, stride, pad (top, bottom, left, right), dilation, groups
FAST_CONV = [
    ((4, 16, 10, 10), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),   # ResNet 3x3: blocked layouts
    ((3, 3, 12, 12), (16, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),     # stem: 3 input channels
    ((2, 16, 11, 9), (32, 16, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),    # stride 2, odd spatial sizes
    ((2, 16, 8, 8), (32, 16, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),     # 1x1 stride-2 shortcut
    ((2, 32, 7, 7), (32, 16, 3, 3), (1, 1), (2, 0, 1, 1), (2, 1), 2),     # groups 2, dilation, asymmetric pads
    ((2, 5, 9, 9), (7, 5, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),        # odd channel counts
]


def _np_conv_grads(x, w, dy, st, pad, dil, g):
    """dx and dw of ⟨conv(x, w), dy⟩ by the adjoint identity, in float64 (einsum over the kernel taps)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = dy.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    og = o // g
    for gi in range(g):
        for i in range(kh):
            for j in range(kw):
                sl = (slice(None), slice(gi * cg, (gi + 1) * cg),
                      slice(i * dil[0], i * dil[0] + st[0] * (oh - 1) + 1, st[0]),
                      slice(j * dil[1], j * dil[1] + st[1] * (ow - 1) + 1, st[1]))
                dyg = dy[:, gi * og:(gi + 1) * og]
                dw[gi * og:(gi + 1) * og, :, i, j] = np.einsum("nohw,nchw->oc", dyg, xp[sl])
                dxp[sl] += np.einsum("nohw,oc->nchw", dyg, w[gi * og:(gi + 1) * og, :, i, j])
    return dxp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd], dw


@pytest.mark.parametrize("case", FAST_CONV, ids=lambda c: f"x{c[0]}w{c[1]}s{c[2]}g{c[5]}")
def test_conv_forward_and_both_backward_kernels_float32(case):
    xs, ws, st, pad, dil, g = case
    x, w = rng(1).standard_normal(xs), rng(2).standard_normal(ws)
    y = _core.conv2d(T(x, np.float32), T(w, np.float32), list(st), list(pad), list(dil), g)
    ref = np_conv2d(x, w, st, pad, dil, g)
    # float32 sums of C·KH·KW ≤ 288 products of N(0, 1) values: errors ~1e-6 of the terms' scale
    np.testing.assert_allclose(N(y), ref, rtol=1e-4, atol=1e-4)
    dy = rng(3).standard_normal(ref.shape)
    rdx, rdw = _np_conv_grads(x, w, dy, st, pad, dil, g)
    dx = _core.conv2d_backprop_input(T(dy, np.float32), T(w, np.float32), list(xs), list(st), list(pad), list(dil), g)
    dw = _core.conv2d_backprop_filter(T(dy, np.float32), T(x, np.float32), list(ws), list(st), list(pad), list(dil), g)
    np.testing.assert_allclose(N(dx), rdx, rtol=1e-4, atol=1e-4)
    # dw sums N·OH·OW ≤ 400 products: scale the tolerance with √(terms)
    np.testing.assert_allclose(N(dw), rdw, rtol=1e-4, atol=1e-4 * np.sqrt(xs[0] * ref.shape[2] * ref.shape[3]))


def test_conv_gradients_through_autodiff_match_float64():
    """nn-style use: the float32 gradient (blocked-layout kernels) agrees with the float64 one (im2col + GEMM)."""
    x, w = rng(4).standard_normal((2, 16, 8, 8)), rng(5).standard_normal((16, 16, 3, 3))
    v = rng(6).standard_normal((2, 16, 8, 8))

    def f(a, b):
        return ops.sum(ops.tanh(_core.conv2d(a, b, [1, 1], [1, 1, 1, 1], [1, 1], 1)) * ops.cast(T(v), a.dtype))

    g32 = ms.grad(f, grad_position=(0, 1))(T(x, np.float32), T(w, np.float32))
    g64 = ms.grad(f, grad_position=(0, 1))(T(x), T(w))
    for a, b in zip(g32, g64):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-3, atol=1e-4)


def test_conv_repeated_calls_and_threads_give_identical_results():
    """The cached plan (convolution + reorders) is reused: repeated and concurrent calls give the same bits."""
    import threading
    x = T(rng(7).standard_normal((4, 16, 12, 12)), np.float32)
    w = T(rng(8).standard_normal((32, 16, 3, 3)), np.float32)
    first = N(_core.conv2d(x, w, [1, 1], [1, 1, 1, 1], [1, 1], 1))
    out = []

    def run():
        for _ in range(5):
            out.append(N(_core.conv2d(x, w, [1, 1], [1, 1, 1, 1], [1, 1], 1)))

    ts = [threading.Thread(target=run) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(out) == 15
    for o in out:
        np.testing.assert_array_equal(o, first)


# ------------------------------------------------------------------------------------------------ BatchNorm
def _np_bn_train(x, gamma, beta, eps):
    ax = (0,) + tuple(range(2, x.ndim))
    shp = (1, -1) + (1,) * (x.ndim - 2)
    m, v = x.mean(ax), x.var(ax)
    xh = (x - m.reshape(shp)) / np.sqrt(v.reshape(shp) + eps)
    return xh * gamma.reshape(shp) + beta.reshape(shp), m, v, xh


def _np_bn_grads(x, gamma, dy, eps):
    ax = (0,) + tuple(range(2, x.ndim))
    shp = (1, -1) + (1,) * (x.ndim - 2)
    _, m, v, xh = _np_bn_train(x, gamma, np.zeros_like(gamma), eps)
    dbeta, dgamma = dy.sum(ax), (dy * xh).sum(ax)
    dx = gamma.reshape(shp) / np.sqrt(v.reshape(shp) + eps) * (dy - dy.mean(ax).reshape(shp)
                                                               - xh * (dy * xh).mean(ax).reshape(shp))
    return dx, dgamma, dbeta


@pytest.mark.parametrize("shape,offset", [((8, 16, 6, 6), 0.0), ((4, 3, 20), 1000.0), ((64, 5), 3.0),
                                          ((2, 4, 3, 3), 0.0)])
def test_batch_norm_float32_forward_and_fused_backward(shape, offset):
    c = shape[1]
    x = rng(10).standard_normal(shape) * 2 + offset
    gamma, beta = rng(11).standard_normal(c), rng(12).standard_normal(c)
    dy = rng(13).standard_normal(shape)
    f32 = lambda a: T(a, np.float32)
    y, bm, bv = _core.batch_norm(f32(x), f32(gamma), f32(beta), f32(np.zeros(c)), f32(np.ones(c)), True, 1e-5)
    xq = N(f32(x)).astype(np.float64)  # the float32 input, exactly
    ry, rm, rv, _ = _np_bn_train(xq, gamma.astype(np.float32).astype(np.float64),
                                 beta.astype(np.float32).astype(np.float64), 1e-5)
    np.testing.assert_allclose(N(bm), rm, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(N(bv), rv, rtol=1e-5)  # biased; float row sums (docs/decisions/batchnorm-kernels.md)
    np.testing.assert_allclose(N(y), ry, rtol=1e-4, atol=1e-4)
    g = ms.grad(lambda a, s, b: ops.sum(_core.batch_norm(a, s, b, f32(np.zeros(c)), f32(np.ones(c)), True, 1e-5)[0]
                                        * f32(dy)), grad_position=(0, 1, 2))(f32(x), f32(gamma), f32(beta))
    rdx, rdg, rdb = _np_bn_grads(xq, gamma.astype(np.float32).astype(np.float64), N(f32(dy)).astype(np.float64), 1e-5)
    scale = np.abs(rdx).max()
    np.testing.assert_allclose(N(g[0]), rdx, rtol=1e-3, atol=1e-4 * scale)
    np.testing.assert_allclose(N(g[1]), rdg, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(N(g[2]), rdb, rtol=1e-5, atol=1e-5)


def test_batch_norm_fused_backward_float64_matches_reference_exactly():
    x = rng(14).standard_normal((3, 4, 5, 5))
    gamma, dy = rng(15).standard_normal(4), rng(16).standard_normal((3, 4, 5, 5))
    g = ms.grad(lambda a, s: ops.sum(_core.batch_norm(a, s, T(np.zeros(4)), T(np.zeros(4)), T(np.ones(4)), True,
                                                      1e-3)[0] * T(dy)), grad_position=(0, 1))(T(x), T(gamma))
    rdx, rdg, _ = _np_bn_grads(x, gamma, dy, 1e-3)
    np.testing.assert_allclose(N(g[0]), rdx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(N(g[1]), rdg, rtol=1e-10, atol=1e-12)


def test_batch_norm_layer_pynative_and_graph_agree_float32():
    bn = ms.nn.BatchNorm2d(16)
    bn.set_train(True)
    x = T(rng(17).standard_normal((4, 16, 6, 6)) * 3 + 1, np.float32)
    w = T(rng(18).standard_normal((4, 16, 6, 6)), np.float32)
    f = lambda a: ops.sum(bn(a) * w)
    g_eager = N(ms.grad(f)(x))
    g_jit = N(ms.jit(ms.grad(f))(x))
    np.testing.assert_allclose(g_jit, g_eager, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------------ MaxPool
@pytest.mark.parametrize("k,s,pad,ceil,dtype", [
    ((2, 2), (2, 2), (0, 0), False, np.float32),
    ((3, 3), (1, 1), (1, 1), False, np.float32),   # overlapping windows accumulate
    ((3, 3), (2, 2), (1, 1), True, np.float64),
    ((2, 2), (2, 2), (0, 0), False, np.float16),
])
def test_max_pool_saved_argmax_backward_equals_max_pool_grad(k, s, pad, ceil, dtype):
    x = np.round(rng(20).standard_normal((2, 3, 9, 8)) * 2) / 2  # many ties: first maximum wins
    dy_shape = N(ops.max_pool2d(T(x), k, s, pad, ceil_mode=ceil)).shape
    w = rng(21).standard_normal(dy_shape)
    xt, wt = T(x, dtype), T(w, dtype)
    g = ms.grad(lambda a: ops.sum(ops.max_pool2d(a, k, s, pad, ceil_mode=ceil) * wt))(xt)
    ref = _core.max_pool2d_grad(xt, wt, list(k), list(s), [pad[0], pad[0], pad[1], pad[1]], [1, 1], ceil)
    np.testing.assert_array_equal(N(g), N(ref))
    g_jit = ms.jit(ms.grad(lambda a: ops.sum(ops.max_pool2d(a, k, s, pad, ceil_mode=ceil) * wt)))(xt)
    np.testing.assert_array_equal(N(g_jit), N(ref))


def test_max_pool_second_derivative_through_saved_argmax():
    """d/dw ⟨d/dx ⟨maxpool(x), w⟩, h⟩ = h read at each window's argmax (MaxPoolGradGrad)."""
    x = rng(22).permutation(2 * 2 * 6 * 6).reshape(2, 2, 6, 6) / 10.0
    h = rng(23).standard_normal(x.shape)
    w0 = rng(24).standard_normal((2, 2, 3, 3))

    def inner(w):
        return ms.grad(lambda a: ops.sum(ops.max_pool2d(a, 3, 2, 1) * w))(T(x))

    gw = ms.grad(lambda w: ops.sum(inner(w) * T(h)))(T(w0))
    _, idx = ops.max_pool2d(T(x), 3, 2, 1, return_indices=True)
    ref = np.take_along_axis(h.reshape(2, 2, -1), N(idx).reshape(2, 2, -1), -1).reshape(w0.shape)
    np.testing.assert_array_equal(N(gw), ref)


def test_batch_norm_float32_an_inf_in_a_channel_gives_nan_variance():
    # The variance's rounding correction was clamped with std::max(0, ·), which turned the NaN of an inf channel
    # into 0 (found with the same clamp in the fused LayerNorm); the other channels are unaffected.
    x = rng(7).standard_normal((2, 3, 4, 4)).astype(np.float32)
    x[0, 1, 0, 0] = np.inf
    one, zero = T(np.ones(3), np.float32), T(np.zeros(3), np.float32)
    _, m, v = _core.batch_norm(T(x, np.float32), one, zero, zero, one, True, 1e-5)
    v = v.asnumpy()
    assert np.isinf(m.asnumpy()[1]) and np.isnan(v[1])
    np.testing.assert_allclose(v[[0, 2]], x[:, [0, 2]].astype(np.float64).var(axis=(0, 2, 3)), rtol=1e-5)
