"""Cell.state_dict / load_state_dict / to (MindSpore 2.10's PyTorch-style methods; messages and structures checked
against MindSpore 2.10 with tools/ms_oracle.py)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 3)
        self.bn = nn.BatchNorm1d(3)

    def construct(self, x):
        return self.bn(self.fc(x))


KEYS = ["fc.weight", "fc.bias", "bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta"]


def test_state_dict_keys_and_references():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == KEYS
    assert sd["fc.weight"] is net.fc.weight
    assert list(net.state_dict(prefix="p.")) == ["p." + k for k in KEYS]
    dest = {"x": 1}
    assert net.state_dict(destination=dest) is dest and list(dest) == ["x"] + KEYS


def test_load_state_dict_copies_values_into_the_same_parameters():
    src, dst = Net(), Net()
    rng = np.random.RandomState(0)
    for p in src.trainable_params():
        p.set_data(Tensor(rng.randn(*p.shape).astype(np.float32)))
    weight = dst.fc.weight
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>" and result.missing_keys == []
    assert dst.fc.weight is weight  # the same Parameter object, new values (an optimizer keeps seeing it)
    for k in KEYS:
        np.testing.assert_array_equal(dst.state_dict()[k].asnumpy(), src.state_dict()[k].asnumpy())
    x = Tensor(rng.randn(4, 2).astype(np.float32))
    src.set_train(False), dst.set_train(False)
    np.testing.assert_array_equal(dst(x).asnumpy(), src(x).asnumpy())


def test_load_state_dict_numpy_values_are_cast():
    net = Net()
    net.load_state_dict({"fc.bias": np.array([1, 2, 3], np.float64)}, strict=False)
    assert net.fc.bias.dtype == ms.float32
    np.testing.assert_array_equal(net.fc.bias.asnumpy(), [1, 2, 3])


def test_load_state_dict_errors_copy_nothing():
    net = Net()
    before = net.fc.weight.asnumpy().copy()
    ones = {k: Tensor(np.ones(v.shape, np.float32)) for k, v in net.state_dict().items()}
    with pytest.raises(RuntimeError, match='Error\\(s\\) in loading state_dict for Net:\n\tMissing key\\(s\\) in '
                                           'state_dict: "fc.bias", "bn.moving_mean"'):
        net.load_state_dict({"fc.weight": ones["fc.weight"]})
    with pytest.raises(RuntimeError, match=r"size mismatch for fc.weight: copying a param with shape \(5, 5\) from "
                                           r"checkpoint, the shape in current model is \(3, 2\)"):
        net.load_state_dict({**ones, "fc.weight": Tensor(np.ones((5, 5), np.float32))})
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), before)
    r = net.load_state_dict({"fc.weight": ones["fc.weight"], "zzz": ones["fc.bias"]}, strict=False)
    assert r.missing_keys == KEYS[1:] and r.unexpected_keys == ["zzz"]
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), np.ones((3, 2)))
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([1, 2])
    with pytest.raises(TypeError, match="'fc.bias' must be a Tensor"):
        net.load_state_dict({"fc.bias": "x"}, strict=False)


@pytest.mark.parametrize("graph", [False, True])
def test_to_casts_float_parameters_in_place(graph):
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        net = nn.Dense(3, 2)
        x = Tensor(np.random.RandomState(1).randn(4, 3).astype(np.float32))
        assert net(x).dtype == ms.float32
        w = net.weight
        assert net.to(ms.float16) is net
        assert net.weight is w and w.dtype == ms.float16 and net.bias.dtype == ms.float16
        x16 = Tensor(x.asnumpy().astype(np.float16))
        want = x.asnumpy().astype(np.float16) @ w.asnumpy().T + net.bias.asnumpy()
        got = net(x16)
        assert got.dtype == ms.float16
        np.testing.assert_allclose(got.asnumpy().astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
        net.to(Tensor([1.0], ms.float32))  # dtype from a tensor
        assert net.weight.dtype == ms.float32
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_to_keeps_int_parameters_and_checks_arguments():
    class WithInt(nn.Cell):
        def __init__(self):
            super().__init__()
            self.steps = ms.Parameter(Tensor(np.array([3], np.int32)), requires_grad=False)
            self.w = ms.Parameter(Tensor(np.ones(2, np.float32)))

    c = WithInt().to(device="CPU", dtype=ms.float64)
    assert c.steps.dtype == ms.int32 and c.w.dtype == ms.float64
    c.to("CPU")
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes, but got desired dtype=Int32"):
        c.to(ms.int32)
    with pytest.raises(RuntimeError, match="device 'GPU' is not available"):
        c.to("GPU")
    with pytest.raises(TypeError, match="invalid combination"):
        c.to(3)
