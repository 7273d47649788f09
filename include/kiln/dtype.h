// Kiln — element types, NumPy-style type promotion, and 16-bit float storage types.
#pragma once
#include <cstdint>
#include <complex>
#include <cstring>
#include <string>
#include <type_traits>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kiln {

// The element types a Tensor can hold. The order is the promotion order within a category (the wide unsigned
// types, appended last, do not promote with other types: see promote_types).
enum class DType : uint8_t {
  Bool = 0, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, UInt16, UInt32, UInt64,
  Complex64, Complex128,  // pairs (real, imag) of float32 / float64 (docs/decisions/complex-dtypes.md)
};
constexpr int kNumDTypes = 15;

// Size of one element in bytes.
size_t itemsize(DType t);
// MindSpore's spelling, e.g. "Float32", "Int64", "Bool", "BFloat16".
const char* dtype_name(DType t);
// NumPy's spelling, e.g. "float32", "int64", "bool".
const char* dtype_numpy_name(DType t);
inline bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
// UInt16, UInt32, UInt64: MindSpore does not convert them implicitly to or from any other type but Bool.
inline bool is_wide_unsigned(DType t) { return t >= DType::UInt16 && t <= DType::UInt64; }
inline bool is_integral(DType t) { return (t >= DType::UInt8 && t <= DType::Int64) || is_wide_unsigned(t); }
inline bool is_bool(DType t) { return t == DType::Bool; }
// Complex64, Complex128: most kernels do not run on them; `apply` runs the complex ops as compositions of real
// ops (src/ops/complex.cpp) and refuses the others with TypeError.
inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
// The real dtype of a complex dtype's parts (Float32 / Float64); other dtypes are returned unchanged.
inline DType complex_part_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}

// Result type of a binary op on two tensors (NumPy rules: bool < int < float; within a category the wider type;
// uint8 with a signed int → the next signed type that holds both; float16 with bfloat16 → float32; complex above
// float: complex with a float64 → complex128, with any other real type the complex type, as NumPy and MindSpore).
// `a_weak`/`b_weak` mark 0-d tensors made from Python scalars: a weak operand does not widen the other operand
// within its category (tensor(float16) + 2.5 stays float16; tensor(int32) + 2.5 becomes float32). Two weak
// operands give MindSpore's defaults for Python scalars: Float32, Int64 or Bool.
// UInt16/32/64 (MindSpore 2.x): with the same type or with Bool (a tensor or a Python bool) the result is that
// type; with any other type, Python ints and floats included, TypeError "For '<op>', type implicit conversion
// between X and UInt64 is not supported." (<op>: the op running on this thread, see current_op_name).
DType promote_types(DType a, DType b, bool a_weak = false, bool b_weak = false);

// Whether the integer `v` is representable in `t` (always true for float and bool types: those round/saturate).
bool int_fits(int64_t v, DType t);
// Whether the unsigned integer `v` is representable in `t` (same rules as int_fits).
bool uint_fits(uint64_t v, DType t);

// The name of the op whose inference or kernel runs on this thread ("" outside ops); set by OpNameScope.
const char* current_op_name();
// Sets current_op_name for its lifetime (restores the previous name after).
struct OpNameScope {
  explicit OpNameScope(const char* name);
  ~OpNameScope();
  OpNameScope(const OpNameScope&) = delete;
  OpNameScope& operator=(const OpNameScope&) = delete;
 private:
  const char* prev_;
};
// Throws TypeError "For '<op>', the kernel does not support the dtype <t>." (a kernel reached with a dtype it
// is not instantiated for; KILN_DISPATCH does this for UInt16/32/64).
[[noreturn]] void fail_unsupported_dtype(DType t);
// Whether the finite value `v` truncated toward zero is representable in the integer type `t` (true for
// non-integer types; false for NaN and infinities with an integer `t`: converting them is undefined in C++).
bool double_fits(double v, DType t);

// IEEE 754 half precision, stored as bits; arithmetic goes through float. The conversions are inline (every
// float16 kernel converts each element in and out): with F16C (every CPU Kiln runs on: x86-64-v3) one
// vcvtps2ph / vcvtph2ps, otherwise (and for the cases F16C would treat differently) the bit-exact portable code
// of half_from_float_slow / half_to_float_slow (dtype.cpp). Out of line they cost ~10 ns per element, 30x the
// bfloat16 kernels (a float16 ReLU of 2^19 elements: 5.8 ms against 0.18 ms).
uint16_t half_from_float_slow(float f);
float half_to_float_slow(uint16_t h);
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) {  // round to nearest even, overflow to inf, subnormals exact; NaN -> the quiet NaN 0x7e00 (sign kept)
#if defined(__F16C__)
    // One vcvtps2ph; a NaN's payload is dropped as in the portable code.
    uint16_t hw = uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    bits = ((hw & 0x7c00u) == 0x7c00u && (hw & 0x3ffu)) ? uint16_t((hw & 0x8000u) | 0x7e00u) : hw;
#else
    bits = half_from_float_slow(f);
#endif
  }
  operator float() const {
#if defined(__F16C__)
    if ((bits & 0x7c00u) != 0x7c00u) return _cvtsh_ss(bits);  // finite values: one vcvtph2ps, exact
#endif
    return half_to_float_slow(bits);  // ±inf and NaN (the payload kept bit for bit)
  }
};
// bfloat16 (the upper 16 bits of a float32), stored as bits; arithmetic goes through float.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) {  // round to nearest even; NaN stays NaN
    uint32_t u; std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) { bits = uint16_t((u >> 16) | 0x40); return; }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = uint16_t(u >> 16);
  }
  operator float() const { uint32_t u = uint32_t(bits) << 16; float f; std::memcpy(&f, &u, 4); return f; }
};

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::Complex64; };
template <> struct dtype_of<std::complex<double>> { static constexpr DType value = DType::Complex128; };
template <typename T> struct is_complex_type : std::false_type {};
template <typename R> struct is_complex_type<std::complex<R>> : std::true_type {};

// The type arithmetic on T is done in: float for the 16-bit float types, T otherwise.
template <typename T> struct compute_type { using type = T; };
template <> struct compute_type<Half> { using type = float; };
template <> struct compute_type<BFloat16> { using type = float; };
template <typename T> using compute_t = typename compute_type<T>::type;

// Converts one value between element types (bool: nonzero → true; float → int truncates, as static_cast).
// Complex → real keeps the real part (NumPy; MindSpore 2.10's Tensor.astype); complex → bool: nonzero; real →
// complex: (v, 0).
template <typename D, typename S> inline D convert_value(S v) {
  if constexpr (std::is_same_v<D, S>) return v;
  else if constexpr (is_complex_type<S>::value && is_complex_type<D>::value) return D(v);
  else if constexpr (is_complex_type<S>::value && std::is_same_v<D, bool>) return v != S(0);
  else if constexpr (is_complex_type<S>::value) return convert_value<D>(v.real());
  else if constexpr (is_complex_type<D>::value)
    return D(static_cast<typename D::value_type>(static_cast<compute_t<S>>(v)));
  else if constexpr (std::is_same_v<D, bool>) return static_cast<compute_t<S>>(v) != compute_t<S>(0);
  else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) return D(static_cast<float>(static_cast<compute_t<S>>(v)));
  else return static_cast<D>(static_cast<compute_t<S>>(v));
}

}  // namespace kiln

// Calls the generic lambda `F` with a value of the C++ element type of `DT` (e.g. `float{}`):
//   KILN_DISPATCH(dt, [&](auto tag) { using T = decltype(tag); ... });
// UInt16/32/64 raise TypeError (fail_unsupported_dtype): kernels that support them use KILN_DISPATCH_ALL.
// Complex64/128 raise TypeError in KILN_DISPATCH and KILN_DISPATCH_ALL (never a kernel on their raw bytes): the
// kernels that support them (copies, fills, printing) use KILN_DISPATCH_COMPLEX.
#define KILN_DISPATCH(DT, ...)                                                         \
  [&](auto&& kiln_f_) {                                                                \
    switch (DT) {                                                                      \
      case ::kiln::DType::UInt16: case ::kiln::DType::UInt32:                         \
      case ::kiln::DType::Complex64: case ::kiln::DType::Complex128:                  \
      case ::kiln::DType::UInt64: ::kiln::fail_unsupported_dtype(DT);                  \
      case ::kiln::DType::Bool: return kiln_f_(bool{});                                \
      case ::kiln::DType::UInt8: return kiln_f_(uint8_t{});                            \
      case ::kiln::DType::Int8: return kiln_f_(int8_t{});                              \
      case ::kiln::DType::Int16: return kiln_f_(int16_t{});                            \
      case ::kiln::DType::Int32: return kiln_f_(int32_t{});                            \
      case ::kiln::DType::Int64: return kiln_f_(int64_t{});                            \
      case ::kiln::DType::Float16: return kiln_f_(::kiln::Half{});                     \
      case ::kiln::DType::BFloat16: return kiln_f_(::kiln::BFloat16{});                \
      case ::kiln::DType::Float32: return kiln_f_(float{});                            \
      default: return kiln_f_(double{});                                               \
    }                                                                                  \
  }(__VA_ARGS__)

// KILN_DISPATCH over every real dtype, UInt16/32/64 included (uint16_t{}, uint32_t{}, uint64_t{}).
#define KILN_DISPATCH_ALL(DT, ...)                                                     \
  [&](auto&& kiln_f_) {                                                                \
    switch (DT) {                                                                      \
      case ::kiln::DType::Complex64: case ::kiln::DType::Complex128:                  \
        ::kiln::fail_unsupported_dtype(DT);                                            \
      case ::kiln::DType::Bool: return kiln_f_(bool{});                                \
      case ::kiln::DType::UInt8: return kiln_f_(uint8_t{});                            \
      case ::kiln::DType::UInt16: return kiln_f_(uint16_t{});                          \
      case ::kiln::DType::UInt32: return kiln_f_(uint32_t{});                          \
      case ::kiln::DType::UInt64: return kiln_f_(uint64_t{});                          \
      case ::kiln::DType::Int8: return kiln_f_(int8_t{});                              \
      case ::kiln::DType::Int16: return kiln_f_(int16_t{});                            \
      case ::kiln::DType::Int32: return kiln_f_(int32_t{});                            \
      case ::kiln::DType::Int64: return kiln_f_(int64_t{});                            \
      case ::kiln::DType::Float16: return kiln_f_(::kiln::Half{});                     \
      case ::kiln::DType::BFloat16: return kiln_f_(::kiln::BFloat16{});                \
      case ::kiln::DType::Float32: return kiln_f_(float{});                            \
      default: return kiln_f_(double{});                                               \
    }                                                                                  \
  }(__VA_ARGS__)

// KILN_DISPATCH_ALL and the complex dtypes (std::complex<float>{}, std::complex<double>{}).
#define KILN_DISPATCH_COMPLEX(DT, ...)                                                 \
  [&](auto&& kiln_f_) {                                                                \
    switch (DT) {                                                                      \
      case ::kiln::DType::Complex64: return kiln_f_(std::complex<float>{});            \
      case ::kiln::DType::Complex128: return kiln_f_(std::complex<double>{});          \
      case ::kiln::DType::Bool: return kiln_f_(bool{});                                \
      case ::kiln::DType::UInt8: return kiln_f_(uint8_t{});                            \
      case ::kiln::DType::UInt16: return kiln_f_(uint16_t{});                          \
      case ::kiln::DType::UInt32: return kiln_f_(uint32_t{});                          \
      case ::kiln::DType::UInt64: return kiln_f_(uint64_t{});                          \
      case ::kiln::DType::Int8: return kiln_f_(int8_t{});                              \
      case ::kiln::DType::Int16: return kiln_f_(int16_t{});                            \
      case ::kiln::DType::Int32: return kiln_f_(int32_t{});                            \
      case ::kiln::DType::Int64: return kiln_f_(int64_t{});                            \
      case ::kiln::DType::Float16: return kiln_f_(::kiln::Half{});                     \
      case ::kiln::DType::BFloat16: return kiln_f_(::kiln::BFloat16{});                \
      case ::kiln::DType::Float32: return kiln_f_(float{});                            \
      default: return kiln_f_(double{});                                               \
    }                                                                                  \
  }(__VA_ARGS__)
