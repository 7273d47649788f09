"""Class-index and sequence losses as single C++ kernels (issue 23, src/ops/loss.cpp): NLLLoss (+ NLLLossGrad) under
ops.nll_loss, ops.cross_entropy's class-index path (LogSoftmax then NLLLoss), nn.NLLLoss and nn.CrossEntropyLoss;
CTCLossV2 (+ CTCLossV2Grad) under ops.ctc_loss and nn.CTCLoss. The registry rows (tests/python/op_registry/
nnfunc_loss.py) check values against NumPy, float64 finite-difference gradients and PyNative against Graph mode;
here: MindSpore 2.10's values (obtained with /work/shared/tools/ms_oracle.py), the node counts, total_weight, the
gradient of the gradient, both modes on nn Cells, low-precision inputs and the errors."""
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, _core, nn, ops


def _graph_ops(jf):
    return [n for g in jf.graphs for n in re.findall(r"= (\w+)\(", g.graph_before.to_text())]


_X = np.array([[-1.2, -0.3, -2.0, -0.7], [-0.5, -1.5, -0.9, -2.2], [-0.1, -3.0, -1.0, -0.4]], np.float32)
_T = np.array([1, 2, 3], np.int32)
_W = np.array([0.5, 1.5, 2.0, 1.0], np.float32)


# ---------------------------------------------------------------------------------------------- NLLLoss

@pytest.mark.parametrize("reduction,ignore_index,loss,total", [
    # MindSpore 2.10: ops.NLLLoss(reduction, ignore_index)(x, t, w) -> (loss, total_weight)
    ("mean", -100, 0.5888888835906982, 4.5),
    ("mean", 2, 0.3400000035762787, 2.5),
    ("sum", -100, 2.6500000953674316, 4.5),
    ("sum", 2, 0.8500000238418579, 2.5),
    ("none", -100, [0.45000001788139343, 1.7999999523162842, 0.4000000059604645], 4.5),
])
def test_nll_loss_and_total_weight_mindspore_values(reduction, ignore_index, loss, total):
    got, tw = _core.nll_loss(Tensor(_X), Tensor(_T), Tensor(_W), ignore_index, reduction)
    np.testing.assert_allclose(got.asnumpy(), np.asarray(loss, np.float32), rtol=1e-6)
    np.testing.assert_allclose(tw.asnumpy(), np.float32(total), rtol=1e-6)
    np.testing.assert_allclose(ops.nll_loss(Tensor(_X), Tensor(_T), Tensor(_W), ignore_index, reduction).asnumpy(),
                               np.asarray(loss, np.float32), rtol=1e-6)


def test_nll_loss_ignored_terms_mindspore_values():
    # MindSpore 2.10: ops.nll_loss / nn.NLLLoss with reduction='none' give 0 for an ignored label (ignore_index in
    # range or -100); ops.cross_entropy likewise; 'mean' over the kept labels; all labels ignored: 'mean' is NaN.
    # (MindSpore's NLLLoss *primitive* keeps the raw term of an in-range ignore_index under 'none'; the functional
    # surface, which Kiln mirrors, zeroes it.)
    w = Tensor(_W)
    np.testing.assert_allclose(ops.nll_loss(Tensor(_X), Tensor(_T), w, ignore_index=2, reduction="none").asnumpy(),
                               [0.45, 0.0, 0.4], rtol=1e-6)
    np.testing.assert_allclose(nn.NLLLoss(w, ignore_index=2, reduction="none")(Tensor(_X), Tensor(_T)).asnumpy(),
                               [0.45, 0.0, 0.4], rtol=1e-6)
    np.testing.assert_allclose(ops.cross_entropy(Tensor(_X), Tensor(_T), w, ignore_index=2,
                                                 reduction="none").asnumpy(),
                               [1.2227630615234375, 0.0, 1.0895521640777588], rtol=1e-6)
    t2 = Tensor(np.array([1, -100, 3], np.int32))
    np.testing.assert_allclose(ops.nll_loss(Tensor(_X), t2, w, reduction="none").asnumpy(), [0.45, 0.0, 0.4],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.nll_loss(Tensor(_X), t2, w).asnumpy(), 0.34, rtol=1e-6)
    loss, tw = _core.nll_loss(Tensor(_X[:1]), Tensor(np.array([2], np.int32)), w, 2, "mean")
    assert np.isnan(loss.asnumpy()) and float(tw.asnumpy()) == 0.0
    # MindSpore 2.10: ops.nll_loss of uniform log-probabilities (2, 4, 3) with one -100 label: log 4
    lp = Tensor(np.log(np.full((2, 4, 3), 0.25, np.float32)))
    np.testing.assert_allclose(ops.nll_loss(lp, Tensor(np.array([[0, 1, 2], [3, 3, -100]], np.int32))).asnumpy(),
                               1.3862943649291992, rtol=1e-6)


def test_nll_and_cross_entropy_are_one_kernel_in_graphs():
    x, t, w = Tensor(_X), Tensor(_T), Tensor(_W)
    jf = kiln.jit(lambda a, b: ops.nll_loss(a, b))
    jf(x, t)
    assert _graph_ops(jf) == ["NLLLoss"]
    jw = kiln.jit(lambda a, b, c: ops.nll_loss(a, b, c, reduction="sum"))
    jw(x, t, w)
    assert _graph_ops(jw) == ["NLLLoss"]
    jc = kiln.jit(lambda a, b: ops.cross_entropy(a, b))
    jc(x, t)
    assert _graph_ops(jc) == ["LogSoftmax", "NLLLoss"]


def test_nll_one_dimensional_input_and_integer_dtypes():
    x = np.array([-1.0, -2.0, -0.5], np.float32)
    assert float(ops.nll_loss(Tensor(x), Tensor(np.array(2, np.int64))).asnumpy()) == 0.5
    np.testing.assert_allclose(float(ops.cross_entropy(Tensor(x), Tensor(np.array(0, np.int32))).asnumpy()),
                               -(x[0] - np.log(np.exp(x).sum())), rtol=1e-6)
    # int8/uint8 labels are taken as the former composition took them
    np.testing.assert_allclose(ops.nll_loss(Tensor(_X), Tensor(_T.astype(np.uint8))).asnumpy(),
                               ops.nll_loss(Tensor(_X), Tensor(_T)).asnumpy())


def test_nll_float16_and_float64():
    for dt, rtol in ((np.float16, 2e-3), (np.float64, 1e-12)):
        x = _X.astype(dt)
        got = ops.nll_loss(Tensor(x), Tensor(_T), Tensor(_W.astype(dt)))
        assert got.dtype == Tensor(x).dtype
        want = -(x[np.arange(3), _T].astype(np.float64) * _W[_T]).sum() / _W[_T].sum()
        np.testing.assert_allclose(float(got.asnumpy()), want, rtol=rtol)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_gradient_of_gradient(reduction):
    # NLLLossGrad is linear in its dout: d/ds of <grad_x(s * nll(x)), v> is <grad_x nll(x), v> (float64)
    rng = np.random.default_rng(0)
    x = Tensor(rng.uniform(-2, 0, (4, 3)))
    t = Tensor(np.array([0, 2, 1, 2], np.int32))
    w = Tensor(np.array([0.5, 2.0, 1.5]))
    v = Tensor(rng.standard_normal((4, 3)))

    def inner(s):
        gx = kiln.grad(lambda a: ops.sum(ops.nll_loss(a, t, w, reduction=reduction) * s))(x)
        return ops.sum(gx * v)

    got = kiln.grad(inner)(Tensor(np.array(1.5)))
    g1 = kiln.grad(lambda a: ops.sum(ops.nll_loss(a, t, w, reduction=reduction)))(x)
    np.testing.assert_allclose(float(got.asnumpy()), float((g1.asnumpy() * v.asnumpy()).sum()), rtol=1e-12)


def test_loss_cells_pynative_equals_graph():
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((5, 4, 2)).astype(np.float32))
    t = Tensor(rng.integers(0, 4, (5, 2)).astype(np.int32))
    w = Tensor(_W)
    for cell in (nn.NLLLoss(w, ignore_index=1), nn.CrossEntropyLoss(w, reduction="sum"), nn.CrossEntropyLoss(),
                 nn.NLLLoss(reduction="none")):
        eager = cell(x, t).asnumpy()
        np.testing.assert_allclose(kiln.jit(lambda a, b, c=cell: c(a, b))(x, t).asnumpy(), eager, rtol=1e-6)
        ge = kiln.grad(lambda a, c=cell: ops.sum(c(a, t)))(x).asnumpy()
        gg = kiln.jit(kiln.grad(lambda a, c=cell: ops.sum(c(a, t))))(x).asnumpy()
        np.testing.assert_allclose(gg, ge, rtol=1e-6)


def test_nll_errors_name_the_op_and_shapes():
    x, t = Tensor(_X), Tensor(_T)
    with pytest.raises(TypeError, match=r"For 'NLLLoss', class-index labels must be int32 or int64, but got Float32"):
        ops.nll_loss(x, Tensor(_T.astype(np.float32)))
    with pytest.raises(ValueError, match=re.escape("For 'NLLLoss', the labels must have shape (3,) (the logits' "
                                                   "shape without the class axis), but got (2,).")):
        ops.nll_loss(x, Tensor(_T[:2]))
    with pytest.raises(ValueError, match=re.escape("For 'NLLLoss', the 'weight' must have shape (4,) (one value per "
                                                   "class), but got (3,).")):
        ops.nll_loss(x, t, Tensor(_W[:3]))
    with pytest.raises(ValueError, match=re.escape("For 'CrossEntropyLoss', the labels must have shape (3,)")):
        ops.cross_entropy(x, Tensor(_T[:2]))
    bad = Tensor(np.array([1, 4, 0], np.int64))
    for fn in (lambda a, b: ops.nll_loss(a, b), kiln.jit(lambda a, b: ops.nll_loss(a, b))):
        with pytest.raises(ValueError, match=re.escape("For 'NLLLoss', every label must be in [0, 4) or equal to "
                                                       "ignore_index (-100), but got 4 at index (1,).")):
            fn(x, bad)
    jc = kiln.jit(lambda a, b: ops.cross_entropy(a, b))
    jc(x, t)
    with pytest.raises(ValueError, match=re.escape("For 'CrossEntropyLoss', every label must be in [0, 4)")):
        jc(x, bad)


# ---------------------------------------------------------------------------------------------- CTCLossV2

def _ctc_case():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((6, 3, 5))
    lp = (z - np.log(np.exp(z).sum(-1, keepdims=True))).astype(np.float32)
    tg = np.array([[1, 2, 2], [3, 1, 4], [1, 1, 1]], np.int32)
    return lp, tg, np.array([6, 5, 2], np.int32), np.array([3, 2, 2], np.int32)


def test_ctc_is_one_kernel_and_pynative_equals_graph():
    lp, tg, il, tl = (Tensor(a) for a in _ctc_case())
    for red in ("none", "mean", "sum"):
        f = lambda a, b, c, d, r=red: ops.ctc_loss(a, b, c, d, reduction=r, zero_infinity=True)
        jf = kiln.jit(f)
        loss, alpha = jf(lp, tg, il, tl)
        assert _graph_ops(jf) == ["CTCLossV2"]
        e_loss, e_alpha = f(lp, tg, il, tl)
        np.testing.assert_allclose(loss.asnumpy(), e_loss.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(alpha.asnumpy(), e_alpha.asnumpy(), rtol=1e-6)
        ge = kiln.grad(lambda a, r=red: ops.sum(f(a, tg, il, tl, r)[0]))(lp).asnumpy()
        gg = kiln.jit(kiln.grad(lambda a, r=red: ops.sum(f(a, tg, il, tl, r)[0])))(lp).asnumpy()
        np.testing.assert_allclose(gg, ge, rtol=1e-6)
    cell = nn.CTCLoss(reduction="mean", zero_infinity=True)
    np.testing.assert_allclose(kiln.jit(lambda *a: cell(*a))(lp, tg, il, tl).asnumpy(),
                               cell(lp, tg, il, tl).asnumpy(), rtol=1e-6)


def test_ctc_impossible_alignment_infinite_with_zero_gradient():
    lp, tg, il, tl = (Tensor(a) for a in _ctc_case())
    loss, alpha = ops.ctc_loss(lp, tg, il, tl, reduction="none")
    assert np.isinf(loss.asnumpy()[2]) and np.isfinite(loss.asnumpy()[:2]).all()
    assert np.isneginf(alpha.asnumpy()[0, 0, 2:]).all()  # s >= 2 unreachable at t = 0
    assert np.isneginf(alpha.asnumpy()[2, 2:]).all()  # t >= input_lengths
    g = kiln.grad(lambda a: ops.sum(ops.ctc_loss(a, tg, il, tl, reduction="none")[0]))(lp).asnumpy()
    assert np.isfinite(g).all() and (g[:, 2] == 0).all() and (g[5:, 1] == 0).all()


def test_ctc_float16_and_float64_agree():
    lp, tg, il, tl = _ctc_case()
    ref = ops.ctc_loss(Tensor(lp.astype(np.float64)), Tensor(tg), Tensor(il), Tensor(tl), reduction="none",
                       zero_infinity=True)[0].asnumpy()
    half = ops.ctc_loss(Tensor(lp.astype(np.float16)), Tensor(tg), Tensor(il), Tensor(tl), reduction="none",
                        zero_infinity=True)[0]
    assert half.dtype == kiln.float16
    np.testing.assert_allclose(half.asnumpy().astype(np.float64), ref, rtol=2e-3)


def test_ctc_run_time_checks_in_both_modes():
    lp, tg, il, tl = (Tensor(a) for a in _ctc_case())
    jf = kiln.jit(lambda a, b, c, d: ops.ctc_loss(a, b, c, d)[0])
    jf(lp, tg, il, tl)
    bad_len = Tensor(np.array([6, 7, 2], np.int32))
    bad_tg = Tensor(np.array([[1, 2, 2], [3, 5, 4], [1, 1, 1]], np.int32))
    for fn in (lambda *a: ops.ctc_loss(*a)[0], jf):
        with pytest.raises(ValueError, match=re.escape("For 'ctc_loss', every input_lengths must be in [1, 6], but "
                                                       "got 7 at index (1,).")):
            fn(lp, tg, bad_len, tl)
        with pytest.raises(ValueError, match=re.escape("For 'ctc_loss', every targets must be in [0, 5), but got 5 at "
                                                       "index (1, 1).")):
            fn(lp, bad_tg, il, tl)


# ---------------------------------------------------------------------------------------------- margins

_MX = np.array([[0.3, -0.2, 0.9, 0.1, -0.5], [1.2, 0.4, -0.3, 0.0, 0.8], [-0.7, 0.2, 0.5, 0.6, -0.1]], np.float32)
_MT = np.array([2, 0, 3], np.int64)
_MW = np.array([0.5, 1.0, 2.0, 1.5, 0.8], np.float32)


def test_multi_margin_loss_mindspore_values_and_gradient():
    x, t, w = Tensor(_MX), Tensor(_MT), Tensor(_MW)
    # MindSpore 2.10: ops.multi_margin_loss (its margin must be an int there; Kiln also takes a float)
    np.testing.assert_allclose(ops.multi_margin_loss(x, t, reduction="none").asnumpy(), [0.12, 0.16, 0.36],
                               rtol=1e-5)
    np.testing.assert_allclose(float(ops.multi_margin_loss(x, t, p=2, margin=2, weight=w).asnumpy()),
                               1.6073331832885742, rtol=1e-6)
    np.testing.assert_allclose(float(ops.multi_margin_loss(x, t, margin=2, reduction="sum").asnumpy()),
                               2.740000009536743, rtol=1e-6)
    g = kiln.grad(lambda a: ops.multi_margin_loss(a, t, p=2, margin=2, weight=w))(x)
    np.testing.assert_allclose(g.asnumpy(), [
        [0.3733333349227905, 0.24000000953674316, -1.09333336353302, 0.3199999928474426, 0.1600000113248825],
        [-0.2733333706855774, 0.08000000566244125, 0.03333333507180214, 0.0533333346247673, 0.1066666692495346],
        [0.13999998569488525, 0.320000022649765, 0.3799999952316284, -1.100000023841858, 0.25999999046325684]],
        rtol=1e-5, atol=1e-7)


def test_margin_losses_are_one_kernel_and_pynative_equals_graph():
    x, t, w = Tensor(_MX), Tensor(_MT), Tensor(_MW)
    tl = Tensor(np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [-1, 1, 2, 3, 4]], np.int32))
    cases = [(lambda a: ops.multi_margin_loss(a, t, 2, 1.5, w), "MultiMarginLoss"),
             (lambda a: ops.multilabel_margin_loss(a, tl, "none"), "MultilabelMarginLoss"),
             (lambda a: nn.MultiMarginLoss(reduction="sum")(a, t), "MultiMarginLoss"),
             (lambda a: nn.MultilabelMarginLoss()(a, tl), "MultilabelMarginLoss")]
    for fn, op in cases:
        jf = kiln.jit(fn)
        np.testing.assert_allclose(jf(x).asnumpy(), fn(x).asnumpy(), rtol=1e-6)
        assert _graph_ops(jf) == [op]
        ge = kiln.grad(lambda a, f=fn: ops.sum(f(a)))(x).asnumpy()
        np.testing.assert_allclose(kiln.jit(kiln.grad(lambda a, f=fn: ops.sum(f(a))))(x).asnumpy(), ge, rtol=1e-6)


def test_multilabel_margin_is_target_output():
    x = Tensor(_MX)
    t = Tensor(np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [-1, 1, 2, 3, 4]], np.int32))
    loss, is_target = _core.multilabel_margin_loss(x, t, "none")
    assert is_target.dtype == kiln.int32
    np.testing.assert_array_equal(is_target.asnumpy(), [[1, 0, 0, 1, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 0]])
    assert loss.asnumpy()[2] == 0.0


def test_margin_losses_check_targets_in_both_modes():
    x = Tensor(_MX)
    bad = Tensor(np.array([2, 5, 3], np.int64))
    bad_l = Tensor(np.array([[3, 0, -1, 1, 2], [1, -2, 3, -1, 0], [-1, 1, 2, 3, 4]], np.int32))
    jm = kiln.jit(lambda a, b: ops.multi_margin_loss(a, b))
    jl = kiln.jit(lambda a, b: ops.multilabel_margin_loss(a, b))
    for fn in (lambda a, b: ops.multi_margin_loss(a, b), jm):
        with pytest.raises(ValueError, match=re.escape("For 'multi_margin_loss', every target must be in [0, 5), "
                                                       "but got 5 at index (1,).")):
            fn(x, bad)
    for fn in (lambda a, b: ops.multilabel_margin_loss(a, b), jl):
        with pytest.raises(ValueError, match=re.escape("For 'multilabel_margin_loss', every target must be in "
                                                       "[-1, 5), but got -2 at index (1, 1).")):
            fn(x, bad_l)
    with pytest.raises(TypeError, match="int32 or int64"):
        ops.multi_margin_loss(x, Tensor(_MT.astype(np.float32)))
    with pytest.raises(ValueError, match=re.escape("the 'target' must have shape (3,)")):
        ops.multi_margin_loss(x, Tensor(_MT[:2]))
