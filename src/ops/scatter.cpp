// Functional updates and value checks: TensorScatterUpdate (a copy of x with slices replaced: what Tensor
// __setitem__ records, so that item assignment is differentiable and traceable), TensorCopy (a fresh copy of a
// tensor: Tensor.copy()/clone()) and CheckRange (checks a tensor's values against a range and returns it: the value
// checks of class-index losses, run by the kernel in PyNative and at every run of a compiled graph).
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
std::vector<TensorMeta> infer_tsu(const TV& in, const Attrs&) {
  const Tensor &x = in[0], &idx = in[1], &upd = in[2];
  KILN_CHECK(is_integral(idx.dtype()), Type, "For 'TensorScatterUpdate', the indices must be an integer tensor, "
             "but got ", dtype_name(idx.dtype()), ".");
  KILN_CHECK(idx.ndim() >= 1, Value, "For 'TensorScatterUpdate', the indices must have at least one dimension (the "
             "last holds the coordinates), but got a 0-d tensor.");
  const int64_t n = idx.shape().back();
  KILN_CHECK(n >= 1 && n <= x.ndim(), Value, "For 'TensorScatterUpdate', the last dimension of the indices (", n,
             ") must be in [1, ", x.ndim(), "] (the input's rank); input shape ", shape_str(x.shape()),
             ", indices shape ", shape_str(idx.shape()), ".");
  Shape want(idx.shape().begin(), idx.shape().end() - 1);
  want.insert(want.end(), x.shape().begin() + n, x.shape().end());
  KILN_CHECK(upd.shape() == want, Value, "For 'TensorScatterUpdate', the updates must have shape ", shape_str(want),
             " (indices.shape[:-1] + input.shape[", n, ":]), but got ", shape_str(upd.shape()), ".");
  KILN_CHECK(upd.dtype() == x.dtype(), Type, "For 'TensorScatterUpdate', the updates must have the input's dtype ",
             dtype_name(x.dtype()), ", but got ", dtype_name(upd.dtype()), ".");
  return {{x.shape(), x.dtype()}};
}

void run_tsu(const TV& in, TV& out, const Attrs&) {
  const Tensor& x = in[0];
  Tensor idx = ew::as_dtype(in[1], DType::Int64).contiguous();
  Tensor upd = in[2].contiguous();
  Tensor& o = out[0];
  copy_into(x, o);
  const Shape& s = x.shape();
  const size_t n = size_t(idx.shape().back());
  const int64_t rows = n ? idx.numel() / int64_t(n) : 0;
  const size_t slice = size_t(prod_of(s, n, s.size())) * itemsize(x.dtype());
  const int64_t* pi = idx.data<int64_t>();
  const char* pu = static_cast<const char*>(upd.raw_data());
  char* po = static_cast<char*>(o.raw_data());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t lin = 0;
    for (size_t k = 0; k < n; ++k) {
      const int64_t v = pi[size_t(r) * n + k];
      if (v < 0 || v >= s[k]) {
        std::ostringstream row;
        for (size_t j = 0; j < n; ++j) row << (j ? ", " : "") << pi[size_t(r) * n + j];
        KILN_FAIL(Index, "For 'TensorScatterUpdate', the index [", row.str(), "] (row ", r, " of the indices) is out "
                  "of range for the input of shape ", shape_str(s), ": coordinate ", k, " must be in [0, ", s[k], ").");
      }
      lin = lin * s[k] + v;
    }
    if (slice) std::memcpy(po + size_t(lin) * slice, pu + size_t(r) * slice, slice);
  }
}

// The flat row (into x.shape[:N]) of every index row: Σ_k idx[..., k] · Π_{j>k} x.shape[j], shape (M,).
Tensor linear_rows(const Tensor& indices, const Shape& xs) {
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
Tensor tensor_scatter_update(const Tensor& x, const Tensor& indices, const Tensor& updates) {
  return apply1(OpId::TensorScatterUpdate, {x, indices, updates});
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
