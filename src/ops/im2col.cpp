// Im2Col / Col2Im (ops.unfold / ops.fold) and MirrorPad / MirrorPadGrad (ops.mirror_pad): one kernel each instead
// of Kiln's former Python compositions (a Gather over an index table, an UnsortedSegmentSum, per-axis Gathers), issue
// 23. Each pair is a linear map and its adjoint, so each op's gradient is the other one.
//
// Im2Col: x (N, C, H, W), zero-padded by padding = (ph, pw) on each side -> (N, C·kh·kw, L), L = oh·ow block
// positions, oh = (H + 2ph − dh(kh − 1) − 1)/sh + 1 (floor), rows channel-major then kernel row-major (PyTorch's and
// MindSpore's layout). Col2Im: the adjoint: (N, C·kh·kw, L) summed into (N, C, H, W), H, W = output_size.
// MirrorPad: x padded on every axis by paddings [before_0, after_0, before_1, ...]: REFLECT mirrors about the edge
// element (counts < the axis' length), SYMMETRIC repeats it (counts <= the length). MirrorPadGrad folds a padded
// tensor's cotangent back onto the input's cells (a sum), MindSpore's MirrorPadGrad.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

// ---- Im2Col / Col2Im ----
struct Geom {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t h, w, oh, ow;
};

const std::vector<int64_t>& pair_attr(const Attrs& a, const char* name, const char* op, int64_t minimum) {
  const auto& v = a.ints(name);
  KILN_CHECK(v.size() == 2 && v[0] >= minimum && v[1] >= minimum, Value, "For '", op, "', '", name,
             "' must be two ints >= ", minimum, ", but got ", shape_str(v), ".");
  return v;
}

Geom geometry(int64_t h, int64_t w, const Attrs& a, const char* op) {
  const auto& k = pair_attr(a, "kernel_size", op, 1);
  const auto& d = pair_attr(a, "dilation", op, 1);
  const auto& p = pair_attr(a, "padding", op, 0);
  const auto& s = pair_attr(a, "stride", op, 1);
  Geom g{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], h, w, 0, 0};
  const int64_t eh = h + 2 * g.ph - g.dh * (g.kh - 1) - 1, ew = w + 2 * g.pw - g.dw * (g.kw - 1) - 1;
  KILN_CHECK(eh >= 0 && ew >= 0, Value, "For '", op, "', the kernel ", shape_str(k), " (dilation ", shape_str(d),
             ") does not fit the padded input ", h + 2 * g.ph, "x", w + 2 * g.pw, ".");
  g.oh = eh / g.sh + 1;
  g.ow = ew / g.sw + 1;
  return g;
}

std::vector<TensorMeta> infer_im2col(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(x.ndim() == 4, Value, "For 'Im2Col', the input must be 4-D (N, C, H, W), but got shape ",
             shape_str(x.shape()), ".");
  const Geom g = geometry(x.shape()[2], x.shape()[3], a, "Im2Col");
  return {{{x.shape()[0], x.shape()[1] * g.kh * g.kw, g.oh * g.ow}, x.dtype()}};
}

std::vector<TensorMeta> infer_col2im(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  const auto& size = a.ints("output_size");
  KILN_CHECK(size.size() == 2 && size[0] > 0 && size[1] > 0, Value,
             "For 'Col2Im', 'output_size' must be two positive ints, but got ", shape_str(size), ".");
  KILN_CHECK(x.ndim() == 3, Value, "For 'Col2Im', the input must be 3-D (N, C*kH*kW, L), but got shape ",
             shape_str(x.shape()), ".");
  const Geom g = geometry(size[0], size[1], a, "Col2Im");
  const int64_t kk = g.kh * g.kw;
  KILN_CHECK(x.shape()[1] % kk == 0 && x.shape()[2] == g.oh * g.ow, Value, "For 'Col2Im', the input of shape ",
             shape_str(x.shape()), " does not match kernel ", shape_str(a.ints("kernel_size")), " over output_size ",
             shape_str(size), " ((N, C*", kk, ", ", g.oh * g.ow, ") expected).");
  KILN_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type,
             "For 'Col2Im', the input must be a real number dtype, but got ", dtype_name(x.dtype()), ".");
  return {{{x.shape()[0], x.shape()[1] / kk, size[0], size[1]}, x.dtype()}};
}

// Visits every (plane, kernel cell, block position) with the image cell it reads (-1 in the padding).
template <typename F> void for_each_cell(const Geom& g, int64_t planes, F&& f) {
  const int64_t L = g.oh * g.ow, kk = g.kh * g.kw;
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t row = (pl * kk + i * g.kw + j) * L;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          const bool yin = y >= 0 && y < g.h;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t xx = ox * g.sw - g.pw + j * g.dw;
            const int64_t src = (yin && xx >= 0 && xx < g.w) ? (pl * g.h + y) * g.w + xx : -1;
            f(row + oy * g.ow + ox, src);
          }
        }
      }
  }
}

template <int B> struct Bytes {
  unsigned char b[B];
};

// Calls run(Bytes<isz>{}): Im2Col and MirrorPad only move elements, so they dispatch on the element's size (1, 2,
// 4, 8 or 16 bytes: every dtype, complex128 included) rather than on the dtype.
template <class F> void by_itemsize(size_t isz, F&& run) {
  switch (isz) {
    case 1: run(Bytes<1>{}); break;
    case 2: run(Bytes<2>{}); break;
    case 4: run(Bytes<4>{}); break;
    case 8: run(Bytes<8>{}); break;
    default: run(Bytes<16>{}); break;
  }
}

void run_im2col(const TV& in, TV& out, const Attrs& a) {
  const Tensor x = in[0].contiguous();
  const Geom g = geometry(x.shape()[2], x.shape()[3], a, "Im2Col");
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const size_t isz = itemsize(x.dtype());
  // a copy: by element size (zero bytes are every dtype's 0)
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(x.raw_data());
    T* po = static_cast<T*>(out[0].raw_data());
    for_each_cell(g, planes, [&](int64_t o, int64_t s) {
      if (s >= 0) po[o] = px[s];
      else std::memset(&po[o], 0, sizeof(T));
    });
  };
  by_itemsize(isz, run);
}

void run_col2im(const TV& in, TV& out, const Attrs& a) {
  const Tensor x = in[0].contiguous();
  const auto& size = a.ints("output_size");
  const Geom g = geometry(size[0], size[1], a, "Col2Im");
  const int64_t planes = out[0].shape()[0] * out[0].shape()[1];
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {  // Bool: refused by the inference
      using C = compute_t<T>;
      std::vector<C> acc(size_t(planes * g.h * g.w), C(0));
      const T* px = x.data<T>();
      for_each_cell(g, planes, [&](int64_t o, int64_t s) {
        if (s >= 0) acc[size_t(s)] += C(px[o]);
      });
      T* po = out[0].data<T>();
      for (size_t k = 0; k < acc.size(); ++k) po[k] = convert_value<T>(acc[k]);
    }
  });
}

Attrs with_size(const Attrs& a, int64_t h, int64_t w) {
  Attrs b;
  for (const char* n : {"kernel_size", "dilation", "padding", "stride"}) b.items.push_back({n, a.ints(n)});
  b.items.push_back({"output_size", std::vector<int64_t>{h, w}});
  return b;
}

Tensor same_dtype(const Tensor& g, DType dt) { return g.dtype() == dt ? g : ops::cast(g, dt); }

TV bp_im2col(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  return {apply1(OpId::Col2Im, {same_dtype(g[0], in[0].dtype())}, with_size(a, in[0].shape()[2], in[0].shape()[3]))};
}

TV bp_col2im(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  Attrs b;
  for (const char* n : {"kernel_size", "dilation", "padding", "stride"}) b.items.push_back({n, a.ints(n)});
  return {apply1(OpId::Im2Col, {same_dtype(g[0], in[0].dtype())}, b)};
}

// ---- MirrorPad / MirrorPadGrad ----
bool reflect_mode(const Attrs& a, const char* op) {
  const std::string& m = a.s("mode");
  KILN_CHECK(m == "REFLECT" || m == "SYMMETRIC", Value, "For '", op, "', 'mode' must be 'REFLECT' or 'SYMMETRIC', but got '",
             m, "'.");
  return m == "REFLECT";
}

// Checks paddings against the (unpadded) shape `s`.
void check_paddings(const Shape& s, const Attrs& a, const char* op, bool reflect) {
  const auto& p = a.ints("paddings");
  KILN_CHECK(p.size() == 2 * s.size(), Value, "For '", op, "', 'paddings' must hold ", s.size(),
             " [before, after] pairs for an input of shape ", shape_str(s), ", but got ", shape_str(p), ".");
  for (size_t ax = 0; ax < s.size(); ++ax) {
    const int64_t limit = reflect ? s[ax] - 1 : s[ax];
    KILN_CHECK(p[2 * ax] >= 0 && p[2 * ax + 1] >= 0 && (p[2 * ax] == 0 || p[2 * ax] <= limit) &&
                   (p[2 * ax + 1] == 0 || p[2 * ax + 1] <= limit),
               Value, "For '",
               op, "', paddings [", p[2 * ax], ", ", p[2 * ax + 1], "] on axis ", ax, " (length ", s[ax],
               ") of input shape ", shape_str(s), " must be in [0, ", limit, "] in ", reflect ? "REFLECT" : "SYMMETRIC",
               " mode.");
  }
}

std::vector<TensorMeta> infer_mirror_pad(const TV& in, const Attrs& a) {
  const bool reflect = reflect_mode(a, "MirrorPad");
  check_paddings(in[0].shape(), a, "MirrorPad", reflect);
  const auto& p = a.ints("paddings");
  Shape s = in[0].shape();
  for (size_t ax = 0; ax < s.size(); ++ax) s[ax] += p[2 * ax] + p[2 * ax + 1];
  return {{s, in[0].dtype()}};
}

std::vector<TensorMeta> infer_mirror_pad_grad(const TV& in, const Attrs& a) {
  const bool reflect = reflect_mode(a, "MirrorPadGrad");
  const auto& p = a.ints("paddings");
  Shape s = in[0].shape();
  KILN_CHECK(p.size() == 2 * s.size(), Value, "For 'MirrorPadGrad', 'paddings' must hold ", s.size(),
             " pairs for dout of shape ", shape_str(s), ", but got ", shape_str(p), ".");
  for (size_t ax = 0; ax < s.size(); ++ax) s[ax] -= p[2 * ax] + p[2 * ax + 1];
  for (int64_t d : s)
    KILN_CHECK(d > 0, Value, "For 'MirrorPadGrad', dout of shape ", shape_str(in[0].shape()),
               " is smaller than its paddings ", shape_str(p), ".");
  check_paddings(s, a, "MirrorPadGrad", reflect);
  KILN_CHECK(!is_complex(in[0].dtype()) && in[0].dtype() != DType::Bool, Type,
             "For 'MirrorPadGrad', dout must be a real number dtype, but got ", dtype_name(in[0].dtype()), ".");
  return {{s, in[0].dtype()}};
}

// Per axis: the source index in [0, n) of each padded position.
std::vector<std::vector<int64_t>> mirror_tables(const Shape& s, const std::vector<int64_t>& p, bool reflect) {
  std::vector<std::vector<int64_t>> t(s.size());
  for (size_t ax = 0; ax < s.size(); ++ax) {
    const int64_t n = s[ax], b = p[2 * ax], m = n + b + p[2 * ax + 1];
    t[ax].resize(size_t(m));
    for (int64_t i = 0; i < m; ++i) {
      int64_t j = i - b;
      if (j < 0) j = reflect ? -j : -j - 1;
      else if (j >= n) j = reflect ? 2 * (n - 1) - j : 2 * n - 1 - j;
      t[ax][size_t(i)] = j;
    }
  }
  return t;
}

// Visits every padded position (flat, in row-major order) with the flat source cell it reads.
template <typename F> void for_each_padded(const Shape& s, const std::vector<int64_t>& p, bool reflect, F&& f) {
  const size_t r = s.size();
  if (r == 0) {
    f(0, 0);
    return;
  }
  const auto t = mirror_tables(s, p, reflect);
  std::vector<int64_t> stride(r, 1);
  for (size_t ax = r - 1; ax-- > 0;) stride[ax] = stride[ax + 1] * s[ax + 1];
  for (int64_t d : s)
    if (d == 0) return;
  int64_t outer = 1;
  for (size_t ax = 0; ax + 1 < r; ++ax) outer *= int64_t(t[ax].size());
  const auto& last = t[r - 1];
  const int64_t m = int64_t(last.size());
  std::vector<int64_t> idx(r, 0);
  int64_t o = 0;
  for (int64_t q = 0; q < outer; ++q) {
    int64_t base = 0;
    for (size_t ax = 0; ax + 1 < r; ++ax) base += t[ax][size_t(idx[ax])] * stride[ax];
    for (int64_t i = 0; i < m; ++i) f(o++, base + last[size_t(i)]);
    for (size_t ax = r - 1; ax-- > 0;) {
      if (++idx[ax] < int64_t(t[ax].size())) break;
      idx[ax] = 0;
    }
  }
}

void run_mirror_pad(const TV& in, TV& out, const Attrs& a) {
  const Tensor x = in[0].contiguous();
  const bool reflect = reflect_mode(a, "MirrorPad");
  const auto& p = a.ints("paddings");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(x.raw_data());
    T* po = static_cast<T*>(out[0].raw_data());
    for_each_padded(x.shape(), p, reflect, [&](int64_t o, int64_t s) { po[o] = px[s]; });
  };
  by_itemsize(itemsize(x.dtype()), run);
}

void run_mirror_pad_grad(const TV& in, TV& out, const Attrs& a) {
  const Tensor d = in[0].contiguous();
  const bool reflect = reflect_mode(a, "MirrorPadGrad");
  const auto& p = a.ints("paddings");
  KILN_DISPATCH(d.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {  // Bool: refused by the inference
      using C = compute_t<T>;
      std::vector<C> acc(size_t(out[0].numel()), C(0));
      const T* pd = d.data<T>();
      for_each_padded(out[0].shape(), p, reflect, [&](int64_t o, int64_t s) { acc[size_t(s)] += C(pd[o]); });
      T* po = out[0].data<T>();
      for (size_t k = 0; k < acc.size(); ++k) po[k] = convert_value<T>(acc[k]);
    }
  });
}

TV bp_mirror_pad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  return {apply1(OpId::MirrorPadGrad, {same_dtype(g[0], in[0].dtype())}, a)};
}

TV bp_mirror_pad_grad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {ops::zeros_like(in[0])};
  return {apply1(OpId::MirrorPad, {same_dtype(g[0], in[0].dtype())}, a)};
}

}  // namespace

namespace ops_impl {
void register_im2col() {
  register_kernel(OpId::Im2Col, infer_im2col, run_im2col, bp_im2col);
  register_kernel(OpId::Col2Im, infer_col2im, run_col2im, bp_col2im);
  register_kernel(OpId::MirrorPad, infer_mirror_pad, run_mirror_pad, bp_mirror_pad);
  register_kernel(OpId::MirrorPadGrad, infer_mirror_pad_grad, run_mirror_pad_grad, bp_mirror_pad_grad);
}
}  // namespace ops_impl
}  // namespace kiln
