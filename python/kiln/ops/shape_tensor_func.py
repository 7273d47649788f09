"""ops.dyn_shape / ops.TensorShape: a tensor's shape as an int64 Tensor (issue 11, dynamic shapes).

In a graph compiled with None dimensions (jit(input_signature=...) / Cell.set_inputs) the result follows the
run-time sizes: it is a constant of the probe traces whose values the dynamic-shape compiler fits, element by
element, as linear in the dynamic sizes (docs/graph_mode.md, "Dynamic shapes"), so one graph gives [b, 3] for every
batch size b."""
import numpy as np

from ._opdef import defop
from .function import _tensor_arg

__all__ = ["dyn_shape"]


@defop(primitive="TensorShape")
def dyn_shape(input_x):
    """MindSpore's ops.dyn_shape(input_x): the shape of `input_x` as a 1-D int64 Tensor of length input_x.ndim
    (shape (0,) for a 0-d input). Inside a dynamic-shape graph it holds the run-time sizes. Not differentiable (an
    integer result). TypeError for a non-Tensor."""
    x = _tensor_arg(input_x, "dyn_shape", "input_x")
    from ..common.tensor import Tensor
    dims = tuple(x.shape)
    return Tensor(np.array([int(d) for d in dims], np.int64).reshape(len(dims)))
