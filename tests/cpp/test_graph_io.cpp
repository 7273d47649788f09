// The IR serializer (kiln/graph_io.h): a traced graph — inputs, captures, constants (incl. weak Python scalars),
// attributes of every kind, a random op, an in-place Assign on a capture — and its optimized (fused) form survive
// serialize → deserialize → bind_captures and compute bit for bit what the original computes; every truncation
// and random byte corruption of a file gives kiln::Error (never a crash); unknown op names, bad value ids and
// mismatched captures are refused.
#include <cstring>
#include <random>

#include "kiln/graph_io.h"
#include "kiln/random.h"
#include "test_util.h"

namespace kiln {
namespace {

using graph::Graph;
using test::make;
using test::values;
using TV = std::vector<Tensor>;

struct Fixture {
  Tensor w = make({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, {3, 2});
  Tensor acc = make({0.0, 0.0}, {2});
  std::shared_ptr<Graph> g;
  Fixture() {
    graph::Trace tr("step");
    Tensor x = tr.input({4, 3}, DType::Float32);
    Tensor h = ops::relu(ops::add(ops::matmul(x, w), Tensor::scalar(0.5, DType::Float64, true)));  // weak scalar
    Tensor noise = ops::uniform_real({4, 2}, DType::Float32, 1234, 0, 7);                        // stream 7
    Tensor y = ops::mul(h, ops::add(noise, make({1.0, 2.0}, {2})));                             // constant
    Tensor s = ops::sum(y, {0}, false);
    Tensor upd = ops::assign(acc, ops::add(acc, s));
    Tensor c = ops::cast(ops::greater(s, Tensor::scalar(1, DType::Int64, true)), DType::Int32);
    g = tr.finish({s, c, upd});
  }
};

std::vector<std::string> names_for(const Graph& g) {
  std::vector<std::string> r;
  for (int v : graph::capture_ids(g)) r.push_back("cap" + std::to_string(v));
  return r;
}

TV run(const std::shared_ptr<Graph>& g, const TV& args) { return graph::Executable(g).run(args); }

void expect_bitwise(const TV& a, const TV& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape());
    EXPECT_EQ(a[i].dtype(), b[i].dtype());
    Tensor ca = a[i].contiguous(), cb = b[i].contiguous();
    EXPECT_EQ(0, std::memcmp(ca.raw_data(), cb.raw_data(), size_t(ca.numel()) * itemsize(ca.dtype())))
        << "output " << i;
  }
}

std::shared_ptr<Graph> round_trip(const Graph& g, const TV& bind) {
  std::string bytes = graph::serialize(g, names_for(g));
  graph::LoadedGraph lg = graph::deserialize(bytes);
  EXPECT_EQ(lg.capture_names, names_for(g));
  EXPECT_EQ(lg.graph->to_text(), g.to_text());
  graph::bind_captures(*lg.graph, bind);
  return lg.graph;
}

void check_round_trip(bool optimize) {
  Fixture f;
  if (optimize) graph::optimize(*f.g);
  auto loaded = round_trip(*f.g, {f.w, f.acc});
  Tensor x = make({1, -2, 3, 0.5, 0, -1, 2, 2, 2, -3, 1, 0}, {4, 3});
  // Stream 7's offsets advance per run: reset between the two so that both draw the same numbers.
  random::reset_streams();
  Tensor acc0 = ops::identity(f.acc);
  TV ra = run(f.g, {x});
  Tensor acc_after_a = ops::identity(f.acc);
  ops::assign(f.acc, acc0);
  random::reset_streams();
  TV rb = run(loaded, {x});
  expect_bitwise(ra, rb);
  expect_bitwise({acc_after_a}, {f.acc});  // the Assign wrote the re-bound capture
}

TEST(GraphIO, RoundTripTracedGraph) { check_round_trip(false); }
TEST(GraphIO, RoundTripOptimizedGraph) { check_round_trip(true); }

TEST(GraphIO, WeakConstantKeepsPromotion) {
  // int32 tensor + weak Python int stays Int32 (a strong Int64 constant would promote to Int64).
  graph::Trace tr("weak");
  Tensor x = tr.input({2}, DType::Int32);
  auto g = tr.finish({ops::add(x, Tensor::scalar(3, DType::Int64, true))});
  auto loaded = round_trip(*g, {});
  TV r = run(loaded, {make({1, 2}, {2}, DType::Int32)});
  EXPECT_EQ(r[0].dtype(), DType::Int32);
  EXPECT_EQ(values(r[0]), (std::vector<double>{4, 5}));
}

TEST(GraphIO, RemapRandomStreams) {
  Fixture f;
  std::string bytes = graph::serialize(*f.g, names_for(*f.g));
  auto lg = graph::deserialize(bytes);
  EXPECT_EQ(graph::remap_random_streams(*lg.graph, {7}, {3}), 1);
  for (auto& n : lg.graph->nodes)
    if (graph::is_random(n.op)) EXPECT_EQ(n.attrs.i("stream"), 3);
}

TEST(GraphIO, EveryTruncationIsAnError) {
  Fixture f;
  std::string bytes = graph::serialize(*f.g, names_for(*f.g));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(graph::deserialize(bytes.substr(0, n)), Error) << "prefix of " << n << " bytes";
  EXPECT_THROW(graph::deserialize(bytes + "x"), Error);  // trailing bytes
}

TEST(GraphIO, CorruptBytesNeverCrash) {
  Fixture f;
  graph::optimize(*f.g);
  const std::string bytes = graph::serialize(*f.g, names_for(*f.g));
  std::mt19937_64 rng(42);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string b = bytes;
    int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = char(rng() & 0xff);
    try {
      auto lg = graph::deserialize(b);
      lg.graph->verify();  // what loads is a well-formed graph
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
}

TEST(GraphIO, UnknownOpNameIsRefused) {
  Fixture f;
  std::string bytes = graph::serialize(*f.g, names_for(*f.g));
  // Rename "ReLU" to "ReLV": an op this Kiln does not know.
  size_t at = bytes.find("ReLU");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = 'V';
  test::expect_error([&] { graph::deserialize(bytes); }, ErrorKind::Runtime, {"unknown op 'ReLV'"});
}

TEST(GraphIO, BadValueIdIsRefused) {
  graph::Trace tr("bad");
  Tensor x = tr.input({2}, DType::Float32);
  auto g = tr.finish({ops::exp(x)});
  Graph bad = *g;
  bad.nodes[0].inputs[0] = 99;  // reads a value that does not exist
  // serialize does not verify; deserialize must.
  std::string bytes = graph::serialize(bad, {});
  EXPECT_THROW(graph::deserialize(bytes), Error);
  Graph bad_out = *g;
  bad_out.outputs[0] = -5;
  EXPECT_THROW(graph::deserialize(graph::serialize(bad_out, {})), Error);
}

TEST(GraphIO, TamperedShapeIsRefused) {
  graph::Trace tr("shape");
  Tensor x = tr.input({2, 3}, DType::Float32);
  auto g = tr.finish({ops::exp(x)});
  Graph bad = *g;
  bad.values[size_t(bad.nodes[0].outputs[0])].meta.shape = {2, 30};  // the kernel would write past the buffer
  test::expect_error([&] { graph::deserialize(graph::serialize(bad, {})); }, ErrorKind::Runtime,
                     {"Float32[2, 30]", "the op gives"});
}

TEST(GraphIO, CapturesMustBeNamedAndMatch) {
  Fixture f;
  EXPECT_THROW(graph::serialize(*f.g, {"only_one"}), Error);
  auto lg = graph::deserialize(graph::serialize(*f.g, names_for(*f.g)));
  // Unbound captures: the executor refuses the graph instead of reading nothing.
  EXPECT_THROW(graph::Executable{lg.graph}, Error);
  test::expect_error([&] { graph::bind_captures(*lg.graph, {f.w, make({0, 0, 0}, {3})}); }, ErrorKind::Value,
                     {"Float32[2]", "Float32[3]"});
  EXPECT_THROW(graph::bind_captures(*lg.graph, {f.w}), Error);
}

}  // namespace
}  // namespace kiln
