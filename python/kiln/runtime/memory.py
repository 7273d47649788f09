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
