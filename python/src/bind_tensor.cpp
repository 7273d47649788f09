// Tensor, DType and conversions between Python objects / NumPy arrays and Tensors.
#include <nanobind/ndarray.h>

#include "bindings.h"
#include "kiln/allocator.h"
#include "kiln/profiler.h"
#include "kiln/graph.h"

namespace kiln::py {
namespace {

// Python callables set by kiln._convert at import. Leaked on purpose: destroying Python objects in C++ static
// destructors would run after the interpreter has finalized.
nb::object& g_converter = *new nb::object();  // to_numpy(obj, dtype) -> C-contiguous ndarray
nb::object& g_factory = *new nb::object();    // make_tensor(input_data, dtype, shape, init) -> Tensor
PyObject* g_symbolic_shape_hook = nullptr;    // (tensor, shape tuple) -> shape of a symbolic tensor (or nullptr)

DType dtype_from_ndarray(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  if (d.code == uint8_t(C::Bool)) return DType::Bool;
  if (d.code == uint8_t(C::Float)) {
    if (d.bits == 16) return DType::Float16;
    if (d.bits == 32) return DType::Float32;
    if (d.bits == 64) return DType::Float64;
  }
  if (d.code == uint8_t(C::Bfloat) && d.bits == 16) return DType::BFloat16;
  if (d.code == uint8_t(C::Complex)) {
    if (d.bits == 64) return DType::Complex64;
    if (d.bits == 128) return DType::Complex128;
  }
  if (d.code == uint8_t(C::Int)) {
    if (d.bits == 8) return DType::Int8;
    if (d.bits == 16) return DType::Int16;
    if (d.bits == 32) return DType::Int32;
    if (d.bits == 64) return DType::Int64;
  }
  if (d.code == uint8_t(C::UInt)) {
    if (d.bits == 8) return DType::UInt8;
    if (d.bits == 16) return DType::UInt16;
    if (d.bits == 32) return DType::UInt32;
    if (d.bits == 64) return DType::UInt64;
  }
  KILN_FAIL(Type, "Kiln: unsupported array element type (code ", int(d.code), ", ", int(d.bits), " bits).");
}

nb::dlpack::dtype dlpack_of(DType t) {
  using C = nb::dlpack::dtype_code;
  switch (t) {
    case DType::Bool: return {uint8_t(C::Bool), 8, 1};
    case DType::UInt8: return {uint8_t(C::UInt), 8, 1};
    case DType::UInt16: return {uint8_t(C::UInt), 16, 1};
    case DType::UInt32: return {uint8_t(C::UInt), 32, 1};
    case DType::UInt64: return {uint8_t(C::UInt), 64, 1};
    case DType::Int8: return {uint8_t(C::Int), 8, 1};
    case DType::Int16: return {uint8_t(C::Int), 16, 1};
    case DType::Int32: return {uint8_t(C::Int), 32, 1};
    case DType::Int64: return {uint8_t(C::Int), 64, 1};
    case DType::Float16: return {uint8_t(C::Float), 16, 1};
    case DType::BFloat16: return {uint8_t(C::Bfloat), 16, 1};
    case DType::Float32: return {uint8_t(C::Float), 32, 1};
    case DType::Complex64: return {uint8_t(C::Complex), 64, 1};
    case DType::Complex128: return {uint8_t(C::Complex), 128, 1};
    default: return {uint8_t(C::Float), 64, 1};
  }
}

// A Tensor copied from a C-contiguous host ndarray.
// Read-only arrays are accepted (the values are copied): np.broadcast_to results, arrays with writeable=False.
Tensor from_ndarray(const nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>& a) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = int64_t(a.shape(i));
  return Tensor::from_data(a.data(), shape, dtype_from_ndarray(a.dtype()));
}

// A Tensor sharing the memory of a C-contiguous, aligned, writable host ndarray (Tensor.from_numpy): the Storage
// holds the nanobind ndarray handle, which keeps the NumPy array alive and is safe to release without the GIL.
Tensor share_ndarray(const nb::ndarray<nb::c_contig, nb::device::cpu>& a) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = int64_t(a.shape(i));
  auto owner = std::make_shared<nb::ndarray<nb::c_contig, nb::device::cpu>>(a);
  return Tensor::from_external(a.data(), shape, dtype_from_ndarray(a.dtype()), std::move(owner));
}

// A NumPy array viewing the tensor's storage (kept alive by the array).
void check_readable(const Tensor& t, const char* what) {
  KILN_CHECK(!graph::is_state_while_tracing(t), Runtime, "Kiln: ", what, " of a Parameter or another tensor made "
             "outside a compiled (graph-mode) function, while compiling it: its value changes between runs, so "
             "reading it now would freeze a stale value into the graph. Compute with the tensor (Kiln ops) instead.");
}

nb::object to_numpy(const Tensor& t) {
  check_readable(t, "asnumpy()");
  KILN_CHECK(!t.is_symbolic(), Runtime, "Kiln: asnumpy() of a tensor inside a compiled (graph-mode) function: its value "
             "is not known while compiling. Return the tensor from the function and read it outside.");
  // BFloat16: NumPy has no such dtype; MindSpore 2.10 returns an ndarray of its own registered bfloat16 dtype. Kiln
  // returns one of ml_dtypes.bfloat16 (the NumPy bfloat16 that JAX and TensorFlow use): the uint16 bits, viewed.
  nb::object bf16;
  if (t.dtype() == DType::BFloat16) {
    try {
      bf16 = nb::module_::import_("ml_dtypes").attr("bfloat16");
    } catch (nb::python_error&) {
      KILN_FAIL(Type, "asnumpy() of a BFloat16 tensor needs the ml_dtypes package (NumPy has no bfloat16): "
                "pip install ml_dtypes, or cast the tensor to float32 first (t.astype(kiln.float32)).");
    }
  }
  auto* keep = new std::shared_ptr<Storage>(t.impl()->storage);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Storage>*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const bool is_bf16 = t.dtype() == DType::BFloat16;
  nb::ndarray<nb::numpy> arr(t.raw_data(), t.shape().size(), shape.data(), owner, strides.data(),
                             dlpack_of(is_bf16 ? DType::UInt16 : t.dtype()));
  nb::object out = nb::cast(arr, nb::rv_policy::reference);
  return is_bf16 ? out.attr("view")(bf16) : out;
}

}  // namespace

Tensor to_tensor(nb::handle obj, const char* what) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<const Tensor&>(obj);
  if (PyBool_Check(obj.ptr())) return Tensor::scalar(obj.ptr() == Py_True ? 1.0 : 0.0, DType::Bool, true);
  if (PyLong_Check(obj.ptr())) {
    long long v = PyLong_AsLongLong(obj.ptr());
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); KILN_FAIL(Overflow, "Python integer out of bounds for Int64."); }
    Tensor t = Tensor::empty({}, DType::Int64);
    *t.data<int64_t>() = v;
    t.impl()->weak = true;
    return t;
  }
  // A Python float keeps its double precision; being weak, it does not widen a float32 tensor (promote_types).
  if (PyFloat_Check(obj.ptr())) return Tensor::scalar(PyFloat_AS_DOUBLE(obj.ptr()), DType::Float64, true);
  // A Python complex likewise: weak Complex128 (complex64_tensor * 1j stays Complex64, float32 * 1j is Complex64).
  if (PyComplex_Check(obj.ptr())) {
    Tensor t = Tensor::empty({}, DType::Complex128);
    *t.data<std::complex<double>>() = {PyComplex_RealAsDouble(obj.ptr()), PyComplex_ImagAsDouble(obj.ptr())};
    t.impl()->weak = true;
    return t;
  }
  KILN_CHECK(g_converter.is_valid(), Runtime, "Kiln: the Python converter is not set (import kiln).");
  nb::object arr;
  try {
    arr = g_converter(obj, nb::none());
  } catch (nb::python_error& e) {
    KILN_FAIL(Type, "Kiln: ", what, " of type '", nb::inst_name(obj).c_str(), "' can not be converted to a Tensor.");
  }
  return from_ndarray(nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(arr));
}

nb::object big_int_operator(const char* name, nb::handle a, nb::handle b) {
  return nb::module_::import_("kiln._core").attr(name)(a, b);
}

std::vector<int64_t> to_axes(nb::handle obj, const char* op) {
  if (obj.is_none()) return {};
  if (PyLong_Check(obj.ptr())) return {nb::cast<int64_t>(obj)};
  if (nb::isinstance<nb::tuple>(obj) || nb::isinstance<nb::list>(obj)) {
    std::vector<int64_t> r;
    for (nb::handle h : obj) {
      KILN_CHECK(PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()), Type, "For '", op,
                 "', the axis must be an int or a tuple of ints, but got an element of type '",
                 nb::inst_name(h).c_str(), "'.");
      r.push_back(nb::cast<int64_t>(h));
    }
    return r;
  }
  KILN_FAIL(Type, "For '", op, "', the axis must be None, an int or a tuple of ints, but got '",
            nb::inst_name(obj).c_str(), "'.");
}

Shape to_shape(nb::handle obj, const char* op) {
  if (PyLong_Check(obj.ptr())) return {nb::cast<int64_t>(obj)};
  if (nb::isinstance<nb::tuple>(obj) || nb::isinstance<nb::list>(obj)) {
    Shape r;
    for (nb::handle h : obj) {
      KILN_CHECK(PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()), Type, "For '", op,
                 "', the shape must be a tuple of ints, but got an element of type '", nb::inst_name(h).c_str(), "'.");
      r.push_back(nb::cast<int64_t>(h));
    }
    return r;
  }
  KILN_FAIL(Type, "For '", op, "', the shape must be an int or a tuple of ints, but got '",
            nb::inst_name(obj).c_str(), "'.");
}

void bind_tensor(nb::module_& m) {
  nb::enum_<DType>(m, "DType")
      .value("Bool", DType::Bool).value("UInt8", DType::UInt8).value("Int8", DType::Int8)
      .value("Int16", DType::Int16).value("Int32", DType::Int32).value("Int64", DType::Int64)
      .value("UInt16", DType::UInt16).value("UInt32", DType::UInt32).value("UInt64", DType::UInt64)
      .value("Float16", DType::Float16).value("BFloat16", DType::BFloat16).value("Float32", DType::Float32)
      .value("Float64", DType::Float64).value("Complex64", DType::Complex64).value("Complex128", DType::Complex128)
      .def("__str__", [](DType t) { return std::string(dtype_name(t)); })
      .def("__repr__", [](DType t) { return std::string(dtype_name(t)); });
  m.def("dtype_itemsize", [](DType t) { return itemsize(t); });
  m.def("dtype_numpy_name", [](DType t) { return std::string(dtype_numpy_name(t)); });
  m.def("promote_types", [](DType a, DType b) { return promote_types(a, b); });

  m.def("_set_converter", [](nb::object f) { g_converter = f; });
  m.def("_set_tensor_factory", [](nb::object f) { g_factory = f; });
  m.def("_set_symbolic_shape_hook", [](nb::object f) {
    PyObject* old = g_symbolic_shape_hook;
    g_symbolic_shape_hook = f.is_none() ? nullptr : f.release().ptr();
    Py_XDECREF(old);
  }, nb::arg("hook").none(), "Sets (None: removes) the function (tensor, shape) -> shape that Tensor.shape calls for "
     "symbolic tensors (dynamic shapes: kiln/_compiler/dynamic.py). Set once at import.");
  m.def("_clear_converter", []() { g_converter = nb::object(); g_factory = nb::object(); });

  nb::class_<Tensor>(m, "Tensor", nb::dynamic_attr(), nb::is_weak_referenceable())
      .def("__init__",
           [](Tensor* self, nb::handle input_data, nb::handle dtype, nb::handle shape, nb::handle init, bool internal,
              bool const_arg) {
             KILN_CHECK(g_factory.is_valid(), Runtime, "Kiln: the tensor factory is not set (import kiln).");
             if (nb::isinstance<Tensor>(input_data) && dtype.is_none() && shape.is_none() && init.is_none()) {
               new (self) Tensor(nb::cast<const Tensor&>(input_data));
               return;
             }
             nb::object r = g_factory(input_data, dtype, shape, init);
             new (self) Tensor(nb::cast<const Tensor&>(r));
           },
           nb::arg("input_data") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("shape") = nb::none(),
           nb::arg("init") = nb::none(), nb::arg("internal") = false, nb::arg("const_arg") = false,
           "Tensor(input_data=None, dtype=None, shape=None, init=None): MindSpore's constructor (see kiln.Tensor).")
      .def_static("_from_numpy", [](nb::handle a) {
                    // Through the converter: any NumPy array (non-contiguous, big-endian) keeps its values, and an
                    // unsupported one (object, str) raises its TypeError.
                    KILN_CHECK(g_converter.is_valid(), Runtime, "Kiln: the Python converter is not set (import kiln).");
                    return from_ndarray(nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(g_converter(a, nb::none())));
                  },
                  "Copies a NumPy array (any layout and byte order) into a new Tensor of the same dtype and shape.")
      .def_static("_share_numpy", [](nb::ndarray<nb::c_contig, nb::device::cpu> a) { return share_ndarray(a); },
                  nb::arg("array").noconvert(),
                  "A Tensor sharing the memory of a C-contiguous, aligned, writable NumPy array of a Kiln dtype "
                  "(no copy; kiln.Tensor.from_numpy checks these conditions and copies otherwise).")
      .def("asnumpy", &to_numpy, "A NumPy array sharing this tensor's storage (BFloat16: of dtype ml_dtypes.bfloat16, as MindSpore's bfloat16 array).")
      .def_prop_ro("shape", [](const Tensor& t) -> nb::object {
        nb::tuple r = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(t.ndim())));
        for (int64_t i = 0; i < t.ndim(); ++i) PyTuple_SET_ITEM(r.ptr(), i, PyLong_FromLongLong(t.shape()[size_t(i)]));
        // A symbolic tensor's shape while a hook is set (dynamic shapes, kiln/_compiler/dynamic.py): the hook may
        // return the sizes of dynamic dimensions as symbolic ints. Concrete tensors never call it.
        if (t.is_symbolic() && g_symbolic_shape_hook != nullptr)
          return nb::borrow<nb::object>(g_symbolic_shape_hook)(nb::cast(t), r);
        return r;
      })
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("size", &Tensor::numel)
      .def_prop_ro("itemsize", [](const Tensor& t) { return itemsize(t.dtype()); })
      .def_prop_ro("nbytes", [](const Tensor& t) { return size_t(t.numel()) * itemsize(t.dtype()); })
      .def_prop_ro("strides", [](const Tensor& t) {
        std::vector<int64_t> s(t.strides());
        for (auto& v : s) v *= int64_t(itemsize(t.dtype()));
        return nb::tuple(nb::cast(s));
      })
      // Python operators in C++ (no Python frame per op). nb::is_operator(): an operand that is not tensor-like
      // gives NotImplemented, so Python tries the reflected operation and `t == "x"` is False, as MindSpore.
#define KILN_BINOP(PY, FN)                                                                                  \
      .def(PY, [](const Tensor& a, const TensorLike& b) { return with_op_name(#FN, [&] { return ops::FN(a, b.t); }); }, \
           nb::is_operator())
#define KILN_RBINOP(PY, FN)                                                                                 \
      .def(PY, [](const Tensor& a, const TensorLike& b) { return with_op_name(#FN, [&] { return ops::FN(b.t, a); }); }, \
           nb::is_operator())
// Arithmetic operators also take a Python int beyond Int64 (see big_int_operator).
#define KILN_ARITH(PY, RPY, FN)                                                                             \
      KILN_BINOP(PY, FN) KILN_RBINOP(RPY, FN)                                                               \
      .def(PY, [](nb::handle a, nb::int_ b) { return big_int_operator(#FN, a, b); }, nb::is_operator())      \
      .def(RPY, [](nb::handle a, nb::int_ b) { return big_int_operator(#FN, b, a); }, nb::is_operator())
      KILN_ARITH("__add__", "__radd__", add)
      KILN_ARITH("__sub__", "__rsub__", sub)
      KILN_ARITH("__mul__", "__rmul__", mul)
      KILN_ARITH("__truediv__", "__rtruediv__", div)
      KILN_ARITH("__floordiv__", "__rfloordiv__", floor_div)
      KILN_ARITH("__mod__", "__rmod__", mod)
      KILN_ARITH("__pow__", "__rpow__", pow)
#undef KILN_ARITH
      KILN_BINOP("__matmul__", matmul) KILN_RBINOP("__rmatmul__", matmul)
      KILN_BINOP("__lt__", less) KILN_BINOP("__le__", less_equal)
      KILN_BINOP("__gt__", greater) KILN_BINOP("__ge__", greater_equal)
      KILN_BINOP("__eq__", equal) KILN_BINOP("__ne__", not_equal)
// Comparisons with a Python int beyond Int64 are exact, as NumPy 2 (see _convert._big_int_call).
#define KILN_BIGCMP(PY, FN) \
      .def(PY, [](nb::handle a, nb::int_ b) { return big_int_operator(#FN, a, b); }, nb::is_operator())
      KILN_BIGCMP("__lt__", less) KILN_BIGCMP("__le__", less_equal)
      KILN_BIGCMP("__gt__", greater) KILN_BIGCMP("__ge__", greater_equal)
      KILN_BIGCMP("__eq__", equal) KILN_BIGCMP("__ne__", not_equal)
#undef KILN_BIGCMP
#undef KILN_BINOP
#undef KILN_RBINOP
      .def("__neg__", [](const Tensor& a) { return ops::neg(a); })
      .def("__abs__", [](const Tensor& a) { return ops::abs(a); })
      .def("__invert__", [](const Tensor& a) { return ops::logical_not(a); })
      .def("__hash__", [](nb::handle self) { return nb::hash(nb::int_(reinterpret_cast<intptr_t>(self.ptr()))); })
      .def_prop_ro("_id", &Tensor::id)
      .def_prop_ro("_weak", &Tensor::weak)
      .def_prop_ro("_symbolic", &Tensor::is_symbolic)
      .def_prop_ro("_has_grad_fn", [](const Tensor& t) { return t.impl()->grad_fn != nullptr; })
      .def_prop_ro("_tracked", [](const Tensor& t) { return t.impl()->grad_fn != nullptr || t.impl()->watch_count > 0; },
                   "True if an active grad transform records ops on this tensor (it has a tape node or is watched).")
      .def_prop_ro("_is_state_while_tracing", [](const Tensor& t) { return graph::is_state_while_tracing(t); },
                   "True for a concrete tensor made before the compiled function being traced (a graph capture).")
      .def("_rebind", [](Tensor& self, const Tensor& other) { self = other; },
           "Makes this Python object stand for `other` (Tensor.__setitem__'s functional update of a tensor that a "
           "grad transform records or a trace holds symbolically).")
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", &Tensor::contiguous)
      .def("_item", [](const Tensor& t) { check_readable(t, "reading the value"); return t.item(); }, "Element 0 as a Python float (ValueError unless exactly one element).")
      .def("_shares_storage", [](const Tensor& a, const Tensor& b) { return a.impl()->storage == b.impl()->storage; });

  // The caching allocator (kiln/allocator.h); kiln.runtime builds MindSpore's memory API on these.
  m.def("_allocator_stats", []() {
    auto s = allocator::stats();
    nb::dict d;
    d["bytes_in_use"] = s.bytes_in_use;
    d["bytes_cached"] = s.bytes_cached;
    d["peak_bytes_in_use"] = s.peak_bytes_in_use;
    d["peak_bytes_reserved"] = s.peak_bytes_reserved;
    d["system_allocs"] = s.system_allocs;
    d["system_frees"] = s.system_frees;
    d["cached_blocks"] = s.cached_blocks;
    d["cache_limit"] = s.cache_limit;
    return d;
  }, "The caching allocator's counters (bytes, block counts, the cache limit in force).");
  m.def("_empty_cache", []() {
    nb::gil_scoped_release release;  // munmap of a large cache takes a while
    allocator::empty_cache();
  }, "Returns every cached block to the system.");
  m.def("_set_cache_limit", [](std::optional<size_t> n) {
    return allocator::set_cache_limit(n ? *n : allocator::kAutoLimit);
  }, nb::arg("nbytes").none(), "Sets the bound on cached bytes (None: automatic); returns the previous bound.");
  m.def("_reset_peak_in_use", &allocator::reset_peak_in_use, "The peak bytes-in-use counter restarts from now.");
  m.def("_reset_peak_reserved", &allocator::reset_peak_reserved, "The peak reserved counter restarts from now.");
  m.def("_block_size", &allocator::block_size, nb::arg("nbytes"), "The block bytes a request of nbytes occupies.");

  // The per-op profiler (kiln/profiler.h); kiln.runtime.profile builds its context manager on these.
  m.def("_profiler_enable", &profiler::enable, "Turns per-op timing on (calls nest).");
  m.def("_profiler_disable", &profiler::disable, "Undoes one _profiler_enable (RuntimeError without one).");
  m.def("_profiler_enabled", &profiler::enabled, "True while per-op timing is on.");
  m.def("_profiler_snapshot", []() {
    nb::list rows;
    for (const auto& s : profiler::snapshot())
      rows.append(nb::make_tuple(op_name(s.op), profiler::mode_name(s.mode), s.calls, s.total_ns));
    return rows;
  }, "The cumulative per-op counters: a list of (op name, mode, calls, total ns).");
}

}  // namespace kiln::py
