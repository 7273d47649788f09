// Thread safety and robustness of shared state (issue 7, items 13 and 14): cached oneDNN primitives run from many
// threads at once (each run with its own memory objects, scratchpad and stream), a primitive made on one thread runs
// on another, the primitive cache is bounded, and a 200k-op tape is freed without recursion.
#include <algorithm>
#include <atomic>
#include <thread>

#include "backend/cpu/dnnl_utils.h"
#include "kiln/autodiff.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::make;
using test::values;

std::vector<double> ramp(size_t n, double scale) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * double(int64_t(i * 7919 % 23) - 11);
  return v;
}

// Conv2D and both gradients for a few geometries (float32: the oneDNN primitives, several with scratchpads).
struct ConvJob {
  Tensor x, w, dy;
  ops::Axes stride, pad;
  std::vector<std::vector<double>> run() const {
    Tensor y = ops::conv2d(x, w, stride, pad, {1, 1}, 1);
    Tensor dx = ops::conv2d_backprop_input(dy, w, x.shape(), stride, pad, {1, 1}, 1);
    Tensor dw = ops::conv2d_backprop_filter(dy, x, w.shape(), stride, pad, {1, 1}, 1);
    return {values(y), values(dx), values(dw)};
  }
};

std::vector<ConvJob> conv_jobs() {
  std::vector<ConvJob> jobs;
  struct G { Shape x, w, y; ops::Axes stride, pad; };
  const G gs[] = {{{16, 1, 8, 8}, {4, 1, 3, 3}, {16, 4, 8, 8}, {1, 1}, {1, 1, 1, 1}},
                  {{8, 4, 12, 12}, {8, 4, 3, 3}, {8, 8, 5, 5}, {2, 2}, {0, 0, 0, 0}},
                  {{2, 16, 20, 20}, {16, 16, 5, 5}, {2, 16, 16, 16}, {1, 1}, {0, 0, 0, 0}}};
  for (const G& g : gs)
    jobs.push_back({make(ramp(size_t(numel(g.x)), 0.1), g.x), make(ramp(size_t(numel(g.w)), 0.05), g.w),
                    make(ramp(size_t(numel(g.y)), 0.02), g.y), g.stride, g.pad});
  return jobs;
}

TEST(Threads, CachedConvPrimitivesRunConcurrentlyAndExactly) {
  const auto jobs = conv_jobs();
  std::vector<std::vector<std::vector<double>>> want;
  for (auto& j : jobs) want.push_back(j.run());  // primitives created on this thread
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < 25; ++it)
        for (size_t k = 0; k < jobs.size(); ++k) {
          size_t j = (k + size_t(t)) % jobs.size();  // threads hit different primitives at different times
          if (jobs[j].run() != want[j]) mismatches++;
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Threads, PrimitiveMadeOnOneThreadRunsOnAnother) {
  const auto jobs = conv_jobs();
  std::vector<std::vector<double>> want;
  std::thread([&] { want = jobs[0].run(); }).join();  // made (and its thread gone)
  std::vector<std::vector<double>> got;
  std::thread([&] { got = jobs[0].run(); }).join();
  EXPECT_EQ(got, want);
  EXPECT_EQ(jobs[0].run(), want);
}

namespace dn = cpu::dnnl;

// A ReLU primitive on n floats, with the user-managed scratchpad that PrimCache requires.
dn::PrimPtr relu_prim(int64_t n, bool user_scratchpad) {
  dn::MemDesc md({n}, dnnl_a);
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_attr_create(&attr);
  if (user_scratchpad) dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t st = dnnl_eltwise_forward_primitive_desc_create(&pd, dn::engine(), dnnl_forward_inference,
                                                                dnnl_eltwise_relu, md.md, md.md, 0.f, 0.f, attr);
  dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) return nullptr;
  return dn::make_prim(pd, {{DNNL_ARG_SRC, md.md}, {DNNL_ARG_DST, md.md}});
}

TEST(Threads, PrimCacheIsBoundedAndThreadSafe) {
  dn::PrimCache cache;
  std::atomic<int> wrong{0};
  auto work = [&](int t) {
    for (int64_t n = 1; n <= int64_t(dn::PrimCache::kCapacity) + 40; ++n) {
      std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n), 7.f);
      for (int64_t i = 0; i < n; ++i) in[size_t(i)] = float((i + t) % 5) - 2.f;
      bool ran = cache.run({n}, [&] { return relu_prim(n, true); }, {in.data(), out.data()}, "test ReLU");
      if (!ran) wrong++;
      for (int64_t i = 0; i < n; ++i)
        if (out[size_t(i)] != std::max(in[size_t(i)], 0.f)) { wrong++; break; }
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.size(), dn::PrimCache::kCapacity);
}

TEST(Threads, PrimitiveWithLibraryScratchpadIsRefused) {
  EXPECT_THROW(relu_prim(8, false), Error);
}

// ---------------------------------------------------------------- deep tapes (item 14)

TEST(DeepTape, ChainOf200kOpsDifferentiatesAndFreesIteratively) {
  // Before: ~75k nodes overflowed the stack when the chain was destroyed (each TensorImpl's grad_fn destroyed the
  // node, whose inputs destroyed their TensorImpls, ...). Now the tape is unlinked on a work list.
  const int n = 200000;
  std::vector<double> g;
  {
    autodiff::GradScope s;
    Tensor x = s.watch_input(make({1.0, 2.0}, {2}, DType::Float64));
    Tensor y = x;
    Tensor two = Tensor::scalar(1.0, DType::Float64, true);
    for (int i = 0; i < n; ++i) y = ops::add(y, two);
    EXPECT_EQ(values(y), (std::vector<double>{1.0 + n, 2.0 + n}));
    g = values(autodiff::gradient({ops::sum(y)}, {}, {x})[0]);
  }  // the chain dies here
  EXPECT_EQ(g, (std::vector<double>{1.0, 1.0}));
}

TEST(DeepTape, SharedPrefixSurvivesReleaseOfOneBranch) {
  autodiff::GradScope s;
  Tensor x = s.watch_input(make({3.0}, {1}, DType::Float64));
  Tensor y = x;
  for (int i = 0; i < 50000; ++i) y = ops::mul(y, Tensor::scalar(1.0, DType::Float64, true));
  Tensor a = ops::add(y, Tensor::scalar(1.0, DType::Float64, true));
  { Tensor b = ops::mul(y, y); }  // a branch freed: the shared chain must stay intact
  y = Tensor();                    // only `a` holds the chain now
  auto g = autodiff::gradient({a}, {}, {x});
  EXPECT_EQ(values(g[0]), std::vector<double>{1.0});
}

}  // namespace
}  // namespace kiln
