"""MindSpore's `mindspore.dataset.transforms.transforms`: general operations on NumPy columns.

Every operation is a callable (see `TensorOperation`): `TypeCast(kiln.float32)(np.array([1, 2]))` runs eagerly and
`dataset.map(operations=[...])` calls it per row. Errors on bad data are RuntimeError (as MindSpore's C++ ops raise),
errors on bad constructor arguments TypeError/ValueError."""
import enum
import numbers

import numpy as np

from ._base import TensorOperation, check_range, check_type, is_pil, to_array, to_numpy_dtype

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "Mask", "OneHot", "PadEnd", "RandomApply", "RandomChoice",
           "RandomOrder", "Relational", "Slice", "TypeCast", "Unique"]


def _rng():
    from ..vision._random import _rng as rng  # pylint: disable=import-outside-toplevel
    return rng()


def _is_str(arr):
    return arr.dtype.kind in "US"


# ---------------------------------------------------------------- composition

def _check_transforms(transforms, name="transforms"):
    if not isinstance(transforms, (list, tuple)):
        raise TypeError(f"Argument {name} with value {transforms!r} is not of type [list, tuple], "
                        f"but got {type(transforms)}.")
    if not transforms:
        raise ValueError(f"{name} list can not be empty.")
    for i, t in enumerate(transforms):
        if not callable(t):
            raise TypeError(f"{name}[{i}] is neither a transforms op (TensorOperation) nor a callable pyfunc.")
    return list(transforms)


def _as_row(result):
    """A transform's result as a tuple of columns; non-PIL values become NumPy arrays."""
    items = result if isinstance(result, tuple) else (result,)
    return tuple(x if is_pil(x) else to_array(x, "pyfunc") for x in items)


def _apply(transforms, row):
    for t in transforms:
        row = _as_row(t(*row))
    return row


def _result(row):
    return row[0] if len(row) == 1 else row


def _input_row(args):
    return tuple(a if is_pil(a) else to_array(a, "Compose") for a in args)


class Compose(TensorOperation):
    """Applies `transforms` in order; the outputs of one become the inputs of the next.

    Args:
        transforms (list): operations or Python callables (non-empty).

    Returns one array, or a tuple when the last transform gives several columns. As in MindSpore's eager mode, the
    result is always a tuple (of one item for one column) when Compose runs as a Python operation: when its input
    is one PIL Image or it holds an operation MindSpore implements only in Python (ToPIL, Grayscale,
    Decode(to_pil=True), or such a Compose). `dataset.map` treats both forms alike.
    Raises TypeError for a non-list or a non-callable entry, ValueError for an empty list."""
    _num_inputs = None

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    @property
    def _python_impl(self):
        return any(getattr(t, "_python_impl", False) for t in self.transforms)

    def __call__(self, *args):
        row = _apply(self.transforms, _input_row(args))
        if self._python_impl or (len(args) == 1 and is_pil(args[0])):
            return row
        return _result(row)


class RandomApply(TensorOperation):
    """Applies all of `transforms` (in order) with probability `prob` (default 0.5), else passes the input through.

    Raises TypeError/ValueError for bad `transforms`, ValueError for `prob` outside [0, 1]."""
    _num_inputs = None

    def __init__(self, transforms, prob=0.5):
        self.transforms = _check_transforms(transforms)
        check_type(prob, (numbers.Real,), "prob")
        check_range(prob, 0, 1, "prob")
        self.prob = float(prob)

    def __call__(self, *args):
        row = _input_row(args)
        if _rng().random() < self.prob:
            row = _apply(self.transforms, row)
        return _result(row)


class RandomChoice(TensorOperation):
    """Applies one of `transforms`, chosen uniformly at random."""
    _num_inputs = None

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        t = self.transforms[int(_rng().integers(len(self.transforms)))]
        return _result(_apply([t], _input_row(args)))


class RandomOrder(TensorOperation):
    """Applies all of `transforms` in a random order (a uniform permutation)."""
    _num_inputs = None

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        order = _rng().permutation(len(self.transforms))
        return _result(_apply([self.transforms[i] for i in order], _input_row(args)))


# ---------------------------------------------------------------- type and value operations

class TypeCast(TensorOperation):
    """Casts the input to `data_type` (a kiln dtype such as `kiln.float32`, a NumPy dtype or its name).

    Conversion follows NumPy's `astype` (float to int truncates toward zero; integers wrap), as MindSpore's does."""

    def __init__(self, data_type):
        self.data_type = data_type
        self._np_dtype = to_numpy_dtype(data_type)

    _batchable = True

    def _execute(self, x):
        try:
            return x.astype(self._np_dtype)
        except (TypeError, ValueError) as exc:
            raise RuntimeError(f"TypeCast: cannot cast the input of dtype {x.dtype} to {self._np_dtype}: {exc}") \
                from exc

    def _execute_batch(self, batch):
        return batch.astype(self._np_dtype) if batch.dtype.kind in "biuf" else None


class OneHot(TensorOperation):
    """One-hot encodes integer labels: shape () -> (num_classes,), (n,) -> (n, num_classes).

    Args:
        num_classes (int): > 0.
        smoothing_rate (float): label smoothing in [0, 1], default 0.0: hot value 1 - rate + rate / num_classes,
            others rate / num_classes.

    Output dtype: the input's dtype when `smoothing_rate` is 0, float64 otherwise (as MindSpore).
    A one-element vector (1,) is treated as a scalar label, giving (num_classes,) as MindSpore does.
    Negative labels give an all-zero row (as MindSpore). Raises RuntimeError for non-integer input, input of rank
    > 1, or a label >= num_classes."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        check_type(num_classes, (int,), "num_classes")
        if num_classes <= 0:
            raise ValueError("Input must be greater than 0.")
        check_range(num_classes, 1, 2147483647, "num_classes")
        check_type(smoothing_rate, (numbers.Real,), "smoothing_rate")
        check_range(smoothing_rate, 0.0, 1.0, "smoothing_rate")
        self.num_classes = num_classes
        self.smoothing_rate = float(smoothing_rate)

    def _execute(self, x):
        if x.dtype.kind not in "iu":
            raise RuntimeError(f"OneHot: Only support input of int type, but got: {x.dtype}")
        if x.ndim > 1:
            raise RuntimeError(f"OneHot: Only support scalar or 1D input, got rank: {x.ndim}")
        if x.size and x.max() >= self.num_classes:
            raise RuntimeError(f"OneHot: index values should not bigger than num classes: {self.num_classes}, "
                               f"but got: {x.max()}")
        if x.shape == (1,):  # MindSpore treats a one-element label vector as a scalar label
            x = x.reshape(())
        hot = (x[..., None] == np.arange(self.num_classes))
        if self.smoothing_rate == 0.0:
            return hot.astype(x.dtype)
        rate, n = self.smoothing_rate, self.num_classes
        valid = (x >= 0)[..., None]
        return np.where(hot, 1.0 - rate + rate / n, np.where(valid, rate / n, 0.0))


class Fill(TensorOperation):
    """Returns an array of the input's shape and dtype filled with `fill_value` (cast to the input's dtype).

    Raises TypeError for a fill value that is not a number, bool, str or bytes; RuntimeError when exactly one of
    the input and the fill value is a string."""

    def __init__(self, fill_value):
        check_type(fill_value, (str, bytes, numbers.Number, bool), "fill_value")
        self.fill_value = fill_value

    def _execute(self, x):
        fill_is_str = isinstance(self.fill_value, (str, bytes))
        if fill_is_str != _is_str(x):
            raise RuntimeError("Fill: fill_value and the input tensor must be of the same data type when involving "
                               f"strings or bytes, but got fill_value {self.fill_value!r} and input dtype {x.dtype}.")
        if fill_is_str:
            return np.full(x.shape, self.fill_value)
        return np.full(x.shape, np.array(self.fill_value).astype(x.dtype), dtype=x.dtype)


class Duplicate(TensorOperation):
    """Returns `(x, copy of x)`: two columns from one."""

    def _execute(self, x):
        return x, x.copy()

    def __call__(self, *args):
        if len(args) != 1:
            raise RuntimeError("Duplicate: only supports transform one column each time, "
                               f"got column num: {len(args)}, check 'input_columns' when call this operator.")
        return super().__call__(*args)


class Concatenate(TensorOperation):
    """Concatenates `prepend`, the 1-D input and `append` (NumPy arrays of the input's dtype).

    Args: axis (int, 0 or -1, default 0), prepend / append (numpy.ndarray or None).
    Raises TypeError for non-int axis or non-ndarray prepend/append, ValueError for another axis,
    RuntimeError for input of rank != 1 or a dtype differing from prepend/append."""

    def __init__(self, axis=0, prepend=None, append=None):
        check_type(axis, (int,), "axis")
        if axis not in (0, -1):
            raise ValueError("only 1D concatenation supported.")
        for name, v in (("prepend", prepend), ("append", append)):
            if v is not None:
                check_type(v, (np.ndarray,), name)
        self.axis, self.prepend, self.append = axis, prepend, append

    def _execute(self, x):
        if x.ndim != 1:
            raise RuntimeError(f"Concatenate: only 1D input supported, got rank of input: {x.ndim}")
        parts = []
        for name, v in (("prepend", self.prepend), ("append", self.append)):
            if v is None:
                continue
            if v.dtype != x.dtype and not (_is_str(v) and _is_str(x)):
                raise RuntimeError(f"Concatenate: input datatype does not match the {name} datatype, "
                                   f"got input datatype: {x.dtype}, {name} datatype: {v.dtype}")
            if v.ndim != 1:
                raise RuntimeError(f"Concatenate: {name} must be 1-D, got rank: {v.ndim}")
        if self.prepend is not None:
            parts.append(self.prepend)
        parts.append(x)
        if self.append is not None:
            parts.append(self.append)
        return np.concatenate(parts)


class Relational(enum.IntEnum):
    """Comparison of `Mask`: EQ, NE, GT, GE, LT, LE."""
    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


_RELATIONS = {Relational.EQ: np.equal, Relational.NE: np.not_equal, Relational.GT: np.greater,
              Relational.GE: np.greater_equal, Relational.LT: np.less, Relational.LE: np.less_equal}


class Mask(TensorOperation):
    """Elementwise `x <operator> constant`, cast to `dtype` (default bool).

    The constant is first cast to the input's dtype (so `Mask(EQ, 1.5)` on int32 compares with 1, as MindSpore).
    Raises TypeError for a bad operator/constant/dtype, RuntimeError when only one of input and constant is a
    string."""

    def __init__(self, operator, constant, dtype=None):
        check_type(operator, (Relational,), "operator")
        check_type(constant, (str, bytes, numbers.Number, bool), "constant")
        self.operator, self.constant = operator, constant
        self.dtype = dtype
        self._np_dtype = np.dtype(bool) if dtype is None else to_numpy_dtype(dtype, "dtype")

    def _execute(self, x):
        const_is_str = isinstance(self.constant, (str, bytes))
        if const_is_str != _is_str(x):
            raise RuntimeError("Mask: input datatype does not match the value datatype, both should be numeric or "
                               f"non-numerical in the same time (input dtype {x.dtype}, constant "
                               f"{self.constant!r}).")
        const = self.constant if const_is_str else np.array(self.constant).astype(x.dtype)
        return _RELATIONS[self.operator](x, const).astype(self._np_dtype)


class PadEnd(TensorOperation):
    """Pads (or truncates) each dimension at its end to `pad_shape` with `pad_value`.

    Args:
        pad_shape (list of int/None): target shape, one entry per input dimension; None keeps the dimension.
        pad_value (number or str, default None): 0 for numbers, "" for strings; cast to the input's dtype.
    Raises TypeError for bad arguments, RuntimeError for a pad_shape of the wrong rank or a string/number mix."""

    def __init__(self, pad_shape, pad_value=None):
        check_type(pad_shape, (list, tuple), "pad_shape")
        for i, d in enumerate(pad_shape):
            if d is not None:
                check_type(d, (int,), f"pad_shape[{i}]")
                if d < 0:
                    raise ValueError(f"pad_shape[{i}] must be >= 0, but got {d}.")
        if pad_value is not None:
            check_type(pad_value, (str, bytes, numbers.Number, bool), "pad_value")
        self.pad_shape, self.pad_value = list(pad_shape), pad_value

    def _execute(self, x):
        if len(self.pad_shape) != x.ndim:
            raise RuntimeError(f"PadEnd: invalid pad shape, as rank of input is: {x.ndim}, and rank of pad value: "
                               f"{len(self.pad_shape)}")
        value_is_str = isinstance(self.pad_value, (str, bytes))
        if self.pad_value is not None and value_is_str != _is_str(x):
            raise RuntimeError("PadEnd: can not pad numeric and string tensors together, but got: "
                               f"{type(self.pad_value).__name__} and {x.dtype}.")
        target = [x.shape[i] if d is None else d for i, d in enumerate(self.pad_shape)]
        x = x[tuple(slice(0, t) for t in target)]
        pad = [(0, t - s) for s, t in zip(x.shape, target)]
        if _is_str(x):
            value = "" if self.pad_value is None else self.pad_value
            out = np.full(target, value, dtype=np.result_type(x.dtype, np.array(value).dtype))
            out[tuple(slice(0, s) for s in x.shape)] = x
            return out
        value = np.array(0 if self.pad_value is None else self.pad_value).astype(x.dtype)
        return np.pad(x, pad, mode="constant", constant_values=value)


class Slice(TensorOperation):
    """Slices the input: one selector per dimension, each an int (keeps the dimension, size 1), a list of ints,
    a `slice` (positive step), None or Ellipsis (the whole dimension).

    Raises TypeError for other selectors, RuntimeError for an index out of bounds, more selectors than
    dimensions or a non-positive step."""

    def __init__(self, *slices):
        for s in slices:
            check_type(s, (int, list, slice, type(None), type(Ellipsis)), "slice")
            if isinstance(s, list):
                for v in s:
                    check_type(v, (int,), "slice")
        self.slices = list(slices)

    def _execute(self, x):
        if len(self.slices) > x.ndim:
            raise RuntimeError(f"Slice: Invalid shape, should be greater than slices index: input rank {x.ndim}, "
                               f"{len(self.slices)} slices.")
        for axis, s in enumerate(self.slices):
            n = x.shape[axis]
            if s is None or s is Ellipsis:
                continue
            if isinstance(s, slice):
                if s.step is not None and s.step <= 0:
                    raise RuntimeError(f"Slice: Wrong slice object {s}: the step must be positive.")
                idx = np.arange(*s.indices(n))
            else:
                idx = np.array([s] if isinstance(s, int) else s, dtype=np.int64)
                bad = (idx >= n) | (idx < -n)
                if bad.any():
                    raise RuntimeError(f"Slice: Index {idx[bad][0]} is out of bounds for dimension {axis} of "
                                       f"size {n}.")
                idx = np.where(idx < 0, idx + n, idx)
            x = np.take(x, idx, axis=axis)
        return x


class Unique(TensorOperation):
    """Unique elements of the (flattened) numeric input, in order of first appearance.

    Returns three columns: the unique values (input dtype), for every input element the index of its value in the
    first output (int32), and each unique value's count (int32). Raises RuntimeError for a 0-d or string input."""

    def _execute(self, x):
        if x.ndim == 0:
            raise RuntimeError("Unique: input must be at least 1-D, got rank: 0")
        if _is_str(x) or x.dtype.kind not in "biuf":
            raise RuntimeError(f"Unique: only support numeric datatype of input, got {x.dtype}.")
        flat = x.reshape(-1)
        values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True, return_counts=True)
        order = np.argsort(first, kind="stable")  # sorted-unique position -> first-appearance position
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return values[order], rank[inverse.reshape(-1)].astype(np.int32), counts[order].astype(np.int32)

