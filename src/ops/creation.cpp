// Creation ops: Fill (zeros/ones/full), Range (arange) and the random ops on Philox4x32-10.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <unordered_map>
#include <type_traits>

#include "elementwise.h"
#include "families.h"
#include "kiln/random.h"

namespace kiln {

namespace random {
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(M0) * c[0], p1 = uint64_t(M1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    k[0] += W0;
    k[1] += W1;
  }
  return c;
}
namespace {
std::mutex g_streams_mu;
std::unordered_map<int64_t, uint64_t>& streams() {
  static auto* m = new std::unordered_map<int64_t, uint64_t>();
  return *m;
}
}  // namespace

uint64_t next_offset(int64_t stream) {
  std::lock_guard<std::mutex> g(g_streams_mu);
  return streams()[stream]++;
}

void reset_streams() {
  std::lock_guard<std::mutex> g(g_streams_mu);
  streams().clear();
}
}  // namespace random

namespace {
using TV = std::vector<Tensor>;

Shape attr_shape(const Attrs& a) { return a.ints("shape"); }
std::vector<TensorMeta> infer_shape_dtype(const TV&, const Attrs& a) { return {{attr_shape(a), a.dtype("dtype")}}; }

void run_fill(const TV&, TV& out, const Attrs& a) {
  double v = a.f("value");
  KILN_DISPATCH_COMPLEX(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T tv = convert_value<T>(v);
    T* p = out[0].data<T>();
    for (int64_t i = 0, n = out[0].numel(); i < n; ++i) p[i] = tv;
  });
}

std::vector<TensorMeta> infer_range(const TV&, const Attrs& a) {
  double start = a.f("start"), end = a.f("end"), step = a.f("step");
  KILN_CHECK(step != 0, Value, "For 'arange', the step must not be 0.");
  KILN_CHECK(std::isfinite(start) && std::isfinite(end) && std::isfinite(step), Value,
             "For 'arange', start, end and step must be finite, but got ", start, ", ", end, ", ", step, ".");
  double count = std::ceil((end - start) / step);
  KILN_CHECK(count <= double(kMaxElements), Value, "For 'arange', [", start, ", ", end, ") with step ", step,
             " has ", count, " elements: more than a tensor can hold.");
  int64_t n = int64_t(count);
  return {{{n < 0 ? 0 : n}, a.dtype("dtype")}};
}
void run_range(const TV&, TV& out, const Attrs& a) {
  double start = a.f("start"), step = a.f("step");
  KILN_DISPATCH_ALL(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0, n = out[0].numel(); i < n; ++i) p[i] = convert_value<T>(start + double(i) * step);
  });
}

// The counter offset of one draw: from the op's stream when it has one (taken as the kernel runs), else the
// fixed "offset" attribute.
uint64_t draw_offset(const Attrs& a) {
  int64_t stream = a.i("stream");
  return stream >= 0 ? random::next_offset(stream) : uint64_t(a.i("offset"));
}

// Counter for element block i of a draw: (offset, i) so that successive draws with new offsets never overlap.
std::array<uint32_t, 4> block(const Attrs& a, uint64_t off, uint64_t i) {
  uint64_t seed = uint64_t(a.i("seed"));
  return random::philox4x32({uint32_t(i), uint32_t(i >> 32), uint32_t(off), uint32_t(off >> 32)},
                            {uint32_t(seed), uint32_t(seed >> 32)});
}

// Standard normal by Box-Muller on two double uniforms per pair of outputs (computed in double, then cast).
void run_normal(const TV&, TV& out, const Attrs& a) {
  const uint64_t off = draw_offset(a);
  int64_t n = out[0].numel();
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(a, off, uint64_t(i / 2));
      double u1 = random::u01d(w[0], w[1]), u2 = random::u01d(w[2], w[3]);
      double r = std::sqrt(-2.0 * std::log1p(-u1)), th = 2.0 * M_PI * u2;  // log1p(-u1): u1 ∈ [0,1) → finite
      p[i] = convert_value<T>(r * std::cos(th));
      if (i + 1 < n) p[i + 1] = convert_value<T>(r * std::sin(th));
    }
  });
}
// A double u in [0, 1) rounded to T can become 1.0 (float16: u > 1 - 2^-12; float32: u > 1 - 2^-25): such
// values are replaced by the largest T below 1, so that the result stays in [0, 1).
template <typename T> T u01_as(double u) {
  T v = convert_value<T>(u);
  if (double(convert_value<double>(v)) < 1.0) return v;
  if constexpr (std::is_same_v<T, Half>) return convert_value<T>(1.0 - 0x1p-11);
  else if constexpr (std::is_same_v<T, BFloat16>) return convert_value<T>(1.0 - 0x1p-8);
  else if constexpr (std::is_floating_point_v<T>) return std::nextafter(T(1), T(0));
  else return v;
}
void run_uniform(const TV&, TV& out, const Attrs& a) {
  const uint64_t off = draw_offset(a);
  int64_t n = out[0].numel();
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(a, off, uint64_t(i / 2));
      p[i] = u01_as<T>(random::u01d(w[0], w[1]));
      if (i + 1 < n) p[i + 1] = u01_as<T>(random::u01d(w[2], w[3]));
    }
  });
}
// Integers uniform in [low, high) by rejection-free multiply-shift on 64 random bits (bias < 2^-32 for
// ranges below 2^32).
void run_uniform_int(const TV&, TV& out, const Attrs& a) {
  const uint64_t off = draw_offset(a);
  int64_t n = out[0].numel(), low = a.i("low"), high = a.i("high");
  uint64_t range = uint64_t(high - low);
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(a, off, uint64_t(i / 2));
      for (int k = 0; k < 2 && i + k < n; ++k) {
        uint64_t r = (uint64_t(w[2 * k]) << 32) | w[2 * k + 1];
        uint64_t v = uint64_t((static_cast<unsigned __int128>(r) * range) >> 64);
        p[i + k] = convert_value<T>(double(low + int64_t(v)));
      }
    }
  });
}

// ---- TrilIndices / TriuIndices(; row, col, offset, dtype): the (2, N) row-major coordinates of the lower (j ≤ i +
// offset) or upper (j ≥ i + offset) triangle of a row × col matrix, Int32 or Int64. Row i holds the columns
// [0, min(col, i + offset + 1)) (lower) or [max(0, i + offset), col) (upper), either possibly empty.
template <bool Lower> std::pair<int64_t, int64_t> tri_cols(int64_t i, int64_t col, int64_t offset) {
  if constexpr (Lower) return {0, std::max<int64_t>(0, std::min<int64_t>(col, i + offset + 1))};
  else return {std::min<int64_t>(col, std::max<int64_t>(0, i + offset)), col};
}
template <bool Lower> std::vector<TensorMeta> infer_tri_indices(const TV&, const Attrs& a) {
  const char* op = Lower ? "TrilIndices" : "TriuIndices";
  const int64_t row = a.i("row"), col = a.i("col"), offset = a.i("offset");
  const DType dt = a.dtype("dtype");
  KILN_CHECK(row >= 0 && col >= 0, Value, "For '", op, "', 'row' and 'col' must be >= 0, but got ", row, " and ",
             col, ".");
  KILN_CHECK(dt == DType::Int32 || dt == DType::Int64, Type, "For '", op,
             "', 'dtype' must be Int32 or Int64, but got ", dtype_name(dt), ".");
  int64_t count = 0;
  for (int64_t i = 0; i < row; ++i) {
    auto [b, e] = tri_cols<Lower>(i, col, offset);
    count += e - b;
  }
  return {{Shape{2, count}, dt}};
}
template <bool Lower> void run_tri_indices(const TV&, TV& out, const Attrs& a) {
  const int64_t row = a.i("row"), col = a.i("col"), offset = a.i("offset"), count = out[0].shape()[1];
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* pr = out[0].data<T>();
      T* pc = pr + count;
      for (int64_t i = 0; i < row; ++i) {
        auto [b, e] = tri_cols<Lower>(i, col, offset);
        for (int64_t j = b; j < e; ++j) *pr++ = T(i), *pc++ = T(j);
      }
    }
  });
}

void reg(OpId id, InferFn infer, KernelFn cpu) {
  OpDef d;
  d.id = id;
  d.infer = infer;
  d.cpu = cpu;
  d.differentiable = false;
  register_op(d);
}

void check_shape(const Shape& s, const char* op) {
  for (int64_t d : s)
    KILN_CHECK(d >= 0, Value, "For '", op, "', the shape must not have negative dimensions, but got ", shape_str(s), ".");
}

}  // namespace

namespace ops_impl {
void register_creation() {
  reg(OpId::Fill, infer_shape_dtype, run_fill);
  reg(OpId::Arange, infer_range, run_range);
  reg(OpId::TrilIndices, infer_tri_indices<true>, run_tri_indices<true>);
  reg(OpId::TriuIndices, infer_tri_indices<false>, run_tri_indices<false>);
  reg(OpId::StandardNormal, infer_shape_dtype, run_normal);
  reg(OpId::UniformReal, infer_shape_dtype, run_uniform);
  reg(OpId::UniformInt, infer_shape_dtype, run_uniform_int);
}
}  // namespace ops_impl

namespace ops {
Tensor full(const Shape& shape, double value, DType dtype) {
  check_shape(shape, "full");
  KILN_CHECK(double_fits(value, dtype), Overflow, "For 'Fill', the value ", value, " is out of bounds for ",
             dtype_name(dtype), ".");
  return apply1(OpId::Fill, {}, {{"shape", shape}, {"value", value}, {"dtype", dtype}});
}
Tensor zeros(const Shape& shape, DType dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor zeros_like(const Tensor& x) { return full(x.shape(), 0.0, x.dtype()); }
Tensor ones_like(const Tensor& x) { return full(x.shape(), 1.0, x.dtype()); }
Tensor arange(double start, double end, double step, DType dtype) {
  return apply1(OpId::Arange, {}, {{"start", start}, {"end", end}, {"step", step}, {"dtype", dtype}});
}
Tensor standard_normal(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset, int64_t stream) {
  check_shape(shape, "standard_normal");
  KILN_CHECK(is_floating(dtype), Value, "For 'randn', the dtype must be a float type, but got ", dtype_name(dtype), ".");
  return apply1(OpId::StandardNormal, {}, {{"shape", shape}, {"dtype", dtype}, {"seed", int64_t(seed)}, {"offset", int64_t(offset)}, {"stream", stream}});
}
Tensor uniform_real(const Shape& shape, DType dtype, uint64_t seed, uint64_t offset, int64_t stream) {
  check_shape(shape, "uniform");
  KILN_CHECK(is_floating(dtype), Value, "For 'uniform', the dtype must be a float type, but got ", dtype_name(dtype), ".");
  return apply1(OpId::UniformReal, {}, {{"shape", shape}, {"dtype", dtype}, {"seed", int64_t(seed)}, {"offset", int64_t(offset)}, {"stream", stream}});
}
Tensor uniform_int(const Shape& shape, int64_t low, int64_t high, DType dtype, uint64_t seed, uint64_t offset,
                   int64_t stream) {
  check_shape(shape, "randint");
  KILN_CHECK(high > low, Value, "For 'randint', 'high' must be greater than 'low', but got low=", low, ", high=", high, ".");
  return apply1(OpId::UniformInt, {}, {{"shape", shape}, {"low", low}, {"high", high}, {"dtype", dtype},
                                       {"seed", int64_t(seed)}, {"offset", int64_t(offset)}, {"stream", stream}});
}
}  // namespace ops
}  // namespace kiln
