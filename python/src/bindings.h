// Shared helpers of the nanobind bindings: the TensorLike argument caster and the per-file bind functions.
// Bindings stay thin: argument conversion only, no logic that C++ users would also need.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <string>

#include "kiln/ops.h"

namespace nb = nanobind;

namespace kiln::py {

// An op argument that accepts a Tensor, a Python bool/int/float (a "weak" 0-d tensor: Bool/Int64/Float32), or
// anything `kiln.Tensor(...)` accepts (NumPy arrays, lists): the last goes through the Python converter.
struct TensorLike {
  Tensor t;
  operator const Tensor&() const { return t; }
};

// Converts a Python object to a Tensor as TensorLike does; throws TypeError naming `what` if it cannot.
Tensor to_tensor(nb::handle obj, const char* what = "argument");
// Reads an axis argument: None → {} (all axes), int → {i}, tuple/list of ints → as given.
std::vector<int64_t> to_axes(nb::handle obj, const char* op);
// Reads a shape: int or tuple/list of ints.
Shape to_shape(nb::handle obj, const char* op);

// MindSpore's spelling of a core op name: "floor_div" → "FloorDiv".
inline std::string op_display_name(const char* name) {
  std::string r;
  bool up = true;
  for (const char* c = name; *c; ++c) {
    if (*c == '_') { up = true; continue; }
    r += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
    up = false;
  }
  return r;
}

// Runs f(); an error whose message does not name an op yet (a Python number out of range for the tensor's dtype,
// raised deep in the type conversion) gets the prefix "For '<Op>', ".
template <typename F> auto with_op_name(const char* name, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("For '", 0) == 0) throw;
    throw Error(e.kind(), "For '" + op_display_name(name) + "', " + msg);
  }
}

// The fallback of a Tensor arithmetic operator whose other operand is a Python int that fits no Kiln dtype
// (beyond Int64): it calls the module function `name` (kiln._core.add...), whose argument-error path either
// computes it as a float (against a float tensor, as NumPy) or raises OverflowError naming the op.
nb::object big_int_operator(const char* name, nb::handle a, nb::handle b);

void bind_tensor(nb::module_& m);
void bind_views(nb::module_& m);  // after bind_tensor: adds methods to Tensor
void bind_autodiff(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_reduce_shape(nb::module_& m);
void bind_nn_ops(nb::module_& m);
void bind_graph(nb::module_& m);
void bind_graph_io(nb::module_& m);
void bind_deploy(nb::module_& m);
void bind_conv(nb::module_& m);
void bind_sink(nb::module_& m);
void bind_comm(nb::module_& m);

}  // namespace kiln::py

namespace nanobind::detail {
template <> struct type_caster<kiln::py::TensorLike> {
  NB_TYPE_CASTER(kiln::py::TensorLike, const_name("Tensor"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    try {
      value.t = kiln::py::to_tensor(src);
      return true;
    } catch (...) {
      PyErr_Clear();
      return false;
    }
  }
  static handle from_cpp(const kiln::py::TensorLike& v, rv_policy p, cleanup_list* c) noexcept {
    return make_caster<kiln::Tensor>::from_cpp(v.t, p, c);
  }
};
}  // namespace nanobind::detail
