"""`set_context` / `get_context`: MindSpore's execution context (mode, device, graph dumps, ...).

See ../shared/reference/mindspore_api.md §1. Kiln runs on "CPU"; a device_target this machine lacks ("Ascend", or
"GPU" before the CUDA backend exists) runs on CPU with one warning, and get_context("device_target") says "CPU"."""
import os
import warnings

GRAPH_MODE = 0
PYNATIVE_MODE = 1
STRICT = 0
COMPATIBLE = 1
LAX = 2

_VALID_TARGETS = ("CPU", "GPU", "Ascend", "Davinci")
_AVAILABLE_TARGETS = ("CPU",)

_context = {
    "mode": PYNATIVE_MODE,
    "device_target": "CPU",
    "device_id": 0,
    "save_graphs": 0,
    "save_graphs_path": ".",
    "enable_compile_cache": False,
    "compile_cache_path": ".",
    "jit_syntax_level": LAX,
    "max_call_depth": 1000,
    "pynative_synchronize": False,
    "memory_optimize_level": "O0",
    "deterministic": "OFF",
    "grad_for_scalar": False,
    "runtime_num_threads": 30,
    "jit_config": None,
    "jit_cache_size": 32,
    "jit_level": "",
}
_JIT_CONFIG_VALUES = {"jit_level": ["O0", "O1", "O2"], "infer_boost": ["on", "off"]}  # MindSpore 2.10's set_jit_config
# Accepted for compatibility; they do not change what Kiln does on CPU.
_PASSIVE_KEYS = {
    "max_device_memory", "mempool_block_size", "op_timeout", "print_file_path", "env_config_path", "precompile_only",
    "reserve_class_name_in_scope", "check_bprop", "enable_graph_kernel", "graph_kernel_flags", "ascend_config",
    "gpu_config", "aoe_tune_mode", "aoe_config", "inter_op_parallel_num", "disable_format_transform",
    "support_binary", "memory_offload", "variable_memory_max_size", "enable_reduce_precision", "auto_tune_mode",
}
_DEPRECATED_KEYS = {"enable_sparse", "enable_auto_mixed_precision", "enable_dump", "save_dump_path"}
_ASCEND_ONLY = {"precision_mode", "jit_compile", "atomic_clean_policy", "matmul_allow_hf32", "conv_allow_hf32",
                "op_precision_mode"}
_warned_targets = set()
# Keys given to set_context explicitly: an explicit enable_compile_cache / compile_cache_path wins over MindSpore's
# environment variables MS_COMPILER_CACHE_ENABLE / MS_COMPILER_CACHE_PATH (kiln/_compiler/disk_cache.py).
_explicit = set()


def _check_type(key, value, types, names):
    if isinstance(value, bool) and bool not in types:
        raise TypeError(f"For 'set_context', the argument '{key}' must be {names}, but got {type(value).__name__}.")
    if not isinstance(value, types):
        raise TypeError(f"For 'set_context', the argument '{key}' must be {names}, but got {type(value).__name__}.")


def _check_jit_config(key, value):
    """MindSpore 2.10's check of a jit_config entry (also applied to set_context(jit_level=...)): the keys jit_level
    ("O0", "O1", "O2") and infer_boost ("on", "off"); ValueError with MindSpore's message otherwise. Kiln compiles
    every graph the same way at each level (one optimization pipeline on CPU): the level is stored and returned by
    get_context, and does not change results."""
    if key not in _JIT_CONFIG_VALUES:
        raise ValueError(f"For 'context.set_context', the key of argument 'jit_config' must be one of "
                         f"{_JIT_CONFIG_VALUES}, but got {key}.")
    if value not in _JIT_CONFIG_VALUES[key]:
        raise ValueError(f"For 'jit_config', the value of argument {key} must be one of {_JIT_CONFIG_VALUES[key]}, "
                         f"but got {value}.")


def _set_device_target(target):
    _check_type("device_target", target, (str,), "str")
    if target not in _VALID_TARGETS:
        raise ValueError(f"For 'set_context', the argument 'device_target' must be one of {list(_VALID_TARGETS)}, "
                         f"but got {target!r}.")
    if target == "Davinci":
        warnings.warn("device_target 'Davinci' is deprecated; use 'Ascend'.", DeprecationWarning, stacklevel=3)
        target = "Ascend"
    if target not in _AVAILABLE_TARGETS:
        if target not in _warned_targets:
            _warned_targets.add(target)
            warnings.warn(f"Kiln: device_target '{target}' is not available on this machine; running on CPU.",
                          RuntimeWarning, stacklevel=3)
        target = "CPU"
    _context["device_target"] = target


def set_device(device_target, device_id=None):
    """MindSpore 2.x's set_device(device_target, device_id=None): the target ("CPU", "GPU", "Ascend") and device id
    for this process, as set_context(device_target=..., device_id=...) (an unavailable target runs on CPU with a
    warning). Raises ValueError for an unknown target or an id outside [0, 4095], TypeError for wrong types."""
    kwargs = {"device_target": device_target}
    if device_id is not None:
        kwargs["device_id"] = device_id
    set_context(**kwargs)


def set_context(**kwargs):
    """Sets context attributes (keyword-only), as mindspore.set_context.

    Keys: mode (GRAPH_MODE=0 / PYNATIVE_MODE=1), device_target ("CPU", "GPU", "Ascend"; unavailable targets fall back
    to CPU with a warning), device_id (0..4095), save_graphs (bool or 0..3), save_graphs_path, enable_compile_cache,
    compile_cache_path, jit_syntax_level, max_call_depth, pynative_synchronize, memory_optimize_level, deterministic,
    grad_for_scalar, runtime_num_threads, jit_config (keys jit_level "O0"/"O1"/"O2" and infer_boost "on"/"off", as
    MindSpore checks them), jit_level ("O0", "O1", "O2": stored, Kiln compiles alike at every level); device-specific
    tuning keys are accepted and ignored.
    Kiln's own key jit_cache_size (int >= 1, default 32) bounds the compiled graphs kept per compiled function
    (each Cell in GRAPH_MODE, each kiln.jit function); beyond it the least recently used graph is dropped.
    enable_compile_cache (bool, default False; else env MS_COMPILER_CACHE_ENABLE=1) also stores optimized graphs in
    `compile_cache_path/rank_<RANK_ID>/graph_cache/` (default path "."; else env MS_COMPILER_CACHE_PATH), and a later
    process with unchanged code, Kiln and configuration loads them instead of compiling (docs/compile_cache.md).

    Raises:
        TypeError: a value of the wrong type.
        ValueError: an unknown key or an out-of-range value (messages as MindSpore's).
    """
    if "device_target" in kwargs:
        _set_device_target(kwargs["device_target"])
    for key, value in kwargs.items():
        if key == "device_target":
            continue
        if key == "mode":
            _check_type(key, value, (int,), "int")
            if value not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError("For 'set_context', the argument 'mode' should be context.GRAPH_MODE (0) or "
                                 f"context.PYNATIVE_MODE (1), but got {value}.")
            _context["mode"] = value
            _update_graph_flag()
        elif key == "device_id":
            _check_type(key, value, (int,), "int")
            if not 0 <= value <= 4095:
                raise ValueError(f"For 'set_context', the argument 'device_id' must be in range [0, 4095], but got {value}.")
            _context["device_id"] = value
        elif key == "save_graphs":
            _check_type(key, value, (bool, int), "bool or int")
            level = (2 if value else 0) if isinstance(value, bool) else value
            if not 0 <= level <= 3:
                raise ValueError(f"For 'set_context', the argument 'save_graphs' must be in [0, 3], but got {value}.")
            _context["save_graphs"] = level
        elif key in ("save_graphs_path", "compile_cache_path"):
            _check_type(key, value, (str,), "str")
            if not value:
                raise ValueError(f"For 'set_context', the argument '{key}' must not be empty.")
            _context[key] = value
            _explicit.add(key)
        elif key in ("enable_compile_cache", "pynative_synchronize", "grad_for_scalar"):
            _check_type(key, value, (bool,), "bool")
            _context[key] = value
            _explicit.add(key)
        elif key == "jit_syntax_level":
            _check_type(key, value, (int,), "int")
            if value not in (STRICT, COMPATIBLE, LAX):
                raise ValueError(f"For 'set_context', the argument 'jit_syntax_level' must be STRICT, COMPATIBLE or "
                                 f"LAX, but got {value}.")
            _context[key] = value
        elif key == "max_call_depth":
            _check_type(key, value, (int,), "int")
            if value <= 0:
                raise ValueError(f"For 'set_context', the argument 'max_call_depth' must be > 0, but got {value}.")
            _context[key] = value
        elif key == "memory_optimize_level":
            if value not in ("O0", "O1"):
                raise ValueError(f"For 'set_context', 'memory_optimize_level' must be 'O0' or 'O1', but got {value!r}.")
            _context[key] = value
        elif key == "deterministic":
            if value not in ("ON", "OFF"):
                raise ValueError(f"For 'set_context', 'deterministic' must be 'ON' or 'OFF', but got {value!r}.")
            _context[key] = value
        elif key == "runtime_num_threads":
            _check_type(key, value, (int,), "int")
            if value < 0:
                raise ValueError(f"For 'set_context', 'runtime_num_threads' must be >= 0, but got {value}.")
            _context[key] = value
        elif key == "jit_cache_size":
            _check_type(key, value, (int,), "int")
            if value < 1:
                raise ValueError(f"For 'set_context', the argument 'jit_cache_size' must be >= 1, but got {value}.")
            _context[key] = value
        elif key == "jit_config":
            if not isinstance(value, dict):
                raise TypeError(f"For 'set_context', the argument 'jit_config' must be dict, but got {type(value).__name__}.")
            for jit_key, jit_value in value.items():
                _check_jit_config(jit_key, jit_value)
            _context[key] = dict(value)
            if "jit_level" in value:
                _context["jit_level"] = value["jit_level"]
        elif key == "jit_level":
            _check_type(key, value, (str,), "str")
            _check_jit_config(key, value)
            _context[key] = value
        elif key in _ASCEND_ONLY:
            raise ValueError(f"Please set '{key}' through parameter ascend_config")
        elif key in _DEPRECATED_KEYS:
            warnings.warn(f"For 'set_context', the argument '{key}' is deprecated and ignored.", DeprecationWarning,
                          stacklevel=2)
        elif key in _PASSIVE_KEYS:
            _context[key] = value
        else:
            raise ValueError(f"For 'set_context', the keyword argument {key} is not recognized!")


def get_context(attr_key):
    """The value of one context attribute (see set_context). Raises ValueError for an unknown key."""
    if attr_key not in _context:
        raise ValueError(f"For 'get_context', the argument {attr_key} is not recognized!")
    return _context[attr_key]


_graph = [False]  # fast flag read on every Cell call: GRAPH_MODE and not forced off by MS_JIT=0


def _update_graph_flag():
    _graph[0] = _context["mode"] == GRAPH_MODE and os.environ.get("MS_JIT") != "0"


def _mode():
    """The current mode, with env MS_JIT=0 forcing PyNative as in MindSpore."""
    if os.environ.get("MS_JIT") == "0":
        return PYNATIVE_MODE
    return _context["mode"]


def is_graph_mode():
    """True when Cells and grad functions compile (GRAPH_MODE, unless MS_JIT=0)."""
    return _graph[0]


from ._parallel_context import (  # noqa: E402,F401  (mindspore.context.ParallelMode / set_auto_parallel_context)
    ParallelMode, set_auto_parallel_context, get_auto_parallel_context, reset_auto_parallel_context,
    set_ps_context, get_ps_context, reset_ps_context,
)
