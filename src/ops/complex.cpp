// Complex64 / Complex128 (docs/decisions/complex-dtypes.md). Two ops move between a complex tensor and its
// (real, imag) pairs: ViewAsReal (shape S -> S + [2], Float32/64) and ViewAsComplex (back). Every other complex op
// is a composition of real ops over those pairs, run by `apply` (src/ops/op.cpp) through complex_impl::apply:
// the real ops record their own tape nodes and graph nodes, so both modes and the gradients follow from the real
// ops. Gradients follow MindSpore's convention (checked with MindSpore 2.10): the gradient of a real loss L with
// respect to z = x + iy is dL/dx + i dL/dy, which is what ViewAsReal's and ViewAsComplex's bprops give.
#include "complex.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "families.h"
#include "kiln/error.h"
#include "kiln/ops.h"

namespace kiln {
namespace {
using TV = std::vector<Tensor>;

std::vector<TensorMeta> infer_view_as_real(const TV& in, const Attrs&) {
  const DType t = in[0].dtype();
  KILN_CHECK(is_complex(t), Type, "For 'ViewAsReal', the input must be a Complex64 or Complex128 tensor, but got ",
             dtype_name(t), ".");
  Shape s = in[0].shape();
  s.push_back(2);
  return {{s, complex_part_dtype(t)}};
}
std::vector<TensorMeta> infer_view_as_complex(const TV& in, const Attrs&) {
  const DType t = in[0].dtype();
  KILN_CHECK(t == DType::Float32 || t == DType::Float64, Type, "For 'ViewAsComplex', the input must be a Float32 "
             "or Float64 tensor, but got ", dtype_name(t), ".");
  const Shape& s = in[0].shape();
  KILN_CHECK(!s.empty() && s.back() == 2, Value, "For 'ViewAsComplex', the last dimension of the input must be 2 "
             "(real, imag), but got shape ", shape_str(s), ".");
  return {{Shape(s.begin(), s.end() - 1), t == DType::Float32 ? DType::Complex64 : DType::Complex128}};
}
// Both ops copy the bytes: a complex element is its (real, imag) pair of floats.
void run_copy_bytes(const TV& in, TV& out, const Attrs&) {
  Tensor c = in[0].contiguous();
  std::memcpy(out[0].raw_data(), c.raw_data(), size_t(out[0].numel()) * itemsize(out[0].dtype()));
}
TV bp_view_as_real(const TV&, const TV&, const TV& g, const Attrs&) {
  return {g[0].defined() ? ops::view_as_complex(g[0]) : Tensor()};
}
TV bp_view_as_complex(const TV&, const TV&, const TV& g, const Attrs&) {
  return {g[0].defined() ? ops::view_as_real(g[0]) : Tensor()};
}

// ---- the compositions ----
DType real_of(DType t) { return complex_part_dtype(t); }

// x (cast to the complex dtype ct) as its pairs, shape S + [2].
Tensor pairs(const Tensor& x, DType ct) { return ops::view_as_real(x.dtype() == ct ? x : ops::cast(x, ct)); }
// The real and imaginary parts of x (cast to ct), each of shape S + [1].
std::pair<Tensor, Tensor> parts(const Tensor& x, DType ct) {
  TV p = ops::split(pairs(x, ct), {1, 1}, -1);
  return {p[0], p[1]};
}
// The complex tensor of parts re, im of shape S + [1].
Tensor join(const Tensor& re, const Tensor& im) { return ops::view_as_complex(ops::concat({re, im}, -1)); }
// Drops the trailing [1] of a part.
Tensor squeeze_last(const Tensor& p) { return ops::squeeze(p, {p.ndim() - 1}); }
Tensor unsqueeze_last(const Tensor& p) { return ops::expand_dims(p, p.ndim()); }

[[noreturn]] void refuse(OpId id, const TV& in) {
  DType t = DType::Complex64;
  for (const Tensor& x : in)
    if (is_complex(x.dtype())) { t = x.dtype(); break; }
  KILN_FAIL(Type, "For '", op_name(id), "', the dtype ", dtype_name(t), " is not supported (Kiln's complex ops: "
            "docs/decisions/complex-dtypes.md).");
}

DType binary_ct(const TV& in) { return promote_types(in[0].dtype(), in[1].dtype(), in[0].weak(), in[1].weak()); }

// Complex multiplication of parts (4 real products).
std::pair<Tensor, Tensor> cmul(const Tensor& ar, const Tensor& ai, const Tensor& br, const Tensor& bi) {
  return {ops::sub(ops::mul(ar, br), ops::mul(ai, bi)), ops::add(ops::mul(ar, bi), ops::mul(ai, br))};
}
// a / b of parts by Smith's scaling (NumPy's; Note [complex division]).
Tensor cdiv(const Tensor& ar, const Tensor& ai, const Tensor& br, const Tensor& bi) {
  // Note [complex division]: a conj(b) / |b|^2 overflows or underflows |b|^2 for |b| beyond ~1e19 or below ~1e-19
  // in complex64 ((1+2i) / (1e-30+1e-30i) gave inf+infi, NumPy 1.5e30+5e29i). Smith: with |br| >= |bi|,
  // r = bi/br, d = br + bi r, a/b = ((ar + ai r) + i (ai - ar r)) / d; otherwise the same with the parts' roles
  // swapped. Both branches are computed and selected, each with its divisor replaced by 1 where the other branch
  // is taken (so that no inf/NaN of the unused branch reaches the gradient). b = 0 gives ar/|br| + i ai/|br|
  // (+-inf, or NaN for a 0 part), NumPy's.
  Tensor zero = ops::zeros_like(br), one = ops::ones_like(br);
  Tensor first = ops::greater_equal(ops::abs(br), ops::abs(bi));
  Tensor b0 = ops::logical_and(ops::equal(br, zero), ops::equal(bi, zero));
  Tensor br1 = ops::select(ops::logical_or(ops::logical_not(first), b0), one, br);
  Tensor bi2 = ops::select(first, one, bi);
  Tensor r1 = ops::div(bi, br1), r2 = ops::div(br, bi2);
  Tensor d1 = ops::add(br1, ops::mul(bi, r1)), d2 = ops::add(bi2, ops::mul(br, r2));
  Tensor re = ops::select(first, ops::div(ops::add(ar, ops::mul(ai, r1)), d1),
                          ops::div(ops::add(ops::mul(ar, r2), ai), d2));
  Tensor im = ops::select(first, ops::div(ops::sub(ai, ops::mul(ar, r1)), d1),
                          ops::div(ops::sub(ops::mul(ai, r2), ar), d2));
  Tensor abr = ops::abs(br);
  return join(ops::select(b0, ops::div(ar, abr), re), ops::select(b0, ops::div(ai, abr), im));
}
// |z| of parts: the Hypot kernel (C99 hypot: no overflow or underflow of re^2 + im^2, so |3e30 + 4e30i| is 5e30 in
// complex64, as MindSpore 2.10's and NumPy's abs; gradient (re, im) / |z|, 0 at the origin).
Tensor cabs(const Tensor& re, const Tensor& im) { return ops::hypot(re, im); }

// The reduction's axes of x (empty: all) as non-negative axes, so that they name the same axes of x's pairs.
Attrs pair_reduce_attrs(const Tensor& x, const Attrs& a, const char* op) {
  ops::Axes ax = a.ints("axis");
  if (ax.empty()) for (int64_t i = 0; i < x.ndim(); ++i) ax.push_back(i);
  else for (auto& v : ax) v = normalize_axis(v, x.ndim(), op);
  Attrs r = a;
  for (auto& kv : r.items)
    if (std::string_view(kv.first) == "axis") kv.second = ax;
  return r;
}
}  // namespace

namespace complex_impl {
bool needs_composition(OpId id, const TV& inputs) {
  bool any = false;
  for (const Tensor& x : inputs) any = any || (x.defined() && is_complex(x.dtype()));
  if (!any) return false;
  switch (id) {
    // Ops that run on complex tensors themselves: views, copies (copy_into converts), Assign (a copy into a
    // Parameter), Depend.
    case OpId::ViewAsReal: case OpId::ViewAsComplex: case OpId::Cast: case OpId::Identity: case OpId::StopGradient:
    case OpId::Reshape: case OpId::Transpose: case OpId::BroadcastTo: case OpId::Concat: case OpId::StridedSlice:
    case OpId::StridedSliceGrad: case OpId::Depend: case OpId::TensorCopy: case OpId::Assign:
    case OpId::Gather:  // copies rows of bytes (the indices are integers)
    case OpId::TensorScatterUpdate:  // copies slices of bytes (x[mask] = v, ops.tensor_scatter_update)
      return false;
    default:
      return true;
  }
}

TV apply(OpId id, const TV& in, const Attrs& a) {
  switch (id) {
    case OpId::Add: case OpId::Sub: {
      const DType ct = binary_ct(in);
      Tensor pa = pairs(in[0], ct), pb = pairs(in[1], ct);
      return {ops::view_as_complex(id == OpId::Add ? ops::add(pa, pb) : ops::sub(pa, pb))};
    }
    case OpId::Mul: case OpId::Div: {
      const DType ct = binary_ct(in);
      auto [ar, ai] = parts(in[0], ct);
      auto [br, bi] = parts(in[1], ct);
      if (id == OpId::Mul) {
        auto [re, im] = cmul(ar, ai, br, bi);
        return {join(re, im)};
      }
      return {cdiv(ar, ai, br, bi)};
    }
    case OpId::Neg: return {ops::view_as_complex(ops::neg(ops::view_as_real(in[0])))};
    case OpId::Square: {
      auto [r, i] = parts(in[0], in[0].dtype());
      auto [re, im] = cmul(r, i, r, i);
      return {join(re, im)};
    }
    case OpId::Equal: case OpId::NotEqual: {
      const DType ct = binary_ct(in);
      Tensor pa = pairs(in[0], ct), pb = pairs(in[1], ct);
      const int64_t last = std::max(pa.ndim(), pb.ndim()) - 1;
      Tensor eq = ops::reduce_all(ops::equal(pa, pb), {last}, false);
      return {id == OpId::Equal ? eq : ops::logical_not(eq)};
    }
    case OpId::Abs: {  // MindSpore 2.10: ops.abs of a complex tensor is complex, |z| + 0j (ComplexAbs is real)
      auto [r, i] = parts(in[0], in[0].dtype());
      Tensor m = cabs(r, i);
      return {join(m, ops::zeros_like(m))};
    }
    case OpId::Exp: {
      // e^x (cos y + i sin y). C99's cexp: y = 0 gives e^x + iy exactly (e^x sin y would be inf * 0 = NaN for
      // x = inf): there the imaginary part is y * e^x, e^x replaced by 1 where it is inf, which keeps the value
      // (+-0) and the gradient e^x cos 0 = e^x with respect to y (MindSpore 2.10's).
      auto [r, i] = parts(in[0], in[0].dtype());
      const DType rt = real_of(in[0].dtype());
      Tensor e = ops::exp(r);
      Tensor e_fin = ops::select(ops::equal(e, Tensor::scalar(std::numeric_limits<double>::infinity(), rt, true)),
                                 ops::ones_like(e), e);
      Tensor im = ops::select(ops::equal(i, ops::zeros_like(i)), ops::mul(i, e_fin), ops::mul(e, ops::sin(i)));
      return {join(ops::mul(e, ops::cos(i)), im)};
    }
    case OpId::Log: {  // log|z| + i arg z
      auto [r, i] = parts(in[0], in[0].dtype());
      return {join(ops::log(cabs(r, i)), ops::atan2(i, r))};
    }
    case OpId::Sqrt: {
      // The principal root (NumPy's, C99's csqrt) by Kahan's formula, t = sqrt((|x| + |z|) / 2): x >= 0 gives
      // t + i y/(2t), x < 0 gives |y|/(2t) +- i t with y's sign (-0.0 included: atan2(y, -1) < 0). No cancellation,
      // so sqrt(-4 + 0i) is exactly 2i (the polar form sqrt|z| (cos(arg/2) + i sin(arg/2)) gave -8.7e-8 + 2i).
      auto [r, i] = parts(in[0], in[0].dtype());
      const DType rt = real_of(in[0].dtype());
      auto c = [&](double v) { return Tensor::scalar(v, rt, true); };
      Tensor t = ops::sqrt(ops::mul(ops::add(ops::abs(r), cabs(r, i)), c(0.5)));
      Tensor ts = ops::select(ops::equal(t, ops::zeros_like(t)), ops::ones_like(t), t);  // z = 0: no 0/0
      Tensor half_over_t = ops::div(c(0.5), ts);
      Tensor nonneg = ops::greater_equal(r, ops::zeros_like(r));
      Tensor y_neg = ops::less(ops::atan2(i, c(-1.0)), c(0.0));
      // |y| / (2t) as y * (+-1/(2t)) with y's sign: at y = +-0 the gradient is the one-sided one of the root taken
      // (MindSpore 2.10: d Re sqrt(z) / dy = 0.25 at z = -4 + 0i), not abs's 0.
      Tensor re = ops::select(nonneg, t, ops::mul(i, ops::select(y_neg, ops::neg(half_over_t), half_over_t)));
      Tensor im = ops::select(nonneg, ops::mul(i, half_over_t), ops::select(y_neg, ops::neg(t), t));
      Tensor y_inf = ops::equal(ops::abs(i), c(std::numeric_limits<double>::infinity()));  // C99: inf + iy
      return {join(ops::select(y_inf, ops::abs(i), re), ops::select(y_inf, i, im))};
    }
    case OpId::ReduceSum: case OpId::ReduceMean: {
      // A 0-d tensor reduces over no axis: itself (the pairs' reduction over "all axes" would sum its parts).
      if (in[0].ndim() == 0) return {ops::identity(in[0])};
      Tensor p = ops::view_as_real(in[0]);
      return {ops::view_as_complex(apply1(id, {p}, pair_reduce_attrs(in[0], a, op_name(id))))};
    }
    case OpId::MatMul: {
      // (Ar + i Ai)(Br + i Bi) = (Ar Br - Ai Bi) + i (Ar Bi + Ai Br): four real GEMMs on the real kernels (the
      // three-product Gauss form saves one GEMM but loses accuracy when the parts differ in magnitude).
      const DType ct = binary_ct(in);
      auto [ar, ai] = parts(in[0], ct);
      auto [br, bi] = parts(in[1], ct);
      ar = squeeze_last(ar); ai = squeeze_last(ai); br = squeeze_last(br); bi = squeeze_last(bi);
      auto mm = [&](const Tensor& x, const Tensor& y) { return apply1(OpId::MatMul, {x, y}, a); };
      Tensor re = ops::sub(mm(ar, br), mm(ai, bi)), im = ops::add(mm(ar, bi), mm(ai, br));
      return {join(unsqueeze_last(re), unsqueeze_last(im))};
    }
    case OpId::UnsortedSegmentSum:  // Gather's bprop: the segment ids are a prefix of x's shape, so of its pairs'
      return {ops::view_as_complex(apply1(id, {ops::view_as_real(in[0]), in[1]}, a))};
    case OpId::Select: {  // cond ? x : y on both parts
      const DType ct = promote_types(in[1].dtype(), in[2].dtype(), in[1].weak(), in[2].weak());
      Tensor c = ops::expand_dims(in[0], in[0].ndim());
      return {ops::view_as_complex(ops::select(c, pairs(in[1], ct), pairs(in[2], ct)))};
    }
    default: break;
  }
  refuse(id, in);
}
}  // namespace complex_impl

namespace ops_impl {
void register_complex() {
  OpDef r;
  r.id = OpId::ViewAsReal;
  r.infer = infer_view_as_real;
  r.cpu = run_copy_bytes;
  r.bprop = bp_view_as_real;
  register_op(r);
  OpDef c;
  c.id = OpId::ViewAsComplex;
  c.infer = infer_view_as_complex;
  c.cpu = run_copy_bytes;
  c.bprop = bp_view_as_complex;
  register_op(c);
}
}  // namespace ops_impl

namespace ops {
Tensor view_as_real(const Tensor& x) { return apply1(OpId::ViewAsReal, {x}); }
Tensor view_as_complex(const Tensor& x) { return apply1(OpId::ViewAsComplex, {x}); }
}  // namespace ops
}  // namespace kiln
