"""kiln.parallel — the part of MindSpore's `mindspore.parallel` that data-parallel scripts use: the private helpers
of `mindspore.parallel._utils` (_get_device_num, _get_gradients_mean, _get_parallel_mode, _get_global_rank), which
MindSpore's model-zoo training scripts import to build their DistributedGradReducer. Model-splitting APIs (shard,
set_algo_parameters, pipeline) are not provided: Kiln runs data parallelism only (see docs/distributed.md)."""
