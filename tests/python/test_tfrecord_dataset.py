"""dataset.TFRecordDataset and dataset.Schema: TFRecord files written here byte by byte (the record framing with
masked CRC-32C, and tf.train.Example encoded by hand from the .proto wire format, independent of the reader's
protobuf descriptor), read back with MindSpore 2.10's column rules, schemas, sharding, compression and errors."""
import gzip
import json
import struct
import zlib

import google_crc32c
import numpy as np
import pytest

import kiln as ms
from kiln import dataset as ds


def _masked(data):
    c = google_crc32c.value(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def _ld(field, payload):
    return _varint((field << 3) | 2) + _varint(len(payload)) + payload


def _feature(kind, values):
    if kind == "int":  # Feature.int64_list = 3, Int64List.value packed
        return _ld(3, _ld(1, b"".join(_varint(v & 0xFFFFFFFFFFFFFFFF) for v in values)))
    if kind == "float":  # Feature.float_list = 2
        return _ld(2, _ld(1, struct.pack(f"<{len(values)}f", *values)))
    return _ld(1, b"".join(_ld(1, v) for v in values))  # Feature.bytes_list = 1


def _example(feats):
    return _ld(1, b"".join(_ld(1, _ld(1, k.encode()) + _ld(2, _feature(*v))) for k, v in feats.items()))


def _records(examples):
    out = b""
    for e in examples:
        n = struct.pack("<Q", len(e))
        out += n + struct.pack("<I", _masked(n)) + e + struct.pack("<I", _masked(e))
    return out


def _rows(base, count):
    return [_example({"label": ("int", [base + i]), "vec": ("float", [i * 0.5, -1.0, 2.5]),
                      "img": ("bytes", [bytes([i, 200, 3])]), "ids": ("int", [1, 2, -3])}) for i in range(count)]


@pytest.fixture
def files(tmp_path):
    paths = []
    for name, base, count in (("a", 0, 5), ("b", 10, 3), ("c", 20, 2)):
        p = tmp_path / f"{name}.tfrecord"
        p.write_bytes(_records(_rows(base, count)))
        paths.append(str(p))
    return paths


def _labels(d):
    return [int(r["label"][0]) for r in d.create_dict_iterator(output_numpy=True, num_epochs=1)]


def test_columns_dtypes_and_values(files):
    d = ds.TFRecordDataset(files[0], shuffle=False)
    assert d.get_col_names() == ["ids", "img", "label", "vec"] and d.get_dataset_size() == 5
    rows = list(d.create_dict_iterator(output_numpy=True, num_epochs=1))
    r = rows[3]
    assert r["ids"].dtype == np.int64 and r["ids"].tolist() == [1, 2, -3]
    assert r["img"].dtype == np.uint8 and r["img"].tolist() == [3, 200, 3]
    assert r["label"].dtype == np.int64 and r["label"].tolist() == [3]
    assert r["vec"].dtype == np.float32 and r["vec"].tolist() == [1.5, -1.0, 2.5]
    t = next(iter(d.create_tuple_iterator(num_epochs=1)))
    assert isinstance(t[0], ms.Tensor) and t[0].dtype == ms.int64


def test_schema_casts_reshapes_and_roundtrips(files, tmp_path):
    s = ds.Schema()
    s.add_column("label", de_type=ms.int32, shape=[1])
    s.add_column("vec", de_type="float64", shape=[3, 1])
    assert json.loads(s.to_json()) == {"columns": [{"name": "label", "rank": 1, "shape": [1], "type": "int32"},
                                                   {"name": "vec", "rank": 2, "shape": [3, 1], "type": "float64"}]}
    f = tmp_path / "schema.json"
    f.write_text(s.to_json())
    for schema in (s, str(f), ds.Schema(str(f))):
        d = ds.TFRecordDataset(files[0], schema=schema, shuffle=False)
        assert d.get_col_names() == ["label", "vec"]
        label, vec = next(iter(d.create_tuple_iterator(output_numpy=True, num_epochs=1)))
        assert label.dtype == np.int32 and vec.dtype == np.float64 and vec.shape == (3, 1)
    bad = ds.Schema()
    bad.add_column("vec", de_type=ms.float32, shape=[2])
    with pytest.raises(RuntimeError, match="'vec' of record 0 has 3 values.*shape \\[2\\]"):
        list(ds.TFRecordDataset(files[0], schema=bad, shuffle=False).create_tuple_iterator(num_epochs=1))
    with pytest.raises(ValueError, match="shape must be a list of positive ints"):
        s.add_column("x", ms.int32, shape=[0])


def test_columns_list_num_samples_and_batching(files):
    d = ds.TFRecordDataset(files, columns_list=["vec", "label"], shuffle=False, num_samples=4)
    assert d.get_col_names() == ["vec", "label"] and d.get_dataset_size() == 4
    assert _labels(d) == [0, 1, 2, 3]
    b = ds.TFRecordDataset(files, shuffle=False, columns_list=["label"]).batch(4)
    got = [x[0].reshape(-1).tolist() for x in b.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert got == [[0, 1, 2, 3], [4, 10, 11, 12], [20, 21]]
    with pytest.raises(ValueError, match=r"\['nope'\] are not features.*\['ids', 'img', 'label', 'vec'\]"):
        ds.TFRecordDataset(files, columns_list=["nope"])


def test_shuffle_modes(files):
    ms.dataset.config.set_seed(5)
    every = sorted(_labels(ds.TFRecordDataset(files, shuffle=False)))
    assert every == [0, 1, 2, 3, 4, 10, 11, 12, 20, 21]
    assert sorted(_labels(ds.TFRecordDataset(files))) == every  # GLOBAL: a permutation
    infile = _labels(ds.TFRecordDataset(files, shuffle=ds.Shuffle.INFILE))
    assert [x // 10 for x in infile] == [0] * 5 + [1] * 3 + [2] * 2 and sorted(infile) == every
    by_files = _labels(ds.TFRecordDataset(files, shuffle=ds.Shuffle.FILES))
    blocks = [x // 10 for x in by_files]  # each file's rows together and in order, the files in some order
    assert sorted(by_files) == every and sum(a != b for a, b in zip(blocks, blocks[1:])) == 2
    assert all(x < y for x, y, a, b in zip(by_files, by_files[1:], blocks, blocks[1:]) if a == b)


@pytest.mark.parametrize("equal, shards, want", [
    (False, 2, [[0, 1, 2, 3, 4, 20, 21], [10, 11, 12]]),  # whole files, round robin (MindSpore 2.10's sets)
    (True, 2, [[0, 1, 2, 3, 4], [10, 11, 12, 20, 21]]),
    (True, 3, [[0, 1, 2, 3], [4, 10, 11, 12], [20, 21, 0, 1]]),  # ceil(10/3) rows each, wrapping around
])
def test_sharding_as_mindspore(files, equal, shards, want):
    for k in range(shards):
        d = ds.TFRecordDataset(files, shuffle=False, num_shards=shards, shard_id=k, shard_equal_rows=equal)
        assert d.get_dataset_size() == len(want[k])
        assert _labels(d) == want[k]


def test_too_few_files_for_file_sharding(files):
    with pytest.raises(ValueError, match="numbers of tfrecord file should not less than num_shards"):
        ds.TFRecordDataset(files[:1], num_shards=2, shard_id=0)


@pytest.mark.parametrize("kind, pack", [("GZIP", gzip.compress), ("ZLIB", zlib.compress)])
def test_compressed_files(tmp_path, kind, pack):
    p = tmp_path / "z.tfrecord"
    p.write_bytes(pack(_records(_rows(0, 4))))
    assert _labels(ds.TFRecordDataset(str(p), shuffle=False, compression_type=kind)) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="not a TFRecord file|CRC"):
        ds.TFRecordDataset(str(p))  # read as uncompressed
    with pytest.raises(ValueError, match="compression_type"):
        ds.TFRecordDataset(str(p), compression_type="LZ4")


def test_corrupted_and_truncated_files(tmp_path):
    good = _records(_rows(0, 3))
    flipped = bytearray(good)
    flipped[20] ^= 0xFF  # inside the first record's data
    p = tmp_path / "bad.tfrecord"
    p.write_bytes(bytes(flipped))
    with pytest.raises(RuntimeError, match="data CRC of the record at byte 0 does not match"):
        ds.TFRecordDataset(str(p))
    p.write_bytes(good[:-3])
    with pytest.raises(RuntimeError, match="truncated"):
        ds.TFRecordDataset(str(p))
    p.write_bytes(b"")
    with pytest.raises(ValueError, match=r"\['label'\] are not features of the records \(they have \[\]\)"):
        ds.TFRecordDataset(str(p), columns_list=["label"])  # an empty file: no records, no features
    with pytest.raises(ValueError, match="does not exist"):
        ds.TFRecordDataset(str(tmp_path / "missing.tfrecord"))
    with pytest.raises(TypeError, match="schema must be a Schema"):
        ds.TFRecordDataset(str(p), schema=3)
