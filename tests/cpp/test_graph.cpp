// Graph passes from C++: algebraic simplification, matmul+bias+activation fusion and elementwise fusion on traced
// graphs. Each test checks the graph before and after (op counts) and that the optimized graph computes what the
// original computes (Executable runs on random inputs); the fused ops' bprops are checked against the unfused ops'
// gradients (and gradients of gradients) on the eager tape.
#include <functional>

#include "kiln/autodiff.h"
#include "kiln/graph.h"
#include "ops/fused.h"  // the fused ops' kernel choice (tests force each path)
#include "test_util.h"

namespace kiln {
namespace {

using graph::Graph;
using test::values;
using TV = std::vector<Tensor>;
using Fn = std::function<TV(const TV&)>;

struct In { Shape shape; DType dtype = DType::Float32; };

std::shared_ptr<Graph> trace(const std::vector<In>& ins, const Fn& f) {
  graph::Trace tr("t");
  TV xs;
  for (auto& i : ins) xs.push_back(tr.input(i.shape, i.dtype));
  return tr.finish(f(xs));
}

TV random_args(const Graph& g, uint64_t seed) {
  TV r;
  for (int v : g.inputs) {
    const TensorMeta& m = g.values[size_t(v)].meta;
    Tensor u = ops::uniform_real(m.shape, DType::Float64, seed, uint64_t(v) << 20);
    r.push_back(ops::cast(ops::sub(ops::mul(u, Tensor::scalar(4.0, DType::Float64)), Tensor::scalar(2.0, DType::Float64)),
                          m.dtype));
  }
  return r;
}

TV run(const Graph& g, const TV& args) { return graph::Executable(std::make_shared<Graph>(g)).run(args); }

// The original and the optimized graph agree (tol 0: bit for bit).
void expect_same_results(const Graph& a, const Graph& b, double tol = 0.0, uint64_t seed = 7) {
  TV args = random_args(a, seed);
  TV ra = run(a, args), rb = run(b, args);
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].shape(), rb[i].shape());
    EXPECT_EQ(ra[i].dtype(), rb[i].dtype());
    std::vector<double> va = values(ra[i]), vb = values(rb[i]);
    for (size_t k = 0; k < va.size(); ++k) {
      if (tol == 0.0) EXPECT_EQ(va[k], vb[k]) << "output " << i << " at " << k;
      else EXPECT_NEAR(va[k], vb[k], tol * (1.0 + std::abs(va[k]))) << "output " << i << " at " << k;
    }
  }
}

Tensor c32(double v) { return Tensor::scalar(v, DType::Float32); }
Tensor weak(double v) { return Tensor::scalar(v, DType::Float64, true); }

// ---- algebraic simplification ----

TEST(GraphSimplify, IdentitiesVanish) {
  auto g = trace({{{4, 3}}}, [](const TV& x) {
    Tensor y = ops::mul(x[0], weak(1.0));                  // x*1
    y = ops::add(weak(0.0), y);                            // 0+x
    y = ops::sub(y, c32(0.0));                             // x-0
    y = ops::div(y, ops::ones({4, 3}));                    // x/1 with a full-shape constant
    y = ops::mul(c32(1.0), y);                             // 1*x
    y = ops::neg(ops::neg(y));                             // neg(neg(x))
    y = ops::reshape(y, {4, 3});                           // same shape
    y = ops::transpose(y, {0, 1});                         // identity perm
    y = ops::broadcast_to(y, {4, 3});                      // same shape
    y = ops::reshape(ops::reshape(y, {12}), {2, 6});       // reshape(reshape)
    return TV{ops::exp(y)};
  });
  Graph o = *g;
  EXPECT_EQ(graph::constant_folding(o), 1);  // ones({4, 3}) is a Fill node until folded
  int n = graph::algebraic_simplification(o);
  o.verify();
  EXPECT_GE(n, 10);
  EXPECT_EQ(o.count(OpId::Mul) + o.count(OpId::Add) + o.count(OpId::Sub) + o.count(OpId::Div), 0) << o.to_text();
  EXPECT_EQ(o.count(OpId::Transpose) + o.count(OpId::BroadcastTo), 0);
  graph::dead_code_elimination(o);
  EXPECT_EQ(o.count(OpId::Neg), 0) << o.to_text();
  EXPECT_EQ(o.count(OpId::Reshape), 1) << o.to_text();  // one reshape [4, 3] → [2, 6]
  EXPECT_EQ(o.nodes.size(), 2u) << o.to_text();
  expect_same_results(*g, o);
}

TEST(GraphSimplify, MulByMinusOneIsNeg) {
  auto g = trace({{{5}}}, [](const TV& x) {
    return TV{ops::exp(ops::mul(ops::mul(x[0], weak(-1.0)), weak(-1.0)))};
  });
  Graph o = *g;
  EXPECT_GE(graph::algebraic_simplification(o), 3);
  graph::dead_code_elimination(o);
  EXPECT_EQ(o.nodes.size(), 1u) << o.to_text();  // x*-1*-1 → neg(neg(x)) → x
  EXPECT_EQ(o.nodes[0].inputs[0], o.inputs[0]);
  expect_same_results(*g, o);
}

TEST(GraphSimplify, KeepsBroadcastingDtypeAndNonIdentities) {
  auto g = trace({{{3}}, {{3}, DType::Int32}}, [](const TV& x) {
    Tensor a = ops::mul(x[0], ops::ones({2, 3}));            // broadcasts to [2, 3]
    Tensor b = ops::add(x[1], weak(0.0));                    // Int32 + 0.0 is Float32
    Tensor c = ops::mul(x[0], c32(2.0));                     // not an identity
    Tensor d = ops::add(x[0], ops::full({3}, 0.5, DType::Float32));
    Tensor e = ops::cast(x[1], DType::Float32);               // a real cast
    Tensor f = ops::transpose(ops::reshape(x[0], {1, 3}), {1, 0});
    return TV{a, b, c, d, e, f};
  });
  Graph o = *g;
  graph::constant_folding(o);
  const size_t before = o.nodes.size();
  EXPECT_EQ(graph::algebraic_simplification(o), 0) << o.to_text();
  EXPECT_EQ(o.nodes.size(), before);
}

TEST(GraphSimplify, CaptureIsNotAConstant) {
  Tensor one = ops::ones({3});  // made before the trace: read by reference at run time
  auto g = trace({{{3}}}, [&](const TV& x) { return TV{ops::mul(x[0], one)}; });
  Graph o = *g;
  EXPECT_EQ(graph::algebraic_simplification(o), 0);
}

TEST(GraphSimplify, OutputsAndManyUses) {
  auto g = trace({{{2, 2}}}, [](const TV& x) {
    Tensor e = ops::exp(x[0]);
    Tensor y = ops::add(e, weak(0.0));
    return TV{y, ops::exp(y), ops::log(ops::abs(y)), y};
  });
  Graph o = *g;
  EXPECT_EQ(graph::algebraic_simplification(o), 1);
  EXPECT_EQ(o.count(OpId::Add), 0);
  EXPECT_EQ(o.outputs[0], o.nodes[0].outputs[0]);  // the Exp
  EXPECT_EQ(o.outputs[3], o.nodes[0].outputs[0]);
  expect_same_results(*g, o);
}

TEST(GraphSimplify, ReturnedCopyOfAnArgumentOrCaptureStays) {
  // x*1 returned must stay a copy: the caller would otherwise get x (or the Parameter p) itself.
  Tensor p = test::make({1, 2}, {2});
  auto g = trace({{{2}}}, [&](const TV& x) {
    return TV{ops::mul(x[0], weak(1.0)), ops::neg(ops::neg(p)), ops::exp(ops::mul(x[0], weak(1.0)))};
  });
  Graph o = *g;
  EXPECT_EQ(graph::algebraic_simplification(o), 1) << o.to_text();  // only the Mul feeding Exp
  EXPECT_EQ(o.count(OpId::Mul), 1);
  EXPECT_EQ(o.count(OpId::Neg), 2);
  expect_same_results(*g, o);
}

TEST(GraphSimplify, NoReadMovedAcrossAWrite) {
  // c = p*1 is a copy of p taken before the Assign: it must keep p's old value.
  Tensor p = test::make({1, 2, 3}, {3});
  auto g = trace({{{3}}}, [&](const TV& x) {
    Tensor c = ops::mul(p, weak(1.0));
    ops::assign(p, ops::add(p, x[0]));
    return TV{ops::sub(c, weak(0.0))};
  });
  Graph o = *g;
  graph::algebraic_simplification(o);
  EXPECT_EQ(o.count(OpId::Mul), 1) << o.to_text();
  EXPECT_EQ(o.count(OpId::Assign), 1);
  TV args{test::make({10, 10, 10}, {3})};
  TV r = run(o, args);
  test::expect_near(values(r[0]), {1, 2, 3}, 0);
  test::expect_near(values(p), {11, 12, 13}, 0);
}

TEST(GraphSimplify, CopyWrittenOrReturnedThroughAViewStays) {
  Tensor p = test::make({1, 2, 3, 4}, {4});
  auto g = trace({{{4}}}, [&](const TV& x) {
    Tensor written = ops::mul(x[0], weak(1.0));              // a view of it is assigned: must stay a copy
    ops::assign(ops::reshape(written, {2, 2}), ops::zeros({2, 2}));
    Tensor returned = ops::cast(ops::add(p, weak(0.0)), DType::Float32);  // returned through a view
    return TV{ops::exp(written), ops::reshape(returned, {2, 2})};
  });
  Graph o = *g;
  EXPECT_EQ(graph::algebraic_simplification(o), 0) << o.to_text();
  Tensor arg = test::make({5, 6, 7, 8}, {4});
  TV r = run(o, {arg});
  test::expect_near(values(r[0]), {1, 1, 1, 1}, 0);
  test::expect_near(values(r[1]), {1, 2, 3, 4}, 0);
  test::expect_near(values(arg), {5, 6, 7, 8}, 0);  // the Assign wrote the copy, not the argument
}

// ---- matmul + bias + activation ----

struct MbaCase { bool ta, tb; int act; bool bias2d; };

Tensor apply_act(const Tensor& z, int act) {
  switch (act) {
    case 1: return ops::relu(z);
    case 2: return ops::sigmoid(z);
    case 3: return ops::tanh(z);
    case 4: return ops::gelu(z, false);
    case 5: return ops::gelu(z, true);
    default: return z;
  }
}

std::shared_ptr<Graph> mba_graph(int64_t M, int64_t K, int64_t N, const MbaCase& c) {
  Shape sa = c.ta ? Shape{K, M} : Shape{M, K}, sb = c.tb ? Shape{N, K} : Shape{K, N};
  Shape sbias = c.bias2d ? Shape{1, N} : Shape{N};
  return trace({{sa}, {sb}, {sbias}}, [&](const TV& x) {
    Tensor z = ops::add(ops::matmul(x[0], x[1], c.ta, c.tb), x[2]);
    return TV{ops::sum(apply_act(z, c.act), {1})};
  });
}

TEST(GraphFuseMatMul, AllActivationsTransposesAndBothKernels) {
  for (int act = 0; act <= 5; ++act) {
    for (int t = 0; t < 4; ++t) {
      MbaCase c{bool(t & 1), bool(t & 2), act, act % 2 == 1};
      for (auto shape : {std::vector<int64_t>{7, 5, 3}, std::vector<int64_t>{70, 40, 90}}) {
        auto g = mba_graph(shape[0], shape[1], shape[2], c);
        Graph o = *g;
        EXPECT_EQ(graph::fuse_matmul_bias_activation(o), act ? 3 : 2);
        o.verify();
        EXPECT_EQ(o.count(OpId::MatMulBiasAct), 1);
        EXPECT_EQ(o.count(OpId::MatMul) + o.count(OpId::Add), 0);
        EXPECT_EQ(o.nodes.size(), 2u) << o.to_text();
        fused::set_matmul_path(fused::MatMulPath::Sgemm);
        expect_same_results(*g, o);  // sgemm + epilogue: bit for bit
        fused::set_matmul_path(fused::MatMulPath::Primitive);
        expect_same_results(*g, o, 1e-5);
        fused::set_matmul_path(fused::MatMulPath::Auto);
        expect_same_results(*g, o, 1e-5);
      }
    }
  }
}

TEST(GraphFuseMatMul, LeavesOtherPatternsAlone) {
  auto g = trace({{{4, 3}}, {{3, 5}}, {{5}}, {{4, 5}}, {{2, 4, 3}}, {{4, 3}, DType::Float64}, {{3, 5}, DType::Float64}},
                 [](const TV& x) {
    Tensor mm = ops::matmul(x[0], x[1]);
    Tensor used_twice = ops::add(mm, x[2]);          // mm also returned below
    Tensor full_bias = ops::add(ops::matmul(x[0], x[1], false, false), x[3]);  // (M, N) "bias"
    Tensor batched = ops::add(ops::matmul(x[4], x[1]), x[2]);                 // 3-D
    Tensor f64 = ops::add(ops::matmul(x[5], x[6]), ops::cast(x[2], DType::Float64));
    return TV{used_twice, mm, full_bias, batched, f64};
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_matmul_bias_activation(o), 0) << o.to_text();
}

TEST(GraphFuseMatMul, ActivationWithManyUsesStaysOutside) {
  auto g = trace({{{6, 4}}, {{4, 3}}, {{3}}}, [](const TV& x) {
    Tensor z = ops::add(ops::matmul(x[0], x[1]), x[2]);
    return TV{ops::relu(z), ops::exp(z)};  // z used twice: only matmul + bias fuse
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_matmul_bias_activation(o), 2);
  EXPECT_EQ(o.count(OpId::MatMulBiasAct), 1);
  EXPECT_EQ(o.count(OpId::Relu), 1);
  expect_same_results(*g, o);
}

TEST(GraphFuseMatMul, NotAcrossASideEffect) {
  Tensor w = test::make({1, 2, 3, 4, 5, 6}, {3, 2});
  auto g = trace({{{2, 3}}, {{2}}}, [&](const TV& x) {
    Tensor mm = ops::matmul(x[0], w);
    ops::assign(w, ops::zeros({3, 2}));
    return TV{ops::add(mm, x[1])};
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_matmul_bias_activation(o), 0);
}

// ---- elementwise ----

TEST(GraphFuseElementwise, ChainAndTree) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    auto g = trace({{{33, 40}, dt}, {{33, 40}, dt}, {{}, dt}}, [](const TV& x) {
      Tensor a = ops::mul(ops::exp(ops::mul(x[0], weak(0.5))), x[1]);
      Tensor b = ops::sigmoid(ops::sub(x[1], x[2]));
      Tensor c = ops::add(ops::maximum(x[0], ops::neg(b)), ops::minimum(a, b));
      Tensor d = ops::div(ops::add(c, ops::abs(x[0])), ops::sqrt(ops::add(ops::square(x[1]), weak(1.0))));
      Tensor e = ops::sub(ops::tanh(d), ops::relu(ops::log(ops::add(ops::abs(x[0]), weak(0.1)))));
      Tensor f = ops::mul(ops::rsqrt(ops::add(ops::square(e), weak(2.0))), ops::gelu(x[1], false));
      return TV{ops::add(ops::pow(f, weak(2.0)), ops::gelu(x[0], true)), ops::erf(x[1])};
    });
    Graph o = *g;
    int n = graph::fuse_elementwise(o);
    o.verify();
    EXPECT_EQ(n, int(g->nodes.size()) - 1) << o.to_text();  // all but erf (a group of one)
    EXPECT_EQ(o.nodes.size(), 2u) << o.to_text();
    EXPECT_EQ(o.count(OpId::FusedElementwise), 1);
    expect_same_results(*g, o, dt == DType::Float32 ? 0.0 : 0.0);
  }
}

TEST(GraphFuseElementwise, IntermediateUsedOutsideSplitsGroups) {
  auto g = trace({{{8}}, {{8}}}, [](const TV& x) {
    Tensor a = ops::exp(ops::add(x[0], x[1]));  // a is an output and used by two groups
    Tensor b = ops::mul(ops::neg(a), x[1]);
    Tensor c = ops::sub(ops::sqrt(ops::abs(a)), x[0]);
    return TV{a, b, ops::sum(c)};
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_elementwise(o), 7);
  EXPECT_EQ(o.count(OpId::FusedElementwise), 3) << o.to_text();
  expect_same_results(*g, o);
}

TEST(GraphFuseElementwise, LeavesBroadcastsIntsAndHalfAlone) {
  auto g = trace({{{4, 3}}, {{3}}, {{4, 3}, DType::Int32}, {{4, 3}, DType::Float16}}, [](const TV& x) {
    Tensor a = ops::exp(ops::add(x[0], x[1]));        // [3] broadcasts: Add stays out, Exp alone
    Tensor b = ops::neg(ops::add(x[2], x[2]));        // Int32
    Tensor c = ops::exp(ops::mul(x[3], x[3]));        // Float16 (rounding between ops)
    Tensor d = ops::relu(ops::cast(x[2], DType::Float32));
    return TV{a, b, c, d};
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_elementwise(o), 0) << o.to_text();
}

TEST(GraphFuseElementwise, NotAcrossASideEffect) {
  Tensor p = test::make({1, 2, 3}, {3});
  auto g = trace({{{3}}}, [&](const TV& x) {
    Tensor a = ops::mul(p, x[0]);
    ops::assign(p, ops::zeros({3}));
    return TV{ops::exp(ops::neg(a))};
  });
  Graph o = *g;
  EXPECT_EQ(graph::fuse_elementwise(o), 2);  // neg+exp only, after the Assign
  EXPECT_EQ(o.count(OpId::Mul), 1) << o.to_text();
}

// ---- bprops of the fused ops, on the eager tape ----

// Gradients of sum(f(xs)·w) and of its gradient's sum (grad of grad), for the graph's inputs, computed
// eagerly by replaying each graph node through kiln::apply.
TV replay(const Graph& g, const TV& args) {
  std::vector<Tensor> slot(g.values.size());
  for (size_t i = 0; i < args.size(); ++i) slot[size_t(g.inputs[i])] = args[i];
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind == graph::ValueKind::Constant || g.values[v].kind == graph::ValueKind::Capture)
      slot[v] = g.values[v].tensor;
  for (const graph::Node& n : g.nodes) {
    TV in;
    for (int v : n.inputs) in.push_back(slot[size_t(v)]);
    TV out = apply(n.op, in, n.attrs);
    for (size_t k = 0; k < out.size(); ++k) slot[size_t(n.outputs[k])] = out[k];
  }
  TV r;
  for (int v : g.outputs) r.push_back(slot[size_t(v)]);
  return r;
}

std::vector<std::vector<double>> grads2(const Graph& g, const TV& args) {
  autodiff::GradScope outer;
  TV xs;
  for (auto& a : args) xs.push_back(outer.watch_input(a));
  TV g1;
  {
    autodiff::GradScope inner;
    TV ys;
    for (auto& x : xs) ys.push_back(inner.watch_input(x));
    Tensor f = ops::sum(replay(g, ys)[0]);
    g1 = autodiff::gradient({f}, {}, ys);
  }
  std::vector<std::vector<double>> r;
  Tensor s;
  for (auto& t : g1) {
    r.push_back(values(t));
    Tensor q = ops::sum(ops::square(t));
    s = s.defined() ? ops::add(s, q) : q;
  }
  for (auto& t : autodiff::gradient({s}, {}, xs)) r.push_back(values(t));
  return r;
}

void expect_same_grads(const Graph& a, const Graph& b, double tol) {
  TV args = random_args(a, 3);
  auto ga = grads2(a, args), gb = grads2(b, args);
  ASSERT_EQ(ga.size(), gb.size());
  for (size_t i = 0; i < ga.size(); ++i) test::expect_near(gb[i], ga[i], tol);
}

TEST(GraphFusedBprop, FusedElementwiseGradAndGradOfGrad) {
  auto g = trace({{{3, 4}, DType::Float64}, {{3, 4}, DType::Float64}, {{}, DType::Float64}}, [](const TV& x) {
    Tensor a = ops::mul(ops::exp(ops::mul(x[0], weak(0.3))), x[1]);
    Tensor b = ops::div(ops::tanh(a), ops::add(ops::square(x[1]), x[2]));
    Tensor c = ops::maximum(ops::sigmoid(b), ops::mul(x[0], x[0]));
    return TV{ops::sub(ops::gelu(c, true), ops::sqrt(ops::add(ops::abs(x[0]), weak(1.0))))};
  });
  Graph o = *g;
  graph::fuse_elementwise(o);
  ASSERT_EQ(o.nodes.size(), 1u) << o.to_text();
  expect_same_grads(*g, o, 1e-12);
}

TEST(GraphFusedBprop, MatMulBiasActGradAndGradOfGrad) {
  for (int act = 0; act <= 5; ++act) {
    for (int t = 0; t < 4; ++t) {
      MbaCase c{bool(t & 1), bool(t & 2), act, t == 1};
      auto g = mba_graph(5, 4, 3, c);
      Graph o = *g;
      graph::fuse_matmul_bias_activation(o);
      ASSERT_EQ(o.count(OpId::MatMulBiasAct), 1);
      // Float32 operands: compare the fused op's gradients with the unfused graph's.
      fused::set_matmul_path(fused::MatMulPath::Sgemm);
      expect_same_grads(*g, o, 1e-4);
      fused::set_matmul_path(fused::MatMulPath::Auto);
    }
  }
}

TEST(GraphFusedOps, InferRejectsBadInputs) {
  Tensor a = ops::zeros({2, 3}), b = ops::zeros({3, 4});
  Attrs mm{{"transpose_a", false}, {"transpose_b", false}, {"activation", int64_t(0)}};
  test::expect_error([&] { apply(OpId::MatMulBiasAct, {a, b, ops::zeros({3})}, mm); }, ErrorKind::Value,
                     {"MatMulBiasAct", "bias"});
  test::expect_error([&] { apply(OpId::MatMulBiasAct, {a, ops::zeros({4, 4}), ops::zeros({4})}, mm); },
                     ErrorKind::Value, {"MatMulBiasAct", "inner"});
  Attrs ew{{"program", std::vector<int64_t>{0, 0, 1}}, {"dtype", DType::Float32}};
  test::expect_error([&] { apply(OpId::FusedElementwise, {a, ops::zeros({3, 2})}, ew); }, ErrorKind::Value,
                     {"FusedElementwise", "input 1"});
  Attrs bad{{"program", std::vector<int64_t>{0, 0, 5}}, {"dtype", DType::Float32}};
  test::expect_error([&] { apply(OpId::FusedElementwise, {a, a}, bad); }, ErrorKind::Runtime,
                     {"FusedElementwise", "register"});
}

// ---- the pipeline ----

TEST(GraphPipeline, OptimizeKeepsResults) {
  auto g = trace({{{16, 8}}, {{8, 4}}, {{4}}}, [](const TV& x) {
    Tensor h = ops::relu(ops::add(ops::matmul(x[0], x[1]), x[2]));
    Tensor y = ops::mul(ops::add(ops::mul(h, weak(1.0)), weak(0.0)), ops::sigmoid(ops::mul(h, weak(-1.0))));
    Tensor dead = ops::exp(x[0]);
    (void)dead;
    return TV{ops::sum(ops::mul(ops::exp(y), ops::full({16, 4}, 0.5, DType::Float32)))};
  });
  Graph o = *g;
  auto log = graph::optimize(o);
  EXPECT_EQ(log.size(), 8u);
  EXPECT_EQ(o.count(OpId::MatMulBiasAct), 1) << o.to_text();
  EXPECT_EQ(o.count(OpId::FusedElementwise), 1) << o.to_text();
  EXPECT_EQ(o.nodes.size(), 3u) << o.to_text();
  expect_same_results(*g, o, 0.0);
}

// A value check in a compiled graph runs at every run (side-effecting: never folded or removed), and a
// kernel's run-time error names the line that issued the op.
TEST(GraphRun, ValueChecksRunAtRunTimeAndNameTheLine) {
  graph::set_location_provider([] { return std::string("user.py:7"); });
  auto g = trace({{{3}, DType::Int64}}, [](const TV& x) {
    return TV{ops::sum(ops::check_range(x[0], "NLLLoss", "label", 0, 4))};
  });
  graph::set_location_provider(nullptr);
  graph::optimize(*g);
  graph::Executable exe(g);
  EXPECT_EQ(values(exe.run({test::make({0, 3, 1}, {3}, DType::Int64)})[0]), std::vector<double>{4});
  test::expect_error([&] { exe.run({test::make({0, 4, 1}, {3}, DType::Int64)}); }, ErrorKind::Value,
                     {"every label must be in [0, 4)", "got 4 at index (1,)", "at user.py:7"});
}

}  // namespace
}  // namespace kiln

