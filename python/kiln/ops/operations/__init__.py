"""`mindspore.ops.operations` (imported as P): the primitive classes."""
from ..primitives import *  # noqa: F403 (re-export)
from ..primitives_array import *  # noqa: F403 (re-export)
