"""`mindspore.ops.primitive`: the Primitive base class and `constexpr` (the same objects as `ops.Primitive` and
`ops.constexpr`), for scripts that import them from here (`from mindspore.ops.primitive import constexpr`).
MindSpore's PrimitiveWithInfer / prim_attr_register, which define new kernels through shape and type inference
callbacks, are not provided: Kiln's ops are defined in kiln.ops (see kiln/ops/_opdef.py)."""
from .composite import constexpr
from .primitives import Primitive

__all__ = ["Primitive", "constexpr"]
