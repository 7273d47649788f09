// End to end with the C++ API alone (no Python): fit a linear regression and a small MLP with Philox data,
// autodiff::GradScope + gradient for the gradients and the fused Adam kernel (ops::adam) for the updates, with the
// learning rate and the beta powers fed as 0-d tensors that change every step.
#include <cmath>

#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::make;
using test::values;
constexpr DType F32 = DType::Float32;

Tensor wsc(double v) { return Tensor::scalar(v, F32, true); }

// Adam state of one parameter plus the shared beta powers; step() runs one MindSpore nn.Adam update.
struct AdamState {
  std::vector<Tensor> params, m, v;
  Tensor beta1_power = Tensor::scalar(1.0, F32), beta2_power = Tensor::scalar(1.0, F32);
  Tensor lr = Tensor::scalar(0.0, F32);
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  explicit AdamState(std::vector<Tensor> ps) : params(std::move(ps)) {
    for (auto& p : params) { m.push_back(ops::zeros_like(p)); v.push_back(ops::zeros_like(p)); }
  }
  void step(const std::vector<Tensor>& grads, double lr_now) {
    ops::assign(lr, wsc(lr_now));
    ops::assign(beta1_power, ops::mul(beta1_power, wsc(beta1)));
    ops::assign(beta2_power, ops::mul(beta2_power, wsc(beta2)));
    for (size_t i = 0; i < params.size(); ++i)
      ops::adam(params[i], m[i], v[i], beta1_power, beta2_power, lr, beta1, beta2, eps, grads[i], false);
  }
};

// Runs `steps` training steps of loss_fn(params) and returns (first loss, last loss).
template <typename LossFn>
std::pair<double, double> train(AdamState& opt, LossFn loss_fn, int steps, double lr0, double decay) {
  double first = 0, last = 0;
  for (int t = 0; t < steps; ++t) {
    std::vector<Tensor> grads;
    {
      autodiff::GradScope scope;
      for (auto& p : opt.params) scope.watch(p);
      Tensor loss = loss_fn();
      last = loss.item();
      if (t == 0) first = last;
      grads = autodiff::gradient({loss}, {}, opt.params);
    }
    opt.step(grads, lr0 * std::pow(decay, t));
  }
  return {first, last};
}

TEST(Regression, LinearFitRecoversWeights) {
  const std::vector<double> w_true{1.5, -2.0, 0.5, 3.0};
  const double b_true = 0.7;
  Tensor X = ops::standard_normal({256, 4}, F32, 1234, 0);
  Tensor noise = ops::mul(ops::standard_normal({256, 1}, F32, 1234, 1), wsc(0.01));
  Tensor y = ops::add(ops::add(ops::matmul(X, make(w_true, {4, 1})), wsc(b_true)), noise);

  Tensor W = ops::zeros({4, 1}), b = ops::zeros({1});
  AdamState opt({W, b});
  auto loss_fn = [&] { return ops::mean(ops::square(ops::sub(ops::add(ops::matmul(X, W), b), y))); };
  auto [first, last] = train(opt, loss_fn, 300, 0.1, 0.99);

  EXPECT_GT(first, 5.0);   // ≈ |w|² + b² = 15.0 at W = 0
  EXPECT_LT(last, 1e-3);   // noise variance is 1e-4
  test::expect_near(values(W), w_true, 0.02);
  EXPECT_NEAR(values(b)[0], b_true, 0.02);
  // The parameters were updated in place: same tensors, no autodiff history left on them.
  EXPECT_EQ(opt.params[0].impl(), W.impl());
  EXPECT_EQ(W.impl()->grad_fn, nullptr);
  EXPECT_NEAR(opt.beta1_power.item(), std::pow(0.9, 300), 1e-6);
}

TEST(Regression, MlpFitsNonlinearTarget) {
  // y = relu(x0) − 0.5·relu(−x1) + 0.2, fitted by a 2-16-1 ReLU network.
  Tensor X = ops::standard_normal({256, 2}, F32, 99, 0);
  Tensor x0 = ops::matmul(X, make({1, 0}, {2, 1})), x1 = ops::matmul(X, make({0, 1}, {2, 1}));
  Tensor y = ops::add(ops::sub(ops::relu(x0), ops::mul(ops::relu(ops::neg(x1)), wsc(0.5))), wsc(0.2));

  Tensor W1 = ops::mul(ops::standard_normal({2, 16}, F32, 7, 0), wsc(0.7));
  Tensor b1 = ops::zeros({16});
  Tensor W2 = ops::mul(ops::standard_normal({16, 1}, F32, 7, 1), wsc(0.25));
  Tensor b2 = ops::zeros({1});
  AdamState opt({W1, b1, W2, b2});
  auto loss_fn = [&] {
    Tensor h = ops::relu(ops::add(ops::matmul(X, W1), b1));
    Tensor out = ops::add(ops::matmul(h, W2), b2);
    return ops::mean(ops::square(ops::sub(out, y)));
  };
  auto [first, last] = train(opt, loss_fn, 400, 0.02, 0.995);
  EXPECT_LT(last, 0.1 * first);
  EXPECT_LT(last, 0.01);
}

}  // namespace
}  // namespace kiln
