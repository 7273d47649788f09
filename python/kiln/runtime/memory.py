"""Memory interfaces of `kiln.runtime` (MindSpore 2.x `mindspore.runtime` names and return formats).

Terms: *allocated* bytes are held by live tensors (and by compiled graphs' planned buffers), counted in block sizes
(a request is rounded up to its size class: multiples of 64 bytes up to 4 KiB, then four classes per power of two up
to 1 MiB, then multiples of 64 KiB; a request served by a cached block of a larger class counts that class);
*reserved* bytes are allocated plus cached (freed blocks kept for reuse).

The cache is bounded (docs/decisions/allocator-cache.md): by default cached bytes never exceed the larger of 64 MiB
and the bytes allocated now, so `memory_reserved()` stays within max(allocated + 64 MiB, 2 × allocated) and freed
memory beyond it goes back to the system without `empty_cache()`. `set_cache_limit(n)` or the environment variable
KILN_ALLOC_CACHE_LIMIT (read at the first allocation: bytes, with an optional K, M, G or T suffix in binary units,
e.g. 512M; 0 disables the cache) fix the bound instead.
"""
from .. import _engine


def _stats():
    return _engine._allocator_stats()


def memory_allocated():
    """Bytes currently held by tensors (block sizes).

    Returns:
        int.
    """
    return _stats()["bytes_in_use"]


def max_memory_allocated():
    """The peak of `memory_allocated()` since the process started or the last `reset_max_memory_allocated()` /
    `reset_peak_memory_stats()`.

    Returns:
        int.
    """
    return _stats()["peak_bytes_in_use"]


def memory_reserved():
    """Bytes the allocator holds from the system: allocated plus cached.

    Returns:
        int.
    """
    s = _stats()
    return s["bytes_in_use"] + s["bytes_cached"]


def max_memory_reserved():
    """The peak of `memory_reserved()` since the process started or the last `reset_max_memory_reserved()` /
    `reset_peak_memory_stats()`.

    Returns:
        int.
    """
    return _stats()["peak_bytes_reserved"]


def empty_cache():
    """Returns every cached (free) block to the system; tensors in use are untouched. Afterwards
    `memory_reserved() == memory_allocated()`."""
    _engine._empty_cache()


def reset_peak_memory_stats():
    """Restarts both peaks (`max_memory_allocated`, `max_memory_reserved`) from the current values."""
    _engine._reset_peak_in_use()
    _engine._reset_peak_reserved()


def reset_max_memory_allocated():
    """Restarts `max_memory_allocated()` from the current `memory_allocated()`."""
    _engine._reset_peak_in_use()


def reset_max_memory_reserved():
    """Restarts `max_memory_reserved()` from the current `memory_reserved()`."""
    _engine._reset_peak_reserved()


def memory_stats():
    """The allocator's statistics, with MindSpore's keys.

    Returns:
        dict: 'total_reserved_memory', 'total_allocated_memory', 'total_idle_memory' (cached bytes),
        'total_eager_free_memory' (always 0 on Kiln), 'max_reserved_memory', 'max_allocated_memory' (all int bytes),
        and Kiln's own: 'cache_limit' (the bound on cached bytes in force now; the automatic one follows the
        allocated bytes), 'cached_block_count',
        'system_alloc_count' and 'system_free_count' (calls to the system allocator).
    """
    s = _stats()
    return {
        "total_reserved_memory": s["bytes_in_use"] + s["bytes_cached"],
        "total_allocated_memory": s["bytes_in_use"],
        "total_idle_memory": s["bytes_cached"],
        "total_eager_free_memory": 0,
        "max_reserved_memory": s["peak_bytes_reserved"],
        "max_allocated_memory": s["peak_bytes_in_use"],
        "cache_limit": s["cache_limit"],
        "cached_block_count": s["cached_blocks"],
        "system_alloc_count": s["system_allocs"],
        "system_free_count": s["system_frees"],
    }


def memory_summary():
    """A readable summary of `memory_stats()`.

    Returns:
        str.
    """
    s = memory_stats()
    mib = 1 << 20
    rows = [("Reserved memory", s["total_reserved_memory"], s["max_reserved_memory"]),
            ("Allocated memory", s["total_allocated_memory"], s["max_allocated_memory"]),
            ("Idle (cached) memory", s["total_idle_memory"], None)]
    lines = ["=" * 60, f"{'Metric':<24}{'current (MiB)':>16}{'peak (MiB)':>16}", "-" * 60]
    for name, cur, peak in rows:
        lines.append(f"{name:<24}{cur / mib:>16.3f}{'' if peak is None else f'{peak / mib:.3f}':>16}")
    lines.append(f"{'Cache limit':<24}{s['cache_limit'] / mib:>16.3f}")
    lines.append(f"Cached blocks: {s['cached_block_count']}, system allocations: {s['system_alloc_count']}, "
                 f"system frees: {s['system_free_count']}")
    lines.append("=" * 60)
    return "\n".join(lines)


def set_cache_limit(limit):
    """Sets the bound on cached (free) bytes; cached blocks beyond it are returned to the system now, and later
    releases beyond it go straight back to the system. A Kiln extension (MLX has the same function).

    Args:
        limit (int or None): bytes (>= 0; 0 disables the cache); None restores the default: the value of the
            environment variable KILN_ALLOC_CACHE_LIMIT when it is set, else the automatic bound, the larger of
            64 MiB and `memory_allocated()` at each release.

    Returns:
        int: the previous limit in force (bytes).

    Raises:
        TypeError: `limit` is not an int or None. ValueError: it is negative.
    """
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"For 'set_cache_limit', 'limit' must be an int or None, but got {type(limit).__name__}.")
        if limit < 0:
            raise ValueError(f"For 'set_cache_limit', 'limit' must be >= 0, but got {limit}.")
    return _engine._set_cache_limit(limit)


_set_memory_done = [False]
_MEMORY_SIZE = r"[1-9][0-9]*(\.)?[0-9]*GB|0\.[0-9]*GB"


def set_memory(init_size="2GB", increase_size="2GB", max_size="1024GB", optimize_level="O0",
               huge_page_reserve_size="0GB"):
    """MindSpore 2.10's runtime.set_memory: the device memory pool's initial size, growth step, maximum, reuse level
    and huge-page reserve (Ascend/GPU). MindSpore's CPU build checks the arguments, records that the call was made
    and changes nothing (get_context('max_device_memory') stays 1024.0); Kiln, a CPU framework, does the same:
    host memory is Kiln's caching allocator's (set_cache_limit). Returns None.

    Raises (MindSpore 2.10's messages):
        TypeError: a size or optimize_level that is not a str.
        ValueError: a size not of the form '<n>GB' (regular expression [1-9][0-9]*(\\.)?[0-9]*GB|0\\.[0-9]*GB, e.g.
            '28GB', '1.5GB', '0.5GB'; huge_page_reserve_size may also be '0GB'); optimize_level not 'O0' or 'O1'.
        RuntimeError: a second call in the process ("can not be set repeatedly").
    """
    import re
    if _set_memory_done[0]:
        raise RuntimeError("The 'set_memory' can not be set repeatedly.")
    sizes = {"init_size": init_size, "increase_size": increase_size, "max_size": max_size,
             "huge_page_reserve_size": huge_page_reserve_size}
    for name, value in list(sizes.items()) + [("optimize_level", optimize_level)]:
        if not isinstance(value, str):
            raise TypeError(f"The parameter '{name}' must be {str}, but got {type(value)}")
    for name, value in sizes.items():
        pattern = _MEMORY_SIZE if name != "huge_page_reserve_size" else "[0-9]" + _MEMORY_SIZE[5:]  # '0GB' allowed
        if not re.fullmatch(pattern, value, re.ASCII):
            raise ValueError(f"The '{value}' is illegal, it must be match regular'{pattern}' by flags're.ASCII.'")
    if optimize_level not in ("O0", "O1"):
        raise ValueError(f"The optimize_level must be one of ['O0', 'O1'], but got {optimize_level}.")
    _set_memory_done[0] = True
