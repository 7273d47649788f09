// Core layer: dtype promotion, 16-bit float conversions, shapes and broadcasting, tensor views, copy_into,
// the caching allocator and the Philox random streams.
#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/allocator.h"
#include "kiln/random.h"
#include "test_util.h"

namespace kiln {
namespace {

using test::expect_error;
using test::make;
using test::values;
using D = DType;

// ---------------------------------------------------------------- dtype promotion

TEST(DTypePromotion, Table) {
  struct Row { D a, b, want; };
  const Row rows[] = {
      {D::Bool, D::Bool, D::Bool},        {D::Bool, D::Int8, D::Int8},         {D::Bool, D::UInt8, D::UInt8},
      {D::Bool, D::Float16, D::Float16},  {D::UInt8, D::Int8, D::Int16},      {D::UInt8, D::Int16, D::Int16},
      {D::UInt8, D::Int32, D::Int32},     {D::UInt8, D::Int64, D::Int64},      {D::Int8, D::Int16, D::Int16},
      {D::Int16, D::Int32, D::Int32},     {D::Int32, D::Int64, D::Int64},      {D::Int8, D::Float16, D::Float16},
      {D::Int64, D::Float16, D::Float16}, {D::Int64, D::Float32, D::Float32},  {D::Int32, D::BFloat16, D::BFloat16},
      {D::Float16, D::BFloat16, D::Float32}, {D::Float16, D::Float32, D::Float32}, {D::BFloat16, D::Float32, D::Float32},
      {D::Float32, D::Float64, D::Float64}, {D::Float16, D::Float64, D::Float64}, {D::BFloat16, D::Float64, D::Float64},
  };
  for (auto& r : rows) {
    EXPECT_EQ(promote_types(r.a, r.b), r.want) << dtype_name(r.a) << " + " << dtype_name(r.b);
    EXPECT_EQ(promote_types(r.b, r.a), r.want) << dtype_name(r.b) << " + " << dtype_name(r.a);
  }
}

TEST(DTypePromotion, SymmetricAndIdempotent) {
  for (int i = 0; i < kNumDTypes; ++i) {
    EXPECT_EQ(promote_types(D(i), D(i)), D(i));
    for (int j = 0; j < kNumDTypes; ++j) {
      if (is_wide_unsigned(D(i)) || is_wide_unsigned(D(j))) continue;  // (UnsignedOnlyWithItselfOrBool)
      EXPECT_EQ(promote_types(D(i), D(j)), promote_types(D(j), D(i)));
      for (bool w : {false, true}) EXPECT_EQ(promote_types(D(i), D(j), w, !w), promote_types(D(j), D(i), !w, w));
    }
  }
}

TEST(DTypePromotion, WeakScalars) {
  // A weak (Python scalar) operand decides only the category; the tensor's precision is kept.
  EXPECT_EQ(promote_types(D::Float16, D::Float32, false, true), D::Float16);   // f16 tensor + 2.5
  EXPECT_EQ(promote_types(D::BFloat16, D::Float32, false, true), D::BFloat16);
  EXPECT_EQ(promote_types(D::Float64, D::Float32, false, true), D::Float64);
  EXPECT_EQ(promote_types(D::Int8, D::Int64, false, true), D::Int8);           // int8 tensor + 3
  EXPECT_EQ(promote_types(D::UInt8, D::Int64, false, true), D::UInt8);
  EXPECT_EQ(promote_types(D::Float16, D::Int64, false, true), D::Float16);     // f16 tensor + 3
  EXPECT_EQ(promote_types(D::Int32, D::Bool, false, true), D::Int32);          // int tensor + True
  EXPECT_EQ(promote_types(D::Int32, D::Float32, false, true), D::Float32);     // int tensor + 2.5 → float32
  EXPECT_EQ(promote_types(D::Int8, D::Float32, false, true), D::Float32);
  EXPECT_EQ(promote_types(D::Bool, D::Int64, false, true), D::Int64);          // bool tensor + 3 → int64
  EXPECT_EQ(promote_types(D::Bool, D::Float32, false, true), D::Float32);
  EXPECT_EQ(promote_types(D::Int64, D::Float32, true, true), D::Float32);      // two scalars: normal rules
}

// MindSpore 2.x: UInt16/32/64 combine only with the same dtype or Bool (tensor or Python bool); every other pair,
// Python ints and floats included, raises TypeError naming both operands (and the op, inside one).
TEST(DTypePromotion, UnsignedOnlyWithItselfOrBool) {
  for (D u : {D::UInt16, D::UInt32, D::UInt64}) {
    EXPECT_EQ(promote_types(u, u), u);
    for (bool w : {false, true}) {
      EXPECT_EQ(promote_types(u, D::Bool, false, w), u);
      EXPECT_EQ(promote_types(D::Bool, u, w, false), u);
    }
    for (int j = 0; j < kNumDTypes; ++j) {
      if (D(j) == u || D(j) == D::Bool) continue;
      for (bool w : {false, true}) {
        if (w && D(j) != D::Int64 && D(j) != D::Float32) continue;  // Python ints / floats are weak Int64 / Float32
        const std::string other = w ? std::string("Tensor[") + dtype_name(D(j)) + "]" : dtype_name(D(j));
        expect_error([&] { promote_types(u, D(j), false, w); }, ErrorKind::Type,
                     {"ype implicit conversion between ", std::string(dtype_name(u)) + " and " + other,
                      "not supported"});
        expect_error([&] { promote_types(D(j), u, w, false); }, ErrorKind::Type,
                     {other + " and " + dtype_name(u)});
      }
    }
  }
  expect_error([&] { ops::add(make({1}, {1}, D::UInt32), make({1}, {1}, D::Int32)); }, ErrorKind::Type,
               {"For 'Add', type implicit conversion between UInt32 and Int32 is not supported"});
  Tensor big = Tensor::empty({2}, D::UInt64);
  big.data<uint64_t>()[0] = UINT64_MAX;
  big.data<uint64_t>()[1] = 3;
  Tensor s = ops::add(big, big);  // wraps modulo 2^64, as NumPy
  EXPECT_EQ(s.dtype(), D::UInt64);
  EXPECT_EQ(s.data<uint64_t>()[0], UINT64_MAX - 1);
  EXPECT_EQ(s.data<uint64_t>()[1], 6u);
  expect_error([&] { ops::neg(big); }, ErrorKind::Type, {"For 'Neg', the kernel does not support the dtype UInt64."});
}

TEST(DType, UnsignedRanges) {
  EXPECT_TRUE(int_fits(65535, D::UInt16));
  EXPECT_FALSE(int_fits(65536, D::UInt16));
  EXPECT_FALSE(int_fits(-1, D::UInt16));
  EXPECT_TRUE(int_fits(4294967295LL, D::UInt32));
  EXPECT_FALSE(int_fits(4294967296LL, D::UInt32));
  EXPECT_FALSE(int_fits(-1, D::UInt64));
  EXPECT_TRUE(int_fits(INT64_MAX, D::UInt64));
  EXPECT_TRUE(uint_fits(UINT64_MAX, D::UInt64));
  EXPECT_FALSE(uint_fits(UINT64_MAX, D::Int64));
  EXPECT_FALSE(uint_fits(uint64_t(INT64_MAX) + 1, D::Int64));
  EXPECT_TRUE(double_fits(18446744073709549568.0, D::UInt64));  // the largest double below 2^64
  EXPECT_FALSE(double_fits(18446744073709551616.0, D::UInt64));
  EXPECT_FALSE(double_fits(-1.0, D::UInt32));
  EXPECT_TRUE(double_fits(-0.5, D::UInt32));  // truncates to 0
  EXPECT_STREQ(dtype_name(D::UInt64), "UInt64");
  EXPECT_STREQ(dtype_numpy_name(D::UInt32), "uint32");
  EXPECT_EQ(itemsize(D::UInt16), 2u);
  EXPECT_EQ(itemsize(D::UInt32), 4u);
  EXPECT_EQ(itemsize(D::UInt64), 8u);
  EXPECT_TRUE(is_integral(D::UInt64) && !is_floating(D::UInt64));
}

TEST(DTypePromotion, ThroughOps) {
  Tensor h = make({1, 2}, {2}, D::Float16);
  EXPECT_EQ(ops::add(h, Tensor::scalar(2.5, D::Float32, true)).dtype(), D::Float16);
  EXPECT_EQ(ops::add(h, Tensor::scalar(2.5, D::Float32, false)).dtype(), D::Float32);
  Tensor i = make({1, 2}, {2}, D::Int32);
  Tensor r = ops::mul(i, Tensor::scalar(1.5, D::Float32, true));
  EXPECT_EQ(r.dtype(), D::Float32);
  test::expect_near(values(r), {1.5, 3.0}, 0);
  EXPECT_EQ(ops::add(make({1}, {1}, D::UInt8), make({1}, {1}, D::Int8)).dtype(), D::Int16);
}

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(D::Float32), "Float32");
  EXPECT_STREQ(dtype_name(D::BFloat16), "BFloat16");
  EXPECT_STREQ(dtype_numpy_name(D::Int64), "int64");
  EXPECT_EQ(itemsize(D::Bool), 1u);
  EXPECT_EQ(itemsize(D::BFloat16), 2u);
  EXPECT_EQ(itemsize(D::Int32), 4u);
  EXPECT_EQ(itemsize(D::Float64), 8u);
}

// ---------------------------------------------------------------- Half / BFloat16

float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
Half half_bits(uint16_t b) { Half h; h.bits = b; return h; }
BFloat16 bf16_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }

TEST(Half, KnownValues) {
  EXPECT_EQ(Half(1.0f).bits, 0x3C00);
  EXPECT_EQ(Half(-2.0f).bits, 0xC000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7BFF);                  // largest finite
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);     // smallest normal
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);     // smallest subnormal
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(float(half_bits(0x3555)), 0.333251953125f);
  EXPECT_EQ(float(half_bits(0x0001)), std::ldexp(1.0f, -24));
}

TEST(Half, EveryValueRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = half_bits(uint16_t(b));
    Half back(f);
    if (std::isnan(f)) EXPECT_TRUE(std::isnan(float(back))) << std::hex << b;
    else ASSERT_EQ(back.bits, b) << std::hex << b << " -> " << f;
  }
}

TEST(Half, RoundsToNearestEven) {
  const float ulp = std::ldexp(1.0f, -10);  // at 1.0
  EXPECT_EQ(Half(1.0f + ulp / 2).bits, 0x3C00);             // tie → even (1.0)
  EXPECT_EQ(Half(1.0f + 3 * ulp / 2).bits, 0x3C02);         // tie → even (1 + 2 ulp)
  EXPECT_EQ(Half(1.0f + ulp / 2 + ulp / 1024).bits, 0x3C01);  // above the tie
  EXPECT_EQ(Half(1.0f + ulp / 2 - ulp / 1024).bits, 0x3C00);  // below the tie
  EXPECT_EQ(Half(2048.0f + 1.0f).bits, Half(2048.0f).bits);   // ulp 2 at 2048: tie → even
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).bits, 0x0000);       // subnormal tie → 0
  EXPECT_EQ(Half(3 * std::ldexp(1.0f, -25)).bits, 0x0002);   // subnormal tie → even
  EXPECT_EQ(Half(std::ldexp(1.0f, -26)).bits, 0x0000);       // underflow
  EXPECT_EQ(Half(2047.5f).bits, Half(2048.0f).bits);        // ulp 1 below 2048: tie 2047|2048 → even 2048
}

TEST(Half, InfNanOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Half(inf).bits, 0x7C00);
  EXPECT_EQ(Half(-inf).bits, 0xFC00);
  EXPECT_TRUE(std::isinf(float(half_bits(0x7C00))));
  EXPECT_TRUE(std::isnan(float(Half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Half(65519.0f).bits, 0x7BFF);  // below the midpoint to 65536: stays finite
  EXPECT_EQ(Half(65520.0f).bits, 0x7C00);  // midpoint: rounds to even → inf
  EXPECT_EQ(Half(1e6f).bits, 0x7C00);
  EXPECT_EQ(Half(-1e6f).bits, 0xFC00);
}

TEST(BFloat16, EveryValueRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16_bits(uint16_t(b));
    BFloat16 back(f);
    if (std::isnan(f)) EXPECT_TRUE(std::isnan(float(back))) << std::hex << b;
    else ASSERT_EQ(back.bits, b) << std::hex << b;
  }
}

TEST(BFloat16, RoundsToNearestEvenInfNan) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  const float ulp = std::ldexp(1.0f, -7);
  EXPECT_EQ(BFloat16(1.0f + ulp / 2).bits, 0x3F80);      // tie → even
  EXPECT_EQ(BFloat16(1.0f + 3 * ulp / 2).bits, 0x3F82);  // tie → even
  EXPECT_EQ(BFloat16(f32_from_bits(0x3F808001)).bits, 0x3F81);  // above the tie
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).bits, 0x7F80);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::infinity()).bits, 0xFF80);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7F80);  // rounds up past the largest bf16
  EXPECT_TRUE(std::isnan(float(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(float(BFloat16(f32_from_bits(0x7F800001)))));  // signalling NaN payload stays NaN
  EXPECT_EQ(float(bf16_bits(0x4049)), 3.140625f);
}

TEST(DType, ConvertValue) {
  EXPECT_EQ(convert_value<int32_t>(2.7), 2);
  EXPECT_EQ(convert_value<int32_t>(-2.7), -2);
  EXPECT_EQ(convert_value<bool>(0.0), false);
  EXPECT_EQ(convert_value<bool>(0.5), true);
  EXPECT_EQ(convert_value<Half>(1.0).bits, 0x3C00);
  EXPECT_EQ(convert_value<float>(Half(0.5f)), 0.5f);
  EXPECT_EQ(convert_value<double>(BFloat16(-3.0f)), -3.0);
}

// ---------------------------------------------------------------- shapes and broadcasting

TEST(Shape, Basics) {
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({2, 0, 3}), 0);
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), Strides{});
  EXPECT_EQ(shape_str({2, 3}), "[2, 3]");
  EXPECT_EQ(shape_str({}), "[]");
}

TEST(Shape, Broadcast) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}, "Add"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1, 3}, {4, 1}, "Add"), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_shapes({}, {5}, "Add"), (Shape{5}));
  EXPECT_EQ(broadcast_shapes({1}, {0}, "Add"), (Shape{0}));
  expect_error([] { broadcast_shapes({2, 3}, {4}, "Add"); }, ErrorKind::Value, {"'Add'", "[2, 3]", "[4]"});
  expect_error([] { ops::add(make({1, 2, 3}, {3}), make({1, 2}, {2})); }, ErrorKind::Value, {"[3]", "[2]"});
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_EQ(normalize_axis(-3, 3, "op"), 0);
  EXPECT_EQ(normalize_axis(0, 0, "op"), 0);
  expect_error([] { normalize_axis(3, 3, "ReduceSum"); }, ErrorKind::Index, {"'ReduceSum'", "[-3, 2]", "3"});
  expect_error([] { normalize_axis(-4, 3, "ReduceSum"); }, ErrorKind::Index, {"-4"});
}

// ---------------------------------------------------------------- tensors, views, copies

TEST(Tensor, ViewsShareStorage) {
  Tensor t = make({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_TRUE(t.is_contiguous());
  Tensor tt = t.view({3, 2}, {1, 3}, 0);  // transpose
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.impl()->storage, t.impl()->storage);
  EXPECT_NE(tt.id(), t.id());
  EXPECT_EQ(values(tt), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  tt.data<float>()[1] = 42.0f;  // raw element 1 of the shared storage = t[0, 1] = tt[1, 0]
  EXPECT_EQ(values(t)[1], 42.0);
  Tensor row1 = t.view({3}, {1}, 3);
  EXPECT_EQ(values(row1), (std::vector<double>{3, 4, 5}));
  row1.data<float>()[2] = -1.0f;
  EXPECT_EQ(values(t)[5], -1.0);
  Tensor a = t.alias();
  EXPECT_EQ(a.impl()->storage, t.impl()->storage);
  EXPECT_EQ(a.impl()->grad_fn, nullptr);
}

TEST(Tensor, ContiguousCopiesOnlyWhenNeeded) {
  Tensor t = make({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(t.contiguous().impl(), t.impl());
  Tensor tt = t.view({3, 2}, {1, 3}, 0);
  Tensor c = tt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.impl()->storage, t.impl()->storage);
  EXPECT_EQ(values(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // A size-1 axis with any stride is still contiguous.
  EXPECT_TRUE(t.view({1, 3}, {99, 1}, 3).is_contiguous());
}

TEST(Tensor, ScalarItemAndErrors) {
  EXPECT_EQ(Tensor::scalar(2.5, D::Float32).item(), 2.5);
  EXPECT_EQ(Tensor::scalar(-3.9, D::Int32).item(), -3.0);
  EXPECT_TRUE(Tensor::scalar(1.0, D::Float32, true).weak());
  EXPECT_EQ(Tensor::scalar(1.0, D::Float32).ndim(), 0);
  expect_error([] { make({1, 2}, {2}).item(); }, ErrorKind::Value, {"[2]"});
  expect_error([] { Tensor::empty({2, -1}, D::Float32); }, ErrorKind::Value, {"[2, -1]"});
  EXPECT_EQ(make({1, 2, 3, 4, 5, 6}, {2, 3}).dim(-1), 3);
  expect_error([] { make({1, 2}, {2}).dim(1); }, ErrorKind::Index, {});
}

TEST(CopyInto, AcrossDTypesAndStrides) {
  // float32 transposed view → float64 contiguous
  Tensor t = make({0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, {2, 3});
  Tensor tt = t.view({3, 2}, {1, 3}, 0);
  Tensor d = Tensor::empty({3, 2}, D::Float64);
  copy_into(tt, d);
  EXPECT_EQ(values(d), (std::vector<double>{0.5, 3.5, 1.5, 4.5, 2.5, 5.5}));
  // float → int32 truncates, → bool is "nonzero"
  Tensor f = make({2.7, -2.7, 0.0, 0.25}, {4});
  Tensor i = Tensor::empty({4}, D::Int32);
  copy_into(f, i);
  EXPECT_EQ(values(i), (std::vector<double>{2, -2, 0, 0}));
  Tensor b = Tensor::empty({4}, D::Bool);
  copy_into(f, b);
  EXPECT_EQ(values(b), (std::vector<double>{1, 1, 0, 1}));
  // into a strided destination (every other element of a larger buffer), through float16
  Tensor big = make({9, 9, 9, 9, 9, 9, 9, 9}, {8}, D::Float16);
  Tensor every_other = big.view({2, 2}, {4, 2}, 1);
  copy_into(make({1, 2, 3, 4}, {2, 2}, D::Int64), every_other);
  EXPECT_EQ(values(big), (std::vector<double>{9, 1, 9, 2, 9, 3, 9, 4}));
  // broadcast source (stride 0) into bfloat16
  Tensor row = make({7, 8}, {2});
  Tensor bc = row.view({3, 2}, {0, 1}, 0);
  Tensor dst = Tensor::empty({3, 2}, D::BFloat16);
  copy_into(bc, dst);
  EXPECT_EQ(values(dst), (std::vector<double>{7, 8, 7, 8, 7, 8}));
  // shape mismatch
  expect_error([&] { copy_into(row, dst); }, ErrorKind::Value, {"[2]", "[3, 2]"});
}

TEST(CopyInto, EveryDTypePair) {
  const std::vector<double> v{0, 1, 3, 100};
  for (int s = 0; s < kNumDTypes; ++s)
    for (int d = 0; d < kNumDTypes; ++d) {
      Tensor src = make(v, {4}, D(s));
      Tensor dst = Tensor::empty({4}, D(d));
      copy_into(src, dst);
      std::vector<double> want = v;
      if (D(s) == D::Bool || D(d) == D::Bool) want = {0, 1, 1, 1};
      EXPECT_EQ(values(dst), want) << dtype_name(D(s)) << " -> " << dtype_name(D(d));
    }
}

TEST(DType, IntFitsAndDoubleFits) {
  EXPECT_TRUE(int_fits(255, D::UInt8));
  EXPECT_FALSE(int_fits(256, D::UInt8));
  EXPECT_FALSE(int_fits(-1, D::UInt8));
  EXPECT_TRUE(int_fits(-128, D::Int8));
  EXPECT_FALSE(int_fits(-129, D::Int8));
  EXPECT_FALSE(int_fits(32768, D::Int16));
  EXPECT_TRUE(int_fits(2147483647LL, D::Int32));
  EXPECT_FALSE(int_fits(3000000000LL, D::Int32));
  EXPECT_TRUE(int_fits(std::numeric_limits<int64_t>::min(), D::Int64));
  EXPECT_TRUE(int_fits(1000, D::Float16));  // floats round/saturate: always representable
  EXPECT_TRUE(double_fits(255.9, D::UInt8));  // truncates toward zero to 255
  EXPECT_FALSE(double_fits(256.0, D::UInt8));
  EXPECT_TRUE(double_fits(-0.5, D::UInt8));
  EXPECT_FALSE(double_fits(1e10, D::Int32));
  EXPECT_FALSE(double_fits(9223372036854775808.0, D::Int64));
  EXPECT_TRUE(double_fits(-9223372036854775808.0, D::Int64));
  EXPECT_FALSE(double_fits(std::nan(""), D::Int32));
  EXPECT_FALSE(double_fits(INFINITY, D::Int64));
  EXPECT_TRUE(double_fits(INFINITY, D::Float32));
}

TEST(CopyInto, PythonScalarsMustFitIntegerDestinations) {
  // A weak (Python) int out of range raises Overflow, as NumPy 2; in range it converts exactly.
  Tensor dst = Tensor::empty({2}, D::UInt8);
  Tensor w300 = Tensor::scalar(300, D::Int64, true);
  expect_error([&] { copy_into(w300.view({2}, {0}, 0), dst); }, ErrorKind::Overflow, {"300", "UInt8"});
  copy_into(Tensor::scalar(255, D::Int64, true).view({2}, {0}, 0), dst);
  EXPECT_EQ(values(dst), (std::vector<double>{255, 255}));
  expect_error([&] { copy_into(Tensor::scalar(1e10, D::Float64, true).view({2}, {0}, 0), Tensor::empty({2}, D::Int32)); },
               ErrorKind::Overflow, {"Int32"});
  // A strong (tensor) value converts as static_cast / NumPy's astype: no check.
  copy_into(make({300, 1}, {2}, D::Int64), dst);
  EXPECT_EQ(values(dst), (std::vector<double>{44, 1}));
  // Through the ops: arithmetic raises, comparisons are exact, full checks its value.
  Tensor u8 = make({1, 255}, {2}, D::UInt8);
  expect_error([&] { ops::add(u8, w300); }, ErrorKind::Overflow, {"300", "UInt8"});
  EXPECT_EQ(values(ops::less(u8, w300)), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(ops::equal(u8, Tensor::scalar(-1, D::Int64, true))), (std::vector<double>{0, 0}));
  expect_error([&] { ops::full({2}, 1e10, D::Int32); }, ErrorKind::Overflow, {"'Fill'", "Int32"});
  EXPECT_EQ(values(ops::full({1}, -128, D::Int8)), (std::vector<double>{-128}));
}

// ---------------------------------------------------------------- allocator

TEST(Allocator, ReusesBlocks) {
  auto step = [] {
    Tensor a = ops::standard_normal({64, 32}, D::Float32, 1, 0);
    Tensor b = ops::standard_normal({32, 16}, D::Float32, 1, 1);
    Tensor c = ops::relu(ops::add(ops::matmul(a, b), Tensor::scalar(1.0, D::Float32, true)));
    Tensor d = ops::mul(c, c);
    return values(d)[0];
  };
  step();
  step();
  size_t allocs = allocator::stats().system_allocs;
  for (int i = 0; i < 50; ++i) step();
  EXPECT_EQ(allocator::stats().system_allocs, allocs) << "a steady loop must not call the system allocator";
  auto s = allocator::stats();
  EXPECT_GT(s.bytes_cached, 0u);
  EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
}

TEST(Allocator, SizeZeroAndAlignment) {
  void* p = allocator::allocate(0);
  void* q = allocator::allocate(0);
  EXPECT_NE(p, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  allocator::release(p, 0);
  allocator::release(q, 0);
  Tensor t = Tensor::empty({3, 5}, D::Float64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
}

TEST(Allocator, LargerCachedBlockServesSmallerRequestAndCacheIsBounded) {
  const size_t MiB = size_t(1) << 20;
  allocator::empty_cache();
  EXPECT_EQ(allocator::block_size(4000), 4032u);                    // 64-byte multiples up to 4 KiB
  EXPECT_EQ(allocator::block_size(20000), 20480u);                  // four classes per power of two
  EXPECT_EQ(allocator::block_size(3 * MiB + 4), 3 * MiB + 65536u);  // large: 64 KiB multiples
  void* big = allocator::allocate(20 * MiB);
  allocator::release(big, 20 * MiB);
  auto s0 = allocator::stats();
  void* p = allocator::allocate(12 * MiB);  // best fit: the cached 20 MiB block, its tail unmapped
  auto s1 = allocator::stats();
  EXPECT_EQ(s1.system_allocs, s0.system_allocs);
  EXPECT_EQ(s1.bytes_cached + s1.bytes_in_use, s0.bytes_cached + s0.bytes_in_use - 8 * MiB);
  static_cast<char*>(p)[12 * MiB - 1] = 1;  // the whole request is usable
  allocator::release(p, 12 * MiB);

  const size_t old = allocator::set_cache_limit(5 * MiB);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(allocator::allocate(2 * MiB));
  for (void* b : blocks) allocator::release(b, 2 * MiB);
  EXPECT_LE(allocator::stats().bytes_cached, 5 * MiB);
  EXPECT_GT(allocator::stats().bytes_cached, 0u);
  allocator::set_cache_limit(allocator::kAutoLimit);
  EXPECT_EQ(allocator::cache_limit(), old);
  allocator::empty_cache();
  EXPECT_EQ(allocator::stats().bytes_cached, 0u);
  EXPECT_EQ(allocator::stats().cached_blocks, 0u);
}

TEST(Allocator, LargerSmallClassServesSmallerRequestAndAutoBoundFollowsInUse) {
  const size_t KiB = 1024, MiB = KiB * KiB;
  allocator::empty_cache();
  allocator::set_cache_limit(allocator::kAutoLimit);
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(allocator::allocate(300 * KiB));  // class 320 KiB
  for (void* b : blocks) allocator::release(b, 300 * KiB);
  const auto s0 = allocator::stats();
  EXPECT_EQ(allocator::block_size(200 * KiB), 224 * KiB);
  void* p = allocator::allocate(200 * KiB);  // served by a cached 320 KiB block (at most twice its class)
  auto s1 = allocator::stats();
  EXPECT_EQ(s1.system_allocs, s0.system_allocs);
  EXPECT_EQ(s1.bytes_in_use - s0.bytes_in_use, 320 * KiB);  // the block's own class is counted
  EXPECT_EQ(s0.bytes_cached - s1.bytes_cached, 320 * KiB);
  std::memset(p, 1, 200 * KiB);
  void* q = allocator::allocate(100 * KiB);  // class 112 KiB: 320 KiB is more than twice it, so the system
  EXPECT_EQ(allocator::stats().system_allocs, s0.system_allocs + 1);
  allocator::release(p, 200 * KiB);  // back to the 320 KiB class
  allocator::release(q, 100 * KiB);
  auto s2 = allocator::stats();
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s2.bytes_cached, s0.bytes_cached + 112 * KiB);
  EXPECT_EQ(s2.cached_blocks, s0.cached_blocks + 1);

  // The automatic bound: max(64 MiB, bytes in use).
  EXPECT_EQ(allocator::kAutoLimitFloor, 64 * MiB);
  EXPECT_EQ(allocator::cache_limit(), std::max(allocator::kAutoLimitFloor, s2.bytes_in_use));
  void* big = allocator::allocate(100 * MiB);
  EXPECT_EQ(allocator::cache_limit(), allocator::stats().bytes_in_use);
  void* tmp = allocator::allocate(80 * MiB);
  allocator::release(tmp, 80 * MiB);  // 80 MiB ≤ the 100+ MiB in use: cached
  EXPECT_GE(allocator::stats().bytes_cached, 80 * MiB);
  allocator::release(big, 100 * MiB);  // in use falls back under 64 MiB: the cache shrinks to the floor
  auto s3 = allocator::stats();
  EXPECT_EQ(s3.cache_limit, allocator::kAutoLimitFloor);
  EXPECT_LE(s3.bytes_cached, allocator::kAutoLimitFloor);
  allocator::empty_cache();
}

// ---------------------------------------------------------------- Philox

TEST(Philox, KnownAnswer) {
  // Random123's known-answer vector for Philox4x32-10 with counter = key = 0.
  auto r = random::philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(Philox, Determinism) {
  Tensor a = ops::standard_normal({1000}, D::Float32, 42, 7);
  Tensor b = ops::standard_normal({1000}, D::Float32, 42, 7);
  EXPECT_EQ(values(a), values(b));
  EXPECT_NE(values(a), values(ops::standard_normal({1000}, D::Float32, 42, 8)));
  EXPECT_NE(values(a), values(ops::standard_normal({1000}, D::Float32, 43, 7)));
  // A prefix of a longer draw is the shorter draw (counter-based: element i depends only on (seed, offset, i)).
  auto longer = values(ops::standard_normal({1001}, D::Float32, 42, 7));
  auto shorter = values(a);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin()));
  // Moments of 1000 standard normals.
  double m = 0, m2 = 0;
  for (double x : shorter) { m += x; m2 += x * x; }
  m /= 1000;
  m2 = m2 / 1000 - m * m;
  EXPECT_NEAR(m, 0.0, 0.15);
  EXPECT_NEAR(m2, 1.0, 0.15);
  auto u = values(ops::uniform_real({1000}, D::Float64, 3, 0));
  for (double x : u) { EXPECT_GE(x, 0.0); EXPECT_LT(x, 1.0); }
  EXPECT_EQ(u, values(ops::uniform_real({1000}, D::Float64, 3, 0)));
  auto ints = values(ops::uniform_int({1000}, -3, 4, D::Int32, 5, 0));
  for (double x : ints) { EXPECT_GE(x, -3); EXPECT_LT(x, 4); }
}

}  // namespace
}  // namespace kiln
