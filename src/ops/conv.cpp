// 2-D convolution, NCHW: Conv2D(x, w) and its two gradients as ops of their own, Conv2DBackpropInput(dy, w) and
// Conv2DBackpropFilter(dy, x), so that every bprop here is again a convolution and derivatives of any order work.
//
// Attributes (all three ops): stride [sh, sw] ≥ 1, pad [top, bottom, left, right] ≥ 0 (zeros), dilation [dh, dw]
// ≥ 1, groups ≥ 1; Conv2DBackpropInput also input_shape [N, C, H, W], Conv2DBackpropFilter filter_shape
// [O, C/groups, KH, KW]. Shapes: x (N, C, H, W), w (O, C/groups, KH, KW), y (N, O, OH, OW) with
//   OH = ⌊(H + top + bottom − dh·(KH − 1) − 1) / sh⌋ + 1   (OW likewise)
// — MindSpore's Conv2D output size for pad_mode "pad"; "same" and "valid" are explicit pads chosen by the caller
// (kiln.ops.conv2d / nn.Conv2d). Both operands must have one float dtype (TypeError otherwise).
//
// Kernels: float32 on oneDNN convolution primitives (forward, backward data, backward weights) on plain NCHW/OIHW
// layouts, cached per shape and attributes (src/backend/cpu/dnnl_utils.h); float16/bfloat16 on oneDNN's bf16/f16
// primitives where the low-precision path is native (kiln/cpu_info.h, Note [low-precision path]: operands and
// result in the low-precision type, sums in float32 inside oneDNN, the same plans as float32's), else (and for a
// configuration oneDNN has no such primitive for) computed in float32; float64 (oneDNN has none on CPU) and any
// configuration oneDNN declines run im2col + Eigen GEMM.
//
// Gradients (y = conv(x, w) is bilinear; ⟨·,·⟩ the elementwise inner product):
//   Conv2D:              dx = BackpropInput(dy, w),          dw = BackpropFilter(dy, x)
//   BackpropInput(g, w): dg = Conv2D(gx, w),                 dw = BackpropFilter(g, gx)   (⟨gx, Bᵀg⟩ = ⟨conv(gx,w), g⟩)
//   BackpropFilter(g,x): dg = Conv2D(x, gw),                 dx = BackpropInput(g, gw)
#include <omp.h>

#include <cstring>
#include <memory>
#include <string>

#include <Eigen/Core>

#include "../backend/cpu/dnnl_utils.h"
#include "elementwise.h"
#include "kiln/autodiff.h"
#include "kiln/cpu_info.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
namespace dn = cpu::dnnl;

// The geometry of one convolution, from the input and filter shapes and the attributes.
struct ConvGeom {
  int64_t N, C, H, W;   // input
  int64_t O, KH, KW;    // filter (O, C/G, KH, KW)
  int64_t OH, OW;       // output
  int64_t sh, sw, pt, pb, pl, pr, dh, dw, G;
};

// Validates the attributes and shapes; errors name `op`.
ConvGeom geometry(const Shape& x, const Shape& w, const Attrs& a, const char* op) {
  const auto& st = a.ints("stride");
  const auto& pad = a.ints("pad");
  const auto& dil = a.ints("dilation");
  const int64_t G = a.i("groups");
  KILN_CHECK(st.size() == 2 && st[0] >= 1 && st[1] >= 1, Value, "For '", op,
             "', 'stride' must be two positive ints, but got ", shape_str(st), ".");
  KILN_CHECK(dil.size() == 2 && dil[0] >= 1 && dil[1] >= 1, Value, "For '", op,
             "', 'dilation' must be two positive ints, but got ", shape_str(dil), ".");
  KILN_CHECK(pad.size() == 4 && pad[0] >= 0 && pad[1] >= 0 && pad[2] >= 0 && pad[3] >= 0, Value, "For '", op,
             "', 'pad' must be four non-negative ints (top, bottom, left, right), but got ", shape_str(pad), ".");
  KILN_CHECK(G >= 1, Value, "For '", op, "', 'groups' must be a positive int, but got ", G, ".");
  KILN_CHECK(x.size() == 4, Value, "For '", op, "', the input 'x' must be 4-D (N, C, H, W), but got shape ",
             shape_str(x), ".");
  KILN_CHECK(w.size() == 4, Value, "For '", op, "', the weight must be 4-D (C_out, C_in / groups, KH, KW), but got shape ",
             shape_str(w), ".");
  KILN_CHECK(w[0] >= 1 && w[2] >= 1 && w[3] >= 1, Value, "For '", op, "', the weight shape ", shape_str(w),
             " must have positive C_out, KH and KW.");
  KILN_CHECK(x[1] % G == 0 && w[0] % G == 0, Value, "For '", op, "', the input channels (x.shape[1] = ", x[1],
             ") and output channels (weight.shape[0] = ", w[0], ") must both be divisible by groups = ", G, ".");
  KILN_CHECK(x[1] / G == w[1], Value, "For '", op, "', x.shape[1] / groups must equal weight.shape[1], but got x shape ",
             shape_str(x), ", weight shape ", shape_str(w), " and groups ", G, ".");
  ConvGeom g{x[0], x[1], x[2], x[3], w[0], w[2], w[3], 0, 0, st[0], st[1], pad[0], pad[1], pad[2], pad[3], dil[0],
             dil[1], G};
  const int64_t span_h = g.H + g.pt + g.pb - g.dh * (g.KH - 1) - 1;
  const int64_t span_w = g.W + g.pl + g.pr - g.dw * (g.KW - 1) - 1;
  KILN_CHECK(span_h >= 0 && span_w >= 0, Value, "For '", op, "', the kernel size (", g.KH, ", ", g.KW,
             ") with dilation (", g.dh, ", ", g.dw, ") is larger than the padded input (", g.H + g.pt + g.pb, ", ",
             g.W + g.pl + g.pr, ") of x shape ", shape_str(x), ".");
  g.OH = span_h / g.sh + 1;
  g.OW = span_w / g.sw + 1;
  return g;
}

Shape out_shape(const ConvGeom& g) { return {g.N, g.O, g.OH, g.OW}; }

void check_dtypes(const Tensor& a, const Tensor& b, const char* op, const char* na, const char* nb) {
  KILN_CHECK(is_floating(a.dtype()), Type, "For '", op, "', '", na,
             "' must be a float tensor (Float16, BFloat16, Float32 or Float64), but got ", dtype_name(a.dtype()), ".");
  KILN_CHECK(a.dtype() == b.dtype(), Type, "For '", op, "', '", na, "' and '", nb,
             "' must have the same dtype, but got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()), ".");
}

void check_dout(const Tensor& dy, const ConvGeom& g, const char* op) {
  KILN_CHECK(dy.shape() == out_shape(g), Value, "For '", op, "', the output gradient must have the convolution's "
             "output shape ", shape_str(out_shape(g)), ", but got ", shape_str(dy.shape()), ".");
}

std::vector<TensorMeta> infer_conv(const TV& in, const Attrs& a) {
  check_dtypes(in[0], in[1], "Conv2D", "x", "weight");
  return {{out_shape(geometry(in[0].shape(), in[1].shape(), a, "Conv2D")), in[0].dtype()}};
}
std::vector<TensorMeta> infer_conv_input(const TV& in, const Attrs& a) {
  check_dtypes(in[0], in[1], "Conv2DBackpropInput", "dout", "weight");
  const Shape& xs = a.ints("input_shape");
  check_dout(in[0], geometry(xs, in[1].shape(), a, "Conv2DBackpropInput"), "Conv2DBackpropInput");
  return {{xs, in[0].dtype()}};
}
std::vector<TensorMeta> infer_conv_filter(const TV& in, const Attrs& a) {
  check_dtypes(in[0], in[1], "Conv2DBackpropFilter", "dout", "x");
  const Shape& ws = a.ints("filter_shape");
  check_dout(in[0], geometry(in[1].shape(), ws, a, "Conv2DBackpropFilter"), "Conv2DBackpropFilter");
  return {{ws, in[0].dtype()}};
}

// What a kernel computes. Operands (a, b) → out:
//   Fwd:        (x, w)   → y
//   BwdData:    (dy, w)  → dx
//   BwdWeights: (dy, x)  → dw
enum Kind : int64_t { kFwd = 0, kBwdData = 1, kBwdWeights = 2 };

// ---- float32 on oneDNN ----
// Note [conv layouts]: oneDNN's fast convolutions (jit:avx2 / brgconv on AVX2, jit:avx512 ... on AVX-512) work on
// blocked layouts (activations nChw8c / nChw16c, weights OIhw8i8o and the like). Handed plain NCHW / OIHW memory
// descriptors they are not eligible, and oneDNN falls back to im2col + GEMM ("gemm:jit"), whose weight gradient in
// particular is several times slower and does not scale with threads. So each plan creates its primitive
// descriptor with dnnl_format_tag_any for every tensor, asks which layouts oneDNN chose, and wraps the convolution
// in reorders: Kiln's plain operands → the chosen layouts (into temporaries), the result → plain NCHW / OIHW.
// Where the chosen layout already is the plain one (e.g. the 3-channel input of a stem convolution, which the
// direct kernels read as nchw) no reorder is made. The plan (convolution + up to three reorders) is cached per
// configuration like any primitive (dnnl_utils.h, Note [primitive cache]). Activations are reordered on every call:
// Kiln tensors are plain, and a layout pass keeping activations blocked between ops is a graph-level job. Weights
// are reordered on every call too: Kiln's tensors have no version counter to key a cached blocked copy on, and a
// 3x3 filter of ResNet sizes reorders in a few microseconds (docs/decisions/conv-layouts.md).
// If oneDNN declines the `any` layouts, the plan uses the plain layouts (no reorders); if it declines those too, the
// caller falls back to im2col + Eigen GEMM.
struct ConvPlan {
  dn::PrimPtr conv;        // arguments in the order (a, b, out) of the Kind, on the chosen layouts
  dn::PrimPtr reorder[3];  // a, b: plain → chosen; out: chosen → plain; nullptr where the chosen layout is plain
  size_t tmp_bytes[3] = {0, 0, 0};  // size of the chosen-layout temporary of a, b, out (0 where none)
  std::string impl;        // oneDNN's implementation name (e.g. "jit:avx2", "gemm:jit"), for tests and benchmarks
};

// The primitive descriptor of kind k on the given memory descriptors (plain or `any`); nullptr if oneDNN declines.
dnnl_primitive_desc_t conv_pd(Kind k, const ConvGeom& g, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t wei,
                              const_dnnl_memory_desc_t dst, const dn::Attr& attr) {
  dnnl_dims_t strides{g.sh, g.sw}, dil{g.dh - 1, g.dw - 1}, pad_l{g.pt, g.pl}, pad_r{g.pb, g.pr};
  dnnl_primitive_desc_t fwd = nullptr;
  if (dnnl_convolution_forward_primitive_desc_create(&fwd, dn::engine(), dnnl_forward_training, dnnl_convolution_direct,
                                                     src, wei, nullptr, dst, strides, dil, pad_l, pad_r,
                                                     attr.a) != dnnl_success)
    return nullptr;
  if (k == kFwd) return fwd;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t st =
      k == kBwdData
          ? dnnl_convolution_backward_data_primitive_desc_create(&pd, dn::engine(), dnnl_convolution_direct, src, wei,
                                                                 dst, strides, dil, pad_l, pad_r, fwd, attr.a)
          : dnnl_convolution_backward_weights_primitive_desc_create(&pd, dn::engine(), dnnl_convolution_direct, src,
                                                                    wei, nullptr, dst, strides, dil, pad_l, pad_r,
                                                                    fwd, attr.a);
  dnnl_primitive_desc_destroy(fwd);
  return st == dnnl_success ? pd : nullptr;
}

std::shared_ptr<ConvPlan> make_conv_plan(Kind k, const ConvGeom& g, bool plain_only, dnnl_data_type_t dt) {
  const std::vector<int64_t> sd{g.N, g.C, g.H, g.W}, dd{g.N, g.O, g.OH, g.OW},
      wd = g.G == 1 ? std::vector<int64_t>{g.O, g.C, g.KH, g.KW}
                    : std::vector<int64_t>{g.G, g.O / g.G, g.C / g.G, g.KH, g.KW};
  const dnnl_format_tag_t wtag = g.G == 1 ? dnnl_oihw : dnnl_goihw;
  dn::MemDesc src(sd, dnnl_nchw, dt), dst(dd, dnnl_nchw, dt), wei(wd, wtag, dt);
  dn::MemDesc src_any(sd, dnnl_format_tag_any, dt), dst_any(dd, dnnl_format_tag_any, dt),
      wei_any(wd, dnnl_format_tag_any, dt);
  dn::Attr attr;  // user-managed scratchpad (dnnl_utils.h, Note [threads])
  dnnl_primitive_desc_t pd = plain_only ? nullptr : conv_pd(k, g, src_any.md, wei_any.md, dst_any.md, attr);
  if (!pd) pd = conv_pd(k, g, src.md, wei.md, dst.md, attr);
  if (!pd) return nullptr;
  // The operands (a, b, out) of each kind: their DNNL_ARG ids, the layouts oneDNN chose, and Kiln's plain layouts.
  static const int ids[3][3] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                                {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS}};
  static const dnnl_query_t queries[3][3] = {{dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md},
                                             {dnnl_query_diff_dst_md, dnnl_query_weights_md, dnnl_query_diff_src_md},
                                             {dnnl_query_diff_dst_md, dnnl_query_src_md, dnnl_query_diff_weights_md}};
  const_dnnl_memory_desc_t plain[3][3] = {{src.md, wei.md, dst.md}, {dst.md, wei.md, src.md}, {dst.md, src.md, wei.md}};
  auto plan = std::make_shared<ConvPlan>();
  const char* impl = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) plan->impl = impl;
  // Note [low-precision reference kernels]: on the native path (dt bf16/f16) oneDNN may have only its reference
  // kernel for a configuration (3.2 on AVX512_FP16: every f16 backward-weights convolution is ref:any), many times
  // slower than the float32 path: the plan is refused (nullptr) and the caller computes it in float32. A plain_only
  // plan must multiply the padding taps (Note [conv special values]), which only the GEMM-based kernels do (3.2's
  // f16 plain forward is ref:any, which skips them): any other is refused too, and the caller's fallback (float32
  // GEMM for bf16/f16, conv_ref for float32) multiplies them.
  const bool ref = plan->impl.rfind("ref", 0) == 0, gemm = plan->impl.find("gemm") != std::string::npos;
  if ((dt != dnnl_f32 && ref) || (plain_only && !gemm)) {
    dnnl_primitive_desc_destroy(pd);
    return nullptr;
  }
  std::vector<std::pair<int, const_dnnl_memory_desc_t>> args;
  bool failed = false;
  for (int i = 0; i < 3; ++i) {
    const_dnnl_memory_desc_t chosen = dnnl_primitive_desc_query_md(pd, queries[k][i], 0);
    if (!chosen) { dnnl_primitive_desc_destroy(pd); return nullptr; }
    args.emplace_back(ids[k][i], chosen);
    plan->reorder[i] = i < 2 ? dn::make_reorder(plain[k][i], chosen, &failed) : dn::make_reorder(chosen, plain[k][i], &failed);
    if (plan->reorder[i]) plan->tmp_bytes[i] = dnnl_memory_desc_get_size(chosen);
  }
  if (failed) { dnnl_primitive_desc_destroy(pd); return nullptr; }
  plan->conv = dn::make_prim(pd, args);  // takes ownership of pd
  return plan->conv ? plan : nullptr;
}

dn::LruCache<ConvPlan>& conv_cache() {
  static auto* cache = new dn::LruCache<ConvPlan>();  // never destroyed: primitives outlive static destruction order
  return *cache;
}

std::shared_ptr<ConvPlan> conv_plan(Kind k, const ConvGeom& g, bool plain_only, dnnl_data_type_t dt) {
  std::vector<int64_t> key{k, g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.sh, g.sw, g.pt, g.pb, g.pl, g.pr, g.dh, g.dw, g.G,
                           plain_only, int64_t(dt)};
  return conv_cache().get(key, [&] { return make_conv_plan(k, g, plain_only, dt); });
}

// Note [conv special values]: the direct (blocked-layout) kernels skip the taps of a window that fall into the zero
// padding, while MindSpore and PyTorch (and Kiln's GEMM path) multiply them, 0·NaN = 0·inf = NaN: a non-finite
// weight makes its whole output channel NaN there, border positions included. To keep those semantics, a forward
// convolution with padding whose filter holds a NaN/inf runs on the plain-layout (GEMM) plan. The check reads the
// filter only, as integers (exponent bits all ones: NaN or ±inf), OR-reduced so that it vectorizes: ~30 µs for a
// 512x512x3x3 filter on one thread. (A float sum of p[i]·0 is a strict-order reduction that GCC may not reorder:
// it ran 8 dependent adds per 8 elements, 1.7 ms for that filter -- more than the convolution itself.) x and dy
// never meet the padding in a product that the two kinds of kernel treat differently in the forward and
// data-gradient convolutions.
bool all_finite(const float* p, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, p + i, 4);
    bad |= uint32_t((u & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

// The same for 16-bit floats (bfloat16: exponent bits 0x7f80, float16: 0x7c00; all ones for NaN and ±inf).
bool all_finite16(const uint16_t* p, int64_t n, uint16_t exp_mask) {
  uint16_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad |= uint16_t((p[i] & exp_mask) == exp_mask);
  return bad == 0;
}

const char* const kConvNames[] = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};

// Runs kind k on oneDNN with operands and result of oneDNN data type dt (f32, or bf16/f16 on the native path);
// false if oneDNN has no plan for it.
bool conv_dnnl(Kind k, const ConvGeom& g, const void* a, const void* b, void* out, dnnl_data_type_t dt = dnnl_f32) {
  const bool padded = g.pt || g.pb || g.pl || g.pr;
  const int64_t nw = g.O * (g.C / g.G) * g.KH * g.KW;
  auto finite = [&] {  // b is the filter (kFwd only)
    return dt == dnnl_f32    ? all_finite(static_cast<const float*>(b), nw)
           : dt == dnnl_bf16 ? all_finite16(static_cast<const uint16_t*>(b), nw, 0x7f80)
                             : all_finite16(static_cast<const uint16_t*>(b), nw, 0x7c00);
  };
  const bool plain_only = k == kFwd && padded && !finite();
  std::shared_ptr<ConvPlan> plan = conv_plan(k, g, plain_only, dt);
  if (!plan) return false;
  const char* const* names = kConvNames;
  dn::TempBuffer ta(plan->tmp_bytes[0]), tb(plan->tmp_bytes[1]), to(plan->tmp_bytes[2]);
  void* pa = const_cast<void*>(a);
  void* pb = const_cast<void*>(b);
  if (plan->reorder[0]) { dn::run_prim(*plan->reorder[0], {pa, ta.ptr}, names[k]); pa = ta.ptr; }
  if (plan->reorder[1]) { dn::run_prim(*plan->reorder[1], {pb, tb.ptr}, names[k]); pb = tb.ptr; }
  dn::run_prim(*plan->conv, {pa, pb, plan->reorder[2] ? to.ptr : static_cast<void*>(out)}, names[k]);
  if (plan->reorder[2]) dn::run_prim(*plan->reorder[2], {to.ptr, static_cast<void*>(out)}, names[k]);
  return true;
}

// ---- float64 (and fallback): im2col + Eigen GEMM ----
// col (Cg·KH·KW, OH·OW) holds the input patches of one image and group (zeros where the window is in padding).
template <typename T>
void im2col(const ConvGeom& g, const T* x, T* col) {
  const int64_t Cg = g.C / g.G, P = g.OH * g.OW;
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t i = 0; i < g.KH; ++i)
      for (int64_t j = 0; j < g.KW; ++j) {
        T* row = col + ((c * g.KH + i) * g.KW + j) * P;
        const T* xc = x + c * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.pt + i * g.dh;
          T* r = row + oh * g.OW;
          if (ih < 0 || ih >= g.H) { for (int64_t ow = 0; ow < g.OW; ++ow) r[ow] = T(0); continue; }
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t iw = ow * g.sw - g.pl + j * g.dw;
            r[ow] = (iw >= 0 && iw < g.W) ? xc[ih * g.W + iw] : T(0);
          }
        }
      }
}

// The adjoint of im2col: adds each patch entry back to its input position.
template <typename T>
void col2im(const ConvGeom& g, const T* col, T* x) {
  const int64_t Cg = g.C / g.G, P = g.OH * g.OW;
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t i = 0; i < g.KH; ++i)
      for (int64_t j = 0; j < g.KW; ++j) {
        const T* row = col + ((c * g.KH + i) * g.KW + j) * P;
        T* xc = x + c * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.pt + i * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          const T* r = row + oh * g.OW;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t iw = ow * g.sw - g.pl + j * g.dw;
            if (iw >= 0 && iw < g.W) xc[ih * g.W + iw] += r[ow];
          }
        }
      }
}

template <typename T>
void conv_ref(Kind k, const ConvGeom& g, const T* a, const T* b, T* out) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMap = Eigen::Map<const Mat>;
  using MMap = Eigen::Map<Mat>;
  const int64_t Cg = g.C / g.G, Og = g.O / g.G, K = Cg * g.KH * g.KW, P = g.OH * g.OW;
  std::vector<T> col(size_t(K * P));
  if (k == kBwdData) std::fill(out, out + g.N * g.C * g.H * g.W, T(0));
  if (k == kBwdWeights) std::fill(out, out + g.O * K, T(0));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.G; ++grp) {
      const int64_t x_off = (n * g.C + grp * Cg) * g.H * g.W, y_off = (n * g.O + grp * Og) * P, w_off = grp * Og * K;
      MMap cm(col.data(), K, P);
      if (k == kFwd) {
        im2col(g, a + x_off, col.data());
        MMap(out + y_off, Og, P).noalias() = CMap(b + w_off, Og, K) * cm;
      } else if (k == kBwdData) {
        cm.noalias() = CMap(b + w_off, Og, K).transpose() * CMap(a + y_off, Og, P);
        col2im(g, col.data(), out + x_off);
      } else {
        im2col(g, b + x_off, col.data());
        MMap(out + w_off, Og, K).noalias() += CMap(a + y_off, Og, P) * cm.transpose();
      }
    }
}

// Threads only pay off for large convolutions: below ~4 MFLOP (LeNet's 8x8 layers) the fork/join of two OpenMP
// threads costs more than it saves (the same threshold as BatchMatMul's, docs/decisions/kernels-every-thread.md).
struct ConvThreads {
  int saved;
  explicit ConvThreads(const ConvGeom& g) : saved(omp_get_max_threads()) {
    const double flops = 2.0 * double(g.N) * double(g.O) * double(g.OH * g.OW) * double(g.C / g.G) * double(g.KH * g.KW);
    if (flops < 2.0 * 128 * 128 * 128) omp_set_num_threads(1);
  }
  ~ConvThreads() { omp_set_num_threads(saved); }
};

template <Kind K>
void run_conv(const TV& in, TV& out, const Attrs& a) {
  const ConvGeom g = K == kFwd        ? geometry(in[0].shape(), in[1].shape(), a, "Conv2D")
                     : K == kBwdData ? geometry(a.ints("input_shape"), in[1].shape(), a, "Conv2DBackpropInput")
                                     : geometry(in[1].shape(), a.ints("filter_shape"), a, "Conv2DBackpropFilter");
  const DType t = out[0].dtype();
  const DType ct = (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
  if (out[0].numel() == 0) return;
  if (ct != t && in[0].numel() > 0 && in[1].numel() > 0 && cpu_info::use_native_low_precision(t, kConvNames[K])) {
    // The native low-precision path; a configuration oneDNN has no bf16/f16 plan for continues in float32.
    Tensor A = in[0].contiguous(), B = in[1].contiguous();
    ConvThreads threads(g);
    if (conv_dnnl(K, g, A.raw_data(), B.raw_data(), out[0].raw_data(), t == DType::BFloat16 ? dnnl_bf16 : dnnl_f16))
      return;
  }
  Tensor A = ew::as_dtype(in[0], ct).contiguous(), B = ew::as_dtype(in[1], ct).contiguous();
  Tensor o = ct == t ? out[0] : Tensor::empty(out[0].shape(), ct);
  ConvThreads threads(g);
  if (A.numel() == 0 || B.numel() == 0) {  // an empty batch: the filter gradient is zero
    std::memset(o.raw_data(), 0, size_t(o.numel()) * itemsize(ct));
  } else if (ct == DType::Float32) {
    if (!conv_dnnl(K, g, A.data<float>(), B.data<float>(), o.data<float>()))
      conv_ref<float>(K, g, A.data<float>(), B.data<float>(), o.data<float>());
  } else {
    conv_ref<double>(K, g, A.data<double>(), B.data<double>(), o.data<double>());
  }
  if (ct != t) copy_into(o, out[0]);
}

struct ConvArgs {
  ops::Axes stride, pad, dilation;
  int64_t groups;
  explicit ConvArgs(const Attrs& a)
      : stride(a.ints("stride")), pad(a.ints("pad")), dilation(a.ints("dilation")), groups(a.i("groups")) {}
};

TV bp_conv(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor()};
  ConvArgs c(a);
  // No dx for an input nothing asked a gradient of (the first layer's image): autodiff::input_needs_grad.
  Tensor dx, dw;
  if (autodiff::input_needs_grad(0))
    dx = ops::conv2d_backprop_input(g[0], in[1], in[0].shape(), c.stride, c.pad, c.dilation, c.groups);
  if (autodiff::input_needs_grad(1))
    dw = ops::conv2d_backprop_filter(g[0], in[0], in[1].shape(), c.stride, c.pad, c.dilation, c.groups);
  return {dx, dw};
}
// in = {dy, w}: out = Bᵀ(dy; w).
TV bp_conv_input(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor()};
  ConvArgs c(a);
  return {ops::conv2d(g[0], in[1], c.stride, c.pad, c.dilation, c.groups),
          ops::conv2d_backprop_filter(in[0], g[0], in[1].shape(), c.stride, c.pad, c.dilation, c.groups)};
}
// in = {dy, x}: out = dW(dy; x).
TV bp_conv_filter(const TV& in, const TV&, const TV& g, const Attrs& a) {
  if (!g[0].defined()) return {Tensor(), Tensor()};
  ConvArgs c(a);
  return {ops::conv2d(in[1], g[0], c.stride, c.pad, c.dilation, c.groups),
          ops::conv2d_backprop_input(in[0], g[0], in[1].shape(), c.stride, c.pad, c.dilation, c.groups)};
}

// Accepts 1 or 2 values for stride/dilation and 1, 2 (vertical, horizontal) or 4 values for pad.
ops::Axes pair_of(const ops::Axes& v, const char* name) {
  if (v.size() == 1) return {v[0], v[0]};
  KILN_CHECK(v.size() == 2, Value, "For 'Conv2D', '", name, "' must have 1 or 2 values, but got ", shape_str(v), ".");
  return v;
}
ops::Axes pad_of(const ops::Axes& v) {
  if (v.size() == 1) return {v[0], v[0], v[0], v[0]};
  if (v.size() == 2) return {v[0], v[0], v[1], v[1]};
  KILN_CHECK(v.size() == 4, Value, "For 'Conv2D', 'pad' must have 1, 2 or 4 values, but got ", shape_str(v), ".");
  return v;
}
Attrs conv_attrs(const ops::Axes& stride, const ops::Axes& pad, const ops::Axes& dilation, int64_t groups) {
  return {{"stride", pair_of(stride, "stride")}, {"pad", pad_of(pad)}, {"dilation", pair_of(dilation, "dilation")},
          {"groups", groups}};
}

}  // namespace

namespace ops_impl {
void register_conv() {
  register_kernel(OpId::Conv2D, infer_conv, run_conv<kFwd>, bp_conv);
  register_kernel(OpId::Conv2DBackpropInput, infer_conv_input, run_conv<kBwdData>, bp_conv_input);
  register_kernel(OpId::Conv2DBackpropFilter, infer_conv_filter, run_conv<kBwdWeights>, bp_conv_filter);
}
}  // namespace ops_impl

namespace ops {
Tensor conv2d(const Tensor& x, const Tensor& weight, const Axes& stride, const Axes& pad, const Axes& dilation,
              int64_t groups) {
  return apply1(OpId::Conv2D, {x, weight}, conv_attrs(stride, pad, dilation, groups));
}
Tensor conv2d_backprop_input(const Tensor& dout, const Tensor& weight, const Shape& input_shape, const Axes& stride,
                             const Axes& pad, const Axes& dilation, int64_t groups) {
  Attrs a = conv_attrs(stride, pad, dilation, groups);
  a.items.emplace_back("input_shape", input_shape);
  return apply1(OpId::Conv2DBackpropInput, {dout, weight}, a);
}
Tensor conv2d_backprop_filter(const Tensor& dout, const Tensor& x, const Shape& filter_shape, const Axes& stride,
                              const Axes& pad, const Axes& dilation, int64_t groups) {
  Attrs a = conv_attrs(stride, pad, dilation, groups);
  a.items.emplace_back("filter_shape", filter_shape);
  return apply1(OpId::Conv2DBackpropFilter, {dout, x}, a);
}
}  // namespace ops
}  // namespace kiln
