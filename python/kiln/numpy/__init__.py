"""kiln.numpy — MindSpore's `mindspore.numpy`: NumPy-style functions on Kiln Tensors (creation, shape manipulation,
elementwise math, reductions, products), with mindspore.numpy's dtype defaults (Python ints → Int32, floats →
Float32). Every function returns Tensors made by Kiln ops, so gradients and Graph mode work through them."""
from ..common.dtype import (bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                            uint32, uint64)
from .array_creations import *  # noqa: F403 (re-export)
from .array_ops import *  # noqa: F403 (re-export)
from .math_ops import *  # noqa: F403 (re-export)
from .math_ops import abs, max, min, sum  # noqa: F401 (re-export)
from . import array_creations, array_ops, math_ops

int_ = int32
float_ = float32

__all__ = (["bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "uint64", "int_", "float_"] + array_creations.__all__ + array_ops.__all__ + math_ops.__all__)
