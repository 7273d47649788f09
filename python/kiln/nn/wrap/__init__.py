"""Wrapper cells (MindSpore's `mindspore.nn.wrap`): a network joined with its loss (WithLossCell), with its loss
for evaluation (WithEvalCell), and a whole training step (TrainOneStepCell; with loss scaling, TrainOneStepWithLossScaleCell)."""
from .cell_wrapper import WithLossCell, WithEvalCell, TrainOneStepCell  # noqa: F401
from .grad_reducer import DistributedGradReducer  # noqa: F401
from .loss_scale import (  # noqa: F401
    TrainOneStepWithLossScaleCell, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
)

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "DistributedGradReducer", "TrainOneStepWithLossScaleCell",
           "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell"]
