"""Conversion of Python objects (NumPy arrays, lists, scalars) to Tensors, with MindSpore's dtype inference.

Registered with the C++ core at import: `_core.Tensor(...)` and op arguments call these."""
import numpy as np

from ._loader import _core
from .common import dtype as mstype

_OK_KINDS = "biuf"


def _infer_array(data):
    """NumPy array for `data` with MindSpore's default dtypes: Python float / float lists → float32,
    Python int / int lists → int64, bool → bool, NumPy arrays and scalars keep their dtype."""
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    elif isinstance(data, bool):
        arr = np.asarray(data, dtype=np.bool_)
    elif isinstance(data, int):
        if not -2**63 <= data < 2**63:
            raise ValueError(f"Tensor: the int {data} is outside the Int64 range.")
        arr = np.asarray(data, dtype=np.int64)
    elif isinstance(data, float):
        arr = np.asarray(data, dtype=np.float32)
    elif isinstance(data, (list, tuple)):
        items = [x.asnumpy() if isinstance(x, _core.Tensor) else x for x in data]
        try:
            arr = np.asarray(items)
        except OverflowError:
            raise ValueError("Tensor: an int in the list is outside the Int64 range.") from None
        except ValueError as e:
            raise ValueError(f"Tensor: the list/tuple is ragged or invalid: {e}") from None
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype.kind in "iu" and arr.dtype != np.uint8:
            arr = arr.astype(np.int64)
    else:
        raise TypeError(f"Tensor: input_data of type {type(data).__name__!r} is not supported; expected a Tensor, "
                        "NumPy array, list, tuple, bool, int or float.")
    if arr.dtype.kind not in _OK_KINDS:
        raise TypeError(f"Tensor: the element type {arr.dtype} is not supported by Kiln "
                        "(supported: bool, int8/16/32/64, uint8, float16/32/64).")
    if arr.dtype.kind == "u" and arr.dtype != np.uint8:
        arr = arr.astype(np.int64)
    return arr


def to_numpy(obj, dtype=None):
    """C-contiguous NumPy array for `obj` (used by the core for non-Tensor op arguments)."""
    arr = _infer_array(obj)
    if dtype is not None:
        arr = arr.astype(mstype.dtype_to_nptype(dtype))
    return np.asarray(arr, order="C")


def make_tensor(input_data=None, dtype=None, shape=None, init=None):
    """Implements Tensor(input_data, dtype, shape, init): see kiln.Tensor."""
    if dtype is not None:
        dtype = mstype.to_dtype(dtype)
    if input_data is not None and shape is not None:
        raise ValueError("When initializing a tensor with 'input_data', 'shape' should be set to None.")
    if init is not None:
        if shape is None or dtype is None:
            raise ValueError("Tensor: 'init' needs both 'shape' and 'dtype'.")
        from .common.initializer import initializer
        return initializer(init, shape, dtype)
    if input_data is None:
        if shape is None:
            raise ValueError("Tensor: give 'input_data', or 'shape' and 'dtype'.")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return _core.full(shape, 0.0, dtype if dtype is not None else mstype.float32)
    if isinstance(input_data, _core.Tensor):
        return _core.cast(input_data, dtype) if dtype is not None else _core.identity(input_data)
    arr = _infer_array(input_data)
    if arr.ndim > 0 and 0 in arr.shape and arr.ndim > 1:
        pass  # empty multi-dim arrays are allowed by NumPy; Kiln allows them too
    t = _core.Tensor._from_numpy(np.asarray(arr, order="C"))
    if dtype is not None and dtype != t.dtype:
        t = _core.cast(t, dtype)
    return t


_core._set_converter(to_numpy)
_core._set_tensor_factory(make_tensor)
