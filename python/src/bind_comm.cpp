// Communication: the process's groups (kiln/comm.h) and the collective ops. Thin: argument conversion only.
// Rendezvous calls (init, create_group) release the GIL: they wait for other processes, and the rendezvous store
// may be served by a Python thread of this very process (rank 0 without the launcher).
#include "bindings.h"
#include "kiln/comm.h"

namespace kiln::py {

void bind_comm(nb::module_& m) {
  m.def("comm_init",
        [](int rank, int size, const std::string& host, int port, const std::string& iface, int64_t timeout_ms,
           const std::string& backend) {
          comm::InitOptions o;
          o.rank = rank;
          o.size = size;
          o.store_host = host;
          o.store_port = port;
          o.iface_host = iface;
          o.timeout_ms = timeout_ms;
          o.backend = backend;
          nb::gil_scoped_release nogil;
          comm::init(o);
        },
        nb::arg("rank"), nb::arg("size"), nb::arg("host"), nb::arg("port"), nb::arg("iface") = "",
        nb::arg("timeout_ms") = 300000, nb::arg("backend") = "gloo",
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
  m.def("all_reduce", [](TL x, int64_t op, const std::string& g) { return ops::all_reduce(x, comm::ReduceOp(op), g); },
        nb::arg("x"), nb::arg("op"), nb::arg("group"), "op: 0 sum, 1 max, 2 min, 3 prod.");
  m.def("all_gather", [](TL x, const std::string& g) { return ops::all_gather(x, g); }, nb::arg("x"),
        nb::arg("group"));
  m.def("reduce_scatter",
        [](TL x, int64_t op, const std::string& g) { return ops::reduce_scatter(x, comm::ReduceOp(op), g); },
        nb::arg("x"), nb::arg("op"), nb::arg("group"));
  m.def("broadcast", [](TL x, int64_t root, const std::string& g) { return ops::broadcast(x, root, g); },
        nb::arg("x"), nb::arg("root"), nb::arg("group"));
  m.def("barrier", [](const std::string& g) { return ops::barrier(g); }, nb::arg("group"));
  m.def("send", [](TL x, int64_t dst, int64_t tag, const std::string& g) { return ops::send(x, dst, tag, g); },
        nb::arg("x"), nb::arg("dst"), nb::arg("tag"), nb::arg("group"));
  m.def("recv",
        [](nb::handle shape, DType dtype, int64_t src, int64_t tag, const std::string& g) {
          return ops::recv(to_shape(shape, "Receive"), dtype, src, tag, g);
        },
        nb::arg("shape"), nb::arg("dtype"), nb::arg("src"), nb::arg("tag"), nb::arg("group"));
}

}  // namespace kiln::py
