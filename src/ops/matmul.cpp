// BatchMatMul: float32 on oneDNN's sgemm; float16/bfloat16 on oneDNN's bf16/f16 matmul primitives where the
// low-precision path is native (Note [native low-precision matmul]), else computed in float32; float64 and
// integers on Eigen's GEMM (oneDNN has no f64 matmul on CPU). No hand-written GEMM
// (docs/decisions/eigen-f64-int-matmul.md).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <string>

#include <Eigen/Core>
#include <oneapi/dnnl/dnnl.h>

#include "../backend/cpu/dnnl_utils.h"
#include "elementwise.h"
#include "kiln/autodiff.h"
#include "kiln/cpu_info.h"
#include "families.h"

namespace kiln {
namespace {
using TV = std::vector<Tensor>;

// Logical (M, K) of an operand after its transpose flag.
struct MatDims { int64_t rows, cols; };
MatDims mat_dims(const Tensor& t, bool trans) {
  int64_t r = t.shape()[t.ndim() - 2], c = t.shape()[t.ndim() - 1];
  return trans ? MatDims{c, r} : MatDims{r, c};
}

std::vector<TensorMeta> infer_matmul(const TV& in, const Attrs& a) {
  const Tensor &x = in[0], &y = in[1];
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  KILN_CHECK(x.ndim() >= 2 && y.ndim() >= 2, Value, "For 'MatMul', both inputs must have rank >= 2 here, but got ",
             shape_str(x.shape()), " and ", shape_str(y.shape()), ".");
  MatDims dx = mat_dims(x, ta), dy = mat_dims(y, tb);
  KILN_CHECK(dx.cols == dy.rows, Value, "For 'MatMul', the inner dimensions must match: x ", shape_str(x.shape()),
             ta ? " (transposed)" : "", " and y ", shape_str(y.shape()), tb ? " (transposed)" : "", " give ", dx.cols,
             " vs ", dy.rows, ".");
  KILN_CHECK(x.dtype() != DType::Bool && y.dtype() != DType::Bool, Type,
             "For 'MatMul', Bool inputs are not supported.");
  // MindSpore (and PyTorch) refuse mixed operand dtypes here rather than promote: an int32 batch fed to a float32
  // Dense is a bug in the caller's pipeline (a missing TypeCast), not something to paper over.
  KILN_CHECK(x.dtype() == y.dtype(), Type, "For 'MatMul', the type of 'x2' should be same as 'x1', but got 'x1' with "
             "type Tensor[", dtype_name(x.dtype()), "] and 'x2' with type Tensor[", dtype_name(y.dtype()), "].");
  Shape bx(x.shape().begin(), x.shape().end() - 2), by(y.shape().begin(), y.shape().end() - 2);
  Shape out = broadcast_shapes(bx, by, "MatMul");
  out.push_back(dx.rows);
  out.push_back(dy.cols);
  return {{out, x.dtype()}};
}

// How an operand's last two dims sit in memory: row-major (ld = row stride) or column-major, or neither.
struct Layout { bool ok; bool trans; int64_t ld; };
Layout layout(const Tensor& t, bool logical_trans) {
  int64_t n = t.ndim();
  int64_t rows = t.shape()[n - 2], cols = t.shape()[n - 1];
  int64_t s0 = t.strides()[n - 2], s1 = t.strides()[n - 1];
  if ((s1 == 1 || cols == 1) && s0 >= std::max<int64_t>(cols, 1)) return {true, logical_trans, s0};
  if ((s0 == 1 || rows == 1) && s1 >= std::max<int64_t>(rows, 1)) return {true, !logical_trans, s1};
  return {false, false, 0};
}

template <typename T>
void gemm_eigen(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb,
                T* C, int64_t ldc) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  Eigen::Map<Mat, 0, Eigen::OuterStride<>> c(C, M, N, Eigen::OuterStride<>(ldc));
  Map a(A, ta ? K : M, ta ? M : K, Eigen::OuterStride<>(lda));
  Map b(B, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(ldb));
  if (!ta && !tb) c.noalias() = a * b;
  else if (ta && !tb) c.noalias() = a.transpose() * b;
  else if (!ta && tb) c.noalias() = a * b.transpose();
  else c.noalias() = a.transpose() * b.transpose();
}

// Threads only pay off for large products: a 32x10x16 product costs ~5x more on two threads than on one.
struct GemmThreads {
  int saved;
  explicit GemmThreads(double flops) : saved(omp_get_max_threads()) {
    if (flops < 2.0 * 128 * 128 * 128) omp_set_num_threads(1);
  }
  ~GemmThreads() { omp_set_num_threads(saved); }
};

// one(bi) for bi in [0, nb), split over the OpenMP threads when `par`: each thread runs whole products on one
// thread (oneDNN's sgemm and Eigen's GEMM run single-threaded inside a parallel region). `one` must not throw.
template <typename F>
void for_batches(int64_t nb, bool par, F&& one) {
  if (!par) {
    for (int64_t bi = 0; bi < nb; ++bi) one(bi);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t bi = 0; bi < nb; ++bi) one(bi);
}

// Note [batched matmul threads]: a batch of small products (attention's (B·H)×(S×S·Dh)) gains nothing from
// threads inside each product: oneDNN's sgemm forks and joins a team per call, and on 2 threads a 64x64x32
// product was 3x *slower* than on one. Such batches are split over the threads instead, each product on one
// thread (the same per-product kernel, so the numbers do not depend on the split). Used when there are threads to
// share, the whole batch is worth threading (the GemmThreads rule), and either the products are small (below
// 2·256³ flops, where sgemm's own threading scales poorly) or the batch divides evenly / is long enough that the
// last round of products leaves little idle.
bool batch_parallel(int64_t nb, double gemm_flops) {
  const int nthr = omp_get_max_threads();
  if (nthr < 2 || nb < 2 || omp_in_parallel()) return false;
  if (gemm_flops * double(nb) < 2.0 * 128 * 128 * 128) return false;
  return gemm_flops < 2.0 * 256 * 256 * 256 || nb % nthr == 0 || nb >= 4 * nthr;
}

// Note [transposed-A products]: the weight gradient of a Dense layer, dW = Xᵀ·G with X (rows, M) and G (rows, N)
// both row-major (transpose_a, a large K = rows), is sgemm's ('T', 'N') case. When M is several times N, oneDNN's
// AVX2 sgemm runs it slower than the same product with the dimensions swapped: for the Transformer's ff1 weight
// (M 512, N 128, K 1024) 2.45–3.1 ms vs 2.0–2.8 ms (ratios 1.10–1.28 over five runs; best of 25–50 interleaved
// calls, thread CPU time, 1 thread, 2-core machine under load 8–11), 1024x256 K1024 1.34, 512x64 K2048 1.15,
// 1024x128 K512 0.95–0.99; with M < 4N the swap gained nothing or lost up to 13% (256x128, 512x256, 128x128).
// So for M ≥ 4N the kernel computes Cᵀ = Gᵀ·X (the ('T', 'N') product with M and N exchanged) into a scratch
// tensor and transposes it into the output (a tiled copy of M·N floats, ~2% of the product at these sizes). Each
// element is still one dot product over K; only the kernel's blocking may round the sum differently (equal bits
// on the shapes measured, ≤ 3e-5 absolute on odd ones). Both execution modes run this same kernel, so PyNative
// and Graph agree bit for bit. Below kSwapMinMacs multiply-adds (2·64³ flops) the copy is not worth it.
constexpr double kSwapMinMacs = 64.0 * 64 * 64;

// out (cols x rows, row-major) = the transpose of in (rows x cols, row-major), in 16x16 tiles.
void transpose_into(const float* in, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kT = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kT) {
    const int64_t i1 = std::min(rows, i0 + kT);
    for (int64_t j0 = 0; j0 < cols; j0 += kT) {
      const int64_t j1 = std::min(cols, j0 + kT);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) out[j * rows + i] = in[i * cols + j];
    }
  }
}

// Element offsets of each batch's operands (x at 2·bi, y at 2·bi + 1), batch dims broadcast by strides sx, sy.
std::vector<int64_t> batch_offsets(const Shape& batch, const Strides& sx, const Strides& sy, int64_t nb) {
  std::vector<int64_t> offs(size_t(2 * nb));
  cpu::DimVec idx(batch.size(), 0);
  int64_t ox = 0, oy = 0;
  for (int64_t bi = 0; bi < nb; ++bi) {
    offs[size_t(2 * bi)] = ox;
    offs[size_t(2 * bi + 1)] = oy;
    for (size_t d = batch.size(); d-- > 0;) {  // odometer over the batch dims, last fastest
      ox += sx[d];
      oy += sy[d];
      if (++idx[d] < batch[d]) break;
      ox -= sx[d] * batch[d];
      oy -= sy[d] * batch[d];
      idx[d] = 0;
    }
  }
  return offs;
}

// Note [native low-precision matmul]: where cpu_info::use_native_low_precision says so (kiln/cpu_info.h, Note
// [low-precision path]), BFloat16 / Float16 products run on oneDNN's matmul primitive with operands and result in
// that type: oneDNN multiplies in the low-precision type's units (AVX512_BF16 dot products, AMX tiles) and sums in
// float32, and rounds each output element once, as the float32 path (widen, sgemm, round) does; only the summation
// order differs, within the float32 bound. One 2-D primitive per (M, N, K, layouts, dtype) is cached
// (dnnl_utils.h, Note [primitive cache]; the threads are part of the key) and run once per batch, on the operands
// in place (a column-major or row-strided operand is described by strides, not copied); a weight shared by a
// row-contiguous batch makes one product, and long batches of small products are split over the threads (Note
// [batched matmul threads]), as in the float32 path. The code is dtype-generic:
// the test hook cpu_info::set_route_float32_through_native runs Float32 products through it (f32 primitives), so a
// CPU without bf16 primitives still tests everything but the data type.
dnnl_memory_desc_t matmul_md(int64_t rows, int64_t cols, bool trans, int64_t ld, dnnl_data_type_t dt) {
  dnnl_memory_desc_t md = nullptr;
  dnnl_dims_t dims = {rows, cols};
  dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
  if (dnnl_memory_desc_create_with_strides(&md, 2, dims, dt, strides) != dnnl_success) return nullptr;
  return md;
}

cpu::dnnl::PrimPtr make_matmul_prim(int64_t M, int64_t N, int64_t K, Layout la, Layout lb, dnnl_data_type_t dt) {
  dnnl_memory_desc_t src = matmul_md(M, K, la.trans, la.ld, dt), wei = matmul_md(K, N, lb.trans, lb.ld, dt);
  dnnl_memory_desc_t dst = matmul_md(M, N, false, N, dt);
  cpu::dnnl::Attr attr;  // user-managed scratchpad (dnnl_utils.h, Note [threads])
  dnnl_primitive_desc_t pd = nullptr;
  bool ok = src && wei && dst;
  ok = ok && dnnl_matmul_primitive_desc_create(&pd, cpu::dnnl::engine(), src, wei, nullptr, dst, attr.a) == dnnl_success;
  if (ok && dt != dnnl_f32) {  // Note [low-precision reference kernels] (conv.cpp): never oneDNN's reference kernel
    const char* impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl &&
        std::string(impl).rfind("ref", 0) == 0) {
      dnnl_primitive_desc_destroy(pd);
      ok = false;
    }
  }
  cpu::dnnl::PrimPtr p;
  if (ok) p = cpu::dnnl::make_prim(pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  for (auto m : {src, wei, dst})
    if (m) dnnl_memory_desc_destroy(m);
  return p;
}

dnnl_data_type_t dnnl_type(DType t) {
  return t == DType::BFloat16 ? dnnl_bf16 : t == DType::Float16 ? dnnl_f16 : dnnl_f32;
}

// The product on oneDNN matmul primitives of the operands' own dtype (Float32, BFloat16 or Float16), written into
// out[0] (contiguous). Returns false, having written nothing, if oneDNN has no primitive for the configuration
// other than its reference kernel (the caller then computes it in float32).
// The op's name in errors of the native path: MatMul for a 2-D product, BatchMatMul for a batched one (MindSpore's
// two primitives; Kiln runs both, and ops.matmul / ops.bmm, on this kernel).
const char* matmul_name(const Tensor& out) { return out.ndim() > 2 ? "BatchMatMul" : "MatMul"; }

bool run_matmul_native(const TV& in, TV& out, const Attrs& a) {
  const DType t = out[0].dtype();
  const char* name = matmul_name(out[0]);
  Tensor x = in[0], y = in[1];
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  Layout lx = layout(x, ta), ly = layout(y, tb);
  if (!lx.ok) { x = x.contiguous(); lx = layout(x, ta); }
  if (!ly.ok) { y = y.contiguous(); ly = layout(y, tb); }
  Tensor& o = out[0];
  const Shape& os = o.shape();
  const int64_t nd = int64_t(os.size());
  const int64_t M = os[nd - 2], N = os[nd - 1], K = mat_dims(x, ta).cols;
  Shape batch(os.begin(), os.end() - 2);
  Shape bxs(x.shape().begin(), x.shape().end() - 2), bys(y.shape().begin(), y.shape().end() - 2);
  Strides sx = cpu::broadcast_strides(bxs, Strides(x.strides().begin(), x.strides().end() - 2), batch);
  Strides sy = cpu::broadcast_strides(bys, Strides(y.strides().begin(), y.strides().end() - 2), batch);
  const int64_t nb = numel(batch);
  if (M == 0 || N == 0 || nb == 0) return true;
  const size_t es = itemsize(t);
  auto* po = static_cast<char*>(o.raw_data());
  if (K == 0) { std::memset(po, 0, size_t(nb * M * N) * es); return true; }
  // One shared right operand and a row-major left operand whose batches follow each other row after row (a Dense
  // layer on a (batch, seq, d) input): one (nb·M, K)·(K, N) product, as in the float32 path.
  int64_t Mr = M, nbr = nb;
  if (!lx.trans && nb > 1 && std::all_of(sy.begin(), sy.end(), [](int64_t v) { return v == 0; })) {
    int64_t expect = M * lx.ld;
    bool rows = true;
    for (size_t d = batch.size(); d-- > 0;) {
      if (batch[d] != 1 && sx[d] != expect) { rows = false; break; }
      expect *= batch[d];
    }
    if (rows) { Mr = nb * M; nbr = 1; }
  }
  const std::vector<int64_t> offs = batch_offsets(batch, sx, sy, nbr == 1 ? 1 : nb);
  // Note [batched matmul threads]: small products of a long batch are split over the threads, each on one.
  const double gemm_flops = 2.0 * double(Mr) * double(N) * double(K);
  const bool par = batch_parallel(nbr, gemm_flops);
  GemmThreads threads(par ? std::numeric_limits<double>::infinity() : gemm_flops * double(nbr));
  static auto* cache = new cpu::dnnl::PrimCache();  // never destroyed: primitives outlive static destruction order
  const dnnl_data_type_t dt = dnnl_type(t);
  const std::vector<int64_t> key{Mr, N, K, lx.trans, lx.ld, ly.trans, ly.ld, int64_t(dt), par};
  auto* px = static_cast<char*>(const_cast<void*>(x.raw_data()));
  auto* py = static_cast<char*>(const_cast<void*>(y.raw_data()));
  std::atomic<bool> missing{false};
  std::mutex err_mu;
  std::exception_ptr err;  // nothing may throw out of the parallel region: rethrown after it
  auto one = [&](int64_t bi) {
    try {
      if (!cache->run(key, [&] { return make_matmul_prim(Mr, N, K, lx, ly, dt); },
                      {px + size_t(offs[size_t(2 * bi)]) * es, py + size_t(offs[size_t(2 * bi + 1)]) * es,
                       po + size_t(bi * Mr * N) * es},
                      name))
        missing.store(true, std::memory_order_relaxed);
    } catch (...) {
      std::lock_guard<std::mutex> g(err_mu);
      if (!err) err = std::current_exception();
    }
  };
  for_batches(nbr, par, one);
  if (err) std::rethrow_exception(err);
  // Every batch uses the same primitive: either all of them ran or none did.
  return !missing.load();
}

void run_matmul(const TV& in, TV& out, const Attrs& a) {
  DType t = out[0].dtype();
  // An empty operand (a zero-size output, or K = 0: zeros) has no product to compute: the float32 path's result,
  // with no check of the native path's availability (as Conv2D).
  const bool empty = in[0].numel() == 0 || in[1].numel() == 0;
  if (((t == DType::BFloat16 || t == DType::Float16) && !empty &&
       cpu_info::use_native_low_precision(t, matmul_name(out[0]))) ||
      (t == DType::Float32 && cpu_info::route_float32_through_native())) {
    if (run_matmul_native(in, out, a)) return;
    KILN_CHECK(t != DType::Float32, Runtime, "For '", matmul_name(out[0]), "', oneDNN has no float32 matmul primitive "
               "for this product (the test route through the native path).");
  }
  DType ct = (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
  Tensor x = ew::as_dtype(in[0], ct), y = ew::as_dtype(in[1], ct);
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  Layout lx = layout(x, ta), ly = layout(y, tb);
  if (!lx.ok) { x = x.contiguous(); lx = layout(x, ta); }
  if (!ly.ok) { y = y.contiguous(); ly = layout(y, tb); }
  if (t == DType::Float32 && x.ndim() == 2 && y.ndim() == 2) {
    // Plain 2-D float32 (every Dense layer and its gradients): the sgemm call of the batched loop below for its
    // single batch, without the batch bookkeeping (small products are dominated by it).
    const int64_t M = out[0].shape()[0], N = out[0].shape()[1], K = mat_dims(x, ta).cols;
    if (M == 0 || N == 0) return;
    float* C = out[0].data<float>();
    if (K == 0) { std::fill(C, C + M * N, 0.f); return; }
    GemmThreads threads(2.0 * double(M) * double(N) * double(K));
    if (lx.trans && !ly.trans && M >= 4 * N && double(M) * double(N) * double(K) >= kSwapMinMacs) {
      // Note [transposed-A products]: compute Cᵀ = Bᵀ·A and transpose it back.
      Tensor ct = Tensor::empty({N, M}, DType::Float32);
      dnnl_status_t st = dnnl_sgemm('T', 'N', N, M, K, 1.0f, y.data<float>(), ly.ld, x.data<float>(), lx.ld, 0.0f,
                                    ct.data<float>(), M);
      KILN_CHECK(st == dnnl_success, Runtime, "For 'MatMul', oneDNN sgemm failed with status ", int(st), ".");
      transpose_into(ct.data<float>(), N, M, C);
      return;
    }
    dnnl_status_t st = dnnl_sgemm(lx.trans ? 'T' : 'N', ly.trans ? 'T' : 'N', M, N, K, 1.0f, x.data<float>(), lx.ld,
                                  y.data<float>(), ly.ld, 0.0f, C, N);
    KILN_CHECK(st == dnnl_success, Runtime, "For 'MatMul', oneDNN sgemm failed with status ", int(st), ".");
    return;
  }
  Tensor o = ct == t ? out[0] : Tensor::empty(out[0].shape(), ct);
  const Shape& os = o.shape();
  int64_t nd = int64_t(os.size());
  int64_t M = os[nd - 2], N = os[nd - 1];
  int64_t K = mat_dims(x, ta).cols;
  Shape batch(os.begin(), os.end() - 2);
  Shape bxs(x.shape().begin(), x.shape().end() - 2), bys(y.shape().begin(), y.shape().end() - 2);
  Strides sx = cpu::broadcast_strides(bxs, Strides(x.strides().begin(), x.strides().end() - 2), batch);
  Strides sy = cpu::broadcast_strides(bys, Strides(y.strides().begin(), y.strides().end() - 2), batch);
  int64_t nb = numel(batch);
  if (M == 0 || N == 0 || nb == 0) {
    if (ct != t) copy_into(o, out[0]);
    return;
  }
  // One shared right operand (a weight broadcast over the batch) and a row-major left operand whose batches
  // follow each other row after row: one (nb·M, K)·(K, N) product instead of nb small ones.
  if (!lx.trans && nb > 1 && K > 0 && std::all_of(sy.begin(), sy.end(), [](int64_t s) { return s == 0; })) {
    int64_t expect = M * lx.ld;
    bool rows = true;
    for (size_t d = batch.size(); d-- > 0;) {
      if (batch[d] != 1 && sx[d] != expect) { rows = false; break; }
      expect *= batch[d];
    }
    if (rows) {
      GemmThreads threads(2.0 * double(M) * double(N) * double(K) * double(nb));
      KILN_DISPATCH(ct, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float>) {
          dnnl_status_t st = dnnl_sgemm('N', ly.trans ? 'T' : 'N', nb * M, N, K, 1.0f, x.data<float>(), lx.ld,
                                        y.data<float>(), ly.ld, 0.0f, o.data<float>(), N);
          KILN_CHECK(st == dnnl_success, Runtime, "For 'MatMul', oneDNN sgemm failed with status ", int(st), ".");
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          KILN_FAIL(Type, "For 'MatMul', unsupported dtype ", dtype_name(ct), ".");
        } else {
          gemm_eigen<T>(false, ly.trans, nb * M, N, K, x.data<T>(), lx.ld, y.data<T>(), ly.ld, o.data<T>(), N);
        }
      });
      if (ct != t) copy_into(o, out[0]);
      return;
    }
  }
  const std::vector<int64_t> offs = batch_offsets(batch, sx, sy, nb);  // element offsets of each batch's operands
  const double gemm_flops = 2.0 * double(M) * double(N) * double(K);
  const bool par = batch_parallel(nb, gemm_flops);
  // Split batch: the team stays as it is (each product then runs on one thread); else the GemmThreads rule.
  GemmThreads threads(par ? std::numeric_limits<double>::infinity() : gemm_flops * double(nb));
  KILN_DISPATCH(ct, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      KILN_FAIL(Type, "For 'MatMul', unsupported dtype ", dtype_name(ct), ".");
    } else {
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = o.data<T>();
      std::atomic<int> bad{int(dnnl_success)};  // nothing may throw out of the parallel region: checked after it
      auto one = [&](int64_t bi) {
        const T* A = px + offs[size_t(2 * bi)];
        const T* B = py + offs[size_t(2 * bi + 1)];
        T* C = po + bi * (M * N);
        if (K == 0) { std::fill(C, C + M * N, T(0)); return; }
        if constexpr (std::is_same_v<T, float>) {
          dnnl_status_t st = dnnl_sgemm(lx.trans ? 'T' : 'N', ly.trans ? 'T' : 'N', M, N, K, 1.0f, A, lx.ld, B, ly.ld,
                                        0.0f, C, N);
          if (st != dnnl_success) bad.store(int(st), std::memory_order_relaxed);
        } else {
          gemm_eigen<T>(lx.trans, ly.trans, M, N, K, A, lx.ld, B, ly.ld, C, N);
        }
      };
      for_batches(nb, par, one);
      KILN_CHECK(bad.load() == int(dnnl_success), Runtime, "For 'MatMul', oneDNN sgemm failed with status ", bad.load(),
                 ".");
    }
  });
  if (ct != t) copy_into(o, out[0]);
}

// out = op(A)·op(B); see the table in docs/autodiff.md. Batch dims that broadcast are summed away.
TV bprop_matmul(const TV& in, const TV&, const TV& g, const Attrs& a) {
  const Tensor &A = in[0], &B = in[1], &G = g[0];
  bool ta = a.b("transpose_a"), tb = a.b("transpose_b");
  // Only the cotangents that lead to a leaf (autodiff::input_needs_grad): no dA for a model's input batch.
  const bool na = autodiff::input_needs_grad(0), nb = autodiff::input_needs_grad(1);
  if (!ta && B.ndim() == 2 && A.ndim() > 2) {
    // A weight shared by the batch: the products of (rows of every batch) as 2-D ones, so that dB is one
    // (K, nb·M)·(nb·M, N) GEMM rather than nb products summed afterwards.
    const int64_t k = A.shape()[size_t(A.ndim() - 1)], n = G.shape()[size_t(G.ndim() - 1)];
    const int64_t rows = numel(Shape(A.shape().begin(), A.shape().end() - 1));  // G has the same rows
    Tensor A2 = ops::reshape(A, {rows, k}), G2 = ops::reshape(G, {rows, n});
    Tensor dA2, dB2;
    if (!tb) { if (na) dA2 = ops::matmul(G2, B, false, true); if (nb) dB2 = ops::matmul(A2, G2, true, false); }
    else { if (na) dA2 = ops::matmul(G2, B, false, false); if (nb) dB2 = ops::matmul(G2, A2, true, false); }
    return {dA2.defined() ? ew::reduce_grad(ops::reshape(dA2, A.shape()), A) : dA2,
            dB2.defined() ? ew::reduce_grad(dB2, B) : dB2};
  }
  Tensor dA, dB;
  if (!ta && !tb) { if (na) dA = ops::matmul(G, B, false, true); if (nb) dB = ops::matmul(A, G, true, false); }
  else if (!ta && tb) { if (na) dA = ops::matmul(G, B, false, false); if (nb) dB = ops::matmul(G, A, true, false); }
  else if (ta && !tb) { if (na) dA = ops::matmul(B, G, false, true); if (nb) dB = ops::matmul(A, G, false, false); }
  else { if (na) dA = ops::matmul(B, G, true, true); if (nb) dB = ops::matmul(G, A, true, true); }
  return {dA.defined() ? ew::reduce_grad(dA, A) : dA, dB.defined() ? ew::reduce_grad(dB, B) : dB};
}

}  // namespace

namespace ops_impl {
void register_matmul() {
  OpDef d;
  d.id = OpId::MatMul;
  d.infer = infer_matmul;
  d.cpu = run_matmul;
  d.bprop = bprop_matmul;
  register_op(d);
}
}  // namespace ops_impl

namespace ops {
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  KILN_CHECK(a.ndim() >= 1 && b.ndim() >= 1, Value, "For 'MatMul', the inputs must not be 0-d, but got shapes ",
             shape_str(a.shape()), " and ", shape_str(b.shape()), ".");
  // NumPy semantics for 1-D operands: prepend (a) / append (b) a unit dim, remove it from the result.
  bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  if (a1 || b1) {
    int64_t ka = a1 ? a.shape()[0] : a.shape()[size_t(a.ndim() - (transpose_a ? 2 : 1))];
    int64_t kb = b1 ? b.shape()[0] : b.shape()[size_t(b.ndim() - (transpose_b ? 1 : 2))];
    KILN_CHECK(ka == kb, Value, "For 'MatMul', the inner dimensions must match: x ", shape_str(a.shape()), " and y ",
               shape_str(b.shape()), " give ", ka, " vs ", kb, ".");
  }
  Tensor x = a1 ? reshape(a, {1, a.shape()[0]}) : a;
  Tensor y = b1 ? reshape(b, {b.shape()[0], 1}) : b;
  Tensor r = apply1(OpId::MatMul, {x, y}, {{"transpose_a", a1 ? false : transpose_a}, {"transpose_b", b1 ? false : transpose_b}});
  if (a1 || b1) {
    Shape s(r.shape().begin(), r.shape().end() - 2);
    if (!a1) s.push_back(r.shape()[r.ndim() - 2]);
    if (!b1) s.push_back(r.shape()[r.ndim() - 1]);
    r = reshape(r, s);
  }
  return r;
}
}  // namespace ops
}  // namespace kiln
