"""kiln.parallel — the part of MindSpore's `mindspore.parallel` that data-parallel scripts use: the private helpers
of `mindspore.parallel._utils` (_get_device_num, _get_gradients_mean, _get_parallel_mode, _get_global_rank) and
`mindspore.parallel._auto_parallel_context.auto_parallel_context()`, which MindSpore's model-zoo training scripts
use to build their DistributedGradReducer, and set/get/reset_algo_parameters (the options of the AUTO_PARALLEL
strategy search, kept and checked: see kiln/_parallel_context.py). Operator sharding by Primitive.shard
strategies (semi-auto parallel, kiln/parallel/_op_shard.py, AutoParallel in kiln.parallel.auto_parallel) runs in
PyNative and, after the first step, Graph mode; Cell.shard and the strategy search are not provided; pipeline stages are (kiln.parallel.nn.Pipeline, docs/distributed.md).
kiln.parallel.nn has GradAccumulation (stand-alone and data parallel) and Pipeline. Strategy files
(set_auto_parallel_context(strategy_ckpt_config=...)) and the distributed-checkpoint helpers (merge_sliced_parameter,
transform_checkpoints, load_distributed_checkpoint, ...) are in kiln/parallel/checkpoint_transform.py."""
from .._parallel_context import get_algo_parameters, reset_algo_parameters, set_algo_parameters
from . import _op_shard
from .checkpoint_transform import build_searched_strategy, load_distributed_checkpoint, merge_sliced_parameter, \
    rank_list_for_transform, transform_checkpoint_by_rank, transform_checkpoints

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters", "merge_parameters", "shard",
           "build_searched_strategy", "load_distributed_checkpoint", "merge_sliced_parameter",
           "rank_list_for_transform", "transform_checkpoint_by_rank", "transform_checkpoints"]

shard = _op_shard.shard_function


def merge_parameters(parameters):
    """Kiln's helper for operator parallel: the whole values of Parameters stored sliced by Primitive.shard
    strategies (a list of new Tensors, one per Parameter, in order; an unsliced Parameter gives a copy of its value).
    A collective (AllGather of the slices) when any of them is sliced: every process must then call it with the
    same Parameters in the same order; Parameters none of which is sliced are copied without communicating.

    Raises:
        TypeError: `parameters` a Tensor or not iterable, or an element that is not a Parameter.
        ValueError: processes passed different Parameters (names, whole shapes, slices or dtypes, in order), in
            every process (checked over the processes before gathering, naming each rank's list; when each process
            passes at least one sliced Parameter).
    """
    from ..common.parameter import Parameter
    from ..common.tensor import Tensor
    if isinstance(parameters, Tensor) or not hasattr(parameters, "__iter__"):
        raise TypeError(f"For 'merge_parameters', 'parameters' must be a list (or another iterable) of Parameters, "
                        f"but got {type(parameters).__name__}.")
    parameters = list(parameters)
    for p in parameters:
        if not isinstance(p, Parameter):
            raise TypeError(f"For 'merge_parameters', every element must be a Parameter, but got {type(p).__name__}.")
    if any(_op_shard.sharded_layout(p) is not None for p in parameters):  # a collective only then (as before)
        _op_shard.agree("merge_parameters", _op_shard.describe_parameters(parameters),
                        "Parameters in the same order (names, whole shapes, slices and dtypes)")
    return [_op_shard.merge_parameter(p) for p in parameters]
