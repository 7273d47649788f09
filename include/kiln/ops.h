// Kiln — the op API. Each function dispatches through kiln::apply (kiln/op.h): it runs the kernel now on
// concrete tensors and records a tape node while a grad transform is active. Binary ops broadcast NumPy-style
// and promote dtypes with promote_types (kiln/dtype.h). All errors are kiln::Error naming the op, the shapes
// and dtypes, and what was expected.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kiln/op.h"

namespace kiln::ops {

using Axes = std::vector<int64_t>;  // empty with `all` semantics described per function

// ---- the ops whose API the schema generates: elementwise unary and binary ops (src/ops/schema/ops.yaml,
// `signature`). Binary ops broadcast and promote with promote_types; see each op's comment. ----
#include "kiln/ops_generated.h"

// cond ? x : y, broadcasting all three; cond must be Bool.
Tensor select(const Tensor& cond, const Tensor& x, const Tensor& y);

// ---- elementwise unary with attributes ----
// GELU; approximate=false: x·Φ(x) with erf; true: the tanh approximation (Hendrycks & Gimpel 2016).
Tensor gelu(const Tensor& x, bool approximate = false);
// min(max(x, lo), hi); either bound may be undefined (no bound). Gradient of x: g where lo <= x <= hi (bounds
// included), 0 outside and at NaN (PyTorch's clamp, MindSpore's ops.clamp).
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);
Tensor cast(const Tensor& x, DType dtype);
// Complex64/128 of shape S → Float32/64 of shape S + [2] (real, imag), and back (src/ops/complex.cpp).
Tensor view_as_real(const Tensor& x);
Tensor view_as_complex(const Tensor& x);

// ---- softmax family (axis may be negative) ----
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);

// ---- reductions. `axes` empty = all axes. ----
Tensor sum(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor amax(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor amin(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
// The number of nonzero elements (Int64; NaN counts, -0.0 does not), and whether all / any elements are nonzero
// (Bool; empty: true / false). Any input dtype, read as it is: no mask or widened copy of x. Not differentiable.
Tensor count_nonzero(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor reduce_all(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor reduce_any(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
// Index of the first max/min along `axis` (nullopt = over the flattened tensor), Int64... MindSpore returns Int32
// for ops.Argmax primitive and Int64 for ops.argmax; Kiln returns Int64.
Tensor argmax(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keep_dims = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keep_dims = false);
// Sums `x` down to `shape` over the axes that broadcasting expanded (used by bprops of broadcasting ops).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- shape ops (views where possible) ----
// One dimension may be -1 (inferred).
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x, const Axes& perm);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor expand_dims(const Tensor& x, int64_t axis);
// axes empty = all size-1 axes.
Tensor squeeze(const Tensor& x, const Axes& axes = {});
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
// Splits along axis into pieces of the given sizes (which must sum to the axis length).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
// Basic slicing: per-axis begin/end/step (already normalized to the axis, step != 0). A view.
Tensor strided_slice(const Tensor& x, const Axes& begin, const Axes& end, const Axes& step);
// The offset diagonal (> 0 above, < 0 below) of the matrices over dim1, dim2: those dims removed, the diagonal
// appended last (length 0 past the matrix). A view. ValueError for rank < 2, dim1 == dim2; IndexError-style axis
// checks as normalize_axis.
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2);
// Zeros of `shape` with x on their diagonal(offset, dim1, dim2) (x's shape must be that diagonal's): diag_embed,
// and the gradient of diagonal.
Tensor diag_embed(const Tensor& x, const Shape& shape, int64_t offset, int64_t dim1, int64_t dim2);

// ---- indexing ----
// Picks slices along `axis` by integer `indices` (any shape): out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:].
// Negative indices count from the end; out of range → IndexError.
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis = 0);
// out[segment_ids[i], ...] += x[i, ...] for the leading dims of segment_ids; out has num_segments rows.
Tensor unsorted_segment_sum(const Tensor& x, const Tensor& segment_ids, int64_t num_segments);
// Indices of nonzero elements, shape (n, ndim), Int64 (not differentiable).
Tensor nonzero(const Tensor& x);
// The stable permutation (Int64, x's shape) that sorts x along `axis`, ascending or descending; equal values keep
// index order, NaN counts as the largest value. Not differentiable (sort/topk gather x with it). TypeError for Bool;
// ValueError for an axis out of range.
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);
// MindSpore's TensorScatterUpdate: a copy of x where the slices x[indices[i]] are replaced by updates[i].
// indices: integer (..., N), N <= x.ndim, coordinates in [0, x.shape[k]) (else IndexError); updates: shape
// indices.shape[:-1] + x.shape[N:], x's dtype. A repeated index keeps the last update. Differentiable in x (the
// written slices get zero gradient) and updates (the gradient at its slice; zero for an overwritten repeat).
// Tensor.__setitem__ is built on it (python/kiln/common/_indexing.py).
// Errors name `op` (default: the primitive, TensorScatterUpdate).
Tensor tensor_scatter_update(const Tensor& x, const Tensor& indices, const Tensor& updates, const std::string& op = "");
// MindSpore's TensorScatterAdd/Sub/Mul/Div/Max/Min as one op (reduction "add" | "sub" | "mul" | "div" | "max" |
// "min"): x combined in turn with every update at its index row (repeats combine). Shapes as tensor_scatter_update;
// an index out of range is a ValueError naming `op` (default: the MindSpore primitive).
Tensor tensor_scatter_reduce(const Tensor& x, const Tensor& indices, const Tensor& updates,
                             const std::string& reduction, const std::string& op = "");
// A new contiguous tensor with x's values and dtype (Tensor.copy()/clone(); MindSpore's TensorMove). Gradient: g.
Tensor tensor_copy(const Tensor& x);
// Returns x (an alias) after checking that every value v is in [lower, upper) ([lower, upper] if upper_closed) or
// equals `ignore`; else ValueError "For '<op>', every <what> must be in [lower, upper)..., but got v at index (..)."
// (IndexError with index_error: Tensor indexing with an index tensor computed in a graph.)
// Side-effecting in graphs: a compiled graph runs the check at every run (the error names the user's line).
Tensor check_range(const Tensor& x, const std::string& op, const std::string& what, double lower, double upper,
                   bool upper_closed = false, std::optional<int64_t> ignore = std::nullopt, bool index_error = false);

// ---- linear algebra ----
// Batched matrix product with NumPy matmul semantics (1-D operands are promoted and the added dim removed,
// batch dims broadcast); transpose_a/transpose_b transpose the last two dims first. Float32 runs on oneDNN.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// ---- creation and random ----
Tensor full(const Shape& shape, double value, DType dtype);
Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
// [start, end) with `step`; dtype Int64 if all are integral else Float32, unless given.
Tensor arange(double start, double end, double step, DType dtype);
// Counter-based (Philox4x32-10) random numbers: the same (seed, offset) always gives the same numbers. With a
// stream id >= 0 the offset is instead taken from that stream when the kernel runs (kiln/random.h), so the op draws
// anew on every execution of a compiled graph, in the same sequence as eager execution.
Tensor standard_normal(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset, int64_t stream = -1);
Tensor uniform_real(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset, int64_t stream = -1);  // [0, 1)
Tensor uniform_int(const Shape& shape, int64_t low, int64_t high, DType dtype, uint64_t seed, uint64_t offset,
                   int64_t stream = -1);

// ---- state (in place) ----
// Writes `value` (broadcast and cast to variable's dtype) into `variable`'s storage. Returns `variable`.
Tensor assign(const Tensor& variable, const Tensor& value);
// Returns `value`; in a graph, `value` waits for `expr`.
Tensor depend(const Tensor& value, const Tensor& expr);
// MindSpore's Adam kernel (see nn.Adam): updates param, m, v in place; beta1_power/beta2_power are the powers
// after this step's multiplication. Formula: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²;
// lr_t = lr·√(1-b2^t)/(1-b1^t); param -= lr_t · m/(√v+eps) (nesterov: (b1 m + (1-b1) g) in place of m).
void adam(const Tensor& param, const Tensor& m, const Tensor& v, const Tensor& beta1_power, const Tensor& beta2_power,
          const Tensor& lr, double beta1, double beta2, double eps, const Tensor& grad, bool use_nesterov);
// ApplyMomentum: accum = momentum·accum + grad; param -= lr·accum (nesterov: param -= lr·(grad + momentum·accum)).
void apply_momentum(const Tensor& param, const Tensor& accum, const Tensor& lr, const Tensor& grad, double momentum,
                    bool use_nesterov);
// MindSpore SGD (see nn.SGD).
void sgd(const Tensor& param, const Tensor& grad, const Tensor& lr, const Tensor& accum, const Tensor& stat,
         double momentum, double dampening, double weight_decay, bool nesterov);

// ---- convolution (src/ops/conv.cpp), NCHW ----
// 2-D cross-correlation. x: (N, C, H, W); weight: (O, C/groups, KH, KW), same float dtype. stride {sh, sw} (or one
// value), pad {top, bottom, left, right} of zeros (or one value, or {vertical, horizontal}), dilation {dh, dw} (or one
// value). Returns (N, O, OH, OW), OH = ⌊(H + top + bottom − dh·(KH−1) − 1)/sh⌋ + 1 (OW likewise). Float32 runs on
// oneDNN, float16/bfloat16 in float32, float64 on im2col + Eigen. ValueError for inconsistent shapes/attributes,
// TypeError for non-float or mismatched dtypes.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Axes& stride = {1, 1}, const Axes& pad = {0, 0, 0, 0},
              const Axes& dilation = {1, 1}, int64_t groups = 1);
// The gradient of conv2d w.r.t. x (a transposed convolution): dout (N, O, OH, OW) → (input_shape).
Tensor conv2d_backprop_input(const Tensor& dout, const Tensor& weight, const Shape& input_shape,
                             const Axes& stride = {1, 1}, const Axes& pad = {0, 0, 0, 0},
                             const Axes& dilation = {1, 1}, int64_t groups = 1);
// The gradient of conv2d w.r.t. the weight: dout (N, O, OH, OW), x (N, C, H, W) → (filter_shape).
Tensor conv2d_backprop_filter(const Tensor& dout, const Tensor& x, const Shape& filter_shape,
                              const Axes& stride = {1, 1}, const Axes& pad = {0, 0, 0, 0},
                              const Axes& dilation = {1, 1}, int64_t groups = 1);

// ---- pooling (src/ops/pool.cpp), NCHW, 4-D float inputs ----
// kernel {KH, KW}, stride {sh, sw}, pad {top, bottom, left, right}; output size as conv2d (with ceil_mode: ⌈⌉, and
// a last window that would start past H + top is dropped). Max pooling ignores padding and its gradient goes to the
// first maximum of each window; `max_pool2d_with_indices` also returns the Int64 index h·W + w of each maximum.
Tensor max_pool2d(const Tensor& x, const Axes& kernel, const Axes& stride, const Axes& pad = {0, 0, 0, 0},
                  const Axes& dilation = {1, 1}, bool ceil_mode = false);
std::vector<Tensor> max_pool2d_with_indices(const Tensor& x, const Axes& kernel, const Axes& stride,
                                            const Axes& pad = {0, 0, 0, 0}, const Axes& dilation = {1, 1},
                                            bool ceil_mode = false);
// dx of max_pool2d: dout routed to each window's argmax of x.
Tensor max_pool2d_grad(const Tensor& x, const Tensor& dout, const Axes& kernel, const Axes& stride, const Axes& pad,
                       const Axes& dilation, bool ceil_mode);
// The adjoint of max_pool2d_grad in dout: h (x's shape) read at each window's argmax → pooled shape.
Tensor max_pool2d_grad_grad(const Tensor& x, const Tensor& h, const Axes& kernel, const Axes& stride, const Axes& pad,
                            const Axes& dilation, bool ceil_mode);
// Average pooling; the divisor is divisor_override when > 0, else the window area (count_include_pad, clipped to
// the padded input) or the number of unpadded elements in the window.
Tensor avg_pool2d(const Tensor& x, const Axes& kernel, const Axes& stride, const Axes& pad = {0, 0, 0, 0},
                  bool ceil_mode = false, bool count_include_pad = true, int64_t divisor_override = 0);
Tensor avg_pool2d_grad(const Tensor& dout, const Shape& input_shape, const Axes& kernel, const Axes& stride,
                       const Axes& pad, bool ceil_mode, bool count_include_pad, int64_t divisor_override);
// Adaptive average pooling to output_size {OH, OW}: bin i spans [⌊i·H/OH⌋, ⌈(i+1)·H/OH⌉).
Tensor adaptive_avg_pool2d(const Tensor& x, const Axes& output_size);
Tensor adaptive_avg_pool2d_grad(const Tensor& dout, const Shape& input_shape);

// ---- normalization (src/ops/norm.cpp) ----
// BatchNorm over every axis but 1 of x (N, C, ...): returns {y, mean, variance}. training: the batch mean and the
// biased batch variance (the caller updates moving statistics, with the unbiased variance ·M/(M − 1), M = elements
// per channel); else the given mean/variance are used and returned.
// scale, bias, mean, variance: (C,), one float dtype. y = (x − mean)/√(variance + epsilon)·scale + bias.
std::vector<Tensor> batch_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean,
                               const Tensor& variance, bool training, double epsilon);
// LayerNorm: normalizes over axes [begin_norm_axis, ndim) (biased variance), then ·gamma + beta, whose shape must
// be x.shape[begin_params_axis:] (either may be undefined). gamma/beta are cast to x's dtype. Float32/Float64 x with
// both gamma and beta over the normalized axes runs the fused LayerNorm op (src/ops/layer_norm.cpp, with a fused
// backward); other cases are composed of Kiln ops.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t begin_norm_axis,
                  int64_t begin_params_axis, double epsilon);
// GroupNorm: x (N, C, ...) normalized over each of num_groups channel groups (and all spatial positions), then
// per-channel ·gamma + beta ((C,), either may be undefined). Composed of Kiln ops.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& gamma, const Tensor& beta, double epsilon);

// ---- printing (a side effect: in a compiled graph it prints on every run, in program order) ----
// Prints `text` with each '\x1f' (the unit separator: never in user text) replaced by the next tensor, formatted
// as MindSpore's graph-mode print (`Tensor(shape=[3], dtype=Float32, value=[1 2 3])`), then a newline, to the
// print sink. Returns a 0-d Int32 0. Throws ValueError if the number of slots differs from the number of tensors.
Tensor print(const std::string& text, const std::vector<Tensor>& tensors);
// Where printed text goes (default: stdout). The Python bindings send it to sys.stdout.
void set_print_sink(void (*sink)(const std::string&));

}  // namespace kiln::ops
