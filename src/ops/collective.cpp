// Collective ops: AllReduce, AllGather, ReduceScatter, Broadcast, Barrier, Send, Receive. Kernels call the
// group's communicator (kiln/comm.h); in a graph they are side-effecting nodes (graph::has_side_effect), so they
// run in program order and are never removed, merged or folded. Bprops are MindSpore's (ops/_grad_experimental/
// grad_comm_ops.py): AllReduce SUM → AllReduce SUM of dout; MAX/MIN → AllReduce SUM of dout masked by x == out;
// PROD → AllReduce SUM of (dout·out) / x; AllGather → ReduceScatter SUM; ReduceScatter (SUM only) → AllGather;
// Broadcast → dout. Every rank runs the same backward collectives: a zero cotangent still takes part (as zeros).
#include <cstring>

#include "families.h"
#include "kiln/comm.h"
#include "kiln/ops.h"

namespace kiln {
namespace {
using TV = std::vector<Tensor>;
using comm::ReduceOp;

const char* reduce_name(int64_t op) {
  static const char* names[] = {"sum", "max", "min", "prod"};
  return op >= 0 && op < 4 ? names[op] : "?";
}

Tensor or_zeros(const Tensor& g, const Tensor& like) { return g.defined() ? g : ops::zeros_like(like); }

// ---- AllReduce ----
std::vector<TensorMeta> infer_all_reduce(const TV& in, const Attrs& a) {
  KILN_CHECK(in[0].dtype() != DType::Bool && !is_wide_unsigned(in[0].dtype()), Type,
             "For 'AllReduce', the input must be a float or Int8/Int16/Int32/Int64/UInt8 tensor, but got ",
             dtype_name(in[0].dtype()), ".");
  comm::group_size(a.s("group"));  // an unknown group or no init: a clear error now, also while compiling
  return {{in[0].shape(), in[0].dtype()}};
}
void k_all_reduce(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.all_reduce(x, out[0], ReduceOp(a.i("op"))); });
}
TV bp_all_reduce(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  const std::string& group = a.s("group");
  Tensor dout = or_zeros(g[0], out[0]);
  switch (ReduceOp(a.i("op"))) {
    case ReduceOp::Sum: return {ops::all_reduce(dout, ReduceOp::Sum, group)};
    case ReduceOp::Prod: return {ops::div(ops::all_reduce(ops::mul(dout, out[0]), ReduceOp::Sum, group), in[0])};
    default: {
      Tensor dx = ops::all_reduce(dout, ReduceOp::Sum, group);
      return {ops::mul(dx, ops::cast(ops::equal(in[0], out[0]), dx.dtype()))};
    }
  }
}

// ---- AllGather: [d0, ...] → [size·d0, ...] ----
std::vector<TensorMeta> infer_all_gather(const TV& in, const Attrs& a) {
  KILN_CHECK(in[0].ndim() >= 1, Value, "For 'AllGather', the input must have at least 1 dimension, but got a 0-d "
             "tensor.");
  Shape s = in[0].shape();
  s[0] *= comm::group_size(a.s("group"));
  return {{s, in[0].dtype()}};
}
void k_all_gather(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.all_gather(x, out[0]); });
}
TV bp_all_gather(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  return {ops::reduce_scatter(or_zeros(g[0], out[0]), ReduceOp::Sum, a.s("group"))};
}

// ---- ReduceScatter: [size·n, ...] → [n, ...] ----
std::vector<TensorMeta> infer_reduce_scatter(const TV& in, const Attrs& a) {
  KILN_CHECK(in[0].dtype() != DType::Bool && !is_wide_unsigned(in[0].dtype()), Type,
             "For 'ReduceScatter', the input must be a float or Int8/Int16/Int32/Int64/UInt8 tensor, but got ",
             dtype_name(in[0].dtype()), ".");
  int64_t size = comm::group_size(a.s("group"));
  KILN_CHECK(in[0].ndim() >= 1 && in[0].shape()[0] % size == 0, Value, "For 'ReduceScatter', the first dimension "
             "of the input must be divisible by the group size ", size, ", but got shape ", shape_str(in[0].shape()),
             ".");
  Shape s = in[0].shape();
  s[0] /= size;
  return {{s, in[0].dtype()}};
}
void k_reduce_scatter(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.reduce_scatter(x, out[0], ReduceOp(a.i("op"))); });
}
TV bp_reduce_scatter(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  KILN_CHECK(ReduceOp(a.i("op")) == ReduceOp::Sum, Runtime, "For 'ReduceScatter', the gradient is defined only for "
             "op='sum' (as MindSpore), but the op is '", reduce_name(a.i("op")), "'.");
  return {ops::all_gather(or_zeros(g[0], out[0]), a.s("group"))};
}

// ---- Broadcast ----
std::vector<TensorMeta> infer_broadcast(const TV& in, const Attrs& a) {
  int64_t size = comm::group_size(a.s("group")), root = a.i("root");
  KILN_CHECK(root >= 0 && root < size, Value, "For 'Broadcast', 'root_rank' must be in [0, ", size,
             ") (a rank of the group), but got ", root, ".");
  return {{in[0].shape(), in[0].dtype()}};
}
void k_broadcast(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.broadcast(x, out[0], int(a.i("root"))); });
}
TV bp_broadcast(const TV& in, const TV& out, const TV& g, const Attrs& a) { return {g[0]}; }

// ---- Barrier, Send, Receive (not differentiable) ----
std::vector<TensorMeta> infer_token(const TV& in, const Attrs& a) {
  comm::group_size(a.s("group"));
  return {{{}, DType::Int32}};
}
void k_barrier(const TV& in, TV& out, const Attrs& a) {
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.barrier(); });
  *out[0].data<int32_t>() = 0;
}
std::vector<TensorMeta> infer_send(const TV& in, const Attrs& a) {
  int64_t size = comm::group_size(a.s("group")), dst = a.i("dst");
  KILN_CHECK(dst >= 0 && dst < size, Value, "For 'Send', 'dst' must be in [0, ", size, "), but got ", dst, ".");
  KILN_CHECK(a.i("tag") >= 0, Value, "For 'Send', 'tag' must be >= 0, but got ", a.i("tag"), ".");
  return {{{}, DType::Int32}};
}
void k_send(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.send(x, int(a.i("dst")), int(a.i("tag"))); });
  *out[0].data<int32_t>() = 0;
}
std::vector<TensorMeta> infer_recv(const TV& in, const Attrs& a) {
  int64_t size = comm::group_size(a.s("group")), src = a.i("src");
  KILN_CHECK(src >= 0 && src < size, Value, "For 'Receive', 'src' must be in [0, ", size, "), but got ", src, ".");
  KILN_CHECK(a.i("tag") >= 0, Value, "For 'Receive', 'tag' must be >= 0, but got ", a.i("tag"), ".");
  const auto& shape = a.ints("shape");
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Value, "For 'Receive', the shape must not have negative dimensions, but got ", shape_str(shape),
               ".");
  return {{Shape(shape.begin(), shape.end()), a.dtype("dtype")}};
}
void k_recv(const TV& in, TV& out, const Attrs& a) {
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.recv(out[0], int(a.i("src")), int(a.i("tag"))); });
}

void reg(OpId id, decltype(OpDef::infer) infer, KernelFn k, BpropFn bp) {
  OpDef d;
  d.id = id;
  d.infer = infer;
  d.cpu = k;
  d.bprop = bp;
  d.differentiable = bp != nullptr;
  register_op(d);
}

void check_op(int64_t op, const char* who) {
  KILN_CHECK(op >= 0 && op <= 3, Value, "For '", who, "', the reduce op must be sum, max, min or prod, but got ", op,
             ".");
}
}  // namespace

namespace ops_impl {
void register_collective() {
  reg(OpId::AllReduce, infer_all_reduce, k_all_reduce, bp_all_reduce);
  reg(OpId::AllGather, infer_all_gather, k_all_gather, bp_all_gather);
  reg(OpId::ReduceScatter, infer_reduce_scatter, k_reduce_scatter, bp_reduce_scatter);
  reg(OpId::Broadcast, infer_broadcast, k_broadcast, bp_broadcast);
  reg(OpId::Barrier, infer_token, k_barrier, nullptr);
  reg(OpId::Send, infer_send, k_send, nullptr);
  reg(OpId::Receive, infer_recv, k_recv, nullptr);
}
}  // namespace ops_impl

namespace ops {
Tensor all_reduce(const Tensor& x, ReduceOp op, const std::string& group) {
  check_op(int64_t(op), "AllReduce");
  return apply1(OpId::AllReduce, {x}, {{"op", int64_t(op)}, {"group", std::string(group)}});
}
Tensor all_gather(const Tensor& x, const std::string& group) {
  return apply1(OpId::AllGather, {x}, {{"group", std::string(group)}});
}
Tensor reduce_scatter(const Tensor& x, ReduceOp op, const std::string& group) {
  check_op(int64_t(op), "ReduceScatter");
  return apply1(OpId::ReduceScatter, {x}, {{"op", int64_t(op)}, {"group", std::string(group)}});
}
Tensor broadcast(const Tensor& x, int64_t root, const std::string& group) {
  return apply1(OpId::Broadcast, {x}, {{"root", root}, {"group", std::string(group)}});
}
Tensor barrier(const std::string& group) { return apply1(OpId::Barrier, {}, {{"group", std::string(group)}}); }
Tensor send(const Tensor& x, int64_t dst, int64_t tag, const std::string& group) {
  return apply1(OpId::Send, {x}, {{"dst", dst}, {"tag", tag}, {"group", std::string(group)}});
}
Tensor recv(const Shape& shape, DType dtype, int64_t src, int64_t tag, const std::string& group) {
  return apply1(OpId::Receive, {},
                {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}, {"dtype", dtype}, {"src", src},
                 {"tag", tag}, {"group", std::string(group)}});
}
}  // namespace ops
}  // namespace kiln
