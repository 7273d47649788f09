"""MindSpore's auto-parallel context: set_auto_parallel_context / get_auto_parallel_context /
reset_auto_parallel_context and ParallelMode. Kiln runs 'stand_alone' and 'data_parallel' (every process holds the
whole model, gradients are all-reduced: nn.DistributedGradReducer, which nn.TrainOneStepCell and Model insert by
themselves in data-parallel mode) and, in 'semi_auto_parallel', operator parallel by Primitive.shard strategies
(kiln/parallel/_op_shard.py) and pipeline stages (pipeline_stages, cell.pipeline_stage, nn.PipelineCell:
kiln/nn/wrap/pipeline.py). 'auto_parallel' and 'hybrid_parallel' raise ValueError: not supported."""
import threading

__all__ = ["ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context", "reset_auto_parallel_context",
           "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters", "set_ps_context", "get_ps_context",
           "reset_ps_context"]


class ParallelMode:
    """The parallel modes (MindSpore's strings). Kiln supports STAND_ALONE and DATA_PARALLEL."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


# semi_auto_parallel: Primitive.shard strategies and pipeline stages (Cell.shard raises)
_SUPPORTED_MODES = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL, ParallelMode.SEMI_AUTO_PARALLEL)
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
    "strategy_ckpt_config": None,  # a view of the two keys above and _only_trainable (get: a dict)
    "dataset_strategy": "data_parallel",
    "pipeline_stages": 1,
    "grad_accumulation_step": 1,
    "all_reduce_fusion_config": [],
    "optimizer_weight_shard_size": -1,
}
_BOOL_KEYS = ("gradients_mean", "parameter_broadcast", "gradient_fp32_sync", "loss_repeated_mean", "full_batch",
              "enable_parallel_optimizer")
_lock = threading.Lock()
_ctx = dict(_DEFAULTS)
_explicit = set()  # the keys set since the last reset (MindSpore's get_<key>_is_set)
_only_trainable = [True]  # strategy_ckpt_config's only_trainable_params


def set_auto_parallel_context(**kwargs):
    """Sets parallel-training options (MindSpore's keywords).

    Args (all optional):
        parallel_mode (str): ParallelMode.STAND_ALONE (default), ParallelMode.DATA_PARALLEL, or
            ParallelMode.SEMI_AUTO_PARALLEL for operator parallel (Primitive.shard strategies; needs
            full_batch=True unless the step is wrapped in parallel.auto_parallel.AutoParallel) or pipeline
            parallelism (pipeline_stages); Cell.shard raises ValueError there (docs/distributed.md, "Operator
            parallel", "Pipeline parallel").
        gradients_mean (bool): average (True) or sum (False, default) the gradients over the processes.
        device_num (int): the number of processes, 1…4096 (default: the world size after init()); the divisor of
            gradients_mean.
        global_rank (int): this process's rank, 0…4095 (default: get_rank()).
        parameter_broadcast (bool): accepted; Kiln always broadcasts the parameters from rank 0 when the gradient
            reducer is made (data-parallel), so that every process starts from the same weights.
        enable_parallel_optimizer (bool): optimizer parallel (ZeRO-1) in data-parallel mode: each process keeps
            the optimizer state of 1/N of each large parameter and updates only that slice (docs/distributed.md,
            "Optimizer parallel"; kiln/nn/optim/_parallel.py).
        parallel_optimizer_config (dict): parallel_optimizer_threshold (int >= 0, KB; default 64: smaller
            parameters stay replicated), optimizer_weight_shard_size (-1 or > 0; a non-int or a bool: TypeError), gradient_accumulation_shard
            (bool), optimizer_level ('level1', 'level2'; 'level3' raises ValueError). Set-only, as in MindSpore.
        optimizer_weight_shard_size (int): -1 (default: all processes) or the number of slices of each sharded
            parameter; every int <= 1 (0 and negatives too) is ignored, as in MindSpore.
        full_batch (bool): operator parallel: every process's inputs are the whole batch (True) or its slice
            (False, the default; see set_auto_parallel_context's parallel_mode).
        gradient_fp32_sync, loss_repeated_mean,
        pipeline_stages (int, 1…4096; > 1 splits an nn.PipelineCell's network by cell.pipeline_stage),
        grad_accumulation_step (1 only), search_mode, strategy_ckpt_load_file: accepted for compatibility.
        strategy_ckpt_save_file (str): where operator parallel writes its strategy file (the layout of each
            Parameter, MindSpore's protobuf format, JSON for a name ending in '.json'; kiln/parallel/_strategy_file.py,
            docs/distributed.md "Strategy files and distributed checkpoints").
        strategy_ckpt_config (dict): keys "save_file" (the same option as strategy_ckpt_save_file), "load_file"
            (strategy_ckpt_load_file) and "only_trainable_params" (bool, default True: the file holds the layouts of
            Parameters with requires_grad only; False adds the optimizer states). Unknown keys: ValueError; values
            of the wrong type: TypeError (MindSpore's messages). dataset_strategy: 'data_parallel' or 'full_batch'
            (as full_batch=True); a tuple strategy raises ValueError.
        all_reduce_fusion_config (list[int]): gradient indices where a new all-reduce bucket starts, strictly
            increasing, each in [1, 2**31) (default []: buckets by size). nn.DistributedGradReducer made afterwards
            cuts its buckets there (and where the dtype changes) instead of by size.

    Raises:
        ValueError: an unknown keyword; a parallel mode Kiln does not support (auto_parallel, hybrid_parallel: no
            strategy search) or an unknown one; device_num/global_rank out of
            range; an option that needs model splitting.
        TypeError: a value of the wrong type.
    """
    fn = "set_auto_parallel_context"
    updates = {}
    po_config = None
    for key, value in kwargs.items():
        if key == "parallel_optimizer_config":
            po_config = _check_po_config(value)
            continue
        if key == "optimizer_weight_shard_size":
            _check_shard_size(value, key)
            if value > 1:  # MindSpore warns for -1..1 and keeps the previous value
                updates[key] = value
            continue
        if key not in _DEFAULTS:
            raise ValueError(f"For '{fn}', the keyword argument '{key}' is not recognized (Kiln supports "
                             f"{sorted(_DEFAULTS)}).")
        if key == "strategy_ckpt_config":
            updates.update(_check_strategy_ckpt_config(value))
            continue
        if key == "parallel_mode":
            if not isinstance(value, str):
                raise TypeError(f"For '{fn}', 'parallel_mode' must be a str, but got {type(value).__name__}.")
            if value not in ParallelMode.MODE_LIST:
                raise ValueError(f"For '{fn}', 'parallel_mode' must be one of {ParallelMode.MODE_LIST}, but got "
                                 f"{value!r}.")
            if value not in _SUPPORTED_MODES:
                raise ValueError(f"For '{fn}', parallel_mode={value!r} is not supported by Kiln: it runs "
                                 f"'stand_alone', 'data_parallel' and 'semi_auto_parallel' (Primitive.shard "
                                 f"strategies, pipeline stages); no strategy search.")
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise TypeError(f"For '{fn}', '{key}' must be a bool, but got {type(value).__name__}.")
        elif key in ("device_num", "global_rank", "pipeline_stages", "grad_accumulation_step"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For '{fn}', '{key}' must be an int, but got {type(value).__name__}.")
            lo, hi = {"device_num": (1, 4096), "global_rank": (0, 4095), "pipeline_stages": (1, 4096)}.get(key, (1, 1))
            if not lo <= value <= hi:
                raise ValueError(f"For '{fn}', '{key}' must be in [{lo}, {hi}], but got {value}.")
        elif key == "all_reduce_fusion_config":
            value = _split_indices(fn, value)
        elif key == "dataset_strategy":
            if value not in ("data_parallel", "full_batch"):
                raise ValueError(f"For '{fn}', dataset_strategy must be 'data_parallel' or 'full_batch' in Kiln "
                                 f"(tuple strategies are not supported), but got {value!r}.")
        elif not isinstance(value, str):
            raise TypeError(f"For '{fn}', '{key}' must be a str, but got {type(value).__name__}.")
        updates[key] = value
    if po_config is not None and "optimizer_weight_shard_size" in po_config:
        updates["optimizer_weight_shard_size"] = po_config.pop("optimizer_weight_shard_size")
    with _lock:
        if "_only_trainable" in updates:
            _only_trainable[0] = updates.pop("_only_trainable")
        _ctx.update(updates)
        _explicit.update(updates)
        if po_config is not None:
            _po_config.update(po_config)


# ---- parallel_optimizer_config (MindSpore: set-only; its keys are read by the optimizer-parallel code) ----
_PO_DEFAULTS = {"parallel_optimizer_threshold": 64, "gradient_accumulation_shard": False, "optimizer_level": "level1"}
_po_config = dict(_PO_DEFAULTS)


def _check_shard_size(value, name):
    """optimizer_weight_shard_size: an int (bool refused); -1 or > 0 (MindSpore's checks and messages)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"The type of optimizer_weight_shard_size must be int, but got {type(value)}.")
    # any int <= 1 (0 and -5 too) is accepted and ignored (MindSpore 2.10 warns and keeps -1)


def _check_config_int(v, key, rel, bound):
    """An int entry of parallel_optimizer_config, as MindSpore 2.10's Validator checks it: TypeError for a non-int
    ("must be int, but got 'float'") and for a bool (its "must be int and must > 0" message), ValueError for an int
    out of range (rel ">=": v >= bound; ">": v > bound - 1)."""
    msg = (f"For '{key}', the input value must be int and must {rel} {0 if rel == '>' else bound}, but got '{v}' "
           f"with type '{type(v).__name__}'.")
    if isinstance(v, bool):
        raise TypeError(msg)
    if not isinstance(v, int):
        raise TypeError(f"For '{key}', the input value must be int, but got '{type(v).__name__}'")
    if v < bound if rel == ">=" else v <= bound - 1:
        raise ValueError(msg)


def _check_po_config(config):
    """parallel_optimizer_config checked as MindSpore 2.10 checks it; returns the updates (a new dict)."""
    if not isinstance(config, dict):
        raise TypeError(f"The parameter 'parallel_optimizer_config' must be {dict}, but got {type(config)}")
    unknown = [k for k in config if k not in ("gradient_accumulation_shard", "parallel_optimizer_threshold",
                                               "optimizer_weight_shard_size", "optimizer_level")]
    if unknown:
        raise ValueError(f"Unknown config: {unknown}")
    out = {}
    if "gradient_accumulation_shard" in config:
        v = config["gradient_accumulation_shard"]
        if not isinstance(v, bool):
            raise TypeError(f"For 'gradient_accumulation_shard', the 'gradient_accumulation_shard' must be a bool, "
                            f"but got {type(v).__name__}.")
        out["gradient_accumulation_shard"] = v
    if "parallel_optimizer_threshold" in config:
        v = config["parallel_optimizer_threshold"]
        _check_config_int(v, "parallel_optimizer_threshold", ">=", 0)
        out["parallel_optimizer_threshold"] = v
    if "optimizer_weight_shard_size" in config:
        v = config["optimizer_weight_shard_size"]
        if isinstance(v, bool) or v != -1:
            _check_config_int(v, "optimizer_weight_shard_size", ">", 1)
            if v > 1:
                out["optimizer_weight_shard_size"] = v
    if "optimizer_level" in config:
        v = config["optimizer_level"]
        if v not in ("level1", "level2", "level3"):
            raise ValueError(f"Optimizer level should in ['level1', 'level2', 'level3'], but got {v}")
        if v == "level3":
            raise ValueError("For 'set_auto_parallel_context', parallel_optimizer_config optimizer_level='level3' "
                             "(weights also sharded in the forward pass, ZeRO-3) is not supported by Kiln; use "
                             "'level1' or 'level2'.")
        if out.get("gradient_accumulation_shard", _po_config["gradient_accumulation_shard"]) and v != "level2":
            raise ValueError(f"The optimizer_level is set as {v}, thus cannot set grad_accumulation_shard as True.")
        out["optimizer_level"] = v
        if v == "level2":
            out["gradient_accumulation_shard"] = True
    return out


def _check_strategy_ckpt_config(config):
    """strategy_ckpt_config checked as MindSpore 2.10 checks it; returns the updates of strategy_ckpt_load_file /
    strategy_ckpt_save_file / _only_trainable."""
    if not isinstance(config, dict):
        raise TypeError(f"For 'set_auto_parallel_context', the argument 'strategy_ckpt_config' must be dict, but got "
                        f"the type : {type(config)}.")
    unknown = [k for k in config if k not in ("load_file", "save_file", "only_trainable_params")]
    if unknown:
        raise ValueError(f"Unknown config: {unknown}")
    out = {}
    for key, target in (("load_file", "strategy_ckpt_load_file"), ("save_file", "strategy_ckpt_save_file")):
        if key in config:
            if not isinstance(config[key], str):
                raise TypeError(f"For 'set_auto_parallel_context().set_strategy_ckpt_config', the argument '{key}' "
                                f"must be str, but got the type : {type(config[key])} .")
            out[target] = config[key]
    if "only_trainable_params" in config:
        v = config["only_trainable_params"]
        if not isinstance(v, bool):
            raise TypeError(f"For 'set_auto_parallel_context().set_strategy_ckpt_config', the argument "
                            f"'only_trainable_params' must be bool, but got the type : {type(v)} .")
        out["_only_trainable"] = v
    return out


def _parallel_optimizer_config(key):
    """The value of one parallel_optimizer_config key (parallel_optimizer_threshold in KB,
    gradient_accumulation_shard, optimizer_level)."""
    with _lock:
        return _po_config[key]


def _split_indices(fn, value):
    """all_reduce_fusion_config checked: a list of strictly increasing ints in [1, 2**31)."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"For '{fn}', 'all_reduce_fusion_config' must be a list of int, but got "
                        f"{type(value).__name__}.")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"For '{fn}', the elements of 'all_reduce_fusion_config' must be int, but got "
                            f"{type(v).__name__}.")
        if not 1 <= v < 2 ** 31 or (out and v <= out[-1]):
            raise ValueError(f"For '{fn}', 'all_reduce_fusion_config' must be strictly increasing positive indices, "
                             f"but got {list(value)}.")
        out.append(v)
    return out


def get_auto_parallel_context(attr_key):
    """The value of one option (see set_auto_parallel_context). device_num / global_rank, when not set, are the
    communication world's size / this process's rank (1 / 0 before init()). ValueError for an unknown key."""
    if attr_key not in _DEFAULTS:
        raise ValueError(f"For 'get_auto_parallel_context', the key '{attr_key}' is not recognized.")
    if attr_key == "strategy_ckpt_config":
        with _lock:
            return {"load_file": _ctx["strategy_ckpt_load_file"], "save_file": _ctx["strategy_ckpt_save_file"],
                    "only_trainable_params": _only_trainable[0]}
    with _lock:
        value = _ctx[attr_key]
    if value is None:
        from .communication.management import GlobalComm, get_group_size, get_rank
        if not GlobalComm.INITED:
            return 1 if attr_key == "device_num" else 0
        return get_group_size() if attr_key == "device_num" else get_rank()
    return list(value) if isinstance(value, list) else value


def _is_set(attr_key):
    """True when `attr_key` was set (set_auto_parallel_context) since the last reset."""
    with _lock:
        return attr_key in _explicit


def reset_auto_parallel_context():
    """Restores every option to its default (parallel_mode 'stand_alone', gradients_mean False, ...)."""
    with _lock:
        _ctx.clear()
        _ctx.update(_DEFAULTS)
        _explicit.clear()
        _only_trainable[0] = True
        _po_config.clear()
        _po_config.update(_PO_DEFAULTS)
    import sys
    sf = sys.modules.get("kiln.parallel._strategy_file")
    if sf is not None:  # the recorded layouts of operator parallel's strategy file
        sf.reset()


def _is_data_parallel():
    """True when gradients must be all-reduced: data-parallel mode with more than one process (or after init)."""
    return get_auto_parallel_context("parallel_mode") == ParallelMode.DATA_PARALLEL


class _Options:
    """A small option table ({key: default}) read and written under the context lock, with MindSpore's messages for
    unknown keys (`get_msg`: "... keyword {key} is not recognized!")."""

    def __init__(self, defaults, get_msg):
        self.defaults, self.get_msg = dict(defaults), get_msg
        self.values = dict(defaults)

    def update(self, updates):
        with _lock:
            self.values.update(updates)

    def get(self, key):
        if key not in self.defaults:
            raise ValueError(self.get_msg.format(key=key))
        with _lock:
            return self.values[key]

    def reset(self):
        with _lock:
            self.values = dict(self.defaults)


# ---- set_algo_parameters: the options of AUTO_PARALLEL's strategy search ----
# Kiln has no strategy search (set_auto_parallel_context refuses 'auto_parallel'), so these options change nothing;
# they are checked as MindSpore 2.10 checks them and kept, so that scripts which set them unconditionally (as most of
# the model zoo does) run, and get_algo_parameters reports them. {key: (default, type)}
_ALGO_TYPES = {
    "fully_use_devices": (False, bool),
    "elementwise_op_strategy_follow": (False, bool),
    "enable_algo_approxi": (False, bool),
    "algo_approxi_epsilon": (0.1, float),
    "tensor_slice_align_enable": (False, bool),
    "tensor_slice_align_size": (16, int),
}
_algo = _Options({k: d for k, (d, _) in _ALGO_TYPES.items()}, "Get context keyword {key} is not recognized!")


def set_algo_parameters(**kwargs):
    """MindSpore's set_algo_parameters: options of the AUTO_PARALLEL strategy search (fully_use_devices,
    elementwise_op_strategy_follow, enable_algo_approxi, algo_approxi_epsilon in (0, 1], tensor_slice_align_enable,
    tensor_slice_align_size in [1, 1024]). MindSpore documents that they act only in AUTO_PARALLEL mode, which Kiln
    does not run (docs/distributed.md): they are validated and kept for get_algo_parameters, and change nothing.

    Raises:
        ValueError: an unknown key, or a value out of range. TypeError: a value of the wrong type (MindSpore's
            messages).
    """
    updates = {}
    for key, value in kwargs.items():
        if key not in _ALGO_TYPES:
            raise ValueError(f"Set context keyword {key} is not recognized!")
        want = _ALGO_TYPES[key][1]
        ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            ok, value = True, float(value)
        if not ok:
            raise TypeError(f"The parameter '{key}' must be {want}, but got {type(value)}")
        if key == "tensor_slice_align_size" and not 1 <= value <= 1024:
            raise ValueError(f"Align_size must be in [1, 1024], but got {value}")
        if key == "algo_approxi_epsilon" and not 0.0 < value <= 1.0:
            raise ValueError(f"For 'set_algo_parameters', 'algo_approxi_epsilon' must be in (0, 1], but got {value}")
        updates[key] = value
    _algo.update(updates)


def get_algo_parameters(attr_key):
    """The value of one set_algo_parameters option. ValueError for an unknown key."""
    return _algo.get(attr_key)


def reset_algo_parameters():
    """Restores every set_algo_parameters option to its default."""
    _algo.reset()


# ---- set_ps_context: parameter-server training ----
_ps = _Options({"enable_ps": False, "config_file_path": "", "enable_ssl": False},
               "Get PS context keyword {key} is not recognized!")
_PS_WRITE_ONLY = ("client_password", "server_password")  # accepted by set_ps_context, not readable back (MindSpore)


def set_ps_context(**kwargs):
    """MindSpore's set_ps_context (deprecated there): parameter-server training options. Kiln has no parameter-server
    mode, so `enable_ps=True` raises ValueError; enable_ps=False, config_file_path (str), enable_ssl (bool) and the
    passwords (str) are checked and kept (get_ps_context reads all but the passwords).

    Raises:
        ValueError: an unknown key, or enable_ps=True. TypeError: a value of the wrong type.
    """
    updates = {}
    for key, value in kwargs.items():
        if key not in _ps.defaults and key not in _PS_WRITE_ONLY:
            raise ValueError(f"Set PS context keyword {key} is not recognized!")
        want = bool if key in ("enable_ps", "enable_ssl") else str
        if not isinstance(value, want):
            raise TypeError(f"The parameter '{key}' must be {want}, but got {type(value)}")
        if key == "enable_ps" and value:
            raise ValueError("For 'set_ps_context', enable_ps=True: Kiln has no parameter-server training mode; use "
                             "data-parallel training (docs/distributed.md).")
        if key in _ps.defaults:
            updates[key] = value
    _ps.update(updates)


def get_ps_context(attr_key):
    """The value of one set_ps_context option (enable_ps, config_file_path, enable_ssl). ValueError otherwise."""
    return _ps.get(attr_key)


def reset_ps_context():
    """Restores the set_ps_context options to their defaults."""
    _ps.reset()
