// BatchQueue (the data-sink prefetch queue) and run_sink (the C++ step loop): order, bounds, end of stream,
// errors, shutdown, several producers and consumers; the loop's choice of executable per batch shape.
#include <algorithm>
#include <atomic>
#include <thread>

#include "kiln/batch_queue.h"
#include "kiln/sink.h"
#include "test_util.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using test::make;
using test::values;
using test::expect_error;
using Batch = BatchQueue::Batch;

Batch batch_of(double v, int64_t n = 1) { return {make(std::vector<double>(size_t(n), v), {n})}; }
double first(const Batch& b) { return values(b.at(0)).at(0); }

TEST(BatchQueue, KeepsPushOrderThenFinishes) {
  BatchQueue q(4);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(q.push(batch_of(i)));
  q.finish();
  EXPECT_FALSE(q.push(batch_of(9)));  // nothing after the end of the stream
  Batch b;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(q.pop(b), BatchQueue::PopStatus::Ok);
    EXPECT_EQ(first(b), i);
  }
  EXPECT_EQ(q.pop(b), BatchQueue::PopStatus::Finished);
  EXPECT_EQ(q.pop(b), BatchQueue::PopStatus::Finished);
}

TEST(BatchQueue, BoundedByCountAndBytes) {
  BatchQueue q(2);
  EXPECT_TRUE(q.push(batch_of(0)));
  EXPECT_TRUE(q.push(batch_of(1)));
  Batch extra = batch_of(2);
  EXPECT_FALSE(q.push_for(extra, 10ms));  // full: times out
  EXPECT_EQ(q.size(), 2u);
  // bytes: 3 float32 = 12 bytes per batch, max 20 bytes → one batch at a time, but a lone big batch passes
  BatchQueue qb(10, 20);
  Batch a = batch_of(0, 3), c = batch_of(1, 3), big = batch_of(2, 100);
  EXPECT_TRUE(qb.push_for(a, 10ms));
  EXPECT_EQ(qb.bytes(), 12u);
  EXPECT_FALSE(qb.push_for(c, 10ms));
  Batch out;
  ASSERT_EQ(qb.pop(out), BatchQueue::PopStatus::Ok);
  EXPECT_EQ(qb.bytes(), 0u);
  EXPECT_TRUE(qb.push_for(big, 10ms));  // larger than max_bytes, accepted into the empty queue
  EXPECT_EQ(qb.bytes(), 400u);
  expect_error([] { BatchQueue bad(0); }, ErrorKind::Value, {"capacity must be >= 1", "0"});
}

TEST(BatchQueue, FullQueueWakesItsProducerAtHalf) {
  BatchQueue q(4);
  for (int i = 0; i < 4; ++i) q.push(batch_of(i));
  std::atomic<bool> done{false};
  std::thread producer([&] { q.push(batch_of(4)); done = true; });
  std::this_thread::sleep_for(20ms);  // the producer is blocked in push by now
  EXPECT_FALSE(done.load());
  Batch b;
  ASSERT_EQ(q.pop(b), BatchQueue::PopStatus::Ok);  // 3 left: still more than half full
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(done.load());
  ASSERT_EQ(q.pop(b), BatchQueue::PopStatus::Ok);  // 2 left: half
  producer.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(q.size(), 3u);
  for (int i = 2; i < 5; ++i) {
    ASSERT_EQ(q.pop(b), BatchQueue::PopStatus::Ok);
    EXPECT_EQ(first(b), i);
  }
}

TEST(BatchQueue, FailureComesAfterTheQueuedBatches) {
  BatchQueue q(4);
  q.push(batch_of(5));
  q.fail("dataset broke");
  q.fail("second message is ignored");
  Batch b;
  ASSERT_EQ(q.pop(b), BatchQueue::PopStatus::Ok);
  EXPECT_EQ(first(b), 5);
  EXPECT_EQ(q.pop(b), BatchQueue::PopStatus::Failed);
  EXPECT_EQ(q.error(), "dataset broke");
}

TEST(BatchQueue, PopTimesOutWhenEmpty) {
  BatchQueue q(1);
  Batch b;
  EXPECT_EQ(q.pop_for(b, 5ms), BatchQueue::PopStatus::Timeout);
}

TEST(BatchQueue, CloseWakesBlockedProducerAndConsumer) {
  BatchQueue full(1), empty(1);
  full.push(batch_of(0));
  std::atomic<int> pushed{-1}, popped{-1};
  std::thread producer([&] { pushed = full.push(batch_of(1)) ? 1 : 0; });
  std::thread consumer([&] { Batch b; popped = int(empty.pop(b)); });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(pushed.load(), -1);  // still blocked
  EXPECT_EQ(popped.load(), -1);
  full.close();
  empty.close();
  producer.join();
  consumer.join();
  EXPECT_EQ(pushed.load(), 0);
  EXPECT_EQ(popped.load(), int(BatchQueue::PopStatus::Closed));
  EXPECT_EQ(full.size(), 0u);  // queued batches dropped
  EXPECT_TRUE(full.closed());
}

TEST(BatchQueue, ManyProducersAndConsumersLoseNothing) {
  BatchQueue q(3);
  const int producers = 3, per = 200;
  std::vector<std::thread> threads;
  std::atomic<int> remaining{producers};
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < per; ++i) ASSERT_TRUE(q.push(batch_of(p * 1000 + i)));
      if (--remaining == 0) q.finish();
    });
  std::vector<std::vector<double>> seen(2);
  for (int c = 0; c < 2; ++c)
    threads.emplace_back([&, c] {
      Batch b;
      while (q.pop(b) == BatchQueue::PopStatus::Ok) seen[size_t(c)].push_back(first(b));
    });
  for (auto& t : threads) t.join();
  std::vector<double> all = seen[0];
  all.insert(all.end(), seen[1].begin(), seen[1].end());
  std::sort(all.begin(), all.end());
  std::vector<double> expected;
  for (int p = 0; p < producers; ++p)
    for (int i = 0; i < per; ++i) expected.push_back(p * 1000 + i);
  EXPECT_EQ(all, expected);
  // each consumer sees each producer's batches in push order
  for (auto& s : seen)
    for (int p = 0; p < producers; ++p) {
      double last = -1;
      for (double v : s)
        if (int(v) / 1000 == p) { EXPECT_GT(v, last); last = v; }
    }
}

// A graph `state += sum(x); return state * 1` for x of shape [n]: a step with a side effect, like a training step.
std::unique_ptr<graph::Executable> accumulate(const Tensor& state, int64_t n) {
  graph::Trace tr("acc");
  Tensor x = tr.input({n}, DType::Float32);
  Tensor updated = ops::assign(state, ops::add(state, ops::sum(x)));
  return std::make_unique<graph::Executable>(tr.finish({ops::depend(ops::add(state, make({0}, {}, DType::Float32)), updated)}));
}

TEST(RunSink, RunsStepsPicksExecutableByShapeAndStops) {
  Tensor state = make({0}, {}, DType::Float32);
  auto e2 = accumulate(state, 2), e3 = accumulate(state, 3);
  BatchQueue q(16);
  q.push(batch_of(1, 2));   // +2
  q.push(batch_of(1, 3));   // +3
  q.push(batch_of(2, 2));   // +4
  q.push(batch_of(1, 5));   // no executable for [5]
  q.push(batch_of(1, 2));   // +2
  std::vector<graph::Executable*> exes{e2.get(), e3.get()};
  graph::SinkResult r = graph::run_sink(exes, q, 2, {});
  EXPECT_EQ(r.status, graph::SinkResult::Status::Done);
  EXPECT_EQ(r.steps, 2);
  EXPECT_EQ(r.executable, 1);
  EXPECT_EQ(values(r.outputs.at(0)), std::vector<double>{5});
  r = graph::run_sink(exes, q, 10, {});
  EXPECT_EQ(r.status, graph::SinkResult::Status::NeedsCompile);
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(values(r.outputs.at(0)), std::vector<double>{9});
  EXPECT_EQ(r.pending.at(0).shape(), Shape{5});
  int calls = 0;
  r = graph::run_sink(exes, q, 10, [&] { return ++calls > 1; });  // one step, then stop
  EXPECT_EQ(r.status, graph::SinkResult::Status::Stopped);
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(values(state), std::vector<double>{11});
  q.finish();
  r = graph::run_sink(exes, q, 10, {});
  EXPECT_EQ(r.status, graph::SinkResult::Status::Finished);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(r.executable, -1);
  BatchQueue failing(2);
  failing.fail("boom");
  EXPECT_EQ(graph::run_sink(exes, failing, 1, {}).status, graph::SinkResult::Status::Failed);
}

TEST(RunSink, WaitingForABatchStillChecksStop) {
  Tensor state = make({0}, {}, DType::Float32);
  auto e2 = accumulate(state, 2);
  BatchQueue q(2);
  int calls = 0;
  graph::SinkResult r = graph::run_sink({e2.get()}, q, 1, [&] { return ++calls >= 3; }, 1ms);
  EXPECT_EQ(r.status, graph::SinkResult::Status::Stopped);
  EXPECT_EQ(calls, 3);
  q.close();
  EXPECT_EQ(graph::run_sink({e2.get()}, q, 1, {}).status, graph::SinkResult::Status::Closed);
}

}  // namespace
}  // namespace kiln
