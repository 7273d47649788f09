// Each op family file defines its ops and registers them here (the families are the schema's `family` fields).
// Registration is explicit (not static initializers) so that linking the core as a static library keeps every op.
#pragma once

#include "kiln/op.h"

namespace kiln::ops_impl {
// Registers an op that a CPU kernel computes: its shape inference, kernel and bprop (written with Kiln ops); without
// a bprop the op is not differentiable (no gradient flows through it). The family files' OpDef boilerplate.
inline void register_kernel(OpId id, InferFn infer, KernelFn cpu, BpropFn bprop = nullptr) {
  OpDef d;
  d.id = id;
  d.infer = infer;
  d.cpu = cpu;
  d.bprop = bprop;
  d.differentiable = bprop != nullptr;
  register_op(d);
}

// One register_<family>() per family of the schema (src/ops/schema/ops.yaml), in schema order (generated).
#define KILN_FAMILY(F) void register_##F();
#include "families.inc"
#undef KILN_FAMILY

inline void register_all() {
#define KILN_FAMILY(F) register_##F();
#include "families.inc"
#undef KILN_FAMILY
}
}  // namespace kiln::ops_impl
