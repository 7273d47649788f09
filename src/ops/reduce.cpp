// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, CountNonZero, ReduceAll, ReduceAny (attrs:
// axis — a list, empty = all axes — and keep_dims), Argmax/Argmin, and the sum_to helper used by the bprops of
// broadcasting ops. Every kernel reads its input in its own dtype and converts each element in registers: no
// reduction makes a widened copy of its input (docs/decisions/allocator-cache.md, "Reductions").
//
// Result dtypes (the MindSpore reference is silent, so NumPy's rules are followed):
//   sum, prod: Bool and integer inputs give Int64 (NumPy's default integer), UInt16/32/64 give UInt64 (NumPy's);
//   float inputs keep their dtype.
//   mean: integer/Bool inputs give Float32 (Kiln's default float, as true division does); floats keep theirs.
//   amax, amin: the input dtype. argmax, argmin: Int64.
// Accumulation: floating sums/products/means accumulate in double (so Float16/BFloat16/Float32 are summed at
// least in float32 precision, as required), integer sums/products in int64 / uint64 (wrapping on overflow, as
// NumPy).
// NaN propagates through amax/amin (NumPy's amax); argmax/argmin return the first NaN if any, else the first
// occurrence of the extreme value. Reducing an empty axis: sum → 0, prod → 1, mean → NaN, amax/amin/argmax/argmin
// → ValueError (no identity).
//
// Gradients: sum broadcasts g back; mean divides by the element count; amax/amin route g to the positions equal
// to the result and split it equally among ties (MindSpore's rule) — a NaN result routes g to the NaN inputs only
// (PyTorch's rule); prod uses the product of the other elements,
// computed without dividing by zero (exact when the reduced slice has zero, one or several zeros).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <type_traits>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
using ops::Axes;

// Normalized, sorted, de-duplicated reduction axes (empty input list = all axes). Errors name `op`.
std::vector<int64_t> norm_axes(const Axes& axes, int64_t ndim, const char* op) {
  std::vector<int64_t> r;
  if (ndim == 0) {  // a 0-d tensor: axis 0 / -1 are accepted and reduce nothing
    for (int64_t a : axes) normalize_axis(a, 0, op);
    return r;
  }
  if (axes.empty()) {
    r.resize(size_t(ndim));
    std::iota(r.begin(), r.end(), int64_t(0));
    return r;
  }
  for (int64_t a : axes) r.push_back(normalize_axis(a, ndim, op));
  std::sort(r.begin(), r.end());
  for (size_t i = 1; i < r.size(); ++i)
    KILN_CHECK(r[i] != r[i - 1], Value, "For '", op, "', the axis must not contain duplicates, but got ",
               shape_str(axes), ".");
  return r;
}

// The keep_dims shape (reduced axes set to 1) and the final output shape.
Shape keep_shape(const Shape& s, const std::vector<int64_t>& ax) {
  Shape k = s;
  for (int64_t a : ax) k[size_t(a)] = 1;
  return k;
}
Shape out_shape(const Shape& s, const std::vector<int64_t>& ax, bool keep) {
  if (keep) return keep_shape(s, ax);
  Shape o;
  size_t j = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (j < ax.size() && ax[j] == int64_t(i)) { ++j; continue; }
    o.push_back(s[i]);
  }
  return o;
}

enum class RKind { Sum, Mean, Max, Min, Prod };
const char* rname(RKind k) {
  switch (k) {
    case RKind::Sum: return "ReduceSum";
    case RKind::Mean: return "ReduceMean";
    case RKind::Max: return "ReduceMax";
    case RKind::Min: return "ReduceMin";
    default: return "ReduceProd";
  }
}

DType reduce_dtype(RKind k, DType t) {
  switch (k) {
    case RKind::Sum:
    case RKind::Prod:  // NumPy's: UInt16/32/64 → UInt64 (MindSpore keeps UInt32, which overflows silently)
      return is_floating(t) ? t : is_wide_unsigned(t) ? DType::UInt64 : DType::Int64;
    case RKind::Mean: return ew::float_dtype(t);
    default: return t;
  }
}

template <RKind K>
std::vector<TensorMeta> infer_reduce(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), rname(K));
  if (K == RKind::Max || K == RKind::Min) {
    for (int64_t d : ax)
      KILN_CHECK(x.shape()[size_t(d)] != 0, Value, "For '", rname(K), "', the reduced axis ", d, " of the input of shape ",
                 shape_str(x.shape()), " is empty: the reduction has no identity.");
  }
  return {{out_shape(x.shape(), ax, a.b("keep_dims")), reduce_dtype(K, x.dtype())}};
}

// Accumulates `x` (element type T) into `acc` (type A, laid out contiguously in the keep_dims shape) with
// acc = f(acc, x). Iterates in x's memory order; a reduction over the innermost contiguous axis is a tight loop.
constexpr int kLanes = 8;
// `acc_st`: the accumulator's stride per axis of x (0 on the reduced axes); see accumulate() below. `load` turns an
// element, as its compute_t<T> value, into its accumulated value (A(e), or CountNonZero's e != 0): in registers,
// as it is read.
template <typename T, typename A, typename F, typename L>
void accumulate_strided(const Tensor& x, const int64_t* acc_st, A* acc, F f, L load) {
  const size_t nd = size_t(x.ndim());
  const Shape& xs = x.shape();
  const Strides& xst = x.strides();
  cpu::DimVec os(nd, 0);
  for (size_t i = 0; i < nd; ++i) os[i] = acc_st[i];
  // Order the dims by decreasing input stride so the loop follows memory (a stable insertion sort: the order
  // std::stable_sort gives, without its buffer).
  cpu::DimVec perm(nd, 0);
  for (size_t i = 0; i < nd; ++i) perm[i] = int64_t(i);
  for (size_t i = 1; i < nd; ++i) {
    int64_t p = perm[i];
    size_t j = i;
    for (; j > 0 && std::llabs(xst[size_t(p)]) > std::llabs(xst[size_t(perm[j - 1])]); --j) perm[j] = perm[j - 1];
    perm[j] = p;
  }
  cpu::DimVec sh(nd, 0), sx(nd, 0), so(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    sh[i] = xs[size_t(perm[i])];
    sx[i] = xst[size_t(perm[i])];
    so[i] = os[size_t(perm[i])];
  }
  using C = compute_t<T>;
  const T* px = x.data<T>();
  std::array<const int64_t*, 2> st{so.data(), sx.data()};
  cpu::strided_loop<2>(sh.data(), nd, st, [&](const int64_t* off, int64_t n, const int64_t* in) {
    const T* p = px + off[1];
    A* o = acc + off[0];
    if constexpr (std::is_same_v<T, Half>) {
      // Note [float16 blocks] (elementwise.h): a contiguous Float16 run is widened block by block, then reduced
      // exactly as below (the same lanes in the same order: kHalfBlock is a multiple of kLanes).
      if (in[1] == 1 && (in[0] == 0 || in[0] == 1)) {
        static_assert(ew::kHalfBlock % kLanes == 0, "blocks hold whole lane groups");
        alignas(32) float buf[ew::kHalfBlock];
        if (in[0] == 1) {
          for (int64_t b = 0; b < n; b += ew::kHalfBlock) {
            const int64_t k = std::min(ew::kHalfBlock, n - b);
            ew::widen(p + b, buf, k);
            for (int64_t j = 0; j < k; ++j) o[b + j] = f(o[b + j], load(buf[j]));
          }
          return;
        }
        A v = *o;
        int64_t i = 0;
        if (n >= 2 * kLanes) {
          A lane[kLanes];
          const int64_t full = n / kLanes * kLanes;
          for (int64_t b = 0; b < full; b += ew::kHalfBlock) {
            const int64_t k = std::min(ew::kHalfBlock, full - b);
            ew::widen(p + b, buf, k);
            int64_t j = 0;
            if (b == 0) {
              for (int q = 0; q < kLanes; ++q) lane[q] = load(buf[q]);
              j = kLanes;
            }
            for (; j < k; j += kLanes)
              for (int q = 0; q < kLanes; ++q) lane[q] = f(lane[q], load(buf[j + q]));
          }
          for (int q = 0; q < kLanes; ++q) v = f(v, lane[q]);
          i = full;
        }
        for (; i < n; ++i) v = f(v, load(C(p[i])));
        *o = v;
        return;
      }
    }
    if (in[0] == 0) {
      A v = *o;
      int64_t i = 0;
      if (in[1] == 1 && n >= 2 * kLanes) {
        // Independent partial results (f is associative) so the loop pipelines and vectorizes.
        A lane[kLanes];
        for (int k = 0; k < kLanes; ++k) lane[k] = load(C(p[k]));
        for (i = kLanes; i + kLanes <= n; i += kLanes) {
          // Note [GCC 12 narrow-integer reductions]: GCC 12.2 at -O3 (-march=x86-64-v3) vectorizes this loop
          // wrongly for 1- and 2-byte integer elements accumulated in 64 bits: 24 ones of Int8/Int16/UInt8 summed
          // to 9 whenever the loop ran an odd number of times (clang, -O2 and -fno-tree-loop-vectorize are right).
          // The empty asm keeps the loop vectorizer off this loop for those types (the body's eight lanes are
          // still vectorized as one block; as fast, measured); tests: Reduce.NarrowIntegerSums*.
          if constexpr (std::is_integral_v<T> && sizeof(T) < 4) asm volatile("" : "+r"(i));
          for (int k = 0; k < kLanes; ++k) lane[k] = f(lane[k], load(C(p[i + k])));
        }
        for (int k = 0; k < kLanes; ++k) v = f(v, lane[k]);
      }
      if (in[1] == 1) for (; i < n; ++i) v = f(v, load(C(p[i])));
      else for (; i < n; ++i) v = f(v, load(C(p[i * in[1]])));
      *o = v;
    } else if (in[0] == 1 && in[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(o[i], load(C(p[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * in[0]] = f(o[i * in[0]], load(C(p[i * in[1]])));
    }
  });
}

// Note [threaded reductions]: a reduction that keeps some axis and reduces x's innermost one (LayerNorm's
// statistics over the last axis) is split over the OpenMP threads along the largest kept axis, each thread
// accumulating a block of output elements over its own slice of x. Every output element is accumulated by the
// same code from the same elements in the same order whatever the split (only kept axes are narrowed, so the runs
// over the reduced axes, and their lane partial sums, are unchanged): the numbers do not depend on the thread
// count. A reduction over every axis stays on one thread (splitting it would change its summation order).
// Used from kParallelMin input elements, as the elementwise loops (loops.h).
template <typename T, typename A, typename F, typename L>
void accumulate(const Tensor& x, const std::vector<int64_t>& ax, A* acc, F f, L load) {
  const size_t nd = size_t(x.ndim());
  const Shape& xs = x.shape();
  // Strides of the accumulator (contiguous over the keep_dims shape), 0 on the reduced axes. No heap allocation
  // below cpu::DimVec::kInline dims: small reductions run every train step.
  cpu::DimVec os(nd, 0);
  int64_t split = -1;  // the largest kept axis
  {
    int64_t run = 1;  // contiguous_strides(keep_shape(x.shape(), ax)), then 0 on the reduced axes
    for (size_t i = nd; i-- > 0;) {
      const bool reduced = std::find(ax.begin(), ax.end(), int64_t(i)) != ax.end();
      os[i] = reduced ? 0 : run;
      run *= reduced ? 1 : xs[i];
      if (!reduced && xs[i] >= 2 && (split < 0 || xs[i] > xs[size_t(split)])) split = int64_t(i);
    }
  }
  // Only when x's innermost axis (smallest stride) is reduced: each output element is then a run over x's memory
  // (LayerNorm's statistics). A reduction that keeps the innermost axis (a bias gradient: rows added into a vector)
  // stays serial: split, it measured from 0.9x to 1.3x alone and slower inside the Transformer step.
  int64_t inner = -1;
  for (size_t i = 0; i < nd; ++i)
    if (xs[i] > 1 && (inner < 0 || std::llabs(x.strides()[i]) < std::llabs(x.strides()[size_t(inner)]))) inner = int64_t(i);
  const bool inner_reduced = inner >= 0 && os[size_t(inner)] == 0;
  const int nthr = omp_get_max_threads();
  if (split < 0 || !inner_reduced || nthr < 2 || omp_in_parallel() || x.numel() < cpu::kParallelMin) {
    accumulate_strided<T, A>(x, os.data(), acc, f, load);
    return;
  }
  const int64_t len = xs[size_t(split)];
  // One block per thread (a bias gradient's rows split in two long halves, not in short strided pieces); four
  // per thread when the axis is short, so that the blocks balance.
  const int64_t chunks = len >= 8 * int64_t(nthr) ? int64_t(nthr) : std::min<int64_t>(len, 4 * int64_t(nthr));
  const int64_t xstride = x.strides()[size_t(split)], astride = os[size_t(split)];
  // Block boundaries moved (down, by under a cache line) to where the accumulator's address is 64-byte aligned:
  // when the kept axis is x's innermost one, every row of x updates every accumulator of a block, and a cache line
  // shared by two blocks bounced between the cores on every row (measured: 2x slower on 2 threads than on one).
  const uintptr_t base = reinterpret_cast<uintptr_t>(acc);
  cpu::DimVec bounds(size_t(chunks + 1), 0);
  bounds[size_t(chunks)] = len;
  for (int64_t c = 1; c < chunks; ++c) {
    const int64_t want = len * c / chunks;
    int64_t b = want;
    for (int64_t k = 0; k < 64 && want - k > bounds[size_t(c - 1)]; ++k)
      if ((base + uint64_t(want - k) * uint64_t(astride) * sizeof(A)) % 64 == 0) { b = want - k; break; }
    bounds[size_t(c)] = b;
  }
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = bounds[size_t(c)], hi = bounds[size_t(c + 1)];
    if (hi <= lo) continue;
    Shape s = xs;
    s[size_t(split)] = hi - lo;
    Tensor part = x.view(s, x.strides(), x.offset() + lo * xstride);
    accumulate_strided<T, A>(part, os.data(), acc + lo * astride, f, load);
  }
}
// The plain reductions: each element accumulated as its value.
template <typename T, typename A, typename F>
void accumulate(const Tensor& x, const std::vector<int64_t>& ax, A* acc, F f) {
  accumulate<T, A>(x, ax, acc, f, [](compute_t<T> e) { return A(e); });
}

template <RKind K>
void run_reduce(const TV& in, TV& out, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), rname(K));
  Tensor& o = out[0];
  const int64_t n_out = o.numel();
  int64_t count = 1;
  for (int64_t d : ax) count *= x.shape()[size_t(d)];
  KILN_DISPATCH_ALL(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (K == RKind::Max || K == RKind::Min) {
      // Exact in the compute type; NaN wins.
      std::unique_ptr<C[]> acc(new C[size_t(n_out)]);  // (not std::vector: vector<bool> has no data())
      // Seed with the first element of each slice: take the keep-shaped slice at index 0 of the reduced axes.
      Shape ks = keep_shape(x.shape(), ax);
      Tensor first = x.view(ks, x.strides(), x.offset());
      Tensor firstc = Tensor::empty(ks, x.dtype());
      copy_into(first, firstc);
      const T* pf = firstc.data<T>();
      for (int64_t i = 0; i < n_out; ++i) acc[size_t(i)] = C(pf[i]);
      // Branch-free selects (vectorizable): keep v if it is NaN or not beaten; a NaN e is taken (v >= NaN is false).
      accumulate<T, C>(x, ax, acc.get(), [](C v, C e) {
        if constexpr (K == RKind::Max) return (v != v || v >= e) ? v : e;
        else return (v != v || v <= e) ? v : e;
      });
      T* po = o.data<T>();
      for (int64_t i = 0; i < n_out; ++i) po[i] = convert_value<T>(acc[size_t(i)]);
    } else {
      constexpr bool kFloat = std::is_floating_point_v<C>;
      // Unsigned inputs accumulate in uint64_t: exact modulo 2^64 for UInt64, and no signed-overflow UB. Means
      // accumulate in double for every input (NumPy's: a wrapped integer sum would give a wrong mean).
      constexpr bool kDouble = kFloat || K == RKind::Mean;
      using A = std::conditional_t<kDouble, double, std::conditional_t<std::is_unsigned_v<C>, uint64_t, int64_t>>;
      std::vector<A> acc(size_t(n_out), K == RKind::Prod ? A(1) : A(0));
      if constexpr (K == RKind::Prod) {
        accumulate<T, A>(x, ax, acc.data(), [](A v, A e) {
          if constexpr (kDouble) return A(v * e);
          else return A(uint64_t(v) * uint64_t(e));  // integers wrap modulo 2^64 (no signed-overflow UB)
        });
      } else if constexpr (kDouble) {
        accumulate<T, A>(x, ax, acc.data(), [](A v, A e) { return v + e; });
      } else {  // integer sums wrap like NumPy's int64 (no signed-overflow UB)
        accumulate<T, A>(x, ax, acc.data(), [](A v, A e) { return A(uint64_t(v) + uint64_t(e)); });
      }
      KILN_DISPATCH_ALL(o.dtype(), [&](auto otag) {
        using O = decltype(otag);
        O* po = o.data<O>();
        if constexpr (K == RKind::Mean) {
          const double inv = count == 0 ? std::nan("") : 1.0 / double(count);
          for (int64_t i = 0; i < n_out; ++i) po[i] = convert_value<O>(double(acc[size_t(i)]) * inv);
        } else {
          for (int64_t i = 0; i < n_out; ++i) po[i] = convert_value<O>(acc[size_t(i)]);
        }
      });
    }
  });
}

// ---- CountNonZero, ReduceAll, ReduceAny: attrs axis (a list, empty = all axes) and keep_dims ----
// The number of nonzero elements over the axes (Int64), or whether all / any of them are nonzero (Bool). Each
// element is tested (e != 0: NaN and inf count as nonzero, -0.0 as zero, as NumPy) as it is read and the test is
// accumulated in an int64 per output element, so no mask or widened copy of x is made: the memory is x's and the
// output's. An empty reduction gives 0, True (all), False (any): NumPy's identities. Not differentiable.
enum class NZKind { Count, All, Any };
const char* nzname(NZKind k) { return k == NZKind::Count ? "CountNonZero" : k == NZKind::All ? "ReduceAll" : "ReduceAny"; }

template <NZKind K>
std::vector<TensorMeta> infer_nonzero(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), nzname(K));
  return {{out_shape(x.shape(), ax, a.b("keep_dims")), K == NZKind::Count ? DType::Int64 : DType::Bool}};
}

template <NZKind K>
void run_nonzero(const TV& in, TV& out, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), nzname(K));
  Tensor& o = out[0];
  const int64_t n_out = o.numel();
  int64_t count = 1;  // elements per output element
  for (int64_t d : ax) count *= x.shape()[size_t(d)];
  std::vector<int64_t> acc(size_t(n_out), 0);
  if (x.numel() > 0) {
    KILN_DISPATCH_ALL(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = compute_t<T>;
      accumulate<T, int64_t>(x, ax, acc.data(), [](int64_t v, int64_t e) { return v + e; },
                             [](C e) { return int64_t(e != C(0)); });
    });
  }
  if constexpr (K == NZKind::Count) {
    std::copy(acc.begin(), acc.end(), o.data<int64_t>());
  } else {
    bool* po = o.data<bool>();
    for (int64_t i = 0; i < n_out; ++i) po[i] = K == NZKind::All ? acc[size_t(i)] == count : acc[size_t(i)] > 0;
  }
}

template <NZKind K>
void reg_nonzero(OpId id) {
  OpDef d;
  d.id = id;
  d.infer = infer_nonzero<K>;
  d.cpu = run_nonzero<K>;
  d.differentiable = false;
  register_op(d);
}

// g (the output cotangent) reshaped to the keep_dims shape and broadcast to x's shape.
Tensor expand_grad(const Tensor& g, const Tensor& x, const std::vector<int64_t>& ax) {
  Tensor gk = g.shape() == keep_shape(x.shape(), ax) ? g : ops::reshape(g, keep_shape(x.shape(), ax));
  return ops::broadcast_to(gk, x.shape());
}
Tensor like_dtype(const Tensor& t, const Tensor& x) { return t.dtype() == x.dtype() ? t : ops::cast(t, x.dtype()); }

TV bp_sum(const TV& in, const TV&, const TV& g, const Attrs& a) {
  auto ax = norm_axes(a.ints("axis"), in[0].ndim(), "ReduceSum");
  return {like_dtype(expand_grad(g[0], in[0], ax), in[0])};
}
TV bp_mean(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "ReduceMean");
  int64_t count = 1;
  for (int64_t d : ax) count *= x.shape()[size_t(d)];
  Tensor gs = ops::div(g[0], Tensor::scalar(double(count), g[0].dtype(), true));
  return {like_dtype(expand_grad(gs, x, ax), x)};
}
// g split equally among the positions equal to the extreme value. A NaN result came from the NaN inputs (the
// forward propagates NaN), so g goes to them only (split among several), as PyTorch's max/min backward: the other
// positions get 0, not NaN (NaN == NaN is false, so a plain equality mask would be empty and g/0 poison all).
TV bp_extreme(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "ReduceMax");
  Tensor yb = expand_grad(out[0], x, ax);
  Tensor both_nan = ops::logical_and(ops::not_equal(x, x), ops::not_equal(yb, yb));
  Tensor mask = ops::cast(ops::logical_or(ops::equal(x, yb), both_nan), g[0].dtype());
  Tensor cnt = ops::sum(mask, ax, true);
  Tensor gk = g[0].shape() == cnt.shape() ? g[0] : ops::reshape(g[0], cnt.shape());
  Tensor share = ops::div(gk, cnt);
  return {like_dtype(ops::mul(mask, ops::broadcast_to(share, x.shape())), x)};
}
// d prod / d x_i = prod_{j != i} x_j. With z zeros in the slice: z = 0 → prod/x_i; z = 1 → at the zero, the
// product of the non-zeros, elsewhere 0; z >= 2 → 0.
TV bp_prod(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "ReduceProd");
  Tensor zero = Tensor::scalar(0.0, x.dtype(), true), one = Tensor::scalar(1.0, x.dtype(), true);
  Tensor is_zero = ops::equal(x, zero);
  Tensor nz = ops::broadcast_to(ops::sum(ops::cast(is_zero, x.dtype()), ax, true), x.shape());
  Tensor x_safe = ops::select(is_zero, ops::ones_like(x), x);
  Tensor p_safe = ops::broadcast_to(ops::prod(x_safe, ax, true), x.shape());
  Tensor zeros = ops::zeros_like(x);
  Tensor at_zero = ops::select(ops::equal(nz, one), p_safe, zeros);
  Tensor elsewhere = ops::select(ops::equal(nz, zero), ops::div(p_safe, x_safe), zeros);
  Tensor d = ops::select(is_zero, at_zero, elsewhere);
  return {like_dtype(ops::mul(expand_grad(g[0], x, ax), d), x)};
}

// ---- VarMean: attrs axis (a list, empty = all axes), ddof (int), keep_dims, std (bool) ----
// [var (std: its square root), mean] over the axes, both in the input's float dtype: two passes per output slice in
// double (the mean, then Σ(x − mean)²), divided by max(N − ddof, 0) (NumPy's: inf where N − ddof <= 0, NaN for
// 0/0; the mean of an empty slice is NaN). One kernel for ops.var/std/var_mean/std_mean (MindSpore's ddof/correction, keepdims, axis lists).
// Gradient: d var/dx = 2(x − mean)/(N − ddof), d std/dx = (x − mean)/((N − ddof)·std) (0 where std is 0, as
// PyTorch's std backward masks it), d mean/dx = 1/N; each output's gradient optional.
std::vector<TensorMeta> infer_var_mean(const TV& in, const Attrs& a) {
  const Tensor& x = in[0];
  KILN_CHECK(is_floating(x.dtype()), Type, "For 'VarMean', the input must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "VarMean");
  Shape s = out_shape(x.shape(), ax, a.b("keep_dims"));
  return {{s, x.dtype()}, {s, x.dtype()}};
}
template <typename T>
void var_mean_slices(const Tensor& x, const std::vector<int64_t>& ax, double* mean, double* m2) {
  using C = compute_t<T>;
  const T* p = x.data<T>();
  const size_t nd = size_t(x.ndim());
  std::vector<int64_t> ks, kst, rs, rst;
  for (size_t i = 0; i < nd; ++i) {
    const bool reduced = std::find(ax.begin(), ax.end(), int64_t(i)) != ax.end();
    (reduced ? rs : ks).push_back(x.shape()[i]);
    (reduced ? rst : kst).push_back(x.strides()[i]);
  }
  int64_t n_out = 1, count = 1;
  for (int64_t v : ks) n_out *= v;
  for (int64_t v : rs) count *= v;
  // the innermost reduced axis is the tight loop; the others an odometer
  const int64_t in_n = rs.empty() ? 1 : rs.back(), in_st = rs.empty() ? 0 : rst.back();
  if (!rs.empty()) { rs.pop_back(); rst.pop_back(); }
  const int64_t n_rows = in_n == 0 ? 0 : count / in_n;
  auto for_slice = [&](int64_t base, auto&& fn) {
    std::vector<int64_t> idx(rs.size(), 0);
    int64_t off = base;
    for (int64_t r = 0; r < n_rows; ++r) {
      for (int64_t j = 0; j < in_n; ++j) fn(double(C(p[off + j * in_st])));
      for (size_t d = rs.size(); d-- > 0;) {
        off += rst[d];
        if (++idx[d] < rs[d]) break;
        off -= rst[d] * rs[d];
        idx[d] = 0;
      }
    }
  };
  std::vector<int64_t> kidx(ks.size(), 0);
  int64_t base = 0;
  const double inv = count == 0 ? std::nan("") : 1.0 / double(count);
  for (int64_t o = 0; o < n_out; ++o) {
    double sum = 0.0;
    for_slice(base, [&](double v) { sum += v; });
    const double mu = sum * inv;  // ReduceMean's rounding
    double ss = 0.0;
    for_slice(base, [&](double v) { ss += (v - mu) * (v - mu); });
    mean[o] = mu;
    m2[o] = ss;
    for (size_t d = ks.size(); d-- > 0;) {
      base += kst[d];
      if (++kidx[d] < ks[d]) break;
      base -= kst[d] * ks[d];
      kidx[d] = 0;
    }
  }
}
void run_var_mean(const TV& in, TV& out, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "VarMean");
  int64_t count = 1;
  for (int64_t d : ax) count *= x.shape()[size_t(d)];
  const int64_t n_out = out[0].numel();
  std::vector<double> mean(static_cast<size_t>(n_out)), m2(static_cast<size_t>(n_out));
  const int64_t c = count - a.i("ddof");
  const bool sq = a.b("std");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      var_mean_slices<T>(x, ax, mean.data(), m2.data());
      T* pv = out[0].data<T>();
      T* pm = out[1].data<T>();
      for (int64_t i = 0; i < n_out; ++i) {
        // N - ddof <= 0 divides by 0, as NumPy (max(N - ddof, 0)) and MindSpore 2.10: inf, or NaN for 0/0
        double v = m2[size_t(i)] / double(std::max<int64_t>(c, 0));
        pv[i] = convert_value<T>(sq ? std::sqrt(v) : v);
        pm[i] = convert_value<T>(mean[size_t(i)]);
      }
    } else {
      fail_unsupported_dtype(x.dtype());
    }
  });
}
TV bp_var_mean(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const Tensor& x = in[0];
  auto ax = norm_axes(a.ints("axis"), x.ndim(), "VarMean");
  int64_t count = 1;
  for (int64_t d : ax) count *= x.shape()[size_t(d)];
  const int64_t c = count - a.i("ddof");
  const Shape ks = keep_shape(x.shape(), ax);
  auto keep = [&](const Tensor& t) { return t.shape() == ks ? t : ops::reshape(t, ks); };
  auto sc = [&](double v) { return Tensor::scalar(v, x.dtype(), true); };
  Tensor dx;
  if (g[0].defined()) {
    Tensor xm = ops::sub(x, keep(out[1]));
    Tensor coef;
    if (a.b("std")) {
      Tensor s = keep(out[0]);
      coef = ops::select(ops::equal(s, sc(0.0)), ops::zeros_like(s),
                         ops::div(keep(g[0]), ops::mul(s, sc(double(c)))));
    } else {
      coef = ops::mul(keep(g[0]), sc(c > 0 ? 2.0 / double(c) : std::nan("")));
    }
    dx = ops::mul(xm, coef);
  }
  if (g[1].defined()) {
    Tensor gm = ops::broadcast_to(ops::div(keep(g[1]), sc(double(count))), x.shape());
    dx = dx.defined() ? ops::add(dx, gm) : gm;
  }
  if (!dx.defined()) dx = ops::zeros_like(x);
  return {like_dtype(dx, x)};
}

// ---- Argmax / Argmin: attrs axis (int), has_axis (false: over the flattened tensor), keep_dims ----
template <bool Max>
std::vector<TensorMeta> infer_arg(const TV& in, const Attrs& a) {
  const char* op = Max ? "Argmax" : "Argmin";
  const Tensor& x = in[0];
  KILN_CHECK(x.numel() > 0, Value, "For '", op, "', the input of shape ", shape_str(x.shape()),
             " is empty: attempt to get the ", Max ? "argmax" : "argmin", " of an empty sequence.");
  if (!a.b("has_axis")) return {{a.b("keep_dims") ? Shape(size_t(x.ndim()), 1) : Shape{}, DType::Int64}};
  int64_t ax = normalize_axis(a.i("axis"), x.ndim(), op);
  if (x.ndim() == 0) return {{Shape{}, DType::Int64}};
  KILN_CHECK(x.shape()[size_t(ax)] > 0, Value, "For '", op, "', the axis ", ax, " of the input of shape ",
             shape_str(x.shape()), " is empty.");
  return {{out_shape(x.shape(), {ax}, a.b("keep_dims")), DType::Int64}};
}

template <bool Max>
void run_arg(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (a.b("has_axis") && x.ndim() > 0) {
    int64_t ax = normalize_axis(a.i("axis"), x.ndim(), Max ? "Argmax" : "Argmin");
    outer = 1;
    for (int64_t i = 0; i < ax; ++i) outer *= x.shape()[size_t(i)];
    n = x.shape()[size_t(ax)];
    inner = 1;
    for (int64_t i = ax + 1; i < x.ndim(); ++i) inner *= x.shape()[size_t(i)];
  }
  int64_t* po = out[0].data<int64_t>();
  KILN_DISPATCH_ALL(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* px = x.data<T>();
    std::vector<C> best(static_cast<size_t>(inner));
    std::vector<char> done(static_cast<size_t>(inner));
    if (inner == 1) {  // contiguous along the axis: one tight scan per row
      for (int64_t o = 0; o < outer; ++o) {
        const T* row = px + o * n;
        C b = C(row[0]);
        int64_t bi = 0;
        bool nan = false;
        if constexpr (std::is_floating_point_v<C>) nan = std::isnan(b);
        for (int64_t k = 1; k < n && !nan; ++k) {
          const C v = C(row[k]);
          if (Max ? v > b : v < b) { b = v; bi = k; }
          if constexpr (std::is_floating_point_v<C>)
            if (std::isnan(v)) { bi = k; nan = true; }
        }
        po[o] = bi;
      }
      return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      const T* base = px + o * n * inner;
      int64_t* res = po + o * inner;
      for (int64_t j = 0; j < inner; ++j) { best[size_t(j)] = C(base[j]); res[j] = 0; done[size_t(j)] = 0; }
      if constexpr (std::is_floating_point_v<C>)
        for (int64_t j = 0; j < inner; ++j) done[size_t(j)] = std::isnan(best[size_t(j)]);
      for (int64_t k = 1; k < n; ++k) {
        const T* row = base + k * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (done[size_t(j)]) continue;
          C v = C(row[j]);
          bool take;
          if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(v)) { done[size_t(j)] = 1; take = true; }
            else take = Max ? v > best[size_t(j)] : v < best[size_t(j)];
          } else {
            take = Max ? v > best[size_t(j)] : v < best[size_t(j)];
          }
          if (take) { best[size_t(j)] = v; res[j] = k; }
        }
      }
    }
  });
}

template <RKind K>
void reg_reduce(OpId id, BpropFn bp) {
  OpDef d;
  d.id = id;
  d.infer = infer_reduce<K>;
  d.cpu = run_reduce<K>;
  d.bprop = bp;
  register_op(d);
}

Attrs reduce_attrs(const Axes& axes, bool keep) { return Attrs{{"axis", axes}, {"keep_dims", keep}}; }

}  // namespace

namespace ops_impl {
void register_reduce() {
  reg_reduce<RKind::Sum>(OpId::ReduceSum, bp_sum);
  reg_reduce<RKind::Mean>(OpId::ReduceMean, bp_mean);
  reg_reduce<RKind::Max>(OpId::ReduceMax, bp_extreme);
  reg_reduce<RKind::Min>(OpId::ReduceMin, bp_extreme);
  reg_reduce<RKind::Prod>(OpId::ReduceProd, bp_prod);
  OpDef vm;
  vm.id = OpId::VarMean;
  vm.infer = infer_var_mean;
  vm.cpu = run_var_mean;
  vm.bprop = bp_var_mean;
  register_op(vm);
  reg_nonzero<NZKind::Count>(OpId::CountNonZero);
  reg_nonzero<NZKind::All>(OpId::ReduceAll);
  reg_nonzero<NZKind::Any>(OpId::ReduceAny);
  OpDef am;
  am.id = OpId::Argmax;
  am.infer = infer_arg<true>;
  am.cpu = run_arg<true>;
  am.differentiable = false;
  register_op(am);
  OpDef an;
  an.id = OpId::Argmin;
  an.infer = infer_arg<false>;
  an.cpu = run_arg<false>;
  an.differentiable = false;
  register_op(an);
}
}  // namespace ops_impl

namespace ops {
Tensor sum(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceSum, {x}, reduce_attrs(axes, keep_dims)); }
Tensor mean(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceMean, {x}, reduce_attrs(axes, keep_dims)); }
Tensor amax(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceMax, {x}, reduce_attrs(axes, keep_dims)); }
Tensor amin(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceMin, {x}, reduce_attrs(axes, keep_dims)); }
Tensor prod(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceProd, {x}, reduce_attrs(axes, keep_dims)); }
Tensor count_nonzero(const Tensor& x, const Axes& axes, bool keep_dims) {
  return apply1(OpId::CountNonZero, {x}, reduce_attrs(axes, keep_dims));
}
Tensor reduce_all(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceAll, {x}, reduce_attrs(axes, keep_dims)); }
Tensor reduce_any(const Tensor& x, const Axes& axes, bool keep_dims) { return apply1(OpId::ReduceAny, {x}, reduce_attrs(axes, keep_dims)); }
Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keep_dims) {
  return apply1(OpId::Argmax, {x}, {{"axis", axis.value_or(0)}, {"has_axis", axis.has_value()}, {"keep_dims", keep_dims}});
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keep_dims) {
  return apply1(OpId::Argmin, {x}, {{"axis", axis.value_or(0)}, {"has_axis", axis.has_value()}, {"keep_dims", keep_dims}});
}

// Sums the axes that broadcasting added or expanded from 1 (the dtype is kept). ValueError if `shape` does not
// broadcast to x's shape.
Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const Shape& xs = x.shape();
  KILN_CHECK(shape.size() <= xs.size(), Value, "For 'sum_to', the target shape ", shape_str(shape),
             " has more dimensions than the input shape ", shape_str(xs), ".");
  const size_t lead = xs.size() - shape.size();
  Axes axes;
  for (size_t i = 0; i < lead; ++i) axes.push_back(int64_t(i));
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = xs[lead + i];
    if (shape[i] == d) continue;
    KILN_CHECK(shape[i] == 1, Value, "For 'sum_to', the shape ", shape_str(shape), " does not broadcast to the input shape ",
               shape_str(xs), ".");
    axes.push_back(int64_t(lead + i));
  }
  if (axes.empty()) return reshape(x, shape);
  Tensor r = sum(x, axes, true);
  if (r.dtype() != x.dtype()) r = cast(r, x.dtype());
  return r.shape() == shape ? r : reshape(r, shape);
}
}  // namespace ops
}  // namespace kiln
