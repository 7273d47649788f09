"""Every loader turns any damage into the one error it documents, naming the file (docs/decisions/damaged-files.md).

A seeded fuzzer damages real files Kiln wrote — a checkpoint (.ckpt with and without CRC, .safetensors), a MindRecord
shard and its SQLite index, a compile-cache entry (the graph bytes re-sealed with a valid checksum, so the C++
reader sees the damage), a MINDIR export — and dataset files (MNIST, CSV, TFRecord, a schema file): it truncates
them, overwrites bytes, plants invalid UTF-8, sets 8-byte fields to huge values and inserts bytes. Each damaged
file, loaded in this process, either loads (harmless damage) or raises the loader's documented error: ValueError
(load_checkpoint), RuntimeError (MindRecord readers), MRMOpenForAppendError (FileWriter.open_for_append),
MindIRError (load), RuntimeError (the graph reader, MNIST, TFRecord), ValueError (CSV, Schema); a damaged
compile-cache entry is a miss with a RuntimeWarning, and the function compiles and gives the same results. Never a
raw UnicodeDecodeError, struct.error, IndexError, MemoryError, never a crash. Also the reported instances: a
MindRecord index whose shard name is not UTF-8, and graph bytes whose strings are not UTF-8; and fixed cases: MNIST
dims whose product wraps around, a CSV file in Latin-1, MindRecord header values of the wrong type."""
import glob
import hashlib
import json
import os
import random
import sqlite3
import struct
import warnings

import numpy as np
import pytest

import kiln as ms
from kiln import nn, Tensor, _core
from kiln._compiler import disk_cache as _disk_cache
from kiln.mindrecord import FileReader, FileWriter

import mindrecord_helpers as mh


def damage(data, r):
    """`data` damaged one of five ways, chosen and placed by the random.Random `r`."""
    data = bytearray(data)
    kind = r.randrange(5)
    if kind == 0:  # truncated
        return bytes(data[:r.randrange(len(data))])
    if kind == 1:  # a few bytes overwritten
        for _ in range(r.randint(1, 4)):
            data[r.randrange(len(data))] = r.randrange(256)
    elif kind == 2:  # a byte that is never (or not here) valid UTF-8
        data[r.randrange(len(data))] = r.choice([0xFF, 0xC3, 0x80, 0xED, 0xF8])
    elif kind == 3:  # an 8-byte field (a length, a count) set huge or negative
        i = r.randrange(max(1, len(data) - 8))
        data[i:i + 8] = r.choice([b"\xff" * 8, (1 << 40).to_bytes(8, "little"), (1 << 31).to_bytes(8, "little"),
                                  (1 << 62).to_bytes(8, "big")])
    else:  # a byte inserted
        data.insert(r.randrange(len(data) + 1), r.randrange(256))
    return bytes(data)


def fuzz(files, load, expected, cases, seed, check=None):
    """Loads `cases` damaged versions of `files` (one damaged at a time, restored after); every load returns or
    raises `expected` with a message naming the damaged file (and passing `check(message, file)` when given).
    Returns how many raised."""
    originals = {f: open(f, "rb").read() for f in files}
    raised = 0
    try:
        for t in range(cases):
            f = files[t % len(files)]
            bad = damage(originals[f], random.Random(seed * 100003 + t))
            with open(f, "wb") as fh:
                fh.write(bad)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    load()
            except expected as e:
                raised += 1
                named = os.path.splitext(f)[0]  # (a MindRecord index x.db may be named by its shard file x)
                assert named in str(e), f"case {t} ({f}): the message does not name the file: {e}"
                if check is not None:
                    check(str(e), f)
            except Exception as e:  # noqa: BLE001 — the point of the test
                pytest.fail(f"case {t}: damaging {f} raised {type(e).__name__}: {e}")
            finally:
                with open(f, "wb") as fh:
                    fh.write(originals[f])
    finally:
        for f, data in originals.items():
            with open(f, "wb") as fh:
                fh.write(data)
    load()  # the undamaged files still load
    return raised


def _net():
    ms.set_seed(1)
    return nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])


# -------------------------------------------------------------------------------------------------- checkpoints
@pytest.mark.parametrize("variant", ["ckpt", "ckpt-crc", "safetensors"])
def test_damaged_checkpoints_raise_value_error(tmp_path, variant):
    net = _net()
    fmt = "safetensors" if variant == "safetensors" else "ckpt"
    crc = variant == "ckpt-crc"
    extra = {"epoch": 3, "note": "héllo"} if fmt == "ckpt" else {"epoch": 3}
    path = str(tmp_path / f"net.{fmt}")
    ms.save_checkpoint(net, path, append_dict=extra, crc_check=crc, format=fmt)
    want = {k: v for k, v in ms.load_checkpoint(path, format=fmt).items()}
    assert set(want) >= {"0.weight", "2.bias", "epoch"}
    raised = fuzz([path], lambda: ms.load_checkpoint(path, crc_check=crc, format=fmt), ValueError, 150, seed=1,
                  check=_said_once)
    assert raised > 75  # most damage is detected (the rest changes values, which only a CRC can catch)


def _said_once(msg, path):
    """The loader's error is not wrapped in itself: the file named once, "It may be truncated" at most once."""
    assert msg.count(path) == 1 and msg.count("It may be truncated") <= 1, msg


@pytest.mark.parametrize("variant", ["protobuf", "crc", "safetensors"])
def test_checkpoint_error_is_not_wrapped_twice(tmp_path, variant):
    """The decoders' own ValueError passes the load_checkpoint boundary unchanged (it was caught there again and
    wrapped: "Failed to read ... X. Decoding it failed (ValueError: Failed to read ... X. ...). It may be ...")."""
    fmt = "safetensors" if variant == "safetensors" else "ckpt"
    path = str(tmp_path / f"net.{fmt}")
    ms.save_checkpoint(_net(), path, crc_check=variant == "crc", format=fmt)
    data = bytearray(open(path, "rb").read())
    if variant == "protobuf":
        data = data[:len(data) // 2] + b"\xff\xff\xff"
    elif variant == "crc":
        data[20] ^= 0xFF
    elif variant == "safetensors":
        data[8:16] = b"{notjson"
    with open(path, "wb") as f:
        f.write(data)
    with pytest.raises(ValueError) as info:
        ms.load_checkpoint(path, crc_check=variant == "crc", format=fmt)
    msg = str(info.value)
    assert msg.count(path) == 1, msg
    assert "Decoding it failed (ValueError" not in msg, msg
    if variant != "crc":
        assert msg.count("It may be truncated") == 1, msg


# -------------------------------------------------------------------------------------------------- MindRecord
def _mindrecord(tmp_path):
    path = str(tmp_path / "data.mindrecord")
    w = FileWriter(path, overwrite=True)
    w.set_header_size(1 << 14)
    w.set_page_size(1 << 15)
    w.add_schema(mh.SCHEMA, "fuzzed")
    w.add_index(["label", "name"])
    w.write_raw_data([mh.fixture_row(i) for i in range(4)])
    w.commit()
    return path


def _read_all(path):
    r = FileReader(path)
    try:
        return list(r.get_next())
    finally:
        r.close()


def test_damaged_mindrecord_files_raise_runtime_error(tmp_path):
    path = _mindrecord(tmp_path)
    assert len(_read_all(path)) == 4
    raised = fuzz([path, path + ".db"], lambda: _read_all(path), RuntimeError, 300, seed=2)
    assert raised > 50


def test_damaged_mindrecord_files_through_minddataset(tmp_path):
    from kiln.dataset import MindDataset
    path = _mindrecord(tmp_path)

    def load():
        return [row for row in MindDataset(path, shuffle=False).create_tuple_iterator(output_numpy=True)]

    assert len(load()) == 4
    fuzz([path, path + ".db"], load, RuntimeError, 120, seed=3)


def test_damaged_mindrecord_files_refuse_append(tmp_path):
    from kiln.mindrecord import MRMOpenForAppendError
    path = _mindrecord(tmp_path)

    fuzz([path, path + ".db"], lambda: _append_one(path), MRMOpenForAppendError, 120, seed=4)
    # header values of the wrong type, in valid JSON
    data = bytearray(open(path, "rb").read())
    n = struct.unpack_from("<Q", data)[0]
    header = json.loads(data[8:8 + n])
    for key, bad in (("compression_size", "many"), ("index_fields", "label")):
        text = json.dumps(dict(header, **{key: bad})).encode()
        damaged = data[:]
        damaged[:8 + len(text)] = struct.pack("<Q", len(text)) + text
        with open(path, "wb") as fh:
            fh.write(damaged)
        with pytest.raises(MRMOpenForAppendError, match="data.mindrecord"):
            _append_one(path)


def _append_one(path):
    """Opens the data set for append and closes it again without writing."""
    from kiln.mindrecord import filewriter
    w = FileWriter.open_for_append(path)
    filewriter._close_all(w._shards)


def _three_rows(tmp_path):
    p = str(tmp_path / "s.mindrecord")
    w = FileWriter(p, shard_num=1, overwrite=True)
    w.add_schema({"label": {"type": "int32"}}, "s")
    w.add_index(["label"])
    w.write_raw_data([{"label": i} for i in range(3)])
    w.commit()
    return p


def _rename_index_column(db):
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE INDEXES RENAME COLUMN label_0 TO labelX_0")
    con.commit()
    con.close()


def test_append_to_an_index_that_does_not_match_the_schema_is_refused(tmp_path):
    """The tester's case: a .db whose index column was renamed passed open_for_append, then write_raw_data raised
    a raw sqlite3.OperationalError that did not name the file."""
    from kiln.mindrecord import MRMOpenForAppendError
    p = _three_rows(tmp_path)
    _rename_index_column(p + ".db")
    with pytest.raises(MRMOpenForAppendError, match=r"s\.mindrecord\.db does not match the schema"):
        FileWriter.open_for_append(p)
    assert [r["label"] for r in _read_all(p)] == [0, 1, 2]  # the existing rows stay readable


def test_sqlite_errors_while_writing_name_the_index_file(tmp_path):
    """The index changed under an open writer: every sqlite3.Error of the writer becomes its documented error
    naming the .db; the committed rows stay readable."""
    from kiln.mindrecord import MRMWriteDatasetError
    p = _three_rows(tmp_path)
    w = FileWriter.open_for_append(p)
    _rename_index_column(p + ".db")
    with pytest.raises(MRMWriteDatasetError, match=r"s\.mindrecord\.db failed \(OperationalError"):
        w.write_raw_data([{"label": 7}])
    from kiln.mindrecord import filewriter
    filewriter._close_all(w._shards)
    assert [r["label"] for r in _read_all(p)] == [0, 1, 2]


def test_index_with_a_shard_name_that_is_not_utf8(tmp_path):
    path = _mindrecord(tmp_path)
    con = sqlite3.connect(path + ".db")
    con.execute("UPDATE SHARD_NAME SET NAME = CAST(X'64617461ff80' AS TEXT)")
    con.commit()
    con.close()
    with pytest.raises(RuntimeError, match=r"data\.mindrecord\.db cannot be read as its SQLite index"):
        FileReader(path)


# ----------------------------------------------------------------------------------------------- compile cache
def _make_f():
    """The same jit function built afresh (what a new process sees): its cache entry is the same file."""
    net = _net()

    @ms.jit
    def f(x):
        return net(x) * 2

    return f


def _cache_entry(cache_dir):
    f = _make_f()
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    want = f(x).asnumpy()
    (path,) = glob.glob(os.path.join(cache_dir, "**", "*.kgc"), recursive=True)
    return path, want, x


def _reseal(header, graph_bytes):
    hb = json.dumps(header).encode()
    body = _disk_cache._MAGIC + struct.pack("<Q", len(hb)) + hb + graph_bytes
    return body + hashlib.sha256(body).digest()


def test_damaged_graph_bytes_raise_runtime_error(cache_dir):
    path, _, _ = _cache_entry(cache_dir)
    _, graph_bytes = _disk_cache._read(path)
    outcomes = {"ok": 0, "RuntimeError": 0}
    for t in range(1500):
        bad = damage(graph_bytes, random.Random(40000 + t))
        try:
            _core.deserialize_graph(bad)
            outcomes["ok"] += 1
        except RuntimeError as e:
            assert str(e).startswith("Kiln graph file: "), str(e)
            outcomes["RuntimeError"] += 1
        except Exception as e:  # noqa: BLE001 (any other type fails the case)
            pytest.fail(f"case {t}: {type(e).__name__}: {e}")
    assert outcomes["RuntimeError"] > 1000, outcomes


def test_graph_strings_that_are_not_utf8_are_refused(cache_dir):
    path, _, _ = _cache_entry(cache_dir)
    _, graph_bytes = _disk_cache._read(path)
    # Every name the graph holds (capture names, op names, the graph's name, locations) with a byte made invalid.
    names = [b"0.weight", b"MatMul", b"test_damaged_files.py"]
    hits = 0
    for name in names:
        at = graph_bytes.find(name)
        if at < 0:
            continue
        hits += 1
        bad = graph_bytes[:at] + b"\xff" + graph_bytes[at + 1:]
        with pytest.raises(RuntimeError, match=r"is not UTF-8 text|unknown op '\\xff"):
            _core.deserialize_graph(bad)
    assert hits >= 2


def test_damaged_cache_entries_are_misses_with_a_warning(cache_dir):
    path, want, x = _cache_entry(cache_dir)
    header, graph_bytes = _disk_cache._read(path)
    good = open(path, "rb").read()
    bad_cases = 0
    for t in range(40):
        r = random.Random(50000 + t)
        bad = _reseal(header, damage(graph_bytes, r)) if t % 2 else damage(good, r)
        with open(path, "wb") as fh:
            fh.write(bad)
        f = _make_f()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = f(x).asnumpy()
        np.testing.assert_array_equal(got, want)
        messages = [str(w.message) for w in caught]
        assert all(w.category is RuntimeWarning for w in caught), messages
        if f.trace_count == 1:  # refused: a miss, compiled again, said so naming the file
            bad_cases += 1
            assert any("damaged cache file" in m and path in m or "ignoring cache file" in m for m in messages), \
                messages
        else:  # harmless damage (e.g. a location string changed): loaded
            assert f.disk_loads == 1
    assert bad_cases > 20


# ------------------------------------------------------------------------------------------------------- MINDIR
def test_damaged_mindir_raises_mindir_error(tmp_path):
    from kiln.train._mindir_load import MindIRError
    net = _net()
    x = Tensor(np.ones((1, 3), np.float32))
    ms.export(net, x, file_name=str(tmp_path / "net"), file_format="MINDIR")
    path = str(tmp_path / "net.mindir")

    def load():
        nn.GraphCell(ms.load(path))(x)

    raised = fuzz([path], load, MindIRError, 150, seed=6)
    assert raised > 75


# ---------------------------------------------------------------------------------------------- dataset files
def _rows(dataset):
    return list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1))


def test_damaged_mnist_files_raise_runtime_error(tmp_path):
    from kiln.dataset import MnistDataset
    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 3, 28, 28) + images.tobytes())
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 3) + bytes([1, 2, 3]))
    files = [str(tmp_path / "train-images-idx3-ubyte"), str(tmp_path / "train-labels-idx1-ubyte")]

    def load():
        return _rows(MnistDataset(str(tmp_path), usage="train", shuffle=False))

    assert len(load()) == 3
    fuzz(files, load, RuntimeError, 100, seed=7)
    # dims whose product does not fit int64 (it used to wrap around to 0): the same RuntimeError
    (tmp_path / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 2**31, 2**31, 4))  # 2**64
    with pytest.raises(RuntimeError, match="train-images-idx3-ubyte holds 0 data bytes"):
        load()


def test_damaged_csv_files_raise_value_error_naming_the_line(tmp_path):
    from kiln.dataset import CSVDataset
    path = tmp_path / "a.csv"
    path.write_text("a,b,name\n1,2.5,héllo\n3,4.5,wörld\n", encoding="utf-8")

    def load():
        return _rows(CSVDataset([str(path)], column_defaults=[0, 0.0, ""], shuffle=False))

    assert len(load()) == 2
    fuzz([str(path)], load, (ValueError, RuntimeError), 150, seed=8)
    path.write_bytes(b"a,b,name\n1,2.5,ok\n3,4.5,w\xf6rld\n")  # Latin-1, not UTF-8
    with pytest.raises(ValueError, match=r"a\.csv line 3 is not UTF-8 text \(byte 25: b'\\xf6'\)") as e:
        load()
    assert type(e.value) is ValueError


def test_damaged_tfrecord_records_and_schema_files(tmp_path):
    from kiln.dataset import Schema, TFRecordDataset
    import test_tfrecord_dataset as tf
    path = tmp_path / "a.tfrecord"
    rows = tf._rows(0, 4)
    path.write_bytes(tf._records(rows))

    def load():
        return _rows(TFRecordDataset(str(path), shuffle=False))

    assert len(load()) == 4
    fuzz([str(path)], load, RuntimeError, 100, seed=9)  # the framing and its CRCs
    for t in range(100):  # the Example messages themselves, under valid CRCs
        damaged = list(rows)
        damaged[t % 4] = damage(rows[t % 4], random.Random(90000 + t))
        path.write_bytes(tf._records(damaged))
        try:
            load()
        except RuntimeError as e:
            assert str(path) in str(e), str(e)
    schema = tmp_path / "schema.json"
    good = json.dumps({"columns": [{"name": "label", "type": "int64", "shape": [1]}]}).encode()
    schema.write_bytes(good)
    assert Schema(str(schema)).columns[0]["name"] == "label"
    fuzz([str(schema)], lambda: Schema(str(schema)), ValueError, 100, seed=10)
