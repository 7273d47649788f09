// The in-place state ops: assign (broadcast, cast, strided targets, overlap), depend, and the fused optimizer
// kernels Adam / ApplyMomentum / SGD against a scalar reference of MindSpore's formulas (reference §5.2–5.3).
#include <cmath>

#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::expect_error;
using test::expect_near;
using test::make;
using test::values;
constexpr DType F32 = DType::Float32, F64 = DType::Float64;

Tensor s32(double v) { return Tensor::scalar(v, F32); }
Tensor s64(double v) { return Tensor::scalar(v, F64); }

// ---------------------------------------------------------------- assign

TEST(Assign, SameShapeReturnsVariable) {
  Tensor var = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor r = ops::assign(var, make({6, 5, 4, 3, 2, 1}, {2, 3}));
  EXPECT_EQ(r.impl(), var.impl());
  EXPECT_EQ(values(var), (std::vector<double>{6, 5, 4, 3, 2, 1}));
}

TEST(Assign, BroadcastsAndCasts) {
  Tensor var = make({0, 0, 0, 0, 0, 0}, {2, 3});
  ops::assign(var, make({1, 2, 3}, {3}, DType::Int64));  // row broadcast, int64 → float32
  EXPECT_EQ(values(var), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  ops::assign(var, make({7, 8}, {2, 1}, F64));           // column broadcast
  EXPECT_EQ(values(var), (std::vector<double>{7, 7, 7, 8, 8, 8}));
  ops::assign(var, Tensor::scalar(2.5, F32, true));      // weak Python scalar
  EXPECT_EQ(values(var), std::vector<double>(6, 2.5));
  EXPECT_EQ(var.dtype(), F32);
  Tensor ivar = make({0, 0}, {2}, DType::Int32);
  ops::assign(ivar, make({2.7, -2.7}, {2}));             // float → int truncates toward zero
  EXPECT_EQ(values(ivar), (std::vector<double>{2, -2}));
  Tensor hvar = make({0, 0}, {2}, DType::Float16);
  ops::assign(hvar, make({1.0 + 1.0 / 4096, 3}, {2}, F64));
  EXPECT_EQ(values(hvar), (std::vector<double>{1.0, 3.0}));  // rounded to float16
}

TEST(Assign, WritesThroughStridedView) {
  Tensor base = make({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor col = base.view({2}, {3}, 1);                  // base[:, 1]
  ops::assign(col, make({-1, -2}, {2}));
  EXPECT_EQ(values(base), (std::vector<double>{0, -1, 2, 3, -2, 5}));
  Tensor tt = base.view({3, 2}, {1, 3}, 0);             // base.T
  ops::assign(tt, make({10, 20, 30, 40, 50, 60}, {3, 2}));
  EXPECT_EQ(values(base), (std::vector<double>{10, 30, 50, 20, 40, 60}));
}

TEST(Assign, OverlappingSourceIsReadFirst) {
  Tensor x = make({0, 1, 2, 3, 4}, {5});
  ops::assign(x, x.view({5}, {-1}, 4));                 // x[::-1]
  EXPECT_EQ(values(x), (std::vector<double>{4, 3, 2, 1, 0}));
  Tensor y = make({0, 1, 2, 3, 4}, {5});
  ops::assign(y.view({4}, {1}, 1), y.view({4}, {1}, 0));  // y[1:] = y[:-1]
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 1, 2, 3}));
  ops::assign(y, y);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 1, 2, 3}));
}

TEST(Assign, Errors) {
  Tensor var = make({0, 0, 0, 0, 0, 0}, {2, 3});
  expect_error([&] { ops::assign(var, make({1, 2}, {2})); }, ErrorKind::Value, {"'Assign'", "[2]", "[2, 3]"});
  expect_error([&] { ops::assign(var, make({1, 2, 3, 4, 5, 6}, {1, 2, 3})); }, ErrorKind::Value,
               {"'Assign'", "[1, 2, 3]", "[2, 3]"});
  expect_error([&] { ops::assign(var, Tensor()); }, ErrorKind::Value, {"'Assign'"});
  EXPECT_EQ(values(var), std::vector<double>(6, 0.0));  // untouched
}

TEST(Depend, ReturnsAliasOfValue) {
  Tensor v = make({1, 2}, {2}), e = make({3}, {1});
  Tensor r = ops::depend(v, e);
  EXPECT_NE(r.impl(), v.impl());
  EXPECT_EQ(r.impl()->storage, v.impl()->storage);
  EXPECT_EQ(values(r), values(v));
}

// ---------------------------------------------------------------- Adam

struct AdamRef {
  std::vector<double> p, m, v;
  double b1p = 1, b2p = 1;
  void step(const std::vector<double>& g, double lr, double b1, double b2, double eps, bool nesterov) {
    b1p *= b1;
    b2p *= b2;
    double a = lr * std::sqrt(1 - b2p) / (1 - b1p);
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      double num = nesterov ? b1 * m[i] + (1 - b1) * g[i] : m[i];
      p[i] -= a * num / (std::sqrt(v[i]) + eps);
    }
  }
};

void run_adam(DType dt, bool nesterov, double tol) {
  const std::vector<double> p0{1.0, -2.0, 0.5, 0.0, 3.0, -0.25};
  const std::vector<std::vector<double>> gs{{0.1, -0.2, 0.3, 0.0, 1.0, -4.0}, {-0.5, 0.4, 0.0, 2.0, 1.0, 0.5}};
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  AdamRef ref{p0, std::vector<double>(6, 0), std::vector<double>(6, 0)};
  Tensor p = make(p0, {2, 3}, dt), m = ops::zeros({2, 3}, dt), v = ops::zeros({2, 3}, dt);
  for (auto& g : gs) {
    ref.step(g, lr, b1, b2, eps, nesterov);
    // lr and the beta powers in float64 (the kernel reads them as double), so float64 agrees to rounding.
    ops::adam(p, m, v, s64(ref.b1p), s64(ref.b2p), s64(lr), b1, b2, eps, make(g, {2, 3}, dt), nesterov);
  }
  expect_near(values(p), ref.p, tol);
  expect_near(values(m), ref.m, tol);
  expect_near(values(v), ref.v, tol);
}

TEST(Adam, TwoStepsFloat64) { run_adam(F64, false, 1e-13); }
TEST(Adam, TwoStepsFloat32) { run_adam(F32, false, 1e-6); }
TEST(Adam, TwoStepsNesterov) { run_adam(F64, true, 1e-13); }
TEST(Adam, TwoStepsFloat16) { run_adam(DType::Float16, false, 4e-3); }
TEST(Adam, TwoStepsBFloat16) { run_adam(DType::BFloat16, true, 2e-2); }

TEST(Adam, FirstStepByHand) {
  // Step 1 with g = 0.5: m = 0.05, v = 0.00025, α = 0.1·√0.001/0.1 = √0.001; p -= α·0.05/(√0.00025 + 0)
  Tensor p = make({1.0}, {1}, F64), m = ops::zeros({1}, F64), v = ops::zeros({1}, F64);
  ops::adam(p, m, v, Tensor::scalar(0.9, F64), Tensor::scalar(0.999, F64), Tensor::scalar(0.1, F64), 0.9, 0.999, 0.0,
            make({0.5}, {1}, F64), false);
  EXPECT_NEAR(values(m)[0], 0.05, 1e-15);
  EXPECT_NEAR(values(v)[0], 0.00025, 1e-15);
  EXPECT_NEAR(values(p)[0], 1.0 - std::sqrt(0.001) * 0.05 / std::sqrt(0.00025), 1e-12);  // = 1 − 0.1
}

TEST(Adam, StridedStateAndGradOfOtherDType) {
  // Parameters that are non-contiguous views, and a float32 gradient for a float64 parameter.
  Tensor pbase = make({1, 9, 2, 9, 3, 9}, {6}, F64);
  Tensor p = pbase.view({3}, {2}, 0);
  Tensor m = ops::zeros({3}, F64), v = ops::zeros({3}, F64);
  AdamRef ref{{1, 2, 3}, {0, 0, 0}, {0, 0, 0}};
  ref.step({0.5, -0.5, 1.0}, 0.1, 0.9, 0.999, 1e-8, false);
  ops::adam(p, m, v, s32(ref.b1p), s32(ref.b2p), s32(0.1), 0.9, 0.999, 1e-8, make({0.5, -0.5, 1.0}, {3}), false);
  expect_near(values(p), ref.p, 1e-6);
  EXPECT_EQ(values(pbase)[1], 9.0);
  EXPECT_EQ(values(pbase)[3], 9.0);
}

TEST(Adam, Errors) {
  Tensor p = ops::zeros({2, 3}), m = ops::zeros({2, 3}), v = ops::zeros({2, 3});
  Tensor one = s32(0.9);
  auto run = [&](const Tensor& pp, const Tensor& mm, const Tensor& vv, const Tensor& lr, const Tensor& g) {
    ops::adam(pp, mm, vv, one, one, lr, 0.9, 0.999, 1e-8, g, false);
  };
  expect_error([&] { run(p, m, v, s32(0.1), ops::zeros({3, 2})); }, ErrorKind::Value, {"'Adam'", "[3, 2]", "[2, 3]"});
  expect_error([&] { run(p, ops::zeros({6}), v, s32(0.1), ops::zeros({2, 3})); }, ErrorKind::Value, {"'Adam'", "'m'"});
  expect_error([&] { run(p, m, ops::zeros({2, 3}, F64), s32(0.1), ops::zeros({2, 3})); }, ErrorKind::Type,
               {"'Adam'", "'v'", "Float64"});
  expect_error([&] { run(p, m, v, ops::zeros({2}), ops::zeros({2, 3})); }, ErrorKind::Value, {"'Adam'", "'lr'", "[2]"});
  expect_error([&] { run(ops::zeros({2, 3}, DType::Int32), ops::zeros({2, 3}, DType::Int32), ops::zeros({2, 3}, DType::Int32),
                         s32(0.1), ops::zeros({2, 3})); }, ErrorKind::Type, {"'Adam'", "Int32"});
  expect_error([&] { run(p, p, v, s32(0.1), ops::zeros({2, 3})); }, ErrorKind::Value, {"'Adam'", "share storage"});
  expect_error([&] { ops::adam(p, m, v, s32(1.0), one, s32(0.1), 0.9, 0.999, 1e-8, ops::zeros({2, 3}), false); },
               ErrorKind::Value, {"'Adam'", "beta1_power"});
  EXPECT_EQ(values(p), std::vector<double>(6, 0.0));
}

// ---------------------------------------------------------------- ApplyMomentum

TEST(ApplyMomentum, ThreeStepsPlainAndNesterov) {
  for (bool nesterov : {false, true}) {
    for (DType dt : {F32, F64}) {
      std::vector<double> p{1.0, -1.0, 2.0}, acc{0, 0, 0};
      const std::vector<std::vector<double>> gs{{0.5, 0.1, -1.0}, {0.2, -0.3, 0.0}, {-1.0, 2.0, 0.5}};
      const double lr = 0.1, mu = 0.9;
      Tensor tp = make(p, {3}, dt), ta = ops::zeros({3}, dt);
      for (auto& g : gs) {
        for (size_t i = 0; i < 3; ++i) {
          acc[i] = mu * acc[i] + g[i];
          p[i] -= nesterov ? lr * (g[i] + mu * acc[i]) : lr * acc[i];
        }
        ops::apply_momentum(tp, ta, s32(lr), make(g, {3}, dt), mu, nesterov);
      }
      expect_near(values(tp), p, 1e-6);
      expect_near(values(ta), acc, 1e-6);
    }
  }
}

TEST(ApplyMomentum, Errors) {
  Tensor p = ops::zeros({3}), a = ops::zeros({3});
  expect_error([&] { ops::apply_momentum(p, a, s32(0.1), ops::zeros({4}), 0.9, false); }, ErrorKind::Value,
               {"'ApplyMomentum'", "[4]", "[3]"});
  expect_error([&] { ops::apply_momentum(p, ops::zeros({1}), s32(0.1), ops::zeros({3}), 0.9, false); },
               ErrorKind::Value, {"'ApplyMomentum'", "accumulation"});
}

// ---------------------------------------------------------------- SGD

struct SgdRef {
  std::vector<double> p, acc;
  std::vector<bool> first;
  void step(const std::vector<double>& grad, double lr, double mu, double damp, double wd, bool nesterov) {
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grad[i] + wd * p[i];
      if (mu > 0) {
        acc[i] = first[i] ? g : mu * acc[i] + (1 - damp) * g;
        first[i] = false;
        g = nesterov ? g + mu * acc[i] : acc[i];
      }
      p[i] -= lr * g;
    }
  }
};

void run_sgd(double mu, double damp, double wd, bool nesterov, bool per_element_stat) {
  SgdRef ref{{1.0, -2.0, 0.5, 3.0}, {0, 0, 0, 0}, std::vector<bool>(4, true)};
  const std::vector<std::vector<double>> gs{{0.1, 0.2, -0.3, 0.0}, {1.0, -1.0, 0.5, 0.25}, {0.0, 0.3, 0.3, -2.0}};
  const double lr = 0.05;
  Tensor p = make(ref.p, {2, 2}, F64), acc = ops::zeros({2, 2}, F64);
  Tensor stat = per_element_stat ? ops::ones({2, 2}, F64) : ops::ones({1}, F32);
  for (auto& g : gs) {
    ref.step(g, lr, mu, damp, wd, nesterov);
    ops::sgd(p, make(g, {2, 2}, F64), Tensor::scalar(lr, F64), acc, stat, mu, damp, wd, nesterov);
    if (mu > 0) {
      EXPECT_EQ(values(stat), std::vector<double>(size_t(stat.numel()), 0.0));
    }
  }
  expect_near(values(p), ref.p, 1e-9);
  if (mu > 0) expect_near(values(acc), ref.acc, 1e-9);
}

TEST(SGD, Plain) { run_sgd(0.0, 0.0, 0.0, false, false); }
TEST(SGD, WeightDecay) { run_sgd(0.0, 0.0, 0.1, false, false); }
TEST(SGD, Momentum) { run_sgd(0.9, 0.0, 0.0, false, false); }
TEST(SGD, MomentumDampeningDecay) { run_sgd(0.9, 0.3, 0.01, false, false); }
TEST(SGD, Nesterov) { run_sgd(0.8, 0.0, 0.05, true, false); }
TEST(SGD, PerElementStatLikeMindSpore) { run_sgd(0.9, 0.2, 0.01, false, true); }

TEST(SGD, MixedPerElementStat) {
  // Elements whose flag is set take accum = g (and clear the flag); the others take the momentum update.
  Tensor p = make({1, 1, 1, 1}, {4}, F64), acc = make({0.5, 0.5, 0.5, 0.5}, {4}, F64);
  Tensor stat = make({1, 0, 1, 0}, {4}, F64);
  ops::sgd(p, make({2, 2, 2, 2}, {4}, F64), Tensor::scalar(0.1, F64), acc, stat, 0.9, 0.5, 0.0, false);
  expect_near(values(acc), {2, 0.9 * 0.5 + 0.5 * 2, 2, 0.9 * 0.5 + 0.5 * 2}, 1e-15);
  expect_near(values(p), {1 - 0.2, 1 - 0.1 * 1.45, 1 - 0.2, 1 - 0.1 * 1.45}, 1e-15);
  EXPECT_EQ(values(stat), (std::vector<double>{0, 0, 0, 0}));
}

TEST(SGD, Errors) {
  Tensor p = ops::zeros({3}), a = ops::zeros({3}), st = ops::ones({1});
  expect_error([&] { ops::sgd(p, ops::zeros({3}), s32(0.1), a, st, 0.9, 0.5, 0.0, true); }, ErrorKind::Value,
               {"'SGD'", "nesterov", "dampening"});
  expect_error([&] { ops::sgd(p, ops::zeros({2}), s32(0.1), a, st, 0.9, 0.0, 0.0, false); }, ErrorKind::Value,
               {"'SGD'", "[2]", "[3]"});
  expect_error([&] { ops::sgd(p, ops::zeros({3}), s32(0.1), a, ops::ones({2}), 0.9, 0.0, 0.0, false); },
               ErrorKind::Value, {"'SGD'", "'stat'"});
  expect_error([&] { ops::sgd(p, ops::zeros({3}), s32(0.1), a, st, -0.5, 0.0, 0.0, false); }, ErrorKind::Value,
               {"'SGD'", "momentum"});
}

}  // namespace
}  // namespace kiln
