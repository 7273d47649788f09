// The per-op profiler (kiln/profiler.h): off by default, counts each eager op once (nested ops not twice), nests its
// enable() calls, rejects an unmatched disable(), and aggregates exactly from several threads.
#include <thread>

#include "kiln/profiler.h"
#include "test_util.h"

namespace kiln {
namespace {

int64_t calls_of(OpId op, profiler::Mode mode) {
  for (const auto& s : profiler::snapshot())
    if (s.op == op && s.mode == mode) return s.calls;
  return 0;
}

TEST(Profiler, OffByDefaultAndCountsEagerOps) {
  ASSERT_FALSE(profiler::enabled());
  Tensor a = test::make({1, 2, 3, 4}, {2, 2});
  const int64_t add0 = calls_of(OpId::Add, profiler::Mode::PyNative);
  ops::add(a, a);  // not timed: the profiler is off
  EXPECT_EQ(calls_of(OpId::Add, profiler::Mode::PyNative), add0);
  profiler::enable();
  profiler::enable();  // nests
  profiler::disable();
  ASSERT_TRUE(profiler::enabled());
  const int64_t mul0 = calls_of(OpId::Mul, profiler::Mode::PyNative);
  Tensor b = ops::add(a, a);
  ops::mul(b, b);
  ops::mul(b, a);
  profiler::disable();
  EXPECT_FALSE(profiler::enabled());
  EXPECT_EQ(calls_of(OpId::Add, profiler::Mode::PyNative), add0 + 1);
  EXPECT_EQ(calls_of(OpId::Mul, profiler::Mode::PyNative), mul0 + 2);
  test::expect_error([] { profiler::disable(); }, ErrorKind::Runtime, {"disable() without a matching enable()"});
}

TEST(Profiler, NestedTimerCountsOnlyTheOuterOp) {
  profiler::enable();
  const int64_t add0 = calls_of(OpId::Add, profiler::Mode::PyNative);
  const int64_t mul0 = calls_of(OpId::Mul, profiler::Mode::PyNative);
  {
    profiler::OpTimer outer(OpId::Mul, profiler::Mode::PyNative);  // as if Mul's kernel ran an Add
    Tensor a = test::make({1, 2}, {2});
    ops::add(a, a);
  }
  profiler::disable();
  EXPECT_EQ(calls_of(OpId::Mul, profiler::Mode::PyNative), mul0 + 1);
  EXPECT_EQ(calls_of(OpId::Add, profiler::Mode::PyNative), add0);
}

TEST(Profiler, ThreadsAggregateExactly) {
  profiler::enable();
  const int64_t sub0 = calls_of(OpId::Sub, profiler::Mode::PyNative);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      Tensor a = test::make({1, 2, 3}, {3});
      for (int i = 0; i < 250; ++i) ops::sub(a, a);
    });
  for (auto& th : threads) th.join();
  profiler::disable();
  EXPECT_EQ(calls_of(OpId::Sub, profiler::Mode::PyNative), sub0 + 1000);
}

}  // namespace
}  // namespace kiln
