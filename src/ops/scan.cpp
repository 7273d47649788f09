// Scans along one axis: CumSum, CumProd (MindSpore's primitives, with their exclusive / reverse attributes) and
// CumProdGrad, CumProd's backward.
//
// A tensor is viewed as (outer, n, inner) around the axis; every (outer, inner) line is an independent sequential
// scan. The kernel walks one outer block at a time along the axis with a running row of `inner` accumulators, so the
// innermost loop is contiguous; outer blocks go to the OpenMP threads when there are enough elements (the result
// does not depend on the split: each line is summed in its own order, sequentially). Float16/BFloat16 accumulate in
// float32 (compute_t), integers in their own type (wrapping modulo 2^bits, as NumPy's cumsum in that dtype).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "families.h"
#include "kiln/autodiff.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};
Lines lines_of(const Tensor& x, int64_t axis, const char* op) {
  Lines l;
  if (x.ndim() == 0) return l;  // a 0-d tensor is one line of one element
  const size_t ax = size_t(normalize_axis(axis, x.ndim(), op));
  for (size_t i = 0; i < ax; ++i) l.outer *= x.shape()[i];
  l.n = x.shape()[ax];
  for (size_t i = ax + 1; i < x.shape().size(); ++i) l.inner *= x.shape()[i];
  return l;
}

std::vector<TensorMeta> infer_scan(const TV& in, const Attrs& a, const char* op) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() != DType::Bool && !is_complex(x.dtype()), Type, "For '", op,
             "', the input must be a real number tensor, but got ", dtype_name(x.dtype()), ".");
  if (x.ndim() > 0) normalize_axis(a.i("axis"), x.ndim(), op);
  else KILN_CHECK(a.i("axis") == 0 || a.i("axis") == -1, Value, "For '", op,
                  "', 'axis' must be in [-1, 0] for a 0-d input, but got ", a.i("axis"), ".");
  return {{x.shape(), x.dtype()}};
}
std::vector<TensorMeta> infer_cumsum(const TV& in, const Attrs& a) { return infer_scan(in, a, "CumSum"); }
std::vector<TensorMeta> infer_cumprod(const TV& in, const Attrs& a) { return infer_scan(in, a, "CumProd"); }

// out[t] = x[0] ∘ ... ∘ x[t] (exclusive: up to x[t − 1], the identity first) along each line, t counted from the
// end when reverse.
template <typename T, bool Prod>
void scan_lines(const T* px, T* po, const Lines& l, bool exclusive, bool reverse) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner, block = n * inner;
#pragma omp parallel for schedule(static) if (l.outer * block >= cpu::kParallelMin && l.outer > 1 && !omp_in_parallel())
  for (int64_t o = 0; o < l.outer; ++o) {
    std::vector<C> acc(size_t(inner), C(Prod ? 1 : 0));
    for (int64_t s = 0; s < n; ++s) {
      const int64_t t = reverse ? n - 1 - s : s;
      const T* src = px + o * block + t * inner;
      T* dst = po + o * block + t * inner;
      for (int64_t i = 0; i < inner; ++i) {
        C& c = acc[size_t(i)];
        if (exclusive) dst[i] = convert_value<T>(c);
        if constexpr (Prod) c = C(c * C(src[i]));
        else c = C(c + C(src[i]));
        if (!exclusive) dst[i] = convert_value<T>(c);
      }
    }
  }
}
template <bool Prod>
void run_scan(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  const Lines l = lines_of(x, a.i("axis"), Prod ? "CumProd" : "CumSum");
  const bool exclusive = a.b("exclusive"), reverse = a.b("reverse");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) scan_lines<T, Prod>(x.data<T>(), out[0].data<T>(), l, exclusive, reverse);
  });
}

// Note [CumProd gradient]: for y_t = Π_{j≤t} x_j (t along the scan direction), dL/dx_k = Σ_{i≥k} g_i·Π_{j≤i, j≠k} x_j
// = E_k·S_k with E_k = Π_{j<k} x_j (the exclusive product) and S_k = Σ_{i≥k} g_i·Π_{k<j≤i} x_j, which satisfies
// S_k = g_k + x_{k+1}·S_{k+1}. Exclusive (y_t = E_t): dL/dx_k = E_k·T_k with T_k = g_{k+1} + x_{k+1}·T_{k+1}, T_last = 0.
// One backward pass for S (or T) into the output, one forward pass multiplying by E: O(n), no division, so exact
// where x holds zeros (the division formula Σ g·y / x is not).
template <typename T>
void cumprod_grad_lines(const T* px, const T* pg, T* po, const Lines& l, bool exclusive, bool reverse) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner, block = n * inner;
  auto at = [&](int64_t s) { return reverse ? n - 1 - s : s; };  // scan step s → position along the axis
#pragma omp parallel for schedule(static) if (l.outer * block >= cpu::kParallelMin && l.outer > 1 && !omp_in_parallel())
  for (int64_t o = 0; o < l.outer; ++o) {
    std::vector<C> run(size_t(inner), C(0));  // S_{s+1} (or T_s for the next step down)
    std::vector<C> next_x(size_t(inner), C(0));
    const int64_t base = o * block;
    for (int64_t s = n - 1; s >= 0; --s) {
      const int64_t t = at(s) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        C& r = run[size_t(i)];
        const C gs = C(pg[base + t + i]);
        C v;
        if (exclusive) v = s == n - 1 ? C(0) : r;                              // T_s, formed at step s + 1
        else v = C(gs + (s == n - 1 ? C(0) : C(next_x[size_t(i)] * r)));  // S_s
        // the running value for step s − 1: S_s itself, or T_{s−1} = g_s + x_s·T_s
        const C xs = C(px[base + t + i]);
        r = exclusive ? C(gs + C(xs * v)) : v;
        next_x[size_t(i)] = xs;
        po[base + t + i] = convert_value<T>(v);
      }
    }
    std::vector<C> e(size_t(inner), C(1));
    for (int64_t s = 0; s < n; ++s) {
      const int64_t t = at(s) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        po[base + t + i] = convert_value<T>(C(C(po[base + t + i]) * e[size_t(i)]));
        e[size_t(i)] = C(e[size_t(i)] * C(px[base + t + i]));
      }
    }
  }
}
void run_cumprod_grad(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  Tensor g = ew::as_dtype(in[1], x.dtype()).contiguous();
  const Lines l = lines_of(x, a.i("axis"), "CumProdGrad");
  const bool exclusive = a.b("exclusive"), reverse = a.b("reverse");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      cumprod_grad_lines<T>(x.data<T>(), g.data<T>(), out[0].data<T>(), l, exclusive, reverse);
  });
}

Tensor scan_op(OpId id, const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  return apply1(id, {x}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
}
// d cumsum = the same scan of g in the other direction (exclusive stays exclusive).
TV bp_cumsum(const TV&, const TV&, const TV& g, const Attrs& a) {
  return {scan_op(OpId::CumSum, g[0], a.i("axis"), a.b("exclusive"), !a.b("reverse"))};
}
// d cumprod: the CumProdGrad pass (Note [CumProd gradient]) when this backward pass is not itself recorded; a recorded
// one (second derivatives) composes Kiln ops, as PyTorch's cumprod_backward: with z the first zero of each line in the
// scan direction, dx_k = S(g·y)_k / x_k before z, S(g·y')_z at z (y' the scan of x with x_z replaced by 1) and 0
// after it, S being the sum over the later outputs (CumSum in the other direction, exclusive as the forward). Its own
// derivative is exact where x has no zeros (at an exact zero the after-z part is held at 0).
TV bp_cumprod(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t axis = a.i("axis");
  const bool exclusive = a.b("exclusive"), reverse = a.b("reverse");
  if (autodiff::grad_level() == 0 && g[0].defined())
    return {apply1(OpId::CumProdGrad, {x, g[0]}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}})};
  const Tensor gx = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  auto later_sum = [&](const Tensor& v) { return scan_op(OpId::CumSum, v, axis, exclusive, !reverse); };
  const Tensor zero = Tensor::scalar(0.0, x.dtype(), true), one = Tensor::scalar(1.0, x.dtype(), true);
  const Tensor is_zero = ops::equal(x, zero);
  const Tensor seen = scan_op(OpId::CumSum, ops::cast(is_zero, DType::Int32), axis, false, reverse);
  const Tensor before = ops::equal(seen, Tensor::scalar(0.0, DType::Int32, true));
  const Tensor at = ops::logical_and(is_zero, ops::equal(seen, Tensor::scalar(1.0, DType::Int32, true)));
  const Tensor d_before = ops::div(later_sum(ops::mul(gx, out[0])), ops::select(before, x, one));
  const Tensor y_wo = scan_op(OpId::CumProd, ops::select(at, one, x), axis, exclusive, reverse);
  const Tensor d_at = later_sum(ops::mul(gx, y_wo));
  return {ops::select(before, d_before, ops::select(at, d_at, ops::zeros_like(x)))};
}
std::vector<TensorMeta> infer_cumprod_grad(const TV& in, const Attrs& a) { return infer_scan(in, a, "CumProdGrad"); }


// ---- CumMax / CumMin: running extremum and its index (Int64) along the axis ----
// MindSpore 2.10 CPU (oracle): an equal later value takes the index (the last occurrence); a NaN, once met, stays the
// value, and every later NaN takes the index ([nan, 1, 2, nan, 0] -> indices [0, 0, 0, 3, 3], cummax and cummin).
std::vector<TensorMeta> infer_cumext(const TV& in, const Attrs& a, const char* op) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() != DType::Bool && !is_complex(x.dtype()), Type, "For '", op,
             "', the input must be a real number tensor, but got ", dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() > 0, Value, "For '", op, "', the input must have at least 1 dim, but got a 0-d Tensor.");
  normalize_axis(a.i("axis"), x.ndim(), op);
  return {{x.shape(), x.dtype()}, {x.shape(), DType::Int64}};
}
std::vector<TensorMeta> infer_cummax(const TV& in, const Attrs& a) { return infer_cumext(in, a, "CumMax"); }
std::vector<TensorMeta> infer_cummin(const TV& in, const Attrs& a) { return infer_cumext(in, a, "CumMin"); }

template <typename T, bool Max>
void cumext_lines(const T* px, T* pv, int64_t* pi, const Lines& l) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner, block = n * inner;
#pragma omp parallel for schedule(static) if (l.outer * block >= cpu::kParallelMin && l.outer > 1 && !omp_in_parallel())
  for (int64_t o = 0; o < l.outer; ++o) {
    const int64_t base = o * block;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t row = base + t * inner, prev = row - inner;
      for (int64_t i = 0; i < inner; ++i) {
        const C v = C(px[row + i]);
        if (t == 0) {
          pv[row + i] = px[row + i];
          pi[row + i] = 0;
          continue;
        }
        const C best = C(pv[prev + i]);
        bool take;  // the new element becomes the running extremum
        if constexpr (std::is_floating_point_v<C>) {
          take = v != v || (!(best != best) && (Max ? v >= best : v <= best));
        } else {
          take = Max ? v >= best : v <= best;
        }
        pv[row + i] = take ? px[row + i] : pv[prev + i];
        pi[row + i] = take ? t : pi[prev + i];
      }
    }
  }
}
template <bool Max>
void run_cumext(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  const Lines l = lines_of(x, a.i("axis"), Max ? "CumMax" : "CumMin");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      cumext_lines<T, Max>(x.data<T>(), out[0].data<T>(), out[1].data<int64_t>(), l);
  });
}
// d values: the cotangent added at the picked positions (GatherDGrad, GatherD's transpose: a scatter-add along the
// axis, as PyTorch's cummaxmin_backward); the indices output has no gradient.
TV bp_cumext(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  if (!g[0].defined()) return {ops::zeros_like(x)};
  const Tensor gv = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  return {apply1(OpId::GatherDGrad, {gv, out[1]}, {{"dim", a.i("axis")}, {"shape", x.shape()}})};
}

// ---- LogCumSumExp: log Σ_{j≤t} exp(x_j) along the axis (reverse: Σ_{j≥t}) ----
std::vector<TensorMeta> infer_logcumsumexp(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(is_floating(x.dtype()), Type, "For 'LogCumSumExp', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() > 0, Value, "For 'LogCumSumExp', the input must have at least 1 dim, but got a 0-d Tensor.");
  normalize_axis(a.i("axis"), x.ndim(), "LogCumSumExp");
  return {{x.shape(), x.dtype()}};
}
// logaddexp(a, b) without overflow: max + log1p(exp(−|a − b|)); −inf is the identity, equal values (±inf included)
// give a + log 2, NaN spreads.
template <typename C>
inline C log_add_exp(C a, C b) {
  if (a != a || b != b) return a + b;
  if (a == b) return a + C(0.6931471805599453);
  const C m = a > b ? a : b, d = a > b ? b - a : a - b;
  return m + std::log1p(std::exp(d));
}
template <typename T>
void lcse_lines(const T* px, T* po, const Lines& l, bool reverse) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner, block = n * inner;
#pragma omp parallel for schedule(static) if (l.outer * block >= cpu::kParallelMin && l.outer > 1 && !omp_in_parallel())
  for (int64_t o = 0; o < l.outer; ++o) {
    std::vector<C> acc(size_t(inner), -std::numeric_limits<C>::infinity());
    for (int64_t s = 0; s < n; ++s) {
      const int64_t t = reverse ? n - 1 - s : s;
      const int64_t row = o * block + t * inner;
      for (int64_t i = 0; i < inner; ++i) {
        C& c = acc[size_t(i)];
        const C v = C(px[row + i]);
        c = s == 0 ? v : log_add_exp(c, v);
        po[row + i] = convert_value<T>(c);
      }
    }
  }
}
void run_logcumsumexp(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  const Lines l = lines_of(x, a.i("axis"), "LogCumSumExp");
  const bool reverse = a.b("reverse");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool> && !std::is_integral_v<T>) lcse_lines<T>(x.data<T>(), out[0].data<T>(), l, reverse);
  });
}
// dx_k = Σ_{i≥k} g_i·exp(x_k − out_i) (i later in the scan direction). Formed without overflow as MindSpore's
// LogCumulativeSumExp bprop and PyTorch's logcumsumexp_backward: with the positive and negative parts of g kept in
// the log domain, dx = exp(LCSE_rev(log g⁺ − out) + x) − exp(LCSE_rev(log g⁻ − out) + x), LCSE_rev the scan in the
// other direction. Composed of Kiln ops, so a recorded backward pass differentiates again (checked against float64
// central differences in tests/python/test_issue23_kernels.py).
TV bp_logcumsumexp(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  // a recorded backward pass (second derivatives) recomputes out from x, so that its dependence on x is on the tape
  const Tensor y = autodiff::grad_level() == 0
                       ? out[0]
                       : apply1(OpId::LogCumSumExp, {x}, {{"axis", a.i("axis")}, {"reverse", a.b("reverse")}});
  const Tensor gx = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  const Tensor zero = Tensor::scalar(0.0, x.dtype(), true);
  const Tensor ninf = Tensor::scalar(-std::numeric_limits<double>::infinity(), x.dtype(), true);
  const Tensor lg = ops::log(ops::abs(gx));
  const Tensor lpos = ops::select(ops::greater(gx, zero), lg, ninf);
  const Tensor lneg = ops::select(ops::less(gx, zero), lg, ninf);
  auto part = [&](const Tensor& l) {
    const Tensor s = apply1(OpId::LogCumSumExp, {ops::sub(l, y)},
                            {{"axis", a.i("axis")}, {"reverse", !a.b("reverse")}});
    return ops::exp(ops::add(s, x));
  };
  // an element at −inf adds nothing to any output: its gradient is 0 (the formula gives exp(−inf + inf) = NaN where
  // the outputs are −inf too, as in the second derivative's pass through the all −inf negative part)
  return {ops::select(ops::equal(x, ninf), ops::zeros_like(x), ops::sub(part(lpos), part(lneg)))};
}

// ---- Median: the lower median along the axis and its index (MindSpore's Median, nanmedian's ignore_nan) ----
// The k-th smallest, k = (n − 1) / 2, with equal values ordered by their index: the k-th element of a stable sort,
// so the index is the one MindSpore 2.10's CPU kernel reports for ties ([2, 1, 2, 2, 3] -> 2 at index 2,
// [5, 5, 1, 1, 0] -> 1 at index 3). A line holding NaN gives its first NaN; ignore_nan: the median of the non-NaN
// values, k = (valid − 1) / 2, and an all-NaN line NaN with index 0 (MindSpore 2.10's CPU kernel gives an
// index that depends on the length there). One std::nth_element over (value, index) per line: O(n).
std::vector<TensorMeta> infer_median(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() != DType::Bool && !is_complex(x.dtype()), Type,
             "For 'Median', the input must be a real number tensor, but got ", dtype_name(x.dtype()), ".");
  Shape s = x.shape();
  if (x.ndim() == 0) return {{s, x.dtype()}, {s, DType::Int64}};
  const size_t ax = size_t(normalize_axis(a.i("axis"), x.ndim(), "Median"));
  KILN_CHECK(s[ax] > 0, Value, "For 'Median', the axis ", a.i("axis"), " is empty (input shape ", shape_str(s), ").");
  if (a.b("keepdims")) s[ax] = 1;
  else s.erase(s.begin() + std::ptrdiff_t(ax));
  return {{s, x.dtype()}, {s, DType::Int64}};
}
template <typename T>
void median_lines(const T* px, T* pv, int64_t* pi, const Lines& l, bool ignore_nan) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner;
  const int64_t lines = l.outer * inner;
#pragma omp parallel for schedule(static) if (lines * n >= cpu::kParallelMin && lines > 1 && !omp_in_parallel())
  for (int64_t li = 0; li < lines; ++li) {
    const int64_t o = li / inner, i = li % inner;
    const T* src = px + o * n * inner + i;
    std::vector<std::pair<C, int64_t>> v;
    v.reserve(size_t(n));
    int64_t first_nan = -1;
    for (int64_t t = 0; t < n; ++t) {
      const C c = C(src[t * inner]);
      if constexpr (std::is_floating_point_v<C>) {
        if (c != c) {
          if (first_nan < 0) first_nan = t;
          continue;
        }
      }
      v.emplace_back(c, t);
    }
    int64_t pick;
    if (first_nan >= 0 && (!ignore_nan || v.empty())) {
      pick = ignore_nan ? 0 : first_nan;
    } else {
      auto mid = v.begin() + std::ptrdiff_t((v.size() - 1) / 2);
      std::nth_element(v.begin(), mid, v.end());  // pairs: by value, then by index (a stable sort's order)
      pick = mid->second;
    }
    pv[li] = src[pick * inner];
    pi[li] = pick;
  }
}
void run_median(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  const Lines l = lines_of(x, x.ndim() ? a.i("axis") : 0, "Median");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      median_lines<T>(x.data<T>(), out[0].data<T>(), out[1].data<int64_t>(), l, a.b("ignore_nan"));
  });
}
// d values: the cotangent at the picked element (GatherDGrad along the axis, the indices kept as a length-1 axis).
TV bp_median(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  if (!g[0].defined()) return {ops::zeros_like(x)};
  Tensor gv = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  if (x.ndim() == 0) return {gv};
  const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), "Median");
  Tensor idx = out[1];
  if (!a.b("keepdims")) {
    gv = ops::expand_dims(gv, ax);
    idx = ops::expand_dims(idx, ax);
  }
  return {apply1(OpId::GatherDGrad, {gv, idx}, {{"dim", ax}, {"shape", x.shape()}})};
}
}  // namespace

namespace ops_impl {
void register_scan() {
  register_kernel(OpId::CumSum, infer_cumsum, run_scan<false>, bp_cumsum);
  register_kernel(OpId::CumProd, infer_cumprod, run_scan<true>, bp_cumprod);
  register_kernel(OpId::CumProdGrad, infer_cumprod_grad, run_cumprod_grad);  // made by bp_cumprod's unrecorded pass
  register_kernel(OpId::CumMax, infer_cummax, run_cumext<true>, bp_cumext);
  register_kernel(OpId::CumMin, infer_cummin, run_cumext<false>, bp_cumext);
  register_kernel(OpId::LogCumSumExp, infer_logcumsumexp, run_logcumsumexp, bp_logcumsumexp);
  register_kernel(OpId::Median, infer_median, run_median, bp_median);
}
}  // namespace ops_impl
}  // namespace kiln
