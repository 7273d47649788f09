// Tracing: kiln::apply records nodes here while a Trace is active.
#include <sstream>

#include "kiln/graph.h"
#include "kiln/op_schema.h"
#include "trace_access.h"

namespace kiln::autodiff {
// Defined in src/autodiff/tape.cpp: forgets the tape nodes listed for a trace that ends.
void end_trace(const void* trace);
}  // namespace kiln::autodiff

namespace kiln::graph {

namespace {
thread_local Trace* t_trace = nullptr;
LocationFn g_location = nullptr;
uint64_t next_tensor_id() { return TensorImpl().id; }  // ids grow monotonically
}  // namespace

void set_location_provider(LocationFn fn) { g_location = fn; }

bool is_state_while_tracing(const Tensor& t) {
  if (!t_trace || t.is_symbolic()) return false;
  for (Trace* tr = t_trace; tr; tr = tr->outer()) {
    if (t.id() >= tr->first_id()) return false;
  }
  return true;
}
bool tracing() { return t_trace != nullptr; }
TraceSuspend::TraceSuspend() : saved_(t_trace) { t_trace = nullptr; }
TraceSuspend::~TraceSuspend() { t_trace = saved_; }

Trace* current_trace() { return t_trace; }
bool trace_active(const Trace* t) {
  for (Trace* tr = t_trace; tr; tr = tr->outer())
    if (tr == t) return true;
  return false;
}
TraceSwitch::TraceSwitch(Trace* t) : saved_(t_trace) {
  KILN_CHECK(trace_active(t), Runtime, "Kiln: TraceSwitch to a trace that is not active.");
  t_trace = t;
}
TraceSwitch::~TraceSwitch() { t_trace = saved_; }

AliasRoot alias_root(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  if (!impl->sym_graph) return {impl->storage.get(), nullptr, -1};
  const Graph* g = static_cast<const Graph*>(impl->sym_graph);
  int v = impl->sym_value;
  for (;;) {
    const Value& val = g->values[size_t(v)];
    if (val.kind == ValueKind::Node && val.node >= 0 && size_t(val.node) < g->nodes.size()) {
      const Node& n = g->nodes[size_t(val.node)];
      if (get_op(n.op).direct && !n.inputs.empty()) {  // a view (or in-place result) of its first input
        v = n.inputs[0];
        continue;
      }
    }
    if (val.kind == ValueKind::Capture && val.tensor.defined() && !val.tensor.is_symbolic())
      return {val.tensor.impl()->storage.get(), nullptr, -1};
    return {nullptr, g, v};
  }
}

// From the schema's traits (src/ops/schema/ops.yaml): state updates, prints and value checks (side_effect), random
// draws (a compiled graph draws anew at every run), collectives (every process must run them in the same order,
// every run: kiln/comm.h) and control flow (a node that runs sub-graphs, maybe with side effects inside, is a
// barrier to the passes, which optimize its sub-graphs separately; it is never folded at compile time, since a
// loop could run long, nor run ahead).
bool has_side_effect(OpId op) {
  return (op_info(op).traits & (kTraitSideEffect | kTraitRandom | kTraitCollective | kTraitControlFlow)) != 0;
}

bool is_random(OpId op) { return op_has(op, kTraitRandom); }

Trace::Trace(std::string name, bool lift)
    : graph_(std::make_shared<Graph>()), first_id_(next_tensor_id()), outer_(t_trace), lift_(lift) {
  graph_->name = std::move(name);
  t_trace = this;
}

Trace::~Trace() {
  autodiff::end_trace(this);  // its symbolic tensors must not be looked at once its graph may be gone
  t_trace = outer_;
}

Tensor symbolic(const Graph* g, int value, const TensorMeta& m) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = m.shape;
  impl->strides = contiguous_strides(m.shape);
  impl->dtype = m.dtype;
  impl->sym_graph = g;
  impl->sym_value = value;
  return Tensor(std::move(impl));
}

Tensor Trace::input(const Shape& shape, DType dtype) {
  Value v;
  v.meta = {shape, dtype};
  v.kind = ValueKind::Input;
  v.input_index = int(graph_->inputs.size());
  graph_->values.push_back(v);
  int id = int(graph_->values.size()) - 1;
  graph_->inputs.push_back(id);
  return symbolic(graph_.get(), id, v.meta);
}

int Trace::value_of(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  if (impl->sym_graph == graph_.get()) return impl->sym_value;
  if (lift_ && (impl->sym_graph != nullptr || impl->id < first_id_)) {
    // A sub-graph trace reads a tensor of its surroundings: an extra input, passed in by the control-flow node.
    auto it = captured_.find(impl);
    if (it != captured_.end()) return it->second;
    Value v;
    v.meta = {t.shape(), t.dtype()};
    v.kind = ValueKind::Input;
    v.input_index = int(graph_->inputs.size());
    graph_->values.push_back(v);
    int id = int(graph_->values.size()) - 1;
    graph_->inputs.push_back(id);
    captured_[impl] = id;
    lifted_.push_back(t);
    return id;
  }
  KILN_CHECK(impl->sym_graph == nullptr, Runtime,
             "Kiln: a tensor of another compiled function's trace was used inside this one (", graph_->name,
             "); pass it as an argument instead.");
  auto it = captured_.find(impl);
  if (it != captured_.end()) return it->second;
  Value v;
  v.meta = {t.shape(), t.dtype()};
  // Tensors made while tracing (Python scalars, Tensor(...) literals) are constants; older ones (Parameters,
  // optimizer state, user tensors) are read by reference at every run.
  v.kind = impl->id >= first_id_ ? ValueKind::Constant : ValueKind::Capture;
  v.tensor = t;
  graph_->values.push_back(v);
  int id = int(graph_->values.size()) - 1;
  captured_[impl] = id;
  return id;
}

std::vector<Tensor> record(const OpDef& def, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  Trace* tr = t_trace;
  Graph& g = *tr->graph_;
  std::vector<TensorMeta> metas;
  try {
    metas = def.infer(inputs, attrs);
  } catch (const Error& e) {
    std::string loc = g_location ? g_location() : std::string();
    if (loc.empty()) throw;
    throw Error(e.kind(), std::string(e.what()) + "\n  (while compiling, at " + loc + ")");
  }
  Node n;
  n.op = def.id;
  n.attrs = attrs;
  n.inputs.reserve(inputs.size());
  for (auto& x : inputs) n.inputs.push_back(tr->value_of(x));
  if (g_location) n.loc = g_location();
  int node_id = int(g.nodes.size());
  std::vector<Tensor> outs;
  outs.reserve(metas.size());
  for (size_t k = 0; k < metas.size(); ++k) {
    Value v;
    v.meta = metas[k];
    v.kind = ValueKind::Node;
    v.node = node_id;
    v.output_index = int(k);
    g.values.push_back(v);
    int id = int(g.values.size()) - 1;
    n.outputs.push_back(id);
    outs.push_back(symbolic(&g, id, metas[k]));
  }
  g.nodes.push_back(std::move(n));
  return outs;
}

std::shared_ptr<Graph> Trace::finish(const std::vector<Tensor>& outputs) {
  for (auto& o : outputs) graph_->outputs.push_back(value_of(o));
  graph_->verify();
  return graph_;
}

}  // namespace kiln::graph
