// Kiln — Graph mode: the IR, tracing, and the executor.
//
// IR: a typed SSA graph. Values have a static shape and dtype; each is a graph input (an argument), a capture (an
// external tensor read by reference at run time: Parameters, optimizer state, constants made while tracing), or
// the output of a node. Nodes run in program order — the order the Python code issued them — so reads of a
// Parameter see the value it had before any later assign, as in PyNative. Passes never move a node across a
// side-effecting node (see `has_side_effect`).
//
// Tracing: while a Trace is active, every op call records a node instead of running a kernel (kiln::apply
// dispatches on it): the same OpDefs and bprops as PyNative, so autodiff inside traced code records the backward
// pass into the same graph.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/op.h"

namespace kiln::graph {

enum class ValueKind : uint8_t { Input, Capture, Constant, Node };

struct Value {
  TensorMeta meta;
  ValueKind kind = ValueKind::Node;
  int node = -1;          // producing node (kind == Node)
  int output_index = 0;
  int input_index = -1;   // argument position (kind == Input)
  Tensor tensor;          // the external tensor (Capture: read at run time; Constant: a fixed value)
};

struct Node {
  OpId op;
  Attrs attrs;
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  std::string loc;           // "file.py:12" of the Python line that issued the op (empty if unknown)
};

// True for ops that write their inputs in place (Assign, optimizer updates) or draw random numbers: they are
// never removed, merged or reordered by a pass.
bool has_side_effect(OpId op);
// True for random ops (they draw anew on every execution: see kiln/random.h streams).
bool is_random(OpId op);

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;   // value ids of the arguments, in order
  std::vector<int> outputs;  // value ids returned, in order

  // Checks SSA form: every value is defined once, before its uses, and points back to its node; outputs exist.
  // Throws RuntimeError describing the first problem.
  void verify() const;
  // Readable text: one line per node, `%5 = MatMul(%1, %3) {transpose_b=True} : Float32[32, 16]  # model.py:12`.
  std::string to_text() const;
  // Graphviz dot.
  std::string to_dot() const;
  // Number of nodes of an op (for tests of passes).
  int count(OpId op) const;
};

// ---- tracing ----

// Where the op being recorded comes from in the user's program; set by the Python bindings.
using LocationFn = std::string (*)();
void set_location_provider(LocationFn fn);

// RAII: while alive, ops record nodes into graph(). Traces nest: an inner trace records into its own graph.
class Trace {
 public:
  // `lift`: a sub-graph trace (the branch of an If, the cond/body of a While). Every tensor it reads that it did not
  // make — a symbolic tensor of an enclosing trace, a Parameter, a user tensor — becomes an extra input of the graph
  // (after those made by input()), listed by lifted(); the control-flow node passes them in. So a sub-graph has no
  // captures, and the enclosing trace (and its tape) sees every tensor the sub-graph depends on: gradients reach
  // Parameters read inside a loop body.
  explicit Trace(std::string name, bool lift = false);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
  // A new symbolic argument of the given shape and dtype.
  Tensor input(const Shape& shape, DType dtype);
  // Ends the trace with these outputs (symbolic or concrete: concrete ones become captures) and returns the graph.
  std::shared_ptr<Graph> finish(const std::vector<Tensor>& outputs);
  Graph& graph() { return *graph_; }
  Trace* outer() const { return outer_; }
  uint64_t first_id() const { return first_id_; }
  // The enclosing tensors read by a lifting trace, in the order of the extra inputs they became.
  const std::vector<Tensor>& lifted() const { return lifted_; }

 private:
  friend std::vector<Tensor> record(const OpDef&, const std::vector<Tensor>&, const Attrs&);
  int value_of(const Tensor& t);
  std::shared_ptr<Graph> graph_;
  std::unordered_map<const TensorImpl*, int> captured_;
  uint64_t first_id_;  // tensors with a larger id were made while tracing: constants
  Trace* outer_;
  bool lift_ = false;
  std::vector<Tensor> lifted_;
};

// A symbolic tensor (no data) standing for value `value` of graph `g`, of shape and dtype `m`: what tracing hands
// to Python for a node's output, and what a loaded graph's shape re-inference feeds to the ops' infer functions.
Tensor symbolic(const Graph* g, int value, const TensorMeta& m);

// True while a trace is active on this thread.
bool tracing();
// RAII: no trace is active on this thread until destroyed (ops run eagerly: compile-time work such as optimizing a
// sub-graph while an enclosing function is being traced).
class TraceSuspend {
 public:
  TraceSuspend();
  ~TraceSuspend();
  TraceSuspend(const TraceSuspend&) = delete;
  TraceSuspend& operator=(const TraceSuspend&) = delete;
 private:
  Trace* saved_;
};
// True while tracing if `t` existed before the trace began (a Parameter, optimizer state, a user tensor): its value
// is read at every run, so reading it while tracing would freeze a stale value into the graph.
bool is_state_while_tracing(const Tensor& t);
// Records one op application into the active trace; returns symbolic outputs. (Called by kiln::apply.)
std::vector<Tensor> record(const OpDef& def, const std::vector<Tensor>& inputs, const Attrs& attrs);

// ---- control flow (src/graph/control_flow.cpp) ----
//
// A SubGraph is the body of a control-flow node, held in the node's attributes: the graph as traced (what autodiff
// differentiates, node by node, with the ops' bprops) and its optimized copy compiled into an Executable (what runs).
// Immutable once made, so nodes, graphs and threads share it.
class Executable;
struct SubGraph {
  std::shared_ptr<const Graph> graph;      // as traced (no captures: a lifting Trace made it)
  std::shared_ptr<const Graph> optimized;  // after the standard pipeline
  std::shared_ptr<Executable> exe;         // runs `optimized`
};
// Wraps a traced graph (optimizes a copy and compiles it). Throws RuntimeError if the graph reads a capture.
std::shared_ptr<const SubGraph> make_subgraph(std::shared_ptr<const Graph> g);
// "<graph name: N nodes>" (the attribute's text in Graph::to_text).
std::string subgraph_label(const SubGraph& sg);
// Applies the nodes of `g` to `inputs` with kiln::apply, in order: runs them eagerly on concrete tensors, records
// them into the active trace on symbolic ones, and records them on the tape while a grad transform is active.
std::vector<Tensor> eval_graph(const Graph& g, const std::vector<Tensor>& inputs);

// If: inputs (pred, then_inputs..., else_inputs...); attrs then_branch, else_branch (SubGraph), n_then (int).
// `pred` is a one-element tensor (bool or number: nonzero is true). Outputs: those of the branch taken (both branches
// return the same shapes and dtypes). Gradient: the taken branch's (an If over the branches' vjp graphs).
std::vector<Tensor> cond(const Tensor& pred, const std::shared_ptr<const SubGraph>& then_branch,
                         const std::vector<Tensor>& then_inputs, const std::shared_ptr<const SubGraph>& else_branch,
                         const std::vector<Tensor>& else_inputs);
// While: inputs (carried..., cond_extra..., body_extra...); `cond` maps (carried, cond_extra) to a one-element tensor,
// `body` maps (carried, body_extra) to the next carried values (same shapes and dtypes). Runs body while cond is
// true; returns the last carried values. With save_history (set while a grad transform is active) the node also
// returns, per carried value, the stack of its values at the start of each trip (leading dimension: the trip count,
// known at run time; the graph's type says 0): the gradient (WhileGrad) then runs the body's vjp over the trips in
// reverse without recomputing the forward loop.
std::vector<Tensor> while_loop(const std::shared_ptr<const SubGraph>& cond, const std::shared_ptr<const SubGraph>& body,
                               const std::vector<Tensor>& carried, const std::vector<Tensor>& cond_extra,
                               const std::vector<Tensor>& body_extra, bool save_history);

// ---- passes (src/graph/passes/*.cpp). Each returns the number of nodes it changed (the fusion passes: the
// number of original nodes absorbed into fused ones). ----
int dead_code_elimination(Graph& g);
int common_subexpression_elimination(Graph& g);
int constant_folding(Graph& g);
int algebraic_simplification(Graph& g);
int fuse_matmul_bias_activation(Graph& g);
int fuse_elementwise(Graph& g);
// The standard pipeline, in order; returns a log line per pass.
std::vector<std::string> optimize(Graph& g);

// ---- executor ----

// A graph compiled to a flat instruction list with a static memory plan: intermediates live in persistent buffers
// assigned by liveness (a buffer is reused once its previous value's last reader has run), so a run allocates only
// its outputs. One run at a time per Executable: concurrent calls of run() (from several threads) wait for each other
// (the planned buffers are shared); different Executables run concurrently.
class Executable {
 public:
  explicit Executable(std::shared_ptr<const Graph> g);
  // Runs the graph on concrete arguments (shapes/dtypes must match the graph's inputs: ValueError otherwise).
  std::vector<Tensor> run(const std::vector<Tensor>& args);
  // Bytes of the planned intermediate buffers (arguments, captures and outputs excluded).
  size_t planned_peak_bytes() const { return planned_peak_bytes_; }
  const Graph& graph() const { return *graph_; }

 private:
  struct Instr {
    const OpDef* def;
    const char* name;             // op_name(def->id), looked up once
    Attrs attrs;
    std::vector<int> in, out;
    std::vector<TensorMeta> out_meta;
    std::vector<int> release;     // (dynamic) slots whose last use is this instruction
    std::vector<int> out_buffer;  // planned buffer of each output, or -1 (allocated per run: outputs, views)
    std::vector<Tensor> planned;  // persistent tensors over the planned buffers (made on the first run)
    bool all_planned = false;     // a kernel op whose outputs are all planned: `planned` is passed as is
    std::vector<Tensor> args;     // the kernel's inputs: stable values bound once, dynamic ones set per run
    std::vector<int> dynamic_in;  // positions in `args` set from the slot table at each run (emptied after)
    bool precomputed = false;     // a view of planned buffers, made once by materialize_buffers: not run
  };
  void materialize_buffers();
  void clear_transient();
  std::shared_ptr<const Graph> graph_;
  std::vector<Instr> instrs_;
  std::vector<size_t> buffer_bytes_;
  std::vector<std::shared_ptr<Storage>> buffers_;
  bool materialized_ = false;
  size_t planned_peak_bytes_ = 0;
  // Run state, reused across runs (guarded by run_mu_): the slot of every value (stable values — captures,
  // constants, planned intermediates — bound once; `transient_` lists the others, emptied by each run) and the
  // outputs of the current direct op.
  std::vector<Tensor> slots_;
  std::vector<int> transient_;
  std::vector<Tensor> out_scratch_;
  std::mutex run_mu_;  // held for a whole run
};

}  // namespace kiln::graph
