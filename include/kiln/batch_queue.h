// Kiln — a bounded, thread-safe FIFO of batches (lists of tensors): the prefetch queue of data sink.
//
// One or more producers push batches; one or more consumers pop them in push order. The queue holds at most
// `capacity` batches and (beyond its first batch) at most `max_bytes` bytes of tensor data, so a fast producer
// blocks instead of growing memory. A producer ends the stream with finish() (normal end) or fail() (an error
// that the consumer learns of after it has popped every batch pushed before the error). close() is the
// consumer's way out: it wakes every waiting thread, makes push() return false and pop() return Closed, and
// drops the queued batches.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

class BatchQueue {
 public:
  using Batch = std::vector<Tensor>;
  enum class PopStatus { Ok, Finished, Failed, Closed, Timeout };

  // capacity: most batches held (>= 1); max_bytes: most bytes of tensor data held, a single batch larger than it
  // is still accepted when the queue is empty (0: no byte bound). Errors: ValueError for capacity < 1.
  explicit BatchQueue(size_t capacity, size_t max_bytes = 0);
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Appends a batch. When the queue is full it blocks until the queue has drained to half its capacity (so that a
  // producer faster than its consumer wakes once per capacity/2 batches, not once per batch). Returns false (and drops the batch) when the queue is
  // closed, or was finished/failed (no batch may follow the end of the stream).
  bool push(Batch batch);
  // Like push() but waits at most `timeout` for room: returns false on a timeout too (see closed() to tell apart).
  bool push_for(Batch& batch, std::chrono::milliseconds timeout);
  // Takes the oldest batch into `out` (Ok), blocking while the queue is empty and the stream open. Once the queue
  // is empty: Finished after finish(), Failed after fail() (error() holds the message), Closed after close().
  PopStatus pop(Batch& out);
  // Like pop() but waits at most `timeout`; returns Timeout when nothing arrived meanwhile.
  PopStatus pop_for(Batch& out, std::chrono::milliseconds timeout);
  // Ends the stream normally: consumers get the queued batches, then Finished. Idempotent.
  void finish();
  // Ends the stream with an error: consumers get the queued batches, then Failed. The first message is kept.
  void fail(const std::string& message);
  // Shuts the queue down from either side: drops the queued batches, wakes all waiters. Idempotent.
  void close();

  size_t size() const;          // batches held now
  size_t bytes() const;         // bytes of tensor data held now
  size_t capacity() const { return capacity_; }
  size_t max_bytes() const { return max_bytes_; }
  bool closed() const;
  std::string error() const;    // the message given to fail(), or ""

  // Bytes of tensor data in a batch (numel * itemsize of each tensor; undefined tensors count 0).
  static size_t batch_bytes(const Batch& b);

 private:
  bool has_room(size_t incoming) const;  // must hold mu_
  bool refilled(size_t incoming) const;  // has room and at most capacity/2 batches held; must hold mu_
  PopStatus take(Batch& out);            // must hold mu_, queue non-empty or stream ended

  const size_t capacity_, max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<Batch, size_t>> items_;  // (batch, its bytes)
  size_t bytes_ = 0;
  enum class State { Open, Finished, Failed, Closed } state_ = State::Open;
  std::string error_;
};

}  // namespace kiln
