"""A custom gradient of the wrong shape (Cell.bprop, Tensor.register_hook, Cell backward (pre-)hooks, HookBackward,
InsertGradientOf) raises ValueError naming the bprop/hook, the Cell and both shapes — not sum_to's error."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops


class C(nn.Cell):
    def construct(self, x, y):
        return x * 2 + y

    def bprop(self, x, y, out, dout):
        return dout, ops.ones((1,), ms.float32)  # y is [3]: wrong


class Good(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return (dout.sum() * ops.ones((2, 3), ms.float32),)  # [2, 3] for a [3] input: summed back (allowed)


def _x():
    return Tensor(np.ones(3, np.float32))


@pytest.mark.parametrize("compiled", [False, True], ids=["pynative", "jit"])
def test_cell_bprop_wrong_shape(compiled):
    g = ms.grad(lambda x, y: C()(x, y).sum(), (0, 1))
    if compiled:
        g = ms.jit(g)
    with pytest.raises(ValueError, match=r"The bprop of Cell 'C' returned a gradient of shape \[1\] for input 1 of "
                                         r"shape \[3\]"):
        g(_x(), _x())


def test_cell_bprop_broadcast_shape_is_summed():
    gx = ms.grad(lambda x: Good()(x).sum())(_x())
    np.testing.assert_array_equal(gx.asnumpy(), [6.0, 6.0, 6.0])


def test_tensor_hook_wrong_shape():
    def f(x):
        z = x * 2
        z.register_hook(lambda g: ops.ones((1,), ms.float32))
        return z.sum()

    with pytest.raises(ValueError, match=r"The hook '.*lambda.*' registered with Tensor.register_hook returned a "
                                         r"gradient of shape \[1\] for a tensor of shape \[3\]"):
        ms.grad(f)(_x())

    def bad(g):
        return ops.ones((2,), ms.float32)

    x = _x()
    handle = x.register_hook(bad)
    with pytest.raises(ValueError, match=r"The hook 'test_tensor_hook_wrong_shape.<locals>.bad'.*shape \[2\]"):
        ms.grad(lambda v: (v * v).sum())(x)
    handle.remove()
    np.testing.assert_array_equal(ms.grad(lambda v: (v * v).sum())(x).asnumpy(), [2.0, 2.0, 2.0])


def test_cell_backward_hook_and_hook_backward_wrong_shape():
    net = nn.ReLU()

    def hook(cell, grad_input, grad_output):
        return (ops.ones((4,), ms.float32),)

    net.register_backward_hook(hook)
    with pytest.raises(ValueError, match=r"The backward hook 'test_.*hook' of Cell 'ReLU' returned a gradient of "
                                         r"shape \[4\] for input 0 of shape \[3\]"):
        ms.grad(lambda x: net(x).sum())(_x())

    hb = ops.HookBackward(lambda g: (ops.ones((5,), ms.float32),))
    with pytest.raises(ValueError, match=r"of HookBackward returned a gradient of shape \[5\] for input 0 of shape "
                                         r"\[3\]"):
        ms.grad(lambda x: hb(x * 1).sum())(_x())
