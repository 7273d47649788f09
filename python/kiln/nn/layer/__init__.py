"""Layers (MindSpore's `mindspore.nn.layer`)."""
from .container import *  # noqa: F403 (re-export)
from .activation import *  # noqa: F403 (re-export)
from .basic import *  # noqa: F403 (re-export)
from . import container, activation, basic

__all__ = container.__all__ + activation.__all__ + basic.__all__
from .conv import *  # noqa: F403 (re-export)
from .pooling import *  # noqa: F403 (re-export)
from .normalization import *  # noqa: F403 (re-export)
from .embedding import *  # noqa: F403 (re-export)
from . import conv, pooling, normalization, embedding

__all__ = __all__ + conv.__all__ + pooling.__all__ + normalization.__all__ + embedding.__all__
from .rnn_cells import *  # noqa: F403 (re-export)
from .rnns import *  # noqa: F403 (re-export)
from . import rnn_cells, rnns

__all__ = __all__ + rnn_cells.__all__ + rnns.__all__
from .combined import *  # noqa: F403 (re-export)
from .math import *  # noqa: F403 (re-export)
from .image import *  # noqa: F403 (re-export)
from . import combined, math, image

__all__ = __all__ + combined.__all__ + math.__all__ + image.__all__
from .sync_batch_norm import SyncBatchNorm  # noqa: F401 (re-export: listed by sync_batch_norm.__all__ below)
from . import sync_batch_norm

__all__ = __all__ + sync_batch_norm.__all__
from .activation_ext import *  # noqa: F403 (re-export)
from . import activation_ext

__all__ = __all__ + activation_ext.__all__
from .pooling_ext import *  # noqa: F403 (re-export)
from . import pooling_ext

__all__ = __all__ + pooling_ext.__all__
from .basic_ext import *  # noqa: F403 (re-export)
from . import basic_ext

__all__ = __all__ + basic_ext.__all__
from .transformer import *  # noqa: F403 (re-export)
from . import transformer

__all__ = __all__ + transformer.__all__
from .padding import *  # noqa: F403 (re-export)
from . import padding

__all__ = __all__ + padding.__all__
from .timedistributed import *  # noqa: F403 (re-export)
from . import timedistributed

__all__ = __all__ + timedistributed.__all__
