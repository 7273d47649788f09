"""Helpers shared by the dataset engine: argument checks, row conversion, the per-iterator context."""
import numbers

import numpy as np

from .. import config

INT32_MAX = 2**31 - 1


class Ctx:
    """State of one iterator: a counter that gives each random node its own Generator, and what to close."""

    def __init__(self):
        self.closers = []
        self._salt = 0

    def rng(self):
        self._salt += 1
        return config._rng(self._salt)

    def close(self):
        while self.closers:
            c = self.closers.pop()
            c()


def check_int(fn, name, value, lo=None, hi=None, allow_none=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{fn}: {name} must be of type int, but got {value!r} ({type(value).__name__}).")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{fn}: Input {name} is not within the required interval of [{lo}, {hi}], got {value}.")
    return value


def check_bool(fn, name, value, allow_none=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be of type bool, but got {value!r} ({type(value).__name__}).")
    return bool(value)


def check_workers(fn, num):
    """num_parallel_workers: None (config default) or an int in [1, number of CPUs] (MindSpore's bound)."""
    if num is None:
        return None
    hi = config._max_workers()
    if not isinstance(num, numbers.Integral) or isinstance(num, bool):
        raise TypeError(f"{fn}: num_parallel_workers must be of type int, but got {num!r} ({type(num).__name__}).")
    if not 1 <= num <= hi:
        raise ValueError(f"{fn}: num_parallel_workers exceeds the boundary between 1 and {hi}! Got {num}.")
    return int(num)


def column_list(fn, name, cols, allow_none=True):
    """A list of column names from a str or a list of str."""
    if cols is None and allow_none:
        return None
    if isinstance(cols, str):
        cols = [cols]
    if not isinstance(cols, (list, tuple)) or not cols:
        raise TypeError(f"{fn}: {name} must be a str or a non-empty list of str, but got {cols!r}.")
    for c in cols:
        if not isinstance(c, str) or not c:
            raise TypeError(f"{fn}: {name} must be a str or a list of non-empty str, but got item {c!r}.")
    if len(set(cols)) != len(cols):
        raise ValueError(f"{fn}: {name} has duplicate column names: {list(cols)}.")
    return list(cols)


def to_array(value, where):
    """A row value as a NumPy array: arrays kept, Tensors through asnumpy, Python scalars/lists through np.asarray
    (int → int64, float → float64, as MindSpore). Object arrays are refused (TypeError)."""
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "asnumpy") and callable(value.asnumpy):
        arr = value.asnumpy()
    else:
        try:
            arr = np.asarray(value)
        except Exception as e:  # noqa: BLE001 (ragged nested lists and the like: re-raised as TypeError)
            raise TypeError(f"{where}: the value {value!r:.80} cannot be converted to a NumPy array: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"{where}: the value of type {type(value).__name__} becomes a NumPy object array, which "
                        "is not a supported column type (numbers, bool, str, bytes, or arrays of them).")
    return arr


def as_outputs(result):
    """A user function's return value as a list of column values (a tuple is several columns)."""
    if isinstance(result, tuple):
        return list(result)
    return [result]


def place_columns(columns, input_columns, output_columns):
    """Column order after replacing `input_columns` by `output_columns` (MindSpore's map/batch rule): same count →
    replaced in place (input_columns[i] → output_columns[i]); otherwise outputs first, then the other columns."""
    if len(input_columns) == len(output_columns):
        mapping = dict(zip(input_columns, output_columns))
        return [mapping.get(c, c) for c in columns]
    return list(output_columns) + [c for c in columns if c not in input_columns]


class ColumnError(ValueError, RuntimeError):
    """A pipeline names a column that does not exist, or makes two columns of one name. Raised when the pipeline is
    built (earlier than MindSpore, which raises RuntimeError when it runs), so it is both a ValueError and the
    RuntimeError that MindSpore code catches."""


class SampleIndexError(IndexError, RuntimeError):
    """A sampler index outside the dataset (MindSpore: RuntimeError "Sample ID (i) is out of bound")."""


def same_type(a, b):
    """True when dtypes a and b are one MindSpore type: equal, or both text (any length of str / of bytes)."""
    return a == b or (a.kind == b.kind and a.kind in "US")


class FileRow(tuple):
    """A row read from one file (ImageFolderDataset): a tuple of arrays that also knows its file, so that an
    operation failing on it (Decode of a corrupt image) can name the file, as MindSpore does."""

    def __new__(cls, values, file):
        row = super().__new__(cls, values)
        row.file = file
        return row

    def __reduce__(self):  # travels to worker processes with its file
        return FileRow, (tuple(self), self.file)
