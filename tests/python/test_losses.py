"""Losses against NumPy implementations of MindSpore's formulas: NLLLoss, BCELoss, BCEWithLogitsLoss, HuberLoss,
KLDivLoss (incl. 'batchmean'), plus checks of SoftmaxCrossEntropyWithLogits / CrossEntropyLoss / SmoothL1Loss;
gradients against float64 central finite differences; label range errors in PyNative; compiled (kiln.jit) results
equal to PyNative; bad-input errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn

RNG = np.random.default_rng(7)


def randn(*shape):
    return RNG.standard_normal(shape)


def _reduce(x, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](x)


def _log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


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


def check_grads(loss, args, positions, rtol=1e-6, atol=1e-8):
    """Gradients of loss(*args) (summed when not scalar) w.r.t. args[positions] vs finite differences (float64)."""
    tens = [Tensor(a) for a in args]

    def scalar(*xs):
        out = loss(*xs)
        return out.sum() if out.ndim else out

    grads = ms.grad(scalar, grad_position=tuple(positions))(*tens)
    if len(positions) == 1:  # MindSpore returns the Tensor itself for one position
        grads = (grads,)
    for pos, g in zip(positions, grads):
        def f(v, pos=pos):
            xs = list(tens)
            xs[pos] = Tensor(v)
            return float(np.sum(loss(*xs).asnumpy()))
        np.testing.assert_allclose(g.asnumpy(), _fd_grad(f, np.array(args[pos])), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {pos}")


# ------------------------------------------------------------------------------------------------ NLLLoss
def _nll_ref(logp, target, weight, ignore_index, reduction):
    c = logp.shape[1]
    lp = np.moveaxis(logp, 1, -1).reshape(-1, c)
    t = target.reshape(-1)
    w = np.ones(c) if weight is None else weight
    keep = t != ignore_index
    tc = np.where(keep, t, 0)
    loss = -w[tc] * lp[np.arange(len(t)), tc] * keep
    if reduction == "none":
        return loss.reshape(target.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (w[tc] * keep).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (2, 4, 3)])
def test_nll_loss_matches_numpy(reduction, weighted, shape):
    logp = _log_softmax(randn(*shape), 1)
    target = RNG.integers(0, 4, (shape[0],) + shape[2:])
    target.reshape(-1)[1] = -100
    weight = np.array([0.5, 1.0, 2.0, 1.5]) if weighted else None
    loss = nn.NLLLoss(weight=None if weight is None else Tensor(weight), reduction=reduction)
    got = loss(Tensor(logp), Tensor(target.astype(np.int32)))
    np.testing.assert_allclose(got.asnumpy(), _nll_ref(logp, target, weight, -100, reduction), rtol=1e-12)
    # ignore_index inside [0, C)
    got = nn.NLLLoss(ignore_index=2, reduction=reduction)(Tensor(logp), Tensor(np.where(target < 0, 0, target)))
    np.testing.assert_allclose(got.asnumpy(), _nll_ref(logp, np.where(target < 0, 0, target), None, 2, reduction),
                               rtol=1e-12)


def test_nll_equals_cross_entropy_of_log_softmax():
    logits = randn(5, 3)
    target = Tensor(RNG.integers(0, 3, 5))
    ce = nn.CrossEntropyLoss()(Tensor(logits), target)
    nll = nn.NLLLoss()(Tensor(_log_softmax(logits, 1)), target)
    np.testing.assert_allclose(nll.asnumpy(), ce.asnumpy(), rtol=1e-12)


# ------------------------------------------------------------------------------------------------ BCE
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_loss_matches_numpy(reduction):
    x = _sigmoid(randn(4, 3))
    y = RNG.uniform(0, 1, (4, 3))
    w = RNG.uniform(0.5, 2, (4, 3))
    for weight in (None, w):
        want = -(y * np.log(x + 1e-12) + (1 - y) * np.log(1 - x + 1e-12))
        if weight is not None:
            want = want * weight
        got = nn.BCELoss(weight=None if weight is None else Tensor(weight), reduction=reduction)(Tensor(x), Tensor(y))
        np.testing.assert_allclose(got.asnumpy(), _reduce(want, reduction), rtol=1e-12)
    # float32 with probabilities at the ends stays finite (the 1e-12 guard)
    x32 = np.array([0.0, 1.0, 0.5], np.float32)
    y32 = np.array([0.0, 1.0, 1.0], np.float32)
    out = nn.BCELoss()(Tensor(x32), Tensor(y32))
    assert out.dtype == ms.float32 and np.isfinite(out.asnumpy())
    np.testing.assert_allclose(out.asnumpy(), np.log(2) / 3, rtol=1e-5)


def _bce_logits_ref(x, y, weight, pos_weight):
    p = 1.0 if pos_weight is None else pos_weight
    w = 1.0 if weight is None else weight
    return -w * (p * y * np.log(_sigmoid(x)) + (1 - y) * np.log(1 - _sigmoid(x)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_numpy(reduction):
    x = randn(5, 3) * 3
    y = RNG.uniform(0, 1, (5, 3))
    weight = RNG.uniform(0.5, 2, (5, 3))
    pos = np.array([0.5, 2.0, 3.0])
    for w, p in ((None, None), (weight, None), (None, pos), (weight, pos)):
        loss = nn.BCEWithLogitsLoss(reduction=reduction, weight=None if w is None else Tensor(w),
                                    pos_weight=None if p is None else Tensor(p))
        got = loss(Tensor(x), Tensor(y))
        np.testing.assert_allclose(got.asnumpy(), _reduce(_bce_logits_ref(x, y, w, p), reduction), rtol=1e-10)


def test_bce_with_logits_is_stable_for_large_logits():
    x = np.array([-200.0, -50.0, 0.0, 50.0, 200.0], np.float32)
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0], np.float32)
    got = nn.BCEWithLogitsLoss(reduction="none")(Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_allclose(got, [200.0, 0.0, np.log(2), 0.0, 200.0], rtol=1e-6, atol=1e-6)
    g = ms.grad(lambda v: nn.BCEWithLogitsLoss(reduction="sum")(v, Tensor(y)))(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, _sigmoid(x.astype(np.float64)) - y, atol=1e-6)  # σ(x) − y, 0.5 − 1 at x = 0


# ------------------------------------------------------------------------------------------ Huber, SmoothL1
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("delta", [1.0, 0.3, 2])
def test_huber_loss_matches_numpy(reduction, delta):
    a, b = randn(4, 5) * 2, randn(4, 5)
    d = np.abs(a - b)
    want = np.where(d < delta, 0.5 * d ** 2, delta * (d - 0.5 * delta))
    got = nn.HuberLoss(reduction=reduction, delta=delta)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(got.asnumpy(), _reduce(want, reduction), rtol=1e-12)
    # broadcasting labels
    got = nn.HuberLoss(reduction="none", delta=delta)(Tensor(a), Tensor(b[0]))
    d = np.abs(a - b[0])
    np.testing.assert_allclose(got.asnumpy(), np.where(d < delta, 0.5 * d ** 2, delta * (d - 0.5 * delta)),
                               rtol=1e-12)


def test_smooth_l1_is_huber_over_beta():
    a, b = randn(3, 4) * 2, randn(3, 4)
    s = nn.SmoothL1Loss(beta=0.7, reduction="sum")(Tensor(a), Tensor(b))
    h = nn.HuberLoss(reduction="sum", delta=0.7)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(s.asnumpy(), h.asnumpy() / 0.7, rtol=1e-12)


# ------------------------------------------------------------------------------------------------ KLDiv
@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div_matches_numpy(reduction):
    x = _log_softmax(randn(4, 5), 1)
    y = np.exp(_log_softmax(randn(4, 5), 1))
    y[0, 1] = 0.0  # y = 0 contributes 0
    with np.errstate(divide="ignore"):
        pointwise = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), 0.0)
    want = {"mean": pointwise.mean(), "batchmean": pointwise.sum() / 4, "sum": pointwise.sum(),
            "none": pointwise}[reduction]
    got = nn.KLDivLoss(reduction)(Tensor(x), Tensor(y))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    assert np.all(np.isfinite(got.asnumpy()))


def test_kl_div_errors():
    with pytest.raises(ValueError):
        nn.KLDivLoss("avg")
    with pytest.raises(RuntimeError):
        nn.KLDivLoss("batchmean")(Tensor(np.array(0.5)), Tensor(np.array(0.5)))
    with pytest.raises(ValueError):
        nn.KLDivLoss()(Tensor(randn(2, 3)), Tensor(randn(3, 2)))


# --------------------------------------------------------------------------- softmax cross entropy (existing)
def test_softmax_cross_entropy_dense_and_sparse_agree_3d():
    logits = randn(2, 3, 4)
    labels = RNG.integers(0, 4, (2, 3))
    onehot = np.eye(4)[labels]
    want = -(onehot * _log_softmax(logits, -1)).sum(-1)
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True)(Tensor(logits), Tensor(labels))
    dense = nn.SoftmaxCrossEntropyWithLogits()(Tensor(logits), Tensor(onehot))
    np.testing.assert_allclose(sparse.asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(dense.asnumpy(), want, rtol=1e-12)


# ------------------------------------------------------------------------------------- gradients (FD)
@pytest.mark.parametrize("name", ["nll", "nll_w", "bce", "bce_w", "bcel", "bcel_pw", "huber", "kl", "kl_bm",
                                  "ce_smooth_w"])
def test_loss_gradients_finite_differences(name):
    target = RNG.integers(0, 4, 5)
    target[3] = -100
    w4 = np.array([0.5, 1.0, 2.0, 1.5])
    x = randn(5, 4)
    probs = _sigmoid(randn(5, 4))
    y = RNG.uniform(0.05, 0.95, (5, 4))
    cases = {
        "nll": (nn.NLLLoss(), [x, target], [0]),
        "nll_w": (nn.NLLLoss(weight=Tensor(w4), reduction="sum"), [x, target], [0]),
        "bce": (nn.BCELoss(), [probs, y], [0, 1]),
        "bce_w": (nn.BCELoss(weight=Tensor(y), reduction="sum"), [probs, y], [0]),
        "bcel": (nn.BCEWithLogitsLoss(), [x, y], [0, 1]),
        "bcel_pw": (nn.BCEWithLogitsLoss(reduction="none", weight=Tensor(y), pos_weight=Tensor(w4)), [x, y], [0, 1]),
        "huber": (nn.HuberLoss(delta=0.5), [x, y], [0, 1]),
        "kl": (nn.KLDivLoss(), [_log_softmax(x, 1), y], [0, 1]),
        "kl_bm": (nn.KLDivLoss("batchmean"), [_log_softmax(x, 1), y], [0, 1]),
        "ce_smooth_w": (nn.CrossEntropyLoss(weight=Tensor(w4), label_smoothing=0.2), [x, target], [0]),
    }
    loss, args, positions = cases[name]
    check_grads(loss, args, positions)


def test_bce_with_logits_gradient_at_zero_logits():
    # zero logits (e.g. a zero-initialized classifier) get the exact gradient σ(0) − y = 0.5 − y
    y = np.array([1.0, 0.0, 0.25])
    g = ms.grad(lambda v: nn.BCEWithLogitsLoss(reduction="sum")(v, Tensor(y)))(Tensor(np.zeros(3))).asnumpy()
    np.testing.assert_allclose(g, 0.5 - y, rtol=1e-12)


# ------------------------------------------------------------------------------------------ label errors
@pytest.mark.parametrize("make", [
    lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True),
    lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
    lambda: nn.CrossEntropyLoss(),
    lambda: nn.NLLLoss(),
])
@pytest.mark.parametrize("bad", [4, -1, 7])
def test_out_of_range_labels_raise_in_pynative(make, bad):
    labels = np.array([0, 1, bad, 3], np.int32)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        make()(Tensor(randn(4, 4).astype(np.float32)), Tensor(labels))


def test_ignore_index_is_not_out_of_range():
    labels = Tensor(np.array([0, -100, 3], np.int64))
    x = Tensor(randn(3, 4))
    assert np.isfinite(nn.CrossEntropyLoss()(x, labels).asnumpy())
    assert np.isfinite(nn.NLLLoss()(x, labels).asnumpy())
    with pytest.raises(ValueError):
        nn.NLLLoss(ignore_index=-1)(x, labels)


def test_bad_inputs():
    x = Tensor(randn(3, 4))
    with pytest.raises(TypeError):  # float labels where class indices are expected
        nn.NLLLoss()(x, Tensor(np.array([0.0, 1.0, 2.0])))
    with pytest.raises(TypeError):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(x, Tensor(np.array([0.0, 1.0, 2.0])))
    with pytest.raises(ValueError):  # label shape
        nn.NLLLoss()(x, Tensor(np.array([0, 1], np.int32)))
    with pytest.raises(ValueError):
        nn.NLLLoss(weight=Tensor(np.ones(3)))(x, Tensor(np.array([0, 1, 2], np.int32)))
    with pytest.raises(TypeError):
        nn.NLLLoss(weight=np.ones(4))
    with pytest.raises(TypeError):
        nn.NLLLoss(ignore_index=1.5)
    with pytest.raises(ValueError):  # probabilities outside [0, 1]
        nn.BCELoss()(Tensor(np.array([0.5, 1.5])), Tensor(np.array([0.0, 1.0])))
    with pytest.raises(ValueError):
        nn.BCELoss()(Tensor(np.array([0.5, 0.5])), Tensor(np.array([0.0, 1.0, 1.0])))
    with pytest.raises(TypeError):
        nn.BCEWithLogitsLoss(pos_weight=[1.0])
    with pytest.raises(ValueError):
        nn.BCEWithLogitsLoss(reduction="avg")
    with pytest.raises(TypeError):
        nn.HuberLoss(delta="1")
    with pytest.raises(ValueError):
        nn.HuberLoss(delta=0)
    with pytest.raises(TypeError):
        nn.HuberLoss()(x, randn(3, 4))
    with pytest.raises(ValueError):
        nn.SoftmaxCrossEntropyWithLogits()(x, Tensor(randn(3, 5)))


# ------------------------------------------------------------------- 'mean' normalisers (weights, ignored, smoothing)
def _ce_smoothed_ref(logits, target, weight, ignore_index, eps):
    """PyTorch's documented 'mean' for class-index targets with label smoothing, written as a cross entropy with the
    smoothed target q = (1−ε)·onehot(y) + ε/C:  Σ_n Σ_c −w_c·q_{n,c}·logp_{n,c} / Σ_n w_{y_n}, sums over the rows
    whose target is not ignore_index (classes on axis 1)."""
    c = logits.shape[1]
    logp = np.moveaxis(_log_softmax(logits, 1), 1, -1).reshape(-1, c)
    t = target.reshape(-1)
    w = np.ones(c) if weight is None else weight
    keep = t != ignore_index
    q = (1 - eps) * np.eye(c)[np.where(keep, t, 0)] + eps / c
    num = -(q * w * logp).sum(1)[keep].sum()
    return num / w[t[keep]].sum()


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("shape", [(7, 4), (2, 4, 3)])
def test_cross_entropy_mean_normaliser_with_smoothing(use_jit, weighted, ignore_index, shape):
    """Label smoothing with weights or ignored rows: both the NLL and the smoothing term are divided by
    Σ w_{y_n} over the non-ignored rows (was: the smoothing term by the row count)."""
    logits = randn(*shape)
    target = RNG.integers(0, 4, (shape[0],) + shape[2:])
    target.reshape(-1)[:3] = [ignore_index, 1, 3]  # at least one ignored row
    weight = np.array([1.0, 2.0, 0.5, 3.0]) if weighted else None
    loss = nn.CrossEntropyLoss(weight=None if weight is None else Tensor(weight), ignore_index=ignore_index,
                               label_smoothing=0.2)
    fn = ms.jit(lambda a, b: loss(a, b)) if use_jit else loss
    got = fn(Tensor(logits), Tensor(target.astype(np.int32)))
    np.testing.assert_allclose(got.asnumpy(), _ce_smoothed_ref(logits, target, weight, ignore_index, 0.2),
                               rtol=1e-6)
    # the gradient of the mean follows the same normaliser
    if not use_jit:
        check_grads(lambda a: loss(a, Tensor(target.astype(np.int32))), [logits], [0], rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("use_jit", [False, True])
def test_mean_normalisers_of_weighted_losses(use_jit):
    """Every loss's 'mean' with weights, against NumPy references of PyTorch's documented formulas: probability
    targets + class weight divide by the number of rows N (not Σ w); NLLLoss by Σ w_{y_n} over non-ignored rows;
    SoftmaxCrossEntropyWithLogits by N; BCELoss / BCEWithLogitsLoss (weight, pos_weight) by the element count."""
    def run(loss, *args):
        f = ms.jit(lambda *a: loss(*a)) if use_jit else loss
        return f(*[Tensor(a) for a in args]).asnumpy()

    logits = randn(6, 4)
    w = np.array([1.0, 2.0, 0.5, 3.0])
    probs = np.exp(_log_softmax(randn(6, 4), 1))
    for eps in (0.0, 0.2):
        q = probs * (1 - eps) + eps / 4
        want = -(q * w * _log_softmax(logits, 1)).sum() / 6
        got = run(nn.CrossEntropyLoss(weight=Tensor(w), label_smoothing=eps), logits, probs)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"probabilities, eps={eps}")
    target = np.array([0, 3, 1, 1, 2, 1])
    logp = _log_softmax(logits, 1)
    for ignore in (-100, 1):
        keep = target != ignore
        want = -(w[target] * logp[np.arange(6), target])[keep].sum() / w[target[keep]].sum()
        got = run(nn.NLLLoss(weight=Tensor(w), ignore_index=ignore), logp, target.astype(np.int32))
        np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=f"NLLLoss ignore_index={ignore}")
    got = run(nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), logits, target.astype(np.int32))
    np.testing.assert_allclose(got, -logp[np.arange(6), target].mean(), rtol=1e-10)
    x, y = randn(6, 4), RNG.uniform(0, 1, (6, 4))
    bw, pw = RNG.uniform(0.5, 2, (6, 4)), np.array([0.5, 2.0, 3.0, 1.0])
    got = run(nn.BCEWithLogitsLoss(weight=Tensor(bw), pos_weight=Tensor(pw)), x, y)
    np.testing.assert_allclose(got, _bce_logits_ref(x, y, bw, pw).mean(), rtol=1e-10)
    p = _sigmoid(x)
    got = run(nn.BCELoss(weight=Tensor(bw)), p, y)
    want = (-bw * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).mean()
    np.testing.assert_allclose(got, want, rtol=1e-10)


# --------------------------------------------------------------------------------------- compiled == eager
def test_losses_compiled_equal_pynative():
    x = Tensor(randn(6, 4).astype(np.float32))
    t = Tensor(RNG.integers(0, 4, 6).astype(np.int32))
    y = Tensor(RNG.uniform(0, 1, (6, 4)).astype(np.float32))
    losses = [
        (nn.CrossEntropyLoss(label_smoothing=0.1), x, t),
        (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), x, t),
        (nn.NLLLoss(weight=Tensor(np.array([1.0, 2.0, 0.5, 1.0], np.float32))), x, t),
        (nn.BCEWithLogitsLoss(pos_weight=Tensor(np.array([1.0, 2.0, 0.5, 1.0], np.float32))), x, y),
        (nn.HuberLoss(delta=0.5), x, y),
        (nn.KLDivLoss("batchmean"), x, y),
    ]
    for loss, a, b in losses:
        eager = loss(a, b).asnumpy()
        compiled = ms.jit(lambda p, q, loss=loss: loss(p, q))(a, b).asnumpy()
        np.testing.assert_allclose(compiled, eager, rtol=1e-6, err_msg=type(loss).__name__)
    # a compiled function checks label values at run time, as PyNative does, naming the user's line
    bad = Tensor(np.array([0, 1, 9, 3, 2, 1], np.int32))
    with pytest.raises(ValueError, match=r"every label must be in \[0, 4\).*but got 9 at index \(2,\)") as e:
        ms.jit(lambda p, q: nn.NLLLoss(reduction="sum")(p, q))(x, bad)
    assert "test_losses.py:" in str(e.value)


# ---- masked logits (−inf): log 2, not NaN; finite gradients (loss.py module docstring, "Masked logits") ----

_MASKED = np.array([[0.0, 0.0, -np.inf], [1.0, -np.inf, 2.0]])
_MASKED_LABELS = np.array([0, 2])


def _masked_ref(x, labels):
    """Per-row −log softmax(x)[label] and its gradient softmax − onehot (0 at a −inf entry), in float64 NumPy."""
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -(x - m - np.log(e.sum(axis=1, keepdims=True)))[np.arange(len(labels)), labels]
    onehot = np.eye(x.shape[1])[labels]
    return loss, p - onehot


_MASKED_LOSSES = {
    "sce_sparse": (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True), lambda lab, dt: Tensor(lab.astype(np.int32))),
    "sce_dense": (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=False),
                  lambda lab, dt: Tensor(np.eye(3)[lab].astype(dt))),
    "ce_indices": (lambda: nn.CrossEntropyLoss(reduction="none"), lambda lab, dt: Tensor(lab.astype(np.int32))),
    "ce_weighted": (lambda: nn.CrossEntropyLoss(weight=Tensor(np.array([1.0, 1.0, 1.0], np.float32)),
                                                reduction="none"), lambda lab, dt: Tensor(lab.astype(np.int32))),
    "ce_probabilities": (lambda: nn.CrossEntropyLoss(reduction="none"),
                         lambda lab, dt: Tensor(np.eye(3)[lab].astype(dt))),
    "ce_ignore_index": (lambda: nn.CrossEntropyLoss(reduction="none", ignore_index=1),
                        lambda lab, dt: Tensor(lab.astype(np.int32))),
}


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(_MASKED_LOSSES))
def test_masked_logits_give_finite_loss_and_gradient(name, dtype, use_jit):
    """logits [[0, 0, −inf]] with label 0 give log 2 = 0.6931 (not NaN), and the gradient softmax − onehot with 0 at
    the masked entry (finite); a second row masks a non-label class too. Both modes."""
    make, labels = _MASKED_LOSSES[name]
    loss_fn = make()
    x = Tensor(_MASKED.astype(dtype))
    y = labels(_MASKED_LABELS, dtype)
    vg = ms.value_and_grad(lambda a: loss_fn(a, y).sum())
    loss, grad = (ms.jit(vg) if use_jit else vg)(x)
    per_row = loss_fn(x, y)
    want_loss, want_grad = _masked_ref(_MASKED, _MASKED_LABELS)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(per_row.asnumpy()[0], np.log(2.0), **tol)
    np.testing.assert_allclose(per_row.asnumpy(), want_loss, **tol)
    np.testing.assert_allclose(loss.asnumpy(), want_loss.sum(), **tol)
    assert np.isfinite(grad.asnumpy()).all(), grad.asnumpy()
    np.testing.assert_allclose(grad.asnumpy(), want_grad, **tol)


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_with_masked_log_probabilities(reduction, use_jit):
    """NLLLoss of log-probabilities holding −inf at non-label classes: −x[label] (log 2 here), gradient −onehot
    (finite, 0 at the −inf entries); weights and the 'mean' denominator as usual. Both modes."""
    logp = np.array([[-np.log(2), -np.log(2), -np.inf], [-np.inf, -0.1, -2.4]])
    labels = np.array([0, 1])
    w = np.array([0.5, 2.0, 1.0])
    loss_fn = nn.NLLLoss(weight=Tensor(w), reduction=reduction)
    vg = ms.value_and_grad(lambda a: loss_fn(a, Tensor(labels.astype(np.int32))).sum())
    x = Tensor(logp)
    loss, grad = (ms.jit(vg) if use_jit else vg)(x)
    per = -w[labels] * logp[np.arange(2), labels]
    want = {"none": per.sum(), "sum": per.sum(), "mean": per.sum() / w[labels].sum()}[reduction]
    np.testing.assert_allclose(loss.asnumpy(), want, rtol=1e-12)
    g = np.zeros_like(logp)
    g[np.arange(2), labels] = -w[labels] / (w[labels].sum() if reduction == "mean" else 1.0)
    np.testing.assert_allclose(grad.asnumpy(), g, rtol=1e-12)


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
def test_kl_div_with_masked_log_probabilities(use_jit):
    """KLDivLoss y·(log y − x) with x = −inf where y = 0 contributes 0 there (0·log 0 = 0), not NaN. Both modes."""
    x = np.array([[np.log(0.5), np.log(0.5), -np.inf]])
    y = np.array([[0.25, 0.75, 0.0]])
    loss_fn = nn.KLDivLoss(reduction="sum")
    vg = ms.value_and_grad(lambda a: loss_fn(a, Tensor(y)))
    loss, grad = (ms.jit(vg) if use_jit else vg)(Tensor(x))
    want = 0.25 * (np.log(0.25) - np.log(0.5)) + 0.75 * (np.log(0.75) - np.log(0.5))
    np.testing.assert_allclose(loss.asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(grad.asnumpy(), -y, rtol=1e-12)


def test_label_smoothing_on_a_masked_class_is_infinite():
    """Label smoothing puts ε/C of the target on every class, so a −inf logit gives +inf (the true value, as
    PyTorch), never NaN."""
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    out = loss_fn(Tensor(np.array([[0.0, 0.0, -np.inf]])), Tensor(np.array([0], np.int32)))
    assert np.isposinf(out.asnumpy()), out
