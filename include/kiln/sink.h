// Kiln — data sink: a C++ loop that runs compiled training steps on batches popped from a BatchQueue, with no
// Python (and no GIL) per step. kiln.data_sink (python/kiln/train/data_sink.py) feeds the queue from a dataset and
// compiles the step; this loop is what runs between two returns to Python.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/batch_queue.h"
#include "kiln/graph.h"

namespace kiln::graph {

// True when `batch` has exactly the graph inputs of `exe`: same count, and each tensor the input's shape and dtype.
bool accepts(const Executable& exe, const std::vector<Tensor>& batch);

// What run_sink did.
struct SinkResult {
  enum class Status {
    Done,          // ran all the requested steps
    NeedsCompile,  // popped a batch that no executable accepts (`pending`): compile one for it, then call again
    Finished,      // the queue's stream ended (BatchQueue::finish) before all steps ran
    Failed,        // the producer failed (BatchQueue::fail; the message is queue.error())
    Closed,        // the queue was closed
    Stopped,       // should_stop() returned true (between two steps, or while waiting for a batch)
  };
  Status status = Status::Done;
  int64_t steps = 0;              // steps run by this call
  int executable = -1;            // index in `exes` of the executable that ran the last step (-1: no step ran)
  std::vector<Tensor> outputs;    // the outputs of the last step run (empty if none)
  std::vector<Tensor> pending;    // NeedsCompile: the batch no executable accepts, not yet run
};

// Runs up to `steps` (>= 0) steps: each pops the next batch of `queue` and runs the first executable of `exes`
// that accepts it (see accepts), with the batch's tensors as its arguments. Returns after `steps` steps or at the
// first batch no executable accepts, the end of the stream, or a stop. `should_stop` (may be empty) is called
// before every step and every `poll` while waiting for a batch; a true result stops the loop (Stopped).
// Errors: an executable's error (a kernel's run-time check) propagates; the steps before it have run.
// Thread-safety: any number of loops may run at once on different queues; an Executable serializes its runs.
SinkResult run_sink(const std::vector<Executable*>& exes, BatchQueue& queue, int64_t steps,
                    const std::function<bool()>& should_stop,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(50));

}  // namespace kiln::graph
