"""kiln.amp: where O1/O2/O3 put their casts (read from the compiled graph's dump), outputs and master weights in
float32, custom lists, build_train_network, Model(amp_level=...), and the compile cache keyed by precision.
Loss scaling is in test_amp_loss_scale.py."""
import re

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, amp, Tensor


class Net(nn.Cell):
    """Conv → BatchNorm → ReLU → Flatten → Dense, plus a LayerNorm and a MatMul primitive held as an attribute."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.fc = nn.Dense(32, 4)
        self.ln = nn.LayerNorm((4,))
        self.matmul = ops.MatMul(transpose_b=True)

    def construct(self, x):
        y = self.ln(self.fc(self.flat(self.relu(self.bn(self.conv(x))))))
        return self.matmul(y, y)


_LINE = re.compile(r"^\s*%[\d, %]+ = (\w+)\(.*?\)(?: \{(.*?)\})? : (\w+)\[")


def _ops(net, x):
    """[(op, attrs, dtype of its first output)] of the graph traced from net(x), in program order."""
    f = ms.jit(lambda t: net(t))
    f(x)
    out = []
    for line in f.graphs[0].graph_before.to_text().splitlines():
        m = _LINE.match(line)
        if m:
            out.append((m.group(1), m.group(2) or "", m.group(3)))
    return out


def _dtype_of(ops_list, name):
    return [d for op, _, d in ops_list if op == name]


def _x():
    return Tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))


def test_lists_are_mindspores_and_copies():
    white = amp.get_white_list()
    assert white[:10] == [nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose,
                          nn.Conv3dTranspose, nn.Dense, nn.LSTMCell, nn.RNNCell, nn.GRUCell]
    # MindSpore 2.10's primitive list, in its order, less the classes Kiln does not have (yet)
    prims = [getattr(ops, n) for n in ("Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose",
                                       "Conv2DBackpropInput", "MatMul", "BatchMatMul", "PReLU", "ReLU", "Ger")
             if hasattr(ops, n)]
    assert white[10:] == prims
    assert {ops.Conv2D, ops.MatMul, ops.BatchMatMul, ops.PReLU, ops.ReLU, ops.Ger} <= set(prims)
    assert amp.get_black_list() == [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm]
    white.append(nn.Flatten)
    assert nn.Flatten not in amp.get_white_list()


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_o1_casts_white_list_only(dtype):
    net = amp.auto_mixed_precision(Net(), "O1", dtype)
    g = _ops(net, _x())
    low = str(dtype)
    assert _dtype_of(g, "Conv2D") == [low]  # white list: nn.Conv2d
    assert _dtype_of(g, "BatchNorm") == ["Float32"]
    assert _dtype_of(g, "ReLU") == ["Float32"]  # nn.ReLU is not on the list (ops.ReLU is)
    assert _dtype_of(g, "BatchMatMul") == [low, low]  # nn.Dense, and the ops.MatMul attribute
    assert _dtype_of(g, "LayerNorm") == ["Float32"]  # black list: nn.LayerNorm (the fused op, float32 only)
    assert g[-1][0] == "Cast" and g[-1][2] == "Float32"
    assert net(_x()).dtype == ms.float32


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_o2_keeps_black_list_in_float32(dtype):
    net = amp.auto_mixed_precision(Net(), "O2", dtype)
    g = _ops(net, _x())
    low = str(dtype)
    assert _dtype_of(g, "Conv2D") == [low]
    assert _dtype_of(g, "BatchNorm") == ["Float32"]
    assert _dtype_of(g, "LayerNorm") == ["Float32"]  # black list: nn.LayerNorm (the fused op, float32 only)
    assert _dtype_of(g, "ReLU") == [low]
    assert _dtype_of(g, "BatchMatMul") == [low, low]
    # the BatchNorm's input comes up to float32 and its output goes back down
    i = [op for op, _, _ in g].index("BatchNorm")
    assert g[i - 1][0] == "Cast" and g[i - 1][2] == "Float32" and g[i + 1][0] == "Cast" and g[i + 1][2] == low
    assert g[-1][0] == "Cast" and g[-1][2] == "Float32"
    out = net(_x())
    assert out.dtype == ms.float32 and out.shape == (2, 2)
    assert type(net).__name__ == "_OutputTo32" and net._amp_level == "O2"
    assert isinstance(net.bn._backbone, nn.BatchNorm2d)  # wrapped; attribute reads pass through the wrapper


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_o3_casts_everything(dtype):
    net = amp.auto_mixed_precision(Net(), "O3", dtype)
    g = _ops(net, _x())
    low = str(dtype)
    for op in ("Conv2D", "ReLU", "Rsqrt"):
        assert _dtype_of(g, op) == [low], op
    assert _dtype_of(g, "BatchMatMul") == [low, low]
    assert _dtype_of(g, "BatchNorm")[0] == low
    assert net(_x()).dtype == ms.float32


def test_levels_close_to_float32_and_parameters_stay_float32():
    base = Net()
    ref = base(_x()).asnumpy()
    for level in ("O1", "O2", "O3"):
        for dtype, tol in ((ms.float16, 5e-3), (ms.bfloat16, 5e-2)):
            net = Net()
            ms.load_param_into_net(net, base.parameters_dict())
            net = amp.auto_mixed_precision(net, level, dtype)
            np.testing.assert_allclose(net(_x()).asnumpy(), ref, rtol=tol, atol=tol)
            params = net.trainable_params()
            assert [p.name for p in params] == [p.name for p in base.trainable_params()]
            assert all(p.dtype == ms.float32 for p in params)


def test_gradients_come_back_float32_for_float32_master_weights():
    net = amp.auto_mixed_precision(Net(), "O2", ms.bfloat16)
    grads = ms.grad(lambda x: net(x).sum(), None, net.trainable_params())(_x())
    assert all(g.dtype == ms.float32 for g in grads)
    assert all(np.isfinite(g.asnumpy()).all() for g in grads)


def test_o0_returns_the_network_and_bad_arguments_raise():
    net = Net()
    assert amp.auto_mixed_precision(net, "O0") is net
    with pytest.raises(TypeError, match="Cell"):
        amp.auto_mixed_precision(lambda x: x, "O2")
    with pytest.raises(ValueError, match="dtype"):
        amp.auto_mixed_precision(Net(), "O2", ms.float32)
    with pytest.raises(ValueError, match="O4"):
        amp.auto_mixed_precision(Net(), "O4")
    with pytest.raises(ValueError, match="auto"):
        amp.auto_mixed_precision(Net(), "auto")
    with pytest.raises(ValueError, match="dst_type"):
        Net().to_float(ms.int32)


def test_custom_mixed_precision():
    net = amp.custom_mixed_precision(Net(), white_list=[nn.Dense, nn.ReLU])
    g = _ops(net, _x())
    assert _dtype_of(g, "Conv2D") == ["Float32"] and _dtype_of(g, "ReLU") == ["Float16"]
    assert _dtype_of(g, "BatchMatMul") == ["Float16", "Float32"]  # Dense yes; the MatMul primitive not listed
    net = amp.custom_mixed_precision(Net(), black_list=[nn.Conv2d, nn.BatchNorm2d, nn.LayerNorm],
                                     dtype=ms.bfloat16)
    g = _ops(net, _x())
    assert _dtype_of(g, "Conv2D") == ["Float32"] and _dtype_of(g, "ReLU") == ["BFloat16"]
    assert net(_x()).dtype == ms.float32
    with pytest.raises(ValueError, match="one of white_list and black_list"):
        amp.custom_mixed_precision(Net())
    with pytest.raises(ValueError, match="same time"):
        amp.custom_mixed_precision(Net(), white_list=[nn.Dense], black_list=[nn.Dense])
    with pytest.raises(TypeError, match="should be list"):
        amp.custom_mixed_precision(Net(), white_list=(nn.Dense,))
    with pytest.raises(TypeError, match="should be a class"):
        amp.custom_mixed_precision(Net(), white_list=[nn.Dense(2, 2)])
    with pytest.raises(TypeError, match="'Cell'"):
        amp.custom_mixed_precision(Net(), black_list=[ops.MatMul])
    with pytest.raises(TypeError, match="network type"):
        amp.custom_mixed_precision(3, white_list=[nn.Dense])


def test_sequential_cell_with_black_list_runs():
    seq = nn.SequentialCell(nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dense(8, 2))
    net = amp.auto_mixed_precision(seq, "O2")
    x = Tensor(np.ones((3, 4), np.float32))
    assert net(x).dtype == ms.float32
    assert type(seq.cell_list[1]).__name__ == "_OutputTo16"


def test_to_float_after_a_compile_traces_again():
    net = nn.Dense(3, 2)
    f = ms.jit(lambda x: net(x))
    x = Tensor(np.ones((1, 3), np.float32))
    assert f(x).dtype == ms.float32
    net.to_float(ms.float16)
    assert f(x).dtype == ms.float16
    net.to_float(ms.bfloat16)
    assert f(x).dtype == ms.bfloat16
    assert len(f.graphs) == 3


def test_pynative_and_graph_give_the_same_numbers():
    def run(mode):
        ms.set_context(mode=mode)
        try:
            ms.set_seed(3)
            net = amp.auto_mixed_precision(Net(), "O2", ms.bfloat16)
            opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
            step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
            y = Tensor(np.zeros((2, 2), np.float32))
            return [float(step(_x(), y).asnumpy()) for _ in range(4)]
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    assert run(ms.PYNATIVE_MODE) == run(ms.GRAPH_MODE)


# ------------------------------------------------------------------------------------ build_train_network, Model
def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = (x @ rng.standard_normal((6, 3)).astype(np.float32)).argmax(1).astype(np.int32)
    return Tensor(x), Tensor(y)


def _mlp():
    ms.set_seed(1)
    return nn.SequentialCell(nn.Dense(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dense(16, 3))


def test_build_train_network_levels():
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    x, y = _data()
    expect = {"O0": "TrainOneStepCell", "O1": "TrainOneStepCell", "O2": "TrainOneStepWithLossScaleCell",
              "O3": "TrainOneStepCell"}
    for level, cls in expect.items():
        net = _mlp()
        step = amp.build_train_network(net, nn.SGD(net.trainable_params(), 0.1), loss, level=level)
        assert type(step).__name__ == cls and step.training
        out = step(x, y)
        loss_value = out[0] if isinstance(out, tuple) else out
        assert loss_value.dtype == ms.float32 and np.isfinite(loss_value.asnumpy())
        if level == "O2":
            assert type(net[1]).__name__ == "_OutputTo16" and net[0]._mp_dtype == ms.float16
    net = _mlp()
    step = amp.build_train_network(net, nn.SGD(net.trainable_params(), 0.1), loss, level="O2",
                                   cast_model_type=ms.bfloat16, loss_scale_manager=None)
    assert type(step).__name__ == "TrainOneStepCell" and net[0]._mp_dtype == ms.bfloat16
    opt = nn.SGD(_mlp().trainable_params(), 0.1)
    with pytest.raises(TypeError, match="optimizer"):
        amp.build_train_network(_mlp(), None, loss)
    with pytest.raises(ValueError, match="level"):
        amp.build_train_network(_mlp(), opt, loss, level="O5")
    with pytest.raises(TypeError, match="level"):
        amp.build_train_network(_mlp(), opt, loss, level=2)
    with pytest.raises(ValueError, match="unsupported arg 'foo'"):
        amp.build_train_network(_mlp(), opt, loss, foo=1)
    with pytest.raises(TypeError, match="cast_model_type"):
        amp.build_train_network(_mlp(), opt, loss, cast_model_type=ms.int32)
    with pytest.raises(TypeError, match="loss_scale_manager"):
        amp.build_train_network(_mlp(), opt, loss, loss_scale_manager=3)


def test_model_amp_levels_train_and_evaluate():
    import kiln.dataset as ds
    x, y = _data()

    def data():
        return ds.NumpySlicesDataset({"x": x.asnumpy(), "y": y.asnumpy()}, shuffle=False).batch(16)

    results = {}
    for level in ("O0", "O2", "O3"):
        net = _mlp()
        model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                         nn.Momentum(net.trainable_params(), 0.1, 0.9, loss_scale=1024.0), metrics={"loss"},
                         amp_level=level,
                         loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False))
        before = model.eval(data())["loss"]
        model.train(3, data())
        results[level] = (before, model.eval(data())["loss"])
    for level, (before, after) in results.items():
        assert after < 0.7 * before, (level, before, after)
    np.testing.assert_allclose(results["O2"], results["O0"], rtol=0.03)
    with pytest.raises(ValueError, match="amp_level"):
        ms.Model(_mlp(), nn.MSELoss(), nn.SGD(_mlp().trainable_params()), amp_level="O9")
    with pytest.raises(ValueError, match="optimizer"):
        ms.Model(_mlp(), nn.MSELoss(), amp_level="O2")
    with pytest.raises(TypeError, match="keep_batchnorm_fp32"):
        ms.Model(_mlp(), nn.MSELoss(), nn.SGD(_mlp().trainable_params()), keep_batchnorm_fp32=1)


class _Custom(nn.Cell):
    """A user layer reading its own Parameter in an op (MindSpore casts it inside a low-precision cell)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.matmul = ops.MatMul()
        self.w = ms.Parameter(Tensor(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)), name="w")

    def construct(self, x):
        return self.matmul(self.fc(x), self.w)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_custom_cells_own_parameters_are_cast_inside_its_construct(mode):
    ms.set_context(mode=mode)
    try:
        inner = _Custom()
        x = Tensor(np.ones((2, 4), np.float32))
        ref = inner(x).asnumpy()
        net = amp.auto_mixed_precision(inner, "O2", ms.bfloat16)
        assert type(inner).__name__ == "_Custom" and isinstance(inner, _Custom)
        out = net(x)
        assert out.dtype == ms.float32
        np.testing.assert_allclose(out.asnumpy(), ref, rtol=3e-2, atol=3e-2)
        assert isinstance(inner.w, ms.Parameter) and inner.w.dtype == ms.float32  # outside construct: itself
        grads = ms.grad(lambda t: net(t).sum(), None, net.trainable_params())(x)
        assert [g.dtype for g in grads] == [ms.float32] * 3
        g = _ops(net, x)
        assert _dtype_of(g, "BatchMatMul") == ["BFloat16", "BFloat16"]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("make, x", [
    (lambda: nn.LSTM(4, 5, batch_first=True), np.ones((2, 3, 4), np.float32)),
    (lambda: nn.GRU(4, 5, batch_first=True), np.ones((2, 3, 4), np.float32)),
    (lambda: nn.Embedding(10, 4), np.array([[1, 2]], np.int32)),
    (lambda: nn.LayerNorm((4,)), np.ones((2, 4), np.float32)),
    (lambda: nn.BatchNorm2d(3), np.ones((2, 3, 2, 2), np.float32)),
    (lambda: nn.Conv2dTranspose(3, 2, 2), np.ones((2, 3, 2, 2), np.float32)),
])
@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_o3_runs_layers_with_parameters(make, x, dtype):
    ms.set_seed(0)
    layer = make()
    layer.set_train()
    ref = layer(Tensor(x))
    ref = (ref[0] if isinstance(ref, tuple) else ref).asnumpy()
    out = amp.auto_mixed_precision(layer, "O3", dtype)(Tensor(x))
    out = out[0] if isinstance(out, tuple) else out
    assert out.dtype == ms.float32
    tol = 2e-2 if dtype == ms.float16 else 6e-2
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=tol, atol=tol)


def test_parameter_casting_is_per_thread():
    import threading
    inner = _Custom()
    net = amp.auto_mixed_precision(inner, "O3", ms.float16)
    x = Tensor(np.ones((2, 4), np.float32))
    stop = threading.Event()
    seen = []

    def reader():
        while not stop.is_set():
            seen.append(inner.w.dtype)  # another thread reads the attribute while construct runs
    t = threading.Thread(target=reader)
    t.start()
    try:
        outs = [net(x).asnumpy() for _ in range(30)]
    finally:
        stop.set()
        t.join()
    assert seen and set(seen) == {ms.float32}
    assert all(np.array_equal(o, outs[0]) for o in outs)
    inner.w.set_data(Tensor(np.zeros((4, 3), np.float32)))  # outside construct the attribute is the Parameter
    np.testing.assert_array_equal(net(x).asnumpy(), np.zeros((2, 3), np.float32))


def test_converting_again_warns_and_keeps_one_wrapper_per_black_listed_cell(caplog):
    seq = nn.SequentialCell(nn.Dense(3, 4), nn.BatchNorm1d(4), nn.Dense(4, 2))
    first = amp.auto_mixed_precision(seq, "O2")
    with caplog.at_level("WARNING", logger="kiln.amp"):
        again = amp.auto_mixed_precision(first, "O2", ms.bfloat16)
    assert "adjusted from O2 to O2" in caplog.text
    assert isinstance(seq[1]._backbone, nn.BatchNorm1d) and seq[1].dtype == ms.bfloat16
    assert seq[0]._mp_dtype == ms.bfloat16 and seq[1]._backbone._mp_dtype == ms.float32
    assert again(Tensor(np.ones((2, 3), np.float32))).dtype == ms.float32
