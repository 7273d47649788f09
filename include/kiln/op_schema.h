// Kiln — what the op schema (src/ops/schema/ops.yaml) says about each op, as a table compiled into the core.
// The table, the OpId list (kiln/op_list.h) and everything else derived from the schema are generated at build
// time by tools/gen_ops.py (docs/adding_an_op.md). Graph code asks for traits here instead of switching on op ids.
#pragma once
#include <cstdint>

#include "kiln/op.h"

namespace kiln {

// An op's traits (ops.yaml's `traits`), as bits.
enum OpTrait : uint32_t {
  kTraitElementwise = 1u << 0,  // output element i depends only on input elements i (after broadcasting)
  kTraitReduction = 1u << 1,    // reduces over axes
  kTraitView = 1u << 2,         // outputs alias the first input's storage (no copy)
  kTraitInplace = 1u << 3,      // writes the inputs listed in OpInfo::writes
  kTraitSideEffect = 1u << 4,   // must run at every execution, in program order: never folded, removed or reordered
  kTraitRandom = 1u << 5,       // draws from a random stream (a side effect: each run draws anew)
  kTraitCollective = 1u << 6,   // communicates with other processes (every process runs it in the same order)
  kTraitControlFlow = 1u << 7,  // runs sub-graphs (If, While): a barrier to the passes
  kTraitInternal = 1u << 8,     // made by bprops or graph passes only: no public Python name
};

// One row of the schema. Strings are static; "" where the schema has nothing.
struct OpInfo {
  const char* name;       // the op's name in graphs and files (MindSpore's primitive name); op_name(id)
  const char* id;         // the OpId enumerator's spelling
  const char* family;     // src/ops/<family>.cpp (or src/graph/) defines and registers it
  uint32_t traits;        // OpTrait bits
  uint32_t writes;        // inplace ops: bit i set when input i is written in place
  const char* signature;  // "unary" / "binary" when its C++ API, binding and registration are generated
  const char* api;        // kiln::ops::<api> and kiln._core.<api> of a generated signature
  const char* dtype;      // the result-dtype rule of a generated signature (same, float, promote, ..., integer)
  const char* python;     // the public kiln.ops function, or "none: <reason>"
  const char* onnx;       // the ONNX operators it is exported as, or "none: <reason>"
  const char* mindir;     // the MindIR primitives it is exported as, or "none: <reason>"
  const char* doc;        // what it computes
};

// The schema row of an op (every OpId has one).
const OpInfo& op_info(OpId id);
// Whether an op has every trait in `traits` (an OpTrait or several or-ed).
inline bool op_has(OpId id, uint32_t traits) { return (op_info(id).traits & traits) == traits; }

}  // namespace kiln
