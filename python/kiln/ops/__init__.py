"""kiln.ops — MindSpore's `mindspore.ops`: the functional op API, autodiff functions and primitives."""
from .function import *  # noqa: F401,F403
from .function import abs, max, min, pow, sum  # noqa: F401,A004
from ..common.api import grad, value_and_grad, get_grad  # noqa: F401
from .primitives import *  # noqa: F401,F403
from . import operations  # noqa: F401
from . import functional  # noqa: F401

P = operations
F = functional
