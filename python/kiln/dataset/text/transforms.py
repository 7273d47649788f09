"""MindSpore's `mindspore.dataset.text.transforms` module path: the text operations (`Lookup`, `PythonTokenizer`
from kiln.dataset.text) and `UnicodeCharTokenizer`, `ToNumber` (tutorial dataset/eager.md). Semantics checked
against MindSpore 2.10 (tests/python/test_dataset_text_transforms.py)."""
import re

import numpy as np

from ..transforms._base import TensorOperation, to_numpy_dtype

_INT = re.compile(r"\s*([+-]?\d+)")  # what std::stoll / std::stoull read: the longest such prefix
_FLOAT = re.compile(r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)


class UnicodeCharTokenizer(TensorOperation):
    """A string -> its Unicode characters: a scalar string in, a 1-D array of one-character strings out (an empty
    string gives ['']), as MindSpore's UnicodeCharTokenizer.

    Args:
        with_offsets (bool): also return the UTF-8 byte offsets where each character starts and ends (two uint32
            arrays). Default False.

    Raises:
        TypeError: with_offsets not a bool. RuntimeError (when called): the input is not a scalar string.
    """

    def __init__(self, with_offsets=False):
        if not isinstance(with_offsets, bool):
            raise TypeError("Wrong input type for with_offsets, should be boolean.")
        self.with_offsets = with_offsets

    def _execute(self, text):
        if text.ndim != 0 or text.dtype.kind not in "US":
            raise RuntimeError("UnicodeCharTokenizerOp: the input shape should be scalar and the input datatype "
                               f"should be string, but got shape {text.shape} and dtype {text.dtype}.")
        s = text.item()
        if isinstance(s, bytes):
            s = s.decode("utf-8")
        chars = list(s) or [""]
        tokens = np.array(chars, dtype="<U1")
        if not self.with_offsets:
            return tokens
        sizes = [len(c.encode("utf-8")) for c in chars]
        limits = np.cumsum(sizes, dtype=np.int64)
        return tokens, (limits - sizes).astype(np.uint32), limits.astype(np.uint32)


def _range_text(dtype):
    if dtype.kind == "f":
        m = float(np.finfo(dtype).max)
        return f"[{-m:.6f}, {m:.6f}]"
    info = np.iinfo(dtype)
    return f"[{info.min}, {info.max}]"


class ToNumber(TensorOperation):
    """Strings -> numbers of `data_type`, element by element (any shape), as MindSpore's ToNumber: an integer type
    reads what std::stoll/stoull read (leading spaces, a sign, the longest run of digits: "12a" -> 12, "1.5" -> 1),
    a float type what std::stod reads ("1.5abc" -> 1.5, "nan"). float16 goes through float32.

    Args:
        data_type: a numeric kiln dtype (`kiln.int32`, `kiln.float32`, ...); not bool or string.

    Raises:
        TypeError: data_type not a kiln dtype or not numeric.
        RuntimeError (when called): input not strings; a string with no number in front ("it is invalid to convert
            ... to a number."); a value out of the type's range (for floats also inf and values that underflow to
            0), in MindSpore's words.
    """

    def __init__(self, data_type):
        from ...common import dtype as _kdt
        if not isinstance(data_type, _kdt.DType):
            raise TypeError(f"Argument data_type with value {data_type} is not of type [kiln dtype], but got "
                            f"{type(data_type)}.")
        np_type = to_numpy_dtype(data_type)
        if np_type.kind not in "iuf":
            raise TypeError(f"data_type: {data_type} is not numeric data type.")
        self.data_type = data_type
        self._dtype = np_type

    def _one(self, s):
        dt = self._dtype
        if dt.kind in "iu":
            m = _INT.match(s)
            if m is None:
                raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to a number.')
            v = int(m.group(1))
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                raise RuntimeError(f"ToNumber: string input {s} will be out of bounds if cast to {dt}. The valid "
                                   f"range is: {_range_text(dt)}.")
            return v
        m = _FLOAT.match(s)
        if m is None:
            raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to a number.')
        v = float(m.group(1))
        via = np.dtype(np.float32) if dt == np.float16 else dt
        info = np.finfo(via)
        if not np.isnan(v) and (abs(v) > float(info.max) or (v != 0 and abs(v) < float(info.tiny))):
            raise RuntimeError(f"ToNumber: string input {s} will be out of bounds if cast to {via}. The valid "
                               f"range is: {_range_text(via)}.")
        if dt == np.float16 and abs(v) > 65504:
            raise RuntimeError(f"ToFloat16: value {v:.6f}in input data is outside of valid float16 range "
                               "[65504.000000, -65504.000000].")
        return v

    def _execute(self, strings):
        if strings.dtype.kind not in "US":
            raise RuntimeError(f"ToNumber: input should be string datatype, but got {strings.dtype}.")
        flat = [self._one(x.decode("utf-8") if isinstance(x, bytes) else str(x)) for x in strings.reshape(-1).tolist()]
        return np.array(flat, dtype=self._dtype).reshape(strings.shape)


from . import Lookup, PythonTokenizer  # noqa: E402 (the package's operations, under this module path too)

__all__ = ["Lookup", "PythonTokenizer", "ToNumber", "UnicodeCharTokenizer"]
