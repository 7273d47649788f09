// The op schema table (include/kiln/op_schema.h), generated from src/ops/schema/ops.yaml by tools/gen_ops.py.
#include "kiln/op_schema.h"

namespace kiln {

namespace {
const OpInfo kOpInfo[] = {
#include "kiln/op_schema_table.inc"
};
static_assert(sizeof(kOpInfo) / sizeof(kOpInfo[0]) == size_t(OpId::kCount),
              "the schema table and the OpId list come from the same schema rows");
}  // namespace

const OpInfo& op_info(OpId id) { return kOpInfo[size_t(id)]; }

}  // namespace kiln
