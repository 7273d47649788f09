"""kiln.parallel — the part of MindSpore's `mindspore.parallel` that data-parallel scripts use: the private helpers
of `mindspore.parallel._utils` (_get_device_num, _get_gradients_mean, _get_parallel_mode, _get_global_rank) and
`mindspore.parallel._auto_parallel_context.auto_parallel_context()`, which MindSpore's model-zoo training scripts
use to build their DistributedGradReducer, and set/get/reset_algo_parameters (the options of the AUTO_PARALLEL
strategy search, kept and checked: see kiln/_parallel_context.py). Operator sharding (Cell.shard) and
the strategy search are not provided; pipeline stages are (kiln.parallel.nn.Pipeline, docs/distributed.md).
kiln.parallel.nn has GradAccumulation (stand-alone and data parallel) and Pipeline."""
from .._parallel_context import get_algo_parameters, reset_algo_parameters, set_algo_parameters

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]
