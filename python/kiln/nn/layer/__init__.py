"""Layers (MindSpore's `mindspore.nn.layer`)."""
from .container import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from . import container, activation, basic

__all__ = container.__all__ + activation.__all__ + basic.__all__
from .conv import *  # noqa: F401,F403,E402
from .pooling import *  # noqa: F401,F403,E402
from .normalization import *  # noqa: F401,F403,E402
from .embedding import *  # noqa: F401,F403,E402
from . import conv, pooling, normalization, embedding  # noqa: E402

__all__ = __all__ + conv.__all__ + pooling.__all__ + normalization.__all__ + embedding.__all__
from .rnn_cells import *  # noqa: F401,F403,E402
from .rnns import *  # noqa: F401,F403,E402
from . import rnn_cells, rnns  # noqa: E402

__all__ = __all__ + rnn_cells.__all__ + rnns.__all__
from .combined import *  # noqa: F401,F403,E402
from .math import *  # noqa: F401,F403,E402
from .image import *  # noqa: F401,F403,E402
from . import combined, math, image  # noqa: E402

__all__ = __all__ + combined.__all__ + math.__all__ + image.__all__
from .sync_batch_norm import SyncBatchNorm  # noqa: E402,F401 (re-export: listed by sync_batch_norm.__all__ below)
from . import sync_batch_norm  # noqa: E402

__all__ = __all__ + sync_batch_norm.__all__
from .activation_ext import *  # noqa: F401,F403,E402
from . import activation_ext  # noqa: E402

__all__ = __all__ + activation_ext.__all__
from .pooling_ext import *  # noqa: F401,F403,E402
from . import pooling_ext  # noqa: E402

__all__ = __all__ + pooling_ext.__all__
from .basic_ext import *  # noqa: F401,F403,E402
from . import basic_ext  # noqa: E402

__all__ = __all__ + basic_ext.__all__
