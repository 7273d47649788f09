"""Layers (MindSpore's `mindspore.nn.layer`)."""
from .container import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from . import container, activation, basic

__all__ = container.__all__ + activation.__all__ + basic.__all__
