#include "kiln/tensor.h"

#include <atomic>
#include <cstring>
#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

#include "../backend/cpu/loops.h"
#include "kiln/allocator.h"
#include "kiln/autodiff.h"

namespace kiln {

namespace {
std::atomic<uint64_t> g_next_id{1};
}

Storage::Storage(size_t n, Device d) : data(allocator::allocate(n)), nbytes(n), device(d) {}
Storage::Storage(void* d, size_t n, std::shared_ptr<void> owner, Device dev)
    : data(d), nbytes(n), device(dev), external_owner(std::move(owner)) {}
Storage::~Storage() {
  if (!external_owner) allocator::release(data, nbytes);  // external memory goes back to its owner instead
}

TensorImpl::TensorImpl() : id(g_next_id.fetch_add(1, std::memory_order_relaxed)) {}

namespace {
// The work list of the outermost ~TensorImpl on this thread that is releasing a tape (nullptr when none is).
thread_local std::vector<std::shared_ptr<autodiff::Node>>* t_release_list = nullptr;
}  // namespace

TensorImpl::~TensorImpl() {
  if (!grad_fn) return;
  if (t_release_list) {  // inside an outer release: hand the node to its loop instead of recursing
    t_release_list->push_back(std::move(grad_fn));
    return;
  }
  std::vector<std::shared_ptr<autodiff::Node>> pending;
  t_release_list = &pending;
  pending.push_back(std::move(grad_fn));
  while (!pending.empty()) {
    std::shared_ptr<autodiff::Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() != 1) continue;  // someone else still holds the node: it is released with their reference
    // Detach the inputs before the node dies; destroying them here pushes their own nodes onto `pending`.
    std::vector<Tensor> inputs = std::move(n->inputs);
    n.reset();
    inputs.clear();
  }
  t_release_list = nullptr;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Value, "Kiln: a tensor shape must not have negative dimensions, but got ", shape_str(shape), ".");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(size_t(kiln::numel(shape)) * itemsize(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_data(const void* src, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memcpy(t.raw_data(), src, size_t(t.numel()) * itemsize(dtype));
  return t;
}

Tensor Tensor::from_external(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner) {
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Value, "Kiln: a tensor shape must not have negative dimensions, but got ", shape_str(shape), ".");
  KILN_CHECK(owner != nullptr, Value, "Kiln: Tensor::from_external needs an owner that keeps the memory alive.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(data, size_t(kiln::numel(shape)) * itemsize(dtype), std::move(owner));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::scalar(double v, DType dtype, bool weak) {
  Tensor t = empty({}, dtype);
  KILN_DISPATCH_COMPLEX(dtype, [&](auto tag) {
    using T = decltype(tag);
    *t.data<T>() = convert_value<T>(v);
  });
  t.impl()->weak = weak;
  return t;
}

int64_t Tensor::dim(int64_t i) const { return impl_->shape[size_t(normalize_axis(i, ndim(), "Tensor.shape"))]; }

bool Tensor::is_contiguous() const {
  int64_t acc = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] != 1 && impl_->strides[i] != acc) return false;
    acc *= impl_->shape[i];
  }
  return true;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(shape(), dtype());
  copy_into(*this, out);
  return out;
}

Tensor Tensor::alias() const {
  if (is_symbolic()) {
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = impl_->shape;
    impl->strides = impl_->strides;
    impl->dtype = impl_->dtype;
    impl->weak = impl_->weak;
    impl->sym_graph = impl_->sym_graph;
    impl->sym_value = impl_->sym_value;
    return Tensor(std::move(impl));
  }
  return view(shape(), strides(), offset());
}

Tensor Tensor::view(const Shape& shape, const Strides& strides, int64_t offset) const {
  KILN_CHECK(!is_symbolic(), Runtime, "Kiln: a view of a symbolic (graph-mode) tensor can only be made by an op.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = impl_->dtype;
  impl->weak = impl_->weak;
  return Tensor(std::move(impl));
}

double Tensor::item() const {
  KILN_CHECK(!is_symbolic(), Runtime, "Kiln: the value of a tensor is not known while a graph is being compiled.");
  KILN_CHECK(numel() == 1, Value, "Only one element tensors can be converted to Python scalars, but got shape ",
             shape_str(shape()), ".");
  return KILN_DISPATCH_ALL(dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return convert_value<double>(*data<T>());
  });
}

namespace {
// Contiguous runs between float32 and the 16-bit floats, 8 elements per step with AVX2/F16C (the mixed-precision
// casts: every weight, activation and gradient crosses one): float16 by vcvtps2ph/vcvtph2ps (round to nearest
// even, overflow to ±inf, NaN stays NaN), bfloat16 by integer rounding (nearest even; NaN stays NaN, quieted) —
// the same results as Half(float) / BFloat16(float), element for element. Returns false for other pairs.
template <typename S, typename D>
bool convert_run(const S* s, D* d, int64_t n) {
#if defined(__AVX2__) && defined(__F16C__)
  constexpr bool f2h = std::is_same_v<S, float> && std::is_same_v<D, Half>;
  constexpr bool h2f = std::is_same_v<S, Half> && std::is_same_v<D, float>;
  constexpr bool f2b = std::is_same_v<S, float> && std::is_same_v<D, BFloat16>;
  constexpr bool b2f = std::is_same_v<S, BFloat16> && std::is_same_v<D, float>;
  if constexpr (f2h || h2f || f2b || b2f) {
    cpu::parallel_runs(n, [&](int64_t b, int64_t m) {
      const S* sp = s + b;
      D* dp = d + b;
      int64_t i = 0;
      for (; i + 8 <= m; i += 8) {
        if constexpr (f2h) {
          __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(sp + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dp + i), h);
        } else if constexpr (h2f) {
          _mm256_storeu_ps(dp + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + i))));
        } else if constexpr (f2b) {
          const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(sp + i));
          const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
          const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
          const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                                 _mm256_set1_epi32(0x7f800000));
          const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
          const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
          const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dp + i), packed);
        } else {
          const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + i)));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dp + i), _mm256_slli_epi32(w, 16));
        }
      }
      for (; i < m; ++i) dp[i] = convert_value<D>(sp[i]);
    });
    return true;
  }
#endif
  (void)s; (void)d; (void)n;
  return false;
}
}  // namespace

void copy_into(const Tensor& src, const Tensor& dst) {
  KILN_CHECK(src.shape() == dst.shape(), Value, "Kiln copy: shape ", shape_str(src.shape()), " vs ",
             shape_str(dst.shape()), ".");
  if (src.weak() && is_integral(dst.dtype()) && src.numel() > 0 && !src.is_symbolic()) {
    // A Python number (a weak scalar, possibly broadcast) must fit an integer destination, as in NumPy 2
    // (np.uint8 array + 300 and np.array(300, np.uint8) raise OverflowError); floats out of range would be
    // undefined behaviour in C++.
    if (src.dtype() == DType::Int64) {
      const int64_t v = *src.data<int64_t>();
      KILN_CHECK(int_fits(v, dst.dtype()), Overflow, "Python integer ", v, " out of bounds for ",
                 dtype_name(dst.dtype()), ".");
    } else if (src.dtype() == DType::Float64) {
      const double v = *src.data<double>();
      KILN_CHECK(double_fits(v, dst.dtype()), Overflow, "Python float ", v, " out of bounds for ",
                 dtype_name(dst.dtype()), ".");
    }
  }
  // Complex → real keeps the real part, real → complex gives (x, 0) (convert_value).
  KILN_DISPATCH_COMPLEX(src.dtype(), [&](auto stag) {
    using S = decltype(stag);
    KILN_DISPATCH_COMPLEX(dst.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      const S* s = src.data<S>();
      D* d = dst.data<D>();
      std::array<const int64_t*, 2> st{dst.strides().data(), src.strides().data()};
      // On the OpenMP threads from cpu::kParallelMin elements (a transposed view made contiguous, a large copy):
      // each element is written once, so the result does not depend on the split. A destination that overlaps
      // itself (a stride-0 axis: a broadcast view written into) keeps the sequential loop, whose last write wins.
      bool overlapping = false;
      for (size_t i = 0; i < dst.shape().size(); ++i)
        if (dst.shape()[i] > 1 && dst.strides()[i] == 0) overlapping = true;
      auto body = [&](const int64_t* off, int64_t n, const int64_t* inner) {
        D* dp = d + off[0];
        const S* sp = s + off[1];
        if (inner[0] == 1 && inner[1] == 1) {
          if constexpr (std::is_same_v<D, S>)
            cpu::parallel_runs(n, [&](int64_t b, int64_t m) { std::memcpy(dp + b, sp + b, size_t(m) * sizeof(D)); });
          else if (!convert_run(sp, dp, n)) for (int64_t i = 0; i < n; ++i) dp[i] = convert_value<D>(sp[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) dp[i * inner[0]] = convert_value<D>(sp[i * inner[1]]);
        }
      };
      if (overlapping) cpu::strided_loop<2>(dst.shape(), st, body);
      else cpu::strided_loop_par<2>(dst.shape(), st, body);
    });
  });
}

}  // namespace kiln
