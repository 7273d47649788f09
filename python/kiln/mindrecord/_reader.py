"""Random access to the rows of a set of MindRecord shard files (shared by FileReader and MindDataset).

Row locations come from each shard's SQLite index (as MindSpore reads them); rows are read with os.pread, so any
number of threads can read at once, and worker processes reopen the files after pickling. Open file descriptors
are per process, closed by close() or when the ShardSet is garbage collected."""
import os
import threading
import weakref

import numpy as np

from . import _format, _msgpack


def expand_files(fn, dataset_files):
    """The shard files to read: a str/path names one shard (all shards of its data set are read, from the same
    folder, in the order its header lists them); a list names exactly the files to read, in that order.

    Raises:
        TypeError: not a str or a list of str. ValueError: an empty list, a file missing."""
    if isinstance(dataset_files, (str, os.PathLike)):
        first = os.fspath(dataset_files)
        _check_exists(fn, first)
        header, _ = _format.read_header(first)
        folder = os.path.dirname(first)
        files = [os.path.join(folder, a) for a in header["shard_addresses"]]
        for f in files:
            if not os.path.isfile(f):
                raise RuntimeError(f"{fn}: Invalid file, {first} belongs to a data set of {len(files)} shard files "
                                   f"({header['shard_addresses']}), but {f} is missing. Pass a list of files to "
                                   "read only some shards.")
        return files
    if not isinstance(dataset_files, (list, tuple)):
        raise TypeError(f"{fn}: dataset_files must be a str or a list of str, but got "
                        f"{type(dataset_files).__name__}.")
    if not dataset_files:
        raise ValueError(f"{fn}: dataset_files is an empty list; expected MindRecord file names.")
    files = []
    for f in dataset_files:
        if not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"{fn}: dataset_files must hold str paths, but got {f!r} ({type(f).__name__}).")
        _check_exists(fn, os.fspath(f))
        files.append(os.fspath(f))
    if len(set(map(os.path.realpath, files))) != len(files):
        raise ValueError(f"{fn}: dataset_files names a file twice: {files}.")
    return files


def _check_exists(fn, path):
    if not os.path.isfile(path):
        raise ValueError(f"{fn}: The file {path} does not exist or permission denied!")


class _Fds:
    """Read-only descriptors of the shard files, opened lazily in each process."""

    def __init__(self, files):
        self.files, self.pid, self.fds, self.lock = files, None, {}, threading.Lock()

    def get(self, k):
        pid = os.getpid()
        if self.pid != pid:  # first use, or a forked child: do not share the parent's table
            with self.lock:
                if self.pid != pid:
                    self.fds, self.pid = {}, pid
        fd = self.fds.get(k)
        if fd is None:
            with self.lock:
                fd = self.fds.get(k)
                if fd is None:
                    fd = self.fds[k] = os.open(self.files[k], os.O_RDONLY)
        return fd

    def close(self):
        with self.lock:
            if self.pid == os.getpid():
                for fd in self.fds.values():
                    os.close(fd)
            self.fds = {}


class ShardSet:
    """The rows of MindRecord shard files, in file order then ROW_ID order.

    Attributes: files, schema (_format.Schema), header (of the first file), counts (rows per file), locs (int64
    (rows, 5): file index, raw start/end, blob start/end as absolute byte offsets).

    Raises (when built):
        RuntimeError: a missing index file, an index naming another file, a header that is not MindRecord's,
        files of different schemas, a truncated file.
    """

    def __init__(self, fn, files):
        self.fn, self.files = fn, list(files)
        schema_json, locs, counts = None, [], []
        for k, path in enumerate(self.files):
            try:
                header, size, loc = self._open_shard(fn, k, path)
            except _format.DAMAGE as e:  # whatever the damage: the reader's RuntimeError naming the file
                raise RuntimeError(f"{fn}: Invalid file, {path} or its index file is corrupt ({type(e).__name__}: "
                                   f"{e}).") from None
            if k == 0:
                self.header, schema_json = header, header["schema"][0]
            elif header["schema"][0] != schema_json:
                raise RuntimeError(f"{fn}: Invalid file, the metadata of mindrecord file: {path} is different from "
                                   f"others ({self.files[0]}), please make sure all the mindrecord files generated "
                                   "by the same script.")
            locs.append(loc)
            counts.append(len(loc))
        self.schema = _format.Schema.from_json(schema_json, self.files[0])
        self.locs = np.concatenate(locs) if locs else np.zeros((0, 5), np.int64)
        self.counts = counts
        self._splits = {}
        self._fds = _Fds(self.files)
        self._finalizer = weakref.finalize(self, _Fds.close, self._fds)

    @staticmethod
    def _open_shard(fn, k, path):
        """(header, size, row locations) of shard file k."""
        header, size = _format.read_header(path)
        idx = _format.read_index(path)
        hs, ps = int(header["header_size"]), int(header["page_size"])
        raw0 = hs + idx[:, 1] * ps
        blob0 = hs + idx[:, 4] * ps
        loc = np.stack([np.full(len(idx), k), raw0 + idx[:, 2], raw0 + idx[:, 3], blob0 + idx[:, 5],
                        blob0 + idx[:, 6]], axis=1).astype(np.int64).reshape(-1, 5)
        if len(loc):
            need = int(max(loc[:, 2].max(), loc[:, 4].max()))
            if (need > size or (loc[:, 2] - loc[:, 1] < 8).any() or (loc[:, 4] - loc[:, 3] < 8).any()
                    or (loc[:, [1, 3]] < hs).any()):
                raise RuntimeError(f"{fn}: Invalid file, {path} is truncated or its index is corrupt: its rows "
                                   f"need {need} bytes but the file has {size}.")
        return header, size, loc

    def __len__(self):
        return len(self.locs)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_fds"], state["_finalizer"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fds = _Fds(self.files)
        self._finalizer = weakref.finalize(self, _Fds.close, self._fds)

    def close(self):
        """Closes the open file descriptors (reads reopen them)."""
        self._fds.close()

    def _pread(self, k, start, end, i):
        data = os.pread(self._fds.get(k), end - start, start)
        if len(data) != end - start:
            raise RuntimeError(f"{self.fn}: Invalid file, {self.files[k]} is truncated: row {i} needs bytes up to "
                               f"{end}.")
        n = _format.read_u64(data)
        if n != len(data) - 8:
            raise RuntimeError(f"{self.fn}: Invalid file, {self.files[k]} is corrupt: row {i} says {n} bytes where "
                               f"its index gives {len(data) - 8}.")
        return data[8:]

    def where(self, i):
        """A lazy description of row i ("<file> row <r>"), formatted only when an error message uses it."""
        return _Where(self, i)

    def read(self, i, columns):
        """Row i as a dict: raw fields as Python int/float/str (as stored), blob fields as bytes or arrays;
        only `columns` (a list of field names).

        Raises:
            RuntimeError: a truncated or corrupt row (whatever the damage), naming the file and the row."""
        try:
            return self._read_row(i, columns)
        except _format.DAMAGE as e:
            raise RuntimeError(f"{self.fn}: Invalid data, {self.where(i)} is corrupt ({type(e).__name__}: "
                               f"{e}).") from None

    def _read_row(self, i, columns):
        k, r0, r1, b0, b1 = self.locs[i].tolist()
        out = {}
        key = tuple(columns)
        split = self._splits.get(key)
        if split is None:  # a few distinct column lists per reader: cache the raw/blob split
            split = self._splits[key] = ([c for c in columns if c not in self.schema.blob_fields],
                                         [c for c in columns if c in self.schema.blob_fields])
        raw_cols, blob_cols = split
        if raw_cols:
            try:
                raw = _msgpack.unpackb(self._pread(k, r0, r1, i))
            except ValueError as e:
                raise RuntimeError(f"{self.fn}: Invalid data, {self.where(i)}: its raw fields are not readable "
                                   f"MessagePack: {e}") from None
            if not isinstance(raw, dict):
                raise RuntimeError(f"{self.fn}: Invalid data, {self.where(i)}: its raw fields are not a map.")
            for c in raw_cols:
                if c not in raw:
                    raise RuntimeError(f"{self.fn}: Invalid data, {self.where(i)} has no value for field {c!r}.")
                out[c] = raw[c]
        if blob_cols:
            where = _Where(self, i, self.fn)
            parts = _format.split_blob(self.schema, self._pread(k, b0, b1, i), where)
            for c in blob_cols:
                out[c] = _format.decode_blob_field(self.schema, c, parts[c], where)
        return out


class _Where:
    def __init__(self, shards, i, prefix=None):
        self.shards, self.i, self.prefix = shards, i, prefix

    def __str__(self):
        k = int(self.shards.locs[self.i, 0])
        text = f"{self.shards.files[k]} row {self.i - sum(self.shards.counts[:k])}"
        return f"{self.prefix}: {text}" if self.prefix else text

    __format__ = lambda self, spec: format(str(self), spec)


def raw_value(fn, schema, name, value, where):
    """A stored raw field value as the Python value of its schema type (int/float/str).

    Raises:
        RuntimeError: a value that does not fit the type (a corrupt file)."""
    t = schema.fields[name][0]
    ok = ((t in ("int32", "int64") and isinstance(value, int) and not isinstance(value, bool)
           and -(1 << (31 if t == "int32" else 63)) <= value < (1 << (31 if t == "int32" else 63)))
          or (t in ("float32", "float64") and isinstance(value, (int, float)) and not isinstance(value, bool))
          or (t == "string" and isinstance(value, str)))
    if not ok:
        raise RuntimeError(f"{fn}: Invalid data, {where}: field {name!r} ({t}) holds {repr(value)[:80]}, "
                           "which is out of range or not of its type.")
    return float(value) if t.startswith("float") else value
