"""The data-parallel part of semi-auto parallel without AutoParallel: MindSpore's samples that set
`set_auto_parallel_context(parallel_mode=SEMI_AUTO_PARALLEL)` (e.g. with `enable_parallel_optimizer=True`) and train
a network without `shard` strategies through their own `value_and_grad` step, with no gradient reducer.

In MindSpore every operator without a strategy gets the data-parallel one (the batch dimension split over the
processes) and the parallel pass inserts the all-reduce of the Parameters' gradients over the data-parallel group
(its mirror operator; the gradient of the loss over the global batch, a mean of the processes' gradients when each
process's loss is the mean over its equal part). Kiln has no graph pass: with parallel_mode 'semi_auto_parallel',
full_batch=False (dataset strategy 'data_parallel'), one pipeline stage, more than one process and outside an
AutoParallel call (which gathers the batch itself), the outermost grad transform (value_and_grad / grad /
GradOperation, so also TrainOneStepCell and Model) averages the Parameters' gradients over the processes
(AllReduce sum times 1/N, as nn.DistributedGradReducer with gradients_mean). A sharded primitive in that setting already raises ValueError (it needs full_batch=True),
so the network is data parallel. The loss each process returns is its own (MindSpore's is the global mean; equal
when the processes read the same batch, as the tutorials' unsharded datasets do)."""
from .. import _engine
from .. import ops
from ..ops import _kernels
from ..common import dtype as mstype

__all__ = []


def applies():
    """True when the outermost grad transform must average the Parameters' gradients over the processes."""
    from .._parallel_context import ParallelMode, get_auto_parallel_context
    from . import _op_shard
    if get_auto_parallel_context("parallel_mode") != ParallelMode.SEMI_AUTO_PARALLEL:
        return False
    if getattr(_op_shard._state, "auto", 0) or get_auto_parallel_context("pipeline_stages") > 1:
        return False
    if get_auto_parallel_context("full_batch") or get_auto_parallel_context("dataset_strategy") == "full_batch":
        return False
    return _op_shard._world()[0] > 1


def average(grads):
    """Each Tensor of `grads` (a list) all-reduced (sum) over the world and scaled by 1/size; None and
    non-Tensors as they are."""
    world = _engine.comm_group_size("world")
    out = []
    for g in grads:
        if isinstance(g, _engine.Tensor):
            s = _kernels.all_reduce(g, 0, "world")
            g = ops.mul(s, _kernels.cast(_kernels.full([], 1.0 / world, mstype.float64), s.dtype))
        out.append(g)
    return out
