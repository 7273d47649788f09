// Helpers shared by the graph passes.
#pragma once
#include <vector>

#include "kiln/graph.h"

namespace kiln::graph::rewrite {

// Keeps the nodes with keep[i] (in order); their outputs' `node` indices are renumbered. Values of removed nodes
// stay in the value table, unreferenced.
inline void keep_nodes(Graph& g, const std::vector<bool>& keep) {
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!keep[i]) continue;
    int ni = int(nodes.size());
    for (int o : g.nodes[i].outputs) g.values[size_t(o)].node = ni;
    nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
}

// Replaces every use of value `from` (node inputs and graph outputs) with `to`.
inline void replace_uses(Graph& g, int from, int to) {
  for (auto& n : g.nodes)
    for (int& v : n.inputs)
      if (v == from) v = to;
  for (int& v : g.outputs)
    if (v == from) v = to;
}

// Number of uses of each value (node inputs and graph outputs).
inline std::vector<int> use_counts(const Graph& g) {
  std::vector<int> c(g.values.size(), 0);
  for (auto& n : g.nodes)
    for (int v : n.inputs) c[size_t(v)]++;
  for (int v : g.outputs) c[size_t(v)]++;
  return c;
}

}  // namespace kiln::graph::rewrite
