"""Input checks shared by the layers and losses: MindSpore-style messages instead of Python's attribute errors."""
from ..common.tensor import Tensor as _Tensor


def check_input(x, cls_name, name="x", min_ndim=None):
    """Returns `x` if it is a Tensor with at least `min_ndim` dims.

    Raises:
        TypeError: x is not a Tensor ("For 'Dense', the input 'x' must be a Tensor, but got NoneType.").
        ValueError: x has fewer than min_ndim dims.
    """
    if not isinstance(x, _Tensor):
        raise TypeError(f"For '{cls_name}', the input '{name}' must be a Tensor, but got {type(x).__name__}.")
    if min_ndim is not None and x.ndim < min_ndim:
        raise ValueError(f"For '{cls_name}', the dimension of '{name}' should not be less than {min_ndim}, but got "
                         f"{x.ndim}.")
    return x
