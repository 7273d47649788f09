// Kiln — the IR's serializer: Graph → bytes and bytes → Graph (the compile cache on disk, docs/compile_cache.md).
//
// Format (little-endian, version kFormatVersion): magic "KILNGRPH", u32 version, the graph's name, its values, its
// nodes, its inputs and outputs. Ops are stored by their name (op_list.h), never by enum number, so a reordered or
// extended op list cannot misread a file; dtypes by name too. Attributes are (name, typed value). Values:
//   * Input — shape, dtype and argument position;
//   * Constant (a tensor made while tracing) — stored by value: its raw bytes, C-contiguous;
//   * Capture (an external tensor read by reference at run time: a Parameter, optimizer state) — stored as a NAME
//     given by the caller; the loader returns the names and the caller re-binds each to a tensor of the new process
//     with bind_captures. A graph whose captures cannot be named is not serialized (the caller decides);
//   * Node outputs — shape and dtype.
// Loading validates everything and throws kiln::Error (never crashes) on: a wrong magic/version, truncation or
// trailing bytes, an unknown op/dtype name or attribute tag, sizes out of range, value ids out of range or not in SSA
// form (Graph::verify), and node output shapes/dtypes that disagree with the op's own shape inference.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/graph.h"

namespace kiln::graph {

constexpr uint32_t kFormatVersion = 1;

// Serializes `g`. `capture_names` has one entry per Capture value, in value order (see capture_ids). Throws
// ValueError when the count differs, and RuntimeError for a graph that cannot be stored (a capture or constant
// without a concrete tensor).
std::string serialize(const Graph& g, const std::vector<std::string>& capture_names);

// The value ids of the Capture values of `g`, in value order.
std::vector<int> capture_ids(const Graph& g);

struct LoadedGraph {
  std::shared_ptr<Graph> graph;             // captures not bound yet (their tensors are undefined)
  std::vector<std::string> capture_names;   // one per Capture value, in value order
};

// Parses and validates bytes written by serialize. Throws kiln::Error (RuntimeError) describing the first problem.
LoadedGraph deserialize(std::string_view bytes);

// Binds the captures of a loaded graph, in value order, to `tensors` (each must be concrete and have the capture's
// shape and dtype: ValueError naming the capture otherwise).
void bind_captures(Graph& g, const std::vector<Tensor>& tensors);

// Rewrites the `stream` attribute of random ops (kiln/random.h): stream id `from[i]` becomes `to[i]` (a graph loaded
// in a new process uses that process's stream ids). Returns the number of nodes changed.
int remap_random_streams(Graph& g, const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// ---- dynamic shapes (src/graph/specialize.cpp; docs/graph_mode.md, "Dynamic shapes") ----
// One change of a node attribute for `specialize`: the attribute `name` of node `node` gets `value`, which must hold
// the same alternative (int, float, bool, ints) as the attribute it replaces.
struct AttrPatch {
  int node;
  std::string name;
  AttrValue value;
};

// A copy of `tmpl` for concrete input shapes: the inputs take `input_shapes` (one per graph input; dtypes kept), the
// attributes in `attrs` and the constants in `constants` (value id, concrete tensor) are replaced, and every node's
// output shapes and dtypes are inferred again, in program order, by the ops' own infer functions (as tracing does).
// The graph is compiled once, with dynamic dimensions (Kiln's jit, kiln/_compiler/dynamic.py); this makes the plan of
// one concrete signature. ValueError naming the graph, the node, its op and the user's line when an op rejects the
// shapes (e.g. a reshape that the new size does not divide), or for a patch that names no existing attribute, an
// attribute of another type, a value id that is not a constant, or a wrong number of input shapes.
std::shared_ptr<Graph> specialize(const Graph& tmpl, const std::vector<Shape>& input_shapes,
                                  const std::vector<AttrPatch>& attrs,
                                  const std::vector<std::pair<int, Tensor>>& constants);

}  // namespace kiln::graph
