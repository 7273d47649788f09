"""kiln.parallel.nn — the part of MindSpore's `mindspore.parallel.nn` that Kiln runs: GradAccumulation (stand-alone
and data parallel; see kiln/nn/wrap/grad_accumulation.py and docs/distributed.md) and MicroBatchInterleaved (the
split and the sum). PipelineCell, Pipeline and PipelineGradReducer belong to the model-splitting modes, which Kiln
does not run yet."""
from ..nn.wrap.grad_accumulation import GradAccumulation, MicroBatchInterleaved

__all__ = ["GradAccumulation", "MicroBatchInterleaved"]
