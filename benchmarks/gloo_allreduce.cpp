// Plain Gloo all-reduce (no Kiln): the baseline of bench_allreduce.py. One timed loop (`timed_allreduces`), used two
// ways:
//
// 1. As a program (g++ -O3 -std=c++17 gloo_allreduce.cpp -lgloo):
//      gloo_allreduce RANK SIZE STORE_DIR ITERS_SCALE
//    Rendezvous through gloo's FileStore in STORE_DIR; for each size 1 KiB … 64 MiB (float32) runs warm-up
//    all-reduces, then times each of `iters` of them and prints on rank 0:
//      <bytes> <median seconds per all-reduce> <10th-percentile seconds> <process CPU seconds per all-reduce>
//
// 2. As a shared library (… -shared -fPIC -DGLOO_ALLREDUCE_LIB), loaded with ctypes by bench_allreduce.py's Kiln
//    workers: the same loop runs in the same two processes as Kiln's all-reduce, in alternating blocks, so that both
//    meet the same scheduling (see bench_allreduce.py). C API: gab_connect, gab_run, gab_free.
//
// Each all-reduce is out of place, gloo::sum<float>, Gloo's default algorithm (ring), Gloo's default tag and timeout —
// the same gloo::allreduce call Kiln's Gloo backend makes (src/comm/gloo_backend.cpp). By default every call writes
// the same output buffer; gab_run_alternating writes two output buffers in turn (call i into buffer i % 2), the memory
// pattern of a caller that still holds the previous result while the next all-reduce runs (bench_allreduce.py --held).
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <new>
#include <vector>

namespace {
// CPU time of the whole process (all its threads: Gloo's transport thread too), in seconds.
double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Page-aligned float buffers. With std::vector's (malloc's 16-byte alignment), plain Gloo took twice Kiln's time at
// exactly 1 MiB in the same processes (p10 2.5 vs 1.3 ms); page-aligned ones — as Kiln's allocator maps large
// blocks — do not (1.2–1.3 ms).
struct FloatBuffer {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> p;
  size_t n = 0;
  void assign(size_t count, float v) {
    p.reset(static_cast<float*>(std::aligned_alloc(4096, (count * sizeof(float) + 4095) / 4096 * 4096)));
    if (!p) throw std::bad_alloc();
    n = count;
    std::fill(p.get(), p.get() + n, v);
  }
  size_t size() const { return n; }
  float* data() { return p.get(); }
};

struct Bench {
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  FloatBuffer in, out;
  FloatBuffer out2;  // the second output of the alternating mode (allocated on first use)
};

std::shared_ptr<gloo::rendezvous::Context> connect(int rank, int size, const char* store_dir) {
  gloo::rendezvous::FileStore store(store_dir);
  auto dev = gloo::transport::tcp::CreateDevice("127.0.0.1");
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->connectFullMesh(store, dev);
  return ctx;
}

// `warmup` untimed then `iters` timed all-reduces of `n` floats (input rank+1); times[i] = seconds of call i.
// alternate: call i writes b.out (i even) or b.out2 (i odd) instead of always b.out.
// Returns the process CPU seconds per timed call; -1 if the result is wrong.
double timed_allreduces(Bench& b, size_t n, int warmup, int iters, double* times, bool alternate = false) {
  const int rank = b.ctx->rank, size = b.ctx->size;
  if (b.in.size() != n) {
    b.in.assign(n, float(rank + 1));
    b.out.assign(n, 0.0f);
  }
  if (alternate && b.out2.size() != n) b.out2.assign(n, 0.0f);
  int call = 0;
  auto run = [&] {
    float* out = alternate && (call++ & 1) ? b.out2.data() : b.out.data();
    gloo::AllreduceOptions o(b.ctx);
    o.setInput(b.in.data(), n);
    o.setOutput(out, n);
    o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    gloo::allreduce(o);
  };
  for (int i = 0; i < warmup; ++i) run();
  double cpu0 = process_cpu_seconds();
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    times[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double cpu = (process_cpu_seconds() - cpu0) / std::max(iters, 1);
  const float want = float(size * (size + 1) / 2);
  const bool ok = b.out.data()[0] == want && (!alternate || warmup + iters < 2 || b.out2.data()[0] == want);
  return ok ? cpu : -1.0;
}
}  // namespace

#ifdef GLOO_ALLREDUCE_LIB
extern "C" {
// Connects this process (rank of size) through a FileStore in store_dir; nullptr on failure.
void* gab_connect(int rank, int size, const char* store_dir) {
  try {
    auto b = new Bench();
    b->ctx = connect(rank, size, store_dir);
    return b;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gab_connect: %s\n", e.what());
    return nullptr;
  }
}
// See timed_allreduces; -2 on a Gloo error.
double gab_run(void* h, size_t n, int warmup, int iters, double* times) {
  try {
    return timed_allreduces(*static_cast<Bench*>(h), n, warmup, iters, times);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gab_run: %s\n", e.what());
    return -2.0;
  }
}
// As gab_run, the calls writing two output buffers in turn.
double gab_run_alternating(void* h, size_t n, int warmup, int iters, double* times) {
  try {
    return timed_allreduces(*static_cast<Bench*>(h), n, warmup, iters, times, true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gab_run_alternating: %s\n", e.what());
    return -2.0;
  }
}
void gab_free(void* h) { delete static_cast<Bench*>(h); }
}
#else
int main(int argc, char** argv) {
  if (argc < 5) return 2;
  int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  double scale = std::atof(argv[4]);
  Bench b;
  b.ctx = connect(rank, size, argv[3]);
  for (size_t bytes = 1024; bytes <= (size_t(64) << 20); bytes *= 4) {
    int iters = std::max(3, int(scale * 2e8 / double(bytes + 200000)));
    std::vector<double> t(iters);
    double cpu = timed_allreduces(b, bytes / sizeof(float), 3, iters, t.data());
    if (cpu < 0) return 3;
    std::sort(t.begin(), t.end());
    if (rank == 0) std::printf("%zu %.9f %.9f %.9f\n", bytes, t[iters / 2], t[iters / 10], cpu);
  }
  return 0;
}
#endif
