// Determinants and inverses of square matrices (..., n, n) from an LU decomposition with partial pivoting:
// MatrixDeterminant (ops.det), LogMatrixDeterminant (ops.slogdet, logdet) and MatrixInverse (ops.inverse), one op
// each instead of the O(n) kernel launches of Kiln's former Python composition (issue 23).
//
// Each matrix is copied into a double buffer and factored by Doolittle's method with row pivoting (Golub & Van Loan,
// "Matrix Computations", Algorithm 3.4.1; the method of LAPACK's getrf): at step k the row holding the largest
// |a_ik| (i >= k, the first such row on ties) is swapped to row k, the multipliers l_ik = a_ik / a_kk are stored
// below the diagonal and the trailing block is updated, a_ij -= l_ik * a_kj. A zero pivot (its whole column below
// is zero then) skips the step, as getrf does: det 0, slogdet (0, -inf), and the inverse divides by it (inf/NaN).
// Float16/BFloat16/Float32/Float64 in, the same dtype out; the matrices of a batch go to the OpenMP threads when
// there are enough of them.
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "elementwise.h"
#include "families.h"
#include "kiln/autodiff.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

// The matrix size n and batch count of x (..., n, n); raises for a non-float or non-square input.
void check_square(const Tensor& x, const char* op) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() >= 2 && x.shape()[x.ndim() - 1] == x.shape()[x.ndim() - 2], Value, "For '", op,
             "', the input must be square matrices (..., n, n), but got shape ", shape_str(x.shape()), ".");
}
Shape batch_shape(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

// In-place LU of the row-major n x n matrix a with row pivoting; perm[i] = the original row now at row i.
// Returns the permutation's sign (+1 / -1).
double lu_factor(double* a, int64_t n, int64_t* perm) {
  double sign = 1.0;
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    double best = std::fabs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      const double v = std::fabs(a[i * n + k]);
      if (v > best || (v != v && best == best)) {
        best = v;
        p = i;
      }
    }
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      std::swap(perm[k], perm[p]);
      sign = -sign;
    }
    const double piv = a[k * n + k];
    if (piv == 0.0) continue;  // the column below is zero too: nothing to eliminate
    const double inv = 1.0 / piv;
    for (int64_t i = k + 1; i < n; ++i) {
      double* ri = a + i * n;
      const double l = ri[k] * inv;
      ri[k] = l;
      if (l == 0.0) continue;
      const double* rk = a + k * n;
      for (int64_t j = k + 1; j < n; ++j) ri[j] -= l * rk[j];
    }
  }
  return sign;
}

// Calls f(m, lu, perm, sign, T{}) for every matrix m of x, with its LU in double.
template <typename T, typename F>
void lu_batch(const T* px, int64_t n, int64_t count, F& f) {
  const int64_t nn = n * n;
#pragma omp parallel if (count > 1 && count * nn * n >= cpu::kParallelMin && !omp_in_parallel())
  {
    std::vector<double> a(static_cast<size_t>(nn));
    std::vector<int64_t> perm(static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t m = 0; m < count; ++m) {
      for (int64_t i = 0; i < nn; ++i) a[size_t(i)] = double(compute_t<T>(px[m * nn + i]));
      const double sign = lu_factor(a.data(), n, perm.data());
      f(m, a.data(), perm.data(), sign, T{});
    }
  }
}
template <typename F>
void for_each_lu(const Tensor& xin, F&& f) {
  Tensor x = xin.contiguous();
  const int64_t n = x.shape()[x.ndim() - 1];
  const int64_t count = n ? x.numel() / (n * n) : 0;
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) lu_batch<T>(x.data<T>(), n, count, f);
  });
}

// ---- MatrixDeterminant ----
std::vector<TensorMeta> infer_det(const TV& in, const Attrs&) {
  check_square(in[0], "MatrixDeterminant");
  return {{batch_shape(in[0]), in[0].dtype()}};
}
void run_det(const TV& in, TV& out, const Attrs&) {
  const int64_t n = in[0].shape()[in[0].ndim() - 1];
  if (n == 0) {  // 0 x 0 matrices: the empty product
    KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* po = out[0].data<T>();
      for (int64_t i = 0; i < out[0].numel(); ++i) po[i] = convert_value<T>(1.0);
    });
    return;
  }
  void* po = out[0].raw_data();
  for_each_lu(in[0], [&](int64_t m, const double* lu, const int64_t*, double sign, auto tag) {
    using T = decltype(tag);
    double d = sign;
    for (int64_t i = 0; i < n; ++i) d *= lu[i * n + i];
    static_cast<T*>(po)[m] = convert_value<T>(d);
  });
}

// ---- LogMatrixDeterminant: (sign, log|det|) ----
std::vector<TensorMeta> infer_slogdet(const TV& in, const Attrs&) {
  check_square(in[0], "LogMatrixDeterminant");
  const Shape b = batch_shape(in[0]);
  return {{b, in[0].dtype()}, {b, in[0].dtype()}};
}
void run_slogdet(const TV& in, TV& out, const Attrs&) {
  const int64_t n = in[0].shape()[in[0].ndim() - 1];
  void* ps = out[0].raw_data();
  void* pl = out[1].raw_data();
  if (n == 0) {
    KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < out[0].numel(); ++i) {
        static_cast<T*>(ps)[i] = convert_value<T>(1.0);
        static_cast<T*>(pl)[i] = convert_value<T>(0.0);
      }
    });
    return;
  }
  for_each_lu(in[0], [&](int64_t m, const double* lu, const int64_t*, double sign, auto tag) {
    using T = decltype(tag);
    double s = sign, l = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = lu[i * n + i];
      if (d == 0.0) {
        s = 0.0;
        l = -std::numeric_limits<double>::infinity();
        break;
      }
      if (d != d) {
        s = l = d;
        break;
      }
      if (d < 0) s = -s;
      l += std::log(std::fabs(d));
    }
    static_cast<T*>(ps)[m] = convert_value<T>(s);
    static_cast<T*>(pl)[m] = convert_value<T>(l);
  });
}

// ---- MatrixInverse ----
std::vector<TensorMeta> infer_inverse(const TV& in, const Attrs&) {
  check_square(in[0], "MatrixInverse");
  return {{in[0].shape(), in[0].dtype()}};
}
void run_inverse(const TV& in, TV& out, const Attrs&) {
  const int64_t n = in[0].shape()[in[0].ndim() - 1];
  if (n == 0) return;
  void* po = out[0].raw_data();
  for_each_lu(in[0], [&](int64_t m, const double* lu, const int64_t* perm, double, auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(po) + m * n * n;
    std::vector<double> col(static_cast<size_t>(n));
    // column c of the inverse solves L U x = P e_c: (P e_c)_i = 1 where perm[i] == c
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t i = 0; i < n; ++i) {
        double v = perm[i] == c ? 1.0 : 0.0;
        for (int64_t j = 0; j < i; ++j) v -= lu[i * n + j] * col[size_t(j)];
        col[size_t(i)] = v;
      }
      for (int64_t i = n - 1; i >= 0; --i) {
        double v = col[size_t(i)];
        for (int64_t j = i + 1; j < n; ++j) v -= lu[i * n + j] * col[size_t(j)];
        col[size_t(i)] = v / lu[i * n + i];
      }
      for (int64_t i = 0; i < n; ++i) dst[i * n + c] = convert_value<T>(col[size_t(i)]);
    }
  });
}

// The matrix transpose of the last two dims.
Tensor mT(const Tensor& x) {
  ops::Axes perm;
  for (int64_t d = 0; d < x.ndim(); ++d) perm.push_back(d);
  std::swap(perm[size_t(x.ndim() - 1)], perm[size_t(x.ndim() - 2)]);
  return ops::transpose(x, perm);
}
// A backward pass that is itself recorded (second derivatives) recomputes the inverse from x, so that its dependence
// on x is on the tape; otherwise the forward output serves where it is the inverse.
Tensor inverse_of(const Tensor& x) { return apply1(OpId::MatrixInverse, {x}); }
Tensor as_dtype(const Tensor& g, DType t) { return g.dtype() == t ? g : ops::cast(g, t); }
Tensor last2(const Tensor& t) { return ops::expand_dims(ops::expand_dims(t, -1), -1); }

// d det / dA = det * A^-T (MindSpore's MatrixDeterminant bprop; Jacobi's formula).
TV bp_det(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor& x = in[0];
  if (!g[0].defined() || x.shape()[x.ndim() - 1] == 0) return {ops::zeros_like(x)};
  const Tensor d = autodiff::grad_level() == 0 ? out[0] : apply1(OpId::MatrixDeterminant, {x});
  const Tensor gd = ops::mul(as_dtype(g[0], x.dtype()), d);
  return {ops::mul(last2(gd), mT(inverse_of(x)))};
}
// d log|det| / dA = A^-T; the sign is piecewise constant (no gradient).
TV bp_slogdet(const TV& in, const TV&, const TV& g, const Attrs&) {
  const Tensor& x = in[0];
  if (!g[1].defined() || x.shape()[x.ndim() - 1] == 0) return {ops::zeros_like(x)};
  return {ops::mul(last2(as_dtype(g[1], x.dtype())), mT(inverse_of(x)))};
}
// d A^-1 = -A^-1 dA A^-1, so dx = -A^-T g A^-T.
TV bp_inverse(const TV& in, const TV& out, const TV& g, const Attrs&) {
  const Tensor& x = in[0];
  if (!g[0].defined() || x.shape()[x.ndim() - 1] == 0) return {ops::zeros_like(x)};
  const Tensor y = autodiff::grad_level() == 0 ? out[0] : inverse_of(x);
  const Tensor gy = as_dtype(g[0], x.dtype());
  return {ops::neg(ops::matmul(y, ops::matmul(gy, y, false, true), true, false))};
}

}  // namespace

namespace ops_impl {
void register_linalg() {
  register_kernel(OpId::MatrixDeterminant, infer_det, run_det, bp_det);
  register_kernel(OpId::LogMatrixDeterminant, infer_slogdet, run_slogdet, bp_slogdet);
  register_kernel(OpId::MatrixInverse, infer_inverse, run_inverse, bp_inverse);
}
}  // namespace ops_impl
}  // namespace kiln
