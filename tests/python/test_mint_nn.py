"""kiln.mint.nn layers (PyTorch-style constructors over the kiln.nn layers and ops) and kiln.mint.optim (PyTorch's
AdamW / Adam / SGD formulas), against NumPy and the mint.nn.functional ops."""
import os

import numpy as np
import pytest

import kiln
from kiln import Tensor, mint, nn
from kiln.mint import nn as mnn
from kiln.mint.nn import functional as F

RNG = np.random.default_rng(1)
X = np.array([[1., 5., 3.], [4., 2., 6.]], np.float32)


def T(a):
    return Tensor(np.asarray(a))


def close(got, want, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(got.asnumpy() if isinstance(got, Tensor) else got, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------- mint.nn

def test_layers_shared_with_nn():
    assert mnn.ReLU is nn.ReLU and mnn.Cell is nn.Cell and mnn.Identity is nn.Identity
    assert mnn.functional is F and mnn.F is F


def test_linear():
    lin = mnn.Linear(3, 4)
    assert lin.weight.shape == (4, 3) and lin.bias.shape == (4,)
    bound = 1 / np.sqrt(3)
    assert np.abs(lin.bias.asnumpy()).max() <= bound and np.abs(lin.weight.asnumpy()).max() <= bound
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    close(lin(T(x)), x @ lin.weight.asnumpy().T + lin.bias.asnumpy(), rtol=1e-5)
    nb = mnn.Linear(in_features=3, out_features=2, bias=False)
    assert nb.bias is None and len(nb.trainable_params()) == 1
    assert mnn.Linear(3, 2, dtype=kiln.float64).weight.dtype == kiln.float64
    with pytest.raises(TypeError, match="bias"):
        mnn.Linear(3, 2, bias=None)


def test_conv_layers():
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    conv = mnn.Conv2d(2, 3, 3, padding=1)
    assert conv.bias is not None  # PyTorch's default bias=True
    close(conv(T(x)), F.conv2d(T(x), conv.weight, conv.bias, padding=1).asnumpy(), rtol=1e-5)
    assert mnn.Conv2d(2, 4, 3, stride=2, groups=2, bias=False)(T(x)).shape == (1, 4, 2, 2)
    assert mnn.Conv2d(2, 3, (3, 1), padding=(1, 0))(T(x)).shape == (1, 3, 6, 6)
    refl = mnn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    close(refl(T(x)), F.conv2d(T(xp), refl.weight, refl.bias).asnumpy(), rtol=1e-5)
    assert mnn.Conv2d(2, 3, 3, padding="same")(T(x)).shape == (1, 3, 6, 6)
    c1 = mnn.Conv1d(2, 3, 3, padding=1, padding_mode="circular")
    x1 = RNG.standard_normal((1, 2, 5)).astype(np.float32)
    w1 = c1.weight.reshape(3, 2, 3)  # kiln.nn.Conv1d keeps MindSpore's (C_out, C_in, 1, K) weight
    close(c1(T(x1)), F.conv1d(T(np.pad(x1, ((0, 0), (0, 0), (1, 1)), mode="wrap")), w1, c1.bias).asnumpy(),
          rtol=1e-5)
    with pytest.raises(ValueError, match="padding_mode"):
        mnn.Conv2d(2, 3, 3, padding_mode="mirror")


def test_batch_norm_momentum_is_pytorchs():
    bn = mnn.BatchNorm2d(2, momentum=0.3)
    x = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
    bn.set_train(True)
    bn(T(x))
    close(bn.moving_mean, 0.3 * x.mean((0, 2, 3)), rtol=1e-5, atol=1e-6)
    bn.set_train(False)
    assert mnn.BatchNorm1d(3)(T(np.ones((2, 3), np.float32))).shape == (2, 3)
    no_track = mnn.BatchNorm3d(2, track_running_stats=False)
    no_track.set_train(False)
    y = no_track(T(RNG.standard_normal((2, 2, 2, 2, 2)).astype(np.float32))).asnumpy()
    close(y.mean((0, 2, 3, 4)), [0, 0], atol=1e-5)  # batch statistics in eval too
    with pytest.raises(ValueError, match="momentum"):
        mnn.BatchNorm2d(2, momentum=1.5)


def test_layer_norm_and_embedding():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    ln = mnn.LayerNorm((3, 4), eps=1e-5)
    m, v = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    close(ln(T(x)), (x - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-5)
    assert len(mnn.LayerNorm(4, elementwise_affine=False).trainable_params()) == 0
    assert len(mnn.LayerNorm(4, bias=False).trainable_params()) == 1
    kiln.set_seed(0)
    emb = mnn.Embedding(50, 40, padding_idx=0)
    table = emb.embedding_table.asnumpy()
    assert 0.8 < table[1:].std() < 1.2 and not table[0].any()  # N(0, 1), PyTorch's init
    w = RNG.standard_normal((5, 2)).astype(np.float32)
    fixed = mnn.Embedding(5, 2, _weight=T(w), _freeze=True)
    close(fixed(T(np.array([4, 1]))), w[[4, 1]])
    assert not fixed.trainable_params()
    with pytest.raises(ValueError, match="max_norm"):
        mnn.Embedding(5, 2, max_norm=1.0)


def test_activation_and_pool_layers():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    close(mnn.MaxPool2d(2)(T(x)), F.max_pool2d(T(x), 2).asnumpy())
    close(mnn.AvgPool2d(2, stride=1, padding=1)(T(x)), F.avg_pool2d(T(x), 2, 1, 1).asnumpy())
    close(mnn.AvgPool1d(2)(T(x[0])), x[0].reshape(2, 4, 2, 2).mean(-1), rtol=1e-5)
    close(mnn.Softmax(dim=1)(T(x)), F.softmax(T(x), 1).asnumpy())
    close(mnn.LogSoftmax()(T(X)), F.log_softmax(T(X), 1).asnumpy())
    close(mnn.GELU(approximate="tanh")(T(X)), F.gelu(T(X), "tanh").asnumpy())
    t = T(X - 3)
    assert mnn.ReLU6(inplace=True)(t) is t and t.asnumpy().min() == 0
    t = T(X - 3)
    mnn.SiLU(inplace=True)(t)
    close(t, (X - 3) / (1 + np.exp(-(X - 3))), rtol=1e-5)
    close(mnn.ELU(alpha=2.0)(T(X - 3)), np.where(X > 3, X - 3, 2 * np.expm1(X - 3)), rtol=1e-5)
    drop = mnn.Dropout(p=0.5)
    drop.set_train(False)
    close(drop(T(X)), X)
    assert mnn.PReLU(num_parameters=2, init=0.1)(T(-np.ones((1, 2, 2), np.float32))).asnumpy().max() == \
        pytest.approx(-0.1)
    with pytest.raises(ValueError, match="approximate"):
        mnn.GELU("erf")


def test_padding_layers():
    a = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    close(mnn.ZeroPad2d(1)(T(a)), np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1))))
    close(mnn.ConstantPad1d((1, 2), 3.5)(T(a)), np.pad(a, ((0, 0), (0, 0), (0, 0), (1, 2)), constant_values=3.5))
    close(mnn.ReflectionPad2d((1, 1, 2, 0))(T(a)), np.pad(a, ((0, 0), (0, 0), (2, 0), (1, 1)), mode="reflect"))
    close(mnn.ReplicationPad3d(1)(T(a)), np.pad(a, ((0, 0), (1, 1), (1, 1), (1, 1)), mode="edge"))
    close(mnn.ZeroPad3d((0, 1, 0, 0, 1, 0))(T(a)), np.pad(a, ((0, 0), (1, 0), (0, 0), (0, 1))))
    close(mnn.ReflectionPad1d(2)(T(a)), np.pad(a, ((0, 0), (0, 0), (0, 0), (2, 2)), mode="reflect"))
    with pytest.raises(TypeError, match="4 ints"):
        mnn.ZeroPad2d((1, 2, 3))
    with pytest.raises(TypeError, match="value"):
        mnn.ConstantPad2d(1, "0")


def test_other_layers():
    x = RNG.standard_normal((1, 1, 3, 3)).astype(np.float32)
    close(mnn.Hardsigmoid()(T(x)), np.clip(x / 6 + 0.5, 0, 1), rtol=1e-6)
    y = np.sign(RNG.standard_normal((1, 1, 3, 3))).astype(np.float32)
    close(mnn.SoftMarginLoss(reduction="sum")(T(x), T(y)), np.log1p(np.exp(-y * x)).sum(), rtol=1e-5)
    assert mnn.UpsamplingNearest2d(scale_factor=2)(T(x)).shape == (1, 1, 6, 6)
    close(mnn.UpsamplingNearest2d(size=(6, 6))(T(x)), x.repeat(2, 2).repeat(2, 3))
    up = mnn.UpsamplingBilinear2d(size=(5, 5))(T(x)).asnumpy()
    close(up[..., ::2, ::2], x, rtol=1e-5)  # align_corners=True keeps the corner grid
    with pytest.raises(ValueError, match="exactly one"):
        mnn.UpsamplingBilinear2d()


def test_loss_layers():
    x, y = np.array([-1., 0.5, 2.], np.float32), np.array([0., 1., 1.], np.float32)
    close(mnn.BCEWithLogitsLoss(reduction="sum")(T(x), T(y)),
          F.binary_cross_entropy_with_logits(T(x), T(y), reduction="sum").asnumpy())
    close(mnn.SmoothL1Loss()(T(x), T(y)), F.smooth_l1_loss(T(x), T(y)).asnumpy())
    logp = np.log(np.array([[0.2, 0.8]], np.float32))
    close(mnn.KLDivLoss(reduction="sum", log_target=True)(T(logp), T(logp)), 0.0, atol=1e-6)
    close(mnn.CrossEntropyLoss()(T(np.array([[1., 2.]], np.float32)), T(np.array([1], np.int32))),
          np.log1p(np.exp(-1.0)), rtol=1e-5)


# ---------------------------------------------------------------------------------------------- mint.optim

def _params(*arrays):
    return [kiln.Parameter(T(a.copy()), name=f"p{i}") for i, a in enumerate(arrays)]


def test_adamw_is_experimental_adamw():
    from kiln.experimental.optim import AdamW as ExpAdamW
    assert issubclass(mint.optim.AdamW, ExpAdamW)
    w = RNG.standard_normal(4).astype(np.float32)
    g = RNG.standard_normal(4).astype(np.float32)
    p1, p2 = _params(w), _params(w)
    mint.optim.AdamW(p1, lr=0.1)((T(g),))
    ExpAdamW(p2, lr=0.1)((T(g),))
    close(p1[0], p2[0].asnumpy())


def test_adam_is_pytorchs():
    w = RNG.standard_normal(4).astype(np.float64)
    gs = [RNG.standard_normal(4) for _ in range(3)]
    (p,) = _params(w.astype(np.float32))
    opt = mint.optim.Adam([p], lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)
    m = v = np.zeros(4)
    for t, g in enumerate(gs, 1):
        opt((T(g.astype(np.float32)),))
        g = g + 0.1 * w
        m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
        w = w - 0.01 / (1 - 0.8 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.9 ** t) + 1e-6)
    close(p, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nesterov,dampening,maximize", [(False, 0.0, False), (True, 0.0, False),
                                                         (False, 0.5, True)])
def test_sgd_is_pytorchs(nesterov, dampening, maximize):
    w = RNG.standard_normal(3)
    gs = [RNG.standard_normal(3) for _ in range(3)]
    (p,) = _params(w.astype(np.float32))
    opt = mint.optim.SGD([p], lr=0.1, momentum=0.9, dampening=dampening, weight_decay=0.01, nesterov=nesterov,
                         maximize=maximize)
    buf = None
    for g in gs:
        assert opt((T(g.astype(np.float32)),)) is True
        d = (-g if maximize else g) + 0.01 * w
        buf = d if buf is None else 0.9 * buf + (1 - dampening) * d
        w = w - 0.1 * (d + 0.9 * buf if nesterov else buf)
    close(p, w, rtol=1e-5, atol=1e-6)


def test_sgd_plain_and_errors():
    (p,) = _params(np.ones(2, np.float32))
    mint.optim.SGD([p], lr=0.5)((T(np.array([1., 2.], np.float32)),))
    close(p, [0.5, 0.0])
    with pytest.raises(ValueError, match="Nesterov"):
        mint.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="learning rate"):
        mint.optim.SGD([p], lr=-1.0)
    with pytest.raises(TypeError, match="maximize"):
        mint.optim.Adam([p], maximize=1)


def test_training_step_with_mint():
    kiln.set_seed(0)
    net = mnn.Linear(3, 1)
    opt = mint.optim.SGD(net.trainable_params(), lr=0.1)
    x = T(RNG.standard_normal((8, 3)).astype(np.float32))
    y = T(RNG.standard_normal((8, 1)).astype(np.float32))
    grad_fn = kiln.value_and_grad(lambda a, b: F.mse_loss(net(a), b), None, opt.parameters)
    losses = []
    for _ in range(20):
        loss, grads = grad_fn(x, y)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    assert all(b < a for a, b in zip(losses, losses[1:]))  # gradient descent on a least-squares loss


# ------------------------------------------------------------------ MindSpore's mint.nn parameter names

class _MintNet(nn.Cell):
    """The layers of tests/python/data/mint_nn_mindspore210.ckpt (written by MindSpore 2.10 from the same class,
    every float Parameter set to arange(n) + 0.5 in its shape)."""

    def __init__(self):
        super().__init__()
        self.bn = mnn.BatchNorm2d(3)
        self.emb = mnn.Embedding(4, 3)
        self.ln = mnn.LayerNorm(3)
        self.gn = mnn.GroupNorm(1, 3)
        self.pr = mnn.PReLU()

    def construct(self, x):
        return x


def test_mint_parameter_names_are_mindspores():
    names = [(p.name, tuple(p.shape), p.requires_grad) for p in _MintNet().get_parameters()]
    assert names == [("bn.weight", (3,), True), ("bn.bias", (3,), True), ("bn.running_mean", (3,), False),
                     ("bn.running_var", (3,), False), ("bn.num_batches_tracked", (), False),
                     ("emb.weight", (4, 3), True), ("ln.weight", (3,), True), ("ln.bias", (3,), True),
                     ("gn.weight", (3,), True), ("gn.bias", (3,), True), ("pr.weight", (1,), True)]
    bn = mnn.BatchNorm2d(3)
    assert bn.gamma is bn.weight and bn.moving_mean is bn.running_mean and bn.moving_variance is bn.running_var
    emb = mnn.Embedding(4, 3)
    assert emb.embedding_table is emb.weight


def test_mindspore_written_mint_checkpoint_loads_every_parameter(tmp_path):
    net = _MintNet()
    path = os.path.join(os.path.dirname(__file__), "data", "mint_nn_mindspore210.ckpt")
    not_loaded = kiln.load_param_into_net(net, kiln.load_checkpoint(path))
    assert not_loaded == ([], [])
    for p in net.get_parameters():
        if p.dtype == kiln.float32:
            n = int(np.prod(p.shape)) or 1
            np.testing.assert_array_equal(p.asnumpy(), np.arange(n, dtype=np.float32).reshape(p.shape) + 0.5)
    assert net.bn.num_batches_tracked.dtype == kiln.int64 and int(net.bn.num_batches_tracked.asnumpy()) == 0
    kiln.save_checkpoint(net, str(tmp_path / "k.ckpt"))
    again = _MintNet()
    assert kiln.load_param_into_net(again, kiln.load_checkpoint(str(tmp_path / "k.ckpt"))) == ([], [])
    assert sorted(again.state_dict()) == sorted(p.name for p in again.get_parameters())


@pytest.mark.parametrize("graph", [False, True])
def test_num_batches_tracked_counts_training_passes(graph):
    x = Tensor(np.random.RandomState(0).randn(4, 3, 2, 2).astype(np.float32))
    bn = mnn.BatchNorm2d(3)
    f = kiln.jit(lambda t: bn(t)) if graph else bn
    bn.set_train(True)
    f(x)
    f(x)
    assert int(bn.num_batches_tracked.asnumpy()) == 2
    bn.set_train(False)
    f(x)
    assert int(bn.num_batches_tracked.asnumpy()) == 2
    free = mnn.BatchNorm2d(3, track_running_stats=False)
    free.set_train(True)
    free(x)
    assert int(free.num_batches_tracked.asnumpy()) == 0


@pytest.mark.parametrize("kw", [dict(ceil_mode=True), dict(dilation=2), dict(return_indices=True),
                                dict(stride=1, padding=1)])
def test_mint_maxpool2d_takes_pytorch_arguments(kw):
    """mint.nn.MaxPool2d has no pad_mode: ceil_mode, dilation and return_indices work without padding (tester
    finding 12), the same as the functional form."""
    x = Tensor(np.random.RandomState(0).randn(1, 2, 5, 5).astype(np.float32))
    k = 3 if "padding" in kw else 2
    got = mnn.MaxPool2d(k, **kw)(x)
    want = F.max_pool2d(x, k, **kw)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    if kw == dict(ceil_mode=True):
        xn = x.asnumpy()
        assert got[0].shape == (1, 2, 3, 3) and got[0].asnumpy()[0, 0, 2, 2] == xn[0, 0, 4, 4]


def test_more_mint_layers_are_their_functional_forms():
    rng = np.random.RandomState(3)
    x = Tensor(rng.randn(2, 4, 3, 3).astype(np.float32))
    xn = x.asnumpy()
    np.testing.assert_allclose(mnn.Hardtanh(-0.5, 0.5)(x).asnumpy(), np.clip(xn, -0.5, 0.5))
    np.testing.assert_allclose(mnn.Hardswish()(x).asnumpy(), xn * np.clip(xn + 3, 0, 6) / 6, rtol=1e-6, atol=1e-7)
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(mnn.SELU()(x).asnumpy(), scale * np.where(xn > 0, xn, alpha * (np.exp(xn) - 1)),
                               rtol=1e-5, atol=1e-6)
    a, b = xn[:, :2], xn[:, 2:]
    np.testing.assert_allclose(mnn.GLU(1)(x).asnumpy(), a / (1 + np.exp(-b)), rtol=1e-6, atol=1e-7)
    assert mnn.PixelShuffle(2)(x).shape == (2, 1, 6, 6)
    np.testing.assert_allclose(mnn.Softshrink(0.3)(x).asnumpy(),
                               np.where(xn > 0.3, xn - 0.3, np.where(xn < -0.3, xn + 0.3, 0)), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mnn.Hardshrink(0.3)(x).asnumpy(), np.where(np.abs(xn) > 0.3, xn, 0))
    np.testing.assert_allclose(mnn.Threshold(0.1, 9.0)(x).asnumpy(), np.where(xn > 0.1, xn, 9.0))
    v = Tensor(rng.randn(1, 2, 2, 4, 4).astype(np.float32))
    np.testing.assert_allclose(mnn.AvgPool3d(2)(v).asnumpy(),
                               v.asnumpy().reshape(1, 2, 1, 2, 2, 2, 2, 2).mean((3, 5, 7)), rtol=1e-6, atol=1e-7)
    assert mnn.AdaptiveAvgPool3d(1)(v).shape == (1, 2, 1, 1, 1)
    with pytest.raises(ValueError, match="min_val"):
        mnn.Hardtanh(1.0, 0.0)
    # a layer in a compiled step: the same values
    f = kiln.jit(lambda t: mnn.GLU(1)(t) * 2)
    np.testing.assert_allclose(f(x).asnumpy(), 2 * a / (1 + np.exp(-b)), rtol=1e-6, atol=1e-7)


def test_dense_and_linear_name_the_input_size_they_expect():
    x = Tensor(np.ones((3, 10, 5), np.float32))
    with pytest.raises(ValueError, match=r"For 'Linear', the last dimension of the input must be in_features=4, "
                                         r"but got an input of shape \(3, 10, 5\)"):
        mnn.Linear(4, 2)(x)
    with pytest.raises(ValueError, match=r"For 'Dense', the last dimension of the input must be in_channels=4"):
        nn.Dense(4, 2)(x)
    with pytest.raises(ValueError, match="in_channels=4"):
        nn.Dense(4, 2)(Tensor(np.ones((3, 5), np.float32)))
