// Tensor::from_external: a tensor viewing memory it does not own (what Tensor.from_numpy shares). Writes go both
// ways, ops read it, views keep it alive, the owner is released exactly once with the last view, and the caching
// allocator never sees the memory.
#include <vector>

#include "kiln/allocator.h"
#include "kiln/ops.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::expect_error;
using test::values;

TEST(ExternalStorage, SharesMemoryBothWaysAndReleasesTheOwnerOnce) {
  std::vector<float> buf{1, 2, 3, 4, 5, 6};
  int released = 0;
  const size_t in_use = allocator::stats().bytes_in_use;
  {
    std::shared_ptr<void> owner(&buf, [&released](void*) { ++released; });
    Tensor t = Tensor::from_external(buf.data(), {2, 3}, DType::Float32, std::move(owner));
    EXPECT_EQ(allocator::stats().bytes_in_use, in_use);  // no allocator block behind it
    EXPECT_EQ(t.raw_data(), static_cast<void*>(buf.data()));
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t.impl()->storage->nbytes, 6 * sizeof(float));
    buf[0] = 10;  // the owner's write is seen by the tensor and by ops reading it
    EXPECT_EQ(values(ops::add(t, Tensor::scalar(1.0, DType::Float32))),
              (std::vector<double>{11, 3, 4, 5, 6, 7}));
    Tensor col = t.view({2}, {3}, 1);  // a view keeps the memory alive after t goes
    t = Tensor();
    EXPECT_EQ(released, 0);
    col.data<float>()[3] = -5;  // raw element offset 1 + 3 = col[1] = t[1, 1]: the tensor's write is seen by the owner
    EXPECT_EQ(buf[4], -5.0f);
    EXPECT_EQ(values(col), (std::vector<double>{2, -5}));
  }
  EXPECT_EQ(released, 1);
  EXPECT_EQ(allocator::stats().bytes_in_use, in_use);
}

TEST(ExternalStorage, ZeroSizeAndErrors) {
  float x = 0;
  Tensor e = Tensor::from_external(&x, {0, 4}, DType::Float32, std::make_shared<int>(0));
  EXPECT_EQ(e.numel(), 0);
  expect_error([&] { Tensor::from_external(&x, {1}, DType::Float32, nullptr); }, ErrorKind::Value, {"owner"});
  expect_error([&] { Tensor::from_external(&x, {-1}, DType::Float32, std::make_shared<int>(0)); }, ErrorKind::Value,
               {"negative"});
}

}  // namespace
}  // namespace kiln
