"""MindSpore's Tensor repr: `Tensor(shape=[2], dtype=Float32, value= [ 1.00000000e+00,  2.00000000e+00])`.

Layout as ../shared/reference/mindspore_api.md §2.1: floats `% .8e` (float16 `%11.4e`, bfloat16 `%g` right-aligned to
the widest, as MindSpore 2.10 prints it), ints right-aligned to the widest,
bools width 5; rows `[[a, b],\n [c, d]]`; dimensions with more than 6 entries (ndim > 1) or 1-D tensors with more than
1000 entries show the first 3, ` ... `, and the last 3; 1-D floats wrap every 12 elements (ints 24).

`shortest_float` gives the shortest decimal that identifies a float16/float32/bfloat16 value (NumPy's float32 repr):
what str()/format() of tensors and Kiln's reprs of float32 settings (a learning rate) show."""
import numpy as np

_NP_FLOAT = {"Float16": np.float16, "Float32": np.float32}


def _round_bfloat16(x):
    """x (a Python float) rounded to the nearest bfloat16 (ties to even), as a Python float."""
    b = np.array([x], np.float32).view(np.uint32)
    if not np.isfinite(b.view(np.float32)[0]):
        return float(b.view(np.float32)[0])
    b = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return float(b.view(np.float32)[0])


def shortest_float(value, dtype_name):
    """The Python float with the fewest significant digits that rounds back to `value` in the tensor dtype
    `dtype_name` ('Float16', 'Float32', 'BFloat16'; others: value itself): a float32 0.1 (0.10000000149011612 as a
    double) gives 0.1, so that printing a low-precision value shows what the user wrote (NumPy's float32 repr)."""
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return value
    t = _NP_FLOAT.get(dtype_name)
    if t is not None:
        return float(str(t(value)))
    if dtype_name == "BFloat16":
        for digits in range(1, 10):
            cand = float(f"{value:.{digits}g}")
            if _round_bfloat16(cand) == value:
                return cand
    return value


def _complex_str(v):
    """MindSpore 2.10's complex element: both parts as C++ streams print doubles (%g), e.g. `0.1+0.2j`, `-0-1.5j`."""
    return f"{float(v.real):g}{float(v.imag):+g}j"


def _elem_formatter(arr, dtype_name):
    if arr.dtype == np.bool_:
        return lambda v: f"{str(bool(v)):>5}"
    if arr.dtype.kind == "c":
        return _complex_str
    if arr.dtype.kind == "f":
        if dtype_name == "Float16":
            return lambda v: f"{float(v):11.4e}"
        if dtype_name == "BFloat16":  # MindSpore 2.10: "%g" (6 significant digits) right-aligned to the widest
            width = max((len(f"{float(v):g}") for v in arr.flat), default=1)
            return lambda v: f"{float(v):>{width}g}"
        return lambda v: f"{float(v): .8e}"
    width = max((len(str(int(v))) for v in arr.flat), default=1)
    return lambda v: f"{int(v):>{width}}"


def _summarize_axis(n, ndim, total):
    return (ndim > 1 and n > 6) or (ndim == 1 and total > 1000)


def _fmt(arr, fmt, depth, total, ndim_total):
    if arr.ndim == 1:
        n = arr.shape[0]
        if _summarize_axis(n, ndim_total if ndim_total > 1 else 1, total if ndim_total == 1 else 0) or \
                (ndim_total > 1 and n > 6):
            items = [fmt(v) for v in arr[:3]] + ["..."] + [fmt(v) for v in arr[-3:]]
        else:
            items = [fmt(v) for v in arr]
        per_line = 12 if arr.dtype.kind in "fb" else 24
        if ndim_total == 1 and len(items) > per_line:
            lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
            return "[" + ",\n ".join(lines) + "]"
        return "[" + ", ".join(items) + "]"
    n = arr.shape[0]
    rows = [_fmt(arr[i], fmt, depth + 1, total, ndim_total) for i in (range(3) if n > 6 else range(n))]
    if n > 6:
        rows += ["..."] + [_fmt(arr[i], fmt, depth + 1, total, ndim_total) for i in range(n - 3, n)]
    sep = ",\n" + " " * (depth + 1)  # MindSpore's repr puts no blank lines between blocks (NumPy's str does)
    return "[" + sep.join(rows) + "]"


def tensor_repr(arr, dtype_name, shape):
    """The MindSpore repr of a tensor whose values are in NumPy array `arr`."""
    head = f"Tensor(shape={list(shape)}, dtype={dtype_name}, value="
    if arr.ndim == 0:
        v = arr.item()
        if isinstance(v, bool):
            s = str(v)
        elif isinstance(v, complex):
            s = _complex_str(v)
        elif isinstance(v, float):
            s = f"{v:g}"
        else:
            s = str(v)
        return head + " " + s + ")"
    if arr.size == 0:
        return head + " []" if arr.ndim == 1 else head + "\n[]"
    body = _fmt(arr, _elem_formatter(arr, dtype_name), 0, arr.size, arr.ndim)
    return head + ("\n" if arr.ndim > 1 else " ") + body + ")"
