// Helpers shared by the GoogleTest files: building tensors from vectors, reading them back, expecting errors.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/ops.h"

namespace kiln::test {

// A contiguous tensor of dtype `dt` holding `v` (converted from double).
inline Tensor make(const std::vector<double>& v, const Shape& shape, DType dt = DType::Float32) {
  Tensor t = Tensor::from_data(v.data(), shape, DType::Float64);
  if (dt == DType::Float64) return t;
  Tensor out = Tensor::empty(shape, dt);
  copy_into(t, out);
  return out;
}

// The elements of `t` (any strides, any dtype) in row-major order, as doubles.
inline std::vector<double> values(const Tensor& t) {
  Tensor d = Tensor::empty(t.shape(), DType::Float64);
  copy_into(t, d);
  const double* p = d.data<double>();
  return std::vector<double>(p, p + d.numel());
}

// Expects `f()` to throw kiln::Error of `kind` whose message contains every string in `parts`.
template <typename F>
void expect_error(F&& f, ErrorKind kind, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(int(e.kind()), int(kind)) << e.what();
    for (auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected a kiln::Error";
}

inline void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

}  // namespace kiln::test
