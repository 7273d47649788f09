"""kiln.mint, mint.nn.functional, mint.nn and mint.optim: each name resolves to the same op as `ops`, the adapters
(PyTorch-flavoured arguments) compute NumPy's values, the layers take PyTorch-style constructor arguments, and the
optimizers follow PyTorch's formulas. CASES holds one check per mint-only adapter (test_opdef.py requires one for
every adapter declared with @defop(name="mint.<path>")). Values that MindSpore 2.10's CPU build can compute were
pinned with it (/work/msvenv): mint.max/min/gather/select/add(alpha)/where(3 args)/softmax/split, Tensor.std."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, mint, ops
from kiln.mint.nn import functional as F
from kiln.ops import _opdef

RNG = np.random.default_rng(0)
X = np.array([[1., 5., 3.], [4., 2., 6.]], np.float32)


def T(a):
    return Tensor(np.asarray(a))


def close(got, want, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(got.asnumpy() if isinstance(got, Tensor) else got, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------- adapter checks

def _add():
    close(mint.add(T(X), T(X), alpha=2), X + 2 * X)
    close(mint.add(T(X), 1.0), X + 1)
    assert mint.add(T(np.array([1, 2], np.int32)), 1, alpha=2).dtype == kiln.int32  # MindSpore: Int32 [3 4]
    with pytest.raises(TypeError, match="alpha"):
        mint.add(T(X), T(X), alpha="2")


def _sub():
    close(mint.sub(T(X), 1.0, alpha=2), X - 2)  # MindSpore: [[-1 3 1] [2 0 4]]


def _all():
    a = np.array([[1, 0], [2, 3]], np.int32)
    close(mint.all(T(a), 1), [False, True])
    close(mint.all(T(a)), False)
    assert mint.all(T(a), dim=(0, 1), keepdim=True).shape == (1, 1)


def _any():
    close(mint.any(T(X) > 4), True)
    close(mint.any(T(X) > 4, dim=0, keepdim=True), [[False, True, True]])


def _amax():
    close(mint.amax(T(X)), 6.0)
    close(mint.amax(T(X), 1, True), [[5.], [6.]])
    close(mint.amax(T(X), (0, 1)), 6.0)


def _amin():
    close(mint.amin(T(X)), 1.0)
    close(mint.amin(T(X), dim=0), X.min(0))
    close(mint.amax(T(X), 0), X.max(0))


def _argmin():
    got = mint.argmin(T(X), dim=1, keepdim=True)
    assert got.dtype == kiln.int64 and got.shape == (2, 1)
    close(got, [[0], [1]])
    close(mint.argmin(T(X)), 0)


def _max():
    close(mint.max(T(X)), 6.0)
    v, i = mint.max(T(X), 1)
    close(v, [5., 6.]), close(i, [1, 2])
    assert i.dtype == kiln.int64
    v, i = mint.max(T(X), dim=1, keepdim=True)
    assert v.shape == (2, 1) and i.shape == (2, 1)
    close(mint.max(T(X), T(np.full((2, 3), 3., np.float32))), np.maximum(X, 3))  # MindSpore: [[3 5 3] [4 3 6]]
    close(mint.max(T(X), other=T(np.float32(3.0))), np.maximum(X, 3))
    with pytest.raises(TypeError, match="mint.max"):
        mint.max(T(X), keepdim=True)


def _min():
    v, i = mint.min(T(X), dim=0)
    close(v, [1., 2., 3.]), close(i, [0, 1, 0])  # MindSpore: values [1 2 3], indices [0 1 0]
    close(mint.min(T(X)), 1.0)
    close(mint.min(T(X), T(np.full((2, 3), 3., np.float32))), np.minimum(X, 3))


def _mean():
    close(mint.mean(T(X)), X.mean())
    close(mint.mean(T(X), 1, True), X.mean(1, keepdims=True))
    got = mint.mean(T(X), 1, dtype=kiln.float64)
    assert got.dtype == kiln.float64
    close(got, [3., 4.])


def _prod():
    close(mint.prod(T(X), 1), [15., 48.])
    assert mint.prod(T(np.array([1, 2], np.int32))).dtype == kiln.int64  # MindSpore: Int64
    close(mint.prod(T(X), dtype=kiln.float64), X.prod())


def _cumsum():
    close(mint.cumsum(T(X), dim=1), np.cumsum(X, 1))
    close(mint.cumsum(T(X), 0, dtype=kiln.float64), np.cumsum(X, 0))


def _softmax():
    e = np.exp(X - X.max(1, keepdims=True))
    close(mint.softmax(T(X), 1), e / e.sum(1, keepdims=True))
    assert mint.softmax(T(X), dim=0, dtype=kiln.float64).dtype == kiln.float64


def _sort():
    a = np.array([[3., 1., 2., 1.], [0., 5., 5., -1.]], np.float32)
    v, i = mint.sort(T(a), dim=1, descending=True)
    close(v, -np.sort(-a, 1))
    close(i, [[0, 2, 1, 3], [1, 2, 0, 3]])  # stable: equal values keep their order
    assert i.dtype == kiln.int64
    v, i = mint.sort(T(a))
    close(i, np.argsort(a, 1, kind="stable"))
    with pytest.raises(TypeError):
        mint.sort(T(a), 1)  # dim is keyword-only


def _argsort():
    a = np.array([1., 0., 1., 0., 1.], np.float32)
    close(mint.argsort(T(a)), np.argsort(a, kind="stable"))
    close(mint.argsort(T(a), descending=True, stable=True), [0, 2, 4, 1, 3])
    assert mint.argsort(T(a)).dtype == kiln.int64


def _cat():
    close(mint.cat([T(X), T(X)], dim=1), np.concatenate([X, X], 1))
    close(mint.concat((T(X), T(X))), np.concatenate([X, X], 0))
    assert mint.concat is mint.cat


def _stack():
    close(mint.stack([T(X), T(X)], dim=2), np.stack([X, X], 2))


def _split():
    parts = mint.split(T(X), 2, dim=1)
    assert [p.shape for p in parts] == [(2, 2), (2, 1)]  # MindSpore: [(2, 2), (2, 1)]
    close(parts[1], X[:, 2:])
    parts = mint.split(T(X), [1, 2], 1)
    close(parts[1], X[:, 1:])


def _flatten():
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    assert mint.flatten(T(a)).shape == (24,)
    assert mint.flatten(T(a), 1).shape == (2, 12)
    assert F.flatten(T(a), start_dim=0, end_dim=1).shape == (6, 4)
    assert F.flatten is mint.flatten


def _squeeze():
    a = np.ones((1, 3, 1), np.float32)
    assert mint.squeeze(T(a), 0).shape == (3, 1)
    assert mint.squeeze(T(a), (0, 2)).shape == (3,)
    assert mint.squeeze(T(a), 1).shape == (1, 3, 1)  # a dim of another size is kept (PyTorch)
    with pytest.raises(ValueError, match="out of range"):
        mint.squeeze(T(a), 3)


def _transpose():
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    close(mint.transpose(T(a), 0, 2), np.swapaxes(a, 0, 2))
    close(mint.transpose(T(a), -1, 1), np.swapaxes(a, -1, 1))
    with pytest.raises(ValueError):
        mint.transpose(T(a), 0, 3)


def _narrow():
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    close(mint.narrow(T(a), 1, 1, 2), a[:, 1:3])  # MindSpore: [[1 2] [4 5] [7 8]]
    close(mint.narrow(T(a), dim=-1, start=0, length=1), a[:, :1])
    assert mint.narrow(T(a), 1, 3, 0).shape == (3, 0)
    g = kiln.grad(lambda x: (mint.narrow(x, 0, 1, 2) * 3).sum())(T(a))
    close(g, np.array([[0, 0, 0], [3, 3, 3], [3, 3, 3]], np.float32))
    for bad in ((1, 2, 2), (1, 1, -1), (1, -1, 2), (2, 0, 1)):
        with pytest.raises(ValueError, match="narrow"):
            mint.narrow(T(a), *bad)


def _permute():
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    close(mint.permute(T(a), (2, 0, 1)), a.transpose(2, 0, 1))


def _gather():
    got = mint.gather(T(X), 1, T(np.array([[0, 0], [2, 1]], np.int64)))
    close(got, [[1., 1.], [6., 2.]])  # MindSpore: [[1 1] [6 2]]


def _select():
    close(mint.select(T(X), 1, 2), [3., 6.])  # MindSpore
    close(mint.select(T(X), 0, -1), [4., 2., 6.])
    with pytest.raises(IndexError):
        mint.select(T(X), 0, 2)


def _where():
    close(mint.where(T(X) > 3, T(X), 0.), np.where(X > 3, X, 0))  # MindSpore: [[0 5 0] [4 0 6]]
    rows, cols = mint.where(T(X) > 3)
    close(rows, [0, 1, 1]), close(cols, [1, 0, 2])
    with pytest.raises(TypeError):
        mint.where(T(X) > 3, T(X))


def _meshgrid():
    a, b = np.array([1., 2., 3.], np.float32), np.array([4., 5.], np.float32)
    gx, gy = mint.meshgrid(T(a), T(b))
    ex, ey = np.meshgrid(a, b, indexing="ij")
    close(gx, ex), close(gy, ey)
    gx, _ = mint.meshgrid(T(a), T(b), indexing="xy")
    assert gx.shape == (2, 3)


def _linspace():
    close(mint.linspace(0, 1, 5), np.linspace(0, 1, 5))
    got = mint.linspace(0, 10, 5, dtype=kiln.int32)
    assert got.dtype == kiln.int32
    close(got, [0, 2, 5, 7, 10])


def _randn():
    kiln.set_seed(3)
    a = mint.randn(2, 3)
    kiln.set_seed(3)
    b = ops.randn(2, 3)
    assert a.shape == (2, 3) and a.dtype == kiln.float32
    close(a, b.asnumpy())
    assert mint.randn((4,), dtype=kiln.float64).dtype == kiln.float64
    with pytest.raises(TypeError, match="generator"):
        mint.randn(2, generator=object())


def _rand():
    a = mint.rand(100).asnumpy()
    assert a.shape == (100,) and (a >= 0).all() and (a < 1).all()
    with pytest.raises(ValueError, match="device"):
        mint.rand(2, device="Ascend")


def _softmax_f():
    e = np.exp(X - X.max(1, keepdims=True))
    close(F.softmax(T(X)), e / e.sum(1, keepdims=True))  # implicit dim 1 for 2-D (MindSpore agrees)
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    e = np.exp(a - a.max(0, keepdims=True))
    close(F.softmax(T(a)), e / e.sum(0, keepdims=True))  # implicit dim 0 for 3-D (PyTorch's rule)
    close(F.softmax(T(a), -1, kiln.float64).asnumpy().sum(-1), np.ones((2, 3)))


def _log_softmax_f():
    e = X - X.max(1, keepdims=True)
    close(F.log_softmax(T(X), dim=1), e - np.log(np.exp(e).sum(1, keepdims=True)), rtol=1e-5)
    assert F.log_softmax(T(X), 1, dtype=kiln.float64).dtype == kiln.float64


def _relu_f():
    a = np.array([-1., 0., 2.], np.float32)
    close(F.relu(T(a)), np.maximum(a, 0))
    t = T(a)
    assert F.relu(t, inplace=True) is t
    close(t, [0., 0., 2.])


def _relu6_f():
    a = np.array([-1., 3., 8.], np.float32)
    close(F.relu6(T(a)), np.clip(a, 0, 6))
    t = T(a)
    F.relu6(t, True)
    close(t, [0., 3., 6.])


def _gelu_f():
    import scipy.special
    a = np.array([-1., 0.5, 2.], np.float32)
    close(F.gelu(T(a)), 0.5 * a * (1 + scipy.special.erf(a / np.sqrt(2))), rtol=1e-5)
    close(F.gelu(T(a), approximate="tanh"),
          0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))), rtol=1e-5)


def _logsigmoid_f():
    a = np.array([-30., 0., 2.], np.float32)
    close(F.logsigmoid(T(a)), -np.logaddexp(0, -a.astype(np.float64)), rtol=1e-5)


def _dropout_f():
    a = np.ones((200,), np.float32)
    close(F.dropout(T(a), 0.5, training=False), a)
    kiln.set_seed(1)
    y = F.dropout(T(a), p=0.25).asnumpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)} and 0 < (y == 0).sum() < 200
    t = T(a)
    assert F.dropout(t, 0.5, True, inplace=True) is t and (t.asnumpy() == 0).any()


def _dropout2d_f():
    a = np.ones((2, 8, 3, 3), np.float32)
    kiln.set_seed(1)
    y = F.dropout2d(T(a), 0.5).asnumpy()
    per_channel = y.reshape(2, 8, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    close(F.dropout2d(T(a), 0.5, training=False), a)


def _linear_f():
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (4,)))
    close(F.linear(T(x), T(w), T(b)), x @ w.T + b, rtol=1e-5)
    close(F.linear(T(x), T(w)), x @ w.T, rtol=1e-5)
    with pytest.raises(ValueError, match="2-D"):
        F.linear(T(x), T(b))


def _conv2d_f():
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    want = ops.conv2d(T(x), T(w), None, 1, "pad", 1).asnumpy()
    close(F.conv2d(T(x), T(w), padding=1), want, rtol=1e-5)
    close(F.conv2d(T(x), T(w), padding=(1, 1)), want, rtol=1e-5)
    assert F.conv2d(T(x), T(w), stride=2).shape == (1, 3, 2, 2)
    assert F.conv2d(T(x), T(w), padding="same").shape == (1, 3, 5, 5)


def _conv1d_f():
    x = RNG.standard_normal((1, 2, 7)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3)).astype(np.float32)
    got = F.conv1d(T(x), T(w), padding=1).asnumpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    want = np.stack([sum(xp[0, c, i:i + 3] @ w[o, c] for c in range(2)) for i in range(7) for o in range(3)])
    close(got[0].T.reshape(-1), want, rtol=1e-5, atol=1e-5)


def _max_pool2d_f():
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    close(F.max_pool2d(T(x), 2), x.reshape(1, 1, 2, 2, 2, 2).max((3, 5)))
    y, idx = F.max_pool2d(T(x), 2, return_indices=True)
    assert idx.dtype == kiln.int64 and idx.shape == (1, 1, 2, 2)


def _avg_pool2d_f():
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    close(F.avg_pool2d(T(x), 2), x.reshape(1, 1, 2, 2, 2, 2).mean((3, 5)), rtol=1e-5)
    close(F.avg_pool2d(T(x), 2, divisor_override=1), x.reshape(1, 1, 2, 2, 2, 2).sum((3, 5)), rtol=1e-5)


def _batch_norm_f():
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    rm, rv = kiln.Parameter(T(np.zeros(3, np.float32)), "rm"), kiln.Parameter(T(np.ones(3, np.float32)), "rv")
    y = F.batch_norm(T(x), rm, rv, training=True, momentum=0.1, eps=1e-5)
    m, v = x.mean((0, 2)), x.var((0, 2))
    close(y, (x - m[None, :, None]) / np.sqrt(v[None, :, None] + 1e-5), rtol=1e-4, atol=1e-5)
    close(rm, 0.1 * m, rtol=1e-5)
    close(rv, 0.9 + 0.1 * x.var((0, 2), ddof=1), rtol=1e-5)
    close(F.batch_norm(T(x), rm, rv), (x - rm.asnumpy()[None, :, None]) / np.sqrt(rv.asnumpy()[None, :, None] + 1e-5),
          rtol=1e-4, atol=1e-5)


def _pad_f():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    close(F.pad(T(a), (1, 2)), np.pad(a, ((0, 0), (1, 2))))
    close(F.pad(T(a), (1, 1, 1, 0), value=5.0), np.pad(a, ((1, 0), (1, 1)), constant_values=5))
    close(F.pad(T(a), (1, 1), mode="reflect"), np.pad(a, ((0, 0), (1, 1)), mode="reflect"))


def _one_hot_f():
    got = F.one_hot(T(np.array([0, 2, 1], np.int64)))
    assert got.dtype == kiln.int64
    close(got, np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(T(np.array([1], np.int64)), num_classes=4).shape == (1, 4)
    with pytest.raises(ValueError, match="non-negative"):
        F.one_hot(T(np.array([-1, 1], np.int64)))


def _bce_f():
    p, y = np.array([0.2, 0.7, 0.9], np.float32), np.array([0., 1., 1.], np.float32)
    close(F.binary_cross_entropy(T(p), T(y)), -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)), rtol=1e-5)


def _bce_logits_f():
    x, y = np.array([-1., 0.5, 2.], np.float32), np.array([0., 1., 1.], np.float32)
    pw = np.array([2., 2., 2.], np.float32)
    sp = np.log1p(np.exp(-x))
    want = np.mean((1 - y) * x + (1 + (pw - 1) * y) * sp)
    close(F.binary_cross_entropy_with_logits(T(x), T(y), None, "mean", T(pw)), want, rtol=1e-5)
    close(F.binary_cross_entropy_with_logits(T(x), T(y), reduction="sum"), np.sum((1 - y) * x + sp), rtol=1e-5)


def _nll_f():
    logp = np.log(np.array([[0.2, 0.8], [0.6, 0.4]], np.float32))
    close(F.nll_loss(T(logp), T(np.array([1, 0], np.int32))), -(logp[0, 1] + logp[1, 0]) / 2, rtol=1e-6)


def _smooth_l1_f():
    a, b = np.array([0., 2., 0.5], np.float32), np.zeros(3, np.float32)
    d = np.abs(a - b)
    close(F.smooth_l1_loss(T(a), T(b)), np.mean(np.where(d < 1, 0.5 * d * d, d - 0.5)))  # default 'mean'
    close(F.smooth_l1_loss(T(a), T(b), "none", beta=0.5), np.where(d < 0.5, d * d, d - 0.25))


def _kl_div_f():
    inp = np.log(np.array([[0.2, 0.8], [0.5, 0.5]], np.float32))
    tgt = np.array([[0.3, 0.7], [0.9, 0.1]], np.float32)
    pw = tgt * (np.log(tgt) - inp)
    close(F.kl_div(T(inp), T(tgt), reduction="sum"), pw.sum(), rtol=1e-5)
    close(F.kl_div(T(inp), T(np.log(tgt)), reduction="batchmean", log_target=True), pw.sum() / 2, rtol=1e-5)
    close(F.kl_div(T(inp), T(np.log(tgt)), log_target=True), pw.mean(), rtol=1e-5)
    close(F.kl_div(T(inp), T(np.log(tgt)), "none", True), pw, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        F.kl_div(T(inp), T(tgt), "avg", True)


def _randint():
    kiln.set_seed(2)
    a = mint.randint(5, (200,)).asnumpy()
    assert a.dtype == np.int64 and a.min() >= 0 and a.max() < 5 and len(np.unique(a)) == 5
    b = mint.randint(-3, -1, (2, 2), dtype=kiln.int32)
    assert b.dtype == kiln.int32 and set(np.unique(b.asnumpy())) <= {-3, -2}
    assert mint.randint(low=1, high=2, size=(3,)).asnumpy().tolist() == [1, 1, 1]
    with pytest.raises(TypeError, match="size"):
        mint.randint(5, 3)
    with pytest.raises(TypeError, match="high"):
        mint.randint((3,))


def _rand_like():
    a = mint.rand_like(T(X))
    assert a.shape == (2, 3) and a.dtype == kiln.float32 and (a.asnumpy() < 1).all()
    assert mint.rand_like(T(X), dtype=kiln.float64).dtype == kiln.float64


def _randn_like():
    kiln.set_seed(4)
    a = mint.randn_like(T(np.zeros((4000,), np.float64)))
    assert a.dtype == kiln.float64 and abs(a.asnumpy().std() - 1) < 0.1
    with pytest.raises(TypeError, match="Tensor"):
        mint.randn_like((2, 3))


def _empty():
    a = mint.empty(2, 3)
    assert a.shape == (2, 3) and a.dtype == kiln.float32
    assert mint.empty((4,), dtype=kiln.int32).dtype == kiln.int32


def _empty_like():
    a = mint.empty_like(T(np.ones((2, 2), np.int32)))
    assert a.shape == (2, 2) and a.dtype == kiln.int32


def _clone():
    a = T(X)
    c = mint.clone(a)
    c[0, 0] = 100.0
    close(a, X)
    close(ops.grad(lambda x: (mint.clone(x) * 3).sum())(a), np.full_like(X, 3))


def _item():
    assert mint.item(T(np.array([2.5], np.float32))) == 2.5
    with pytest.raises(ValueError):
        mint.item(T(X))


def _var():
    close(mint.var(T(X)), X.var(ddof=1), rtol=1e-6)
    close(mint.var(T(X), 1, correction=0, keepdim=True), X.var(1, keepdims=True), rtol=1e-6)


def _std():
    close(mint.std(T(X), dim=1), [2.0, 2.0])  # MindSpore's Tensor.std(dim=1, correction=1)
    close(mint.std(T(X), (0, 1)), X.std(ddof=1), rtol=1e-6)


def _var_mean():
    v, m = mint.var_mean(T(X), 0)
    close(v, X.var(0, ddof=1)), close(m, X.mean(0))


def _std_mean():
    s, m = mint.std_mean(T(np.array([1, 2, 4], np.int32)), correction=0)
    close(s, np.std([1, 2, 4]), rtol=1e-6), close(m, 7 / 3, rtol=1e-6)


def _upsample_f():
    x = RNG.standard_normal((1, 1, 2, 3)).astype(np.float32)
    close(F.upsample(T(x), scale_factor=2), x.repeat(2, 2).repeat(2, 3))
    close(F.upsample(T(x), size=(4, 6), mode="bilinear", align_corners=False),
          F.interpolate(T(x), size=(4, 6), mode="bilinear", align_corners=False).asnumpy())


CASES = {
    "nn.functional.upsample": _upsample_f,
    "randint": _randint, "rand_like": _rand_like, "randn_like": _randn_like, "empty": _empty,
    "empty_like": _empty_like, "clone": _clone, "item": _item, "var": _var, "std": _std, "var_mean": _var_mean,
    "std_mean": _std_mean,
    "add": _add, "sub": _sub, "all": _all, "any": _any, "amax": _amax, "amin": _amin, "argmin": _argmin,
    "max": _max, "min": _min, "mean": _mean, "prod": _prod, "cumsum": _cumsum, "softmax": _softmax, "sort": _sort,
    "argsort": _argsort, "cat": _cat, "stack": _stack, "split": _split, "flatten": _flatten, "squeeze": _squeeze,
    "transpose": _transpose, "narrow": _narrow, "permute": _permute, "gather": _gather, "select": _select, "where": _where,
    "meshgrid": _meshgrid, "linspace": _linspace, "randn": _randn, "rand": _rand,
    "nn.functional.softmax": _softmax_f, "nn.functional.log_softmax": _log_softmax_f,
    "nn.functional.relu": _relu_f, "nn.functional.relu6": _relu6_f, "nn.functional.gelu": _gelu_f,
    "nn.functional.logsigmoid": _logsigmoid_f, "nn.functional.dropout": _dropout_f,
    "nn.functional.dropout2d": _dropout2d_f, "nn.functional.linear": _linear_f, "nn.functional.conv2d": _conv2d_f,
    "nn.functional.conv1d": _conv1d_f, "nn.functional.max_pool2d": _max_pool2d_f,
    "nn.functional.avg_pool2d": _avg_pool2d_f, "nn.functional.batch_norm": _batch_norm_f,
    "nn.functional.pad": _pad_f, "nn.functional.one_hot": _one_hot_f,
    "nn.functional.binary_cross_entropy": _bce_f, "nn.functional.binary_cross_entropy_with_logits": _bce_logits_f,
    "nn.functional.nll_loss": _nll_f, "nn.functional.smooth_l1_loss": _smooth_l1_f, "nn.functional.kl_div": _kl_div_f,
}

from mint_more_cases import MORE_CASES  # noqa: E402  (kiln/mint/_functional_more.py's adapters)

CASES.update(MORE_CASES)


@pytest.mark.parametrize("path", sorted(CASES))
def test_adapter_values(path):
    CASES[path]()


def _mint_module(prefix):
    import importlib
    return importlib.import_module("kiln.mint" + ("." + prefix if prefix else ""))


def test_every_adapter_has_a_case_and_resolves():
    adapters = [s for s in _opdef.specs() if _opdef.is_mint_only(s)]
    assert len(adapters) >= 40
    for spec in adapters:
        for path in spec.mint:
            head, _, leaf = path.rpartition(".")
            assert getattr(_mint_module(head), leaf) is spec.fn, path
        assert spec.name[len("mint."):] in CASES, f"{spec.name} has no check in test_mint.CASES"


def test_same_signature_names_are_the_ops_functions():
    import kiln.mint as m
    for name, op in m.SAME.items():
        assert getattr(m, name) is getattr(ops, op), name
    for name, op in F.SAME.items():
        assert getattr(F, name) is getattr(ops, op), name
    assert mint.clip is ops.clamp and mint.tan is ops.tan and mint.expm1 is ops.expm1


def test_same_signature_values():
    a = T(X)
    close(mint.sum(a, dim=1, keepdim=True), X.sum(1, keepdims=True))
    close(mint.argmax(a, dim=1), [1, 2])
    close(mint.clamp(a, 2, 4), np.clip(X, 2, 4))  # MindSpore: [[2 4 3] [4 2 4]]
    close(mint.topk(a, 2)[0], [[5., 3.], [6., 4.]])
    close(mint.tril(a), np.tril(X))
    close(mint.eye(2), np.eye(2))
    assert mint.eye(2).dtype == kiln.float32 and mint.zeros((2,)).dtype == kiln.float32
    close(mint.div(a, 2, rounding_mode="floor"), np.floor(X / 2))
    close(mint.remainder(T(np.array([-3., 3.], np.float32)), 2.0), [1., 1.])
    close(F.mse_loss(a, a * 0), np.mean(X * X))


def test_adapters_trace_the_same_values_in_graph_mode():
    a = T(X)

    @kiln.jit
    def f(x):
        v, i = mint.max(x, dim=1)
        return (mint.add(x, v.reshape(2, 1), alpha=2), i, mint.transpose(x, 0, 1), mint.mean(x, 1, True),
                mint.where(x > 3, x, 0.0), F.relu(x - 3.0), mint.gather(x, 1, mint.argsort(x, dim=1)),
                F.softmax(x, -1))

    got = f(a)
    want = (mint.add(a, mint.max(a, dim=1)[0].reshape(2, 1), alpha=2), mint.max(a, dim=1)[1],
            mint.transpose(a, 0, 1), mint.mean(a, 1, True), mint.where(a > 3, a, 0.0), F.relu(a - 3.0),
            mint.gather(a, 1, mint.argsort(a, dim=1)), F.softmax(a, -1))
    for g, w in zip(got, want):
        close(g, w.asnumpy())
    close(got[6], np.sort(X, 1))


def test_adapter_gradients():
    a = T(X)
    g = ops.grad(lambda x: mint.max(x, dim=1)[0].sum() + mint.add(x, x, alpha=3).sum())(a)
    want = np.full(X.shape, 4.0, np.float32)
    want[0, 1] += 1
    want[1, 2] += 1
    close(g, want)
    g = ops.grad(lambda x: mint.transpose(mint.select(x, 0, 1).reshape(1, 3), 0, 1).sum() * 2)(a)
    close(g, [[0, 0, 0], [2, 2, 2]])


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="mint.mean.*Tensor"):
        mint.mean([1.0, 2.0])
    with pytest.raises(TypeError, match="mint.nn.functional.relu.*inplace"):
        F.relu(T(X), inplace=1)
    with pytest.raises(TypeError, match="stable"):
        mint.sort(T(X), stable=None)
    with pytest.raises(TypeError, match="mint.softmax"):
        mint.softmax(T(X), 1.5)


def test_compat_aliases_mint_subpackages():
    from kiln import compat
    compat.install()
    try:
        import mindspore.mint.nn.functional as MF
        from mindspore import mint as MM
        import mindspore.mint.optim as MO
        assert MF is F and MM is mint and MO is mint.optim
    finally:
        compat.uninstall()
