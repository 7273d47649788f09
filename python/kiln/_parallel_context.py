"""MindSpore's auto-parallel context: set_auto_parallel_context / get_auto_parallel_context /
reset_auto_parallel_context and ParallelMode. Kiln runs 'stand_alone' and 'data_parallel' (every process holds the
whole model, gradients are all-reduced: nn.DistributedGradReducer, which nn.TrainOneStepCell and Model insert by
themselves in data-parallel mode). The model-splitting modes ('semi_auto_parallel', 'auto_parallel',
'hybrid_parallel') raise ValueError: not supported."""
import threading

__all__ = ["ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context", "reset_auto_parallel_context"]


class ParallelMode:
    """The parallel modes (MindSpore's strings). Kiln supports STAND_ALONE and DATA_PARALLEL."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


_SUPPORTED_MODES = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL)
# Keys accepted with their MindSpore defaults; the bool ones are checked for type. device_num / global_rank are
# "unset" (None) by default: get_ then reports the communication world's size / rank (1 / 0 before init).
_DEFAULTS = {
    "parallel_mode": ParallelMode.STAND_ALONE,
    "gradients_mean": False,
    "device_num": None,
    "global_rank": None,
    "parameter_broadcast": False,
    "gradient_fp32_sync": True,
    "loss_repeated_mean": True,
    "full_batch": False,
    "enable_parallel_optimizer": False,
    "search_mode": "recursive_programming",
    "auto_parallel_search_mode": "recursive_programming",
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_save_file": "",
    "dataset_strategy": "data_parallel",
    "pipeline_stages": 1,
    "grad_accumulation_step": 1,
}
_BOOL_KEYS = ("gradients_mean", "parameter_broadcast", "gradient_fp32_sync", "loss_repeated_mean", "full_batch",
              "enable_parallel_optimizer")
_lock = threading.Lock()
_ctx = dict(_DEFAULTS)


def set_auto_parallel_context(**kwargs):
    """Sets parallel-training options (MindSpore's keywords).

    Args (all optional):
        parallel_mode (str): ParallelMode.STAND_ALONE (default) or ParallelMode.DATA_PARALLEL.
        gradients_mean (bool): average (True) or sum (False, default) the gradients over the processes.
        device_num (int): the number of processes, 1…4096 (default: the world size after init()); the divisor of
            gradients_mean.
        global_rank (int): this process's rank, 0…4095 (default: get_rank()).
        parameter_broadcast (bool): accepted; Kiln always broadcasts the parameters from rank 0 when the gradient
            reducer is made (data-parallel), so that every process starts from the same weights.
        gradient_fp32_sync, loss_repeated_mean, enable_parallel_optimizer (False only), full_batch (False only),
        pipeline_stages (1 only), grad_accumulation_step (1 only), search_mode, strategy_ckpt_load_file,
        strategy_ckpt_save_file, dataset_strategy ('data_parallel' only): accepted for compatibility.

    Raises:
        ValueError: an unknown keyword; a parallel mode Kiln does not support (semi_auto_parallel, auto_parallel,
            hybrid_parallel: model-splitting is not supported) or an unknown one; device_num/global_rank out of
            range; an option that needs model splitting.
        TypeError: a value of the wrong type.
    """
    fn = "set_auto_parallel_context"
    updates = {}
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise ValueError(f"For '{fn}', the keyword argument '{key}' is not recognized (Kiln supports "
                             f"{sorted(_DEFAULTS)}).")
        if key == "parallel_mode":
            if not isinstance(value, str):
                raise TypeError(f"For '{fn}', 'parallel_mode' must be a str, but got {type(value).__name__}.")
            if value not in ParallelMode.MODE_LIST:
                raise ValueError(f"For '{fn}', 'parallel_mode' must be one of {ParallelMode.MODE_LIST}, but got "
                                 f"{value!r}.")
            if value not in _SUPPORTED_MODES:
                raise ValueError(f"For '{fn}', parallel_mode={value!r} is not supported by Kiln: it runs "
                                 f"'stand_alone' and 'data_parallel' only (no model, operator or pipeline "
                                 f"parallelism).")
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise TypeError(f"For '{fn}', '{key}' must be a bool, but got {type(value).__name__}.")
            if key in ("full_batch", "enable_parallel_optimizer") and value:
                raise ValueError(f"For '{fn}', {key}=True is not supported by Kiln (data-parallel only).")
        elif key in ("device_num", "global_rank", "pipeline_stages", "grad_accumulation_step"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For '{fn}', '{key}' must be an int, but got {type(value).__name__}.")
            lo, hi = {"device_num": (1, 4096), "global_rank": (0, 4095)}.get(key, (1, 1))
            if not lo <= value <= hi:
                raise ValueError(f"For '{fn}', '{key}' must be in [{lo}, {hi}], but got {value}.")
        elif key == "dataset_strategy":
            if value != "data_parallel":
                raise ValueError(f"For '{fn}', dataset_strategy must be 'data_parallel' in Kiln, but got {value!r}.")
        elif not isinstance(value, str):
            raise TypeError(f"For '{fn}', '{key}' must be a str, but got {type(value).__name__}.")
        updates[key] = value
    with _lock:
        _ctx.update(updates)


def get_auto_parallel_context(attr_key):
    """The value of one option (see set_auto_parallel_context). device_num / global_rank, when not set, are the
    communication world's size / this process's rank (1 / 0 before init()). ValueError for an unknown key."""
    if attr_key not in _DEFAULTS:
        raise ValueError(f"For 'get_auto_parallel_context', the key '{attr_key}' is not recognized.")
    with _lock:
        value = _ctx[attr_key]
    if value is None:
        from .communication.management import GlobalComm, get_group_size, get_rank
        if not GlobalComm.INITED:
            return 1 if attr_key == "device_num" else 0
        return get_group_size() if attr_key == "device_num" else get_rank()
    return value


def reset_auto_parallel_context():
    """Restores every option to its default (parallel_mode 'stand_alone', gradients_mean False, ...)."""
    with _lock:
        _ctx.clear()
        _ctx.update(_DEFAULTS)


def _is_data_parallel():
    """True when gradients must be all-reduced: data-parallel mode with more than one process (or after init)."""
    return get_auto_parallel_context("parallel_mode") == ParallelMode.DATA_PARALLEL
