// Kiln — the op API. Each function dispatches through kiln::apply (kiln/op.h): it runs the kernel now on
// concrete tensors and records a tape node while a grad transform is active. Binary ops broadcast NumPy-style
// and promote dtypes with promote_types (kiln/dtype.h). All errors are kiln::Error naming the op, the shapes
// and dtypes, and what was expected.
#pragma once
#include <optional>
#include <vector>

#include "kiln/op.h"

namespace kiln::ops {

using Axes = std::vector<int64_t>;  // empty with `all` semantics described per function

// ---- elementwise binary (broadcasting; result dtype = promote_types) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
// True division: integer/bool inputs give float32.
Tensor div(const Tensor& a, const Tensor& b);
Tensor floor_div(const Tensor& a, const Tensor& b);
// Python/NumPy modulo: the result has the sign of the divisor.
Tensor mod(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Comparisons return Bool tensors and are not differentiable.
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
// Logical ops take any dtype (nonzero = true) and return Bool.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// cond ? x : y, broadcasting all three; cond must be Bool.
Tensor select(const Tensor& cond, const Tensor& x, const Tensor& y);

// ---- elementwise unary ----
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);       // integer inputs give float32 (also log, sqrt, rsqrt, erf, sigmoid, tanh, gelu)
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor square(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
// GELU; approximate=false: x·Φ(x) with erf; true: the tanh approximation (Hendrycks & Gimpel 2016).
Tensor gelu(const Tensor& x, bool approximate = false);
// min(max(x, lo), hi); either bound may be undefined (no bound).
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);
Tensor cast(const Tensor& x, DType dtype);
Tensor identity(const Tensor& x);
// Identity whose gradient is zero.
Tensor stop_gradient(const Tensor& x);

// ---- softmax family (axis may be negative) ----
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);

// ---- reductions. `axes` empty = all axes. ----
Tensor sum(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor amax(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor amin(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keep_dims = false);
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

// ---- indexing ----
// Picks slices along `axis` by integer `indices` (any shape): out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:].
// Negative indices count from the end; out of range → IndexError.
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis = 0);
// out[segment_ids[i], ...] += x[i, ...] for the leading dims of segment_ids; out has num_segments rows.
Tensor unsorted_segment_sum(const Tensor& x, const Tensor& segment_ids, int64_t num_segments);
// Indices of nonzero elements, shape (n, ndim), Int64 (not differentiable).
Tensor nonzero(const Tensor& x);

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
// Counter-based (Philox4x32-10) random numbers: the same (seed, offset) always gives the same numbers.
Tensor standard_normal(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset);
Tensor uniform_real(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset);  // [0, 1)
Tensor uniform_int(const Shape& shape, int64_t low, int64_t high, DType dtype, uint64_t seed, uint64_t offset);

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

}  // namespace kiln::ops
