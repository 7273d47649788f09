// Communication: the process's groups (kiln/comm.h) and the collective ops. Thin: argument conversion only.
// Rendezvous calls (init, create_group) release the GIL: they wait for other processes, and the rendezvous store
// may be served by a Python thread of this very process (rank 0 without the launcher). So do eager collectives
// (see collective()).
#include "bindings.h"
#include "kiln/comm.h"
#include "kiln/graph.h"

namespace kiln::py {
namespace {
// Runs a collective op. Eagerly it waits for the group's other processes (up to the collective timeout), so it runs
// without the GIL: the process's other Python threads (data loading, logging, a rendezvous store) go on meanwhile.
// Before, only a kernel on >= 8192 elements released it (the generic kernel hook), so a barrier, a send/recv or a
// small all-reduce held the GIL for its whole wait. The op itself needs no Python (the tape and the trace are
// thread-local; Python callbacks take the GIL themselves); while tracing (jit) it is only recorded, with the GIL kept.
template <typename F> Tensor collective(F&& f) {
  if (graph::tracing()) return f();
  nb::gil_scoped_release nogil;
  return f();
}
}  // namespace

void bind_comm(nb::module_& m) {
  m.def("comm_init",
        [](int rank, int size, const std::string& host, int port, const std::string& iface, int64_t timeout_ms,
           const std::string& backend, const std::string& token) {
          comm::InitOptions o;
          o.rank = rank;
          o.size = size;
          o.store_host = host;
          o.store_port = port;
          o.iface_host = iface;
          o.timeout_ms = timeout_ms;
          o.backend = backend;
          o.store_token = token;
          nb::gil_scoped_release nogil;
          comm::init(o);
        },
        nb::arg("rank"), nb::arg("size"), nb::arg("host"), nb::arg("port"), nb::arg("iface") = "",
        nb::arg("timeout_ms") = 300000, nb::arg("backend") = "gloo", nb::arg("token") = "",
        "Joins the world group 'world' (see kiln/comm.h); blocks until every rank has joined or the timeout passes.");
  m.def("comm_release", [] { nb::gil_scoped_release nogil; comm::release(); });
  m.def("comm_initialized", &comm::initialized);
  m.def("comm_timeout_ms", &comm::timeout_ms);
  m.def("comm_create_group",
        [](const std::string& name, const std::vector<int64_t>& ranks) {
          nb::gil_scoped_release nogil;
          comm::create_group(name, ranks);
        },
        nb::arg("name"), nb::arg("ranks"));
  m.def("comm_destroy_group", &comm::destroy_group, nb::arg("name"));
  m.def("comm_has_group", &comm::has_group, nb::arg("name"));
  m.def("comm_group_rank", &comm::group_rank, nb::arg("name"));
  m.def("comm_group_size", &comm::group_size, nb::arg("name"));
  m.def("comm_group_ranks", &comm::group_ranks, nb::arg("name"));

  using TL = const TensorLike&;
  m.def("all_reduce",
        [](TL x, int64_t op, const std::string& g) {
          return collective([&] { return ops::all_reduce(x, comm::ReduceOp(op), g); });
        },
        nb::arg("x"), nb::arg("op"), nb::arg("group"), "op: 0 sum, 1 max, 2 min, 3 prod.");
  m.def("all_gather", [](TL x, const std::string& g) { return collective([&] { return ops::all_gather(x, g); }); },
        nb::arg("x"), nb::arg("group"));
  m.def("reduce_scatter",
        [](TL x, int64_t op, const std::string& g) {
          return collective([&] { return ops::reduce_scatter(x, comm::ReduceOp(op), g); });
        },
        nb::arg("x"), nb::arg("op"), nb::arg("group"));
  m.def("all_to_all",
        [](TL x, int64_t split_count, int64_t split_dim, int64_t concat_dim, const std::string& g) {
          return collective([&] { return ops::all_to_all(x, split_count, split_dim, concat_dim, g); });
        },
        nb::arg("x"), nb::arg("split_count"), nb::arg("split_dim"), nb::arg("concat_dim"), nb::arg("group"));
  m.def("all_to_all_v",
        [](TL x, const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts,
           const std::string& g) {
          return collective([&] { return ops::all_to_all_v(x, send_counts, recv_counts, g); });
        },
        nb::arg("x"), nb::arg("send_counts"), nb::arg("recv_counts"), nb::arg("group"),
        "A 1-D x: send_counts[j] elements to group rank j; returns the recv_counts[j] elements from each, in order.");
  m.def("broadcast",
        [](TL x, int64_t root, const std::string& g) { return collective([&] { return ops::broadcast(x, root, g); }); },
        nb::arg("x"), nb::arg("root"), nb::arg("group"));
  m.def("barrier", [](const std::string& g) { return collective([&] { return ops::barrier(g); }); },
        nb::arg("group"));
  m.def("send",
        [](TL x, int64_t dst, int64_t tag, const std::string& g) {
          return collective([&] { return ops::send(x, dst, tag, g); });
        },
        nb::arg("x"), nb::arg("dst"), nb::arg("tag"), nb::arg("group"));
  m.def("recv",
        [](nb::handle shape, DType dtype, int64_t src, int64_t tag, const std::string& g) {
          Shape s = to_shape(shape, "Receive");
          return collective([&] { return ops::recv(s, dtype, src, tag, g); });
        },
        nb::arg("shape"), nb::arg("dtype"), nb::arg("src"), nb::arg("tag"), nb::arg("group"));
}

}  // namespace kiln::py
