"""ops.sort / argsort / topk, ops.Sort / TopK and the Tensor methods: MindSpore 2.10's values and Int32 indices,
stability, NaN placement (NumPy's and PyTorch's rule), gradients, Graph mode, errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops

X = np.array([[3.0, 1.0, 2.0, 1.0], [4.0, 0.0, 5.0, -1.0]], np.float32)


def N(t):
    return t.asnumpy()


def test_mindspore_values_and_int32_indices():
    v, i = ops.sort(Tensor(X))
    assert i.dtype == ms.int32 and v.dtype == ms.float32
    np.testing.assert_array_equal(N(v), [[1, 1, 2, 3], [-1, 0, 4, 5]])
    np.testing.assert_array_equal(N(i), [[1, 3, 2, 0], [3, 1, 0, 2]])  # the tie 1, 1 keeps index order
    v, i = ops.sort(Tensor(X), descending=True)
    np.testing.assert_array_equal(N(i), [[0, 2, 1, 3], [2, 0, 1, 3]])
    v, i = ops.Sort(axis=0, descending=True)(Tensor(X))
    np.testing.assert_array_equal(N(i), [[1, 0, 1, 0], [0, 1, 0, 1]])
    assert N(ops.argsort(Tensor(X))).tolist() == [[1, 3, 2, 0], [3, 1, 0, 2]]
    v, i = ops.topk(Tensor(X), 2)
    assert i.dtype == ms.int32
    np.testing.assert_array_equal(N(v), [[3, 2], [5, 4]])
    np.testing.assert_array_equal(N(i), [[0, 2], [2, 0]])
    v, i = ops.topk(Tensor(X), 2, dim=0, largest=False)
    np.testing.assert_array_equal(N(v), np.sort(X, axis=0)[:2])
    v, i = ops.TopK()(Tensor(X), 1)
    np.testing.assert_array_equal(N(v), [[3], [5]])


def test_nan_is_the_largest_value():
    x = Tensor(np.array([2.0, np.nan, -np.inf, 1.0, np.nan], np.float32))
    v, i = ops.sort(x)
    np.testing.assert_array_equal(N(i), [2, 3, 0, 1, 4])
    v, i = ops.sort(x, descending=True)
    np.testing.assert_array_equal(N(i), [1, 4, 0, 3, 2])
    v, i = ops.topk(x, 1)
    assert np.isnan(N(v)[0]) and N(i)[0] == 1


def test_integer_and_half_inputs():
    v, i = ops.sort(Tensor(np.array([3, 1, 2], np.int32)))
    assert v.dtype == ms.int32 and N(v).tolist() == [1, 2, 3] and N(i).tolist() == [1, 2, 0]
    v, _ = ops.topk(Tensor(np.array([3, 1, 2], np.float16)), 2)
    assert v.dtype == ms.float16 and N(v).tolist() == [3, 2]


def test_gradients_go_to_the_picked_elements():
    x = Tensor(np.array([[3.0, 1.0, 2.0]], np.float32))
    g = ms.grad(lambda a: ops.sort(a)[0][:, 0].sum())(x)  # MindSpore: [[-0, 1, -0]]
    np.testing.assert_array_equal(N(g), [[0, 1, 0]])
    g = ms.grad(lambda a: ops.topk(a, 2)[0].sum())(x)  # MindSpore: [[1, 0, 1]]
    np.testing.assert_array_equal(N(g), [[1, 0, 1]])
    w = Tensor(np.array([[10.0, 20.0, 30.0]], np.float32))
    g = ms.grad(lambda a: (ops.sort(a, descending=True)[0] * w).sum())(x)
    np.testing.assert_array_equal(N(g), [[10, 30, 20]])


def test_graph_mode_matches_pynative():
    def f(a):
        return ops.sort(a, 0, True) + ops.topk(a, 3) + (ops.argsort(a),)

    x = Tensor(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32))
    for e, c in zip(f(x), ms.jit(f)(x)):
        assert e.dtype == c.dtype
        np.testing.assert_array_equal(N(e), N(c))


def test_tensor_methods():
    x = Tensor(np.array([3.0, 1.0, 2.0], np.float32))
    v, i = x.sort()
    assert N(v).tolist() == [1, 2, 3] and N(i).tolist() == [1, 2, 0]
    assert N(x.argsort()).tolist() == [1, 2, 0]
    v, i = x.topk(2)
    assert N(v).tolist() == [3, 2] and N(i).tolist() == [0, 2]


def test_large_rows_threaded_sort_matches_numpy():
    x = np.random.default_rng(1).standard_normal((64, 1000)).astype(np.float32)
    v, i = ops.sort(Tensor(x), axis=1)
    np.testing.assert_array_equal(N(i), np.argsort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(N(v), np.sort(x, axis=1))


def test_errors():
    x = Tensor(X)
    with pytest.raises(ValueError, match=r"topk.*k must be in \[0, 4\].*got 5"):
        ops.topk(x, 5)
    with pytest.raises(ValueError, match="sort.*axis"):
        ops.sort(x, axis=2)
    with pytest.raises(TypeError, match="ArgSort.*Bool"):
        ops.sort(Tensor(np.array([True, False])))
    with pytest.raises(TypeError, match="sort"):
        ops.sort([3, 1])
    with pytest.raises(TypeError, match="Sort.*descending"):
        ops.Sort(descending=1)
    with pytest.raises(TypeError, match="topk.*k"):
        ops.topk(x, 1.5)
