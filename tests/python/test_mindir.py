"""MindIR export / load (issue 14): kiln.export(file_format="MINDIR"), kiln.load, nn.GraphCell.

The MindSpore-written fixture must run with its stored outputs; Kiln's exports must reload with the network's
outputs; bad files give clear errors. (That MindSpore itself loads Kiln's exports is checked by
tools/check_mindir_mindspore.py, outside the tests: the tests never import MindSpore.)"""
import os

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor
from kiln.train import _mindir_proto as P

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures", "mindspore-2.10")
if not os.path.isdir(FIX):
    FIX = "/work/shared/fixtures/mindspore-2.10"
CONVNET = os.path.join(FIX, "convnet.mindir")


@pytest.fixture(autouse=True)
def _pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _np(out):
    return [o.asnumpy() for o in out] if isinstance(out, tuple) else [out.asnumpy()]


def _roundtrip(tmp_path, net, *inputs, name="net"):
    """(outputs of net in eval mode, outputs of the exported-and-reloaded graph, the loaded graph)."""
    net.set_train(False)
    want = _np(net(*inputs))
    ms.export(net, *inputs, file_name=str(tmp_path / name), file_format="MINDIR")
    g = ms.load(str(tmp_path / (name + ".mindir")))
    got = _np(nn.GraphCell(g)(*inputs))
    return want, got, g


def _set_bn_stats(net, rng):
    for _, c in net.cells_and_names():
        if isinstance(c, nn.BatchNorm2d):
            c.moving_mean.set_data(Tensor(rng.normal(0, 0.5, c.moving_mean.shape).astype(np.float32)))
            c.moving_variance.set_data(Tensor(rng.uniform(0.5, 2.0, c.moving_variance.shape).astype(np.float32)))
            c.gamma.set_data(Tensor(rng.uniform(0.5, 1.5, c.gamma.shape).astype(np.float32)))
            c.beta.set_data(Tensor(rng.normal(0, 0.5, c.beta.shape).astype(np.float32)))


# ------------------------------------------------------------------------------------------ MindSpore's fixture
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_mindspore_fixture_runs_with_stored_outputs(mode):
    io = np.load(os.path.join(FIX, "convnet_io.npz"))
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    g = ms.load(CONVNET)
    out = nn.GraphCell(g)(Tensor(io["x"]))
    assert out.shape == (8, 10) and out.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy(), io["eval_logits"], rtol=0, atol=1e-6)


def test_mindspore_fixture_structure_and_parameters():
    g = ms.load(CONVNET)
    assert g.producer == "MindSpore 2.10.0"
    assert [(s, d) for _, s, d in g.inputs] == [((8, 1, 8, 8), ms.float32)]
    stored = np.load(os.path.join(FIX, "convnet.npz"))
    cell = nn.GraphCell(g)
    names = [p.name for p in cell.trainable_params()]  # MindSpore's GraphCell: every parameter requires grad
    assert names == ["conv.weight", "conv.bias", "bn.gamma", "bn.beta", "bn.moving_mean", "bn.moving_variance",
                     "fc.weight", "fc.bias"]
    for p in cell.trainable_params():
        np.testing.assert_array_equal(p.asnumpy(), stored[p.name])
    assert [p for p in g.primitives if p not in ("Load", "UpdateState", "MakeTuple", "Depend")] == [
        "Conv2D", "BiasAdd", "BatchNorm", "TupleGetItem", "ReLU", "Flatten", "MatMul", "BiasAdd"]


def test_fixture_params_init_and_input_checks():
    io = np.load(os.path.join(FIX, "convnet_io.npz"))
    g = ms.load(CONVNET)
    zeros = Tensor(np.zeros(10, np.float32))
    fcw = Tensor(np.zeros((10, 144), np.float32))
    cell = nn.GraphCell(g, params_init={"fc.bias": zeros + 3, "fc.weight": fcw, "not.there": zeros})
    np.testing.assert_array_equal(cell(Tensor(io["x"])).asnumpy(), np.full((8, 10), 3, np.float32))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) must be Float32\[8, 1, 8, 8\].*Float32\[2, 1, 8, 8\]"):
        cell(Tensor(io["x"][:2]))
    with pytest.raises(ValueError, match="takes 1 input"):
        cell(Tensor(io["x"]), Tensor(io["x"]))
    with pytest.raises(ValueError, match="'fc.bias' as Float32\\[3\\]"):
        nn.GraphCell(g, params_init={"fc.bias": Tensor(np.zeros(3, np.float32))})
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(g, params_init=[1])
    with pytest.raises(TypeError, match="must be Tensor or Parameter"):
        nn.GraphCell(g, params_init={"fc.bias": 1.0})
    with pytest.raises(TypeError, match="graph loaded by load"):
        nn.GraphCell("convnet.mindir")


# ----------------------------------------------------------------------------------------------- round trips
def test_dense_relu_roundtrip_matches_numpy(tmp_path):
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(nn.Flatten(), nn.Dense(12, 5), nn.ReLU(), nn.Dense(5, 3))
    x = rng.normal(size=(4, 3, 2, 2)).astype(np.float32)
    want, got, g = _roundtrip(tmp_path, net, Tensor(x))
    w1, b1, w2, b2 = (p.asnumpy() for p in net.trainable_params())
    ref = np.maximum(x.reshape(4, -1) @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(got[0], ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-6)
    assert g.producer.startswith("Kiln")
    assert g.primitives == ["Reshape", "MatMul", "Add", "ReLU", "MatMul", "Add"]
    assert sorted(g.parameters) == sorted(p.name for p in net.trainable_params())
    assert [s for _, s, _ in g.inputs] == [(4, 3, 2, 2)]


@pytest.mark.parametrize("pad_mode,stride", [("valid", 1), ("same", 1), ("same", 2), ("pad", 1)])
def test_conv_bn_pool_roundtrip(tmp_path, pad_mode, stride):
    rng = np.random.default_rng(1)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            kw = {"padding": 1} if pad_mode == "pad" else {}
            self.conv = nn.Conv2d(2, 4, 3, stride=stride, pad_mode=pad_mode, has_bias=True, **kw)
            self.bn = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2, 2)
            self.avg = nn.AvgPool2d(2, 1)

        def construct(self, x):
            return self.avg(self.pool(ops.relu(self.bn(self.conv(x)))))

    net = Net()
    _set_bn_stats(net, rng)
    x = Tensor(rng.normal(size=(2, 2, 10, 10)).astype(np.float32))
    want, got, g = _roundtrip(tmp_path, net, x)
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-6)
    assert {"Conv2D", "BatchNorm", "TupleGetItem", "MaxPool", "AvgPool"} <= set(g.primitives)
    # the file is in training mode nowhere, and the net's own flag is restored
    assert net.training is False


def test_export_restores_training_flag_and_uses_inference_mode(tmp_path):
    rng = np.random.default_rng(2)
    net = nn.SequentialCell(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.Dropout(p=0.5))
    _set_bn_stats(net, rng)
    net.set_train(True)
    x = Tensor(rng.normal(size=(2, 1, 5, 5)).astype(np.float32))
    ms.export(net, x, file_name=str(tmp_path / "bn"), file_format="MINDIR")
    assert net.training is True
    net.set_train(False)
    want = net(x).asnumpy()
    got = nn.GraphCell(ms.load(str(tmp_path / "bn.mindir")))(x).asnumpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_elementwise_shape_and_tuple_output_roundtrip(tmp_path):
    rng = np.random.default_rng(3)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(Tensor(rng.normal(size=(6,)).astype(np.float32)), name="w")

        def construct(self, x, y):
            z = x * 2 + self.w - y / 3
            s = ops.softmax(z, -1) * ops.sigmoid(z) + ops.tanh(z) - ops.exp(-ops.abs(z))
            t = ops.transpose(s.reshape(2, 3, 6), (0, 2, 1))
            c = ops.concat((t, ops.sqrt(ops.square(t) + 1)), 1)
            return c.sum(1), c.mean((0, 2), keep_dims=True), ops.maximum(x, y).max(-1)

    x = Tensor(rng.normal(size=(6, 6)).astype(np.float32))
    y = Tensor(rng.normal(size=(6, 6)).astype(np.float32))
    want, got, g = _roundtrip(tmp_path, Net(), x, y)
    assert len(got) == 3
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-6)
    assert [n for n, _, _ in g.inputs] == ["kiln_Net:x", "kiln_Net:y"]
    assert list(g.parameters) == ["w"]
    xn, yn, wn = x.asnumpy(), y.asnumpy(), g.parameters["w"].asnumpy()
    np.testing.assert_allclose(got[2], np.maximum(xn, yn).max(-1), rtol=0, atol=0)
    z = xn * 2 + wn - yn / 3
    e = np.exp(z - z.max(-1, keepdims=True))
    s = e / e.sum(-1, keepdims=True) / (1 + np.exp(-z)) + np.tanh(z) - np.exp(-np.abs(z))
    t = s.reshape(2, 3, 6).transpose(0, 2, 1)
    np.testing.assert_allclose(got[0], np.concatenate([t, np.sqrt(t * t + 1)], 1).sum(1), rtol=1e-5, atol=1e-5)


def test_libm_and_elementwise_kernels_roundtrip(tmp_path):
    """The one-node elementwise kernels of issue 23 export under MindSpore's primitive names and load back as the
    same ops (the loader knew none of ACos ... Erfc before)."""
    rng = np.random.default_rng(5)
    x = Tensor(rng.uniform(-0.9, 0.9, size=(3, 4)).astype(np.float32))
    y = Tensor(rng.normal(size=(3, 4)).astype(np.float32))

    class Net(nn.Cell):
        def construct(self, a, b):
            return _kernels_of(a, b)

    def _kernels_of(a, b):
        return (ops.acos(a), ops.asin(a), ops.atan(a), ops.sinh(a), ops.cosh(a), ops.tan(a), ops.asinh(a),
                ops.acosh(ops.abs(a) + 1.5), ops.atanh(a), ops.expm1(a), ops.erfc(a), ops.trunc(a * 3), ops.sinc(a),
                ops.xlogy(a, ops.abs(b) + 0.1), ops.truncate_div(a * 5, ops.abs(b) + 0.5), ops.fmax(a, b),
                ops.fmin(a, b), ops.heaviside(a, b))
    want, got, _ = _roundtrip(tmp_path, Net(), x, y)
    assert len(got) == 18
    for w_, g_ in zip(want, got):
        np.testing.assert_allclose(g_, w_, rtol=0, atol=0)
    xn, yn = x.asnumpy(), y.asnumpy()
    np.testing.assert_allclose(got[11], np.trunc(xn * 3), rtol=0, atol=0)
    np.testing.assert_allclose(got[15], np.fmax(xn, yn), rtol=0, atol=0)
    np.testing.assert_allclose(got[13], xn * np.log(np.abs(yn) + 0.1), rtol=1e-6, atol=1e-7)


def test_round_and_copysign_roundtrip(tmp_path):
    """Round exports as MindSpore 2.10's Round(x, decimals=0) (halves to even) and Copysign, which MindSpore lacks,
    as Select(LogicalOr(Less(b, 0), Less(Reciprocal(b), 0)), Neg(Abs a), Abs a): the sign of −0.0 survives (NumPy's
    values, bit for bit). tools/check_mindir_mindspore.py runs the same file in MindSpore."""
    x = Tensor(np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.4, -1e-45, 3.7], np.float32))
    y = Tensor(np.array([-0.0, 0.0, -1.0, 2.0, -np.inf, np.inf, -0.0, 1e-30], np.float32))

    class Net(nn.Cell):
        def construct(self, a, b):
            return ops.round(a), ops.copysign(a, b), ops.copysign(ops.ones_like(a), b)
    want, got, _ = _roundtrip(tmp_path, Net(), x, y)
    xn, yn = x.asnumpy(), y.asnumpy()
    refs = (np.round(xn), np.copysign(xn, yn), np.copysign(np.ones_like(xn), yn))
    for w_, g_, r in zip(want, got, refs):
        np.testing.assert_array_equal(g_, r)
        np.testing.assert_array_equal(np.signbit(g_), np.signbit(r))
        np.testing.assert_array_equal(w_, g_)
    ops_written = [n.op_type for n in _mindir_proto_model(tmp_path / "net.mindir").primitives]
    assert "Round" in ops_written and "Reciprocal" in ops_written and "Copysign" not in ops_written


def _mindir_proto_model(path):
    from kiln.train import _mindir_proto as P
    m = P.ModelProto()
    m.ParseFromString(open(path, "rb").read())
    return m


def test_activation_kernels_roundtrip(tmp_path):
    """The activation kernels of issue 23 export under MindSpore's primitive names (HSwish, HSigmoid, SeLU, Mish,
    Softplus; LogSigmoid, which MindSpore lacks, as Neg(Softplus(Neg x))) and load back with the same values."""
    rng = np.random.default_rng(7)
    x = Tensor(rng.uniform(-5, 5, size=(3, 4)).astype(np.float32))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.hswish, self.softplus = nn.HSwish(), nn.Softplus()

        def construct(self, a):
            return (ops.hardswish(a), ops.hardsigmoid(a), ops.selu(a), ops.mish(a), ops.softplus(a),
                    ops.logsigmoid(a), self.hswish(a), self.softplus(a))
    want, got, _ = _roundtrip(tmp_path, Net(), x)
    assert len(got) == 8
    for w_, g_ in zip(want, got):
        np.testing.assert_allclose(g_, w_, rtol=1e-6, atol=1e-7)
    xn = x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(got[0], xn * np.clip(xn + 3, 0, 6) / 6, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[5], -np.logaddexp(0, -xn), rtol=1e-6, atol=1e-7)


def test_export_of_a_function_and_file_suffix(tmp_path):
    def fn(a, b):
        return ops.matmul(a, b) + 1

    a = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = Tensor(np.ones((3, 2), np.float32))
    ms.export(fn, a, b, file_name=str(tmp_path / "fn.mindir"), file_format="MINDIR")
    assert sorted(os.listdir(tmp_path)) == ["fn.mindir"]  # ".mindir" is not appended twice
    out = nn.GraphCell(ms.load(str(tmp_path / "fn.mindir")))(a, b)
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy() @ b.asnumpy() + 1)


def test_loaded_graph_runs_in_graph_mode_and_trains(tmp_path):
    rng = np.random.default_rng(4)
    net = nn.SequentialCell(nn.Dense(4, 3), nn.ReLU(), nn.Dense(3, 2))
    x = Tensor(rng.normal(size=(5, 4)).astype(np.float32))
    _, _, g = _roundtrip(tmp_path, net, x)
    cell = nn.GraphCell(g)
    # gradients of the loaded graph's parameters equal the original network's
    loss_fn = lambda m: lambda inp: (m(inp) ** 2).sum()
    want = ms.value_and_grad(loss_fn(net), None, net.trainable_params())(x)
    got = ms.value_and_grad(loss_fn(cell), None, cell.trainable_params())(x)
    np.testing.assert_allclose(got[0].asnumpy(), want[0].asnumpy(), rtol=1e-6)
    for a, b in zip(want[1], got[1]):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-5, atol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(cell(x).asnumpy(), net(x).asnumpy(), rtol=0, atol=1e-6)


# ------------------------------------------------------------------------------------------------- errors
def test_bad_files(tmp_path):
    data = open(CONVNET, "rb").read()
    trunc = tmp_path / "trunc.mindir"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="trunc.mindir.*truncated, damaged or not a MindIR"):
        ms.load(str(trunc))
    ckpt = tmp_path / "ckpt.mindir"
    ckpt.write_bytes(open(os.path.join(FIX, "convnet.ckpt"), "rb").read())
    with pytest.raises(RuntimeError, match="ckpt.mindir"):
        ms.load(str(ckpt))
    text = tmp_path / "text.mindir"
    text.write_text("hello, this is not a model\n")
    with pytest.raises(RuntimeError, match="text.mindir"):
        ms.load(str(text))
    empty = tmp_path / "empty.mindir"
    empty.write_bytes(b"")
    with pytest.raises(RuntimeError, match="empty.mindir' is empty"):
        ms.load(str(empty))
    with pytest.raises(ValueError, match="should end with '.mindir'"):
        ms.load(CONVNET[:-7] + ".ckpt")
    with pytest.raises(ValueError, match="does not exist"):
        ms.load(str(tmp_path / "missing.mindir"))
    with pytest.raises(ValueError, match="must be string"):
        ms.load(3)


def test_unknown_primitive_and_damaged_parameter(tmp_path):
    m = P.ModelProto()
    m.ParseFromString(open(CONVNET, "rb").read())
    for p in m.primitives:
        if p.op_type == "ReLU":
            p.op_type = "FancyActivation"
    f = tmp_path / "unknown.mindir"
    f.write_bytes(m.SerializeToString())
    with pytest.raises(RuntimeError, match="unknown.mindir' uses the primitive 'FancyActivation'"):
        ms.load(str(f))
    m.ParseFromString(open(CONVNET, "rb").read())
    m.graph.parameter[0].raw_data = m.graph.parameter[0].raw_data[:-4]
    f = tmp_path / "short.mindir"
    f.write_bytes(m.SerializeToString())
    with pytest.raises(RuntimeError, match="parameter 'conv.weight' of shape \\[4, 1, 3, 3\\].*holds 140 bytes"):
        ms.load(str(f))
    m.ParseFromString(open(CONVNET, "rb").read())
    m.graph.node[5].input[0] = "nowhere"
    f = tmp_path / "dangling.mindir"
    f.write_bytes(m.SerializeToString())
    with pytest.raises(RuntimeError, match="reads 'nowhere'"):
        ms.load(str(f))


def test_export_errors(tmp_path):
    x = Tensor(np.ones((2, 3), np.float32))

    def uses_argmax(a):
        return ops.argmax(a, -1)

    with pytest.raises(ValueError, match=r"op 'Argmax' \(issued at .*test_mindir.py:\d+\) has no MindIR mapping"):
        ms.export(uses_argmax, x, file_name=str(tmp_path / "a"), file_format="MINDIR")
    assert not os.listdir(tmp_path)
    with pytest.raises(ValueError, match="must be one of"):
        ms.export(nn.ReLU(), x, file_name=str(tmp_path / "a"), file_format="PB")
    with pytest.raises(TypeError, match="input 0 is list"):
        ms.export(nn.ReLU(), [1, 2], file_name=str(tmp_path / "a"), file_format="MINDIR")
    with pytest.raises(ValueError, match="at least one input"):
        ms.export(nn.ReLU(), file_name=str(tmp_path / "a"), file_format="MINDIR")
    with pytest.raises(ValueError, match="returns one of its inputs"):
        ms.export(nn.Identity(), x, file_name=str(tmp_path / "a"), file_format="MINDIR")
    with pytest.raises(ValueError, match="enc_key"):
        ms.export(nn.ReLU(), x, file_name=str(tmp_path / "a"), file_format="MINDIR", enc_key=b"0" * 16)


# ------------------------------------------------------------------- files in MindSpore's primitive-function form
def _model(nodes, inputs, params=(), outputs=None):
    """A MindIR ModelProto as MindSpore 2.10 writes it: inputs [(name, shape)], params [(name, array)], nodes
    [("Constant", out, python value) | (op_type, out, [input names], attrs dict, prim_type)]."""
    from kiln.train._mindir_export import _attr, _fill_tensor
    m = P.ModelProto(ir_version="1.1", producer_name="MindSpore", model_version="2.10.0", mind_ir_version=3)
    g = m.graph
    g.name = "g"
    for name, shape in inputs:
        t = g.input.add(name=name).tensor.add(data_type=1)
        t.dims.extend(shape)
    for name, arr in params:
        _fill_tensor(g.parameter.add(name="g:" + name, ref_key=name), arr)
    for k, spec in enumerate(nodes):
        if spec[0] == "Constant":
            n = g.node.add(output=[spec[1]], name=spec[1], op_type="Constant")
            n.attribute.append(_attr("value", spec[2]))
            continue
        op, out, ins, attrs, ptype = spec
        pname = f"{op}:{k}"
        p = m.primitives.add(name=pname, op_type=op, prim_type=ptype)
        for an, av in attrs.items():
            p.attribute.append(_attr(an, av))
        g.node.add(input=ins, output=[out], name=out, op_type="REF::" + pname)
    for o in outputs or [nodes[-1][1]]:
        g.output.add(name=o)
    return m


def _run_model(tmp_path, m, *xs):
    f = tmp_path / "hand.mindir"
    f.write_bytes(m.SerializeToString())
    return nn.GraphCell(ms.load(str(f)))(*[Tensor(x) for x in xs])


def test_mindspore_function_primitives(tmp_path):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 1, 4)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    beta = rng.normal(size=4).astype(np.float32)
    table = rng.normal(size=(5, 4)).astype(np.float32)
    F = 2
    m = _model([
        ("Constant", "ax", (2,)), ("Squeeze", "sq", ["x", "ax"], {}, F),            # (2, 3, 4)
        ("Constant", "one", 1), ("Constant", "eps", 1e-5),
        ("Constant", "m1", -1),
        ("LayerNorm", "ln", ["sq", "g:gamma", "g:beta", "m1", "m1", "eps"], {}, F),
        ("Constant", "zero", 0), ("TupleGetItem", "y", ["ln", "zero"], {}, 1),
        ("Constant", "dims", (1,)), ("Constant", "no", False), ("Constant", "none", None),
        ("SumExt", "s", ["y", "dims", "no", "none"], {}, F),                         # (2, 4)
        ("MeanExt", "mall", ["y", "none", "no", "none"], {}, F),                     # ()
        ("Constant", "idx", np.array([4, 0, 2], np.int32)),
        ("Gather", "gt", ["g:table", "idx", "zero", "zero"], {}, F),                 # (3, 4)
        ("ExpandDims", "e", ["gt", "zero"], {}, F),                                 # (1, 3, 4)
        ("Add", "sum2", ["e", "y"], {}, F),                                          # (2, 3, 4)
        ("MakeTuple", "out", ["s", "mall", "sum2"], {}, 1),
    ], [("x", x.shape)], [("gamma", gamma), ("beta", beta), ("table", table)])
    s, mall, sum2 = _run_model(tmp_path, m, x)
    sq = x[:, :, 0]
    mu, var = sq.mean(-1, keepdims=True), sq.var(-1, keepdims=True)
    y = (sq - mu) / np.sqrt(var + 1e-5) * gamma + beta
    np.testing.assert_allclose(s.asnumpy(), y.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mall.asnumpy(), y.mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sum2.asnumpy(), table[[4, 0, 2]][None] + y, rtol=1e-5, atol=1e-5)


def test_old_style_primitive_attributes(tmp_path):
    """Conv2D (pad_mode 'same', no pad_list), MaxPool 'SAME', AvgPool with args as inputs, BiasAdd, Flatten."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(1, 1, 5, 5)).astype(np.float32)
    w = rng.normal(size=(2, 1, 3, 3)).astype(np.float32)
    b = np.array([0.5, -1.0], np.float32)
    m = _model([
        ("Conv2D", "c", ["x", "g:w"], {"pad_mode": "same", "stride": (1, 1, 2, 2), "dilation": (1, 1, 1, 1),
                                       "group": 1, "format": "NCHW", "kernel_size": (3, 3)}, 1),
        ("Constant", "fmt", 0), ("BiasAdd", "cb", ["c", "g:b", "fmt"], {}, 2),          # (1, 2, 3, 3)
        ("MaxPool", "mp", ["cb"], {"pad_mode": "SAME", "kernel_size": (1, 1, 2, 2), "strides": (1, 1, 1, 1),
                                   "format": "NCHW"}, 1),                                 # (1, 2, 3, 3)
        ("Constant", "k", (3, 3)), ("Constant", "st", (1, 1)), ("Constant", "valid", 2),
        ("AvgPool", "ap", ["mp", "k", "st", "valid", "fmt"], {}, 2),                      # (1, 2, 1, 1)
        ("Flatten", "fl", ["ap"], {}, 2),
    ], [("x", x.shape)], [("w", w), ("b", b)])
    out = _run_model(tmp_path, m, x).asnumpy()
    # NumPy reference: 'same' with stride 2 on 5x5 pads 1 on each side; MaxPool 'same' 2x2 stride 1 pads bottom/right
    xp = np.pad(x[0, 0], 1)
    conv = np.array([[[np.sum(xp[2 * i:2 * i + 3, 2 * j:2 * j + 3] * w[o, 0]) for j in range(3)] for i in range(3)]
                     for o in range(2)]) + b[:, None, None]
    cp = np.pad(conv, ((0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
    mp = np.array([[[cp[o, i:i + 2, j:j + 2].max() for j in range(3)] for i in range(3)] for o in range(2)])
    np.testing.assert_allclose(out, mp.mean((1, 2))[None], rtol=1e-5, atol=1e-6)


def test_cast_compare_select_roundtrip(tmp_path):
    rng = np.random.default_rng(9)

    class Net(nn.Cell):
        def construct(self, x, k):
            mask = ops.logical_and(x > 0.2, ops.logical_not(x >= 0.9))
            y = ops.select(ops.logical_or(mask, x == 0), x, -x) + mask   # float + bool: Kiln promotes
            return y, ops.cast(y, ms.float16), (k * 2 < 5).astype(ms.int32) + k

    x = Tensor(rng.random((3, 4), dtype=np.float32))
    k = Tensor(np.arange(12, dtype=np.int32).reshape(3, 4))
    want, got, g = _roundtrip(tmp_path, Net(), x, k)
    assert "Cast" in g.primitives and "Select" in g.primitives
    xn = x.asnumpy()
    mask = (xn > 0.2) & ~(xn >= 0.9)
    ref = np.where(mask | (xn == 0), xn, -xn) + mask
    np.testing.assert_array_equal(got[0], ref.astype(np.float32))
    assert got[1].dtype == np.float16
    np.testing.assert_array_equal(got[1], ref.astype(np.float16))
    np.testing.assert_array_equal(got[2], (k.asnumpy() * 2 < 5).astype(np.int32) + k.asnumpy())
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_graph_cell_from_threads_and_inside_jit():
    import threading
    io = np.load(os.path.join(FIX, "convnet_io.npz"))
    cell = nn.GraphCell(ms.load(CONVNET))
    x = Tensor(io["x"])
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(cell(x).asnumpy())
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 20
    for r in results:
        np.testing.assert_allclose(r, io["eval_logits"], rtol=0, atol=1e-6)

    @ms.jit
    def step(inp):
        return ops.softmax(cell(inp), -1)

    e = np.exp(io["eval_logits"] - io["eval_logits"].max(-1, keepdims=True))
    np.testing.assert_allclose(step(x).asnumpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert step.trace_count == 1


def test_slicing_and_embedding_roundtrip(tmp_path):
    rng = np.random.default_rng(10)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def construct(self, x, ids):
            e = self.emb(ids)
            return x[:, 0] * 2, x[..., ::-1], x[1:, -2:, 1::2], e[::-2] + e.sum()

    x = Tensor(rng.normal(size=(3, 3, 4)).astype(np.float32))
    ids = Tensor(np.array([7, 0, 3], np.int32))
    net = Net()
    want, got, g = _roundtrip(tmp_path, net, x, ids)
    assert {"StridedSlice", "Gather"} <= set(g.primitives)
    xn, table = x.asnumpy(), net.emb.embedding_table.asnumpy()
    e = table[[7, 0, 3]]
    for a, b in zip(got, [xn[:, 0] * 2, xn[..., ::-1], xn[1:, -2:, 1::2], e[::-2] + e.sum()]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_strided_slice_masks_as_mindspore_writes_them(tmp_path):
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    F = 2
    m = _model([
        # x[:, 1] : shrink axis 1, begin/end mask on axis 0
        ("Constant", "b1", (0, 1)), ("Constant", "e1", (0, 2)), ("Constant", "s1", (1, 1)),
        ("Constant", "bm1", 1), ("Constant", "em1", 1), ("Constant", "z", 0), ("Constant", "sh1", 2),
        ("StridedSlice", "a", ["x", "b1", "e1", "s1", "bm1", "em1", "z", "z", "sh1"], {}, F),
        # x[-1, ::-2, 1:-1] : shrink axis 0 with a negative index, reversed axis 1 (masks), plain axis 2
        ("Constant", "b2", (-1, 0, 1)), ("Constant", "e2", (0, 0, -1)), ("Constant", "s2", (1, -2, 1)),
        ("Constant", "m2", 2), ("Constant", "sh2", 1),
        ("StridedSlice", "b", ["x", "b2", "e2", "s2", "m2", "m2", "z", "z", "sh2"], {}, F),
        ("MakeTuple", "out", ["a", "b"], {}, 1),
    ], [("x", x.shape)])
    a, b = _run_model(tmp_path, m, x)
    np.testing.assert_array_equal(a.asnumpy(), x[:, 1])
    np.testing.assert_array_equal(b.asnumpy(), x[-1, ::-2, 1:-1])


def test_python_scalar_inputs_are_fixed_in_the_graph(tmp_path):
    def fn(x, k, flag):
        return x * k if flag else x - k

    x = Tensor(np.array([1.0, -2.0, 3.5], np.float32))
    ms.export(fn, x, 3, True, file_name=str(tmp_path / "scalars"), file_format="MINDIR")
    g = ms.load(str(tmp_path / "scalars.mindir"))
    assert len(g.inputs) == 1 and g.primitives == ["Mul"]
    np.testing.assert_array_equal(nn.GraphCell(g)(x).asnumpy(), np.array([3.0, -6.0, 10.5], np.float32))
    from kiln.train.serialization import export, load  # MindSpore's other spelling of the same functions
    assert export is ms.export and load is ms.load
