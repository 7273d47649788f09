#include "kiln/allocator.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "kiln/error.h"

namespace kiln::allocator {
namespace {

// Size classes: multiples of 64 bytes up to 4 KiB, then powers of two (at most 2x waste, bounded cache misses).
size_t size_class(size_t n) {
  if (n <= 4096) return n == 0 ? 64 : (n + 63) & ~size_t(63);
  size_t c = 8192;
  while (c < n) c <<= 1;
  return c;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  Stats st;
};
Cache& cache() {
  static Cache* c = new Cache();  // leaked on purpose: tensors may be freed during static destruction
  return *c;
}

}  // namespace

void* allocate(size_t nbytes) {
  size_t cls = size_class(nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto it = c.free_lists.find(cls);
    if (it != c.free_lists.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.st.bytes_cached -= cls;
      c.st.bytes_in_use += cls;
      if (c.st.bytes_in_use > c.st.peak_bytes_in_use) c.st.peak_bytes_in_use = c.st.bytes_in_use;
      return p;
    }
  }
  void* p = std::aligned_alloc(64, cls);
  if (!p) {
    empty_cache();
    p = std::aligned_alloc(64, cls);
  }
  KILN_CHECK(p != nullptr, Runtime, "Kiln: out of host memory allocating ", nbytes, " bytes");
  std::lock_guard<std::mutex> g(c.mu);
  c.st.system_allocs++;
  c.st.bytes_in_use += cls;
  if (c.st.bytes_in_use > c.st.peak_bytes_in_use) c.st.peak_bytes_in_use = c.st.bytes_in_use;
  return p;
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  size_t cls = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  c.free_lists[cls].push_back(p);
  c.st.bytes_in_use -= cls;
  c.st.bytes_cached += cls;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  for (auto& kv : c.free_lists) {
    for (void* p : kv.second) std::free(p);
    kv.second.clear();
  }
  c.st.bytes_cached = 0;
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  return c.st;
}

}  // namespace kiln::allocator
