// Plain Gloo all-reduce benchmark (no Kiln): the baseline of bench_allreduce.py. Usage:
//   gloo_allreduce RANK SIZE STORE_DIR ITERS_SCALE
// Rendezvous through gloo's FileStore in STORE_DIR; for each size 1 KiB … 64 MiB (float32) runs warm-up all-reduces,
// then times each of `iters` of them (out of place, gloo::sum<float>, Gloo's default algorithm) and prints on rank 0:
//   <bytes> <median seconds per all-reduce> <10th-percentile seconds> <process CPU seconds per all-reduce>
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
#include <vector>

// CPU time of the whole process (all its threads: Gloo's transport thread too), in seconds.
static double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  double scale = std::atof(argv[4]);
  gloo::rendezvous::FileStore store(argv[3]);
  auto dev = gloo::transport::tcp::CreateDevice("127.0.0.1");
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->connectFullMesh(store, dev);
  for (size_t bytes = 1024; bytes <= (size_t(64) << 20); bytes *= 4) {
    size_t n = bytes / sizeof(float);
    std::vector<float> in(n, float(rank + 1)), out(n);
    int iters = std::max(3, int(scale * 2e8 / double(bytes + 200000)));
    auto run = [&] {
      gloo::AllreduceOptions o(ctx);
      o.setInput(in.data(), n);
      o.setOutput(out.data(), n);
      o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      gloo::allreduce(o);
    };
    for (int i = 0; i < 3; ++i) run();
    std::vector<double> t(iters);
    double cpu0 = process_cpu_seconds();
    for (int i = 0; i < iters; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      run();
      t[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    double cpu = (process_cpu_seconds() - cpu0) / iters;
    std::sort(t.begin(), t.end());
    if (out[0] != float(size * (size + 1) / 2)) return 3;
    if (rank == 0) std::printf("%zu %.9f %.9f %.9f\n", bytes, t[iters / 2], t[iters / 10], cpu);
  }
  return 0;
}
