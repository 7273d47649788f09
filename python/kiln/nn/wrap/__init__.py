"""Wrapper cells (MindSpore's `mindspore.nn.wrap`): a network joined with its loss (WithLossCell), with its loss
for evaluation (WithEvalCell), and a whole training step (TrainOneStepCell)."""
from .cell_wrapper import WithLossCell, WithEvalCell, TrainOneStepCell  # noqa: F401

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell"]
