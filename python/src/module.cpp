// kiln._core: the nanobind extension. Error translation and the module entry point.
#include <Python.h>

#include "bindings.h"

namespace kiln::py {
namespace {
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::Value: type = PyExc_ValueError; break;
      case ErrorKind::Type: type = PyExc_TypeError; break;
      case ErrorKind::Index: type = PyExc_IndexError; break;
      case ErrorKind::Runtime: type = PyExc_RuntimeError; break;
    }
    PyErr_SetString(type, e.what());
  }
}

// Kernel hooks (kiln::set_kernel_hooks): a kernel runs without the GIL, so that kernels of several Python threads
// run at the same time. A kernel reached while the GIL is already released (a kernel inside a compiled graph's run,
// an op called from a kernel) leaves it as it is.
void* release_gil() { return PyGILState_Check() ? static_cast<void*>(PyEval_SaveThread()) : nullptr; }
void restore_gil(void* state) { if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }
// Kernels on fewer elements than this keep the GIL (releasing it costs more than such a kernel).
constexpr int64_t kGilReleaseMinElements = 8192;
}  // namespace
}  // namespace kiln::py

NB_MODULE(_core, m) {
  m.doc() = "Kiln's C++ core: tensors, ops, autodiff";
  nb::register_exception_translator(kiln::py::translate);
  // Tensors still referenced by module globals or uncollected cycles when the interpreter exits (common in test
  // suites) would make nanobind print "leaked instance" reports at shutdown; they are not leaks of a running program.
  nb::set_leak_warnings(false);
  kiln::py::bind_tensor(m);
  kiln::py::bind_autodiff(m);
  kiln::py::bind_elementwise(m);
  kiln::py::bind_reduce_shape(m);
  kiln::py::bind_nn_ops(m);
  kiln::py::bind_graph(m);
  kiln::py::bind_conv(m);
  kiln::set_kernel_hooks(kiln::py::release_gil, kiln::py::restore_gil, kiln::py::kGilReleaseMinElements);
  m.def("_set_gil_release_threshold",
        [](int64_t n) { kiln::set_kernel_hooks(kiln::py::release_gil, kiln::py::restore_gil, n); },
        nb::arg("min_elements"),
        "Kernels whose tensors hold at least `min_elements` elements run with the GIL released (default 8192; 0: "
        "every kernel). For tests that make threads overlap as much as possible.");
  m.def("_gil_release_threshold", &kiln::kernel_hook_min_elements, "The current value of _set_gil_release_threshold.");
}
