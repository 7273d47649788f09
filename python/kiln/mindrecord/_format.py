"""The MindRecord file format, as MindSpore 2.10 writes and reads it (learned from MindSpore's sources under
mindspore/ccsrc/minddata/mindrecord/ and from files MindSpore wrote; no code taken).

Note [MindRecord format]
------------------------
A data set is 1..1000 *shard files* (FileWriter("x", shard_num=n): x0, x1, ... zero-padded to the width of
n-1; n == 1: just "x"), each with an SQLite *index file* next to it (x.db).

Shard file::

    [0, header_size)          u64 LE length L, then L bytes of JSON (the header); the rest of the area is zeros
    page p at header_size + p * page_size, p = 0, 1, ...; only the bytes a page uses are written (page_size)

Header JSON keys, in this order: header_size (default 16 MiB), index_fields (list of {"index_field",
"schema_id"} or null), page (the pages of *this* shard, null when none), page_size (default 32 MiB),
compression_size (bytes saved by integer compression, summed over the writer), schema (a list of one
{"blob_fields", "desc", "schema"}; "schema" maps each field, sorted by name, to {"type"} or {"shape", "type"}),
shard_addresses (the base names of all shards, in order), shard_id, statistics (null), version ("3.0"). A page
is {end_row_id, page_id, page_size (bytes used), page_type ("BLOB_DATA"/"RAW_DATA"), page_type_id,
row_group_ids [{"id", "offset"}], shard_id, start_row_id}.

Fields with a "shape" (int32/int64/float32/float64 arrays, -1 = any length) and "bytes" fields are *blob
fields* (sorted by name); the others (int32/int64/float32/float64/string scalars) are *raw fields*.

- Blob page (a *row group*; its page_type_id is the group id): rows start_row_id..end_row_id-1, each u64 LE size
  then the row's blob. The blob of a row: one blob field: its bytes alone; several: for each blob field in order,
  u64 **BE** size then its bytes; none: 4 zero bytes. Array bytes are the array in C order, little-endian. When
  the schema has an int32/int64 array field, every int32/int64 blob field is *compressed*: u32 BE element count,
  a bitmap of 2 bits per element (most significant pair first; 0/1/2/3 = the value stored in 1/2/4/8 bytes), then
  each value little-endian in the smallest signed width that holds it. Writers record row_group_ids
  [{"id": 0, "offset": 0}] on blob pages.
- Raw page: rows of consecutive row groups; row_group_ids give each group's id and its byte offset in the page (a
  group never spans two raw pages). Each row: u64 LE size then a MessagePack map of the raw fields, keys sorted
  (a schema of blob fields only stores {"id": 0}). Raw pages have start/end_row_id 0; MindSpore numbers their
  page_type_id 0 for the first and previous raw page's page_id + 1 after that (kept here).

Index file (x.db), read to locate rows: table INDEXES(ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END,
ROW_GROUP_ID, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END, then for each index field k: INC_k (0) and
<field>_<schema id> (INTEGER/REAL/TEXT) holding the row's value), offsets within the page and counting the u64
size prefix; table SHARD_NAME(NAME) holding the shard file's base name (a renamed file no longer matches its index,
as in MindSpore).
"""
import json
import os
import sqlite3
import struct

import numpy as np

from . import _msgpack

DEFAULT_HEADER_SIZE = 1 << 24
DEFAULT_PAGE_SIZE = 1 << 25
HEADER_SIZE_RANGE = (1 << 14, 1 << 27)  # [16 KB, 128 MB]
PAGE_SIZE_RANGE = (1 << 15, 1 << 28)  # [32 KB, 256 MB]
MAX_SHARDS = 1000
VERSION = "3.0"
SCALAR_TYPES = ("int32", "int64", "float32", "float64", "string", "bytes")
ARRAY_TYPES = ("int32", "int64", "float32", "float64")
_U64 = struct.Struct("<Q")
# What decoding the bytes of a damaged file can raise besides the readers' own RuntimeErrors: bad UTF-8
# (UnicodeDecodeError is a ValueError), bad JSON or MessagePack, values of the wrong type, bad lengths, huge counts,
# SQLite's errors. The readers turn each into their RuntimeError naming the file (docs/decisions/damaged-files.md).
DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, MemoryError, struct.error,
          sqlite3.Error)
_SQL_TYPE = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL", "string": "TEXT"}


class Schema:
    """A validated schema: `fields` name -> (type, shape tuple or None), sorted by name."""

    def __init__(self, content, desc=""):
        self.fields = {k: (v["type"], tuple(int(s) for s in v["shape"]) if "shape" in v else None)
                       for k, v in sorted(content.items())}
        self.desc = desc
        self.blob_fields = [k for k, (t, s) in self.fields.items() if s is not None or t == "bytes"]
        self.raw_fields = [k for k in self.fields if k not in self.blob_fields]
        self.compress = any(s is not None and t in ("int32", "int64") for t, s in self.fields.values())
        # array fields: (little-endian dtype, product of the known dims, has a -1)
        self.arrays = {k: (np.dtype(t).newbyteorder("<"), int(np.prod([d for d in s if d != -1])), -1 in s)
                       for k, (t, s) in self.fields.items() if s is not None}

    def to_json(self):
        schema = {k: ({"shape": list(s), "type": t} if s is not None else {"type": t})
                  for k, (t, s) in self.fields.items()}
        return {"blob_fields": list(self.blob_fields), "desc": self.desc, "schema": schema}

    def content(self):
        """The schema as the dict add_schema takes."""
        return self.to_json()["schema"]

    @classmethod
    def from_json(cls, obj, where):
        try:
            content, desc = obj["schema"], obj.get("desc", "")
            for v in content.values():
                if v["type"] not in SCALAR_TYPES or ("shape" in v and v["type"] not in ARRAY_TYPES):
                    raise ValueError(v)
            return cls(content, desc)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise RuntimeError(f"Invalid file, the schema in the header of {where} is not a MindRecord schema: "
                               f"{json.dumps(obj)[:200]}.") from None


# ---- integer compression --------------------------------------------------------------------------------------
def compress_ints(values):
    """int32/int64 array -> MindRecord's compressed bytes (see Note [MindRecord format])."""
    v = np.ascontiguousarray(values, dtype="<i8").reshape(-1)
    n = v.size
    code = np.full(n, 3, np.uint8)
    code[(v >= -(1 << 31)) & (v < (1 << 31))] = 2
    code[(v >= -(1 << 15)) & (v < (1 << 15))] = 1
    code[(v >= -(1 << 7)) & (v < (1 << 7))] = 0
    padded = np.zeros(-(-n // 4) * 4, np.uint8)
    padded[:n] = code
    quads = padded.reshape(-1, 4).astype(np.uint16)
    bitmap = ((quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]).astype(np.uint8)
    keep = np.arange(8) < (1 << code.astype(np.int64))[:, None]
    body = v.view(np.uint8).reshape(n, 8)[keep]
    return struct.pack(">I", n) + bitmap.tobytes() + body.tobytes()


def decompress_ints(buf, dtype, where):
    """Compressed bytes -> a 1-D array of `dtype` (int32/int64).

    Raises:
        RuntimeError: the bytes do not hold what their count and bitmap say (a corrupt file)."""
    if len(buf) < 4:
        raise RuntimeError(f"Invalid data, {where}: a compressed integer field of {len(buf)} bytes has no count.")
    n = struct.unpack_from(">I", buf)[0]
    nmap = -(-n // 4)
    raw = np.frombuffer(buf, np.uint8)
    if 4 + nmap > raw.size:
        raise RuntimeError(f"Invalid data, {where}: a compressed integer field of {raw.size} bytes is too short "
                           f"for {n} values.")
    bitmap = raw[4:4 + nmap]
    idx = np.arange(n)
    code = (bitmap[idx // 4] >> (2 * (3 - idx % 4)).astype(np.uint8)) & 3
    size = (1 << code.astype(np.int64))
    start = 4 + nmap + np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    if 4 + nmap + int(size.sum()) != raw.size:
        raise RuntimeError(f"Invalid data, {where}: a compressed integer field holds {raw.size} bytes but its "
                           f"bitmap describes {4 + nmap + int(size.sum())}.")
    if n == 0:
        return np.zeros(0, dtype)
    lane = np.arange(8)
    valid = lane < size[:, None]
    gathered = raw[np.where(valid, start[:, None] + lane, 0)]
    negative = raw[start + size - 1] >= 0x80
    full = np.where(valid, gathered, np.where(negative[:, None], 0xFF, 0)).astype(np.uint8)
    return np.ascontiguousarray(full).view("<i8").reshape(n).astype(dtype)


# ---- rows ------------------------------------------------------------------------------------------------------
def encode_row(schema, row):
    """A validated row (dict) -> (raw bytes, blob bytes) without their u64 size prefixes; also the bytes that
    integer compression saved."""
    raw = ({k: (row[k].item() if isinstance(row[k], np.generic) else row[k]) for k in schema.raw_fields}
           if schema.raw_fields else {"id": 0})
    parts, saved = [], 0
    for k in schema.blob_fields:
        t, _ = schema.fields[k]
        v = row[k]
        if t == "bytes":
            b = bytes(v)
        else:
            arr = np.ascontiguousarray(v, dtype=np.dtype(t).newbyteorder("<"))
            b = arr.tobytes()
            if schema.compress and t in ("int32", "int64"):
                c = compress_ints(arr)
                saved += len(b) - len(c)
                b = c
        parts.append(b)
    if not schema.blob_fields:
        blob = b"\x00\x00\x00\x00"
    elif len(parts) == 1:
        blob = parts[0]
    else:
        blob = b"".join(len(p).to_bytes(8, "big") + p for p in parts)
    return _msgpack.packb(raw), blob, saved


def split_blob(schema, blob, where):
    """A row's blob -> dict blob field -> its stored bytes (still compressed)."""
    if not schema.blob_fields:
        return {}
    if len(schema.blob_fields) == 1:
        return {schema.blob_fields[0]: blob}
    out, pos = {}, 0
    for k in schema.blob_fields:
        if pos + 8 > len(blob):
            raise RuntimeError(f"Invalid data, {where}: the blob of {len(blob)} bytes ends before field {k!r}.")
        n = int.from_bytes(blob[pos:pos + 8], "big")
        if pos + 8 + n > len(blob):
            raise RuntimeError(f"Invalid data, {where}: field {k!r} needs {n} bytes but the blob has "
                               f"{len(blob) - pos - 8} left.")
        out[k] = blob[pos + 8:pos + 8 + n]
        pos += 8 + n
    return out


def decode_blob_field(schema, name, data, where):
    """A blob field's stored bytes -> bytes (type bytes) or an array of the schema's dtype and shape."""
    t, shape = schema.fields[name]
    if t == "bytes":
        return bytes(data)
    dtype, known, free = schema.arrays[name]
    if schema.compress and t in ("int32", "int64"):
        arr = decompress_ints(data, dtype, where)
    else:
        if len(data) % dtype.itemsize:
            raise RuntimeError(f"Invalid data, {where}: field {name!r} holds {len(data)} bytes, not a whole number "
                               f"of {t} values.")
        arr = np.frombuffer(data, dtype).astype(t)
    if (free and (known == 0 or arr.size % known)) or (not free and arr.size != known):
        raise RuntimeError(f"Invalid data, {where}: field {name!r} holds {arr.size} values, which do not fit its "
                           f"schema shape {list(shape)}.")
    return arr.reshape(shape)


# ---- header ----------------------------------------------------------------------------------------------------
def header_bytes(header_size, page_size, index_fields, pages, schema, addresses, shard_id, compression_size):
    """The header JSON of one shard, keys in MindSpore's order, compact, UTF-8."""
    idx = [{"index_field": f, "schema_id": 0} for f in index_fields] or None
    obj = {"header_size": header_size, "index_fields": idx,
           "page": [dict(sorted(dict(p, row_group_ids=p["row_group_ids"] or [{"id": 0, "offset": 0}]).items()))
                    for p in pages] or None, "page_size": page_size,
           "compression_size": max(int(compression_size), 0), "schema": [schema.to_json()],
           "shard_addresses": list(addresses), "shard_id": shard_id, "statistics": None, "version": VERSION}
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def read_header(path):
    """(header dict, file size) of a shard file.

    Raises:
        RuntimeError: too short, a length beyond the file, not JSON, keys missing or of the wrong types (shard
        addresses must be plain file names in the same folder)."""
    size = os.path.getsize(path)
    if size < 8:
        raise RuntimeError(f"Invalid file, the size of mindrecord file: {size} is smaller than the lower limit: 8. "
                           f"Please check file path: {path} and use 'FileWriter' to generate valid mindrecord files.")
    with open(path, "rb") as f:
        n = _U64.unpack(f.read(8))[0]
        if n > size - 8 or n > HEADER_SIZE_RANGE[1]:
            raise RuntimeError(f"Invalid file, the header length {n} of {path} goes past its {size} bytes: not a "
                               "MindRecord file, or truncated.")
        text = f.read(n)
    try:
        h = json.loads(text.decode("utf-8"))
        ok = (isinstance(h, dict) and all(isinstance(h.get(k), int) and h[k] > 0 for k in ("header_size", "page_size"))
              and isinstance(h.get("schema"), list) and len(h["schema"]) == 1 and isinstance(h["schema"][0], dict)
              and isinstance(h.get("shard_addresses"), list) and h["shard_addresses"]
              and all(isinstance(a, str) and a and os.path.basename(a) == a for a in h["shard_addresses"])
              and isinstance(h.get("shard_id"), int) and isinstance(h.get("page"), (list, type(None))))
        if not ok:
            raise ValueError("not a MindRecord header")
    except (ValueError, KeyError, TypeError):
        raise RuntimeError(f"Invalid file, the header of {path} is not MindRecord's header JSON: not a MindRecord "
                           "file, or corrupt.") from None
    return h, size


# ---- index file ------------------------------------------------------------------------------------------------
def create_index(path, schema, index_fields, shard_name):
    """Creates the SQLite index file `path` (replacing one there) and returns its connection."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    cols = "".join(f",INC_{k} INT, {f}_0 {_SQL_TYPE[schema.fields[f][0]]}" for k, f in enumerate(index_fields))
    keys = "".join(f",INC_{k}" for k in range(len(index_fields)))
    con.execute("CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL, "
                "PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL, ROW_GROUP_ID         INT  "
                "NOT NULL, PAGE_ID_BLOB         INT  NOT NULL, PAGE_OFFSET_BLOB     INT  NOT NULL, "
                f"PAGE_OFFSET_BLOB_END INT  NOT NULL{cols}, PRIMARY KEY(ROW_ID{keys}))")
    con.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL)")
    con.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?)", (shard_name,))
    return con


_LOCATION_COLUMNS = ["ROW_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END", "ROW_GROUP_ID", "PAGE_ID_BLOB",
                     "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END"]


def check_index_table(con, db, index_fields):
    """Raises RuntimeError naming the index file `db` when its INDEXES table does not have the columns create_index
    makes for `index_fields` (the header's index fields): rows could not be added to it.
    (SQLite column names are compared case-insensitively, as SQLite does.)"""
    want = _LOCATION_COLUMNS + [c for k, f in enumerate(index_fields) for c in (f"INC_{k}", f"{f}_0")]
    got = [str(r[1]) for r in con.execute("PRAGMA table_info(INDEXES)")]
    if sorted(c.upper() for c in got) != sorted(c.upper() for c in want):
        raise RuntimeError(f"Invalid file, the index file {db} does not match the schema of its shard: its INDEXES "
                           f"table has the columns {got}, the index fields {index_fields} need {want}. It is "
                           "damaged or was changed by another program.")


def insert_index_rows(con, index_fields, rows):
    """rows: tuples (8 location ints, then one value per index field)."""
    if not rows:
        return
    inc = "".join(f",INC_{k},{f}_0" for k, f in enumerate(index_fields))
    marks = ",".join(["?"] * (8 + 2 * len(index_fields)))
    con.executemany("INSERT INTO INDEXES (ROW_ID,PAGE_ID_RAW,PAGE_OFFSET_RAW,PAGE_OFFSET_RAW_END,ROW_GROUP_ID,"
                    f"PAGE_ID_BLOB,PAGE_OFFSET_BLOB,PAGE_OFFSET_BLOB_END{inc}) VALUES ({marks})",
                    [r[:8] + tuple(x for v in r[8:] for x in (0, v)) for r in rows])


def read_index(path):
    """The row locations in the index file of shard file `path`: an int64 array (rows, 7) of ROW_ID, PAGE_ID_RAW,
    PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END, by ROW_ID.

    Raises:
        RuntimeError: the index file is missing, unreadable, or names another shard file."""
    db = path + ".db"
    if not os.path.isfile(db):
        raise RuntimeError(f"The input: {db} is not exists.")
    try:
        con = sqlite3.connect(f"file:{_uri_path(db)}?mode=ro", uri=True)
        try:
            names = [r[0] for r in con.execute("SELECT NAME FROM SHARD_NAME")]
            rows = con.execute("SELECT ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, "
                               "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END FROM INDEXES ORDER BY ROW_ID").fetchall()
        finally:
            con.close()
        locs = np.asarray(rows, dtype=np.int64).reshape(-1, 7)
    except DAMAGE as e:  # e.g. a name that is not UTF-8 text, a location that is not an integer
        raise RuntimeError(f"Invalid file, the mindrecord meta file {db} cannot be read as its SQLite index "
                           f"({type(e).__name__}: {e}): truncated or corrupt.") from None
    if names != [os.path.basename(path)]:
        raise RuntimeError(f"Invalid file, mindrecord meta file: {db} and mindrecord file: {path} can not match. "
                           "Please do not rename the mindrecord file or meta file.")
    return locs


def _uri_path(p):
    from urllib.parse import quote
    return quote(os.path.abspath(p))


def shard_paths(file_name, shard_num):
    """The shard file names FileWriter(file_name, shard_num) writes."""
    if shard_num == 1:
        return [file_name]
    width = len(str(shard_num - 1))
    return [f"{file_name}{str(k).rjust(width, '0')}" for k in range(shard_num)]


def u64(n):
    return _U64.pack(n)


def read_u64(b):
    return _U64.unpack_from(b)[0]
