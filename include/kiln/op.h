// Kiln — the op contract. Every op is defined once, as an OpDef: its name, shape/dtype inference, its CPU
// kernel and its bprop written with Kiln ops (see DESIGN.md, "every op is defined once"). `apply` dispatches:
// concrete inputs run the kernel now (PyNative) and are recorded on the tape while a grad transform is active.
#pragma once
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

namespace graph { struct SubGraph; }  // kiln/graph.h: a graph held by a control-flow node (If, While)

// Op identifiers, derived from the single op list in kiln/op_list.h.
enum class OpId : uint16_t {
#define KILN_OP(ID, NAME) ID,
#include "kiln/op_list.h"
#undef KILN_OP
  kCount
};
const char* op_name(OpId id);

// One attribute value. Attribute names are string literals owned by the op definitions.
// (Construct string attributes from std::string explicitly: a bare literal would choose bool.)
// A SubGraph attribute is the body of a control-flow node (If's branches, While's cond and body).
using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, DType, std::string,
                               std::shared_ptr<const graph::SubGraph>>;

// An op's attributes: a small ordered list of (name, value).
struct Attrs {
  std::vector<std::pair<const char*, AttrValue>> items;
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const char*, AttrValue>> init) : items(init) {}
  const AttrValue* find(const char* name) const;
  int64_t i(const char* name) const;                    // throws RuntimeError if missing or of another type
  double f(const char* name) const;
  bool b(const char* name) const;
  const std::vector<int64_t>& ints(const char* name) const;
  DType dtype(const char* name) const;
  const std::string& s(const char* name) const;
  const graph::SubGraph& graph(const char* name) const;  // a sub-graph attribute (control-flow nodes)
  std::string str() const;                              // "axis=[0], keep_dims=False"
};

// Output shape and dtype of an op.
struct TensorMeta {
  Shape shape;
  DType dtype;
};

using InferFn = std::vector<TensorMeta> (*)(const std::vector<Tensor>& inputs, const Attrs& attrs);
// Writes the outputs (already allocated, contiguous, with the inferred metas) from the inputs.
using KernelFn = void (*)(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const Attrs& attrs);
// Returns one cotangent per input (an undefined Tensor means zero / not differentiable). `gouts` has one entry
// per output; an undefined entry means that output's cotangent is zero. Written only with Kiln ops.
using BpropFn = std::vector<Tensor> (*)(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                        const std::vector<Tensor>& gouts, const Attrs& attrs);

struct OpDef {
  OpId id;
  InferFn infer = nullptr;
  KernelFn cpu = nullptr;
  BpropFn bprop = nullptr;       // nullptr with differentiable == false: no gradient flows through
  bool differentiable = true;
  // Ops that build their outputs themselves instead of having them allocated: views (reshape, transpose,
  // slicing: outputs share input storage) and in-place writes (assign, optimizer updates: the output is the
  // written input). When set, `infer` and `cpu` are not used by eager execution.
  std::vector<Tensor> (*direct)(const std::vector<Tensor>& inputs, const Attrs& attrs) = nullptr;
};

// Registers an op definition (called from each op family's static registrar).
void register_op(const OpDef& def);
// The definition of an op; throws RuntimeError if the op has no definition.
const OpDef& get_op(OpId id);
// True if an op has a registered definition.
bool has_op(OpId id);

// Runs an op on concrete tensors: infers outputs, allocates them, runs the kernel, and records a tape node
// when a grad transform is active and some input is watched. Returns all outputs.
std::vector<Tensor> apply(OpId id, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
// Same, for single-output ops.
Tensor apply1(OpId id, const std::vector<Tensor>& inputs, const Attrs& attrs = {});

// Hooks around kernels that `apply` runs (set by the Python bindings to release the GIL, so that kernels of two
// Python threads run at the same time): `begin` runs before a kernel whose inputs and outputs hold at least
// `min_elements` elements in all, and returns a token that `end` gets after the kernel (also when it throws).
// Kernels never call back into Python (except through hooks that take the GIL themselves, as ops::print's sink).
// Pass nullptr hooks to remove them. Not synchronized: set them once, before other threads run ops.
using KernelBeginHook = void* (*)();
using KernelEndHook = void (*)(void*);
void set_kernel_hooks(KernelBeginHook begin, KernelEndHook end, int64_t min_elements);
// The current threshold of set_kernel_hooks (elements).
int64_t kernel_hook_min_elements();

}  // namespace kiln
