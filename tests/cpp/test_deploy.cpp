// Deployable model files (kiln/deploy.h), through the C++ library only: a small LeNet-like network (conv, bias,
// inference BatchNorm, ReLU, max pooling, flatten, dense, softmax) traced in C++, optimized, written, read back and
// run gives the eager results (and bit for bit what the optimized graph gives); specs, names and weights survive;
// outputs never alias weights or inputs; run() is thread-safe; bad inputs to run() and every kind of bad file
// (missing, empty, wrong magic/version, every truncation, random corruption, unknown op, weights that do not match,
// trailing bytes) give kiln::Error with a clear message, never a crash; graphs that are not inference graphs
// (state updates, random ops) and bad names are refused by the writer.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include <unistd.h>

#include "core/atomic_write.h"
#include "kiln/allocator.h"
#include "kiln/deploy.h"
#include "kiln/graph_io.h"
#include "test_util.h"

namespace kiln {
namespace {

using deploy::Model;
using test::make;
using test::values;
using TV = std::vector<Tensor>;

// Deterministic values in [-scale, scale).
Tensor det(const Shape& shape, uint64_t seed, double scale = 0.5, double offset = 0.0) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(size_t(numel(shape)));
  for (auto& x : v) x = offset + scale * (double(rng() % 20001) / 10000.0 - 1.0);
  return make(v, shape);
}

struct LeNet {
  Tensor w1 = det({4, 1, 3, 3}, 1), b1 = det({4}, 2, 0.1);
  Tensor gamma = det({4}, 3, 0.25, 1.0), beta = det({4}, 4, 0.2), mean = det({4}, 5, 0.3), var = det({4}, 6, 0.4, 1.0);
  Tensor w2 = det({16, 3}, 7), b2 = det({3}, 8, 0.1);
  std::vector<std::string> names = {"conv1.weight", "conv1.bias", "bn1.gamma", "bn1.beta", "bn1.moving_mean",
                                    "bn1.moving_variance", "fc.weight", "fc.bias"};

  // (N, 1, 8, 8) → logits (N, 3) and their softmax.
  TV forward(const Tensor& x) const {
    int64_t n = x.shape()[0];
    Tensor h = ops::conv2d(x, w1, {1, 1}, {1, 1, 1, 1});
    h = ops::add(h, ops::reshape(b1, {1, 4, 1, 1}));
    h = ops::batch_norm(h, gamma, beta, mean, var, false, 1e-5)[0];
    h = ops::relu(h);
    h = ops::max_pool2d(h, {2, 2}, {2, 2});
    h = ops::max_pool2d(h, {2, 2}, {2, 2});
    Tensor logits = ops::add(ops::matmul(ops::reshape(h, {n, 16}), w2), b2);
    return {logits, ops::softmax(logits, -1)};
  }

  std::shared_ptr<graph::Graph> trace(int64_t n, bool optimize = true) const {
    graph::Trace tr("LeNet");
    Tensor x = tr.input({n, 1, 8, 8}, DType::Float32);
    auto g = tr.finish(forward(x));
    if (optimize) graph::optimize(*g);
    return g;
  }

  // The weights in the graph's capture order (captures are numbered in the order the trace first read them).
  std::vector<std::string> capture_names(const graph::Graph& g) const {
    std::vector<Tensor> ws = {w1, b1, gamma, beta, mean, var, w2, b2};
    std::vector<std::string> r;
    for (int v : graph::capture_ids(g))
      for (size_t k = 0; k < ws.size(); ++k)
        if (g.values[size_t(v)].tensor.impl() == ws[k].impl()) r.push_back(names[k]);
    return r;
  }

  std::string bytes(int64_t n) const {
    auto g = trace(n);
    return deploy::to_bytes(*g, capture_names(*g), {"image"}, {"logits", "probs"});
  }
};

void expect_bitwise(const TV& a, const TV& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape());
    ASSERT_EQ(a[i].dtype(), b[i].dtype());
    Tensor ca = a[i].contiguous(), cb = b[i].contiguous();
    EXPECT_EQ(0, std::memcmp(ca.raw_data(), cb.raw_data(), size_t(ca.numel()) * itemsize(ca.dtype())))
        << "output " << i;
  }
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_test_deploy_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(Deploy, RunsLikeEagerAndTheOptimizedGraph) {
  LeNet net;
  Tensor x = det({2, 1, 8, 8}, 11, 1.0);
  TV want = net.forward(x);
  auto g = net.trace(2);
  TV graph_out = graph::Executable(g).run({x});
  Model m = Model::from_bytes(deploy::to_bytes(*g, net.capture_names(*g)));
  TV got = m.run({x});
  expect_bitwise(got, graph_out);
  ASSERT_EQ(got.size(), 2u);
  test::expect_near(values(got[0]), values(want[0]), 1e-5);
  test::expect_near(values(got[1]), values(want[1]), 1e-6);
  // A second run (planned buffers reused) gives the same, and another input gives its own result.
  expect_bitwise(m.run({x}), got);
  Tensor x2 = det({2, 1, 8, 8}, 12, 1.0);
  test::expect_near(values(m.run({x2})[0]), values(net.forward(x2)[0]), 1e-5);
}

TEST(Deploy, SaveAndLoadKeepNamesSpecsAndWeights) {
  LeNet net;
  auto g = net.trace(3);
  std::string path = temp_path("lenet.kiln");
  deploy::save(path, *g, net.capture_names(*g), {"image"}, {"logits", "probs"});
  Model m = Model::load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(m.name(), "LeNet");
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].name, "image");
  EXPECT_EQ(m.inputs()[0].shape, (Shape{3, 1, 8, 8}));
  EXPECT_EQ(m.inputs()[0].dtype, DType::Float32);
  ASSERT_EQ(m.outputs().size(), 2u);
  EXPECT_EQ(m.outputs()[0].name, "logits");
  EXPECT_EQ(m.outputs()[1].name, "probs");
  EXPECT_EQ(m.outputs()[1].shape, (Shape{3, 3}));
  EXPECT_EQ(m.num_nodes(), g->nodes.size());
  EXPECT_EQ(m.graph_text(), g->to_text());
  std::vector<std::string> wn = m.weight_names();
  EXPECT_EQ(wn, net.capture_names(*g));
  EXPECT_EQ(values(m.weight("fc.weight")), values(net.w2));
  test::expect_error([&] { m.weight("fc.nope"); }, ErrorKind::Value, {"no weight named 'fc.nope'"});
  Tensor x = det({3, 1, 8, 8}, 13, 1.0);
  test::expect_near(values(m.run({x})[1]), values(net.forward(x)[1]), 1e-6);
  // Default names.
  Model d = Model::from_bytes(deploy::to_bytes(*g, net.capture_names(*g)));
  EXPECT_EQ(d.inputs()[0].name, "x0");
  EXPECT_EQ(d.outputs()[1].name, "output1");
}

TEST(Deploy, SaveReplacesWholeAndLeavesNoTemporaryFile) {
  // deploy::save writes through Kiln's atomic writer (core/atomic_write.h; killed-writer tests:
  // tests/python/test_atomic_writes.py): over an existing file, nothing but the file is left, and a dead writer's
  // temporary file is swept while a live one's and a foreign file are kept.
  LeNet net;
  auto g = net.trace(3);
  std::filesystem::path dir = temp_path("save_dir");
  std::filesystem::create_directory(dir);
  std::string path = (dir / "m.kiln").string();
  const std::string& tag = io::temp_host_tag();
  std::string dead = ".m.kiln.kiln-" + tag + "-999999999-0123abcd.tmp";  // above any pid_max: no such process
  std::string live = ".m.kiln.kiln-" + tag + "-" + std::to_string(::getppid()) + "-0123abcd.tmp";
  std::string other = ".m.kiln.x8f2k1.tmp";
  for (const std::string& n : {dead, live, other}) std::ofstream(dir / n) << "partial";
  deploy::save(path, *g, net.capture_names(*g));
  deploy::save(path, *g, net.capture_names(*g));
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"m.kiln", live, other}));
  EXPECT_EQ(Model::load(path).num_nodes(), g->nodes.size());
  std::filesystem::remove_all(dir);
}

TEST(Deploy, ConstantsAndNonContiguousInputs) {
  // A constant made while tracing is stored by value; a transposed (strided) input is accepted.
  graph::Trace tr("affine");
  Tensor x = tr.input({2, 3}, DType::Float32);
  auto g = tr.finish({ops::mul(ops::add(x, make({1, 2, 3}, {3})), Tensor::scalar(2.0, DType::Float64, true))});
  Model m = Model::from_bytes(deploy::to_bytes(*g, {}));
  Tensor base = make({1, 4, 2, 5, 3, 6}, {3, 2});
  Tensor xt = base.view({2, 3}, {1, 2}, 0);  // [[1, 2, 3], [4, 5, 6]], a transposed (strided) view
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_EQ(values(m.run({xt})[0]), (std::vector<double>{4, 8, 12, 10, 14, 18}));
}

TEST(Deploy, OutputsShareNoMemoryWithWeightsInputsOrEachOther) {
  Tensor w = make({1, 2, 3}, {3});
  graph::Trace tr("passthrough");
  Tensor x = tr.input({3}, DType::Float32);
  Tensor y = ops::exp(x);
  auto g = tr.finish({w, x, y, y, ops::reshape(w, {1, 3})});
  Model m = Model::from_bytes(deploy::to_bytes(*g, {"w"}));
  Tensor in = make({0, 0, 0}, {3});
  TV out = m.run({in});
  ASSERT_EQ(out.size(), 5u);
  std::set<const Storage*> storages = {in.impl()->storage.get(), m.weight("w").impl()->storage.get()};
  for (auto& t : out) {
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_TRUE(storages.insert(t.impl()->storage.get()).second);
  }
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{1, 1, 1}));
  out[0].data<float>()[0] = 100;  // writing an output leaves the model's weight alone
  EXPECT_EQ(values(m.run({in})[4]), (std::vector<double>{1, 2, 3}));
}

TEST(Deploy, LoadRunAndDropLeaveNoMemoryBehind) {
  const std::string b = LeNet().bytes(2);
  Tensor x = det({2, 1, 8, 8}, 16, 1.0);
  {  // warm-up: process-wide caches (oneDNN primitives) fill once
    Model m = Model::from_bytes(b);
    m.run({x});
  }
  size_t base = allocator::stats().bytes_in_use;
  for (int i = 0; i < 20; ++i) {
    Model m = Model::from_bytes(b);
    for (int r = 0; r < 3; ++r) m.run({x});
  }
  EXPECT_EQ(allocator::stats().bytes_in_use, base);
}

TEST(Deploy, RunChecksItsInputs) {
  LeNet net;
  Model m = Model::from_bytes(net.bytes(2));
  test::expect_error([&] { m.run({}); }, ErrorKind::Value, {"Model::run", "takes 1 input(s), but 0 were given"});
  test::expect_error([&] { m.run({det({1, 1, 8, 8}, 1)}); }, ErrorKind::Value,
                     {"input 0 ('image') must be Float32[2, 1, 8, 8], but got Float32[1, 1, 8, 8]"});
  test::expect_error([&] { m.run({make(std::vector<double>(128, 0.0), {2, 1, 8, 8}, DType::Float64)}); },
                     ErrorKind::Value, {"must be Float32[2, 1, 8, 8], but got Float64[2, 1, 8, 8]"});
  test::expect_error([&] { m.run({Tensor()}); }, ErrorKind::Value, {"input 0 ('image')", "undefined tensor"});
  // The model still runs after refused calls.
  Tensor x = det({2, 1, 8, 8}, 14, 1.0);
  test::expect_near(values(m.run({x})[0]), values(net.forward(x)[0]), 1e-5);
}

TEST(Deploy, RunIsThreadSafe) {
  LeNet net;
  Model m = Model::from_bytes(net.bytes(2));
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<Tensor> xs;
  std::vector<TV> want;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(det({2, 1, 8, 8}, 100 + uint64_t(t), 1.0));
    want.push_back(m.run({xs.back()}));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Model mine = m;  // copies share the compiled model
      for (int r = 0; r < kRuns; ++r) {
        TV got = mine.run({xs[size_t(t)]});
        for (size_t k = 0; k < got.size(); ++k)
          if (std::memcmp(got[k].raw_data(), want[size_t(t)][k].raw_data(), size_t(got[k].numel()) * 4) != 0)
            ++mismatches[size_t(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
}

TEST(Deploy, WriterRefusesNonInferenceGraphsAndBadNames) {
  Tensor acc = make({0, 0}, {2});
  {
    graph::Trace tr("update");
    Tensor x = tr.input({2}, DType::Float32);
    auto g = tr.finish({ops::assign(acc, ops::add(acc, x))});
    test::expect_error([&] { deploy::to_bytes(*g, {"acc"}); }, ErrorKind::Value,
                       {"to_bytes", "(Assign", "writes its inputs", "inference graph"});
  }
  {
    graph::Trace tr("noise");
    Tensor x = tr.input({2}, DType::Float32);
    auto g = tr.finish({ops::add(x, ops::uniform_real({2}, DType::Float32, 1, 0, 3))});
    test::expect_error([&] { deploy::to_bytes(*g, {}); }, ErrorKind::Value, {"UniformReal", "random numbers"});
  }
  LeNet net;
  auto g = net.trace(1);
  auto names = net.capture_names(*g);
  test::expect_error([&] { deploy::to_bytes(*g, {"a"}); }, ErrorKind::Value, {"8 weights but 1 names"});
  auto dup = names;
  dup[1] = dup[0];
  test::expect_error([&] { deploy::to_bytes(*g, dup); }, ErrorKind::Value, {"'conv1.weight' is given twice"});
  auto empty = names;
  empty[2] = "";
  test::expect_error([&] { deploy::to_bytes(*g, empty); }, ErrorKind::Value, {"weight 2 is empty"});
  test::expect_error([&] { deploy::to_bytes(*g, names, {"a", "b"}); }, ErrorKind::Value, {"1 inputs but 2 names"});
  test::expect_error([&] { deploy::save("/nonexistent-dir/m.kiln", *g, names); }, ErrorKind::Runtime,
                     {"cannot write", "/nonexistent-dir/m.kiln"});
}

TEST(Deploy, MissingOrNonRegularFiles) {
  test::expect_error([] { Model::load("/nonexistent/model.kiln"); }, ErrorKind::Runtime,
                     {"kiln::deploy::load: '/nonexistent/model.kiln': no such file"});
  test::expect_error([] { Model::load(std::filesystem::temp_directory_path().string()); }, ErrorKind::Runtime,
                     {"not a regular file"});
  std::string path = temp_path("empty.kiln");
  { std::ofstream f(path); }
  test::expect_error([&] { Model::load(path); }, ErrorKind::Runtime, {path, "truncated"});
  std::filesystem::remove(path);
}

TEST(Deploy, WrongMagicOrVersion) {
  LeNet net;
  std::string b = net.bytes(1);
  std::string magic = b;
  magic[0] = 'X';
  test::expect_error([&] { Model::from_bytes(magic, "m.kiln"); }, ErrorKind::Runtime,
                     {"'m.kiln'", "not a Kiln model file"});
  // A bare graph file (the compile cache's format) is not a model file either.
  auto g = net.trace(1);
  test::expect_error([&] { Model::from_bytes(graph::serialize(*g, net.capture_names(*g))); }, ErrorKind::Runtime,
                     {"not a Kiln model file"});
  std::string version = b;
  version[8] = 9;
  test::expect_error([&] { Model::from_bytes(version); }, ErrorKind::Runtime, {"format version 9", "reads version 1"});
}

TEST(Deploy, EveryTruncationAndTrailingBytesAreErrors) {
  std::string b = LeNet().bytes(1);
  for (size_t n = 0; n < b.size(); ++n)
    EXPECT_THROW(Model::from_bytes(b.substr(0, n)), Error) << "prefix of " << n << " bytes";
  test::expect_error([&] { Model::from_bytes(b + "xy"); }, ErrorKind::Runtime, {"2 bytes follow the model"});
}

TEST(Deploy, CorruptBytesNeverCrash) {
  const std::string b = LeNet().bytes(1);
  Tensor x = det({1, 1, 8, 8}, 15, 1.0);
  std::mt19937_64 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string c = b;
    int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k) c[rng() % c.size()] = char(rng() & 0xff);
    try {
      Model m = Model::from_bytes(c);
      m.run({x});  // what loads runs (a flipped weight byte gives other numbers, never a crash)
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(Deploy, UnknownOpAndMismatchedWeights) {
  LeNet net;
  std::string b = net.bytes(1);
  auto g = net.trace(1);
  // Rename the first node's op to a name this Kiln does not know (same length: the file stays well-formed).
  std::string op = op_name(g->nodes[0].op);
  size_t at = b.find(op);
  ASSERT_NE(at, std::string::npos);
  std::string unknown = b;
  unknown[at + op.size() - 1] = '#';
  test::expect_error([&] { Model::from_bytes(unknown); }, ErrorKind::Runtime,
                     {"its graph is invalid", "unknown op '" + op.substr(0, op.size() - 1) + "#'"});
  // A weight stored under another name than the graph reads.
  std::string renamed = b;
  size_t wat = renamed.rfind("fc.bias");
  renamed[wat] = 'g';
  test::expect_error([&] { Model::from_bytes(renamed); }, ErrorKind::Runtime,
                     {"is named 'gc.bias' but the graph reads 'fc.bias'"});
  // A name that is not UTF-8 text is refused where it is read (byte_io.h: every string of the format is text);
  // valid UTF-8 is kept.
  renamed[wat] = char(0x8a);
  test::expect_error([&] { Model::from_bytes(renamed); }, ErrorKind::Runtime,
                     {"weight name is not UTF-8 text (byte " + std::to_string(wat) + " of "});
  renamed.replace(wat, 2, "\xc3\xa9");  // "é" (2 bytes, like the 2 replaced)
  test::expect_error([&] { Model::from_bytes(renamed); }, ErrorKind::Runtime, {"is named '\xc3\xa9.bias'"});
  // A weight of another shape than the graph reads: the last weight (fc.bias, Float32[3]) claims rank 1, dim 4.
  std::string reshaped = b;
  size_t dim_at = reshaped.size() - 12 - 8 - 8;  // ..., dims[0] (i64), nbytes (u64), 12 data bytes
  int64_t four = 4;
  std::memcpy(&reshaped[dim_at], &four, 8);
  test::expect_error([&] { Model::from_bytes(reshaped); }, ErrorKind::Runtime,
                     {"'fc.bias' is stored as Float32[4] but the graph reads it as Float32[3]"});
}

}  // namespace
}  // namespace kiln
