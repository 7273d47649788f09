// Creation ops: Fill (zeros/ones/full), Range (arange) and the random ops on Philox4x32-10.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <unordered_map>
#include <type_traits>

#include "elementwise.h"
#include "families.h"
#include "kiln/random.h"

namespace kiln {
namespace special {
double bessel_i0e(double x);  // e^-|x| I0(x) (elementwise_unary.cpp, Note [Bessel I])
}  // namespace special

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
// `seed`: the draw's attr seed, read once per draw (an Attrs lookup by name per block cost more than Philox).
std::array<uint32_t, 4> block(uint64_t seed, uint64_t off, uint64_t i) {
  return random::philox4x32({uint32_t(i), uint32_t(i >> 32), uint32_t(off), uint32_t(off >> 32)},
                            {uint32_t(seed), uint32_t(seed >> 32)});
}

// Standard normal by Box-Muller on two double uniforms per pair of outputs (computed in double, then cast).
void run_normal(const TV&, TV& out, const Attrs& a) {
  const uint64_t off = draw_offset(a), seed = uint64_t(a.i("seed"));
  int64_t n = out[0].numel();
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(seed, off, uint64_t(i / 2));
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
  const uint64_t off = draw_offset(a), seed = uint64_t(a.i("seed"));
  int64_t n = out[0].numel();
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(seed, off, uint64_t(i / 2));
      p[i] = u01_as<T>(random::u01d(w[0], w[1]));
      if (i + 1 < n) p[i + 1] = u01_as<T>(random::u01d(w[2], w[3]));
    }
  });
}
// Integers uniform in [low, high) by rejection-free multiply-shift on 64 random bits (bias < 2^-32 for
// ranges below 2^32).
void run_uniform_int(const TV&, TV& out, const Attrs& a) {
  const uint64_t off = draw_offset(a), seed = uint64_t(a.i("seed"));
  int64_t n = out[0].numel(), low = a.i("low"), high = a.i("high");
  uint64_t range = uint64_t(high - low);
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; i += 2) {
      auto w = block(seed, off, uint64_t(i / 2));
      for (int k = 0; k < 2 && i + k < n; ++k) {
        uint64_t r = (uint64_t(w[2 * k]) << 32) | w[2 * k + 1];
        uint64_t v = uint64_t((static_cast<unsigned __int128>(r) * range) >> 64);
        p[i + k] = convert_value<T>(double(low + int64_t(v)));
      }
    }
  });
}

// ---- RandomGamma(alpha; shape, seed, offset, stream) and Gamma(alpha, beta; ...): Gamma(alpha, 1) samples (times
// beta, Gamma's scale) of the attribute shape, alpha (and beta) broadcast to it. Marsaglia & Tsang's method ("A
// simple method for generating gamma variables", ACM TOMS 26(3), 2000) in double: d = a - 1/3, c = 1/sqrt(9d); draw
// z ~ N(0, 1) and u ~ U(0, 1) until v = (1 + cz)^3 > 0 and log u < z^2/2 + d - dv + d log v, giving dv. For alpha
// < 1 the sample of alpha + 1 times U^(1/alpha) (their section 6). Every element has its own Philox counters
// (element index; try t in the high bits of the second word, t = 0xFFFF for the boost uniform), so the numbers do
// not depend on the thread split and a seed gives the same numbers in PyNative and Graph mode.
constexpr uint32_t kGammaBoostTry = 0xFFFFu;
double gamma_sample(double alpha, const std::array<uint32_t, 2>& key, uint64_t off, uint64_t i) {
  if (std::isinf(alpha)) return alpha;
  const bool boost = alpha < 1.0;
  const double d = (boost ? alpha + 1.0 : alpha) - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  auto draw = [&](uint32_t t) {
    return random::philox4x32({uint32_t(i), uint32_t(i >> 32) | (t << 16), uint32_t(off), uint32_t(off >> 32)}, key);
  };
  double x = d;
  for (uint32_t t = 0; t < kGammaBoostTry; ++t) {  // each try is accepted with probability > 0.95
    const auto w = draw(t);
    const double u1 = random::u01d(w[0], w[1]), u2 = double(w[2]) * 0x1p-32;
    const double z = std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * M_PI * u2);
    const double u = (double(w[3]) + 0.5) * 0x1p-32;  // (0, 1)
    double v = 1.0 + c * z;
    if (v <= 0.0) continue;
    v = v * v * v;
    x = d * v;
    const double z2 = z * z;
    if (u < 1.0 - 0.0331 * z2 * z2 || std::log(u) < 0.5 * z2 + d * (1.0 - v + std::log(v))) break;
  }
  if (boost) {
    const auto w = draw(kGammaBoostTry);
    const double ub = 1.0 - random::u01d(w[0], w[1]);  // (0, 1]
    x *= std::exp(std::log(ub) / alpha);
  }
  return x;
}

// The flat offset into a tensor of shape `in` (broadcast to `out`, right-aligned) of output element i.
struct BcastIndex {
  int nd = 0;
  int64_t dims[16], strides[16];
  bool trailing = true;  // `in` is the trailing dims of `out`: i % numel(in)
  int64_t numel = 1;
  BcastIndex(const Shape& in, const Shape& out) {
    nd = int(out.size());
    numel = kiln::numel(in);
    const size_t off = out.size() - in.size();
    int64_t st = 1;
    for (size_t k = out.size(); k-- > 0;) {
      const int64_t din = k >= off ? in[k - off] : 1;
      dims[k] = out[k];
      strides[k] = din == 1 ? 0 : st;
      if (k >= off && din != out[k]) trailing = false;  // else i % numel(in) is the index
      st *= din;
    }
  }
  int64_t operator()(int64_t i) const {
    if (trailing) return numel ? i % numel : 0;
    int64_t r = 0;
    for (int k = nd; k-- > 0;) {
      r += (i % dims[k]) * strides[k];
      i /= dims[k];
    }
    return r;
  }
};

// Doubles of a float tensor, contiguous.
std::vector<double> as_doubles(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<double> v(size_t(c.numel()));
  KILN_DISPATCH(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = c.data<T>();
    for (size_t k = 0; k < v.size(); ++k) v[k] = double(convert_value<double>(p[k]));
  });
  return v;
}

// Fills p[0, n) with the samples (OpenMP threads above 4096 elements: each sample costs ~50 ns).
template <typename T>
void gamma_fill(T* p, int64_t n, const std::vector<double>& alpha, const std::vector<double>& beta,
                const BcastIndex& ia, const BcastIndex& ib, const std::array<uint32_t, 2>& key, uint64_t off) {
#pragma omp parallel for schedule(static) if (n >= 4096 && !omp_in_parallel())
  for (int64_t i = 0; i < n; ++i) {
    double x = gamma_sample(alpha[size_t(ia(i))], key, off, uint64_t(i));
    if (!beta.empty()) x *= beta[size_t(ib(i))];
    p[i] = convert_value<T>(x);
  }
}

std::vector<TensorMeta> infer_gamma(const TV& in, const Attrs& a) {
  const char* op = in.size() == 2 ? "Gamma" : "RandomGamma";
  const Shape out = attr_shape(a);
  for (const Tensor& t : in) {
    KILN_CHECK(t.dtype() == DType::Float16 || t.dtype() == DType::Float32 || t.dtype() == DType::Float64, Type,
               "For '", op, "', 'alpha' and 'beta' must be Float16, Float32 or Float64 tensors, but got ",
               dtype_name(t.dtype()), ".");
    KILN_CHECK(t.dtype() == in[0].dtype(), Type, "For '", op, "', 'beta' must have alpha's dtype ",
               dtype_name(in[0].dtype()), ", but got ", dtype_name(t.dtype()), ".");
    KILN_CHECK(broadcast_shapes(t.shape(), out, op) == out, Value, "For '", op, "', the parameter of shape ",
               shape_str(t.shape()), " does not broadcast to the output shape ", shape_str(out), ".");
  }
  return {{out, in[0].dtype()}};
}
void run_gamma(const TV& in, TV& out, const Attrs& a) {
  const char* op = in.size() == 2 ? "gamma" : "random_gamma";  // the public names: the values are checked here
  const std::vector<double> alpha = as_doubles(in[0]);
  std::vector<double> beta;
  for (double v : alpha)
    KILN_CHECK(v > 0.0, Value, "For '", op, "', 'alpha' must be positive, but got ", v, ".");
  if (in.size() == 2) {
    beta = as_doubles(in[1]);
    for (double v : beta) KILN_CHECK(v > 0.0, Value, "For '", op, "', 'beta' must be positive, but got ", v, ".");
  }
  const uint64_t off = draw_offset(a);
  const uint64_t seed = uint64_t(a.i("seed"));
  const std::array<uint32_t, 2> key{uint32_t(seed), uint32_t(seed >> 32)};
  const int64_t n = out[0].numel();
  const BcastIndex ia(in[0].shape(), out[0].shape());
  const BcastIndex ib(in.size() == 2 ? in[1].shape() : Shape{}, out[0].shape());
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) gamma_fill(out[0].data<T>(), n, alpha, beta, ia, ib, key, off);
  });
}

// ---- KaiserWindow(; window_length, periodic, beta, dtype): np.kaiser's I0(beta sqrt(1 - t^2)) / I0(beta), t =
// 2n/(M - 1) - 1, M = N + 1 for a periodic window (the symmetric one of N + 1 points without its last), formed in
// double as i0e(x)/i0e(beta) e^(|x| - |beta|) (I0 is even and |x| <= |beta|), so a large beta does not overflow.
std::vector<TensorMeta> infer_kaiser(const TV&, const Attrs& a) {
  const int64_t n = a.i("window_length");
  const DType dt = a.dtype("dtype");
  KILN_CHECK(n >= 0, Value, "For 'KaiserWindow', 'window_length' must be >= 0, but got ", n, ".");
  KILN_CHECK(is_floating(dt), Type, "For 'KaiserWindow', 'dtype' must be a float type, but got ", dtype_name(dt), ".");
  return {{Shape{n}, dt}};
}
void run_kaiser(const TV&, TV& out, const Attrs& a) {
  const int64_t n = a.i("window_length");
  const double beta = a.f("beta");
  const int64_t m = a.b("periodic") ? n + 1 : n;
  const double eb = special::bessel_i0e(beta);
  KILN_DISPATCH(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* p = out[0].data<T>();
      for (int64_t k = 0; k < n; ++k) {
        double w = 1.0;
        if (n > 1) {
          const double t = double(k) * (2.0 / double(m - 1)) - 1.0;
          const double x = beta * std::sqrt(std::max(1.0 - t * t, 0.0));
          w = special::bessel_i0e(x) / eb * std::exp(std::fabs(x) - std::fabs(beta));
        }
        p[k] = convert_value<T>(w);
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

void check_shape(const Shape& s, const char* op) {
  for (int64_t d : s)
    KILN_CHECK(d >= 0, Value, "For '", op, "', the shape must not have negative dimensions, but got ", shape_str(s), ".");
}

}  // namespace

namespace ops_impl {
void register_creation() {
  register_kernel(OpId::Fill, infer_shape_dtype, run_fill);
  register_kernel(OpId::Arange, infer_range, run_range);
  register_kernel(OpId::TrilIndices, infer_tri_indices<true>, run_tri_indices<true>);
  register_kernel(OpId::TriuIndices, infer_tri_indices<false>, run_tri_indices<false>);
  register_kernel(OpId::StandardNormal, infer_shape_dtype, run_normal);
  register_kernel(OpId::UniformReal, infer_shape_dtype, run_uniform);
  register_kernel(OpId::UniformInt, infer_shape_dtype, run_uniform_int);
  register_kernel(OpId::RandomGamma, infer_gamma, run_gamma);
  register_kernel(OpId::Gamma, infer_gamma, run_gamma);
  register_kernel(OpId::KaiserWindow, infer_kaiser, run_kaiser);
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
