// The IR serializer's bindings (kiln/graph_io.h): used by the on-disk compile cache (kiln/_compiler/disk_cache.py).
#include <nanobind/stl/pair.h>

#include <type_traits>

#include "bindings.h"
#include "kiln/graph_io.h"

namespace kiln::py {
namespace {

nb::object attr_to_python(const AttrValue& v, bool subgraphs) {
  return std::visit([subgraphs](const auto& x) -> nb::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      nb::list l;
      for (int64_t i : x) l.append(i);
      return l;
    } else if constexpr (std::is_same_v<T, std::shared_ptr<const graph::SubGraph>>) {
      // (The SubGraph object itself for the dynamic-shape template, kiln/_compiler/dynamic.py; exporters refuse it.)
      if (subgraphs) return nb::cast(std::const_pointer_cast<graph::SubGraph>(x));
      KILN_FAIL(Value, "Kiln: a graph with tensor-dependent control flow (an If/While node holding ", graph::subgraph_label(*x),
                ") cannot be described for export; export a model without tensor-dependent control flow.");
      return nb::none();
    } else {
      return nb::cast(x);
    }
  }, v);
}

// The graph as plain Python data (read by model exporters, kiln/train/_mindir_export.py): every value (kind, shape,
// dtype, the tensor of a capture/constant) and every node (op name, value ids in and out, attributes, user line).
nb::dict describe(const graph::Graph& g, bool subgraphs) {
  static const char* kinds[] = {"input", "capture", "constant", "node"};
  nb::list values;
  for (const graph::Value& v : g.values) {
    nb::dict d;
    d["kind"] = kinds[int(v.kind)];
    nb::list shape;
    for (int64_t s : v.meta.shape) shape.append(s);
    d["shape"] = nb::tuple(shape);
    d["dtype"] = v.meta.dtype;
    d["tensor"] = v.tensor.defined() ? nb::cast(v.tensor) : nb::none();
    d["input_index"] = v.input_index;
    d["node"] = v.node;
    d["output_index"] = v.output_index;
    values.append(d);
  }
  nb::list nodes;
  for (const graph::Node& n : g.nodes) {
    nb::dict d;
    d["op"] = op_name(n.op);
    d["inputs"] = nb::cast(n.inputs);
    d["outputs"] = nb::cast(n.outputs);
    nb::dict attrs;
    for (const auto& [name, value] : n.attrs.items) attrs[name] = attr_to_python(value, subgraphs);
    d["attrs"] = attrs;
    d["loc"] = n.loc;
    nodes.append(d);
  }
  nb::dict r;
  r["name"] = g.name;
  r["values"] = values;
  r["nodes"] = nodes;
  r["inputs"] = nb::cast(g.inputs);
  r["outputs"] = nb::cast(g.outputs);
  return r;
}

}  // namespace

void bind_graph_io(nb::module_& m) {
  // Methods on the Graph class bound in bind_graph.cpp.
  nb::object graph_cls = m.attr("Graph");
  auto cls = nb::borrow<nb::class_<graph::Graph>>(graph_cls);
  cls.def("serialize", [](const graph::Graph& g, const std::vector<std::string>& names) {
        std::string s = graph::serialize(g, names);
        return nb::bytes(s.data(), s.size());
      }, nb::arg("capture_names"),
      "Bytes of this graph; `capture_names` names each capture (see capture_tensors) for re-binding on load.")
      .def("capture_tensors", [](const graph::Graph& g) {
        std::vector<Tensor> r;
        for (int v : graph::capture_ids(g)) r.push_back(g.values[size_t(v)].tensor);
        return r;
      }, "The tensors the graph reads by reference at run time (Parameters, optimizer state), in value order.")
      .def("describe", &describe, nb::arg("subgraphs") = false,
           "The graph as Python data: {'name', 'inputs', 'outputs' (value ids), 'values' (per value id: kind "
           "'input'|'capture'|'constant'|'node', shape, dtype, tensor (captures/constants, else None), input_index, "
           "node, output_index), 'nodes' (in program order: op, inputs, outputs, attrs dict, loc)}. A control-flow "
           "node's sub-graph attribute is a ValueError (exporters), or the SubGraph object with subgraphs=True.")
      .def_prop_ro("num_outputs", [](const graph::Graph& g) { return g.outputs.size(); })
      .def("bind_captures", &graph::bind_captures, nb::arg("tensors"),
           "Binds the captures of a deserialized graph (ValueError on a shape/dtype mismatch).")
      .def("random_streams", [](const graph::Graph& g) {
        std::vector<int64_t> r;
        for (auto& n : g.nodes)
          if (graph::is_random(n.op)) r.push_back(n.attrs.i("stream"));
        return r;
      }, "The `stream` attribute of each random node, in program order.")
      .def("remap_random_streams", &graph::remap_random_streams, nb::arg("from_ids"), nb::arg("to_ids"),
           "Rewrites random nodes' stream ids; returns the number of nodes changed.");
  cls.def("specialize", [](const graph::Graph& g, const std::vector<Shape>& input_shapes, nb::list attrs,
                           const std::vector<std::pair<int, Tensor>>& constants) {
        // (node, name, value) with the value converted to the alternative the node's attribute holds now.
        std::vector<graph::AttrPatch> patches;
        for (nb::handle item : attrs) {
          nb::tuple t;
          int node = -1;
          std::string name;
          KILN_CHECK(nb::try_cast(item, t) && t.size() == 3 && nb::try_cast(t[0], node) && nb::try_cast(t[1], name),
                     Type, "Graph.specialize: an attribute patch is a tuple (node: int, name: str, value).");
          KILN_CHECK(node >= 0 && size_t(node) < g.nodes.size(), Value, "Graph.specialize: no node ", node, ".");
          const AttrValue* cur = g.nodes[size_t(node)].attrs.find(name.c_str());
          KILN_CHECK(cur != nullptr, Value, "Graph.specialize: node ", node, " has no attribute '", name, "'.");
          AttrValue v;
          bool ok = false;
          if (std::holds_alternative<int64_t>(*cur)) {
            int64_t x = 0;
            ok = !nb::isinstance<nb::float_>(t[2]) && nb::try_cast(t[2], x);
            v = x;
          } else if (std::holds_alternative<double>(*cur)) {
            double x = 0;
            ok = nb::try_cast(t[2], x);
            v = x;
          } else if (std::holds_alternative<bool>(*cur)) {
            bool x = false;
            ok = nb::try_cast(t[2], x);
            v = x;
          } else if (std::holds_alternative<std::vector<int64_t>>(*cur)) {
            std::vector<int64_t> x;
            ok = nb::isinstance<nb::list>(t[2]) || nb::isinstance<nb::tuple>(t[2]) ? nb::try_cast(t[2], x) : false;
            v = std::move(x);
          } else if (std::holds_alternative<std::shared_ptr<const graph::SubGraph>>(*cur)) {
            // A control-flow node's branch or body made for these shapes (kiln/_compiler/dynamic.py).
            std::shared_ptr<graph::SubGraph> x;
            ok = nb::try_cast(t[2], x) && x != nullptr;
            v = std::shared_ptr<const graph::SubGraph>(x);
          } else {
            KILN_FAIL(Value, "Graph.specialize: attribute '", name, "' of node ", node, " cannot be patched.");
          }
          KILN_CHECK(ok, Type, "Graph.specialize: attribute '", name, "' of node ", node, " (",
                     op_name(g.nodes[size_t(node)].op), ") needs a value of its type, but got ",
                     nb::type_name(t[2].type()).c_str(), ".");
          patches.push_back({node, std::move(name), std::move(v)});
        }
        return graph::specialize(g, input_shapes, patches, constants);
      }, nb::arg("input_shapes"), nb::arg("attrs"), nb::arg("constants"),
      "A copy for concrete input shapes, with attribute patches [(node, name, value)] and constants [(value id, "
      "Tensor)] replaced and every node's shapes inferred again (kiln/graph_io.h, specialize). ValueError when an op "
      "rejects the shapes.");
  m.def("deserialize_graph", [](nb::bytes data) {
    graph::LoadedGraph lg = graph::deserialize(std::string_view(static_cast<const char*>(data.data()), data.size()));
    return std::make_pair(lg.graph, lg.capture_names);
  }, nb::arg("data"), "Parses bytes from Graph.serialize: (Graph with unbound captures, capture names). RuntimeError "
     "on any malformed input.");
}

}  // namespace kiln::py
