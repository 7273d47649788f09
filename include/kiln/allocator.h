// Kiln — caching host allocator. Freed blocks are kept in per-size-class free lists and reused, so a training
// loop that allocates the same shapes every step does not call malloc after its first step.
#pragma once
#include <cstddef>

namespace kiln::allocator {

// Returns a 64-byte aligned block of at least `nbytes` (a zero-byte request returns a valid unique block).
// Throws RuntimeError if memory is exhausted.
void* allocate(size_t nbytes);
// Returns a block obtained from allocate(nbytes) to the cache.
void release(void* p, size_t nbytes);
// Frees every cached block back to the system.
void empty_cache();
struct Stats {
  size_t bytes_in_use = 0;    // allocated and not released
  size_t bytes_cached = 0;    // released and kept for reuse
  size_t peak_bytes_in_use = 0;
  size_t system_allocs = 0;   // calls to the system allocator
};
Stats stats();

}  // namespace kiln::allocator
