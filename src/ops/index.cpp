// Indexing ops: Gather (pick slices along an axis by integer indices), UnsortedSegmentSum (its transpose: sum rows
// into segments), NonZero (coordinates of the nonzero elements) and ArgSort (the permutation that sorts along an
// axis; sort/topk gather with it, so their gradients are Gather's).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using ops::Axes;

void check_int(const Tensor& t, const char* op, const char* what) {
  KILN_CHECK(is_integral(t.dtype()), Type, "For '", op, "', the ", what, " must be an integer tensor, but got ",
             dtype_name(t.dtype()), ".");
}
int64_t prod_range(const Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

// ---- Gather(x, indices; axis): out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:] ----
std::vector<TensorMeta> infer_gather(const TV& in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1];
  check_int(idx, "Gather", "indices");
  KILN_CHECK(x.ndim() > 0, Value, "For 'Gather', the input must have at least one dimension, but got a 0-d tensor.");
  int64_t ax = normalize_axis(a.i("axis"), x.ndim(), "Gather");
  Shape s(x.shape().begin(), x.shape().begin() + ax);
  s.insert(s.end(), idx.shape().begin(), idx.shape().end());
  s.insert(s.end(), x.shape().begin() + ax + 1, x.shape().end());
  return {{s, x.dtype()}};
}
void run_gather(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  const size_t ax = size_t(normalize_axis(a.i("axis"), x.ndim(), "Gather"));
  const int64_t outer = prod_range(x.shape(), 0, ax), n = x.shape()[ax];
  const int64_t inner = prod_range(x.shape(), ax + 1, x.shape().size()), m = idx.numel();
  const int64_t* pi = idx.data<int64_t>();
  std::vector<int64_t> norm(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    int64_t v = pi[k];
    KILN_CHECK(v >= -n && v < n, Index, "For 'Gather', the index ", v, " is out of range for axis ", ax,
               " of size ", n, " (input shape ", shape_str(x.shape()), "); indices must be in [", -n, ", ", n, ").");
    norm[size_t(k)] = v < 0 ? v + n : v;
  }
  const size_t isz = itemsize(x.dtype()), row = size_t(inner) * isz;
  const char* px = static_cast<const char*>(x.raw_data());
  char* po = static_cast<char*>(out[0].raw_data());
  if (row == 0) return;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < m; ++k)
      std::memcpy(po + size_t(o * m + k) * row, px + size_t(o * n + norm[size_t(k)]) * row, row);
}
// d x = UnsortedSegmentSum of g over the (wrapped) indices, with the gathered axis moved to the front and back.
TV bp_gather(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1];
  const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), "Gather");
  const int64_t q = idx.ndim(), n = x.shape()[size_t(ax)], gnd = g[0].ndim();
  Tensor ids = ops::select(ops::less(idx, Tensor::scalar(0, idx.dtype(), true)),
                           ops::add(idx, Tensor::scalar(double(n), idx.dtype(), true)), idx);
  Tensor gt = g[0];
  if (ax > 0) {  // (x[:ax], idx, x[ax+1:]) → (idx, x[:ax], x[ax+1:])
    Axes perm;
    for (int64_t i = 0; i < q; ++i) perm.push_back(ax + i);
    for (int64_t i = 0; i < ax; ++i) perm.push_back(i);
    for (int64_t i = ax + q; i < gnd; ++i) perm.push_back(i);
    gt = ops::transpose(gt, perm);
  }
  Tensor r = ops::unsorted_segment_sum(gt, ids, n);  // (n, x[:ax], x[ax+1:])
  if (ax > 0) {
    Axes perm;
    for (int64_t i = 1; i <= ax; ++i) perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = ax + 1; i < x.ndim(); ++i) perm.push_back(i);
    r = ops::transpose(r, perm);
  }
  return {r.dtype() == x.dtype() ? r : ops::cast(r, x.dtype()), Tensor()};
}

// ---- GatherD(x, index; dim): out[p] = x[p with p[dim] = index[p]] (MindSpore's GatherD, ONNX GatherElements) ----
// index has x's rank and, on every axis but dim, at most x's length; out has index's shape and x's dtype. Negative
// indices count from the end; one outside [−n, n) raises ValueError naming the value (both modes: the kernel checks).
// GatherDGrad(g, index; dim, shape) is its transpose: zeros of `shape` with g added at the positions read.
void check_gather_d(const Shape& xs, const Tensor& idx, int64_t dim, const char* op) {
  check_int(idx, op, "index");
  KILN_CHECK(idx.ndim() == int64_t(xs.size()), Value, "For '", op, "', 'index' must have the rank of the input (",
             xs.size(), "), but got shape ", shape_str(idx.shape()), ".");
  if (xs.empty()) return;
  const int64_t ax = normalize_axis(dim, int64_t(xs.size()), op);
  for (size_t d = 0; d < xs.size(); ++d)
    KILN_CHECK(int64_t(d) == ax || idx.shape()[d] <= xs[d], Value, "For '", op, "', 'index' of shape ",
               shape_str(idx.shape()), " is larger than the input of shape ", shape_str(xs), " on axis ", d, ".");
}
std::vector<TensorMeta> infer_gather_d(const TV& in, const Attrs& a) {
  check_gather_d(in[0].shape(), in[1], a.i("dim"), "GatherD");
  return {{in[1].shape(), in[0].dtype()}};
}
// Calls f(out_linear, src_linear) for every element of index (row-major), src_linear the element of the tensor of
// shape xs that it reads. The coordinates advance as an odometer; the index along dim is checked and wrapped.
template <typename F>
void gather_d_walk(const Shape& xs, const Tensor& idx64, int64_t dim, const char* op, F&& f) {
  const int64_t nd = int64_t(xs.size()), m = idx64.numel();
  const int64_t* pi = idx64.data<int64_t>();
  if (nd == 0) {
    for (int64_t k = 0; k < m; ++k) f(k, int64_t(0));
    return;
  }
  const int64_t ax = normalize_axis(dim, nd, op), n = xs[size_t(ax)];
  std::vector<int64_t> stride(size_t(nd), 1), coord(size_t(nd), 0);
  for (int64_t d = nd - 2; d >= 0; --d) stride[size_t(d)] = stride[size_t(d + 1)] * xs[size_t(d + 1)];
  const Shape& is = idx64.shape();
  int64_t base = 0;  // Σ coord[d]·stride[d] over d ≠ ax
  for (int64_t k = 0; k < m; ++k) {
    int64_t v = pi[k];
    KILN_CHECK(v >= -n && v < n, Value, "For '", op, "', the index ", v, " is out of range for axis ", ax,
               " of size ", n, " (input shape ", shape_str(xs), "); indices must be in [", -n, ", ", n, ").");
    if (v < 0) v += n;
    f(k, base + v * stride[size_t(ax)]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (d != ax) base += stride[size_t(d)];
      if (++coord[size_t(d)] < is[size_t(d)]) break;
      if (d != ax) base -= stride[size_t(d)] * is[size_t(d)];
      coord[size_t(d)] = 0;
    }
  }
}
void run_gather_d(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  const size_t isz = itemsize(x.dtype());
  const char* px = static_cast<const char*>(x.raw_data());
  char* po = static_cast<char*>(out[0].raw_data());
  gather_d_walk(x.shape(), idx, a.i("dim"), "GatherD",
                [&](int64_t k, int64_t src) { std::memcpy(po + size_t(k) * isz, px + size_t(src) * isz, isz); });
}
std::vector<TensorMeta> infer_gather_d_grad(const TV& in, const Attrs& a) {
  const Shape xs = a.ints("shape");
  check_gather_d(xs, in[1], a.i("dim"), "GatherDGrad");
  KILN_CHECK(in[0].shape() == in[1].shape(), Value, "For 'GatherDGrad', the gradient of shape ",
             shape_str(in[0].shape()), " must have the shape of 'index' ", shape_str(in[1].shape()), ".");
  return {{xs, in[0].dtype()}};
}
void run_gather_d_grad(const TV& in, TV& out, const Attrs& a) {
  Tensor g = in[0].contiguous();
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  Tensor& o = out[0];
  std::memset(o.raw_data(), 0, size_t(o.numel()) * itemsize(o.dtype()));
  KILN_DISPATCH(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* pg = g.data<T>();
    T* po = o.data<T>();
    gather_d_walk(o.shape(), idx, a.i("dim"), "GatherDGrad", [&](int64_t k, int64_t dst) {
      if constexpr (std::is_same_v<C, bool>) po[dst] = po[dst] || pg[k];
      else po[dst] = convert_value<T>(C(C(po[dst]) + C(pg[k])));
    });
  });
}
TV bp_gather_d(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1];
  Tensor gg = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  return {apply1(OpId::GatherDGrad, {gg, idx}, {{"dim", a.i("dim")}, {"shape", x.shape()}}), Tensor()};
}
TV bp_gather_d_grad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  return {apply1(OpId::GatherD, {g[0], in[1]}, {{"dim", a.i("dim")}}), Tensor()};
}
// ---- UnsortedSegmentSum(x, segment_ids; num_segments) ----
// segment_ids.shape must be a prefix of x.shape; out.shape = (num_segments,) + x.shape[ids.ndim:]. Ids outside
// [0, num_segments) are ignored (MindSpore's rule).
std::vector<TensorMeta> infer_uss(const TV& in, const Attrs& a) {
  const Tensor &x = in[0], &ids = in[1];
  check_int(ids, "UnsortedSegmentSum", "segment_ids");
  const int64_t ns = a.i("num_segments");
  KILN_CHECK(ns >= 0, Value, "For 'UnsortedSegmentSum', num_segments must be >= 0, but got ", ns, ".");
  bool prefix = ids.ndim() <= x.ndim();
  for (int64_t i = 0; prefix && i < ids.ndim(); ++i) prefix = ids.shape()[size_t(i)] == x.shape()[size_t(i)];
  KILN_CHECK(prefix, Value, "For 'UnsortedSegmentSum', the shape of segment_ids ", shape_str(ids.shape()),
             " must be a prefix of the input shape ", shape_str(x.shape()), ".");
  Shape s{ns};
  s.insert(s.end(), x.shape().begin() + ids.ndim(), x.shape().end());
  return {{s, x.dtype()}};
}
void run_uss(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  Tensor ids = ew::as_dtype(in[1], DType::Int64).contiguous();
  Tensor& o = out[0];
  const int64_t ns = a.i("num_segments"), m = ids.numel();
  const int64_t inner = prod_range(x.shape(), size_t(ids.ndim()), x.shape().size());
  std::memset(o.raw_data(), 0, size_t(o.numel()) * itemsize(o.dtype()));
  const int64_t* pi = ids.data<int64_t>();
  KILN_DISPATCH_ALL(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* px = x.data<T>();
    T* po = o.data<T>();
    for (int64_t i = 0; i < m; ++i) {
      const int64_t s = pi[i];
      if (s < 0 || s >= ns) continue;
      T* dst = po + s * inner;
      const T* src = px + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        if constexpr (std::is_same_v<C, bool>) dst[j] = dst[j] || src[j];
        else dst[j] = convert_value<T>(C(C(dst[j]) + C(src[j])));
      }
    }
  });
}
// d x[i] = g[ids[i]] where the id is in range, else 0.
TV bp_uss(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &ids = in[1];
  const int64_t ns = a.i("num_segments");
  Tensor valid = ops::logical_and(ops::greater_equal(ids, Tensor::scalar(0, ids.dtype(), true)),
                                  ops::less(ids, Tensor::scalar(double(ns), ids.dtype(), true)));
  Tensor safe = ops::select(valid, ids, ops::zeros_like(ids));
  Tensor gx = ns > 0 ? ops::gather(g[0], safe, 0) : ops::zeros_like(x);
  Shape vs = ids.shape();
  vs.resize(size_t(x.ndim()), 1);
  Tensor r = ops::select(ops::reshape(valid, vs), gx, ops::zeros_like(gx));
  return {r.dtype() == x.dtype() ? r : ops::cast(r, x.dtype()), Tensor()};
}

// ---- NonZero: (n, ndim) Int64 coordinates of the nonzero elements in row-major order ----
int64_t count_nonzero(const Tensor& x) {
  Tensor b = ew::as_dtype(x, DType::Bool).contiguous();
  const bool* p = b.data<bool>();
  int64_t c = 0;
  for (int64_t i = 0, n = b.numel(); i < n; ++i) c += p[i];
  return c;
}
// The output shape depends on the data: inference reads the (concrete) input.
std::vector<TensorMeta> infer_nonzero(const TV& in, const Attrs&) {
  // A symbolic input (graph mode / jit) has no data to count: fail cleanly instead of reading null storage.
  KILN_CHECK(!in[0].is_symbolic(), Runtime, "For 'NonZero', the output shape depends on the input's values, so it "
             "cannot be compiled into a graph (jit / GRAPH_MODE); call it in PyNative mode.");
  return {{Shape{count_nonzero(in[0]), in[0].ndim()}, DType::Int64}};
}
TV direct_nonzero(const TV& in, const Attrs&) {
  Tensor b = ew::as_dtype(in[0], DType::Bool).contiguous();
  const int64_t nd = b.ndim(), n = b.numel();
  const bool* p = b.data<bool>();
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) c += p[i];
  Tensor out = Tensor::empty({c, nd}, DType::Int64);
  int64_t* po = out.data<int64_t>();
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i]) for (int64_t d = 0; d < nd; ++d) *po++ = idx[size_t(d)];
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < b.shape()[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return {out};
}

// ---- ArgSort(x; axis, descending) → Int64 indices of x's shape: along `axis`, the stable permutation that sorts x
// ascending (or descending). Equal values keep their order (the lower index first, in both directions: NumPy's
// argsort(kind="stable"), PyTorch's sort(stable=True)). NaN counts as greater than every number (NumPy and PyTorch):
// last ascending, first descending. Rows are sorted independently, on the OpenMP threads when there are many.
std::vector<TensorMeta> infer_argsort(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() != DType::Bool, Type, "For 'ArgSort', the input must be a number tensor, but got Bool.");
  if (x.ndim() > 0) normalize_axis(a.i("axis"), x.ndim(), "ArgSort");
  return {{x.shape(), DType::Int64}};
}
// Sorts each of the outer·inner rows (n elements, `inner` apart) of px into po. A row sort is independent of the
// others, so rows go to the OpenMP threads when there are enough elements; the results do not depend on the split.
template <typename T>
void argsort_rows(const T* px, int64_t* po, int64_t outer, int64_t n, int64_t inner, bool desc) {
  using C = compute_t<T>;
  const int64_t rows = outer * inner;
#pragma omp parallel for schedule(static) if (rows * n >= cpu::kParallelMin && rows > 1 && !omp_in_parallel())
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / inner, i = r % inner;
    const T* base = px + o * n * inner + i;
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t(0));
    auto val = [&](int64_t k) { return C(base[k * inner]); };
    auto is_nan = [&](int64_t k) {
      if constexpr (std::is_floating_point_v<C>) return std::isnan(val(k));
      else return false;
    };
    // A strict weak order with NaN as the largest value; stable_sort keeps equal elements in index order.
    auto before = [&](int64_t p, int64_t q) {
      const bool np_ = is_nan(p), nq = is_nan(q);
      if (np_ || nq) return desc ? (np_ && !nq) : (!np_ && nq);
      return desc ? val(q) < val(p) : val(p) < val(q);
    };
    std::stable_sort(perm.begin(), perm.end(), before);
    int64_t* dst = po + o * n * inner + i;
    for (int64_t k = 0; k < n; ++k) dst[k * inner] = perm[size_t(k)];
  }
}

// MindSpore 2.10's TopK order (its CPU kernel, mindspore/ccsrc/plugin/device/cpu/kernel/topk_cpu_kernel.cc): the
// row's indices 0..n-1 arranged by std::nth_element at k with the comparator "value p > value q" ("<" for the
// smallest), then, when sorted, ordered by std::stable_sort: the whole row when k > floor(n/2), else the first k.
// Ties are therefore in the order nth_element leaves them (not always the lower index first), and the k chosen among
// equal values at the boundary are nth_element's. Same library algorithm and same comparisons, so the same indices
// (checked against MindSpore 2.10 on random rows with ties). A row holding a NaN is not a strict weak order for that
// comparator (MindSpore then returns values that are not the k largest): such a row takes the stable order with NaN
// largest, as argsort_rows. Only the first k entries of each row are meaningful.
template <typename T>
void topk_order_rows(const T* px, int64_t* po, int64_t outer, int64_t n, int64_t inner, bool largest, int64_t k,
                     bool sorted) {
  using C = compute_t<T>;
  const int64_t rows = outer * inner;
  const int64_t kk = std::min(k, n);
#pragma omp parallel for schedule(static) if (rows * n >= cpu::kParallelMin && rows > 1 && !omp_in_parallel())
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / inner, i = r % inner;
    const T* base = px + o * n * inner + i;
    auto val = [&](int64_t q) { return C(base[q * inner]); };
    bool has_nan = false;
    if constexpr (std::is_floating_point_v<C>) {
      for (int64_t q = 0; q < n && !has_nan; ++q) has_nan = std::isnan(val(q));
    }
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t(0));
    if (has_nan) {
      auto before = [&](int64_t p, int64_t q) {
        bool np_ = false, nq = false;
        if constexpr (std::is_floating_point_v<C>) np_ = std::isnan(val(p)), nq = std::isnan(val(q));
        if (np_ || nq) return largest ? (np_ && !nq) : (!np_ && nq);
        return largest ? val(q) < val(p) : val(p) < val(q);
      };
      std::stable_sort(perm.begin(), perm.end(), before);
    } else {
      auto cmp = [&](int64_t p, int64_t q) { return largest ? val(p) > val(q) : val(p) < val(q); };
      const auto mid = perm.begin() + kk;
      if (sorted && size_t(kk) > size_t(float(n) * 0.5f)) {
        std::stable_sort(perm.begin(), perm.end(), cmp);
      } else {
        std::nth_element(perm.begin(), mid, perm.end(), cmp);
        if (sorted) std::stable_sort(perm.begin(), mid, cmp);
      }
    }
    int64_t* dst = po + o * n * inner + i;
    for (int64_t q = 0; q < n; ++q) dst[q * inner] = perm[size_t(q)];
  }
}

void run_argsort(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  int64_t* po = out[0].data<int64_t>();
  if (x.ndim() == 0) { po[0] = 0; return; }
  const size_t ax = size_t(normalize_axis(a.i("axis"), x.ndim(), "ArgSort"));
  const int64_t outer = prod_range(x.shape(), 0, ax), n = x.shape()[ax];
  const int64_t inner = prod_range(x.shape(), ax + 1, x.shape().size());
  const bool desc = a.b("descending");
  // optional "topk" (k ≥ 0) and "topk_sorted": MindSpore's TopK order instead of the stable sort (topk_order_rows)
  const int64_t k = a.find("topk") ? a.i("topk") : -1;
  KILN_DISPATCH_ALL(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (k >= 0) topk_order_rows<T>(x.data<T>(), po, outer, n, inner, desc, k, a.b("topk_sorted"));
    else argsort_rows<T>(x.data<T>(), po, outer, n, inner, desc);
  });
}

}  // namespace

namespace ops_impl {
void register_index() {
  OpDef as;
  as.id = OpId::ArgSort;
  as.infer = infer_argsort;
  as.cpu = run_argsort;
  as.differentiable = false;
  register_op(as);
  OpDef g;
  g.id = OpId::Gather;
  g.infer = infer_gather;
  g.cpu = run_gather;
  g.bprop = bp_gather;
  register_op(g);
  OpDef gd;
  gd.id = OpId::GatherD;
  gd.infer = infer_gather_d;
  gd.cpu = run_gather_d;
  gd.bprop = bp_gather_d;
  register_op(gd);
  OpDef gdg;
  gdg.id = OpId::GatherDGrad;
  gdg.infer = infer_gather_d_grad;
  gdg.cpu = run_gather_d_grad;
  gdg.bprop = bp_gather_d_grad;
  register_op(gdg);
  OpDef u;
  u.id = OpId::UnsortedSegmentSum;
  u.infer = infer_uss;
  u.cpu = run_uss;
  u.bprop = bp_uss;
  register_op(u);
  OpDef nz;
  nz.id = OpId::NonZero;
  nz.infer = infer_nonzero;
  nz.direct = direct_nonzero;
  nz.differentiable = false;
  register_op(nz);
}
}  // namespace ops_impl

namespace ops {
Tensor argsort(const Tensor& x, int64_t axis, bool descending) {
  return apply1(OpId::ArgSort, {x}, {{"axis", axis}, {"descending", descending}});
}
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis) {
  return apply1(OpId::Gather, {x, indices}, {{"axis", axis}});
}
Tensor unsorted_segment_sum(const Tensor& x, const Tensor& segment_ids, int64_t num_segments) {
  return apply1(OpId::UnsortedSegmentSum, {x, segment_ids}, {{"num_segments", num_segments}});
}
Tensor nonzero(const Tensor& x) { return apply1(OpId::NonZero, {x}); }
}  // namespace ops
}  // namespace kiln
