"""Shared machinery of `kiln.dataset.transforms` and `kiln.dataset.vision`: the base class of every operation,
input conversion (NumPy array, PIL Image, kiln Tensor, Python scalars/lists) and argument checks with MindSpore's
messages."""
import numbers

import numpy as np

try:  # Pillow is a dependency of the vision operations; transforms work without it
    from PIL import Image as _PILImage
except ImportError:  # pragma: no cover - Pillow is installed with kiln
    _PILImage = None


def is_pil(img):
    """True if `img` is a PIL Image."""
    return _PILImage is not None and isinstance(img, _PILImage.Image)


def to_array(value, op_name):
    """Converts one input column to a NumPy array as MindSpore's eager executor does (`np.asarray`).

    kiln Tensors go through `asnumpy()`, PIL Images through `np.asarray`. Raises TypeError naming `op_name` for
    objects NumPy cannot turn into a numeric, bool or string array."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if isinstance(value, bytes):
        return np.frombuffer(value, dtype=np.uint8)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{op_name}: invalid user input. Got {type(value)}: {value!r:.80}, "
                        "cannot be converted into a tensor.") from exc
    if arr.dtype == object:
        raise TypeError(f"{op_name}: invalid user input. Got {type(value)}: {value!r:.80}, "
                        "cannot be converted into a tensor.")
    return arr


def to_numpy_dtype(data_type, arg_name="data_type"):
    """A kiln dtype (`kiln.float32`), NumPy dtype/type or dtype name as a `numpy.dtype`.

    Raises TypeError for anything else, with MindSpore's message."""
    from ...common import dtype as _kdt  # pylint: disable=import-outside-toplevel
    if isinstance(data_type, _kdt.DType):
        return np.dtype(_kdt.dtype_to_nptype(data_type))
    if isinstance(data_type, (np.dtype, str)) or (isinstance(data_type, type) and issubclass(data_type, np.generic)):
        try:
            return np.dtype(data_type)
        except TypeError as exc:
            raise TypeError(f"Argument {arg_name} with value {data_type!r} is not a valid data type.") from exc
    raise TypeError(f"Argument {arg_name} with value {data_type} is not of type [kiln dtype, numpy.dtype], "
                    f"but got {type(data_type)}.")


def check_type(value, types, name):
    """Raises TypeError (MindSpore's wording) unless `value` is an instance of `types` (bool is never an int)."""
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        raise TypeError(f"Argument {name} with value {value!r} is not of type {list(types)}, "
                        f"but got {type(value)}.")


def check_range(value, low, high, name, left_open=False, right_open=False):
    """Raises ValueError unless low <= value <= high (with open ends as asked), in MindSpore's wording."""
    lo_ok = value > low if left_open else value >= low
    hi_ok = value < high if right_open else value <= high
    if not (lo_ok and hi_ok):
        lb = "(" if left_open else "["
        rb = ")" if right_open else "]"
        raise ValueError(f"Input {name} is not within the required interval of {lb}{low}, {high}{rb}.")


def check_number(value, name):
    """TypeError unless `value` is a real number (not bool)."""
    check_type(value, (numbers.Number,), name)
    if isinstance(value, complex):
        raise TypeError(f"Argument {name} with value {value!r} is not a real number.")


class TensorOperation:
    """Base class of every kiln.dataset operation (MindSpore's `TensorOperation`).

    Calling an operation runs it eagerly: each positional argument is one column (NumPy array, PIL Image, kiln Tensor,
    Python scalar or list), converted with `np.asarray`. The result is one NumPy array, or a tuple of arrays for
    operations with several outputs. `dataset.map(operations=[op])` calls it the same way, once per row.

    Subclasses implement `_execute(*arrays)`; operations that MindSpore also runs on PIL Images (returning a PIL
    Image) implement `_execute_pil(img)`."""

    _num_inputs = 1  # number of columns the operation takes; None = any
    _python_impl = False  # MindSpore runs it as a Python (PIL) operation: a Compose holding it returns a tuple
    # True where `_execute_batch` exists: `map` may then run the operation on a stack of equal-shaped rows at once.
    _batchable = False

    def _execute_batch(self, batch):
        """The operation on `batch`, an array of equal-shaped rows stacked along a new first axis, giving the stack
        of the per-row results — bit for bit what `_execute` gives row by row. Returns None where this input is
        not handled batched (map then runs the rows one by one, which also reports any error per row)."""
        return None

    def __call__(self, *args):
        name = type(self).__name__
        if len(args) == 1 and is_pil(args[0]) and hasattr(self, "_execute_pil"):
            return self._execute_pil(args[0])
        if self._num_inputs is not None and len(args) != self._num_inputs:
            raise RuntimeError(f"{name}: the operation takes {self._num_inputs} input column(s) "
                               f"(one tensor each), but got {len(args)}.")
        arrays = [to_array(a, name) for a in args]
        return self._execute(*arrays)

    def _execute(self, *arrays):  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class PyTensorOperation(TensorOperation):
    """Base of the operations MindSpore implements in Python on PIL Images (`PyTensorOperation`)."""
    _python_impl = True
