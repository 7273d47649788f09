// Kiln CPU backend — strided N-d loops shared by the elementwise, copy and reduction kernels.
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kiln/shape.h"

namespace kiln::cpu {

// Elements above which an elementwise kernel splits a contiguous run over the OpenMP threads
// (docs/decisions/elementwise-threading-threshold.md: below ~32k elements the fork/join costs more than the second
// core saves). Elementwise results do not depend on the split.
constexpr int64_t kParallelMin = 32768;

// body(start, len) over [0, n): one call below kParallelMin, else chunks of 8192 on the OpenMP threads.
// `body` must not throw.
template <typename F>
void parallel_runs(int64_t n, F&& body) {
  if (n < kParallelMin || omp_get_max_threads() == 1 || omp_in_parallel()) { body(int64_t(0), n); return; }
  constexpr int64_t kChunk = 8192;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(c * kChunk, std::min(kChunk, n - c * kChunk));
}

// A kernel's per-call list of dims, strides or axes: held inline up to kInline entries (no heap allocation on
// the hot path of small ops: a train step of the seed MLP ran ~80 small allocations before this), on the heap
// above. Neither copied nor moved (it may point into itself): fill it in place.
class DimVec {
 public:
  static constexpr size_t kInline = 8;
  DimVec() = default;
  explicit DimVec(size_t n, int64_t v = 0) { assign(n, v); }
  DimVec(const DimVec&) = delete;
  DimVec& operator=(const DimVec&) = delete;
  void assign(size_t n, int64_t v) {
    n_ = n;
    if (n > kInline) {
      heap_.assign(n, v);
      p_ = heap_.data();
    } else {
      p_ = buf_;
      for (size_t i = 0; i < n; ++i) buf_[i] = v;
    }
  }
  size_t size() const { return n_; }
  int64_t* data() { return p_; }
  const int64_t* data() const { return p_; }
  int64_t& operator[](size_t i) { return p_[i]; }
  int64_t operator[](size_t i) const { return p_[i]; }

 private:
  int64_t buf_[kInline];
  std::vector<int64_t> heap_;
  int64_t* p_ = buf_;
  size_t n_ = 0;
};

// Iterates over `shape` with K operands, each with its own strides (0 on broadcast axes). Adjacent axes that
// are contiguous for every operand are merged and size-1 axes dropped, so a contiguous case is one call.
// Calls body(offsets, n, inner_strides): offsets[k] = element offset of operand k at the start of an inner run
// of n elements, inner_strides[k] = its stride along that run.
// The dims of a strided loop after merging (innermost first): adjacent axes contiguous for every operand merged,
// size-1 axes dropped.
template <size_t K>
struct CollapsedDims {
  int nd = 0;
  int64_t total = 1;
  int64_t dims[16];
  int64_t st[K][16];
  CollapsedDims(const int64_t* shape, size_t ndim, const std::array<const int64_t*, K>& strides) {
    for (size_t i = 0; i < ndim; ++i) total *= shape[i];
    for (size_t ii = ndim; ii-- > 0;) {
      if (shape[ii] == 1) continue;
      if (nd > 0) {
        bool merge = true;
        for (size_t k = 0; k < K; ++k)
          if (strides[k][ii] != st[k][nd - 1] * dims[nd - 1]) { merge = false; break; }
        if (merge) { dims[nd - 1] *= shape[ii]; continue; }
      }
      if (nd == 16) break;  // unreachable for rank <= 16
      dims[nd] = shape[ii];
      for (size_t k = 0; k < K; ++k) st[k][nd] = strides[k][ii];
      nd++;
    }
  }
  // body(offsets, n, inner) for the inner runs of outer iterations [lo, hi) (outer = all dims but the innermost).
  template <typename F>
  void run(int64_t lo, int64_t hi, F& body) const {
    std::array<int64_t, K> offs{};
    std::array<int64_t, K> inner{};
    if (nd == 0) {  // a single element
      if (lo == 0 && hi > 0) body(offs.data(), int64_t(1), inner.data());
      return;
    }
    for (size_t k = 0; k < K; ++k) inner[k] = st[k][0];
    int64_t idx[16] = {0};
    int64_t rem = lo;
    for (int d = 1; d < nd; ++d) {  // the starting outer index, innermost outer dim fastest
      idx[d] = rem % dims[d];
      rem /= dims[d];
      for (size_t k = 0; k < K; ++k) offs[k] += idx[d] * st[k][d];
    }
    const int64_t n = dims[0];
    for (int64_t it = lo; it < hi; ++it) {
      body(offs.data(), n, inner.data());
      for (int d = 1; d < nd; ++d) {
        idx[d]++;
        for (size_t k = 0; k < K; ++k) offs[k] += st[k][d];
        if (idx[d] < dims[d]) break;
        for (size_t k = 0; k < K; ++k) offs[k] -= st[k][d] * dims[d];
        idx[d] = 0;
      }
    }
  }
  int64_t outer() const {
    int64_t o = 1;
    for (int d = 1; d < nd; ++d) o *= dims[d];
    return nd == 0 ? 1 : o;
  }
};

// Iterates over `shape` with K operands, each with its own strides (0 on broadcast axes). Adjacent axes that
// are contiguous for every operand are merged and size-1 axes dropped, so a contiguous case is one call.
// Calls body(offsets, n, inner_strides): offsets[k] = element offset of operand k at the start of an inner run
// of n elements, inner_strides[k] = its stride along that run.
template <size_t K, typename F>
void strided_loop(const int64_t* shape, size_t nd, const std::array<const int64_t*, K>& strides, F&& body) {
  CollapsedDims<K> c(shape, nd, strides);
  if (c.total == 0) return;
  c.run(0, c.outer(), body);
}

// strided_loop for a body that writes each output element once (elementwise kernels), with the runs split over
// the OpenMP threads when the loop has at least kParallelMin elements but its inner runs are shorter than that
// (a broadcast operand: a bias row, a per-row statistic, a strided view), so that such ops use every core too.
// Inner runs of kParallelMin elements or more stay on one call each (the body splits them with parallel_runs).
// The body must not throw and must only write the elements of its own run.
template <size_t K, typename F>
void strided_loop_par(const Shape& shape, const std::array<const int64_t*, K>& strides, F&& body) {
  CollapsedDims<K> c(shape.data(), shape.size(), strides);
  if (c.total == 0) return;
  const int64_t outer = c.outer();
  const int64_t n = c.nd == 0 ? 1 : c.dims[0];
  if (c.total < kParallelMin || n >= kParallelMin || outer < 2 || omp_get_max_threads() == 1 || omp_in_parallel()) {
    c.run(0, outer, body);
    return;
  }
  // Chunks of about 8192 elements (whole inner runs), as parallel_runs.
  const int64_t per = std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1));
  const int64_t chunks = (outer + per - 1) / per;
#pragma omp parallel for schedule(static)
  for (int64_t ch = 0; ch < chunks; ++ch) c.run(ch * per, std::min(outer, (ch + 1) * per), body);
}
template <size_t K, typename F>
void strided_loop(const Shape& shape, const std::array<const int64_t*, K>& strides, F&& body) {
  strided_loop<K>(shape.data(), shape.size(), strides, std::forward<F>(body));
}

// Strides of a tensor with `shape`/`strides` broadcast to `out_shape` (0 on broadcast axes).
inline Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& out_shape) {
  Strides r(out_shape.size(), 0);
  size_t off = out_shape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) r[off + i] = shape[i] == 1 ? 0 : strides[i];
  return r;
}
// The same into `r` (no allocation up to DimVec::kInline dims).
inline void broadcast_strides(const Shape& shape, const Strides& strides, const Shape& out_shape, DimVec& r) {
  r.assign(out_shape.size(), 0);
  size_t off = out_shape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) r[off + i] = shape[i] == 1 ? 0 : strides[i];
}

}  // namespace kiln::cpu
