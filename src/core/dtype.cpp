#include "kiln/dtype.h"

#include "kiln/error.h"

#include <algorithm>
#include <cmath>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kiln {

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::UInt32: case DType::Float32: return 4;
    case DType::Complex128: return 16;
    default: return 8;  // Int64, UInt64, Float64, Complex64
  }
}

const char* dtype_name(DType t) {
  static const char* names[] = {"Bool", "UInt8", "Int8", "Int16", "Int32", "Int64",
                                "Float16", "BFloat16", "Float32", "Float64", "UInt16", "UInt32", "UInt64",
                                "Complex64", "Complex128"};
  return names[int(t)];
}

const char* dtype_numpy_name(DType t) {
  static const char* names[] = {"bool", "uint8", "int8", "int16", "int32", "int64",
                                "float16", "bfloat16", "float32", "float64", "uint16", "uint32", "uint64",
                                "complex64", "complex128"};
  return names[int(t)];
}

bool int_fits(int64_t v, DType t) {
  switch (t) {
    case DType::UInt8: return v >= 0 && v <= 255;
    case DType::Int8: return v >= -128 && v <= 127;
    case DType::Int16: return v >= -32768 && v <= 32767;
    case DType::Int32: return v >= -2147483648LL && v <= 2147483647LL;
    case DType::UInt16: return v >= 0 && v <= 65535;
    case DType::UInt32: return v >= 0 && v <= 4294967295LL;
    case DType::UInt64: return v >= 0;
    default: return true;
  }
}

bool uint_fits(uint64_t v, DType t) {
  if (v <= uint64_t(INT64_MAX)) return int_fits(int64_t(v), t);
  return !is_integral(t) || t == DType::UInt64;
}

namespace {
thread_local const char* g_current_op = "";
}  // namespace

const char* current_op_name() { return g_current_op; }
OpNameScope::OpNameScope(const char* name) : prev_(g_current_op) { g_current_op = name ? name : ""; }
OpNameScope::~OpNameScope() { g_current_op = prev_; }

void fail_unsupported_dtype(DType t) {
  const char* op = current_op_name();
  if (*op) KILN_FAIL(Type, "For '", op, "', the kernel does not support the dtype ", dtype_name(t), ".");
  KILN_FAIL(Type, "Kiln: this operation does not support the dtype ", dtype_name(t), ".");
}

bool double_fits(double v, DType t) {
  if (!is_integral(t)) return true;
  if (!std::isfinite(v)) return false;
  const double tv = std::trunc(v);
  if (t == DType::Int64) return tv >= -9223372036854775808.0 && tv < 9223372036854775808.0;
  if (t == DType::UInt64) return tv >= 0.0 && tv < 18446744073709551616.0;
  return int_fits(int64_t(tv), t);
}

namespace {
int category(DType t) { return is_bool(t) ? 0 : is_integral(t) ? 1 : is_complex(t) ? 3 : 2; }
}  // namespace

namespace {
// MindSpore's name of an operand in a promotion error: a Python scalar is "Tensor[Int64]" / "Tensor[Float32]".
std::string operand_name(DType t, bool weak) {
  if (!weak) return dtype_name(t);
  return std::string("Tensor[") + (t == DType::Bool ? "Bool" : is_integral(t) ? "Int64" : "Float32") + "]";
}
}  // namespace

DType promote_types(DType a, DType b, bool a_weak, bool b_weak) {
  if (is_wide_unsigned(a) || is_wide_unsigned(b)) {  // MindSpore 2.x: only with itself or with Bool
    if (a == b || b == DType::Bool) return a;
    if (a == DType::Bool) return b;
    const char* op = current_op_name();
    KILN_FAIL(Type, *op ? "For '" : "", op, *op ? "', t" : "T", "ype implicit conversion between ",
              operand_name(a, a_weak), " and ", operand_name(b, b_weak),
              " is not supported. Cast one operand first (Tensor.astype).");
  }
  if (is_complex(a) || is_complex(b)) {  // complex with a real type: complex128 if either holds float64 parts
    if (a_weak && b_weak) return DType::Complex64;  // two Python scalars: the default precision (as Float32)
    if (a_weak != b_weak) {  // a weak (Python scalar) operand does not widen the strong one
      const DType strong = a_weak ? b : a;
      if (is_complex(strong)) return strong;
      return strong == DType::Float64 ? DType::Complex128 : DType::Complex64;
    }
    const bool wide = a == DType::Complex128 || b == DType::Complex128 || a == DType::Float64 || b == DType::Float64;
    return wide ? DType::Complex128 : DType::Complex64;
  }
  if (a_weak && b_weak) {  // two Python scalars: MindSpore's defaults, Float32 / Int64 / Bool
    int c = std::max(a == DType::Bool ? 0 : is_integral(a) ? 1 : 2, b == DType::Bool ? 0 : is_integral(b) ? 1 : 2);
    return c == 2 ? DType::Float32 : c == 1 ? DType::Int64 : DType::Bool;
  }
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  // A weak (Python scalar) operand only decides the category; the other operand's precision is kept.
  if (a_weak != b_weak) {
    DType strong = a_weak ? b : a, weak = a_weak ? a : b;
    int cs = category(strong), cw = category(weak);
    if (cw <= cs) return strong;
    return cw == 2 ? DType::Float32 : DType::Int64;  // int tensor + float scalar → float32; bool + int → int64
  }
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return a > b ? a : b;
  }
  if (ca == 1) {
    // uint8 with a signed type: the smallest signed type wider than 8 bits that also holds the other.
    if (a == DType::UInt8 || b == DType::UInt8) {
      DType other = a == DType::UInt8 ? b : a;
      return other == DType::Int8 ? DType::Int16 : other;
    }
    return a > b ? a : b;
  }
  return DType::Bool;
}

uint16_t half_from_float_slow(float f) {
  uint32_t x; std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x007fffffu;
  int32_t exp = int32_t((x >> 23) & 0xff);
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf or nan
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // overflow → inf
  if (e <= 0) {  // subnormal or zero
    if (e < -10) return uint16_t(sign);
    mant |= 0x00800000u;
    uint32_t shift = uint32_t(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) half_mant++;
    return uint16_t(sign | half_mant);
  }
  uint32_t h = sign | (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  // may carry into the exponent: correct rounding
  return uint16_t(h);
}

float half_to_float_slow(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) out = sign;
    else {  // subnormal: normalize
      int e = -1;
      do { mant <<= 1; e++; } while (!(mant & 0x400u));
      out = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f; std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace kiln
