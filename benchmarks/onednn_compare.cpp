// oneDNN version comparison kernel set (docs/decisions/onednn-version.md): the float32 kernels Kiln runs on oneDNN,
// timed against whichever oneDNN this file is compiled and linked with. Built and run by
// benchmarks/bench_onednn_versions.sh, which compiles it once per oneDNN prefix and interleaves the builds.
//
// Uses only oneDNN's C API (<oneapi/dnnl/dnnl.h>), which is the same for oneDNN 3.x. Each case prints one line:
//   case=<name> ms_min=<best ms> ms_med=<median ms> gflops=<flops / best time> cpu_ms_min=<best process CPU ms>
//   impl=<oneDNN implementation>
// (process CPU time: all threads' time; with one thread it is the least disturbed by other load on the machine.)
// Thread count: the caller's (OMP_NUM_THREADS and the CPU affinity mask, which TBB-threaded builds follow).
// It also reports whether bfloat16 and float16 matmul/convolution primitives can be created on this CPU.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(dnnl_status_t st, const char* what) {
  if (st != dnnl_success) {
    std::fprintf(stderr, "oneDNN call failed (%d): %s\n", int(st), what);
    std::exit(2);
  }
}
#define CK(expr) check((expr), #expr)

dnnl_engine_t g_eng;
dnnl_stream_t g_str;
double g_min_time = 0.4;  // seconds of timed calls per case (at least 5 calls)

// Times fn: 2 warm-up calls, then calls until g_min_time has passed (at least 5, at most 200); prints the line.
void time_case(const char* name, double flops, const std::string& impl, const std::function<void()>& fn) {
  fn();
  fn();
  std::vector<double> t;
  double cpu_min = 1e30;
  auto cpu_now = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  auto start = std::chrono::steady_clock::now();
  while (t.size() < 5 || (t.size() < 200 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                                    .count() < g_min_time)) {
    const double c0 = cpu_now();
    auto a = std::chrono::steady_clock::now();
    fn();
    auto b = std::chrono::steady_clock::now();
    cpu_min = std::min(cpu_min, cpu_now() - c0);
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("case=%s ms_min=%.3f ms_med=%.3f gflops=%.1f cpu_ms_min=%.3f impl=%s\n", name, t.front() * 1e3,
              t[t.size() / 2] * 1e3, flops / t.front() * 1e-9, cpu_min * 1e3, impl.c_str());
  std::fflush(stdout);
}

std::vector<float> filled(size_t n) {
  std::vector<float> v(n);
  unsigned s = 12345;
  for (auto& x : v) {
    s = s * 1103515245u + 12345u;
    x = float((s >> 9) & 0xffff) / 65536.f - 0.5f;
  }
  return v;
}

dnnl_memory_desc_t md(std::vector<int64_t> dims, dnnl_data_type_t dt, dnnl_format_tag_t tag) {
  dnnl_dims_t d{};
  for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i];
  dnnl_memory_desc_t m = nullptr;
  CK(dnnl_memory_desc_create_with_tag(&m, int(dims.size()), d, dt, tag));
  return m;
}

std::string impl_of(const_dnnl_primitive_desc_t pd) {
  const char* s = nullptr;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
  return s ? s : "?";
}

// A memory object of descriptor `m` with its own buffer (kept alive in `bufs`), filled with values.
dnnl_memory_t mem(const_dnnl_memory_desc_t m, std::vector<std::vector<float>>& bufs) {
  size_t bytes = dnnl_memory_desc_get_size(m);
  bufs.push_back(filled(bytes / sizeof(float) + 1));
  dnnl_memory_t r = nullptr;
  CK(dnnl_memory_create(&r, m, g_eng, bufs.back().data()));
  return r;
}

void exec(dnnl_primitive_t p, std::vector<dnnl_exec_arg_t> args) {
  CK(dnnl_primitive_execute(p, g_str, int(args.size()), args.data()));
  CK(dnnl_stream_wait(g_str));
}

void bench_sgemm(const char* name, int64_t M, int64_t N, int64_t K) {
  auto A = filled(size_t(M * K)), B = filled(size_t(K * N));
  std::vector<float> C(size_t(M * N));
  time_case(name, 2.0 * M * N * K, "dnnl_sgemm", [&] {
    CK(dnnl_sgemm('N', 'N', M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C.data(), N));
  });
}

void bench_matmul(const char* name, int64_t M, int64_t N, int64_t K) {
  auto a = md({M, K}, dnnl_f32, dnnl_ab), b = md({K, N}, dnnl_f32, dnnl_ab), c = md({M, N}, dnnl_f32, dnnl_ab);
  dnnl_primitive_desc_t pd = nullptr;
  CK(dnnl_matmul_primitive_desc_create(&pd, g_eng, a, b, nullptr, c, nullptr));
  dnnl_primitive_t p = nullptr;
  CK(dnnl_primitive_create(&p, pd));
  std::vector<std::vector<float>> bufs;
  auto ma = mem(a, bufs), mb = mem(b, bufs), mc = mem(c, bufs);
  time_case(name, 2.0 * M * N * K, impl_of(pd), [&] {
    exec(p, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  });
}

// A 3x3 stride-1 pad-1 convolution, N x C x H x W -> N x O x H x W, in the layouts oneDNN picks (format any; the
// reorders from/to plain layouts are not timed: Kiln keeps weights reordered and pays the activation reorders once
// per pass either way). Forward (training), backward data, backward weights (with bias gradient).
void bench_conv(int64_t N, int64_t C, int64_t O, int64_t H, int64_t W) {
  auto src = md({N, C, H, W}, dnnl_f32, dnnl_format_tag_any), wei = md({O, C, 3, 3}, dnnl_f32, dnnl_format_tag_any);
  auto bia = md({O}, dnnl_f32, dnnl_a), dst = md({N, O, H, W}, dnnl_f32, dnnl_format_tag_any);
  dnnl_dims_t s{1, 1}, d{0, 0}, p{1, 1};
  dnnl_primitive_desc_t fpd = nullptr, dpd = nullptr, wpd = nullptr;
  CK(dnnl_convolution_forward_primitive_desc_create(&fpd, g_eng, dnnl_forward_training, dnnl_convolution_direct, src,
                                                    wei, bia, dst, s, d, p, p, nullptr));
  CK(dnnl_convolution_backward_data_primitive_desc_create(&dpd, g_eng, dnnl_convolution_direct, src, wei, dst, s, d, p,
                                                          p, fpd, nullptr));
  CK(dnnl_convolution_backward_weights_primitive_desc_create(&wpd, g_eng, dnnl_convolution_direct, src, wei, bia, dst,
                                                             s, d, p, p, fpd, nullptr));
  const double flops = 2.0 * N * O * C * 9 * H * W;
  std::vector<std::vector<float>> bufs;
  auto q = [](const_dnnl_primitive_desc_t pd, dnnl_query_t w) { return dnnl_primitive_desc_query_md(pd, w, 0); };
  dnnl_primitive_t pf = nullptr, pdd = nullptr, pw = nullptr;
  CK(dnnl_primitive_create(&pf, fpd));
  CK(dnnl_primitive_create(&pdd, dpd));
  CK(dnnl_primitive_create(&pw, wpd));
  auto msrc = mem(q(fpd, dnnl_query_src_md), bufs), mwei = mem(q(fpd, dnnl_query_weights_md), bufs);
  auto mbia = mem(bia, bufs), mdst = mem(q(fpd, dnnl_query_dst_md), bufs);
  auto mdsrc = mem(q(dpd, dnnl_query_diff_src_md), bufs), mwei_d = mem(q(dpd, dnnl_query_weights_md), bufs);
  auto mddst_d = mem(q(dpd, dnnl_query_diff_dst_md), bufs);
  auto msrc_w = mem(q(wpd, dnnl_query_src_md), bufs), mdwei = mem(q(wpd, dnnl_query_diff_weights_md), bufs);
  auto mdbia = mem(bia, bufs), mddst_w = mem(q(wpd, dnnl_query_diff_dst_md), bufs);
  char name[96];
  std::snprintf(name, sizeof name, "conv3x3_fwd_%ldx%ldx%ldx%ld_o%ld", long(N), long(C), long(H), long(W), long(O));
  time_case(name, flops, impl_of(fpd), [&] {
    exec(pf, {{DNNL_ARG_SRC, msrc}, {DNNL_ARG_WEIGHTS, mwei}, {DNNL_ARG_BIAS, mbia}, {DNNL_ARG_DST, mdst}});
  });
  std::snprintf(name, sizeof name, "conv3x3_bwd_data_%ldx%ldx%ldx%ld_o%ld", long(N), long(C), long(H), long(W), long(O));
  time_case(name, flops, impl_of(dpd), [&] {
    exec(pdd, {{DNNL_ARG_DIFF_DST, mddst_d}, {DNNL_ARG_WEIGHTS, mwei_d}, {DNNL_ARG_DIFF_SRC, mdsrc}});
  });
  std::snprintf(name, sizeof name, "conv3x3_bwd_weights_%ldx%ldx%ldx%ld_o%ld", long(N), long(C), long(H), long(W),
                long(O));
  time_case(name, flops, impl_of(wpd), [&] {
    exec(pw, {{DNNL_ARG_SRC, msrc_w}, {DNNL_ARG_DIFF_DST, mddst_w}, {DNNL_ARG_DIFF_WEIGHTS, mdwei},
              {DNNL_ARG_DIFF_BIAS, mdbia}});
  });
}

// Whether a small primitive of data type dt (f32 accumulation / destination for matmul) can be created here.
void report_low_precision(dnnl_data_type_t dt, const char* name) {
  auto a = md({64, 64}, dt, dnnl_ab), b = md({64, 64}, dt, dnnl_ab), c = md({64, 64}, dnnl_f32, dnnl_ab);
  dnnl_primitive_desc_t pd = nullptr;
  bool mm = dnnl_matmul_primitive_desc_create(&pd, g_eng, a, b, nullptr, c, nullptr) == dnnl_success;
  if (pd) dnnl_primitive_desc_destroy(pd);
  pd = nullptr;
  auto src = md({2, 16, 8, 8}, dt, dnnl_format_tag_any), wei = md({16, 16, 3, 3}, dt, dnnl_format_tag_any);
  auto dst = md({2, 16, 8, 8}, dt, dnnl_format_tag_any);
  dnnl_dims_t s{1, 1}, d{0, 0}, p{1, 1};
  bool cv = dnnl_convolution_forward_primitive_desc_create(&pd, g_eng, dnnl_forward_training, dnnl_convolution_direct,
                                                           src, wei, nullptr, dst, s, d, p, p, nullptr) == dnnl_success;
  if (pd) dnnl_primitive_desc_destroy(pd);
  std::printf("lowp=%s matmul=%s conv=%s\n", name, mm ? "yes" : "no", cv ? "yes" : "no");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_min_time = std::atof(argv[1]);
  const dnnl_version_t* v = dnnl_version();
  std::printf("onednn=%d.%d.%d cpu_runtime=%u\n", v->major, v->minor, v->patch, v->cpu_runtime);
  CK(dnnl_engine_create(&g_eng, dnnl_cpu, 0));
  CK(dnnl_stream_create(&g_str, g_eng, dnnl_stream_default_flags));
  report_low_precision(dnnl_bf16, "bf16");
  report_low_precision(dnnl_f16, "f16");
  bench_sgemm("sgemm_1024", 1024, 1024, 1024);
  bench_sgemm("sgemm_256", 256, 256, 256);
  bench_sgemm("sgemm_ff1_1024x2048x512", 1024, 2048, 512);  // Transformer ff1: (batch·seq 1024, d 512) x (512, 2048)
  bench_matmul("matmul_1024", 1024, 1024, 1024);
  bench_matmul("matmul_ff1_1024x2048x512", 1024, 2048, 512);
  bench_conv(8, 64, 64, 32, 32);  // a ResNet basic block's 3x3 convolution
  return 0;
}
