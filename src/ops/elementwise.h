// Shared machinery of the elementwise op families: broadcasting loops over typed functors, and the
// inference helpers. Functors take and return values in compute_t<T> (float for the 16-bit floats).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

#include "../backend/cpu/loops.h"
#include "kiln/op.h"
#include "kiln/ops.h"

namespace kiln::ew {

template <size_t N> struct UintOf;
template <> struct UintOf<1> { using type = uint8_t; };
template <> struct UintOf<2> { using type = uint16_t; };
template <> struct UintOf<4> { using type = uint32_t; };
template <> struct UintOf<8> { using type = uint64_t; };

// c ? a : b without a branch (c is a Bool element: 0 or 1): a bit-mask blend of the two values, which GCC
// vectorizes; NaNs and signed zeros pass through bit for bit. The ?: form compiles to a data-dependent branch,
// mispredicted half the time on activations (ReLU's backward was 30x slower than a multiply).
template <typename T> inline T blend(bool c, T a, T b) {
  if constexpr (std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8)) {
    using U = typename UintOf<sizeof(T)>::type;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    const U m = U(U(0) - U(c));
    const U r = U((ua & m) | (ub & U(~m)));
    T t;
    std::memcpy(&t, &r, sizeof(T));
    return t;
  } else {
    return c ? a : b;
  }
}

// Note [float16 blocks]: the contiguous runs of a Float16 elementwise loop are computed in blocks of kHalfBlock
// elements: the block is widened to float32 (8 per vcvtph2ps), the functor runs over float32 buffers (vectorized as
// for Float32 inputs) and the results are narrowed back (8 per vcvtps2ph). Element by element the scalar Half
// conversions in the loop did the same work but kept GCC from vectorizing (no vector form of a scalar conversion):
// a float16 ReLU of 2^19 elements took 5.8 ms against bfloat16's 0.18 ms. Results are bit for bit those of
// Half(float) / float(Half): narrow() turns a NaN into the quiet NaN 0x7e00 with its sign, as Half(float) does.
constexpr int64_t kHalfBlock = 256;
// d[i] = float(s[i]) for i < n.
inline void widen(const Half* s, float* d, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
  for (; i < n; ++i) d[i] = float(s[i]);
}
// d[i] = Half(s[i]) for i < n (round to nearest even; NaN -> sign | 0x7e00).
inline void narrow(const float* s, Half* d, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__F16C__)
  const __m128i expm = _mm_set1_epi16(0x7c00), mantm = _mm_set1_epi16(0x3ff), signm = _mm_set1_epi16(int16_t(0x8000)),
                qnan = _mm_set1_epi16(0x7e00), zero = _mm_setzero_si128();
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m128i nan = _mm_andnot_si128(_mm_cmpeq_epi16(_mm_and_si128(h, mantm), zero),
                                         _mm_cmpeq_epi16(_mm_and_si128(h, expm), expm));
    const __m128i fixed = _mm_or_si128(_mm_and_si128(h, signm), qnan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_blendv_epi8(h, fixed, nan));
  }
#endif
  for (; i < n; ++i) d[i] = Half(s[i]);
}
// o[i] = f(x[i]) over a contiguous Float16 run (Note [float16 blocks]).
template <typename O, typename F>
void unary_half_run(const Half* x, O* o, int64_t n, F& f) {
  alignas(32) float xb[kHalfBlock], yb[kHalfBlock];
  for (int64_t b = 0; b < n; b += kHalfBlock) {
    const int64_t k = std::min(kHalfBlock, n - b);
    widen(x + b, xb, k);
    if constexpr (std::is_same_v<O, Half>) {
      for (int64_t j = 0; j < k; ++j) yb[j] = float(f(xb[j]));
      narrow(yb, o + b, k);
    } else {
      for (int64_t j = 0; j < k; ++j) o[b + j] = convert_value<O>(f(xb[j]));
    }
  }
}
// o[i] = f(x[i], y[i]) over contiguous Float16 runs; a null x or y is the scalar xs or ys (Note [float16 blocks]).
template <typename O, typename F>
void binary_half_run(const Half* x, float xs, const Half* y, float ys, O* o, int64_t n, F& f) {
  alignas(32) float xb[kHalfBlock], yb[kHalfBlock], ob[kHalfBlock];
  for (int64_t b = 0; b < n; b += kHalfBlock) {
    const int64_t k = std::min(kHalfBlock, n - b);
    if (x) widen(x + b, xb, k); else std::fill(xb, xb + k, xs);
    if (y) widen(y + b, yb, k); else std::fill(yb, yb + k, ys);
    if constexpr (std::is_same_v<O, Half>) {
      for (int64_t j = 0; j < k; ++j) ob[j] = float(f(xb[j], yb[j]));
      narrow(ob, o + b, k);
    } else {
      for (int64_t j = 0; j < k; ++j) o[b + j] = convert_value<O>(f(xb[j], yb[j]));
    }
  }
}

// out[i] = f(a[i], b[i]) over the broadcast of a and b (both of dtype T) into contiguous `out` (dtype O).
template <typename T, typename O, typename F>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out, F f) {
  using C = compute_t<T>;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  O* po = out.data<O>();
  cpu::DimVec sa, sb;
  cpu::broadcast_strides(a.shape(), a.strides(), out.shape(), sa);
  cpu::broadcast_strides(b.shape(), b.strides(), out.shape(), sb);
  const Strides& so = out.strides();
  std::array<const int64_t*, 3> st{so.data(), sa.data(), sb.data()};
  cpu::strided_loop_par<3>(out.shape(), st, [&](const int64_t* off, int64_t n, const int64_t* in) {
    O* o = po + off[0];
    const T* x = pa + off[1];
    const T* y = pb + off[2];
    if constexpr (std::is_same_v<T, Half>) {
      if (in[0] == 1 && (in[1] == 1 || in[1] == 0) && (in[2] == 1 || in[2] == 0)) {
        const float xs = float(*x), ys = float(*y);
        cpu::parallel_runs(n, [&](int64_t s, int64_t m) {
          binary_half_run(in[1] ? x + s : nullptr, xs, in[2] ? y + s : nullptr, ys, o + s, m, f);
        });
        return;
      }
    }
    if (in[0] == 1 && in[1] == 1 && in[2] == 1) {
      cpu::parallel_runs(n, [&](int64_t s, int64_t m) {
        for (int64_t i = s; i < s + m; ++i) o[i] = convert_value<O>(f(C(x[i]), C(y[i])));
      });
    } else if (in[0] == 1 && in[1] == 1 && in[2] == 0) {
      const C yv = C(*y);
      cpu::parallel_runs(n, [&](int64_t s, int64_t m) {
        for (int64_t i = s; i < s + m; ++i) o[i] = convert_value<O>(f(C(x[i]), yv));
      });
    } else if (in[0] == 1 && in[1] == 0 && in[2] == 1) {
      const C xv = C(*x);
      cpu::parallel_runs(n, [&](int64_t s, int64_t m) {
        for (int64_t i = s; i < s + m; ++i) o[i] = convert_value<O>(f(xv, C(y[i])));
      });
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * in[0]] = convert_value<O>(f(C(x[i * in[1]]), C(y[i * in[2]])));
    }
  });
}

// out[i] = f(x[i]) for x of dtype T into contiguous `out` (dtype O, same shape).
template <typename T, typename O, typename F>
void unary_loop(const Tensor& x, const Tensor& out, F f) {
  using C = compute_t<T>;
  const T* px = x.data<T>();
  O* po = out.data<O>();
  std::array<const int64_t*, 2> st{out.strides().data(), x.strides().data()};
  cpu::strided_loop_par<2>(out.shape(), st, [&](const int64_t* off, int64_t n, const int64_t* in) {
    O* o = po + off[0];
    const T* a = px + off[1];
    if constexpr (std::is_same_v<T, Half>) {
      if (in[0] == 1 && in[1] == 1) {
        cpu::parallel_runs(n, [&](int64_t s, int64_t m) { unary_half_run(a + s, o + s, m, f); });
        return;
      }
    }
    if (in[0] == 1 && in[1] == 1)
      cpu::parallel_runs(n, [&](int64_t s, int64_t m) {
        for (int64_t i = s; i < s + m; ++i) o[i] = convert_value<O>(f(C(a[i])));
      });
    else for (int64_t i = 0; i < n; ++i) o[i * in[0]] = convert_value<O>(f(C(a[i * in[1]])));
  });
}

// Result dtype of a binary op (weak scalars respected).
inline DType binary_dtype(const Tensor& a, const Tensor& b) {
  return promote_types(a.dtype(), b.dtype(), a.weak(), b.weak());
}
// `x` converted to dtype `t` (no copy when it already has it; not recorded on the tape).
inline Tensor as_dtype(const Tensor& x, DType t) {
  if (x.dtype() == t) return x;
  // copy_into raises OverflowError for a Python int (weak scalar) that does not fit an integer `t`.
  Tensor out = Tensor::empty(x.shape(), t);
  copy_into(x, out);
  return out;
}
// Float dtype for ops that are only defined on floats (exp, log, div, ...): integers and bool give float32.
inline DType float_dtype(DType t) { return is_floating(t) ? t : DType::Float32; }

// The result-dtype rules of the schema's generated elementwise ops (ops.yaml `dtype`).
enum class DTypeRule {
  Same,          // the (promoted) input dtype
  Float,         // the input dtype, float32 for integer/bool inputs
  Promote,       // promote_types of the operands (weak scalars respected)
  PromoteFloat,  // promoted, then float32 for integer/bool results
  Bool,          // Bool
  Integer,       // promoted; must be an integer type or Bool (bit operations), else TypeError naming the op
};
// Shape and dtype inference of a generated elementwise op with `Arity` inputs (1 or 2): the input's shape, or the
// broadcast of both (ValueError naming the op when they do not broadcast), and the dtype by `Rule`.
template <OpId Id, int Arity, DTypeRule Rule>
std::vector<TensorMeta> schema_infer(const std::vector<Tensor>& in, const Attrs&) {
  static_assert(Arity == 1 || Arity == 2, "generated elementwise ops are unary or binary");
  Shape s = Arity == 1 ? in[0].shape() : broadcast_shapes(in[0].shape(), in[1].shape(), op_name(Id));
  if constexpr (Rule == DTypeRule::Bool) return {{s, DType::Bool}};  // no promotion: predicates compare any pair
  DType t = Arity == 1 ? in[0].dtype() : binary_dtype(in[0], in[1]);
  if constexpr (Rule == DTypeRule::Float || Rule == DTypeRule::PromoteFloat) t = float_dtype(t);
  if constexpr (Rule == DTypeRule::Integer)
    KILN_CHECK(is_integral(t) || t == DType::Bool, Type, "For '", op_name(Id), "', the input",
               Arity == 1 ? "" : "s", " must be integer or bool Tensors, but got ", dtype_name(in[0].dtype()),
               Arity == 1 ? "" : " and ", Arity == 1 ? "" : dtype_name(in[Arity - 1].dtype()), ".");
  return {{s, t}};
}

// Registers a generated op (the rows of registry_<family>.inc): differentiable exactly when it has a bprop.
inline void schema_register(OpId id, InferFn infer, KernelFn cpu, BpropFn bprop) {
  OpDef d;
  d.id = id;
  d.infer = infer;
  d.cpu = cpu;
  d.bprop = bprop;
  d.differentiable = bprop != nullptr;
  register_op(d);
}

// The cotangent of a broadcast input: g summed down to `like`'s shape and cast to its dtype.
inline Tensor reduce_grad(const Tensor& g, const Tensor& like) {
  Tensor r = g.shape() == like.shape() ? g : ops::sum_to(g, like.shape());
  return r.dtype() == like.dtype() ? r : ops::cast(r, like.dtype());
}

}  // namespace kiln::ew
