// Eager-tape autodiff from C++: gradients of small expressions against analytic values, broadcasting, gradients of
// gradients through nested GradScopes, leaves the output does not depend on, and what is (not) recorded.
#include <cmath>

#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using autodiff::gradient;
using autodiff::GradScope;
using test::expect_near;
using test::make;
using test::values;

Tensor sc(double v) { return Tensor::scalar(v, DType::Float64, true); }

TEST(Autodiff, ProductAndExp) {
  // f(x, y) = sum(x·y + exp(x)): df/dx = y + exp(x), df/dy = x.
  std::vector<double> xv{0.5, -1.0, 2.0}, yv{3.0, 0.25, -2.0};
  GradScope s;
  Tensor x = s.watch_input(make(xv, {3}, DType::Float64));
  Tensor y = s.watch_input(make(yv, {3}, DType::Float64));
  Tensor f = ops::sum(ops::add(ops::mul(x, y), ops::exp(x)));
  auto g = gradient({f}, {}, {x, y});
  ASSERT_EQ(g.size(), 2u);
  std::vector<double> gx(3);
  for (int i = 0; i < 3; ++i) gx[size_t(i)] = yv[size_t(i)] + std::exp(xv[size_t(i)]);
  expect_near(values(g[0]), gx, 1e-12);
  expect_near(values(g[1]), xv, 1e-12);
  EXPECT_EQ(g[0].shape(), (Shape{3}));
  EXPECT_EQ(g[0].dtype(), DType::Float64);
}

TEST(Autodiff, QuotientLogAndSens) {
  // f = log(x) / y with an explicit sens s: df/dx = s/(x·y), df/dy = -s·log(x)/y².
  std::vector<double> xv{1.5, 4.0}, yv{2.0, -0.5}, sv{1.0, 3.0};
  GradScope s;
  Tensor x = s.watch_input(make(xv, {2}, DType::Float64));
  Tensor y = s.watch_input(make(yv, {2}, DType::Float64));
  Tensor f = ops::div(ops::log(x), y);
  auto g = gradient({f}, {make(sv, {2}, DType::Float64)}, {x, y});
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(values(g[0])[i], sv[i] / (xv[i] * yv[i]), 1e-12);
    EXPECT_NEAR(values(g[1])[i], -sv[i] * std::log(xv[i]) / (yv[i] * yv[i]), 1e-12);
  }
}

TEST(Autodiff, BroadcastReducesToInputShape) {
  // f = sum((x + b) · w), x: [2, 3], b: [3], w: scalar-like [1, 1]. df/db = column sums of w = 2·w.
  GradScope s;
  Tensor x = s.watch_input(make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64));
  Tensor b = s.watch_input(make({10, 20, 30}, {3}, DType::Float64));
  Tensor w = s.watch_input(make({0.5}, {1, 1}, DType::Float64));
  Tensor f = ops::sum(ops::mul(ops::add(x, b), w));
  auto g = gradient({f}, {}, {x, b, w});
  EXPECT_EQ(g[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(g[1].shape(), (Shape{3}));
  EXPECT_EQ(g[2].shape(), (Shape{1, 1}));
  expect_near(values(g[0]), std::vector<double>(6, 0.5), 1e-12);
  expect_near(values(g[1]), {1.0, 1.0, 1.0}, 1e-12);
  expect_near(values(g[2]), {21.0 + 120.0}, 1e-12);  // sum(x + b) = 21 + 2·60
}

TEST(Autodiff, MatmulMeanSquare) {
  // L = mean((A·w − t)²), dL/dw = 2/n · Aᵀ(A·w − t).
  std::vector<double> A{1, 2, 3, 4, 5, 6}, w0{0.5, -1.0}, t{1, 0, 2};
  GradScope s;
  Tensor w = s.watch_input(make(w0, {2, 1}, DType::Float64));
  Tensor a = make(A, {3, 2}, DType::Float64);
  Tensor L = ops::mean(ops::square(ops::sub(ops::matmul(a, w), make(t, {3, 1}, DType::Float64))));
  auto g = gradient({L}, {}, {w});
  std::vector<double> r(3), want(2, 0.0);
  for (int i = 0; i < 3; ++i) r[size_t(i)] = A[size_t(2 * i)] * w0[0] + A[size_t(2 * i + 1)] * w0[1] - t[size_t(i)];
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) want[size_t(j)] += 2.0 / 3.0 * A[size_t(2 * i + j)] * r[size_t(i)];
  expect_near(values(g[0]), want, 1e-12);
}

TEST(Autodiff, TanhSigmoidChain) {
  // f = sum(tanh(sigmoid(x)·2)): df/dx = (1 − tanh²(2σ))·2·σ(1 − σ).
  std::vector<double> xv{-2.0, 0.0, 0.7};
  GradScope s;
  Tensor x = s.watch_input(make(xv, {3}, DType::Float64));
  Tensor f = ops::sum(ops::tanh(ops::mul(ops::sigmoid(x), sc(2.0))));
  auto g = gradient({f}, {}, {x});
  for (size_t i = 0; i < 3; ++i) {
    double sg = 1 / (1 + std::exp(-xv[i])), th = std::tanh(2 * sg);
    EXPECT_NEAR(values(g[0])[i], (1 - th * th) * 2 * sg * (1 - sg), 1e-12);
  }
}

TEST(Autodiff, GradOfGradCube) {
  // d/dx x³ = 3x², d²/dx² = 6x: the inner gradient is recorded under the outer scope.
  std::vector<double> xv{-1.5, 0.5, 2.0};
  GradScope outer;
  Tensor x = outer.watch_input(make(xv, {3}, DType::Float64));
  Tensor dy;
  {
    GradScope inner;
    Tensor xi = inner.watch_input(x);
    Tensor y = ops::sum(ops::mul(ops::mul(xi, xi), xi));
    dy = gradient({y}, {}, {xi})[0];
  }
  std::vector<double> want1(3), want2(3);
  for (size_t i = 0; i < 3; ++i) { want1[i] = 3 * xv[i] * xv[i]; want2[i] = 6 * xv[i]; }
  expect_near(values(dy), want1, 1e-12);
  auto d2 = gradient({ops::sum(dy)}, {}, {x});
  expect_near(values(d2[0]), want2, 1e-12);
}

TEST(Autodiff, ThirdDerivativeOfPolynomial) {
  // f = x⁴ + 2x²: f' = 4x³ + 4x, f'' = 12x² + 4, f''' = 24x (three nested scopes; bprops of mul/add use inputs only).
  const double x0 = 0.7;
  GradScope s1;
  Tensor x = s1.watch_input(make({x0}, {1}, DType::Float64));
  Tensor d1, d2;
  {
    GradScope s2;
    Tensor x2 = s2.watch_input(x);
    {
      GradScope s3;
      Tensor x3 = s3.watch_input(x2);
      Tensor sq = ops::mul(x3, x3);
      d1 = gradient({ops::add(ops::mul(sq, sq), ops::mul(sq, sc(2.0)))}, {}, {x3})[0];
    }
    d2 = gradient({d1}, {}, {x2})[0];
  }
  Tensor d3 = gradient({d2}, {}, {x})[0];
  EXPECT_NEAR(values(d1)[0], 4 * x0 * x0 * x0 + 4 * x0, 1e-12);
  EXPECT_NEAR(values(d2)[0], 12 * x0 * x0 + 4, 1e-12);
  EXPECT_NEAR(values(d3)[0], 24 * x0, 1e-12);
}

// Disabled because of a known bug in the tape (src/autodiff/tape.cpp): a Node keeps its outputs as aliases WITHOUT
// history, so a bprop that uses the op's output (exp, sqrt, rsqrt, sigmoid, tanh, relu) differentiates to zero
// through it under an outer transform: d²/dx² exp(x) comes out 0 instead of exp(x). Enable once fixed.
TEST(Autodiff, SecondDerivativeThroughSavedOutput) {
  const double x0 = 0.3;
  GradScope outer;
  Tensor x = outer.watch_input(make({x0}, {1}, DType::Float64));
  Tensor d1e, d1t;
  {
    GradScope inner;
    Tensor xi = inner.watch_input(x);
    d1e = gradient({ops::exp(xi)}, {}, {xi})[0];
    d1t = gradient({ops::tanh(xi)}, {}, {xi})[0];
  }
  EXPECT_NEAR(values(gradient({d1e}, {}, {x})[0])[0], std::exp(x0), 1e-12);
  const double t = std::tanh(x0);
  EXPECT_NEAR(values(gradient({d1t}, {}, {x})[0])[0], -2 * t * (1 - t * t), 1e-12);
}

TEST(Autodiff, UnusedLeafGetsZeros) {
  GradScope s;
  Tensor x = s.watch_input(make({1, 2}, {2}, DType::Float64));
  Tensor z = s.watch_input(make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32));
  Tensor f = ops::sum(ops::square(x));
  auto g = gradient({f}, {}, {x, z});
  expect_near(values(g[0]), {2, 4}, 1e-12);
  EXPECT_EQ(g[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(g[1].dtype(), DType::Float32);
  expect_near(values(g[1]), std::vector<double>(6, 0.0), 0);
}

TEST(Autodiff, SameLeafUsedTwiceAccumulates) {
  // f = sum(x·x + 3x): df/dx = 2x + 3.
  GradScope s;
  Tensor x = s.watch_input(make({1, -2}, {2}, DType::Float64));
  Tensor f = ops::sum(ops::add(ops::mul(x, x), ops::mul(x, sc(3.0))));
  expect_near(values(gradient({f}, {}, {x})[0]), {5, -1}, 1e-12);
}

TEST(Autodiff, StopGradientAndDepend) {
  GradScope s;
  Tensor x = s.watch_input(make({2, 3}, {2}, DType::Float64));
  Tensor e = s.watch_input(make({7}, {1}, DType::Float64));
  // f = sum(x · stop_gradient(x)) → df/dx = x (only the first factor); depend passes the gradient to x only.
  Tensor f = ops::sum(ops::mul(ops::depend(x, e), ops::stop_gradient(x)));
  auto g = gradient({f}, {}, {x, e});
  expect_near(values(g[0]), {2, 3}, 1e-12);
  expect_near(values(g[1]), {0}, 0);
}

TEST(Autodiff, NothingRecordedOutsideAScope) {
  Tensor x = make({1, 2}, {2});
  Tensor y = ops::exp(x);
  EXPECT_EQ(y.impl()->grad_fn, nullptr);
  EXPECT_EQ(autodiff::grad_level(), 0);
  {
    GradScope s;
    EXPECT_EQ(autodiff::grad_level(), 1);
    Tensor u = ops::exp(x);  // x not watched: not recorded
    EXPECT_EQ(u.impl()->grad_fn, nullptr);
    Tensor w = s.watch(x);
    EXPECT_NE(ops::exp(w).impl()->grad_fn, nullptr);
  }
  EXPECT_EQ(x.impl()->watch_count, 0);
}

TEST(Autodiff, InPlaceStateOpsAreNotRecorded) {
  // A watched Parameter written by assign/adam inside a scope keeps no grad_fn (Note [in-place ops and the tape]).
  Tensor p = make({1, 2, 3}, {3});
  Tensor m = ops::zeros({3}), v = ops::zeros({3});
  GradScope s;
  s.watch(p);
  Tensor r = ops::assign(p, make({4, 5, 6}, {3}));
  EXPECT_EQ(r.impl(), p.impl());
  EXPECT_EQ(p.impl()->grad_fn, nullptr);
  ops::adam(p, m, v, Tensor::scalar(0.9, DType::Float32), Tensor::scalar(0.999, DType::Float32),
            Tensor::scalar(0.1, DType::Float32), 0.9, 0.999, 1e-8, make({1, 1, 1}, {3}), false);
  EXPECT_EQ(p.impl()->grad_fn, nullptr);
  // The parameter is still a leaf that gradients reach.
  Tensor f = ops::sum(ops::mul(p, p));
  auto g = gradient({f}, {}, {p});
  auto pv = values(p);
  expect_near(values(g[0]), {2 * pv[0], 2 * pv[1], 2 * pv[2]}, 1e-5);
}

TEST(Autodiff, Errors) {
  Tensor x = make({1}, {1});
  test::expect_error([&] { gradient({x}, {}, {x}); }, ErrorKind::Runtime, {"GradScope"});
  GradScope s;
  Tensor w = s.watch_input(x);
  Tensor y = ops::mul(w, w);
  test::expect_error([&] { gradient({y}, {make({1, 2}, {2})}, {w}); }, ErrorKind::Value, {"[2]", "[1]"});
}

}  // namespace
}  // namespace kiln
