"""One rule for the in-place scatters (kiln/ops/scatter_func.py, Note [scatter writes]): ops.scatter_add/_mul/_div/
_max/_min/_update, scatter_nd_add/_sub/_mul/_div/_max/_min/_update and index_add write into input_x and return it,
whether input_x is a Parameter or a plain Tensor -- MindSpore 2.10's behaviour in PyNative (the expected values
below were printed by MindSpore 2.10.0 on CPU for these inputs). The Tensor methods scatter_add/_sub/_mul/_div/_max/
_min are MindSpore's tensor_scatter_* (a new Tensor)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, ops

IDX = np.array([0, 2], np.int32)
IDX2 = np.array([[0], [2]], np.int32)
UP = np.full((2, 2), 2, np.float32)

# MindSpore 2.10.0 (CPU, PyNative): input ones((3, 2)), indices IDX (rows) / IDX2 (nd), updates UP; the result and
# the input afterwards are both this value.
MS_VALUES = {
    "scatter_add": [3, 3, 1, 1, 3, 3], "scatter_mul": [2, 2, 1, 1, 2, 2], "scatter_div": [0.5, 0.5, 1, 1, 0.5, 0.5],
    "scatter_max": [2, 2, 1, 1, 2, 2], "scatter_min": [1, 1, 1, 1, 1, 1], "scatter_update": [2, 2, 1, 1, 2, 2],
    "scatter_nd_add": [3, 3, 1, 1, 3, 3], "scatter_nd_sub": [-1, -1, 1, 1, -1, -1],
    "scatter_nd_mul": [2, 2, 1, 1, 2, 2], "scatter_nd_div": [0.5, 0.5, 1, 1, 0.5, 0.5],
    "scatter_nd_max": [2, 2, 1, 1, 2, 2], "scatter_nd_min": [1, 1, 1, 1, 1, 1],
    "scatter_nd_update": [2, 2, 1, 1, 2, 2], "index_add": [3, 3, 1, 1, 3, 3],
}


def _call(name, x):
    if name == "index_add":
        return ops.index_add(x, Tensor(IDX), Tensor(UP), 0)
    return getattr(ops, name)(x, Tensor(IDX2 if "_nd_" in name else IDX), Tensor(UP))


@pytest.mark.parametrize("name", sorted(MS_VALUES))
@pytest.mark.parametrize("kind", ["tensor", "parameter"])
def test_writes_into_input_x_and_returns_it(name, kind):
    x = Tensor(np.ones((3, 2), np.float32))
    if kind == "parameter":
        x = Parameter(x, name="p")
    out = _call(name, x)
    assert out is x
    np.testing.assert_array_equal(x.asnumpy().ravel(), np.array(MS_VALUES[name], np.float32))


@pytest.mark.parametrize("name", ["scatter_mul", "scatter_nd_sub", "index_add", "scatter_update"])
def test_compiled_write_reaches_the_callers_tensor(name):
    x = Tensor(np.ones((3, 2), np.float32))
    y = ms.jit(lambda t: _call(name, t) * 1)(x)
    want = np.array(MS_VALUES[name], np.float32)
    np.testing.assert_array_equal(y.asnumpy().ravel(), want)
    np.testing.assert_array_equal(x.asnumpy().ravel(), want)  # docs/decisions/writes-into-graph-inputs.md


def test_under_a_gradient_the_write_is_functional():
    x0 = np.arange(1, 7, dtype=np.float64).reshape(3, 2)
    x = Tensor(x0)
    up = Tensor(np.full((2, 2), 3.0))

    def f(a):
        return ops.sum(ops.scatter_mul(a * 1, Tensor(IDX), up) ** 2)

    g = ms.grad(f)(x).asnumpy()
    eps, fd = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(*x0.shape):
        e = np.zeros_like(x0)
        e[i] = eps
        fd[i] = (f(Tensor(x0 + e)).asnumpy() - f(Tensor(x0 - e)).asnumpy()) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    np.testing.assert_array_equal(x.asnumpy(), x0)  # a * 1 was written, not x


def test_tensor_methods_are_tensor_scatter():
    # MindSpore 2.10.0: Tensor.scatter_<kind>(indices (..., k), updates) is ops.tensor_scatter_<kind>: a new Tensor
    want = {"scatter_add": [3, 3, 1, 1, 3, 3], "scatter_sub": [-1, -1, 1, 1, -1, -1],
            "scatter_mul": [2, 2, 1, 1, 2, 2], "scatter_div": [0.5, 0.5, 1, 1, 0.5, 0.5],
            "scatter_max": [2, 2, 1, 1, 2, 2], "scatter_min": [1, 1, 1, 1, 1, 1]}
    for name, vals in want.items():
        x = Tensor(np.ones((3, 2), np.float32))
        out = getattr(x, name)(Tensor(IDX2), Tensor(UP))
        np.testing.assert_array_equal(out.asnumpy().ravel(), np.array(vals, np.float32))
        np.testing.assert_array_equal(x.asnumpy(), np.ones((3, 2), np.float32))


def test_tensor_scatter_add_pytorch_overload():
    x = np.ones((3, 2), np.float32)
    index = np.array([[0, 1], [2, 0]], np.int64)
    src = np.full((2, 2), 2, np.float32)
    want = x.copy()
    for i in range(2):
        for j in range(2):
            want[index[i, j], j] += src[i, j]
    got = Tensor(x).scatter_add(0, Tensor(index), Tensor(src))
    np.testing.assert_array_equal(got.asnumpy(), want)
    np.testing.assert_array_equal(Tensor(x).scatter_add(dim=0, index=Tensor(index), src=Tensor(src)).asnumpy(), want)
    with pytest.raises(TypeError, match="Tensor.scatter_add"):
        Tensor(x).scatter_add(0, Tensor(index))


def test_errors_name_the_op_called():
    x = Tensor(np.ones((3, 2), np.float32))
    with pytest.raises(IndexError, match="'scatter_update'"):
        ops.scatter_update(x, Tensor(np.array([5], np.int32)), Tensor(np.ones((1, 2), np.float32)))
    with pytest.raises(IndexError, match="'scatter_nd_update'"):
        ops.scatter_nd_update(x, Tensor(np.array([[5]], np.int32)), Tensor(np.ones((1, 2), np.float32)))
    with pytest.raises(ValueError, match="'ScatterNdUpdate'"):
        ops.ScatterNdUpdate()(x, Tensor(np.array([[1]], np.int32)), Tensor(np.ones((1, 3), np.float32)))
    with pytest.raises(IndexError, match="'TensorScatterUpdate'"):
        ops.tensor_scatter_update(x, Tensor(np.array([[7]], np.int32)), Tensor(np.ones((1, 2), np.float32)))
    np.testing.assert_array_equal(x.asnumpy(), np.ones((3, 2), np.float32))  # nothing written by a failed call
