"""Elementwise cos, sin, floor and ceil (MindSpore's ops.cos / ops.sin / ops.floor / ops.ceil and the Cos, Sin,
Floor, Ceil primitives), bound from the C++ ops of the same names (src/ops/elementwise_unary.cpp).

cos/sin: integer inputs give float32; gradients −sin(x)·dy and cos(x)·dy. floor/ceil: same dtype as the input
(integers unchanged), not differentiable (zero gradient)."""
from .._loader import _core
from .primitives import _simple

__all__ = ["cos", "sin", "floor", "ceil", "Cos", "Sin", "Floor", "Ceil"]


def cos(input):
    """cos(x) elementwise."""
    return _core.cos(input)


def sin(input):
    """sin(x) elementwise."""
    return _core.sin(input)


def floor(input):
    """⌊x⌋ elementwise."""
    return _core.floor(input)


def ceil(input):
    """⌈x⌉ elementwise."""
    return _core.ceil(input)


Cos = _simple("Cos", _core.cos, "cos(x).")
Sin = _simple("Sin", _core.sin, "sin(x).")
Floor = _simple("Floor", _core.floor, "⌊x⌋.")
Ceil = _simple("Ceil", _core.ceil, "⌈x⌉.")
