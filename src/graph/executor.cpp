// The executor: a graph lowered to a flat instruction list, run with no Python in the loop.
#include <algorithm>

#include "kiln/allocator.h"
#include "kiln/graph.h"

namespace kiln::graph {

namespace {
size_t bytes_of(const TensorMeta& m) { return size_t(numel(m.shape)) * itemsize(m.dtype); }
}  // namespace

Executable::Executable(std::shared_ptr<const Graph> g) : graph_(std::move(g)) {
  const Graph& G = *graph_;
  const size_t nv = G.values.size();
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

  instrs_.reserve(G.nodes.size());
  std::vector<std::vector<int>> release_at(G.nodes.size());
  for (size_t v = 0; v < nv; ++v) {
    if (G.values[v].kind != ValueKind::Node) continue;
    int lu = last_use[v];
    int at = lu < 0 ? G.values[v].node : lu;  // unused outputs die right after their node
    if (at < end) release_at[size_t(at)].push_back(int(v));
  }
  // Planned peak: simulate allocations (non-view outputs) and releases of owned buffers.
  std::vector<std::vector<int>> buffer_release_at(G.nodes.size());
  for (size_t v = 0; v < nv; ++v) {
    if (owner[v] != int(v) || G.values[v].kind != ValueKind::Node) continue;
    int at = buffer_end[v] < 0 ? G.values[v].node : buffer_end[v];
    if (at < end && !get_op(G.nodes[size_t(G.values[v].node)].op).direct) buffer_release_at[size_t(at)].push_back(int(v));
  }
  size_t live = 0, peak = 0;
  for (size_t ni = 0; ni < G.nodes.size(); ++ni) {
    const Node& n = G.nodes[ni];
    const OpDef& def = get_op(n.op);
    Instr ins;
    ins.def = &def;
    ins.attrs = n.attrs;
    ins.in = n.inputs;
    ins.out = n.outputs;
    for (int o : n.outputs) ins.out_meta.push_back(G.values[size_t(o)].meta);
    ins.release = release_at[ni];
    if (!def.direct)
      for (int o : n.outputs) live += bytes_of(G.values[size_t(o)].meta);
    peak = std::max(peak, live);
    for (int v : buffer_release_at[ni]) live -= bytes_of(G.values[size_t(v)].meta);
    instrs_.push_back(std::move(ins));
  }
  planned_peak_bytes_ = peak;
}

std::vector<Tensor> Executable::run(const std::vector<Tensor>& args) {
  const Graph& G = *graph_;
  KILN_CHECK(args.size() == G.inputs.size(), Value, "Compiled graph '", G.name, "' takes ", G.inputs.size(),
             " tensor arguments, but got ", args.size(), ".");
  std::vector<Tensor> slots(G.values.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorMeta& m = G.values[size_t(G.inputs[i])].meta;
    KILN_CHECK(args[i].shape() == m.shape && args[i].dtype() == m.dtype, Value, "Compiled graph '", G.name,
               "': argument ", i, " must be ", dtype_name(m.dtype), shape_str(m.shape), ", but got ",
               dtype_name(args[i].dtype()), shape_str(args[i].shape()), ".");
    slots[size_t(G.inputs[i])] = args[i];
  }
  for (size_t v = 0; v < G.values.size(); ++v)
    if (G.values[v].kind == ValueKind::Capture || G.values[v].kind == ValueKind::Constant) slots[v] = G.values[v].tensor;
  std::vector<Tensor> in, out;
  for (const Instr& ins : instrs_) {
    in.clear();
    for (int v : ins.in) in.push_back(slots[size_t(v)]);
    if (ins.def->direct) {
      out = ins.def->direct(in, ins.attrs);
    } else {
      out.clear();
      for (auto& m : ins.out_meta) out.push_back(Tensor::empty(m.shape, m.dtype));
      ins.def->cpu(in, out, ins.attrs);  // random ops take their offset from their stream as they run
    }
    for (size_t k = 0; k < ins.out.size(); ++k) slots[size_t(ins.out[k])] = std::move(out[k]);
    for (int v : ins.release) slots[size_t(v)] = Tensor();
  }
  std::vector<Tensor> result;
  result.reserve(G.outputs.size());
  for (int v : G.outputs) result.push_back(slots[size_t(v)]);
  return result;
}

}  // namespace kiln::graph
