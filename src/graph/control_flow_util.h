// Helpers shared by control_flow.cpp (If, While) and scan.cpp (Scan, the reverse pass of While): internal to
// src/graph.
#pragma once
#include <memory>
#include <vector>

#include "kiln/graph.h"
#include "kiln/op.h"

namespace kiln::graph::cf {
using TV = std::vector<Tensor>;

TV slice(const TV& v, size_t begin, size_t end);
TV cat(TV a, const TV& b);
std::vector<TensorMeta> metas_of(const Graph& g, const std::vector<int>& ids);
std::string meta_str(const TensorMeta& m);
// Copies outputs that share storage with an input or that are constants of the sub-graph `g` (may be null).
void unalias(TV& outs, const TV& ins, const Graph* g);
// The vjp graph of `g` (control_flow.cpp): inputs (g's inputs, cotangents of g's outputs[, g's outputs when
// `known`]), outputs (zeros of `pre`, the cotangents of the inputs with keep[i] (all when empty), zeros of `post`).
std::shared_ptr<Graph> vjp_graph(const Graph& g, const std::vector<bool>& keep, const std::vector<TensorMeta>& pre,
                                 const std::vector<TensorMeta>& post, bool known = true);
// Which inputs of the node being differentiated need a cotangent, from `begin`.
std::vector<bool> needed(size_t begin, size_t count);
// Row `i` along the leading dimension of `h` (a view).
Tensor row(const Tensor& h, int64_t i);

// Scan (scan.cpp, Note [Scan]).
std::vector<TensorMeta> scan_infer(const TV& in, const Attrs& a);
TV scan_direct(const TV& in, const Attrs& a);
TV scan_bprop(const TV& in, const TV& out, const TV& gout, const Attrs& a);
// Applies a Scan node (save_history while a gradient is recorded); body_diff may be null.
TV scan(const std::shared_ptr<const SubGraph>& body, const std::shared_ptr<const SubGraph>& body_diff, size_t nc,
        size_t ns, size_t nn, size_t ni, bool reverse, const TV& inputs);
}  // namespace kiln::graph::cf
