// Kiln — caching host allocator (policy and measurements: docs/decisions/allocator-cache.md).
//
// Small blocks (≤ 1 MiB) come from the C allocator in size classes (multiples of 64 bytes up to 4 KiB, then four
// classes per power of two: at most 25% rounding) and are cached per class; those of 64 KiB or more are
// page-aligned, as mapped blocks are (a 1 MiB all-reduce into a block at another page offset was slower:
// docs/decisions/allreduce-benchmark.md, "All-reduce at 1 MiB"). Large blocks (> 1 MiB) are mapped with mmap in
// multiples of 64 KiB. Freed blocks are cached and reused across sizes:
//   - a small request takes a cached block of its own class, else the smallest cached block of a larger class up
//     to twice its class (the block keeps its own class: bytes_in_use counts it, and release() returns it there);
//   - a large request takes the best-fitting cached block at least as large, and a larger one is trimmed to the
//     request (its tail unmapped, so it returns to the system).
// So a training loop that allocates the same shapes every step does not call the system after its first step, and
// a change of shapes reuses the cached memory instead of adding to it.
//
// The cache is bounded: cached (free) bytes never exceed cache_limit(); when a release would exceed it, the largest
// cached blocks go back to the system (munmap / free) first. The limit is, unless set with set_cache_limit() or the
// environment variable KILN_ALLOC_CACHE_LIMIT (bytes; K/M/G/T suffixes, binary), the larger of kAutoLimitFloor
// (64 MiB) and the bytes in use now: memory held by the process stays within max(in use + 64 MiB, 2 × in use),
// whatever it held before. Small blocks go back to the C allocator, which keeps freed chunks inside its heap:
// after every 16 MiB of them, malloc_trim returns the heap's free pages to the system. A failed system allocation
// empties the cache and retries once. Thread-safe (one mutex).
#pragma once
#include <cstddef>

namespace kiln::allocator {

// Returns a block of at least `nbytes`, 64-byte aligned, page-aligned (4096) from 64 KiB (a zero-byte request returns
// a valid unique block).
// Throws RuntimeError if memory is exhausted.
void* allocate(size_t nbytes);
// Returns a block obtained from allocate(nbytes) to the cache (or to the system, beyond the cache limit).
// `nbytes` must be the size it was allocated with.
void release(void* p, size_t nbytes);
// Frees every cached block back to the system (and trims the C allocator's heap).
void empty_cache();
// The bytes a request of `nbytes` occupies (its size class or rounded large size): what bytes_in_use counts for it,
// unless a cached block of a larger small class served it (then that class).
size_t block_size(size_t nbytes);

struct Stats {
  size_t bytes_in_use = 0;       // blocks handed out and not released (their block sizes, see block_size)
  size_t bytes_cached = 0;       // released blocks kept for reuse
  size_t peak_bytes_in_use = 0;  // since start or reset_peak_in_use()
  size_t peak_bytes_reserved = 0;  // peak of bytes_in_use + bytes_cached, since start or reset_peak_reserved()
  size_t system_allocs = 0;      // calls to the system allocator (malloc / mmap)
  size_t system_frees = 0;       // blocks returned to the system (free / munmap; trims not counted)
  size_t cached_blocks = 0;      // number of cached blocks
  size_t cache_limit = 0;        // the bound on bytes_cached now in force
};
Stats stats();

// The automatic bound on cached bytes is max(kAutoLimitFloor, bytes_in_use).
constexpr size_t kAutoLimitFloor = size_t(64) << 20;
// Sets the bound on cached bytes (releasing cached blocks beyond it now); 0 disables the cache. Returns the
// previous limit in force. Passing kAutoLimit restores the default: KILN_ALLOC_CACHE_LIMIT when that is set, else
// the automatic bound. (KILN_ALLOC_CACHE_LIMIT is read at the first allocation; a malformed value makes every
// allocation throw a ValueError naming it.)
constexpr size_t kAutoLimit = ~size_t(0);
size_t set_cache_limit(size_t nbytes);
// The bound on cached bytes now in force.
size_t cache_limit();

// Peak counters restart from the current values.
void reset_peak_in_use();
void reset_peak_reserved();

}  // namespace kiln::allocator
