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
}
