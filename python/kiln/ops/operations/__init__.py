"""`mindspore.ops.operations` (imported as P): the primitive classes (kiln/ops/__init__.py adds every Primitive
class of kiln.ops). Its submodules (math_ops, nn_ops, array_ops, _grad_ops, ...) hold the classes where MindSpore
2.10 keeps them, as the same objects (kiln/ops/_ms_layout.py)."""
from ..primitives import *  # noqa: F403 (re-export)
from ..primitives_array import *  # noqa: F403 (re-export)
