// Kiln — what the tape needs to know about the active traces (src/graph/trace.cpp), for the copies it records before
// a traced in-place write (kiln/autodiff.h, Note [saved tensors and in-place writes]). Internal: not part of the API.
#pragma once
#include "kiln/graph.h"

namespace kiln::graph {

// The innermost active trace on this thread (nullptr when none), and whether `t` is active (itself or enclosing it).
Trace* current_trace();
bool trace_active(const Trace* t);

// RAII: records go to `t` (an active trace: the current one or one enclosing it) until destroyed.
class TraceSwitch {
 public:
  explicit TraceSwitch(Trace* t);
  ~TraceSwitch();
  TraceSwitch(const TraceSwitch&) = delete;
  TraceSwitch& operator=(const TraceSwitch&) = delete;
 private:
  Trace* saved_;
};

// The memory a tensor reads when a traced graph runs: a concrete tensor's own Storage; for a symbolic one, the root of
// its views (through the outputs of `direct` ops, which the executor lets alias their first input): a capture's
// Storage, or (graph, value) of an argument, constant or kernel output. Tensors with different roots never share
// memory when the graph runs.
struct AliasRoot {
  const void* storage = nullptr;
  const void* graph = nullptr;
  int value = -1;
  bool operator==(const AliasRoot& o) const { return storage == o.storage && graph == o.graph && value == o.value; }
};
AliasRoot alias_root(const Tensor& t);

}  // namespace kiln::graph
