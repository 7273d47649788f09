// 2-D pooling, NCHW: MaxPool (+ MaxPoolGrad, MaxPoolGradGrad), AvgPool (+ AvgPoolGrad) and AdaptiveAvgPool2D
// (+ AdaptiveAvgPool2DGrad). Inputs are 4-D float tensors (TypeError / ValueError otherwise); 3-D inputs and the
// "same"/"valid" pad modes are handled by the callers (kiln.ops / kiln.nn), which pass explicit pads.
//
// Attributes: kernel [KH, KW] ≥ 1, stride [sh, sw] ≥ 1, pad [top, bottom, left, right] ≥ 0, ceil_mode;
// MaxPool also dilation [dh, dw] ≥ 1 and return_indices; AvgPool also count_include_pad and divisor_override.
// Output size (MindSpore's MaxPool3DWithArgmax/AvgPool3D and PyTorch's rule):
//   OH = ⌊(H + top + bottom − dh·(KH − 1) − 1) / sh⌋ + 1, or with ceil_mode ⌈…⌉ + 1, minus one if the last window
//   would start at or beyond H + top (a window must start inside the input or its top padding).
// MaxPool ignores padded positions (they act as −∞) and routes gradients to the first maximum of each window in
// row-major scan order (NaN counts as the maximum). With return_indices it also returns the Int64 index h·W + w of
// each maximum in its (H, W) plane (MindSpore/PyTorch's argmax convention).
// AvgPool divides the window sum by: divisor_override when > 0; else with count_include_pad the window area clipped
// to the padded input [−top, H + bottom); else the number of real (unpadded) elements.
// AdaptiveAvgPool2D averages bin i = [⌊i·H/OH⌋, ⌈(i+1)·H/OH⌉) in each dimension (PyTorch/MindSpore bins).
//
// Gradients: each *Grad op is linear in its output gradient, so its bprop is the forward op applied to the incoming
// cotangent (AvgPoolGrad ↔ AvgPool, AdaptiveAvgPool2DGrad ↔ AdaptiveAvgPool2D, MaxPoolGrad ↔ MaxPoolGradGrad, which
// gathers at the argmax positions); the max-pool ops are piecewise constant in x (zero gradient w.r.t. x).
// Kernels are direct loops (parallel over the N·C planes), in float for 16-bit floats and in the input's precision
// otherwise.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "kiln/autodiff.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

struct PoolGeom {
  int64_t N, C, H, W, KH, KW, sh, sw, pt, pb, pl, pr, dh, dw, OH, OW;
};

int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d, bool ceil_mode) {
  const int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p0) --o;
  return o;
}

const std::vector<int64_t>& two_pos(const Attrs& a, const char* name, const char* op) {
  const auto& v = a.ints(name);
  KILN_CHECK(v.size() == 2 && v[0] >= 1 && v[1] >= 1, Value, "For '", op, "', '", name,
             "' must be two positive ints, but got ", shape_str(v), ".");
  return v;
}

PoolGeom pool_geometry(const Shape& x, const Attrs& a, const char* op) {
  KILN_CHECK(x.size() == 4, Value, "For '", op, "', the input must be 4-D (N, C, H, W), but got shape ", shape_str(x),
             ".");
  const auto& k = two_pos(a, "kernel", op);
  const auto& s = two_pos(a, "stride", op);
  static const std::vector<int64_t> one{1, 1};
  const auto& d = a.find("dilation") ? two_pos(a, "dilation", op) : one;
  const auto& p = a.ints("pad");
  KILN_CHECK(p.size() == 4 && p[0] >= 0 && p[1] >= 0 && p[2] >= 0 && p[3] >= 0, Value, "For '", op,
             "', 'pad' must be four non-negative ints (top, bottom, left, right), but got ", shape_str(p), ".");
  PoolGeom g{x[0], x[1], x[2], x[3], k[0], k[1], s[0], s[1], p[0], p[1], p[2], p[3], d[0], d[1], 0, 0};
  const bool ceil_mode = a.b("ceil_mode");
  KILN_CHECK(g.H + g.pt + g.pb >= g.dh * (g.KH - 1) + 1 && g.W + g.pl + g.pr >= g.dw * (g.KW - 1) + 1, Value, "For '",
             op, "', the kernel size (", g.KH, ", ", g.KW, ") with dilation (", g.dh, ", ", g.dw,
             ") is larger than the padded input (", g.H + g.pt + g.pb, ", ", g.W + g.pl + g.pr, ") of shape ",
             shape_str(x), ".");
  g.OH = out_len(g.H, g.KH, g.sh, g.pt, g.pb, g.dh, ceil_mode);
  g.OW = out_len(g.W, g.KW, g.sw, g.pl, g.pr, g.dw, ceil_mode);
  return g;
}

void check_float(const Tensor& x, const char* op, const char* name) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', '", name,
             "' must be a float tensor (Float16, BFloat16, Float32 or Float64), but got ", dtype_name(x.dtype()), ".");
}

// Runs f(plane) for every (n, c) plane, in parallel when there is enough work.
template <typename F>
void for_planes(int64_t planes, int64_t work_per_plane, F f) {
  const bool par = planes > 1 && planes * work_per_plane >= 32768;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t p = 0; p < planes; ++p) f(p);
}

// Index (h·W + w) of the first maximum of output window (oh, ow) in plane `xp`, or −1 if the window is all padding.
template <typename C, typename T>
inline int64_t window_argmax(const PoolGeom& g, const T* xp, int64_t oh, int64_t ow) {
  const int64_t ih0 = oh * g.sh - g.pt, iw0 = ow * g.sw - g.pl;
  if (ih0 >= 0 && iw0 >= 0 && ih0 + (g.KH - 1) * g.dh < g.H && iw0 + (g.KW - 1) * g.dw < g.W) {
    // The window lies inside the plane (the common case): no bounds checks.
    int64_t bi = ih0 * g.W + iw0;
    C best = C(xp[bi]);
    for (int64_t i = 0; i < g.KH; ++i) {
      const T* row = xp + (ih0 + i * g.dh) * g.W + iw0;
      for (int64_t j = 0; j < g.KW; ++j) {
        const C v = C(row[j * g.dw]);
        if (v > best || (v != v && best == best)) { best = v; bi = (ih0 + i * g.dh) * g.W + iw0 + j * g.dw; }
      }
    }
    return bi;
  }
  int64_t bi = -1;
  C best = C(0);
  for (int64_t i = 0; i < g.KH; ++i) {
    const int64_t ih = oh * g.sh - g.pt + i * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t j = 0; j < g.KW; ++j) {
      const int64_t iw = ow * g.sw - g.pl + j * g.dw;
      if (iw < 0 || iw >= g.W) continue;
      const C v = C(xp[ih * g.W + iw]);
      if (bi < 0 || v > best || (v != v && best == best)) { best = v; bi = ih * g.W + iw; }
    }
  }
  return bi;
}

// Note [max pool rows]: the windows of one output row that lie inside the plane, taken together: for each tap (i, j)
// of the window, a pass over the row's outputs keeps the running maximum and its index in arrays (a conditional
// move per element, no branch), which GCC vectorizes -- the per-window loop (window_argmax) ran a data-dependent
// branch per tap, 3.9 ms of CPU for ResNet's stem pool (3x3/2 over 8x64x32x32). Same result: the first maximum in
// window order (rows, then columns), the first NaN if any. SW is the column stride when it is 1 or 2 (a constant
// the vectorizer can use), else 0 and g.sw is used. Indices as int32: planes of 2^31 elements or more take the
// per-window path.
template <int SW, typename C, typename T>
void max_pool_row(const PoolGeom& g, const T* xp, int64_t ih0, int64_t ow0, int64_t n, T* py, int64_t* idx) {
  constexpr int64_t kChunk = 256;
  const int64_t sw = SW ? SW : g.sw;
  alignas(32) C best[kChunk];
  alignas(32) int32_t bi[kChunk];
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t m = std::min(kChunk, n - c0);
    for (int64_t i = 0; i < g.KH; ++i)
      for (int64_t j = 0; j < g.KW; ++j) {
        const int32_t base = int32_t((ih0 + i * g.dh) * g.W + (ow0 + c0) * sw - g.pl + j * g.dw);
        const T* src = xp + base;
        if (i == 0 && j == 0) {
          for (int64_t k = 0; k < m; ++k) {
            best[k] = C(src[k * sw]);
            bi[k] = base + int32_t(k * sw);
          }
          continue;
        }
        for (int64_t k = 0; k < m; ++k) {
          const C v = C(src[k * sw]);
          const C b = best[k];
          const bool take = (v > b) | ((v != v) & (b == b));
          best[k] = take ? v : b;
          bi[k] = take ? base + int32_t(k * sw) : bi[k];
        }
      }
    for (int64_t k = 0; k < m; ++k) {
      py[c0 + k] = xp[bi[k]];
      if (idx) idx[c0 + k] = bi[k];
    }
  }
}

Attrs max_attrs(const ops::Axes& kernel, const ops::Axes& stride, const ops::Axes& pad, const ops::Axes& dilation,
                bool ceil_mode);

// ---- MaxPool ----
std::vector<TensorMeta> infer_max_pool(const TV& in, const Attrs& a) {
  check_float(in[0], "MaxPool", "x");
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPool");
  Shape o{g.N, g.C, g.OH, g.OW};
  if (a.b("return_indices")) return {{o, in[0].dtype()}, {o, DType::Int64}};
  return {{o, in[0].dtype()}};
}

void run_max_pool(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPool");
  Tensor x = in[0].contiguous();
  int64_t* idx = out.size() > 1 ? out[1].data<int64_t>() : nullptr;
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* px = x.data<T>();
      T* py = out[0].data<T>();
      // Note [max pool rows]: the output columns whose windows lie inside the plane horizontally.
      const int64_t ow_lo = std::min(g.OW, (g.pl + g.sw - 1) / g.sw);
      const int64_t last = g.W - 1 - (g.KW - 1) * g.dw + g.pl;  // the largest ow·sw whose window fits
      const int64_t ow_hi = last < 0 ? ow_lo : std::max(ow_lo, std::min(g.OW, last / g.sw + 1));
      const bool rows = g.H * g.W < (int64_t(1) << 31) && ow_hi > ow_lo;
      for_planes(g.N * g.C, g.OH * g.OW * g.KH * g.KW, [&, g](int64_t p) {  // g by value: stores can't alias it
        const T* xp = px + p * g.H * g.W;
        auto one = [&](int64_t oh, int64_t ow) {
          const int64_t o = (p * g.OH + oh) * g.OW + ow;
          const int64_t bi = window_argmax<C>(g, xp, oh, ow);
          py[o] = bi < 0 ? T(-std::numeric_limits<float>::infinity()) : xp[bi];
          if (idx) idx[o] = bi;
        };
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih0 = oh * g.sh - g.pt;
          if (!rows || ih0 < 0 || ih0 + (g.KH - 1) * g.dh >= g.H) {
            for (int64_t ow = 0; ow < g.OW; ++ow) one(oh, ow);
            continue;
          }
          for (int64_t ow = 0; ow < ow_lo; ++ow) one(oh, ow);
          const int64_t o = (p * g.OH + oh) * g.OW + ow_lo;
          int64_t* io = idx ? idx + o : nullptr;
          if (g.sw == 1) max_pool_row<1, C>(g, xp, ih0, ow_lo, ow_hi - ow_lo, py + o, io);
          else if (g.sw == 2) max_pool_row<2, C>(g, xp, ih0, ow_lo, ow_hi - ow_lo, py + o, io);
          else max_pool_row<0, C>(g, xp, ih0, ow_lo, ow_hi - ow_lo, py + o, io);
          for (int64_t ow = ow_hi; ow < g.OW; ++ow) one(oh, ow);
        }
      });
    }
  });
}

// Note [max pool argmax]: while a gradient is being recorded, ops::max_pool2d runs MaxPool with return_indices (the
// caller still gets only y) so that the tape keeps the argmax of every window; the backward is then a scatter of
// dy at those indices (MaxPoolGradWithArgmax) instead of MaxPoolGrad's second argmax search over x. Both route
// each dy to the first maximum of its window and accumulate overlapping windows in the same (oh, ow) order, so the
// two give bit-identical results (PyNative, Graph mode and the indices-less path agree).
TV bp_max_pool(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor()};
  if (out.size() > 1 && out[1].defined())
    return {apply1(OpId::MaxPoolGradWithArgmax, {in[0], g[0], out[1]},
                   max_attrs(a.ints("kernel"), a.ints("stride"), a.ints("pad"), a.ints("dilation"), a.b("ceil_mode")))};
  return {ops::max_pool2d_grad(in[0], g[0], a.ints("kernel"), a.ints("stride"), a.ints("pad"), a.ints("dilation"),
                               a.b("ceil_mode"))};
}

// MaxPoolGrad(x, dy) → dx: dy routed to each window's argmax (accumulated where windows overlap).
std::vector<TensorMeta> infer_max_pool_grad(const TV& in, const Attrs& a) {
  check_float(in[0], "MaxPoolGrad", "x");
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGrad");
  KILN_CHECK(in[1].shape() == Shape({g.N, g.C, g.OH, g.OW}) && in[1].dtype() == in[0].dtype(), Value,
             "For 'MaxPoolGrad', the output gradient must be ", dtype_name(in[0].dtype()),
             shape_str({g.N, g.C, g.OH, g.OW}), ", but got ", dtype_name(in[1].dtype()), shape_str(in[1].shape()), ".");
  return {{in[0].shape(), in[0].dtype()}};
}

void run_max_pool_grad(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGrad");
  Tensor x = in[0].contiguous(), dy = in[1].contiguous();
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* px = x.data<T>();
      const T* pg = dy.data<T>();
      T* pd = out[0].data<T>();
      for_planes(g.N * g.C, g.OH * g.OW * g.KH * g.KW, [&](int64_t p) {
        const T* xp = px + p * g.H * g.W;
        std::vector<C> acc(size_t(g.H * g.W), C(0));
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t bi = window_argmax<C>(g, xp, oh, ow);
            if (bi >= 0) acc[size_t(bi)] += C(pg[(p * g.OH + oh) * g.OW + ow]);
          }
        T* dp = pd + p * g.H * g.W;
        for (int64_t i = 0; i < g.H * g.W; ++i) dp[i] = T(acc[size_t(i)]);
      });
    }
  });
}

TV bp_max_pool_grad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor()};
  return {Tensor(), ops::max_pool2d_grad_grad(in[0], g[0], a.ints("kernel"), a.ints("stride"), a.ints("pad"),
                                              a.ints("dilation"), a.b("ceil_mode"))};
}

// MaxPoolGradGrad(x, h) → out[n, c, oh, ow] = h[n, c, argmax of window (oh, ow) of x].
std::vector<TensorMeta> infer_max_pool_grad_grad(const TV& in, const Attrs& a) {
  check_float(in[0], "MaxPoolGradGrad", "x");
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGradGrad");
  KILN_CHECK(in[1].shape() == in[0].shape() && in[1].dtype() == in[0].dtype(), Value,
             "For 'MaxPoolGradGrad', the gradient must be ", dtype_name(in[0].dtype()), shape_str(in[0].shape()),
             ", but got ", dtype_name(in[1].dtype()), shape_str(in[1].shape()), ".");
  return {{{g.N, g.C, g.OH, g.OW}, in[0].dtype()}};
}

void run_max_pool_grad_grad(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGradGrad");
  Tensor x = in[0].contiguous(), h = in[1].contiguous();
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* px = x.data<T>();
      const T* ph = h.data<T>();
      T* po = out[0].data<T>();
      for_planes(g.N * g.C, g.OH * g.OW * g.KH * g.KW, [&](int64_t p) {
        const T* xp = px + p * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t bi = window_argmax<C>(g, xp, oh, ow);
            po[(p * g.OH + oh) * g.OW + ow] = bi < 0 ? T(0) : ph[p * g.H * g.W + bi];
          }
      });
    }
  });
}

TV bp_max_pool_grad_grad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor()};
  return {Tensor(), ops::max_pool2d_grad(in[0], g[0], a.ints("kernel"), a.ints("stride"), a.ints("pad"),
                                         a.ints("dilation"), a.b("ceil_mode"))};
}

// MaxPoolGradWithArgmax(x, dy, argmax) → dx: dy[n, c, oh, ow] added at x position argmax[n, c, oh, ow] (h·W + w; −1 for
// a window entirely in padding: skipped). argmax must be MaxPool's index output for x with the same attributes (the
// op is emitted only by MaxPool's bprop, Note [max pool argmax]); x gives the shape and the bprop. Linear in dy: its
// bprop w.r.t. dy is MaxPoolGradGrad(x, ·) (a gather at the same argmax); zero w.r.t. x, like MaxPoolGrad.
std::vector<TensorMeta> infer_max_pool_grad_argmax(const TV& in, const Attrs& a) {
  check_float(in[0], "MaxPoolGradWithArgmax", "x");
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGradWithArgmax");
  const Shape o{g.N, g.C, g.OH, g.OW};
  KILN_CHECK(in[1].shape() == o && in[1].dtype() == in[0].dtype(), Value, "For 'MaxPoolGradWithArgmax', the output "
             "gradient must be ", dtype_name(in[0].dtype()), shape_str(o), ", but got ", dtype_name(in[1].dtype()),
             shape_str(in[1].shape()), ".");
  KILN_CHECK(in[2].shape() == o && in[2].dtype() == DType::Int64, Value, "For 'MaxPoolGradWithArgmax', the argmax "
             "must be Int64", shape_str(o), ", but got ", dtype_name(in[2].dtype()), shape_str(in[2].shape()), ".");
  return {{in[0].shape(), in[0].dtype()}};
}

void run_max_pool_grad_argmax(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(in[0].shape(), a, "MaxPoolGradWithArgmax");
  Tensor dy = in[1].contiguous(), idx = in[2].contiguous();
  const int64_t* pi = idx.data<int64_t>();
  const int64_t HW = g.H * g.W, OHW = g.OH * g.OW;
  KILN_DISPATCH(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* pg = dy.data<T>();
      T* pd = out[0].data<T>();
      for_planes(g.N * g.C, HW + OHW, [&](int64_t p) {
        T* dp = pd + p * HW;
        const int64_t* ip = pi + p * OHW;
        const T* gp = pg + p * OHW;
        if constexpr (std::is_same_v<C, T>) {  // float / double: accumulate in place
          std::fill(dp, dp + HW, T(0));
          for (int64_t o = 0; o < OHW; ++o)
            if (ip[o] >= 0 && ip[o] < HW) dp[ip[o]] += gp[o];
        } else {  // 16-bit floats: accumulate in float, as MaxPoolGrad does
          std::vector<C> acc(size_t(HW), C(0));
          for (int64_t o = 0; o < OHW; ++o)
            if (ip[o] >= 0 && ip[o] < HW) acc[size_t(ip[o])] += C(gp[o]);
          for (int64_t i = 0; i < HW; ++i) dp[i] = T(acc[size_t(i)]);
        }
      });
    }
  });
}

TV bp_max_pool_grad_argmax(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor(), Tensor()};
  return {Tensor(), ops::max_pool2d_grad_grad(in[0], g[0], a.ints("kernel"), a.ints("stride"), a.ints("pad"),
                                              a.ints("dilation"), a.b("ceil_mode")), Tensor()};
}

// ---- AvgPool ----
// Divisor of output window (oh, ow); 0 for a window with no element to average.
inline int64_t avg_divisor(const PoolGeom& g, int64_t oh, int64_t ow, bool include_pad, int64_t override_div) {
  if (override_div > 0) return override_div;
  const int64_t hs = oh * g.sh - g.pt, ws = ow * g.sw - g.pl;
  const int64_t he = std::min(hs + g.KH, g.H + g.pb), we = std::min(ws + g.KW, g.W + g.pr);
  if (include_pad) return (he - hs) * (we - ws);
  return std::max<int64_t>(0, std::min(he, g.H) - std::max<int64_t>(hs, 0)) *
         std::max<int64_t>(0, std::min(we, g.W) - std::max<int64_t>(ws, 0));
}

std::vector<TensorMeta> infer_avg_pool(const TV& in, const Attrs& a) {
  check_float(in[0], "AvgPool", "x");
  PoolGeom g = pool_geometry(in[0].shape(), a, "AvgPool");
  return {{{g.N, g.C, g.OH, g.OW}, in[0].dtype()}};
}

void run_avg_pool(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(in[0].shape(), a, "AvgPool");
  const bool inc = a.b("count_include_pad");
  const int64_t dov = a.i("divisor_override");
  Tensor x = in[0].contiguous();
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* px = x.data<T>();
      T* py = out[0].data<T>();
      for_planes(g.N * g.C, g.OH * g.OW * g.KH * g.KW, [&](int64_t p) {
        const T* xp = px + p * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t hs = oh * g.sh - g.pt, ws = ow * g.sw - g.pl;
            C s = 0;
            for (int64_t ih = std::max<int64_t>(hs, 0); ih < std::min(hs + g.KH, g.H); ++ih)
              for (int64_t iw = std::max<int64_t>(ws, 0); iw < std::min(ws + g.KW, g.W); ++iw) s += C(xp[ih * g.W + iw]);
            const int64_t div = avg_divisor(g, oh, ow, inc, dov);
            py[(p * g.OH + oh) * g.OW + ow] = T(div > 0 ? s / C(div) : C(0));
          }
      });
    }
  });
}

// AvgPoolGrad(dy) → dx of shape attr input_shape: each dy spread over its window divided by the divisor.
std::vector<TensorMeta> infer_avg_pool_grad(const TV& in, const Attrs& a) {
  check_float(in[0], "AvgPoolGrad", "dout");
  const Shape& xs = a.ints("input_shape");
  PoolGeom g = pool_geometry(xs, a, "AvgPoolGrad");
  KILN_CHECK(in[0].shape() == Shape({g.N, g.C, g.OH, g.OW}), Value, "For 'AvgPoolGrad', the output gradient must "
             "have shape ", shape_str({g.N, g.C, g.OH, g.OW}), ", but got ", shape_str(in[0].shape()), ".");
  return {{xs, in[0].dtype()}};
}

void run_avg_pool_grad(const TV& in, TV& out, const Attrs& a) {
  PoolGeom g = pool_geometry(a.ints("input_shape"), a, "AvgPoolGrad");
  const bool inc = a.b("count_include_pad");
  const int64_t dov = a.i("divisor_override");
  Tensor dy = in[0].contiguous();
  KILN_DISPATCH(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* pg = dy.data<T>();
      T* pd = out[0].data<T>();
      for_planes(g.N * g.C, g.OH * g.OW * g.KH * g.KW, [&](int64_t p) {
        std::vector<C> acc(size_t(g.H * g.W), C(0));
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t div = avg_divisor(g, oh, ow, inc, dov);
            if (div <= 0) continue;
            const C v = C(pg[(p * g.OH + oh) * g.OW + ow]) / C(div);
            const int64_t hs = oh * g.sh - g.pt, ws = ow * g.sw - g.pl;
            for (int64_t ih = std::max<int64_t>(hs, 0); ih < std::min(hs + g.KH, g.H); ++ih)
              for (int64_t iw = std::max<int64_t>(ws, 0); iw < std::min(ws + g.KW, g.W); ++iw)
                acc[size_t(ih * g.W + iw)] += v;
          }
        T* dp = pd + p * g.H * g.W;
        for (int64_t i = 0; i < g.H * g.W; ++i) dp[i] = T(acc[size_t(i)]);
      });
    }
  });
}

struct AvgArgs {
  ops::Axes kernel, stride, pad;
  bool ceil_mode, include_pad;
  int64_t divisor;
  explicit AvgArgs(const Attrs& a)
      : kernel(a.ints("kernel")), stride(a.ints("stride")), pad(a.ints("pad")), ceil_mode(a.b("ceil_mode")),
        include_pad(a.b("count_include_pad")), divisor(a.i("divisor_override")) {}
};

TV bp_avg_pool(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor()};
  AvgArgs c(a);
  return {ops::avg_pool2d_grad(g[0], in[0].shape(), c.kernel, c.stride, c.pad, c.ceil_mode, c.include_pad,
                               c.divisor)};
}
TV bp_avg_pool_grad(const TV&, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor()};
  AvgArgs c(a);
  return {ops::avg_pool2d(g[0], c.kernel, c.stride, c.pad, c.ceil_mode, c.include_pad, c.divisor)};
}

// ---- AdaptiveAvgPool2D ----
inline int64_t bin_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

const std::vector<int64_t>& out_size(const Attrs& a, const char* op) {
  const auto& o = a.ints("output_size");
  KILN_CHECK(o.size() == 2 && o[0] >= 1 && o[1] >= 1, Value, "For '", op,
             "', 'output_size' must be two positive ints, but got ", shape_str(o), ".");
  return o;
}

std::vector<TensorMeta> infer_adaptive(const TV& in, const Attrs& a) {
  check_float(in[0], "AdaptiveAvgPool2D", "x");
  const Shape& x = in[0].shape();
  KILN_CHECK(x.size() == 4, Value, "For 'AdaptiveAvgPool2D', the input must be 4-D (N, C, H, W), but got shape ",
             shape_str(x), ".");
  const auto& o = out_size(a, "AdaptiveAvgPool2D");
  return {{{x[0], x[1], o[0], o[1]}, in[0].dtype()}};
}

// Shared loop: forward (Grad = false: x → y) and gradient (Grad = true: dy → dx).
template <bool Grad>
void run_adaptive(const TV& in, TV& out, const Attrs& a) {
  const Shape& xs = Grad ? a.ints("input_shape") : in[0].shape();
  const Shape& ys = Grad ? in[0].shape() : out[0].shape();
  const int64_t H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
  Tensor src = in[0].contiguous();
  KILN_DISPATCH(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* ps = src.data<T>();
      T* pd = out[0].data<T>();
      for_planes(xs[0] * xs[1], H * W + OH * OW, [&](int64_t p) {
        std::vector<C> acc(Grad ? size_t(H * W) : 0, C(0));
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t hs = bin_start(oh, H, OH), he = bin_end(oh, H, OH);
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t ws = bin_start(ow, W, OW), we = bin_end(ow, W, OW);
            const C area = C((he - hs) * (we - ws));
            if constexpr (Grad) {
              const C v = C(ps[(p * OH + oh) * OW + ow]) / area;
              for (int64_t ih = hs; ih < he; ++ih)
                for (int64_t iw = ws; iw < we; ++iw) acc[size_t(ih * W + iw)] += v;
            } else {
              C s = 0;
              const T* xp = ps + p * H * W;
              for (int64_t ih = hs; ih < he; ++ih)
                for (int64_t iw = ws; iw < we; ++iw) s += C(xp[ih * W + iw]);
              pd[(p * OH + oh) * OW + ow] = T(s / area);
            }
          }
        }
        if constexpr (Grad) {
          T* dp = pd + p * H * W;
          for (int64_t i = 0; i < H * W; ++i) dp[i] = T(acc[size_t(i)]);
        }
      });
    }
  });
}

std::vector<TensorMeta> infer_adaptive_grad(const TV& in, const Attrs& a) {
  check_float(in[0], "AdaptiveAvgPool2DGrad", "dout");
  const Shape& xs = a.ints("input_shape");
  KILN_CHECK(xs.size() == 4 && in[0].ndim() == 4 && in[0].shape()[0] == xs[0] && in[0].shape()[1] == xs[1], Value,
             "For 'AdaptiveAvgPool2DGrad', the output gradient ", shape_str(in[0].shape()),
             " does not match the input shape ", shape_str(xs), ".");
  return {{xs, in[0].dtype()}};
}

TV bp_adaptive(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor()};
  return {ops::adaptive_avg_pool2d_grad(g[0], in[0].shape())};
}
TV bp_adaptive_grad(const TV& in, const TV&, const TV& g, const Attrs&) {
  if (!g[0].defined()) return {Tensor()};
  return {ops::adaptive_avg_pool2d(g[0], {in[0].shape()[2], in[0].shape()[3]})};
}


// ---- AdaptiveMaxPool: adaptive max pooling of the trailing nd = len(output_size) dims (1 to 3) ----
// x (..., *spatial) -> (values (..., *output_size), Int64 flat indices within the spatial plane). Bins as
// AdaptiveAvgPool2D's, per dim. In each bin the first maximum in row-major order wins (ties: the first index).
// NaN as MindSpore 2.10's CPU kernels (oracle): AdaptiveMaxPool2D/3D start from the bin's first element and take a
// strictly greater one, so a NaN counts only when it is the first element ([[1, nan], [0, 5]] -> 5 at 3,
// [[nan, 1], [7, 0]] -> nan at 0); skip_nan (ops.adaptive_max_pool1d, a max pool there: [nan, 1, 0] -> 1) ignores
// NaN unless the whole bin is NaN (then its first element; MindSpore 2.10 gives the float's lowest value there, as
// for a bin of -inf, which Kiln keeps as -inf).
std::vector<TensorMeta> infer_adaptive_max(const TV& in, const Attrs& a) {
  check_float(in[0], "AdaptiveMaxPool", "x");
  const Shape& x = in[0].shape();
  const auto& o = a.ints("output_size");
  const size_t nd = o.size();
  KILN_CHECK(nd >= 1 && nd <= 3 && x.size() >= nd, Value, "For 'AdaptiveMaxPool', 'output_size' must hold 1 to 3 "
             "sizes, at most the input's rank, but got ", shape_str(o), " for an input of shape ", shape_str(x), ".");
  Shape y(x.begin(), x.end() - std::ptrdiff_t(nd));
  for (size_t d = 0; d < nd; ++d) {
    KILN_CHECK(o[d] >= 1, Value, "For 'AdaptiveMaxPool', 'output_size' must be positive, but got ", shape_str(o), ".");
    KILN_CHECK(x[x.size() - nd + d] >= 1, Value, "For 'AdaptiveMaxPool', the spatial dims must not be empty, but got ",
               "input shape ", shape_str(x), ".");
    y.push_back(o[d]);
  }
  return {{y, in[0].dtype()}, {y, DType::Int64}};
}
void run_adaptive_max(const TV& in, TV& out, const Attrs& a) {
  Tensor src = in[0].contiguous();
  const Shape& xs = src.shape();
  const auto& o = a.ints("output_size");
  const size_t nd = o.size(), lead = xs.size() - nd;
  int64_t planes = 1;
  for (size_t d = 0; d < lead; ++d) planes *= xs[d];
  // 3 dims (D, H, W) and (OD, OH, OW), 1 where the op has fewer
  int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1};
  for (size_t d = 0; d < nd; ++d) {
    in3[3 - nd + d] = xs[lead + d];
    out3[3 - nd + d] = o[d];
  }
  const int64_t D = in3[0], H = in3[1], W = in3[2], OD = out3[0], OH = out3[1], OW = out3[2];
  const int64_t S = D * H * W, O = OD * OH * OW;
  const bool skip_nan = a.b("skip_nan");
  int64_t* pi = out[1].data<int64_t>();
  KILN_DISPATCH(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* ps = src.data<T>();
      T* pv = out[0].data<T>();
      for_planes(planes, S, [&](int64_t p) {
        const T* xp = ps + p * S;
        for (int64_t od = 0; od < OD; ++od) {
          const int64_t ds = bin_start(od, D, OD), de = bin_end(od, D, OD);
          for (int64_t oh = 0; oh < OH; ++oh) {
            const int64_t hs = bin_start(oh, H, OH), he = bin_end(oh, H, OH);
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t ws = bin_start(ow, W, OW), we = bin_end(ow, W, OW);
              int64_t bi = (ds * H + hs) * W + ws;
              C best = C(xp[bi]);
              for (int64_t id = ds; id < de; ++id)
                for (int64_t ih = hs; ih < he; ++ih) {
                  const int64_t row = (id * H + ih) * W;
                  for (int64_t iw = ws; iw < we; ++iw) {
                    const C v = C(xp[row + iw]);
                    if (v > best || (skip_nan && best != best && v == v)) {
                      best = v;
                      bi = row + iw;
                    }
                  }
                }
              const int64_t k = p * O + (od * OH + oh) * OW + ow;
              pv[k] = xp[bi];
              pi[k] = bi;
            }
          }
        }
      });
    }
  });
}
// d x: the values' gradient added at the flat indices (GatherDGrad over the flattened spatial plane).
TV bp_adaptive_max(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  if (!g[0].defined()) return {ops::zeros_like(x)};
  const Shape& xs = x.shape();
  const auto& o = a.ints("output_size");
  const size_t nd = o.size(), lead = xs.size() - nd;
  Shape gflat(xs.begin(), xs.begin() + std::ptrdiff_t(lead)), xflat = gflat;
  int64_t O = 1, S = 1;
  for (int64_t v : o) O *= v;
  gflat.push_back(O);
  for (size_t d = lead; d < xs.size(); ++d) S *= xs[d];
  xflat.push_back(S);
  const Tensor gv = g[0].dtype() == x.dtype() ? g[0] : ops::cast(g[0], x.dtype());
  const Tensor dx = apply1(OpId::GatherDGrad, {ops::reshape(gv, gflat), ops::reshape(out[1], gflat)},
                           {{"dim", int64_t(lead)}, {"shape", xflat}});
  return {ops::reshape(dx, xs)};
}

Attrs max_attrs(const ops::Axes& kernel, const ops::Axes& stride, const ops::Axes& pad, const ops::Axes& dilation,
                bool ceil_mode) {
  return {{"kernel", kernel}, {"stride", stride}, {"pad", pad}, {"dilation", dilation}, {"ceil_mode", ceil_mode}};
}
Attrs avg_attrs(const ops::Axes& kernel, const ops::Axes& stride, const ops::Axes& pad, bool ceil_mode,
                bool count_include_pad, int64_t divisor_override) {
  return {{"kernel", kernel}, {"stride", stride}, {"pad", pad}, {"ceil_mode", ceil_mode},
          {"count_include_pad", count_include_pad}, {"divisor_override", divisor_override}};
}

}  // namespace

namespace ops_impl {
void register_pool() {
  register_kernel(OpId::MaxPool, infer_max_pool, run_max_pool, bp_max_pool);
  register_kernel(OpId::MaxPoolGrad, infer_max_pool_grad, run_max_pool_grad, bp_max_pool_grad);
  register_kernel(OpId::MaxPoolGradGrad, infer_max_pool_grad_grad, run_max_pool_grad_grad,
                  bp_max_pool_grad_grad);
  register_kernel(OpId::MaxPoolGradWithArgmax, infer_max_pool_grad_argmax, run_max_pool_grad_argmax,
                  bp_max_pool_grad_argmax);
  register_kernel(OpId::AvgPool, infer_avg_pool, run_avg_pool, bp_avg_pool);
  register_kernel(OpId::AvgPoolGrad, infer_avg_pool_grad, run_avg_pool_grad, bp_avg_pool_grad);
  register_kernel(OpId::AdaptiveAvgPool2D, infer_adaptive, run_adaptive<false>, bp_adaptive);
  register_kernel(OpId::AdaptiveAvgPool2DGrad, infer_adaptive_grad, run_adaptive<true>, bp_adaptive_grad);
  register_kernel(OpId::AdaptiveMaxPool, infer_adaptive_max, run_adaptive_max, bp_adaptive_max);
}
}  // namespace ops_impl

namespace ops {
std::vector<Tensor> max_pool2d_with_indices(const Tensor& x, const Axes& kernel, const Axes& stride, const Axes& pad,
                                            const Axes& dilation, bool ceil_mode) {
  Attrs a = max_attrs(kernel, stride, pad, dilation, ceil_mode);
  a.items.emplace_back("return_indices", true);
  return apply(OpId::MaxPool, {x}, a);
}
Tensor max_pool2d(const Tensor& x, const Axes& kernel, const Axes& stride, const Axes& pad, const Axes& dilation,
                  bool ceil_mode) {
  Attrs a = max_attrs(kernel, stride, pad, dilation, ceil_mode);
  // While a gradient is recorded, also compute the argmax for the backward (Note [max pool argmax]).
  const bool keep_argmax = autodiff::grad_level() > 0;
  a.items.emplace_back("return_indices", keep_argmax);
  if (keep_argmax) return apply(OpId::MaxPool, {x}, a)[0];
  return apply1(OpId::MaxPool, {x}, a);
}
Tensor max_pool2d_grad(const Tensor& x, const Tensor& dout, const Axes& kernel, const Axes& stride, const Axes& pad,
                       const Axes& dilation, bool ceil_mode) {
  return apply1(OpId::MaxPoolGrad, {x, dout}, max_attrs(kernel, stride, pad, dilation, ceil_mode));
}
Tensor max_pool2d_grad_grad(const Tensor& x, const Tensor& h, const Axes& kernel, const Axes& stride, const Axes& pad,
                            const Axes& dilation, bool ceil_mode) {
  return apply1(OpId::MaxPoolGradGrad, {x, h}, max_attrs(kernel, stride, pad, dilation, ceil_mode));
}
Tensor avg_pool2d(const Tensor& x, const Axes& kernel, const Axes& stride, const Axes& pad, bool ceil_mode,
                  bool count_include_pad, int64_t divisor_override) {
  return apply1(OpId::AvgPool, {x}, avg_attrs(kernel, stride, pad, ceil_mode, count_include_pad, divisor_override));
}
Tensor avg_pool2d_grad(const Tensor& dout, const Shape& input_shape, const Axes& kernel, const Axes& stride,
                       const Axes& pad, bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  Attrs a = avg_attrs(kernel, stride, pad, ceil_mode, count_include_pad, divisor_override);
  a.items.emplace_back("input_shape", input_shape);
  return apply1(OpId::AvgPoolGrad, {dout}, a);
}
Tensor adaptive_avg_pool2d(const Tensor& x, const Axes& output_size) {
  return apply1(OpId::AdaptiveAvgPool2D, {x}, {{"output_size", output_size}});
}
Tensor adaptive_avg_pool2d_grad(const Tensor& dout, const Shape& input_shape) {
  return apply1(OpId::AdaptiveAvgPool2DGrad, {dout}, {{"input_shape", input_shape}});
}
}  // namespace ops
}  // namespace kiln
