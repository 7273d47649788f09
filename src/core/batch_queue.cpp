// BatchQueue: a bounded blocking FIFO (mutex + two condition variables). See include/kiln/batch_queue.h.
#include "kiln/batch_queue.h"

#include "kiln/error.h"

namespace kiln {

BatchQueue::BatchQueue(size_t capacity, size_t max_bytes) : capacity_(capacity), max_bytes_(max_bytes) {
  KILN_CHECK(capacity >= 1, Value, "BatchQueue: capacity must be >= 1, but got ", capacity, ".");
}

size_t BatchQueue::batch_bytes(const Batch& b) {
  size_t n = 0;
  for (const Tensor& t : b)
    if (t.defined()) n += size_t(t.numel()) * itemsize(t.dtype());
  return n;
}

bool BatchQueue::has_room(size_t incoming) const {
  if (items_.empty()) return true;  // a batch larger than max_bytes still goes through, alone
  if (items_.size() >= capacity_) return false;
  return max_bytes_ == 0 || bytes_ + incoming <= max_bytes_;
}

bool BatchQueue::refilled(size_t incoming) const {
  return has_room(incoming) && items_.size() <= capacity_ / 2;
}

bool BatchQueue::push(Batch batch) {
  const size_t nb = batch_bytes(batch);
  std::unique_lock<std::mutex> lock(mu_);
  // Full: wait until the consumer has drained it to half (hysteresis: one wake-up per capacity/2 batches).
  if (!has_room(nb)) not_full_.wait(lock, [&] { return state_ != State::Open || refilled(nb); });
  if (state_ != State::Open) return false;
  items_.emplace_back(std::move(batch), nb);
  bytes_ += nb;
  lock.unlock();
  not_empty_.notify_one();
  return true;
}

bool BatchQueue::push_for(Batch& batch, std::chrono::milliseconds timeout) {
  const size_t nb = batch_bytes(batch);
  std::unique_lock<std::mutex> lock(mu_);
  if (!has_room(nb) && !not_full_.wait_for(lock, timeout, [&] { return state_ != State::Open || refilled(nb); }))
    return false;
  if (state_ != State::Open) return false;
  items_.emplace_back(std::move(batch), nb);
  bytes_ += nb;
  lock.unlock();
  not_empty_.notify_one();
  return true;
}

BatchQueue::PopStatus BatchQueue::take(Batch& out) {
  if (state_ == State::Closed) return PopStatus::Closed;
  if (items_.empty()) return state_ == State::Failed ? PopStatus::Failed : PopStatus::Finished;
  out = std::move(items_.front().first);
  bytes_ -= items_.front().second;
  items_.pop_front();
  if (items_.size() <= capacity_ / 2) not_full_.notify_all();  // see push(): producers wait for half empty
  return PopStatus::Ok;
}

BatchQueue::PopStatus BatchQueue::pop(Batch& out) {
  std::unique_lock<std::mutex> lock(mu_);
  not_empty_.wait(lock, [&] { return !items_.empty() || state_ != State::Open; });
  return take(out);
}

BatchQueue::PopStatus BatchQueue::pop_for(Batch& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!not_empty_.wait_for(lock, timeout, [&] { return !items_.empty() || state_ != State::Open; }))
    return PopStatus::Timeout;
  return take(out);
}

void BatchQueue::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::Open) state_ = State::Finished;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

void BatchQueue::fail(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::Open) {
      state_ = State::Failed;
      error_ = message;
    }
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

void BatchQueue::close() {
  std::deque<std::pair<Batch, size_t>> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = State::Closed;
    dropped.swap(items_);
    bytes_ = 0;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

size_t BatchQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

size_t BatchQueue::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

bool BatchQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::Closed;
}

std::string BatchQueue::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace kiln
