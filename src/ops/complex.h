// The complex dtypes (Complex64, Complex128) in the eager and tracing dispatcher `apply` (src/ops/op.cpp).
#pragma once
#include <vector>

#include "kiln/op.h"

namespace kiln::complex_impl {
// Whether op `id` with these inputs must go through complex_impl::apply: some input is complex and the op does
// not run on complex tensors itself (copies, views, casts, fills and ViewAsReal/ViewAsComplex do).
bool needs_composition(OpId id, const std::vector<Tensor>& inputs);
// Runs op `id` on complex inputs as a composition of real ops over view_as_real's (real, imag) pairs (each real op
// records its own tape node and graph node, so gradients follow from the real ops' bprops); TypeError
// "For '<op>', the dtype Complex64 is not supported." for ops without a composition.
std::vector<Tensor> apply(OpId id, const std::vector<Tensor>& inputs, const Attrs& attrs);
}  // namespace kiln::complex_impl
