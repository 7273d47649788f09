"""Graph mode: writes into Parameters under a gradient (Note [deferred state writes], issue 11). Each read of a
Parameter sees the value current at that point, in the forward and in the backward (MindSpore 2.10's graph mode;
values below checked against it), the final value is written back once per run, and a failed trace leaves the
Parameter untouched. Input tensors written in place inside a compiled function reach the caller's tensors."""
import numpy as np
import pytest

from helpers import central_difference as fd_grad

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


@pytest.fixture(params=["pynative", "graph"])
def mode_both(request):
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


class LoopAssign(nn.Cell):
    """out = sum_i x * w_i with w assigned i = 0, 1, 2 before each read (the static-graph expert tutorial's net)."""

    def __init__(self):
        super().__init__()
        self.weight = Parameter(Tensor(np.array(0.0), ms.float64), name="w")

    def construct(self, x):
        out = 0
        i = 0
        while i < 3:
            ops.assign(self.weight, i)
            out = x * self.weight + out
            i = i + 1
        return out.sum()


def test_reads_after_assign_in_unrolled_loop_graph_matches_finite_differences(graph_mode):
    net = LoopAssign()
    x = np.array([0.5, -1.25, 2.0])
    out = net(Tensor(x))
    assert float(out.asnumpy()) == pytest.approx(3 * x.sum())
    assert float(net.weight.asnumpy()) == 2.0  # the final value is written back
    (g,) = ops.GradOperation(get_all=True)(net)(Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), fd_grad(lambda v: 3 * v.sum(), x), rtol=1e-7)
    assert float(net.weight.asnumpy()) == 2.0


def test_the_tutorial_block_int32_gradient_is_three(graph_mode):
    class Fwd(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(Tensor(np.array(0), ms.int32), name="param")

        def construct(self, x):
            out = 0
            i = 0
            while i < 3:
                ops.assign(self.weight, i)
                out = x * self.weight + out
                i = i + 1
            return out

    class Bwd(nn.Cell):
        def __init__(self, net):
            super().__init__(auto_prefix=False)
            self.forward_net = net
            self.grad = ops.GradOperation(get_all=True)

        def construct(self, *inputs):
            return self.grad(self.forward_net)(*inputs)

    (g,) = Bwd(Fwd())(Tensor(np.array(1), ms.int32))
    assert g.dtype == ms.int32 and int(g.asnumpy()) == 3


class TwoWrites(nn.Cell):
    def __init__(self):
        super().__init__()
        self.weight = Parameter(Tensor(np.array([1.0, 2.0]), ms.float32), name="param")

    def construct(self, x):
        a = (x * self.weight).sum()
        ops.assign(self.weight, x * 5)
        b = (x * x * self.weight).sum()
        ops.assign(self.weight, self.weight + 1)
        return a + b + (x * self.weight).sum()


def test_value_written_is_not_differentiated_through_as_mindspore(graph_mode):
    # MindSpore 2.10 (graph): grad [32, 33], weight [8.5, -9]. The backward of each read uses the
    # value read; the assigned value x * 5 passes no gradient back to x (a read after Assign loads the Parameter).
    net = TwoWrites()
    x = Tensor(np.array([1.5, -2.0], np.float32))
    (g,) = ops.GradOperation(get_all=True)(net)(x)
    np.testing.assert_allclose(g.asnumpy(), [32.0, 33.0])
    np.testing.assert_allclose(net.weight.asnumpy(), [8.5, -9.0])
    net.weight.set_data(Tensor(np.array([1.0, 2.0], np.float32)))
    xs, w = np.array([1.5, -2.0]), np.array([1.0, 2.0])
    expect = (xs * w).sum() + (xs * xs * 5 * xs).sum() + (xs * (5 * xs + 1)).sum()
    np.testing.assert_allclose(float(net(x).asnumpy()), expect, rtol=1e-6)
    np.testing.assert_allclose(net.weight.asnumpy(), [8.5, -9.0])
    # Compiled once per signature: the second gradient call reuses the graph and gives the same result.
    net.weight.set_data(Tensor(np.array([1.0, 2.0], np.float32)))
    (g2,) = ops.GradOperation(get_all=True)(net)(x)
    np.testing.assert_allclose(g2.asnumpy(), [32.0, 33.0])


def test_pynative_gives_the_graph_modes_gradient():
    # PyNative writes in place, and each read keeps the value it had when it was read (the tape's saved-tensor
    # versions, tests/python/test_inplace_saved.py): the gradient is Graph mode's, 0 + 1 + 2 = 3. (MindSpore 2.10's
    # PyNative gives 6: its backward reads the final value; docs/decisions/graph-parameter-writes-asserts.md.)
    net = LoopAssign()
    (g,) = ops.GradOperation(get_all=True)(net)(Tensor(np.array([1.0])))
    np.testing.assert_allclose(g.asnumpy(), [3.0])
    assert float(net.weight.asnumpy()) == 2.0


def test_failed_trace_leaves_the_parameter_real(graph_mode):
    class Bad(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(Tensor(np.array([1.0, 2.0]), ms.float32), name="param")

        def construct(self, x):
            ops.assign(self.weight, x * 5)
            raise ValueError("boom")

    net = Bad()
    with pytest.raises(ValueError, match="boom"):
        ops.GradOperation(get_all=True)(net)(Tensor(np.array([1.0, 1.0], np.float32)))
    assert not net.weight._symbolic
    np.testing.assert_allclose(net.weight.asnumpy(), [1.0, 2.0])
    net.weight.set_data(Tensor(np.array([3.0, 4.0], np.float32)))
    np.testing.assert_allclose(net.weight.asnumpy(), [3.0, 4.0])


def test_second_write_inside_tensor_branch_is_refused_clearly(graph_mode):
    class F(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(Tensor(np.array([1.0, 2.0]), ms.float32), name="param")

        def construct(self, x):
            ops.assign(self.weight, x * 5)
            if x.sum() > 0:
                ops.assign(self.weight, x)
            return (x * self.weight).sum()

    net = F()
    with pytest.raises(RuntimeError, match=r"written under a gradient earlier.*test_graph_state_writes.py:\d+"):
        ops.GradOperation(get_all=True)(net)(Tensor(np.array([1.5, -2.0], np.float32)))
    assert not net.weight._symbolic
    np.testing.assert_allclose(net.weight.asnumpy(), [1.0, 2.0])


# ------------------------------------------------------------------------------ input tensors written in place
def test_input_written_in_place_reaches_the_caller_both_modes(mode_both):
    def f(x, y):
        x.add_(y)
        x[0] = x[0] * 10
        return x * 2

    g = ms.jit(f) if mode_both == "graph" else f
    for first in (1.0, -3.0):  # the second call reuses the compiled graph (fast path) with another tensor
        x = Tensor(np.array([first, 2.0], np.float32))
        out = g(x, Tensor(np.array([3.0, 4.0], np.float32)))
        expect = np.array([(first + 3.0) * 10, 6.0], np.float32)
        np.testing.assert_allclose(x.asnumpy(), expect)  # MindSpore 2.10's graph mode writes its inputs too
        np.testing.assert_allclose(out.asnumpy(), expect * 2)
    if mode_both == "graph":
        assert g.compile_count == 1
        x = Tensor(np.array([1.0, 2.0], np.float32))
        g(x, y=Tensor(np.array([0.0, 1.0], np.float32)))  # keyword arguments: the general path
        np.testing.assert_allclose(x.asnumpy(), [10.0, 3.0])


def test_input_written_through_a_view_in_cell(graph_mode):
    class ViewOut(nn.Cell):  # the static-graph tutorial's view + in-place example (MindSpore 2.10: x1 becomes 2·x1)
        def construct(self, x):
            x = ops.TransposeView()(x, (1, 0))
            ops.Assign()(x, x * 2)
            return x * 3

    a = np.array([[1, 0, -1], [0, 2, 5]], np.int32)
    x1 = Tensor(a.copy())
    np.testing.assert_array_equal(ViewOut()(x1).asnumpy(), a.T * 6)
    np.testing.assert_array_equal(x1.asnumpy(), a * 2)


def test_inputs_not_written_stay_untouched(graph_mode):
    @ms.jit
    def f(x, y):
        x = x + y  # a new local value, not a write into the argument
        return x

    x = Tensor(np.array([1.0, 2.0], np.float32))
    f(x, Tensor(np.array([3.0, 4.0], np.float32)))
    np.testing.assert_allclose(x.asnumpy(), [1.0, 2.0])
    assert f.graphs[0]._writes == ()
