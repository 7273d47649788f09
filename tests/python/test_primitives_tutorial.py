"""ops.ApplyMomentum, ops.Dropout2D/Dropout3D and ops.TransposeView (kiln/ops/primitives_tutorial.py), as
MindSpore 2.10's (values pinned with /work/msvenv)."""
import numpy as np
import pytest

import kiln as ms
from kiln import ops, Tensor, Parameter


def test_apply_momentum_in_place_and_result():
    v = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="v")
    a = Parameter(Tensor(np.array([0.5, 0.5], np.float32)), name="a")
    g = Tensor(np.array([1.0, 1.0], np.float32))
    r = ops.ApplyMomentum()(v, a, 0.1, g, 0.9)
    assert not isinstance(r, Parameter)
    np.testing.assert_allclose(r.asnumpy(), [0.855, 1.855], rtol=1e-6)  # MindSpore 2.10
    np.testing.assert_allclose(v.asnumpy(), [0.855, 1.855], rtol=1e-6)
    np.testing.assert_allclose(a.asnumpy(), [1.45, 1.45], rtol=1e-6)
    r = ops.ApplyMomentum(use_nesterov=True)(v, a, Tensor(0.1, ms.float32), g, Tensor(0.9, ms.float32))
    # MindSpore's documented Nesterov update: accum = 0.9·1.45 + 1 = 2.305; v = 0.855 − 0.1·(1 + 0.9·2.305)
    # (MindSpore 2.10's CPU kernel prints 0.6245 here: it ignores use_nesterov)
    np.testing.assert_allclose(r.asnumpy(), [0.54755, 1.54755], rtol=1e-6)
    s = Parameter(Tensor(np.zeros(2, np.float32)), name="s")
    acc = Parameter(Tensor(np.zeros(2, np.float32)), name="acc")
    ops.ApplyMomentum(gradient_scale=2.0)(s, acc, 1.0, g, 0.0)
    np.testing.assert_allclose(s.asnumpy(), [-2.0, -2.0])


def test_apply_momentum_errors():
    v = Parameter(Tensor(np.ones(2, np.float32)), name="v")
    a = Parameter(Tensor(np.ones(2, np.float32)), name="a")
    with pytest.raises(TypeError, match="ApplyMomentum"):
        ops.ApplyMomentum(use_nesterov=1)
    with pytest.raises(TypeError, match="Parameter"):
        ops.ApplyMomentum()(Tensor(np.ones(2, np.float32)), a, 0.1, Tensor(np.ones(2, np.float32)), 0.9)
    with pytest.raises(ValueError, match="shape"):
        ops.ApplyMomentum()(v, a, 0.1, Tensor(np.ones(3, np.float32)), 0.9)
    with pytest.raises(TypeError, match="momentum"):
        ops.ApplyMomentum()(v, a, 0.1, Tensor(np.ones(2, np.float32)), "0.9")


def test_dropout2d_channels_and_mask():
    ms.set_seed(3)
    x = Tensor(np.arange(1, 2 * 8 * 3 * 3 + 1, dtype=np.float32).reshape(2, 8, 3, 3))
    out, mask = ops.Dropout2D(0.75)(x)
    m, o = mask.asnumpy(), out.asnumpy()
    assert m.dtype == np.bool_ and m.shape == (2, 8, 3, 3)
    assert (m == m[:, :, :1, :1]).all()  # one draw per (sample, channel)
    np.testing.assert_allclose(o, np.where(m, x.asnumpy() / 0.75, 0.0), rtol=1e-6)
    out, mask = ops.Dropout3D(1.0)(Tensor(np.ones((1, 2, 1, 1, 1), np.float32)))
    assert mask.asnumpy().all() and np.array_equal(out.asnumpy(), np.ones((1, 2, 1, 1, 1)))
    out, mask = ops.Dropout2D(0.0)(Tensor(np.ones((1, 2, 1, 1), np.float32)))
    assert not mask.asnumpy().any() and not out.asnumpy().any()
    with pytest.raises(ValueError, match="keep_prob"):
        ops.Dropout2D(1.5)
    with pytest.raises(ValueError, match="4-D"):
        ops.Dropout2D(0.5)(Tensor(np.ones((2, 2), np.float32)))
    with pytest.raises(TypeError, match="keep_prob"):
        ops.Dropout2D("0.5")


# ---------------------------------------------------------------------------------------------- TransposeView
def test_transpose_view_values_and_write_through():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = Tensor(a.copy())
    v = ops.operations.TransposeView()(x, (2, 0, 1))
    assert ops.TransposeView is ops.operations.TransposeView
    np.testing.assert_array_equal(v.asnumpy(), a.transpose(2, 0, 1))
    ops.Assign()(v, v * 2)  # a write into the view reaches x (MindSpore 2.10 PyNative refuses it; graph allows it)
    np.testing.assert_array_equal(x.asnumpy(), a * 2)
    v.add_(1)
    np.testing.assert_array_equal(x.asnumpy(), a * 2 + 1)
    np.testing.assert_array_equal(ops.TransposeView()(x, (-1, 0, 1)).asnumpy(), (a * 2 + 1).transpose(2, 0, 1))


def test_transpose_view_gradient_and_graph(graph_mode):
    a = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float64)
    w = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    tv = ops.TransposeView()
    g = ms.jit(ms.grad(lambda x: (tv(x, (1, 0)) * Tensor(w)).sum()))(Tensor(a))
    np.testing.assert_allclose(g.asnumpy(), w.T)

    class ViewOut(ms.nn.Cell):  # the static-graph tutorial's view + in-place example
        def __init__(self):
            super().__init__()
            self.transpose = ops.operations.TransposeView()
            self.assign = ops.operations.Assign()

        def construct(self, x):
            x = self.transpose(x, (0, 1, 2))
            self.assign(x, x * 2)
            return x * 3

    x1 = np.array([[[1, 0, -1]], [[0, 2, 0]]], np.int32)
    np.testing.assert_array_equal(ViewOut()(Tensor(x1)).asnumpy(), x1 * 6)


def test_transpose_view_errors():
    x = Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"TransposeView.*permutation of range\(2\).*\(0, 0\)"):
        ops.TransposeView()(x, (0, 0))
    with pytest.raises(ValueError, match="TransposeView"):
        ops.TransposeView()(x, (0, 2))
    with pytest.raises(TypeError, match="TransposeView.*tuple or list of ints"):
        ops.TransposeView()(x, 1)
    with pytest.raises(TypeError, match="TransposeView.*Tensor"):
        ops.TransposeView()(np.ones((2, 3)), (1, 0))
