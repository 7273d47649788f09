"""kiln.common — MindSpore's `mindspore.common`: Tensor, Parameter, dtypes, initializers, seeds."""
from . import dtype  # noqa: F401 (re-export)
from .tensor import Tensor  # noqa: F401 (re-export)
from .parameter import Parameter, ParameterTuple  # noqa: F401 (re-export)
from .row_tensor import RowTensor  # noqa: F401  (mindspore.common.RowTensor)
from .seed import set_seed, get_seed  # noqa: F401 (re-export)
from .api import value_and_grad, grad  # noqa: F401 (re-export)
from .api import jit  # noqa: F401 (mindspore.common.jit: the function, one definition in kiln/_compiler)
from .dtype import *  # noqa: F403 (re-export)
