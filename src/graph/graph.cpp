// The IR's verifier and printers.
#include <sstream>

#include "kiln/graph.h"

namespace kiln::graph {

namespace {
std::string meta_str(const TensorMeta& m) { return std::string(dtype_name(m.dtype)) + shape_str(m.shape); }
const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Input: return "input";
    case ValueKind::Capture: return "capture";
    case ValueKind::Constant: return "constant";
    default: return "node";
  }
}
}  // namespace

int Graph::count(OpId op) const {
  int n = 0;
  for (auto& node : nodes) n += node.op == op;
  return n;
}

void Graph::verify() const {
  std::vector<bool> defined(values.size(), false);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].kind != ValueKind::Node) defined[i] = true;
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const Node& n = nodes[ni];
    for (int v : n.inputs) {
      KILN_CHECK(v >= 0 && size_t(v) < values.size(), Runtime, "Graph ", name, ": node ", ni, " (", op_name(n.op),
                 ") reads value %", v, " which does not exist.");
      KILN_CHECK(defined[size_t(v)], Runtime, "Graph ", name, ": node ", ni, " (", op_name(n.op), ") reads %", v,
                 " before it is defined.");
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      int v = n.outputs[k];
      KILN_CHECK(v >= 0 && size_t(v) < values.size() && !defined[size_t(v)], Runtime, "Graph ", name, ": node ", ni,
                 " (", op_name(n.op), ") defines %", v, " twice or out of range (not SSA).");
      KILN_CHECK(values[size_t(v)].node == int(ni) && values[size_t(v)].output_index == int(k), Runtime, "Graph ",
                 name, ": value %", v, " does not point back to its node ", ni, ".");
      defined[size_t(v)] = true;
    }
  }
  for (int v : outputs)
    KILN_CHECK(v >= 0 && size_t(v) < values.size() && defined[size_t(v)], Runtime, "Graph ", name,
               ": output %", v, " is not defined.");
}

std::string Graph::to_text() const {
  std::ostringstream s;
  s << "graph " << name << "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    s << (i ? ", " : "") << "%" << inputs[i] << ": " << meta_str(values[size_t(inputs[i])].meta);
  s << ") {\n";
  std::vector<bool> used(values.size(), false);
  for (const Node& n : nodes)
    for (int v : n.inputs) used[size_t(v)] = true;
  for (int v : outputs) used[size_t(v)] = true;
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if ((v.kind == ValueKind::Capture || v.kind == ValueKind::Constant) && used[i]) {
      s << "  %" << i << " = " << kind_name(v.kind) << " : " << meta_str(v.meta);
      if (v.kind == ValueKind::Constant && v.tensor.defined() && v.tensor.numel() == 1 && !v.tensor.is_symbolic())
        s << " = " << v.tensor.item();
      s << "\n";
    }
  }
  for (const Node& n : nodes) {
    s << "  ";
    for (size_t k = 0; k < n.outputs.size(); ++k) s << (k ? ", " : "") << "%" << n.outputs[k];
    s << " = " << op_name(n.op) << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) s << (k ? ", " : "") << "%" << n.inputs[k];
    s << ")";
    if (!n.attrs.items.empty()) s << " {" << n.attrs.str() << "}";
    s << " : ";
    for (size_t k = 0; k < n.outputs.size(); ++k) s << (k ? ", " : "") << meta_str(values[size_t(n.outputs[k])].meta);
    if (!n.loc.empty()) s << "  # " << n.loc;
    s << "\n";
  }
  s << "  return ";
  for (size_t i = 0; i < outputs.size(); ++i) s << (i ? ", " : "") << "%" << outputs[i];
  s << "\n}\n";
  // The sub-graphs of control-flow nodes, after the graph (as optimized and run; each with its own sub-graphs).
  for (const Node& n : nodes)
    for (auto& kv : n.attrs.items)
      if (auto sg = std::get_if<std::shared_ptr<const SubGraph>>(&kv.second)) {
        s << "# " << kv.first << " of %" << (n.outputs.empty() ? -1 : n.outputs[0]) << " = " << op_name(n.op) << ":\n";
        s << (*sg)->optimized->to_text();
      }
  return s.str();
}

std::string Graph::to_dot() const {
  std::ostringstream s;
  s << "digraph \"" << name << "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.kind == ValueKind::Node) continue;
    s << "  v" << i << " [shape=ellipse, label=\"%" << i << " " << kind_name(v.kind) << "\\n" << meta_str(v.meta)
      << "\"];\n";
  }
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const Node& n = nodes[ni];
    s << "  n" << ni << " [shape=box, label=\"" << op_name(n.op);
    if (!n.loc.empty()) s << "\\n" << n.loc;
    s << "\"" << (has_side_effect(n.op) ? ", style=filled, fillcolor=\"#f4cccc\"" : "") << "];\n";
    for (int v : n.inputs) {
      const Value& in = values[size_t(v)];
      if (in.kind == ValueKind::Node) s << "  n" << in.node;
      else s << "  v" << v;
      s << " -> n" << ni << " [label=\"" << meta_str(in.meta) << "\"];\n";
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = values[size_t(outputs[i])];
    s << "  out" << i << " [shape=plaintext, label=\"output " << i << "\"];\n  ";
    if (v.kind == ValueKind::Node) s << "n" << v.node; else s << "v" << outputs[i];
    s << " -> out" << i << ";\n";
  }
  s << "}\n";
  return s.str();
}

}  // namespace kiln::graph
