// Shape ops: Reshape, Transpose, BroadcastTo, StridedSlice, Diagonal (views: their outputs share the input's storage, built
// by OpDef::direct, and are still recorded on the tape by apply), Concat, StridedSliceGrad and DiagEmbed (copies), and the
// composite API functions expand_dims, squeeze, stack and split built from them.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using ops::Axes;

// ---- Reshape ----
// The target shape with its -1 resolved. ValueError if the element counts differ, on several -1, or on a
// negative size other than -1.
Shape resolve_shape(const Shape& in, const Shape& tgt) {
  Shape s = tgt;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      KILN_CHECK(infer_at < 0, Value, "For 'Reshape', only one dimension of the target shape can be -1, but got ",
                 shape_str(tgt), ".");
      infer_at = int64_t(i);
    } else {
      KILN_CHECK(s[i] >= 0, Value, "For 'Reshape', each dimension of the target shape must be -1 or >= 0, but got ",
                 shape_str(tgt), ".");
      known *= s[i];
    }
  }
  const int64_t n = numel(in);
  if (infer_at >= 0) {
    KILN_CHECK(known != 0, Value, "For 'Reshape', the -1 in the target shape ", shape_str(tgt),
               " can not be inferred when the other dimensions have 0 elements (input shape ", shape_str(in), ").");
    KILN_CHECK(n % known == 0, Value, "For 'Reshape', the input of shape ", shape_str(in), " (", n,
               " elements) can not be reshaped to ", shape_str(tgt), ".");
    s[size_t(infer_at)] = n / known;
  } else {
    KILN_CHECK(known == n, Value, "For 'Reshape', the input of shape ", shape_str(in), " (", n,
               " elements) can not be reshaped to ", shape_str(tgt), " (", known, " elements).");
  }
  return s;
}

// Strides that let a tensor with `os`/`ost` be viewed with shape `ns` without a copy; false if there are none.
// (Groups of old dims that multiply to groups of new dims must be contiguous among themselves.)
bool view_strides(const Shape& os_in, const Strides& ost_in, const Shape& ns, Strides& nst) {
  nst.assign(ns.size(), 1);
  if (numel(ns) == 0) { nst = contiguous_strides(ns); return true; }
  Shape os;
  Strides ost;
  for (size_t i = 0; i < os_in.size(); ++i)
    if (os_in[i] != 1) { os.push_back(os_in[i]); ost.push_back(ost_in[i]); }
  const size_t ond = os.size(), nnd = ns.size();
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nnd && oi < ond) {
    int64_t np = ns[ni], op = os[oi];
    while (np != op) {
      if (np < op) np *= ns[nj++];
      else op *= os[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != os[k + 1] * ost[k + 1]) return false;
    nst[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) nst[k - 1] = nst[k] * ns[k];
    ni = nj++;
    oi = oj++;
  }
  for (size_t k = ni; k < nnd; ++k) nst[k] = 1;  // trailing size-1 dims
  return true;
}

std::vector<TensorMeta> infer_reshape(const TV& in, const Attrs& a) {
  return {{resolve_shape(in[0].shape(), a.ints("shape")), in[0].dtype()}};
}
TV direct_reshape(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  Shape s = resolve_shape(x.shape(), a.ints("shape"));
  Strides st;
  if (view_strides(x.shape(), x.strides(), s, st)) return {x.view(s, st, x.offset())};
  Tensor c = Tensor::empty(x.shape(), x.dtype());
  copy_into(x, c);
  return {c.view(s, contiguous_strides(s), 0)};
}
TV bp_reshape(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::reshape(g[0], in[0].shape())}; }

// ---- Transpose ----
std::vector<int64_t> check_perm(const Axes& perm, int64_t nd) {
  KILN_CHECK(int64_t(perm.size()) == nd, Value, "For 'Transpose', the perm must have one entry per input dimension (",
             nd, "), but got ", shape_str(perm), ".");
  std::vector<int64_t> p(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    p[i] = normalize_axis(perm[i], nd, "Transpose");
    KILN_CHECK(!seen[size_t(p[i])], Value, "For 'Transpose', the perm must be a permutation of [0, ", nd,
               "), but got ", shape_str(perm), ".");
    seen[size_t(p[i])] = true;
  }
  return p;
}
std::vector<TensorMeta> infer_transpose(const TV& in, const Attrs& a) {
  auto p = check_perm(a.ints("perm"), in[0].ndim());
  Shape s;
  for (int64_t d : p) s.push_back(in[0].shape()[size_t(d)]);
  return {{s, in[0].dtype()}};
}
TV direct_transpose(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  auto p = check_perm(a.ints("perm"), x.ndim());
  Shape s;
  Strides st;
  for (int64_t d : p) { s.push_back(x.shape()[size_t(d)]); st.push_back(x.strides()[size_t(d)]); }
  return {x.view(s, st, x.offset())};
}
TV bp_transpose(const TV& in, const TV&, const TV& g, const Attrs& a) {
  auto p = check_perm(a.ints("perm"), in[0].ndim());
  Axes inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[size_t(p[i])] = int64_t(i);
  return {ops::transpose(g[0], inv)};
}

// ---- BroadcastTo ----
Shape resolve_broadcast(const Shape& xs, const Shape& tgt) {
  KILN_CHECK(tgt.size() >= xs.size(), Value, "For 'BroadcastTo', the target shape ", shape_str(tgt),
             " has fewer dimensions than the input shape ", shape_str(xs), ".");
  Shape s = tgt;
  const size_t lead = tgt.size() - xs.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      KILN_CHECK(i >= lead, Value, "For 'BroadcastTo', -1 in the target shape ", shape_str(tgt),
                 " can only stand for an existing dimension of the input shape ", shape_str(xs), ".");
      s[i] = xs[i - lead];
    }
    KILN_CHECK(s[i] >= 0, Value, "For 'BroadcastTo', the target shape ", shape_str(tgt), " has a negative dimension.");
    if (i >= lead) {
      int64_t d = xs[i - lead];
      KILN_CHECK(d == s[i] || d == 1, Value, "For 'BroadcastTo', the input shape ", shape_str(xs),
                 " can not broadcast to ", shape_str(tgt), ": dimension ", i, " is ", d, " vs ", s[i], ".");
    }
  }
  return s;
}
std::vector<TensorMeta> infer_broadcast(const TV& in, const Attrs& a) {
  return {{resolve_broadcast(in[0].shape(), a.ints("shape")), in[0].dtype()}};
}
TV direct_broadcast(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  Shape s = resolve_broadcast(x.shape(), a.ints("shape"));
  return {x.view(s, cpu::broadcast_strides(x.shape(), x.strides(), s), x.offset())};
}
TV bp_broadcast(const TV& in, const TV&, const TV& g, const Attrs&) { return {ops::sum_to(g[0], in[0].shape())}; }

// ---- StridedSlice: attrs begin, end, step (one per leading axis; missing axes are taken whole) ----
// The values are normalized as Python's slice.indices(dim) returns them: step > 0: 0 <= begin, end <= dim;
// step < 0: -1 <= begin, end <= dim - 1, where end = -1 means "through index 0". Values outside are clamped.
struct SliceDims {
  Shape shape;
  Strides strides;
  int64_t offset;
};
SliceDims slice_dims(const Shape& xs, const Strides& xst, int64_t xoff, const Attrs& a) {
  const Axes &b = a.ints("begin"), &e = a.ints("end"), &st = a.ints("step");
  KILN_CHECK(b.size() == e.size() && b.size() == st.size(), Value, "For 'StridedSlice', begin, end and step must have the same length, but got ",
             b.size(), ", ", e.size(), " and ", st.size(), ".");
  KILN_CHECK(b.size() <= xs.size(), Value, "For 'StridedSlice', begin/end/step have ", b.size(),
             " entries but the input has only ", xs.size(), " dimensions (shape ", shape_str(xs), ").");
  SliceDims r{xs, xst, xoff};
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t dim = xs[i], s = st[i];
    KILN_CHECK(s != 0, Value, "For 'StridedSlice', the step must not be 0 (axis ", i, ").");
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    int64_t bb = std::clamp(b[i], lo, hi), ee = std::clamp(e[i], lo, hi);
    int64_t len = s > 0 ? (ee > bb ? (ee - bb + s - 1) / s : 0) : (bb > ee ? (bb - ee - s - 1) / (-s) : 0);
    r.shape[i] = len;
    r.strides[i] = xst[i] * s;
    if (len > 0) r.offset += bb * xst[i];
  }
  return r;
}
std::vector<TensorMeta> infer_slice(const TV& in, const Attrs& a) {
  return {{slice_dims(in[0].shape(), in[0].strides(), 0, a).shape, in[0].dtype()}};
}
TV direct_slice(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  SliceDims d = slice_dims(x.shape(), x.strides(), x.offset(), a);
  return {x.view(d.shape, d.strides, d.offset)};
}
Attrs slice_grad_attrs(const Shape& shape, const Attrs& a) {
  return {{"shape", shape}, {"begin", a.ints("begin")}, {"end", a.ints("end")}, {"step", a.ints("step")}};
}
TV bp_slice(const TV& in, const TV&, const TV& g, const Attrs& a) {
  return {apply1(OpId::StridedSliceGrad, {g[0]}, slice_grad_attrs(in[0].shape(), a))};
}

// ---- StridedSliceGrad: g scattered into zeros of attr `shape` at the slice begin/end/step ----
std::vector<TensorMeta> infer_slice_grad(const TV& in, const Attrs& a) {
  const Shape& s = a.ints("shape");
  Shape sl = slice_dims(s, contiguous_strides(s), 0, a).shape;
  KILN_CHECK(sl == in[0].shape(), Value, "For 'StridedSliceGrad', the gradient of shape ", shape_str(in[0].shape()),
             " does not match the slice shape ", shape_str(sl), ".");
  return {{s, in[0].dtype()}};
}
void run_slice_grad(const TV& in, TV& out, const Attrs& a) {
  Tensor& o = out[0];
  std::memset(o.raw_data(), 0, size_t(o.numel()) * itemsize(o.dtype()));
  SliceDims d = slice_dims(o.shape(), o.strides(), o.offset(), a);
  copy_into(in[0], o.view(d.shape, d.strides, d.offset));
}
TV bp_slice_grad(const TV&, const TV&, const TV& g, const Attrs& a) {
  return {ops::strided_slice(g[0], a.ints("begin"), a.ints("end"), a.ints("step"))};
}

// ---- Diagonal: attrs offset, dim1, dim2; a view (PyTorch's torch.diagonal layout) ----
// The (offset) diagonal of the matrices spanned by dim1 and dim2: those dims are removed and the diagonal is the
// last dim, stride stride(dim1) + stride(dim2). Offset past the matrix: length 0.
struct DiagDims {
  Shape shape;
  Strides strides;
  int64_t offset;
};
DiagDims diag_dims(const Shape& xs, const Strides& xst, int64_t xoff, const Attrs& a, const char* op) {
  const int64_t nd = int64_t(xs.size());
  KILN_CHECK(nd >= 2, Value, "For '", op, "', the input must have rank >= 2, but got shape ", shape_str(xs), ".");
  const int64_t d1 = normalize_axis(a.i("dim1"), nd, op), d2 = normalize_axis(a.i("dim2"), nd, op);
  KILN_CHECK(d1 != d2, Value, "For '", op, "', 'dim1' and 'dim2' must differ, but both are ", d1, ".");
  const int64_t k = a.i("offset"), n1 = xs[size_t(d1)], n2 = xs[size_t(d2)];
  const int64_t len = std::max<int64_t>(0, k >= 0 ? std::min(n1, n2 - k) : std::min(n1 + k, n2));
  DiagDims r{{}, {}, xoff};
  for (int64_t d = 0; d < nd; ++d)
    if (d != d1 && d != d2) { r.shape.push_back(xs[size_t(d)]); r.strides.push_back(xst[size_t(d)]); }
  r.shape.push_back(len);
  r.strides.push_back(xst[size_t(d1)] + xst[size_t(d2)]);
  if (len > 0) r.offset += k >= 0 ? k * xst[size_t(d2)] : -k * xst[size_t(d1)];
  return r;
}
std::vector<TensorMeta> infer_diagonal(const TV& in, const Attrs& a) {
  return {{diag_dims(in[0].shape(), in[0].strides(), 0, a, "Diagonal").shape, in[0].dtype()}};
}
TV direct_diagonal(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  DiagDims d = diag_dims(x.shape(), x.strides(), x.offset(), a, "Diagonal");
  return {x.view(d.shape, d.strides, d.offset)};
}
TV bp_diagonal(const TV& in, const TV&, const TV& g, const Attrs& a) {
  return {ops::diag_embed(g[0], in[0].shape(), a.i("offset"), a.i("dim1"), a.i("dim2"))};
}

// ---- DiagEmbed: attrs shape, offset, dim1, dim2: zeros of `shape` with the input on that Diagonal ----
std::vector<TensorMeta> infer_diag_embed(const TV& in, const Attrs& a) {
  const Shape& s = a.ints("shape");
  Shape d = diag_dims(s, contiguous_strides(s), 0, a, "DiagEmbed").shape;
  KILN_CHECK(d == in[0].shape(), Value, "For 'DiagEmbed', the input of shape ", shape_str(in[0].shape()),
             " does not match the diagonal shape ", shape_str(d), " of ", shape_str(s), ".");
  return {{s, in[0].dtype()}};
}
void run_diag_embed(const TV& in, TV& out, const Attrs& a) {
  Tensor& o = out[0];
  std::memset(o.raw_data(), 0, size_t(o.numel()) * itemsize(o.dtype()));
  DiagDims d = diag_dims(o.shape(), o.strides(), o.offset(), a, "DiagEmbed");
  if (numel(d.shape) > 0) copy_into(in[0], o.view(d.shape, d.strides, d.offset));
}
TV bp_diag_embed(const TV&, const TV&, const TV& g, const Attrs& a) {
  return {ops::diagonal(g[0], a.i("offset"), a.i("dim1"), a.i("dim2"))};
}

// ---- Concat: n inputs along attr axis; dtype = promote_types over the inputs ----
DType concat_dtype(const TV& in) {
  DType t = in[0].dtype();
  bool weak = in[0].weak();
  for (size_t i = 1; i < in.size(); ++i) {
    t = promote_types(t, in[i].dtype(), weak, in[i].weak());
    weak = weak && in[i].weak();
  }
  return t;
}
std::vector<TensorMeta> infer_concat(const TV& in, const Attrs& a) {
  KILN_CHECK(!in.empty(), Value, "For 'Concat', the input must be a non-empty list of tensors.");
  const Shape& s0 = in[0].shape();
  KILN_CHECK(!s0.empty(), Value, "For 'Concat', zero-dimensional tensors can not be concatenated.");
  int64_t ax = normalize_axis(a.i("axis"), int64_t(s0.size()), "Concat");
  Shape s = s0;
  s[size_t(ax)] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& si = in[i].shape();
    bool ok = si.size() == s0.size();
    for (size_t d = 0; ok && d < si.size(); ++d) ok = int64_t(d) == ax || si[d] == s0[d];
    KILN_CHECK(ok, Value, "For 'Concat', all inputs must have the same shape except along axis ", ax,
               ", but input 0 has shape ", shape_str(s0), " and input ", i, " has shape ", shape_str(si), ".");
    s[size_t(ax)] += si[size_t(ax)];
  }
  return {{s, concat_dtype(in)}};
}
void run_concat(const TV& in, TV& out, const Attrs& a) {
  Tensor& o = out[0];
  int64_t ax = normalize_axis(a.i("axis"), o.ndim(), "Concat");
  int64_t pos = 0;
  for (const Tensor& x : in) {
    Shape s = o.shape();
    s[size_t(ax)] = x.shape()[size_t(ax)];
    if (numel(s) > 0) copy_into(x, o.view(s, o.strides(), o.offset() + pos * o.strides()[size_t(ax)]));
    pos += s[size_t(ax)];
  }
}
TV bp_concat(const TV& in, const TV&, const TV& g, const Attrs& a) {
  TV r;
  int64_t ax = normalize_axis(a.i("axis"), g[0].ndim(), "Concat");
  int64_t pos = 0;
  for (const Tensor& x : in) {
    int64_t n = x.shape()[size_t(ax)];
    if (!is_floating(x.dtype()) && !is_complex(x.dtype())) {
      r.emplace_back();
    } else {
      Axes b(size_t(ax) + 1, 0), e(g[0].shape().begin(), g[0].shape().begin() + ax + 1), st(size_t(ax) + 1, 1);
      b[size_t(ax)] = pos;
      e[size_t(ax)] = pos + n;
      Tensor gi = ops::strided_slice(g[0], b, e, st);
      r.push_back(gi.dtype() == x.dtype() ? gi : ops::cast(gi, x.dtype()));
    }
    pos += n;
  }
  return r;
}

OpDef view_op(OpId id, InferFn infer, TV (*direct)(const TV&, const Attrs&), BpropFn bp) {
  OpDef d;
  d.id = id;
  d.infer = infer;
  d.direct = direct;
  d.bprop = bp;
  return d;
}

}  // namespace

namespace ops_impl {
void register_shape_ops() {
  register_op(view_op(OpId::Reshape, infer_reshape, direct_reshape, bp_reshape));
  register_op(view_op(OpId::Transpose, infer_transpose, direct_transpose, bp_transpose));
  register_op(view_op(OpId::BroadcastTo, infer_broadcast, direct_broadcast, bp_broadcast));
  register_op(view_op(OpId::StridedSlice, infer_slice, direct_slice, bp_slice));
  register_op(view_op(OpId::Diagonal, infer_diagonal, direct_diagonal, bp_diagonal));
  OpDef de;
  de.id = OpId::DiagEmbed;
  de.infer = infer_diag_embed;
  de.cpu = run_diag_embed;
  de.bprop = bp_diag_embed;
  register_op(de);
  OpDef c;
  c.id = OpId::Concat;
  c.infer = infer_concat;
  c.cpu = run_concat;
  c.bprop = bp_concat;
  register_op(c);
  OpDef sg;
  sg.id = OpId::StridedSliceGrad;
  sg.infer = infer_slice_grad;
  sg.cpu = run_slice_grad;
  sg.bprop = bp_slice_grad;
  register_op(sg);
}
}  // namespace ops_impl

namespace ops {
Tensor reshape(const Tensor& x, const Shape& shape) { return apply1(OpId::Reshape, {x}, {{"shape", shape}}); }
Tensor transpose(const Tensor& x, const Axes& perm) { return apply1(OpId::Transpose, {x}, {{"perm", perm}}); }
Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  return apply1(OpId::BroadcastTo, {x}, {{"shape", shape}});
}
Tensor strided_slice(const Tensor& x, const Axes& begin, const Axes& end, const Axes& step) {
  return apply1(OpId::StridedSlice, {x}, {{"begin", begin}, {"end", end}, {"step", step}});
}
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  return apply1(OpId::Diagonal, {x}, {{"offset", offset}, {"dim1", dim1}, {"dim2", dim2}});
}
Tensor diag_embed(const Tensor& x, const Shape& shape, int64_t offset, int64_t dim1, int64_t dim2) {
  return apply1(OpId::DiagEmbed, {x}, {{"shape", shape}, {"offset", offset}, {"dim1", dim1}, {"dim2", dim2}});
}
Tensor concat(const std::vector<Tensor>& xs, int64_t axis) { return apply1(OpId::Concat, xs, {{"axis", axis}}); }

// A size-1 dim inserted at `axis` in [-ndim-1, ndim]. IndexError outside.
Tensor expand_dims(const Tensor& x, int64_t axis) {
  const int64_t nd = x.ndim();
  KILN_CHECK(axis >= -nd - 1 && axis <= nd, Index, "For 'ExpandDims', the axis must be in range [", -nd - 1, ", ", nd,
             "] for a tensor of rank ", nd, ", but got ", axis, ".");
  if (axis < 0) axis += nd + 1;
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(x, s);
}
// Removes the given size-1 axes (all size-1 axes when `axes` is empty). ValueError if a given axis is not 1.
Tensor squeeze(const Tensor& x, const Axes& axes) {
  const Shape& xs = x.shape();
  std::vector<bool> drop(xs.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < xs.size(); ++i) drop[i] = xs[i] == 1;
  } else {
    for (int64_t a : axes) {
      int64_t d = normalize_axis(a, x.ndim(), "Squeeze");
      if (x.ndim() == 0) continue;
      KILN_CHECK(xs[size_t(d)] == 1, Value, "For 'Squeeze', the dimension ", a, " of the input of shape ",
                 shape_str(xs), " must be 1, but got ", xs[size_t(d)], ".");
      drop[size_t(d)] = true;
    }
  }
  Shape s;
  for (size_t i = 0; i < xs.size(); ++i)
    if (!drop[i]) s.push_back(xs[i]);
  return reshape(x, s);
}
// Stacks tensors of one shape along a new axis in [-ndim-1, ndim].
Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  KILN_CHECK(!xs.empty(), Value, "For 'Stack', the input must be a non-empty list of tensors.");
  std::vector<Tensor> e;
  for (size_t i = 0; i < xs.size(); ++i) {
    KILN_CHECK(xs[i].shape() == xs[0].shape(), Value, "For 'Stack', all inputs must have the same shape, but input 0 has shape ",
               shape_str(xs[0].shape()), " and input ", i, " has shape ", shape_str(xs[i].shape()), ".");
    e.push_back(expand_dims(xs[i], axis));
  }
  const int64_t nd = xs[0].ndim();
  return concat(e, axis < 0 ? axis + nd + 1 : axis);
}
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  KILN_CHECK(x.ndim() > 0, Value, "For 'Split', a zero-dimensional tensor can not be split.");
  int64_t ax = normalize_axis(axis, x.ndim(), "Split");
  const int64_t dim = x.shape()[size_t(ax)];
  int64_t total = 0;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, Value, "For 'Split', the section sizes must be >= 0, but got ", shape_str(sizes), ".");
    total += s;
  }
  KILN_CHECK(total == dim, Value, "For 'Split', the section sizes ", shape_str(sizes), " must sum to the size ", dim,
             " of axis ", ax, " of the input of shape ", shape_str(x.shape()), ".");
  std::vector<Tensor> r;
  int64_t pos = 0;
  Axes b(size_t(ax) + 1, 0), e(x.shape().begin(), x.shape().begin() + ax + 1), st(size_t(ax) + 1, 1);
  for (int64_t s : sizes) {
    b[size_t(ax)] = pos;
    e[size_t(ax)] = pos + s;
    r.push_back(strided_slice(x, b, e, st));
    pos += s;
  }
  return r;
}
}  // namespace ops
}  // namespace kiln
