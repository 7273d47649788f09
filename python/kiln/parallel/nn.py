"""kiln.parallel.nn — the part of MindSpore's `mindspore.parallel.nn` that Kiln runs: GradAccumulation (stand-alone
and data parallel; see kiln/nn/wrap/grad_accumulation.py and docs/distributed.md), MicroBatchInterleaved (the
split and the sum) and Pipeline (pipeline parallelism in PyNative: kiln/nn/wrap/pipeline.py). PipelineGradReducer
(MindSpore: Graph mode only, for its functional pipeline step) is not provided: Kiln's Pipeline already returns the
accumulated gradients to ops.value_and_grad."""
from ..nn.wrap.grad_accumulation import GradAccumulation, MicroBatchInterleaved
from ..nn.wrap.pipeline import Pipeline

__all__ = ["GradAccumulation", "MicroBatchInterleaved", "Pipeline"]
