"""Iterators over a dataset: `Dataset.create_tuple_iterator` / `create_dict_iterator` (MindSpore's
TupleIterator / DictIterator)."""
import threading

import numpy as np

from ._common import ColumnError, Ctx, python_column


def _to_tensor(arr):
    from ...common.tensor import Tensor
    if arr.dtype.kind in "USO":  # Kiln tensors hold numbers only: text columns stay NumPy arrays
        return arr
    return Tensor(arr if arr.flags.c_contiguous else arr.copy(order="C"))


class _Iterator:
    """One pass machine over a dataset: `num_epochs` epochs (-1: unbounded), each ending with StopIteration, so the
    same iterator can be looped over again for the next epoch. Worker threads/processes of the pipeline stop when the
    iterator is exhausted, closed (`stop()`), or garbage collected."""

    def __init__(self, dataset, num_epochs, output_numpy, do_copy, columns=None):
        if not isinstance(num_epochs, int) or isinstance(num_epochs, bool):
            raise TypeError(f"create_iterator: num_epochs must be of type int, but got {num_epochs!r}.")
        if num_epochs != -1 and num_epochs < 1:
            raise ValueError(f"create_iterator: num_epochs must be -1 or a positive int, but got {num_epochs}.")
        for name, v in (("output_numpy", output_numpy), ("do_copy", do_copy)):
            if not isinstance(v, bool):
                raise TypeError(f"create_iterator: {name} must be of type bool, but got {v!r}.")
        names = dataset.get_col_names()
        self._names = names
        if columns is not None:
            cols = [columns] if isinstance(columns, str) else columns
            if not isinstance(cols, (list, tuple)) or not all(isinstance(c, str) for c in cols):
                raise TypeError(f"create_tuple_iterator: columns must be a str or a list of str, got {columns!r}.")
            missing = [c for c in cols if c not in names]
            if missing:
                raise ColumnError(f"create_tuple_iterator: column {missing[0]!r} does not exist; the dataset's "
                                 f"columns are {names}.")
            self._pick = [names.index(c) for c in cols]
            self._names = list(cols)
        else:
            self._pick = None
        self._num_epochs = num_epochs
        self._numpy = output_numpy
        self._copy = do_copy
        self._ctx = Ctx()
        self._epoch_fn = dataset._make(self._ctx)
        self._cur = None
        self._done = 0
        self._closed = False
        self._lock = threading.RLock()
        self.dataset = dataset

    def __iter__(self):
        return self

    def _next_row(self):
        with self._lock:  # one iterator may be shared by threads: rows are handed out one at a time
            return self._next_row_locked()

    def _next_row_locked(self):
        if self._closed:
            raise RuntimeError("EOF buffer encountered. User tries to fetch data beyond the specified number of "
                               f"epochs ({self._num_epochs}), or the iterator was stopped.")
        if self._cur is None:
            self._cur = self._epoch_fn()
        try:
            row = next(self._cur)
        except StopIteration:
            self._cur = None
            self._done += 1
            if self._num_epochs != -1 and self._done >= self._num_epochs:
                self.stop()
            raise
        except BaseException:
            self.stop()
            raise
        if self._pick is not None:
            row = [row[i] for i in self._pick]
        if any(isinstance(a, dict) for a in row):  # Python-object columns: converted leaf by leaf
            return [python_column(a, self._numpy, self._copy) if isinstance(a, dict)
                    else (np.array(a, copy=True) if self._copy else a) if self._numpy else _to_tensor(a) for a in row]
        if self._numpy:
            return [np.array(a, copy=True) if self._copy else a for a in row]
        return [_to_tensor(a) for a in row]

    def stop(self):
        """Ends the iteration and stops the pipeline's worker threads and processes (idempotent)."""
        if self._closed:
            return
        self._closed = True
        cur, self._cur = self._cur, None
        if cur is not None:
            cur.close()
        self._ctx.close()

    def get_col_names(self):
        """The names of the columns this iterator yields."""
        return list(self._names)

    def __del__(self):
        try:
            self.stop()
        except Exception:  # noqa: BLE001 — never raise from a finalizer
            pass


class TupleIterator(_Iterator):
    """Yields each row as a list of kiln Tensors (or np.ndarray with output_numpy=True), in column order."""

    def __next__(self):
        return self._next_row()


class DictIterator(_Iterator):
    """Yields each row as a dict {column name: kiln Tensor (or np.ndarray with output_numpy=True)}."""

    def __next__(self):
        return dict(zip(self._names, self._next_row()))
