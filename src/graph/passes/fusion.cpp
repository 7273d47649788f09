// Fusion passes: they replace a group of nodes by one fused node (ops defined in src/ops/fused*.cpp, attribute
// encodings in src/ops/fused.h). A group's intermediate values are used only inside the group (never a graph
// output), so only the group's last value survives; the fused node takes the place of the group's last node.
// Moving the earlier nodes' reads there is safe only if no side-effecting node lies in between (an Assign could
// change what they read), so groups never span one.
//
// Both passes return the number of original nodes absorbed into fused nodes (0: nothing fused).
#include <algorithm>
#include <unordered_map>

#include "kiln/graph.h"
#include "ops/fused.h"
#include "rewrite.h"

namespace kiln::graph {

namespace {

// consumers[v]: the nodes reading value v (once per read).
std::vector<std::vector<int>> consumers(const Graph& g) {
  std::vector<std::vector<int>> c(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs) c[size_t(v)].push_back(int(i));
  return c;
}

// last_effect[i]: the index of the last side-effecting node before node i (-1 if none).
std::vector<int> last_effects(const Graph& g) {
  std::vector<int> r(g.nodes.size());
  int last = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    r[i] = last;
    if (has_side_effect(g.nodes[i].op)) last = int(i);
  }
  return r;
}

bool same_meta(const TensorMeta& a, const TensorMeta& b) { return a.shape == b.shape && a.dtype == b.dtype; }

// The single consumer node of v, or -1 (several uses, or v is a graph output).
int sole_consumer(const std::vector<int>& uses, const std::vector<std::vector<int>>& cons, int v) {
  return uses[size_t(v)] == 1 && cons[size_t(v)].size() == 1 ? cons[size_t(v)][0] : -1;
}

}  // namespace

// BatchMatMul (2-D Float32 operands) → Add of a bias (N,) or (1, N) → optionally ReLU / Sigmoid / Tanh / GeLU,
// each intermediate used once, becomes one MatMulBiasAct.
int fuse_matmul_bias_activation(Graph& g) {
  const std::vector<int> uses = rewrite::use_counts(g);
  const auto cons = consumers(g);
  const auto last_effect = last_effects(g);
  std::vector<bool> keep(g.nodes.size(), true);
  auto meta = [&](int v) -> const TensorMeta& { return g.values[size_t(v)].meta; };
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& mm = g.nodes[i];
    if (mm.op != OpId::MatMul || !keep[i]) continue;
    const int a = mm.inputs[0], b = mm.inputs[1], z = mm.outputs[0];
    const TensorMeta& zm = meta(z);
    if (meta(a).shape.size() != 2 || meta(b).shape.size() != 2 || meta(a).dtype != DType::Float32 ||
        meta(b).dtype != DType::Float32 || zm.dtype != DType::Float32)
      continue;
    const int ai = sole_consumer(uses, cons, z);
    if (ai < 0 || g.nodes[size_t(ai)].op != OpId::Add) continue;
    const Node& add = g.nodes[size_t(ai)];
    const int bias = add.inputs[0] == z ? add.inputs[1] : add.inputs[0];
    const int64_t N = zm.shape[1];
    const TensorMeta& bm = meta(bias);
    if (bias == z || bm.dtype != DType::Float32 || !(bm.shape == Shape{N} || bm.shape == (Shape{1, N})) ||
        !same_meta(meta(add.outputs[0]), zm))
      continue;
    int last = ai;
    fused::Act act = fused::Act::None;
    const int ci = sole_consumer(uses, cons, add.outputs[0]);
    if (ci >= 0 && same_meta(meta(g.nodes[size_t(ci)].outputs[0]), zm)) {
      const Node& c = g.nodes[size_t(ci)];
      act = fused::epilogue_act(c.op, c.attrs);
      if (act != fused::Act::None) last = ci;
    }
    if (last_effect[size_t(last)] > int(i)) continue;  // a side effect between the matmul and the end
    Node f;
    f.op = OpId::MatMulBiasAct;
    f.attrs = {{"transpose_a", mm.attrs.b("transpose_a")}, {"transpose_b", mm.attrs.b("transpose_b")},
               {"activation", int64_t(act)}};
    f.inputs = {a, b, bias};
    f.outputs = g.nodes[size_t(last)].outputs;
    f.loc = mm.loc;
    keep[i] = false;
    if (last != ai) keep[size_t(ai)] = false;
    changed += last != ai ? 3 : 2;
    g.nodes[size_t(last)] = std::move(f);
  }
  if (changed) rewrite::keep_nodes(g, keep);
  return changed;
}

// Maximal trees of elementwise ops over one shape and float dtype (inputs of that shape and dtype, or 0-d),
// whose intermediates are used only inside the tree, become one FusedElementwise (groups of two or more).
int fuse_elementwise(Graph& g) {
  const std::vector<int> uses = rewrite::use_counts(g);
  const auto cons = consumers(g);
  const auto last_effect = last_effects(g);
  auto meta = [&](int v) -> const TensorMeta& { return g.values[size_t(v)].meta; };
  // opcode[i] >= 0: node i may join a group.
  std::vector<int64_t> opcode(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    fused::EwOp op;
    if (has_side_effect(n.op) || n.outputs.size() != 1 || !fused::ew_opcode(n.op, n.attrs, &op)) continue;
    if (n.inputs.size() != (fused::is_binary(op) ? 2u : 1u)) continue;
    const TensorMeta& om = meta(n.outputs[0]);
    if (om.dtype != DType::Float32 && om.dtype != DType::Float64) continue;
    bool ok = true;
    for (int v : n.inputs) ok = ok && !is_complex(meta(v).dtype) && (meta(v).shape.empty() || same_meta(meta(v), om));
    if (ok) opcode[i] = int64_t(op);
  }
  std::vector<bool> keep(g.nodes.size(), true), taken(g.nodes.size(), false);
  std::vector<int> stamp(g.nodes.size(), -1);
  int changed = 0;
  for (size_t r = g.nodes.size(); r-- > 0;) {
    if (opcode[r] < 0 || taken[r]) continue;
    const TensorMeta& om = meta(g.nodes[r].outputs[0]);
    std::vector<int> group{int(r)};
    stamp[r] = int(r);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < group.size(); ++k) {
        for (int v : g.nodes[size_t(group[k])].inputs) {
          const Value& val = g.values[size_t(v)];
          if (val.kind != ValueKind::Node) continue;
          const int p = val.node;
          if (stamp[size_t(p)] == int(r) || taken[size_t(p)] || opcode[size_t(p)] < 0 || p <= last_effect[r] ||
              !same_meta(val.meta, om) || uses[size_t(v)] != int(cons[size_t(v)].size()))
            continue;
          bool inside = true;
          for (int c : cons[size_t(v)]) inside = inside && stamp[size_t(c)] == int(r);
          if (!inside) continue;
          stamp[size_t(p)] = int(r);
          group.push_back(p);
          grew = true;
        }
      }
    }
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end());
    // Registers: the external inputs in order of first use, then one per node.
    std::unordered_map<int, int64_t> reg;
    std::vector<int> inputs;
    for (int m : group)
      for (int v : g.nodes[size_t(m)].inputs) {
        const Value& val = g.values[size_t(v)];
        bool internal = val.kind == ValueKind::Node && stamp[size_t(val.node)] == int(r);
        if (!internal && !reg.count(v)) {
          reg[v] = int64_t(inputs.size());
          inputs.push_back(v);
        }
      }
    std::vector<int64_t> program;
    int64_t next = int64_t(inputs.size());
    for (int m : group) {
      const Node& n = g.nodes[size_t(m)];
      program.push_back(opcode[size_t(m)]);
      program.push_back(reg.at(n.inputs[0]));
      program.push_back(n.inputs.size() > 1 ? reg.at(n.inputs[1]) : -1);
      reg[n.outputs[0]] = next++;
    }
    for (int m : group) {
      taken[size_t(m)] = true;
      if (m != int(r)) keep[size_t(m)] = false;
    }
    Node f;
    f.op = OpId::FusedElementwise;
    f.attrs = {{"program", program}, {"dtype", om.dtype}};
    f.inputs = std::move(inputs);
    f.outputs = g.nodes[r].outputs;
    f.loc = g.nodes[r].loc;
    g.nodes[r] = std::move(f);
    changed += int(group.size());
  }
  if (changed) rewrite::keep_nodes(g, keep);
  return changed;
}

}  // namespace kiln::graph
