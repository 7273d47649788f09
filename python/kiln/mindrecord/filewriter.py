"""FileWriter: writes MindRecord files (see Note [MindRecord format] in _format.py) that MindSpore reads."""
import numbers
import math
import os
import re
import sqlite3
import threading
import warnings
import weakref

import numpy as np

from . import _format
from .errors import (MRMAddSchemaError, MRMCommitError, MRMDefineIndexError, MRMGetMetaError,
                     MRMInvalidSchemaError, MRMOpenForAppendError, MRMWriteDatasetError, ParamTypeError,
                     ParamValueError)

_FORBIDDEN = set('\\/:*?"<>|`&\';')
# the Python types a field type accepts (MindSpore's VALUE_TYPE_MAP): plain int/float fit both widths, NumPy
# scalars only their own type
_ACCEPTS = {"int": ("int32", "int64"), "float": ("float32", "float64"), "str": ("string",), "bytes": ("bytes",),
            "int32": ("int32",), "int64": ("int64",), "float32": ("float32",), "float64": ("float64",),
            "ndarray": ("int32", "int64", "float32", "float64")}


def check_filename(path, what="File path"):
    """MindSpore's file name rules: a non-empty str, not ending with '/', no shell-special characters in the
    base name.

    Raises:
        ParamValueError: otherwise."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not path:
        raise ParamValueError(f"{what} is not allowed None or empty!")
    if not isinstance(path, str):
        raise ParamValueError(f"File path: {path} is not string.")
    if path.endswith("/"):
        raise ParamValueError("File path can not end with '/'")
    bad = sorted(set(os.path.basename(path)) & _FORBIDDEN)
    if bad:
        raise ParamValueError(f"File name {os.path.basename(path)!r} contains the characters {bad}, which are not "
                              "allowed in MindRecord file names.")
    return path


def _schema_error(content):
    """MindSpore's add_schema checks: the message of the first problem, or None."""
    if not content:
        return "Schema content is empty."
    if not isinstance(content, dict):
        return "Schema content should be dict."
    for k, v in content.items():
        if not isinstance(k, str) or not re.match(r"^[0-9a-zA-Z_]+$", k):
            return f"Field '{k}' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'."
        if not v or not isinstance(v, dict):
            return f"Field '{k}' should be dict."
        if len(v) == 1 and "type" in v:
            if v["type"] not in _format.SCALAR_TYPES:
                return f"Field '{k}' contain illegal attribute '{v['type']}'."
        elif len(v) == 2 and "type" in v and "shape" in v:
            if v["type"] not in _format.ARRAY_TYPES:
                return f"Field '{k}' contain illegal attribute '{v['type']}'."
            shape = v["shape"]
            if not isinstance(shape, list):
                return f"Field '{k}' contain illegal attribute '{shape}'."
            if (not shape or not all(isinstance(s, int) and not isinstance(s, bool) and (s > 0 or s == -1)
                                     for s in shape) or shape.count(-1) > 1):
                return (f"Field '{k}' has shape {shape}; expected a non-empty list of positive ints with at most "
                        "one -1 (any length).")
        else:
            return f"Field '{v}' contains illegal attributes."
    return None


def _row_error(schema, i, row):
    """Why row i does not fit the schema (MindSpore's messages), or None."""
    for field, (t, shape) in schema.fields.items():
        if field not in row:
            return f"for schema, {i} th data is wrong, there is not field: '{field}' in the raw data."
        v = row[field]
        name = "ndarray" if isinstance(v, np.ndarray) else type(v).__name__
        if name not in _ACCEPTS or t not in _ACCEPTS[name]:
            return f"for schema, {i} th data is wrong, data type: '{name}' for field: '{field}' ({t}) is not matched."
        if name == "ndarray":
            if shape is None:
                return f"for schema, {i} th data is wrong, data shape for field: '{field}' is not specified."
            if str(v.dtype) != t:
                return (f"for schema, {i} th data is wrong, data type: '{v.dtype}' for field: '{field}' ({t}) is not "
                        "matched.")
            known = int(np.prod([s for s in shape if s != -1]))
            if (v.size != known) if -1 not in shape else (known == 0 or v.size % known):
                return (f"for schema, {i} th data is wrong, data shape: '{v.shape}' for field: '{field}' is not "
                        "matched.")
        elif shape is not None:
            return (f"for schema, {i} th data is wrong, field: '{field}' has shape {list(shape)} and needs a "
                    f"numpy.ndarray, but got {name}.")
        elif t in ("int32", "int64"):
            bits = 31 if t == "int32" else 63
            if not -(1 << bits) <= int(v) < (1 << bits):
                return f"for schema, {i} th data is wrong, field: {field} type : {t} value: {int(v)} is out of range"
        elif t == "float32" and math.isfinite(float(v)) and abs(float(v)) > float(np.finfo(np.float32).max):
            # MindSpore writes such a value and reads back garbage; a float32 field cannot hold it.
            return (f"for schema, {i} th data is wrong, field: {field} type : {t} value: {float(v)!r} is out of "
                    "range")
        elif t == "string":
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return f"for schema, {i} th data is wrong, field: '{field}' is not a valid UTF-8 string."
    return None


class _Shard:
    """The writing state of one shard file: open file, its pages (header dicts), rows, index connection.

    Pages are laid out as MindSpore's ShardWriter lays them out, so that the same calls give the same bytes: each
    write_raw_data call cuts its rows into row groups (a new group when the current blob page or the group's raw
    bytes would pass the page size), fills the last blob page with the first group, starts one blob page per further
    group, moves the last raw group to a new raw page when the first group does not fit after it, then appends each
    group's raw rows to the last raw page or to a new one."""

    def __init__(self, path, pages=(), rows=0):
        self.path, self.pages, self.rows = path, [dict(p) for p in pages], rows
        self.file = None
        self.db = None
        for p in self.pages:
            if p["page_type"] == "BLOB_DATA":
                p["row_group_ids"] = []  # written as [{"id": 0, "offset": 0}], as MindSpore
            else:
                p["row_group_ids"] = [dict(g) for g in p["row_group_ids"]]
        blobs = [p for p in self.pages if p["page_type"] == "BLOB_DATA"]
        raws = [p for p in self.pages if p["page_type"] == "RAW_DATA"]
        self.blob = blobs[-1] if blobs else None
        self.raw = raws[-1] if raws else None
        if self.blob is not None and (self.raw is None or not self.raw["row_group_ids"]
                                      or self.raw["row_group_ids"][-1]["id"] != self.blob["page_type_id"]):
            raise RuntimeError(f"Invalid file, the last row group of {path} is not on its last raw page.")

    def _at(self, page, offset, header_size, page_size):
        return header_size + page["page_id"] * page_size + offset

    def _new_page(self, kind, type_id, start_row=0, size=0, groups=None):
        page = {"end_row_id": start_row, "page_id": len(self.pages), "page_size": size, "page_type": kind,
                "page_type_id": type_id, "row_group_ids": groups or [], "shard_id": 0, "start_row_id": start_row}
        self.pages.append(page)
        return page

    def write(self, rows, page_size, header_size):
        """Writes rows (raw bytes, blob bytes, index values) as one call; returns their index rows."""
        bsz = [8 + len(b) for _, b, _ in rows]
        rsz = [8 + len(r) for r, _, _ in rows]
        # cut into row groups; group 0 continues the last blob page (possibly empty)
        n_blob = self.blob["page_size"] if self.blob else 0
        n_raw = (self.raw["page_size"] - self.raw["row_group_ids"][-1]["offset"]) if self.blob else 0
        groups, first = [], 0
        for i in range(len(rows)):
            if n_blob == 0 or n_blob + bsz[i] > page_size or n_raw + rsz[i] > page_size:
                groups.append((first, i))
                first, n_blob, n_raw = i, bsz[i], rsz[i]
            else:
                n_blob, n_raw = n_blob + bsz[i], n_raw + rsz[i]
        groups.append((first, len(rows)))
        locs = [None] * len(rows)
        # blob pages: group 0 into the last one, one new page per further group
        for g, (a, b) in enumerate(groups):
            if a == b:
                continue
            if g > 0:
                prev = self.blob["page_type_id"] if self.blob else -1
                start = self.blob["end_row_id"] if self.blob else self.rows
                self.blob = self._new_page("BLOB_DATA", prev + 1, start)
            page = self.blob
            self.file.seek(self._at(page, page["page_size"], header_size, page_size))
            for i in range(a, b):
                self.file.write(_format.u64(bsz[i] - 8) + rows[i][1])
                locs[i] = [page["page_type_id"], page["page_id"], page["page_size"], page["page_size"] + bsz[i]]
                page["page_size"] += bsz[i]
                page["end_row_id"] += 1
        # raw pages
        a, b = groups[0]
        if a != b and self.raw["page_size"] + sum(rsz[a:b]) > page_size:
            self._shift_raw(header_size, page_size)
        for g, (a, b) in enumerate(groups):
            if a == b:
                continue
            size = sum(rsz[a:b])
            if self.raw is None or self.raw["page_size"] + size > page_size:
                self.raw = self._new_page("RAW_DATA", 0 if self.raw is None else self.raw["page_id"] + 1)
            page = self.raw
            if g > 0:
                page["row_group_ids"].append({"id": locs[a][0], "offset": page["page_size"]})
            self.file.seek(self._at(page, page["page_size"], header_size, page_size))
            for i in range(a, b):
                self.file.write(_format.u64(rsz[i] - 8) + rows[i][0])
                locs[i] = (self.rows + i, page["page_id"], page["page_size"], page["page_size"] + rsz[i]) + \
                    tuple(locs[i])
                page["page_size"] += rsz[i]
        self.rows += len(rows)
        return [loc + tuple(r[2]) for loc, r in zip(locs, rows)]

    def _shift_raw(self, header_size, page_size):
        """Moves the last row group of the last raw page to a new raw page (MindSpore's ShiftRawPage)."""
        old = self.raw
        last = old["row_group_ids"].pop()
        self.file.seek(self._at(old, last["offset"], header_size, page_size))
        data = self.file.read(old["page_size"] - last["offset"])
        new = self._new_page("RAW_DATA", old["page_id"] + 1, size=len(data),
                             groups=[{"id": last["id"], "offset": 0}])
        self.file.seek(self._at(new, 0, header_size, page_size))
        self.file.write(data)
        old["page_size"] = last["offset"]
        self.raw = new
        self.db.execute("UPDATE INDEXES SET PAGE_ID_RAW=?, PAGE_OFFSET_RAW=PAGE_OFFSET_RAW-?, "
                        "PAGE_OFFSET_RAW_END=PAGE_OFFSET_RAW_END-? WHERE ROW_GROUP_ID=?",
                        (new["page_id"], last["offset"], last["offset"], last["id"]))

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None
        if self.db is not None:
            self.db.close()
            self.db = None


def _index_error(cls, what, shard, e):
    """The writer's documented error `cls` for an sqlite3.Error `e` of the index file of `shard`, naming the file:
    no raw sqlite3 error leaves the writer (docs/decisions/damaged-files.md)."""
    return cls(f"{what}: the MindRecord index file {shard.path}.db failed ({type(e).__name__}: {e}). It may be "
               "damaged, changed by another program, or its disk full or read-only.")


def _close_all(shards):
    for s in shards:
        s.close()


class FileWriter:
    """Writes rows (dicts) into MindRecord files that MindSpore's MindDataset/FileReader and Kiln's read.

    Args:
        file_name (str): the file (with shard_num > 1, the files file_name0, file_name1, ... zero-padded to the
            width of shard_num - 1), each with an index file <name>.db.
        shard_num (int): number of files, in [1, 1000] (default 1). Each write_raw_data call spreads its rows over
            the files in contiguous runs of equal size; the remainder rows go to shards in turn (MindSpore picks
            them at random).
        overwrite (bool): replace existing files (default False: writing raises RuntimeError if one exists).

    Raises:
        ParamValueError: a bad file_name, shard_num or overwrite (as MindSpore, also for wrong types).

    Note:
        Rows that do not fit the schema are dropped with a warning naming the row and the field, as MindSpore does;
        a call where no row fits raises RuntimeError. Files are opened at the first write_raw_data (or commit) and
        the header and index are final after commit(). Calls from several threads are serialized by a lock.
        Not supported: MindSpore's encryption (set_enc_key); `parallel_writer=True` is accepted and the rows are
        written by the calling process.
    """

    def __init__(self, file_name, shard_num=1, overwrite=False):
        self._file_name = check_filename(file_name)
        if shard_num is None:
            raise ParamValueError("Parameter shard_num is None.")
        if not isinstance(shard_num, int) or isinstance(shard_num, bool):
            raise ParamValueError("Parameter shard_num's type is not int.")
        if not 1 <= shard_num <= _format.MAX_SHARDS:
            raise ParamValueError(f"Parameter shard_num's value: {shard_num} should between 1 and "
                                  f"{_format.MAX_SHARDS}.")
        if not isinstance(overwrite, bool):
            raise ParamValueError("Parameter overwrite's type is not bool.")
        self._paths = _format.shard_paths(self._file_name, shard_num)
        self._overwrite = overwrite
        self._schema = None
        self._index_fields = None
        self._header_size = _format.DEFAULT_HEADER_SIZE
        self._page_size = _format.DEFAULT_PAGE_SIZE
        self._shards = None
        self._append = False
        self._flushed = False
        self._saved = 0
        self._turn = 0
        self._parallel = None
        self._lock = threading.RLock()
        self._finalizer = None

    @classmethod
    def open_for_append(cls, file_name):
        """A FileWriter that adds rows to existing MindRecord files (all shards of `file_name`'s data set).

        Raises:
            ParamValueError: a bad file name. MRMOpenForAppendError: the file or its index is missing, it is not
            a MindRecord file, or an index file's table does not match the header's index fields (naming the .db)."""
        check_filename(file_name)
        try:
            header, _ = _format.read_header(file_name)
            folder = os.path.dirname(file_name)
            paths = [os.path.join(folder, a) for a in header["shard_addresses"]]
            headers = [header if os.path.samefile(p, file_name) else _format.read_header(p)[0] for p in paths]
            rows = [len(_format.read_index(p)) for p in paths]
            schema = _format.Schema.from_json(header["schema"][0], file_name)
            index_fields = [str(f["index_field"]) for f in (header.get("index_fields") or [])]
            sizes = int(header["header_size"]), int(header["page_size"]), int(header.get("compression_size", 0))
        except (OSError, RuntimeError) + _format.DAMAGE as e:  # missing, or damaged in any way
            raise MRMOpenForAppendError(f"MindRecord File could not open successfully for append: {file_name}: "
                                        f"{e}") from None
        self = cls(paths[0], 1, False)
        self._paths, self._append = paths, True
        self._schema = schema
        self._index_fields = index_fields
        self._header_size, self._page_size, self._saved = sizes
        shards = []
        try:
            for p, h, n in zip(paths, headers, rows):
                s = _Shard(p, h["page"] or [], n)
                shards.append(s)
                s.file = open(p, "r+b")
                s.db = sqlite3.connect(p + ".db")
                _format.check_index_table(s.db, p + ".db", index_fields)
        except (OSError, RuntimeError, KeyError, TypeError, ValueError, sqlite3.Error) as e:
            _close_all(shards)
            raise MRMOpenForAppendError(f"MindRecord File could not open successfully for append: {file_name}: "
                                        f"{type(e).__name__}: {e}") from None
        self._shards = shards
        self._finalizer = weakref.finalize(self, _close_all, shards)
        return self

    def add_schema(self, content, desc=None):
        """Sets the schema: field name -> {"type": t} (t in int32, int64, float32, float64, string, bytes) or
        {"type": t, "shape": [...]} (t in int32, int64, float32, float64; -1 = any length), for NumPy arrays.

        Args:
            content (dict): the schema.
            desc (str, optional): a description stored in the header (default None: "").

        Raises:
            MRMInvalidSchemaError: a schema MindRecord cannot store (message as MindSpore's). TypeError: desc not a
            str. MRMAddSchemaError: a schema was already added."""
        err = _schema_error(content)
        if err is not None:
            raise MRMInvalidSchemaError(err)
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"FileWriter.add_schema: desc must be a str, but got {desc!r} ({type(desc).__name__}).")
        with self._lock:
            if self._schema is not None:
                raise MRMAddSchemaError("Failed to add schema: The schema is added repeatedly. Please remove the "
                                        "redundant 'add_schema' function.")
            self._schema = _format.Schema(content, desc or "")

    def add_index(self, index_fields):
        """Chooses the scalar fields stored in the index files (default: every int, float and string scalar field).

        Args:
            index_fields (list[str]): field names.

        Raises:
            ParamTypeError: not a non-empty list of str. MRMGetMetaError: no schema yet. MRMDefineIndexError: a
            blob field (array or bytes) or a field named twice. ValueError: a field not in the schema."""
        if not index_fields or not isinstance(index_fields, list):
            raise ParamTypeError("index_fields", "list")
        with self._lock:
            if self._schema is None:
                raise MRMGetMetaError("Failed to get meta info: add_schema must be called before add_index.")
            for field in index_fields:
                if field in self._schema.blob_fields:
                    raise MRMDefineIndexError(f"Failed to set field {field} since it's not primitive type.")
                if not isinstance(field, str):
                    raise ParamTypeError("index field", "str")
                if field not in self._schema.fields:
                    raise ValueError(f"FileWriter.add_index: Invalid input, 'index_fields': {field} can not found in "
                                     f"schema {sorted(self._schema.fields)}.")
            if len(set(index_fields)) != len(index_fields) or set(index_fields) & set(self._index_fields or []):
                raise MRMDefineIndexError(f"Failed to set index fields {index_fields}: a field is named twice.")
            if self._shards is not None:
                raise MRMDefineIndexError("Failed to set index fields: rows were already written.")
            self._index_fields = list(self._index_fields or []) + list(index_fields)

    def set_header_size(self, header_size):
        """The size of the header area of each file, in bytes: a multiple of 4 in [16 KB, 128 MB] (default
        16 MB). The header lists every page, so many pages need a larger header.

        Raises:
            TypeError: not an int. RuntimeError: out of range, not a multiple of 4, files already started."""
        self._header_size = self._check_size("header", header_size, _format.HEADER_SIZE_RANGE)

    def set_page_size(self, page_size):
        """The size of each page, in bytes: a multiple of 4 in [32 KB, 256 MB] (default 32 MB). A row must fit
        one page.

        Raises:
            TypeError: not an int. RuntimeError: out of range, not a multiple of 4, files already started."""
        self._page_size = self._check_size("page", page_size, _format.PAGE_SIZE_RANGE)

    def _check_size(self, what, value, bounds):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"FileWriter.set_{what}_size: {what}_size must be an int, but got {value!r}.")
        lo, hi = bounds
        if not lo <= value <= hi:
            raise RuntimeError(f"Invalid data, {what} size: {value} should be in range [{lo}, {hi}] bytes.")
        if value % 4:
            raise RuntimeError(f"Invalid data, {what} size {value} should be divided by four.")
        if self._shards is not None:
            raise RuntimeError(f"FileWriter.set_{what}_size: rows were already written with {what} size "
                               f"{self._page_size if what == 'page' else self._header_size}.")
        return int(value)

    def _open(self):
        if self._shards is not None:
            return
        if self._schema is None:
            raise MRMWriteDatasetError("Invalid data, schema is not found in header, please use 'add_schema' to "
                                       "add a schema before writing rows or committing.")
        existing = [p for p in self._paths for q in (p, p + ".db") if os.path.exists(q)]
        if existing and not self._overwrite:
            raise RuntimeError(f"Invalid file, mindrecord files already exist. Please check file path: "
                               f"{existing[0]} (or pass overwrite=True).")
        for p in self._paths:
            folder = os.path.dirname(os.path.abspath(p))
            if not os.path.isdir(folder):
                raise RuntimeError(f"Invalid file, the folder of {p} does not exist.")
        if self._index_fields is None:
            self._index_fields = [k for k in self._schema.raw_fields]
        shards = []
        try:
            for p in self._paths:
                s = _Shard(p)
                shards.append(s)
                s.file = open(p, "w+b")
                try:
                    s.db = _format.create_index(p + ".db", self._schema, self._index_fields, os.path.basename(p))
                except sqlite3.Error as e:
                    raise _index_error(MRMWriteDatasetError, "Failed to create the index", s, e) from None
        except BaseException:
            _close_all(shards)
            raise
        self._shards = shards
        self._finalizer = weakref.finalize(self, _close_all, shards)

    def write_raw_data(self, raw_data, parallel_writer=False):
        """Writes rows. Each row is a dict with a value for every schema field: Python int for int32/int64 (or a
        NumPy int32/int64 scalar for that type only), Python float for float32/float64 (or the NumPy scalar of
        that type), str for string, bytes for bytes, and a NumPy array of exactly the field's dtype whose size fits
        its shape for array fields. Other keys are ignored. Rows that do not fit are dropped with a warning.

        Args:
            raw_data (list[dict]): the rows (the list is not changed).
            parallel_writer (bool): accepted for compatibility (default False); must stay the same on every call.

        Raises:
            ParamTypeError: raw_data not a list, an item not a dict. TypeError: parallel_writer not a bool.
            RuntimeError: no row fits the schema, the files exist (without overwrite), writing after commit (use
            open_for_append). MRMWriteDatasetError: no schema, a row larger than a page, an index file SQLite
            cannot write (naming the .db)."""
        if not isinstance(parallel_writer, bool):
            raise TypeError("The parameter `parallel_writer` must be bool.")
        with self._lock:
            if self._parallel is None:
                self._parallel = parallel_writer
            if self._parallel != parallel_writer:
                raise RuntimeError("The parameter `parallel_writer` must be consistent during use.")
            if self._flushed:
                raise RuntimeError("Not allowed to call `write_raw_data` on flushed MindRecord files. When creating "
                                   "new MindRecord files, please remove `commit` before `write_raw_data`. In other "
                                   "cases, when appending to existing MindRecord files, please call "
                                   "`open_for_append` first and then `write_raw_data`.")
            if not isinstance(raw_data, list):
                raise ParamTypeError("raw_data", "list")
            for row in raw_data:
                if not isinstance(row, dict):
                    raise ParamTypeError("raw_data item", "dict")
            if self._schema is None:
                raise MRMWriteDatasetError("Invalid data, schema is not found in header, please use 'add_schema' "
                                           "to add a schema before writing rows.")
            rows = []
            for i, row in enumerate(raw_data):
                err = _row_error(self._schema, i, row)
                if err is None:
                    rows.append(row)
                else:
                    warnings.warn(f"FileWriter.write_raw_data: {err} The row is not written.", stacklevel=2)
            if not rows:
                raise RuntimeError("There is no valid data which can be written by 'write_raw_data' to mindrecord "
                                   "file. Please check the abnormal input data indicated in the warning log above.")
            self._open()
            encoded = []
            for row in rows:
                raw, blob, saved = _format.encode_row(self._schema, row)
                if max(len(raw), len(blob)) + 8 > self._page_size:
                    raise MRMWriteDatasetError(f"Page size is too small to save a row! A row needs "
                                               f"{max(len(raw), len(blob)) + 8} bytes, the page size is "
                                               f"{self._page_size}; call set_page_size with a larger size.")
                encoded.append((raw, blob, saved, row))
            n = len(self._shards)
            per, extra = divmod(len(encoded), n)
            start = 0
            for k in range(n):
                count = per + (1 if (k - self._turn) % n < extra else 0)
                self._write_shard(self._shards[k], encoded[start:start + count])
                start += count
            self._turn = (self._turn + extra) % n

    def _write_shard(self, shard, rows):
        if not rows:
            return
        kinds = [self._schema.fields[f][0] for f in self._index_fields]
        batch = []
        for raw, blob, saved, row in rows:
            self._saved += saved
            values = tuple(row[f] if t == "string" else (float(row[f]) if t.startswith("float") else int(row[f]))
                           for f, t in zip(self._index_fields, kinds))
            batch.append((raw, blob, values))
        try:
            _format.insert_index_rows(shard.db, self._index_fields, shard.write(batch, self._page_size,
                                                                                 self._header_size))
        except sqlite3.Error as e:
            raise _index_error(MRMWriteDatasetError, "Failed to write dataset", shard, e) from None

    def commit(self):
        """Writes the headers and the index files; the files are then complete. A FileWriter without rows writes
        empty files (valid, 0 rows).

        Raises:
            MRMWriteDatasetError: no schema. MRMCommitError: a header larger than the header size (call
            set_header_size with a larger size), an index file SQLite cannot write (naming the .db). RuntimeError: the files exist (without overwrite), or commit was
            already called (the files are complete; use open_for_append to add rows)."""
        with self._lock:
            if self._flushed:
                raise RuntimeError("Not allowed to call `commit` twice: the MindRecord files are already complete. "
                                   "To add rows, call `FileWriter.open_for_append` and then `write_raw_data`.")
            self._open()
            addresses = [os.path.basename(p) for p in self._paths]
            try:
                for k, s in enumerate(self._shards):
                    for p in s.pages:
                        p["shard_id"] = k
                    data = _format.header_bytes(self._header_size, self._page_size, self._index_fields, s.pages,
                                                self._schema, addresses, k, self._saved)
                    if len(data) + 8 > self._header_size:
                        raise MRMCommitError(f"Failed to commit: the header of {s.path} needs {len(data) + 8} bytes, "
                                             f"more than the header size {self._header_size}; call "
                                             "set_header_size with a larger size (or set_page_size, for fewer "
                                             "pages).")
                    s.file.seek(0)
                    s.file.write(_format.u64(len(data)) + data)
                    s.file.flush()
                    try:
                        s.db.commit()
                    except sqlite3.Error as e:
                        raise _index_error(MRMCommitError, "Failed to commit", s, e) from None
            finally:
                _close_all(self._shards)
            self._flushed = True
            for p in self._paths:
                for q in (p, p + ".db"):
                    os.chmod(q, 0o600)
