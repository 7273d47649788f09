// Dynamic shapes: a compiled graph made concrete for one input-shape signature (kiln/graph_io.h, specialize).
#include <cstring>

#include "kiln/graph_io.h"

namespace kiln::graph {

namespace {

std::string where(const Graph& g, size_t ni) {
  const Node& n = g.nodes[ni];
  std::string s = "node " + std::to_string(ni) + " (" + op_name(n.op) + ")";
  if (!n.loc.empty()) s += " at " + n.loc;
  return s;
}

}  // namespace

std::shared_ptr<Graph> specialize(const Graph& tmpl, const std::vector<Shape>& input_shapes,
                                  const std::vector<AttrPatch>& attrs,
                                  const std::vector<std::pair<int, Tensor>>& constants) {
  auto g = std::make_shared<Graph>(tmpl);
  KILN_CHECK(input_shapes.size() == g->inputs.size(), Value, "specialize: graph '", g->name, "' takes ",
             g->inputs.size(), " inputs, but got ", input_shapes.size(), " shapes.");
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    for (int64_t d : input_shapes[i])
      KILN_CHECK(d >= 0, Value, "specialize: graph '", g->name, "': input ", i, " shape ", shape_str(input_shapes[i]),
                 " has a negative dimension.");
    numel(input_shapes[i]);  // ValueError for a shape beyond kMaxElements
    g->values[size_t(g->inputs[i])].meta.shape = input_shapes[i];
  }
  for (const AttrPatch& p : attrs) {
    KILN_CHECK(p.node >= 0 && size_t(p.node) < g->nodes.size(), Value, "specialize: graph '", g->name,
               "' has no node ", p.node, ".");
    bool found = false;
    for (auto& item : g->nodes[size_t(p.node)].attrs.items) {
      if (std::strcmp(item.first, p.name.c_str()) != 0) continue;
      KILN_CHECK(item.second.index() == p.value.index(), Value, "specialize: graph '", g->name, "': ",
                 where(*g, size_t(p.node)), " attribute '", p.name, "' is given a value of another type.");
      item.second = p.value;
      found = true;
    }
    KILN_CHECK(found, Value, "specialize: graph '", g->name, "': ", where(*g, size_t(p.node)), " has no attribute '",
               p.name, "'.");
  }
  for (const auto& [v, t] : constants) {
    // (A capture too: a tensor made while tracing a sub-graph, e.g. the element count a mean's gradient divides by,
    // is read as a capture there; kiln/_compiler/dynamic.py replaces it only when it is no Parameter.)
    KILN_CHECK(v >= 0 && size_t(v) < g->values.size() && (g->values[size_t(v)].kind == ValueKind::Constant ||
                                                           g->values[size_t(v)].kind == ValueKind::Capture),
               Value, "specialize: graph '", g->name, "': value %", v, " is not a constant.");
    KILN_CHECK(t.defined() && !t.is_symbolic(), Value, "specialize: graph '", g->name, "': constant %", v,
               " needs a concrete tensor.");
    Value& val = g->values[size_t(v)];
    KILN_CHECK(t.dtype() == val.meta.dtype, Value, "specialize: graph '", g->name, "': constant %", v, " is ",
               dtype_name(val.meta.dtype), ", but got ", dtype_name(t.dtype()), ".");
    // A constant that was a Python scalar stays weak (it must not widen the dtype of what it meets: x / n).
    const bool weak = val.tensor.defined() && val.tensor.weak() && t.shape().empty();
    val.tensor = weak ? Tensor::scalar(t.item(), t.dtype(), true) : t;
    val.meta.shape = t.shape();
  }
  // Shape inference again, in program order (inputs of a node are defined before it: SSA).
  for (size_t ni = 0; ni < g->nodes.size(); ++ni) {
    const Node& n = g->nodes[ni];
    const OpDef& def = get_op(n.op);
    KILN_CHECK(def.infer != nullptr, Value, "specialize: graph '", g->name, "': ", where(*g, ni),
               " has no shape inference.");
    std::vector<Tensor> ins;
    ins.reserve(n.inputs.size());
    for (int v : n.inputs) {
      const Value& val = g->values[size_t(v)];
      if (val.kind == ValueKind::Constant) {
        ins.push_back(val.tensor);
        continue;
      }
      Tensor s = symbolic(g.get(), v, val.meta);
      // A captured Python scalar (in a sub-graph: a scalar of the enclosing trace) stays weak, as it was when traced:
      // it must not widen what it meets (y * 0.5 of a float32 y stays float32).
      if (val.kind == ValueKind::Capture && val.tensor.defined() && val.tensor.weak()) s.impl()->weak = true;
      ins.push_back(s);
    }
    std::vector<TensorMeta> metas;
    try {
      metas = def.infer(ins, n.attrs);
    } catch (const Error& e) {
      std::string shapes;
      for (size_t i = 0; i < input_shapes.size(); ++i) shapes += (i ? ", " : "") + shape_str(input_shapes[i]);
      KILN_FAIL(Value, "The compiled graph '", g->name, "' (dynamic shapes) cannot run with input shapes ", shapes,
                ": ", where(*g, ni), " rejects them: ", e.what());
    }
    KILN_CHECK(metas.size() == n.outputs.size(), Value, "specialize: graph '", g->name, "': ", where(*g, ni),
               " gives ", metas.size(), " outputs, the graph has ", n.outputs.size(), ".");
    for (size_t k = 0; k < metas.size(); ++k) {
      Value& out = g->values[size_t(n.outputs[k])];
      KILN_CHECK(out.meta.dtype == metas[k].dtype, Value, "specialize: graph '", g->name, "': ", where(*g, ni),
                 " output ", k, " changes dtype from ", dtype_name(out.meta.dtype), " to ", dtype_name(metas[k].dtype),
                 ".");
      out.meta.shape = metas[k].shape;
    }
  }
  g->verify();
  return g;
}

}  // namespace kiln::graph
