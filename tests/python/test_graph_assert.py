"""Graph mode: `assert` on a tensor the graph computes is a check at every run (AssertionError with the message, as
MindSpore 2.10's graph mode raises it), and `x in [a, b]` with a graph tensor is the value PyNative gives
(Note [run-time assert], kiln/_compiler/graph_assert.py)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn


def set_mode(mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)


def positive_step(x):
    assert x.sum() > 0, "x must sum to a positive number"
    return x * 2


@pytest.fixture(params=["pynative", "graph"])
def mode(request):
    set_mode(request.param)
    yield request.param
    set_mode("pynative")


def test_assert_passes_and_fails_at_run_time_with_one_compile():
    f = ms.jit(positive_step)
    np.testing.assert_allclose(f(Tensor(np.array([1.0, 2.0], np.float32))).asnumpy(), [2.0, 4.0])
    with pytest.raises(AssertionError) as e:
        f(Tensor(np.array([-1.0, 0.5], np.float32)))
    assert str(e.value) == "x must sum to a positive number"
    np.testing.assert_allclose(f(Tensor(np.array([3.0, -1.0], np.float32))).asnumpy(), [6.0, -2.0])
    assert f.compile_count == 1  # one graph checks every input


def test_assert_in_cell_both_modes(mode):
    class Net(nn.Cell):
        def construct(self, x):
            assert x > 2
            return x + 1

    net = Net()
    assert int(net(Tensor(3)).asnumpy()) == 4
    with pytest.raises(AssertionError) as e:
        net(Tensor(1))
    if mode == "graph":  # (in PyNative, pytest's assert rewriting of this file adds its own message)
        assert str(e.value) == ""


def test_assert_inside_tensor_branch_checks_only_when_taken():
    @ms.jit
    def f(x):
        if x.sum() > 0:
            assert x.min() > -1.0, "min too small"
            y = x * 2
        else:
            y = x - 1
        return y

    np.testing.assert_allclose(f(Tensor(np.array([-5.0, 1.0], np.float32))).asnumpy(), [-6.0, 0.0])  # else branch
    np.testing.assert_allclose(f(Tensor(np.array([0.5, 1.0], np.float32))).asnumpy(), [1.0, 2.0])
    with pytest.raises(AssertionError, match="^min too small$"):
        f(Tensor(np.array([-3.0, 5.0], np.float32)))  # then branch, check fails
    assert f.compile_count == 1


def test_assert_gradient_passes_through(graph_mode):
    def loss(x):
        assert x.sum() > 0
        return (x * x).sum()

    x = np.array([1.0, 2.5])
    g = ms.jit(ms.grad(loss))(Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), 2 * x)
    with pytest.raises(AssertionError):
        ms.jit(ms.grad(loss))(Tensor(-x))


def test_assert_on_a_number_tensor_is_its_truth_value(graph_mode):
    @ms.jit
    def f(x):
        assert x.sum(), "zero"
        return x

    np.testing.assert_array_equal(f(Tensor(np.array([5, 2], np.int32))).asnumpy(), [5, 2])  # 7: true, not only 1
    np.testing.assert_array_equal(f(Tensor(np.array([-0.5], np.float32))).asnumpy(), [-0.5])
    with pytest.raises(AssertionError, match="^zero$"):
        f(Tensor(np.array([2, -2], np.int32)))


def test_assert_on_python_value_is_python(graph_mode):
    @ms.jit
    def f(x, n):
        assert n > 0, f"n is {n}"
        return x * n

    assert float(f(Tensor(2.0), 3).asnumpy()) == 6.0
    with pytest.raises(AssertionError, match="^n is -1$"):
        f(Tensor(2.0), -1)


def test_assert_of_several_elements_is_a_clear_error(graph_mode):
    @ms.jit
    def f(x):
        assert x > 0
        return x

    with pytest.raises(ValueError, match=r"For `assert`, the condition must be a tensor with one element, but got "
                                         r"shape \[3\].*test_graph_assert.py:\d+"):
        f(Tensor(np.ones(3, np.float32)))


def membership(x):
    a = x in [2, 3, 4]
    b = x not in (2, 3)
    return a, b


@pytest.mark.parametrize("v, expect", [(3, (True, False)), (-1, (False, True)), (4, (True, True))])
def test_in_list_is_the_value_in_both_modes(mode, v, expect):
    f = ms.jit(membership) if mode == "graph" else membership
    a, b = f(Tensor(v))
    assert (bool(a), bool(b)) == expect


def test_in_list_one_graph_and_in_if():
    @ms.jit
    def f(x):
        if x in [1, 5]:
            y = x * 10
        else:
            y = x
        return y

    assert [int(f(Tensor(v)).asnumpy()) for v in (1, 2, 5)] == [10, 2, 50]
    assert f.compile_count == 1


def test_in_with_python_values_and_tensor_items(graph_mode):
    @ms.jit
    def f(x):
        return 2 in [1, 2], "a" in ("b",), 3 in [x, x + 1]

    a, b, c = f(Tensor(2))
    assert a is True and b is False and bool(c.asnumpy())
    _, _, c = f(Tensor(5))
    assert not bool(c.asnumpy())


def test_statements_tutorial_assert_block(graph_mode):
    class Net(nn.Cell):
        @ms.jit
        def construct(self, x):
            assert x in [2, 3, 4]
            return x

    net = Net()
    assert int(net(ms.tensor(3)).asnumpy()) == 3
    with pytest.raises(AssertionError):
        net(ms.tensor(-1))
    with pytest.raises(ValueError, match="one element"):
        net(ms.tensor([2, 3]))
