// The data-sink loop: pop a batch, pick the executable compiled for its shapes, run it; no Python per step.
#include "kiln/sink.h"

#include "kiln/error.h"

namespace kiln::graph {

bool accepts(const Executable& exe, const std::vector<Tensor>& batch) {
  const Graph& g = exe.graph();
  if (batch.size() != g.inputs.size()) return false;
  for (size_t i = 0; i < batch.size(); ++i) {
    const TensorMeta& m = g.values[size_t(g.inputs[i])].meta;
    if (!batch[i].defined() || batch[i].dtype() != m.dtype || batch[i].shape() != m.shape) return false;
  }
  return true;
}

SinkResult run_sink(const std::vector<Executable*>& exes, BatchQueue& queue, int64_t steps,
                    const std::function<bool()>& should_stop, std::chrono::milliseconds poll) {
  KILN_CHECK(steps >= 0, Value, "run_sink: steps must be >= 0, but got ", steps, ".");
  for (const Executable* e : exes) KILN_CHECK(e != nullptr, Value, "run_sink: null executable.");
  SinkResult r;
  BatchQueue::Batch batch;
  int last = -1;  // the executable of the previous step: batches mostly keep their shapes
  while (r.steps < steps) {
    if (should_stop && should_stop()) {
      r.status = SinkResult::Status::Stopped;
      return r;
    }
    BatchQueue::PopStatus st;
    while ((st = queue.pop_for(batch, poll)) == BatchQueue::PopStatus::Timeout) {
      if (should_stop && should_stop()) {
        r.status = SinkResult::Status::Stopped;
        return r;
      }
    }
    switch (st) {
      case BatchQueue::PopStatus::Ok: break;
      case BatchQueue::PopStatus::Finished: r.status = SinkResult::Status::Finished; return r;
      case BatchQueue::PopStatus::Failed: r.status = SinkResult::Status::Failed; return r;
      default: r.status = SinkResult::Status::Closed; return r;
    }
    int pick = -1;
    if (last >= 0 && accepts(*exes[size_t(last)], batch)) {
      pick = last;
    } else {
      for (size_t k = 0; k < exes.size(); ++k)
        if (accepts(*exes[k], batch)) { pick = int(k); break; }
    }
    if (pick < 0) {
      r.status = SinkResult::Status::NeedsCompile;
      r.pending = std::move(batch);
      return r;
    }
    r.outputs = exes[size_t(pick)]->run(batch);
    r.executable = last = pick;
    ++r.steps;
    batch.clear();
  }
  r.status = SinkResult::Status::Done;
  return r;
}

}  // namespace kiln::graph
