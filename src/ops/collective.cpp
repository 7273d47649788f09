// Collective ops: AllReduce, AllGather, ReduceScatter, AlltoAll, AlltoAllV, Broadcast, Barrier, Send, Receive. Kernels
// call the
// group's communicator (kiln/comm.h); in a graph they are side-effecting nodes (graph::has_side_effect), so they
// run in program order and are never removed, merged or folded. Bprops are MindSpore's (ops/_grad_experimental/
// grad_comm_ops.py): AllReduce SUM → AllReduce SUM of dout; MAX/MIN → AllReduce SUM of dout masked by x == out;
// PROD → AllReduce SUM of (dout·out) / x; AllGather → ReduceScatter SUM; ReduceScatter (SUM only) → AllGather;
// AlltoAll → AlltoAll with split_dim and concat_dim swapped; AlltoAllV → AlltoAllV with the send and receive counts
// swapped; Broadcast → dout. Every rank runs the same backward collectives: a zero cotangent still takes part (as zeros).
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

// ---- AlltoAll: split along split_dim into size blocks (block j to rank j), concatenate the received blocks along
// concat_dim. The attrs hold non-negative dims (ops::all_to_all normalizes them).
std::vector<TensorMeta> infer_all_to_all(const TV& in, const Attrs& a) {
  const int64_t size = comm::group_size(a.s("group")), count = a.i("split_count");
  const int64_t sd = a.i("split_dim"), cd = a.i("concat_dim");
  Shape s = in[0].shape();
  KILN_CHECK(count == size, Value, "For 'AlltoAll', 'split_count' must equal the size of group '", a.s("group"),
             "' (", size, "), but got ", count, ".");
  KILN_CHECK(s[sd] % count == 0, Value, "For 'AlltoAll', the input's dimension split_dim=", sd, " (",
             s[sd], ") must be divisible by split_count ", count, ", but got shape ", shape_str(s), ".");
  s[sd] /= count;
  s[cd] *= count;
  return {{s, in[0].dtype()}};
}
void k_all_to_all(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  const int64_t n = a.i("split_count"), sd = a.i("split_dim"), cd = a.i("concat_dim");
  const size_t isz = itemsize(x.dtype());
  const Shape& xs = x.shape();
  if (x.numel() == 0) return;
  // pack: block j = x[..., j·S/n : (j+1)·S/n, ...] along split_dim, contiguous, blocks in rank order
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < sd; ++d) outer *= xs[d];
  for (int64_t d = sd + 1; d < int64_t(xs.size()); ++d) inner *= xs[d];
  const size_t row = size_t(xs[sd] / n * inner) * isz;  // one block's bytes per outer index
  const size_t block = row * size_t(outer);
  Tensor ts = Tensor::empty({int64_t(block) * n}, DType::UInt8), tr = Tensor::empty({int64_t(block) * n}, DType::UInt8);
  char* send = static_cast<char*>(ts.raw_data());
  const char* recv = static_cast<const char*>(tr.raw_data());
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(send + size_t(j) * block + size_t(o) * row, src + (size_t(o) * size_t(n) + size_t(j)) * row,
                  row);
  comm::with_group(a.s("group"), [&](comm::Communicator& c) { c.all_to_all(ts, tr); });
  // unpack: received block j (the block's shape: x's with split_dim / n) goes to out[..., j·C : (j+1)·C, ...]
  Shape bs = xs;
  bs[sd] /= n;
  int64_t outer2 = 1, inner2 = 1;
  for (int64_t d = 0; d < cd; ++d) outer2 *= bs[d];
  for (int64_t d = cd + 1; d < int64_t(bs.size()); ++d) inner2 *= bs[d];
  const size_t row2 = size_t(bs[cd] * inner2) * isz;
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer2; ++o)
      std::memcpy(dst + (size_t(o) * size_t(n) + size_t(j)) * row2, recv + size_t(j) * block + size_t(o) * row2,
                  row2);
}
TV bp_all_to_all(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  return {ops::all_to_all(or_zeros(g[0], out[0]), a.i("split_count"), a.i("concat_dim"), a.i("split_dim"),
                          a.s("group"))};
}

// ---- AlltoAllV: a 1-D x, send_counts[j] elements to rank j, recv_counts[j] from rank j ----
std::vector<TensorMeta> infer_all_to_all_v(const TV& in, const Attrs& a) {
  const int64_t size = comm::group_size(a.s("group"));
  const auto& sc = a.ints("send_counts");
  const auto& rc = a.ints("recv_counts");
  KILN_CHECK(int64_t(sc.size()) == size && int64_t(rc.size()) == size, Value, "For 'AlltoAllV', the send and "
             "receive counts must have one entry per process of group '", a.s("group"), "' (", size, "), but got ",
             sc.size(), " and ", rc.size(), ".");
  int64_t ns = 0, nr = 0;
  for (size_t j = 0; j < sc.size(); ++j) {
    KILN_CHECK(sc[j] >= 0 && rc[j] >= 0, Value, "For 'AlltoAllV', the counts must be >= 0, but got send counts ",
               shape_str(Shape(sc.begin(), sc.end())), " and receive counts ", shape_str(Shape(rc.begin(), rc.end())),
               ".");
    ns += sc[j];
    nr += rc[j];
  }
  KILN_CHECK(in[0].ndim() == 1 && in[0].shape()[0] == ns, Value, "For 'AlltoAllV', the input must be 1-D with ",
             "sum(send_counts) = ", ns, " elements, but got shape ", shape_str(in[0].shape()), ".");
  return {{{nr}, in[0].dtype()}};
}
void k_all_to_all_v(const TV& in, TV& out, const Attrs& a) {
  Tensor x = in[0].contiguous();
  comm::with_group(a.s("group"), [&](comm::Communicator& c) {
    c.all_to_all_v(x, a.ints("send_counts"), out[0], a.ints("recv_counts"));
  });
}
TV bp_all_to_all_v(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  return {ops::all_to_all_v(or_zeros(g[0], out[0]), a.ints("recv_counts"), a.ints("send_counts"), a.s("group"))};
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
  reg(OpId::AlltoAll, infer_all_to_all, k_all_to_all, bp_all_to_all);
  reg(OpId::AlltoAllV, infer_all_to_all_v, k_all_to_all_v, bp_all_to_all_v);
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
Tensor all_to_all(const Tensor& x, int64_t split_count, int64_t split_dim, int64_t concat_dim,
                  const std::string& group) {
  const int64_t nd = x.ndim();
  KILN_CHECK(nd >= 1, Value, "For 'AlltoAll', the input must have at least 1 dimension, but got a 0-d tensor.");
  KILN_CHECK(split_count >= 1, Value, "For 'AlltoAll', 'split_count' must be >= 1, but got ", split_count, ".");
  for (auto [name, d] : {std::pair<const char*, int64_t>{"split_dim", split_dim}, {"concat_dim", concat_dim}})
    KILN_CHECK(d >= -nd && d < nd, Value, "For 'AlltoAll', '", name, "' must be in [", -nd, ", ", nd,
               ") for an input of shape ", shape_str(x.shape()), ", but got ", d, ".");
  if (split_dim < 0) split_dim += nd;
  if (concat_dim < 0) concat_dim += nd;
  return apply1(OpId::AlltoAll, {x},
                {{"split_count", split_count}, {"split_dim", split_dim}, {"concat_dim", concat_dim},
                 {"group", std::string(group)}});
}
Tensor all_to_all_v(const Tensor& x, const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts,
                    const std::string& group) {
  return apply1(OpId::AlltoAllV, {x},
                {{"send_counts", send_counts}, {"recv_counts", recv_counts}, {"group", std::string(group)}});
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
