"""The function transforms and hook primitive of `mindspore.ops` (defined in kiln/common: _functional_ad.py,
_vmap.py, _custom_grad.py); HookBackward is also a Primitive class of `ops.operations` (P.HookBackward)."""
from ..common._functional_ad import vjp, jvp, jacfwd, jacrev
from ..common._vmap import vmap
from ..common._custom_grad import HookBackward, InsertGradientOf
from . import operations as _operations

_operations.HookBackward = HookBackward
_operations.InsertGradientOf = InsertGradientOf

__all__ = ["vjp", "jvp", "jacfwd", "jacrev", "vmap", "HookBackward", "InsertGradientOf"]
