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

// Elements above which an elementwise kernel splits a contiguous run over the OpenMP threads (docs/decisions.md:
// below ~32k elements the fork/join costs more than the second core saves). Elementwise results do not depend on
// the split.
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
template <size_t K, typename F>
void strided_loop(const int64_t* shape, size_t nd, const std::array<const int64_t*, K>& strides, F&& body) {
  int64_t n_total = 1;
  for (size_t i = 0; i < nd; ++i) n_total *= shape[i];
  std::array<int64_t, K> offs{};
  if (n_total == 0) return;
  // Collapse dims (innermost first in the temporaries).
  int64_t dims[16];
  int64_t st[K][16];
  int nd2 = 0;
  for (size_t ii = nd; ii-- > 0;) {
    if (shape[ii] == 1) continue;
    if (nd2 > 0) {
      bool merge = true;
      for (size_t k = 0; k < K; ++k)
        if (strides[k][ii] != st[k][nd2 - 1] * dims[nd2 - 1]) { merge = false; break; }
      if (merge) { dims[nd2 - 1] *= shape[ii]; continue; }
    }
    if (nd2 == 16) break;  // unreachable for rank <= 16
    dims[nd2] = shape[ii];
    for (size_t k = 0; k < K; ++k) st[k][nd2] = strides[k][ii];
    nd2++;
  }
  if (nd2 == 0) {  // a single element
    std::array<int64_t, K> inner{};
    body(offs.data(), int64_t(1), inner.data());
    return;
  }
  std::array<int64_t, K> inner;
  for (size_t k = 0; k < K; ++k) inner[k] = st[k][0];
  int64_t n = dims[0];
  int64_t idx[16] = {0};
  for (;;) {
    body(offs.data(), n, inner.data());
    int d = 1;
    for (; d < nd2; ++d) {
      idx[d]++;
      for (size_t k = 0; k < K; ++k) offs[k] += st[k][d];
      if (idx[d] < dims[d]) break;
      for (size_t k = 0; k < K; ++k) offs[k] -= st[k][d] * dims[d];
      idx[d] = 0;
    }
    if (d >= nd2) return;
  }
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
