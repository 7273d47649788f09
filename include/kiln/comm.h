// Kiln — collective communication between processes (data-parallel training).
//
// Layering: `kiln::comm` keeps the process's communication groups (the world group and the groups made by
// create_group) and runs collectives on a group's communicator. A communicator comes from a Backend; the CPU
// backend is Gloo (src/comm/gloo_backend.cpp, docs/decisions/collectives-gloo.md). A GPU backend (NCCL) is a
// second Backend implementation behind the same interface: the collective ops (src/ops/collective.cpp) and the
// Python layer do not change.
//
// Rendezvous: every process of a group publishes its transport address in a key-value store and reads the others'.
// The world's store is a TCP store (src/comm/tcp_store.cpp) served by the launcher (python -m kiln.msrun) or by
// rank 0, at MS_SCHED_HOST:MS_SCHED_PORT; a one-process world needs no store. Every connection to the store is
// authenticated both ways with the job's token (docs/decisions/rendezvous-auth.md).
//
// Ordering: the processes of a group must issue the group's collectives in the same order (as with MPI, NCCL,
// Gloo). Compiled graphs run collective nodes in program order (they are side effects: graph::has_side_effect).
// Every collective waits at most the timeout given to init (then RuntimeError): a dead peer never hangs a process.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::comm {

enum class ReduceOp : int64_t { Sum = 0, Max = 1, Min = 2, Prod = 3 };

// A communicator: the members of one group, connected. Ranks are group ranks (0 … size-1). Buffers are contiguous
// CPU tensors of one dtype; `out` may be `in` where noted. Every call throws kiln::Error(Runtime) on a transport
// failure or timeout (the message names the operation and the group). Not thread-safe: comm:: serializes calls.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // out[i] = op over ranks of in[i]; out may be in.
  virtual void all_reduce(const Tensor& in, const Tensor& out, ReduceOp op) = 0;
  // out (size·n elements) = concatenation of every rank's in (n elements), in rank order.
  virtual void all_gather(const Tensor& in, const Tensor& out) = 0;
  // out (n elements) = this rank's n-element chunk of (op over ranks of in) (size·n elements).
  virtual void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) = 0;
  // Equal all-to-all: in and out hold size·n elements; chunk j of in (n elements) goes to rank j, and chunk j of out
  // is rank j's chunk `rank` (out is not in).
  virtual void all_to_all(const Tensor& in, const Tensor& out) = 0;
  // Uneven all-to-all: in holds send_counts[j] elements for rank j, consecutive in rank order; out receives
  // recv_counts[j] elements from rank j, consecutive in rank order (counts: `size` entries, ≥ 0; recv_counts[j] must
  // equal rank j's send_counts[rank]). Every rank takes part, even one with nothing to send or receive.
  virtual void all_to_all_v(const Tensor& in, const std::vector<int64_t>& send_counts, const Tensor& out,
                            const std::vector<int64_t>& recv_counts) = 0;
  // out = root's in on every rank (out may be in).
  virtual void broadcast(const Tensor& in, const Tensor& out, int root) = 0;
  virtual void barrier() = 0;
  virtual void send(const Tensor& t, int dst, int tag) = 0;
  virtual void recv(const Tensor& t, int src, int tag) = 0;
};

// Where and how a process joins the world.
struct InitOptions {
  std::string backend = "gloo";  // the only CPU backend; "nccl" is the seam for the GPU backend (not built)
  int rank = 0;
  int size = 1;
  std::string store_host;        // the TCP store (MS_SCHED_HOST); empty with size 1: no store
  int store_port = 0;
  std::string store_token;       // the job's rendezvous token (KILN_RENDEZVOUS_TOKEN; "" = none: loopback only)
  std::string iface_host;        // the address Gloo listens on for its peers ("" = this host's name; never a
                                 // wildcard such as 0.0.0.0: peers must get an address they can connect to)
  int64_t timeout_ms = 300000;   // rendezvous and every collective
};

// Joins the world group "world" (names: see Python's GlobalComm). RuntimeError if already initialized, if the
// backend is unknown, or if the rendezvous fails or times out; ValueError for a rank outside [0, size).
void init(const InitOptions& opts);
// Leaves every group; afterwards init may run again. No-op when not initialized.
void release();
bool initialized();
// The timeout of init (milliseconds).
int64_t timeout_ms();
// Makes group `name` of the given world ranks (distinct, sorted or not: group rank i is ranks[i]). Every member
// calls it, in the same order relative to other create_group calls. ValueError: name taken or "world", ranks out
// of range or repeated, fewer than 1 rank, or this process not among them.
void create_group(const std::string& name, const std::vector<int64_t>& ranks);
// Removes a group made by create_group. ValueError for an unknown name or the world group.
void destroy_group(const std::string& name);
bool has_group(const std::string& name);
// This process's rank in the group, and the group's size. ValueError for an unknown group.
int group_rank(const std::string& name);
int group_size(const std::string& name);
// The world ranks of a group's members, by group rank.
std::vector<int64_t> group_ranks(const std::string& name);
// Runs f on the group's communicator, one call at a time per process. RuntimeError when not initialized,
// ValueError for an unknown group.
void with_group(const std::string& name, const std::function<void(Communicator&)>& f);

// Backend seam: a backend connects the members of a group into a Communicator, rendezvousing under `prefix` (unique
// per group creation) in the world's store. make_backend("gloo") is the CPU backend; other names: RuntimeError.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::unique_ptr<Communicator> connect(const std::string& prefix, int rank, int size) = 0;
};
std::unique_ptr<Backend> make_backend(const InitOptions& opts);

}  // namespace kiln::comm

namespace kiln::ops {
// Collective ops (src/ops/collective.cpp): eager, traced into graphs as side effects, with MindSpore's bprops.
// `group` is a group name ("world" or one made by create_group). ValueError for a bad op, root or shape.
Tensor all_reduce(const Tensor& x, comm::ReduceOp op, const std::string& group);   // same shape
Tensor all_gather(const Tensor& x, const std::string& group);          // [size·d0, ...]: concatenated along axis 0
Tensor reduce_scatter(const Tensor& x, comm::ReduceOp op, const std::string& group);  // [d0/size, ...]
// AlltoAll (MindSpore's): x split along split_dim into split_count (= group size) blocks, block j to group rank j;
// the blocks received concatenated along concat_dim in rank order. Dims may be negative (counted from the end).
Tensor all_to_all(const Tensor& x, int64_t split_count, int64_t split_dim, int64_t concat_dim,
                  const std::string& group);
// Uneven all-to-all of a 1-D x: send_counts[j] elements to group rank j, recv_counts[j] elements from it; the result
// is 1-D with sum(recv_counts) elements, in rank order.
Tensor all_to_all_v(const Tensor& x, const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts,
                    const std::string& group);
Tensor broadcast(const Tensor& x, int64_t root, const std::string& group);  // root's x (root: a group rank)
Tensor barrier(const std::string& group);                               // an Int32 0-d token
Tensor send(const Tensor& x, int64_t dst, int64_t tag, const std::string& group);  // an Int32 0-d token
// Receives a tensor of `shape`/`dtype` from group rank `src` (sent with the same tag).
Tensor recv(const Shape& shape, DType dtype, int64_t src, int64_t tag, const std::string& group);
}  // namespace kiln::ops
