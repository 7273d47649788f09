"""MindSpore 2.10's ops.tan, sinh, cosh, asinh/arcsinh, acosh/arccosh, atanh/arctanh, expm1 and the Tan, Sinh, Cosh,
Asinh, Acosh, Atanh, Expm1 primitives: one C++ elementwise op each (src/ops/elementwise_unary.cpp: libm's tan,
sinh, cosh, asinh, acosh, atanh, expm1 in the compute type, float16/bfloat16 computed in float32, float64 exactly
libm's value; gradients are the ops' bprops there). Integer and bool inputs compute in float32 (the schema's
`float` dtype rule)."""
from .._loader import _core
from .function import _tensor_arg
from ._opdef import defop

# The Primitive classes (Tan, Sinh, ...), the Tensor methods and the aliases (arcsinh, ...) are derived from the
# @defop declarations by kiln/ops/_opdef.py.
__all__ = ["tan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1"]


def _expm1(x):
    """eˣ − 1 of a float Tensor (one Expm1 op; used by the ELU family in nnact_func.py)."""
    return _core.expm1(x)


@defop(primitive="Expm1", tensor="expm1", mint="expm1")
def expm1(input):
    """MindSpore's ops.expm1(input): eˣ − 1, accurate for small |x|; one C++ op (Expm1: libm's expm1). Integer/bool
    inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.expm1(_tensor_arg(input, "expm1"))


@defop(primitive="Sinh", tensor="sinh", mint="sinh")
def sinh(input):
    """MindSpore's ops.sinh(input): (eˣ − e⁻ˣ)/2, accurate near 0 and finite up to the dtype's limit; one C++ op
    (Sinh: libm's sinh). Integer/bool inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.sinh(_tensor_arg(input, "sinh"))


@defop(primitive="Cosh", tensor="cosh", mint="cosh")
def cosh(input):
    """MindSpore's ops.cosh(input): (eˣ + e⁻ˣ)/2; one C++ op (Cosh: libm's cosh). Integer/bool inputs give float32.
    Raises TypeError for a non-Tensor."""
    return _core.cosh(_tensor_arg(input, "cosh"))


@defop(primitive="Tan", tensor="tan", mint="tan")
def tan(input):
    """MindSpore's ops.tan(input): tan x (radians); one C++ op (Tan: libm's tan). Integer/bool inputs give float32.
    Raises TypeError for a non-Tensor."""
    return _core.tan(_tensor_arg(input, "tan"))


@defop(primitive="Asinh", tensor="asinh", mint=("asinh", "arcsinh"), aliases=("arcsinh",))
def asinh(input):
    """MindSpore's ops.asinh(input) (arcsinh): the inverse hyperbolic sine; one C++ op (Asinh: libm's asinh).
    Integer/bool inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.asinh(_tensor_arg(input, "asinh"))


@defop(primitive="Acosh", tensor="acosh", mint=("acosh", "arccosh"), aliases=("arccosh",))
def acosh(input):
    """MindSpore's ops.acosh(input) (arccosh): the inverse hyperbolic cosine, NaN for x < 1; one C++ op (Acosh:
    libm's acosh). Integer/bool inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.acosh(_tensor_arg(input, "acosh"))


@defop(primitive="Atanh", tensor="atanh", mint=("atanh", "arctanh"), aliases=("arctanh",))
def atanh(input):
    """MindSpore's ops.atanh(input) (arctanh): ½·log((1 + x)/(1 − x)), ±inf at ±1, NaN outside [−1, 1]; one C++ op
    (Atanh: libm's atanh). Integer/bool inputs give float32. Raises TypeError for a non-Tensor."""
    return _core.atanh(_tensor_arg(input, "atanh"))
