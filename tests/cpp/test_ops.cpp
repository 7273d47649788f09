// Reduction, shape, indexing and softmax ops at the C++ level: values, views sharing storage, gradients through
// the tape (incl. grad of grad) and error kinds/messages.
#include <cmath>

#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::expect_error;
using test::expect_near;
using test::make;
using test::values;
using D = DType;

// Gradient of sum(f(x)) at x.
template <typename F>
Tensor grad_of(F f, const Tensor& x) {
  autodiff::GradScope scope;
  Tensor leaf = scope.watch_input(x);
  return autodiff::gradient({f(leaf)}, {Tensor()}, {leaf})[0];
}

TEST(Reduce, SumMeanMaxProdAlongAxes) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_near(values(ops::sum(x)), {21}, 0);
  expect_near(values(ops::sum(x, {0})), {5, 7, 9}, 0);
  expect_near(values(ops::mean(x, {-1})), {2, 5}, 1e-6);
  expect_near(values(ops::amax(x, {1}, true)), {3, 6}, 0);
  expect_near(values(ops::amin(x, {0, 1})), {1}, 0);
  expect_near(values(ops::prod(x, {1})), {6, 120}, 0);
  EXPECT_EQ(ops::sum(x, {1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(ops::sum(x, {1}).shape(), (Shape{2}));
}

TEST(Reduce, DtypesFollowNumPy) {
  Tensor i = make({1, 2, 3}, {3}, D::Int32);
  EXPECT_EQ(ops::sum(i).dtype(), D::Int64);
  EXPECT_EQ(ops::prod(i).dtype(), D::Int64);
  EXPECT_EQ(ops::amax(i).dtype(), D::Int32);
  EXPECT_EQ(ops::mean(i).dtype(), D::Float32);
  EXPECT_EQ(ops::sum(make({1, 2}, {2}, D::Float16)).dtype(), D::Float16);
  EXPECT_EQ(ops::argmax(i).dtype(), D::Int64);
}

TEST(Reduce, CountNonZeroAllAnyReadTheInputAsItIs) {
  const double nan = std::nan("");
  Tensor x = make({0, 2, -0.0, nan, 0, 0, 1, 3}, {2, 4});  // NaN counts as nonzero, -0.0 does not
  for (D dt : {D::Float32, D::Float16, D::Float64}) {
    Tensor y = ops::cast(x, dt);
    EXPECT_EQ(ops::count_nonzero(y).dtype(), D::Int64);
    expect_near(values(ops::count_nonzero(y)), {4}, 0);
    expect_near(values(ops::count_nonzero(y, {1})), {2, 2}, 0);
    expect_near(values(ops::count_nonzero(y, {0}, true)), {0, 1, 1, 2}, 0);
    EXPECT_EQ(ops::count_nonzero(y, {0}, true).shape(), (Shape{1, 4}));
  }
  Tensor i8 = make({1, 0, -3, 4, 5, 6}, {2, 3}, D::Int8);
  EXPECT_EQ(ops::reduce_all(i8).dtype(), D::Bool);
  expect_near(values(ops::reduce_all(i8, {1})), {0, 1}, 0);
  expect_near(values(ops::reduce_any(i8, {1})), {1, 1}, 0);
  expect_near(values(ops::reduce_all(ops::transpose(i8, {1, 0}), {0})), {0, 1}, 0);  // a strided view
  expect_near(values(ops::reduce_any(make({0, 0, 0, 1}, {2, 2}, D::Bool), {1})), {0, 1}, 0);
  expect_near(values(ops::count_nonzero(make({0, 7, 0, 65535}, {4}, D::UInt16))), {2}, 0);
  Tensor empty = Tensor::empty({0, 3}, D::Int32);  // NumPy's identities
  expect_near(values(ops::count_nonzero(empty, {0})), {0, 0, 0}, 0);
  expect_near(values(ops::reduce_all(empty, {0})), {1, 1, 1}, 0);
  expect_near(values(ops::reduce_any(empty, {0})), {0, 0, 0}, 0);
  expect_error([&] { ops::count_nonzero(i8, {2}); }, ErrorKind::Index, {"CountNonZero"});
}

// Note [GCC 12 narrow-integer reductions] (src/ops/reduce.cpp): 1- and 2-byte integer sums over every length
// that runs the lane loop an odd number of times were wrong (24 ones summed to 9).
TEST(Reduce, NarrowIntegerSumsAndCountsAtEveryLength) {
  for (D dt : {D::Int8, D::UInt8, D::Int16, D::UInt16, D::Bool, D::Int32, D::Float16, D::Float32}) {
    for (int n = 1; n <= 80; ++n) {
      std::vector<double> v(static_cast<size_t>(n));
      double want = 0, nz = 0;
      for (int i = 0; i < n; ++i) {
        v[size_t(i)] = dt == D::Bool ? double((i * 7) % 3 != 0) : double((i * 7) % 5) - (dt == D::UInt8 || dt == D::UInt16 ? 0 : 2);
        want += v[size_t(i)];
        nz += v[size_t(i)] != 0;
      }
      Tensor x = make(v, {n}, dt);
      ASSERT_EQ(values(ops::sum(x))[0], want) << dtype_name(dt) << " n=" << n;
      ASSERT_EQ(values(ops::count_nonzero(x))[0], nz) << dtype_name(dt) << " n=" << n;
      ASSERT_EQ(values(ops::sum(ops::reshape(x, {1, n}), {1}))[0], want) << dtype_name(dt) << " n=" << n;
    }
  }
}

TEST(Reduce, TransposedInput) {
  Tensor x = ops::transpose(make({1, 2, 3, 4, 5, 6}, {2, 3}), {1, 0});  // [[1,4],[2,5],[3,6]]
  expect_near(values(ops::sum(x, {1})), {5, 7, 9}, 0);
  expect_near(values(ops::amax(x, {0})), {3, 6}, 0);
}

TEST(Reduce, ArgmaxFirstOccurrence) {
  Tensor x = make({1, 5, 5, 0, 2, 2}, {2, 3});
  expect_near(values(ops::argmax(x, 1)), {1, 1}, 0);
  expect_near(values(ops::argmin(x, 1)), {0, 0}, 0);
  expect_near(values(ops::argmax(x)), {1}, 0);
  EXPECT_EQ(ops::argmax(x, 0, true).shape(), (Shape{1, 3}));
}

TEST(Reduce, Errors) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error([&] { ops::sum(x, {2}); }, ErrorKind::Index, {"ReduceSum", "[-2, 1]", "2"});
  expect_error([&] { ops::mean(x, {0, -2}); }, ErrorKind::Value, {"ReduceMean", "duplicates"});
  expect_error([&] { ops::amax(ops::zeros({0, 2})); }, ErrorKind::Value, {"ReduceMax", "empty"});
  expect_error([&] { ops::sum_to(x, {4}); }, ErrorKind::Value, {"sum_to"});
}

TEST(Reduce, Gradients) {
  Tensor x = make({1, 3, 3, 0, 2, 4}, {2, 3}, D::Float64);
  expect_near(values(grad_of([](const Tensor& t) { return ops::sum(t, {1}); }, x)), {1, 1, 1, 1, 1, 1}, 0);
  expect_near(values(grad_of([](const Tensor& t) { return ops::mean(t, {0}); }, x)), {.5, .5, .5, .5, .5, .5}, 1e-15);
  // ties share the gradient equally
  expect_near(values(grad_of([](const Tensor& t) { return ops::amax(t, {1}); }, x)), {0, .5, .5, 0, 0, 1}, 1e-15);
  // prod with a zero: only the zero gets the product of the others
  expect_near(values(grad_of([](const Tensor& t) { return ops::prod(t, {1}); }, x)), {9, 3, 3, 8, 0, 0}, 1e-12);
  Tensor s = make({1, 2, 3, 4}, {2, 2}, D::Float64);
  expect_near(values(grad_of([](const Tensor& t) { return ops::sum_to(t, {2}); }, s)), {1, 1, 1, 1}, 0);
}

TEST(Shape, ViewsShareStorage) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor r = ops::reshape(x, {3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.impl()->storage, x.impl()->storage);
  Tensor t = ops::transpose(x, {1, 0});
  EXPECT_EQ(t.impl()->storage, x.impl()->storage);
  expect_near(values(t), {0, 3, 1, 4, 2, 5}, 0);
  Tensor b = ops::broadcast_to(make({7, 8}, {2, 1}), {2, 3});
  EXPECT_EQ(b.strides(), (Strides{1, 0}));
  expect_near(values(b), {7, 7, 7, 8, 8, 8}, 0);
  Tensor s = ops::strided_slice(x, {1, 2}, {-1, -1}, {-1, -2});  // x[1::-1, 2::-2]
  EXPECT_EQ(s.impl()->storage, x.impl()->storage);
  expect_near(values(s), {5, 3, 2, 0}, 0);
  // reshape of a transposed tensor that can not be a view copies
  Tensor c = ops::reshape(t, {6});
  expect_near(values(c), {0, 3, 1, 4, 2, 5}, 0);
}

TEST(Shape, ConcatStackSplitSqueeze) {
  Tensor a = make({1, 2}, {1, 2}), b = make({3, 4, 5, 6}, {2, 2}, D::Int32);
  Tensor c = ops::concat({a, b}, 0);
  EXPECT_EQ(c.dtype(), D::Float32);
  expect_near(values(c), {1, 2, 3, 4, 5, 6}, 0);
  Tensor s = ops::stack({a, a}, 1);
  EXPECT_EQ(s.shape(), (Shape{1, 2, 2}));
  auto parts = ops::split(c, {1, 2}, 0);
  ASSERT_EQ(parts.size(), 2u);
  expect_near(values(parts[1]), {3, 4, 5, 6}, 0);
  EXPECT_EQ(ops::squeeze(ops::expand_dims(a, -1)).shape(), (Shape{2}));
}

TEST(Shape, Errors) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_error([&] { ops::reshape(x, {4}); }, ErrorKind::Value, {"Reshape", "[2, 3]", "[4]"});
  expect_error([&] { ops::transpose(x, {0, 0}); }, ErrorKind::Value, {"Transpose", "permutation"});
  expect_error([&] { ops::broadcast_to(x, {3, 3}); }, ErrorKind::Value, {"BroadcastTo"});
  expect_error([&] { ops::concat({x, make({1}, {1})}, 0); }, ErrorKind::Value, {"Concat"});
  expect_error([&] { ops::split(x, {1, 1}, 1); }, ErrorKind::Value, {"Split"});
  expect_error([&] { ops::squeeze(x, {0}); }, ErrorKind::Value, {"Squeeze"});
  expect_error([&] { ops::strided_slice(x, {0}, {1}, {0}); }, ErrorKind::Value, {"StridedSlice", "step"});
}

TEST(Shape, GradientsThroughViews) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3}, D::Float64);
  Tensor w = make({1, 2, 3, 4, 5, 6}, {3, 2}, D::Float64);
  auto g = grad_of([&](const Tensor& t) { return ops::mul(ops::transpose(t, {1, 0}), w); }, x);
  expect_near(values(g), {1, 3, 5, 2, 4, 6}, 0);
  g = grad_of([](const Tensor& t) { return ops::strided_slice(t, {0, 2}, {2, -1}, {1, -2}); }, x);
  expect_near(values(g), {1, 0, 1, 1, 0, 1}, 0);
  g = grad_of([](const Tensor& t) { return ops::concat({t, t}, 1); }, x);
  expect_near(values(g), {2, 2, 2, 2, 2, 2}, 0);
}

TEST(Index, GatherAndSegmentSum) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor idx = make({2, -3, 2}, {3}, D::Int64);
  expect_near(values(ops::gather(x, idx, 0)), {4, 5, 0, 1, 4, 5}, 0);
  expect_near(values(ops::gather(x, make({1}, {1}, D::Int32), 1)), {1, 3, 5}, 0);
  Tensor seg = ops::unsorted_segment_sum(x, make({1, 0, 1}, {3}, D::Int32), 2);
  expect_near(values(seg), {2, 3, 4, 6}, 0);
  auto g = grad_of([&](const Tensor& t) { return ops::gather(t, idx, 0); }, ops::cast(x, D::Float64));
  expect_near(values(g), {1, 1, 0, 0, 2, 2}, 0);
  expect_error([&] { ops::gather(x, make({3}, {1}, D::Int64), 0); }, ErrorKind::Index, {"Gather", "3", "size 3"});
  expect_error([&] { ops::gather(x, make({0.5}, {1}), 0); }, ErrorKind::Type, {"Gather", "Float32"});
}

TEST(Index, TensorScatterUpdateAndItsGradient) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {3, 2}, D::Float64);
  Tensor rows = make({2, 0, 2}, {3, 1}, D::Int64);  // row 2 twice: the last update wins
  Tensor upd = make({10, 11, 20, 21, 30, 31}, {3, 2}, D::Float64);
  expect_near(values(ops::tensor_scatter_update(x, rows, upd)), {20, 21, 2, 3, 30, 31}, 0);
  Tensor elems = make({1, 1, 0, 0}, {2, 2}, D::Int32);
  expect_near(values(ops::tensor_scatter_update(x, elems, make({-1, -2}, {2}, D::Float64))), {-2, 1, 2, -1, 4, 5}, 0);
  // d/dx: zero at the written rows; d/dupdates: one at the surviving update, zero at the overwritten repeat.
  expect_near(values(grad_of([&](const Tensor& t) { return ops::tensor_scatter_update(t, rows, upd); }, x)),
              {0, 0, 1, 1, 0, 0}, 0);
  expect_near(values(grad_of([&](const Tensor& u) { return ops::tensor_scatter_update(x, rows, u); }, upd)),
              {0, 0, 1, 1, 1, 1}, 0);
  expect_error([&] { ops::tensor_scatter_update(x, make({3}, {1, 1}, D::Int64), make({0, 0}, {1, 2}, D::Float64)); },
               ErrorKind::Index, {"TensorScatterUpdate", "[3]", "[0, 3)"});
  expect_error([&] { ops::tensor_scatter_update(x, rows, make({0, 0}, {1, 2}, D::Float64)); }, ErrorKind::Value,
               {"TensorScatterUpdate", "[3, 2]", "[1, 2]"});
  expect_error([&] { ops::tensor_scatter_update(x, rows, ops::cast(upd, D::Float32)); },
               ErrorKind::Type, {"TensorScatterUpdate", "Float64", "Float32"});
}

TEST(Index, TensorCopyAndCheckRange) {
  Tensor x = make({1, 2, 3, 4}, {2, 2});
  Tensor c = ops::tensor_copy(ops::transpose(x, {1, 0}));
  EXPECT_NE(c.impl()->storage, x.impl()->storage);
  expect_near(values(c), {1, 3, 2, 4}, 0);
  expect_near(values(grad_of([](const Tensor& t) { return ops::mul(ops::tensor_copy(t), t); },
                             make({1, -2}, {2}, D::Float64))), {2, -4}, 0);
  Tensor labels = make({0, 3, -100}, {3}, D::Int32);
  EXPECT_EQ(ops::check_range(labels, "NLLLoss", "label", 0, 4, false, -100).impl()->storage, labels.impl()->storage);
  expect_error([&] { ops::check_range(labels, "NLLLoss", "label", 0, 3); }, ErrorKind::Value,
               {"For 'NLLLoss', every label must be in [0, 3)", "got 3 at index (1,)"});
  expect_error([&] { ops::check_range(make({0.5, NAN}, {1, 2}), "BCELoss", "value", 0, 1, true); }, ErrorKind::Value,
               {"[0, 1]", "got nan at index (0, 1)"});
}

TEST(Index, NonZero) {
  Tensor x = make({0, 1, 2, 0}, {2, 2});
  Tensor nz = ops::nonzero(x);
  EXPECT_EQ(nz.dtype(), D::Int64);
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  expect_near(values(nz), {0, 1, 1, 0}, 0);
}

TEST(Softmax, ValuesStableAndGrad) {
  Tensor x = make({1000, 1001, 1002, 0, 0, 0}, {2, 3});
  const double e0 = std::exp(-2.0), e1 = std::exp(-1.0), z = e0 + e1 + 1;
  expect_near(values(ops::softmax(x)), {e0 / z, e1 / z, 1 / z, 1. / 3, 1. / 3, 1. / 3}, 1e-6);
  expect_near(values(ops::log_softmax(x, 0)), {0, 0, 0, -1000, -1001, -1002}, 1e-3);
  // sum(softmax) is constant: its gradient is zero
  auto g = grad_of([](const Tensor& t) { return ops::softmax(t, 1); }, ops::cast(x, D::Float64));
  expect_near(values(g), {0, 0, 0, 0, 0, 0}, 1e-12);
  expect_error([&] { ops::softmax(make({1, 2}, {2}, D::Int32)); }, ErrorKind::Type, {"Softmax", "Int32"});
}

TEST(Softmax, GradOfGradRecomputesOutput) {
  // d²/dx² of sum(exp(x)) = exp(x): the bprop's use of the output must keep the output's history.
  Tensor x = make({0.5, -1.0}, {2}, D::Float64);
  autodiff::GradScope outer;
  Tensor xo = outer.watch_input(x);
  Tensor g;
  {
    autodiff::GradScope inner;
    Tensor xi = inner.watch_input(xo);
    g = autodiff::gradient({ops::sum(ops::exp(xi))}, {Tensor()}, {xi})[0];
  }
  Tensor gg = autodiff::gradient({ops::sum(g)}, {Tensor()}, {xo})[0];
  expect_near(values(gg), {std::exp(0.5), std::exp(-1.0)}, 1e-12);
}

}  // namespace
}  // namespace kiln
