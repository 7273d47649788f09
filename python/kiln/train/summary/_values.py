"""NumPy values -> TensorBoard `Summary.Value` protobufs (tensorboardX's copy of TensorBoard's summary.proto).

The conversions keep MindSpore 2.10's meaning of each kind (mindspore/train/summary/_summary_adapter.py, read for
its rules): a scalar is the first element as a float; an image batch NCHW becomes one RGB PNG of the images on a grid
8 wide, scaled as MindSpore scales it; a histogram has MindSpore's bucket count over the finite values. What the
TensorBoard protobuf cannot hold is said where it is dropped (MindSpore's histogram NaN/±inf counts).
"""
import io

import numpy as np

_IMAGE_COLUMNS = 8  # MindSpore's canvas: up to 8 images per row
_HIST_MAX_BINS, _HIST_PER_BIN = 90, 10


def _pb():
    from tensorboardX.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    return summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2


def scalar_value(tag, arr):
    """A scalar: the (only) element of `arr` as TensorBoard's simple_value (a float32 in the file)."""
    summary_pb2 = _pb()[0]
    return summary_pb2.Summary.Value(tag=tag, simple_value=float(np.asarray(arr).reshape(-1)[0]))


def image_canvas(arr):
    """NCHW (C = 1 or 3) -> the uint8 HWC RGB canvas MindSpore writes: images row-major on a grid min(N, 8) wide,
    gray repeated to RGB, empty grid cells 0; then, with min and max over the whole canvas: values in [0, 1] times
    255, others (x - min) * 255 / (max - min + 1), truncated to uint8 (MindSpore 2.10's _fill_image_summary /
    _make_canvas_for_imgs). uint8 input is scaled like any other, as in MindSpore, whose uint8 check looks at the
    float64 canvas and so never holds: 0..255 becomes 0..254."""
    arr = np.asarray(arr)
    if arr.shape[1] == 1:
        arr = np.concatenate([arr, arr, arr], 1)
    n, _, h, w = arr.shape
    cols = min(n, _IMAGE_COLUMNS)
    rows = -(-n // cols)
    canvas = np.zeros((3, h * rows, w * cols))
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = arr[i]
    hwc = canvas.transpose(1, 2, 0)
    scale, shift = 1.0, 0.0
    hi, lo = np.max(hwc), np.min(hwc)
    if hi <= 1 and lo >= 0:
        scale = 255.0
    else:
        if hi != lo:
            scale = 255.0 / (hi - lo + 1)
        shift = lo
    return ((hwc.astype(np.float32) - shift) * scale).astype(np.uint8)


def image_problem(arr):
    """None when `arr` can be written as an image, else why not (MindSpore logs this and skips the image)."""
    arr = np.asarray(arr)
    if arr.ndim != 4 or arr.shape[1] not in (1, 3):
        return f"an image batch must be NCHW with C = 1 or 3, but got shape {arr.shape}"
    if 0 in arr.shape:
        return f"an image batch must not be empty, but got shape {arr.shape}"
    return None


def image_value(tag, arr):
    """An image batch (NCHW) -> Summary.Value with a PNG (see image_canvas)."""
    from PIL import Image
    summary_pb2 = _pb()[0]
    canvas = image_canvas(arr)
    buf = io.BytesIO()
    Image.fromarray(canvas, "RGB").save(buf, format="PNG")
    h, w, c = canvas.shape
    return summary_pb2.Summary.Value(tag=tag, image=summary_pb2.Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue()))


def histogram_bins(count):
    """MindSpore 2.10's bucket count for `count` finite values: 1 for none, 2 up to 5, 3 up to 10, count // 10 + 1
    up to 880, then 90."""
    if not count:
        return 1
    if count <= 5:
        return 2
    if count <= 10:
        return 3
    if count <= 880:
        return count // _HIST_PER_BIN + 1
    return _HIST_MAX_BINS


def histogram_value(tag, arr):
    """A tensor -> Summary.Value with TensorBoard's HistogramProto: min/max/num/sum/sum_squares of the finite values,
    `histogram_bins(num)` equal-width buckets from min to max (min - 0.5 .. max + 0.5 when all are equal), given as
    right edges (bucket_limit) and counts. NaN and ±inf have no bucket in TensorBoard's protobuf: they are left out
    (MindSpore's own format counts them in nan_count / pos_inf_count / neg_inf_count)."""
    summary_pb2 = _pb()[0]
    arr = np.asarray(arr)
    flat = arr.reshape(-1).astype(np.float64)  # (bool, ints, float16/32/64 and bfloat16 alike)
    finite = flat[np.isfinite(flat)]
    h = summary_pb2.HistogramProto()
    if finite.size == 0:
        return summary_pb2.Summary.Value(tag=tag, histo=h)
    lo, hi = float(finite.min()), float(finite.max())
    first, last = (lo, hi) if lo < hi else (lo - 0.5, hi + 0.5)
    edges = np.linspace(first, last, histogram_bins(finite.size) + 1)
    counts, _ = np.histogram(finite, bins=edges)
    h.min, h.max, h.num = lo, hi, float(finite.size)
    h.sum, h.sum_squares = float(finite.sum()), float(np.dot(finite, finite))
    h.bucket_limit.extend(float(e) for e in edges[1:])
    h.bucket.extend(float(c) for c in counts)
    return summary_pb2.Summary.Value(tag=tag, histo=h)


_DTYPES = {  # numpy dtype -> TensorBoard's DataType number (TensorFlow's types.proto; tensorboardX's copy lacks the
    # unsigned 32/64-bit names, the open proto3 enum takes their numbers)
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "complex64": 8, "int64": 9,
    "bool": 10, "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23,
}


def tensor_value(tag, arr):
    """A tensor -> Summary.Value with TensorBoard's TensorProto: dtype, shape and the values in C order
    (tensor_content, little-endian). A dtype TensorBoard lacks (bfloat16) is written as float32."""
    summary_pb2, tensor_pb2, tensor_shape_pb2, _ = _pb()
    arr = np.asarray(arr)
    code = _DTYPES.get(arr.dtype.name)
    if code is None:
        arr, code = arr.astype(np.float32), 1
    arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d))
                                                   for d in arr.shape])
    t = tensor_pb2.TensorProto(dtype=code, tensor_shape=shape, tensor_content=arr.tobytes())
    return summary_pb2.Summary.Value(tag=tag, tensor=t)


def make_value(plugin, tag, arr):
    """The Summary.Value of `plugin` ('scalar', 'image', 'histogram', 'tensor') for `arr`."""
    return {"scalar": scalar_value, "image": image_value, "histogram": histogram_value,
            "tensor": tensor_value}[plugin](tag, arr)
