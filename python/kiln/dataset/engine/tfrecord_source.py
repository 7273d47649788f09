"""TFRecordDataset and Schema: rows of TFRecord files holding `tf.train.Example` records, as MindSpore 2.10 reads them.

Format (TensorFlow's, documented at tensorflow.org/tutorials/load_data/tfrecord): a file is a sequence of records
    uint64 length | uint32 masked_crc32c(length) | byte data[length] | uint32 masked_crc32c(data)
(little-endian; masked_crc = ((crc >> 15) | (crc << 17)) + 0xa282ead8 mod 2³²), optionally the whole file GZIP or
ZLIB compressed. CRC-32C comes from Google's `google-crc32c` package and the Example message is parsed by
`protobuf`, from a descriptor built here for the six messages of tensorflow/core/example/{example,feature}.proto
(Example, Features, Feature, BytesList, FloatList, Int64List) — no TensorFlow needed.

Columns (checked against MindSpore 2.10): without a schema, every feature of the first record, sorted by name;
int64_list → int64, float_list → float32, bytes_list → uint8 (the bytes of the first value), each 1-D. A Schema (or
its JSON file) picks the columns, in its order, and casts/reshapes them to its de_type/shape; `columns_list` picks
and orders columns too. Records are indexed once (offsets only) and each row is read from its file when asked for.
Without shuffling, rows come file by file, in file order; MindSpore reads several files at once and interleaves
their rows (an order that depends on its worker count), so only the set of rows, not their order, is the same.
"""
import gzip
import json
import os
import struct
import threading
import zlib

import numpy as np

from ...common import dtype as mstype
from ..samplers import _group_shards
from ._common import column_list
from .file_sources import Shuffle, file_sampler, shuffle_mode
from .sources import MappableSource, _check_source_args

__all__ = ["TFRecordDataset", "Schema"]

_example_cls = None
_example_lock = threading.Lock()


def _example_message():
    """The tf.train.Example message class, built once from a descriptor (protobuf's dynamic message factory)."""
    global _example_cls
    with _example_lock:
        if _example_cls is None:
            from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
            F = descriptor_pb2.FieldDescriptorProto
            fdp = descriptor_pb2.FileDescriptorProto(name="kiln_tf_example.proto", package="kiln_tf", syntax="proto3")

            def msg(name, fields, nested=()):
                m = fdp.message_type.add(name=name)
                for fname, num, ftype, label, tname in fields:
                    f = m.field.add(name=fname, number=num, type=ftype, label=label)
                    if tname:
                        f.type_name = tname
                for n in nested:
                    m.nested_type.add().CopyFrom(n)
                return m

            rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
            msg("BytesList", [("value", 1, F.TYPE_BYTES, rep, None)])
            msg("FloatList", [("value", 1, F.TYPE_FLOAT, rep, None)])
            msg("Int64List", [("value", 1, F.TYPE_INT64, rep, None)])
            feat = msg("Feature", [("bytes_list", 1, F.TYPE_MESSAGE, opt, ".kiln_tf.BytesList"),
                                   ("float_list", 2, F.TYPE_MESSAGE, opt, ".kiln_tf.FloatList"),
                                   ("int64_list", 3, F.TYPE_MESSAGE, opt, ".kiln_tf.Int64List")])
            feat.oneof_decl.add(name="kind")
            for f in feat.field:
                f.oneof_index = 0
            entry = descriptor_pb2.DescriptorProto(name="FeatureEntry", options=descriptor_pb2.MessageOptions(
                map_entry=True))
            entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
            entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt, type_name=".kiln_tf.Feature")
            msg("Features", [("feature", 1, F.TYPE_MESSAGE, rep, ".kiln_tf.Features.FeatureEntry")], [entry])
            msg("Example", [("features", 1, F.TYPE_MESSAGE, opt, ".kiln_tf.Features")])
            pool = descriptor_pool.DescriptorPool()
            pool.Add(fdp)
            _example_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kiln_tf.Example"))
        return _example_cls


def _masked_crc(data):
    import google_crc32c
    c = google_crc32c.value(bytes(data))
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _file_bytes(path, compression):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        if compression == "GZIP":
            return gzip.decompress(raw)
        if compression == "ZLIB":
            return zlib.decompress(raw)
    except (OSError, zlib.error, EOFError) as e:
        raise RuntimeError(f"TFRecordDataset: {path} is not {compression}-compressed data: {e}") from None
    return raw


def _index_records(path, data):
    """(offset, length) of every record's data in `data` (a file's bytes); RuntimeError naming the file and offset
    for a truncated record or a CRC mismatch."""
    out, pos, n = [], 0, len(data)
    while pos < n:
        if pos + 12 > n:
            raise RuntimeError(f"TFRecordDataset: {path} is truncated at byte {pos} (a record header needs 12 bytes, "
                               f"{n - pos} left).")
        (length,) = struct.unpack_from("<Q", data, pos)
        (len_crc,) = struct.unpack_from("<I", data, pos + 8)
        if _masked_crc(data[pos:pos + 8]) != len_crc:
            raise RuntimeError(f"TFRecordDataset: {path}: the length CRC of the record at byte {pos} does not match "
                               "(not a TFRecord file, or corrupted).")
        start, end = pos + 12, pos + 12 + length
        if end + 4 > n:
            raise RuntimeError(f"TFRecordDataset: {path} is truncated: the record at byte {pos} needs {length + 16} "
                               f"bytes, {n - pos} left.")
        (data_crc,) = struct.unpack_from("<I", data, end)
        if _masked_crc(data[start:end]) != data_crc:
            raise RuntimeError(f"TFRecordDataset: {path}: the data CRC of the record at byte {pos} does not match "
                               "(corrupted).")
        out.append((start, length))
        pos = end + 4
    return out


def _feature_array(feature):
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return np.asarray(feature.int64_list.value, np.int64)
    if kind == "float_list":
        return np.asarray(feature.float_list.value, np.float32)
    if kind == "bytes_list":
        values = feature.bytes_list.value
        return np.frombuffer(values[0], np.uint8).copy() if values else np.zeros(0, np.uint8)
    return np.zeros(0, np.float32)


_TYPE_NAMES = {"int8": mstype.int8, "int16": mstype.int16, "int32": mstype.int32, "int64": mstype.int64,
               "uint8": mstype.uint8, "float16": mstype.float16, "float32": mstype.float32,
               "float64": mstype.float64, "bool": mstype.bool_}


def _de_type(value, where):
    if isinstance(value, str):
        if value not in _TYPE_NAMES:
            raise ValueError(f"{where}: de_type {value!r} is not one of {sorted(_TYPE_NAMES)}.")
        return _TYPE_NAMES[value]
    if isinstance(value, mstype.DType):
        return value
    try:
        return mstype.pytype_to_dtype(value)
    except TypeError:
        raise TypeError(f"{where}: de_type must be a mindspore dtype or a type name, but got {value!r}.") from None


class Schema:
    """MindSpore's dataset.Schema: named, typed columns for TFRecordDataset (and a JSON form).

    Args:
        schema_file (str, optional): a JSON file {"columns": [{"name", "type", "shape"?, "rank"?}, ...]} (also
            MindSpore's older {"columns": {name: {"type", "shape"}}} form), or None for an empty schema.

    Raises:
        ValueError: a file that does not exist, or JSON of another layout. TypeError: bad argument types.
    """

    def __init__(self, schema_file=None):
        self.columns = []
        self.dataset_type = ""
        self.num_rows = 0
        if schema_file is not None:
            if not isinstance(schema_file, str) or not os.path.isfile(schema_file):
                raise ValueError(f"Schema: the schema file {schema_file!r} does not exist or permission denied!")
            with open(schema_file, "rb") as f:
                data = f.read()
            try:
                self.from_json(json.loads(data.decode("utf-8")))
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:  # damaged or not a schema
                raise ValueError(f"Schema: the schema file {schema_file} is not a schema (UTF-8 JSON text of "
                                 f"{{\"columns\": [...]}}): {type(e).__name__}: {e}") from None

    def add_column(self, name, de_type, shape=None):
        """Adds a column: `name` (str), `de_type` (a mindspore dtype or its name, e.g. ms.int32 / "int32"), `shape`
        (a list of ints, -1 for an unknown dimension; None: the column's own shape)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"Schema.add_column: name must be a non-empty str, but got {name!r}.")
        dtype = _de_type(de_type, "Schema.add_column")
        if shape is not None:
            if not isinstance(shape, (list, tuple)) or not all(
                    isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1) for d in shape):
                raise ValueError(f"Schema.add_column: shape must be a list of positive ints (or -1), but got "
                                 f"{shape!r}.")
            shape = list(shape)
        self.columns.append({"name": name, "type": mstype.dtype_numpy_name(dtype), "shape": shape})

    def parse_columns(self, columns):
        """Replaces the columns with `columns`: a list of {"name", "type", "shape"?} dicts, or a dict
        {name: {"type", "shape"?}}."""
        if isinstance(columns, dict):
            columns = [dict(v, name=k) for k, v in columns.items()]
        if not isinstance(columns, list):
            raise TypeError(f"Schema.parse_columns: columns must be a list or dict, but got {type(columns).__name__}.")
        self.columns = []
        for c in columns:
            if not isinstance(c, dict) or "name" not in c or "type" not in c:
                raise ValueError(f"Schema.parse_columns: each column needs 'name' and 'type', but got {c!r}.")
            self.add_column(c["name"], c["type"], c.get("shape"))

    def from_json(self, json_obj):
        """Reads {"columns": ..., "datasetType"?, "numRows"?} (the layout to_json writes)."""
        if not isinstance(json_obj, dict) or "columns" not in json_obj:
            raise ValueError("Schema.from_json: expected a dict with a 'columns' entry.")
        self.parse_columns(json_obj["columns"])
        self.dataset_type = json_obj.get("datasetType", "")
        self.num_rows = int(json_obj.get("numRows", 0))

    def to_json(self):
        """The schema as MindSpore's JSON text (columns with name, rank, shape, type)."""
        cols = []
        for c in self.columns:
            d = {"name": c["name"]}
            if c["shape"] is not None:
                d["rank"] = len(c["shape"])
                d["shape"] = c["shape"]
            d["type"] = c["type"]
            cols.append(d)
        out = {"columns": cols}
        if self.dataset_type:
            out["datasetType"] = self.dataset_type
        if self.num_rows:
            out["numRows"] = self.num_rows
        return json.dumps(out, indent=2)

    def __str__(self):
        return self.to_json()


class TFRecordDataset(MappableSource):
    """Rows of TFRecord files of tf.train.Example records (module docstring: format and column rules).

    Args:
        dataset_files (str | list[str]): the files, in this order (a str may be a glob pattern, as MindSpore).
        schema (Schema | str, optional): the columns (a Schema or a JSON schema file).
        columns_list (list[str], optional): the columns to read, in this order.
        num_samples (int, optional): rows per epoch (default all; 0 means all).
        num_parallel_workers (int, optional): accepted.
        shuffle (bool | Shuffle): Shuffle.GLOBAL / True (default): all rows in a new order every epoch;
            Shuffle.FILES: file order only; Shuffle.INFILE: rows within each file; False: in order.
        num_shards, shard_id (int, optional): read one shard of the rows (in data-parallel mode: this process's).
        shard_equal_rows (bool): False (default): each shard reads whole files (file k in shard k % num_shards);
            True: each shard reads ceil(rows / num_shards) consecutive rows (wrapping around), as MindSpore.
        cache: not supported (ValueError when given).
        compression_type (str, optional): None/"" (none), "GZIP" or "ZLIB".

    Raises:
        ValueError: a missing file, no files, a column that the records do not have, a bad compression_type.
        RuntimeError: a truncated or corrupted file (CRC mismatch), a record that is not an Example.
        TypeError: bad argument types.
    """

    def __init__(self, dataset_files, schema=None, columns_list=None, num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, shard_equal_rows=False, cache=None,
                 compression_type=None):
        cls = "TFRecordDataset"
        if isinstance(dataset_files, (str, os.PathLike)):
            import glob
            pattern = os.fspath(dataset_files)
            dataset_files = sorted(glob.glob(pattern)) if any(ch in pattern for ch in "*?[") else [pattern]
        if not isinstance(dataset_files, (list, tuple)) or not dataset_files:
            raise ValueError(f"{cls}: dataset_files must be a str or a non-empty list of files, got "
                             f"{dataset_files!r}.")
        files = [os.fspath(f) for f in dataset_files]
        for f in files:
            if not os.path.isfile(f):
                raise ValueError(f"{cls}: The file {f} does not exist or permission denied!")
        if cache is not None:
            raise ValueError(f"{cls}: a DatasetCache is not supported by Kiln (every source reads its files itself).")
        if not isinstance(shard_equal_rows, bool):
            raise TypeError(f"{cls}: shard_equal_rows must be a bool, got {shard_equal_rows!r}.")
        comp = (compression_type or "").upper() if isinstance(compression_type, (str, type(None))) else None
        if comp not in ("", "GZIP", "ZLIB"):
            raise ValueError(f"{cls}: compression_type must be None, '', 'GZIP' or 'ZLIB', got {compression_type!r}.")
        if isinstance(schema, str):
            schema = Schema(schema)
        if schema is not None and not isinstance(schema, Schema):
            raise TypeError(f"{cls}: schema must be a Schema or a JSON file path, got {type(schema).__name__}.")
        names = column_list(cls, "columns_list", columns_list)
        mode = shuffle_mode(cls, shuffle)
        _check_source_args(cls, num_samples, None, num_shards, shard_id)
        if num_shards is None and shard_id is None:
            num_shards, shard_id = _group_shards() or (None, None)  # data-parallel: this process's shard

        self._files, self._comp = files, comp
        self._records, groups = [], []  # (file index, offset, length)
        self._data = {}  # decompressed files (only for compressed input; plain files are read per row)
        for k, f in enumerate(files):
            data = _file_bytes(f, comp) if comp else np.memmap(f, np.uint8, mode="r") if os.path.getsize(f) else b""
            start = len(self._records)
            self._records += [(k, off, n) for off, n in _index_records(f, memoryview(data).cast("B") if len(data)
                                                                            else b"")]
            groups.append(np.arange(start, len(self._records)))
            if comp:
                self._data[k] = data
        if schema is not None and schema.columns:
            cols = [(c["name"], np.dtype(c["type"]), c["shape"]) for c in schema.columns]
            if names is not None:
                by_name = {c[0]: c for c in cols}
                missing = [n for n in names if n not in by_name]
                if missing:
                    raise ValueError(f"{cls}: columns_list {missing} are not in the schema {list(by_name)}.")
                cols = [by_name[n] for n in names]
        else:
            available = sorted(self._parse(0).features.feature) if self._records else []
            chosen = names if names is not None else available
            missing = [n for n in chosen if n not in available]
            if missing:
                raise ValueError(f"{cls}: column(s) {missing} are not features of the records (they have "
                                 f"{available}).")
            cols = [(n, None, None) for n in chosen]
        self._cols = cols
        if num_shards is not None:
            self._records, groups = self._shard(files, groups, num_shards, shard_id, shard_equal_rows)
        sampler = file_sampler(mode, groups, num_samples)  # the shard is already cut out
        super().__init__(cls, None, num_parallel_workers, None, sampler)
        self.num_shards, self.shard_id = num_shards, shard_id
        self.num_parallel_workers = 1

    def _shard(self, files, groups, num_shards, shard_id, equal_rows):
        """This shard's records and their per-file groups, as MindSpore 2.10 shards TFRecord files: without
        shard_equal_rows whole files, file k to shard k % num_shards (ValueError if there are fewer files than
        shards); with it, ceil(rows / num_shards) consecutive rows of the files read in order, from row
        shard_id·that, wrapping around to the first row (so every shard has the same number of rows)."""
        if not equal_rows:
            if len(files) < num_shards:
                raise ValueError(f"TFRecordDataset: numbers of tfrecord file should not less than num_shards when "
                                 f"shard_equal_rows is false, but got numbers of tfrecord file: {len(files)}, "
                                 f"num_shards: {num_shards}.")
            keep = [g for k, g in enumerate(groups) if k % num_shards == shard_id]
        else:
            total = len(self._records)
            per = -(-total // num_shards)
            rows = np.array([(shard_id * per + j) % total for j in range(per)] if total else [], np.int64)
            keep = [rows]  # one group: the shard's rows in file order
        picked = [self._records[i] for g in keep for i in g]
        out_groups, start = [], 0
        for g in keep:
            out_groups.append(np.arange(start, start + len(g)))
            start += len(g)
        return picked, out_groups

    def _record_bytes(self, i):
        k, off, n = self._records[i]
        if k in self._data:
            return bytes(self._data[k][off:off + n])
        with open(self._files[k], "rb") as f:
            f.seek(off)
            return f.read(n)

    def _parse(self, i):
        ex = _example_message()()
        try:
            ex.ParseFromString(self._record_bytes(i))
        except Exception as e:  # noqa: BLE001 (protobuf's DecodeError: re-raised with the record)
            k = self._records[i][0]
            raise RuntimeError(f"TFRecordDataset: record {i} of {self._files[k]} is not a tf.train.Example: {e}") \
                from None
        return ex

    def get_col_names(self):
        return [c[0] for c in self._cols]

    def _num_rows(self):
        return len(self._records)

    def _read(self, i):
        feats = self._parse(i).features.feature
        row = []
        for name, dtype, shape in self._cols:
            if name not in feats:
                k = self._records[i][0]
                raise RuntimeError(f"TFRecordDataset: record {i} of {self._files[k]} has no feature {name!r}.")
            a = _feature_array(feats[name])
            if dtype is not None and a.dtype != dtype:
                a = a.astype(dtype)
            if shape is not None:
                try:
                    a = a.reshape(shape)
                except ValueError:
                    raise RuntimeError(f"TFRecordDataset: feature {name!r} of record {i} has {a.size} values, which "
                                       f"do not fit the schema shape {shape}.") from None
            row.append(a)
        return tuple(row)
