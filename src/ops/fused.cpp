// FusedElementwise: a chain or tree of elementwise float ops evaluated in one pass over the elements, made by the
// graph pass fuse_elementwise (src/graph/passes/fusion.cpp) and never by user code. The attribute encoding is in
// fused.h. The kernel walks the elements in blocks of kBlock: per block, each instruction is one loop over the
// block into a small scratch register (the last one writes the output), so there are no full-size temporaries
// and each loop vectorizes like the unfused op's. The bprop re-runs the original ops with kiln::ops and calls their
// bprops in reverse: autodiff through a fused graph (and grad of grad) gives what the unfused graph gives.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "elementwise.h"
#include "families.h"
#include "fused.h"
#include "vmath.h"

namespace kiln {
namespace fused {

// The schema's `fuse` fields (src/ops/schema/ops.yaml, generated fuse_table.inc): which op each EwOp computes.
// An attribute-dependent row (GeLU's approximate) gives one EwOp per value of the Bool attribute. Erfinv and Atan2
// have no row on purpose: they appear alone (TruncatedNormal's initializer, angle computations), not in the
// elementwise chains of a training step, and the fused kernel's float64 scalar path would need their
// refinement/libm code duplicated here.
namespace {
struct FuseRow {
  OpId op;
  EwOp plain;          // the EwOp, or the one for attr = false
  EwOp when_true;      // the EwOp for attr = true (== plain without attr)
  const char* attr;    // nullptr: not attribute-dependent
};
const FuseRow kFuseRows[] = {
#define KILN_FUSE(OP, EW) {OpId::OP, EwOp::EW, EwOp::EW, nullptr},
#define KILN_FUSE_ATTR(OP, ATTR, T, F) {OpId::OP, EwOp::F, EwOp::T, ATTR},
#include "fuse_table.inc"
#undef KILN_FUSE
#undef KILN_FUSE_ATTR
};
// The row of each op (nullptr: not fusable), and the row and attribute value of each EwOp; built once.
struct FuseIndex {
  std::array<const FuseRow*, size_t(OpId::kCount)> by_op{};
  std::array<std::pair<const FuseRow*, bool>, size_t(EwOp::kCount)> by_ew{};
  FuseIndex() {
    for (const FuseRow& r : kFuseRows) {
      by_op[size_t(r.op)] = &r;
      by_ew[size_t(r.plain)] = {&r, false};
      if (r.attr) by_ew[size_t(r.when_true)] = {&r, true};
    }
    for (size_t i = 0; i < by_ew.size(); ++i)
      KILN_CHECK(by_ew[i].first != nullptr, Runtime, "Kiln: EwOp ", i, " of the fused kernel has no op in the schema "
                 "(a `fuse` field in src/ops/schema/ops.yaml).");
  }
};
const FuseIndex& fuse_index() {
  static const FuseIndex index;
  return index;
}
}  // namespace

bool ew_opcode(OpId op, const Attrs& attrs, EwOp* out) {
  const FuseRow* r = fuse_index().by_op[size_t(op)];
  if (!r) return false;
  *out = r->attr && attrs.b(r->attr) ? r->when_true : r->plain;
  return true;
}

OpId ew_op_id(EwOp op) { return fuse_index().by_ew[size_t(op)].first->op; }

Attrs ew_attrs(EwOp op) {
  const auto& e = fuse_index().by_ew[size_t(op)];
  if (!e.first->attr) return {};
  return {{e.first->attr, e.second}};
}

Act epilogue_act(OpId op, const Attrs& attrs) {
  switch (op) {
#define KILN_ACT(OP, ACT) case OpId::OP: return Act::ACT;
#define KILN_ACT_ATTR(OP, ATTR, T, F) case OpId::OP: return attrs.b(ATTR) ? Act::T : Act::F;
#include "act_table.inc"
#undef KILN_ACT
#undef KILN_ACT_ATTR
    default: return Act::None;
  }
}

const char* act_name(Act a) {
  switch (a) {
    case Act::None: return "none";
    case Act::Relu: return "relu";
    case Act::Sigmoid: return "sigmoid";
    case Act::Tanh: return "tanh";
    case Act::GeluErf: return "gelu";
    case Act::GeluTanh: return "gelu_tanh";
  }
  return "?";
}

}  // namespace fused

namespace {
using TV = std::vector<Tensor>;
using fused::EwOp;
constexpr int64_t kBlock = 512;

struct Instr { EwOp op; int64_t a, b; };

// Decodes and checks a program for `n_inputs` inputs (RuntimeError on a malformed one: a bad graph, not user input).
std::vector<Instr> decode(const std::vector<int64_t>& p, size_t n_inputs) {
  KILN_CHECK(!p.empty() && p.size() % 3 == 0, Runtime, "For 'FusedElementwise', the program has ", p.size(),
             " entries; expected a non-empty multiple of 3.");
  std::vector<Instr> prog;
  int64_t nreg = int64_t(n_inputs);
  for (size_t k = 0; k < p.size(); k += 3) {
    KILN_CHECK(p[k] >= 0 && p[k] < int64_t(EwOp::kCount), Runtime, "For 'FusedElementwise', bad opcode ", p[k], ".");
    Instr in{EwOp(p[k]), p[k + 1], p[k + 2]};
    bool bin = fused::is_binary(in.op);
    KILN_CHECK(in.a >= 0 && in.a < nreg && (bin ? (in.b >= 0 && in.b < nreg) : in.b == -1), Runtime,
               "For 'FusedElementwise', instruction ", k / 3, " reads a register that is not defined.");
    prog.push_back(in);
    nreg++;
  }
  return prog;
}

std::vector<TensorMeta> infer_fused_ew(const TV& in, const Attrs& a) {
  DType dt = a.dtype("dtype");
  KILN_CHECK(dt == DType::Float32 || dt == DType::Float64, Type, "For 'FusedElementwise', dtype must be Float32 or "
             "Float64, but got ", dtype_name(dt), ".");
  decode(a.ints("program"), in.size());
  Shape s;
  for (auto& x : in)
    if (x.ndim() > 0) { s = x.shape(); break; }
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& x = in[i];
    if (x.ndim() == 0) continue;
    KILN_CHECK(x.shape() == s && x.dtype() == dt, Value, "For 'FusedElementwise', input ", i, " must be 0-d or ",
               dtype_name(dt), shape_str(s), ", but got ", dtype_name(x.dtype()), shape_str(x.shape()), ".");
  }
  return {{s, dt}};
}

template <typename T>
void eval(EwOp op, const T* x, const T* y, T* d, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {  // the unfused Float32 kernels' vectorized functions (vmath.h)
    vmath::Fn fn;
    bool vec = true;
    switch (op) {
      case EwOp::Exp: fn = vmath::Fn::Exp; break;
      case EwOp::Erf: fn = vmath::Fn::Erf; break;
      case EwOp::Sigmoid: fn = vmath::Fn::Sigmoid; break;
      case EwOp::Tanh: fn = vmath::Fn::Tanh; break;
      case EwOp::GeluErf: fn = vmath::Fn::GeluErf; break;
      case EwOp::GeluTanh: fn = vmath::Fn::GeluTanh; break;
      default: vec = false; fn = vmath::Fn::Exp; break;
    }
    if (vec) { vmath::apply(fn, x, d, n); return; }
  }
  switch (op) {
    case EwOp::Add: for (int64_t i = 0; i < n; ++i) d[i] = x[i] + y[i]; break;
    case EwOp::Sub: for (int64_t i = 0; i < n; ++i) d[i] = x[i] - y[i]; break;
    case EwOp::Mul: for (int64_t i = 0; i < n; ++i) d[i] = x[i] * y[i]; break;
    case EwOp::Div: for (int64_t i = 0; i < n; ++i) d[i] = x[i] / y[i]; break;
    case EwOp::Pow: for (int64_t i = 0; i < n; ++i) d[i] = std::pow(x[i], y[i]); break;
    case EwOp::Maximum: for (int64_t i = 0; i < n; ++i) d[i] = fused::max_f(x[i], y[i]); break;
    case EwOp::Minimum: for (int64_t i = 0; i < n; ++i) d[i] = fused::min_f(x[i], y[i]); break;
    case EwOp::Neg: for (int64_t i = 0; i < n; ++i) d[i] = -x[i]; break;
    case EwOp::Exp: for (int64_t i = 0; i < n; ++i) d[i] = std::exp(x[i]); break;
    case EwOp::Log: for (int64_t i = 0; i < n; ++i) d[i] = std::log(x[i]); break;
    case EwOp::Sqrt: for (int64_t i = 0; i < n; ++i) d[i] = std::sqrt(x[i]); break;
    case EwOp::Rsqrt: for (int64_t i = 0; i < n; ++i) d[i] = T(1) / std::sqrt(x[i]); break;
    case EwOp::Abs: for (int64_t i = 0; i < n; ++i) d[i] = x[i] < 0 ? T(-x[i]) : (x[i] == T(0) ? T(0) : x[i]); break;  // -0.0 → +0.0
    case EwOp::Square: for (int64_t i = 0; i < n; ++i) d[i] = x[i] * x[i]; break;
    case EwOp::Erf: for (int64_t i = 0; i < n; ++i) d[i] = std::erf(x[i]); break;
    case EwOp::Relu: for (int64_t i = 0; i < n; ++i) d[i] = fused::relu_f(x[i]); break;
    case EwOp::Sigmoid: for (int64_t i = 0; i < n; ++i) d[i] = fused::sigmoid_f(x[i]); break;
    case EwOp::Tanh: for (int64_t i = 0; i < n; ++i) d[i] = fused::tanh_f(x[i]); break;
    case EwOp::GeluErf: for (int64_t i = 0; i < n; ++i) d[i] = fused::gelu_erf_f(x[i]); break;
    case EwOp::GeluTanh: for (int64_t i = 0; i < n; ++i) d[i] = fused::gelu_tanh_f(x[i]); break;
    case EwOp::Log1p: for (int64_t i = 0; i < n; ++i) d[i] = std::log1p(x[i]); break;
    default: break;
  }
}

template <typename T>
void run_program(const std::vector<Instr>& prog, const TV& in, const Tensor& out) {
  const int64_t n = out.numel();
  const size_t nin = in.size(), nreg = nin + prog.size();
  // Registers: full inputs point into their (contiguous) data and advance per block; 0-d inputs are a block
  // filled with the value (stride 0); instruction results live in a scratch block, the last in the output.
  // Blocks of min(kBlock, n) elements: a small tensor gets a small, uninitialized (every element read is written
  // first) scratch instead of zeroing full blocks at every call. Blocks are independent: from kParallelMin
  // elements up they are split over the OpenMP threads, each with its own scratch (the same numbers: every
  // element is computed by the same instructions whatever the split).
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(kBlock, n));
  const bool scalar_out = out.ndim() == 0;
  std::vector<const T*> base(nreg, nullptr);
  std::vector<bool> moves(nreg, false);
  std::vector<T> scalars(nin, T(0));
  std::vector<Tensor> keep;  // contiguous copies of strided inputs
  for (size_t i = 0; i < nin; ++i) {
    if (in[i].ndim() == 0 && !scalar_out) {
      scalars[i] = ew::as_dtype(in[i], out.dtype()).data<T>()[0];
    } else {
      Tensor c = ew::as_dtype(in[i], out.dtype()).contiguous();
      keep.push_back(c);
      base[i] = c.data<T>();
      moves[i] = true;
    }
  }
  T* po = out.data<T>();
  const int64_t nblocks = (n + kBlock - 1) / kBlock;
  // Blocks [b0, b1) with a scratch of its own (no exceptions: the program was checked by decode).
  auto run_blocks = [&](int64_t b0, int64_t b1) {
    std::unique_ptr<T[]> scratch_buf(new T[nreg * size_t(block)]);
    T* const scratch = scratch_buf.get();
    std::vector<const T*> r(nreg);
    for (size_t i = 0; i < nin; ++i)
      if (!moves[i]) {
        T* buf = scratch + (prog.size() + i) * size_t(block);
        for (int64_t k = 0; k < block; ++k) buf[k] = scalars[i];
        r[i] = buf;
      }
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t start = b * kBlock, len = std::min<int64_t>(kBlock, n - start);
      for (size_t i = 0; i < nin; ++i)
        if (moves[i]) r[i] = base[i] + start;
      for (size_t k = 0; k < prog.size(); ++k) {
        T* d = k + 1 == prog.size() ? po + start : scratch + k * size_t(block);
        const Instr& ins = prog[k];
        eval<T>(ins.op, r[size_t(ins.a)], ins.b >= 0 ? r[size_t(ins.b)] : nullptr, d, len);
        r[nin + k] = d;
      }
    }
  };
  if (n < cpu::kParallelMin || omp_get_max_threads() == 1 || omp_in_parallel()) {
    run_blocks(0, nblocks);
    return;
  }
  constexpr int64_t kPer = 16;  // blocks per chunk: 8192 elements, as cpu::parallel_runs
  const int64_t chunks = (nblocks + kPer - 1) / kPer;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) run_blocks(c * kPer, std::min(nblocks, (c + 1) * kPer));
}

void run_fused_ew(const TV& in, TV& out, const Attrs& a) {
  std::vector<Instr> prog = decode(a.ints("program"), in.size());
  if (out[0].dtype() == DType::Float32) run_program<float>(prog, in, out[0]);
  else run_program<double>(prog, in, out[0]);
}

// Re-runs the program with kiln::ops (recorded under an outer grad transform) and applies each op's bprop in
// reverse, summing the cotangents of registers read more than once.
TV bprop_fused_ew(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  std::vector<Instr> prog = decode(a.ints("program"), in.size());
  DType dt = a.dtype("dtype");
  const size_t nin = in.size();
  TV r(in.begin(), in.end());
  for (size_t k = 0; k < prog.size(); ++k) {
    const Instr& ins = prog[k];
    TV args{r[size_t(ins.a)]};
    if (ins.b >= 0) args.push_back(r[size_t(ins.b)]);
    Tensor y = apply1(fused::ew_op_id(ins.op), args, fused::ew_attrs(ins.op));
    r.push_back(y.dtype() == dt ? y : ops::cast(y, dt));
  }
  TV gr(r.size());
  gr.back() = g[0];
  for (size_t k = prog.size(); k-- > 0;) {
    const Tensor& gk = gr[nin + k];
    if (!gk.defined()) continue;
    const Instr& ins = prog[k];
    TV args{r[size_t(ins.a)]};
    if (ins.b >= 0) args.push_back(r[size_t(ins.b)]);
    const OpDef& def = get_op(fused::ew_op_id(ins.op));
    if (!def.bprop) continue;
    TV ga = def.bprop(args, {r[nin + k]}, {gk}, fused::ew_attrs(ins.op));
    int64_t regs[2] = {ins.a, ins.b};
    for (size_t j = 0; j < ga.size() && j < 2; ++j) {
      if (!ga[j].defined() || regs[j] < 0) continue;
      Tensor& acc = gr[size_t(regs[j])];
      acc = acc.defined() ? ops::add(acc, ga[j]) : ga[j];
    }
  }
  gr.resize(nin);
  return gr;
}

}  // namespace

namespace ops_impl {
void register_fused_matmul();  // fused_matmul.cpp

void register_fused() {
  OpDef d;
  d.id = OpId::FusedElementwise;
  d.infer = infer_fused_ew;
  d.cpu = run_fused_ew;
  d.bprop = bprop_fused_ew;
  register_op(d);
  register_fused_matmul();
}
}  // namespace ops_impl
}  // namespace kiln
