"""In-memory and Python sources of kiln.dataset: NumpySlicesDataset and GeneratorDataset, and `MappableSource`,
the base of every random-access source (sampler selection, sharding, num_samples, parallel reads)."""
import inspect
import itertools
import numbers
import threading
import traceback

import numpy as np

from ..samplers import DistributedSampler, _group_shards, select_sampler
from ._common import check_bool, check_workers, column_list, to_array
from .datasets import Dataset
from .operations import RowPool
from .workers import call_user, raise_user_error

_INT64_MAX = 2**63 - 1


def _check_source_args(cls, num_samples, shuffle, num_shards, shard_id):
    if num_samples is not None:
        if not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool):
            raise TypeError(f"{cls}: num_samples must be of type int, but got {num_samples!r} "
                            f"({type(num_samples).__name__}).")
        if not 0 <= num_samples <= _INT64_MAX:
            raise ValueError(f"{cls}: num_samples exceeds the boundary between 0 and {_INT64_MAX}! Got {num_samples}.")
    check_bool(cls, "shuffle", shuffle, allow_none=True)
    if (num_shards is None) != (shard_id is None):
        raise ValueError(f"{cls}: num_shards and shard_id need to be passed in together.")
    if num_shards is not None:
        for name, v in (("num_shards", num_shards), ("shard_id", shard_id)):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool):
                raise TypeError(f"{cls}: {name} must be of type int, but got {v!r} ({type(v).__name__}).")
        if num_shards < 1:
            raise ValueError(f"{cls}: num_shards must be a positive int, but got {num_shards}.")
        if not 0 <= shard_id < num_shards:
            raise ValueError(f"{cls}: shard_id should be less than num_shards and non-negative, but got shard_id "
                             f"{shard_id} with num_shards {num_shards}.")


class MappableSource(Dataset):
    """Base of the random-access sources: rows 0..n-1 read by index in the order the sampler gives.

    Subclasses define `_num_rows()`, `_read(i)` (a tuple of arrays) and `get_col_names()`."""

    _parallel_processes = False

    def __init__(self, cls, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None):
        super().__init__([], check_workers(cls, num_parallel_workers))
        _check_source_args(cls, num_samples, shuffle, num_shards, shard_id)
        if sampler is None and num_shards is None and shard_id is None:
            num_shards, shard_id = _group_shards() or (None, None)  # data-parallel: this process's shard
        self._cls = cls
        self.sampler = self._attach(select_sampler(cls, num_samples or None, sampler, shuffle, num_shards, shard_id))
        self.num_shards, self.shard_id = num_shards, shard_id

    def _attach(self, sampler):
        """The sampler, given this source's row labels when it needs them (PKSampler); ValueError for a source
        without labels (MindSpore: "GeneratorDataset doesn't support PKSampler.")."""
        if getattr(sampler, "_needs_classes", False):
            if getattr(self, "_class_ids", None) is None:
                raise ValueError(f"{self._cls} doesn't support PKSampler.")
            sampler._classes_of = self._class_ids
        return sampler

    def is_shuffled(self):
        return self.sampler._salted or (isinstance(self.sampler, DistributedSampler) and self.sampler.shuffle)

    def is_sharded(self):
        return isinstance(self.sampler, DistributedSampler) or bool(self.num_shards)

    def use_sampler(self, new_sampler):
        """Replaces the source's sampler (a Sampler or a list of indices) in place.

        Raises:
            TypeError: not a sampler.
        """
        if new_sampler is None:
            raise TypeError(f"{self._cls}: use_sampler needs a sampler, but got None.")
        self.sampler = self._attach(select_sampler(self._cls, None, new_sampler, None, None, None))
        self.num_shards = self.shard_id = None
        self._size_cache = None

    def _num_rows(self):
        raise TypeError(f"{type(self).__name__} does not define its number of rows.")

    def _read(self, i):
        raise TypeError(f"{type(self).__name__} does not define how to read a row.")

    def _compute_size(self):
        return self.sampler._size(self._num_rows())

    def _reader(self):
        """The function of one index giving the row (picklable state when read in worker processes)."""
        return self._read

    def _batch_reader(self):
        """A function of an int64 array of row indices giving those rows stacked per column (a tuple of arrays,
        what np.stack of the rows read one by one gives), or None when the source reads row by row only."""
        return None

    def _make_batches(self, ctx, batch_size, drop_remainder):
        """Note [batched read]: `source.batch(n)` (an int batch size, no per_batch_map) over a source that has a
        batch reader (NumpySlicesDataset of array columns) reads each batch at once — the sampler's indices of the
        epoch cut into runs of `batch_size`, each run read by one fancy index per column — instead of reading
        rows one by one and stacking them (~7 us per row in Python). The indices, their order and the random
        stream (`ctx.rng()` drawn here as `_make` draws it) are the per-row path's, so the batches are the same
        arrays bit for bit, every epoch. Returns the epoch function of the batched rows, or None (no batch reader,
        parallel reads): the caller then batches `_make`'s rows."""
        read_many = self._batch_reader()
        if read_many is None or (self.num_parallel_workers or 1) > 1:
            return None
        rng = ctx.rng()
        sampler, n = self.sampler, self._num_rows()
        epochs = itertools.count()

        def epoch():
            idx = sampler._indices(n, rng, next(epochs))
            total = len(idx)
            stop = total - total % batch_size if drop_remainder else total
            for start in range(0, stop, batch_size):
                yield read_many(idx[start:start + batch_size])

        return epoch

    def _make(self, ctx):
        rng = ctx.rng()
        sampler, n = self.sampler, self._num_rows()
        epochs = itertools.count()
        runner = RowPool(ctx, self._reader(), self.num_parallel_workers, self._parallel_processes,
                         f"{self._cls}: reading rows")
        read = self._reader()

        def epoch():
            idx = sampler._indices(n, rng, next(epochs))
            if runner.parallel:
                yield from runner.run(int(i) for i in idx)
            else:
                for i in idx:
                    yield read(int(i))

        return epoch


def _slice_columns(data):
    """NumpySlicesDataset's data as (list of per-column sequences, default names)."""
    if isinstance(data, dict):
        cols = [data[k] for k in data]
        return cols, [str(k) for k in data]
    if isinstance(data, tuple):
        return list(data), [f"column_{i}" for i in range(len(data))]
    if isinstance(data, (list, np.ndarray)):
        return [data], ["column_0"]
    if hasattr(data, "asnumpy"):
        return [data.asnumpy()], ["column_0"]
    raise TypeError(f"NumpySlicesDataset: data must be a list, tuple, dict or np.ndarray, but got "
                    f"{type(data).__name__}.")


def _as_column(values, name):
    """A column as an array sliced along axis 0, or a list of per-row arrays when rows differ in shape."""
    if hasattr(values, "asnumpy"):
        values = values.asnumpy()
    if hasattr(values, "values") and not isinstance(values, (dict, np.ndarray)):  # pandas Series
        values = values.values
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged nested lists
        arr = None
    if arr is not None and arr.dtype != object:
        if arr.ndim == 0:
            raise ValueError(f"NumpySlicesDataset: column {name!r} is a scalar {values!r}; expected a sequence to "
                             "slice along its first dimension.")
        return arr
    if isinstance(values, (list, tuple)):
        return [to_array(v, f"NumpySlicesDataset: column {name!r}") for v in values]
    raise TypeError(f"NumpySlicesDataset: column {name!r} holds objects of types that are not numbers, bool or str.")


class NumpySlicesDataset(MappableSource):
    """Rows sliced from in-memory data along the first dimension.

    Args:
        data (list | tuple | dict | np.ndarray): a list or an array is one column; a tuple is one column per element;
            a dict is one column per key (in key order). Python ints become int64, floats float64.
        column_names (str | list[str], optional): default: the dict keys, else column_0, column_1, ...
        num_samples (int, optional): rows per epoch (None: all).
        num_parallel_workers (int, optional): accepted (reads are in-memory slices).
        shuffle (bool, optional): None (default) and True: a new random order every epoch; False: in order.
        sampler (Sampler | list[int], optional): excludes num_samples/shuffle/num_shards/shard_id.
        num_shards, shard_id (int, optional): read only shard `shard_id` of `num_shards` (DistributedSampler).

    Raises:
        TypeError: unsupported data, bad argument types. ValueError: columns of different lengths ("Data length in
        each column is not equal."), column_names of the wrong count, conflicting sampler arguments.
    """

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None):
        super().__init__("NumpySlicesDataset", num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id)
        self.num_parallel_workers = 1
        raw, names = _slice_columns(data)
        if column_names is not None:
            names = column_list("NumpySlicesDataset", "column_names", column_names)
            if len(names) != len(raw):
                raise ValueError(f"NumpySlicesDataset: {len(names)} column_names {names} for {len(raw)} columns.")
        if not raw:
            raise ValueError("NumpySlicesDataset: data has no columns.")
        self._columns = [_as_column(c, n) for c, n in zip(raw, names)]
        lengths = {len(c) for c in self._columns}
        if len(lengths) != 1:
            raise ValueError(f"NumpySlicesDataset: Data length in each column is not equal: "
                             f"{[len(c) for c in self._columns]}.")
        self._n = lengths.pop()
        self._names = names

    def get_col_names(self):
        return list(self._names)

    def _num_rows(self):
        return self._n

    def _read(self, i):
        return tuple(np.asarray(c[i]) for c in self._columns)

    def _batch_reader(self):
        # Numbers and bools only: a column of rows of different shapes is a list of arrays, and a text row read
        # alone is as wide as its own string (a batch of them as wide as its longest), not as the column.
        if not all(isinstance(c, np.ndarray) and c.dtype.kind in "biufc" for c in self._columns):
            return None
        return _TakeRows(self._columns)


class _TakeRows:
    """Rows `idx` of each array column: one fancy index per column (a fresh C-contiguous array, as np.stack of the
    rows gives)."""

    def __init__(self, columns):
        self.columns = columns

    def __call__(self, idx):
        return tuple(c[idx] for c in self.columns)


def _convert_row(row, ncols, where):
    """A source's row as a tuple of arrays (MindSpore's rules: numbers/str/arrays/Tensors are one column, any other
    iterable is one column per item)."""
    if isinstance(row, (numbers.Number, str, bytes, np.ndarray, np.generic)) or hasattr(row, "asnumpy"):
        vals = [row]
    elif isinstance(row, dict):  # one column holding the dict (MindSpore 2.x's _convert_row)
        vals = [row]
    else:
        try:
            vals = list(row)
        except TypeError:
            raise TypeError(f"{where}: a row of type {type(row).__name__} is neither a value nor a tuple of "
                            "values.") from None
    if len(vals) != ncols:
        raise RuntimeError(f"{where}: the source gave a row of {len(vals)} columns, but column_names names "
                           f"{ncols}.")
    return tuple(to_array(v, where, allow_dict=True) for v in vals)


def _is_one_shot(source):
    """True for an iterator that can be walked only once (a generator object, iter(list), a file object...)."""
    try:
        return hasattr(source, "__next__") and iter(source) is source
    except Exception:  # noqa: BLE001 — an __iter__ that fails is not a one-shot iterator we can replay
        return False


class _ReplayCache:
    """The rows of a one-shot iterator source, read from it once (lazily, as far as anyone has asked) and kept, so
    that every epoch (and get_dataset_size, which counts them) sees all of them, as MindSpore replays a generator
    object. Holds every row of the source in memory, as MindSpore does; thread-safe (epochs of several iterators
    may pull at once)."""

    def __init__(self, source, ncols, cast):
        self._it, self._ncols, self._cast = source, ncols, cast
        self._rows = []
        self._done = False
        self._lock = threading.Lock()

    def row(self, k):
        """Row k (a tuple of arrays), or None past the last row."""
        with self._lock:
            while k >= len(self._rows) and not self._done:
                try:
                    value = next(self._it)
                except StopIteration:
                    self._done = True
                    self._it = None
                    break
                except Exception as e:  # noqa: BLE001 — the user's source failed: report with its traceback
                    raise_user_error("GeneratorDataset: the source", traceback.format_exc(), e)
                row = _convert_row(value, self._ncols, "GeneratorDataset")
                self._rows.append(self._cast(row) if self._cast else row)
            return self._rows[k] if k < len(self._rows) else None


class _RandomAccessReader:
    """source[i] converted to a row (module-level class so that worker processes can run it)."""

    def __init__(self, source, ncols, cast):
        self.source, self.ncols, self.cast = source, ncols, cast

    def __call__(self, i):
        try:
            value = self.source[i]
        except Exception as e:  # noqa: BLE001 — the user's source failed: report with its traceback
            raise_user_error(f"GeneratorDataset: source[{i}]", traceback.format_exc(), e)
        row = _convert_row(value, self.ncols, "GeneratorDataset")
        return self.cast(row) if self.cast else row


class GeneratorDataset(MappableSource):
    """Rows from Python: a random-access source (with `__getitem__` and `__len__`), an iterable, or a callable
    returning an iterator (a generator function), called anew every epoch. A one-shot iterator (a generator
    object, iter(list)) is read once and its rows kept in memory, so every epoch (and get_dataset_size) sees all of
    them, as MindSpore replays a generator object.

    Each row is a tuple (or list) with one value per column, or a single value for one column; values become NumPy
    arrays (Python int → int64, float → float64, kiln Tensors through asnumpy).

    Args:
        source: the rows, as above.
        column_names (str | list[str]): required.
        column_types (list[kiln dtype], optional): cast each column to this dtype.
        schema: not supported (give column_names); must be None.
        num_samples (int, optional): rows per epoch (None: all).
        num_parallel_workers (int): workers reading a random-access source (default 1).
        shuffle (bool, optional): random-access sources: None/True shuffle every epoch (default), False in order;
            ignored for iterables, as MindSpore.
        sampler, num_shards, shard_id: random-access sources only (ValueError otherwise).
        python_multiprocessing (bool): with num_parallel_workers > 1, read in worker processes (default True),
            else threads. The source is handed to the workers by fork, so it need not be picklable on Linux.
        max_rowsize: accepted for compatibility (rows travel pickled).
        batch_sampler (iterable of lists of int, optional): each epoch, one output row per index list: the source's
            rows at those indices stacked per column (a batched source; get_batch_size() is -1). Excludes
            num_samples, shuffle, num_shards, shard_id and sampler.
        collate_fn (callable, optional): with batch_sampler, fn(*per-column lists of arrays) -> the batch's columns
            (replaces the stacking).

    Raises:
        ValueError: no column_names, sampler/sharding on an iterable source, conflicting sampler arguments,
        batch_sampler with those arguments or an iterable source, collate_fn without batch_sampler.
        TypeError: source neither random-access, iterable nor callable; bad argument types. RuntimeError (when
        iterating): the source raised (message holds its traceback), a row with the wrong number of columns.
    """

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=None, batch_sampler=None, collate_fn=None):
        if batch_sampler is not None:
            if any(a is not None for a in (num_samples, shuffle, num_shards, shard_id, sampler)):
                raise ValueError("GeneratorDataset: batch_sampler is mutually exclusive with num_samples, shuffle, "
                                 "num_shards, shard_id and sampler.")
            if isinstance(batch_sampler, (str, bytes)) or not hasattr(batch_sampler, "__iter__"):
                raise TypeError(f"GeneratorDataset: batch_sampler must be an iterable of lists of indices, but got "
                                f"{type(batch_sampler).__name__}.")
            if not (hasattr(source, "__getitem__") and hasattr(source, "__len__")):
                raise ValueError("GeneratorDataset: batch_sampler needs a random-access source (__getitem__ and "
                                 "__len__).")
            shuffle = False
        if collate_fn is not None:
            if batch_sampler is None:
                raise ValueError("GeneratorDataset: collate_fn can be specified only when batch_sampler is set.")
            if not callable(collate_fn):
                raise TypeError(f"GeneratorDataset: collate_fn must be callable, but got {type(collate_fn).__name__}.")
        self.batch_sampler, self.collate_fn = batch_sampler, collate_fn
        if schema is not None:
            raise ValueError("GeneratorDataset: schema is not supported by Kiln; give column_names (and "
                             "column_types).")
        if column_names is None:
            raise ValueError("GeneratorDataset: Neither columns_names nor schema are provided.")
        self._names = column_list("GeneratorDataset", "column_names", column_names, allow_none=False)
        self._random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not self._random_access:
            if sampler is not None:
                raise ValueError("GeneratorDataset: sampler is not supported if source does not have attribute "
                                 "'__getitem__'.")
            if num_shards is not None:
                raise ValueError("GeneratorDataset: num_shards is not supported if source does not have attribute "
                                 "'__getitem__'.")
            if not (callable(source) or hasattr(source, "__iter__")):
                raise TypeError(f"GeneratorDataset: source must be random-accessible (__getitem__ and __len__), "
                                f"iterable or callable, but got {type(source).__name__}.")
        super().__init__("GeneratorDataset", num_samples, num_parallel_workers,
                         shuffle if self._random_access else False, sampler,
                         num_shards, shard_id)
        self._num_samples = num_samples or None
        self.python_multiprocessing = check_bool("GeneratorDataset", "python_multiprocessing",
                                                 python_multiprocessing)
        self._parallel_processes = self.python_multiprocessing
        if max_rowsize is not None:
            for v in (max_rowsize if isinstance(max_rowsize, (list, tuple)) else [max_rowsize]):
                if not isinstance(v, int) or isinstance(v, bool):
                    raise TypeError(f"GeneratorDataset: max_rowsize must be int or list of int, got {max_rowsize!r}.")
        self.source = source
        self._cast = None
        self._replay = None
        if column_types is not None:
            from ...common import dtype as mstype
            types = column_types if isinstance(column_types, (list, tuple)) else [column_types]
            if len(types) != len(self._names):
                raise ValueError(f"GeneratorDataset: {len(types)} column_types for {len(self._names)} columns.")
            try:
                np_types = [np.dtype(mstype.dtype_to_nptype(t)) for t in types]
            except Exception as e:  # noqa: BLE001 (whatever the bad value raises: re-raised as TypeError)
                raise TypeError(f"GeneratorDataset: column_types must be kiln dtypes, got {column_types!r}: "
                                f"{e}") from None
            self._cast = _Caster(np_types)
        if not self._random_access and _is_one_shot(source):
            self._replay = _ReplayCache(source, len(self._names), self._cast)

    def get_col_names(self):
        return list(self._names)

    def _num_rows(self):
        if not self._random_access:
            raise TypeError("GeneratorDataset: an iterable source has no random access.")
        n = len(self.source)
        if not isinstance(n, numbers.Integral) or n < 0:
            raise TypeError(f"GeneratorDataset: len(source) must be a non-negative int, got {n!r}.")
        return int(n)

    def _reader(self):
        return _RandomAccessReader(self.source, len(self._names), self._cast)

    def get_batch_size(self):
        return -1 if self.batch_sampler is not None else 1

    def _compute_size(self):
        if self.batch_sampler is not None:
            return sum(1 for _ in self.batch_sampler)
        if self._random_access:
            return super()._compute_size()
        if hasattr(self.source, "__len__") and not inspect.isgeneratorfunction(self.source):
            n = len(self.source)
            return n if self._num_samples is None else min(n, self._num_samples)
        return self._count_rows()

    def _make(self, ctx):
        if self.batch_sampler is not None:
            return self._make_batched(ctx)
        if self._random_access:
            return super()._make(ctx)
        source, ncols, limit, cast = self.source, len(self._names), self._num_samples, self._cast
        where = "GeneratorDataset"
        if self._replay is not None:
            replay = self._replay

            def epoch():
                k = 0
                while limit is None or k < limit:
                    row = replay.row(k)
                    if row is None:
                        return
                    yield row
                    k += 1

            return epoch

        def epoch():
            it = call_user(f"{where}: creating the source's iterator",
                           lambda: iter(source() if callable(source) and not hasattr(source, "__iter__") else source))
            k = 0
            while limit is None or k < limit:
                try:
                    row = next(it)
                except StopIteration:
                    return
                except Exception as e:  # noqa: BLE001 — the user's source failed: report with its traceback
                    raise_user_error(f"{where}: the source", traceback.format_exc(), e)
                row = _convert_row(row, ncols, where)
                yield cast(row) if cast else row
                k += 1

        return epoch


    def _make_batched(self, ctx):
        """Epochs of batches: for each index list of batch_sampler, the rows stacked per column, or collate_fn of
        the per-column lists (MindSpore's batch_sampler/collate_fn)."""
        read = _BatchReader(self._reader(), self.collate_fn, self._names)
        runner = RowPool(ctx, read, self.num_parallel_workers, self._parallel_processes,
                         "GeneratorDataset: batch_sampler")
        batch_sampler, n = self.batch_sampler, self._num_rows()

        def batches():
            for idx in batch_sampler:
                if isinstance(idx, (str, bytes)) or not hasattr(idx, "__iter__"):
                    raise TypeError(f"GeneratorDataset: batch_sampler must yield lists of indices, got {idx!r}.")
                idx = [int(i) for i in idx]
                bad = [i for i in idx if not -n <= i < n]
                if bad:
                    raise IndexError(f"GeneratorDataset: batch_sampler index {bad[0]} is out of range for a source "
                                     f"of {n} rows.")
                yield [i % n for i in idx]

        return lambda: runner.run(batches())


class _BatchReader:
    def __init__(self, read, collate_fn, names):
        self.read, self.collate_fn, self.names = read, collate_fn, names

    def __call__(self, idx):
        from .operations import _stack
        rows = [self.read(i) for i in idx]
        cols = [[r[k] for r in rows] for k in range(len(self.names))]
        if self.collate_fn is None:
            return tuple(_stack(c, name, "GeneratorDataset: batch_sampler") for c, name in zip(cols, self.names))
        what = "GeneratorDataset: collate_fn"
        outs = call_user(what, self.collate_fn, *cols)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        if len(outs) != len(self.names):
            raise RuntimeError(f"{what} returned {len(outs)} columns for {len(self.names)} column_names.")
        return tuple(to_array(v, what, allow_dict=True) for v in outs)


class _Caster:
    def __init__(self, types):
        self.types = types

    def __call__(self, row):
        return tuple(a.astype(t, copy=False) for a, t in zip(row, self.types))

