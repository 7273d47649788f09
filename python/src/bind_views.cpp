// The view ops' Python entry points dispatched in C++ (issue 23): Tensor.__getitem__ with basic indices (ints,
// slices, None, Ellipsis) and Tensor.__setitem__'s in-place write through them, Tensor.reshape/view/transpose/
// permute/T/mT/squeeze/expand_dims/unsqueeze/flatten/ravel, and the fast paths of ops.reshape/transpose/squeeze/
// expand_dims/narrow/swapaxes/moveaxis/flip/slice/strided_slice/expand_as and mint.select; and _write_same, the
// write of the in-place Tensor methods (add_, mul_, exp_, zero_, ...) in plain PyNative.
//
// Each entry point handles the common case in one C++ call: a concrete tensor outside a trace, and arguments that
// are plain Python ints / tuples / lists of them (slices of such ints, None, one Ellipsis). It applies the same C++
// ops (StridedSlice, Reshape, Transpose) as the Python code of kiln/common/_indexing.py and tensor.py, so the tape
// records them (apply) as before, and records the view relation of kiln/common/_views.py (note_view) itself.
// Anything else (tensor or array indices, bools, NumPy integers, a tracing graph, symbolic shapes, and every
// argument that would raise) goes to the Python code unchanged: Tensor methods call the Python function registered
// with _set_view_fallbacks; the module functions (_view_reshape, ...) return NotImplemented and their Python
// callers run their own code. Errors therefore keep their types and texts: the C++ ops raise the same errors the
// Python code's calls to them raise, and every check of the Python code is left to the Python code.
#include <Python.h>

#include <limits>

#include "bindings.h"
#include "kiln/autodiff.h"
#include "kiln/graph.h"

namespace kiln::py {
namespace {

enum Fallback {
  kGetitem, kSetitem, kReshape, kTranspose, kT, kMT, kSqueeze, kExpandDims, kUnsqueeze, kFlatten, kRavel, kCount
};
const char* const kFallbackNames[kCount] = {"__getitem__", "__setitem__", "reshape",   "transpose", "T",      "mT",
                                            "squeeze",     "expand_dims", "unsqueeze", "flatten",   "ravel"};
// The Python implementations the methods fall back to (kiln/common/tensor.py registers them at import). Leaked on
// purpose, like bind_tensor's converters.
nb::object* const g_fallback = new nb::object[kCount];

// Interned attribute names and view-step kinds (created at module init, never freed).
PyObject* s_view;        // "_kiln_view": (root, root shape, chain) of a view
PyObject* s_views;       // "_kiln_views": the root's list of weak references to its views
PyObject* s_views_live;  // "_kiln_views_live": live views at the last pruning
PyObject* s_getitem;
PyObject* s_reshape;
PyObject* s_transpose;
PyObject* s_squeeze;
PyObject* s_expand_dims;

// The registered Python code for `f` (RuntimeError before kiln/common/tensor.py registered it: import kiln).
const nb::object& fallback(Fallback f) {
  KILN_CHECK(g_fallback[f].is_valid(), Runtime, "Kiln: Tensor.", kFallbackNames[f], " needs its Python code, which "
             "kiln registers at import (import kiln first).");
  return g_fallback[f];
}

PyObject* intern(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);
  if (o == nullptr) throw nb::python_error();
  return o;
}

// The fast path applies: a concrete tensor, no graph being traced (graph mode keeps the Python code: dynamic
// shapes, deferred writes and the view rules of a trace live there).
bool fast(const Tensor& x) { return !x.is_symbolic() && !graph::tracing(); }

Tensor& tensor_of(nb::handle h) { return *nb::inst_ptr<Tensor>(h); }

bool is_tensor(nb::handle h) { return nb::isinstance<Tensor>(h); }

// A plain Python int (not bool, not a NumPy integer) that fits int64.
bool exact_int(PyObject* o, int64_t& v) {
  if (!PyLong_CheckExact(o)) return false;
  int overflow = 0;
  long long r = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) return false;
  v = r;
  return true;
}

// A tuple or list (or subclass) of plain ints, or (with allow_int) one plain int.
bool int_list(PyObject* o, std::vector<int64_t>& out, bool allow_int) {
  int64_t v;
  if (allow_int && exact_int(o, v)) { out.assign(1, v); return true; }
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  out.resize(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!exact_int(items[i], out[size_t(i)])) return false;
  return true;
}

// The positional arguments as a shape: one tuple/list of ints, or ints (Tensor.reshape(2, 3)); none: ().
bool varargs_ints(const nb::args& args, std::vector<int64_t>& out) {
  const size_t n = args.size();
  if (n == 1 && !PyLong_CheckExact(args[0].ptr())) return int_list(args[0].ptr(), out, false);
  return int_list(args.ptr(), out, false);
}

nb::object shape_tuple(const Shape& s) {
  nb::object r = nb::steal(PyTuple_New(Py_ssize_t(s.size())));
  if (!r.is_valid()) throw nb::python_error();
  for (size_t i = 0; i < s.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(s[i]);
    if (v == nullptr) throw nb::python_error();
    PyTuple_SET_ITEM(r.ptr(), Py_ssize_t(i), v);
  }
  return r;
}

nb::object dict_of(nb::handle o) {
  PyObject* d = PyObject_GenericGetDict(o.ptr(), nullptr);
  if (d == nullptr) throw nb::python_error();
  return nb::steal(d);
}

// A borrowed item of dict d, or nullptr.
PyObject* dict_get(nb::handle d, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(d.ptr(), key);
  if (v == nullptr && PyErr_Occurred()) throw nb::python_error();
  return v;
}

void dict_set(nb::handle d, PyObject* key, nb::handle value) {
  if (PyDict_SetItem(d.ptr(), key, value.ptr()) != 0) throw nb::python_error();
}

// kiln/common/_views.py note_view for a concrete view made outside a trace: y (a new tensor object sharing x's
// storage) remembers x's root, the root's shape and the chain of view steps (x's chain plus `step`, a tuple
// (kind, args...) that _views turns into the NumPy and Kiln functions); the root remembers y weakly (the list is
// pruned of dead references as _views prunes it). A y that does not share x's storage (a copying reshape) is not
// a view and is left alone, as there.
void note_view(nb::handle x, nb::handle y, nb::handle step) {
  if (!tensor_of(y).impl() || tensor_of(y).impl()->storage != tensor_of(x).impl()->storage) return;
  nb::object xd = dict_of(x);
  PyObject* info = dict_get(xd, s_view);
  nb::handle root = x;
  PyObject* chain = nullptr;
  if (info != nullptr) {
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(info, 2)))
      KILN_FAIL(Runtime, "Kiln: a tensor's view record (_kiln_view) is not the (root, shape, chain) tuple of "
                         "kiln/common/_views.py.");
    root = PyTuple_GET_ITEM(info, 0);
    chain = PyTuple_GET_ITEM(info, 2);
  }
  const Tensor& rt = tensor_of(root);
  nb::object root_shape;
  if (rt.is_symbolic()) {  // (its shape may hold symbolic sizes: read as _views reads it)
    root_shape = nb::steal(PySequence_Tuple(root.attr("shape").ptr()));
    if (!root_shape.is_valid()) throw nb::python_error();
  } else {
    root_shape = shape_tuple(rt.shape());
  }
  const Py_ssize_t n = chain ? PyTuple_GET_SIZE(chain) : 0;
  nb::object new_chain = nb::steal(PyTuple_New(n + 1));
  if (!new_chain.is_valid()) throw nb::python_error();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* s = PyTuple_GET_ITEM(chain, i);
    Py_INCREF(s);
    PyTuple_SET_ITEM(new_chain.ptr(), i, s);
  }
  PyTuple_SET_ITEM(new_chain.ptr(), n, step.inc_ref().ptr());
  nb::object record = nb::steal(PyTuple_Pack(3, root.ptr(), root_shape.ptr(), new_chain.ptr()));
  if (!record.is_valid()) throw nb::python_error();
  dict_set(dict_of(y), s_view, record);

  nb::object rd = info != nullptr ? dict_of(root) : xd;
  PyObject* views = dict_get(rd, s_views);
  nb::object fresh;
  if (views == nullptr) {
    fresh = nb::steal(PyList_New(0));
    if (!fresh.is_valid()) throw nb::python_error();
    dict_set(rd, s_views, fresh);
    views = fresh.ptr();
  }
  if (!PyList_Check(views)) KILN_FAIL(Runtime, "Kiln: a tensor's _kiln_views is not a list.");
  nb::object ref = nb::steal(PyWeakref_NewRef(y.ptr(), nullptr));
  if (!ref.is_valid() || PyList_Append(views, ref.ptr()) != 0) throw nb::python_error();
  const Py_ssize_t len = PyList_GET_SIZE(views);
  if (len > 32) {
    PyObject* live_obj = dict_get(rd, s_views_live);
    long long live = 0;
    if (live_obj != nullptr) {
      live = PyLong_AsLongLong(live_obj);
      if (live == -1 && PyErr_Occurred()) throw nb::python_error();
    }
    if (len > 2 * live) {
      nb::object kept = nb::steal(PyList_New(0));
      if (!kept.is_valid()) throw nb::python_error();
      for (Py_ssize_t i = 0; i < len; ++i) {
        PyObject* r = PyList_GET_ITEM(views, i);
        PyObject* target = PyWeakref_Check(r) ? PyWeakref_GetObject(r) : Py_None;
        if (target != Py_None && PyList_Append(kept.ptr(), r) != 0) throw nb::python_error();
      }
      if (PyList_SetSlice(views, 0, len, kept.ptr()) != 0) throw nb::python_error();
      nb::object n_live = nb::steal(PyLong_FromSsize_t(PyList_GET_SIZE(views)));
      dict_set(rd, s_views_live, n_live);
    }
  }
}

nb::object step2(PyObject* kind, nb::handle a) {
  nb::object r = nb::steal(PyTuple_Pack(2, kind, a.ptr()));
  if (!r.is_valid()) throw nb::python_error();
  return r;
}
nb::object step3(PyObject* kind, nb::handle a, nb::handle b) {
  nb::object r = nb::steal(PyTuple_Pack(3, kind, a.ptr(), b.ptr()));
  if (!r.is_valid()) throw nb::python_error();
  return r;
}

// ---- basic indexing ----
// Python's slice.indices(n) for a slice of plain ints / None; false (the Python code raises or handles it) for
// a zero step, another component type, or a value outside int64.
bool slice_indices(PyObject* sl, int64_t n, int64_t& b, int64_t& e, int64_t& s, int64_t& len) {
  PySliceObject* p = reinterpret_cast<PySliceObject*>(sl);
  s = 1;
  if (p->step != Py_None && !exact_int(p->step, s)) return false;
  if (s == 0 || s == std::numeric_limits<int64_t>::min()) return false;
  const int64_t lower = s < 0 ? -1 : 0, upper = s < 0 ? n - 1 : n;
  auto bound = [&](PyObject* o, int64_t dflt, int64_t& v) {
    if (o == Py_None) { v = dflt; return true; }
    if (!exact_int(o, v)) return false;
    if (v < 0) {
      v += n;
      if (v < lower) v = lower;
    } else if (v > upper) {
      v = upper;
    }
    return true;
  };
  if (!bound(p->start, s < 0 ? upper : lower, b) || !bound(p->stop, s < 0 ? lower : upper, e)) return false;
  if (s > 0) len = b < e ? (e - b - 1) / s + 1 : 0;
  else len = e < b ? (b - e - 1) / (-s) + 1 : 0;
  return true;
}

// x[key] for a key of plain ints, slices, None and at most one Ellipsis (NumPy's basic indexing), as
// _indexing._getitem computes it: one StridedSlice over x's dims (when it is not the whole tensor) and one Reshape
// that inserts the new axes and drops the integer-indexed ones (when the key holds a None or an int); x itself for
// a key of whole slices and Ellipsis. Returns an invalid object for any other key or an index out of range (the
// Python code raises).
nb::object basic_getitem(nb::handle self, nb::handle key, bool note) {
  const Tensor& x = tensor_of(self);
  PyObject* k = key.ptr();
  PyObject* const* items = &k;
  Py_ssize_t n_items = 1;
  if (PyTuple_Check(k)) {
    items = reinterpret_cast<PyTupleObject*>(k)->ob_item;
    n_items = PyTuple_GET_SIZE(k);
  }
  const Shape& xs = x.shape();
  const int64_t nd = int64_t(xs.size());
  int64_t consumed = 0, n_ell = 0;
  for (Py_ssize_t i = 0; i < n_items; ++i) {
    PyObject* it = items[i];
    if (it == Py_None) continue;
    if (it == Py_Ellipsis) { ++n_ell; continue; }
    if (PyLong_CheckExact(it) || PySlice_Check(it)) { ++consumed; continue; }
    return nb::object();  // bools, arrays, lists, tensors, NumPy scalars...: the Python code
  }
  if (n_ell > 1 || consumed > nd) return nb::object();
  std::vector<int64_t> b(size_t(nd), 0), e(xs.begin(), xs.end()), st(size_t(nd), 1);
  Shape out;
  out.reserve(size_t(nd + n_items));
  bool sliced = false, reshaped = false;  // (a None or an int reshapes even when the shape ends up the same)
  int64_t dim = 0;
  auto whole = [&](int64_t count) {
    for (int64_t j = 0; j < count; ++j, ++dim) out.push_back(xs[size_t(dim)]);
  };
  for (Py_ssize_t i = 0; i < n_items; ++i) {
    PyObject* it = items[i];
    if (it == Py_None) { out.push_back(1); reshaped = true; continue; }
    if (it == Py_Ellipsis) { whole(nd - consumed); continue; }
    const int64_t n = xs[size_t(dim)];
    if (PyLong_CheckExact(it)) {
      int64_t v;
      if (!exact_int(it, v) || v < -n || v >= n) return nb::object();  // IndexError from the Python code
      if (v < 0) v += n;
      b[size_t(dim)] = v;
      e[size_t(dim)] = v + 1;
      sliced = sliced || n != 1;
      reshaped = true;
    } else {
      int64_t bb, ee, ss, len;
      if (!slice_indices(it, n, bb, ee, ss, len)) return nb::object();
      b[size_t(dim)] = bb;
      e[size_t(dim)] = ee;
      st[size_t(dim)] = ss;
      sliced = sliced || bb != 0 || ee != n || ss != 1;
      out.push_back(len);
    }
    ++dim;
  }
  if (n_ell == 0) whole(nd - dim);
  Tensor y = x;
  if (sliced) y = ops::strided_slice(x, b, e, st);
  if (reshaped) y = ops::reshape(y, out);
  if (y.impl() == x.impl()) return nb::borrow(self);
  nb::object r = nb::cast(std::move(y));
  if (note) note_view(self, r, step2(s_getitem, key));
  return r;
}

nb::object tensor_getitem(nb::handle self, nb::handle key) {
  if (fast(tensor_of(self))) {
    nb::object r = basic_getitem(self, key, true);
    if (r.is_valid()) return r;
  }
  return fallback(kGetitem)(self, key);
}

// x[key] = value in plain PyNative (no grad transform active, no trace) for a basic key and a value that is a
// Python float, bool, int within int64 or a concrete Tensor: the in-place write of _indexing._setitem_in_place
// (Assign into the view x[key], which shares x's storage; the temporary view is not recorded: it is dropped here).
// Everything else goes to _indexing.setitem (functional writes under a gradient or in a graph, advanced keys,
// other values, every error of the key).
void tensor_setitem(nb::handle self, nb::handle key, nb::handle value) {
  if (fast(tensor_of(self)) && autodiff::grad_level() == 0) {
    PyObject* v = value.ptr();
    int64_t unused;
    const bool simple = PyFloat_CheckExact(v) || PyBool_Check(v) || exact_int(v, unused) ||
                        (is_tensor(value) && !tensor_of(value).is_symbolic());
    if (simple) {
      nb::object view = basic_getitem(self, key, false);
      if (view.is_valid()) {
        Tensor val = to_tensor(value, "value");
        with_op_name("assign", [&] { ops::assign(tensor_of(view), val); });
        return;
      }
    }
  }
  fallback(kSetitem)(self, key, value);
}

// The fast path of every in-place Tensor method (kiln/common/_tensor_methods.py: add_, mul_, exp_, zero_, fill_,
// copy_, masked_fill_, ...): self <- value with the Assign kernel when the general path (_write's checks, then
// _indexing.assign) would do exactly that: plain PyNative (no grad transform active, no trace, neither tensor
// symbolic) and a Tensor value of self's dtype whose shape broadcasts to self's without changing it (a 0-d value
// fills self). The kernel writes self's storage through its strides (every view of self and a Parameter see the
// write) and keeps the old bytes for a tape node that saved them (autodiff::note_write). False (nothing written) for
// everything else: the caller takes the general path.
bool write_same(nb::handle self, nb::handle value) {
  if (!is_tensor(self) || !is_tensor(value)) return false;
  Tensor& x = tensor_of(self);
  const Tensor& v = tensor_of(value);
  if (!fast(x) || autodiff::grad_level() != 0 || v.is_symbolic() || v.dtype() != x.dtype()) return false;
  if (v.shape() != x.shape()) {
    const int64_t nv = v.ndim(), nx = x.ndim();
    if (nv > nx) return false;
    for (int64_t i = 1; i <= nv; ++i) {
      const int64_t dv = v.shape()[size_t(nv - i)];
      if (dv != 1 && dv != x.shape()[size_t(nx - i)]) return false;
    }
  }
  with_op_name("assign", [&] { ops::assign(x, v); });
  return true;
}

// ---- the other views ----
nb::object reshape_view(nb::handle self, const Shape& shape) {
  nb::object r = nb::cast(ops::reshape(tensor_of(self), shape));
  note_view(self, r, step2(s_reshape, shape_tuple(tensor_of(r).shape())));
  return r;
}

std::vector<int64_t> reversed_axes(int64_t nd) {
  std::vector<int64_t> p(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) p[size_t(i)] = nd - 1 - i;
  return p;
}

nb::object transpose_view(nb::handle self, const std::vector<int64_t>& perm) {
  nb::object r = nb::cast(ops::transpose(tensor_of(self), perm));
  note_view(self, r, step2(s_transpose, shape_tuple(perm)));
  return r;
}

nb::object squeeze_view(nb::handle self, const std::vector<int64_t>& axes) {
  nb::object r = nb::cast(ops::squeeze(tensor_of(self), axes));
  nb::object axes_list = nb::steal(PySequence_List(shape_tuple(axes).ptr()));
  if (!axes_list.is_valid()) throw nb::python_error();
  note_view(self, r, step3(s_squeeze, axes_list, shape_tuple(tensor_of(r).shape())));
  return r;
}

nb::object expand_dims_view(nb::handle self, int64_t axis) {
  nb::object r = nb::cast(ops::expand_dims(tensor_of(self), axis));
  note_view(self, r, step3(s_expand_dims, nb::int_(axis), shape_tuple(tensor_of(r).shape())));
  return r;
}

// Tensor.transpose(*axes): none, None or an empty tuple/list reverse the axes; ints or one tuple/list of ints.
bool transpose_args(const nb::args& args, int64_t nd, std::vector<int64_t>& perm) {
  if (args.size() == 0) { perm = reversed_axes(nd); return true; }
  if (args.size() == 1) {
    PyObject* a = args[0].ptr();
    if (a == Py_None || ((PyTuple_Check(a) || PyList_Check(a)) && PySequence_Fast_GET_SIZE(a) == 0)) {
      perm = reversed_axes(nd);
      return true;
    }
  }
  return varargs_ints(args, perm);
}

// Python's a % n for n > 0.
int64_t py_mod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

// Tensor.flatten(start_dim, end_dim)'s target shape (tensor.py _flatten, Python's modulo included).
Shape flatten_shape(const Shape& xs, int64_t start, int64_t end) {
  const int64_t nd = int64_t(xs.size());
  if (nd == 0) return {1};
  const int64_t s = py_mod(start, nd), e = py_mod(end, nd);
  Shape r(xs.begin(), xs.begin() + s);
  r.push_back(-1);
  r.insert(r.end(), xs.begin() + std::min(e + 1, nd), xs.end());
  return r;
}

nb::object call_fallback(Fallback f, nb::handle self, const nb::args& args, const nb::kwargs& kwargs) {
  return fallback(f)(self, *args, **kwargs);
}

void def_method(nb::handle cls, const char* name, const char* doc,
                nb::object (*fn)(nb::handle, nb::args, nb::kwargs)) {
  nb::cpp_function_def(fn, nb::scope(cls), nb::name(name), nb::is_method(), nb::arg("args"), nb::arg("kwargs"),
                       doc);
}

}  // namespace

void bind_views(nb::module_& m) {
  s_view = intern("_kiln_view");
  s_views = intern("_kiln_views");
  s_views_live = intern("_kiln_views_live");
  s_getitem = intern("getitem");
  s_reshape = intern("reshape");
  s_transpose = intern("transpose");
  s_squeeze = intern("squeeze");
  s_expand_dims = intern("expand_dims");

  m.def("_set_view_fallbacks", [](nb::dict fns) {
    for (int i = 0; i < kCount; ++i) {
      KILN_CHECK(fns.contains(kFallbackNames[i]), Value, "Kiln: _set_view_fallbacks needs '", kFallbackNames[i],
                 "'.");
      g_fallback[i] = fns[kFallbackNames[i]];
    }
  }, nb::arg("fallbacks"), "Sets the Python implementations (name -> function(self, *args, **kwargs)) that the "
     "C++ Tensor view methods call for the arguments their fast path does not handle (kiln/common/tensor.py).");

  m.def("_write_same", &write_same, nb::arg("tensor").none(), nb::arg("value").none(),
        "The in-place methods' fast path: writes `value` into `tensor` (the Assign kernel) and returns True when "
        "both are Tensors of the same dtype and value's shape broadcasts to tensor's, in plain PyNative (no grad "
        "transform, no trace, not symbolic); else writes nothing and returns False (kiln/common/_tensor_methods.py "
        "then takes the general path).");

  nb::handle cls = nb::type<Tensor>();
  nb::cpp_function_def(&tensor_getitem, nb::scope(cls), nb::name("__getitem__"), nb::is_method(), nb::arg("key").none(),
                       "x[key] with NumPy semantics (kiln/common/_indexing.py getitem; basic indices in C++).");
  nb::cpp_function_def(&tensor_setitem, nb::scope(cls), nb::name("__setitem__"), nb::is_method(),
                       nb::arg("key").none(), nb::arg("value").none(),
                       "x[key] = value with NumPy semantics (kiln/common/_indexing.py setitem; the in-place write of "
                       "basic indices in C++).");
  def_method(cls, "reshape", "Tensor.reshape(*shape): a tensor of the same data with a new shape (one dim may be "
             "-1); a view when the strides allow. TypeError for a non-int shape, ValueError for a size mismatch.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               std::vector<int64_t> s;
               if (kw.size() == 0 && fast(tensor_of(self)) && varargs_ints(args, s)) return reshape_view(self, s);
               return call_fallback(kReshape, self, args, kw);
             });
  def_method(cls, "view", "Tensor.view(*shape): the same as Tensor.reshape.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               std::vector<int64_t> s;
               if (kw.size() == 0 && fast(tensor_of(self)) && varargs_ints(args, s)) return reshape_view(self, s);
               return call_fallback(kReshape, self, args, kw);
             });
  const char* tdoc = "Tensor.transpose(*axes): the dims permuted (output dim i is input dim axes[i]; no axes: "
                     "reversed); a view. ValueError for an axes list that is not a permutation.";
  auto transpose_m = [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
    std::vector<int64_t> p;
    const Tensor& x = tensor_of(self);
    if (kw.size() == 0 && fast(x) && transpose_args(args, x.ndim(), p)) return transpose_view(self, p);
    return call_fallback(kTranspose, self, args, kw);
  };
  def_method(cls, "transpose", tdoc, transpose_m);
  def_method(cls, "permute", "Tensor.permute(*axes): the same as Tensor.transpose.", transpose_m);
  def_method(cls, "squeeze", "Tensor.squeeze(axis=None): the size-1 dims removed (all, or those in axis; ValueError "
             "if one is not 1); a view.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               std::vector<int64_t> axes;
               if (kw.size() == 0 && args.size() <= 1 && fast(tensor_of(self)) &&
                   (args.size() == 0 || args[0].is_none() || int_list(args[0].ptr(), axes, true)))
                 return squeeze_view(self, axes);
               return call_fallback(kSqueeze, self, args, kw);
             });
  def_method(cls, "expand_dims", "Tensor.expand_dims(axis): a size-1 dim inserted at axis; a view.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               int64_t a;
               if (kw.size() == 0 && args.size() == 1 && fast(tensor_of(self)) && exact_int(args[0].ptr(), a))
                 return expand_dims_view(self, a);
               return call_fallback(kExpandDims, self, args, kw);
             });
  def_method(cls, "unsqueeze", "Tensor.unsqueeze(dim): the same as Tensor.expand_dims.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               int64_t a;
               if (kw.size() == 0 && args.size() == 1 && fast(tensor_of(self)) && exact_int(args[0].ptr(), a))
                 return expand_dims_view(self, a);
               return call_fallback(kUnsqueeze, self, args, kw);
             });
  def_method(cls, "flatten", "Tensor.flatten(start_dim=0, end_dim=-1): dims start_dim..end_dim joined into one "
             "(a 0-d tensor gives shape (1,)); a view when the strides allow.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               std::vector<int64_t> se;
               if (kw.size() == 0 && args.size() <= 2 && fast(tensor_of(self)) && int_list(args.ptr(), se, false)) {
                 const Tensor& x = tensor_of(self);
                 return reshape_view(self, flatten_shape(x.shape(), se.size() > 0 ? se[0] : 0,
                                                         se.size() > 1 ? se[1] : -1));
               }
               return call_fallback(kFlatten, self, args, kw);
             });
  def_method(cls, "ravel", "Tensor.ravel(): the tensor flattened to 1-D; a view when the strides allow.",
             [](nb::handle self, nb::args args, nb::kwargs kw) -> nb::object {
               if (kw.size() == 0 && args.size() == 0 && fast(tensor_of(self))) return reshape_view(self, {-1});
               return call_fallback(kRavel, self, args, kw);
             });
  nb::object t_prop = nb::cpp_function([](nb::handle self) -> nb::object {
    const Tensor& x = tensor_of(self);
    if (fast(x)) return transpose_view(self, reversed_axes(x.ndim()));
    return fallback(kT)(self);
  }, nb::is_method());
  nb::object mt_prop = nb::cpp_function([](nb::handle self) -> nb::object {
    const Tensor& x = tensor_of(self);
    const int64_t nd = x.ndim();
    if (fast(x) && nd >= 2) {
      std::vector<int64_t> p(static_cast<size_t>(nd));
      for (int64_t i = 0; i < nd; ++i) p[size_t(i)] = i;
      std::swap(p[size_t(nd - 2)], p[size_t(nd - 1)]);
      return transpose_view(self, p);
    }
    return fallback(kMT)(self);
  }, nb::is_method());
  nb::handle property = reinterpret_cast<PyObject*>(&PyProperty_Type);
  cls.attr("T") = property(t_prop, nb::none(), nb::none(), "The tensor with its dims reversed (a view).");
  cls.attr("mT") = property(mt_prop, nb::none(), nb::none(),
                            "The tensor with its last two dims swapped (a view; rank >= 2).");

  // Module-level fast paths for kiln.ops: NotImplemented where the Python caller must run its own code.
  m.def("_view_reshape", [](nb::handle x, nb::handle shape) -> nb::object {
    std::vector<int64_t> s;
    if (is_tensor(x) && fast(tensor_of(x)) && int_list(shape.ptr(), s, true)) return reshape_view(x, s);
    return nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("shape").none(), "ops.reshape's fast path (NotImplemented: use the Python code).");
  m.def("_view_transpose", [](nb::handle x, nb::handle perm) -> nb::object {
    std::vector<int64_t> p;
    if (is_tensor(x) && fast(tensor_of(x)) && int_list(perm.ptr(), p, true)) {
      if (p.empty()) p = reversed_axes(tensor_of(x).ndim());  // Tensor.transpose(()) reverses
      return transpose_view(x, p);
    }
    return nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("perm").none(), "ops.transpose's fast path (NotImplemented: use the Python code).");
  m.def("_view_squeeze", [](nb::handle x, nb::handle axis) -> nb::object {
    std::vector<int64_t> axes;
    if (is_tensor(x) && fast(tensor_of(x)) && (axis.is_none() || int_list(axis.ptr(), axes, true)))
      return squeeze_view(x, axes);
    return nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("axis").none(), "ops.squeeze's fast path (NotImplemented: use the Python code).");
  m.def("_view_expand_dims", [](nb::handle x, nb::handle axis) -> nb::object {
    int64_t a;
    if (is_tensor(x) && fast(tensor_of(x)) && exact_int(axis.ptr(), a)) return expand_dims_view(x, a);
    return nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("axis").none(), "ops.expand_dims's fast path (NotImplemented: use the Python code).");
  m.def("_view_narrow", [](nb::handle x, nb::handle axis, nb::handle start, nb::handle length) -> nb::object {
    // ops.narrow: the slice [start, start + length) of `axis`; one StridedSlice, not recorded as a view (as the
    // Python code). Every argument that the Python code rejects returns NotImplemented.
    int64_t a, s, l;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !exact_int(axis.ptr(), a) || !exact_int(start.ptr(), s) ||
        !exact_int(length.ptr(), l))
      return nb::borrow(Py_NotImplemented);
    const Tensor& t = tensor_of(x);
    const int64_t nd = t.ndim();
    if (nd == 0 || a < -nd || a >= nd) return nb::borrow(Py_NotImplemented);
    if (a < 0) a += nd;
    const int64_t n = t.shape()[size_t(a)];
    if (s < 0 || s > n || l < 0 || l > n - s) return nb::borrow(Py_NotImplemented);
    std::vector<int64_t> b(size_t(nd), 0), e(t.shape().begin(), t.shape().end()), st(size_t(nd), 1);
    b[size_t(a)] = s;
    e[size_t(a)] = s + l;
    return nb::cast(ops::strided_slice(t, b, e, st));
  }, nb::arg("x").none(), nb::arg("axis").none(), nb::arg("start").none(), nb::arg("length").none(),
     "ops.narrow's fast path (NotImplemented: use the Python code).");
  // ops.swapaxes/swapdims and ops.moveaxis/movedim with two plain ints in range on a tensor of rank >= 1: one
  // Transpose, not recorded as a view (as their Python code).
  m.def("_view_swap", [](nb::handle x, nb::handle a0, nb::handle a1) -> nb::object {
    int64_t a, b;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !exact_int(a0.ptr(), a) || !exact_int(a1.ptr(), b))
      return nb::borrow(Py_NotImplemented);
    const int64_t nd = tensor_of(x).ndim();
    if (nd == 0 || a < -nd || a >= nd || b < -nd || b >= nd) return nb::borrow(Py_NotImplemented);
    std::vector<int64_t> perm(static_cast<size_t>(nd));
    for (int64_t i = 0; i < nd; ++i) perm[size_t(i)] = i;
    std::swap(perm[size_t(py_mod(a, nd))], perm[size_t(py_mod(b, nd))]);
    return nb::cast(ops::transpose(tensor_of(x), perm));
  }, nb::arg("x").none(), nb::arg("axis0").none(), nb::arg("axis1").none(),
     "ops.swapaxes's fast path (NotImplemented: use the Python code).");
  m.def("_view_moveaxis", [](nb::handle x, nb::handle source, nb::handle destination) -> nb::object {
    int64_t s, d;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !exact_int(source.ptr(), s) || !exact_int(destination.ptr(), d))
      return nb::borrow(Py_NotImplemented);
    const int64_t nd = tensor_of(x).ndim();
    if (nd == 0 || s < -nd || s >= nd || d < -nd || d >= nd) return nb::borrow(Py_NotImplemented);
    s = py_mod(s, nd);
    d = py_mod(d, nd);
    std::vector<int64_t> order;
    for (int64_t i = 0; i < nd; ++i)
      if (i != s) order.push_back(i);
    order.insert(order.begin() + d, s);
    return nb::cast(ops::transpose(tensor_of(x), order));
  }, nb::arg("x").none(), nb::arg("source").none(), nb::arg("destination").none(),
     "ops.moveaxis's fast path for one axis (NotImplemented: use the Python code).");
  // ops.flip/reverse (and fliplr/flipud through flip): x[key] with a reversing slice on each axis of `dims` (an int
  // or a tuple/list of ints, in range, not repeated), recorded as that getitem view, as the Python code.
  m.def("_view_flip", [](nb::handle x, nb::handle dims) -> nb::object {
    std::vector<int64_t> ds;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !int_list(dims.ptr(), ds, true)) return nb::borrow(Py_NotImplemented);
    const int64_t nd = tensor_of(x).ndim();
    if (nd == 0) return nb::borrow(Py_NotImplemented);
    std::vector<bool> seen(size_t(nd), false);
    for (int64_t d : ds) {
      if (d < -nd || d >= nd || seen[size_t(py_mod(d, nd))]) return nb::borrow(Py_NotImplemented);
      seen[size_t(py_mod(d, nd))] = true;
    }
    nb::object key = nb::steal(PyTuple_New(Py_ssize_t(nd)));
    if (!key.is_valid()) throw nb::python_error();
    nb::object minus_one = nb::int_(-1);
    for (int64_t i = 0; i < nd; ++i) {
      PyObject* sl = PySlice_New(nullptr, nullptr, seen[size_t(i)] ? minus_one.ptr() : nullptr);
      if (sl == nullptr) throw nb::python_error();
      PyTuple_SET_ITEM(key.ptr(), Py_ssize_t(i), sl);
    }
    nb::object r = basic_getitem(x, key, true);
    return r.is_valid() ? r : nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("dims").none(), "ops.flip's fast path (NotImplemented: use the Python code).");
  // ops.slice(x, begin, size): x[begin[i]:begin[i] + size[i], ...] (size -1: to the end), recorded as that getitem
  // view, for begin/size tuples/lists of plain ints of x's rank that fit (the Python code raises otherwise).
  m.def("_view_slice", [](nb::handle x, nb::handle begin, nb::handle size) -> nb::object {
    std::vector<int64_t> b, sz;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !int_list(begin.ptr(), b, false) || !int_list(size.ptr(), sz, false))
      return nb::borrow(Py_NotImplemented);
    const Shape& xs = tensor_of(x).shape();
    if (b.size() != xs.size() || sz.size() != xs.size()) return nb::borrow(Py_NotImplemented);
    nb::object key = nb::steal(PyTuple_New(Py_ssize_t(xs.size())));
    if (!key.is_valid()) throw nb::python_error();
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t d = xs[i], e = sz[i] == -1 ? d : b[i] + sz[i];
      if (b[i] < 0 || sz[i] < -1 || e > d || b[i] > d) return nb::borrow(Py_NotImplemented);
      nb::object lo = nb::int_(b[i]), hi = nb::int_(e);
      PyObject* sl = PySlice_New(lo.ptr(), hi.ptr(), nullptr);
      if (sl == nullptr) throw nb::python_error();
      PyTuple_SET_ITEM(key.ptr(), Py_ssize_t(i), sl);
    }
    nb::object r = basic_getitem(x, key, true);
    return r.is_valid() ? r : nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("begin").none(), nb::arg("size").none(),
     "ops.slice's fast path (NotImplemented: use the Python code).");
  // ops.strided_slice (TensorFlow's masks): the key of its Python code (Ellipsis, None, an int or a slice per
  // position) built here and indexed as x[key], recorded as that getitem view; plain ints only.
  m.def("_view_strided_slice", [](nb::handle x, nb::handle begin, nb::handle end, nb::handle strides,
                                  nb::handle begin_mask, nb::handle end_mask, nb::handle ellipsis_mask,
                                  nb::handle new_axis_mask, nb::handle shrink_axis_mask) -> nb::object {
    std::vector<int64_t> b, e, st;
    int64_t bm, em, ellm, nam, sam;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !int_list(begin.ptr(), b, false) || !int_list(end.ptr(), e, false) ||
        !int_list(strides.ptr(), st, false) || e.size() != b.size() || st.size() != b.size() ||
        !exact_int(begin_mask.ptr(), bm) || !exact_int(end_mask.ptr(), em) || !exact_int(ellipsis_mask.ptr(), ellm) ||
        !exact_int(new_axis_mask.ptr(), nam) || !exact_int(shrink_axis_mask.ptr(), sam) || bm < 0 || em < 0 ||
        ellm < 0 || nam < 0 || sam < 0 || __builtin_popcountll(static_cast<unsigned long long>(ellm)) > 1)
      return nb::borrow(Py_NotImplemented);
    nb::object key = nb::steal(PyTuple_New(Py_ssize_t(b.size())));
    if (!key.is_valid()) throw nb::python_error();
    for (size_t i = 0; i < b.size(); ++i) {
      const int64_t bit = i < 63 ? int64_t(1) << i : 0;
      PyObject* item;
      if (ellm & bit) {
        item = Py_NewRef(Py_Ellipsis);
      } else if (nam & bit) {
        item = Py_NewRef(Py_None);
      } else if (sam & bit) {
        item = PyLong_FromLongLong(!(bm & bit) ? b[i] : (st[i] > 0 ? 0 : -1));
      } else {
        if (st[i] == 0) return nb::borrow(Py_NotImplemented);
        nb::object lo = (bm & bit) ? nb::none() : nb::object(nb::int_(b[i]));
        nb::object hi = (em & bit) ? nb::none() : nb::object(nb::int_(e[i]));
        nb::object step = nb::int_(st[i]);
        item = PySlice_New(lo.ptr(), hi.ptr(), step.ptr());
      }
      if (item == nullptr) throw nb::python_error();
      PyTuple_SET_ITEM(key.ptr(), Py_ssize_t(i), item);
    }
    nb::object r = basic_getitem(x, key, true);
    return r.is_valid() ? r : nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("begin").none(), nb::arg("end").none(), nb::arg("strides").none(),
     nb::arg("begin_mask").none(), nb::arg("end_mask").none(), nb::arg("ellipsis_mask").none(),
     nb::arg("new_axis_mask").none(), nb::arg("shrink_axis_mask").none(),
     "ops.strided_slice's fast path (NotImplemented: use the Python code).");
  // ops.expand_as(x, other): BroadcastTo other's shape where x broadcasts to it (the Python code raises otherwise).
  m.def("_view_expand_as", [](nb::handle x, nb::handle other) -> nb::object {
    if (!is_tensor(x) || !is_tensor(other) || !fast(tensor_of(x)) || tensor_of(other).is_symbolic())
      return nb::borrow(Py_NotImplemented);
    const Shape &xs = tensor_of(x).shape(), &os = tensor_of(other).shape();
    if (os.size() < xs.size()) return nb::borrow(Py_NotImplemented);
    for (size_t i = 1; i <= xs.size(); ++i) {
      const int64_t a = xs[xs.size() - i], o = os[os.size() - i];
      if (a != 1 && a != o) return nb::borrow(Py_NotImplemented);
    }
    return nb::cast(ops::broadcast_to(tensor_of(x), os));
  }, nb::arg("x").none(), nb::arg("other").none(), "ops.expand_as's fast path (NotImplemented: use the Python code).");
  m.def("_view_select", [](nb::handle x, nb::handle dim, nb::handle index) -> nb::object {
    // mint.select: x[(slice(None),) * dim + (index,)], recorded as that getitem view.
    int64_t d, i;
    if (!is_tensor(x) || !fast(tensor_of(x)) || !exact_int(dim.ptr(), d) || !exact_int(index.ptr(), i))
      return nb::borrow(Py_NotImplemented);
    const int64_t nd = tensor_of(x).ndim();
    if (nd == 0 || d < -nd || d >= nd) return nb::borrow(Py_NotImplemented);
    if (d < 0) d += nd;
    const int64_t n = tensor_of(x).shape()[size_t(d)];
    if (i < -n || i >= n) return nb::borrow(Py_NotImplemented);
    nb::object key = nb::steal(PyTuple_New(Py_ssize_t(d + 1)));
    if (!key.is_valid()) throw nb::python_error();
    for (int64_t j = 0; j < d; ++j) {
      PyObject* sl = PySlice_New(nullptr, nullptr, nullptr);
      if (sl == nullptr) throw nb::python_error();
      PyTuple_SET_ITEM(key.ptr(), Py_ssize_t(j), sl);
    }
    PyTuple_SET_ITEM(key.ptr(), Py_ssize_t(d), index.inc_ref().ptr());
    nb::object r = basic_getitem(x, key, true);
    return r.is_valid() ? r : nb::borrow(Py_NotImplemented);
  }, nb::arg("x").none(), nb::arg("dim").none(), nb::arg("index").none(),
     "mint.select's fast path (NotImplemented: use the Python code).");
}

}  // namespace kiln::py
