"""nn.PReLU, nn.MatMul, nn.InstanceNorm1d/2d/3d, nn.BatchNorm3d, nn.Conv2dBnAct, nn.DenseBnAct: NumPy references
for values, float64 finite differences for gradients, PyNative against Graph mode, MindSpore 2.10's parameter
names, and the errors of bad input."""
import numpy as np
import pytest

from helpers import central_difference

import kiln
from kiln import Parameter, Tensor, nn


def _t(a, dtype=np.float32):
    return Tensor(np.asarray(a, dtype=dtype))




def _graph_matches_pynative(net, *inputs):
    kiln.set_context(mode=kiln.PYNATIVE_MODE)
    eager = net(*inputs).asnumpy()
    compiled = kiln.jit(lambda *xs: net(*xs))(*inputs).asnumpy()
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-7)
    return eager


def test_prelu_values_parameters_and_gradient():
    p = nn.PReLU(channel=2, w=0.25)
    assert [(q.name, q.shape) for q in p.get_parameters()] == [("a", (2,))]  # MindSpore 2.10's name
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32).reshape(2, 2, 1)
    out = _graph_matches_pynative(p, _t(x))
    np.testing.assert_array_equal(out.ravel(), [-0.25, 2.0, 3.0, -1.0])  # MindSpore 2.10
    shared = nn.PReLU()(_t([[-2.0, 1.0, -4.0]]))
    np.testing.assert_array_equal(shared.asnumpy(), [[-0.5, 1.0, -1.0]])

    x64 = np.random.default_rng(0).uniform(-2, 2, (3, 2, 2))
    p64 = nn.PReLU(channel=2, w=[0.1, 0.3])
    p64.w = Parameter(_t([0.1, 0.3], np.float64), name="a")

    def loss_w(w):
        p64.w.set_data(Tensor(w))
        return float((p64(Tensor(x64)) ** 2).sum().asnumpy())

    grad_fn = kiln.value_and_grad(lambda x: (p64(x) ** 2).sum(), None, p64.trainable_params())
    _, (gw,) = grad_fn(Tensor(x64))
    np.testing.assert_allclose(gw.asnumpy(), central_difference(loss_w, np.array([0.1, 0.3])), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="channels"):
        nn.PReLU(channel=3)(_t(np.zeros((2, 2))))
    with pytest.raises(ValueError, match="values"):
        nn.PReLU(channel=2, w=[0.1])
    with pytest.raises(ValueError, match="channel"):
        nn.PReLU(channel=0)


def test_matmul_layer_shapes_and_values():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    out = _graph_matches_pynative(nn.MatMul(transpose_x1=True), _t(a), _t(b))
    np.testing.assert_allclose(out, a.T @ b, rtol=1e-5)
    c = rng.standard_normal((5, 2, 3)).astype(np.float32)
    d = rng.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(nn.MatMul(transpose_x2=True)(_t(c), _t(d)).asnumpy(), c @ d.T, rtol=1e-5)
    v = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(nn.MatMul()(_t(c), _t(v)).asnumpy(), c @ v, rtol=1e-5)
    with pytest.raises(ValueError, match="contracted"):
        nn.MatMul()(_t(a), _t(b))
    with pytest.raises(TypeError, match="transpose_x1"):
        nn.MatMul(transpose_x1=1)
    for bad in (None, 3.0, [1.0, 2.0], "x"):
        with pytest.raises(TypeError, match="MatMul"):
            nn.MatMul()(_t(a), bad)
        with pytest.raises(TypeError, match="MatMul"):
            nn.MatMul()(bad, _t(b))


@pytest.mark.parametrize("cls,shape", [(nn.InstanceNorm1d, (2, 3, 5)), (nn.InstanceNorm2d, (2, 3, 3, 4)),
                                       (nn.InstanceNorm3d, (2, 3, 2, 2, 3))])
def test_instance_norm_values_and_moving_statistics(cls, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    layer = cls(3, momentum=0.1)
    assert [q.name for q in layer.get_parameters()] == ["mean", "variance", "gamma", "beta"]  # MindSpore 2.10
    layer.gamma.set_data(_t([1.0, 2.0, 0.5]))
    layer.beta.set_data(_t([0.0, -1.0, 3.0]))
    layer.set_train(True)
    out = layer(_t(x)).asnumpy()
    axes = tuple(range(2, x.ndim))
    bshape = [1, 3] + [1] * (x.ndim - 2)
    ref = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    ref = ref * np.array([1.0, 2.0, 0.5]).reshape(bshape) + np.array([0.0, -1.0, 3.0]).reshape(bshape)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.asnumpy(), 0.1 * x.mean(axes).mean(0), rtol=1e-5)
    np.testing.assert_allclose(layer.moving_variance.asnumpy(), 0.9 + 0.1 * x.var(axes, ddof=1).mean(0), rtol=1e-5)
    layer.set_train(False)  # instance statistics in evaluation too
    np.testing.assert_allclose(layer(_t(x)).asnumpy(), ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="channels"):
        layer(_t(np.zeros((2, 4) + shape[2:])))


def test_instance_norm_gradient_and_graph_mode():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 3, 3))
    layer = nn.InstanceNorm2d(2)
    for name, value in (("moving_mean", [0.0, 0.0]), ("moving_variance", [1.0, 1.0]), ("gamma", [1.5, 0.5]),
                        ("beta", [0.1, 0.2])):
        setattr(layer, name, Parameter(_t(value, np.float64), name=name, requires_grad=name in ("gamma", "beta")))
    wts = rng.standard_normal(x.shape)
    f = lambda a: float((layer(Tensor(a)).asnumpy() * wts).sum())
    g = kiln.grad(lambda a: (layer(a) * Tensor(wts)).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, central_difference(f, x), rtol=1e-5, atol=1e-7)
    layer32 = nn.InstanceNorm2d(2)
    _graph_matches_pynative(layer32, _t(x))


def test_batchnorm3d_matches_batchnorm_per_channel():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 2, 3, 2)).astype(np.float32)
    bn = nn.BatchNorm3d(3)
    assert [q.name for q in bn.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    bn.set_train(True)
    out = bn(_t(x)).asnumpy()
    axes = (0, 2, 3, 4)
    ref = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * x.mean(axes), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="5 dims"):
        bn(_t(np.zeros((2, 3, 4, 4))))
    with pytest.raises(ValueError, match="NCDHW"):
        nn.BatchNorm3d(3, data_format="NCHW")


def test_conv2d_bn_act_and_dense_bn_act():
    kiln.set_seed(0)
    c = nn.Conv2dBnAct(2, 3, 3, has_bn=True, activation="relu")
    assert [q.name for q in c.get_parameters()] == ["conv.weight", "batchnorm.moving_mean",
                                                    "batchnorm.moving_variance", "batchnorm.gamma",
                                                    "batchnorm.beta"]  # MindSpore 2.10
    x = _t(np.random.default_rng(5).standard_normal((2, 2, 5, 5)))
    c.set_train(False)
    out = _graph_matches_pynative(c, x)
    ref = np.maximum(c.batchnorm(c.conv(x)).asnumpy(), 0)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert out.shape == (2, 3, 5, 5)
    d = nn.DenseBnAct(3, 4, has_bn=True, activation="leakyrelu", alpha=0.1)
    assert [q.name for q in d.get_parameters()] == ["dense.weight", "dense.bias", "batchnorm.moving_mean",
                                                    "batchnorm.moving_variance", "batchnorm.gamma", "batchnorm.beta"]
    d.set_train(False)
    z = _t(np.random.default_rng(6).standard_normal((4, 3)))
    pre = d.batchnorm(d.dense(z)).asnumpy()
    np.testing.assert_allclose(d(z).asnumpy(), np.where(pre >= 0, pre, 0.1 * pre), rtol=1e-6)
    plain = nn.Conv2dBnAct(2, 3, 1)
    np.testing.assert_allclose(plain(x).asnumpy(), plain.conv(x).asnumpy())
    with pytest.raises(TypeError, match="has_bn"):
        nn.Conv2dBnAct(2, 3, 1, has_bn=1)
    with pytest.raises(KeyError):
        nn.DenseBnAct(2, 3, activation="nope")


def test_psnr_and_ssim_match_mindspore():
    r = np.random.RandomState(1)
    a = r.rand(2, 3, 16, 16).astype(np.float32)
    b = np.clip(a + 0.1 * r.randn(2, 3, 16, 16), 0, 1).astype(np.float32)
    # MindSpore 2.10 (CPU, Graph mode) on the same arrays
    np.testing.assert_allclose(nn.SSIM()(_t(a), _t(b)).asnumpy(), [0.9548895, 0.94775677], rtol=1e-5)
    np.testing.assert_allclose(nn.SSIM(max_val=2.0, filter_size=7, filter_sigma=1.0)(_t(a), _t(b)).asnumpy(),
                               [0.9477361, 0.94641167], rtol=1e-5)
    np.testing.assert_allclose(nn.PSNR()(_t(a), _t(b)).asnumpy(), [20.025736, 20.604069], rtol=1e-5)
    np.testing.assert_allclose(nn.PSNR(max_val=2.0)(_t(a), _t(b)).asnumpy(), [26.046337, 26.624668], rtol=1e-5)
    np.testing.assert_allclose(nn.SSIM()(_t(a), _t(a)).asnumpy(), [1.0, 1.0], rtol=1e-5)
    _graph_matches_pynative(nn.SSIM(), _t(a), _t(b))
    with pytest.raises(ValueError, match="filter_size"):
        nn.SSIM()(_t(a[:, :, :8, :8]), _t(b[:, :, :8, :8]))
    with pytest.raises(ValueError, match="one shape"):
        nn.PSNR()(_t(a), _t(b[:1]))
    with pytest.raises(TypeError, match="max_val"):
        nn.PSNR(max_val=0)
