"""Kiln's dtypes, spelled as MindSpore's `mindspore.common.dtype` (imported as `mstype`).

A dtype is a member of `kiln._core.DType`; `str(kiln.float32)` is "Float32" as in MindSpore."""
import numpy as np

from .. import _engine

DType = _engine.DType
Type = DType  # MindSpore's base class name for dtypes

bool_ = DType.Bool
uint8 = DType.UInt8
uint16 = DType.UInt16
uint32 = DType.UInt32
uint64 = DType.UInt64
int8 = DType.Int8
int16 = DType.Int16
int32 = DType.Int32
int64 = DType.Int64
float16 = DType.Float16
bfloat16 = DType.BFloat16
float32 = DType.Float32
float64 = DType.Float64
complex64 = DType.Complex64
complex128 = DType.Complex128
half = float16
single = float32
double = float64
float_ = float32
int_ = int64

number_type = (uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
               complex128)
int_type = (uint8, uint16, uint32, uint64, int8, int16, int32, int64)
float_type = (float16, bfloat16, float32, float64)
complex_type = (complex64, complex128)
all_types = (bool_,) + number_type

_TO_NUMPY = {
    bool_: np.bool_, uint8: np.uint8, uint16: np.uint16, uint32: np.uint32, uint64: np.uint64,
    int8: np.int8, int16: np.int16, int32: np.int32, int64: np.int64,
    float16: np.float16, float32: np.float32, float64: np.float64,
    complex64: np.complex64, complex128: np.complex128,
}
_FROM_NUMPY = {np.dtype(v): k for k, v in _TO_NUMPY.items()}


def dtype_numpy_name(dtype):
    """NumPy's spelling of a dtype ('float32', 'bfloat16', ...)."""
    return _engine.dtype_numpy_name(dtype)


def dtype_to_nptype(dtype):
    """The NumPy scalar type of a Kiln dtype (bfloat16 has none: float32 is returned)."""
    if dtype == bfloat16:
        return np.float32
    return _TO_NUMPY[dtype]


def pytype_to_dtype(obj):
    """The Kiln dtype for a NumPy dtype / NumPy scalar type / Python type (bool, int, float), as MindSpore maps them.

    Raises TypeError for anything else."""
    if isinstance(obj, DType):
        return obj
    if obj is bool:
        return bool_
    if obj is int:
        return int64
    if obj is float:
        return float32
    if obj is complex:
        return complex128
    if isinstance(obj, _engine.Tensor) or obj is None:  # np.dtype() would take a Tensor's .dtype / None as float64
        raise TypeError(f"The data type {type(obj).__name__} is not supported by Kiln.")
    try:
        return _FROM_NUMPY[np.dtype(obj)]
    except (TypeError, ValueError, KeyError):
        raise TypeError(f"The data type {obj!r} is not supported by Kiln.") from None


def is_complex(dtype):
    """True for complex64, complex128."""
    return dtype in complex_type


def as_float_input(x, op):
    """Tensor `x` for an op defined on real floats: float dtypes as they are, integer and bool as float32; a complex
    Tensor raises TypeError naming the op (casting it would silently drop the imaginary part)."""
    if x.dtype in float_type:
        return x
    refuse_complex(x, op)
    return _kernels.cast(x, float32)


def refuse_complex(x, op):
    """Raises Kiln's TypeError for a complex Tensor `x` given to op `op`, which has no complex form (its real
    formula, or a cast to a real dtype, would silently drop the imaginary part); returns x otherwise."""
    if x.dtype in complex_type:
        raise TypeError(f"For '{op}', the dtype {x.dtype} is not supported (Kiln's complex ops: "
                        "docs/decisions/complex-dtypes.md).")
    return x


def is_float(dtype):
    """True for float16, bfloat16, float32, float64."""
    return dtype in float_type


def to_dtype(dtype, what="dtype", op=None):
    """Validates and normalizes a dtype argument (a Kiln dtype, NumPy dtype or Python type); TypeError otherwise,
    naming the op when given (a Tensor passed by mistake is described by its shape and dtype, not printed)."""
    try:
        return pytype_to_dtype(dtype)
    except TypeError:
        got = (f"Tensor(shape={list(dtype.shape)}, dtype={dtype.dtype})" if isinstance(dtype, _engine.Tensor)
               else f"{type(dtype).__name__} {dtype!r}" if isinstance(dtype, (str, int, float)) or dtype is None
               else type(dtype).__name__)
        prefix = f"For '{op}', the" if op else "The argument"
        raise TypeError(f"{prefix} '{what}' must be a Kiln/MindSpore dtype such as mindspore.float32, "
                        f"but got {got}.") from None


from ..ops import _kernels  # noqa: E402 (last: kiln.ops imports this module; the functions above use it at call time)
