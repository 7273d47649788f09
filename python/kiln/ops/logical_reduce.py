"""ops.all / ops.any and Tensor.all / Tensor.any (MindSpore's ReduceAll / ReduceAny): logical AND / OR of the
elements over `axis`.

Kiln's ReduceAll / ReduceAny kernels read the input in its own dtype and test each element (nonzero: NaN is, -0.0
is not) as they read it: no Bool or Int32 copy of the input is made. An empty reduction gives NumPy's identities
(all: True, any: False). Not differentiable (bool outputs)."""

from .._loader import _core
from .._args import axes_arg
from ..common import dtype as mstype

__all__ = ["all", "any"]


def _reduce(input, axis, keep_dims, is_all, name):
    if not isinstance(input, _core.Tensor):
        raise TypeError(f"For '{name}', the 'input' must be a Tensor, but got {type(input).__name__}.")
    if not isinstance(keep_dims, bool):
        raise TypeError(f"For '{name}', the 'keep_dims' must be bool, but got {type(keep_dims).__name__}.")
    axes = axes_arg(name, "axis", axis)
    if isinstance(axes, int):
        axes = (axes,)
    nd = input.ndim
    dims = list(range(nd)) if axes is None else sorted({a + nd if a < 0 else a for a in axes})
    for a in dims:
        if not 0 <= a < max(nd, 1):
            raise ValueError(f"For '{name}', the 'axis' must be in [{-max(nd, 1)}, {max(nd, 1)}), but got {axis}.")
    if nd == 0:
        return _core.cast(input, mstype.bool_)
    return (_core.reduce_all if is_all else _core.reduce_any)(input, dims, keep_dims)


def all(input, axis=None, keep_dims=False):
    """True where every element along `axis` (None: all axes; an int, tuple or list) is nonzero; a bool tensor with
    the reduced axes removed (kept as size 1 with keep_dims). Raises TypeError (not a Tensor, keep_dims not bool),
    ValueError (axis out of range)."""
    return _reduce(input, axis, keep_dims, True, "all")


def any(input, axis=None, keep_dims=False):
    """True where some element along `axis` (None: all axes; an int, tuple or list) is nonzero; a bool tensor with
    the reduced axes removed (kept as size 1 with keep_dims). Raises TypeError (not a Tensor, keep_dims not bool),
    ValueError (axis out of range)."""
    return _reduce(input, axis, keep_dims, False, "any")
