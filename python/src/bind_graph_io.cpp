// The IR serializer's bindings (kiln/graph_io.h): used by the on-disk compile cache (kiln/common/_disk_cache.py).
#include <nanobind/stl/pair.h>

#include "bindings.h"
#include "kiln/graph_io.h"

namespace kiln::py {

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
  m.def("deserialize_graph", [](nb::bytes data) {
    graph::LoadedGraph lg = graph::deserialize(std::string_view(static_cast<const char*>(data.data()), data.size()));
    return std::make_pair(lg.graph, lg.capture_names);
  }, nb::arg("data"), "Parses bytes from Graph.serialize: (Graph with unbound captures, capture names). RuntimeError "
     "on any malformed input.");
}

}  // namespace kiln::py
