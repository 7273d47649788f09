// Micro-benchmark of Kiln's caching host allocator (src/core/allocator.cpp): the cost of one allocate + release
// pair on one thread, in the three patterns that matter (docs/decisions/allocator-cache.md):
//   steady  — a training-loop-like step: 16 tensors of mixed sizes (256 B … 4 MiB) allocated, then freed, every
//             step: after the first step every request is a cache hit;
//   single  — one 4 KiB block allocated and freed in a loop (the fastest path: one exact-class hit);
//   shifting — request sizes drift (a new size every step, 1 KiB … 2 MiB): hits on larger cached blocks, misses
//             and releases to the system.
// Built standalone against the allocator source only:
//   g++ -O2 -std=c++17 -Iinclude benchmarks/bench_allocator.cpp src/core/allocator.cpp -o /tmp/bench_allocator
//   /tmp/bench_allocator   # prints thread-CPU ns per allocate+release pair (median of 7 runs) and the final stats
// For instruction counts (deterministic, unlike times on a shared machine), `--count single|steady|none` runs fixed
// loops (10 warm-up steady steps, then 100 000 single 4 KiB pairs, or 10 000 steady steps = 160 000 pairs, or
// nothing) to be run under `valgrind --tool=callgrind`: (Ir(mode) − Ir(none)) / pairs.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/allocator.h"

namespace {
namespace A = kiln::allocator;

// This thread's CPU time in ns (not wall time: the machine is shared, and a descheduled thread would count).
double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

template <typename F>
double median_ns_per_pair(F run, long pairs) {
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    const double t0 = cpu_ns();
    run();
    t.push_back((cpu_ns() - t0) / double(pairs));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const size_t sizes[16] = {256, 1000, 4096, 4096, 20000, 65536, 100000, 262144,
                            512, 3000, 40000, 1 << 20, (1 << 20) + 4, 2 << 20, 3 << 20, 4 << 20};
  void* held[16];
  auto steps_of = [&](long steps) {
    for (long s = 0; s < steps; ++s) {
      for (int i = 0; i < 16; ++i) held[i] = A::allocate(sizes[i]);
      for (int i = 15; i >= 0; --i) A::release(held[i], sizes[i]);
    }
  };
  if (argc == 3 && std::string(argv[1]) == "--count") {
    const std::string mode = argv[2];
    steps_of(10);
    if (mode == "single") for (long s = 0; s < 100000; ++s) A::release(A::allocate(4096), 4096);
    if (mode == "steady") steps_of(10000);
    return 0;
  }
  const long steps = 20000;
  auto steady = [&] { steps_of(steps); };
  steady();  // warm the cache
  const double ns_steady = median_ns_per_pair(steady, steps * 16);

  auto single = [&] {
    for (long s = 0; s < 2000000; ++s) A::release(A::allocate(4096), 4096);
  };
  const double ns_single = median_ns_per_pair(single, 2000000);

  auto shifting = [&] {
    for (long s = 0; s < 2000; ++s) {
      const size_t n = 1024 + size_t(s) * 1048;  // 1 KiB … ~2 MiB
      void* p[4];
      for (int i = 0; i < 4; ++i) p[i] = A::allocate(n * size_t(i + 1) / 2);
      for (int i = 3; i >= 0; --i) A::release(p[i], n * size_t(i + 1) / 2);
    }
  };
  const double ns_shift = median_ns_per_pair(shifting, 2000 * 4);

  const A::Stats st = A::stats();
  std::printf("steady (16 mixed sizes per step): %.1f ns per allocate+release\n", ns_steady);
  std::printf("single 4 KiB block:               %.1f ns per allocate+release\n", ns_single);
  std::printf("shifting sizes:                   %.1f ns per allocate+release\n", ns_shift);
  std::printf("stats: cached %zu bytes in %zu blocks, system allocs %zu, frees %zu, limit %zu\n", st.bytes_cached,
              st.cached_blocks, st.system_allocs, st.system_frees, st.cache_limit);
  return 0;
}
