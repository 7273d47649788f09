// The caching host allocator; the policy is described in kiln/allocator.h and docs/decisions/allocator-cache.md.
#include "kiln/allocator.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/error.h"

namespace kiln::allocator {
namespace {

constexpr size_t kSmallMax = size_t(1) << 20;       // larger blocks are mapped
constexpr size_t kLargeGrain = size_t(64) << 10;    // large sizes round up to this
constexpr size_t kPageAlignMin = size_t(64) << 10;  // C-allocator blocks from this size on are page-aligned
constexpr size_t kPage = 4096;
// After this many bytes of small blocks went back to the C allocator, malloc_trim returns its free pages to the
// system (glibc keeps freed chunks inside its heap, where they stay resident; a trim walks the heap, so it is
// batched: at most once per 16 MiB released).
constexpr size_t kTrimEvery = size_t(16) << 20;

bool is_large(size_t cls) { return cls > kSmallMax; }

size_t size_class(size_t n) {
  if (n <= 4096) return n == 0 ? 64 : (n + 63) & ~size_t(63);
  if (n > kSmallMax) return (n + kLargeGrain - 1) / kLargeGrain * kLargeGrain;
  size_t p = 4096;  // the power of two with p < n ≤ 2p
  while (2 * p < n) p <<= 1;
  const size_t step = p / 4;
  return (n + step - 1) / step * step;
}

// KILN_ALLOC_CACHE_LIMIT: a byte count with an optional binary suffix (K, M, G, T; "KiB", "MB" … read the same).
// Throws a ValueError naming the variable on anything else.
size_t parse_limit(const char* text) {
  const std::string s(text);
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  const size_t digits = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  bool ok = i > digits;
  size_t v = 0;
  if (ok) {
    errno = 0;
    const unsigned long long n = std::strtoull(s.c_str() + digits, nullptr, 10);
    ok = errno == 0;
    v = size_t(n);
  }
  std::string unit;
  for (; i < s.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(s[i]))) unit += char(std::toupper(static_cast<unsigned char>(s[i])));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  else {
    const std::string rest = unit.substr(1);
    if (rest.empty() || rest == "B" || rest == "IB") {
      switch (unit[0]) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        default: break;
      }
    }
  }
  ok = ok && shift >= 0 && (shift == 0 || v <= (~size_t(0) >> shift));
  KILN_CHECK(ok, Value, "Kiln: KILN_ALLOC_CACHE_LIMIT must be a byte count with an optional K, M, G or T suffix ",
             "(binary units, e.g. 268435456, 256M, 1G; 0 disables the cache), but got '", s, "'.");
  return v << shift;
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> small;  // class → cached blocks (a class seen once keeps its entry)
  std::multimap<size_t, void*> large;          // size → cached mapped blocks
  // Small blocks handed out for a smaller class than their own (a cached block of a larger class served the
  // request): block → its own class. Usually empty; release() looks a block up only when it is not.
  std::unordered_map<void*, size_t> oversized;
  Stats st;
  size_t env_limit = kAutoLimit;   // KILN_ALLOC_CACHE_LIMIT, or automatic
  size_t user_limit = kAutoLimit;  // set_cache_limit(), starts at env_limit
  size_t trim_debt = 0;            // bytes of small blocks freed since the last malloc_trim

  Cache() {
    if (const char* e = std::getenv("KILN_ALLOC_CACHE_LIMIT"); e && *e) env_limit = user_limit = parse_limit(e);
  }

  size_t limit() const {
    return user_limit != kAutoLimit ? user_limit : std::max(kAutoLimitFloor, st.bytes_in_use);
  }
  void note_in_use() {
    st.peak_bytes_in_use = std::max(st.peak_bytes_in_use, st.bytes_in_use);
    st.peak_bytes_reserved = std::max(st.peak_bytes_reserved, st.bytes_in_use + st.bytes_cached);
  }
  // Returns one block to the system (the caller holds mu and has taken it out of the cache lists).
  void system_free(void* p, size_t cls) {
    if (is_large(cls)) {
      munmap(p, cls);
    } else {
      std::free(p);
      trim_debt += cls;
    }
    st.system_frees++;
  }
  // True (once) when enough small blocks went back to the C allocator that its free pages should be trimmed; the
  // caller calls malloc_trim after unlocking mu.
  bool take_trim() {
    if (trim_debt < kTrimEvery) return false;
    trim_debt = 0;
    return true;
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
  // A cached block for class `cls`, or nullptr; `*own` is set to the class the block occupies (bytes_in_use
  // counts it). Small: the class's own list, else the smallest cached block of a larger class up to twice `cls`
  // (a block that is not wastefully larger; the scan runs only on a miss). Large: the best-fitting cached block at
  // least as large, its tail unmapped.
  void* take(size_t cls, size_t* own) {
    *own = cls;
    if (!is_large(cls)) {
      auto it = small.find(cls);
      if (it != small.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        st.bytes_cached -= cls;
        return p;
      }
      for (it = small.upper_bound(cls); it != small.end() && it->first <= 2 * cls; ++it) {
        if (it->second.empty()) continue;
        void* p = it->second.back();
        oversized.emplace(p, it->first);  // first: if it throws, the block is still cached
        it->second.pop_back();
        st.bytes_cached -= it->first;
        *own = it->first;
        return p;
      }
      return nullptr;
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
  size_t own;
  void* p = c.take(cls, &own);
  if (!p) {
    p = system_alloc(cls);
    if (!p) {  // out of memory: give the cache back (and the C allocator's free pages) and retry once
      c.shrink_to(0);
      malloc_trim(0);
      c.trim_debt = 0;
      p = system_alloc(cls);
    }
    KILN_CHECK(p != nullptr, Runtime, "Kiln: out of host memory allocating ", nbytes, " bytes (", c.st.bytes_in_use,
               " bytes in use).");
    c.st.system_allocs++;
  }
  c.st.bytes_in_use += own;
  c.note_in_use();
  return p;
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  size_t cls = size_class(nbytes);
  Cache& c = cache();
  bool trim = false;
  {
    std::lock_guard<std::mutex> g(c.mu);
    if (!c.oversized.empty() && !is_large(cls)) {
      auto it = c.oversized.find(p);
      if (it != c.oversized.end()) {
        cls = it->second;
        c.oversized.erase(it);
      }
    }
    c.st.bytes_in_use -= cls;
    const size_t lim = c.limit();  // (the automatic limit falls with bytes_in_use: the cache may now exceed it)
    if (cls > lim) {  // would never fit in the cache
      c.system_free(p, cls);
      c.shrink_to(lim);
    } else {
      c.shrink_to(lim - cls);
      if (is_large(cls)) c.large.emplace(cls, p);
      else c.small[cls].push_back(p);
      c.st.bytes_cached += cls;
    }
    trim = c.take_trim();
  }
  if (trim) malloc_trim(0);
}

void empty_cache() {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    c.shrink_to(0);
    c.trim_debt = 0;
  }
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
  size_t old;
  bool trim;
  {
    std::lock_guard<std::mutex> g(c.mu);
    old = c.limit();
    c.user_limit = nbytes == kAutoLimit ? c.env_limit : nbytes;
    c.shrink_to(c.limit());
    trim = c.take_trim();
  }
  if (trim) malloc_trim(0);
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
