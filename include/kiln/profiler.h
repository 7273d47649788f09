// Kiln — the per-op profiler: opt-in timing of every kernel run by the eager dispatcher (kiln::apply, PyNative) and
// by the graph executor (Executable::run, Graph mode), aggregated per (op, mode).
//
// Off by default. While off, an op pays one relaxed atomic load (OpTimer's constructor). While on, an op reads the
// steady clock twice and adds to two relaxed atomic counters of a fixed table (one entry per op and mode): the
// aggregation is thread-safe, lock-free and bounded (no allocation, whatever the number of ops run).
// Only the outermost op of a thread is timed: an op run from inside another op's kernel counts in that op's time.
// The counters are cumulative over the process; a measurement takes two snapshots and subtracts them, so several
// measurements may overlap (also from several threads). Times are wall-clock nanoseconds of the kernel alone
// (PyNative: shape inference, output allocation and tape recording are not included).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "kiln/op.h"

namespace kiln::profiler {

// Where an op ran.
enum class Mode : uint8_t { PyNative = 0, Graph = 1, kCount = 2 };
const char* mode_name(Mode m);  // "PyNative" or "Graph"

namespace detail {
extern std::atomic<int> g_enabled;  // > 0 while enabled (a count: enable() calls minus disable() calls)
void add(OpId id, Mode mode, int64_t ns);
int& depth();                       // this thread's nesting depth of timed ops
}  // namespace detail

// True while at least one enable() is not yet matched by disable().
inline bool enabled() { return detail::g_enabled.load(std::memory_order_relaxed) > 0; }
// Turns timing on; calls nest (each enable() needs one disable()).
void enable();
// Undoes one enable(); the profiler stays on while other enable() calls are outstanding. Throws RuntimeError when
// there is no enable() to undo.
void disable();

// One row of the counters: the calls and the summed kernel time of one op in one mode.
struct OpStat {
  OpId op;
  Mode mode;
  int64_t calls;
  int64_t total_ns;
};
// The cumulative counters of every (op, mode) that has run at least once while enabled, in OpId order.
std::vector<OpStat> snapshot();
// Zeroes all counters (a snapshot taken before it is then no longer a valid base for a difference).
void reset();

// Times one op while the profiler is on: construct it right before the kernel, in the same scope.
class OpTimer {
 public:
  OpTimer(OpId id, Mode mode) {
    if (!enabled()) return;
    int& d = detail::depth();
    if (d++ > 0) { nested_ = true; return; }
    id_ = id;
    mode_ = mode;
    active_ = true;
    t0_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (active_) {
      const auto dt = std::chrono::steady_clock::now() - t0_;
      detail::add(id_, mode_, std::chrono::duration_cast<std::chrono::nanoseconds>(dt).count());
    }
    if (active_ || nested_) --detail::depth();
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  bool active_ = false;
  bool nested_ = false;
  OpId id_{};
  Mode mode_{};
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace kiln::profiler
