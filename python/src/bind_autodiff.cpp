// Autodiff: GradScope as a Python context manager, gradient(), detach().
#include <memory>

#include <nanobind/stl/pair.h>

#include "bindings.h"
#include "kiln/autodiff.h"

namespace kiln::py {
namespace {
// A GradScope whose lifetime is the Python `with` block rather than the Python object's.
struct PyGradScope {
  std::unique_ptr<autodiff::GradScope> scope;
  autodiff::GradScope& get() {
    KILN_CHECK(scope != nullptr, Runtime, "Kiln: GradScope used outside its `with` block.");
    return *scope;
  }
};
// An IsolatedTape whose lifetime is the Python `with` block.
struct PyIsolatedTape {
  std::unique_ptr<autodiff::IsolatedTape> tape;
};
}  // namespace

void bind_autodiff(nb::module_& m) {
  nb::class_<PyGradScope>(m, "GradScope",
                          "One active grad transform: while inside its `with` block, ops on watched tensors are "
                          "recorded on the tape.")
      .def(nb::init<>())
      .def("__enter__", [](PyGradScope& s) -> PyGradScope& { s.scope = std::make_unique<autodiff::GradScope>(); return s; },
           nb::rv_policy::reference)
      .def("__exit__", [](PyGradScope& s, nb::handle, nb::handle, nb::handle) { s.scope.reset(); return false; },
           nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none())
      .def("watch", [](PyGradScope& s, const Tensor& x) { return s.get().watch(x); },
           "Watches a tensor in place as a leaf (Parameters). Returns it.")
      .def("watch_input", [](PyGradScope& s, const Tensor& x) { return s.get().watch_input(x); },
           "Returns a new leaf aliasing the tensor (function inputs).");
  nb::class_<PyIsolatedTape>(m, "IsolatedTape",
                              "A fresh autodiff context (no active grad transform, recording on) for the `with` block: "
                              "a closed differentiation inside a bprop (recompute: kiln/_autodiff/recompute.py).")
      .def(nb::init<>())
      .def("__enter__", [](PyIsolatedTape& s) -> PyIsolatedTape& {
             s.tape = std::make_unique<autodiff::IsolatedTape>();
             return s;
           }, nb::rv_policy::reference)
      .def("__exit__", [](PyIsolatedTape& s, nb::handle, nb::handle, nb::handle) { s.tape.reset(); return false; },
           nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none());
  m.def("grad_level", &autodiff::grad_level, "Number of active grad transforms (0: nothing is recorded).");
  m.def("gradient",
        [](const std::vector<Tensor>& outputs, const std::vector<std::optional<Tensor>>& sens,
           const std::vector<Tensor>& leaves) {
          std::vector<Tensor> s;
          for (auto& x : sens) s.push_back(x ? *x : Tensor());
          return autodiff::gradient(outputs, s, leaves);
        },
        nb::arg("outputs"), nb::arg("sens"), nb::arg("leaves"),
        "Cotangents of `outputs` (seeded with `sens`; None entries = ones) w.r.t. each leaf; zeros for "
        "leaves the outputs do not depend on. Call inside a GradScope that watched the leaves.");
  m.def("detach", &autodiff::detach, "The same storage without autodiff history.");
  m.def("_write_snapshot_stats",
        []() {
          autodiff::WriteSnapshotStats st = autodiff::write_snapshot_stats();
          return std::make_pair(st.count, st.bytes);
        },
        "(count, bytes) of the copies kept so far because a tensor saved for a gradient was written in place "
        "(kiln/autodiff.h, Note [versions of a storage]). For tests and diagnostics.");
  m.def("record_custom",
        [](const std::vector<Tensor>& inputs, const std::vector<Tensor>& values, nb::callable fn) {
          // The callable is released with the GIL held, whichever thread drops the last tape reference.
          struct Holder {
            nb::object fn;
            ~Holder() {
              if (!Py_IsInitialized()) { fn.release(); return; }
              nb::gil_scoped_acquire gil;
              fn.reset();
            }
          };
          auto holder = std::make_shared<Holder>();
          holder->fn = std::move(fn);
          size_t n_in = inputs.size();
          autodiff::CustomBpropFn bprop = [holder, n_in](const std::vector<Tensor>& ins,
                                                          const std::vector<Tensor>& outs,
                                                          const std::vector<Tensor>& gouts) {
            nb::gil_scoped_acquire gil;
            nb::list g;
            for (auto& t : gouts) {
              if (t.defined()) g.append(nb::cast(t));
              else g.append(nb::none());
            }
            nb::object r = holder->fn(nb::cast(ins), nb::cast(outs), g);
            std::vector<Tensor> res;
            for (nb::handle h : r) res.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
            KILN_CHECK(res.size() == n_in, Value, "Kiln: a custom bprop returned ", res.size(),
                       " cotangents for ", n_in, " inputs.");
            return res;
          };
          return autodiff::record_custom(inputs, values, std::move(bprop));
        },
        nb::arg("inputs"), nb::arg("values"), nb::arg("bprop"),
        "Aliases of `values` whose history is one node over `inputs` with the Python bprop "
        "`bprop(inputs, outputs, gouts) -> cotangents` (one per input, None for none; a gout is None when zero). "
        "Nothing is recorded outside a grad transform or when no input has history.");
}

}  // namespace kiln::py
