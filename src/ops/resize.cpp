// ResizeNearest / ResizeLinear (ops.interpolate, upsample, ResizeNearestNeighbor, ResizeBilinearV2, nn.Upsample)
// and their backward ops: one kernel each instead of Kiln's former Python composition (a Gather per spatial axis,
// plus Sub/Mul/Add blends for the linear modes), issue 23.
//
// x (N, C, *spatial) with 1 to 3 spatial axes (the attr `size` holds the output's spatial sizes). Per axis, output
// index d maps to a source coordinate (attr coordinate_transformation_mode, ONNX Resize's names; s = the attr
// scale_<k>, n/m or 1/scale_factor):
//   asymmetric:    d·s                       half_pixel: (d + 0.5)·s − 0.5
//   align_corners: d·(n − 1)/(m − 1) (0 when m = 1)
// ResizeNearest then takes index floor(src) (nearest_mode floor) or floor(src + 0.5) (round_prefer_ceil), clipped
// into [0, n − 1]: PyTorch's 'nearest' is asymmetric/floor, 'nearest-exact' half_pixel/round_prefer_ceil;
// TensorFlow's (ResizeNearestNeighbor) align_corners is align_corners/round_prefer_ceil, half_pixel_centers
// half_pixel/round_prefer_ceil. ResizeLinear clamps src into [0, n − 1] and blends i0 = floor(src) and
// i1 = min(i0 + 1, n − 1) with w = src − i0, axis by axis in order (a + (b − a)·w, the former composition's
// formula); the coordinates are computed in float64 as the composition's host tables were.
// The backward ops scatter dy onto the same taps (ResizeLinear: weights ∏ (1 − w) or w); they are the forward
// ops' adjoints, so each pair is the other's gradient. 16-bit floats compute (and accumulate) in float32.
// Planes (N·C) run on the OpenMP threads; the backward's scatter stays within a plane.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

const char* const kScale[3] = {"scale_0", "scale_1", "scale_2"};

enum class Coord { Asymmetric, HalfPixel, AlignCorners };

struct Params {
  Coord coord = Coord::Asymmetric;
  bool round = false;  // nearest_mode round_prefer_ceil (else floor)
  std::vector<int64_t> size;
  double scale[3] = {0, 0, 0};
};

Params params(const Attrs& a, const char* op, bool nearest) {
  Params p;
  const std::string& c = a.s("coordinate_transformation_mode");
  if (c == "asymmetric") p.coord = Coord::Asymmetric;
  else if (c == "half_pixel") p.coord = Coord::HalfPixel;
  else if (c == "align_corners") p.coord = Coord::AlignCorners;
  else
    KILN_CHECK(false, Value, "For '", op, "', 'coordinate_transformation_mode' must be 'asymmetric', 'half_pixel' or ",
               "'align_corners', but got '", c, "'.");
  if (nearest) {
    const std::string& r = a.s("nearest_mode");
    KILN_CHECK(r == "floor" || r == "round_prefer_ceil", Value, "For '", op,
               "', 'nearest_mode' must be 'floor' or 'round_prefer_ceil', but got '", r, "'.");
    p.round = r == "round_prefer_ceil";
  }
  p.size = a.ints("size");
  KILN_CHECK(!p.size.empty() && p.size.size() <= 3, Value, "For '", op,
             "', 'size' must hold 1 to 3 output sizes, but got ", shape_str(p.size), ".");
  for (size_t k = 0; k < p.size.size(); ++k) {
    KILN_CHECK(p.size[k] > 0, Value, "For '", op, "', 'size' must be positive, but got ", shape_str(p.size), ".");
    p.scale[k] = a.f(kScale[k]);
    KILN_CHECK(std::isfinite(p.scale[k]) && p.scale[k] > 0, Value, "For '", op, "', '", kScale[k],
               "' must be a positive finite number, but got ", p.scale[k], ".");
  }
  return p;
}

void check_input(const Tensor& x, const Params& p, const char* op, bool any_real) {
  if (any_real)  // nearest copies: any real dtype or Bool (MindSpore's ResizeNearestNeighbor takes integers)
    KILN_CHECK(!is_complex(x.dtype()), Type, "For '", op, "', the input must be a real tensor, but got ",
               dtype_name(x.dtype()), ".");
  else
    KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', the input must be a float tensor, but got ",
               dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() == int64_t(p.size.size()) + 2, Value, "For '", op, "', the input must be ", p.size.size() + 2,
             "-D (N, C, *spatial) for ", p.size.size(), " output sizes, but got shape ", shape_str(x.shape()), ".");
  for (int64_t k = 2; k < x.ndim(); ++k)
    KILN_CHECK(x.shape()[k] > 0, Value, "For '", op, "', the input's spatial sizes must be positive, but got shape ",
               shape_str(x.shape()), ".");
}

Shape out_shape(const Shape& in, const Params& p) {
  Shape s{in[0], in[1]};
  for (int64_t v : p.size) s.push_back(v);
  return s;
}

double source(const Params& p, int k, int64_t d, int64_t n, int64_t m) {
  switch (p.coord) {
    case Coord::Asymmetric: return double(d) * p.scale[k];
    case Coord::HalfPixel: return (double(d) + 0.5) * p.scale[k] - 0.5;
    case Coord::AlignCorners: return m > 1 ? double(d) * (double(n - 1) / double(m - 1)) : 0.0;
  }
  return 0.0;
}

// Per-axis taps of the output indices: index pairs (i0, i1) and the weight w of i1 (nearest: i1 = i0, w = 0).
struct Axis {
  std::vector<int64_t> i0, i1;
  std::vector<double> w;
};

// Three axes (D, H, W); missing leading axes have length 1 (index 0, weight 0).
struct Plan {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  Axis ax[3];
  int nd = 0;
};

Plan make_plan(const Shape& xs, const Params& p, bool nearest) {
  Plan pl;
  pl.nd = int(p.size.size());
  for (int k = 0; k < 3; ++k) {
    const int j = k - (3 - pl.nd);  // the spatial axis k of (D, H, W) is attribute axis j
    if (j >= 0) {
      pl.in[k] = xs[2 + j];
      pl.out[k] = p.size[j];
    }
    const int64_t n = pl.in[k], m = pl.out[k];
    Axis& a = pl.ax[k];
    a.i0.resize(m);
    a.i1.resize(m);
    a.w.assign(m, 0.0);
    for (int64_t d = 0; d < m; ++d) {
      if (j < 0) {
        a.i0[d] = a.i1[d] = 0;
        continue;
      }
      const double src = source(p, j, d, n, m);
      if (nearest) {
        // half_pixel rounded is floor((d + 0.5)·s) exactly (no − 0.5 + 0.5 rounding): PyTorch's nearest-exact
        const double f = !p.round ? std::floor(src)
                         : p.coord == Coord::HalfPixel ? std::floor((double(d) + 0.5) * p.scale[j])
                                                       : std::floor(src + 0.5);
        const int64_t i = f <= 0 ? 0 : f >= double(n - 1) ? n - 1 : int64_t(f);
        a.i0[d] = a.i1[d] = i;
      } else {
        const double s = std::min(std::max(src, 0.0), double(n - 1));
        const int64_t i = int64_t(std::floor(s));
        a.i0[d] = i;
        a.i1[d] = std::min(i + 1, n - 1);
        a.w[d] = s - double(i);
      }
    }
  }
  return pl;
}

std::vector<TensorMeta> infer_fwd(const TV& in, const Attrs& a, const char* op, bool nearest) {
  const Params p = params(a, op, nearest);
  check_input(in[0], p, op, nearest);
  return {{out_shape(in[0].shape(), p), in[0].dtype()}};
}
std::vector<TensorMeta> infer_nearest(const TV& in, const Attrs& a) { return infer_fwd(in, a, "ResizeNearest", true); }
std::vector<TensorMeta> infer_linear(const TV& in, const Attrs& a) { return infer_fwd(in, a, "ResizeLinear", false); }

// The backward ops: dy (N, C, *size) -> dx of the attr input_shape.
std::vector<TensorMeta> infer_bwd(const TV& in, const Attrs& a, const char* op, bool nearest) {
  const Params p = params(a, op, nearest);
  const auto& xs = a.ints("input_shape");
  KILN_CHECK(xs.size() == p.size.size() + 2, Value, "For '", op, "', 'input_shape' must have ", p.size.size() + 2,
             " dims, but got ", shape_str(xs), ".");
  for (size_t k = 0; k < xs.size(); ++k)
    KILN_CHECK(xs[k] > 0 || (k < 2 && xs[k] == 0), Value, "For '", op, "', 'input_shape' must be positive, but got ",
               shape_str(xs), ".");
  // N and C come from dy (a graph traced with a dynamic batch keeps working); the spatial sizes from input_shape
  KILN_CHECK(is_floating(in[0].dtype()) && in[0].ndim() == int64_t(xs.size()), Value, "For '", op,
             "', 'dy' must be a float tensor of ", xs.size(), " dims, but got ", dtype_name(in[0].dtype()),
             shape_str(in[0].shape()), ".");
  Shape xshape(xs.begin(), xs.end());
  xshape[0] = in[0].shape()[0];
  xshape[1] = in[0].shape()[1];
  const Shape want = out_shape(xshape, p);
  KILN_CHECK(in[0].shape() == want, Value, "For '", op, "', 'dy' must be ", shape_str(want), ", but got ",
             shape_str(in[0].shape()), ".");
  return {{xshape, in[0].dtype()}};
}
std::vector<TensorMeta> infer_nearest_grad(const TV& in, const Attrs& a) {
  return infer_bwd(in, a, "ResizeNearestGrad", true);
}
std::vector<TensorMeta> infer_linear_grad(const TV& in, const Attrs& a) {
  return infer_bwd(in, a, "ResizeLinearGrad", false);
}

template <typename C> inline C lerp(C a, C b, C w) { return a + (b - a) * w; }

// Linear forward: every plane reads its taps; the weights are cast to the compute type once.
template <typename T>
void linear_loop(const T* px, T* py, int64_t planes, const Plan& pl) {
  using C = compute_t<T>;
  const int64_t D = pl.in[0], H = pl.in[1], W = pl.in[2];
  const int64_t Do = pl.out[0], Ho = pl.out[1], Wo = pl.out[2];
  const int64_t in_plane = D * H * W, out_plane = Do * Ho * Wo;
  std::vector<C> w[3];
  for (int k = 0; k < 3; ++k) w[k].assign(pl.ax[k].w.begin(), pl.ax[k].w.end());
  const int64_t* d0 = pl.ax[0].i0.data(), * d1 = pl.ax[0].i1.data();
  const int64_t* h0 = pl.ax[1].i0.data(), * h1 = pl.ax[1].i1.data();
  const int64_t* w0 = pl.ax[2].i0.data(), * w1 = pl.ax[2].i1.data();
  const int nd = pl.nd;
#pragma omp parallel for schedule(static) if (planes > 1 && planes * out_plane * 4 >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t q = 0; q < planes; ++q) {
    const T* x = px + q * in_plane;
    T* y = py + q * out_plane;
    for (int64_t od = 0; od < Do; ++od) {
      for (int64_t oh = 0; oh < Ho; ++oh) {
        T* yr = y + (od * Ho + oh) * Wo;
        const C wd = w[0][od], wh = w[1][oh];
        const T* r00 = x + (d0[od] * H + h0[oh]) * W;  // (d, h) corner rows
        const T* r01 = x + (d0[od] * H + h1[oh]) * W;
        const T* r10 = x + (d1[od] * H + h0[oh]) * W;
        const T* r11 = x + (d1[od] * H + h1[oh]) * W;
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const int64_t a = w0[ow], b = w1[ow];
          C va, vb;  // the values at columns a and b, blended over d then h
          if (nd == 1) {
            va = C(r00[a]);
            vb = C(r00[b]);
          } else if (nd == 2) {
            va = lerp(C(r00[a]), C(r01[a]), wh);
            vb = lerp(C(r00[b]), C(r01[b]), wh);
          } else {
            va = lerp(lerp(C(r00[a]), C(r10[a]), wd), lerp(C(r01[a]), C(r11[a]), wd), wh);
            vb = lerp(lerp(C(r00[b]), C(r10[b]), wd), lerp(C(r01[b]), C(r11[b]), wd), wh);
          }
          yr[ow] = convert_value<T>(lerp(va, vb, w[2][ow]));
        }
      }
    }
  }
}

// Nearest forward: a copy, by element size.
template <typename T> void nearest_copy(const T* px, T* py, int64_t planes, const Plan& pl) {
  const int64_t H = pl.in[1], W = pl.in[2];
  const int64_t Do = pl.out[0], Ho = pl.out[1], Wo = pl.out[2];
  const int64_t in_plane = pl.in[0] * H * W, out_plane = Do * Ho * Wo;
  const int64_t* d0 = pl.ax[0].i0.data(), * h0 = pl.ax[1].i0.data(), * w0 = pl.ax[2].i0.data();
#pragma omp parallel for schedule(static) if (planes > 1 && planes * out_plane >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t q = 0; q < planes; ++q) {
    const T* x = px + q * in_plane;
    T* y = py + q * out_plane;
    for (int64_t od = 0; od < Do; ++od)
      for (int64_t oh = 0; oh < Ho; ++oh) {
        T* yr = y + (od * Ho + oh) * Wo;
        const T* xr = x + (d0[od] * H + h0[oh]) * W;
        for (int64_t ow = 0; ow < Wo; ++ow) yr[ow] = xr[w0[ow]];
      }
  }
}

// Backward: each plane scatters dy onto its taps (in C), then narrows.
template <typename T>
void bwd_loop(const T* pg, T* pdx, int64_t planes, const Plan& pl, bool nearest) {
  using C = compute_t<T>;
  const int64_t H = pl.in[1], W = pl.in[2];
  const int64_t Do = pl.out[0], Ho = pl.out[1], Wo = pl.out[2];
  const int64_t in_plane = pl.in[0] * H * W, out_plane = Do * Ho * Wo;
  std::vector<C> w[3];
  for (int k = 0; k < 3; ++k) w[k].assign(pl.ax[k].w.begin(), pl.ax[k].w.end());
  const Axis* ax = pl.ax;
#pragma omp parallel if (planes > 1 && planes * out_plane * (nearest ? 1 : 4) >= cpu::kParallelMin && !omp_in_parallel())
  {
    std::vector<C> acc(static_cast<size_t>(in_plane));
#pragma omp for schedule(static)
    for (int64_t q = 0; q < planes; ++q) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* g = pg + q * out_plane;
      for (int64_t od = 0; od < Do; ++od)
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const T* gr = g + (od * Ho + oh) * Wo;
          if (nearest) {
            C* ar = acc.data() + (ax[0].i0[od] * H + ax[1].i0[oh]) * W;
            for (int64_t ow = 0; ow < Wo; ++ow) ar[ax[2].i0[ow]] += C(gr[ow]);
            continue;
          }
          const C wd = w[0][od], wh = w[1][oh];
          const C cw[4] = {(C(1) - wd) * (C(1) - wh), (C(1) - wd) * wh, wd * (C(1) - wh), wd * wh};
          C* rows[4] = {acc.data() + (ax[0].i0[od] * H + ax[1].i0[oh]) * W,
                        acc.data() + (ax[0].i0[od] * H + ax[1].i1[oh]) * W,
                        acc.data() + (ax[0].i1[od] * H + ax[1].i0[oh]) * W,
                        acc.data() + (ax[0].i1[od] * H + ax[1].i1[oh]) * W};
          for (int r = 0; r < 4; ++r) {
            if (cw[r] == C(0)) continue;  // a missing axis (weight 0) or an exact tap: no contribution
            C* ar = rows[r];
            for (int64_t ow = 0; ow < Wo; ++ow) {
              const C v = C(gr[ow]) * cw[r];
              const C ww = w[2][ow];
              ar[ax[2].i0[ow]] += v * (C(1) - ww);
              ar[ax[2].i1[ow]] += v * ww;
            }
          }
        }
      T* dx = pdx + q * in_plane;
      for (int64_t i = 0; i < in_plane; ++i) dx[i] = convert_value<T>(acc[size_t(i)]);
    }
  }
}

template <bool Nearest, bool Backward> void run(const TV& in, TV& out, const Attrs& a) {
  const char* op = Nearest ? (Backward ? "ResizeNearestGrad" : "ResizeNearest")
                           : (Backward ? "ResizeLinearGrad" : "ResizeLinear");
  const Params p = params(a, op, Nearest);
  const Tensor x = in[0].contiguous();
  const Shape xs = Backward ? out[0].shape() : x.shape();
  const Plan pl = make_plan(xs, p, Nearest);
  const int64_t planes = xs[0] * xs[1];
  if constexpr (Nearest && !Backward) {
    const void* px = x.raw_data();
    void* py = out[0].raw_data();
    switch (itemsize(x.dtype())) {
      case 1: nearest_copy(static_cast<const uint8_t*>(px), static_cast<uint8_t*>(py), planes, pl); break;
      case 2: nearest_copy(static_cast<const uint16_t*>(px), static_cast<uint16_t*>(py), planes, pl); break;
      case 4: nearest_copy(static_cast<const uint32_t*>(px), static_cast<uint32_t*>(py), planes, pl); break;
      default: nearest_copy(static_cast<const uint64_t*>(px), static_cast<uint64_t*>(py), planes, pl); break;
    }
    return;
  }
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      if constexpr (Backward) bwd_loop<T>(x.data<T>(), out[0].data<T>(), planes, pl, Nearest);
      else linear_loop<T>(x.data<T>(), out[0].data<T>(), planes, pl);
    }
  });
}

Attrs with_input_shape(const Attrs& a, const Shape& s) {
  Attrs r;
  for (const auto& it : a.items)
    if (std::string(it.first) != "input_shape") r.items.push_back(it);
  r.items.push_back({"input_shape", std::vector<int64_t>(s.begin(), s.end())});
  return r;
}

Attrs without_input_shape(const Attrs& a) {
  Attrs r;
  for (const auto& it : a.items)
    if (std::string(it.first) != "input_shape") r.items.push_back(it);
  return r;
}

template <OpId Grad> TV bp_fwd(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  return {apply1(Grad, {go}, with_input_shape(a, in[0].shape()))};
}

// The backward ops are linear in dy: their gradient is the forward op (grad-of-grad).
template <OpId Fwd> TV bp_bwd(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  return {apply1(Fwd, {go}, without_input_shape(a))};
}

}  // namespace

namespace ops_impl {
void register_resize() {
  register_kernel(OpId::ResizeNearest, infer_nearest, run<true, false>, bp_fwd<OpId::ResizeNearestGrad>);
  register_kernel(OpId::ResizeNearestGrad, infer_nearest_grad, run<true, true>, bp_bwd<OpId::ResizeNearest>);
  register_kernel(OpId::ResizeLinear, infer_linear, run<false, false>, bp_fwd<OpId::ResizeLinearGrad>);
  register_kernel(OpId::ResizeLinearGrad, infer_linear_grad, run<false, true>, bp_bwd<OpId::ResizeLinear>);
}
}  // namespace ops_impl
}  // namespace kiln
