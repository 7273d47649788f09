"""`kiln.runtime`: the runtime interfaces of MindSpore 2.x's `mindspore.runtime` that concern host memory.

Kiln's tensors live in a caching allocator (its policy: docs/decisions/caching-allocator.md, allocator-cache.md):
freed blocks are kept for reuse, up to a bound on the cached bytes, so that a training loop does not call the system
allocator after its first step. These functions read its counters and empty its cache, with MindSpore's names and
return formats.

`profile()` (Kiln's own) times the ops that a block of code runs, per op and mode (PyNative / Graph): see
`kiln.runtime.profiler`. `cpu_info()` (Kiln's own) names the CPU and the instruction set oneDNN's kernels use; `low_precision()` /
`set_low_precision()` (Kiln's own) report and pick the path of bfloat16/float16 matmul and convolution.
"""
from .memory import (
    empty_cache, memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, memory_stats,
    memory_summary, reset_peak_memory_stats, reset_max_memory_allocated, reset_max_memory_reserved, set_cache_limit,
    set_memory,
)
from .profiler import OpProfile, is_profiling, profile
from .cpu import cpu_info, low_precision, set_low_precision
from .executor import launch_blocking

__all__ = [
    "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "memory_stats", "memory_summary", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "reset_max_memory_reserved", "set_cache_limit", "set_memory", "profile", "OpProfile", "is_profiling",
    "cpu_info", "low_precision", "set_low_precision", "launch_blocking",
]
