"""nn.MAELoss (MindSpore's mean absolute error loss; used by MindSpore's optimizer tutorial)."""
from .loss import L1Loss

__all__ = ["MAELoss"]


class MAELoss(L1Loss):
    """Mean absolute error: ℓ = |logits − labels| (broadcast), reduced by `reduction` ('mean' default, 'sum' or
    'none'); the same loss as nn.L1Loss, under MindSpore's other name.

    Args: reduction (str, default 'mean').
    Inputs: logits (Tensor of any shape, float), labels (Tensor broadcastable to logits).
    Outputs: a 0-d Tensor, or the elementwise loss for 'none'.
    Raises: ValueError for another reduction; TypeError for a non-Tensor input."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction)
