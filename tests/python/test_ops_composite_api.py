"""The functional and Primitive surfaces of kiln/ops/index_func.py, math_func.py, loss_func.py and primitives_nn.py
that the op registry (tests/python/op_registry/composite.py) does not cover: tuple/scalar helpers, state updates,
losses, dropout, pooling/conv primitives, and the errors of bad input. Expected values marked "MindSpore 2.10" were
printed by MindSpore 2.10 (CPU) for the same calls."""
import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, nn, ops


def _t(a, dtype=np.float32):
    return Tensor(np.asarray(a, dtype=dtype))


def test_tuple_and_scalar_helpers_match_mindspore():
    a = ops.tuple_to_array((1, 2, 3))
    assert a.dtype == kiln.int32 and a.asnumpy().tolist() == [1, 2, 3]
    f = ops.tuple_to_array((1.0, 2.0))
    assert f.dtype == kiln.float32 and f.asnumpy().tolist() == [1.0, 2.0]
    mixed = ops.TupleToArray()((1, 2.5))  # MindSpore 2.10: the first element decides → Int32 [1, 2]
    assert mixed.dtype == kiln.int32 and mixed.asnumpy().tolist() == [1, 2]
    s = ops.scalar_to_tensor(3)
    assert s.dtype == kiln.float32 and s.shape == () and float(s.asnumpy()) == 3.0
    assert ops.ScalarToTensor()(3, kiln.int32).dtype == kiln.int32
    assert ops.make_range(5) == (0, 1, 2, 3, 4)
    assert ops.make_range(1, 10, 3) == (1, 4, 7)
    assert ops.tuple_len((1, 2, 3)) == 3
    with pytest.raises(TypeError, match="tuple_to_array"):
        ops.tuple_to_array(())
    with pytest.raises(TypeError, match="scalar_to_tensor"):
        ops.scalar_to_tensor("3")
    with pytest.raises(ValueError, match="delta"):
        ops.make_range(1, 5, 0)


def test_tuple_to_array_bools_nested_and_scalar_bools_match_mindspore():
    # MindSpore 2.10's values: bools are Python ints (Int32), nested equal-length tuples give a 2-D Float32 Tensor
    # (the first element, a tuple, is not an int), a leading float makes the whole Float32
    b = ops.tuple_to_array((True, False))
    assert b.dtype == kiln.int32 and b.asnumpy().tolist() == [1, 0]
    n = ops.tuple_to_array(((1, 2), (3, 4)))
    assert n.dtype == kiln.float32 and n.asnumpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    f = ops.tuple_to_array((2.5, 1))
    assert f.dtype == kiln.float32 and f.asnumpy().tolist() == [2.5, 1.0]
    assert ops.tuple_to_array(((True,),)).asnumpy().tolist() == [[1.0]]
    with pytest.raises(TypeError, match="same length"):
        ops.tuple_to_array(((1, 2), (3,)))
    with pytest.raises(TypeError, match="tuple_to_array"):
        ops.tuple_to_array((1, (2, 3)))
    with pytest.raises(TypeError, match="tuple_to_array"):
        ops.tuple_to_array((1, "a"))
    with pytest.raises(ValueError, match="Int32"):  # MindSpore wraps 3000000000 around to -1294967296
        ops.tuple_to_array((3000000000,))
    t = ops.scalar_to_tensor(True)
    assert t.dtype == kiln.float32 and float(t.asnumpy()) == 1.0
    assert ops.scalar_to_tensor(True, kiln.bool_).asnumpy().item() is True
    assert ops.scalar_to_tensor(False, kiln.int32).asnumpy().item() == 0


def test_range_dtypes_and_values_match_mindspore():
    r = ops.range(Tensor(0, kiln.int32), Tensor(5, kiln.int32), Tensor(2, kiln.int32))
    assert r.dtype == kiln.int64 and r.asnumpy().tolist() == [0, 2, 4]  # MindSpore 2.10: Int64
    rf = ops.range(Tensor(0.0, kiln.float32), Tensor(1.0, kiln.float32), Tensor(0.3, kiln.float32))
    assert rf.dtype == kiln.float32
    np.testing.assert_allclose(rf.asnumpy(), [0.0, 0.3, 0.6, 0.9], rtol=1e-6)
    assert ops.range(5, 0, -2).asnumpy().tolist() == [5, 3, 1]
    with pytest.raises(ValueError, match="step"):
        ops.range(0, 5, 0)
    with pytest.raises(ValueError, match="cannot go"):
        ops.range(0, 5, -1)
    with pytest.raises(ValueError, match="maxlen"):
        ops.range(0, 100, 1, maxlen=10)


def test_nonzero_and_as_tuple():
    x = _t([[0, 1], [2, 0]])
    nz = ops.nonzero(x)
    assert nz.dtype == kiln.int64 and nz.asnumpy().tolist() == [[0, 1], [1, 0]]  # MindSpore 2.10
    rows, cols = ops.nonzero(x, as_tuple=True)
    assert rows.asnumpy().tolist() == [0, 1] and cols.asnumpy().tolist() == [1, 0]


def test_unstack_unbind_and_primitives():
    x = _t(np.arange(6).reshape(2, 3))
    parts = ops.unstack(x, axis=1)
    assert isinstance(parts, tuple) and [p.asnumpy().tolist() for p in parts] == [[0, 3], [1, 4], [2, 5]]
    assert [p.asnumpy().tolist() for p in ops.unbind(x)] == [[0, 1, 2], [3, 4, 5]]
    assert len(ops.Unstack(axis=0, num=2)(x)) == 2
    with pytest.raises(ValueError, match="num"):
        ops.Unstack(axis=0, num=3)(x)
    with pytest.raises(ValueError, match="rank"):
        ops.unstack(_t(1.0))
    g = ops.Meshgrid(indexing="ij")((_t([1, 2, 3]), _t([4, 5])))
    assert [tuple(t.shape) for t in g] == [(3, 2), (3, 2)]
    assert ops.Slice()(_t(np.arange(12).reshape(3, 4)), (1, 0), (-1, 2)).asnumpy().tolist() == [[4, 5], [8, 9]]
    ss = ops.StridedSlice(begin_mask=2, end_mask=4)(_t(np.arange(24).reshape(2, 3, 4)), (1, 1, 0), (2, 2, 1),
                                                    (1, 1, 1))
    assert ss.shape == (1, 2, 4) and ss.asnumpy().ravel().tolist() == list(range(12, 20))  # MindSpore 2.10
    assert ops.Identity()(x).asnumpy().tolist() == x.asnumpy().tolist()


def test_index_ops_reject_bad_input():
    x = _t(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="does not fit"):
        ops.slice(x, (1, 0), (2, 2))
    with pytest.raises(ValueError, match="2 elements"):
        ops.slice(x, (0,), (1,))
    with pytest.raises(ValueError, match="strides"):
        ops.strided_slice(x, (0, 0), (1, 1), (0, 1))
    with pytest.raises(ValueError, match="ellipsis_mask"):
        ops.strided_slice(x, (0, 0), (1, 1), (1, 1), ellipsis_mask=3)
    with pytest.raises(TypeError, match="Bool"):
        ops.masked_fill(x, _t(np.ones((2, 3))), 1.0)
    with pytest.raises(ValueError, match="0-d"):
        ops.masked_fill(x, Tensor(np.ones((2, 3), bool)), _t([1.0, 2.0]))
    with pytest.raises(ValueError, match="rank >= 2"):
        ops.tril(_t([1.0, 2.0]))
    with pytest.raises(ValueError, match="same length"):
        ops.roll(x, (1, 2), (0,))
    with pytest.raises(TypeError, match="int32 or int64"):
        ops.gather_elements(x, 1, _t([[0.0]]))
    with pytest.raises(ValueError, match="index"):
        ops.gather_elements(x, 1, Tensor(np.array([[0, 3, 1], [0, 0, 0]], np.int32))).asnumpy()
    with pytest.raises(ValueError, match="updates"):
        ops.scatter_nd(Tensor(np.array([[0], [1]], np.int32)), _t([1.0]), (3,))
    with pytest.raises(ValueError, match="indices"):
        ops.scatter_nd(Tensor(np.array([[0], [5]], np.int32)), _t([1.0, 2.0]), (3,)).asnumpy()
    with pytest.raises(ValueError, match="indexing"):
        ops.meshgrid(_t([1.0]), _t([2.0]), indexing="xx")
    with pytest.raises(ValueError, match="1-D"):
        ops.meshgrid(_t([[1.0]]), _t([2.0]))
    with pytest.raises(ValueError, match="block_size"):
        ops.DepthToSpace(2)(_t(np.zeros((1, 3, 2, 2))))


def test_scatter_nd_update_and_assign_add_sub_update_parameters():
    p = Parameter(_t(np.zeros((3, 2))), name="p")
    ops.ScatterNdUpdate()(p, Tensor(np.array([[0], [2]], np.int32)), _t([[1, 2], [3, 4]]))
    assert p.asnumpy().tolist() == [[1, 2], [0, 0], [3, 4]]
    q = Parameter(_t([1.0, 2.0]), name="q")
    ops.assign_add(q, _t([10.0, 20.0]))
    ops.AssignSub()(q, 1.0)
    ops.AssignAdd()(q, _t(0.5))
    assert q.asnumpy().tolist() == [10.5, 21.5]
    with pytest.raises(TypeError, match="Parameter"):
        ops.assign_add(_t([1.0]), _t([1.0]))
    with pytest.raises(ValueError, match="broadcast"):
        ops.assign_add(q, _t(np.ones((2, 2))))


def test_assign_add_in_a_compiled_step_matches_pynative():
    def run(use_jit):
        p = Parameter(_t([1.0, 2.0]), name="p")

        def step(x):
            ops.assign_add(p, x)
            return p * 2

        f = kiln.jit(step) if use_jit else step
        for i in range(3):
            out = f(_t([float(i), 1.0]))
        return p.asnumpy(), out.asnumpy()

    for a, b in zip(run(False), run(True)):
        np.testing.assert_array_equal(a, b)
    assert run(True)[0].tolist() == [4.0, 5.0]


def test_norm_rejects_what_it_cannot_compute():
    x = _t(np.ones((2, 2)))
    with pytest.raises(ValueError, match="nuc"):
        ops.norm(x, ord="nuc")
    with pytest.raises(ValueError, match="numeric"):
        ops.norm(x, ord="fro", dim=1)
    with pytest.raises(ValueError, match="dim"):
        ops.norm(_t(np.ones((2, 2, 2))), ord=1)
    with pytest.raises(TypeError, match="float dtype"):
        ops.norm(x, dtype=kiln.int32)
    # MindSpore 2.10 values
    m = _t([[1.0, -2.0], [3.0, 4.0]])
    assert float(ops.norm(m).asnumpy()) == pytest.approx(5.4772257804870605)
    assert float(ops.norm(m, ord=1).asnumpy()) == 6.0
    assert ops.norm(m, ord=float("inf"), dim=1).asnumpy().tolist() == [2.0, 4.0]
    assert float(ops.norm(_t([1.0, -2.0, 3.0]), ord=3).asnumpy()) == pytest.approx(3.301927328109741)


def test_losses_match_mindspore():
    x, y = _t([1.0, 2.0, 3.0]), _t([1.5, 4.0, 3.0])
    np.testing.assert_allclose(ops.smooth_l1_loss(x, y).asnumpy(), [0.125, 1.5, 0.0])
    assert float(ops.smooth_l1_loss(x, y, reduction="mean").asnumpy()) == pytest.approx(0.5416666865348816)
    np.testing.assert_allclose(ops.SmoothL1Loss()(x, y).asnumpy(), [0.125, 1.5, 0.0])
    bce = ops.binary_cross_entropy(_t([0.1, 0.9, 0.0]), _t([0.0, 1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(bce.asnumpy(), [0.10536054521799088, 0.10536054521799088, 27.63102149963379],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.BinaryCrossEntropy("none")(_t([0.1, 0.9, 0.0]), _t([0.0, 1.0, 1.0])).asnumpy(),
                               bce.asnumpy())
    bcel = ops.binary_cross_entropy_with_logits(_t([0.1, -3.0, 50.0]), _t([0.0, 1.0, 1.0]), _t([1.0, 2.0, 1.0]),
                                                _t([3.0, 1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(bcel.asnumpy(), [0.7443966865539551, 6.097174644470215, 0.0], rtol=1e-6, atol=1e-7)
    logits = _t([[1.0, 2.0, 3.0], [1.0, 0.0, 0.0]])
    assert float(ops.cross_entropy(logits, Tensor(np.array([2, -100], np.int32))).asnumpy()) == \
        pytest.approx(0.4076054096221924, rel=5e-6)
    assert float(ops.cross_entropy(logits, Tensor(np.array([2, 0], np.int32)), label_smoothing=0.1,
                                   weight=_t([1.0, 2.0, 3.0])).asnumpy()) == pytest.approx(0.5221610069274902, 5e-6)
    assert float(ops.cross_entropy(logits, _t([[0.2, 0.3, 0.5], [1, 0, 0]])).asnumpy()) == \
        pytest.approx(0.8295247554779053, rel=5e-6)
    loss, backprop = ops.SoftmaxCrossEntropyWithLogits()(logits, _t([[0.0, 0, 1], [1, 0, 0]]))
    np.testing.assert_allclose(loss.asnumpy(), [0.40760594606399536, 0.5514446496963501], rtol=1e-6)
    np.testing.assert_allclose(backprop.asnumpy(), [[0.09003057330846786, 0.2447284758090973, -0.33475905656814575],
                                                    [-0.4238830804824829, 0.21194157004356384, 0.21194157004356384]],
                               rtol=1e-5, atol=1e-7)
    sig = ops.SigmoidCrossEntropyWithLogits()(_t([[1.0, -2.0]]), _t([[0.0, 1.0]]))
    np.testing.assert_allclose(sig.asnumpy(), [[1.3132617473602295, 2.1269280910491943]], rtol=1e-6)
    with pytest.raises(ValueError, match="2-D"):
        ops.SoftmaxCrossEntropyWithLogits()(_t([1.0, 2.0]), _t([0.0, 1.0]))


def test_functional_losses_have_gradients():
    x = _t([[0.3, -1.2, 2.0], [0.1, 0.0, -0.5]])
    y = Tensor(np.array([2, 0], np.int32))
    g = kiln.grad(lambda a: ops.cross_entropy(a, y))(x).asnumpy()
    p = np.exp(x.asnumpy()) / np.exp(x.asnumpy()).sum(1, keepdims=True)
    onehot = np.eye(3)[[2, 0]]
    np.testing.assert_allclose(g, (p - onehot) / 2, rtol=1e-5, atol=1e-7)


def test_dropout_function_and_primitive():
    kiln.set_seed(1)
    x = _t(np.ones((200, 50)))
    out = ops.dropout(x, p=0.25)
    vals = np.unique(out.asnumpy())
    assert set(vals.tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((out.asnumpy() == 0).mean() - 0.25) < 0.03
    assert ops.dropout(x, p=0.25, training=False) is x
    assert float(ops.dropout(x, p=1.0).asnumpy().sum()) == 0.0
    y, mask = ops.Dropout(keep_prob=0.5)(x)
    assert mask.dtype == kiln.float32 and set(np.unique(mask.asnumpy()).tolist()) <= {0.0, 1.0}
    np.testing.assert_array_equal(y.asnumpy(), mask.asnumpy() * 2.0)
    with pytest.raises(ValueError, match="range"):
        ops.dropout(x, p=1.5)
    with pytest.raises(ValueError, match="keep_prob"):
        ops.Dropout(keep_prob=0.0)
    kiln.set_seed(7)
    a = ops.dropout(x, p=0.5).asnumpy()
    kiln.set_seed(7)
    np.testing.assert_array_equal(a, ops.dropout(x, p=0.5).asnumpy())


def test_pool_and_conv_primitives_match_the_layers():
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((2, 3, 7, 7)))
    w = _t(rng.standard_normal((4, 3, 3, 3)))
    np.testing.assert_allclose(ops.Conv2D(4, 3, pad_mode="same")(x, w).asnumpy(),
                               ops.conv2d(x, w, pad_mode="same").asnumpy(), rtol=1e-6)
    padded = ops.Conv2D(4, 3, pad_mode="pad", pad=1, stride=2)(x, w)
    assert padded.shape == (2, 4, 4, 4)
    mp = ops.MaxPool(kernel_size=2, strides=2, pad_mode="same")(x)
    np.testing.assert_array_equal(mp.asnumpy(), nn.MaxPool2d(2, 2, "same")(x).asnumpy())
    assert mp.shape == (2, 3, 4, 4)
    ap = ops.AvgPool(kernel_size=3, strides=1)(x)
    np.testing.assert_allclose(ap.asnumpy(), nn.AvgPool2d(3, 1)(x).asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="weight"):
        ops.Conv2D(5, 3)(x, w)
    with pytest.raises(ValueError, match="pad_mode"):
        ops.Conv2D(4, 3, pad_mode="full")
    with pytest.raises(ValueError, match="4-D"):
        ops.MaxPool(2, 2)(_t(np.zeros((3, 4))))


def test_round_decimals_and_reduce_sum():
    np.testing.assert_allclose(ops.round(_t([1.26, -2.55, 0.05]), decimals=1).asnumpy(), [1.3, -2.6, 0.0],
                               atol=1e-6)
    x = _t(np.arange(6).reshape(2, 3))
    assert float(ops.reduce_sum(x).asnumpy()) == 15.0
    assert ops.reduce_sum(x, 1).asnumpy().tolist() == [3.0, 12.0]


def test_tensor_methods_call_the_functions():
    x = _t([[1.0, -2.5, 0.0], [3.5, 0.5, -1.0]])
    assert x.flip(1).asnumpy().tolist() == np.flip(x.asnumpy(), 1).tolist()
    assert x.roll(1, 1).asnumpy().tolist() == np.roll(x.asnumpy(), 1, 1).tolist()
    assert x.tril().asnumpy().tolist() == np.tril(x.asnumpy()).tolist()
    assert x.triu(1).asnumpy().tolist() == np.triu(x.asnumpy(), 1).tolist()
    assert x.masked_fill(x < 0, 9.0).asnumpy().tolist() == np.where(x.asnumpy() < 0, 9.0, x.asnumpy()).tolist()
    idx = Tensor(np.array([[2, 0], [1, 1]], np.int32))
    assert x.gather_elements(1, idx).asnumpy().tolist() == [[0.0, 1.0], [0.5, 0.5]]
    assert x.nonzero().asnumpy().tolist() == np.argwhere(x.asnumpy()).tolist()
    assert [t.asnumpy().tolist() for t in x.unbind(1)] == x.asnumpy().T.tolist()
    assert float(x.norm().asnumpy()) == pytest.approx(float(np.linalg.norm(x.asnumpy())))
    assert x.round().asnumpy().tolist() == np.round(x.asnumpy()).tolist()
    np.testing.assert_allclose(x.lerp(x * 3, 0.5).asnumpy(), 2 * x.asnumpy())
    assert x.isclose(x + 1e-9).asnumpy().all()
    np.testing.assert_allclose(x.logsumexp(1).asnumpy(), np.log(np.exp(x.asnumpy()).sum(1)), rtol=1e-6)


def test_cumsum_cumprod_surfaces_match_mindspore():
    x = _t([[1, 2, 3], [4, 5, 6]])
    assert ops.cumsum(x, 1).asnumpy().tolist() == [[1, 3, 6], [4, 9, 15]]  # MindSpore 2.10 values
    assert ops.CumSum(exclusive=True)(x, 1).asnumpy().tolist() == [[0, 1, 3], [0, 4, 9]]
    assert ops.CumSum(reverse=True)(x, 0).asnumpy().tolist() == [[5, 7, 9], [4, 5, 6]]
    assert ops.CumSum(True, True)(x, 1).asnumpy().tolist() == [[5, 3, 0], [11, 6, 0]]
    assert ops.cumprod(x, 1).asnumpy().tolist() == [[1, 2, 6], [4, 20, 120]]
    assert ops.CumProd(exclusive=True, reverse=True)(x, 1).asnumpy().tolist() == [[6, 3, 1], [30, 6, 1]]
    assert ops.cumsum(Tensor(np.array([1, 2], np.int32)), 0).dtype == kiln.int32
    assert ops.cumsum(x, 1, dtype=kiln.float16).dtype == kiln.float16
    assert x.cumsum().asnumpy().tolist() == [1, 3, 6, 10, 15, 21]
    assert x.cumsum(0).asnumpy().tolist() == [[1, 2, 3], [5, 7, 9]]
    import kiln.numpy as mnp
    assert mnp.cumsum(mnp.array([1, 2, 3])).asnumpy().tolist() == [1, 3, 6]
    y = np.random.default_rng(0).random(1000).astype(np.float32)
    np.testing.assert_allclose(ops.cumsum(Tensor(y), 0).asnumpy(), np.cumsum(y.astype(np.float64)), rtol=1e-6)
    with pytest.raises(TypeError, match="Bool"):
        ops.cumsum(Tensor(np.array([True, False])), 0)
    with pytest.raises(ValueError, match="axis"):
        ops.cumsum(x, 2)
    with pytest.raises(TypeError, match="exclusive"):
        ops.CumSum(exclusive=1)


def test_scatter_family_matches_mindspore():
    x = _t(np.arange(6).reshape(3, 2))
    i = Tensor(np.array([[0], [2], [0]], np.int32))
    u = _t([[1, 1], [2, 2], [3, 3]])
    # MindSpore 2.10 values
    assert ops.tensor_scatter_add(x, i, u).asnumpy().tolist() == [[4, 5], [2, 3], [6, 7]]
    assert ops.TensorScatterSub()(x, i, u).asnumpy().tolist() == [[-4, -3], [2, 3], [2, 3]]
    assert ops.tensor_scatter_update(x, Tensor(np.array([[1, 0]], np.int32)), _t([9.0])).asnumpy().tolist() == \
        [[0, 1], [9, 3], [4, 5]]
    p = Parameter(_t(np.arange(6).reshape(3, 2)), name="p")
    ops.scatter_add(p, Tensor(np.array([0, 2, 0], np.int32)), u)
    assert p.asnumpy().tolist() == [[4, 5], [2, 3], [6, 7]]
    q = Parameter(_t(np.arange(6).reshape(3, 2)), name="q")
    ops.ScatterUpdate()(q, Tensor(np.array([[0, 2]], np.int32)), _t([[[7, 7], [8, 8]]]))
    assert q.asnumpy().tolist() == [[7, 7], [2, 3], [8, 8]]
    r = Parameter(_t(np.arange(6).reshape(3, 2)), name="r")
    ops.ScatterNdSub()(r, i, u)
    assert r.asnumpy().tolist() == [[-4, -3], [2, 3], [2, 3]]
    ops.ScatterNdAdd()(r, i, u)
    assert r.asnumpy().tolist() == [[0, 1], [2, 3], [4, 5]]
    g = kiln.grad(lambda a, b: ops.tensor_scatter_add(a, i, b).sum() * 2, grad_position=(0, 1))(x, u)
    assert g[0].asnumpy().tolist() == [[2, 2]] * 3 and g[1].asnumpy().tolist() == [[2, 2]] * 3
    with pytest.raises(TypeError, match="dtype"):
        ops.tensor_scatter_add(x, i, Tensor(np.ones((3, 2), np.int32)))
    y = x + 0  # a plain Tensor is written in place as a Parameter is (scatter_func.py, Note [scatter writes])
    assert ops.scatter_add(y, Tensor(np.array([0], np.int32)), _t([[1, 1]])) is y
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy() + np.array([[1, 1], [0, 0], [0, 0]]))
    with pytest.raises(ValueError, match="indices"):
        ops.tensor_scatter_add(x, Tensor(np.array([[5]], np.int32)), _t([[1, 1]])).asnumpy()


def test_channel_dropout_and_adaptive_pool_primitive():
    kiln.set_seed(0)
    x = _t(np.ones((64, 8, 3, 3)))
    y = ops.dropout2d(x, 0.25).asnumpy()
    per_channel = y[:, :, :1, :1]
    assert (y == per_channel).all()  # a whole channel is kept or dropped
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((per_channel == 0).mean() - 0.25) < 0.06
    z = ops.dropout3d(_t(np.ones((2, 3, 2, 2, 2))), 0.5, training=False)
    assert z.asnumpy().sum() == 48
    layer = nn.Dropout2d(p=0.5)
    layer.set_train(False)
    assert layer(x) is x
    layer.set_train(True)
    assert (layer(x).asnumpy()[:, :, :1, :1] == layer(x).asnumpy()[:, :, :1, :1]).shape == (64, 8, 1, 1)
    with pytest.raises(ValueError, match="4-D"):
        ops.dropout2d(_t(np.ones((2, 3))))
    with pytest.raises(ValueError, match="range"):
        nn.Dropout3d(p=2.0)
    out = ops.AdaptiveAvgPool2D((None, 2))(_t(np.arange(24).reshape(1, 2, 3, 4)))
    assert out.asnumpy().ravel().tolist() == [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5, 16.5, 18.5, 20.5,
                                              22.5]  # MindSpore 2.10


def test_review_findings_fixed():
    """Findings of the session's fresh tester, each the right behaviour now."""
    x = _t(np.arange(6).reshape(2, 3))
    for bad in (5, 2, -3, (0, 5)):
        with pytest.raises(ValueError, match="out of range"):
            ops.norm(x, dim=bad)
    with pytest.raises(ValueError, match="out of range"):
        x.norm(dim=7)
    # StridedSlice: a shrink axis whose begin_mask bit is set takes the axis' first index (MindSpore 2.10)
    y = _t(np.arange(24).reshape(2, 3, 4) - 7)
    got = ops.StridedSlice(begin_mask=0b101, end_mask=0b010, shrink_axis_mask=0b100)(y, (1, 0, 2), (2, 2, 3),
                                                                                       (1, 1, 1))
    assert got.asnumpy().ravel().tolist() == [-7, -3, 1, 5, 9, 13]
    with pytest.raises(ValueError, match="repeat"):
        ops.flip(x, (0, 0))
    assert ops.cumprod(Tensor(np.array([1, 2, 3], np.int32)), 0).dtype == kiln.int64  # MindSpore 2.10
    with pytest.raises(TypeError, match="masked_fill"):
        ops.masked_fill(Tensor(np.array([1, 2], np.int32)), Tensor(np.array([True, False])), 2.7)
    assert ops.masked_fill(Tensor(np.array([1, 2], np.int32)), Tensor(np.array([True, False])), 5.0).asnumpy() \
        .tolist() == [5, 2]
    for fn in (lambda t: ops.dropout(t), lambda t: ops.dropout2d(t), lambda t: nn.PReLU()(t)):
        with pytest.raises(TypeError, match="float"):
            fn(Tensor(np.ones((2, 2, 2, 2), np.int32)))
    with pytest.raises(ValueError, match="'scatter_add'"):
        ops.scatter_add(Parameter(_t(np.zeros((2, 2))), name="p"), Tensor(np.array([3], np.int32)),
                        _t([[1, 1]])).asnumpy()
    y = x + 0  # a plain Tensor is updated in place (MindSpore 2.10; scatter_func.py, Note [scatter writes])
    assert ops.scatter_add(y, Tensor(np.array([0], np.int32)), _t([[1, 1, 1]])) is y
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy() + np.array([[1, 1, 1], [0, 0, 0]]))
    with pytest.raises(ValueError, match="'lerp'"):
        ops.lerp(_t(np.ones(3)), _t(np.ones(4)), 0.5)
    with pytest.raises(ValueError, match="'isclose'"):
        ops.isclose(_t(np.ones(3)), _t(np.ones(4)))
    empty = ops.logsumexp(_t(np.zeros((2, 0))), 1)
    assert empty.shape == (2,) and np.isneginf(empty.asnumpy()).all()  # NumPy: −inf
    with pytest.raises(ValueError, match="'MaxPool'"):
        ops.MaxPool(0, 1)
    with pytest.raises(ValueError, match="'Conv2D'"):
        ops.Conv2D(4, 3)(_t(np.zeros((1, 3, 5))), _t(np.zeros((4, 3, 3, 3))))
    import kiln.numpy as mnp
    assert mnp.repeat(mnp.array([1, 2]), [1, 3]).asnumpy().tolist() == [1, 2, 2, 2]  # MindSpore 2.10
    with pytest.raises(ValueError, match="repeat"):
        mnp.repeat(mnp.array([1, 2]), [1])


def test_more_functional_losses_match_mindspore():
    r = np.random.RandomState(0)
    x, y = _t(r.randn(3, 4)), _t(r.randn(3, 4))
    lp = ops.log_softmax(_t(r.randn(4, 5)), 1)
    t = Tensor(np.array([1, 0, 4, 2], np.int32))
    w = _t(np.arange(1, 6))
    np.testing.assert_allclose(ops.mse_loss(x, y).asnumpy(), ((x.asnumpy() - y.asnumpy()) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(ops.l1_loss(x, y, "sum").asnumpy(), np.abs(x.asnumpy() - y.asnumpy()).sum(),
                               rtol=1e-6)
    lpn = lp.asnumpy()
    nll = -lpn[np.arange(4), t.asnumpy()]
    np.testing.assert_allclose(ops.nll_loss(lp, t).asnumpy(), nll.mean(), rtol=1e-6)
    np.testing.assert_allclose(ops.nll_loss(lp, t, weight=w, reduction="sum").asnumpy(),
                               (nll * w.asnumpy()[t.asnumpy()]).sum(), rtol=1e-6)
    eps = 0.2  # label smoothing: cross_entropy's formula on the log-probabilities
    want = ((1 - eps) * nll + eps / 5 * -lpn.sum(1)).mean()
    np.testing.assert_allclose(ops.nll_loss(lp, t, label_smoothing=eps).asnumpy(), want, rtol=1e-6)
    sgn = _t(np.sign(r.randn(3, 4)))
    np.testing.assert_allclose(ops.margin_ranking_loss(x, y, sgn, 0.3).asnumpy(),
                               np.maximum(0, -sgn.asnumpy() * (x.asnumpy() - y.asnumpy()) + 0.3).mean(), rtol=1e-6)
    np.testing.assert_allclose(ops.soft_margin_loss(x, sgn).asnumpy(),
                               np.log1p(np.exp(-sgn.asnumpy() * x.asnumpy())).mean(), rtol=1e-6)
    he = np.where(sgn.asnumpy() == 1, x.asnumpy(), np.maximum(0, 0.5 - x.asnumpy())).sum()
    np.testing.assert_allclose(ops.hinge_embedding_loss(x, sgn, 0.5, "sum").asnumpy(), he, rtol=1e-6)
    np.testing.assert_allclose(ops.huber_loss(x, y, "none", 0.5).asnumpy(),
                               nn.HuberLoss("none", 0.5)(x, y).asnumpy())
    with pytest.raises(ValueError, match="reduction"):
        ops.margin_ranking_loss(x, y, sgn, reduction="avg")
    with pytest.raises(ValueError, match="must broadcast"):  # MindSpore 2.10 broadcasts the three inputs
        ops.margin_ranking_loss(x, y, _t([1.0, 1.0]))
