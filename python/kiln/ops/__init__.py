"""kiln.ops — MindSpore's `mindspore.ops`: the functional op API, autodiff functions and primitives."""
from .function import *  # noqa: F401,F403
from .function import abs, max, min, pow, sum  # noqa: F401,A004
from ..common.api import grad, value_and_grad, get_grad  # noqa: F401
from .primitives import *  # noqa: F401,F403
from . import operations  # noqa: F401
from . import functional  # noqa: F401

P = operations
F = functional
from .clip import *  # noqa: F401,F403,E402  (clip_by_value for tuples too, clip_by_global_norm)
from .math_extra import *  # noqa: F401,F403,E402  (cos, sin, floor, ceil)
from .nn_func import *  # noqa: F401,F403,E402  (conv2d, max_pool2d, avg_pool2d, batch_norm, layer_norm, ...)
from .activation_func import *  # noqa: F401,F403,E402  (log1p, softplus, logsigmoid, relu6, hardsigmoid)
from .array_func import *  # noqa: F401,F403,E402  (tile, one_hot, gather_nd, repeat_elements, reciprocal, dtype)
from .primitives_array import *  # noqa: F401,F403,E402  (Primitive classes of array/comparison/creation ops)
from . import composite  # noqa: E402
from .composite import GradOperation, MultitypeFuncGraph, HyperMap, Map, partial, constexpr  # noqa: F401,E402
C = composite
from .control_flow import WhileLoop, ForiLoop, Scan, switch  # noqa: F401,E402  (compiled into While/If nodes)
