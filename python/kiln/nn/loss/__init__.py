"""Losses (MindSpore's `mindspore.nn.loss`)."""
from .loss import *  # noqa: F403 (re-export)
from .loss_ext import *  # noqa: F403 (re-export)
from .loss_mae import *  # noqa: F403 (re-export)
from . import loss as _loss, loss_ext as _loss_ext, loss_mae as _loss_mae

__all__ = _loss.__all__ + _loss_ext.__all__ + _loss_mae.__all__
