// GridSampler2D / GridSampler3D (ops.grid_sample) and their backward ops: one kernel each instead of the ~120 kernel
// launches of Kiln's former Python composition (issue 23).
//
// Coordinates (PyTorch's and MindSpore's rules): a normalized coordinate g in [-1, 1] maps to the pixel coordinate
// x = (g + 1)/2 (S - 1) with align_corners (-1 and 1 are the corner pixels' centres), else x = ((g + 1) S - 1)/2 (-1
// and 1 are the corner pixels' outer edges). padding_mode 'border' clips x into [0, S - 1]; 'reflection' reflects
// it at the corner centres (align_corners) or the outer edges, then clips; 'zeros' leaves it (taps outside read 0).
// 'bilinear' weights the 2^d neighbours (floor(x) + {0, 1} per axis) by the products of (1 - frac) / frac; 'nearest'
// reads the pixel at round(x), halves away from zero (C's round, as MindSpore's CPU kernel; PyTorch rounds halves to
// even). NaN and infinite coordinates (MindSpore 2.10's values, which PyTorch's 3-D CPU kernel shares): 'zeros' reads
// them as outside (0; gradient 0); 'border' and 'reflection' clip a NaN to S - 1 (C's min(S - 1, max(x, 0)) order),
// and reflection turns ±inf into NaN (fmod), so those land on S - 1 too. No coordinate is cast to an integer before
// it is known to be finite and near the input (a huge or infinite one is outside), so none reads out of bounds.
// The backward follows PyTorch's *_set_grad rules (aten/src/ATen/native/GridSampler.h), which MindSpore's kernels
// share: the unnormalization's factor (S - 1)/2 or S/2, clipping's 0 outside the range (and at a clipped value), and
// reflection's sign flips multiply the derivative of the interpolation weights.
// Grid points run on the OpenMP threads (forward: every point its own output; backward: a thread per batch element
// when there are several, since points of one element scatter into the same input gradient).
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

enum class Pad { Zeros, Border, Reflection };

struct Params {
  bool nearest = false;
  Pad pad = Pad::Zeros;
  bool align = false;
};

Params params(const Attrs& a, const char* op) {
  Params p;
  const std::string& mode = a.s("interpolation_mode");
  const std::string& pad = a.s("padding_mode");
  KILN_CHECK(mode == "bilinear" || mode == "nearest", Value, "For '", op,
             "', 'interpolation_mode' must be 'bilinear' or 'nearest', but got '", mode, "'.");
  KILN_CHECK(pad == "zeros" || pad == "border" || pad == "reflection", Value, "For '", op,
             "', 'padding_mode' must be 'zeros', 'border' or 'reflection', but got '", pad, "'.");
  p.nearest = mode == "nearest";
  p.pad = pad == "zeros" ? Pad::Zeros : pad == "border" ? Pad::Border : Pad::Reflection;
  p.align = a.b("align_corners");
  return p;
}

// x clipped into [0, size - 1]; *grad = d clip / dx (0 outside, PyTorch's clip_coordinates_set_grad). A NaN x gives
// size - 1 (MindSpore 2.10's min(size - 1, max(x, 0)) order), gradient 0.
template <typename C> C clip_set_grad(C x, int64_t size, C* grad) {
  if (x <= C(0)) {
    *grad = C(0);
    return C(0);
  }
  const C hi = C(size - 1);
  if (!(x < hi)) {
    *grad = C(0);
    return hi;
  }
  *grad = C(1);
  return x;
}
// x reflected into [twice_low/2, twice_high/2]; *grad = +-1 (PyTorch's reflect_coordinates_set_grad).
template <typename C> C reflect_set_grad(C x, int64_t twice_low, int64_t twice_high, C* grad) {
  if (twice_low == twice_high) {
    *grad = C(0);
    return C(0);
  }
  C g = C(1);
  const C lo = C(twice_low) / C(2), span = C(twice_high - twice_low) / C(2);
  x -= lo;
  if (x < C(0)) {
    g = C(-1);
    x = -x;
  }
  const C extra = std::fmod(x, span);  // NaN for x = inf or NaN (clip_set_grad then gives size - 1)
  // the parity of the number of flips, in floating point: x / span can exceed int64's range (x = 1e30)
  if (!(std::fmod(std::floor(x / span), C(2)) == C(1))) {
    *grad = g;
    return extra + lo;
  }
  *grad = -g;
  return span - extra + lo;
}
// The pixel coordinate of normalized g along an axis of `size`, and d(coordinate)/dg.
template <typename C> C source_index(C g, int64_t size, const Params& p, C* grad) {
  C mult;
  C x;
  if (p.align) {
    mult = C(size - 1) / C(2);
    x = (g + C(1)) * mult;
  } else {
    mult = C(size) / C(2);
    x = ((g + C(1)) * C(size) - C(1)) / C(2);
  }
  if (p.pad == Pad::Border) {
    C gc;
    x = clip_set_grad(x, size, &gc);
    mult *= gc;
  } else if (p.pad == Pad::Reflection) {
    C gr, gc;
    x = p.align ? reflect_set_grad(x, 0, 2 * (size - 1), &gr) : reflect_set_grad(x, -1, 2 * size - 1, &gr);
    x = clip_set_grad(x, size, &gc);
    mult *= gr * gc;
  }
  *grad = mult;
  return x;
}

// Up to 8 taps of one grid point: flat offsets into an input plane (-1: outside), weights, and the weights'
// derivatives along each axis (x, y, z).
template <int ND, typename C> struct Taps {
  static constexpr int K = 1 << ND;
  int64_t off[K];
  C w[K];
  C dw[K][ND];
  C mult[ND];  // d coordinate / d g per axis
  int n = 0;
};

// Fills the taps of the normalized point g[0..ND) (x first) for an input of spatial sizes S (outermost first).
template <int ND, typename C>
void make_taps(const C* g, const int64_t* S, const Params& p, Taps<ND, C>& t) {
  C x[ND];
  bool bad = false;
  for (int k = 0; k < ND; ++k) {
    const int64_t size = S[ND - 1 - k];  // axis k = x, y, z reads spatial dim ND-1-k
    x[k] = source_index(g[k], size, p, &t.mult[k]);
    // NaN, infinite or far outside ('zeros' padding): no tap can be inside, and floor(x) may not fit an int64
    if (!(x[k] > C(-2) && x[k] < C(size + 1))) bad = true;
  }
  t.n = 0;
  if (bad) {
    for (int k = 0; k < ND; ++k) t.mult[k] = C(0);
    return;
  }
  if (p.nearest) {
    int64_t off = 0;
    bool in = true;
    for (int k = ND; k-- > 0;) {
      const C r = std::round(x[k]);
      const int64_t size = S[ND - 1 - k];
      if (!(r >= C(0) && r <= C(size - 1))) in = false;
      off = off * size + (in ? int64_t(r) : 0);
    }
    t.off[0] = in ? off : -1;
    t.w[0] = C(1);
    for (int k = 0; k < ND; ++k) t.dw[0][k] = C(0);
    t.n = 1;
    return;
  }
  int64_t base[ND];
  C frac[ND];
  for (int k = 0; k < ND; ++k) {
    const C f = std::floor(x[k]);
    base[k] = int64_t(f);
    frac[k] = x[k] - f;
  }
  for (int c = 0; c < Taps<ND, C>::K; ++c) {
    int64_t off = 0;
    bool in = true;
    C w = C(1);
    C part[ND];
    for (int k = 0; k < ND; ++k) part[k] = ((c >> k) & 1) ? frac[k] : C(1) - frac[k];
    for (int k = ND; k-- > 0;) {
      const int64_t i = base[k] + ((c >> k) & 1);
      const int64_t size = S[ND - 1 - k];
      if (i < 0 || i >= size) in = false;
      off = off * size + (in ? i : 0);
    }
    for (int k = 0; k < ND; ++k) w *= part[k];
    t.off[c] = in ? off : -1;
    t.w[c] = w;
    for (int k = 0; k < ND; ++k) {
      C d = ((c >> k) & 1) ? C(1) : C(-1);
      for (int j = 0; j < ND; ++j)
        if (j != k) d *= part[j];
      t.dw[c][k] = d;
    }
  }
  t.n = Taps<ND, C>::K;
}

template <int ND> const char* op_name(bool grad) {
  if (ND == 2) return grad ? "GridSampler2DGrad" : "GridSampler2D";
  return grad ? "GridSampler3DGrad" : "GridSampler3D";
}

template <int ND> void check_inputs(const Tensor& x, const Tensor& grid, const char* op) {
  KILN_CHECK(is_floating(x.dtype()) && x.dtype() == grid.dtype(), Type, "For '", op,
             "', 'input' and 'grid' must be float tensors of one dtype, but got ", dtype_name(x.dtype()), " and ",
             dtype_name(grid.dtype()), ".");
  KILN_CHECK(x.ndim() == ND + 2, Value, "For '", op, "', 'input' must be ", ND + 2, "-D, but got shape ",
             shape_str(x.shape()), ".");
  KILN_CHECK(grid.ndim() == ND + 2 && grid.shape()[0] == x.shape()[0] && grid.shape()[ND + 1] == ND, Value, "For '",
             op, "', 'grid' must be (N", ND == 2 ? ", H_out, W_out, 2" : ", D_out, H_out, W_out, 3", ") with N = ",
             x.shape()[0], ", but got shape ", shape_str(grid.shape()), ".");
}

template <int ND> std::vector<TensorMeta> infer_fwd(const TV& in, const Attrs& a) {
  const char* op = op_name<ND>(false);
  check_inputs<ND>(in[0], in[1], op);
  params(a, op);
  Shape s{in[0].shape()[0], in[0].shape()[1]};
  for (int k = 0; k < ND; ++k) s.push_back(in[1].shape()[1 + k]);
  return {{s, in[0].dtype()}};
}

template <int ND, typename T>
void fwd_loop(const T* px, const T* pg, T* po, int64_t N, int64_t Cn, const int64_t* S, int64_t plane, int64_t P,
              const Params& p) {
  using C = compute_t<T>;
  const int64_t total = N * P;
#pragma omp parallel for schedule(static) if (total * Cn * (1 << ND) >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t q = 0; q < total; ++q) {
    const int64_t n = q / P, i = q % P;
    C g[ND];
    for (int k = 0; k < ND; ++k) g[k] = C(pg[q * ND + k]);
    Taps<ND, C> t;
    make_taps<ND, C>(g, S, p, t);
    const T* xn = px + n * Cn * plane;
    T* on = po + n * Cn * P + i;
    for (int64_t c = 0; c < Cn; ++c) {
      const T* xc = xn + c * plane;
      C acc = C(0);
      for (int k = 0; k < t.n; ++k)
        if (t.off[k] >= 0) acc += C(xc[t.off[k]]) * t.w[k];
      on[c * P] = convert_value<T>(acc);
    }
  }
}

template <int ND> void run_fwd(const TV& in, TV& out, const Attrs& a) {
  const Params p = params(a, op_name<ND>(false));
  const Tensor x = in[0].contiguous(), grid = in[1].contiguous();
  const int64_t N = x.shape()[0], Cn = x.shape()[1];
  int64_t S[ND], plane = 1, P = 1;
  for (int k = 0; k < ND; ++k) {
    S[k] = x.shape()[2 + k];
    plane *= S[k];
    P *= grid.shape()[1 + k];
  }
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      fwd_loop<ND, T>(x.data<T>(), grid.data<T>(), out[0].data<T>(), N, Cn, S, plane, P, p);
  });
}

// ---- backward: (dout, input, grid) -> (dinput, dgrid) ----
template <int ND> std::vector<TensorMeta> infer_bwd(const TV& in, const Attrs& a) {
  const char* op = op_name<ND>(true);
  check_inputs<ND>(in[1], in[2], op);
  params(a, op);
  Shape s{in[1].shape()[0], in[1].shape()[1]};
  for (int k = 0; k < ND; ++k) s.push_back(in[2].shape()[1 + k]);
  KILN_CHECK(in[0].shape() == s && in[0].dtype() == in[1].dtype(), Value, "For '", op, "', 'dout' must be ",
             dtype_name(in[1].dtype()), shape_str(s), ", but got ", dtype_name(in[0].dtype()), shape_str(in[0].shape()),
             ".");
  return {{in[1].shape(), in[1].dtype()}, {in[2].shape(), in[2].dtype()}};
}

template <int ND, typename T>
void bwd_loop(const T* pd, const T* px, const T* pg, T* pdx, T* pdg, int64_t N, int64_t Cn, const int64_t* S,
              int64_t plane, int64_t P, const Params& p) {
  using C = compute_t<T>;
  // the input gradient accumulates in C (float for the 16-bit floats)
  std::vector<C> acc(size_t(N * Cn * plane), C(0));
#pragma omp parallel for schedule(static) if (N > 1 && N * P * Cn * (1 << ND) >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t n = 0; n < N; ++n) {
    const T* xn = px + n * Cn * plane;
    C* an = acc.data() + n * Cn * plane;
    for (int64_t i = 0; i < P; ++i) {
      const int64_t q = n * P + i;
      C g[ND];
      for (int k = 0; k < ND; ++k) g[k] = C(pg[q * ND + k]);
      Taps<ND, C> t;
      make_taps<ND, C>(g, S, p, t);
      C dg[ND] = {};
      const T* dn = pd + n * Cn * P + i;
      for (int64_t c = 0; c < Cn; ++c) {
        const C go = C(dn[c * P]);
        const T* xc = xn + c * plane;
        C* ac = an + c * plane;
        for (int k = 0; k < t.n; ++k) {
          if (t.off[k] < 0) continue;
          ac[t.off[k]] += go * t.w[k];
          if (!p.nearest) {
            const C v = C(xc[t.off[k]]) * go;
            for (int j = 0; j < ND; ++j) dg[j] += v * t.dw[k][j];
          }
        }
      }
      for (int k = 0; k < ND; ++k) pdg[q * ND + k] = convert_value<T>(dg[k] * t.mult[k]);
    }
  }
  for (size_t k = 0; k < acc.size(); ++k) pdx[k] = convert_value<T>(acc[k]);
}

template <int ND> void run_bwd(const TV& in, TV& out, const Attrs& a) {
  const Params p = params(a, op_name<ND>(true));
  const Tensor dout = in[0].contiguous(), x = in[1].contiguous(), grid = in[2].contiguous();
  const int64_t N = x.shape()[0], Cn = x.shape()[1];
  int64_t S[ND], plane = 1, P = 1;
  for (int k = 0; k < ND; ++k) {
    S[k] = x.shape()[2 + k];
    plane *= S[k];
    P *= grid.shape()[1 + k];
  }
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      bwd_loop<ND, T>(dout.data<T>(), x.data<T>(), grid.data<T>(), out[0].data<T>(), out[1].data<T>(), N, Cn, S,
                      plane, P, p);
  });
}

template <int ND> OpId grad_id() { return ND == 2 ? OpId::GridSampler2DGrad : OpId::GridSampler3DGrad; }

template <int ND> TV bp_grid_sample(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0]), ops::zeros_like(in[1])};
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  return apply(grad_id<ND>(), {go, in[0], in[1]}, a);
}

}  // namespace

namespace ops_impl {
void register_grid_sample() {
  register_kernel(OpId::GridSampler2D, infer_fwd<2>, run_fwd<2>, bp_grid_sample<2>);
  register_kernel(OpId::GridSampler3D, infer_fwd<3>, run_fwd<3>, bp_grid_sample<3>);
  register_kernel(OpId::GridSampler2DGrad, infer_bwd<2>, run_bwd<2>, nullptr);
  register_kernel(OpId::GridSampler3DGrad, infer_bwd<3>, run_bwd<3>, nullptr);
}
}  // namespace ops_impl
}  // namespace kiln
