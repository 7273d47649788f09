"""Checkpoints in MindSpore's .ckpt format: the files real MindSpore 2.10 wrote (shared/fixtures/mindspore-2.10)
load exactly; a network loaded from one reproduces MindSpore's eval logits (PyNative and Graph mode); save/load
round trips of every dtype; the written protobuf fields; corrupt/truncated/missing files; atomic writes; the
prefix/choice filters; optimizer state and resumed training."""
import os
from pathlib import Path

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops
from kiln.train import serialization as ser

_REPO = Path(__file__).resolve().parents[2]
# The fixtures live in shared/ beside the checkout (as run.sh finds ../shared), inside it, or beside the folder that
# holds a git worktree of it.
_CANDIDATES = [_REPO.parent / "shared", _REPO / "shared", _REPO.parent.parent / "shared"]
FIX = next((c / "fixtures" / "mindspore-2.10" for c in _CANDIDATES if (c / "fixtures" / "mindspore-2.10").is_dir()),
           None)
needs_fixtures = pytest.mark.skipif(FIX is None, reason="the MindSpore 2.10 fixture folder shared/fixtures/"
                                                        "mindspore-2.10 is absent on this machine")

ALL_DTYPES = [ms.float16, ms.bfloat16, ms.float32, ms.float64, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8,
              ms.uint16, ms.uint32, ms.uint64, ms.bool_]


def values(t):
    """NumPy values of a Tensor (bfloat16 as float32, exact)."""
    return ops.cast(t, ms.float32).asnumpy() if t.dtype == ms.bfloat16 else t.asnumpy()


class ConvNet(nn.Cell):
    """The fixture README's network: Conv2d(1,4,3,valid,bias) -> BatchNorm2d(4) -> ReLU -> Flatten -> Dense(144,10)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(144, 10)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


# ------------------------------------------------------------------------------------------ MindSpore's own files
@needs_fixtures
@pytest.mark.parametrize("name", ["convnet", "convnet_momentum_state", "mixed_dtypes", "bfloat16"])
def test_fixture_loads_exactly(name):
    params = ms.load_checkpoint(str(FIX / f"{name}.ckpt"))
    ref = np.load(FIX / f"{name}.npz")
    assert list(params) == [k for k in _tags(FIX / f"{name}.ckpt")]
    assert sorted(params) == sorted(ref.files)
    for key, p in params.items():
        assert isinstance(p, Parameter) and p.name == key
        want = ref[key]
        got = values(p)
        assert got.shape == want.shape, key
        if p.dtype != ms.bfloat16:
            assert got.dtype == want.dtype, key
        np.testing.assert_array_equal(got, want, err_msg=key)


def _tags(path):
    msg = ser.Checkpoint()
    msg.ParseFromString(Path(path).read_bytes())
    return [v.tag for v in msg.value]


@needs_fixtures
def test_fixture_dtypes_and_extremes():
    p = ms.load_checkpoint(str(FIX / "mixed_dtypes.ckpt"))
    assert [p[k].dtype for k in ("w_f32", "w_f16", "w_f64", "i32", "i64", "u8", "flag", "scalar")] == [
        ms.float32, ms.float16, ms.float64, ms.int32, ms.int64, ms.uint8, ms.bool_, ms.float32]
    assert p["scalar"].shape == ()
    f16 = p["w_f16"].asnumpy()
    assert np.float16(65504) in f16 and np.float16(6e-5) in f16
    i32 = p["i32"].asnumpy()
    assert i32.min() == np.iinfo(np.int32).min and i32.max() == np.iinfo(np.int32).max
    bf = ms.load_checkpoint(str(FIX / "bfloat16.ckpt"))["w_bf16"]
    assert bf.dtype == ms.bfloat16
    np.testing.assert_array_equal(values(bf), np.array([1.0, -0.5, 3.0], np.float32))


@needs_fixtures
@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_convnet_reproduces_mindspore_eval_logits(mode):
    io = np.load(FIX / "convnet_io.npz")
    net = ConvNet()
    params = ms.load_checkpoint(str(FIX / "convnet.ckpt"), net=net)
    assert len(params) == 8
    ref = np.load(FIX / "convnet.npz")
    for name, p in net.parameters_dict().items():
        np.testing.assert_array_equal(p.asnumpy(), ref[name])
    net.set_train(False)
    ms.set_context(mode=mode)
    try:
        logits = net(Tensor(io["x"])).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(logits, io["eval_logits"], rtol=1e-5, atol=1e-5)
    # the loaded values are used, not the initial ones: a fresh net differs
    fresh = ConvNet()
    fresh.set_train(False)
    assert not np.allclose(fresh(Tensor(io["x"])).asnumpy(), io["eval_logits"], atol=1e-3)


@needs_fixtures
def test_load_param_into_net_reports_not_loaded():
    net = ConvNet()
    params = ms.load_checkpoint(str(FIX / "convnet_momentum_state.ckpt"))
    param_not_load, ckpt_not_load = ms.load_param_into_net(net, params)
    # the optimizer file has no BatchNorm moving statistics, and the optimizer's own entries match no net Parameter
    assert param_not_load == ["bn.moving_mean", "bn.moving_variance"]
    assert sorted(ckpt_not_load) == sorted(["global_step", "learning_rate", "momentum"]
                                           + [k for k in params if k.startswith("moments.")])
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), params["fc.weight"].asnumpy())


# ------------------------------------------------------------------------------------------------- round trips
def _example(dtype, shape, seed):
    r = np.random.default_rng(seed)
    if dtype == ms.bool_:
        return Tensor(r.integers(0, 2, shape).astype(bool))
    if dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16):
        a = (r.standard_normal(shape) * 100).astype(np.float32)
        return ops.cast(Tensor(a), dtype)
    npd = np.dtype(ms.dtype_to_nptype(dtype))
    info = np.iinfo(npd)
    a = r.integers(info.min, info.max, shape, dtype=npd, endpoint=True)
    if a.size >= 2:
        a.reshape(-1)[:2] = [info.min, info.max]
    return Tensor(a)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_round_trip_every_dtype(tmp_path, dtype):
    items = {"a": _example(dtype, (3, 4), 1), "scalar": _example(dtype, (), 2), "empty": _example(dtype, (0, 3), 3)}
    ms.save_checkpoint(items, str(tmp_path / "rt"))  # ".ckpt" is appended
    out = ms.load_checkpoint(str(tmp_path / "rt.ckpt"))
    assert list(out) == list(items)
    for k, t in items.items():
        assert out[k].dtype == dtype and out[k].shape == t.shape
        np.testing.assert_array_equal(values(out[k]), values(t))


def test_written_fields_follow_the_schema(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    bf = ops.cast(Tensor(np.array([1.0, -0.5, 3.0], np.float32)), ms.bfloat16)
    ms.save_checkpoint([{"name": "w", "data": Tensor(w)}, {"name": "b", "data": bf},
                        {"name": "i", "data": Tensor(np.array(-7, np.int64))}], str(tmp_path / "f.ckpt"))
    msg = ser.Checkpoint()
    msg.ParseFromString((tmp_path / "f.ckpt").read_bytes())
    assert [v.tag for v in msg.value] == ["w", "b", "i"]
    t = msg.value[0].tensor
    assert (list(t.dims), t.tensor_type, t.tensor_content) == ([2, 3], "Float32", w.astype("<f4").tobytes())
    t = msg.value[1].tensor  # bfloat16: the high 16 bits of the float32 values
    assert (list(t.dims), t.tensor_type) == ([3], "BFloat16")
    assert t.tensor_content == (np.array([1.0, -0.5, 3.0], "<f4").view("<u4") >> 16).astype("<u2").tobytes()
    t = msg.value[2].tensor
    assert (list(t.dims), t.tensor_type, t.tensor_content) == ([], "Int64", np.array(-7, "<i8").tobytes())


@needs_fixtures
def test_kiln_rewrite_of_mindspore_file_is_identical(tmp_path):
    for name in ("convnet", "mixed_dtypes", "bfloat16", "convnet_momentum_state"):
        params = ms.load_checkpoint(str(FIX / f"{name}.ckpt"))
        ms.save_checkpoint(params, str(tmp_path / f"{name}.ckpt"))
        a, b = ser.Checkpoint(), ser.Checkpoint()
        a.ParseFromString((FIX / f"{name}.ckpt").read_bytes())
        b.ParseFromString((tmp_path / f"{name}.ckpt").read_bytes())
        assert a == b, name


def test_save_cell_append_dict_and_choice_func(tmp_path):
    net = ConvNet()
    f = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, f, append_dict={"epoch_num": 3, "lr": 0.5, "flag": True, "t": Tensor([1, 2])},
                       choice_func=lambda n: not n.startswith("fc."))
    out = ms.load_checkpoint(f)
    assert list(out) == ["conv.weight", "conv.bias", "bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta",
                         "epoch_num", "lr", "flag", "t"]
    assert out["epoch_num"].dtype == ms.int64 and int(out["epoch_num"].asnumpy()) == 3
    assert out["lr"].dtype == ms.float32 and float(out["lr"].asnumpy()) == 0.5
    assert out["flag"].dtype == ms.bool_ and bool(out["flag"].asnumpy())
    np.testing.assert_array_equal(out["conv.weight"].asnumpy(), net.conv.weight.asnumpy())
    with pytest.raises(TypeError, match="save_obj"):
        ms.save_checkpoint(3, f)
    with pytest.raises(TypeError, match="'name' and 'data'"):
        ms.save_checkpoint([{"name": "x"}], f)
    with pytest.raises(TypeError, match="'s'"):
        ms.save_checkpoint({"s": object()}, f)


def test_async_save_captures_values_at_call(tmp_path):
    p = Parameter(Tensor(np.ones(4, np.float32)), name="p")
    f = str(tmp_path / "a.ckpt")
    ms.save_checkpoint([{"name": "p", "data": p}], f, async_save=True)
    p.set_data(Tensor(np.zeros(4, np.float32)))
    ser._wait_async_saves()
    np.testing.assert_array_equal(ms.load_checkpoint(f)["p"].asnumpy(), np.ones(4, np.float32))


def test_unsupported_options_raise(tmp_path):
    f = str(tmp_path / "x.ckpt")
    with pytest.raises(NotImplementedError, match="enc_key"):
        ms.save_checkpoint({"a": Tensor([1.0])}, f, enc_key=b"0" * 16)
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'ckpt'"):
        ms.save_checkpoint({"a": Tensor([1.0])}, f, format="pt")
    assert not os.path.exists(f)
    ms.save_checkpoint({"a": Tensor([1.0])}, f)
    with pytest.raises(NotImplementedError, match="dec_key"):
        ms.load_checkpoint(f, dec_key=b"0" * 16)


# ------------------------------------------------------------------------------------------------- bad files
def test_missing_file(tmp_path):
    f = str(tmp_path / "nope.ckpt")
    with pytest.raises(ValueError, match="nope.ckpt") as e:
        ms.load_checkpoint(f)
    assert isinstance(e.value, FileNotFoundError) and "does not exist" in str(e.value)
    with pytest.raises(ValueError, match="end with '.ckpt'"):
        ms.load_checkpoint(str(tmp_path / "x.bin"))


def test_truncated_and_corrupt_files(tmp_path):
    good = tmp_path / "good.ckpt"
    ms.save_checkpoint({"w": Tensor(np.arange(100, dtype=np.float32)), "v": Tensor(np.arange(5, dtype=np.int64))},
                       str(good))
    data = good.read_bytes()
    for i, bad in enumerate([data[:len(data) // 2], data[:-3], data[:7], b"", b"\xff" * 64,
                             b"import os; os.system('echo pwned')\n", b"\x80\x04\x95" + os.urandom(50)]):
        f = tmp_path / f"bad{i}.ckpt"
        f.write_bytes(bad)
        with pytest.raises(ValueError, match="Failed to read the checkpoint file .*bad%d.ckpt" % i):
            ms.load_checkpoint(str(f))


def test_content_size_and_type_mismatch(tmp_path):
    msg = ser.Checkpoint()
    v = msg.value.add()
    v.tag = "w"
    v.tensor.dims.extend([2, 2])
    v.tensor.tensor_type = "Float32"
    v.tensor.tensor_content = b"\0" * 12  # 3 floats for 4 elements
    f = tmp_path / "size.ckpt"
    f.write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match=r"size.ckpt.*'w'.*16 bytes, but has 12"):
        ms.load_checkpoint(str(f))
    v.tensor.tensor_type = "Complex256"
    f.write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match="'w'.*Complex256"):
        ms.load_checkpoint(str(f))


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    f = tmp_path / "m.ckpt"
    ms.save_checkpoint({"a": Tensor([1.0, 2.0])}, str(f))
    old = f.read_bytes()

    class Boom(Exception):
        pass

    def choice(name):
        if name == "z":
            raise Boom()
        return True

    with pytest.raises(Boom):
        ms.save_checkpoint({"a": Tensor([5.0]), "z": Tensor([0.0])}, str(f), choice_func=choice)
    assert f.read_bytes() == old
    assert sorted(os.listdir(tmp_path)) == ["m.ckpt"]
    # A failure during the write itself (a write refused by the file size limit) and a writer killed at every
    # step: tests/python/test_atomic_writes.py.


# ------------------------------------------------------------------------------------------------- selection
def test_filter_specify_prefix_and_choice_func(tmp_path):
    f = str(tmp_path / "n.ckpt")
    ms.save_checkpoint(ConvNet(), f)
    assert list(ms.load_checkpoint(f, filter_prefix="bn.")) == ["conv.weight", "conv.bias", "fc.weight", "fc.bias"]
    assert list(ms.load_checkpoint(f, filter_prefix=["bn.", "conv."])) == ["fc.weight", "fc.bias"]
    assert list(ms.load_checkpoint(f, specify_prefix="bn.moving")) == ["bn.moving_mean", "bn.moving_variance"]
    assert list(ms.load_checkpoint(f, specify_prefix=("conv.", "fc.b"))) == ["conv.weight", "conv.bias", "fc.bias"]
    assert list(ms.load_checkpoint(f, choice_func=lambda n: n.endswith("bias"))) == ["conv.bias", "fc.bias"]
    with pytest.raises(ValueError, match="at the same time"):
        ms.load_checkpoint(f, filter_prefix="a", specify_prefix="b")
    with pytest.raises(TypeError, match="filter_prefix"):
        ms.load_checkpoint(f, filter_prefix=3)


def test_load_param_into_net_shape_dtype_and_strict(tmp_path):
    net = ConvNet()
    before = net.conv.weight.asnumpy().copy()
    bad = {"conv.weight": Parameter(Tensor(np.zeros((4, 1, 5, 5), np.float32)), name="conv.weight"),
           "fc.bias": Parameter(Tensor(np.ones(10, np.float32)), name="fc.bias")}
    with pytest.raises(ValueError, match=r"conv.weight.*\(4, 1, 3, 3\).*\(4, 1, 5, 5\)"):
        ms.load_param_into_net(net, bad)
    np.testing.assert_array_equal(net.conv.weight.asnumpy(), before)  # nothing half loaded
    assert not np.allclose(net.fc.bias.asnumpy(), 1)
    f16 = {"fc.bias": Tensor(np.full(10, 0.5, np.float16))}
    assert ms.load_param_into_net(net, f16)[1] == []
    assert net.fc.bias.dtype == ms.float32
    np.testing.assert_array_equal(net.fc.bias.asnumpy(), np.full(10, 0.5, np.float32))
    with pytest.raises(TypeError, match="fc.bias Float32.*fc.bias Float16"):
        ms.load_param_into_net(net, f16, strict_load=True)
    with pytest.raises(TypeError, match="fc.bias"):
        ms.load_param_into_net(net, {"fc.bias": Tensor(np.ones(10, np.int32))})
    with pytest.raises(TypeError, match="'net'"):
        ms.load_param_into_net({}, {})


# ------------------------------------------------------------------------------------------------- optimizer state
def _train(net, opt, x, y, steps):
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)
    losses = []
    for _ in range(steps):
        loss, grads = grad_fn(x, y)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    return losses


def _make(seed):
    ms.set_seed(seed)
    net = ConvNet()
    net.set_train()
    return net, nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)


def test_optimizer_state_saved_like_mindspore_and_resume_is_exact(tmp_path):
    r = np.random.default_rng(5)
    x = Tensor(r.standard_normal((8, 1, 8, 8)).astype(np.float32))
    y = Tensor(r.integers(0, 10, 8).astype(np.int32))
    net, opt = _make(11)
    full = _train(net, opt, x, y, 6)

    net, opt = _make(11)
    first = _train(net, opt, x, y, 3)
    ms.save_checkpoint(opt, str(tmp_path / "opt.ckpt"))
    ms.save_checkpoint(net, str(tmp_path / "net.ckpt"))
    saved = ms.load_checkpoint(str(tmp_path / "opt.ckpt"))
    expected = ["global_step", "learning_rate", "conv.weight", "conv.bias", "bn.gamma", "bn.beta", "fc.weight",
                "fc.bias", "momentum", "moments.conv.weight", "moments.conv.bias", "moments.bn.gamma",
                "moments.bn.beta", "moments.fc.weight", "moments.fc.bias"]
    assert list(saved) == expected
    if FIX is not None:  # the same entries, dtypes and shapes as MindSpore's save_checkpoint(optimizer)
        ms_state = ms.load_checkpoint(str(FIX / "convnet_momentum_state.ckpt"))
        assert list(ms_state) == expected
        for k in expected:
            assert (ms_state[k].dtype, ms_state[k].shape) == (saved[k].dtype, saved[k].shape), k
    assert saved["global_step"].asnumpy().tolist() == [3]

    net2, opt2 = _make(99)  # different initial values: everything must come from the files
    ms.load_checkpoint(str(tmp_path / "net.ckpt"), net=net2)
    not_loaded, _ = ms.load_param_into_net(opt2, ms.load_checkpoint(str(tmp_path / "opt.ckpt")))
    assert not_loaded == []
    assert opt2.global_step.asnumpy().tolist() == [3]
    resumed = _train(net2, opt2, x, y, 3)
    assert first + resumed == full
    # without the optimizer state (zero moments), the resumed losses differ: the check above can fail
    net3, opt3 = _make(99)
    ms.load_checkpoint(str(tmp_path / "net.ckpt"), net=net3)
    assert _train(net3, opt3, x, y, 3)[1:] != full[4:]


def test_compat_names():
    import kiln.train
    assert kiln.train.save_checkpoint is ms.save_checkpoint is ser.save_checkpoint
    assert kiln.train.load_checkpoint is ms.load_checkpoint
    assert kiln.train.load_param_into_net is ms.load_param_into_net


def test_mindspore_names_under_compat():
    from kiln import compat
    was = compat.is_installed()
    compat.install()
    try:
        import mindspore
        import mindspore.train
        assert mindspore.load_checkpoint is ms.load_checkpoint
        assert mindspore.train.load_param_into_net is ms.load_param_into_net
        assert mindspore.save_checkpoint is ms.save_checkpoint
    finally:
        if not was:
            compat.uninstall()


def test_compiled_net_sees_loaded_values(tmp_path):
    src, dst = nn.Dense(3, 2), nn.Dense(3, 2)
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    f = ms.jit(lambda v: dst(v))
    before = f(x).asnumpy()
    ms.save_checkpoint(src, str(tmp_path / "d.ckpt"))
    ms.load_checkpoint(str(tmp_path / "d.ckpt"), net=dst)
    after = f(x).asnumpy()
    np.testing.assert_allclose(after, src(x).asnumpy(), rtol=1e-6)
    assert not np.allclose(before, after)


def test_argument_checks_as_mindspore(tmp_path):
    """Directory names, async_save values, list entries, strict_load and an empty selection raise as MindSpore's."""
    net = nn.Dense(3, 2)
    (tmp_path / "adir").mkdir()
    (tmp_path / "dd.ckpt").mkdir()
    for name in ("adir", "dd.ckpt"):
        with pytest.raises(IsADirectoryError, match="is a directory"):
            ms.save_checkpoint(net, str(tmp_path / name))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "dd.ckpt"]  # nothing written beside them
    with pytest.raises(ValueError, match="async_save"):
        ms.save_checkpoint(net, str(tmp_path / "a.ckpt"), async_save="yes")
    with pytest.raises(TypeError, match="'name'"):
        ms.save_checkpoint([{"name": 5, "data": Tensor([1.0])}], str(tmp_path / "a.ckpt"))
    with pytest.raises(TypeError, match="'data' of 'a'"):
        ms.save_checkpoint([{"name": "a", "data": np.ones(2)}], str(tmp_path / "a.ckpt"))
    f = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, f)
    with pytest.raises(TypeError, match="strict_load"):
        ms.load_param_into_net(net, {}, strict_load="x")
    with pytest.raises(ValueError, match="empty after filter or specify"):
        ms.load_checkpoint(f, specify_prefix="zzz")
    assert sorted(ms.load_checkpoint(f, specify_prefix="bi")) == ["bias"]


def test_adam_state_round_trip_has_mindspore_shapes(tmp_path):
    """Adam's beta1_power/beta2_power are 0-d as in MindSpore's files, and load back into a fresh Adam."""
    net = nn.Dense(3, 2)
    opt = nn.Adam(net.trainable_params(), 0.01)
    ms.ops.assign(opt.beta1_power, Tensor(np.float32(0.729)))
    f = str(tmp_path / "adam.ckpt")
    ms.save_checkpoint(opt, f)
    loaded = ms.load_checkpoint(f)
    assert loaded["beta1_power"].shape == () and loaded["beta2_power"].shape == ()
    fresh = nn.Adam(nn.Dense(3, 2).trainable_params(), 0.01)
    assert ms.load_param_into_net(fresh, loaded)[0] == []
    np.testing.assert_array_equal(fresh.beta1_power.asnumpy(), np.float32(0.729))


def test_str_entries_round_trip_and_load_from_mindspore_bytes(tmp_path):
    """append_dict str values: MindSpore's "str" entries (dims [0], NumPy '<U' UTF-32-LE bytes), loaded back as str and
    reported in ckpt_not_load by load_param_into_net, as MindSpore 2.10 does."""
    from kiln.train.serialization import Checkpoint
    net = nn.Dense(2, 1)
    path = str(tmp_path / "s.ckpt")
    ms.save_checkpoint(net, path, append_dict={"arch": "résnet50", "empty": "", "epoch": 3})
    msg = Checkpoint()
    msg.ParseFromString(open(path, "rb").read())
    arch = [v for v in msg.value if v.tag == "arch"][0].tensor
    assert (list(arch.dims), arch.tensor_type) == ([0], "str")
    assert arch.tensor_content == "résnet50".encode("utf-32-le")  # the bytes MindSpore 2.10 writes
    assert [v for v in msg.value if v.tag == "empty"][0].tensor.tensor_content == b"\0\0\0\0"
    loaded = ms.load_checkpoint(path)
    assert loaded["arch"] == "résnet50" and loaded["empty"] == "" and int(loaded["epoch"].asnumpy()) == 3
    assert ms.load_param_into_net(nn.Dense(2, 1), loaded) == ([], ["arch", "empty", "epoch"])
    with pytest.raises(TypeError, match="str value of 'arch'"):
        ms.save_checkpoint(net, str(tmp_path / "s.safetensors"), append_dict={"arch": "x"}, format="safetensors")
    bad = Checkpoint()
    v = bad.value.add()
    v.tag, v.tensor.tensor_type, v.tensor.tensor_content = "arch", "str", b"abc"
    v.tensor.dims.append(0)
    (tmp_path / "bad.ckpt").write_bytes(bad.SerializeToString())
    with pytest.raises(ValueError, match="bad.ckpt.*not a multiple"):
        ms.load_checkpoint(str(tmp_path / "bad.ckpt"))


def test_mismatches_are_also_mindspores_runtime_error():
    net = nn.Dense(2, 1)
    with pytest.raises(RuntimeError, match="same shape"):
        ms.load_param_into_net(net, {"weight": ms.Parameter(ms.Tensor(np.zeros((3, 3), np.float32)))})
    with pytest.raises(ValueError, match="same shape"):
        ms.load_param_into_net(net, {"weight": ms.Parameter(ms.Tensor(np.zeros((3, 3), np.float32)))})
    with pytest.raises(RuntimeError, match="weight"):
        ms.load_param_into_net(net, {"weight": ms.Parameter(ms.Tensor(np.zeros((1, 2), np.int32)))})


def test_a_body_over_protobufs_2gib_limit_is_decoded_a_group_of_records_at_a_time(tmp_path, monkeypatch):
    # MindSpore writes a large model's checkpoint (mindcv's mae_h_14_224_finetune, 2.5 GB) as one Checkpoint message,
    # which protobuf refuses to parse whole (2 GiB limit). The grouped path is forced here with a tiny limit: same
    # parameters, same values, whatever the group size (1 byte: one record per group; 300: several per group).
    rng = np.random.default_rng(0)
    params = [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=f"p{i}")
              for i, s in enumerate([(3, 4), (5,), (2, 2, 2), (7, 1)])]
    params.append(Parameter(Tensor(np.arange(6, dtype=np.int32).reshape(2, 3)), name="ints"))
    path = str(tmp_path / "m.ckpt")
    ms.save_checkpoint([{"name": p.name, "data": p} for p in params], path)
    whole = ms.load_checkpoint(path)
    monkeypatch.setattr(ser, "_PROTOBUF_LIMIT", 0)
    for group in (1, 300, 1 << 30):
        monkeypatch.setattr(ser, "_RECORD_GROUP_BYTES", group)
        grouped = ms.load_checkpoint(path)
        assert list(grouped) == list(whole) == ["p0", "p1", "p2", "p3", "ints"]
        for name in whole:
            assert grouped[name].dtype == whole[name].dtype
            np.testing.assert_array_equal(grouped[name].asnumpy(), whole[name].asnumpy())
    # damage on the grouped path: the documented ValueError naming the file
    body = Path(path).read_bytes()
    for bad, what in ((body[:-3], "past the end of the file"), (b"\x08\x01" + body, "wire type 0")):
        p = tmp_path / "bad.ckpt"
        p.write_bytes(bad)
        with pytest.raises(ValueError, match=what) as e:
            ms.load_checkpoint(str(p), crc_check=False)
        assert "bad.ckpt" in str(e.value)
