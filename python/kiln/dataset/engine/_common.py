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


def to_array(value, where, allow_dict=False):
    """A row value as a NumPy array: arrays kept, Tensors through asnumpy, Python scalars/lists through np.asarray
    (int → int64, float → float64, as MindSpore). Object arrays are refused (TypeError).

    With allow_dict, a dict is kept as it is: a Python-object column value, which MindSpore 2.x carries through
    GeneratorDataset rows, map and batch (see python_column). Elsewhere a dict is refused (TypeError)."""
    if isinstance(value, dict):
        if allow_dict:
            return value
        raise TypeError(f"{where}: the value is a Python dict; a dict column value can only be made and used by "
                        "GeneratorDataset sources and Python functions in map/batch (MindSpore's rule), not by "
                        "this operation.")
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


_PY_LEAVES = (bool, int, float, str, np.ndarray, np.generic)


def python_column(obj, to_numpy, copy=False):
    """A Python-object column value (a dict, or what it holds) as the iterators give it, MindSpore 2.10's rule
    (`__convert_python` of mindspore/dataset/engine/iterators.py): numbers, bools, str, NumPy scalars and arrays
    become NumPy arrays (to_numpy) or kiln Tensors (text stays a NumPy array); dicts, tuples and lists are
    converted item by item; anything else (bytes, objects) is returned as it is. A NumPy array of object dtype
    raises TypeError."""
    if isinstance(obj, _PY_LEAVES):
        if isinstance(obj, np.ndarray) and obj.dtype == object:
            raise TypeError(f"A NumPy array of unsupported type detected: {obj.dtype}; a Python-object column holds "
                            "numbers, bool, str, NumPy arrays of them, and dicts/lists/tuples of those.")
        arr = np.array(obj, copy=True) if copy or not isinstance(obj, np.ndarray) else obj
        if to_numpy or arr.dtype.kind in "US":
            return arr
        from ...common.tensor import Tensor
        return Tensor(arr if arr.flags.c_contiguous else arr.copy(order="C"))
    if isinstance(obj, dict):
        return {k: python_column(v, to_numpy, copy) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(python_column(v, to_numpy, copy) for v in obj)
    if isinstance(obj, list):
        return [python_column(v, to_numpy, copy) for v in obj]
    return obj


def batch_dicts(values, col, what):
    """One batch of a column of dicts (MindSpore 2.10's BatchOp rule for Python dictionaries): every row's dict
    must have the same keys; each key's values become one NumPy array (np.array of the rows' values, which must be
    numbers, bool or str, or equal-shaped arrays of them). Raises RuntimeError otherwise, with MindSpore's words."""
    if not all(isinstance(v, dict) for v in values):
        other = next(type(v).__name__ for v in values if not isinstance(v, dict))
        raise RuntimeError(f"{what}: column {col!r} holds a Python dictionary in one row and a value of type {other} in another; "
                           "a batch of dictionaries needs a dictionary in every row.")
    first = values[0]
    for v in values[1:]:
        if len(v) != len(first):
            raise RuntimeError(f"{what}: Failed to create a batch since number of key/value pairs in dictionaries do "
                               f"not match. First row: {len(first)}, current row: {len(v)}")
        for k in v:
            if k not in first:
                raise RuntimeError(f"{what}: Python dictionary keys do not match when creating a batch: {k} was not "
                                   "found in previous rows.")
    out = {}
    for k in first:
        try:
            arr = np.array([v[k] for v in values])
        except ValueError as e:
            raise RuntimeError(f"{what}: Failed to batch Python dictionary: ValueError: {e}") from None
        if arr.dtype == object:
            raise RuntimeError(f"{what}: failed to create a NumPy array with primitive types for the dictionary "
                               f"objects in column {col!r}, key: {k!r}.\nIf you want a customized array, define a "
                               "custom 'per_batch_map' function.")
        out[k] = arr
    return out


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
