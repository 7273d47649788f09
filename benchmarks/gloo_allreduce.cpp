// Plain Gloo all-reduce benchmark (no Kiln): the baseline of bench_allreduce.py. Usage:
//   gloo_allreduce RANK SIZE STORE_DIR ITERS_SCALE
// Rendezvous through gloo's FileStore in STORE_DIR; for each size 1 KiB … 64 MiB (float32) runs warm-up all-reduces,
// then times `iters` of them (out of place, gloo::sum<float>, Gloo's default algorithm) and prints on rank 0:
//   <bytes> <seconds per all-reduce>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

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
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
    if (out[0] != float(size * (size + 1) / 2)) return 3;
    if (rank == 0) std::printf("%zu %.9f\n", bytes, s);
  }
  return 0;
}
