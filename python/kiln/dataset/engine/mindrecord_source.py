"""MindDataset: the rows of MindRecord files (kiln.mindrecord; Note [MindRecord format] in kiln/mindrecord/_format.py)
as a random-access source of kiln.dataset."""
import numbers

import numpy as np

from ...mindrecord import _reader
from ..samplers import DistributedSampler, RandomSampler
from ._common import ColumnError, column_list
from .file_sources import Shuffle, _GroupShuffleSampler
from .sources import MappableSource, _check_source_args

_CLS = "MindDataset"


def _column_array(t, shape, value):
    """A stored value (already decoded) as MindDataset's output array for a field of type t / shape."""
    if shape is not None:
        return value  # decoded array: schema dtype and shape (-1 resolved)
    if t == "bytes":
        return np.array([value])  # MindSpore: shape (1,), dtype S<len>
    if t == "string":
        return np.array(value)
    return np.array(value, dtype=t)


def _padded_array(name, t, shape, value):
    """padded_sample[name] as the column's output array.

    Raises:
        TypeError / ValueError: a value that does not fit the field's type or shape."""
    where = f"{_CLS}: padded_sample[{name!r}]"
    if t == "bytes":
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{where} must be bytes (the field's type), but got {type(value).__name__}.")
        return np.array([bytes(value)])
    if t == "string":
        if not isinstance(value, str):
            raise TypeError(f"{where} must be a str (the field's type), but got {type(value).__name__}.")
        return np.array(value)
    try:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and t.startswith("int")):
            raise TypeError
        arr = arr.astype(t)
    except (TypeError, ValueError):
        raise TypeError(f"{where} must be {t} numbers, but got {value!r:.60}.") from None
    if shape is None:
        if arr.ndim:
            raise ValueError(f"{where} must be a scalar (the field has no shape), but got shape {arr.shape}.")
        return arr
    try:
        return arr.reshape(shape)
    except ValueError:
        raise ValueError(f"{where} has shape {arr.shape}, which does not fit the field's shape "
                         f"{list(shape)}.") from None


class _DrawSampler(RandomSampler):
    """MindDataset's shuffle with num_samples: num_samples rows drawn with replacement every epoch, even more than
    the files hold (MindSpore 2.10: 30 rows from 10)."""

    def __init__(self, num_samples):
        super().__init__(replacement=True, num_samples=num_samples)

    def _size(self, n):
        return self.num_samples if n else 0


class MindDataset(MappableSource):
    """Rows of MindRecord files (written by kiln.mindrecord.FileWriter or by MindSpore).

    Columns: the schema's fields sorted by name (or `columns_list`, in its order). int32/int64/float32/float64
    fields are 0-d arrays of that dtype, string fields 0-d str arrays ('<U'), bytes fields arrays of shape (1,) and
    dtype bytes ('S<n>'), array fields arrays of the schema's dtype and shape (-1 resolved from the stored size),
    as MindSpore 2.10.

    Args:
        dataset_files (str | list[str]): one shard file (all shards of its data set are read, from the same folder,
            in the order the file's header lists them) or a list of files (exactly those, in that order).
        columns_list (list[str], optional): the columns to read (default: all).
        num_parallel_workers (int, optional): threads reading rows (default: one, in the iterating thread).
        shuffle (bool | Shuffle, optional): None/True/Shuffle.GLOBAL (default): all rows in a new random order every
            epoch; Shuffle.FILES: the file order only; Shuffle.INFILE: rows within each file, files in order; False:
            in order (file order, then row order).
        num_shards, shard_id (int, optional): read one shard of the rows: shard k reads positions k, k+num_shards,
            ... (MindSpore's default strategy), ceil(rows / num_shards) rows each.
        sampler (Sampler | list[int], optional): excludes shuffle, num_samples and the shard arguments.
        padded_sample (dict, optional): a row (one value per column of columns_list) appended num_padded times, so
            that (rows + num_padded) divides by num_shards. Needs columns_list, num_padded and a DistributedSampler
            (num_shards/shard_id).
        num_padded (int, optional): how many padded rows (default None: 0).
        num_samples (int, optional): rows per epoch (default: all). With the global shuffle (and no shards), the
            rows are drawn with replacement, num_samples of them even beyond the rows the files hold, as MindSpore
            2.10; otherwise at most the rows available. Not with Shuffle.FILES/INFILE.
        cache: must be None (Kiln has no cache server).

    Raises:
        TypeError: bad argument types. ValueError: a file missing, an empty list, conflicting sampler arguments,
        num_samples with Shuffle.FILES/INFILE, a padded_sample not matching columns_list, cache given.
        ColumnError (ValueError and RuntimeError): a column not in the schema. RuntimeError: an index file missing or
        not matching its file (renamed), files of different schemas, a truncated file, padded_sample without
        columns_list/num_padded, rows + num_padded not divisible by num_shards.
    """

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None, cache=None):
        if cache is not None:
            raise ValueError(f"{_CLS}: cache (a DatasetCache) is not supported by Kiln; got {cache!r}, expected "
                             "None.")
        if shuffle is not None and not isinstance(shuffle, (bool, Shuffle)):
            raise TypeError(f"{_CLS}: shuffle must be of boolean or enum of 'Shuffle' values like 'Shuffle.GLOBAL' "
                            f"or 'Shuffle.FILES' or 'Shuffle.INFILE', but got {shuffle!r}.")
        mode = shuffle if isinstance(shuffle, Shuffle) else None
        if mode is not None and sampler is not None:
            raise ValueError(f"{_CLS}: Conflicting arguments during sampler assignments: sampler and shuffle "
                             f"{shuffle}.")
        if mode in (Shuffle.FILES, Shuffle.INFILE) and num_samples:
            raise ValueError("'Shuffle.FILES' or 'Shuffle.INFILE' and 'num_samples' cannot be specified at the same "
                             "time.")
        self._set = _reader.ShardSet(_CLS, _reader.expand_files(_CLS, dataset_files))
        schema = self._set.schema
        names = column_list(_CLS, "columns_list", columns_list)
        if names is not None:
            for c in names:
                if c not in schema.fields:
                    raise ColumnError(f"{_CLS}: Invalid data, column name: {c} can not found in schema "
                                      f"{sorted(schema.fields)}. Please check the 'column_list'.")
        self._names = names or list(schema.fields)
        self._kinds = [schema.fields[c] for c in self._names]
        self._padded = self._check_padding(padded_sample, num_padded, columns_list)
        self._num_padded = num_padded or 0
        flag = None if mode is not None else shuffle
        if mode in (Shuffle.FILES, Shuffle.INFILE):
            _check_source_args(_CLS, num_samples, None, num_shards, shard_id)
            starts = np.cumsum([0] + self._set.counts)
            groups = [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:])]
            super().__init__(_CLS, None, num_parallel_workers, None,
                             _GroupShuffleSampler(groups, mode, num_shards, shard_id, None))
            self.num_shards, self.shard_id = num_shards, shard_id
        elif sampler is None and flag is not False and num_samples and num_shards is None:
            _check_source_args(_CLS, num_samples, None, num_shards, shard_id)
            super().__init__(_CLS, None, num_parallel_workers, None, _DrawSampler(num_samples))
        else:
            super().__init__(_CLS, num_samples, num_parallel_workers, flag, sampler, num_shards, shard_id)
        if self._num_padded:
            if not isinstance(self.sampler, DistributedSampler):
                raise RuntimeError(f"{_CLS}: When the padded sample logic is enabled, the sampler must be distributed "
                                   "sampling: pass num_shards and shard_id (or a DistributedSampler).")
            total = len(self._set) + self._num_padded
            if total % self.sampler.num_shards:
                raise RuntimeError(f"{_CLS}: Invalid data, the number of rows {len(self._set)} plus num_padded "
                                   f"{self._num_padded} must be divisible by num_shards {self.sampler.num_shards}.")

    def _check_padding(self, padded_sample, num_padded, columns_list):
        if num_padded is not None and (not isinstance(num_padded, numbers.Integral) or isinstance(num_padded, bool)):
            raise TypeError(f"{_CLS}: num_padded must be of type int, but got {num_padded!r}.")
        if padded_sample is None:
            if num_padded is not None:
                raise RuntimeError("num_padded is specified but padded_sample is not.")
            return None
        if not isinstance(padded_sample, dict):
            raise TypeError(f"{_CLS}: padded_sample must be a dict, but got {type(padded_sample).__name__}.")
        if num_padded is None:
            raise RuntimeError("padded_sample is specified and requires num_padded as well.")
        if num_padded < 0:
            raise ValueError(f"num_padded is invalid, num_padded={num_padded}.")
        if columns_list is None:
            raise RuntimeError("padded_sample is specified and requires columns_list as well.")
        missing = [c for c in self._names if c not in padded_sample]
        if missing:
            raise ValueError(f"padded_sample cannot match columns_list: it has no value for {missing}.")
        return tuple(_padded_array(c, t, s, padded_sample[c]) for c, (t, s) in zip(self._names, self._kinds))

    def get_col_names(self):
        return list(self._names)

    def _num_rows(self):
        return len(self._set) + self._num_padded

    def _read(self, i):
        n = len(self._set)
        if i >= n:
            return tuple(a.copy() for a in self._padded)
        row = self._set.read(i, self._names)
        schema = self._set.schema
        out = []
        for c, (t, shape) in zip(self._names, self._kinds):
            v = row[c]
            if c in schema.raw_fields:
                v = _reader.raw_value(_CLS, schema, c, v, self._set.where(i))
            out.append(_column_array(t, shape, v))
        return tuple(out)

    def __getitem__(self, index):
        """Row `index` of the files (file order, no sampler), as a list of arrays (MindSpore's random access).

        Raises:
            TypeError: index not an int. ValueError: a negative index. IndexError: index >= the number of rows."""
        if not isinstance(index, numbers.Integral) or isinstance(index, bool):
            raise TypeError(f"{_CLS}: index must be of type int, but got {index!r} ({type(index).__name__}).")
        if index < 0:
            raise ValueError(f"index cannot be negative, but got {index}.")
        if index >= self._num_rows():
            raise IndexError(f"{_CLS}: index {index} is out of range for {self._num_rows()} rows.")
        return list(self._read(int(index)))
