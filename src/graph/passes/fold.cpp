// Constant folding: a pure node whose inputs are all constants is evaluated at compile time.
#include "kiln/graph.h"
#include "rewrite.h"

namespace kiln::graph {

int constant_folding(Graph& g) {
  std::vector<bool> keep(g.nodes.size(), true);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (has_side_effect(n.op)) continue;
    bool all_const = true;
    std::vector<Tensor> in;
    for (int v : n.inputs) {
      const Value& val = g.values[size_t(v)];
      if (val.kind != ValueKind::Constant) { all_const = false; break; }
      in.push_back(val.tensor);
    }
    if (!all_const) continue;
    std::vector<Tensor> out = apply(n.op, in, n.attrs);  // eager: not tracing while passes run
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      Value& v = g.values[size_t(n.outputs[k])];
      v.kind = ValueKind::Constant;
      v.tensor = out[k].is_contiguous() ? out[k] : out[k].contiguous();
      v.node = -1;
    }
    keep[i] = false;
    folded++;
  }
  if (folded) rewrite::keep_nodes(g, keep);
  return folded;
}

}  // namespace kiln::graph
