// Each op family file defines its ops and registers them here (the families are the schema's `family` fields).
// Registration is explicit (not static initializers) so that linking the core as a static library keeps every op.
#pragma once

namespace kiln::ops_impl {
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
