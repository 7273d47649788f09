"""Convolution, pooling and normalization: ops (Conv2D and its gradients, MaxPool, AvgPool, AdaptiveAvgPool2D,
BatchNorm, LayerNorm, GroupNorm) against small NumPy references, gradients against float64 central differences
(second derivatives too), PyNative vs kiln.jit / GRAPH_MODE parity, BatchNorm moving statistics, and the nn layers
(shapes, defaults, Parameters, reprs, errors)."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops
from kiln import _core
from conv_refs import np_adaptive_avg_pool, np_avg_pool, np_batch_norm, np_conv2d, np_max_pool
from helpers import N, T, check_grad


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------------------------- convolution
CONV_CASES = [  # x shape, w shape, stride, pad, dilation, groups
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 4, 9, 8), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2),
    ((1, 6, 8, 8), (6, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 6),  # depthwise
    ((3, 2, 5, 5), (3, 2, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_forward_matches_numpy(case, dtype):
    xs, ws, st, pad, dil, g = case
    x = rng(1).standard_normal(xs)
    w = rng(2).standard_normal(ws)
    y = _core.conv2d(T(x, dtype), T(w, dtype), list(st), list(pad), list(dil), g)
    assert y.dtype == (ms.float32 if dtype == np.float32 else ms.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(N(y), np_conv2d(x, w, st, pad, dil, g), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_conv2d_half_precision_computes_in_float32(dtype):
    x = rng(3).standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng(4).standard_normal((4, 3, 3, 3)).astype(np.float32)
    y = _core.conv2d(ops.cast(T(x), dtype), ops.cast(T(w), dtype), [1, 1], [1, 1, 1, 1], [1, 1], 1)
    assert y.dtype == dtype
    np.testing.assert_allclose(N(ops.cast(y, ms.float32)), np_conv2d(x, w, pad=(1, 1, 1, 1)), rtol=5e-2, atol=1e-1)


@pytest.mark.parametrize("case", CONV_CASES[:3])
def test_conv2d_gradients_match_finite_differences(case):
    xs, ws, st, pad, dil, g = case
    xs = (1,) + xs[1:]
    x, w = rng(5).standard_normal(xs), rng(6).standard_normal(ws)
    check_grad(lambda a, b: _core.conv2d(a, b, list(st), list(pad), list(dil), g) ** 2, [x, w], rtol=1e-5, atol=1e-6)


def test_conv2d_backprop_ops_are_adjoint_and_differentiable():
    st, pad, dil, g = [2, 1], [1, 0, 2, 1], [1, 2], 2
    x, w = rng(7).standard_normal((2, 4, 7, 6)), rng(8).standard_normal((6, 2, 3, 2))
    y = np_conv2d(x, w, st, pad, dil, g)
    dy = rng(9).standard_normal(y.shape)
    dx = N(_core.conv2d_backprop_input(T(dy), T(w), list(x.shape), st, pad, dil, g))
    dw = N(_core.conv2d_backprop_filter(T(dy), T(x), list(w.shape), st, pad, dil, g))
    # ⟨conv(x, w), dy⟩ = ⟨x, dx⟩ = ⟨w, dw⟩ (bilinear)
    np.testing.assert_allclose((y * dy).sum(), (x * dx).sum(), rtol=1e-10)
    np.testing.assert_allclose((y * dy).sum(), (w * dw).sum(), rtol=1e-10)
    check_grad(lambda a, b: _core.conv2d_backprop_input(a, b, [1, 4, 7, 6], st, pad, dil, g) ** 2,
               [dy[:1], w])
    check_grad(lambda a, b: _core.conv2d_backprop_filter(a, b, list(w.shape), st, pad, dil, g) ** 2,
               [dy[:1], x[:1]])


def test_conv2d_second_derivative():
    """Hessian-vector products of f(x, w) = Σ conv(x, w)³ against finite differences of the first gradient."""
    st, pad, dil = [1, 2], [1, 1, 0, 1], [1, 1]
    x, w = rng(10).standard_normal((1, 2, 5, 5)), rng(11).standard_normal((3, 2, 2, 3))
    vx, vw = rng(12).standard_normal(x.shape), rng(13).standard_normal(w.shape)

    def f(a, b):
        return ops.sum(_core.conv2d(a, b, st, [1, 1, 0, 1], dil, 1) ** 3)

    def grads(a, b):
        return ms.grad(f, (0, 1))(T(a), T(b))

    def hvp(a, b):
        gx, gw = ms.grad(lambda p, q: sum(ops.sum(gi * T(v)) for gi, v in zip(ms.grad(f, (0, 1))(p, q), (vx, vw))),
                         (0, 1))(T(a), T(b))
        return N(gx), N(gw)

    eps = 1e-6
    plus, minus = grads(x + eps * vx, w + eps * vw), grads(x - eps * vx, w - eps * vw)
    hx, hw = hvp(x, w)
    np.testing.assert_allclose(hx, (N(plus[0]) - N(minus[0])) / (2 * eps), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hw, (N(plus[1]) - N(minus[1])) / (2 * eps), rtol=1e-5, atol=1e-6)
    del pad


def test_conv2d_errors_name_op_and_shapes():
    x, w = T(np.ones((1, 3, 5, 5), np.float32)), T(np.ones((4, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match=r"For 'Conv2D', x.shape\[1\] / groups must equal weight.shape\[1\]"):
        _core.conv2d(x, w, [1, 1], [0, 0, 0, 0], [1, 1], 1)
    with pytest.raises(ValueError, match=r"For 'Conv2D', the kernel size \(7, 7\)"):
        _core.conv2d(x, T(np.ones((4, 3, 7, 7), np.float32)), [1, 1], [0, 0, 0, 0], [1, 1], 1)
    with pytest.raises(TypeError, match="must have the same dtype"):
        _core.conv2d(x, T(np.ones((4, 3, 3, 3))), [1, 1], [0, 0, 0, 0], [1, 1], 1)
    with pytest.raises(ValueError, match="must be 4-D"):
        _core.conv2d(T(np.ones((3, 5, 5), np.float32)), w, [1, 1], [0, 0, 0, 0], [1, 1], 1)
    with pytest.raises(ValueError, match="'stride' must be two positive ints"):
        _core.conv2d(x, T(np.ones((4, 3, 3, 3), np.float32)), [0, 1], [0, 0, 0, 0], [1, 1], 1)


def test_functional_conv_pad_modes():
    x = rng(14).standard_normal((2, 3, 7, 8)).astype(np.float32)
    w = rng(15).standard_normal((5, 3, 3, 4)).astype(np.float32)
    b = rng(16).standard_normal(5).astype(np.float32)
    y = ops.conv2d(T(x), T(w), T(b), stride=2, pad_mode="same")
    # same: out = ceil(in / stride); needed padding split with the odd one at the bottom/right
    assert y.shape == (2, 5, 4, 4)
    need_h, need_w = max(0, 3 * 2 + 3 - 7), max(0, 3 * 2 + 4 - 8)
    ref = np_conv2d(x, w, (2, 2), (need_h // 2, need_h - need_h // 2, need_w // 2, need_w - need_w // 2))
    np.testing.assert_allclose(N(y), ref + b.reshape(1, -1, 1, 1), rtol=1e-4, atol=1e-4)
    assert ops.conv2d(T(x), T(w), pad_mode="valid").shape == (2, 5, 5, 5)
    y = ops.conv2d(T(x), T(w), pad_mode="pad", padding=(1, 2, 0, 3), dilation=(2, 1))
    np.testing.assert_allclose(N(y), np_conv2d(x, w, (1, 1), (1, 2, 0, 3), (2, 1)), rtol=1e-4, atol=1e-4)
    y1 = ops.conv1d(T(x[:, :, 0]), T(w[:, :, 0]), stride=2, pad_mode="pad", padding=1)
    ref1 = np_conv2d(x[:, :, :1], w[:, :, :1], (1, 2), (0, 0, 1, 1))[:, :, 0]
    np.testing.assert_allclose(N(y1), ref1, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------------------------ pooling
@pytest.mark.parametrize("k,s,pad,dil,ceil", [
    ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
    ((3, 2), (2, 1), (1, 1, 1, 1), (1, 1), True),
    ((3, 3), (1, 2), (1, 1, 0, 0), (2, 1), False),
    ((3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True),
])
def test_max_pool_forward_indices_and_gradient(k, s, pad, dil, ceil):
    x = rng(20).permutation(2 * 3 * 7 * 8).reshape(2, 3, 7, 8) / 10.0  # distinct values: no ties
    y, idx = _core.max_pool2d(T(x), list(k), list(s), list(pad), list(dil), ceil, True)
    ry, ridx = np_max_pool(x, k, s, pad, dil, ceil)
    np.testing.assert_array_equal(N(y), ry)
    np.testing.assert_array_equal(N(idx), ridx)
    assert idx.dtype == ms.int64
    check_grad(lambda a: _core.max_pool2d(a, list(k), list(s), list(pad), list(dil), ceil) ** 2, [x[:1]])


def test_max_pool_gradient_goes_to_first_max_and_double_backward():
    x = np.array([[[[1.0, 3.0, 3.0], [0.0, 3.0, 2.0], [1.0, 1.0, 1.0]]]])
    g = ms.grad(lambda a: ops.sum(_core.max_pool2d(a, [2, 2], [1, 1], [0] * 4, [1, 1])))(T(x))
    np.testing.assert_array_equal(N(g), [[[[0, 2, 0], [0, 2, 0], [0, 0, 0]]]])  # ties → first in scan order
    # d/dx of <maxpool_grad(x, dy), v> w.r.t. dy is gathered v: check against finite differences in dy
    xr = rng(21).permutation(36).reshape(1, 1, 6, 6) / 7.0
    dy = rng(22).standard_normal((1, 1, 3, 3))
    check_grad(lambda d: _core.max_pool2d_grad(T(xr), d, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1]) ** 2, [dy])


@pytest.mark.parametrize("k,s,pad,ceil,inc,div", [
    ((2, 2), (2, 2), (0, 0, 0, 0), False, True, 0),
    ((3, 3), (2, 2), (1, 1, 1, 1), True, True, 0),
    ((3, 3), (2, 2), (1, 1, 1, 1), True, False, 0),
    ((3, 2), (1, 2), (1, 0, 1, 1), False, True, 5),
])
def test_avg_pool_forward_and_gradient(k, s, pad, ceil, inc, div):
    x = rng(23).standard_normal((2, 2, 7, 6))
    y = _core.avg_pool2d(T(x), list(k), list(s), list(pad), ceil, inc, div)
    np.testing.assert_allclose(N(y), np_avg_pool(x, k, s, pad, ceil, inc, div), rtol=1e-12)
    check_grad(lambda a: _core.avg_pool2d(a, list(k), list(s), list(pad), ceil, inc, div) ** 2, [x[:1]])
    # AvgPoolGrad is differentiable too (its bprop is AvgPool)
    dy = rng(24).standard_normal(y.shape)[:1]
    check_grad(lambda d: _core.avg_pool2d_grad(d, [1, 2, 7, 6], list(k), list(s), list(pad), ceil, inc, div) ** 2,
               [dy])


@pytest.mark.parametrize("hw,out", [((7, 5), (3, 2)), ((6, 6), (2, 3)), ((4, 5), (4, 5)), ((5, 3), (1, 1))])
def test_adaptive_avg_pool(hw, out):
    x = rng(25).standard_normal((2, 3) + hw)
    np.testing.assert_allclose(N(ops.adaptive_avg_pool2d(T(x), out)), np_adaptive_avg_pool(x, out), rtol=1e-12)
    check_grad(lambda a: _core.adaptive_avg_pool2d(a, list(out)) ** 2, [x[:1, :2]])
    assert ops.adaptive_avg_pool2d(T(x), (None, 2)).shape == (2, 3, hw[0], 2)
    assert ops.adaptive_avg_pool2d(T(x[0]), 2).shape == (3, 2, 2)


def test_pool_layers_modes_and_shapes():
    x = T(rng(26).standard_normal((2, 3, 7, 8)).astype(np.float32))
    assert nn.MaxPool2d(kernel_size=2, stride=2)(x).shape == (2, 3, 3, 4)
    assert nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")(x).shape == (2, 3, 4, 4)
    y, idx = nn.MaxPool2d(kernel_size=2, stride=1, pad_mode="pad", padding=1, return_indices=True)(x)
    assert y.shape == idx.shape == (2, 3, 8, 9)
    assert nn.AvgPool2d(kernel_size=3, stride=1)(x).shape == (2, 3, 5, 6)
    # 'same' average pooling divides by the number of real elements (corners of a ones image stay 1)
    ones = T(np.ones((1, 1, 4, 4), np.float32))
    np.testing.assert_allclose(N(nn.AvgPool2d(3, 1, pad_mode="same")(ones)), np.ones((1, 1, 4, 4)))
    np.testing.assert_allclose(N(nn.AvgPool2d(3, 1, pad_mode="pad", padding=1)(ones))[0, 0, 0, 0], 4 / 9)
    assert nn.MaxPool2d(2, 2)(T(np.ones((3, 4, 4), np.float32))).shape == (3, 2, 2)
    assert nn.MaxPool1d(3, 2)(T(np.ones((2, 3, 9), np.float32))).shape == (2, 3, 4)
    assert nn.AvgPool1d(2, 2)(T(np.ones((2, 3, 9), np.float32))).shape == (2, 3, 4)
    assert nn.AdaptiveAvgPool2d((2, None))(x).shape == (2, 3, 2, 8)
    assert nn.AdaptiveAvgPool1d(3)(T(np.ones((2, 3, 9), np.float32))).shape == (2, 3, 3)
    assert repr(nn.MaxPool2d(2, 2)) == "MaxPool2d(kernel_size=2, stride=2, pad_mode=VALID)"
    with pytest.raises(ValueError, match="can not be set to non-default value"):
        nn.MaxPool2d(2, 2, padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.AvgPool2d(2, 2, pad_mode="full")
    with pytest.raises(ValueError, match="For 'MaxPool2d', the input must be a 3 or 4-D tensor"):
        nn.MaxPool2d(2, 2)(T(np.ones((4, 4), np.float32)))


# ------------------------------------------------------------------------------------------------ normalization
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 4, 5)])
def test_batch_norm_op_forward_and_gradients(shape):
    c = shape[1]
    x = rng(30).standard_normal(shape) * 2 + 1
    gamma, beta = rng(31).standard_normal(c), rng(32).standard_normal(c)
    mean, var = rng(33).standard_normal(c), rng(34).random(c) + 0.5
    y, bm, bv = _core.batch_norm(T(x), T(gamma), T(beta), T(mean), T(var), True, 1e-5)
    ry, rm, rv = np_batch_norm(x, gamma, beta, None, None, True, 1e-5)
    np.testing.assert_allclose(N(y), ry, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(N(bm), rm, rtol=1e-12)
    np.testing.assert_allclose(N(bv), rv, rtol=1e-12)  # biased
    y, m2, v2 = _core.batch_norm(T(x), T(gamma), T(beta), T(mean), T(var), False, 1e-3)
    np.testing.assert_allclose(N(y), np_batch_norm(x, gamma, beta, mean, var, False, 1e-3)[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(N(m2), mean)
    w = rng(35).standard_normal(shape)  # a weighted sum makes Σ dy ≠ 0
    for training in (True, False):
        check_grad(lambda a, g, b: _core.batch_norm(a, g, b, T(mean), T(var), training, 1e-5)[0] * T(w),
                   [x, gamma, beta], rtol=1e-5, atol=1e-6)
    # the returned batch statistics are differentiable too
    check_grad(lambda a: _core.batch_norm(a, T(gamma), T(beta), T(mean), T(var), True, 1e-5)[1] * 3.0
               + _core.batch_norm(a, T(gamma), T(beta), T(mean), T(var), True, 1e-5)[2], [x])


def test_batch_norm_second_derivative():
    x = rng(36).standard_normal((3, 2, 2, 2))
    gamma = rng(37).standard_normal(2)
    v = rng(38).standard_normal(x.shape)
    w = rng(39).standard_normal(x.shape)

    def f(a):
        y = _core.batch_norm(a, T(gamma), T(np.zeros(2)), T(np.zeros(2)), T(np.ones(2)), True, 1e-5)[0]
        return ops.sum(ops.tanh(y) * T(w))

    eps = 1e-6
    fd = (N(ms.grad(f)(T(x + eps * v))) - N(ms.grad(f)(T(x - eps * v)))) / (2 * eps)
    hv = N(ms.grad(lambda a: ops.sum(ms.grad(f)(a) * T(v)))(T(x)))
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


def test_layer_norm_and_group_norm():
    x = rng(40).standard_normal((2, 3, 4, 5))
    g, b = rng(41).standard_normal((4, 5)), rng(42).standard_normal((4, 5))
    y = _core.layer_norm(T(x), T(g), T(b), 2, 2, 1e-7)
    mu, var = x.mean(axis=(2, 3), keepdims=True), x.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(N(y), (x - mu) / np.sqrt(var + 1e-7) * g + b, rtol=1e-10, atol=1e-10)
    check_grad(lambda a, gg, bb: _core.layer_norm(a, gg, bb, -1, -1, 1e-5) ** 3, [x[:1, :2], g[0], b[0]])
    np.testing.assert_allclose(N(ops.layer_norm(T(x), (4, 5), T(g), T(b), 1e-7)), N(y), rtol=1e-12)
    # GroupNorm: 2 groups of 3 channels
    x = rng(43).standard_normal((2, 6, 3, 2))
    gm, bt = rng(44).standard_normal(6), rng(45).standard_normal(6)
    xg = x.reshape(2, 2, -1)
    ref = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    ref = ref * gm.reshape(1, -1, 1, 1) + bt.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(N(ops.group_norm(T(x), 2, T(gm), T(bt))), ref, rtol=1e-10, atol=1e-10)
    check_grad(lambda a, gg: _core.group_norm(a, 3, gg, None, 1e-5) ** 3, [x[:1], gm])
    with pytest.raises(ValueError, match="divisible by num_groups"):
        ops.group_norm(T(x), 4)


def test_norm_layers():
    ln = nn.LayerNorm((5,))
    assert ln.epsilon == 1e-7 and [p.name for p in ln.get_parameters()] == ["gamma", "beta"]
    x = rng(46).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(N(ln(T(x))), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-7),
                               rtol=1e-4, atol=1e-5)
    ln2 = nn.LayerNorm((4, 5), begin_norm_axis=1, begin_params_axis=1)
    assert ln2(T(np.ones((2, 4, 5), np.float32))).shape == (2, 4, 5)
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm(5)
    gn = nn.GroupNorm(2, 4)
    assert gn(T(np.ones((2, 4, 3, 3), np.float32))).shape == (2, 4, 3, 3)
    assert repr(gn) == "GroupNorm(num_groups=2, num_channels=4)"
    with pytest.raises(ValueError, match="must be divided by 'num_groups'"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="For 'GroupNorm', the channel"):
        gn(T(np.ones((2, 3, 3, 3), np.float32)))


def test_batch_norm_layer_training_eval_and_moving_stats():
    bn = nn.BatchNorm2d(3, momentum=0.8)
    assert [p.name for p in bn.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    assert not bn.moving_mean.requires_grad and bn.gamma.requires_grad
    x = rng(47).standard_normal((4, 3, 2, 2)).astype(np.float32) * 3 + 2
    ones = np.ones(3, np.float32)
    np.testing.assert_allclose(N(bn(T(x))), x / np.sqrt(1 + 1e-5), rtol=1e-5)  # eval: moving stats (0, 1)
    bn.set_train()
    y = bn(T(x))
    ry, rm, rv = np_batch_norm(x.astype(np.float64), ones * 1.0, 0.0 * ones, None, None, True, 1e-5)
    np.testing.assert_allclose(N(y), ry, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(N(bn.moving_mean), 0.2 * rm, rtol=1e-5)
    rv_unbiased = rv * 16 / 15  # the moving variance gets the unbiased batch variance (M = 4·2·2 = 16 per channel)
    np.testing.assert_allclose(rv_unbiased, x.astype(np.float64).var(axis=(0, 2, 3), ddof=1), rtol=1e-6)
    np.testing.assert_allclose(N(bn.moving_variance), 0.8 + 0.2 * rv_unbiased, rtol=1e-5)
    bn.set_train(False)
    np.testing.assert_allclose(N(bn(T(x))),
                               np_batch_norm(x, ones, 0 * ones, 0.2 * rm, 0.8 + 0.2 * rv_unbiased, False, 1e-5)[0],
                               rtol=1e-4, atol=1e-5)
    fixed = nn.BatchNorm1d(3, use_batch_statistics=False)
    fixed.set_train()
    np.testing.assert_allclose(N(fixed(T(x[:, :, 0, 0]))), x[:, :, 0, 0] / np.sqrt(1 + 1e-5), rtol=1e-5)
    np.testing.assert_array_equal(N(fixed.moving_mean), np.zeros(3))
    assert nn.BatchNorm1d(3)(T(x[:, :, :, 0])).shape == (4, 3, 2)
    assert repr(nn.BatchNorm1d(2)).startswith("BatchNorm1d(num_features=2, eps=1e-05, momentum=0.9, gamma=Parameter")
    with pytest.raises(ValueError, match="For 'BatchNorm2d', the input must have 4 dims, but got 3"):
        bn(T(x[:, :, 0]))
    with pytest.raises(ValueError, match="For 'BatchNorm2d', the input channels"):
        bn(T(x[:, :2]))
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm2d(3, momentum=1.5)


# ------------------------------------------------------------------------------------------------------- layers
def test_conv2d_layer_defaults_params_and_repr():
    ms.set_seed(3)
    net = nn.Conv2d(3, 8, 3, has_bias=True)
    assert net.weight.shape == (8, 3, 3, 3) and net.bias.shape == (8,)
    assert [p.name for p in net.get_parameters()] == ["weight", "bias"]
    bound = 1 / math.sqrt(27)  # HeUniform(√5) on fan_in = 27, and the bias Uniform(1/√fan_in)
    assert np.abs(N(net.weight)).max() <= bound + 1e-7 and np.abs(N(net.bias)).max() <= bound + 1e-7
    assert repr(net).startswith("Conv2d(input_channels=3, output_channels=8, kernel_size=(3, 3), stride=(1, 1), "
                                "pad_mode=same, padding=0, dilation=(1, 1), group=1, has_bias=True, weight_init=")
    x = rng(50).standard_normal((2, 3, 9, 7)).astype(np.float32)
    y = net(T(x))
    assert y.shape == (2, 8, 9, 7)
    ref = np_conv2d(x, N(net.weight), pad=(1, 1, 1, 1)) + N(net.bias).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(N(y), ref, rtol=1e-4, atol=1e-4)
    assert nn.Conv2d(3, 8, (3, 2), stride=2, pad_mode="valid")(T(x)).shape == (2, 8, 4, 3)
    assert nn.Conv2d(3, 6, 3, pad_mode="pad", padding=(1, 0, 2, 2), group=3)(T(x)).shape == (2, 6, 8, 9)
    c1 = nn.Conv1d(3, 5, 3, stride=2, pad_mode="pad", padding=1)
    assert c1.weight.shape == (5, 3, 1, 3) and c1(T(x[:, :, 0])).shape == (2, 5, 4)
    with pytest.raises(ValueError, match=r"For 'Conv2d', the input channels \(x.shape\[1\]\) must be equal to "
                                         r"in_channels 3, but got 4"):
        net(T(np.ones((2, 4, 9, 7), np.float32)))
    with pytest.raises(ValueError, match="For 'Conv2d', the input must be a 4-D tensor"):
        net(T(np.ones((3, 9, 7), np.float32)))
    with pytest.raises(ValueError, match="'padding' must be zero when 'pad_mode' is not 'pad'"):
        nn.Conv2d(3, 8, 3, padding=1)
    with pytest.raises(ValueError, match="'group' should be divisible"):
        nn.Conv2d(3, 8, 3, group=2)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(3, 8, 3, pad_mode="full")


def test_conv2d_transpose_layer():
    # MindSpore's docstring example: (1, 3, 16, 50), k=4, pad_mode='pad' → (1, 64, 19, 53)
    net = nn.Conv2dTranspose(3, 64, 4, has_bias=False, weight_init="normal", pad_mode="pad")
    assert net.weight.shape == (3, 64, 4, 4)
    assert net(T(np.ones((1, 3, 16, 50), np.float32))).shape == (1, 64, 19, 53)
    x = T(np.ones((2, 4, 5, 6), np.float32))
    assert nn.Conv2dTranspose(4, 2, 3, stride=2)(x).shape == (2, 2, 10, 12)
    assert nn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="valid")(x).shape == (2, 2, 11, 13)
    assert nn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="pad", padding=1, output_padding=1)(x).shape == (2, 2, 10,
                                                                                                        12)
    assert nn.Conv1dTranspose(4, 2, 3, stride=2)(T(np.ones((2, 4, 5), np.float32))).shape == (2, 2, 10)
    # the transposed convolution is the adjoint of the convolution with the same weight
    t = nn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="pad", padding=1)
    xi = rng(51).standard_normal((1, 4, 5, 6)).astype(np.float32)
    y = N(t(T(xi)))
    u = rng(52).standard_normal(y.shape)
    fwd = np_conv2d(u, N(t.weight).astype(np.float64), (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose((y * u).sum(), (xi * fwd).sum(), rtol=1e-4)


def test_conv_transpose2d_functional():
    x = rng(53).standard_normal((1, 2, 4, 3))
    w = rng(54).standard_normal((2, 3, 3, 2))
    y = ops.conv_transpose2d(T(x), T(w), stride=2, padding=1, output_padding=1)
    assert y.shape == (1, 3, 8, 5)
    u = rng(55).standard_normal(y.shape)
    np.testing.assert_allclose((N(y) * u).sum(), (x * np_conv2d(u, w, (2, 2), (1, 1, 1, 1))).sum(), rtol=1e-10)


def test_embedding():
    ms.set_seed(1)
    emb = nn.Embedding(10, 4, padding_idx=2)
    assert emb.embedding_table.shape == (10, 4) and emb.embedding_table.name == "embedding_table"
    np.testing.assert_array_equal(N(emb.embedding_table)[2], np.zeros(4))
    ids = Tensor(np.array([[1, 2, 9], [0, 1, 1]], np.int32))
    out = emb(ids)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(N(out), N(emb.embedding_table)[N(ids)])
    np.testing.assert_allclose(N(nn.Embedding(10, 4, use_one_hot=True, embedding_table=emb.embedding_table)(ids)),
                               N(out), rtol=1e-6)
    g = ms.grad(lambda: ops.sum(emb(ids)), None, emb.trainable_params())()[0]
    counts = np.bincount(N(ids).ravel(), minlength=10)
    np.testing.assert_array_equal(N(g), np.repeat(counts[:, None], 4, axis=1))
    assert repr(emb).startswith("Embedding(vocab_size=10, embedding_size=4, use_one_hot=False, embedding_table=")
    with pytest.raises(TypeError, match="integer Tensor"):
        emb(Tensor(np.ones((2,), np.float32)))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(10, 4, padding_idx=10)


# ----------------------------------------------------------------------------------- PyNative vs graph parity
class SmallCNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, has_bias=True)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3, pad_mode="valid", group=2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.ln = nn.LayerNorm((6,))
        self.fc = nn.Dense(6, 3)

    def construct(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.gap(self.relu(self.conv2(x)))
        return self.fc(self.ln(ops.reshape(x, (x.shape[0], -1))))


def _train_cnn(mode, steps=4, jit_step=False):
    ms.set_context(mode=mode)
    try:
        ms.set_seed(7)
        net = SmallCNN()
        net.set_train()
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)

        def forward(x, y):
            return loss_fn(net(x), y)

        grad_fn = ms.value_and_grad(forward, None, opt.parameters)

        def step(x, y):
            loss, grads = grad_fn(x, y)
            return ops.depend(loss, opt(grads)), grads[0]

        if jit_step:
            step = ms.jit(step)
        r = rng(60)
        x = Tensor(r.standard_normal((8, 1, 10, 10)).astype(np.float32))
        y = Tensor(r.integers(0, 3, 8).astype(np.int32))
        losses, g0 = [], None
        for _ in range(steps):
            loss, g = step(x, y)
            losses.append(float(loss.asnumpy()))
            g0 = N(g) if g0 is None else g0
        stats = [N(p) for p in (net.bn1.moving_mean, net.bn1.moving_variance, net.conv1.weight)]
        return np.array(losses), g0, stats
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_cnn_training_parity_pynative_graph_jit():
    eager = _train_cnn(ms.PYNATIVE_MODE)
    for other in (_train_cnn(ms.GRAPH_MODE), _train_cnn(ms.PYNATIVE_MODE, jit_step=True)):
        np.testing.assert_allclose(other[0], eager[0], rtol=1e-5)  # losses
        np.testing.assert_allclose(other[1], eager[1], rtol=1e-5, atol=1e-7)  # first gradient
        for a, b in zip(other[2], eager[2]):  # BatchNorm moving statistics and a trained weight
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert eager[0][-1] < eager[0][0]
    assert not np.allclose(eager[2][0], 0)  # the moving mean moved


def test_jit_eval_uses_moving_statistics_and_keys_training_flag():
    bn = nn.BatchNorm2d(2)
    x = T(rng(61).standard_normal((3, 2, 2, 2)).astype(np.float32))
    f = ms.jit(lambda a: bn(a))
    bn.set_train(False)
    np.testing.assert_allclose(N(f(x)), N(x) / np.sqrt(1 + 1e-5), rtol=1e-5)
    bn.set_train(True)
    f(x)
    f(x)
    rm = N(x).mean(axis=(0, 2, 3))
    np.testing.assert_allclose(N(bn.moving_mean), rm * (1 - 0.9 ** 2), rtol=1e-5, atol=1e-7)
