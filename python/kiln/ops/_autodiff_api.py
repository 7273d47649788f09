"""The function transforms and hook primitive of `mindspore.ops` (defined in kiln/common: functional_ad.py,
vmap.py, custom_grad.py); HookBackward is also a Primitive class of `ops.operations` (P.HookBackward)."""
from .._autodiff.functional_ad import vjp, jvp, jacfwd, jacrev
from .._autodiff.vmap import vmap
from .._autodiff.custom_grad import HookBackward, InsertGradientOf
from . import operations as _operations

_operations.HookBackward = HookBackward
_operations.InsertGradientOf = InsertGradientOf

__all__ = ["vjp", "jvp", "jacfwd", "jacrev", "vmap", "HookBackward", "InsertGradientOf"]
