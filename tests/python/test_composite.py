"""kiln.ops.composite (mindspore.ops.composite): GradOperation's return structures and sens input, MultitypeFuncGraph
dispatch, HyperMap/Map, partial, constexpr. Expected values are those MindSpore 2.10 gives for the same code."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, ParameterTuple, Tensor, nn, ops
from kiln.ops import composite as C
from kiln.ops import functional as F


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([2.0], np.float32)), name="w")

    def construct(self, x, y):
        return x * y * self.w


class TwoOut(nn.Cell):
    def construct(self, x, y):
        return x * y, x + y


X = Tensor(np.array([1.0, 2.0], np.float32))
Y = Tensor(np.array([3.0, 4.0], np.float32))


def N(t):
    return t.asnumpy()


def test_grad_operation_structures_match_mindspore():
    net = Net()
    assert ops.C is C and C.GradOperation is ops.GradOperation
    np.testing.assert_array_equal(N(C.GradOperation()(net)(X, Y)), [6, 8])
    g = C.GradOperation(get_all=True)(net)(X, Y)
    assert isinstance(g, tuple) and len(g) == 2
    np.testing.assert_array_equal(N(g[1]), [2, 4])
    g = C.GradOperation(get_by_list=True)(net, net.trainable_params())(X, Y)
    assert isinstance(g, tuple) and len(g) == 1 and N(g[0]).tolist() == [11]
    gi, gw = C.GradOperation(get_all=True, get_by_list=True)(net, ParameterTuple(net.trainable_params()))(X, Y)
    assert [N(t).tolist() for t in gi] == [[6, 8], [2, 4]] and N(gw[0]).tolist() == [11]
    g = C.GradOperation(get_by_list=True)(net)(X, Y)  # a Cell's trainable_params by default
    assert N(g[0]).tolist() == [11]
    g = C.GradOperation(get_all=True)(net)(X, Y)
    # one Tensor input: still a tuple
    g1 = C.GradOperation(get_all=True)(lambda a: (a * a).sum())(X)
    assert isinstance(g1, tuple) and N(g1[0]).tolist() == [2, 4]


def test_grad_operation_sens_param():
    net = Net()
    g = C.GradOperation(sens_param=True)(net)(X, Y, Tensor(np.array([1.0, 10.0], np.float32)))
    np.testing.assert_array_equal(N(g), [6, 80])
    np.testing.assert_array_equal(N(C.GradOperation()(TwoOut())(X, Y)), [4, 5])  # sum of both outputs
    sens = (Tensor(np.ones(2, np.float32)), Tensor(np.zeros(2, np.float32)))
    np.testing.assert_array_equal(N(C.GradOperation(sens_param=True)(TwoOut())(X, Y, sens)), [3, 4])
    with pytest.raises(ValueError, match="sens.*2 Tensor output"):
        C.GradOperation(sens_param=True)(TwoOut())(X, Y, sens[0])
    with pytest.raises(ValueError, match="sens.*shape"):
        C.GradOperation(sens_param=True)(net)(X, Y, Tensor(np.ones(3, np.float32)))


def test_grad_operation_sens_against_finite_differences():
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))

    def f(a):
        return ops.tanh(a) * a

    g = N(C.GradOperation(sens_param=True)(f)(Tensor(x), Tensor(s)))
    eps = 1e-6
    num = (np.tanh(x + eps) * (x + eps) - np.tanh(x - eps) * (x - eps)) / (2 * eps) * s
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)


def test_grad_operation_non_tensor_inputs_skipped_with_get_all():
    class Scale(nn.Cell):
        def construct(self, x, n):
            return x * n

    g = C.GradOperation(get_all=True)(Scale())(X, 3)
    assert len(g) == 1 and N(g[0]).tolist() == [3, 3]
    g = C.GradOperation(get_all=True)(Scale())(X, Tensor(3.0))
    assert len(g) == 2 and N(g[1]).item() == 3


def test_grad_operation_in_graph_mode_train_step_matches_pynative():
    class Step(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.weights = ParameterTuple(net.trainable_params())
            self.grad = C.GradOperation(get_by_list=True, sens_param=True)

        def construct(self, x, y):
            out = self.net(x, y)
            return self.grad(self.net, self.weights)(x, y, ops.ones_like(out) * 2)

    step = Step(Net())
    eager = step(X, Y)
    compiled = ms.jit(step.construct)(X, Y)
    assert N(eager[0]).tolist() == N(compiled[0]).tolist() == [22]


def test_grad_operation_errors():
    with pytest.raises(TypeError, match="GradOperation.*get_all.*bool"):
        C.GradOperation(get_all=1)
    with pytest.raises(TypeError, match="GradOperation.*fn"):
        C.GradOperation()(3)
    with pytest.raises(ValueError, match="get_by_list=True needs 'weights'"):
        C.GradOperation(get_by_list=True)(lambda a: a)
    with pytest.raises(TypeError, match="Tensor"):
        C.GradOperation()(lambda n: n)(3.0)
    with pytest.raises(TypeError, match="sens"):
        C.GradOperation(sens_param=True)(lambda a: a)()


def test_multitype_func_graph_dispatch():
    add = C.MultitypeFuncGraph("add")

    @add.register("Number", "Number")
    def _numbers(a, b):
        return a + b

    @add.register("Tensor", "Tensor")
    def _tensors(a, b):
        return ops.mul(a, b)

    @add.register("Tensor", "Number")
    def _mixed(a, b):
        return a - b

    assert add(1, 2) == 3 and add(True, 1) == 2 and add(1.5, 1) == 2.5
    assert N(add(Tensor(2.0), Tensor(3.0))).item() == 6
    assert N(add(Tensor(2.0), 1)).item() == 1
    with pytest.raises(ValueError, match=r"'add', no registered signature matches the arguments \(str, int\)"):
        add("a", 1)
    with pytest.raises(ValueError, match="unknown type name 'Tensr'"):
        add.register("Tensr")

    pick = C.MultitypeFuncGraph("pick")
    pick.register("Number")(lambda v: "number")
    pick.register("Bool")(lambda v: "bool")
    assert pick(True) == "bool" and pick(2) == "number"  # the specific type wins over Number


def test_hyper_map_and_map():
    scale = C.MultitypeFuncGraph("scale")
    scale.register("Tensor", "Tensor")(lambda a, b: a * b)
    scale.register("Number", "Number")(lambda a, b: a + b)
    hm = C.HyperMap()
    out = hm(scale, (Tensor(1.0), Tensor(2.0)), (Tensor(3.0), Tensor(4.0)))
    assert [N(t).item() for t in out] == [3, 8]
    assert C.HyperMap(scale)((1, 2), (3, 4)) == (4, 6)
    nested = hm(scale, (Tensor(1.0), (Tensor(2.0), 1)), (Tensor(3.0), (Tensor(4.0), 2)))
    assert N(nested[0]).item() == 3 and N(nested[1][0]).item() == 8 and nested[1][1] == 3
    listed = C.HyperMap(scale)([Tensor(1.0)], [Tensor(2.0)])
    assert isinstance(listed, tuple) and N(listed[0]).item() == 2
    assert C.Map()(lambda a: a * 2, (1, (2, 3))) == (2, (2, 3, 2, 3))  # one level: the inner tuple is a leaf
    with pytest.raises(ValueError, match="HyperMap.*one length"):
        hm(scale, (1, 2), (1,))
    with pytest.raises(TypeError, match="HyperMap.*sequences"):
        hm(scale, (1, 2), 3)


def test_partial_and_constexpr():
    assert ops.partial(lambda a, b: a - b, 10)(3) == 7
    assert F.partial is ops.partial
    with pytest.raises(TypeError, match="partial"):
        ops.partial(3)

    @ops.constexpr
    def twice(v):
        return v * 2

    @ops.constexpr(reuse_result=False)
    def thrice(v):
        return v * 3

    assert twice(3) == 6 and thrice(2) == 6

    @ms.jit
    def f(x):
        return x * twice(x.shape[0])

    assert N(f(Tensor(np.ones(3, np.float32)))).tolist() == [6, 6, 6]


def test_grad_operation_passes_keyword_arguments():
    def f(a, b=2.0):
        return (a * b).sum()

    x, y = Tensor(np.array([3.0, 4.0], np.float32)), Tensor(2.0)
    np.testing.assert_array_equal(N(C.GradOperation()(f)(x, b=y)), [2, 2])
    g = C.GradOperation(get_all=True)(f)(x, b=y)
    assert len(g) == 1 and N(g[0]).tolist() == [2, 2]  # keyword Tensors are not differentiated
