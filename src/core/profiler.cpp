// The per-op profiler's counters (kiln/profiler.h): a fixed table of relaxed atomics, one entry per (op, mode).
#include "kiln/profiler.h"

#include <array>

#include "kiln/error.h"

namespace kiln::profiler {

namespace detail {
std::atomic<int> g_enabled{0};

namespace {
constexpr size_t kModes = size_t(Mode::kCount);
constexpr size_t kSlots = size_t(OpId::kCount) * kModes;
struct Counter {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> ns{0};
};
std::array<Counter, kSlots>& table() {
  static std::array<Counter, kSlots> t;
  return t;
}
}  // namespace

void add(OpId id, Mode mode, int64_t ns) {
  Counter& c = table()[size_t(id) * kModes + size_t(mode)];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.ns.fetch_add(ns, std::memory_order_relaxed);
}

int& depth() {
  thread_local int d = 0;
  return d;
}
}  // namespace detail

const char* mode_name(Mode m) { return m == Mode::Graph ? "Graph" : "PyNative"; }

void enable() { detail::g_enabled.fetch_add(1, std::memory_order_relaxed); }

void disable() {
  int cur = detail::g_enabled.load(std::memory_order_relaxed);
  do {
    KILN_CHECK(cur > 0, Runtime, "kiln profiler: disable() without a matching enable().");
  } while (!detail::g_enabled.compare_exchange_weak(cur, cur - 1, std::memory_order_relaxed));
}

std::vector<OpStat> snapshot() {
  std::vector<OpStat> out;
  auto& t = detail::table();
  for (size_t op = 0; op < size_t(OpId::kCount); ++op)
    for (size_t m = 0; m < detail::kModes; ++m) {
      const auto& c = t[op * detail::kModes + m];
      int64_t calls = c.calls.load(std::memory_order_relaxed);
      if (calls == 0) continue;
      out.push_back({OpId(op), Mode(m), calls, c.ns.load(std::memory_order_relaxed)});
    }
  return out;
}

void reset() {
  for (auto& c : detail::table()) {
    c.calls.store(0, std::memory_order_relaxed);
    c.ns.store(0, std::memory_order_relaxed);
  }
}

}  // namespace kiln::profiler
