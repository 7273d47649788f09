// The Float32 kernels of the vectorized unary ops (vmath.h): contiguous runs directly (threaded above
// cpu::kParallelMin elements), strided runs gathered through a small buffer (runs split over the threads by
// cpu::strided_loop_par).
#include <algorithm>

#include "../backend/cpu/loops.h"
#include "kiln/tensor.h"
#include "vmath.h"

namespace kiln::vmath {

void run_float32(Fn fn, const Tensor& x, const Tensor& out) {
  const float* px = x.data<float>();
  float* po = out.data<float>();
  std::array<const int64_t*, 2> st{out.strides().data(), x.strides().data()};
  cpu::strided_loop_par<2>(out.shape(), st, [&](const int64_t* off, int64_t n, const int64_t* in) {
    float* o = po + off[0];
    const float* a = px + off[1];
    if (in[0] == 1 && in[1] == 1) {
      cpu::parallel_runs(n, [&](int64_t s, int64_t m) { apply(fn, a + s, o + s, m); });  // 8192: whole packets
      return;
    }
    constexpr int64_t kBuf = 256;
    alignas(64) float buf[kBuf];
    for (int64_t s = 0; s < n; s += kBuf) {
      const int64_t m = std::min(kBuf, n - s);
      for (int64_t i = 0; i < m; ++i) buf[i] = a[(s + i) * in[1]];
      apply(fn, buf, buf, m);
      for (int64_t i = 0; i < m; ++i) o[(s + i) * in[0]] = buf[i];
    }
  });
}

}  // namespace kiln::vmath
