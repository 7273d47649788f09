// Convolution, pooling and normalization ops (src/ops/conv.cpp, pool.cpp, norm.cpp). Thin: argument conversion
// only; pad modes, 3-D inputs and defaults live in kiln.ops (python/kiln/ops/nn_func.py) and kiln.nn.
#include "bindings.h"
#include "kiln/cpu_info.h"

namespace kiln::py {

namespace {
using Ints = std::vector<int64_t>;
Tensor opt(const std::optional<TensorLike>& t) { return t ? t->t : Tensor(); }
}  // namespace

void bind_conv(nb::module_& m) {
  using TL = const TensorLike&;
  m.def("_onednn_isa", &cpu_info::onednn_isa,
        "The ISA oneDNN's kernels run with in this process ('avx2', 'avx512_core_bf16', ...): the CPU's best, capped "
        "by ONEDNN_MAX_CPU_ISA (read once, at oneDNN's first use).");
  // Note [low-precision path] (kiln/cpu_info.h); kiln.runtime.set_low_precision / cpu_info wrap these.
  auto lowp_dtype = [](const std::string& name) {
    if (name == "bfloat16") return DType::BFloat16;
    if (name == "float16") return DType::Float16;
    throw nb::value_error(("low-precision dtype must be 'bfloat16' or 'float16', but got '" + name + "'").c_str());
  };
  m.def("_low_precision_mode",
        [] {
          switch (cpu_info::low_precision_mode()) {
            case cpu_info::LowPrecisionMode::Native: return std::string("native");
            case cpu_info::LowPrecisionMode::Float32: return std::string("float32");
            default: return std::string("auto");
          }
        },
        "The low-precision setting in effect: 'auto', 'native' or 'float32' (KILN_LOW_PRECISION unless set).");
  m.def("_set_low_precision_mode",
        [](const std::string& mode) {
          cpu_info::LowPrecisionMode m;
          if (mode == "auto") m = cpu_info::LowPrecisionMode::Auto;
          else if (mode == "native") m = cpu_info::LowPrecisionMode::Native;
          else if (mode == "float32") m = cpu_info::LowPrecisionMode::Float32;
          else throw nb::value_error(("mode must be 'auto', 'native' or 'float32', but got '" + mode + "'").c_str());
          cpu_info::set_low_precision_mode(m);
        },
        nb::arg("mode"), "Sets the low-precision mode (RuntimeError naming the missing CPU flags for an impossible 'native').");
  m.def("_low_precision_path", [=](const std::string& dt) { return cpu_info::low_precision_path(lowp_dtype(dt)); },
        nb::arg("dtype"), "'native', 'float32' or 'unavailable: <reason>' for 'bfloat16' / 'float16' kernels now.");
  m.def("_native_low_precision_supported",
        [=](const std::string& dt) { return cpu_info::native_low_precision_supported(lowp_dtype(dt)); },
        nb::arg("dtype"), "Whether oneDNN creates 'bfloat16' / 'float16' matmul and convolution primitives here.");
  m.def("_native_low_precision_fast",
        [=](const std::string& dt) { return cpu_info::native_low_precision_fast(lowp_dtype(dt)); }, nb::arg("dtype"),
        "Whether the CPU has avx512_bf16/amx_bf16 ('bfloat16') or avx512_fp16/amx_fp16 ('float16').");
  m.def("_set_route_float32_through_native", &cpu_info::set_route_float32_through_native, nb::arg("on"),
        "Test hook: Float32 MatMul runs the native low-precision path's code (f32 oneDNN matmul primitives).");
  m.def("conv2d",
        [](TL x, TL w, const Ints& stride, const Ints& pad, const Ints& dilation, int64_t groups) {
          return ops::conv2d(x, w, stride, pad, dilation, groups);
        },
        nb::arg("x"), nb::arg("weight"), nb::arg("stride"), nb::arg("pad"), nb::arg("dilation"), nb::arg("groups"),
        "Conv2D (NCHW): x (N, C, H, W), weight (O, C/groups, KH, KW); pad (top, bottom, left, right).");
  m.def("conv2d_backprop_input",
        [](TL dout, TL w, nb::handle input_shape, const Ints& stride, const Ints& pad, const Ints& dilation,
           int64_t groups) {
          return ops::conv2d_backprop_input(dout, w, to_shape(input_shape, "Conv2DBackpropInput"), stride, pad,
                                            dilation, groups);
        },
        nb::arg("dout"), nb::arg("weight"), nb::arg("input_shape"), nb::arg("stride"), nb::arg("pad"),
        nb::arg("dilation"), nb::arg("groups"), "The gradient of conv2d w.r.t. its input (a transposed convolution).");
  m.def("conv2d_backprop_filter",
        [](TL dout, TL x, nb::handle filter_shape, const Ints& stride, const Ints& pad, const Ints& dilation,
           int64_t groups) {
          return ops::conv2d_backprop_filter(dout, x, to_shape(filter_shape, "Conv2DBackpropFilter"), stride, pad,
                                             dilation, groups);
        },
        nb::arg("dout"), nb::arg("x"), nb::arg("filter_shape"), nb::arg("stride"), nb::arg("pad"),
        nb::arg("dilation"), nb::arg("groups"), "The gradient of conv2d w.r.t. its weight.");

  m.def("max_pool2d",
        [](TL x, const Ints& kernel, const Ints& stride, const Ints& pad, const Ints& dilation, bool ceil_mode,
           bool return_indices) -> nb::object {
          if (return_indices) {
            auto r = ops::max_pool2d_with_indices(x, kernel, stride, pad, dilation, ceil_mode);
            return nb::make_tuple(r[0], r[1]);
          }
          return nb::cast(ops::max_pool2d(x, kernel, stride, pad, dilation, ceil_mode));
        },
        nb::arg("x"), nb::arg("kernel"), nb::arg("stride"), nb::arg("pad"), nb::arg("dilation"),
        nb::arg("ceil_mode") = false, nb::arg("return_indices") = false,
        "MaxPool (NCHW); with return_indices a tuple (y, Int64 argmax h*W + w).");
  m.def("max_pool2d_grad",
        [](TL x, TL dout, const Ints& kernel, const Ints& stride, const Ints& pad, const Ints& dilation,
           bool ceil_mode) { return ops::max_pool2d_grad(x, dout, kernel, stride, pad, dilation, ceil_mode); },
        nb::arg("x"), nb::arg("dout"), nb::arg("kernel"), nb::arg("stride"), nb::arg("pad"), nb::arg("dilation"),
        nb::arg("ceil_mode") = false);
  m.def("max_pool2d_grad_grad",
        [](TL x, TL h, const Ints& kernel, const Ints& stride, const Ints& pad, const Ints& dilation,
           bool ceil_mode) { return ops::max_pool2d_grad_grad(x, h, kernel, stride, pad, dilation, ceil_mode); },
        nb::arg("x"), nb::arg("h"), nb::arg("kernel"), nb::arg("stride"), nb::arg("pad"), nb::arg("dilation"),
        nb::arg("ceil_mode") = false, "h (x's shape) read at each max-pooling window's argmax of x.");
  m.def("avg_pool2d",
        [](TL x, const Ints& kernel, const Ints& stride, const Ints& pad, bool ceil_mode, bool count_include_pad,
           int64_t divisor_override) {
          return ops::avg_pool2d(x, kernel, stride, pad, ceil_mode, count_include_pad, divisor_override);
        },
        nb::arg("x"), nb::arg("kernel"), nb::arg("stride"), nb::arg("pad"), nb::arg("ceil_mode") = false,
        nb::arg("count_include_pad") = true, nb::arg("divisor_override") = 0, "AvgPool (NCHW).");
  m.def("avg_pool2d_grad",
        [](TL dout, nb::handle input_shape, const Ints& kernel, const Ints& stride, const Ints& pad, bool ceil_mode,
           bool count_include_pad, int64_t divisor_override) {
          return ops::avg_pool2d_grad(dout, to_shape(input_shape, "AvgPoolGrad"), kernel, stride, pad, ceil_mode,
                                      count_include_pad, divisor_override);
        },
        nb::arg("dout"), nb::arg("input_shape"), nb::arg("kernel"), nb::arg("stride"), nb::arg("pad"),
        nb::arg("ceil_mode") = false, nb::arg("count_include_pad") = true, nb::arg("divisor_override") = 0);
  m.def("grid_sample",
        [](TL x, TL grid, const std::string& mode, const std::string& padding_mode, bool align_corners) {
          return apply1(x.t.ndim() == 5 ? OpId::GridSampler3D : OpId::GridSampler2D, {x, grid},
                        {{"interpolation_mode", mode}, {"padding_mode", padding_mode}, {"align_corners", align_corners}});
        },
        nb::arg("x"), nb::arg("grid"), nb::arg("mode"), nb::arg("padding_mode"), nb::arg("align_corners"),
        "x (N, C, H, W) or (N, C, D, H, W) sampled at grid's normalized coordinates (GridSampler2D / GridSampler3D).");
  m.def("im2col",
        [](TL x, const Ints& kernel_size, const Ints& dilation, const Ints& padding, const Ints& stride) {
          return apply1(OpId::Im2Col, {x},
                        {{"kernel_size", kernel_size}, {"dilation", dilation}, {"padding", padding}, {"stride", stride}});
        },
        nb::arg("x"), nb::arg("kernel_size"), nb::arg("dilation"), nb::arg("padding"), nb::arg("stride"),
        "x (N, C, H, W) -> its sliding blocks as columns (N, C*kH*kW, L) (Im2Col; ops.unfold).");
  m.def("col2im",
        [](TL x, const Ints& output_size, const Ints& kernel_size, const Ints& dilation, const Ints& padding,
           const Ints& stride) {
          return apply1(OpId::Col2Im, {x},
                        {{"kernel_size", kernel_size}, {"dilation", dilation}, {"padding", padding}, {"stride", stride},
                         {"output_size", output_size}});
        },
        nb::arg("x"), nb::arg("output_size"), nb::arg("kernel_size"), nb::arg("dilation"), nb::arg("padding"),
        nb::arg("stride"), "Columns (N, C*kH*kW, L) summed back into (N, C, *output_size) (Col2Im; ops.fold).");
  m.def("mirror_pad",
        [](TL x, const Ints& paddings, const std::string& mode) {
          return apply1(OpId::MirrorPad, {x}, {{"paddings", paddings}, {"mode", mode}});
        },
        nb::arg("x"), nb::arg("paddings"), nb::arg("mode"),
        "x padded by reflection (MirrorPad): paddings [before_0, after_0, ...], mode 'REFLECT' or 'SYMMETRIC'.");
  m.def("resize",
        [](TL x, const Ints& size, const std::vector<double>& scales, const std::string& mode,
           const std::string& coordinate_transformation_mode, const std::string& nearest_mode) {
          KILN_CHECK(scales.size() == size.size() && !size.empty() && size.size() <= 3, Value,
                     "For 'resize', 'scales' must have one value per output size (1 to 3), but got ", scales.size(),
                     " for ", size.size(), " sizes.");
          KILN_CHECK(mode == "nearest" || mode == "linear", Value,
                     "For 'resize', 'mode' must be 'nearest' or 'linear', but got '", mode, "'.");
          static const char* const names[3] = {"scale_0", "scale_1", "scale_2"};
          Attrs a{{"size", size}, {"coordinate_transformation_mode", coordinate_transformation_mode}};
          for (size_t k = 0; k < scales.size(); ++k) a.items.push_back({names[k], scales[k]});
          if (mode == "nearest") {
            a.items.push_back({"nearest_mode", nearest_mode});
            return apply1(OpId::ResizeNearest, {x}, a);
          }
          return apply1(OpId::ResizeLinear, {x}, a);
        },
        nb::arg("x"), nb::arg("size"), nb::arg("scales"), nb::arg("mode"), nb::arg("coordinate_transformation_mode"),
        nb::arg("nearest_mode") = "floor",
        "x (N, C, *spatial) resized to size (ResizeNearest / ResizeLinear): scales are the per-axis coordinate "
        "scales (n/m or 1/scale_factor); coordinate_transformation_mode asymmetric | half_pixel | align_corners; "
        "nearest_mode floor | round_prefer_ceil.");
  m.def("pdist", [](TL x, double p) { return apply1(OpId::Pdist, {x}, {{"p", p}}); }, nb::arg("x"), nb::arg("p"),
        "The p-norm distances between the rows of x (N, M) for the pairs i < j (Pdist; ops.pdist).");
  m.def("adaptive_max_pool",
        [](TL x, const Ints& output_size, bool skip_nan) {
          return apply(OpId::AdaptiveMaxPool, {x}, {{"output_size", output_size}, {"skip_nan", skip_nan}});
        },
        nb::arg("x"), nb::arg("output_size"), nb::arg("skip_nan") = false,
        "[maxima, Int64 flat indices] of adaptive max pooling of x's trailing len(output_size) dims (AdaptiveMaxPool).");
  m.def("adaptive_avg_pool2d", [](TL x, const Ints& output_size) { return ops::adaptive_avg_pool2d(x, output_size); },
        nb::arg("x"), nb::arg("output_size"), "AdaptiveAvgPool2D (NCHW) to output_size (OH, OW).");
  m.def("adaptive_avg_pool2d_grad",
        [](TL dout, nb::handle input_shape) {
          return ops::adaptive_avg_pool2d_grad(dout, to_shape(input_shape, "AdaptiveAvgPool2DGrad"));
        },
        nb::arg("dout"), nb::arg("input_shape"));

  m.def("batch_norm",
        [](TL x, TL scale, TL bias, TL mean, TL variance, bool training, double epsilon) {
          auto r = ops::batch_norm(x, scale, bias, mean, variance, training, epsilon);
          return nb::make_tuple(r[0], r[1], r[2]);
        },
        nb::arg("x"), nb::arg("scale"), nb::arg("bias"), nb::arg("mean"), nb::arg("variance"), nb::arg("training"),
        nb::arg("epsilon"),
        "BatchNorm over every axis but 1: returns (y, mean, variance) — the batch statistics (biased variance) when "
        "training, else the given ones.");
  m.def("layer_norm",
        [](TL x, std::optional<TensorLike> gamma, std::optional<TensorLike> beta, int64_t begin_norm_axis,
           int64_t begin_params_axis, double epsilon) {
          return ops::layer_norm(x, opt(gamma), opt(beta), begin_norm_axis, begin_params_axis, epsilon);
        },
        nb::arg("x"), nb::arg("gamma").none(), nb::arg("beta").none(), nb::arg("begin_norm_axis"),
        nb::arg("begin_params_axis"), nb::arg("epsilon"));
  m.def("group_norm",
        [](TL x, int64_t num_groups, std::optional<TensorLike> gamma, std::optional<TensorLike> beta,
           double epsilon) { return ops::group_norm(x, num_groups, opt(gamma), opt(beta), epsilon); },
        nb::arg("x"), nb::arg("num_groups"), nb::arg("gamma").none(), nb::arg("beta").none(), nb::arg("epsilon"));
}

}  // namespace kiln::py
