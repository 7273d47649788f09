"""Checkpoint formats beyond the plain .ckpt: format="safetensors", crc_check=True (.ckpt and .safetensors) and
remove_redundancy, against files written by real MindSpore 2.10 (tests/python/data/ms210_dtypes*, made by
make_ms210_checkpoint_formats.py there) and MindSpore 2.10's behaviour (observed with /work/msvenv)."""
import binascii
import json
import logging
import os
import struct
import sys

import numpy as np
import pytest
import safetensors

import kiln as ms
from kiln import nn, Tensor
from kiln.train import ModelCheckpoint, CheckpointConfig
from kiln.train import serialization as ser

from model_helpers import _ArrayDataset, regression_data, make_regression_model

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from make_ms210_checkpoint_formats import ARRAYS, BF16, APPEND  # noqa: E402 (after sys.path has tests/python/data)

EXPECTED = dict(np.load(os.path.join(DATA, "ms210_dtypes.npz")))
MS_CRC = int(EXPECTED.pop("__crc_num__"))
HALF = ("f16", "bf16", "scalar_bf16")


def _items(half=True):
    items = [{"name": k, "data": Tensor(v)} for k, v in ARRAYS.items() if half or k not in HALF]
    if half:
        items += [{"name": k, "data": Tensor(v, ms.bfloat16)} for k, v in BF16.items()]
    return items


def _as_numpy(p):
    return p.float().asnumpy() if p.dtype == ms.bfloat16 else p.asnumpy()


def _assert_expected(params, names):
    assert list(params) == names
    for k, p in params.items():
        a = _as_numpy(p)
        assert a.dtype == EXPECTED[k].dtype and a.shape == EXPECTED[k].shape, (k, a.dtype, a.shape)
        np.testing.assert_array_equal(a, EXPECTED[k])
        assert p.name == k


def _header(path):
    raw = open(path, "rb").read()
    return json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])


ALL = sorted(EXPECTED)
NO_HALF = [k for k in ALL if k not in HALF]


# ------------------------------------------------------------------------------------------------- safetensors
def test_safetensors_round_trip_every_dtype_and_layout(tmp_path):
    f = str(tmp_path / "net")
    ms.save_checkpoint(_items(), f, format="safetensors", append_dict=dict(APPEND))
    path = f + ".safetensors"  # MindSpore's rule: "." + format appended
    assert os.listdir(tmp_path) == ["net.safetensors"]
    header = _header(path)
    assert header.pop("__metadata__") == {"format": "ms"}
    codes = {k: v["dtype"] for k, v in header.items()}
    assert codes == {"f32": "F32", "f16": "F16", "f64": "F64", "i8": "I8", "i16": "I16", "i32": "I32",
                     "i64": "I64", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64", "bool": "BOOL",
                     "scalar_f32": "F32", "scalar_i32": "I32", "layer.weight": "F32", "bf16": "BF16",
                     "scalar_bf16": "BF16", "epoch_num": "I64", "lr": "F32", "flag": "BOOL"}
    assert header["scalar_bf16"]["shape"] == [] and header["epoch_num"]["shape"] == []
    # the same layout (dtypes, shapes, data offsets) and bytes as MindSpore's file of the same entries; only
    # the order of the JSON keys may differ (the safetensors package writes them from a hash map)
    ms_file = os.path.join(DATA, "ms210_dtypes.safetensors")
    assert _header(path) == _header(ms_file)
    ours, theirs = open(path, "rb").read(), open(ms_file, "rb").read()
    assert ours[8 + struct.unpack("<Q", ours[:8])[0]:] == theirs[8 + struct.unpack("<Q", theirs[:8])[0]:]
    params = ms.load_checkpoint(path, format="safetensors")
    _assert_expected(params, ALL)
    assert params["bf16"].dtype == ms.bfloat16 and params["epoch_num"].dtype == ms.int64
    # the same values also come out of the safetensors package's own NumPy reader
    with safetensors.safe_open(path, framework="numpy") as sf:
        np.testing.assert_array_equal(sf.get_tensor("i64"), ARRAYS["i64"])
        np.testing.assert_array_equal(sf.get_tensor("f16"), ARRAYS["f16"])
    ms.save_checkpoint(_items(), path, format="safetensors")  # already ends with the format: kept
    assert sorted(os.listdir(tmp_path)) == ["net.safetensors"]


def test_safetensors_fixture_written_by_mindspore():
    _assert_expected(ms.load_checkpoint(os.path.join(DATA, "ms210_dtypes.safetensors"), format="safetensors"), ALL)
    params = ms.load_checkpoint(os.path.join(DATA, "ms210_dtypes_crc.safetensors"), format="safetensors",
                                crc_check=True)
    _assert_expected(params, NO_HALF)


def test_safetensors_from_a_cell_into_a_net(tmp_path):
    src, dst = nn.Dense(3, 2), nn.Dense(3, 2)
    src.weight.set_data(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
    f = str(tmp_path / "dense.safetensors")
    ms.save_checkpoint(src, f, format="safetensors")
    out = ms.load_checkpoint(f, net=dst, strict_load=True, format="safetensors")
    assert list(out) == ["bias", "weight"]
    np.testing.assert_array_equal(dst.weight.asnumpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(dst.bias.asnumpy(), src.bias.asnumpy())
    # shape mismatch: load_param_into_net's error, naming the parameter
    with pytest.raises(ValueError, match="weight"):
        ms.load_checkpoint(f, net=nn.Dense(4, 2), format="safetensors")


def test_safetensors_filters_choice_func_and_async(tmp_path):
    f = str(tmp_path / "x.safetensors")
    ms.save_checkpoint(_items(), f, format="safetensors", choice_func=lambda n: n.startswith(("i", "layer")),
                       async_save=True)
    assert list(ms.load_checkpoint(f, format="safetensors")) == ["i16", "i32", "i64", "i8", "layer.weight"]
    assert list(ms.load_checkpoint(f, format="safetensors", filter_prefix="i")) == ["layer.weight"]
    assert list(ms.load_checkpoint(f, format="safetensors", specify_prefix=["i3", "i6"])) == ["i32", "i64"]
    assert list(ms.load_checkpoint(f, format="safetensors", choice_func=lambda n: n.endswith("8"))) == ["i8"]
    with pytest.raises(ValueError, match="empty after filter"):
        ms.load_checkpoint(f, format="safetensors", choice_func=lambda n: False)


def test_safetensors_bad_files_name_the_file(tmp_path):
    good = str(tmp_path / "good.safetensors")
    ms.save_checkpoint(_items(), good, format="safetensors")
    raw = open(good, "rb").read()
    cases = {"trunc.safetensors": raw[:-5], "junk.safetensors": b"hello, not a checkpoint at all",
             "header.safetensors": raw[:40], "empty.safetensors": b"",
             "hugelen.safetensors": struct.pack("<Q", 1 << 40) + raw[8:]}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match="Failed to read the checkpoint file .*" + name):
            ms.load_checkpoint(str(tmp_path / name), format="safetensors")
    # an unsupported safetensors dtype (complex64), written with the safetensors package itself
    from safetensors.numpy import save_file
    save_file({"c": np.ones(2, np.complex64)}, str(tmp_path / "c.safetensors"))
    with pytest.raises(ValueError, match="'c' has the dtype C64"):
        ms.load_checkpoint(str(tmp_path / "c.safetensors"), format="safetensors")
    with pytest.raises(ValueError, match="does not exist") as e:
        ms.load_checkpoint(str(tmp_path / "nope.safetensors"), format="safetensors")
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(ValueError, match="should end with '.ckpt'"):
        ms.load_checkpoint(good)  # format defaults to "ckpt"
    with pytest.raises(ValueError, match="should end with '.safetensors'"):
        ms.load_checkpoint(str(tmp_path / "a.ckpt"), format="safetensors")
    # a .ckpt renamed .safetensors is not parsed as something else
    ms.save_checkpoint(_items(), str(tmp_path / "real.ckpt"))
    os.rename(tmp_path / "real.ckpt", tmp_path / "real.safetensors")
    with pytest.raises(ValueError, match="real.safetensors"):
        ms.load_checkpoint(str(tmp_path / "real.safetensors"), format="safetensors")


def test_format_and_option_errors(tmp_path):
    f = str(tmp_path / "x")
    d = {"a": Tensor([1.0])}
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'ckpt', but got 'pt'"):
        ms.save_checkpoint(d, f, format="pt")
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'ckpt'"):
        ms.load_checkpoint(f + ".pt", format="pt")
    with pytest.raises(ValueError, match="'enc_key' must be set to default value"):
        ms.save_checkpoint(d, f, format="safetensors", enc_key=b"0" * 16)
    with pytest.raises(ValueError, match="'dec_key' must be set to default value"):
        ms.load_checkpoint(f + ".safetensors", format="safetensors", dec_key=b"0" * 16)
    with pytest.raises(TypeError, match="crc_check"):
        ms.save_checkpoint(d, f, crc_check=1)
    with pytest.raises(TypeError, match="crc_check"):
        ms.load_checkpoint(f + ".ckpt", crc_check="yes")
    with pytest.raises(TypeError, match="remove_redundancy"):
        ms.save_checkpoint(d, f, remove_redundancy="yes")
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------------------------- CRC
def test_ckpt_crc_matches_mindspore_bytes_and_detects_damage(tmp_path, caplog):
    fixture = os.path.join(DATA, "ms210_dtypes_crc.ckpt")
    # MindSpore's file: the body, then b"crc_num" + CRC32(body) in 10 big-endian bytes
    raw = open(fixture, "rb").read()
    assert raw[-17:-10] == b"crc_num" and int.from_bytes(raw[-10:], "big") == binascii.crc32(raw[:-17])
    names_in_file_order = list(ARRAYS) + list(BF16) + list(APPEND)
    for crc in (True, False):
        params = ms.load_checkpoint(fixture, crc_check=crc)
        assert list(params) == names_in_file_order
        _assert_expected(dict(sorted(params.items())), ALL)
    # Kiln writes the same bytes as MindSpore for the same entries
    f = str(tmp_path / "k.ckpt")
    ms.save_checkpoint(_items(), f, crc_check=True, append_dict=dict(APPEND))
    assert open(f, "rb").read() == raw
    # one flipped bit in the last value: crc_check finds it, naming the file; without it the bad value loads
    bad = bytearray(raw)
    bad[-18] ^= 0x01  # the last byte of the last value ("flag", a bool True -> 0)
    (tmp_path / "bad.ckpt").write_bytes(bytes(bad))
    with pytest.raises(ValueError, match="crc check is failed for the checkpoint file .*bad.ckpt"):
        ms.load_checkpoint(str(tmp_path / "bad.ckpt"), crc_check=True)
    assert not bool(ms.load_checkpoint(str(tmp_path / "bad.ckpt"))["flag"].asnumpy())
    # a file without CRC loads under crc_check=True with a warning, as in MindSpore
    plain = str(tmp_path / "plain.ckpt")
    ms.save_checkpoint(_items(), plain)
    with caplog.at_level(logging.WARNING, logger="kiln.train"):
        assert list(ms.load_checkpoint(plain, crc_check=True)) == list(ARRAYS) + list(BF16)
    assert "does not contain the crc code" in caplog.text


def test_safetensors_crc_matches_mindspore_and_detects_damage(tmp_path, caplog):
    # Kiln's CRC of the same entries is the number MindSpore stored (incl. its bytes(0-d int) rule)
    f = str(tmp_path / "k.safetensors")
    ms.save_checkpoint(_items(half=False), f, format="safetensors", crc_check=True, append_dict=dict(APPEND))
    meta = _header(f)["__metadata__"]
    assert meta == {"format": "ms", "crc_num": str(MS_CRC)}
    _assert_expected(ms.load_checkpoint(f, format="safetensors", crc_check=True), NO_HALF)
    # the rule: crc32 chained over sorted names, each name's UTF-8 then bytes(array); a 0-d int n gives n zeros
    crc = 0
    values = dict(EXPECTED)
    for name in NO_HALF:
        crc = binascii.crc32(name.encode(), crc)
        v = values[name]
        crc = binascii.crc32(bytes(int(v)) if v.ndim == 0 and v.dtype.kind in "iu" else v.tobytes(), crc)
    assert crc == MS_CRC
    # damage in the data: found with crc_check, naming the file
    raw = bytearray(open(os.path.join(DATA, "ms210_dtypes_crc.safetensors"), "rb").read())
    raw[-1] ^= 0x40
    (tmp_path / "bad.safetensors").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="crc check has failed for the checkpoint file .*bad.safetensors"):
        ms.load_checkpoint(str(tmp_path / "bad.safetensors"), format="safetensors", crc_check=True)
    ms.load_checkpoint(str(tmp_path / "bad.safetensors"), format="safetensors")  # unchecked: loads
    # float16/bfloat16 (MindSpore cannot CRC them): Kiln covers their raw bytes, and finds damage there too
    g = str(tmp_path / "half.safetensors")
    ms.save_checkpoint(_items(), g, format="safetensors", crc_check=True)
    _assert_expected(ms.load_checkpoint(g, format="safetensors", crc_check=True),
                     sorted(list(ARRAYS) + list(BF16)))
    raw = bytearray(open(g, "rb").read())
    off = 8 + struct.unpack("<Q", raw[:8])[0] + _header(g)["bf16"]["data_offsets"][0]
    raw[off] ^= 0x01
    (tmp_path / "half_bad.safetensors").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="crc check has failed"):
        ms.load_checkpoint(str(tmp_path / "half_bad.safetensors"), format="safetensors", crc_check=True)
    # no CRC in the file: loads with a warning
    with caplog.at_level(logging.WARNING, logger="kiln.train"):
        ms.load_checkpoint(os.path.join(DATA, "ms210_dtypes.safetensors"), format="safetensors", crc_check=True)
    assert "does not contain the crc code" in caplog.text


def test_safetensors_crc_negative_scalar_int_refused_atomically(tmp_path):
    f = str(tmp_path / "n.safetensors")
    ms.save_checkpoint({"a": Tensor([1.0])}, f, format="safetensors")
    before = open(f, "rb").read()
    with pytest.raises(ValueError, match="0-d integer 'step' is -1"):
        ms.save_checkpoint({"step": Tensor(np.array(-1, np.int64))}, f, format="safetensors", crc_check=True)
    assert os.listdir(tmp_path) == ["n.safetensors"] and open(f, "rb").read() == before
    ms.save_checkpoint({"step": Tensor(np.array([-1], np.int64))}, f, format="safetensors", crc_check=True)
    assert ms.load_checkpoint(f, format="safetensors", crc_check=True)["step"].asnumpy().tolist() == [-1]


# ------------------------------------------------------------------------------------------------- remove_redundancy
def test_remove_redundancy_single_device(tmp_path, caplog):
    net = nn.Dense(2, 2)
    w = net.weight.asnumpy().copy()
    new = {"weight": ms.Parameter(Tensor(np.ones((2, 2), np.float32)), name="weight")}
    with pytest.raises(TypeError, match="only be used in parallel scenarios, but got stand_alone"):
        ms.load_param_into_net(net, new, remove_redundancy=True)
    np.testing.assert_array_equal(net.weight.asnumpy(), w)  # nothing loaded
    with pytest.raises(TypeError, match="remove_redundancy"):
        ms.load_param_into_net(net, new, remove_redundancy=1)
    f = str(tmp_path / "r.safetensors")
    ms.save_checkpoint(net, f, format="safetensors", remove_redundancy=True)
    assert _header(f)["__metadata__"] == {"format": "ms", "remove_redundancy": "True"}
    assert list(ms.load_checkpoint(f, format="safetensors")) == ["bias", "weight"]  # no net: no effect
    with caplog.at_level(logging.WARNING, logger="kiln.train"):
        with pytest.raises(TypeError, match="stand_alone"):  # the file's flag wins over the argument
            ms.load_checkpoint(f, net=net, format="safetensors")
    assert "deduplicated" in caplog.text
    ms.save_checkpoint(net, f, format="safetensors", remove_redundancy=False)
    assert _header(f)["__metadata__"] == {"format": "ms", "remove_redundancy": "False"}
    ms.load_checkpoint(f, net=net, format="safetensors", remove_redundancy=True)  # file says False: loads
    g = str(tmp_path / "r.ckpt")
    ms.save_checkpoint(net, g, remove_redundancy=True)  # nothing to record in a .ckpt
    with pytest.raises(TypeError, match="stand_alone"):
        ms.load_checkpoint(g, net=net, remove_redundancy=True)


# ------------------------------------------------------------------------------------------------- Model
def test_model_checkpoint_safetensors(tmp_path):
    x, y = regression_data(n=16)
    model, net, _ = make_regression_model()
    cfg = CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=1, format="safetensors",
                           append_info=["epoch_num", "step_num"])
    cb = ModelCheckpoint("net", str(tmp_path), cfg)
    model.train(2, _ArrayDataset(x, y), callbacks=[cb])
    assert os.listdir(tmp_path) == ["net-2_2.safetensors"]
    assert cb.latest_ckpt_file_name == str(tmp_path / "net-2_2.safetensors")
    meta = _header(cb.latest_ckpt_file_name)["__metadata__"]
    assert meta == {"format": "ms", "remove_redundancy": "False"}  # what MindSpore's ModelCheckpoint writes
    params = ms.load_checkpoint(cb.latest_ckpt_file_name, format="safetensors")
    assert int(params["epoch_num"].asnumpy()) == 2 and int(params["step_num"].asnumpy()) == 4
    np.testing.assert_array_equal(params["fc1.weight"].asnumpy(), net.fc1.weight.asnumpy())
    assert {"moments.fc1.weight", "learning_rate", "global_step"} <= set(params)
    _, fresh, _ = make_regression_model()
    ms.load_checkpoint(cb.latest_ckpt_file_name, net=fresh, format="safetensors")
    np.testing.assert_array_equal(fresh.fc1.weight.asnumpy(), net.fc1.weight.asnumpy())


def test_checkpoint_config_format_rules():
    assert CheckpointConfig(format="safetensors").format == "safetensors"
    assert CheckpointConfig(crc_check=True).crc_check is True
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'ckpt'"):
        CheckpointConfig(format="pt")
    for kw in ({"crc_check": True}, {"exception_save": True}, {"enc_mode": "SM4-CBC"}):
        with pytest.raises(ValueError, match="when format is 'safetensors'"):
            CheckpointConfig(format="safetensors", **kw)
    with pytest.raises(TypeError, match="stand_alone"):
        CheckpointConfig(remove_redundancy=True)


def test_model_checkpoint_ckpt_crc(tmp_path):
    x, y = regression_data(n=8)
    model, net, _ = make_regression_model()
    cb = ModelCheckpoint("c", str(tmp_path), CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=1,
                                                              crc_check=True))
    model.train(1, _ArrayDataset(x, y), callbacks=[cb])
    raw = open(cb.latest_ckpt_file_name, "rb").read()
    assert raw[-17:-10] == b"crc_num" and int.from_bytes(raw[-10:], "big") == binascii.crc32(raw[:-17])
    params = ser.load_checkpoint(cb.latest_ckpt_file_name, crc_check=True)
    np.testing.assert_array_equal(params["fc1.weight"].asnumpy(), net.fc1.weight.asnumpy())


# ------------------------------------------------------------------------------------------------ load_checkpoint_async
def test_load_checkpoint_async_both_formats(tmp_path):
    fut = ms.load_checkpoint_async(os.path.join(DATA, "ms210_dtypes.safetensors"))  # format from the name
    _assert_expected(fut.result(timeout=60), ALL)
    assert fut.done()
    net = nn.Dense(3, 2)
    f = str(tmp_path / "d.ckpt")
    ms.save_checkpoint({"weight": Tensor(np.full((2, 3), 2.0, np.float32))}, f)
    out = ms.train.load_checkpoint_async(f, net=net, choice_func=lambda n: n == "weight").result(timeout=60)
    assert list(out) == ["weight"]
    np.testing.assert_array_equal(net.weight.asnumpy(), np.full((2, 3), 2.0, np.float32))
    with pytest.raises(ValueError, match="nope.safetensors"):  # errors surface at result()
        ms.load_checkpoint_async(str(tmp_path / "nope.safetensors")).result(timeout=60)
