// The caching host allocator; the policy is described in kiln/allocator.h and docs/decisions.md.
#include "kiln/allocator.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "kiln/error.h"

namespace kiln::allocator {
namespace {

constexpr size_t kSmallMax = size_t(1) << 20;       // larger blocks are mapped
constexpr size_t kLargeGrain = size_t(64) << 10;    // large sizes round up to this
constexpr size_t kMinAutoLimit = size_t(256) << 20;
constexpr size_t kPageAlignMin = size_t(64) << 10;  // C-allocator blocks from this size on are page-aligned
constexpr size_t kPage = 4096;

bool is_large(size_t cls) { return cls > kSmallMax; }

size_t size_class(size_t n) {
  if (n <= 4096) return n == 0 ? 64 : (n + 63) & ~size_t(63);
  if (n > kSmallMax) return (n + kLargeGrain - 1) / kLargeGrain * kLargeGrain;
  size_t p = 4096;  // the power of two with p < n ≤ 2p
  while (2 * p < n) p <<= 1;
  const size_t step = p / 4;
  return (n + step - 1) / step * step;
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> small;  // class → cached blocks
  std::multimap<size_t, void*> large;          // size → cached mapped blocks
  Stats st;
  size_t high_water = 0;                       // highest bytes_in_use ever (the automatic limit follows it)
  size_t user_limit = kAutoLimit;

  size_t limit() const { return user_limit != kAutoLimit ? user_limit : std::max(kMinAutoLimit, high_water); }
  void note_in_use() {
    st.peak_bytes_in_use = std::max(st.peak_bytes_in_use, st.bytes_in_use);
    high_water = std::max(high_water, st.bytes_in_use);
    st.peak_bytes_reserved = std::max(st.peak_bytes_reserved, st.bytes_in_use + st.bytes_cached);
  }
  // Returns one block to the system (the caller holds mu and has taken it out of the cache lists).
  void system_free(void* p, size_t cls) {
    if (is_large(cls)) munmap(p, cls);
    else std::free(p);
    st.system_frees++;
  }
  // Frees cached blocks, largest first, until bytes_cached ≤ bound.
  void shrink_to(size_t bound) {
    while (st.bytes_cached > bound && !large.empty()) {
      auto it = std::prev(large.end());
      st.bytes_cached -= it->first;
      system_free(it->second, it->first);
      large.erase(it);
    }
    for (auto it = small.rbegin(); it != small.rend() && st.bytes_cached > bound; ++it) {
      while (!it->second.empty() && st.bytes_cached > bound) {
        system_free(it->second.back(), it->first);
        it->second.pop_back();
        st.bytes_cached -= it->first;
      }
    }
  }
  // A cached block for class `cls`, or nullptr.
  void* take(size_t cls) {
    if (!is_large(cls)) {
      auto it = small.find(cls);
      if (it == small.end() || it->second.empty()) return nullptr;
      void* p = it->second.back();
      it->second.pop_back();
      st.bytes_cached -= cls;
      return p;
    }
    auto it = large.lower_bound(cls);  // best fit: the smallest cached block that is large enough
    if (it == large.end()) return nullptr;
    void* p = it->second;
    const size_t have = it->first;
    large.erase(it);
    st.bytes_cached -= have;
    if (have > cls) munmap(static_cast<char*>(p) + cls, have - cls);  // trim: the tail goes back to the system
    return p;
  }
};

Cache& cache() {
  static Cache* c = new Cache();  // leaked on purpose: tensors may be freed during static destruction
  return *c;
}

void* system_alloc(size_t cls) {
  if (!is_large(cls)) return std::aligned_alloc(cls >= kPageAlignMin ? kPage : 64, cls);  // classes ≥ 64 KiB: multiples of 8 KiB
  void* p = mmap(nullptr, cls, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

size_t block_size(size_t nbytes) { return size_class(nbytes); }

void* allocate(size_t nbytes) {
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  void* p = c.take(cls);
  if (!p) {
    p = system_alloc(cls);
    if (!p) {  // out of memory: give the cache back and retry once
      c.shrink_to(0);
      p = system_alloc(cls);
    }
    KILN_CHECK(p != nullptr, Runtime, "Kiln: out of host memory allocating ", nbytes, " bytes (", c.st.bytes_in_use,
               " bytes in use).");
    c.st.system_allocs++;
  }
  c.st.bytes_in_use += cls;
  c.note_in_use();
  return p;
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  c.st.bytes_in_use -= cls;
  const size_t lim = c.limit();
  if (cls > lim) {  // would never fit in the cache
    c.system_free(p, cls);
    return;
  }
  c.shrink_to(lim - cls);
  if (is_large(cls)) c.large.emplace(cls, p);
  else c.small[cls].push_back(p);
  c.st.bytes_cached += cls;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  c.shrink_to(0);
  malloc_trim(0);  // the C allocator keeps freed small blocks in its heap: return its free pages too
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  Stats s = c.st;
  s.cached_blocks = c.large.size();
  for (auto& kv : c.small) s.cached_blocks += kv.second.size();
  s.cache_limit = c.limit();
  return s;
}

size_t set_cache_limit(size_t nbytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  const size_t old = c.limit();
  c.user_limit = nbytes;
  c.shrink_to(c.limit());
  return old;
}

size_t cache_limit() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  return c.limit();
}

void reset_peak_in_use() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  c.st.peak_bytes_in_use = c.st.bytes_in_use;
}

void reset_peak_reserved() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  c.st.peak_bytes_reserved = c.st.bytes_in_use + c.st.bytes_cached;
}

}  // namespace kiln::allocator
