"""`Dataset`, the base of every kiln.dataset pipeline node (MindSpore's `mindspore.dataset.Dataset`).

A dataset is an immutable description (a tree of nodes). Each iterator builds its own execution state from it:
`_make(ctx)` returns a function that starts one epoch and returns a generator of rows; a row is a tuple of
np.ndarray, one per column. Random nodes draw from a Generator given by `ctx.rng()` (seeded by
`kiln.dataset.config.set_seed`), which carries on from epoch to epoch, so every epoch is shuffled anew and the same
seed gives the same orders in a new process."""
import numbers
import warnings

import numpy as np

from ._common import INT32_MAX, check_bool
from .iterators import DictIterator, TupleIterator


class Dataset:
    """Base class of kiln.dataset sources and operations; its methods build pipelines (each returns a new dataset).

    Args:
        children (list[Dataset]): the input datasets of this node.
        num_parallel_workers (int, optional): workers of this node (None: config default).
    """

    def __init__(self, children=(), num_parallel_workers=None):
        self.children = list(children)
        self.num_parallel_workers = num_parallel_workers
        self._size_cache = None

    # ---- what a node defines ------------------------------------------------------------------------------
    def get_col_names(self):
        """The column names, in order (list of str)."""
        return self.children[0].get_col_names()

    def _make(self, ctx):
        """Returns epoch_fn: each call starts one epoch and returns an iterator of row tuples."""
        return self.children[0]._make(ctx)

    def _compute_size(self):
        """Rows (batches) per epoch; the default counts one epoch."""
        return self._count_rows()

    def _infinite(self):
        """True when an epoch never ends (an infinite repeat below, not bounded by a take)."""
        return any(c._infinite() for c in self.children)

    # ---- information ----------------------------------------------------------------------------------------
    def _count_rows(self):
        from ._common import Ctx
        if self._infinite():
            raise RuntimeError(f"{type(self).__name__}: get_dataset_size cannot count the rows of an endless "
                               "pipeline (an infinite repeat below, not bounded by take).")
        ctx = Ctx()
        try:
            gen = self._make(ctx)()
            try:
                return sum(1 for _ in gen)
            finally:
                gen.close()
        finally:
            ctx.close()

    def get_dataset_size(self):
        """Number of rows (batches after `batch`) in one epoch; computed once and cached. A pipeline whose size
        cannot be derived (filter, an iterable source without __len__, a callable batch size) is run once to count.
        An infinite `repeat()` reports one pass of its input (as MindSpore); a `take(n)` above it gives n (MindSpore
        2.10 reports one pass there too, which disagrees with the rows produced; Kiln gives the rows produced).

        Raises:
            RuntimeError: the size must be counted by running an endless pipeline (filter over repeat()).
        """
        if self._size_cache is None:
            self._size_cache = int(self._compute_size())
            if self._size_cache == 0:
                warnings.warn(f"{type(self).__name__}: the dataset size is 0 (an empty epoch).", stacklevel=2)
        return self._size_cache

    def __len__(self):
        """len(dataset) is get_dataset_size(), as MindSpore."""
        return self.get_dataset_size()

    def is_shuffled(self):
        """True when a node of the pipeline shuffles (a shuffle op or a random sampler)."""
        return any(c.is_shuffled() for c in self.children)

    def is_sharded(self):
        """True when the pipeline reads one shard of a source (num_shards / DistributedSampler)."""
        return any(c.is_sharded() for c in self.children)

    def apply(self, apply_func):
        """apply_func(self), which must return a Dataset (a reusable pipeline fragment).

        Raises:
            TypeError: apply_func is not callable or does not return a Dataset.
        """
        if not callable(apply_func):
            raise TypeError(f"apply: apply_func must be a function, but got {type(apply_func).__name__}.")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply: apply_func must return a Dataset, but it returned {type(out).__name__}.")
        return out

    def get_batch_size(self):
        """The batch size of the nearest `batch` above the source (1 without batch)."""
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self):
        """The count of the nearest `repeat` (-1: infinite; 1 without repeat)."""
        return self.children[0].get_repeat_count() if self.children else 1

    def _first_row(self):
        it = TupleIterator(self, 1, True, False)
        try:
            return next(it)
        except StopIteration:
            raise RuntimeError(f"{type(self).__name__}: the dataset is empty, it has no row to take the shapes and "
                               "types from.") from None
        finally:
            it.stop()

    def output_shapes(self, estimate=False):
        """Shapes of the columns of the first row (list of list of int), as MindSpore (which also runs the
        pipeline for one row). Raises RuntimeError on an empty dataset."""
        return [[0] if isinstance(a, dict) else list(a.shape) for a in self._first_row()]  # a dict: [0], as MS

    def output_types(self):
        """NumPy dtypes of the columns of the first row (list of np.dtype; object for a column of dicts, as
        MindSpore)."""
        return [np.dtype(object) if isinstance(a, dict) else a.dtype for a in self._first_row()]

    def save(self, file_name, num_files=1, file_type="mindrecord"):
        """Writes one epoch of the pipeline into MindRecord files (read them with MindDataset), as MindSpore.

        The schema comes from the first row: 0-d numbers become scalar fields, arrays fields of shape
        [-1, *their other dims] (only the first dimension may vary between rows), one str a string field, one
        bytes value a bytes field. Casts (MindSpore's): bool, int8, uint8, int16, uint16, int32 -> int32; uint32,
        int64, uint64 -> int64 (uint64 may wrap); float16, float32 -> float32; float64 -> float64.

        Args:
            file_name (str): the file (num_files > 1: file_name0, file_name1, ...), plus .db index files.
            num_files (int): number of files, in [1, 1000] (default 1); rows are spread over them.
            file_type (str): 'mindrecord' (the only format).

        Raises:
            TypeError / ValueError: bad arguments. RuntimeError: the files exist, an empty dataset, a column of
            several strings or bytes values, a later row not matching the first row's types or dims.
        """
        from .mindrecord_save import save
        save(self, file_name, num_files, file_type)

    # ---- iterators ------------------------------------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=False):
        """An iterator yielding each row as a list of kiln Tensors (np.ndarray with output_numpy=True).

        Args:
            columns (list[str], optional): the columns to yield, in this order (default: all).
            num_epochs (int): epochs the iterator runs (-1: as many as asked for); each epoch ends with
                StopIteration, the next loop over the same iterator runs the next epoch.
            output_numpy (bool): yield np.ndarray instead of Tensors (text columns are always np.ndarray).
            do_copy (bool): with output_numpy, yield copies of the pipeline's arrays.

        Raises:
            TypeError/ValueError: bad arguments, unknown column. RuntimeError: iterating past num_epochs.
        """
        return TupleIterator(self, num_epochs, output_numpy, do_copy, columns)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=False):
        """As create_tuple_iterator, yielding dicts {column name: value}."""
        return DictIterator(self, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        """`for row in dataset`: one epoch of a tuple iterator (lists of kiln Tensors)."""
        return self.create_tuple_iterator(num_epochs=1)

    # ---- operations -----------------------------------------------------------------------------------------
    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None, **kwargs):
        """Applies `operations` (a callable or a list of callables, applied in order, each taking the previous
        one's outputs) to `input_columns` of each row; the outputs become `output_columns`.

        Args:
            operations: callable(*input_column_arrays) -> array or tuple of arrays, or a list of such.
            input_columns (str | list[str], optional): default: the first column.
            output_columns (str | list[str], optional): default: input_columns. With as many outputs as inputs the
                columns are replaced in place; otherwise the outputs come first, then the other columns.
            num_parallel_workers (int, optional): workers (default: config.get_num_parallel_workers()); with more
                than 1, rows are processed in parallel and come out in input order.
            python_multiprocessing (bool): worker processes instead of threads (default False).
            max_rowsize (int | list[int], optional): accepted for compatibility (rows travel pickled, no size cap).

        Raises:
            TypeError: operations not callable, bad column arguments, unknown keyword. ValueError: unknown input
            column. RuntimeError (when iterating): a user function raised (message holds its traceback), returned
            the wrong number of columns, or a worker process died.
        """
        from .operations import MapDataset
        return MapDataset(self, operations, input_columns, output_columns, num_parallel_workers, **kwargs)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """Stacks `batch_size` consecutive rows into one (np.stack per column; all rows of a batch must have equal
        shapes per column).

        Args:
            batch_size (int | callable): rows per batch, or a function of a BatchInfo returning it per batch.
            drop_remainder (bool): drop the last incomplete batch (default False).
            num_parallel_workers (int, optional): workers running per_batch_map.
            per_batch_map (callable, optional): fn(*column_lists, batch_info) -> tuple of column lists/arrays,
                applied to the lists of rows' arrays of `input_columns` (default: all columns) before stacking.
            input_columns, output_columns (list[str], optional): as in `map`, for per_batch_map.
            python_multiprocessing (bool): per_batch_map in worker processes (default False).
            max_rowsize: accepted for compatibility.

        Raises:
            TypeError/ValueError: bad arguments (batch_size out of [1, 2**31-1]). RuntimeError (when iterating):
            rows of different shapes in a column, per_batch_map failures.
        """
        from .operations import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, **kwargs)

    def shuffle(self, buffer_size):
        """Buffer shuffle: keeps `buffer_size` rows and yields a uniformly chosen one, refilled from the input;
        buffer_size >= dataset size shuffles globally. Reshuffled every epoch.

        Raises:
            TypeError: not an int. ValueError: buffer_size not in [2, 2**31-1].
        """
        from .structural import ShuffleDataset
        return ShuffleDataset(self, buffer_size)

    def sync_wait(self, condition_name, num_batch=1, callback=None):
        """A gate: the first `num_batch` batches (rows, or batches of a `batch` above) of an iterator pass, then
        each row waits until `sync_update(condition_name)` releases more; `callback(data)` runs at each
        sync_update. A row that waits longer than `ds.config.get_callback_timeout()` seconds (60) logs a warning and
        the gate opens for good (MindSpore's SyncWaitDataset). The rows run through the gate in the loop's thread
        (no prefetch), so what the callback changes applies to every later row.

        Raises:
            TypeError: condition_name not a str, num_batch not an int. ValueError: num_batch <= 0.
            RuntimeError: the pipeline already has a gate of this name.
        """
        from .sync import SyncWaitDataset
        return SyncWaitDataset(self, condition_name, num_batch, callback)

    def sync_update(self, condition_name, num_batch=None, data=None):
        """Releases `num_batch` batches (default: the gate's num_batch) of the sync_wait gate `condition_name` and
        calls its callback with `data`. num_batch counts batches of this dataset (times `get_batch_size()` rows).

        Raises (MindSpore's words; the first two also open every gate of the pipeline):
            RuntimeError: num_batch not a positive int ("Sync_update batch size can only be positive integer"),
                no gate of that name ("Condition name not found.").
            TypeError: condition_name not a str.
        """
        from .sync import sync_notifiers
        gates = sync_notifiers(self)
        if (num_batch is not None and (not isinstance(num_batch, int) or isinstance(num_batch, bool))) or \
                (isinstance(num_batch, int) and num_batch <= 0):
            for g in gates.values():
                g.pair.disable()
            raise RuntimeError(f"Sync_update batch size can only be positive integer, got: {num_batch}.")
        if not isinstance(condition_name, str):
            raise TypeError(f"Argument condition_name with value {condition_name} is not of type str, but got "
                            f"{type(condition_name)}.")
        if condition_name not in gates:
            for g in gates.values():
                g.pair.disable()
            raise RuntimeError("Condition name not found.")
        if num_batch is not None:
            bs = self.get_batch_size()
            num_batch *= bs if isinstance(bs, int) else 1
        gates[condition_name].pair.release(num_batch, data)

    def repeat(self, count=None):
        """Repeats the dataset `count` times per epoch (None or -1: forever); random nodes below reshuffle each
        repetition.

        Raises:
            TypeError: not an int. ValueError: count not -1 and not in [1, 2**31-1].
        """
        from .structural import RepeatDataset
        return RepeatDataset(self, count)

    def project(self, columns):
        """Keeps only `columns`, in that order.

        Raises:
            TypeError: not str/list of str. ValueError: an unknown column.
        """
        from .structural import ProjectDataset
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        """Renames input_columns[i] to output_columns[i].

        Raises:
            TypeError: not str/list of str. ValueError: unequal lengths, unknown column, duplicate result.
        """
        from .structural import RenameDataset
        return RenameDataset(self, input_columns, output_columns)

    def zip(self, datasets):
        """Rows side by side with those of `datasets` (a Dataset or tuple of them); stops at the shortest.

        Raises:
            TypeError: not datasets. ValueError: duplicate column names.
        """
        from .structural import ZipDataset
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        if not isinstance(datasets, (tuple, list)):
            raise TypeError(f"zip: datasets must be a Dataset or a tuple of Datasets, but got "
                            f"{type(datasets).__name__}.")
        return ZipDataset([self, *datasets])

    def concat(self, datasets):
        """This dataset's rows followed by those of `datasets` (a Dataset or list); `a + b` is `a.concat(b)`.

        Raises:
            TypeError: not datasets. ValueError: different column names.
        """
        from .structural import ConcatDataset
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        if not isinstance(datasets, (tuple, list)):
            raise TypeError(f"concat: datasets must be a Dataset or a list of Datasets, but got "
                            f"{type(datasets).__name__}.")
        return ConcatDataset([self, *datasets])

    def __add__(self, other):
        return self.concat(other)

    def take(self, count=-1):
        """The first `count` rows of each epoch (-1: all).

        Raises:
            TypeError: not an int. ValueError: count not -1 and not in [1, 2**31-1].
        """
        from .structural import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        """Skips the first `count` rows of each epoch.

        Raises:
            TypeError: not an int. ValueError: count not in [0, 2**31-1].
        """
        from .structural import SkipDataset
        return SkipDataset(self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keeps the rows for which predicate(*input_columns arrays) is true (default: all columns).

        Raises:
            TypeError: predicate not callable. ValueError: unknown column. RuntimeError (when iterating): the
            predicate raised.
        """
        from .operations import FilterDataset
        return FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def split(self, sizes, randomize=True):
        """Splits into len(sizes) datasets.

        Args:
            sizes (list[int] | list[float]): row counts summing to the dataset size, or fractions in (0, 1]
                summing to 1 (rounded; the remainder goes to the first split, as MindSpore).
            randomize (bool): assign rows to splits by one random permutation (drawn once, from the seed), each
                split yielding its rows in that random order (as MindSpore), else in order.

        Returns:
            tuple of Dataset. Splits of a random-access source read only their rows (and shuffle them every epoch
            if the source shuffles); other pipelines read the input and keep the rows of their part.

        Raises:
            TypeError: sizes not a list of int or of float. ValueError: fractions outside (0, 1] or not summing to
            1. RuntimeError: int sizes not summing to the dataset size, a fraction giving 0 rows, a sharded input.
        """
        from .structural import split_dataset
        check_bool("split", "randomize", randomize)
        return split_dataset(self, sizes, randomize)

    def __repr__(self):
        return f"<kiln.dataset.{type(self).__name__} columns={self.get_col_names()}>"


def _check_count(fn, count, allow_minus_one=True, lo=1):
    if count is None and allow_minus_one:
        return -1
    if not isinstance(count, numbers.Integral) or isinstance(count, bool):
        raise TypeError(f"{fn}: count must be of type int, but got {count!r} ({type(count).__name__}).")
    count = int(count)
    if allow_minus_one and count == -1:
        return -1
    if not lo <= count <= INT32_MAX:
        raise ValueError(f"{fn}: count should be either -1 or within the required interval of [{lo}, {INT32_MAX}], "
                         f"got {count}." if allow_minus_one else
                         f"{fn}: count should be within the required interval of [{lo}, {INT32_MAX}], got {count}.")
    return count

