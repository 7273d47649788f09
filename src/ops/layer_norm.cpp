// LayerNorm as one fused op, with a fused backward (LayerNormGrad).
//
// LayerNorm(x, gamma, beta), attrs begin_norm_axis (int, normalized), epsilon (double). x: Float32 or Float64, any
// rank; gamma, beta: x.shape[begin_norm_axis:], x's dtype. With R = the product of x.shape[:begin_norm_axis] (rows)
// and D = the product of the rest (a row's length), per row:
//   μ = Σx/D,  σ² = Σ(x − μ)²/D (biased),  rstd = 1/√(σ² + ε),  y = (x − μ)·rstd·gamma + beta     [Ba et al. 2016]
// Outputs: y (x's shape and dtype), μ and rstd (shape x.shape[:begin_norm_axis] + [1]·(ndim − begin_norm_axis), x's
// dtype). μ and σ² are computed in two passes over the row (the row stays in cache), each summed in double (a
// float32 sum of a row with a large mean lost digits, and Σ(x − μ)² overflowed float32 for |x| ~ 1e19, where the
// variance itself is finite); μ is then rounded to x's dtype, the variance corrected for that rounding, and rstd
// computed in double and rounded. The backward's row sums Σg and Σg·x̂ are in double too.
//
// LayerNormGrad(dy, x, gamma, mean, rstd), attr begin_norm_axis → (dx, dgamma, dbeta): the cotangents of LayerNorm
// for the output y only. With x̂ = (x − μ)·rstd and g = dy·gamma, per row:
//   dx = rstd·(g − mean(g) − x̂·mean(g·x̂))                                          (means over the row's D elements)
//   dgamma = Σ_rows dy·x̂,  dbeta = Σ_rows dy.
// It is emitted only by LayerNorm's bprop when that backward pass is not itself recorded (autodiff::grad_level() ==
// 0) and only y's cotangent is defined; otherwise the bprop is written with differentiable Kiln ops (μ and σ²
// recomputed from x), so higher derivatives are exact. LayerNormGrad has no bprop of its own.
//
// Note [fused layer norm]: the composition this replaces (ReduceMean, Sub, Square, ReduceMean, Add/Rsqrt, Mul, Mul,
// Add forward; ~15 whole-tensor ops backward) swept the tensor ~20 times per LayerNorm; the fused kernels sweep it
// three times forward (Σx; Σ(x − μ)²; y) and three times backward (Σg, Σg·x̂; dx; the per-block column sums), one
// row at a time. Rows are split over the OpenMP threads from cpu::kParallelMin elements. dgamma/dbeta are summed per
// block of kRowBlock rows (rows in order, in x's dtype) and the blocks' partial sums are added in block order in
// double: the result does not depend on the number of threads. ops::layer_norm uses the op for Float32/Float64 x with
// both gamma and beta of the normalized shape (begin_params_axis == begin_norm_axis, the nn.LayerNorm case);
// otherwise (Float16/BFloat16, a missing gamma/beta, params over more axes) it composes Kiln ops as before.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "../backend/cpu/loops.h"
#include "elementwise.h"
#include "families.h"
#include "kiln/autodiff.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using ops::Axes;

constexpr int64_t kRowBlock = 32;  // rows per partial sum of dgamma/dbeta (Note [fused layer norm])

// Σ f(i) over [0, n) in double, for f(i) a float: the row sums of the float32 kernels. AVX: each 8-float packet is
// widened to two 4-double packets and added into two accumulators (the rest in order); Eigen's
// `.cast<double>().sum()` did not vectorize and cost 4-5x the whole float32 kernel.
template <typename F>
double sum_in_double(int64_t n, F f) {
  int64_t i = 0;
  double s = 0;
#ifdef __AVX__
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  for (; i + 8 <= n; i += 8) {
    const __m256 v = f.packet(i);
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(a0, a1));
  s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#endif
  for (; i < n; ++i) s += double(f(i));
  return s;
}

// The terms of the float32 kernels' row sums: x; a·b (the product in float).
struct TermX {
  const float* x;
  float operator()(int64_t i) const { return x[i]; }
#ifdef __AVX__
  __m256 packet(int64_t i) const { return _mm256_loadu_ps(x + i); }
#endif
};
struct TermProd {
  const float *a, *b;
  float operator()(int64_t i) const { return a[i] * b[i]; }
#ifdef __AVX__
  __m256 packet(int64_t i) const { return _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)); }
#endif
};

// Σ(x − m)² in double, the differences taken in float.
double sum_sq_diff(const float* x, int64_t n, float m) {
  int64_t i = 0;
  double s = 0;
#ifdef __AVX__
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  const __m256 mv = _mm256_set1_ps(m);
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv);
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(lo, lo));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(hi, hi));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(a0, a1));
  s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#endif
  for (; i < n; ++i) { const double d = double(x[i] - m); s += d * d; }
  return s;
}

// The row sums for one element type: float32 through the AVX helpers above, float64 on Eigen.
double row_sum(const float* x, int64_t n) { return sum_in_double(n, TermX{x}); }
double row_sum(const double* x, int64_t n) { return Eigen::Map<const Eigen::ArrayXd>(x, n).sum(); }
double row_sum_sq_diff(const float* x, int64_t n, float m) { return sum_sq_diff(x, n, m); }
double row_sum_sq_diff(const double* x, int64_t n, double m) {
  return (Eigen::Map<const Eigen::ArrayXd>(x, n) - m).square().sum();
}
double row_dot(const float* a, const float* b, int64_t n) { return sum_in_double(n, TermProd{a, b}); }
double row_dot(const double* a, const double* b, int64_t n) {
  return (Eigen::Map<const Eigen::ArrayXd>(a, n) * Eigen::Map<const Eigen::ArrayXd>(b, n)).sum();
}

// R (rows) and D (row length) of x for a normalization from axis bn.
std::pair<int64_t, int64_t> rows_cols(const Shape& s, int64_t bn) {
  int64_t r = 1, d = 1;
  for (size_t i = 0; i < s.size(); ++i) (int64_t(i) < bn ? r : d) *= s[i];
  return {r, d};
}

Shape stat_shape(const Shape& s, int64_t bn) {
  Shape o(s.begin(), s.begin() + bn);
  o.resize(s.size(), 1);
  return o;
}

std::vector<TensorMeta> infer_layer_norm(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, Type,
             "For 'LayerNorm', the input must be a Float32 or Float64 tensor, but got ", dtype_name(x.dtype()), ".");
  const int64_t bn = normalize_axis(a.i("begin_norm_axis"), x.ndim(), "LayerNorm");
  const Shape ps(x.shape().begin() + bn, x.shape().end());
  static const char* names[] = {"x", "gamma", "beta"};
  for (size_t i = 1; i < 3; ++i)
    KILN_CHECK(in[i].shape() == ps && in[i].dtype() == x.dtype(), Value, "For 'LayerNorm', '", names[i],
               "' must be a ", dtype_name(x.dtype()), " tensor of shape x.shape[", bn, ":] = ", shape_str(ps),
               " (x shape ", shape_str(x.shape()), "), but got ", dtype_name(in[i].dtype()), shape_str(in[i].shape()),
               ".");
  const Shape ss = stat_shape(x.shape(), bn);
  return {{x.shape(), x.dtype()}, {ss, x.dtype()}, {ss, x.dtype()}};
}

// f(b) for b in [0, n) on the OpenMP threads when the tensor is large enough (numel elements). f must not throw.
template <typename F>
void for_blocks(int64_t n, int64_t numel, F&& f) {
  const bool par = n > 1 && numel >= cpu::kParallelMin && omp_get_max_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t b = 0; b < n; ++b) f(b);
}

template <typename T>
void layer_norm_kernel(const T* px, const T* pg, const T* pb, T* py, T* pm, T* pr, int64_t R, int64_t D, double eps) {
  using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
  using CMap = Eigen::Map<const Arr>;
  using Map = Eigen::Map<Arr>;
  const CMap gamma(pg, D), beta(pb, D);
  const int64_t nblk = (R + kRowBlock - 1) / kRowBlock;
  for_blocks(nblk, R * D, [&](int64_t blk) {
    const int64_t r1 = std::min(R, (blk + 1) * kRowBlock);
    for (int64_t r = blk * kRowBlock; r < r1; ++r) {
      const CMap x(px + r * D, D);
      // Sums in double (Note [fused layer norm]): the row's mean exactly enough, and Σ(x − m)² without overflow.
      const double md = row_sum(px + r * D, D) / double(D);
      const T m = T(md);
      const double q = row_sum_sq_diff(px + r * D, D, m) / double(D);
      // Σ(x − m)²/D = σ² + (μ − m)²: remove the rounding of the mean to T, as BatchNorm does.
      // (d < 0 ? 0 : d, not std::max: a NaN — an inf or NaN in the row — must stay NaN)
      const double d = q - (md - double(m)) * (md - double(m)), var = d < 0 ? 0.0 : d;
      const T rs = T(1.0 / std::sqrt(var + eps));
      Map(py + r * D, D) = (x - m) * rs * gamma + beta;
      pm[r] = m;
      pr[r] = rs;
    }
  });
}

void run_layer_norm(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous(), g = in[1].contiguous(), b = in[2].contiguous();
  const int64_t bn = normalize_axis(a.i("begin_norm_axis"), x.ndim(), "LayerNorm");
  const auto [R, D] = rows_cols(x.shape(), bn);
  const double eps = a.f("epsilon");
  if (x.dtype() == DType::Float32)
    layer_norm_kernel<float>(x.data<float>(), g.data<float>(), b.data<float>(), out[0].data<float>(),
                             out[1].data<float>(), out[2].data<float>(), R, D, eps);
  else
    layer_norm_kernel<double>(x.data<double>(), g.data<double>(), b.data<double>(), out[0].data<double>(),
                              out[1].data<double>(), out[2].data<double>(), R, D, eps);
}

std::vector<TensorMeta> infer_layer_norm_grad(const TV& in, const Attrs& a) {
  const Tensor &dy = in[0], &x = in[1];
  KILN_CHECK((x.dtype() == DType::Float32 || x.dtype() == DType::Float64) && dy.dtype() == x.dtype() &&
                 dy.shape() == x.shape(), Type, "For 'LayerNormGrad', 'dy' and 'x' must be Float32 or Float64 tensors "
             "of one shape and dtype, but got ", dtype_name(dy.dtype()), shape_str(dy.shape()), " and ",
             dtype_name(x.dtype()), shape_str(x.shape()), ".");
  const int64_t bn = normalize_axis(a.i("begin_norm_axis"), x.ndim(), "LayerNormGrad");
  const Shape ps(x.shape().begin() + bn, x.shape().end()), ss = stat_shape(x.shape(), bn);
  KILN_CHECK(in[2].shape() == ps && in[2].dtype() == x.dtype(), Value, "For 'LayerNormGrad', 'gamma' must be a ",
             dtype_name(x.dtype()), " tensor of shape ", shape_str(ps), ", but got ", dtype_name(in[2].dtype()),
             shape_str(in[2].shape()), ".");
  for (size_t i = 3; i < 5; ++i)
    KILN_CHECK(in[i].shape() == ss && in[i].dtype() == x.dtype(), Value, "For 'LayerNormGrad', 'mean' and 'rstd' "
               "must be ", dtype_name(x.dtype()), " tensors of shape ", shape_str(ss), ", but got ",
               dtype_name(in[i].dtype()), shape_str(in[i].shape()), ".");
  return {{x.shape(), x.dtype()}, {ps, x.dtype()}, {ps, x.dtype()}};
}

template <typename T>
void layer_norm_grad_kernel(const T* pdy, const T* px, const T* pg, const T* pm, const T* pr, T* pdx, T* pdg, T* pdb,
                            int64_t R, int64_t D) {
  using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
  using CMap = Eigen::Map<const Arr>;
  using Map = Eigen::Map<Arr>;
  const CMap gamma(pg, D);
  const int64_t nblk = (R + kRowBlock - 1) / kRowBlock;
  // Per-block partial column sums: [block][0: dgamma, 1: dbeta][D].
  std::vector<T> part(size_t(nblk * 2 * D), T(0));
  for_blocks(nblk, R * D, [&](int64_t blk) {
    Arr xh(D), g(D);
    Map sg(part.data() + blk * 2 * D, D), sb(part.data() + blk * 2 * D + D, D);
    const int64_t r1 = std::min(R, (blk + 1) * kRowBlock);
    for (int64_t r = blk * kRowBlock; r < r1; ++r) {
      const CMap x(px + r * D, D), dy(pdy + r * D, D);
      const T rs = pr[r];
      xh = (x - pm[r]) * rs;
      g = dy * gamma;
      const T c1 = T(row_dot(g.data(), xh.data(), D) / double(D));
      const T c2 = T(row_sum(g.data(), D) / double(D));
      Map(pdx + r * D, D) = rs * (g - c2 - xh * c1);
      sg += dy * xh;
      sb += dy;
    }
  });
  for (int64_t j = 0; j < D; ++j) {
    double s0 = 0, s1 = 0;
    for (int64_t blk = 0; blk < nblk; ++blk) {
      s0 += double(part[size_t(blk * 2 * D + j)]);
      s1 += double(part[size_t(blk * 2 * D + D + j)]);
    }
    pdg[j] = T(s0);
    pdb[j] = T(s1);
  }
}

void run_layer_norm_grad(const TV& in, TV& out, const Attrs& a) {
  Tensor dy = in[0].contiguous(), x = in[1].contiguous(), g = in[2].contiguous();
  Tensor m = in[3].contiguous(), r = in[4].contiguous();
  const int64_t bn = normalize_axis(a.i("begin_norm_axis"), x.ndim(), "LayerNormGrad");
  const auto [R, D] = rows_cols(x.shape(), bn);
  if (x.dtype() == DType::Float32)
    layer_norm_grad_kernel<float>(dy.data<float>(), x.data<float>(), g.data<float>(), m.data<float>(),
                                  r.data<float>(), out[0].data<float>(), out[1].data<float>(), out[2].data<float>(),
                                  R, D);
  else
    layer_norm_grad_kernel<double>(dy.data<double>(), x.data<double>(), g.data<double>(), m.data<double>(),
                                   r.data<double>(), out[0].data<double>(), out[1].data<double>(),
                                   out[2].data<double>(), R, D);
}

Tensor weak(double v) { return Tensor::scalar(v, DType::Float64, true); }

// The cotangents of (y, μ, rstd) with respect to (x, gamma, beta); see the header comment.
TV bp_layer_norm(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &gamma = in[1];
  const int64_t nd = x.ndim();
  const int64_t bn = normalize_axis(a.i("begin_norm_axis"), nd, "LayerNorm");
  const Tensor& dy = g[0];
  if (autodiff::grad_level() == 0 && dy.defined() && !g[1].defined() && !g[2].defined() && dy.dtype() == x.dtype())
    return apply(OpId::LayerNormGrad, {dy, x, gamma, out[1], out[2]}, {{"begin_norm_axis", bn}});
  // Composite (higher derivatives, or a cotangent of the statistics): Kiln ops, statistics recomputed from x so
  // that their dependence on x is on the tape.
  Axes axes, rows;
  for (int64_t i = 0; i < nd; ++i) (i < bn ? rows : axes).push_back(i);
  const double D = double(rows_cols(x.shape(), bn).second);
  Tensor mu = ops::mean(x, axes, true);
  Tensor xc = ops::sub(x, mu);
  Tensor rs = ops::rsqrt(ops::add(ops::mean(ops::square(xc), axes, true), weak(a.f("epsilon"))));
  Tensor dx, dgamma, dbeta;
  if (dy.defined()) {
    Tensor xhat = ops::mul(xc, rs), gg = ops::mul(dy, gamma);
    Tensor dyx = ops::mul(dy, xhat);
    dgamma = rows.empty() ? dyx : ops::sum(dyx, rows);
    dbeta = rows.empty() ? dy : ops::sum(dy, rows);
    Tensor inner = ops::sub(ops::sub(gg, ops::mean(gg, axes, true)),
                            ops::mul(xhat, ops::mean(ops::mul(gg, xhat), axes, true)));
    dx = ops::mul(rs, inner);
  }
  if (g[1].defined()) {  // μ = Σx/D
    Tensor t = ops::add(ops::mul(g[1], weak(1.0 / D)), ops::zeros_like(x));
    dx = dx.defined() ? ops::add(dx, t) : t;
  }
  if (g[2].defined()) {  // ∂rstd/∂x = −rstd³·(x − μ)/D
    Tensor t = ops::mul(xc, ops::mul(ops::mul(g[2], ops::mul(rs, ops::square(rs))), weak(-1.0 / D)));
    dx = dx.defined() ? ops::add(dx, t) : t;
  }
  return {dx, dgamma, dbeta};
}

}  // namespace

namespace ops_impl {
void register_layer_norm() {
  OpDef d;
  d.id = OpId::LayerNorm;
  d.infer = infer_layer_norm;
  d.cpu = run_layer_norm;
  d.bprop = bp_layer_norm;
  register_op(d);
  OpDef gd;
  gd.id = OpId::LayerNormGrad;
  gd.infer = infer_layer_norm_grad;
  gd.cpu = run_layer_norm_grad;
  gd.differentiable = false;  // emitted only by unrecorded backward passes (see bp_layer_norm)
  register_op(gd);
}
}  // namespace ops_impl

namespace ops {
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t begin_norm_axis,
                  int64_t begin_params_axis, double epsilon) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For 'LayerNorm', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  const int64_t nd = x.ndim();
  const int64_t bn = normalize_axis(begin_norm_axis, nd, "LayerNorm");
  const int64_t bp = normalize_axis(begin_params_axis, nd, "LayerNorm");
  const Shape pshape(x.shape().begin() + bp, x.shape().end());
  for (const Tensor* p : {&gamma, &beta})
    if (p->defined())
      KILN_CHECK(p->shape() == pshape, Value, "For 'LayerNorm', gamma and beta must have the shape of x.shape[",
                 begin_params_axis, ":] = ", shape_str(pshape), " (x shape ", shape_str(x.shape()), "), but got ",
                 shape_str(p->shape()), ".");
  auto as_x = [&](const Tensor& t) { return t.dtype() == x.dtype() ? t : cast(t, x.dtype()); };
  if ((x.dtype() == DType::Float32 || x.dtype() == DType::Float64) && gamma.defined() && beta.defined() && bp == bn &&
      x.numel() > 0)  // Note [fused layer norm]
    return apply(OpId::LayerNorm, {x, as_x(gamma), as_x(beta)},
                 {{"begin_norm_axis", bn}, {"epsilon", epsilon}})[0];
  Axes axes;
  for (int64_t i = bn; i < nd; ++i) axes.push_back(i);
  Tensor mu = mean(x, axes, true);
  Tensor xc = sub(x, mu);
  Tensor var = mean(square(xc), axes, true);
  Tensor y = mul(xc, rsqrt(add(var, weak(epsilon))));
  if (gamma.defined()) y = mul(y, as_x(gamma));
  if (beta.defined()) y = add(y, as_x(beta));
  return y;
}
}  // namespace ops
}  // namespace kiln
