// The executor: a graph lowered to a flat instruction list, run with no Python in the loop.
#include <algorithm>
#include <limits>

#include "kiln/allocator.h"
#include "kiln/graph.h"
#include "kiln/profiler.h"

namespace kiln::graph {

namespace {
size_t bytes_of(const TensorMeta& m) { return size_t(numel(m.shape)) * itemsize(m.dtype); }
}  // namespace

Executable::Executable(std::shared_ptr<const Graph> g) : graph_(std::move(g)) {
  const Graph& G = *graph_;
  const size_t nv = G.values.size();
  // A graph read from a file has no capture tensors until they are bound (graph_io.h, bind_captures).
  for (size_t v = 0; v < nv; ++v)
    if (G.values[v].kind == ValueKind::Capture || G.values[v].kind == ValueKind::Constant)
      KILN_CHECK(G.values[v].tensor.defined() && !G.values[v].tensor.is_symbolic(), Runtime, "Executable: graph ",
                 G.name, " value %", v, " (a capture or constant) has no tensor bound.");
  // Liveness: the last instruction that reads each value (outputs live to the end). A view's output shares its
  // input's storage: the input's buffer lives as long as its longest-living view (`owner` chains).
  std::vector<int> last_use(nv, -1);
  std::vector<int> owner(nv);
  for (size_t v = 0; v < nv; ++v) owner[v] = int(v);
  const int end = int(G.nodes.size());
  for (size_t ni = 0; ni < G.nodes.size(); ++ni) {
    const Node& n = G.nodes[ni];
    const OpDef& def = get_op(n.op);
    for (int v : n.inputs) last_use[size_t(v)] = int(ni);
    if (def.direct && !n.inputs.empty())
      for (int o : n.outputs) owner[size_t(o)] = owner[size_t(n.inputs[0])];
  }
  for (int v : G.outputs) last_use[size_t(v)] = end;
  std::vector<int> buffer_end(nv, -1);  // per owner: when its storage can be released
  for (size_t v = 0; v < nv; ++v)
    buffer_end[size_t(owner[v])] = std::max(buffer_end[size_t(owner[v])], last_use[v]);

  // Values whose storage may escape the run: graph outputs and everything sharing storage with them.
  std::vector<bool> escapes(nv, false);
  for (int v : G.outputs) escapes[size_t(owner[size_t(v)])] = true;

  // Static memory plan: every intermediate that a kernel writes (not views, not in-place results, not escaping
  // values) gets one of a set of persistent buffers; two values share a buffer when their lifetimes (from their
  // node to the last reader of their storage) do not overlap. Assignment is greedy by size (largest value first,
  // into the smallest buffer whose values' lifetimes are all disjoint from it, else a new buffer of its size; the
  // "greedy by size" offline plan of Pisarchyk & Lee 2020, "Efficient memory management for deep neural net
  // inference"). Program-order best fit, used before, let a small value take a large freed buffer that a larger
  // value needed next (a residual stream's 256 KiB outputs taking the 1 MiB hidden buffers), so a graph whose
  // activations die early (recompute) kept a large buffer per small value. The buffers live as long as the
  // Executable, so a run allocates nothing but its outputs.
  std::vector<int> buffer_of(nv, -1);
  struct Planned { size_t bytes; int start, end, value; };
  std::vector<Planned> planned;
  for (size_t ni = 0; ni < G.nodes.size(); ++ni) {
    const Node& n = G.nodes[ni];
    if (get_op(n.op).direct) continue;
    for (int o : n.outputs) {
      if (escapes[size_t(o)]) continue;
      size_t bytes = std::max<size_t>(bytes_of(G.values[size_t(o)].meta), 1);
      int until = buffer_end[size_t(o)] < int(ni) ? int(ni) : buffer_end[size_t(o)];
      planned.push_back({bytes, int(ni), until, o});
    }
  }
  std::stable_sort(planned.begin(), planned.end(), [](const Planned& a, const Planned& b) { return a.bytes > b.bytes; });
  // Per buffer: the lifetimes of its values, sorted by start (disjoint), for a binary-searched overlap test.
  std::vector<std::vector<std::pair<int, int>>> lifetimes;
  auto fits = [&](size_t b, int start, int end) {
    const auto& iv = lifetimes[b];
    auto it = std::lower_bound(iv.begin(), iv.end(), std::make_pair(start, std::numeric_limits<int>::min()));
    if (it != iv.end() && it->first <= end) return false;                 // a later value starts inside
    if (it != iv.begin() && std::prev(it)->second >= start) return false;  // an earlier value ends inside
    return true;
  };
  for (const Planned& p : planned) {
    int best = -1;
    for (size_t b = 0; b < buffer_bytes_.size(); ++b)
      if (fits(b, p.start, p.end) && (best < 0 || buffer_bytes_[b] < buffer_bytes_[size_t(best)])) best = int(b);
    if (best < 0) {
      best = int(buffer_bytes_.size());
      buffer_bytes_.push_back(p.bytes);
      lifetimes.emplace_back();
    }
    auto& iv = lifetimes[size_t(best)];
    iv.insert(std::lower_bound(iv.begin(), iv.end(), std::make_pair(p.start, p.end)), {p.start, p.end});
    buffer_of[size_t(p.value)] = best;
  }
  planned_peak_bytes_ = 0;
  for (size_t b : buffer_bytes_) planned_peak_bytes_ += b;

  // Release of slots after their last use (the planned buffers stay; fresh outputs return to the allocator).
  std::vector<std::vector<int>> release_at(G.nodes.size());
  for (size_t v = 0; v < nv; ++v) {
    if (G.values[v].kind != ValueKind::Node) continue;
    int lu = last_use[v];
    int at = lu < 0 ? G.values[v].node : lu;  // unused outputs die right after their node
    if (at < end) release_at[size_t(at)].push_back(int(v));
  }
  instrs_.reserve(G.nodes.size());
  for (size_t ni = 0; ni < G.nodes.size(); ++ni) {
    const Node& n = G.nodes[ni];
    Instr ins;
    ins.def = &get_op(n.op);
    ins.name = op_name(n.op);
    ins.attrs = n.attrs;
    ins.in = n.inputs;
    ins.out = n.outputs;
    for (int o : n.outputs) {
      ins.out_meta.push_back(G.values[size_t(o)].meta);
      ins.out_buffer.push_back(buffer_of[size_t(o)]);
    }
    ins.release = release_at[ni];
    instrs_.push_back(std::move(ins));
  }
}

void Executable::materialize_buffers() {
  // Persistent output tensors over the planned buffers (made once, on the first run).
  buffers_.clear();
  for (size_t b : buffer_bytes_) buffers_.push_back(std::make_shared<Storage>(b));
  for (Instr& ins : instrs_) {
    ins.planned.clear();
    ins.all_planned = !ins.def->direct;
    for (size_t k = 0; k < ins.out.size(); ++k) {
      if (ins.out_buffer[k] < 0) {
        ins.planned.emplace_back();
        ins.all_planned = false;
        continue;
      }
      auto impl = std::make_shared<TensorImpl>();
      impl->storage = buffers_[size_t(ins.out_buffer[k])];
      impl->shape = ins.out_meta[k].shape;
      impl->strides = contiguous_strides(impl->shape);
      impl->dtype = ins.out_meta[k].dtype;
      ins.planned.emplace_back(std::move(impl));
    }
  }
  // Stable values keep the same tensor from run to run: captures and constants (the Graph is immutable while an
  // Executable holds it; a capture is read by reference, so in-place updates of a Parameter are seen) and the
  // planned intermediates. They are bound into the kernels' argument vectors once; only the other (dynamic) values
  // — arguments, views and in-place results of direct ops, values allocated per run — pass through the slot table,
  // which is emptied at the end of each run. So a run does little reference counting.
  const Graph& G = *graph_;
  const size_t nv = G.values.size();
  std::vector<Tensor> stable(nv);
  for (size_t v = 0; v < nv; ++v)
    if (G.values[v].kind == ValueKind::Capture || G.values[v].kind == ValueKind::Constant) stable[v] = G.values[v].tensor;
  // `owned`: the values living in the Executable's own buffers. A view op (direct, no side effect) of owned values
  // whose outputs share its first input's storage gives the same view at every run: it is made here, once, and
  // skipped by run() (Reshape of a gradient, Depend). Views of captures are not: a capture's storage may be
  // replaced between runs (a Parameter's set_data).
  std::vector<bool> owned(nv, false);
  for (Instr& ins : instrs_) {
    ins.precomputed = false;
    if (ins.def->direct && !has_side_effect(ins.def->id) && !ins.in.empty()) {
      bool all_owned = true;
      for (int v : ins.in) all_owned = all_owned && owned[size_t(v)];
      if (all_owned) {
        std::vector<Tensor> a;
        for (int v : ins.in) a.push_back(stable[size_t(v)]);
        OpNameScope op_scope(ins.name);
        std::vector<Tensor> o = ins.def->direct(a, ins.attrs);
        bool views = o.size() == ins.out.size();
        for (size_t k = 0; views && k < o.size(); ++k)
          views = o[k].defined() && o[k].impl()->storage == a[0].impl()->storage;
        if (views) {
          ins.precomputed = true;
          for (size_t k = 0; k < o.size(); ++k) {
            stable[size_t(ins.out[k])] = o[k];
            owned[size_t(ins.out[k])] = true;
          }
          continue;
        }
      }
    }
    for (size_t k = 0; k < ins.out.size(); ++k) {
      stable[size_t(ins.out[k])] = ins.planned[k];
      owned[size_t(ins.out[k])] = ins.planned[k].defined();
    }
  }
  slots_.assign(nv, Tensor());
  transient_.clear();
  for (size_t v = 0; v < nv; ++v) {
    if (stable[v].defined()) slots_[v] = stable[v];
    else transient_.push_back(int(v));
  }
  for (Instr& ins : instrs_) {
    ins.args.assign(ins.in.size(), Tensor());
    ins.dynamic_in.clear();
    for (size_t j = 0; j < ins.in.size(); ++j) {
      const Tensor& t = stable[size_t(ins.in[j])];
      if (t.defined()) ins.args[j] = t;
      else ins.dynamic_in.push_back(int(j));
    }
    std::vector<int> rel;
    for (int v : ins.release)
      if (!stable[size_t(v)].defined()) rel.push_back(v);
    ins.release = std::move(rel);
  }
  materialized_ = true;
}

void Executable::clear_transient() {
  for (int v : transient_) slots_[size_t(v)] = Tensor();
  for (Instr& ins : instrs_)
    for (int j : ins.dynamic_in) ins.args[size_t(j)] = Tensor();
  out_scratch_.clear();
}

std::vector<Tensor> Executable::run(const std::vector<Tensor>& args) {
  std::lock_guard<std::mutex> lock(run_mu_);  // the planned buffers and the run state serve one run at a time
  const Graph& G = *graph_;
  KILN_CHECK(args.size() == G.inputs.size(), Value, "Compiled graph '", G.name, "' takes ", G.inputs.size(),
             " tensor arguments, but got ", args.size(), ".");
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorMeta& m = G.values[size_t(G.inputs[i])].meta;
    KILN_CHECK(args[i].defined(), Value, "Compiled graph '", G.name, "': argument ", i, " is an undefined tensor.");
    KILN_CHECK(args[i].shape() == m.shape && args[i].dtype() == m.dtype, Value, "Compiled graph '", G.name,
               "': argument ", i, " must be ", dtype_name(m.dtype), shape_str(m.shape), ", but got ",
               dtype_name(args[i].dtype()), shape_str(args[i].shape()), ".");
  }
  if (!materialized_) materialize_buffers();
  std::vector<Tensor>& slots = slots_;
  for (size_t i = 0; i < args.size(); ++i) slots[size_t(G.inputs[i])] = args[i];
  std::vector<Tensor>& out = out_scratch_;
  size_t ii = 0;
  try {
    for (; ii < instrs_.size(); ++ii) {
      Instr& ins = instrs_[ii];
      if (ins.precomputed) continue;  // a view of the Executable's own buffers, made once
      for (int j : ins.dynamic_in) ins.args[size_t(j)] = slots[size_t(ins.in[size_t(j)])];
      OpNameScope op_scope(ins.name);  // names the op in a kernel's dtype error
      profiler::OpTimer timer(ins.def->id, profiler::Mode::Graph);  // one relaxed load unless profiling
      if (ins.def->direct) {
        out = ins.def->direct(ins.args, ins.attrs);
        for (size_t k = 0; k < ins.out.size(); ++k) slots[size_t(ins.out[k])] = std::move(out[k]);
      } else if (ins.all_planned) {
        // Kernels write into their outputs and never replace them: the persistent tensors are passed as they are.
        ins.def->cpu(ins.args, ins.planned, ins.attrs);  // random ops take their offset from their stream as they run
      } else {
        out.clear();
        for (size_t k = 0; k < ins.out_meta.size(); ++k)
          out.push_back(ins.planned[k].defined() ? ins.planned[k] : Tensor::empty(ins.out_meta[k].shape, ins.out_meta[k].dtype));
        ins.def->cpu(ins.args, out, ins.attrs);
        for (size_t k = 0; k < ins.out.size(); ++k)
          if (!ins.planned[k].defined()) slots[size_t(ins.out[k])] = std::move(out[k]);
      }
      for (int j : ins.dynamic_in) ins.args[size_t(j)] = Tensor();
      for (int v : ins.release) slots[size_t(v)] = Tensor();
    }
  } catch (const Error& e) {
    clear_transient();
    // A kernel's run-time check (an index or label out of range): name the user's line that issued the op.
    // instrs_ were made one per graph node, in order.
    const std::string& loc = G.nodes[ii].loc;
    if (loc.empty()) throw;
    throw Error(e.kind(), std::string(e.what()) + "\n  (while running the compiled graph '" + G.name + "', at " +
                              loc + ")");
  } catch (...) {
    clear_transient();
    throw;
  }
  out.clear();
  std::vector<Tensor> result;
  result.reserve(G.outputs.size());
  for (int v : G.outputs) result.push_back(slots[size_t(v)]);
  for (int v : G.inputs) slots[size_t(v)] = Tensor();  // no reference to the arguments or results stays behind
  for (int v : G.outputs)
    if (G.values[size_t(v)].kind == ValueKind::Node || G.values[size_t(v)].kind == ValueKind::Input) slots[size_t(v)] = Tensor();
  return result;
}

}  // namespace kiln::graph
