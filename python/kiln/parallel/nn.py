"""kiln.parallel.nn — the part of MindSpore's `mindspore.parallel.nn` that Kiln runs: GradAccumulation (stand-alone
and data parallel; see kiln/nn/wrap/grad_accumulation.py and docs/distributed.md), MicroBatchInterleaved (the
split and the sum), Pipeline (pipeline parallelism in PyNative: kiln/nn/wrap/pipeline.py) and PipelineGradReducer
(its functional step's gradient scaling: Kiln's Pipeline already returns the accumulated gradients to
ops.value_and_grad)."""
from ..nn.wrap.grad_accumulation import GradAccumulation, MicroBatchInterleaved
from ..nn.wrap.pipeline import Pipeline, PipelineGradReducer

__all__ = ["GradAccumulation", "MicroBatchInterleaved", "Pipeline", "PipelineGradReducer"]
