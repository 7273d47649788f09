// Pdist (ops.pdist) and its backward PdistGrad: one kernel each instead of Kiln's former composition (two Gathers,
// a Sub and a p-norm of up to 8 ops), issue 23.
//
// Pdist: x (N, M) -> y (N(N - 1)/2), y_k = ||x_i - x_j||_p for the pairs i < j in row-major order; p = 0 counts the
// differing coordinates, p = inf takes the largest |difference|. PdistGrad follows PyTorch's pdist backward
// (aten/src/ATen/native/cpu/DistanceOpsKernel.cpp), which MindSpore's PdistGrad kernel shares: with diff = x_i - x_j,
// the pair adds g·w to row i and subtracts it from row j, w = 0 for p = 0 or y = 0, sign(diff) for p = 1, diff / y
// for p = 2, sign(diff)·[|diff| = y] for p = inf, sign(diff)·|diff|^(p-1) / y^(p-1) otherwise (0 where diff = 0 and
// p < 1).
#include <cmath>
#include <limits>
#include <vector>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

double p_attr(const Attrs& a, const char* op) {
  const double p = a.f("p");
  KILN_CHECK(p >= 0, Value, "For '", op, "', 'p' must be >= 0, but got ", p, ".");
  return p;
}

void check_x(const Tensor& x, const char* op) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() == 2, Value, "For '", op, "', the input must be 2-D (N, M), but got shape ",
             shape_str(x.shape()), ".");
}

int64_t pairs(int64_t n) { return n * (n - 1) / 2; }

std::vector<TensorMeta> infer_pdist(const TV& in, const Attrs& a) {
  check_x(in[0], "Pdist");
  p_attr(a, "Pdist");
  return {{{pairs(in[0].shape()[0])}, in[0].dtype()}};
}

template <typename C> C sgn(C v) { return C((v > C(0)) - (v < C(0))); }

template <typename T> void pdist_loop(const T* px, T* py, int64_t n, int64_t m, double pd) {
  using C = compute_t<T>;
  const C p = C(pd);
  const bool inf = std::isinf(pd);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j, ++k) {
      const T* a = px + i * m;
      const T* b = px + j * m;
      C acc = C(0);
      if (inf) {
        for (int64_t c = 0; c < m; ++c) {
          const C d = std::abs(C(a[c]) - C(b[c]));
          if (d > acc || d != d) acc = d;
        }
      } else if (pd == 0) {
        for (int64_t c = 0; c < m; ++c) acc += C(C(a[c]) != C(b[c]));
      } else if (pd == 1) {
        for (int64_t c = 0; c < m; ++c) acc += std::abs(C(a[c]) - C(b[c]));
      } else if (pd == 2) {
        for (int64_t c = 0; c < m; ++c) {
          const C d = C(a[c]) - C(b[c]);
          acc += d * d;
        }
        acc = std::sqrt(acc);
      } else {
        for (int64_t c = 0; c < m; ++c) acc += std::pow(std::abs(C(a[c]) - C(b[c])), p);
        acc = std::pow(acc, C(1) / p);
      }
      py[k] = convert_value<T>(acc);
    }
}

void run_pdist(const TV& in, TV& out, const Attrs& a) {
  const Tensor x = in[0].contiguous();
  const double p = p_attr(a, "Pdist");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      pdist_loop<T>(x.data<T>(), out[0].data<T>(), x.shape()[0], x.shape()[1], p);
  });
}

// ---- PdistGrad: (dout, x, y) -> dx ----
std::vector<TensorMeta> infer_pdist_grad(const TV& in, const Attrs& a) {
  check_x(in[1], "PdistGrad");
  p_attr(a, "PdistGrad");
  const Shape s{pairs(in[1].shape()[0])};
  for (int i : {0, 2})
    KILN_CHECK(in[i].shape() == s && in[i].dtype() == in[1].dtype(), Value, "For 'PdistGrad', '",
               i == 0 ? "dout" : "y", "' must be ", dtype_name(in[1].dtype()), shape_str(s), ", but got ",
               dtype_name(in[i].dtype()), shape_str(in[i].shape()), ".");
  return {{in[1].shape(), in[1].dtype()}};
}

template <typename T>
void pdist_grad_loop(const T* pg, const T* px, const T* py, T* pdx, int64_t n, int64_t m, double pd) {
  using C = compute_t<T>;
  std::vector<C> acc(size_t(n * m), C(0));
  const C p = C(pd);
  const bool inf = std::isinf(pd);
  int64_t k = 0;
  if (pd != 0)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j, ++k) {
        const C y = C(py[k]), g = C(pg[k]);
        if (y == C(0)) continue;
        const T* a = px + i * m;
        const T* b = px + j * m;
        C* ai = acc.data() + i * m;
        C* aj = acc.data() + j * m;
        const C ypow = (inf || pd == 1 || pd == 2) ? C(1) : std::pow(y, p - C(1));
        for (int64_t c = 0; c < m; ++c) {
          const C d = C(a[c]) - C(b[c]);
          C w;
          if (pd == 1) w = sgn(d);
          else if (pd == 2) w = d / y;
          else if (inf) w = std::abs(d) == y ? sgn(d) : C(0);
          else if (pd < 1 && d == C(0)) w = C(0);
          else w = sgn(d) * std::pow(std::abs(d), p - C(1)) / ypow;
          ai[c] += g * w;
          aj[c] -= g * w;
        }
      }
  for (size_t q = 0; q < acc.size(); ++q) pdx[q] = convert_value<T>(acc[q]);
}

void run_pdist_grad(const TV& in, TV& out, const Attrs& a) {
  const Tensor g = in[0].contiguous(), x = in[1].contiguous(), y = in[2].contiguous();
  const double p = p_attr(a, "PdistGrad");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      pdist_grad_loop<T>(g.data<T>(), x.data<T>(), y.data<T>(), out[0].data<T>(), x.shape()[0], x.shape()[1], p);
  });
}

TV bp_pdist(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  return {apply1(OpId::PdistGrad, {go, in[0], out[0]}, a)};
}

}  // namespace

namespace ops_impl {
void register_pdist() {
  register_kernel(OpId::Pdist, infer_pdist, run_pdist, bp_pdist);
  register_kernel(OpId::PdistGrad, infer_pdist_grad, run_pdist_grad, nullptr);
}
}  // namespace ops_impl
}  // namespace kiln
