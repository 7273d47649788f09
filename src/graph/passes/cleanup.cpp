// Dead-code elimination and common-subexpression elimination.
#include <map>
#include <sstream>
#include <tuple>

#include "kiln/graph.h"
#include "rewrite.h"

namespace kiln::graph {

int dead_code_elimination(Graph& g) {
  std::vector<bool> needed(g.values.size(), false);
  for (int v : g.outputs) needed[size_t(v)] = true;
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool k = has_side_effect(n.op);
    for (int o : n.outputs) k = k || needed[size_t(o)];
    if (!k) continue;
    keep[i] = true;
    for (int v : n.inputs) needed[size_t(v)] = true;
  }
  int removed = 0;
  for (bool k : keep) removed += !k;
  if (removed) rewrite::keep_nodes(g, keep);
  return removed;
}

int common_subexpression_elimination(Graph& g) {
  // Two pure nodes with the same op, attributes and inputs compute the same values: the later one is replaced.
  // Only between side-effecting nodes (an Assign between two reads of a Parameter separates them).
  std::map<std::tuple<int, std::string, std::vector<int>>, int> seen;
  std::vector<int> replace(g.values.size());
  for (size_t v = 0; v < replace.size(); ++v) replace[v] = int(v);
  std::vector<bool> keep(g.nodes.size(), true);
  int merged = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    for (int& v : n.inputs) v = replace[size_t(v)];
    if (has_side_effect(n.op)) {  // a write may change what an identical later read sees: start afresh
      seen.clear();
      continue;
    }
    auto key = std::make_tuple(int(n.op), n.attrs.str(), n.inputs);
    auto it = seen.find(key);
    if (it == seen.end()) { seen.emplace(key, int(i)); continue; }
    const Node& first = g.nodes[size_t(it->second)];
    for (size_t k = 0; k < n.outputs.size(); ++k) replace[size_t(n.outputs[k])] = first.outputs[k];
    keep[i] = false;
    merged++;
  }
  for (int& v : g.outputs) v = replace[size_t(v)];
  if (merged) rewrite::keep_nodes(g, keep);
  return merged;
}

}  // namespace kiln::graph
