// Algebraic simplification: rewrites that remove a node or make it cheaper without changing any value.
//
//   x*1, 1*x, x+0, 0+x, x-0, x/1, x**1 → x      (the other operand a Constant whose elements are all exactly 1 / 0)
//   x*(-1), (-1)*x → Neg(x)                       neg(neg(x)) → x
//   Reshape to x's shape, Cast to x's dtype, Transpose by the identity, BroadcastTo x's shape → x
//   Reshape(Reshape(x)) → Reshape(x)
//
// A rewrite to x applies only when the node's output has exactly x's shape and dtype (never a change of
// broadcasting or dtype), and x is not a weak (Python-scalar) constant: later ops would promote it differently.
// `x + 0` turns -0.0 into +0.0; the rewrite keeps -0.0 (equal under ==, the only difference).
//
// Note [reads across writes]: replacing a node's output by x moves the read of x to that output's uses. A copy
// (Cast, Mul, ...) taken before an Assign to x's storage must keep the old value, so such rewrites are skipped when
// a side-effecting node may write x's storage (any input of a side-effecting node, through views), or the copy's
// own storage (the write would land in x). View ops (Reshape, Transpose, BroadcastTo) already share x's storage,
// so removing them changes nothing. For the same reason a copy that the graph returns (itself or through a view)
// is not replaced by an argument, a capture or a constant: the caller would get that tensor itself, and a later
// in-place update (an optimizer step on a Parameter) would change a value already returned.
//
// Returns the number of nodes removed or rewritten. Side-effecting nodes are never touched.
#include <cmath>

#include "kiln/graph.h"
#include "rewrite.h"

namespace kiln::graph {

namespace {

// True if `v` is a Constant whose every element equals `c` exactly.
bool const_all(const Graph& g, int v, double c) {
  const Value& val = g.values[size_t(v)];
  if (val.kind != ValueKind::Constant || !val.tensor.defined() || val.tensor.is_symbolic()) return false;
  if (val.tensor.numel() == 0) return false;
  Tensor d = Tensor::empty(val.tensor.shape(), DType::Float64);
  copy_into(val.tensor, d);
  const double* p = d.data<double>();
  for (int64_t i = 0; i < d.numel(); ++i)
    if (!(p[i] == c)) return false;
  return true;
}

bool same_meta(const TensorMeta& a, const TensorMeta& b) { return a.shape == b.shape && a.dtype == b.dtype; }

bool is_identity_perm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i)) return false;
  return true;
}

}  // namespace

int algebraic_simplification(Graph& g) {
  const size_t nv = g.values.size();
  // Storage roots (through view ops) and which of them a side-effecting node may write.
  std::vector<int> root(nv);
  for (size_t v = 0; v < nv; ++v) root[v] = int(v);
  std::vector<bool> written(nv, false);
  for (const Node& n : g.nodes) {
    const OpDef& def = get_op(n.op);
    if (def.direct && !n.inputs.empty())
      for (int o : n.outputs) root[size_t(o)] = root[size_t(n.inputs[0])];
    if (has_side_effect(n.op))
      for (int v : n.inputs) written[size_t(root[size_t(v)])] = true;
  }
  std::vector<bool> returned(nv, false);  // storage that the graph returns (itself or through a view)
  for (int v : g.outputs) returned[size_t(root[size_t(v)])] = true;
  // Whether a copy `out` of x may be replaced by x (see Note [reads across writes]).
  auto copy_replaceable = [&](int out, int x) {
    const int rx = root[size_t(x)];
    if (written[size_t(rx)] || written[size_t(out)]) return false;
    return !returned[size_t(out)] || g.values[size_t(rx)].kind == ValueKind::Node;
  };
  auto weak_const = [&](int x) {
    const Value& v = g.values[size_t(x)];
    return v.kind == ValueKind::Constant && v.tensor.defined() && v.tensor.weak();
  };

  std::vector<int> replace(nv);
  for (size_t v = 0; v < nv; ++v) replace[v] = int(v);
  std::vector<bool> keep(g.nodes.size(), true);
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    for (int& v : n.inputs) v = replace[size_t(v)];
    if (has_side_effect(n.op) || n.outputs.size() != 1) continue;
    const int out = n.outputs[0];
    const TensorMeta& om = g.values[size_t(out)].meta;
    auto meta = [&](int v) -> const TensorMeta& { return g.values[size_t(v)].meta; };
    int to = -1;       // the value the output equals
    bool copy = true;  // the node makes a copy (false: a view of its input)
    switch (n.op) {
      case OpId::Mul: {
        for (int k = 0; k < 2 && to < 0; ++k) {
          int x = n.inputs[size_t(k)], c = n.inputs[size_t(1 - k)];
          if (!same_meta(meta(x), om)) continue;
          if (const_all(g, c, 1.0)) to = x;
          else if (const_all(g, c, -1.0)) {  // x*(-1) → Neg(x), in place
            n.op = OpId::Neg;
            n.inputs = {x};
            n.attrs = {};
            changed++;
            break;
          }
        }
        break;
      }
      case OpId::Add:
        for (int k = 0; k < 2 && to < 0; ++k) {
          int x = n.inputs[size_t(k)], c = n.inputs[size_t(1 - k)];
          if (same_meta(meta(x), om) && const_all(g, c, 0.0)) to = x;
        }
        break;
      case OpId::Sub:
        if (same_meta(meta(n.inputs[0]), om) && const_all(g, n.inputs[1], 0.0)) to = n.inputs[0];
        break;
      case OpId::Div:
      case OpId::Pow:
        if (same_meta(meta(n.inputs[0]), om) && const_all(g, n.inputs[1], 1.0)) to = n.inputs[0];
        break;
      case OpId::Cast:
        if (same_meta(meta(n.inputs[0]), om)) to = n.inputs[0];
        break;
      case OpId::Reshape: {
        const Value& in = g.values[size_t(n.inputs[0])];
        if (in.kind == ValueKind::Node && g.nodes[size_t(in.node)].op == OpId::Reshape) {
          n.inputs[0] = g.nodes[size_t(in.node)].inputs[0];  // reshape(reshape(x)) → reshape(x)
          n.attrs = {{"shape", om.shape}};
          changed++;
        }
        copy = false;
        if (same_meta(meta(n.inputs[0]), om)) to = n.inputs[0];
        break;
      }
      case OpId::Transpose:
        copy = false;
        if (is_identity_perm(n.attrs.ints("perm"))) to = n.inputs[0];
        break;
      case OpId::BroadcastTo:
        copy = false;
        if (same_meta(meta(n.inputs[0]), om)) to = n.inputs[0];
        break;
      default:
        break;
    }
    if (n.op == OpId::Neg) {  // also catches a Mul just rewritten to Neg
      const Value& in = g.values[size_t(n.inputs[0])];
      if (in.kind == ValueKind::Node && g.nodes[size_t(in.node)].op == OpId::Neg &&
          same_meta(meta(g.nodes[size_t(in.node)].inputs[0]), om))
        to = g.nodes[size_t(in.node)].inputs[0];
    }
    if (to < 0 || weak_const(to) || (copy && !copy_replaceable(out, to))) continue;
    replace[size_t(out)] = to;
    keep[i] = false;
    changed++;
  }
  for (int& v : g.outputs) v = replace[size_t(v)];
  bool removed = false;
  for (bool k : keep) removed = removed || !k;
  if (removed) rewrite::keep_nodes(g, keep);
  return changed;
}

}  // namespace kiln::graph
