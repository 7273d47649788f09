"""Conversion of Python objects (NumPy arrays, lists, scalars) to Tensors, with MindSpore's dtype inference.

Registered with the C++ core at import: `_core.Tensor(...)` and op arguments call these."""
import collections
import threading

import numpy as np

from ._loader import _core
from .common import dtype as mstype

_OK_KINDS = "biufc"


def _native(arr):
    """`arr` in native byte order (a big-endian array from a file or a network protocol keeps its values)."""
    if not arr.dtype.isnative:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _check_kind(arr):
    if arr.dtype.kind not in _OK_KINDS:
        what = "object (Python objects such as str or None)" if arr.dtype.kind == "O" else str(arr.dtype)
        raise TypeError(f"For 'Tensor', the element type {what} of the array is not supported (supported: bool, "
                        "int8/16/32/64, uint8/16/32/64, float16/32/64, complex64/128).")


def _list_ints_to_int64(arr):
    """A list of Python ints that NumPy made unsigned (an int above Int64's range) raises OverflowError: Python int
    lists become Int64, as in MindSpore; pass dtype=kiln.uint64 for such values."""
    if arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise OverflowError(f"For 'Tensor', the Python integer {int(arr.max())} in the list is out of bounds for "
                            "Int64 (pass dtype=kiln.uint64 for unsigned 64-bit values).")
    return arr.astype(np.int64)


def _list_items(data):
    return [x.asnumpy() if isinstance(x, _core.Tensor) else x for x in data]


def _infer_array(data):
    """NumPy array for `data` with MindSpore's default dtypes: Python float / float lists → float32,
    Python int / int lists → int64, bool → bool, NumPy arrays and scalars keep their dtype (in native byte order;
    uint16/32/64 included).

    Raises TypeError for unsupported types (None, str, object arrays), ValueError for ragged lists and
    OverflowError for ints outside Int64's range."""
    if isinstance(data, np.ndarray):
        arr = _native(data)
    elif isinstance(data, np.generic):
        arr = _native(np.asarray(data))
    elif isinstance(data, bool):
        arr = np.asarray(data, dtype=np.bool_)
    elif isinstance(data, int):
        if not -2**63 <= data < 2**63:
            raise OverflowError(f"For 'Tensor', Python integer {data} out of bounds for Int64.")
        arr = np.asarray(data, dtype=np.int64)
    elif isinstance(data, float):
        arr = np.asarray(data, dtype=np.float32)
    elif isinstance(data, complex):  # MindSpore 2.10: Tensor(1+2j) is Complex128
        arr = np.asarray(data, dtype=np.complex128)
    elif isinstance(data, (list, tuple)):
        try:
            arr = np.asarray(_list_items(data))
        except OverflowError:
            raise OverflowError("For 'Tensor', an int in the list is out of bounds for Int64.") from None
        except ValueError as e:
            raise ValueError(f"For 'Tensor', the list/tuple is ragged or invalid: {e}") from None
        if arr.dtype.kind == "O":
            if any(isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63
                   for v in np.ravel(arr)):
                raise OverflowError("For 'Tensor', an int in the list is out of bounds for Int64.")
            _check_kind(arr)
        arr = _native(arr)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype.kind == "i" and arr.dtype != np.int64:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "u" and arr.dtype != np.uint8:
            arr = _list_ints_to_int64(arr)
    else:
        raise TypeError(f"For 'Tensor', the input_data must be a Tensor, NumPy array, list, tuple, bool, int, "
                        f"float or complex, but got {type(data).__name__}.")
    _check_kind(arr)
    return arr


def _first_out_of_range(items, np_dtype):
    """The first Python int or float in (nested) `items` that does not fit the integer dtype, or None: an int
    outside its range, a float that is infinite or whose truncation is outside it (NumPy converts a float with
    int()), or NaN."""
    info = np.iinfo(np_dtype)
    stack = [items]
    while stack:
        v = stack.pop(0)
        if isinstance(v, (list, tuple)):
            stack[:0] = list(v)
        elif isinstance(v, int) and not isinstance(v, bool) and not info.min <= v <= info.max:
            return v
        elif isinstance(v, float) and (not np.isfinite(v) or not info.min <= int(v) <= info.max):
            return v
    return None


def _from_python(data, dtype):
    """NumPy array of Kiln dtype `dtype` from Python data (scalars, lists, tuples: NumPy 2 raises OverflowError
    for an int that does not fit, as `np.array([300], np.uint8)`); arrays and Tensors are cast as NumPy's
    astype does."""
    np_dtype = mstype.dtype_to_nptype(dtype)
    if isinstance(data, (bool, int, float, list, tuple)) and np.dtype(np_dtype).kind in "iu":
        items = _list_items(data) if isinstance(data, (list, tuple)) else data
        try:
            arr = np.asarray(items, dtype=np_dtype)
        except (OverflowError, ValueError, TypeError) as e:
            bad = _first_out_of_range(items, np.dtype(np_dtype))
            if isinstance(bad, float) and np.isnan(bad):  # NumPy: np.array([nan], np.int32) raises ValueError
                raise ValueError(f"For 'Tensor', cannot convert float NaN to integer ({dtype}).") from None
            if bad is not None:
                kind = "integer" if isinstance(bad, int) else "float"
                raise OverflowError(f"For 'Tensor', Python {kind} {bad!r} out of bounds for {dtype}.") from None
            if isinstance(e, OverflowError):
                raise OverflowError(f"For 'Tensor', a value is out of bounds for {dtype}.") from None
            arr = None  # ragged, None, str...: _infer_array below names the problem
        if arr is not None:
            return _native(arr)
    elif isinstance(data, (float, int, complex, list, tuple)) and np.dtype(np_dtype).kind in "fc":
        # straight into the float or complex dtype: through float32 first would round float64 values (0.1, 1e-8)
        try:
            arr = np.asarray(_list_items(data) if isinstance(data, (list, tuple)) else data, dtype=np_dtype)
        except (ValueError, TypeError):
            arr = None  # ragged, None, str...: _infer_array below names the problem
        if arr is not None:
            return _native(arr)
    arr = _infer_array(data)
    return arr


def to_numpy(obj, dtype=None):
    """C-contiguous NumPy array for `obj` (used by the core for non-Tensor op arguments)."""
    if dtype is not None:
        arr = _from_python(obj, dtype)
        arr = arr.astype(mstype.dtype_to_nptype(dtype), copy=False)
    else:
        arr = _infer_array(obj)
    return np.asarray(arr, order="C")


# Signatures of the placeholder tensors made by Tensor(shape=[None, ...]): tensor id -> shape with None where
# dynamic. Ids are never reused (a process-wide counter); the registry keeps the newest _DYNAMIC_MAX entries.
_DYNAMIC = collections.OrderedDict()
_DYNAMIC_MAX = 1024
_DYNAMIC_LOCK = threading.Lock()


def _dynamic_placeholder(shape, dtype):
    """MindSpore's `Tensor(shape=[None, 3], dtype=...)`: a tensor with no data whose None (or -1) dimensions are
    dynamic, used as an input signature (kiln.export writes those dimensions as dynamic in ONNX). Kiln's tensor is
    empty (size 0 along each dynamic axis); `dynamic_shape(t)` gives its signature."""
    if dtype is None:
        raise ValueError("Tensor: a shape with dynamic (None) dimensions needs a 'dtype'.")
    sig = tuple(None if d is None or d == -1 else d for d in shape)
    for d in sig:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0):
            raise TypeError(f"Tensor: 'shape' must hold non-negative ints or None, but got {list(shape)}.")
    t = _core.full(tuple(0 if d is None else d for d in sig), 0.0, dtype)
    with _DYNAMIC_LOCK:
        _DYNAMIC[t._id] = sig
        while len(_DYNAMIC) > _DYNAMIC_MAX:
            _DYNAMIC.popitem(last=False)
    return t


def dynamic_shape(t):
    """The signature (shape with None where dynamic) of a tensor made by Tensor(shape=[None, ...]), else None."""
    with _DYNAMIC_LOCK:
        return _DYNAMIC.get(t._id)


def _is_bfloat16_array(x):
    """An ndarray or NumPy scalar of the bfloat16 dtype of the ml_dtypes package (NumPy itself has none). Converting
    it to float32 is exact, and back to bfloat16 too."""
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "V" and x.dtype.name == "bfloat16"


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
        if any(d is None or (isinstance(d, int) and d == -1) for d in shape):
            return _dynamic_placeholder(shape, dtype)
        return _core.full(shape, 0.0, dtype if dtype is not None else mstype.float32)
    if isinstance(input_data, _core.Tensor):
        return _core.cast(input_data, dtype) if dtype is not None else _core.identity(input_data)
    if _is_bfloat16_array(input_data):  # ml_dtypes.bfloat16 (what asnumpy() of a BFloat16 tensor gives): BFloat16
        t = _core.cast(_core.Tensor._from_numpy(np.asarray(input_data, np.float32, order="C")), mstype.bfloat16)
        return _core.cast(t, dtype) if dtype is not None and dtype != mstype.bfloat16 else t
    arr = _infer_array(input_data) if dtype is None else _from_python(input_data, dtype)
    t = _core.Tensor._from_numpy(np.asarray(arr, order="C"))
    if dtype is not None and dtype != t.dtype:
        t = _core.cast(t, dtype)
    return t


# ---- MindSpore-style errors for arguments that the C++ bindings can not convert ----
_EXPECTED = {
    "Tensor": "a Tensor, a number or an array-like of numbers",
    "kiln.Tensor": "a Tensor",
    "int": "an int",
    "bool": "a bool",
    "float": "a number",
    "str": "a str",
    "kiln._core.DType": "a dtype such as mindspore.float32",
    "collections.abc.Sequence[int]": "a tuple or list of ints",
    "collections.abc.Sequence[kiln.Tensor]": "a tuple or list of Tensors",
    "collections.abc.Sequence[kiln.Tensor | None]": "a tuple or list of Tensors or None",
}


def _op_name(name):
    """MindSpore's primitive spelling of a core function name: 'floor_div' → 'FloorDiv'."""
    if "." in name:  # a method: "Tensor.asnumpy"
        return name
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_")) or name


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class _Reason(str):
    """Why an argument does not convert, with the exception type the conversion raised."""

    def __new__(cls, text, kind=TypeError):
        r = super().__new__(cls, text)
        r.kind = kind
        return r


def _problem(x, typ):
    """None when `x` converts to the binding type `typ`; else the reason ('' when the type name says it all)."""
    if typ.endswith(" | None"):
        if x is None:
            return None
        typ = typ[:-len(" | None")]
    if typ == "object":
        return None
    if typ == "Tensor":
        if isinstance(x, (_core.Tensor, bool, int, float)):
            return None
        if not isinstance(x, (list, tuple, np.ndarray, np.generic)):
            return ""  # the type name says it all
        try:
            to_numpy(x)
            return None
        except (TypeError, ValueError, OverflowError) as e:
            return _Reason(str(e), type(e))
    if typ == "kiln.Tensor":
        return None if isinstance(x, _core.Tensor) else ""
    if typ == "int":
        return None if _is_int(x) else ""
    if typ == "bool":
        return None if isinstance(x, (bool, np.bool_)) else ""
    if typ == "float":
        return None if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) else ""
    if typ == "str":
        return None if isinstance(x, str) else ""
    if typ == "kiln._core.DType":
        return None if isinstance(x, _core.DType) else ""
    if typ.startswith("collections.abc.Sequence["):
        if not isinstance(x, (list, tuple)):
            return ""
        inner = typ[len("collections.abc.Sequence["):-1]
        for i, v in enumerate(x):
            if _problem(v, inner) is not None:
                return f"element {i} is {type(v).__name__}"
        return None
    return None


def _split_params(sig):
    """[(name, type)] of a nanobind signature 'def f(a: T, b: U = ...) -> R'."""
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    params, depth, cur = [], 0, ""
    for ch in inner + ",":
        if ch == "," and depth == 0:
            cur = cur.strip()
            if cur and cur not in ("/", "*") and not cur.startswith("*"):
                name, _, typ = cur.partition(":")
                params.append((name.strip(), typ.split("=")[0].strip()))
            cur = ""
            continue
        depth += ch == "["
        depth -= ch == "]"
        cur += ch
    return params


def _is_big_int(x):
    return isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**63


_ORDER = ("Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual")


def _big_int_call(op, fn, names, given, big):
    """A Python int beyond Int64 given for a tensor argument: against float tensors it is a float (NumPy's rule:
    the result is the same as with float(x)); otherwise (integer/bool tensors, or no tensor) OverflowError naming
    the op, as NumPy 2 raises for `np.array([1], np.uint8) * 2**70`."""
    tensors = [v for v in given.values() if isinstance(v, _core.Tensor)]
    x = given[big[0]]
    if op in _ORDER and len(big) == 1 and len(tensors) == 1 and not mstype.is_float(tensors[0].dtype):
        # An integer/bool tensor against an int beyond every Kiln integer: the comparison is the same for every
        # element (NumPy 2 compares exactly too; a float conversion would round 2**63 onto Int64's maximum).
        t = tensors[0]
        big_first = names.index(big[0]) < names.index(next(p for p, v in given.items() if v is t))
        if op in ("Equal", "NotEqual"):
            value = op == "NotEqual"
        else:
            t_is_less = x > 0  # the tensor's values all lie below a positive big int, above a negative one
            less = op in ("Less", "LessEqual")
            value = (t_is_less != big_first) == less
        return _core.full(list(t.shape), float(value), mstype.bool_)
    if tensors and all(mstype.is_float(t.dtype) for t in tensors):
        try:
            floats = {p: (float(v) if p in big else v) for p, v in given.items()}
        except OverflowError:
            raise OverflowError(f"For '{op}', the Python integer {x} is too large to convert to a float.") from None
        return fn(**floats)
    dtype = tensors[0].dtype if tensors else mstype.int64
    raise OverflowError(f"For '{op}', Python integer {x} out of bounds for {dtype}.")


def _argument_error(name, fn, args, kwargs):
    """Raises the TypeError for a call of the core function `name` whose arguments could not be converted: it
    names the op (MindSpore's spelling), the argument, what was expected and what was given. Called by the
    bindings instead of nanobind's list of signatures. The one case that returns: a Python int beyond Int64
    against float tensors, computed as a float (see _big_int_call)."""
    op = _op_name(name)
    sigs = [s[0] for s in getattr(fn, "__nb_signature__", ()) if "_kiln_convert_pass" not in s[0]]
    if not sigs:
        raise TypeError(f"For '{op}', the arguments are not valid.")
    params = _split_params(sigs[0])
    names = [p for p, _ in params]
    if len(args) > len(params):
        raise TypeError(f"For '{op}', expected at most {len(params)} arguments ({', '.join(names)}), but got "
                        f"{len(args)}.")
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise TypeError(f"For '{op}', got an unexpected keyword argument {unknown[0]!r} (arguments: "
                        f"{', '.join(names)}).")
    given = dict(zip(names, args))
    given.update(kwargs)
    big = [p for p, typ in params if p in given and typ == "Tensor" and _is_big_int(given[p])]
    if big:
        return _big_int_call(op, fn, names, given, big)
    for pname, typ in params:
        if pname not in given:
            continue
        x = given[pname]
        why = _problem(x, typ)
        if why is not None:
            expected = _EXPECTED.get(typ.replace(" | None", ""), typ)
            if typ.endswith(" | None"):
                expected += " or None"
            msg = f"For '{op}', the argument '{pname}' must be {expected}, but got {type(x).__name__}"
            kind = why.kind if isinstance(why, _Reason) and why.kind is OverflowError else TypeError
            raise kind(msg + (f": {why}" if why else "."))
    raise TypeError(f"For '{op}', the arguments ({', '.join(type(v).__name__ for v in args)}) do not match its "
                    f"parameters ({', '.join(names)}).")


_core._set_converter(to_numpy)
_core._set_argument_error(_argument_error)
_core._set_tensor_factory(make_tensor)
