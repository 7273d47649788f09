"""nn.Cell: registration and naming of Parameters and child cells, iteration order, repr, calling, modes, and the
containers SequentialCell / CellList / CellDict (MindSpore behaviour: ../shared/reference/mindspore_api.md §3)."""
from collections import OrderedDict

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn


class SimpleMLP(nn.Cell):
    def __init__(self, input_size=10, hidden_size=16, output_size=1):
        super().__init__()
        self.fc1 = nn.Dense(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden_size, output_size)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class Wrapper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.backbone = SimpleMLP()
        self.head = nn.Dense(1, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


# ---------------------------------------------------------------------------------------------------- repr
def test_repr_simple_mlp_exact():
    # Strings as MindSpore 2.10 prints them for the same cells.
    net = SimpleMLP()
    assert repr(net) == (
        "SimpleMLP(\n"
        "  (fc1): Dense(input_channels=10, output_channels=16, has_bias=True)\n"
        "  (relu): ReLU()\n"
        "  (fc2): Dense(input_channels=16, output_channels=1, has_bias=True)\n"
        ")")
    assert str(net) == repr(net)


def test_repr_nested_container_exact():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.seq = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])

        def construct(self, x):
            return self.seq(x)

    assert repr(Net()) == (
        "Net(\n"
        "  (seq): SequentialCell(\n"
        "    (0): Dense(input_channels=2, output_channels=2, has_bias=True)\n"
        "    (1): ReLU()\n"
        "  )\n"
        ")")
    assert repr(nn.CellList([nn.ReLU()])) == "CellList(\n  (0): ReLU()\n)"


def test_repr_leaf_cells():
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.Flatten()) == "Flatten()"
    assert repr(nn.Dense(3, 4, has_bias=False)) == "Dense(input_channels=3, output_channels=4)"
    assert repr(nn.Dense(3, 4, activation="relu")) == (
        "Dense(\n"
        "  input_channels=3, output_channels=4, has_bias=True, activation=ReLU()\n"
        "  (activation): ReLU()\n"
        ")")


def test_repr_multiline_extend_repr():
    class E(nn.Cell):
        def extend_repr(self):
            return "a=1\nb=2"

    assert repr(E()) == "E(\n  a=1\n  b=2\n)"


# -------------------------------------------------------------------------------------------------- naming
def test_parameter_names_fixed_at_assignment():
    net = SimpleMLP()
    assert [p.name for p in net.trainable_params()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [tuple(p.shape) for p in net.trainable_params()] == [(16, 10), (16,), (1, 16), (1,)]
    w = Wrapper()
    assert [p.name for p in w.get_parameters()] == [
        "backbone.fc1.weight", "backbone.fc1.bias", "backbone.fc2.weight", "backbone.fc2.bias",
        "head.weight", "head.bias"]
    assert list(w.parameters_dict().keys()) == [p.name for p in w.get_parameters()]
    assert isinstance(net.trainable_params(), list)


def test_parameters_and_names_order_own_params_first():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = Parameter(Tensor(np.ones(2, np.float32)))
            self.sub = nn.Dense(2, 2)
            self.b = Parameter(Tensor(np.ones(1, np.float32)), name="explicit")

        def construct(self, x):
            return x

    net = Net()
    assert [n for n, _ in net.parameters_and_names()] == ["a", "b", "sub.weight", "sub.bias"]
    # placeholder names take the attribute name; explicit names are kept
    assert [p.name for p in net.get_parameters()] == ["a", "explicit", "sub.weight", "sub.bias"]
    assert [n for n, _ in net.parameters_and_names(name_prefix="top")][0] == "top.a"


def test_cells_and_names_and_name_cells():
    w = Wrapper()
    assert [n for n, _ in w.cells_and_names()] == ["", "backbone", "backbone.fc1", "backbone.relu", "backbone.fc2",
                                                   "head"]
    assert list(w.name_cells().keys()) == ["backbone", "head"]
    assert list(w.cells()) == [w.backbone, w.head]


def test_shared_parameters_and_cells_yielded_once():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 3)
            self.again = self.fc

        def construct(self, x):
            return self.again(self.fc(x))

    net = Net()
    assert len(list(net.get_parameters())) == 2
    assert [n for n, _ in net.cells_and_names()] == ["", "fc"]


def test_trainable_and_untrainable_params():
    net = SimpleMLP()
    net.fc1.bias.requires_grad = False
    assert [p.name for p in net.trainable_params()] == ["fc1.weight", "fc2.weight", "fc2.bias"]
    assert [p.name for p in net.untrainable_params()] == ["fc1.bias"]
    assert [p.name for p in net.trainable_params(recurse=False)] == []


def test_update_parameters_name():
    net = SimpleMLP()
    net.update_parameters_name("model.")
    assert [p.name for p in net.get_parameters()][:2] == ["model.fc1.weight", "model.fc1.bias"]


def test_insert_child_to_cell_does_not_rename():
    net = nn.SequentialCell()
    d = nn.Dense(2, 2)
    net.insert_child_to_cell("layer", d)
    assert [p.name for p in d.get_parameters()] == ["weight", "bias"]
    assert [n for n, _ in net.parameters_and_names()] == ["layer.weight", "layer.bias"]
    with pytest.raises(TypeError):
        net.insert_child_to_cell(1, d)
    with pytest.raises(KeyError):
        net.insert_child_to_cell("a.b", d)
    with pytest.raises(KeyError):
        net.insert_child_to_cell("", d)
    with pytest.raises(TypeError):
        net.insert_child_to_cell("x", object())


def test_insert_param_to_cell_errors():
    cell = nn.Cell()
    p = Parameter(Tensor(np.zeros(2, np.float32)))
    cell.insert_param_to_cell("w", p)
    assert p.name == "w" and cell.w is p
    with pytest.raises(KeyError):
        cell.insert_param_to_cell("a.b", p)
    with pytest.raises(KeyError):
        cell.insert_param_to_cell("", p)
    with pytest.raises(TypeError):
        cell.insert_param_to_cell("q", np.zeros(2))
    cell.other = 3
    with pytest.raises(KeyError):
        cell.insert_param_to_cell("other", Parameter(Tensor(np.zeros(2, np.float32))))


def test_parameter_list_attribute_names():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ws = [Parameter(Tensor(np.zeros(2, np.float32))), Parameter(Tensor(np.ones(2, np.float32)))]

        def construct(self, x):
            return x

    net = Net()
    assert [p.name for p in net.get_parameters()] == ["Parameter$1", "Parameter$2"]
    assert isinstance(net.ws, list) and len(net.ws) == 2


def test_assign_tensor_to_parameter_name_sets_data():
    net = nn.Dense(2, 3)
    w = net.weight
    net.weight = Tensor(np.full((3, 2), 7.0, np.float32))
    assert net.weight is w
    np.testing.assert_array_equal(w.asnumpy(), np.full((3, 2), 7.0, np.float32))
    with pytest.raises(TypeError):
        net.weight = "not a tensor"
    with pytest.raises(TypeError):
        net.weight = nn.ReLU()


def test_assign_before_init_raises():
    class BadParam(nn.Cell):
        def __init__(self):
            self.w = Parameter(Tensor(np.zeros(1, np.float32)))
            super().__init__()

    class BadCell(nn.Cell):
        def __init__(self):
            self.fc = nn.Dense(1, 1)
            super().__init__()

    with pytest.raises(AttributeError, match=r"can not assign params before Cell.__init__\(\) is called"):
        BadParam()
    with pytest.raises(AttributeError, match=r"can not assign cells before Cell.__init__\(\) is called"):
        BadCell()


def test_duplicate_names_refreshed_before_first_call():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = Parameter(Tensor(np.zeros(1, np.float32)), name="same")
            self.b = Parameter(Tensor(np.ones(1, np.float32)), name="same")

        def construct(self, x):
            return x + self.a + self.b

    net = Net()
    net(Tensor(np.zeros(1, np.float32)))
    assert [p.name for p in net.get_parameters()] == ["a", "b"]


def test_delattr_unregisters():
    net = SimpleMLP()
    del net.relu
    assert list(net.name_cells()) == ["fc1", "fc2"]
    with pytest.raises(AttributeError):
        net.relu  # noqa: B018 (the access must raise)


# ------------------------------------------------------------------------------------------------- calling
def test_call_runs_construct_and_binds_kwargs():
    class Scale(nn.Cell):
        def construct(self, x, scale=2.0, *, shift=0.0):
            return x * scale + shift

    s = Scale()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(s(x).asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(s(x, scale=3.0).asnumpy(), [3.0, 6.0])
    np.testing.assert_allclose(s(x=x, shift=1.0).asnumpy(), [3.0, 5.0])
    with pytest.raises(TypeError):
        s(x, bogus=1)


def test_missing_construct_and_unknown_attribute_messages():
    class NoConstruct(nn.Cell):
        pass

    with pytest.raises(AttributeError, match=r"^For 'Cell', the method 'construct' is not defined\.$"):
        NoConstruct()(Tensor(np.zeros(1, np.float32)))

    class Net(nn.Cell):
        def construct(self, x):
            return x

    with pytest.raises(AttributeError, match=r"^The 'Net' object has no attribute 'x'\.$"):
        Net().x  # noqa: B018 (the access must raise)


def test_set_train_recursive_and_default_false():
    w = Wrapper()
    assert w.training is False and w.backbone.fc1.training is False
    assert w.set_train() is w
    assert all(c.training for _, c in w.cells_and_names())
    assert w.phase == "train"
    w.set_train(False)
    assert not any(c.training for _, c in w.cells_and_names())
    assert w.set_grad() is w and w.requires_grad


def test_to_float_casts_inputs():
    net = SimpleMLP()
    x = Tensor(np.random.randn(4, 10).astype(np.float32))
    assert net.to_float(ms.float16) is net
    out = net(x)
    assert out.dtype == ms.float16
    with pytest.raises(ValueError):
        net.to_float(ms.int32)


def test_forward_hooks():
    net = nn.Dense(2, 2)
    seen = []
    h1 = net.register_forward_pre_hook(lambda cell, inputs: seen.append(("pre", len(inputs))))
    h2 = net.register_forward_hook(lambda cell, inputs, out: out * 0)
    out = net(Tensor(np.ones((1, 2), np.float32)))
    assert seen == [("pre", 1)] and np.all(out.asnumpy() == 0)
    h1.remove()
    h2.remove()
    out = net(Tensor(np.ones((1, 2), np.float32)))
    assert len(seen) == 1 and not np.all(out.asnumpy() == 0)


# ---------------------------------------------------------------------------------------------- containers
def _dense_params(seq):
    return [p.name for p in seq.get_parameters()]


def test_sequential_forms_and_forward():
    d1, d2 = nn.Dense(3, 4), nn.Dense(4, 2)
    seq = nn.SequentialCell(d1, nn.ReLU(), d2)
    assert len(seq) == 3 and _dense_params(seq) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    x = Tensor(np.random.randn(5, 3).astype(np.float32))
    want = d2(nn.ReLU()(d1(x))).asnumpy()
    np.testing.assert_allclose(seq(x).asnumpy(), want, rtol=1e-6)
    assert len(nn.SequentialCell([nn.Dense(1, 1), nn.ReLU()])) == 2
    od = nn.SequentialCell(OrderedDict([("dense", nn.Dense(1, 2)), ("act", nn.ReLU())]))
    assert _dense_params(od) == ["dense.weight", "dense.bias"]
    assert list(od.name_cells()) == ["dense", "act"]
    single = nn.SequentialCell(nn.Dense(1, 1))
    assert _dense_params(single) == ["0.weight", "0.bias"]
    with pytest.raises(TypeError, match="each cell must be subclass of Cell"):
        nn.SequentialCell([nn.ReLU(), 3])
    with pytest.raises(TypeError):
        nn.SequentialCell(3)


def test_sequential_indexing_slicing_setitem_del_append():
    seq = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU(), nn.Dense(2, 3)])
    assert isinstance(seq[1], nn.ReLU) and seq[-1] is seq[2]
    sub = seq[0:2]
    assert isinstance(sub, nn.SequentialCell) and len(sub) == 2
    with pytest.raises(IndexError):
        seq[3]
    with pytest.raises(TypeError):
        seq["a"]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[0]
    assert len(seq) == 2 and isinstance(seq[0], nn.Tanh)
    assert _dense_params(seq) == ["1.weight", "1.bias"]
    seq.append(nn.Dense(3, 1))
    assert _dense_params(seq) == ["1.weight", "1.bias", "2.weight", "2.bias"]
    x = Tensor(np.random.randn(4, 2).astype(np.float32))
    assert seq(x).shape == (4, 1)


def test_sequential_append_inside_parent_keeps_prefix():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.seq = nn.SequentialCell([nn.Dense(2, 2)])

        def construct(self, x):
            return self.seq(x)

    net = Net()
    net.seq.append(nn.Dense(2, 1))
    assert [p.name for p in net.get_parameters()] == ["seq.0.weight", "seq.0.bias", "seq.1.weight", "seq.1.bias"]


def test_cell_list():
    cl = nn.CellList([nn.Dense(2, 2), nn.ReLU()])
    cl.append(nn.Dense(2, 3))
    cl.extend([nn.Tanh()])
    cl.insert(0, nn.Dense(1, 2))
    assert len(cl) == 5
    assert [type(c).__name__ for c in cl] == ["Dense", "Dense", "ReLU", "Dense", "Tanh"]
    assert [p.name for p in cl.get_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight",
                                                     "3.bias"]
    cl += [nn.ReLU()]
    assert len(cl) == 6 and isinstance(cl[-1], nn.ReLU)
    del cl[0]
    assert [p.name for p in cl.get_parameters()][:2] == ["0.weight", "0.bias"]
    with pytest.raises(NotImplementedError):
        cl(Tensor(np.zeros((1, 2), np.float32)))
    with pytest.raises(TypeError):
        cl.extend(nn.ReLU())
    with pytest.raises(TypeError):
        cl.append(1)
    nested = nn.CellList([nn.Dense(2, 2)], auto_prefix=False)
    assert [p.name for p in nested.get_parameters()] == ["weight", "bias"]


def test_cell_dict():
    cd = nn.CellDict({"a": nn.Dense(2, 2), "b": nn.ReLU()})
    assert list(cd.keys()) == ["a", "b"] and len(cd) == 2 and "a" in cd
    assert [p.name for p in cd.get_parameters()] == ["a.weight", "a.bias"]
    r = cd.pop("b")
    assert isinstance(r, nn.ReLU) and "b" not in cd
    with pytest.raises(TypeError):
        cd[1] = nn.ReLU()
    with pytest.raises(NotImplementedError):
        cd(1)
