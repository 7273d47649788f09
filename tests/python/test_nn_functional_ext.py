"""The NN-functional ops of kiln/ops/nnact_func.py, nnpool_func.py, nnloss_func.py and nnsample_func.py beyond what
their op-registry rows check (values vs NumPy, gradients vs finite differences, Graph parity, special values):
values pinned against MindSpore 2.10 (CPU) where its semantics are subtle, gradient rules that are not the forward's
derivative (embedding's padding_idx / scale_grad_by_freq, straight-through gumbel_softmax, rrelu's drawn slope,
CTC's gradient through log_softmax), the Primitive / Tensor-method surfaces, the nn cells over the ops, and errors.
The MindSpore values were printed by /work/msvenv (MindSpore 2.10) on the same inputs."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, nn, ops

F32 = np.float32
X8 = np.array([-3.5, -1.0, -0.25, 0.0, 0.25, 0.5, 1.0, 3.5], F32)


def T(a, dtype=None):
    return Tensor(np.asarray(a, dtype) if dtype else np.asarray(a))


# ---------------------------------------------------------------------------------------------- activations

MS_ACT = {  # MindSpore 2.10 on X8
    "celu2": [-1.6524521112442017, -0.7869386672973633, -0.2350061982870102, 0.0, 0.25, 0.5, 1.0, 3.5],
    "selu": [-1.7050093412399292, -1.1113307476043701, -0.38889017701148987, 0.0, 0.2626752555370331,
             0.5253505110740662, 1.0507010221481323, 3.6774535179138184],
    "mish": [-0.10409574210643768, -0.30340102314949036, -0.12992693483829498, 0.0, 0.1695723980665207,
             0.37524521350860596, 0.865098237991333, 3.493990898132324],
    "hardswish": [0.0, -0.3333333432674408, -0.1145833358168602, 0.0, 0.1354166716337204, 0.2916666567325592,
                  0.6666666865348816, 3.5],
    "hardtanh": [-0.5, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0],
    "softshrink": [-3.0, -0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 3.0],
    "softmin": [0.8299370408058167, 0.06812530010938644, 0.032180119305849075, 0.02506190352141857,
                0.019518213346600533, 0.015200810506939888, 0.009219731204211712, 0.0007568032597191632],
    "tanhshrink": [-2.5018177032470703, -0.23840582370758057, -0.0050813257694244385, 0.0, 0.0050813257694244385,
                   0.037882834672927856, 0.23840582370758057, 2.5018177032470703],
    "threshold": [9.0, 9.0, 9.0, 9.0, 9.0, 0.5, 1.0, 3.5],
    "fast_gelu": [-0.009033446200191975, -0.15420423448085785, -0.09880034625530243, 0.0, 0.15119965374469757,
                  0.35038843750953674, 0.845795750617981, 3.490966558456421],
}


@pytest.mark.parametrize("name,fn", [
    ("celu2", lambda x: ops.celu(x, 2.0)), ("selu", ops.selu), ("mish", ops.mish), ("hardswish", ops.hardswish),
    ("hardtanh", lambda x: ops.hardtanh(x, -0.5, 2.0)), ("softshrink", ops.softshrink), ("softmin", ops.softmin),
    ("tanhshrink", ops.tanhshrink), ("threshold", lambda x: ops.threshold(x, 0.25, 9.0)),
    ("fast_gelu", ops.fast_gelu)])
def test_activation_values_match_mindspore(name, fn):
    np.testing.assert_allclose(fn(T(X8)).asnumpy(), MS_ACT[name], rtol=2e-6, atol=1e-7)


def test_int_inputs_follow_mindspore():
    xi = T([-2, 0, 3], np.int32)
    for fn, want in ((ops.hardtanh, [-1, 0, 1]), (ops.leaky_relu, [0, 0, 3]),
                     (lambda x: ops.threshold(x, 1, 5), [5, 5, 3])):
        r = fn(xi)
        assert r.dtype == kiln.int32
        np.testing.assert_array_equal(r.asnumpy(), want)
    r = ops.tanhshrink(xi)
    assert r.dtype == kiln.float32
    np.testing.assert_allclose(r.asnumpy(), [-1.0359723567962646, 0.0, 2.004944324493408], rtol=1e-6)
    for fn in (ops.celu, ops.selu, ops.silu, ops.mish, ops.hardshrink, ops.softsign, ops.fast_gelu, ops.softmin):
        with pytest.raises(TypeError, match="float"):
            fn(xi)


def test_activation_surfaces_and_errors():
    x = T(X8)
    np.testing.assert_array_equal(ops.CeLU(alpha=2.0)(x).asnumpy(), ops.celu(x, 2.0).asnumpy())
    np.testing.assert_array_equal(ops.HShrink(lambd=1.0)(x).asnumpy(), ops.hardshrink(x, 1.0).asnumpy())
    np.testing.assert_array_equal(x.hardshrink().asnumpy(), ops.hardshrink(x).asnumpy())
    np.testing.assert_array_equal(x.soft_shrink(0.25).asnumpy(), ops.soft_shrink(x, 0.25).asnumpy())
    assert ops.soft_shrink is ops.softshrink
    np.testing.assert_array_equal(ops.GLU(axis=0)(T(np.ones((2, 3), F32))).asnumpy(), np.full((1, 3), 0.7310586, F32))
    w = T([0.1, 0.2], F32)
    np.testing.assert_allclose(ops.PReLU()(T([[-1., 2.], [3., -4.]], F32), w).asnumpy(), [[-0.1, 2.], [3., -0.8]],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        ops.celu(x, 0.0)
    with pytest.raises(ValueError, match="lambd"):
        ops.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="even"):
        ops.glu(T(np.ones((3, 3), F32)))
    with pytest.raises(ValueError, match="weight"):
        ops.prelu(T(np.ones((2, 3), F32)), T(np.ones(2, F32)))
    with pytest.raises(TypeError, match="Tensor"):
        ops.silu([1.0, 2.0])
    with pytest.raises(ValueError, match="tau"):
        ops.gumbel_softmax(x, tau=0.0)
    with pytest.raises(ValueError, match="lower"):
        ops.rrelu(x, 0.5, 0.1)


def test_swiglu_matches_mindspore_docs_example():
    x = T([[-0.12, 0.123, 31.122], [2.1223, 4.1212121217, 0.3123]], F32)
    np.testing.assert_allclose(ops.swiglu(x, 0).asnumpy(), [[-0.11970687, 0.2690224, 9.7194719]], rtol=1e-5)


def test_rrelu_gradient_is_the_drawn_slope():
    x = T(-np.linspace(0.5, 3.0, 40).astype(F32))
    y, g = kiln.value_and_grad(lambda a: ops.sum(ops.rrelu(a)))(x)
    slope = (ops.rrelu(x) / x).asnumpy()  # a fresh draw: only the range is comparable
    assert np.all((slope >= 1 / 8) & (slope < 1 / 3))
    g = g.asnumpy()
    assert np.all((g >= 1 / 8) & (g < 1 / 3)) and len(np.unique(g)) > 10
    assert float(y.asnumpy()) < 0


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    kiln.set_seed(5)
    logits = T(np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], F32))
    y = ops.gumbel_softmax(logits, hard=True)
    v = y.asnumpy()
    assert set(np.unique(v)) <= {0.0, 1.0} and np.array_equal(v.sum(-1), [1.0, 1.0])
    cot = T(np.array([[0.3, -1.0, 2.0], [1.0, 0.5, -0.5]], F32))
    kiln.set_seed(5)
    g_hard = kiln.grad(lambda a: ops.sum(ops.gumbel_softmax(a, hard=True) * cot))(logits)
    kiln.set_seed(5)
    g_soft = kiln.grad(lambda a: ops.sum(ops.gumbel_softmax(a) * cot))(logits)
    np.testing.assert_allclose(g_hard.asnumpy(), g_soft.asnumpy(), rtol=1e-5, atol=1e-7)


def test_activation_cells_call_the_ops():
    x = T(X8)
    for cell, fn in ((nn.CELU(2.0), lambda a: ops.celu(a, 2.0)), (nn.SeLU(), ops.selu),
                     (nn.Hardtanh(-0.5, 2.0), lambda a: ops.hardtanh(a, -0.5, 2.0)), (nn.HShrink(), ops.hardshrink),
                     (nn.SoftShrink(), ops.softshrink), (nn.Softmin(), ops.softmin), (nn.Tanhshrink(), ops.tanhshrink),
                     (nn.Threshold(0.25, 9.0), lambda a: ops.threshold(a, 0.25, 9.0)), (nn.ELU(), ops.elu),
                     (nn.SiLU(), ops.silu), (nn.Mish(), ops.mish), (nn.Softsign(), ops.softsign),
                     (nn.LeakyReLU(0.2), ops.leaky_relu), (nn.FastGelu(), ops.fast_gelu), (nn.HSwish(), ops.hardswish)):
        np.testing.assert_array_equal(cell(x).asnumpy(), fn(x).asnumpy(), err_msg=type(cell).__name__)
    np.testing.assert_array_equal(nn.GLU(0)(T(np.ones((2, 2), F32))).asnumpy(), np.full((1, 2), 0.7310586, F32))
    with pytest.raises(ValueError):
        nn.CELU(0)
    with pytest.raises(ValueError):
        nn.SoftShrink(-0.1)


# ---------------------------------------------------------------------------------------------- pooling / conv

def test_max_pool3d_indices_match_mindspore():
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5, 6)).astype(F32)
    v, i = ops.max_pool3d(T(x), (2, 3, 2), (2, 2, 3), 1, 1, True, True)
    assert tuple(v.shape) == (1, 2, 3, 3, 3) and i.dtype == kiln.int64
    flat = x.reshape(1, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, i.asnumpy().reshape(1, 2, -1), 2).reshape(v.shape),
                                  v.asnumpy())
    with pytest.raises(ValueError, match="half"):
        ops.max_pool3d(T(x), 2, 1, 2)
    with pytest.raises(ValueError, match="'max_pool3d', the .dilated. kernel"):
        ops.max_pool3d(T(x), 7)
    with pytest.raises(ValueError, match="'avg_pool3d', the .dilated. kernel"):
        ops.avg_pool3d(T(x), (5, 1, 1))


def test_pooling_quirks_match_mindspore():
    a = T(np.arange(1, 9, dtype=F32).reshape(1, 1, 8))
    np.testing.assert_allclose(ops.lp_pool1d(a, 1, 3, 2, True).asnumpy(), [[[6.0, 12.0, 18.0, 22.5]]])
    np.testing.assert_allclose(ops.lp_pool2d(T(np.ones((1, 1, 3, 3), F32)), 2, 2, 2, True).asnumpy(),
                               np.full((1, 1, 2, 2), 2.0))
    y = nn.AvgPool3d(2, 2, pad_mode="same")(T(np.ones((1, 1, 3, 5, 5), F32)))
    assert tuple(y.shape) == (1, 1, 2, 3, 3) and float(y.asnumpy().min()) == 0.125
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 5)).astype(F32)
    _, i3 = ops.adaptive_max_pool3d(T(x[None]), (2, 3, 2), True)
    assert i3.dtype == kiln.int32
    y, i = ops.max_pool2d(T(x), 2, 2, return_indices=True)
    with pytest.raises(ValueError, match="indices"):
        ops.max_unpool2d(y, i, 2, 2)  # the default output (6, 4) cannot hold index 26
    u = ops.max_unpool2d(y, i, 2, 2, 0, (7, 5)).asnumpy()
    assert u.shape == (2, 3, 7, 5) and np.count_nonzero(u) == y.size
    np.testing.assert_array_equal(ops.max_unpool1d(T([[[1.0, 2.0]]], F32), T([[[1, 1]]], np.int64), 2).asnumpy(),
                                  [[[0.0, 2.0, 0.0, 0.0]]])


def test_lrn_matches_mindspore():
    x = np.array([-0.69204986, -0.2868872, 1.3645319], F32).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(ops.lrn(T(x), 2, 1.0, 0.5, 0.75).asnumpy().reshape(-1),
                               [-0.38160023, -0.15819123, 0.7524106], rtol=1e-6)
    np.testing.assert_array_equal(ops.LRN(depth_radius=2, alpha=0.5, beta=0.75)(T(x)).asnumpy(),
                                  ops.lrn(T(x), 2, 1.0, 0.5, 0.75).asnumpy())
    with pytest.raises(ValueError, match="norm_region"):
        ops.lrn(T(x), norm_region="WITHIN_CHANNEL")


def test_conv3d_layer_and_errors():
    kiln.set_seed(0)
    c = nn.Conv3d(2, 4, (2, 3, 3), has_bias=True)
    assert tuple(c.weight.shape) == (4, 2, 2, 3, 3) and tuple(c.bias.shape) == (4,)
    x = T(np.random.default_rng(2).standard_normal((1, 2, 4, 5, 5)).astype(F32))
    y = c(x)
    assert tuple(y.shape) == (1, 4, 4, 5, 5)
    np.testing.assert_array_equal(y.asnumpy(), ops.conv3d(x, c.weight, c.bias, 1, "same").asnumpy())
    assert tuple(nn.Conv3d(2, 4, 3, pad_mode="pad", padding=(1, 0, 1, 1, 0, 0))(x).shape) == (1, 4, 3, 5, 3)
    with pytest.raises(ValueError, match="padding"):
        nn.Conv3d(2, 4, 3, padding=1)
    with pytest.raises(ValueError, match="5-D"):
        c(T(np.ones((2, 4, 5, 5), F32)))
    with pytest.raises(ValueError, match="channels"):
        ops.conv3d(x, T(np.ones((4, 3, 1, 1, 1), F32)))
    g = kiln.grad(lambda a: ops.sum(c(a)))(x)
    assert tuple(g.shape) == tuple(x.shape) and np.isfinite(g.asnumpy()).all()


def test_pool_cells():
    x = T(np.random.default_rng(3).standard_normal((1, 1, 3, 5, 5)).astype(F32))
    assert tuple(nn.MaxPool3d(2, 2, pad_mode="same")(x).shape) == (1, 1, 2, 3, 3)
    v, i = nn.MaxPool3d(3, 1, pad_mode="pad", padding=1, return_indices=True)(x)
    assert tuple(v.shape) == tuple(i.shape) == (1, 1, 3, 5, 5)
    assert tuple(nn.MaxPool3d(2)(T(np.ones((1, 3, 5, 5), F32))).shape) == (1, 2, 4, 4)
    v, i = nn.MaxPool3d(2, 2, return_indices=True)(T(np.random.default_rng(4).standard_normal((1, 1, 4, 4, 4))
                                                    .astype(F32)))
    assert tuple(nn.MaxUnpool3d(2)(v, i).shape) == (1, 1, 4, 4, 4)
    np.testing.assert_array_equal(nn.AdaptiveAvgPool3d(2)(x).asnumpy(), ops.adaptive_avg_pool3d(x, 2).asnumpy())
    np.testing.assert_array_equal(ops.AdaptiveAvgPool3D(output_size=2)(x).asnumpy(),
                                  ops.adaptive_avg_pool3d(x, 2).asnumpy())
    x4 = T(np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(F32))
    v, i = nn.AdaptiveMaxPool2d(2, True)(x4)
    assert i.dtype == kiln.int64
    assert tuple(nn.LPPool2d(2, 2)(x4).shape) == (1, 2, 2, 2)
    np.testing.assert_array_equal(nn.LRN()(x4).asnumpy(), ops.lrn(x4).asnumpy())


# ---------------------------------------------------------------------------------------------- losses

def test_loss_values_match_mindspore():
    rng = np.random.RandomState(0)
    a, b = rng.randn(3, 4).astype(F32), rng.randn(3, 4).astype(F32)
    A, B = T(a), T(b)
    np.testing.assert_allclose(ops.cosine_similarity(A, B).asnumpy(), [0.89065, 0.83748, -0.09681], atol=1e-5)
    np.testing.assert_allclose(ops.cosine_similarity(T([[1e-5, 0]], F32), T([[1e-5, 0]], F32)).asnumpy(), [0.01],
                               rtol=1e-5)
    y = T([1, -1, 1], np.int32)
    np.testing.assert_allclose(ops.cosine_embedding_loss(A, B, y, 0.2, "none").asnumpy(), [0.10935, 0.63748, 1.09681],
                               atol=1e-5)
    assert np.isnan(ops.cosine_embedding_loss(T(np.zeros((1, 2), F32)), T(np.ones((1, 2), F32)), T([1], np.int32),
                                              0.0, "none").asnumpy()).all()
    t = T([1, 0, 3], np.int64)
    np.testing.assert_allclose(ops.multi_margin_loss(A, t, reduction="none").asnumpy(), [1.6958, 0.02063, 0.0],
                               atol=1e-4)
    np.testing.assert_allclose(float(ops.multi_margin_loss(A, t).asnumpy()), 0.57215, atol=1e-5)
    ys = T((rng.rand(3, 4) > 0.5).astype(F32))
    w = T([1, 2, 3, 4], F32)
    np.testing.assert_array_equal(ops.multilabel_soft_margin_loss(A, ys, w, "sum").asnumpy(),
                                  nn.MultiLabelSoftMarginLoss(w, "sum")(A, ys).asnumpy())


def test_gaussian_nll_clamps_the_variance_as_mindspore():
    rng = np.random.RandomState(0)
    a, b = T(rng.randn(3, 4).astype(F32)), T(rng.randn(3, 4).astype(F32))
    small = ops.gaussian_nll_loss(a, b, T(np.full((3, 4), 1e-9, F32)), reduction="none").asnumpy()
    neg = ops.gaussian_nll_loss(a, b, T(np.full((3, 4), -2.0, F32)), reduction="none").asnumpy()
    np.testing.assert_array_equal(small, neg)
    g = kiln.grad(lambda v: ops.gaussian_nll_loss(a, b, v), grad_position=0)(T(np.full((3, 4), -2.0, F32)))
    np.testing.assert_array_equal(g.asnumpy(), 0.0)
    with pytest.raises(ValueError, match="var"):
        ops.gaussian_nll_loss(a, b, T(np.ones((2, 4), F32)))
    with pytest.raises(ValueError, match="eps"):
        ops.gaussian_nll_loss(a, b, T(np.ones((3, 4), F32)), eps=0.0)


def _ctc_inputs():
    rng = np.random.RandomState(0)
    lp = np.log(rng.dirichlet(np.ones(4), size=(5, 2))).astype(F32)
    return lp, np.array([[1, 2, 2], [3, 1, 0]], np.int32), np.array([5, 4], np.int32), np.array([3, 2], np.int32)


def test_ctc_loss_matches_mindspore():
    lp, tg, il, tl = _ctc_inputs()
    loss, alpha = ops.ctc_loss(T(lp), T(tg), T(il), T(tl), reduction="none")
    np.testing.assert_allclose(loss.asnumpy(), [10.65553, 2.2844296], rtol=1e-5)
    assert tuple(alpha.shape) == (2, 5, 7)
    ninf = -np.inf
    np.testing.assert_allclose(alpha.asnumpy()[1], [
        [-2.0749, -0.6798, ninf, ninf, ninf, ninf, ninf], [-3.5315, -4.1352, -2.1365, -1.0066, ninf, ninf, ninf],
        [-4.2110, -4.7052, -2.6889, -2.2471, -1.6861, ninf, ninf],
        [-5.6364, -4.4585, -3.9893, -3.4456, -2.66, ninf, ninf],
        [ninf] * 7], atol=1e-4)
    np.testing.assert_allclose(float(ops.ctc_loss(T(lp), T(tg), T(il), T(tl))[0].asnumpy()), 2.3470292, rtol=1e-6)
    np.testing.assert_allclose(float(ops.ctc_loss(T(lp), T(tg), T(il), T(tl), reduction="sum")[0].asnumpy()),
                               12.93996, rtol=1e-6)
    np.testing.assert_allclose(ops.ctc_loss(T(lp), T(tg), T(il), T(tl), blank=3, reduction="none")[0].asnumpy(),
                               [6.9938, 2.3594], atol=1e-4)
    np.testing.assert_allclose(ops.ctc_loss(T(lp), T(tg), T(il), T([0, 2], np.int32), reduction="none")[0].asnumpy(),
                               [12.6256, 2.2844], atol=1e-4)
    imp = ops.ctc_loss(T(lp), T(np.ones((2, 3), np.int32)), T([3, 5], np.int32), T([3, 3], np.int32),
                       reduction="none")[0].asnumpy()
    assert imp[0] == np.inf and abs(imp[1] - 7.6978) < 1e-3
    zi = ops.ctc_loss(T(lp), T(np.ones((2, 3), np.int32)), T([3, 5], np.int32), T([3, 3], np.int32),
                      reduction="none", zero_infinity=True)[0].asnumpy()
    assert zi[0] == 0.0  # MindSpore's documented zero_infinity (its CPU kernel still returns inf here)


def test_ctc_gradient_through_log_softmax_is_mindsporess():
    """MindSpore returns exp(log_probs) − γ as the gradient w.r.t. normalized log_probs; through a log_softmax (the
    gradient w.r.t. the logits) that equals autodiff's exact derivative. Values: MindSpore 2.10's gradient for
    sample 0 (reduction 'mean'), whose log_probs are already normalized (log_softmax is the identity on them)."""
    lp, tg, il, tl = _ctc_inputs()
    g = kiln.grad(lambda z: ops.ctc_loss(ops.log_softmax(z, -1), T(tg), T(il), T(tl))[0])(T(lp))
    np.testing.assert_allclose(g.asnumpy()[:, 0], [
        [0.0275, -0.1032, 0.0409, 0.0349], [0.0061, -0.0069, -0.0197, 0.0205], [-0.0219, 0.0556, -0.0973, 0.0635],
        [-0.1397, 0.0406, -0.0159, 0.115], [0.0204, 0.0576, -0.144, 0.0659]], atol=1e-4)
    # an impossible sample with zero_infinity contributes a zero (finite) gradient
    gz = kiln.grad(lambda z: ops.ctc_loss(z, T(np.ones((2, 3), np.int32)), T([3, 5], np.int32), T([3, 3], np.int32),
                                          zero_infinity=True)[0])(T(lp)).asnumpy()
    assert np.isfinite(gz).all() and np.all(gz[:, 0] == 0)


def test_ctc_errors_and_cell():
    lp, tg, il, tl = _ctc_inputs()
    with pytest.raises(ValueError, match="input_lengths"):
        ops.ctc_loss(T(lp), T(tg), T([6, 4], np.int32), T(tl))
    with pytest.raises(ValueError, match="targets"):
        ops.ctc_loss(T(lp), T([[1, 9, 2], [3, 1, 0]], np.int32), T(il), T(tl))
    with pytest.raises(ValueError, match="blank"):
        ops.ctc_loss(T(lp), T(tg), T(il), T(tl), blank=4)
    with pytest.raises(TypeError, match="float"):
        ops.ctc_loss(T(lp.astype(np.int32)), T(tg), T(il), T(tl))
    np.testing.assert_allclose(nn.CTCLoss(reduction="none")(T(lp), T(tg), T(il), T(tl)).asnumpy(),
                               [10.65553, 2.2844296], rtol=1e-5)
    single = nn.CTCLoss(reduction="none")(T(lp[:, 1]), T(tg[1, :2]), T(il[1:]), T(tl[1:]))
    assert single.ndim == 0 and abs(float(single.asnumpy()) - 2.2844296) < 1e-5


def test_triplet_and_multilabel_margin_closed_forms():
    a = T([[0.0, 0.0]], F32)
    p = T([[3.0, 4.0]], F32)
    n = T([[1.0, 0.0]], F32)
    np.testing.assert_allclose(ops.triplet_margin_loss(a, p, n, eps=0.0).asnumpy(), 5.0 - 1.0 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(ops.triplet_margin_loss(a, p, n, eps=0.0, swap=True).asnumpy(), 5.0, rtol=1e-6)
    np.testing.assert_allclose(nn.TripletMarginLoss(margin=2.0, eps=0.0)(a, p, n).asnumpy(), 6.0, rtol=1e-6)
    x = T([[0.1, 0.2, 0.4, 0.8]], F32)
    # PyTorch's documented example: targets 3, 0 (then −1) → 0.85
    np.testing.assert_allclose(ops.multilabel_margin_loss(x, T([[3, 0, -1, 1]], np.int32)).asnumpy(), 0.85,
                               rtol=1e-6)
    with pytest.raises(ValueError, match="target"):
        ops.multilabel_margin_loss(x, T([[3, 4, -1, 1]], np.int32))


def test_dense_and_embedding():
    x, w, b = T(np.ones((2, 3), F32)), T(np.arange(12, dtype=F32).reshape(4, 3)), T(np.ones(4, F32))
    np.testing.assert_array_equal(ops.dense(x, w, b).asnumpy(), np.ones((2, 3)) @ np.arange(12).reshape(4, 3).T + 1)
    np.testing.assert_array_equal(ops.Dense()(x, w, b).asnumpy(), ops.dense(x, w, b).asnumpy())
    with pytest.raises(ValueError, match="weight"):
        ops.dense(x, T(np.ones((4, 2), F32)))
    table = np.arange(18, dtype=F32).reshape(6, 3) / 10
    idx = T([1, 5, 1, 0], np.int64)
    cot = T(np.arange(12, dtype=F32).reshape(4, 3))
    g = kiln.grad(lambda tw: ops.sum(ops.embedding(idx, tw, padding_idx=5, scale_grad_by_freq=True) * cot))(T(table))
    want = np.zeros((6, 3), F32)
    want[1] = (cot.asnumpy()[0] + cot.asnumpy()[2]) / 2  # index 1 occurs twice
    want[0] = cot.asnumpy()[3]
    np.testing.assert_allclose(g.asnumpy(), want)  # row 5 (padding) gets nothing
    wt = kiln.Parameter(T(table.copy()), name="emb_table")
    out = ops.embedding(T([[0, 4], [2, 2]], np.int32), wt, max_norm=0.5)
    norms = np.linalg.norm(wt.asnumpy(), axis=1)
    assert np.all(norms[[0, 2, 4]] <= 0.5 + 1e-6) and np.isclose(norms[5], np.linalg.norm(table[5]))
    np.testing.assert_allclose(out.asnumpy()[0, 1], wt.asnumpy()[4], rtol=1e-6)
    with pytest.raises(ValueError, match="input"):
        ops.embedding(T([[0, 7]], np.int32), T(table))


def test_loss_cells():
    rng = np.random.RandomState(1)
    a, b, c = (T(rng.randn(3, 4).astype(F32)) for _ in range(3))
    y = T([1, -1, 1], np.int32)
    np.testing.assert_array_equal(nn.CosineEmbeddingLoss(0.1)(a, b, y).asnumpy(),
                                  ops.cosine_embedding_loss(a, b, y, 0.1).asnumpy())
    v = T(np.abs(rng.randn(3, 4)).astype(F32))
    np.testing.assert_array_equal(nn.GaussianNLLLoss(full=True)(a, b, v).asnumpy(),
                                  ops.gaussian_nll_loss(a, b, v, True).asnumpy())
    t = T([0, 3, 2], np.int64)
    np.testing.assert_array_equal(nn.MultiMarginLoss(p=2)(a, t).asnumpy(), ops.multi_margin_loss(a, t, 2).asnumpy())
    sgn = T(np.sign(rng.randn(3, 4)).astype(F32))
    np.testing.assert_array_equal(nn.SoftMarginLoss("sum")(a, sgn).asnumpy(),
                                  ops.soft_margin_loss(a, sgn, "sum").asnumpy())
    with pytest.raises(ValueError, match="margin"):
        nn.CosineEmbeddingLoss(2.0)
    with pytest.raises(ValueError, match="reduction"):
        nn.MultilabelMarginLoss("avg")


# ---------------------------------------------------------------------------------------------- sampling

def test_grid_sample_nearest_rounds_halves_away_as_mindspore():
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 5)).astype(F32)
    g = np.array([[[[0.25, -0.25], [1.0, -1.0], [0.2, 0.6]]]], F32)  # x = 2.5 / 4.5 / 2.5 (align_corners False)
    got = ops.grid_sample(T(x), T(g), "nearest", "zeros", True).asnumpy().reshape(-1)
    assert got[0] == x[0, 0, 1, 3]  # (x, y) = (2.5, 1.125) → column 3
    got = ops.grid_sample(T(x), T(g), "nearest", "zeros", False).asnumpy().reshape(-1)
    assert got[1] == 0.0 and got[2] == x[0, 0, 3, 3]  # 4.5 → 5 (outside); (2.5, 2.7) → (3, 3)
    nan_grid = T(np.full((1, 1, 1, 2), np.nan, F32))
    assert ops.grid_sample(T(x), nan_grid).asnumpy().reshape(-1)[0] == 0.0
    with pytest.raises(ValueError, match="4-D .* or 5-D"):
        ops.grid_sample(T(np.ones((1, 2, 2), F32)), T(np.zeros((1, 1, 2), F32)))
    # 5-D input (GridSampler3D, since stop 34): the centre of a volume of ones
    assert ops.grid_sample(T(np.ones((1, 1, 2, 2, 2), F32)), T(np.zeros((1, 1, 1, 1, 3), F32))).asnumpy().ravel() \
        .tolist() == [1.0]
    with pytest.raises(ValueError, match="padding_mode"):
        ops.grid_sample(T(x), T(g), padding_mode="circular")


def test_affine_grid_identity_and_primitive():
    theta = T(np.array([[[1, 0, 0], [0, 1, 0]]], F32))
    grid = ops.affine_grid(theta, (1, 1, 2, 3), True).asnumpy()
    np.testing.assert_allclose(grid[0, :, :, 0], [[-1, 0, 1], [-1, 0, 1]])
    np.testing.assert_allclose(grid[0, :, :, 1], [[-1, -1, -1], [1, 1, 1]])
    np.testing.assert_array_equal(ops.AffineGrid(align_corners=True)(theta, (1, 1, 2, 3)).asnumpy(), grid)
    x = T(np.random.default_rng(1).standard_normal((1, 2, 3, 4)).astype(F32))
    same = ops.grid_sample(x, ops.affine_grid(theta, (1, 2, 3, 4)), align_corners=False)
    np.testing.assert_allclose(same.asnumpy(), x.asnumpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="theta"):
        ops.affine_grid(theta, (2, 1, 2, 3))
    assert tuple(ops.upsample(x, size=(6, 8), mode="bilinear").shape) == (1, 2, 6, 8)


def test_graph_mode_cell(graph_mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3d(1, 2, 2, pad_mode="valid")
            self.pool = nn.MaxPool3d(2, 1)
            self.act = nn.CELU()

        def construct(self, x):
            return self.act(self.pool(self.conv(x)))

    kiln.set_seed(1)
    net = Net()
    x = T(np.random.default_rng(6).standard_normal((1, 1, 4, 4, 4)).astype(F32))
    y = net(x)
    kiln.set_context(mode=kiln.PYNATIVE_MODE)
    np.testing.assert_allclose(y.asnumpy(), net(x).asnumpy(), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------- misc

def test_channel_shuffle_bidense_dropout1d():
    x = T(np.arange(2 * 4 * 2 * 2, dtype=F32).reshape(2, 4, 2, 2))
    np.testing.assert_array_equal(ops.channel_shuffle(x, 2).asnumpy()[0, :, 0, 0], [0, 8, 4, 12])  # MindSpore's
    np.testing.assert_array_equal(ops.ChannelShuffle(group=2)(x).asnumpy(), nn.ChannelShuffle(2)(x).asnumpy())
    with pytest.raises(ValueError, match="groups"):
        ops.channel_shuffle(x, 3)
    x1, x2 = T(np.arange(6, dtype=F32).reshape(2, 3)), T(np.arange(8, dtype=F32).reshape(2, 4) / 3)
    w, b = T(np.arange(24, dtype=F32).reshape(2, 3, 4) / 10), T([1.0, -1.0], F32)
    np.testing.assert_allclose(ops.bidense(x1, x2, w, b).asnumpy(), [[6.4, 11.599999], [57.266666, 160.86667]],
                               rtol=1e-6)  # MindSpore 2.10's values
    cell = nn.BiDense(3, 4, 2)
    assert tuple(cell.weight.shape) == (2, 3, 4) and tuple(cell(x1, x2).shape) == (2, 2)
    with pytest.raises(ValueError, match="shapes"):
        ops.bidense(x1, x1, w)
    kiln.set_seed(1)
    y = ops.dropout1d(T(np.ones((2, 8, 5), F32)), 0.5).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and np.all(y.min(-1) == y.max(-1))  # whole channels
    d = nn.Dropout1d(0.5)
    d.set_train(False)
    np.testing.assert_array_equal(d(T(np.ones((2, 8, 5), F32))).asnumpy(), 1.0)
    with pytest.raises(ValueError, match="2-D"):
        ops.dropout1d(T(np.ones((2, 2, 2, 2), F32)))


def test_rms_norm_docs_example_and_errors():
    x = T([[1, 2, 3], [1, 2, 3]], F32)
    y, rstd = ops.rms_norm(x, T(np.ones(3, F32)))
    np.testing.assert_allclose(y.asnumpy(), [[0.46290997, 0.92581993, 1.3887299]] * 2, rtol=1e-6)
    np.testing.assert_allclose(rstd.asnumpy(), [[0.46290997]] * 2, rtol=1e-6)
    y2, _, s = ops.add_rms_norm(x * 0.5, x * 0.5, T(np.ones(3, F32)))
    np.testing.assert_allclose(y2.asnumpy(), y.asnumpy(), rtol=1e-6)
    np.testing.assert_array_equal(s.asnumpy(), x.asnumpy())
    h = T(np.array([[1, 2, 3]], np.float16))
    yh, rh = ops.rms_norm(h, T(np.ones(3, np.float16)))
    assert yh.dtype == kiln.float16 and rh.dtype == kiln.float32
    with pytest.raises(ValueError, match="gamma"):
        ops.rms_norm(x, T(np.ones(2, F32)))
    with pytest.raises(ValueError, match="epsilon"):
        ops.rms_norm(x, T(np.ones(3, F32)), 0.0)


def test_conv3d_transpose_matches_mindspore_and_layer():
    rng = np.random.RandomState(0)
    x, w = rng.randn(1, 4, 3, 4, 3).astype(F32), rng.randn(4, 3, 2, 3, 2).astype(F32)
    for kw, shape, total in ((dict(), (1, 3, 4, 6, 4), -47.263), (dict(pad_mode="same", stride=2), (1, 3, 6, 8, 6),
                                                                   -31.292),
                             (dict(pad_mode="pad", padding=(1, 0, 1, 0, 0, 1), stride=(2, 1, 2), dilation=(1, 2, 1)),
                              (1, 3, 5, 7, 5), -145.201),
                             (dict(stride=2, output_padding=1, pad_mode="pad", padding=1), (1, 3, 5, 8, 5), -60.176)):
        r = ops.conv3d_transpose(T(x), T(w), **kw).asnumpy()  # shapes and sums: MindSpore 2.10's
        assert r.shape == shape and abs(r.sum() - total) < 2e-3, (kw, r.shape, r.sum())
    c = nn.Conv3dTranspose(4, 3, 2, stride=2, has_bias=True)
    assert tuple(c.weight.shape) == (4, 3, 2, 2, 2) and tuple(c.bias.shape) == (3,)
    y = c(T(x))
    assert tuple(y.shape) == (1, 3, 6, 8, 6)
    np.testing.assert_allclose(y.asnumpy(), ops.conv3d_transpose(T(x), c.weight, "same", 0, 2).asnumpy()
                               + c.bias.asnumpy().reshape(1, -1, 1, 1, 1), rtol=1e-6)
    with pytest.raises(ValueError, match="padding"):
        ops.conv3d_transpose(T(x), T(w), padding=1)
