"""Wrapper cells (MindSpore's `mindspore.nn.wrap`): a network joined with its loss (WithLossCell), with its loss
for evaluation (WithEvalCell), and a whole training step (TrainOneStepCell; with loss scaling, TrainOneStepWithLossScaleCell)."""
from .cell_wrapper import WithLossCell, WithEvalCell, TrainOneStepCell
from .grad_reducer import DistributedGradReducer
from .grad_accumulation import GradAccumulationCell, MicroBatchInterleaved
from .pipeline import PipelineCell, PipelineGradReducer
from .loss_scale import (
    TrainOneStepWithLossScaleCell, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
)

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "DistributedGradReducer", "TrainOneStepWithLossScaleCell",
           "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "GradAccumulationCell",
           "MicroBatchInterleaved", "PipelineCell", "PipelineGradReducer"]
