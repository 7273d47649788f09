"""`mindspore.parallel._auto_parallel_context.auto_parallel_context()`: the object behind set/get_auto_parallel_context,
which MindSpore's model-zoo scripts call directly (`auto_parallel_context().get_device_num_is_set()`,
`.set_all_reduce_fusion_split_indices([85, 160])`). Kiln's object is a view of kiln/_parallel_context.py's options:
every get_<key>() / set_<key>(value) reads or writes the same option as get/set_auto_parallel_context(<key>), with
the same checks and errors."""
from .._parallel_context import _DEFAULTS, _is_set, get_auto_parallel_context, reset_auto_parallel_context, \
    set_auto_parallel_context

__all__ = ["auto_parallel_context"]


class _AutoParallelContext:
    """get_<key>() / set_<key>(value) for every key of set_auto_parallel_context; get_<key>_is_set() for device_num,
    global_rank, parameter_broadcast and full_batch (True once set since the last reset); reset();
    set/get_all_reduce_fusion_split_indices(indices, group="") for all_reduce_fusion_config. Unknown attributes raise
    AttributeError."""

    _IS_SET = ("device_num", "global_rank", "parameter_broadcast", "full_batch")

    def __getattr__(self, name):
        if name.startswith("get_") and name.endswith("_is_set") and name[4:-7] in self._IS_SET:
            key = name[4:-7]
            return lambda: _is_set(key)
        if name.startswith("get_") and name[4:] in _DEFAULTS:
            key = name[4:]
            return lambda: get_auto_parallel_context(key)
        if name.startswith("set_") and name[4:] in _DEFAULTS:
            key = name[4:]
            return lambda value: set_auto_parallel_context(**{key: value})
        raise AttributeError(f"'auto_parallel_context()' has no attribute {name!r}")

    def set_all_reduce_fusion_split_indices(self, indices, group=""):
        """The gradient indices where nn.DistributedGradReducer starts a new all-reduce bucket (strictly increasing
        positive ints); `group` must be the world group ("" or its name). TypeError/ValueError as
        set_auto_parallel_context(all_reduce_fusion_config=...)."""
        self._check_group(group)
        set_auto_parallel_context(all_reduce_fusion_config=indices)

    def get_all_reduce_fusion_split_indices(self, group=""):
        """The indices set by set_all_reduce_fusion_split_indices (a list; [] when buckets go by size)."""
        self._check_group(group)
        return get_auto_parallel_context("all_reduce_fusion_config")

    @staticmethod
    def _check_group(group):
        from ..communication.management import GlobalComm
        if not isinstance(group, str):
            raise TypeError(f"For 'set_all_reduce_fusion_split_indices', 'group' must be a str, but got "
                            f"{type(group).__name__}.")
        if group not in ("", GlobalComm.WORLD_COMM_GROUP):
            raise ValueError(f"For 'set_all_reduce_fusion_split_indices', Kiln fuses the world group's gradients "
                             f"only, but got group {group!r}.")

    def reset(self):
        """reset_auto_parallel_context()."""
        reset_auto_parallel_context()


_context = _AutoParallelContext()


def auto_parallel_context():
    """The process's auto-parallel context object (one per process, as MindSpore's)."""
    return _context
