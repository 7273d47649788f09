// Normalization: the BatchNorm op (a fused kernel; bprop written with Kiln ops) and GroupNorm as a composition of
// Kiln ops (mean and variance by reductions), whose gradient comes from its parts. LayerNorm: src/ops/layer_norm.cpp.
//
// BatchNorm(x, scale, bias, mean, variance), attrs training (bool), epsilon (double). x: (N, C) or (N, C, *), any
// float dtype; scale/bias/mean/variance: (C,), one float dtype (their dtype is the statistics' dtype). Outputs:
//   y (x's shape and dtype) = (x − μ) / √(σ² + ε) · scale + bias, per channel (axis 1),
//   μ, σ² — training: the batch mean and the biased batch variance over every axis but 1;
//            inference: the given mean and variance (copied).
// The batch statistics are accumulated in double. Updating moving statistics is the caller's job: nn.BatchNorm*
// and ops.batch_norm assign moving = momentum·moving + (1 − momentum)·batch with the UNBIASED batch variance
// σ²·M/(M − 1) (M = elements per channel), as MindSpore and PyTorch update their running variance; the σ² output
// here stays the biased variance that normalizes the batch.
// Gradients (training, M = elements per channel, x̂ = (x − μ)·rstd, rstd = 1/√(σ² + ε)):
//   dbias = Σ dy,  dscale = Σ dy·x̂,  dx = scale·rstd/M · (M·dy − Σ dy − x̂·Σ dy·x̂)  [Ioffe & Szegedy 2015]
//   (+ dμ/M + dσ²·2(x − μ)/M when the returned statistics are differentiated too);
// inference: dx = dy·scale·rstd, dscale = Σ dy·x̂, dbias = Σ dy, dμ = −scale·rstd·Σ dy, dσ² = −½·scale·rstd²·Σ dy·x̂
// (MindSpore's bprop returns zeros for the moving statistics; they are non-trainable Parameters, so training is
// unaffected, and the exact gradient keeps BatchNorm a correct function of all its inputs).
// When the backward pass is itself recorded (higher derivatives), the bprop recomputes μ and σ² from x with Kiln
// ops instead of reading the op's outputs, so second derivatives are exact.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "../backend/cpu/loops.h"
#include "elementwise.h"
#include "kiln/autodiff.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using ops::Axes;

std::vector<TensorMeta> infer_batch_norm(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.ndim() >= 2, Value, "For 'BatchNorm', the input 'x' must have at least 2 dims (N, C, ...), but got shape ",
             shape_str(x.shape()), ".");
  KILN_CHECK(is_floating(x.dtype()), Type, "For 'BatchNorm', the input 'x' must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  const int64_t C = x.shape()[1];
  static const char* names[] = {"x", "scale", "bias", "mean", "variance"};
  for (size_t i = 1; i < 5; ++i) {
    KILN_CHECK(in[i].shape() == Shape({C}), Value, "For 'BatchNorm', '", names[i], "' must have shape (C,) = (", C,
               ",) for x of shape ", shape_str(x.shape()), ", but got ", shape_str(in[i].shape()), ".");
    KILN_CHECK(is_floating(in[i].dtype()) && in[i].dtype() == in[1].dtype(), Type, "For 'BatchNorm', 'scale', 'bias', "
               "'mean' and 'variance' must have one float dtype, but got ", dtype_name(in[1].dtype()), " and ",
               dtype_name(in[i].dtype()), ".");
  }
  return {{x.shape(), x.dtype()}, {{C}, in[1].dtype()}, {{C}, in[1].dtype()}};
}

// Per-channel batch statistics (training) and y = x·scale_c + shift_c, for one float element type T.
// x: contiguous (N, C, S); gamma/beta/mean_in/var_in: double (C,); mean/var: the statistics used (written here).
template <typename T>
void batch_norm_kernel(const T* px, T* py, int64_t N, int64_t C, int64_t S, bool training, double eps,
                       const double* gamma, const double* beta, const double* mean_in, const double* var_in,
                       double* mean, double* var) {
  using Cp = compute_t<T>;
  const int64_t M = N * S;
  if (training) {
    const bool par = C > 1 && N * C * S >= 32768;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* p = px + (n * C + c) * S;
        for (int64_t i = 0; i < S; ++i) s += double(Cp(p[i]));
      }
      const double m = M > 0 ? s / double(M) : std::numeric_limits<double>::quiet_NaN();
      double q = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* p = px + (n * C + c) * S;
        for (int64_t i = 0; i < S; ++i) { const double d = double(Cp(p[i])) - m; q += d * d; }
      }
      mean[c] = m;
      var[c] = M > 0 ? q / double(M) : std::numeric_limits<double>::quiet_NaN();
    }
  } else {
    for (int64_t c = 0; c < C; ++c) { mean[c] = mean_in[c]; var[c] = var_in[c]; }
  }
  std::vector<Cp> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const double sc = gamma[c] / std::sqrt(var[c] + eps);
    scale[size_t(c)] = Cp(sc);
    shift[size_t(c)] = Cp(beta[c] - mean[c] * sc);
  }
  const bool par = N * C > 1 && N * C * S >= 32768;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const Cp sc = scale[size_t(nc % C)], sh = shift[size_t(nc % C)];
    const T* p = px + nc * S;
    T* q = py + nc * S;
    for (int64_t i = 0; i < S; ++i) q[i] = T(Cp(p[i]) * sc + sh);
  }
}

// Note [batch norm float32]: the float32 kernels (forward and the fused training backward, BatchNormGrad) work one
// channel at a time, threaded over channels (OpenMP, above kParallelMin elements). A channel's data — N rows of S
// contiguous floats, 128 KiB for ResNet-8's (32, 16, 32, 32) — stays in the core's L2 cache across its passes, so
// the forward is three vectorized sweeps (Σx; Σ(x − μ)²; y = x·a + b) and the backward two (Σdy, Σdy·(x − μ); dx)
// instead of the double-precision scalar loops and ~10 whole-tensor ops of the generic path. Each row's sum is an
// Eigen packet reduction in float (S ≤ a few thousand terms); rows are accumulated in double. So statistics differ
// from the double-precision path by float rounding only (relative ~1e-6; tests/python/test_conv_pool_norm.py holds
// them to rtol 1e-5). Rows shorter than kMinRow (BatchNorm1d's (N, C) input, S = 1) take the generic path.
constexpr int64_t kMinRow = 8;
using ArrF = Eigen::Array<float, Eigen::Dynamic, 1>;
using CMapF = Eigen::Map<const ArrF>;
using MapF = Eigen::Map<ArrF>;

template <typename F>
void for_channels(int64_t C, int64_t numel, F f) {
  const bool par = C > 1 && numel >= cpu::kParallelMin && omp_get_max_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t c = 0; c < C; ++c) f(c);
}

void batch_norm_f32(const float* px, float* py, int64_t N, int64_t C, int64_t S, bool training, double eps,
                    const double* gamma, const double* beta, const double* mean_in, const double* var_in,
                    double* mean, double* var) {
  const int64_t M = N * S;
  for_channels(C, N * C * S, [&](int64_t c) {
    double m = mean_in[c], v = var_in[c];
    if (training) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) s += double(CMapF(px + (n * C + c) * S, S).sum());
      m = s / double(M);
      const float mf = float(m);
      double q = 0;
      for (int64_t n = 0; n < N; ++n) q += double((CMapF(px + (n * C + c) * S, S) - mf).square().sum());
      // Σ(x − mf)² = Σ(x − μ)² + M·(μ − mf)²: remove the rounding of the mean to float.
      const double d = q / double(M) - (m - double(mf)) * (m - double(mf));
      v = d < 0 ? 0.0 : d;  // not std::max: a NaN (an inf or NaN in the channel) must stay NaN
    }
    mean[c] = m;
    var[c] = v;
    const double sc = gamma[c] / std::sqrt(v + eps);
    const float a = float(sc), b = float(beta[c] - m * sc);
    for (int64_t n = 0; n < N; ++n) MapF(py + (n * C + c) * S, S) = CMapF(px + (n * C + c) * S, S) * a + b;
  });
}

void run_batch_norm(const TV& in, TV& out, const Attrs& a) {
  const bool training = a.b("training");
  const double eps = a.f("epsilon");
  Tensor x = in[0].contiguous();
  const int64_t N = x.shape()[0], C = x.shape()[1];
  const int64_t S = N * C == 0 ? 0 : x.numel() / (N * C);
  auto as_f64 = [](const Tensor& t) { return ew::as_dtype(t, DType::Float64).contiguous(); };
  Tensor gamma = as_f64(in[1]), beta = as_f64(in[2]), mi = as_f64(in[3]), vi = as_f64(in[4]);
  Tensor m = Tensor::empty({C}, DType::Float64), v = Tensor::empty({C}, DType::Float64);
  if (x.dtype() == DType::Float32 && S >= kMinRow && N * S > 0) {
    batch_norm_f32(x.data<float>(), out[0].data<float>(), N, C, S, training, eps, gamma.data<double>(),
                   beta.data<double>(), mi.data<double>(), vi.data<double>(), m.data<double>(), v.data<double>());
  } else KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      batch_norm_kernel<T>(x.data<T>(), out[0].data<T>(), N, C, S, training, eps, gamma.data<double>(),
                           beta.data<double>(), mi.data<double>(), vi.data<double>(), m.data<double>(),
                           v.data<double>());
  });
  copy_into(m, out[1]);
  copy_into(v, out[2]);
}

// ---- BatchNormGrad: the fused training backward (Note [batch norm float32]) ----
// BatchNormGrad(dy, x, scale, mean, variance), attr epsilon → (dx, dscale, dbias): the cotangents of BatchNorm in
// training for the output y only (dy), with mean/variance the batch statistics BatchNorm returned. Per channel
// (M elements, rstd = 1/√(σ² + ε), sdy = Σdy, sdyx = Σdy·(x − μ)):
//   dbias = sdy, dscale = rstd·sdyx, dx = scale·rstd·(dy − sdy/M − (x − μ)·rstd²·sdyx/M)   [Ioffe & Szegedy 2015]
// computed as dx = k1·dy + k2·x + k3. x, dy: float32 or float64 (one dtype); scale/mean/variance: (C,), any float
// dtype (dscale, dbias get scale's dtype). Emitted only by BatchNorm's bprop when that backward pass is not itself
// recorded (autodiff::grad_level() == 0; otherwise the bprop is composed of differentiable Kiln ops), so it has no
// bprop of its own (differentiable = false).
std::vector<TensorMeta> infer_batch_norm_grad(const TV& in, const Attrs&) {
  const Tensor &dy = in[0], &x = in[1];
  KILN_CHECK(x.ndim() >= 2, Value, "For 'BatchNormGrad', 'x' must have at least 2 dims (N, C, ...), but got shape ",
             shape_str(x.shape()), ".");
  KILN_CHECK((x.dtype() == DType::Float32 || x.dtype() == DType::Float64) && dy.dtype() == x.dtype() &&
                 dy.shape() == x.shape(), Type, "For 'BatchNormGrad', 'dy' and 'x' must be Float32 or Float64 tensors "
             "of one shape and dtype, but got ", dtype_name(dy.dtype()), shape_str(dy.shape()), " and ",
             dtype_name(x.dtype()), shape_str(x.shape()), ".");
  const int64_t C = x.shape()[1];
  for (size_t i = 2; i < 5; ++i)
    KILN_CHECK(in[i].shape() == Shape({C}) && is_floating(in[i].dtype()), Value, "For 'BatchNormGrad', 'scale', "
               "'mean' and 'variance' must be float tensors of shape (", C, ",), but got ", dtype_name(in[i].dtype()),
               shape_str(in[i].shape()), ".");
  return {{x.shape(), x.dtype()}, {{C}, in[2].dtype()}, {{C}, in[2].dtype()}};
}

template <typename T>
void batch_norm_grad_kernel(const T* pdy, const T* px, T* pdx, int64_t N, int64_t C, int64_t S, double eps,
                            const double* gamma, const double* mean, const double* var, double* dgamma,
                            double* dbeta) {
  using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
  using CMap = Eigen::Map<const Arr>;
  using Map = Eigen::Map<Arr>;
  const double M = double(N * S);
  for_channels(C, N * C * S, [&](int64_t c) {
    const T m = T(mean[c]);
    double sdy = 0, sdyx = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t o = (n * C + c) * S;
      if (S < kMinRow) {
        for (int64_t i = 0; i < S; ++i) { sdy += double(pdy[o + i]); sdyx += double(pdy[o + i]) * (double(px[o + i]) - mean[c]); }
      } else {
        CMap dy(pdy + o, S), x(px + o, S);
        sdy += double(dy.sum());
        sdyx += double((dy * (x - m)).sum());
      }
    }
    const double rstd = 1.0 / std::sqrt(var[c] + eps);
    dbeta[c] = sdy;
    dgamma[c] = sdyx * rstd;
    const double k1 = gamma[c] * rstd, k2 = -k1 * rstd * rstd * sdyx / M;
    const double k3 = -k1 * sdy / M - k2 * mean[c];
    const T a = T(k1), b = T(k2), d = T(k3);
    for (int64_t n = 0; n < N; ++n) {
      const int64_t o = (n * C + c) * S;
      if (S < kMinRow) {
        for (int64_t i = 0; i < S; ++i) pdx[o + i] = a * pdy[o + i] + b * px[o + i] + d;
      } else {
        Map(pdx + o, S) = a * CMap(pdy + o, S) + b * CMap(px + o, S) + d;
      }
    }
  });
}

void run_batch_norm_grad(const TV& in, TV& out, const Attrs& a) {
  const double eps = a.f("epsilon");
  Tensor dy = in[0].contiguous(), x = in[1].contiguous();
  const int64_t N = x.shape()[0], C = x.shape()[1];
  const int64_t S = N * C == 0 ? 0 : x.numel() / (N * C);
  auto as_f64 = [](const Tensor& t) { return ew::as_dtype(t, DType::Float64).contiguous(); };
  Tensor gamma = as_f64(in[2]), mean = as_f64(in[3]), var = as_f64(in[4]);
  Tensor dg = Tensor::empty({C}, DType::Float64), db = Tensor::empty({C}, DType::Float64);
  std::fill(dg.data<double>(), dg.data<double>() + C, 0.0);
  std::fill(db.data<double>(), db.data<double>() + C, 0.0);
  if (x.numel() > 0) {
    if (x.dtype() == DType::Float32)
      batch_norm_grad_kernel<float>(dy.data<float>(), x.data<float>(), out[0].data<float>(), N, C, S, eps,
                                    gamma.data<double>(), mean.data<double>(), var.data<double>(), dg.data<double>(),
                                    db.data<double>());
    else
      batch_norm_grad_kernel<double>(dy.data<double>(), x.data<double>(), out[0].data<double>(), N, C, S, eps,
                                     gamma.data<double>(), mean.data<double>(), var.data<double>(), dg.data<double>(),
                                     db.data<double>());
  }
  copy_into(dg, out[1]);
  copy_into(db, out[2]);
}

// (C,) → (1, C, 1, ..., 1) for broadcasting against an input of rank `nd`.
Tensor chan(const Tensor& t, int64_t nd) {
  Shape s(size_t(nd), 1);
  s[1] = t.shape()[0];
  return ops::reshape(t, s);
}
Axes stat_axes(int64_t nd) {
  Axes ax{0};
  for (int64_t i = 2; i < nd; ++i) ax.push_back(i);
  return ax;
}
Tensor weak(double v) { return Tensor::scalar(v, DType::Float64, true); }

TV bp_batch_norm(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor &x = in[0], &gamma = in[1];
  const int64_t nd = x.ndim();
  const Axes axes = stat_axes(nd);
  const bool training = a.b("training");
  const double eps = a.f("epsilon");
  Tensor mean = training ? out[1] : in[3], var = training ? out[2] : in[4];
  if (training && autodiff::grad_level() > 0) {
    // This backward pass is itself recorded (a higher derivative will be taken): recompute the batch statistics
    // from x with Kiln ops, so that their dependence on x is on the tape even when the caller dropped the
    // statistics outputs (the tape only keeps outputs that are still alive).
    mean = ops::mean(x, axes);
    var = ops::mean(ops::square(ops::sub(x, chan(mean, nd))), axes);
  }
  Tensor dx, dgamma, dbeta;
  const Tensor& dy = g[0];
  const bool fused = training && autodiff::grad_level() == 0 && dy.defined() &&
                     (x.dtype() == DType::Float32 || x.dtype() == DType::Float64) && dy.dtype() == x.dtype();
  // The composite path's rstd and x̂ (not built when the fused kernel does the work).
  const Tensor rstd = fused ? Tensor() : ops::rsqrt(ops::add(var, weak(eps)));
  Tensor xhat;
  if (fused) {  // one kernel, two passes over x and dy (Note [batch norm float32])
    std::vector<Tensor> r = apply(OpId::BatchNormGrad, {dy, x, gamma, mean, var}, {{"epsilon", eps}});
    dx = r[0];
    dgamma = r[1];
    dbeta = r[2];
  } else if (dy.defined()) {
    xhat = ops::mul(ops::sub(x, chan(mean, nd)), chan(rstd, nd));
    dbeta = ops::sum(dy, axes);
    dgamma = ops::sum(ops::mul(dy, xhat), axes);
    if (!training) {
      dx = ops::mul(dy, chan(ops::mul(gamma, rstd), nd));
    } else {
      const double M = double(x.numel() / x.shape()[1]);
      Tensor inner = ops::sub(ops::sub(ops::mul(dy, weak(M)), chan(dbeta, nd)), ops::mul(xhat, chan(dgamma, nd)));
      dx = ops::mul(inner, chan(ops::mul(ops::mul(gamma, rstd), weak(1.0 / M)), nd));
    }
  }
  if (training && (g[1].defined() || g[2].defined())) {
    const double M = double(x.numel() / x.shape()[1]);
    Tensor extra;
    if (g[1].defined()) extra = chan(ops::mul(g[1], weak(1.0 / M)), nd);
    if (g[2].defined()) {
      Tensor t = ops::mul(ops::sub(x, chan(mean, nd)), chan(ops::mul(g[2], weak(2.0 / M)), nd));
      extra = extra.defined() ? ops::add(extra, t) : t;
    }
    dx = dx.defined() ? ops::add(dx, extra) : ops::add(extra, ops::zeros_like(x));
  }
  Tensor dmean, dvar;
  if (!training) {  // y depends on the given statistics: dμ = −scale·rstd·Σdy, dσ² = −½·scale·rstd²·Σdy·x̂
    if (dy.defined()) {
      dmean = ops::neg(ops::mul(ops::mul(gamma, rstd), dbeta));
      dvar = ops::mul(ops::mul(ops::mul(gamma, ops::square(rstd)), dgamma), weak(-0.5));
    }
    if (g[1].defined()) dmean = dmean.defined() ? ops::add(dmean, g[1]) : g[1];  // outputs 1, 2 are the inputs
    if (g[2].defined()) dvar = dvar.defined() ? ops::add(dvar, g[2]) : g[2];
  }
  if (dx.defined() && dx.dtype() != x.dtype()) dx = ops::cast(dx, x.dtype());
  if (dgamma.defined() && dgamma.dtype() != gamma.dtype()) dgamma = ops::cast(dgamma, gamma.dtype());
  if (dbeta.defined() && dbeta.dtype() != in[2].dtype()) dbeta = ops::cast(dbeta, in[2].dtype());
  if (dmean.defined() && dmean.dtype() != in[3].dtype()) dmean = ops::cast(dmean, in[3].dtype());
  if (dvar.defined() && dvar.dtype() != in[4].dtype()) dvar = ops::cast(dvar, in[4].dtype());
  return {dx, dgamma, dbeta, dmean, dvar};
}

}  // namespace

namespace ops_impl {
void register_norm() {
  OpDef d;
  d.id = OpId::BatchNorm;
  d.infer = infer_batch_norm;
  d.cpu = run_batch_norm;
  d.bprop = bp_batch_norm;
  register_op(d);
  OpDef gd;
  gd.id = OpId::BatchNormGrad;
  gd.infer = infer_batch_norm_grad;
  gd.cpu = run_batch_norm_grad;
  gd.differentiable = false;  // emitted only by unrecorded backward passes (see infer_batch_norm_grad)
  register_op(gd);
}
}  // namespace ops_impl

namespace ops {
std::vector<Tensor> batch_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean,
                               const Tensor& variance, bool training, double epsilon) {
  return apply(OpId::BatchNorm, {x, scale, bias, mean, variance}, {{"training", training}, {"epsilon", epsilon}});
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& gamma, const Tensor& beta, double epsilon) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For 'GroupNorm', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() >= 2, Value, "For 'GroupNorm', the input must have at least 2 dims (N, C, ...), but got shape ",
             shape_str(x.shape()), ".");
  const int64_t N = x.shape()[0], C = x.shape()[1];
  KILN_CHECK(num_groups >= 1 && C % num_groups == 0, Value, "For 'GroupNorm', the channels (x.shape[1] = ", C,
             ") must be divisible by num_groups = ", num_groups, ".");
  for (const Tensor* p : {&gamma, &beta})
    if (p->defined())
      KILN_CHECK(p->shape() == Shape({C}), Value, "For 'GroupNorm', gamma and beta must have shape (C,) = (", C,
                 ",), but got ", shape_str(p->shape()), ".");
  Tensor xg = reshape(x, {N, num_groups, -1});
  Tensor mu = mean(xg, {2}, true);
  Tensor xc = sub(xg, mu);
  Tensor var = mean(square(xc), {2}, true);
  Tensor y = reshape(mul(xc, rsqrt(add(var, weak(epsilon)))), x.shape());
  if (gamma.defined()) y = mul(y, chan(gamma.dtype() == x.dtype() ? gamma : cast(gamma, x.dtype()), x.ndim()));
  if (beta.defined()) y = add(y, chan(beta.dtype() == x.dtype() ? beta : cast(beta, x.dtype()), x.ndim()));
  return y;
}
}  // namespace ops
}  // namespace kiln
