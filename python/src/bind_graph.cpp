// Graph mode: tracing, graphs, passes and the executor.
#include <Python.h>
#include <frameobject.h>

#include <memory>

#include "bindings.h"
#include "kiln/op_schema.h"
#include "kiln/graph.h"

namespace kiln::py {
namespace {

std::string& source_root() {
  static std::string* root = new std::string();
  return *root;
}

// "file.py:12" of the innermost Python frame outside the kiln package (the user's line).
std::string user_location() {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  std::string loc;
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    std::string fs = file ? file : "";
    Py_DECREF(code);
    if (source_root().empty() || fs.rfind(source_root(), 0) != 0) {
      loc = fs + ":" + std::to_string(PyFrame_GetLineNumber(f));
      Py_DECREF(f);
      break;
    }
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  if (PyErr_Occurred()) PyErr_Clear();
  return loc;
}

// A Trace whose lifetime is a Python `with` block.
struct PyTrace {
  std::string name;
  bool lift = false;
  std::unique_ptr<graph::Trace> trace;
  graph::Trace& get() {
    KILN_CHECK(trace != nullptr, Runtime, "Kiln: Trace used outside its `with` block.");
    return *trace;
  }
};

OpId op_by_name(const std::string& name) {
  for (int i = 0; i < int(OpId::kCount); ++i)
    if (name == op_name(OpId(i))) return OpId(i);
  KILN_FAIL(Value, "Kiln: no op named '", name, "'.");
}

}  // namespace

void bind_graph(nb::module_& m) {
  graph::set_location_provider(&user_location);
  m.def("_set_source_root", [](const std::string& root) { source_root() = root; },
        "Frames under this path (the kiln package) are skipped when locating the user's line.");
  m.def("_user_location", &user_location);
  m.def("op_names", []() {
    std::vector<std::string> r;
    for (int i = 0; i < int(OpId::kCount); ++i) r.push_back(op_name(OpId(i)));
    return r;
  }, "The names of all ops of the schema (src/ops/schema/ops.yaml), in OpId order (MindSpore primitive names).");
  m.def("op_schema", []() {
    nb::list rows;
    static const std::pair<uint32_t, const char*> kTraitNames[] = {
        {kTraitElementwise, "elementwise"}, {kTraitReduction, "reduction"}, {kTraitView, "view"},
        {kTraitInplace, "inplace"}, {kTraitSideEffect, "side_effect"}, {kTraitRandom, "random"},
        {kTraitCollective, "collective"}, {kTraitControlFlow, "control_flow"}, {kTraitInternal, "internal"}};
    for (int i = 0; i < int(OpId::kCount); ++i) {
      const OpInfo& o = op_info(OpId(i));
      nb::dict r;
      r["name"] = o.name;
      r["op"] = o.id;
      r["family"] = o.family;
      nb::list traits, writes;
      for (const auto& [bit, tname] : kTraitNames)
        if (o.traits & bit) traits.append(tname);
      for (int k = 0; k < 32; ++k)
        if (o.writes & (1u << k)) writes.append(k);
      r["traits"] = traits;
      r["writes"] = writes;
      r["signature"] = o.signature;
      r["api"] = o.api;
      r["dtype"] = o.dtype;
      r["python"] = o.python;
      r["onnx"] = o.onnx;
      r["mindir"] = o.mindir;
      r["doc"] = o.doc;
      rows.append(r);
    }
    return rows;
  }, "The op schema (src/ops/schema/ops.yaml) as compiled into the core: one dict per op, in OpId order, with name, "
     "op, family, traits, writes, signature, api, dtype, python, onnx, mindir and doc.");
  m.def("op_info", [](const std::string& name) {
    const OpDef& d = get_op(op_by_name(name));
    nb::dict r;
    r["differentiable"] = d.differentiable;
    r["has_bprop"] = d.bprop != nullptr;
    r["has_cpu_kernel"] = d.cpu != nullptr || d.direct != nullptr;
    r["has_infer"] = d.infer != nullptr;
    r["side_effect"] = graph::has_side_effect(d.id);
    return r;
  }, "What an op defines: differentiable, has_bprop, has_cpu_kernel, has_infer, side_effect.");
  m.def("tracing", &graph::tracing, "True while a graph is being traced on this thread.");
  m.def("_tensor_signature", [](nb::args args) -> nb::object {
    // (dtype, d0, d1, ..., -1, dtype, ...) when every argument is a Tensor, else None: the compile-cache key of a
    // jit call's fast path.
    std::vector<int64_t> key;
    for (nb::handle a : args) {
      if (!nb::isinstance<Tensor>(a)) return nb::none();
      const Tensor& t = nb::cast<const Tensor&>(a);
      key.push_back(int64_t(t.dtype()));
      key.insert(key.end(), t.shape().begin(), t.shape().end());
      key.push_back(-1);
    }
    return nb::tuple(nb::cast(key));
  }, "Compile-cache key of positional Tensor arguments (None if one is not a Tensor).");

  nb::class_<graph::Graph>(m, "Graph", "A traced graph (typed SSA IR).")
      .def_ro("name", &graph::Graph::name)
      .def("to_text", &graph::Graph::to_text)
      .def("to_dot", &graph::Graph::to_dot)
      .def("verify", &graph::Graph::verify)
      .def("count", [](const graph::Graph& g, const std::string& op) { return g.count(op_by_name(op)); },
           "Number of nodes of the op with this (MindSpore) name, e.g. 'MatMul' → use 'BatchMatMul'.")
      .def_prop_ro("num_nodes", [](const graph::Graph& g) { return g.nodes.size(); })
      .def_prop_ro("ops", [](const graph::Graph& g) {
        std::vector<std::string> r;
        for (auto& n : g.nodes) r.push_back(op_name(n.op));
        return r;
      })
      .def("copy", [](const graph::Graph& g) { return std::make_shared<graph::Graph>(g); })
      .def("optimize", &graph::optimize, "Runs the standard pass pipeline in place; returns one log line per pass.")
      .def("run_pass", [](graph::Graph& g, const std::string& name) {
        if (name == "dce") return graph::dead_code_elimination(g);
        if (name == "cse") return graph::common_subexpression_elimination(g);
        if (name == "constant_folding") return graph::constant_folding(g);
        if (name == "algebraic_simplification") return graph::algebraic_simplification(g);
        if (name == "fuse_matmul_bias_activation") return graph::fuse_matmul_bias_activation(g);
        if (name == "fuse_elementwise") return graph::fuse_elementwise(g);
        KILN_FAIL(Value, "Kiln: unknown pass '", name, "'.");
      }, "Runs one pass in place; returns the number of nodes it changed.");

  nb::class_<PyTrace>(m, "Trace", "Records ops into a new graph while inside its `with` block.")
      .def("__init__", [](PyTrace* self, std::string name, bool lift) { new (self) PyTrace{std::move(name), lift, nullptr}; },
           nb::arg("name"), nb::arg("lift") = false,
           "lift=True: a sub-graph trace (a branch or loop body): tensors it reads that it did not make become extra "
           "inputs, listed by lifted() (kiln/graph.h, Trace).")
      .def("__enter__", [](PyTrace& t) -> PyTrace& { t.trace = std::make_unique<graph::Trace>(t.name, t.lift); return t; },
           nb::rv_policy::reference)
      .def("__exit__", [](PyTrace& t, nb::handle, nb::handle, nb::handle) { t.trace.reset(); return false; },
           nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none())
      .def("input", [](PyTrace& t, nb::handle shape, DType dtype) { return t.get().input(to_shape(shape, "jit"), dtype); },
           "A new symbolic argument.")
      .def("finish", [](PyTrace& t, const std::vector<Tensor>& outputs) {
        return std::shared_ptr<graph::Graph>(t.get().finish(outputs));
      }, "Ends the trace with these outputs; returns the Graph.")
      .def("lifted", [](PyTrace& t) { return t.get().lifted(); },
           "The enclosing tensors read by a lifting trace (the extra inputs of its graph, in order).");

  // Control flow (src/graph/control_flow.cpp): an If/While node when tracing, run now on concrete tensors.
  nb::class_<graph::SubGraph>(m, "SubGraph", "A graph held by a control-flow node (optimized and compiled).")
      .def("__init__", [](graph::SubGraph* self, std::shared_ptr<graph::Graph> g) {
        auto sg = graph::make_subgraph(std::shared_ptr<const graph::Graph>(g));
        new (self) graph::SubGraph(*sg);
      })
      .def_prop_ro("graph", [](const graph::SubGraph& s) { return std::make_shared<graph::Graph>(*s.graph); })
      .def_prop_ro("optimized", [](const graph::SubGraph& s) { return std::make_shared<graph::Graph>(*s.optimized); })
      .def_prop_ro("num_inputs", [](const graph::SubGraph& s) { return s.graph->inputs.size(); })
      .def_prop_ro("num_outputs", [](const graph::SubGraph& s) { return s.graph->outputs.size(); });
  m.def("_cond", [](const Tensor& pred, std::shared_ptr<graph::SubGraph> t, const std::vector<Tensor>& ti,
                    std::shared_ptr<graph::SubGraph> e, const std::vector<Tensor>& ei) {
    return graph::cond(pred, t, ti, e, ei);
  }, "If node: the outputs of branch t(ti) if pred else e(ei).");
  m.def("_while_loop", [](std::shared_ptr<graph::SubGraph> c, std::shared_ptr<graph::SubGraph> b,
                          const std::vector<Tensor>& carried, const std::vector<Tensor>& ce,
                          const std::vector<Tensor>& be, bool save_history) {
    return graph::while_loop(c, b, carried, ce, be, save_history);
  }, "While node: carried = b(carried, be) while c(carried, ce).");

  nb::class_<graph::Executable>(m, "Executable", "A compiled graph, run by the C++ executor.")
      .def("__init__", [](graph::Executable* self, std::shared_ptr<graph::Graph> g) {
        new (self) graph::Executable(std::shared_ptr<const graph::Graph>(g));
      })
      // The whole run is one C++ call with no Python in it: it runs without the GIL (Executable::run serializes
      // runs of one Executable itself).
      .def("run", [](graph::Executable& e, const std::vector<Tensor>& args) {
        std::vector<Tensor> out;
        {
          nb::gil_scoped_release release;
          out = e.run(args);
        }
        return out;
      }, nb::arg("args"))
      .def_prop_ro("planned_peak_bytes", &graph::Executable::planned_peak_bytes)
      .def_prop_ro("graph", [](const graph::Executable& e) { return std::make_shared<graph::Graph>(e.graph()); });
}

}  // namespace kiln::py
