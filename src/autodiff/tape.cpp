// The eager tape and the reverse pass. See kiln/autodiff.h.
#include <algorithm>
#include <atomic>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "kiln/autodiff.h"
#include "kiln/graph.h"
#include "graph/trace_access.h"
#include "kiln/ops.h"

namespace kiln::autodiff {

namespace {
thread_local int t_level = 0;         // active GradScopes
thread_local bool t_recording = true;  // false while an outermost reverse pass runs (nothing can use its tape)
std::atomic<uint64_t> g_seq{0};  // atomic: threads may record tapes at the same time

bool tracked(const TensorImpl* t) { return t->grad_fn != nullptr || t->watch_count > 0; }

struct RecordingOff {
  bool saved;
  RecordingOff() : saved(t_recording) { t_recording = false; }
  ~RecordingOff() { t_recording = saved; }
};
}  // namespace

int grad_level() { return t_recording ? t_level : 0; }

// ---- saved tensors (Note [saved tensors and in-place writes]) ----

Node::~Node() {
  for (auto& r : saved)
    if (r.storage) storage_release(r.storage.get());
}

namespace {
// The tape nodes recorded while tracing, with their trace: a write recorded later in an active trace looks here for
// saved tensors that share its storage. Expired entries are dropped when the list has doubled since the last sweep.
struct TracedNode {
  std::weak_ptr<Node> node;
  graph::Trace* trace;
};
thread_local std::vector<TracedNode> t_traced;
thread_local size_t t_traced_swept = 0;

void sweep_traced() {
  std::vector<TracedNode> live;
  for (auto& e : t_traced)
    if (!e.node.expired() && graph::trace_active(e.trace)) live.push_back(std::move(e));
  t_traced.swap(live);
  t_traced_swept = t_traced.size();
}

// Counts the node's inputs and outputs as saved (their storage versions) and, while tracing, lists the node.
void save_tensors(const std::shared_ptr<Node>& node) {
  Node& n = *node;
  n.saved.resize(n.inputs.size() + n.outputs.size());
  auto save = [](SavedRef& r, const Tensor& t) {
    const auto& st = t.impl()->storage;
    if (!st) return;
    r.storage = st;
    r.version = storage_save(st);
  };
  for (size_t i = 0; i < n.inputs.size(); ++i) save(n.saved[i], n.inputs[i]);
  for (size_t k = 0; k < n.outputs.size(); ++k) save(n.saved[n.inputs.size() + k], n.outputs[k]);
  if (graph::tracing()) {
    if (t_traced.size() >= 2 * t_traced_swept + 64) sweep_traced();
    t_traced.push_back({node, graph::current_trace()});
  }
}

// A tensor with `history`'s identity (id, grad_fn, output index, watch count, weak flag) over `data`'s values
// (storage and layout, or symbolic value): what a bprop gets for a saved tensor whose storage was written since.
Tensor stand_in(const Tensor& history, const Tensor& data) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl* d = data.impl();
  const TensorImpl* h = history.impl();
  impl->storage = d->storage;
  impl->shape = d->shape;
  impl->strides = d->strides;
  impl->offset = d->offset;
  impl->dtype = d->dtype;
  impl->sym_graph = d->sym_graph;
  impl->sym_value = d->sym_value;
  impl->weak = h->weak;
  impl->id = h->id;
  impl->grad_fn = h->grad_fn;
  impl->output_nr = h->output_nr;
  impl->watch_count = h->watch_count;
  return Tensor(std::move(impl));
}

// The data a saved tensor `t` had when its node recorded it (`t` itself when its storage was not written since).
// Undefined when it is unchanged; else a tensor of t's layout over the old bytes (or the traced copy).
Tensor saved_data(const Tensor& t, const SavedRef& r, OpId op) {
  if (r.copy.defined()) return r.copy;
  if (!r.storage) return Tensor();
  std::shared_ptr<Storage> old = storage_at_version(r.storage, r.version);
  KILN_CHECK(old != nullptr, Runtime, "Kiln: a tensor that the gradient of '", op_name(op),
             "' needs was modified in place after the op read it, and its old value was not kept. Write into a copy "
             "instead (y = x.copy()).");
  if (old == r.storage) return Tensor();
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(old);
  impl->shape = t.shape();
  impl->strides = t.strides();
  impl->offset = t.offset();
  impl->dtype = t.dtype();
  return Tensor(std::move(impl));
}
}  // namespace

// Called by ~Trace (src/graph/trace.cpp): the nodes listed for that trace are forgotten (a later trace may reuse its
// address, and its symbolic tensors must not be looked at once its graph may be gone).
void end_trace(const void* trace) {
  if (t_traced.empty()) return;
  std::vector<TracedNode> keep;
  for (auto& e : t_traced)
    if (e.trace != trace && !e.node.expired()) keep.push_back(std::move(e));
  t_traced.swap(keep);
  t_traced_swept = t_traced.size();
}

void before_traced_write(const OpDef& def, const std::vector<Tensor>& inputs) {
  if (t_traced.empty()) return;
  std::vector<graph::AliasRoot> roots;
  for (size_t i = 0; i < inputs.size() && i < 32; ++i)
    if (written_inputs(def.id) & (uint32_t(1) << i)) roots.push_back(graph::alias_root(inputs[i]));
  if (roots.empty()) return;
  sweep_traced();
  std::map<std::pair<const TensorImpl*, graph::Trace*>, Tensor> copies;  // one copy per saved tensor, trace, write
  const OpDef& copy_def = get_op(OpId::TensorCopy);
  for (auto& e : t_traced) {
    std::shared_ptr<Node> n = e.node.lock();
    if (!n) continue;
    const size_t ni = n->inputs.size();
    for (size_t j = 0; j < n->saved.size(); ++j) {
      SavedRef& r = n->saved[j];
      if (r.copy.defined()) continue;  // already reads a copy: no write reaches it
      const Tensor& t = j < ni ? n->inputs[j] : n->outputs[j - ni];
      if (!t.defined() || t.numel() == 0) continue;
      graph::AliasRoot root = graph::alias_root(t);
      if (std::find(roots.begin(), roots.end(), root) == roots.end()) continue;
      auto key = std::make_pair(static_cast<const TensorImpl*>(t.impl()), e.trace);
      auto it = copies.find(key);
      if (it == copies.end()) {
        graph::TraceSwitch into(e.trace);  // the copy runs in the node's graph, before the write
        Tensor c = graph::record(copy_def, {t}, {})[0];
        it = copies.emplace(key, c).first;
      }
      r.copy = it->second;
    }
  }
}

void record(const OpDef& def, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Attrs& attrs) {
  if (!def.differentiable) return;
  bool any = false;
  for (auto& x : inputs) if (tracked(x.impl())) { any = true; break; }
  if (!any) return;
  auto node = std::make_shared<Node>();
  node->op = def.id;
  node->attrs = attrs;
  node->inputs = inputs;
  node->outputs.reserve(outputs.size());
  for (auto& o : outputs) {
    // An output that is an input (in-place ops, identity views) keeps its own history.
    node->outputs.push_back(o.alias());
    node->output_ids.push_back(o.id());
    node->output_refs.push_back(o.impl_ptr());
  }
  node->seq = ++g_seq;
  save_tensors(node);
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].impl()->grad_fn = node;
    outputs[i].impl()->output_nr = int32_t(i);
  }
}

std::vector<Tensor> record_custom(const std::vector<Tensor>& inputs, const std::vector<Tensor>& values,
                                  CustomBpropFn fn) {
  std::vector<Tensor> outputs;
  outputs.reserve(values.size());
  for (auto& v : values) outputs.push_back(v.alias());
  if (grad_level() == 0) return outputs;
  bool any = false;
  for (auto& x : inputs) if (tracked(x.impl())) { any = true; break; }
  if (!any) return outputs;
  auto node = std::make_shared<Node>();
  node->op = OpId::Identity;  // unused: `custom` replaces the op's bprop
  node->inputs = inputs;
  node->custom = std::make_shared<const CustomBpropFn>(std::move(fn));
  for (auto& o : outputs) {
    node->outputs.push_back(o.alias());
    node->output_ids.push_back(o.id());
    node->output_refs.push_back(o.impl_ptr());
  }
  node->seq = ++g_seq;
  save_tensors(node);
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].impl()->grad_fn = node;
    outputs[i].impl()->output_nr = int32_t(i);
  }
  return outputs;
}

GradScope::GradScope() { t_level++; }

GradScope::~GradScope() {
  for (auto& impl : watched_) impl->watch_count--;
  t_level--;
}

Tensor GradScope::watch(const Tensor& x) {
  x.impl()->watch_count++;
  watched_.push_back(x.impl_ptr());
  return x;
}

Tensor GradScope::watch_input(const Tensor& x) {
  // Connected to x's history when an outer transform tracks x, so that outer transforms see through it.
  Tensor leaf = tracked(x.impl()) ? ops::identity(x) : x.alias();
  return watch(leaf);
}

Tensor detach(const Tensor& x) { return x.alias(); }

namespace {
thread_local const std::vector<bool>* t_needed = nullptr;  // the running bprop's input mask (input_needs_grad)
struct NeededScope {
  const std::vector<bool>* saved;
  explicit NeededScope(const std::vector<bool>* m) : saved(t_needed) { t_needed = m; }
  ~NeededScope() { t_needed = saved; }
};
}  // namespace

IsolatedTape::IsolatedTape() : level_(t_level), recording_(t_recording), needed_(t_needed) {
  t_level = 0;
  t_recording = true;
  t_needed = nullptr;
}
IsolatedTape::~IsolatedTape() {
  t_level = level_;
  t_recording = recording_;
  t_needed = needed_;
}

bool input_needs_grad(size_t i) { return t_needed == nullptr || i >= t_needed->size() || (*t_needed)[i]; }

std::vector<Tensor> gradient(const std::vector<Tensor>& outputs, const std::vector<Tensor>& sens,
                             const std::vector<Tensor>& leaves) {
  KILN_CHECK(t_level > 0, Runtime, "Kiln: gradient() must be called inside a GradScope.");
  KILN_CHECK(sens.empty() || sens.size() == outputs.size(), Value, "Kiln gradient: ", sens.size(),
             " sens for ", outputs.size(), " outputs.");
  // The outermost reverse pass need not be recorded: no transform can differentiate it.
  std::unique_ptr<RecordingOff> off;
  if (t_level == 1) off = std::make_unique<RecordingOff>();

  std::unordered_set<uint64_t> leaf_ids;
  for (auto& l : leaves) leaf_ids.insert(l.id());

  // Find the nodes on a path from the outputs to a leaf (memoized DFS, iterative to survive deep tapes).
  std::unordered_map<Node*, bool> reaches;
  std::vector<Node*> relevant;
  {
    std::vector<std::pair<Node*, size_t>> stack;
    auto push = [&](Node* n) { if (n && !reaches.count(n)) { reaches[n] = false; stack.push_back({n, 0}); } };
    for (auto& o : outputs) if (!leaf_ids.count(o.id())) push(o.impl()->grad_fn.get());
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        const Tensor& in = n->inputs[i++];
        if (!leaf_ids.count(in.id())) push(in.impl()->grad_fn.get());
        continue;
      }
      bool r = false;
      for (auto& in : n->inputs) {
        if (leaf_ids.count(in.id())) { r = true; break; }
        Node* p = in.impl()->grad_fn.get();
        if (p && reaches[p]) { r = true; break; }
      }
      reaches[n] = r;
      if (r) relevant.push_back(n);
      stack.pop_back();
    }
  }
  std::sort(relevant.begin(), relevant.end(), [](Node* a, Node* b) { return a->seq > b->seq; });

  std::unordered_map<uint64_t, Tensor> grads;
  auto accumulate = [&](const Tensor& target, Tensor g) {
    if (g.shape() != target.shape()) g = ops::sum_to(g, target.shape());
    if (g.dtype() != target.dtype()) g = ops::cast(g, target.dtype());
    auto it = grads.find(target.id());
    if (it == grads.end()) grads.emplace(target.id(), std::move(g));
    else it->second = ops::add(it->second, g);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor s = sens.empty() || !sens[i].defined() ? ops::ones_like(outputs[i]) : sens[i];
    KILN_CHECK(s.shape() == outputs[i].shape(), Value, "Kiln gradient: sens shape ", shape_str(s.shape()),
               " does not match output shape ", shape_str(outputs[i].shape()), ".");
    accumulate(outputs[i], s);
  }
  for (Node* n : relevant) {
    std::vector<Tensor> gouts(n->output_ids.size());
    bool any = false;
    for (size_t k = 0; k < gouts.size(); ++k) {
      auto it = grads.find(n->output_ids[k]);
      if (it != grads.end()) { gouts[k] = it->second; any = true; }
    }
    if (!any) continue;
    const OpDef& def = get_op(n->op);
    KILN_CHECK(n->custom || def.bprop != nullptr, Runtime, "Kiln: op '", op_name(n->op), "' has no bprop.");
    std::vector<Tensor> outs = n->outputs;
    if (grad_level() > 0) {  // this reverse pass is recorded: give bprops the outputs with their history
      for (size_t k = 0; k < outs.size(); ++k)
        if (auto real = n->output_refs[k].lock()) outs[k] = Tensor(std::move(real));
    }
    // Saved tensors written in place since the node read them: stand-ins over their old values.
    const std::vector<Tensor>* ins = &n->inputs;
    std::vector<Tensor> old_ins;
    for (size_t j = 0; j < n->saved.size(); ++j) {
      const size_t ni = n->inputs.size();
      const Tensor& t = j < ni ? n->inputs[j] : n->outputs[j - ni];
      Tensor old = saved_data(t, n->saved[j], n->op);
      if (!old.defined()) continue;
      if (j < ni) {
        if (old_ins.empty()) old_ins = n->inputs;
        old_ins[j] = stand_in(t, old);
        ins = &old_ins;
      } else {
        outs[j - ni] = stand_in(outs[j - ni], old);
      }
    }
    std::vector<bool> needed(n->inputs.size());
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const Tensor& in = n->inputs[i];
      Node* p = in.impl()->grad_fn.get();
      needed[i] = leaf_ids.count(in.id()) || (p && reaches[p]);
    }
    std::vector<Tensor> gin;
    {
      NeededScope scope(&needed);
      gin = n->custom ? (*n->custom)(*ins, outs, gouts) : def.bprop(*ins, outs, gouts, n->attrs);
    }
    for (size_t i = 0; i < n->inputs.size() && i < gin.size(); ++i) {
      if (gin[i].defined() && needed[i]) accumulate(n->inputs[i], gin[i]);
    }
  }
  std::vector<Tensor> result;
  result.reserve(leaves.size());
  for (auto& l : leaves) {
    auto it = grads.find(l.id());
    result.push_back(it != grads.end() ? it->second : ops::zeros_like(l));
  }
  return result;
}

}  // namespace kiln::autodiff
