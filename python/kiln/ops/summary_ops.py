"""The summary operators (MindSpore 2.10's `ops.ScalarSummary`, `ImageSummary`, `TensorSummary`,
`HistogramSummary`, of `mindspore.ops.operations.debug_ops`): called in a Cell's construct, each hands a tensor's
value of every run to the open `SummaryRecord` (or `SummaryCollector`), which writes it at its next `record(step)`.

How the value gets out, in PyNative and in compiled code alike: the op issues Kiln's side-effect Print op
(src/ops/print.cpp) with a text that is only a channel marker naming the kind and the tag, and one tensor slot. A
side-effect op runs at every execution of a compiled graph, in program order, and hands its tensors to the front
end's text sink (`kiln._compiler.graph_builtins.write_text_slots`), which gives texts that start with the marker to
`_deliver` here instead of printing them. So no graph output is added and no C++ op is needed: the graph computes
the value, the sink copies it (NumPy) into the cache below, and `SummaryRecord.record` drains the cache. In PyNative
the Print op runs at once, so the value arrives during the call.

The cache keeps the newest value per tag and kind, as MindSpore's `SummaryRecord` does when it records (its cache is
a list that record() folds into a dict by name). It is filled whether or not a SummaryRecord is open, as
MindSpore's is, and bounded by the number of distinct tags. The Print text names the kind and the (percent-encoded)
tag, so graphs from the on-disk compile cache deliver correctly in another process.

Errors: MindSpore checks the name and the value's rank while compiling (graph mode) or at `record()` (PyNative);
Kiln checks both at the call, in both modes, with the same exception types: TypeError for a name that is not a str
or a value that is not a Tensor, ValueError for an empty name or a value of the wrong rank.
"""
import threading
from urllib.parse import quote, unquote

import numpy as np

from .._loader import _core
from .primitives import Primitive

__all__ = ["ScalarSummary", "ImageSummary", "TensorSummary", "HistogramSummary"]

_MARK = "\x1c"  # first byte of a Print text that is a summary channel (print.cpp's slots are \x1f, \x1e; \x1d style)
_KINDS = ("Scalar", "Image", "Tensor", "Histogram")
_lock = threading.Lock()
_cache = {}  # "tag[:Kind]" -> np.ndarray, the newest value


def _channel_text(kind, tag):
    """The Print text of a channel: the marker, the kind and the percent-encoded tag (no control bytes, so none of
    Print's slot markers), then one tensor slot. It names its tag itself, so a graph loaded from the compile cache
    by another process delivers to the right tag."""
    return f"{_MARK}{kind}:{quote(tag, safe='')}\x1e"


def _deliver(text, tensors):
    """The text sink's branch for summary channels (see the module docstring): stores a copy of the value and
    returns True; False when `text` is not a channel's (an ordinary print that happens to start with '\x1c')."""
    head, sep, rest = text[1:].partition("\x1e")
    kind, colon, tag = head.partition(":")
    if not sep or rest.strip("\n") or not colon or kind not in _KINDS or not tag or len(tensors) != 1:
        return False
    arr = _numpy_copy(tensors[0])
    with _lock:
        _cache[f"{unquote(tag)}[:{kind}]"] = arr
    return True


def _numpy_copy(value):
    """A NumPy copy of a tensor's values; bfloat16 (which NumPy lacks) as float32."""
    if isinstance(value, _core.Tensor):
        if value.dtype == _core.DType.BFloat16:
            value = _core.cast(value, _core.DType.Float32)
        value = value.asnumpy()
    return np.array(value, copy=True)


def _drain():
    """Returns {"tag[:Kind]": np.ndarray} of the values delivered since the last drain, and empties the cache."""
    global _cache
    with _lock:
        data, _cache = _cache, {}
    return data


def _is_tensor(x):
    return isinstance(x, _core.Tensor)


class _SummaryOp(Primitive):
    _kind = ""  # Scalar, Image, Tensor, Histogram

    def __init__(self):
        super().__init__(type(self).__name__)

    def _check_value(self, shape):
        """Raises ValueError when `shape` (may hold None for a dynamic size) does not suit this op."""

    def __call__(self, name, value):
        op = type(self).__name__
        if not isinstance(name, str):
            raise TypeError(f"For '{op}', the input argument[name] must be a str, but got {type(name).__name__}.")
        if not name:
            raise ValueError(f"For '{op}', the input argument[name] cannot be an empty string.")
        if not _is_tensor(value):
            raise TypeError(f"For '{op}', the input argument[value] must be a Tensor, but got "
                            f"{type(value).__name__}.")
        self._check_value(tuple(value.shape))
        _core.print_(_channel_text(self._kind, name), [value])


def _size(shape):
    if any(d is None or d < 0 for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64))


class ScalarSummary(_SummaryOp):
    """ScalarSummary()(name, value): records a scalar under tag `name` at the open SummaryRecord's next record().

    Inputs:
        name (str): the tag, not empty.
        value (Tensor): one element, rank 0 or 1 (shape () or (1,)); any numeric dtype (written as a float).
    Returns None. In a compiled graph it records the value of every run (see the module docstring).
    Raises:
        TypeError: `name` is not a str, or `value` is not a Tensor.
        ValueError: `name` is empty, or `value` has rank > 1 or more than one element.
    """
    _kind = "Scalar"

    def _check_value(self, shape):
        size = _size(shape)
        if len(shape) > 1 or (size is not None and size != 1):
            raise ValueError(f"For 'ScalarSummary', the value must hold one element (rank 0 or 1), but got shape "
                             f"{shape}.")


class ImageSummary(_SummaryOp):
    """ImageSummary()(name, value): records images under tag `name` at the open SummaryRecord's next record().

    Inputs:
        name (str): the tag, not empty.
        value (Tensor): a batch of images, NCHW (rank 4) with C = 1 or 3. Written as one PNG: the N images on a grid
            8 wide, gray images as RGB; uint8 values as they are, float values in [0, 1] times 255, other values
            mapped linearly onto [0, 255] (MindSpore 2.10's conversion). A C other than 1 or 3 is logged and
            skipped when written, as MindSpore does.
    Returns None.
    Raises:
        TypeError: `name` is not a str, or `value` is not a Tensor.
        ValueError: `name` is empty, or `value` is not rank 4.
    """
    _kind = "Image"

    def _check_value(self, shape):
        if len(shape) != 4:
            raise ValueError(f"For 'ImageSummary', the value must be a rank-4 NCHW image batch, but got shape "
                             f"{shape}.")


class TensorSummary(_SummaryOp):
    """TensorSummary()(name, value): records a whole tensor under tag `name` at the open SummaryRecord's next
    record() (a TensorBoard tensor summary: dtype, shape and the values).

    Inputs:
        name (str): the tag, not empty.
        value (Tensor): rank >= 1.
    Returns None.
    Raises:
        TypeError: `name` is not a str, or `value` is not a Tensor.
        ValueError: `name` is empty, or `value` is 0-d.
    """
    _kind = "Tensor"

    def _check_value(self, shape):
        if len(shape) < 1:
            raise ValueError("For 'TensorSummary', the value's rank must be at least 1, but got a 0-d tensor.")


class HistogramSummary(_SummaryOp):
    """HistogramSummary()(name, value): records the histogram of a tensor's values under tag `name` at the open
    SummaryRecord's next record().

    Inputs:
        name (str): the tag, not empty.
        value (Tensor): rank >= 1. Buckets as MindSpore 2.10 makes them: `count // 10 + 1` equal-width buckets
            between the finite min and max (2 for up to 5 values, 3 for up to 10, at most 90); NaN and ±inf are
            left out of the buckets.
    Returns None.
    Raises:
        TypeError: `name` is not a str, or `value` is not a Tensor.
        ValueError: `name` is empty, or `value` is 0-d.
    """
    _kind = "Histogram"

    def _check_value(self, shape):
        if len(shape) < 1:
            raise ValueError("For 'HistogramSummary', the value's rank must be at least 1, but got a 0-d tensor.")
