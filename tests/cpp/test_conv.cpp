// Convolution, pooling and normalization from C++: oneDNN float32 vs the float64 im2col path, gradients against
// central finite differences (through the eager tape), pooling and BatchNorm on hand-checked values, errors.
#include <cmath>
#include <functional>
#include <random>

#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using autodiff::gradient;
using autodiff::GradScope;
using test::expect_error;
using test::expect_near;
using test::make;
using test::values;

std::vector<double> randn(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

struct ConvCase {
  Shape x, w;
  ops::Axes stride, pad, dilation;
  int64_t groups;
};

const ConvCase kCases[] = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
    {{2, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
    {{1, 6, 8, 8}, {6, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 6},
};

TEST(Conv, Float32OneDnnMatchesFloat64Reference) {
  for (const auto& c : kCases) {
    auto xv = randn(size_t(numel(c.x)), 1), wv = randn(size_t(numel(c.w)), 2);
    Tensor y32 = ops::conv2d(make(xv, c.x), make(wv, c.w), c.stride, c.pad, c.dilation, c.groups);
    Tensor y64 = ops::conv2d(make(xv, c.x, DType::Float64), make(wv, c.w, DType::Float64), c.stride, c.pad,
                             c.dilation, c.groups);
    EXPECT_EQ(y32.dtype(), DType::Float32);
    EXPECT_EQ(y32.shape(), y64.shape());
    expect_near(values(y32), values(y64), 1e-4);
    // The two gradient ops, float32 vs float64.
    auto dyv = randn(size_t(y64.numel()), 3);
    Tensor dx32 = ops::conv2d_backprop_input(make(dyv, y64.shape()), make(wv, c.w), c.x, c.stride, c.pad, c.dilation,
                                             c.groups);
    Tensor dx64 = ops::conv2d_backprop_input(make(dyv, y64.shape(), DType::Float64), make(wv, c.w, DType::Float64),
                                             c.x, c.stride, c.pad, c.dilation, c.groups);
    expect_near(values(dx32), values(dx64), 1e-4);
    Tensor dw32 = ops::conv2d_backprop_filter(make(dyv, y64.shape()), make(xv, c.x), c.w, c.stride, c.pad,
                                              c.dilation, c.groups);
    Tensor dw64 = ops::conv2d_backprop_filter(make(dyv, y64.shape(), DType::Float64), make(xv, c.x, DType::Float64),
                                              c.w, c.stride, c.pad, c.dilation, c.groups);
    expect_near(values(dw32), values(dw64), 1e-3);
  }
}

// Central differences of sum(f(x)·f(x)) w.r.t. the float64 input `v` of shape `s`.
std::vector<double> numeric_grad(const std::function<Tensor(const Tensor&)>& f, std::vector<double> v, const Shape& s) {
  std::vector<double> g(v.size());
  const double eps = 1e-6;
  auto loss = [&](const std::vector<double>& p) {
    Tensor y = f(make(p, s, DType::Float64));
    return ops::sum(ops::mul(y, y)).item();
  };
  for (size_t i = 0; i < v.size(); ++i) {
    const double o = v[i];
    v[i] = o + eps;
    const double a = loss(v);
    v[i] = o - eps;
    const double b = loss(v);
    v[i] = o;
    g[i] = (a - b) / (2 * eps);
  }
  return g;
}

TEST(Conv, GradientsMatchFiniteDifferences) {
  const ConvCase& c = kCases[1];
  Shape xs{1, 4, 6, 5};
  auto xv = randn(size_t(numel(xs)), 4), wv = randn(size_t(numel(c.w)), 5);
  GradScope scope;
  Tensor x = scope.watch_input(make(xv, xs, DType::Float64));
  Tensor w = scope.watch_input(make(wv, c.w, DType::Float64));
  Tensor y = ops::conv2d(x, w, c.stride, c.pad, c.dilation, c.groups);
  auto g = gradient({ops::sum(ops::mul(y, y))}, {}, {x, w});
  Tensor w0 = make(wv, c.w, DType::Float64), x0 = make(xv, xs, DType::Float64);
  expect_near(values(g[0]),
              numeric_grad([&](const Tensor& t) { return ops::conv2d(t, w0, c.stride, c.pad, c.dilation, c.groups); },
                           xv, xs),
              1e-5);
  expect_near(values(g[1]),
              numeric_grad([&](const Tensor& t) { return ops::conv2d(x0, t, c.stride, c.pad, c.dilation, c.groups); },
                           wv, c.w),
              1e-5);
}

TEST(Pool, MaxAvgAdaptiveOnKnownValues) {
  // x = 0..15 as a 4x4 plane.
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = i;
  Tensor x = make(v, {1, 1, 4, 4});
  expect_near(values(ops::max_pool2d(x, {2, 2}, {2, 2})), {5, 7, 13, 15}, 0);
  auto mi = ops::max_pool2d_with_indices(x, {2, 2}, {2, 2});
  expect_near(values(mi[1]), {5, 7, 13, 15}, 0);
  EXPECT_EQ(mi[1].dtype(), DType::Int64);
  expect_near(values(ops::avg_pool2d(x, {2, 2}, {2, 2})), {2.5, 4.5, 10.5, 12.5}, 1e-6);
  // 3x3 windows, stride 2, pad 1: the top-left window holds {0, 1, 4, 5} → 10/9 with padding counted, 10/4 without.
  expect_near({values(ops::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, true))[0]}, {10.0 / 9}, 1e-6);
  expect_near({values(ops::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, false))[0]}, {2.5}, 1e-6);
  // Adaptive 4 → 3 bins: [0, 2), [1, 3), [2, 4).
  Tensor a = ops::adaptive_avg_pool2d(x, {1, 3});
  expect_near(values(a), {(0 + 1 + 4 + 5 + 8 + 9 + 12 + 13) / 8.0, (1 + 2 + 5 + 6 + 9 + 10 + 13 + 14) / 8.0,
                          (2 + 3 + 6 + 7 + 10 + 11 + 14 + 15) / 8.0},
              1e-5);
  // The max-pool gradient goes to the argmax.
  GradScope scope;
  Tensor xw = scope.watch_input(make(v, {1, 1, 4, 4}, DType::Float64));
  auto g = gradient({ops::sum(ops::max_pool2d(xw, {2, 2}, {2, 2}))}, {}, {xw});
  std::vector<double> want(16, 0.0);
  for (int i : {5, 7, 13, 15}) want[size_t(i)] = 1;
  expect_near(values(g[0]), want, 0);
}

TEST(BatchNorm, TrainingStatisticsAndGradient) {
  Shape s{3, 2, 2, 2};
  auto xv = randn(size_t(numel(s)), 6);
  Tensor gamma = make({1.5, -0.5}, {2}, DType::Float64), beta = make({0.1, 0.2}, {2}, DType::Float64);
  Tensor mean = make({0, 0}, {2}, DType::Float64), var = make({1, 1}, {2}, DType::Float64);
  auto out = ops::batch_norm(make(xv, s, DType::Float64), gamma, beta, mean, var, true, 1e-5);
  ASSERT_EQ(out.size(), 3u);
  for (int c = 0; c < 2; ++c) {  // channel c: elements (n, c, :, :)
    double m = 0, q = 0;
    for (int n = 0; n < 3; ++n)
      for (int i = 0; i < 4; ++i) m += xv[size_t((n * 2 + c) * 4 + i)];
    m /= 12;
    for (int n = 0; n < 3; ++n)
      for (int i = 0; i < 4; ++i) q += std::pow(xv[size_t((n * 2 + c) * 4 + i)] - m, 2);
    EXPECT_NEAR(values(out[1])[size_t(c)], m, 1e-12);
    EXPECT_NEAR(values(out[2])[size_t(c)], q / 12, 1e-12);  // biased
  }
  auto f = [&](const Tensor& t) {
    Tensor y = ops::batch_norm(t, gamma, beta, mean, var, true, 1e-5)[0];
    return ops::mul(y, make(randn(size_t(numel(s)), 7), s, DType::Float64));
  };
  GradScope scope;
  Tensor x = scope.watch_input(make(xv, s, DType::Float64));
  Tensor y = f(x);
  auto g = gradient({ops::sum(ops::mul(y, y))}, {}, {x});
  expect_near(values(g[0]), numeric_grad(f, xv, s), 1e-5);
}

TEST(ConvPoolNorm, ErrorsNameTheOp) {
  Tensor x = make(std::vector<double>(75, 1.0), {1, 3, 5, 5});
  expect_error([&] { ops::conv2d(x, make(std::vector<double>(36, 1.0), {4, 1, 3, 3})); }, ErrorKind::Value,
               {"For 'Conv2D'", "x.shape[1] / groups must equal weight.shape[1]"});
  expect_error([&] { ops::conv2d(x, make(std::vector<double>(108, 1.0), {4, 3, 3, 3}, DType::Float64)); },
               ErrorKind::Type, {"For 'Conv2D'", "same dtype"});
  expect_error([&] { ops::max_pool2d(make({1, 2, 3}, {3}), {2, 2}, {1, 1}); }, ErrorKind::Value,
               {"For 'MaxPool'", "4-D"});
  expect_error([&] { ops::avg_pool2d(x, {7, 7}, {1, 1}); }, ErrorKind::Value, {"For 'AvgPool'", "larger than"});
  expect_error([&] { ops::batch_norm(x, make({1, 1}, {2}), make({0, 0}, {2}), make({0, 0}, {2}), make({1, 1}, {2}),
                                     true, 1e-5); },
               ErrorKind::Value, {"For 'BatchNorm'", "(C,) = (3,)"});
  expect_error([&] { ops::group_norm(x, 2, Tensor(), Tensor(), 1e-5); }, ErrorKind::Value,
               {"For 'GroupNorm'", "divisible by num_groups"});
}

}  // namespace
}  // namespace kiln
