"""ops.dyn_shape / ops.TensorShape (kiln/ops/shape_tensor_func.py): the shape as an int64 tensor, in PyNative, in
static graphs, and in a graph with None dimensions, where one compiled graph gives each call's run-time sizes."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops


def test_values_dtype_and_primitive():
    x = Tensor(np.ones((2, 1, 4), np.float32))
    s = ops.dyn_shape(x)
    assert s.dtype == ms.int64 and s.shape == (3,)
    np.testing.assert_array_equal(s.asnumpy(), [2, 1, 4])
    np.testing.assert_array_equal(ops.TensorShape()(x).asnumpy(), [2, 1, 4])
    assert ops.dyn_shape(Tensor(1.0)).shape == (0,)
    np.testing.assert_array_equal(ops.dyn_shape(Tensor(np.ones((0, 3)))).asnumpy(), [0, 3])


def test_bad_input():
    with pytest.raises(TypeError, match="dyn_shape.*input_x.*Tensor.*ndarray"):
        ops.dyn_shape(np.ones(2))


def test_one_dynamic_graph_gives_run_time_sizes():
    @ms.jit(input_signature=Tensor(shape=[None, 3], dtype=ms.float32))
    def f(x):
        s = ops.dyn_shape(x)
        return s * 2, x.sum(axis=1) / s[1].astype(ms.float32)

    for b in (1, 2, 5, 33):
        x = np.arange(b * 3, dtype=np.float32).reshape(b, 3)
        s, m = f(Tensor(x))
        np.testing.assert_array_equal(s.asnumpy(), [2 * b, 6])
        np.testing.assert_allclose(m.asnumpy(), x.mean(axis=1), rtol=1e-6)
    assert f.compile_count == 1


def test_cell_set_inputs_and_static_graph(graph_mode):
    class Net(nn.Cell):
        def construct(self, x):
            return ops.TensorShape()(x) + 1

    net = Net()
    np.testing.assert_array_equal(net(Tensor(np.ones((4, 2), np.float32))).asnumpy(), [5, 3])
    net2 = Net()
    net2.set_inputs(Tensor(shape=[None, None], dtype=ms.float32))
    for shape in ((3, 7), (9, 2)):
        np.testing.assert_array_equal(net2(Tensor(np.ones(shape, np.float32))).asnumpy(), [shape[0] + 1,
                                                                                           shape[1] + 1])


def test_two_dynamic_axes_one_graph():
    @ms.jit(input_signature=Tensor(shape=[None, 2, None], dtype=ms.float32))
    def f(x):
        return ops.dyn_shape(x) * 3 - 1

    for shape in ((1, 2, 9), (6, 2, 4), (40, 2, 40)):
        np.testing.assert_array_equal(f(Tensor(np.zeros(shape, np.float32))).asnumpy(), np.array(shape) * 3 - 1)
    assert f.compile_count == 1


def test_print_of_dynamic_sizes_shows_each_run(capsys):
    # MindSpore 2.10 prints, for b = 2: "2", "batch", "2", "(2, 3)", "b=2" (each print argument on its own line).
    @ms.jit(input_signature=Tensor(shape=[None, 3], dtype=ms.float32))
    def f(x):
        print(x.shape[0])
        print("batch", x.shape[0], x.shape)
        print(f"b={x.shape[0]} twice+1={x.shape[0] * 2 + 1}")
        return x + 1

    capsys.readouterr()
    for b in (2, 5):
        f(Tensor(np.ones((b, 3), np.float32)))
    out = capsys.readouterr().out.splitlines()
    assert out == ["2", "batch", "2", "(2, 3)", "b=2 twice+1=5", "5", "batch", "5", "(5, 3)", "b=5 twice+1=11"]
    assert f.compile_count == 1


def test_print_of_a_non_linear_size_is_a_clear_error():
    @ms.jit(input_signature=Tensor(shape=[None, 3], dtype=ms.float32))
    def f(x):
        print(x.shape[0] * x.shape[0] * x.shape[0])
        return x

    with pytest.raises(ValueError, match="dynamic"):
        f(Tensor(np.ones((2, 3), np.float32)))
