"""kiln.mindrecord: the format (MessagePack rows, integer compression, pages, header, index), FileWriter, FileReader,
files written by real MindSpore 2.10 (tests/python/data/mindrecord_ms210) and bad inputs."""
import json
import os
import shutil
import sqlite3
import struct

import numpy as np
import pytest

from kiln.mindrecord import (FileReader, FileWriter, MRMAddSchemaError, MRMCommitError, MRMDefineIndexError,
                             MRMGetMetaError, MRMInvalidSchemaError, MRMOpenForAppendError, MRMWriteDatasetError,
                             ParamTypeError, ParamValueError)
from kiln.mindrecord import _format, _msgpack
from mindrecord_helpers import FIXTURES, SCHEMA, fixture_row, same, write

FILES = [os.path.join(FIXTURES, f) for f in ("ms210.mindrecord0", "ms210.mindrecord1")]


def _header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def _index_rows(path):
    with sqlite3.connect(path + ".db") as con:
        return con.execute("SELECT * FROM INDEXES ORDER BY ROW_ID").fetchall()


# ---- format pieces --------------------------------------------------------------------------------------------
def test_msgpack_row_bytes_of_mindspore():
    # a raw row MindSpore 2.10 wrote ({"f": float32 1.5, "file_name": "1.jpg", "l": 10**12 + 1, "label": 1})
    data = bytes.fromhex("84a166ca3fc00000a966696c655f6e616d65a5312e6a7067a16ccf000000e8d4a51001a56c6162656c01")
    assert _msgpack.unpackb(data) == {"f": 1.5, "file_name": "1.jpg", "l": 10**12 + 1, "label": 1}
    assert _msgpack.packb(_msgpack.unpackb(data)) == data
    assert _msgpack.packb({"id": 0}) == bytes.fromhex("81a26964" "00")  # MindSpore's row of a blob-only schema


@pytest.mark.parametrize("value,encoded", [
    (0, "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"), (65536, "ce00010000"),
    (2**32, "cf0000000100000000"), (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-129, "d1ff7f"),
    (-32769, "d2ffff7fff"), (-2**31 - 1, "d3ffffffff7fffffff"), (1.5, "ca3fc00000"),
    (0.1, "cb3fb999999999999a"), (float("inf"), "cb7ff0000000000000"), ("é", "a2c3a9"),
    ("x" * 32, "d920" + "78" * 32), (b"\x01", "c40101"), (True, "c3"), (None, "c0")])
def test_msgpack_encodings_follow_nlohmann(value, encoded):
    assert _msgpack.packb(value).hex() == encoded
    back = _msgpack.unpackb(bytes.fromhex(encoded))
    assert back == value and type(back) is type(value)


def test_msgpack_rejects_bad_data():
    with pytest.raises(ValueError, match="ends at byte"):
        _msgpack.unpackb(bytes.fromhex("a5616263"))
    with pytest.raises(ValueError, match="left after"):
        _msgpack.unpackb(b"\x01\x02")
    with pytest.raises(ValueError, match="unsupported type byte 0xd4"):
        _msgpack.unpackb(b"\xd4\x00\x00")
    with pytest.raises(TypeError, match="set"):
        _msgpack.packb({1, 2})


def test_integer_compression_matches_mindspore_bytes():
    # int32 [1, 1] as MindSpore 2.10 stored it: count 2 (u32 BE), bitmap 0b0000_0000, two 1-byte values
    assert _format.compress_ints(np.array([1, 1], np.int32)) == bytes.fromhex("00000002" "00" "0101")
    values = np.array([0, -1, 127, -128, 128, -129, 32767, -32768, 32768, 2**31 - 1, -2**31, 2**31, -2**63,
                       2**63 - 1], np.int64)
    packed = _format.compress_ints(values)
    # widths 1,1,1,1,2,2,2,2,4,4,4,8,8,8 -> bitmap pairs 00 00 00 00 | 01 01 01 01 | 10 10 10 11 | 11 11
    assert packed[:8] == struct.pack(">I", 14) + bytes([0b00000000, 0b01010101, 0b10101011, 0b11110000])
    assert len(packed) == 8 + 4 * 1 + 4 * 2 + 3 * 4 + 3 * 8
    assert same(_format.decompress_ints(packed, np.dtype("int64"), "t"), values)
    assert same(_format.decompress_ints(_format.compress_ints(np.zeros(0, np.int32)), np.dtype("int32"), "t"),
                np.zeros(0, np.int32))
    with pytest.raises(RuntimeError, match="bitmap describes"):
        _format.decompress_ints(packed[:-1], np.dtype("int64"), "row 3")


# ---- files written by MindSpore 2.10 --------------------------------------------------------------------------
def test_filereader_reads_mindspore_files_exactly():
    expected = np.load(os.path.join(FIXTURES, "ms210_expected.npz"))
    reader = FileReader(FILES)
    assert reader.len() == 5
    assert reader.schema() == SCHEMA
    rows = list(reader.get_next())
    reader.close()
    assert len(rows) == 5
    for r, item in enumerate(rows):
        keys = [k.split("/")[2] for k in expected.files if k.startswith(f"__reader__/{r}/")]
        assert list(item) == keys  # scalar fields sorted, then blob fields, as MindSpore
        for c, v in item.items():
            want = expected[f"__reader__/{r}/{c}"]
            if isinstance(v, bytes):
                assert v == want.tobytes()
            elif isinstance(v, np.ndarray):
                assert same(v, want)
            else:  # MindSpore gives int 0 for a stored float 0.0; Kiln gives the schema's Python type
                assert v == want.item() and type(v) is {"i": int, "f": float, "U": str}[want.dtype.kind] or (
                    isinstance(v, float) and want.dtype.kind == "i")
    assert [FileReader([f]).len() for f in FILES] == list(expected["__sizes__"])


def test_filereader_one_file_name_reads_every_shard_and_columns():
    reader = FileReader(FILES[1], columns=["mat", "label"])  # the header lists both shards
    rows = list(reader.get_next())
    assert len(rows) == 5 and all(list(r) == ["label", "mat"] for r in rows)
    assert sorted(r["label"] for r in rows) == [-3, -2, -1, 0, 1]
    for r in rows:
        assert same(r["mat"], fixture_row(r["label"] + 3)["mat"])
    reader.close()
    reader.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        next(reader.get_next())


def test_filewriter_writes_mindspore_bytes(tmp_path):
    path = tmp_path / "ms210_single.mindrecord"
    write(path, SCHEMA, [[fixture_row(i) for i in range(3)], [fixture_row(i) for i in range(3, 5)]],
          page_size=1 << 15, header_size=1 << 14, index=["label", "name"], desc="kiln fixture")
    ref = os.path.join(FIXTURES, "ms210_single.mindrecord")
    with open(path, "rb") as a, open(ref, "rb") as b:
        assert a.read() == b.read()
    assert _index_rows(str(path)) == _index_rows(ref)
    with sqlite3.connect(str(path) + ".db") as con:
        assert con.execute("SELECT NAME FROM SHARD_NAME").fetchall() == [("ms210_single.mindrecord",)]


# ---- round trips ----------------------------------------------------------------------------------------------
ALL_TYPES = {"i32": {"type": "int32"}, "i64": {"type": "int64"}, "f32": {"type": "float32"},
             "f64": {"type": "float64"}, "s": {"type": "string"}, "b": {"type": "bytes"},
             "a32": {"type": "int32", "shape": [-1]}, "a64": {"type": "int64", "shape": [2, -1]},
             "af32": {"type": "float32", "shape": [3]}, "af64": {"type": "float64", "shape": [-1, 2, 1]}}


def _all_types_row(i):
    rng = np.random.default_rng(i)
    return {"i32": -2**31 + i if i % 2 else 2**31 - 1 - i, "i64": -2**63 + i if i % 2 else 2**63 - 1 - i,
            "f32": float(np.float32(1 / (i + 3))), "f64": -1e300 / (i + 1), "s": "日本" * i, "b": bytes(i * 3),
            "a32": rng.integers(-2**31, 2**31, i + 1).astype(np.int32),
            "a64": rng.integers(-2**63, 2**63 - 1, 2 * (i + 1), dtype=np.int64).reshape(2, -1),
            "af32": rng.standard_normal(3).astype(np.float32), "af64": rng.standard_normal((i + 1, 2, 1))}


def test_round_trip_every_type_and_shape(tmp_path):
    rows = [_all_types_row(i) for i in range(7)]
    write(tmp_path / "all.mr", ALL_TYPES, [rows[:3], rows[3:]])
    got = list(FileReader(str(tmp_path / "all.mr")).get_next())
    assert len(got) == 7
    for want, item in zip(rows, got):
        assert list(item) == ["f32", "f64", "i32", "i64", "s", "a32", "a64", "af32", "af64", "b"]
        for k in ("i32", "i64", "s", "b", "f64"):
            assert item[k] == want[k] and type(item[k]) is type(want[k])
        assert item["f32"] == want["f32"]
        for k in ("a32", "a64", "af32", "af64"):
            assert same(item[k], want[k])


def test_many_pages_and_row_groups_round_trip(tmp_path):
    # 32 KB pages and rows of ~6 KB blob / ~3 KB raw: several blob pages, raw pages holding several row groups,
    # and a raw group moved to a new raw page (MindSpore's ShiftRawPage) by the small third call
    schema = {"b": {"type": "bytes"}, "s": {"type": "string"}, "i": {"type": "int64"}}
    mk = lambda i, nb: {"b": bytes([i % 256]) * nb, "s": chr(65 + i % 26) * 5000, "i": i}
    calls = [[mk(i, 10000) for i in range(3)], [mk(i, 10000) for i in range(3, 6)], [mk(6, 100)],
             [mk(i, 100) for i in range(7, 12)]]
    write(tmp_path / "pages.mr", schema, calls, page_size=1 << 15)
    pages = _header(tmp_path / "pages.mr")["page"]
    assert [(p["page_type"], p["page_type_id"], p["page_size"]) for p in pages] == [
        ("BLOB_DATA", 0, 30024), ("RAW_DATA", 0, 15051), ("BLOB_DATA", 1, 30348), ("RAW_DATA", 2, 30102),
        ("BLOB_DATA", 2, 324), ("RAW_DATA", 4, 15051)]  # the layout MindSpore 2.10 writes for these calls
    assert pages[3]["row_group_ids"] == [{"id": 1, "offset": 0}]
    rows = list(FileReader(str(tmp_path / "pages.mr")).get_next())
    assert [r["i"] for r in rows] == list(range(12))
    assert all(r["b"] == mk(r["i"], len(r["b"]))["b"] and r["s"] == mk(r["i"], 0)["s"] for r in rows)
    assert [len(r["b"]) for r in rows] == [10000] * 6 + [100] * 6


def test_shards_split_each_call_evenly(tmp_path):
    schema = {"x": {"type": "int32"}}
    write(tmp_path / "sh.mr", schema, [[{"x": i} for i in range(10)], [{"x": 10}], [{"x": 11}], [{"x": 12}]],
          shard_num=3)
    names = ["sh.mr0", "sh.mr1", "sh.mr2"]
    assert sorted(os.listdir(tmp_path)) == sorted(names + [n + ".db" for n in names])
    per = [[r["x"] for r in FileReader([str(tmp_path / n)]).get_next()] for n in names]
    # 10 rows: runs of 3, 3, 3 with the extra row going to shard 0; single rows then go to shards 1, 2, 0
    assert per == [[0, 1, 2, 3, 12], [4, 5, 6, 10], [7, 8, 9, 11]]
    for k, n in enumerate(names):
        h = _header(tmp_path / n)
        assert h["shard_id"] == k and h["shard_addresses"] == names
    assert [r["x"] for r in FileReader(str(tmp_path / "sh.mr2")).get_next()] == sum(per, [])


def test_add_index_and_default_index_fields(tmp_path):
    write(tmp_path / "ix.mr", ALL_TYPES, [[_all_types_row(i) for i in range(3)]], index=["s", "i64"])
    h = _header(tmp_path / "ix.mr")
    assert h["index_fields"] == [{"index_field": "s", "schema_id": 0}, {"index_field": "i64", "schema_id": 0}]
    with sqlite3.connect(str(tmp_path / "ix.mr.db")) as con:
        assert [r[8:] for r in con.execute("SELECT * FROM INDEXES ORDER BY ROW_ID")] == [
            (0, _all_types_row(i)["s"], 0, _all_types_row(i)["i64"]) for i in range(3)]
    write(tmp_path / "dflt.mr", ALL_TYPES, [[_all_types_row(1)]])
    assert [f["index_field"] for f in _header(tmp_path / "dflt.mr")["index_fields"]] == ["f32", "f64", "i32", "i64",
                                                                                           "s"]
    write(tmp_path / "blob.mr", {"a": {"type": "int32", "shape": [-1]}}, [[{"a": np.arange(3, dtype=np.int32)}]])
    assert _header(tmp_path / "blob.mr")["index_fields"] is None


def test_open_for_append_and_empty_files(tmp_path):
    schema = {"x": {"type": "int64"}, "v": {"type": "float32", "shape": [-1]}}
    mk = lambda i: {"x": i, "v": np.full(i % 4, i, np.float32)}
    write(tmp_path / "ap.mr", schema, [[mk(i) for i in range(5)]], shard_num=2)
    w = FileWriter.open_for_append(str(tmp_path / "ap.mr1"))
    w.write_raw_data([mk(i) for i in range(5, 9)])
    w.commit()
    rows = list(FileReader(str(tmp_path / "ap.mr0")).get_next())
    assert sorted(r["x"] for r in rows) == list(range(9))
    assert all(same(r["v"], mk(r["x"])["v"]) for r in rows)
    write(tmp_path / "empty.mr", schema, [])
    assert _header(tmp_path / "empty.mr")["page"] is None
    assert FileReader(str(tmp_path / "empty.mr")).len() == 0
    w = FileWriter.open_for_append(str(tmp_path / "empty.mr"))
    w.write_raw_data([mk(3)])
    w.commit()
    assert [r["x"] for r in FileReader(str(tmp_path / "empty.mr")).get_next()] == [3]


# ---- bad input --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schema,message", [
    ({}, "Schema content is empty."), ([1], "Schema content should be dict."),
    ({"a-b": {"type": "int32"}}, "Field 'a-b' should be composed of"),
    ({"a": {"type": "int8"}}, "Field 'a' contain illegal attribute 'int8'."),
    ({"a": {"type": "string", "shape": [2]}}, "Field 'a' contain illegal attribute 'string'."),
    ({"a": {"type": "int32", "shape": 2}}, "Field 'a' contain illegal attribute '2'."),
    ({"a": {"type": "int32", "shape": [-1, -1]}}, "at most one -1"),
    ({"a": {"type": "int32", "foo": 2}}, "contains illegal attributes."),
    ({"a": "int32"}, "Field 'a' should be dict.")])
def test_bad_schemas(tmp_path, schema, message):
    w = FileWriter(str(tmp_path / "s.mr"))
    with pytest.raises(MRMInvalidSchemaError, match="Schema format is error. Detail: ") as e:
        w.add_schema(schema)
    assert message in str(e.value) and str(e.value).startswith("[MRMInvalidSchemaError]: ")


def test_writer_argument_errors(tmp_path):
    for args, msg in [((5,), "File path: 5 is not string."), (("",), "not allowed None or empty"),
                      (("a/",), "can not end with '/'"), (("a|b",), "not allowed"),
                      (("x", 0), "should between 1 and 1000"), (("x", "2"), "shard_num's type is not int"),
                      (("x", 1, 1), "overwrite's type is not bool")]:
        with pytest.raises(ParamValueError, match=msg):
            FileWriter(*args)
    w = FileWriter(str(tmp_path / "w.mr"))
    with pytest.raises(MRMGetMetaError):
        w.add_index(["a"])
    with pytest.raises(MRMWriteDatasetError, match="schema is not found"):
        w.write_raw_data([{"a": 1}])
    w.add_schema({"a": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}})
    with pytest.raises(MRMAddSchemaError):
        w.add_schema({"a": {"type": "int32"}})
    with pytest.raises(TypeError, match="desc must be a str"):
        FileWriter(str(tmp_path / "w2.mr")).add_schema({"a": {"type": "int32"}}, 5)
    with pytest.raises(MRMDefineIndexError, match="v since it's not primitive type"):
        w.add_index(["v"])
    with pytest.raises(ParamTypeError, match="'index_fields' expect list type"):
        w.add_index("a")
    with pytest.raises(ParamTypeError, match="'index field' expect str type"):
        w.add_index([5])
    with pytest.raises(ValueError, match="zz can not found in schema"):
        w.add_index(["zz"])
    for setter, bad in [(w.set_page_size, 100), (w.set_page_size, (1 << 15) + 2), (w.set_header_size, 1 << 30)]:
        with pytest.raises(RuntimeError, match="Invalid data, (page|header) size"):
            setter(bad)
    with pytest.raises(TypeError, match="must be an int"):
        w.set_page_size(1.5)
    with pytest.raises(ParamTypeError, match="'raw_data' expect list type"):
        w.write_raw_data({"a": 1})
    with pytest.raises(ParamTypeError, match="'raw_data item' expect dict type"):
        w.write_raw_data([1])
    with pytest.raises(TypeError, match="parallel_writer"):
        w.write_raw_data([], parallel_writer=1)


def test_rows_not_matching_the_schema_are_dropped_with_a_warning(tmp_path):
    w = FileWriter(str(tmp_path / "d.mr"))
    w.add_schema({"a": {"type": "int32"}, "v": {"type": "float32", "shape": [2, 2]}, "s": {"type": "string"}})
    good = {"a": 1, "v": np.zeros((2, 2), np.float32), "s": "ok"}
    bad = [({"a": 1, "s": "x"}, "there is not field: 'v'"),
           (dict(good, a="x"), "data type: 'str' for field: 'a' (int32)"),
           (dict(good, a=1.5), "data type: 'float' for field: 'a' (int32)"), (dict(good, a=True), "'bool'"),
           (dict(good, a=np.int64(3)), "data type: 'int64' for field: 'a' (int32)"),
           (dict(good, a=2**40), "value: 1099511627776 is out of range"),
           (dict(good, v=np.zeros((2, 2))), "data type: 'float64' for field: 'v' (float32)"),
           (dict(good, v=np.zeros(3, np.float32)), "data shape: '(3,)' for field: 'v'"),
           (dict(good, v=5.0), "needs a numpy.ndarray"), (dict(good, s="\ud800"), "not a valid UTF-8")]
    for row, msg in bad:
        with pytest.warns(UserWarning, match="0 th data is wrong") as rec:
            w.write_raw_data([row, dict(good, a=7)])
        assert msg in str(rec[0].message)
    with pytest.raises(RuntimeError, match="There is no valid data"):
        with pytest.warns(UserWarning):
            w.write_raw_data([{"a": 1}])
    w.write_raw_data([dict(good, a=np.int32(8), v=np.ones(4, np.float32))])  # reshaped to [2, 2], as MindSpore
    w.commit()
    rows = list(FileReader(str(tmp_path / "d.mr")).get_next())
    assert [r["a"] for r in rows] == [7] * len(bad) + [8]
    assert same(rows[-1]["v"], np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="Not allowed to call `write_raw_data` on flushed"):
        w.write_raw_data([good])


def test_existing_files_page_and_header_limits(tmp_path):
    schema = {"b": {"type": "bytes"}}
    write(tmp_path / "e.mr", schema, [[{"b": b"1"}]])
    w = FileWriter(str(tmp_path / "e.mr"))
    w.add_schema(schema)
    with pytest.raises(RuntimeError, match="mindrecord files already exist"):
        w.write_raw_data([{"b": b"2"}])
    w = FileWriter(str(tmp_path / "big.mr"), overwrite=True)
    w.set_page_size(1 << 15)
    w.add_schema(schema)
    with pytest.raises(MRMWriteDatasetError, match="Page size is too small to save a row"):
        w.write_raw_data([{"b": bytes(1 << 15)}])
    w = FileWriter(str(tmp_path / "hdr.mr"), overwrite=True)
    w.set_header_size(1 << 14)
    w.set_page_size(1 << 15)
    w.add_schema(schema)
    w.write_raw_data([{"b": bytes(17000)}] * 100)  # a 32 KB page holds one row: 100 pages outgrow a 16 KB header
    with pytest.raises(MRMCommitError, match="set_header_size"):
        w.commit()
    with pytest.raises(MRMOpenForAppendError, match="could not open successfully for append"):
        FileWriter.open_for_append(str(tmp_path / "missing.mr"))


def test_reader_errors_missing_renamed_truncated_corrupt(tmp_path):
    write(tmp_path / "r.mr", {"x": {"type": "int64"}, "v": {"type": "int32", "shape": [-1]}},
          [[{"x": i, "v": np.arange(i, dtype=np.int32)} for i in range(1, 4)]], page_size=1 << 15,
          header_size=1 << 14)
    with pytest.raises(ValueError, match="does not exist or permission denied"):
        FileReader(str(tmp_path / "nope.mr"))
    shutil.copy(tmp_path / "r.mr", tmp_path / "nodb.mr")
    with pytest.raises(RuntimeError, match=r"nodb.mr.db is not exists"):
        FileReader([str(tmp_path / "nodb.mr")])
    shutil.copy(tmp_path / "r.mr.db", tmp_path / "nodb.mr.db")  # a renamed pair: the index names r.mr
    with pytest.raises(RuntimeError, match="can not match. Please do not rename"):
        FileReader([str(tmp_path / "nodb.mr")])
    data = (tmp_path / "r.mr").read_bytes()
    (tmp_path / "r.mr").write_bytes(data[:-5])
    with pytest.raises(RuntimeError, match="r.mr is truncated"):
        FileReader([str(tmp_path / "r.mr")])
    (tmp_path / "r.mr").write_bytes(data[:5])
    with pytest.raises(RuntimeError, match="smaller than the lower limit: 8"):
        FileReader([str(tmp_path / "r.mr")])
    (tmp_path / "r.mr").write_bytes(data[:8] + b"[" + data[9:])
    with pytest.raises(RuntimeError, match="is not MindRecord's header JSON"):
        FileReader([str(tmp_path / "r.mr")])
    (tmp_path / "r.mr").write_bytes(struct.pack("<Q", 10**9) + data[8:])
    with pytest.raises(RuntimeError, match="goes past its"):
        FileReader([str(tmp_path / "r.mr")])
    header = _header_bytes_end(data)
    corrupt = bytearray(data)
    corrupt[-3:] = b"\xff\xff\xff"  # the last raw row's MessagePack
    (tmp_path / "r.mr").write_bytes(bytes(corrupt))
    reader = FileReader([str(tmp_path / "r.mr")])
    with pytest.raises(RuntimeError, match="r.mr row 2: its raw fields are not readable MessagePack"):
        list(reader.get_next())
    assert header > 8
    with pytest.raises(ParamValueError, match="num_consumer"):
        FileReader(str(tmp_path / "nodb.mr"), num_consumer=0)
    with pytest.raises(ParamTypeError, match="'columns' expect list type"):
        FileReader(str(tmp_path / "nodb.mr"), columns="x")


def _rewrite_header(path, change):
    data = bytearray(open(path, "rb").read())
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    change(header)
    text = json.dumps(header).encode()
    data[:8 + len(text)] = struct.pack("<Q", len(text)) + text  # the header area has room (16 KB)
    open(path, "wb").write(bytes(data))


def test_headers_and_indexes_that_lie_are_refused(tmp_path):
    kw = dict(page_size=1 << 15, header_size=1 << 14)
    write(tmp_path / "h.mr", {"x": {"type": "int64"}}, [[{"x": 1}, {"x": 2}]], **kw)
    _rewrite_header(tmp_path / "h.mr", lambda h: h.update(shard_addresses=["../elsewhere.mr"]))
    with pytest.raises(RuntimeError, match="is not MindRecord's header JSON"):
        FileReader(str(tmp_path / "h.mr"))
    with pytest.raises(MRMOpenForAppendError, match="header JSON"):
        FileWriter.open_for_append(str(tmp_path / "h.mr"))
    write(tmp_path / "i.mr", {"x": {"type": "int64"}}, [[{"x": 1}, {"x": 2}]], **kw)
    with sqlite3.connect(str(tmp_path / "i.mr.db")) as con:
        con.execute("UPDATE INDEXES SET PAGE_ID_RAW=-1 WHERE ROW_ID=1")
    with pytest.raises(RuntimeError, match="i.mr is truncated or its index is corrupt"):
        FileReader(str(tmp_path / "i.mr"))
    write(tmp_path / "s.mr", {"x": {"type": "int64"}, "v": {"type": "int32", "shape": [2]}},
          [[{"x": 1, "v": np.arange(2, dtype=np.int32)}]], **kw)
    _rewrite_header(tmp_path / "s.mr", lambda h: h["schema"][0]["schema"]["v"].update(shape=[3]))
    with pytest.raises(RuntimeError, match=r"field 'v' holds 2 values, which do not fit its schema shape \[3\]"):
        list(FileReader(str(tmp_path / "s.mr")).get_next())


def _header_bytes_end(data):
    return 8 + struct.unpack("<Q", data[:8])[0]


def test_files_of_different_schemas_are_refused(tmp_path):
    write(tmp_path / "a.mr", {"x": {"type": "int64"}}, [[{"x": 1}]])
    write(tmp_path / "b.mr", {"x": {"type": "int32"}}, [[{"x": 1}]])
    with pytest.raises(RuntimeError, match="is different from others"):
        FileReader([str(tmp_path / "a.mr"), str(tmp_path / "b.mr")])
    with pytest.raises(ValueError, match="can not found in schema"):
        FileReader(str(tmp_path / "a.mr"), columns=["y"])


def test_float32_field_refuses_values_it_cannot_hold_and_commit_twice_is_an_error(tmp_path):
    w = FileWriter(str(tmp_path / "f.mr"))
    w.add_schema({"f": {"type": "float32"}, "d": {"type": "float64"}})
    with pytest.warns(UserWarning, match="field: f type : float32 value: 1e\\+300 is out of range"):
        w.write_raw_data([{"f": 1e300, "d": 1.0}, {"f": 2.5, "d": 1e300}])
    w.write_raw_data([{"f": float("inf"), "d": float("nan")}])  # inf fits a float32 field
    w.commit()
    with pytest.raises(RuntimeError, match="call `commit` twice"):
        w.commit()
    rows = list(FileReader(str(tmp_path / "f.mr")).get_next())
    assert [r["f"] for r in rows] == [2.5, float("inf")] and rows[0]["d"] == 1e300 and np.isnan(rows[1]["d"])
