// Kiln — reverse-mode autodiff on an eager tape.
//
// A tape is recorded only while a grad transform is active (GradScope): outside one, `apply` checks one
// integer and records nothing. Inside, every op with a watched input (a leaf that the transform watches, or
// the output of a recorded op) gets a Node holding its inputs, aliases of its outputs and its attributes.
// `gradient` walks the nodes between the outputs and the leaves in reverse and calls each op's bprop, which
// is written with Kiln ops: so while an outer transform is active, the backward pass is itself recorded and
// gradients of gradients work (the "create_graph" semantics of PyTorch, by construction).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "kiln/op.h"

namespace kiln::autodiff {

// A bprop given at run time instead of an op's (a Cell's custom `bprop`, a gradient hook: kiln/_autodiff/custom_grad.py).
// Gets the node's inputs, its outputs and one cotangent per output (undefined: zero); returns one cotangent per input
// (undefined: none). Like op bprops it is written with Kiln ops, so it is recorded when the reverse pass is.
using CustomBpropFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& outputs,
                                                        const std::vector<Tensor>& gouts)>;

// Note [saved tensors and in-place writes]. A node keeps its inputs and (aliases of) its outputs for its bprop. When
// one of them is then written in place (ops.assign on a Parameter read earlier, an optimizer step, Tensor.add_ on an
// untracked tensor), the bprop must still see the value the op read: the gradient is that of the function as
// written, each read taking the value it had when it was read (PyTorch raises there instead; MindSpore's PyNative
// silently uses the new value). So every saved tensor records its storage's version (Note [versions of a storage]
// below); a write of a saved version keeps a copy of the old bytes, and the reverse pass hands the bprop a
// stand-in: the saved tensor's identity and history (id, grad_fn) over the old bytes. While tracing, nothing is
// written until the graph runs: instead, before a write node is recorded, the saved tensors sharing its storage get
// a TensorCopy node recorded ahead of the write (before_traced_write), which their bprop reads instead.
struct SavedRef {
  std::shared_ptr<Storage> storage;  // the storage counted as saved (none for a symbolic tensor)
  uint64_t version = 0;              // its version when saved
  Tensor copy;                       // while tracing: the TensorCopy taken before a write (undefined: none)
};

// A recorded op application.
struct Node {
  OpId op;
  Attrs attrs;
  std::vector<Tensor> inputs;       // the inputs as given (with their history)
  std::vector<Tensor> outputs;      // aliases of the outputs, without history (no reference cycle)
  // The real outputs, weakly: while a reverse pass is itself recorded (grad of grad), bprops get the real outputs
  // so that their dependence on the inputs is differentiated too. (They are alive then: a node on the path of a
  // reverse pass has its outputs held by the consumers that led there.)
  std::vector<std::weak_ptr<TensorImpl>> output_refs;
  std::vector<uint64_t> output_ids; // ids of the real outputs, to find their cotangents
  uint64_t seq;                     // creation order: reverse order is a valid topological order
  std::shared_ptr<const CustomBpropFn> custom;  // set by record_custom: used instead of the op's bprop
  std::vector<SavedRef> saved;      // one per input, then one per output (Note [saved tensors and in-place writes])
  Node() = default;
  ~Node();  // releases the saved storages
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
};

// ---- versions of storages (src/autodiff/versions.cpp) ----
// Note [versions of a storage]. While some tape node keeps a tensor viewing a Storage, the storage has an entry in a
// side table (sharded by address, so threads rarely meet): a version that every in-place write bumps (note_write),
// the number of saves, and the latest version saved. A write of a version that was saved first copies the storage's
// bytes (a snapshot, keyed by the version it holds), which the reverse pass reads instead of the overwritten data.
// The entry and its snapshots go when the last saving node does. A write costs one atomic load while no node keeps
// any storage (outside a gradient), else one shard lookup; a copy only when a saved version is overwritten.

// Must be called before any in-place write into `t`'s storage (the in-place kernels Assign, Adam, ApplyMomentum and
// SGD do). No-op for a symbolic tensor.
void note_write(const Tensor& t);
// The inputs an op writes in place, as a bit mask (Assign: bit 0; Adam: var, m, v; ...). 0 for other ops.
uint32_t written_inputs(OpId op);
// Counters of the snapshots note_write made (for tests and diagnostics): how many, and their bytes in all.
struct WriteSnapshotStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
};
WriteSnapshotStats write_snapshot_stats();
// A node saves `storage`: counts the save and returns its current version.
uint64_t storage_save(const std::shared_ptr<Storage>& storage);
// A saving node releases `storage` (its entry goes with the last save).
void storage_release(const Storage* storage);
// The bytes `storage` held at version `v` (saved by a node that still holds it): `storage` itself when unchanged
// since, else its snapshot of v, or nullptr when none was kept.
std::shared_ptr<Storage> storage_at_version(const std::shared_ptr<Storage>& storage, uint64_t v);

// While tracing, before a node of `def` (which writes the inputs of written_inputs(def.id)) is recorded: every live
// tape node recorded under an active trace that saved a tensor sharing storage with a written input gets a TensorCopy
// of it, recorded into that node's trace ahead of the write (Note [saved tensors and in-place writes]).
void before_traced_write(const OpDef& def, const std::vector<Tensor>& inputs);

// Number of active grad transforms (0: nothing is recorded).
int grad_level();

// RAII scope of one grad transform. While alive, ops on watched tensors are recorded.
class GradScope {
 public:
  GradScope();
  ~GradScope();  // unwatches this scope's leaves
  GradScope(const GradScope&) = delete;
  GradScope& operator=(const GradScope&) = delete;
  // Watches `x` in place as a leaf (for Parameters, whose identity must be kept). Returns x.
  Tensor watch(const Tensor& x);
  // Returns a new leaf that aliases `x` and is connected to x's history (for function inputs).
  Tensor watch_input(const Tensor& x);
 private:
  std::vector<std::shared_ptr<TensorImpl>> watched_;
};

// Cotangents of `outputs` (seeded with `sens`, one per output; an undefined sens means ones) with respect to each of
// `leaves`. A leaf that the outputs do not depend on gets zeros of its shape and dtype. Throws ValueError if
// sens shapes differ from the outputs. Must be called inside a GradScope that watched the leaves.
std::vector<Tensor> gradient(const std::vector<Tensor>& outputs, const std::vector<Tensor>& sens,
                             const std::vector<Tensor>& leaves);

// While gradient() runs an op's bprop: whether the cotangent of the op's input `i` is used (it leads to a leaf).
// A bprop may skip the work for an input that returns false (an undefined Tensor is fine there): PyNative does no
// gradient work for inputs nothing asked for (e.g. a model's input image). Outside a reverse pass: true.
bool input_needs_grad(size_t i);

// RAII: a fresh autodiff context on this thread (no active grad transform, recording on, no bprop input mask) until
// destroyed. For a closed differentiation inside a bprop (a control-flow node builds its sub-graph's vjp graph this
// way, whatever transforms or reverse passes are active around it).
class IsolatedTape {
 public:
  IsolatedTape();
  ~IsolatedTape();
  IsolatedTape(const IsolatedTape&) = delete;
  IsolatedTape& operator=(const IsolatedTape&) = delete;
 private:
  int level_;
  bool recording_;
  const std::vector<bool>* needed_;
};

// New tensors aliasing `values` (same storage; symbolic values stay the same graph values while tracing) whose history
// is one node over `inputs` with the bprop `fn`: the reverse pass reaches `inputs` only through `fn`. While no grad
// transform is active, or when no input is watched or has history, nothing is recorded (plain aliases).
std::vector<Tensor> record_custom(const std::vector<Tensor>& inputs, const std::vector<Tensor>& values,
                                  CustomBpropFn fn);

// Drops autodiff history from a tensor (a new alias of its storage).
Tensor detach(const Tensor& x);

}  // namespace kiln::autodiff
