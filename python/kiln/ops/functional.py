"""`mindspore.ops.functional` (imported as F): the functional API."""
from .function import *  # noqa: F403 (re-export)
from .function import abs, max, min, pow, sum  # noqa: F401 (re-export)
from ..common.api import grad, value_and_grad  # noqa: F401 (re-export)
from .composite import partial  # noqa: F401 (re-export)
