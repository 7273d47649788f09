// Softmax and LogSoftmax along one axis (attr axis, may be negative). Numerically stable: the max along the
// axis is subtracted before exponentiating. Float inputs only (TypeError otherwise); the output has the input's
// dtype, and Float16/BFloat16 are computed in float32.
// Float32 rows along a contiguous axis are vectorized (Note [vectorized softmax rows]: max and sum in packets, exp
// on vmath's vector exp, ≤ 1.2e-7 relative to libm's); rows are split over the threads from cpu::kParallelMin
// elements (results independent of the split).
// Gradients: softmax: y·(g − Σ g·y); log_softmax: g − exp(y)·Σ g (sums along the axis).
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "elementwise.h"
#include "families.h"
#include "vmath.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

// f(c) for c in [0, chunks) on the OpenMP threads (kept out of KILN_DISPATCH: no pragma inside a macro argument).
// f must not throw.
template <typename F>
void run_row_chunks(int64_t chunks, F&& f) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) f(c);
}

template <bool Log>
std::vector<TensorMeta> infer_softmax(const TV& in, const Attrs& a) {
  const char* op = Log ? "LogSoftmax" : "Softmax";
  const Tensor& x = in[0];
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', the input must be a float tensor (Float16, BFloat16, ",
             "Float32 or Float64), but got ", dtype_name(x.dtype()), ".");
  normalize_axis(a.i("axis"), x.ndim(), op);
  return {{x.shape(), x.dtype()}};
}

// Note [vectorized softmax rows]: one Float32 row of n contiguous elements (ob may be xb). The max and the sum of
// the exponentials are taken in packets of vmath::kLanes lanes (one accumulator per lane, lanes combined at the end,
// then the tail elements in order), not as one sequential chain: a scalar max/sum chain of a 64-wide attention row
// cost ~4 cycles per element of latency, about 3/4 of the row's time. The max is exact whatever the order (a NaN
// or +inf in the row makes the whole row NaN either way, as NumPy's and the double path's). The sum's rounding
// differs from a sequential sum by a few ulps (relative ~n·2^-24 at worst, as any order); each exponential is
// vmath's (exp_p, the same value whatever its position: a tail is padded into one packet). Softmax stores the
// exponentials into ob and scales them in place; LogSoftmax writes (x − max) − log(sum).
template <bool Log>
void softmax_row_f32(const float* xb, float* ob, int64_t n) {
  namespace ei = vmath::ei;
  using P = vmath::Packet;
  constexpr int64_t L = vmath::kLanes;
  const int64_t full = n / L * L;
  float m;
  {
    int64_t k = 0;
    if (full > 0) {
      P pm = ei::ploadu<P>(xb);
      for (k = L; k < full; k += L) pm = ei::pmax(pm, ei::ploadu<P>(xb + k));
      alignas(64) float lanes[L];
      ei::pstore(lanes, pm);
      m = lanes[0];
      for (int64_t i = 1; i < L; ++i) m = std::max(m, lanes[i]);
    } else {
      m = xb[0];
      k = 1;
    }
    for (; k < n; ++k) m = std::max(m, xb[k]);
  }
  const P pm = ei::pset1<P>(m);
  P acc = ei::pzero(pm);
  for (int64_t k = 0; k < full; k += L) {
    const P e = vmath::exp_p(ei::psub(ei::ploadu<P>(xb + k), pm));
    acc = ei::padd(acc, e);
    if constexpr (!Log) ei::pstoreu(ob + k, e);
  }
  alignas(64) float lanes[L];
  ei::pstore(lanes, acc);
  float s = 0.f;
  for (int64_t i = 0; i < L; ++i) s += lanes[i];
  if (full < n) {  // the tail, padded into one packet (its exponentials equal vmath::apply's)
    alignas(64) float buf[L] = {};
    for (int64_t k = full; k < n; ++k) buf[k - full] = xb[k];
    ei::pstore(buf, vmath::exp_p(ei::psub(ei::pload<P>(buf), pm)));
    for (int64_t k = full; k < n; ++k) {
      s += buf[k - full];
      if constexpr (!Log) ob[k] = buf[k - full];
    }
  }
  if constexpr (Log) {
    const float ls = std::log(s);
    for (int64_t k = 0; k < n; ++k) ob[k] = (xb[k] - m) - ls;
  } else {
    const float inv = 1.f / s;
    for (int64_t k = 0; k < n; ++k) ob[k] *= inv;
  }
}

// Rows [o0, o1) of the (outer, n, inner) view: the softmax along n of each (row, inner position).
template <bool Log, typename T>
void softmax_rows(const T* px, T* po, int64_t o0, int64_t o1, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  std::vector<C> mx(static_cast<size_t>(inner)), sm(static_cast<size_t>(inner));
  std::vector<C> row(static_cast<size_t>(inner == 1 && !std::is_same_v<T, float> ? n : 0));
  for (int64_t o = o0; o < o1; ++o) {
    const T* xb = px + o * n * inner;
    T* ob = po + o * n * inner;
    if (inner == 1) {  // contiguous along the axis: a tight loop per row
      if constexpr (std::is_same_v<T, float>) {
        softmax_row_f32<Log>(xb, ob, n);
      } else {
        C m = C(xb[0]);
        for (int64_t k = 1; k < n; ++k) m = std::max(m, C(xb[k]));
        for (int64_t k = 0; k < n; ++k) row[size_t(k)] = std::exp(C(xb[k]) - m);
        C s = 0;
        for (int64_t k = 0; k < n; ++k) s += row[size_t(k)];
        if constexpr (Log) {
          const C ls = std::log(s);
          for (int64_t k = 0; k < n; ++k) ob[k] = T((C(xb[k]) - m) - ls);
        } else {  // exp once, kept in the compute type until normalized
          const C inv = C(1) / s;
          for (int64_t k = 0; k < n; ++k) ob[k] = T(row[size_t(k)] * inv);
        }
      }
      continue;
    }
    for (int64_t j = 0; j < inner; ++j) { mx[size_t(j)] = C(xb[j]); sm[size_t(j)] = 0; }
    for (int64_t k = 1; k < n; ++k)
      for (int64_t j = 0; j < inner; ++j) mx[size_t(j)] = std::max(mx[size_t(j)], C(xb[k * inner + j]));
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < inner; ++j) sm[size_t(j)] += std::exp(C(xb[k * inner + j]) - mx[size_t(j)]);
    if constexpr (Log) {
      for (int64_t j = 0; j < inner; ++j) sm[size_t(j)] = std::log(sm[size_t(j)]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < inner; ++j)
          ob[k * inner + j] = T((C(xb[k * inner + j]) - mx[size_t(j)]) - sm[size_t(j)]);
    } else {
      for (int64_t j = 0; j < inner; ++j) sm[size_t(j)] = C(1) / sm[size_t(j)];
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < inner; ++j)
          ob[k * inner + j] = T(std::exp(C(xb[k * inner + j]) - mx[size_t(j)]) * sm[size_t(j)]);
    }
  }
}

template <bool Log>
void run_softmax(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  int64_t outer = 1, n = 1, inner = 1;
  if (x.ndim() > 0) {
    const int64_t ax = normalize_axis(a.i("axis"), x.ndim(), Log ? "LogSoftmax" : "Softmax");
    for (int64_t i = 0; i < ax; ++i) outer *= x.shape()[size_t(i)];
    n = x.shape()[size_t(ax)];
    for (int64_t i = ax + 1; i < x.ndim(); ++i) inner *= x.shape()[size_t(i)];
  }
  if (outer * n * inner == 0) return;
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* px = x.data<T>();
      T* po = out[0].data<T>();
      // Rows are independent (each row's numbers do not depend on the split): from cpu::kParallelMin elements up,
      // chunks of rows (about 8192 elements each) run on the OpenMP threads.
      const int64_t per = std::max<int64_t>(1, 8192 / (n * inner));
      const int64_t chunks = (outer + per - 1) / per;
      if (outer * n * inner < cpu::kParallelMin || chunks < 2 || omp_get_max_threads() == 1 || omp_in_parallel()) {
        softmax_rows<Log, T>(px, po, 0, outer, n, inner);
      } else {
        run_row_chunks(chunks, [&](int64_t c) {
          softmax_rows<Log, T>(px, po, c * per, std::min(outer, (c + 1) * per), n, inner);
        });
      }
    }
  });
}

ops::Axes axis_of(const Tensor& x, const Attrs& a) {
  if (x.ndim() == 0) return {0};
  return {normalize_axis(a.i("axis"), x.ndim(), "Softmax")};
}
TV bp_softmax(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  Tensor y = out[0];
  Tensor s = ops::sum(ops::mul(g[0], y), axis_of(y, a), true);
  return {ops::mul(y, ops::sub(g[0], s))};
}
TV bp_log_softmax(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  Tensor y = out[0];
  Tensor s = ops::sum(g[0], axis_of(y, a), true);
  return {ops::sub(g[0], ops::mul(ops::exp(y), s))};
}

}  // namespace

namespace ops_impl {
void register_softmax() {
  OpDef s;
  s.id = OpId::Softmax;
  s.infer = infer_softmax<false>;
  s.cpu = run_softmax<false>;
  s.bprop = bp_softmax;
  register_op(s);
  OpDef l;
  l.id = OpId::LogSoftmax;
  l.infer = infer_softmax<true>;
  l.cpu = run_softmax<true>;
  l.bprop = bp_log_softmax;
  register_op(l);
}
}  // namespace ops_impl

namespace ops {
Tensor softmax(const Tensor& x, int64_t axis) { return apply1(OpId::Softmax, {x}, {{"axis", axis}}); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return apply1(OpId::LogSoftmax, {x}, {{"axis", axis}}); }
}  // namespace ops
}  // namespace kiln
