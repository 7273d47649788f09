"""Layers, activations, initializers and losses against NumPy; loss gradients against float64 finite differences
(MindSpore behaviour: ../shared/reference/mindspore_api.md §4, initializers §1.5)."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops
from kiln.common import initializer as init

RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------------------------------------- Dense
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5), (2, 1, 3, 5)])
@pytest.mark.parametrize("has_bias", [True, False])
def test_dense_forward_matches_numpy(shape, has_bias):
    d = nn.Dense(5, 7, has_bias=has_bias)
    x = randn(*shape)
    w = d.weight.asnumpy()
    want = x.reshape(-1, 5) @ w.T
    if has_bias:
        want = want + d.bias.asnumpy()
    got = d(Tensor(x))
    assert got.shape == shape[:-1] + (7,)
    np.testing.assert_allclose(got.asnumpy(), want.reshape(shape[:-1] + (7,)), rtol=1e-5, atol=1e-6)


def test_dense_activation_and_dtype():
    d = nn.Dense(3, 4, activation="relu", dtype=ms.float64)
    assert d.weight.dtype == ms.float64
    x = randn(6, 3, dtype=np.float64)
    want = np.maximum(x @ d.weight.asnumpy().T + d.bias.asnumpy(), 0)
    np.testing.assert_allclose(d(Tensor(x)).asnumpy(), want, rtol=1e-12)
    d2 = nn.Dense(3, 4, activation=nn.Sigmoid())
    x32 = randn(2, 3)
    want = 1 / (1 + np.exp(-(x32 @ d2.weight.asnumpy().T + d2.bias.asnumpy())))
    np.testing.assert_allclose(d2(Tensor(x32)).asnumpy(), want, rtol=1e-5)


def test_dense_default_init_bounds_and_seed():
    ms.set_seed(3)
    d = nn.Dense(100, 50)
    bound = 1 / math.sqrt(100)
    w, b = d.weight.asnumpy(), d.bias.asnumpy()
    assert w.shape == (50, 100) and b.shape == (50,)
    assert w.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform over the whole interval (not a narrower distribution)
    assert np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    ms.set_seed(3)
    d2 = nn.Dense(100, 50)
    np.testing.assert_array_equal(d2.weight.asnumpy(), w)
    np.testing.assert_array_equal(d2.bias.asnumpy(), b)
    d3 = nn.Dense(100, 50)
    assert not np.array_equal(d3.weight.asnumpy(), w)


def test_dense_explicit_inits_and_errors():
    d = nn.Dense(3, 2, weight_init="zeros", bias_init="ones")
    np.testing.assert_array_equal(d.weight.asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(d.bias.asnumpy(), np.ones(2))
    wt = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    d = nn.Dense(3, 2, weight_init=wt, bias_init=Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(d.weight.asnumpy(), wt.asnumpy())
    with pytest.raises(ValueError, match="weight init shape error"):
        nn.Dense(3, 2, weight_init=Tensor(np.zeros((3, 2), np.float32)))
    with pytest.raises(ValueError, match="bias init shape error"):
        nn.Dense(3, 2, bias_init=Tensor(np.zeros(3, np.float32)))
    with pytest.raises(ValueError):
        nn.Dense(0, 2)
    with pytest.raises(TypeError):
        nn.Dense(2.0, 2)
    with pytest.raises(TypeError):
        nn.Dense(2, 2, has_bias=1)
    with pytest.raises(TypeError):
        nn.Dense(2, 2, activation=3)
    with pytest.raises(KeyError):
        nn.Dense(2, 2, activation="nope")


def test_dense_rank1_input_rejected():
    d = nn.Dense(3, 2)
    with pytest.raises(ValueError) as e:
        d(Tensor(np.ones(3, np.float32)))
    assert str(e.value) == "For 'Dense', the dimension of 'x' should not be less than 2, but got 1."


# ---------------------------------------------------------------------------------------------- initializers
@pytest.mark.parametrize("name", ["zeros", "zero", "ones", "One", "normal", "uniform", "he_uniform", "HeUniform",
                                  "he_normal", "xavier_uniform", "xavier_normal", "truncatednormal", "orthogonal",
                                  "variancescaling", "identity"])
def test_initializer_names_shape_dtype(name):
    t = init.initializer(name, [6, 4], ms.float32)
    assert t.shape == (6, 4) and t.dtype == ms.float32
    assert np.all(np.isfinite(t.asnumpy()))


def test_initializer_values_and_distributions():
    np.testing.assert_array_equal(init.initializer("ones", (2, 3), ms.float16).asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(init.initializer(2.5, 3).asnumpy(), np.full(3, 2.5, np.float32))
    np.testing.assert_array_equal(init.initializer(init.Constant(4), [2], ms.int32).asnumpy(), [4, 4])
    assert init.initializer(0, [1], ms.int32).dtype == ms.int32
    n = init.initializer(init.Normal(sigma=2.0, mean=1.0), (200, 100)).asnumpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    u = init.initializer(init.Uniform(scale=0.5), (200, 100)).asnumpy()
    assert u.min() >= -0.5 and u.max() <= 0.5 and u.max() > 0.49
    xu = init.initializer(init.XavierUniform(), (30, 20)).asnumpy()
    assert np.abs(xu).max() <= math.sqrt(6 / 50)
    hn = init.initializer(init.HeNormal(mode="fan_out", nonlinearity="relu"), (400, 300)).asnumpy()
    assert abs(hn.std() - math.sqrt(2) / math.sqrt(400)) < 0.003
    tn = init.initializer(init.TruncatedNormal(sigma=1.0), (100, 100)).asnumpy()
    assert tn.min() >= -2.0 and tn.max() <= 2.0 and abs(tn.std() - 0.88) < 0.03
    o = init.initializer("orthogonal", (5, 5), ms.float64).asnumpy()
    np.testing.assert_allclose(o @ o.T, np.eye(5), atol=1e-12)


def test_initializer_reproducible_with_set_seed():
    ms.set_seed(7)
    a = init.initializer("normal", (5, 5)).asnumpy()
    ms.set_seed(7)
    b = init.initializer("normal", (5, 5)).asnumpy()
    np.testing.assert_array_equal(a, b)
    np.random.seed(7)
    c = init.initializer("normal", (5, 5)).asnumpy()
    np.testing.assert_array_equal(a, c)


def test_initializer_errors():
    t = Tensor(np.zeros((2, 3), np.float32))
    assert init.initializer(t, (2, 3)) is t
    with pytest.raises(ValueError, match="should be same as the argument 'shape'"):
        init.initializer(t, (3, 2))
    with pytest.raises(ValueError, match="was not found"):
        init.initializer("bogus", (2,))
    with pytest.raises(TypeError):
        init.initializer(object(), (2,))
    with pytest.raises(ValueError):
        init.initializer("ones", (2, -1))
    with pytest.raises(ValueError):
        init.initializer("he_uniform", (5,))  # fan needs 2 dims
    with pytest.raises(ValueError):
        init.initializer(init.HeUniform(mode="fan_x"), (2, 2))


def test_tensor_init_argument_uses_initializer():
    t = Tensor(shape=(2, 2), dtype=ms.float32, init=init.One())
    np.testing.assert_array_equal(t.asnumpy(), np.ones((2, 2)))


# ---------------------------------------------------------------------------------------------- activations
def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("cell,ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.GELU(), _gelu_tanh),
    (nn.GELU(approximate=False), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.Softmax(), _softmax),
    (nn.Softmax(axis=0), lambda x: _softmax(x, 0)),
    (nn.LogSoftmax(), lambda x: np.log(_softmax(x))),
    (nn.LeakyReLU(), lambda x: np.where(x >= 0, x, 0.2 * x)),
    (nn.LeakyReLU(alpha=0.05), lambda x: np.where(x >= 0, x, 0.05 * x)),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.exp(np.minimum(x, 0)) - 1)),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.HSwish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Identity(), lambda x: x),
])
def test_activations_match_numpy(cell, ref):
    x = randn(4, 5) * 4
    np.testing.assert_allclose(cell(Tensor(x)).asnumpy(), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_get_activation():
    assert isinstance(nn.get_activation("relu"), nn.ReLU)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError):
        nn.get_activation("relux")


# --------------------------------------------------------------------------------------- Flatten / Dropout
def test_flatten():
    x = Tensor(randn(2, 3, 4, 5))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, -1)(x).shape == (120,)
    assert nn.Flatten(1, 2)(x).shape == (2, 12, 5)
    np.testing.assert_array_equal(nn.Flatten()(x).asnumpy(), x.asnumpy().reshape(2, 60))
    with pytest.raises(ValueError):
        nn.Flatten(2, 1)(x)
    with pytest.raises(ValueError):
        nn.Flatten(5)(x)


def test_dropout():
    x = Tensor(np.ones((100, 100), np.float32))
    d = nn.Dropout(p=0.25)
    assert repr(d) == "Dropout(p=0.25)"
    assert d(x) is x  # eval mode: identity
    d.set_train()
    ms.set_seed(5)
    y = d(x).asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    ms.set_seed(5)
    np.testing.assert_array_equal(d(x).asnumpy(), y)
    assert nn.Dropout(keep_prob=0.9).keep_prob == 0.9
    with pytest.raises(ValueError):
        nn.Dropout(p=1.0)
    with pytest.raises(ValueError):
        nn.Dropout(keep_prob=0.0)
    with pytest.raises(TypeError):
        nn.Dropout(keep_prob=1)


# ---------------------------------------------------------------------------------------------------- losses
def _reduce(x, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1(reduction):
    a, b = randn(4, 3), randn(4, 3)
    got = nn.MSELoss(reduction)(Tensor(a), Tensor(b))
    want = _reduce((a - b) ** 2, reduction)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    got = nn.L1Loss(reduction=reduction)(Tensor(a), Tensor(b[:1]))  # broadcasting
    np.testing.assert_allclose(got.asnumpy(), _reduce(np.abs(a - b[:1]), reduction), rtol=1e-5)


def test_loss_validation_and_dtypes():
    with pytest.raises(ValueError) as e:
        nn.MSELoss("avg")
    assert str(e.value) == "For 'MSELoss', the 'reduction' must be in ['mean', 'sum', 'none'], but got avg."
    with pytest.raises(TypeError):
        nn.MSELoss()(np.ones(2), Tensor(np.ones(2, np.float32)))
    a16 = Tensor(np.array([1.0, 2.0], np.float16))
    out = nn.MSELoss()(a16, Tensor(np.array([0.0, 0.0], np.float16)))
    assert out.dtype == ms.float16 and float(out) == 2.5
    out64 = nn.MSELoss()(Tensor(np.array([1.0, 3.0])), Tensor(np.array([0.0, 0.0])))
    assert out64.dtype == ms.float64 and out64.shape == ()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1(reduction):
    a, b = randn(5, 4) * 2, randn(5, 4)
    d = np.abs(a - b)
    want = _reduce(np.where(d < 0.5, 0.5 * d ** 2 / 0.5, d - 0.25), reduction)
    got = nn.SmoothL1Loss(beta=0.5, reduction=reduction)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert nn.SmoothL1Loss().reduction == "none"
    with pytest.raises(TypeError):
        nn.SmoothL1Loss(beta=1)
    with pytest.raises(ValueError):
        nn.SmoothL1Loss(beta=0.0)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_softmax_cross_entropy_with_logits(reduction):
    logits = randn(6, 5)
    labels = RNG.integers(0, 5, 6)
    onehot = np.eye(5, dtype=np.float32)[labels]
    want = _reduce(-(onehot * _log_softmax(logits.astype(np.float64))).sum(-1), reduction)
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)
    np.testing.assert_allclose(sparse(Tensor(logits), Tensor(labels.astype(np.int32))).asnumpy(), want, rtol=1e-5)
    dense = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)
    np.testing.assert_allclose(dense(Tensor(logits), Tensor(onehot)).asnumpy(), want, rtol=1e-5)
    assert nn.SoftmaxCrossEntropyWithLogits().reduction == "none"


def _ce_indices_ref(logits, target, weight, ignore_index, reduction, eps, axis=1):
    """NumPy reference of MindSpore's cross_entropy with class-index targets (logits classes on `axis`)."""
    logp = _log_softmax(logits, axis)
    logp = np.moveaxis(logp, axis, -1).reshape(-1, logp.shape[axis])
    t = target.reshape(-1)
    c = logp.shape[1]
    w = np.ones(c) if weight is None else weight
    keep = t != ignore_index
    tc = np.where(keep, t, 0)
    loss = -w[tc] * logp[np.arange(len(t)), tc] * keep
    wsum = (w[tc] * keep).sum()
    smooth = -(logp * w).sum(1) * keep
    if reduction == "mean":  # both terms over Σ w_{y_n} of the non-ignored n (PyTorch's and MindSpore's formula)
        loss, smooth = loss.sum() / wsum, smooth.sum() / wsum
    elif reduction == "sum":
        loss, smooth = loss.sum(), smooth.sum()
    else:
        loss, smooth = loss.reshape(target.shape), smooth.reshape(target.shape)
    return (1 - eps) * loss + eps / c * smooth


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_cross_entropy_class_indices(reduction, weighted, eps):
    logits = randn(8, 4).astype(np.float64)
    target = RNG.integers(0, 4, 8)
    target[2] = -100
    weight = np.array([0.5, 1.0, 2.0, 1.5]) if weighted else None
    loss = nn.CrossEntropyLoss(weight=None if weight is None else Tensor(weight), reduction=reduction,
                               label_smoothing=eps)
    got = loss(Tensor(logits), Tensor(target.astype(np.int32)))
    want = _ce_indices_ref(logits, target, weight, -100, reduction, eps)
    # rtol 1e-7, not 1e-10: Kiln turns Python float scalars (here 1 - eps) into Float32 weak tensors.
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-7)


def test_cross_entropy_ignore_index_in_range_and_spatial():
    logits = randn(2, 3, 4).astype(np.float64)  # (N, C, d)
    target = RNG.integers(0, 3, (2, 4))
    got = nn.CrossEntropyLoss(ignore_index=1)(Tensor(logits), Tensor(target))
    np.testing.assert_allclose(got.asnumpy(), _ce_indices_ref(logits, target, None, 1, "mean", 0.0), rtol=1e-10)
    got = nn.CrossEntropyLoss(reduction="none")(Tensor(logits), Tensor(target))
    assert got.shape == (2, 4)
    np.testing.assert_allclose(got.asnumpy(), _ce_indices_ref(logits, target, None, -100, "none", 0.0),
                               rtol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction):
    logits = randn(5, 3).astype(np.float64)
    probs = _softmax(randn(5, 3).astype(np.float64))
    weight = np.array([1.0, 2.0, 0.5])
    eps = 0.2
    got = nn.CrossEntropyLoss(weight=Tensor(weight), reduction=reduction, label_smoothing=eps)(
        Tensor(logits), Tensor(probs))
    y = probs * (1 - eps) + eps / 3
    per = -(_log_softmax(logits) * y * weight).sum(1)
    want = {"mean": per.sum() / 5, "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-7)  # Python scalars are Float32 weak tensors


def test_cross_entropy_validation():
    with pytest.raises(TypeError):
        nn.CrossEntropyLoss(label_smoothing=0)
    with pytest.raises(ValueError):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError):
        nn.CrossEntropyLoss(ignore_index=1.0)
    with pytest.raises(ValueError):
        nn.CrossEntropyLoss()(Tensor(randn(3, 4)), Tensor(np.zeros(4, np.int32)))


# ------------------------------------------------------------------------------------- loss gradients (FD)
def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_gradient_finite_differences(reduction):
    a, b = randn(3, 4).astype(np.float64), randn(3, 4).astype(np.float64)
    loss = nn.MSELoss(reduction)
    gfn = ms.value_and_grad(lambda x, y: loss(x, y), grad_position=(0, 1))
    value, (ga, gb) = gfn(Tensor(a), Tensor(b))
    np.testing.assert_allclose(float(value), _reduce((a - b) ** 2, reduction), rtol=1e-12)
    fa = _fd_grad(lambda v: float(loss(Tensor(v), Tensor(b))), a)
    np.testing.assert_allclose(ga.asnumpy(), fa, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb.asnumpy(), -fa, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", [
    nn.CrossEntropyLoss(),
    nn.CrossEntropyLoss(weight=Tensor(np.array([0.5, 1.0, 2.0, 1.0])), label_smoothing=0.1),
    nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
])
def test_cross_entropy_gradient_finite_differences(loss):
    logits = randn(5, 4).astype(np.float64)
    target = Tensor(RNG.integers(0, 4, 5).astype(np.int32))
    gfn = ms.grad(lambda x: loss(x, target))
    got = gfn(Tensor(logits)).asnumpy()
    want = _fd_grad(lambda v: float(loss(Tensor(v), target)), logits)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_dense_gradient_finite_differences():
    d = nn.Dense(3, 2, dtype=ms.float64)
    x = randn(4, 3).astype(np.float64)
    gfn = ms.grad(lambda v: ops.sum(d(v) ** 2), grad_position=None, weights=d.trainable_params())
    gw, gb = gfn(Tensor(x))
    w0 = d.weight.asnumpy().copy()

    def f(w):
        return float(((x @ w.T + d.bias.asnumpy()) ** 2).sum())

    np.testing.assert_allclose(gw.asnumpy(), _fd_grad(f, w0), rtol=1e-6, atol=1e-8)
    assert gb.shape == (2,)


def test_dense_refuses_int_input_like_mindspore():
    # MindSpore 2.10: TypeError from MatMul for an int32 batch into a float32 Dense (a missing TypeCast).
    import kiln
    with pytest.raises(TypeError, match="MatMul.*Int32.*Float32"):
        nn.Dense(3, 4)(kiln.Tensor(np.ones((2, 3), np.int32)))
