// The CPU collective backend: Gloo (Debian's libgloo-dev; docs/decisions/collectives-gloo.md). Each group is a
// gloo::rendezvous::Context connected as a full mesh over Gloo's TCP transport; the collectives are Gloo's own
// (allreduce: ring / bcube chosen by Gloo; allgather; alltoall; alltoallv; broadcast; barrier; unbound-buffer
// send/recv). Kiln adds
// only the element-wise reduce functions for its dtypes and reduce-scatter as allreduce + this rank's chunk (the
// 2022 Gloo snapshot has no options-style reduce-scatter).
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kiln/comm.h"
#include "tcp_store.h"

namespace kiln::comm {
namespace {
using ms = std::chrono::milliseconds;

// c[i] = a[i] (op) b[i] over n elements of T, computed in compute_t<T> (float for 16-bit floats).
template <typename T, ReduceOp OP> void reduce_fn(void* c, const void* a, const void* b, size_t n) {
  T* o = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  using C = compute_t<T>;
  for (size_t i = 0; i < n; ++i) {
    C u = static_cast<C>(x[i]), v = static_cast<C>(y[i]);
    C r;
    if constexpr (OP == ReduceOp::Sum) r = u + v;
    else if constexpr (OP == ReduceOp::Prod) r = u * v;
    else if constexpr (OP == ReduceOp::Max) r = (u != u || u > v) ? u : v;  // NaN propagates
    else r = (u != u || u < v) ? u : v;
    o[i] = convert_value<T>(r);
  }
}

template <typename T> gloo::AllreduceOptions::Func reduce_func(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return &reduce_fn<T, ReduceOp::Sum>;
    case ReduceOp::Max: return &reduce_fn<T, ReduceOp::Max>;
    case ReduceOp::Min: return &reduce_fn<T, ReduceOp::Min>;
    default: return &reduce_fn<T, ReduceOp::Prod>;
  }
}

// Gloo reports transport failures and timeouts as gloo::Exception (IoException, TimeoutException, EnforceNotMet):
// rethrown as kiln::Error(Runtime) naming the operation, so Python gets a RuntimeError.
template <typename F> void guarded(const char* what, int rank, int size, F&& f) {
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    KILN_FAIL(Runtime, "Kiln communication: ", what, " failed on group rank ", rank, " of ", size,
              " (a peer process died, or did not reach the same collective within the timeout): ", e.what());
  }
}

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<gloo::Context> ctx, ms timeout) : ctx_(std::move(ctx)), timeout_(timeout) {}
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  // Empty tensors move no data (every rank has the same shape): nothing is sent, as Gloo needs buffers.
  void all_reduce(const Tensor& in, const Tensor& out, ReduceOp op) override {
    if (in.numel() == 0) return;
    guarded("AllReduce", rank(), size(), [&] {
      KILN_DISPATCH(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
          KILN_FAIL(Type, "For 'AllReduce', Bool tensors cannot be reduced.");
        } else {
          gloo::AllreduceOptions o(ctx_);
          o.setInput<T>(in.data<T>(), size_t(in.numel()));
          o.setOutput<T>(out.data<T>(), size_t(out.numel()));
          o.setReduceFunction(reduce_func<T>(op));
          o.setTag(next_tag());
          o.setTimeout(timeout_);
          gloo::allreduce(o);
        }
      });
    });
  }

  void all_gather(const Tensor& in, const Tensor& out) override {
    if (in.numel() == 0) return;
    guarded("AllGather", rank(), size(), [&] {
      gloo::AllgatherOptions o(ctx_);
      size_t nb = size_t(in.numel()) * itemsize(in.dtype());
      o.setInput<char>(static_cast<char*>(in.raw_data()), nb);
      o.setOutput<char>(static_cast<char*>(out.raw_data()), nb * size_t(size()));
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  // Ring reduce-scatter (each process sends and receives (N-1)/N of the input, half an all-reduce's traffic):
  // chunk k starts at rank k+1, travels right, each rank adding its own chunk k, and ends reduced at rank k.
  // Step s: send chunk (r-s-1) mod N to the right, receive chunk (r-s-2) mod N from the left and reduce it in.
  void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) override {
    const int n = size(), r = rank();
    const size_t cb = size_t(out.numel()) * itemsize(out.dtype());
    if (cb == 0) return;
    if (n == 1) {
      std::memcpy(out.raw_data(), in.raw_data(), cb);
      return;
    }
    guarded("ReduceScatter", r, n, [&] {
      KILN_DISPATCH(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
          KILN_FAIL(Type, "For 'ReduceScatter', Bool tensors cannot be reduced.");
        } else {
          const char* src = static_cast<const char*>(in.raw_data());
          std::vector<char> work(src, src + cb * size_t(n));
          std::vector<char> tmp(cb);
          auto wbuf = ctx_->createUnboundBuffer(work.data(), work.size());
          auto tbuf = ctx_->createUnboundBuffer(tmp.data(), tmp.size());
          auto fn = reduce_func<T>(op);
          const int right = (r + 1) % n, left = (r + n - 1) % n;
          // slots: prefix 0x09 (Gloo's collectives use 0x01..0x08, Send/Recv tags < 2^31), this call's tag, step
          const uint64_t base = (uint64_t(0x09) << 56) | (uint64_t(next_tag()) << 16);
          for (int s = 0; s < n - 1; ++s) {
            const size_t send_idx = size_t(((r - s - 1) % n + n) % n), recv_idx = size_t(((r - s - 2) % n + n) % n);
            tbuf->recv(left, base + uint64_t(s), 0, cb);
            wbuf->send(right, base + uint64_t(s), send_idx * cb, cb);
            KILN_CHECK(tbuf->waitRecv(timeout_), Runtime, "Kiln communication: ReduceScatter timed out after ",
                       timeout_.count(), " ms waiting for group rank ", left, ".");
            fn(work.data() + recv_idx * cb, work.data() + recv_idx * cb, tmp.data(), cb / sizeof(T));
            KILN_CHECK(wbuf->waitSend(timeout_), Runtime, "Kiln communication: ReduceScatter timed out after ",
                       timeout_.count(), " ms sending to group rank ", right, ".");
          }
          std::memcpy(out.raw_data(), work.data() + size_t(r) * cb, cb);
        }
      });
    });
  }

  // Gloo's alltoall moves bytes: any dtype. Every rank has the same shape, so an empty tensor is empty everywhere.
  void all_to_all(const Tensor& in, const Tensor& out) override {
    if (in.numel() == 0) return;
    guarded("AlltoAll", rank(), size(), [&] {
      gloo::AlltoallOptions o(ctx_);
      size_t nb = size_t(in.numel()) * itemsize(in.dtype());
      o.setInput<char>(static_cast<char*>(in.raw_data()), nb);
      o.setOutput<char>(static_cast<char*>(out.raw_data()), nb);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::alltoall(o);
    });
  }

  // Gloo's alltoallv, counted in bytes. Ranks with nothing to move still take part (their peers expect the
  // zero-length exchange); an empty tensor gets a placeholder byte as its buffer.
  void all_to_all_v(const Tensor& in, const std::vector<int64_t>& send_counts, const Tensor& out,
                    const std::vector<int64_t>& recv_counts) override {
    guarded("AlltoAllV", rank(), size(), [&] {
      const int64_t isz = int64_t(itemsize(in.dtype()));
      std::vector<int64_t> sb(send_counts), rb(recv_counts);
      for (auto& c : sb) c *= isz;
      for (auto& c : rb) c *= isz;
      char placeholder[2] = {0, 0};
      char* ip = in.numel() ? static_cast<char*>(in.raw_data()) : placeholder;
      char* op = out.numel() ? static_cast<char*>(out.raw_data()) : placeholder + 1;
      gloo::AlltoallvOptions o(ctx_);
      o.setInput<char>(ip, sb);
      o.setOutput<char>(op, rb);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::alltoallv(o);
    });
  }

  void broadcast(const Tensor& in, const Tensor& out, int root) override {
    if (in.numel() == 0) return;
    guarded("Broadcast", rank(), size(), [&] {
      size_t nb = size_t(in.numel()) * itemsize(in.dtype());
      if (rank() == root && out.raw_data() != in.raw_data()) std::memcpy(out.raw_data(), in.raw_data(), nb);
      gloo::BroadcastOptions o(ctx_);
      o.setOutput<char>(static_cast<char*>(out.raw_data()), nb);
      o.setRoot(root);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::broadcast(o);
    });
  }

  void barrier() override {
    guarded("Barrier", rank(), size(), [&] {
      gloo::BarrierOptions o(ctx_);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

  void send(const Tensor& t, int dst, int tag) override {
    if (t.numel() == 0) return;
    guarded("Send", rank(), size(), [&] {
      auto buf = ctx_->createUnboundBuffer(t.raw_data(), size_t(t.numel()) * itemsize(t.dtype()));
      buf->send(dst, uint64_t(tag));
      KILN_CHECK(buf->waitSend(timeout_), Runtime, "Kiln communication: Send to group rank ", dst, " timed out after ",
                 timeout_.count(), " ms.");
    });
  }

  void recv(const Tensor& t, int src, int tag) override {
    if (t.numel() == 0) return;
    guarded("Receive", rank(), size(), [&] {
      auto buf = ctx_->createUnboundBuffer(t.raw_data(), size_t(t.numel()) * itemsize(t.dtype()));
      buf->recv(src, uint64_t(tag));
      KILN_CHECK(buf->waitRecv(timeout_), Runtime, "Kiln communication: Receive from group rank ", src,
                 " timed out after ", timeout_.count(), " ms.");
    });
  }

 private:
  // Collectives on one context run one at a time and in the same order on every rank: a per-call tag (same
  // sequence everywhere) keeps a late message of one collective from matching the next.
  uint32_t next_tag() { return tag_++ & 0x7fffffffu; }
  std::shared_ptr<gloo::Context> ctx_;
  ms timeout_;
  uint32_t tag_ = 0;
};

class GlooBackend : public Backend {
 public:
  explicit GlooBackend(const InitOptions& o) : timeout_(o.timeout_ms) {
    if (o.size == 1 && o.store_host.empty()) {
      store_ = std::make_unique<gloo::rendezvous::HashStore>();  // one process: nothing to meet
    } else {
      KILN_CHECK(!o.store_host.empty(), Value, "Kiln communication: a world of ", o.size,
                 " processes needs the rendezvous store's address (MS_SCHED_HOST / MS_SCHED_PORT).");
      store_ = std::make_unique<TcpStore>(o.store_host, o.store_port, timeout_, o.store_token);
    }
    // Gloo's TCP transport (the 2022 snapshot) opens one listening socket per pair, bound to the device's address
    // (port chosen by the OS), and accepts the first connection on it: it must be the job's interface, never a
    // wildcard. Pair connections are not authenticated by Gloo; peers learn each other's addresses only through
    // the authenticated store (docs/distributed.md, "Security").
    KILN_CHECK(o.iface_host != "0.0.0.0" && o.iface_host != "::", Value,
               "Kiln communication: Gloo must listen on the job's interface address, not on the wildcard '",
               o.iface_host, "'.");
    gloo::transport::tcp::attr attr;
    attr.hostname = o.iface_host.empty() ? (o.size == 1 ? std::string("127.0.0.1") : std::string()) : o.iface_host;
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      KILN_FAIL(Runtime, "Kiln communication: cannot open Gloo's TCP transport on '", attr.hostname, "': ", e.what());
    }
  }

  std::unique_ptr<Communicator> connect(const std::string& prefix, int rank, int size) override {
    gloo::rendezvous::PrefixStore store(prefix, *store_);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(timeout_);
    try {
      ctx->connectFullMesh(store, device_);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      KILN_FAIL(Runtime, "Kiln communication: connecting group '", prefix, "' (rank ", rank, " of ", size,
                ") failed: ", e.what());
    }
    return std::make_unique<GlooCommunicator>(ctx, timeout_);
  }

 private:
  ms timeout_;
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::transport::Device> device_;
};
}  // namespace

std::unique_ptr<Backend> make_backend(const InitOptions& opts) {
  if (opts.backend == "gloo") return std::make_unique<GlooBackend>(opts);
  KILN_FAIL(Runtime, "Kiln communication: backend '", opts.backend,
            "' is not available in this build (CPU collectives use 'gloo'; NCCL needs the GPU backend).");
}

}  // namespace kiln::comm
