"""Elementwise cos, sin, floor and ceil (MindSpore's ops.cos / ops.sin / ops.floor / ops.ceil and the Cos, Sin,
Floor, Ceil primitives), bound from the C++ ops of the same names (src/ops/elementwise_unary.cpp).

cos/sin: integer inputs give float32; gradients −sin(x)·dy and cos(x)·dy. floor/ceil: same dtype as the input
(integers unchanged), not differentiable (zero gradient)."""
from .._loader import _core
from .primitives import _simple

__all__ = ["cos", "sin", "floor", "ceil", "Cos", "Sin", "Floor", "Ceil"]


def cos(input):
    """MindSpore's ops.cos(input): the cosine of each element (radians), input's shape; integer/bool inputs give
    float32. Gradient −sin(x)·dy. Raises TypeError for an input that is not a Tensor or number."""
    return _core.cos(input)


def sin(input):
    """MindSpore's ops.sin(input): the sine of each element (radians), input's shape; integer/bool inputs give
    float32. Gradient cos(x)·dy. Raises TypeError for an input that is not a Tensor or number."""
    return _core.sin(input)


def floor(input):
    """MindSpore's ops.floor(input): ⌊x⌋ of each element, input's shape and dtype (integers unchanged). Not
    differentiable (zero gradient, as MindSpore). Raises TypeError for an input that is not a Tensor or number."""
    return _core.floor(input)


def ceil(input):
    """MindSpore's ops.ceil(input): ⌈x⌉ of each element, input's shape and dtype (integers unchanged). Not
    differentiable (zero gradient). Raises TypeError for an input that is not a Tensor or number."""
    return _core.ceil(input)


Cos = _simple("Cos", _core.cos, "cos(x).")
Sin = _simple("Sin", _core.sin, "sin(x).")
Floor = _simple("Floor", _core.floor, "⌊x⌋.")
Ceil = _simple("Ceil", _core.ceil, "⌈x⌉.")
