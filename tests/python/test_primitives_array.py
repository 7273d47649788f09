"""The primitive classes of array/comparison/creation ops (kiln/ops/primitives_array.py) and the Tensor methods
split/tile: values against NumPy, output dtypes and error kinds as MindSpore 2.10 gives them (checked with
../shared/tools/ms_oracle.py), gradients and Graph mode through the functions they call."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops
from kiln.ops import operations as P

X = np.array([[1, 5, 5], [2, 0, 7]], np.float32)


def N(t):
    return t.asnumpy()


def test_reachable_from_ops_and_operations():
    for name in ["Shape", "Tile", "OneHot", "Split", "Fill", "DType", "GatherNd", "ArgMaxWithValue", "ArgMinWithValue",
                 "Zeros", "Ones", "Stack", "Argmax", "Argmin", "LogicalAnd", "LogicalOr", "LogicalNot", "Reciprocal",
                 "GreaterEqual", "LessEqual", "NotEqual", "Flatten", "BroadcastTo", "Sign", "Eye"]:
        cls = getattr(ops, name)
        assert getattr(P, name) is cls
        assert cls.__doc__, name
        assert isinstance(cls.__new__(cls), ops.Primitive)


def test_argmax_family_values_and_dtypes():
    x = Tensor(X)
    a = ops.Argmax()(x)
    assert a.dtype == ms.int32 and N(a).tolist() == [1, 2]  # first maximum on ties
    assert ops.Argmax(axis=0, output_type=ms.int64)(x).dtype == ms.int64
    assert N(ops.Argmin()(x)).tolist() == [0, 1]
    idx, val = ops.ArgMaxWithValue()(x)
    assert idx.dtype == ms.int64 and N(idx).tolist() == [1, 0, 1] and N(val).tolist() == [2, 5, 7]
    idx, val = ops.ArgMaxWithValue(axis=1, keep_dims=True)(x)
    assert idx.shape == (2, 1) and N(val).ravel().tolist() == [5, 7]
    idx, val = ops.ArgMinWithValue(axis=1)(x)
    assert N(idx).tolist() == [0, 1] and N(val).tolist() == [1, 0]
    with pytest.raises(ValueError, match="Argmax.*int32 or int64"):
        ops.Argmax(output_type=ms.float32)


def test_argmax_with_value_gradient_goes_to_the_index():
    g = ms.grad(lambda a: ops.ArgMaxWithValue(axis=1)(a)[1].sum())(Tensor(X))
    np.testing.assert_array_equal(N(g), [[0, 1, 0], [0, 0, 1]])  # tie at 5, 5: the first one


def test_creation_primitives():
    f = ops.Fill()(ms.float32, (2, 2), 3)
    assert f.dtype == ms.float32 and N(f).tolist() == [[3, 3], [3, 3]]
    z = ops.Zeros()((2,), ms.int32)
    assert z.dtype == ms.int32 and N(z).tolist() == [0, 0]
    assert ops.Zeros()(2).dtype == ms.float32
    o = ops.Ones()(3, ms.float32)
    assert N(o).tolist() == [1, 1, 1]
    e = ops.Eye()(2, 3, ms.int32)
    assert e.dtype == ms.int32 and N(e).tolist() == [[1, 0, 0], [0, 1, 0]]


def test_shape_dtype_flatten_broadcast_stack():
    x = Tensor(X)
    assert ops.Shape()(x) == (2, 3) and ops.DType()(x) == ms.float32 and ops.dtype(x) == ms.float32
    assert ops.Flatten()(Tensor(np.ones((2, 3, 4), np.float32))).shape == (2, 12)
    assert ops.Flatten()(Tensor(np.ones(3, np.float32))).shape == (3, 1)
    with pytest.raises(ValueError, match="Flatten"):
        ops.Flatten()(Tensor(1.0))
    np.testing.assert_array_equal(N(ops.BroadcastTo((2, 2, 3))(x)), np.broadcast_to(X, (2, 2, 3)))
    np.testing.assert_array_equal(N(ops.Stack(axis=1)([x, x])), np.stack([X, X], 1))


def test_split_primitive_equal_parts():
    parts = ops.Split(1, 3)(Tensor(X))
    assert isinstance(parts, tuple) and len(parts) == 3
    for k, p in enumerate(parts):
        np.testing.assert_array_equal(N(p), X[:, k:k + 1])
    with pytest.raises(ValueError, match="Split.*divisible by output_num = 4"):
        ops.Split(0, 4)(Tensor(X))
    with pytest.raises(ValueError, match="Split.*axis"):
        ops.Split(2, 1)(Tensor(X))


def test_logical_and_comparisons():
    a, b = Tensor(np.array([True, False, True])), Tensor(np.array([True, True, False]))
    assert N(ops.LogicalAnd()(a, b)).tolist() == [True, False, False]
    assert N(ops.LogicalOr()(a, b)).tolist() == [True, True, True]
    assert N(ops.LogicalNot()(a)).tolist() == [False, True, False]
    x, y = Tensor(np.array([1, 2, 3], np.float32)), Tensor(np.array([2, 2, 2], np.float32))
    assert N(ops.GreaterEqual()(x, y)).tolist() == [False, True, True]
    assert N(ops.LessEqual()(x, y)).tolist() == [True, True, False]
    assert N(ops.NotEqual()(x, y)).tolist() == [True, False, True]
    assert N(ops.Sign()(Tensor(np.array([-2.0, 0.0, 3.0], np.float32)))).tolist() == [-1, 0, 1]


def test_reciprocal_ints_give_float32_and_zero_gives_inf():
    r = ops.reciprocal(Tensor(np.array([2, 4], np.int32)))
    assert r.dtype == ms.float32 and N(r).tolist() == [0.5, 0.25]
    assert N(ops.Reciprocal()(Tensor(np.array([0.0], np.float32))))[0] == np.inf
    assert ops.reciprocal(Tensor(X).astype(ms.bfloat16)).dtype == ms.bfloat16


def test_one_hot_mindspore_values():
    i = Tensor(np.array([0, 2, -1, 3]), ms.int32)
    got = ops.one_hot(i, 3, Tensor(1.0), Tensor(0.0))
    np.testing.assert_array_equal(N(got), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    d = ops.one_hot(i, 3)  # Python ints: int64, as MindSpore 2.10
    assert d.dtype == ms.int64
    got = ops.OneHot(axis=0)(Tensor(np.array([0, 2, 1]), ms.int32), 3, Tensor(5, ms.int32), Tensor(1, ms.int32))
    np.testing.assert_array_equal(N(got), [[5, 1, 1], [1, 1, 5], [1, 5, 1]])
    with pytest.raises(TypeError, match="OneHot.*indices"):
        ops.one_hot(Tensor(np.array([0.0], np.float32)), 2)
    with pytest.raises(TypeError, match="OneHot.*one dtype"):
        ops.one_hot(i, 3, Tensor(1.0), Tensor(0, ms.int32))
    with pytest.raises(ValueError, match="OneHot.*axis"):
        ops.one_hot(i, 3, axis=3)
    with pytest.raises(ValueError, match="OneHot.*depth"):
        ops.one_hot(i, -1)


def test_gather_nd_values_and_errors():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(N(ops.GatherNd()(x, Tensor(np.array([[0, 1], [1, 2]]), ms.int32))), [1, 5])
    np.testing.assert_array_equal(N(ops.gather_nd(x, Tensor(np.array([[1]]), ms.int32))), [[3, 4, 5]])
    with pytest.raises(ValueError, match=r"GatherNd.*indices\[\.\.\., 0\].*\[0, 2\).*got 2"):
        ops.gather_nd(x, Tensor(np.array([[2, 1]]), ms.int32))
    with pytest.raises(ValueError, match=r"GatherNd.*indices\[\.\.\., 1\]"):
        ops.gather_nd(x, Tensor(np.array([[0, -1]]), ms.int32))
    with pytest.raises(ValueError, match="GatherNd.*at most the rank"):
        ops.gather_nd(x, Tensor(np.zeros((1, 3)), ms.int32))
    with pytest.raises(TypeError, match="GatherNd.*int32 or int64"):
        ops.gather_nd(x, Tensor(np.zeros((1, 2), np.float32)))


def test_gather_nd_range_checked_in_graph_mode_too():
    f = ms.jit(lambda a, i: ops.gather_nd(a, i))
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(N(f(x, Tensor(np.array([[1, 1]]), ms.int32))), [4])
    with pytest.raises(ValueError, match="GatherNd"):
        f(x, Tensor(np.array([[1, 3]]), ms.int32))


def test_tile_errors_and_primitive():
    x = Tensor(X)
    np.testing.assert_array_equal(N(ops.Tile()(x, (2, 1))), np.tile(X, (2, 1)))
    with pytest.raises(ValueError, match="'dims' cannot contain negative integer numbers, but got -1 in 0th"):
        ops.tile(x, (-1, 2))
    with pytest.raises(TypeError, match="Tile.*tuple or list"):
        ops.tile(x, 2.0)


def test_tensor_split_and_tile_methods():
    x = Tensor(X)
    assert [t.shape for t in x.split(2, 1)] == [(2, 2), (2, 1)]
    assert [t.shape for t in x.split(split_size_or_sections=[1, 1], axis=0)] == [(1, 3), (1, 3)]
    assert [t.shape for t in x.split(2, dim=1)] == [(2, 2), (2, 1)]
    assert x.tile(2).shape == (2, 6) and x.tile((2,)).shape == (2, 6)
    assert x.tile(dims=(2, 2)).shape == (4, 6) and x.tile(reps=(2, 2)).shape == (4, 6)
    np.testing.assert_array_equal(N(x.tile((2, 2))), np.tile(X, (2, 2)))


def test_primitives_in_graph_mode_match_pynative():
    i = Tensor(np.array([1, 0]), ms.int32)

    def f(a):
        return (ops.Tile()(a, (2, 1)), ops.OneHot()(i, 3, Tensor(1.0), Tensor(0.0)), ops.Split(1, 3)(a)[2],
                ops.ArgMaxWithValue(axis=1)(a)[1], ops.Argmax()(a))

    x = Tensor(X)
    for e, g in zip(f(x), ms.jit(f)(x)):
        assert e.dtype == g.dtype
        np.testing.assert_array_equal(N(e), N(g))


def test_tensor_tile_takes_separate_ints():
    x = Tensor(X)
    assert x.tile(2, 2).shape == (4, 6) and x.tile(1, 2, 1).shape == (1, 4, 3)
    with pytest.raises(TypeError, match="Tensor.tile"):
        x.tile()
    with pytest.raises(TypeError, match="unexpected keyword argument 'multiples'"):
        x.tile(multiples=(2,))
