"""`mindspore.boost`: of MindSpore's training accelerators, Kiln has gradient accumulation
(`GradientAccumulation`, and the `gradient_accumulation_op` / `gradient_clear_op` model zoos use to write their own,
in kiln/boost/grad_accumulation.py). MindSpore's other boost classes (AutoBoost, LessBN, GradientFreeze, AdaSum,
DimReduce, BoostTrainOneStepCell, GroupLossScaleManager) are not provided."""
from .grad_accumulation import GradientAccumulation

__all__ = ["GradientAccumulation"]
