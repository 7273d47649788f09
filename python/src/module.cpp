// kiln._core: the nanobind extension. Error translation and the module entry point.
#include <Python.h>

#include <cstring>

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
      case ErrorKind::Overflow: type = PyExc_OverflowError; break;
    }
    // Decoded with backslashreplace, never strict: a message that quotes bytes of a damaged file must still
    // become the error it describes, not a UnicodeDecodeError (docs/decisions/damaged-files.md).
    const char* what = e.what();
    PyObject* msg = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
    if (msg == nullptr) return;  // out of memory: that error is set
    PyErr_SetObject(type, msg);
    Py_DECREF(msg);
  }
}

// Kernel hooks (kiln::set_kernel_hooks): a kernel runs without the GIL, so that kernels of several Python threads
// run at the same time. A kernel reached while the GIL is already released (a kernel inside a compiled graph's run,
// an op called from a kernel) leaves it as it is.
void* release_gil() { return PyGILState_Check() ? static_cast<void*>(PyEval_SaveThread()) : nullptr; }
void restore_gil(void* state) { if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }
// Kernels on fewer elements than this keep the GIL (releasing it costs more than such a kernel).
constexpr int64_t kGilReleaseMinElements = 8192;
// Python callable set by kiln._convert: raises the MindSpore-style TypeError for a call whose arguments nanobind
// could not convert (see add_argument_error_overloads). Leaked on purpose, like the converters.
nb::object& g_argument_error = *new nb::object();

// A parameter that converts only in nanobind's second (implicit-conversion) pass over the overloads; see below.
struct ConvertPass {};
}  // namespace
}  // namespace kiln::py

namespace nanobind::detail {
template <> struct type_caster<kiln::py::ConvertPass> {
  NB_TYPE_CASTER(kiln::py::ConvertPass, const_name("object"))
  bool from_python(handle, uint8_t flags, cleanup_list*) noexcept { return flags & (uint8_t) cast_flags::convert; }
  static handle from_cpp(const kiln::py::ConvertPass&, rv_policy, cleanup_list*) noexcept { return none().release(); }
};
}  // namespace nanobind::detail

namespace kiln::py {
namespace {
// Gives every function of the module a last overload taking any arguments. nanobind tries it only after the
// real overload failed to convert its arguments even with implicit conversions (the ConvertPass parameter fails
// in the strict first pass), and it raises a MindSpore-style TypeError naming the op and the argument (made by
// kiln._convert._argument_error) instead of nanobind's "incompatible function arguments" list of signatures.
// Calls whose arguments convert never reach it: no cost on the normal path.
// Methods (not operators or __init__, whose failed conversion must stay NotImplemented / is handled by the
// factory) and static methods of the module's classes get the same overload, named "Tensor.asnumpy" etc.
void add_method_argument_error_overloads(nb::handle cls) {
  const std::string cls_name = nb::cast<std::string>(cls.attr("__name__"));
  std::vector<std::pair<std::string, bool>> names;  // (name, is_method)
  nb::object members = cls.attr("__dict__");  // a mappingproxy
  for (nb::handle key : nb::list(members.attr("keys")())) {
    nb::object value = members[key];
    std::string name = nb::cast<std::string>(key), type = Py_TYPE(value.ptr())->tp_name;
    if (name.rfind("__", 0) == 0) continue;
    if (type == "nanobind.nb_method") names.emplace_back(name, true);
    if (type == "nanobind.nb_func") names.emplace_back(name, false);
  }
  for (const auto& [name, is_method] : names) {
    const char* stored = (new std::string(name))->c_str();  // nanobind keeps the pointer
    const char* shown = (new std::string(cls_name + "." + name))->c_str();
    if (is_method) {
      nb::cpp_function_def([cls, stored, shown](nb::handle self, nb::args args, ConvertPass, nb::kwargs kwargs) -> nb::object {
        nb::list all;
        all.append(self);
        for (nb::handle a : args) all.append(a);
        if (g_argument_error.is_valid()) g_argument_error(nb::str(shown), cls.attr(stored), nb::tuple(all), kwargs);
        KILN_FAIL(Type, "For '", shown, "', the arguments do not match its signature.");
      }, nb::scope(cls), nb::name(stored), nb::is_method(), nb::arg("args"), nb::arg("_kiln_convert_pass") = 0,
         nb::arg("kwargs"));
    } else {
      nb::cpp_function_def([cls, stored, shown](nb::args args, ConvertPass, nb::kwargs kwargs) -> nb::object {
        if (g_argument_error.is_valid()) g_argument_error(nb::str(shown), cls.attr(stored), args, kwargs);
        KILN_FAIL(Type, "For '", shown, "', the arguments do not match its signature.");
      }, nb::scope(cls), nb::name(stored), nb::arg("args"), nb::arg("_kiln_convert_pass") = 0, nb::arg("kwargs"));
    }
  }
}

void add_argument_error_overloads(nb::module_& m) {
  std::vector<std::string> names;
  for (auto [key, value] : nb::borrow<nb::dict>(m.attr("__dict__"))) {
    std::string type = Py_TYPE(value.ptr())->tp_name;
    if (type == "nanobind.nb_func") names.push_back(nb::cast<std::string>(key));
    if (nb::type_check(value) && !nb::hasattr(value, "__members__")) add_method_argument_error_overloads(value);
  }
  for (const std::string& name : names) {
    const char* stored = (new std::string(name))->c_str();  // nanobind keeps the pointer
    nb::handle mod = m;
    m.def(stored, [mod, stored](nb::args args, ConvertPass, nb::kwargs kwargs) -> nb::object {
      nb::object fn = mod.attr(stored);
      // raises, or (a Python int beyond Int64 against float tensors) returns the result computed with a float
      if (g_argument_error.is_valid()) return g_argument_error(nb::str(stored), fn, args, kwargs);
      KILN_FAIL(Type, "For '", stored, "', the arguments do not match its signature.");
    }, nb::arg("args"), nb::arg("_kiln_convert_pass") = 0, nb::arg("kwargs"));
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
  kiln::py::bind_views(m);
  kiln::py::bind_autodiff(m);
  kiln::py::bind_elementwise(m);
  kiln::py::bind_reduce_shape(m);
  kiln::py::bind_nn_ops(m);
  kiln::py::bind_graph(m);
  kiln::py::bind_graph_io(m);
  kiln::py::bind_deploy(m);
  kiln::py::bind_conv(m);
  kiln::py::bind_sink(m);
  kiln::py::bind_comm(m);
  kiln::set_kernel_hooks(kiln::py::release_gil, kiln::py::restore_gil, kiln::py::kGilReleaseMinElements);
  m.def("_set_gil_release_threshold",
        [](int64_t n) { kiln::set_kernel_hooks(kiln::py::release_gil, kiln::py::restore_gil, n); },
        nb::arg("min_elements"),
        "Kernels whose tensors hold at least `min_elements` elements run with the GIL released (default 8192; 0: "
        "every kernel). For tests that make threads overlap as much as possible.");
  m.def("_gil_release_threshold", &kiln::kernel_hook_min_elements, "The current value of _set_gil_release_threshold.");
  m.def("_set_argument_error", [](nb::object f) { kiln::py::g_argument_error = f; });
  kiln::py::add_argument_error_overloads(m);
}
