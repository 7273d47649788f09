// Functional updates and value checks: TensorScatterUpdate (a copy of x with slices replaced: what Tensor
// __setitem__ records, so that item assignment is differentiable and traceable), TensorCopy (a fresh copy of a
// tensor: Tensor.copy()/clone()) and CheckRange (checks a tensor's values against a range and returns it: the value
// checks of class-index losses, run by the kernel in PyNative and at every run of a compiled graph).
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

int64_t prod_of(const Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

// ---- TensorScatterUpdate(x, indices, updates) ----
// MindSpore's TensorScatterUpdate: indices (..., N) integer with N <= x.ndim; updates of shape
// indices.shape[:-1] + x.shape[N:] and x's dtype. out = x, then out[indices[i]] = updates[i] for every index row i
// in row-major order (a repeated index keeps the last update, as NumPy's item assignment).
// The shape and dtype checks of the nd scatters, naming `op`: indices (..., N) integer with 1 <= N <= x.ndim,
// updates of shape indices.shape[:-1] + x.shape[N:] and x's dtype.
void check_nd(const TV& in, const std::string& op, bool rows = false) {
  const Tensor &x = in[0], &idx = in[1], &upd = in[2];
  if (rows) {  // indices of any shape holding row numbers into axis 0: updates indices.shape + x.shape[1:]
    KILN_CHECK(is_integral(idx.dtype()), Type, "For '", op, "', the indices must be an integer tensor, but got ",
               dtype_name(idx.dtype()), ".");
    Shape want = idx.shape();
    want.insert(want.end(), x.shape().begin() + 1, x.shape().end());
    KILN_CHECK(upd.shape() == want, Value, "For '", op, "', the updates must have shape ", shape_str(want),
               " (indices.shape + input.shape[1:]), but got ", shape_str(upd.shape()), ".");
    KILN_CHECK(upd.dtype() == x.dtype(), Type, "For '", op, "', the updates must have the input's dtype ",
               dtype_name(x.dtype()), ", but got ", dtype_name(upd.dtype()), ".");
    return;
  }
  KILN_CHECK(is_integral(idx.dtype()), Type, "For '", op, "', the indices must be an integer tensor, but got ",
             dtype_name(idx.dtype()), ".");
  KILN_CHECK(idx.ndim() >= 1, Value, "For '", op, "', the indices must have at least one dimension (the last holds "
             "the coordinates), but got a 0-d tensor.");
  const int64_t n = idx.shape().back();
  KILN_CHECK(n >= 1 && n <= x.ndim(), Value, "For '", op, "', the last dimension of the indices (", n,
             ") must be in [1, ", x.ndim(), "] (the input's rank); input shape ", shape_str(x.shape()),
             ", indices shape ", shape_str(idx.shape()), ".");
  Shape want(idx.shape().begin(), idx.shape().end() - 1);
  want.insert(want.end(), x.shape().begin() + n, x.shape().end());
  KILN_CHECK(upd.shape() == want, Value, "For '", op, "', the updates must have shape ", shape_str(want),
             " (indices.shape[:-1] + input.shape[", n, ":]), but got ", shape_str(upd.shape()), ".");
  KILN_CHECK(upd.dtype() == x.dtype(), Type, "For '", op, "', the updates must have the input's dtype ",
             dtype_name(x.dtype()), ", but got ", dtype_name(upd.dtype()), ".");
}

// The name in TensorScatterUpdate's errors: the attribute "op" when the caller set one (ops.scatter_update,
// ScatterNdUpdate, ...), else the primitive's.
std::string tsu_name(const Attrs& a) {
  const AttrValue* op = a.find("op");
  return op ? std::get<std::string>(*op) : std::string("TensorScatterUpdate");
}

std::vector<TensorMeta> infer_tsu(const TV& in, const Attrs& a) {
  check_nd(in, tsu_name(a));
  return {{in[0].shape(), in[0].dtype()}};
}

// The flat row numbers (into x.shape[:N]) of the index rows of idx (Int64, contiguous, (M, N)), each coordinate
// checked: one outside [0, x.shape[k]) raises `kind` naming `op`, the index row and the input's shape.
std::vector<int64_t> nd_rows(const Tensor& idx, const Shape& s, const std::string& op, ErrorKind kind,
                             bool row_numbers = false) {
  const size_t n = row_numbers ? 1 : size_t(idx.shape().back());
  const int64_t rows = n ? idx.numel() / int64_t(n) : 0;
  const int64_t* pi = idx.data<int64_t>();
  std::vector<int64_t> lin(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t l = 0;
    for (size_t k = 0; k < n; ++k) {
      const int64_t v = pi[size_t(r) * n + k];
      if (v < 0 || v >= s[k]) {
        std::ostringstream row;
        for (size_t j = 0; j < n; ++j) row << (j ? ", " : "") << pi[size_t(r) * n + j];
        throw Error(kind, detail::str("For '", op, "', the index [", row.str(), "] (row ", r, " of the indices) is "
                                      "out of range for the input of shape ", shape_str(s), ": coordinate ", k,
                                      " must be in [0, ", s[k], ")."));
      }
      l = l * s[k] + v;
    }
    lin[size_t(r)] = l;
  }
  return lin;
}

void run_tsu(const TV& in, TV& out, const Attrs& a) {
  const Tensor& x = in[0];
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  Tensor upd = in[2].contiguous();
  Tensor& o = out[0];
  copy_into(x, o);
  const Shape& s = x.shape();
  const size_t n = size_t(idx.shape().back());
  const std::vector<int64_t> lin = nd_rows(idx, s, tsu_name(a), ErrorKind::Index);
  const size_t slice = size_t(prod_of(s, n, s.size())) * itemsize(x.dtype());
  const char* pu = static_cast<const char*>(upd.raw_data());
  char* po = static_cast<char*>(o.raw_data());
  for (size_t r = 0; r < lin.size(); ++r)
    if (slice) std::memcpy(po + size_t(lin[r]) * slice, pu + r * slice, slice);
}

// The flat row (into x.shape[:N]) of every index row: Σ_k idx[..., k] · Π_{j>k} x.shape[j], shape (M,).
Tensor linear_rows(const Tensor& indices, const Shape& xs, bool rows = false) {
  if (rows) return ops::reshape(ops::cast(indices, DType::Int64), {indices.numel()});
  const int64_t n = indices.shape().back(), m = indices.numel() / std::max<int64_t>(n, 1);
  Tensor idx = ops::reshape(ops::cast(indices, DType::Int64), {m, n});
  Tensor lin;
  for (int64_t k = 0; k < n; ++k) {
    Tensor col = ops::reshape(ops::strided_slice(idx, {0, k}, {m, k + 1}, {1, 1}), {m});
    lin = k == 0 ? col : ops::add(ops::mul(lin, Tensor::scalar(double(xs[size_t(k)]), DType::Int64, true)), col);
  }
  return lin;
}

// d x = g with the written slices zeroed (TensorScatterUpdate of zeros); d updates = g at the written slices
// (a gather), zero for an update that a later repeat of its index overwrote (only the last one reaches the output).
TV bp_tsu(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor &x = in[0], &indices = in[1], &upd = in[2];
  const Shape& xs = x.shape();
  const int64_t n = indices.shape().back();
  const int64_t m = indices.numel() / n, p = prod_of(xs, 0, size_t(n));
  Tensor gx = ops::tensor_scatter_update(g[0], indices, ops::zeros(upd.shape(), g[0].dtype()));
  Tensor lin = linear_rows(indices, xs);
  Shape rows_shape{p};
  rows_shape.insert(rows_shape.end(), xs.begin() + n, xs.end());
  Tensor gathered = ops::gather(ops::reshape(g[0], rows_shape), lin, 0);  // (M,) + x.shape[N:]
  Tensor order = ops::arange(0.0, double(m), 1.0, DType::Int64);
  Tensor winner = ops::tensor_scatter_update(ops::full({p}, -1.0, DType::Int64), ops::reshape(lin, {m, 1}), order);
  Shape keep_shape{m};
  keep_shape.resize(size_t(gathered.ndim()), 1);
  Tensor keep = ops::reshape(ops::equal(ops::gather(winner, lin, 0), order), keep_shape);
  Tensor gu = ops::select(keep, gathered, ops::zeros_like(gathered));
  gu = ops::reshape(gu, upd.shape());
  return {gx, Tensor(), gu.dtype() == upd.dtype() ? gu : ops::cast(gu, upd.dtype())};
}

// ---- TensorScatterReduce(x, indices, updates; reduction, op) ----
// MindSpore's TensorScatterAdd / Sub / Mul / Div / Max / Min as one op (attribute reduction: "add" | "sub" | "mul" |
// "div" | "max" | "min"): out = x, then out[indices[i]] = out[indices[i]] <reduction> updates[i] for every index row
// i in row-major order (MindSpore's CPU kernels' order), so repeated indices combine in turn. Shapes as
// TensorScatterUpdate. An index outside [0, x.shape[k]) (negative ones too) is a ValueError naming the attribute op
// (the public function called; default the MindSpore primitive). Integer div truncates toward zero; an integer
// division by 0 gives 0 (what the former composition gave). max/min propagate NaN. One sequential pass (a repeated
// index makes rows depend on each other).
enum class SRed { Add, Sub, Mul, Div, Max, Min };

SRed sred_of(const std::string& r) {
  if (r == "add") return SRed::Add;
  if (r == "sub") return SRed::Sub;
  if (r == "mul") return SRed::Mul;
  if (r == "div") return SRed::Div;
  if (r == "max") return SRed::Max;
  if (r == "min") return SRed::Min;
  KILN_FAIL(Value, "For 'TensorScatterReduce', the reduction must be one of 'add', 'sub', 'mul', 'div', 'max', "
            "'min', but got '", r, "'.");
}

std::string tsr_name(const Attrs& a) {
  const AttrValue* op = a.find("op");
  if (op) return std::get<std::string>(*op);
  const std::string r = a.s("reduction");
  return "TensorScatter" + std::string(1, char(std::toupper(r[0]))) + r.substr(1);
}

bool tsr_rows_attr(const Attrs& a) { return a.find("rows") != nullptr && a.b("rows"); }

std::vector<TensorMeta> infer_tsr(const TV& in, const Attrs& a) {
  const SRed red = sred_of(a.s("reduction"));
  const std::string op = tsr_name(a);
  KILN_CHECK(in[0].ndim() >= 1, Value, "For '", op, "', the input must have rank >= 1, but got a 0-d tensor.");
  check_nd(in, op, tsr_rows_attr(a));
  const DType t = in[0].dtype();
  KILN_CHECK(t != DType::Bool || red == SRed::Add || red == SRed::Mul || red == SRed::Max || red == SRed::Min, Type,
             "For '", op, "', the input must be a number tensor (Bool has no '", a.s("reduction"), "'), but got Bool.");
  return {{in[0].shape(), t}};
}

template <typename T> void tsr_rows(SRed red, T* po, const T* pu, const std::vector<int64_t>& lin, int64_t inner) {
  using C = compute_t<T>;
  for (size_t r = 0; r < lin.size(); ++r) {
    T* d = po + lin[r] * inner;
    const T* u = pu + int64_t(r) * inner;
    for (int64_t j = 0; j < inner; ++j) {
      const C a = C(d[j]), b = C(u[j]);
      C v;
      switch (red) {
        case SRed::Add: v = C(a + b); break;
        case SRed::Sub: v = C(a - b); break;
        case SRed::Mul: v = C(a * b); break;
        case SRed::Div:
          if constexpr (std::is_integral_v<C>) {
            if constexpr (std::is_same_v<C, bool>) v = a;
            else if (b == C(0)) v = C(0);
            else if constexpr (std::is_signed_v<C>) v = b == C(-1) ? C(C(0) - a) : C(a / b);
            else v = C(a / b);
          } else {
            v = C(a / b);
          }
          break;
        case SRed::Max: v = (b > a || b != b) ? b : a; break;
        default: v = (b < a || b != b) ? b : a; break;
      }
      d[j] = convert_value<T>(v);
    }
  }
}

void run_tsr(const TV& in, TV& out, const Attrs& a) {
  const SRed red = sred_of(a.s("reduction"));
  const Tensor& x = in[0];
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  Tensor upd = in[2].contiguous();
  Tensor& o = out[0];
  copy_into(x, o);
  const Shape& s = x.shape();
  const bool rows = tsr_rows_attr(a);
  const size_t n = rows ? 1 : size_t(idx.shape().back());
  const std::vector<int64_t> lin = nd_rows(idx, s, tsr_name(a), ErrorKind::Value, rows);
  const int64_t inner = prod_of(s, n, s.size());
  if (lin.empty() || inner == 0) return;
  KILN_DISPATCH_ALL(o.dtype(), [&](auto tag) {
    using T = decltype(tag);
    tsr_rows<T>(red, o.data<T>(), upd.data<T>(), lin, inner);
  });
}

Tensor tsr(const Tensor& x, const Tensor& idx, const Tensor& upd, const char* reduction, bool rows) {
  Attrs a{{"reduction", std::string(reduction)}};
  if (rows) a.items.push_back({"rows", true});
  return apply1(OpId::TensorScatterReduce, {x, idx, upd}, a);
}

// g at the written rows: (M,) + x.shape[N:] reshaped to the updates' shape (GatherNd of g at the indices).
Tensor rows_of(const Tensor& t, const Tensor& indices, const Shape& upd_shape, bool rows) {
  const Shape& xs = t.shape();
  const int64_t n = rows ? 1 : indices.shape().back();
  Shape rows_shape{prod_of(xs, 0, size_t(n))};
  rows_shape.insert(rows_shape.end(), xs.begin() + n, xs.end());
  return ops::reshape(ops::gather(ops::reshape(t, rows_shape), linear_rows(indices, xs, rows), 0), upd_shape);
}

// Gradients (the former compositions' for add/sub/mul/div; MindSpore 2.10's for max/min):
//   add/sub: d x = g, d updates = ±g at the rows.
//   mul: out = x · R, R the product of the updates landing on a place: d x = g · R, d u_i = (g · x) at u_i's row ·
//     the product of the other updates on that row (ReduceProd's rule, exact with zeros: zero count z of the row; z = 0:
//     R / u_i; z = 1: at the zero the product of the non-zeros, elsewhere 0; z >= 2: 0).
//   div: out = x / R: d x = g / R, d u_i = (−g · x / R²) at the row · that same product of the others.
//   max/min: x and the updates equal to out share g equally at each place (MindSpore's TensorScatterMax/Min bprop:
//     d x = g · [x == out] / n, d u_i = (g / n) at the row · [u_i == out at the row], n the number of them).
TV bp_tsr(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &indices = in[1], &upd = in[2];
  const SRed red = sred_of(a.s("reduction"));
  const bool rw = tsr_rows_attr(a);
  const Tensor& gy = g[0];
  auto like = [](const Tensor& t, const Tensor& ref) { return t.dtype() == ref.dtype() ? t : ops::cast(t, ref.dtype()); };
  if (red == SRed::Add || red == SRed::Sub) {
    Tensor gu = rows_of(gy, indices, upd.shape(), rw);
    return {like(gy, x), Tensor(), like(red == SRed::Add ? gu : ops::neg(gu), upd)};
  }
  if (red == SRed::Max || red == SRed::Min) {
    const Tensor& y = out[0];
    Tensor x_win = ops::cast(ops::equal(x, y), gy.dtype());
    Tensor u_win = ops::cast(ops::equal(upd, rows_of(y, indices, upd.shape(), rw)), gy.dtype());
    Tensor cnt = tsr(x_win, indices, u_win, "add", rw);
    Tensor share = ops::div(gy, cnt);
    return {like(ops::mul(share, x_win), x), Tensor(), like(ops::mul(rows_of(share, indices, upd.shape(), rw), u_win), upd)};
  }
  // mul / div: the product R of the updates per place, and every update's product of the others (zero-safe)
  Tensor zero = Tensor::scalar(0.0, upd.dtype(), true), one = Tensor::scalar(1.0, upd.dtype(), true);
  Tensor is_zero = ops::equal(upd, zero);
  Tensor u_safe = ops::select(is_zero, ops::ones_like(upd), upd);
  Tensor p_safe = tsr(ops::ones_like(x), indices, u_safe, "mul", rw);       // product of the non-zero updates
  Tensor nz = tsr(ops::zeros_like(x), indices, ops::cast(is_zero, upd.dtype()), "add", rw);  // zeros per place
  Tensor r = ops::select(ops::equal(nz, zero), p_safe, ops::zeros_like(p_safe));
  Tensor nz_u = rows_of(nz, indices, upd.shape(), rw), p_u = rows_of(p_safe, indices, upd.shape(), rw);
  Tensor zeros_u = ops::zeros_like(upd);
  Tensor at_zero = ops::select(ops::equal(nz_u, one), p_u, zeros_u);
  Tensor elsewhere = ops::select(ops::equal(nz_u, zero), ops::div(p_u, u_safe), zeros_u);
  Tensor others = ops::select(is_zero, at_zero, elsewhere);
  if (red == SRed::Mul) {
    Tensor gu = ops::mul(rows_of(ops::mul(gy, x), indices, upd.shape(), rw), others);
    return {like(ops::mul(gy, r), x), Tensor(), like(gu, upd)};
  }
  Tensor gr = ops::neg(ops::div(ops::mul(gy, x), ops::mul(r, r)));
  return {like(ops::div(gy, r), x), Tensor(), like(ops::mul(rows_of(gr, indices, upd.shape(), rw), others), upd)};
}

// ---- TensorScatterElements(x, indices, updates; axis, reduction[, slices][, op]) ----
// MindSpore's TensorScatterElements (reduction "none" | "add"): out = x, then for every position p of indices (of
// x's rank, no longer than x on the other axes) out[p with p[axis] = indices[p]] = (or +=) updates[p], in row-major
// order (a repeated target keeps the last update with "none", accumulates with "add"). With the attribute slices the
// indices are 1-D (or 0-d) and pick whole slices along axis: "add" adds updates (x's shape with len(indices) on
// axis; MindSpore's IndexAdd), "none" fills them with the 0-d updates (MindSpore's IndexFill). Negative indices count
// from the end; one outside [-n, n) is a ValueError naming the attribute op (both modes). One sequential pass.
std::string tse_name(const Attrs& a) {
  const AttrValue* op = a.find("op");
  return op ? std::get<std::string>(*op) : std::string("TensorScatterElements");
}
bool tse_slices(const Attrs& a) { return a.find("slices") != nullptr && a.b("slices"); }

std::vector<TensorMeta> infer_tse(const TV& in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1], &upd = in[2];
  const std::string op = tse_name(a), red = a.s("reduction");
  KILN_CHECK(red == "none" || red == "add", Value, "For '", op, "', the reduction must be 'none' or 'add', but got '",
             red, "'.");
  KILN_CHECK(is_integral(idx.dtype()), Type, "For '", op, "', the index must be an integer tensor, but got ",
             dtype_name(idx.dtype()), ".");
  KILN_CHECK(x.ndim() >= 1, Value, "For '", op, "', the input must have rank >= 1, but got a 0-d tensor.");
  KILN_CHECK(upd.dtype() == x.dtype(), Type, "For '", op, "', the updates must have the input's dtype ",
             dtype_name(x.dtype()), ", but got ", dtype_name(upd.dtype()), ".");
  const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), op.c_str());
  if (tse_slices(a)) {
    KILN_CHECK(idx.ndim() <= 1, Value, "For '", op, "', the index must be 1-D, but got shape ", shape_str(idx.shape()),
               ".");
    if (red == "none") {
      KILN_CHECK(upd.ndim() == 0, Value, "For '", op, "', the fill value must be 0-d, but got shape ",
                 shape_str(upd.shape()), ".");
    } else {
      Shape want = x.shape();
      want[size_t(ax)] = idx.numel();
      KILN_CHECK(upd.shape() == want, Value, "For '", op, "', the updates must have shape ", shape_str(want),
                 " (the input's with len(index) on axis ", ax, "), but got ", shape_str(upd.shape()), ".");
    }
    return {{x.shape(), x.dtype()}};
  }
  KILN_CHECK(idx.ndim() == x.ndim(), Value, "For '", op, "', the index must have the input's rank (", x.ndim(),
             "), but got shape ", shape_str(idx.shape()), ".");
  for (int64_t d = 0; d < x.ndim(); ++d)
    KILN_CHECK(d == ax || idx.shape()[size_t(d)] <= x.shape()[size_t(d)], Value, "For '", op, "', the index of shape ",
               shape_str(idx.shape()), " is larger than the input of shape ", shape_str(x.shape()), " on axis ", d,
               ".");
  KILN_CHECK(upd.shape() == idx.shape(), Value, "For '", op, "', the updates must have the index's shape ",
             shape_str(idx.shape()), ", but got ", shape_str(upd.shape()), ".");
  return {{x.shape(), x.dtype()}};
}

// The indices wrapped into [0, n) (checked: ValueError naming op, the value, its position and the input's shape).
std::vector<int64_t> wrapped(const Tensor& idx, int64_t n, const Shape& xs, int64_t ax, const std::string& op) {
  Tensor i64 = ew::as_dtype(idx, DType::Int64).contiguous();
  const int64_t* p = i64.data<int64_t>();
  std::vector<int64_t> w(size_t(i64.numel()));
  for (size_t k = 0; k < w.size(); ++k) {
    const int64_t v = p[k];
    if (v < -n || v >= n)
      KILN_FAIL(Value, "For '", op, "', every index must be in [", -n, ", ", n, ") (axis ", ax, " of the input of shape ",
                shape_str(xs), "), but got ", v, " at flat position ", k, " of the index of shape ",
                shape_str(idx.shape()), ".");
    w[k] = v < 0 ? v + n : v;
  }
  return w;
}

void run_tse(const TV& in, TV& out, const Attrs& a) {
  const Tensor& x = in[0];
  Tensor upd = in[2].contiguous();
  Tensor& o = out[0];
  copy_into(x, o);
  const Shape& xs = x.shape();
  const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), "TensorScatterElements");
  const int64_t n = xs[size_t(ax)];
  const std::string op = tse_name(a);
  const bool add = a.s("reduction") == "add";
  const std::vector<int64_t> w = wrapped(in[1], n, xs, ax, op);
  if (w.empty() || o.numel() == 0) return;
  const int64_t inner = prod_of(xs, size_t(ax) + 1, xs.size()), outer = prod_of(xs, 0, size_t(ax));
  KILN_DISPATCH_ALL(o.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* po = o.data<T>();
    const T* pu = upd.data<T>();
    auto put = [&](T* d, T v) { *d = add ? convert_value<T>(C(C(*d) + C(v))) : v; };
    if (tse_slices(a)) {
      const int64_t m = int64_t(w.size());
      for (int64_t b = 0; b < outer; ++b)
        for (int64_t j = 0; j < m; ++j) {
          T* d = po + (b * n + w[size_t(j)]) * inner;
          if (add) {
            const T* u = pu + (b * m + j) * inner;
            for (int64_t k = 0; k < inner; ++k) put(d + k, u[k]);
          } else {
            for (int64_t k = 0; k < inner; ++k) d[k] = pu[0];
          }
        }
      return;
    }
    // elements: walk the index's positions in row-major order
    const Shape& is = in[1].shape();
    const size_t r = is.size();
    std::vector<int64_t> xstride(r, 1), pos(r, 0);
    for (size_t d = r - 1; d-- > 0;) xstride[d] = xstride[d + 1] * xs[d + 1];
    for (size_t k = 0; k < w.size(); ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) off += (int64_t(d) == ax ? w[k] : pos[d]) * xstride[d];
      put(po + off, pu[k]);
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < is[d]) break;
        pos[d] = 0;
      }
    }
  });
}

Tensor tse(const Tensor& x, const Tensor& idx, const Tensor& upd, const Attrs& a, const char* reduction) {
  Attrs b{{"axis", a.i("axis")}, {"reduction", std::string(reduction)}};
  if (tse_slices(a)) b.items.push_back({"slices", true});
  return apply1(OpId::TensorScatterElements, {x, idx, upd}, b);
}

// Gradients (those of the former compositions): "add": d x = g, d updates = g at the targets (GatherD; Gather of
// the slices). "none": d x = g with the written places zeroed, d updates = g at its target for the update that
// stayed there (the last of a repeated target; the others 0); a fill value: the sum of g over the filled places.
TV bp_tse(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1], &upd = in[2];
  const Tensor& gy = g[0];
  auto like = [](const Tensor& t, const Tensor& ref) { return t.dtype() == ref.dtype() ? t : ops::cast(t, ref.dtype()); };
  const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), "TensorScatterElements");
  const bool add = a.s("reduction") == "add";
  if (tse_slices(a)) {
    if (add) {
      const double n = double(x.shape()[size_t(ax)]);
      Tensor i64 = ops::cast(ops::reshape(idx, {idx.numel()}), DType::Int64);
      Tensor w = ops::select(ops::less(i64, Tensor::scalar(0.0, DType::Int64, true)),
                             ops::add(i64, Tensor::scalar(n, DType::Int64, true)), i64);
      return {like(gy, x), Tensor(), like(ops::gather(gy, w, ax), upd)};
    }
    Tensor gx = tse(gy, idx, ops::zeros({}, gy.dtype()), a, "none");
    return {like(gx, x), Tensor(), like(ops::sum(ops::sub(gy, gx)), upd)};
  }
  Tensor at = apply1(OpId::GatherD, {gy, idx}, {{"dim", ax}});
  if (add) return {like(gy, x), Tensor(), like(at, upd)};
  Tensor gx = tse(gy, idx, ops::zeros(upd.shape(), gy.dtype()), a, "none");
  Tensor order = ops::reshape(ops::arange(0.0, double(idx.numel()), 1.0, DType::Int64), idx.shape());
  Tensor winner = tse(ops::full(x.shape(), -1.0, DType::Int64), idx, order, a, "none");
  Tensor keep = ops::equal(apply1(OpId::GatherD, {winner, idx}, {{"dim", ax}}), order);
  return {like(gx, x), Tensor(), like(ops::select(keep, at, ops::zeros_like(at)), upd)};
}

// ---- TensorCopy(x): a new contiguous tensor with x's values (MindSpore's TensorMove) ----
std::vector<TensorMeta> infer_same(const TV& in, const Attrs&) { return {{in[0].shape(), in[0].dtype()}}; }
void run_copy(const TV& in, TV& out, const Attrs&) { copy_into(in[0], out[0]); }
TV bp_pass(const TV&, const TV&, const TV& g, const Attrs&) { return {g[0]}; }

// ---- CheckRange(x; op, what, lower, upper, upper_closed[, ignore][, index_error]) ----
// Returns x (an alias) when every value v satisfies lower <= v < upper (v <= upper when upper_closed), or v ==
// ignore; otherwise raises ValueError "For '<op>', every <what> must be in [lower, upper)..., but got v at index
// (i, j)." (IndexError when the attr index_error is present: Tensor indexing's run-time bounds check of an index
// tensor computed in a graph). NaN fails the check. A side-effecting op in graphs (never folded or removed), so a compiled graph checks
// the values at every run, as PyNative does on every call.
std::string num_str(double v) {
  std::ostringstream s;
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) s << int64_t(v);
  else s << v;
  return s.str();
}

TV check_range_direct(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() != DType::Bool, Type, "For '", a.s("op"), "', the ", a.s("what"),
             " values must be numbers, but got a Bool tensor.");
  const double lo = a.f("lower"), hi = a.f("upper");
  const bool closed = a.b("upper_closed");
  const AttrValue* ig = a.find("ignore");
  const bool has_ignore = ig != nullptr;
  const double ignore = has_ignore ? double(std::get<int64_t>(*ig)) : 0.0;
  Tensor c = ew::as_dtype(x, DType::Float64).contiguous();
  const double* p = c.data<double>();
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    const double v = p[i];
    const bool ok = v >= lo && (closed ? v <= hi : v < hi);
    if (ok || (has_ignore && v == ignore)) continue;
    std::ostringstream where;
    where << "(";
    int64_t rest = i;
    Shape coord(x.shape().size());
    for (size_t d = coord.size(); d-- > 0;) { coord[d] = rest % x.shape()[d]; rest /= x.shape()[d]; }
    for (size_t d = 0; d < coord.size(); ++d) where << (d ? ", " : "") << coord[d];
    where << (coord.size() == 1 ? ",)" : ")");
    std::string extra = has_ignore ? " or equal to ignore_index (" + num_str(ignore) + ")" : std::string();
    throw Error(a.find("index_error") ? ErrorKind::Index : ErrorKind::Value,
                detail::str("For '", a.s("op"), "', every ", a.s("what"), " must be in [", num_str(lo), ", ",
                            num_str(hi), closed ? "]" : ")", extra, ", but got ", num_str(v), " at index ",
                            where.str(), "."));
  }
  return {x.alias()};
}

}  // namespace

namespace ops_impl {
void register_scatter() {
  OpDef u;
  u.id = OpId::TensorScatterUpdate;
  u.infer = infer_tsu;
  u.cpu = run_tsu;
  u.bprop = bp_tsu;
  register_op(u);
  OpDef t;
  t.id = OpId::TensorScatterReduce;
  t.infer = infer_tsr;
  t.cpu = run_tsr;
  t.bprop = bp_tsr;
  register_op(t);
  OpDef e;
  e.id = OpId::TensorScatterElements;
  e.infer = infer_tse;
  e.cpu = run_tse;
  e.bprop = bp_tse;
  register_op(e);
  OpDef c;
  c.id = OpId::TensorCopy;
  c.infer = infer_same;
  c.cpu = run_copy;
  c.bprop = bp_pass;
  register_op(c);
  OpDef r;
  r.id = OpId::CheckRange;
  r.infer = infer_same;
  r.direct = check_range_direct;
  r.bprop = bp_pass;
  register_op(r);
}
}  // namespace ops_impl

namespace ops {
Tensor tensor_scatter_update(const Tensor& x, const Tensor& indices, const Tensor& updates, const std::string& op) {
  if (op.empty()) return apply1(OpId::TensorScatterUpdate, {x, indices, updates});
  return apply1(OpId::TensorScatterUpdate, {x, indices, updates}, Attrs{{"op", std::string(op)}});
}
Tensor tensor_scatter_reduce(const Tensor& x, const Tensor& indices, const Tensor& updates,
                             const std::string& reduction, const std::string& op) {
  Attrs a{{"reduction", std::string(reduction)}};
  if (!op.empty()) a.items.push_back({"op", std::string(op)});
  return apply1(OpId::TensorScatterReduce, {x, indices, updates}, a);
}
Tensor tensor_copy(const Tensor& x) { return apply1(OpId::TensorCopy, {x}); }
Tensor check_range(const Tensor& x, const std::string& op, const std::string& what, double lower, double upper,
                   bool upper_closed, std::optional<int64_t> ignore, bool index_error) {
  Attrs a{{"op", std::string(op)}, {"what", std::string(what)}, {"lower", lower}, {"upper", upper},
          {"upper_closed", upper_closed}};
  if (ignore) a.items.push_back({"ignore", *ignore});
  if (index_error) a.items.push_back({"index_error", true});  // present only when set: other graphs keep their attrs
  return apply1(OpId::CheckRange, {x}, a);
}
}  // namespace ops
}  // namespace kiln
