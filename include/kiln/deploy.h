// Kiln — deployable models: an optimized inference graph and its named weights in one file (".kiln"), loaded and
// run from a C++ program with no Python (docs/export.md, "C++ deployment").
//
// Python writes the file: `kiln.export(net, x, file_name="lenet", file_format="KILN")` traces `net` in inference
// mode, optimizes the graph (the same passes as Graph mode) and writes deploy::to_bytes with Kiln's one atomic
// file writer, as deploy::save does. A MindIR file (Kiln's or MindSpore's) becomes one with
// `kiln.export(nn.GraphCell(kiln.load("m.mindir")), x, file_name="m", file_format="KILN")`. C++ reads it:
//
//     kiln::deploy::Model m = kiln::deploy::Model::load("lenet.kiln");
//     std::vector<kiln::Tensor> out = m.run({x});   // x: m.inputs()[0].dtype, m.inputs()[0].shape
//
// File format (little-endian; version kModelFormatVersion): magic "KILNMODL", u32 version, the input names, the
// output names, the graph (kiln/graph_io.h bytes, u64 length first: ops and dtypes by name, constants by value,
// each weight a Capture stored by name), then the weights in capture order: name, dtype name, shape, raw
// C-contiguous bytes. Strings are u64 length + bytes; shapes u64 rank + i64 dims.
//
// Errors: every function throws kiln::Error (a std::runtime_error; kind() tells ValueError-like misuse from
// RuntimeError-like bad files) with a message naming the function, the file and the problem. A damaged file —
// truncated, wrong magic or version, an unknown op or dtype name, inconsistent shapes, weights that do not match the
// graph — is reported at load time, never crashes and never runs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/graph.h"
#include "kiln/tensor.h"

namespace kiln::deploy {

constexpr uint32_t kModelFormatVersion = 1;
// The file name extension `kiln.export(..., file_format="KILN")` appends.
constexpr const char* kModelExtension = ".kiln";

// The name, shape and dtype of a model input or output (shapes are static: fixed when the model was exported).
struct TensorSpec {
  std::string name;
  Shape shape;
  DType dtype;
};

// The bytes of a model file for graph `g`. `g` must be an inference graph: no op that writes its inputs (Assign,
// optimizer updates), draws random numbers or prints (ValueError naming the node and its source line); each of its
// Capture values (graph::capture_ids order) is a weight, stored with its current tensor under `weight_names[k]`
// (non-empty, distinct). `input_names` (one per graph input) and `output_names` (one per graph output) label the
// model's inputs and outputs; empty vectors give "x0", "x1", ... and "output0", ... ValueError for a wrong number
// of names, an empty or repeated name; RuntimeError for a capture without a concrete tensor.
std::string to_bytes(const graph::Graph& g, const std::vector<std::string>& weight_names,
                     const std::vector<std::string>& input_names = {},
                     const std::vector<std::string>& output_names = {});

// Writes to_bytes(...) to `path` with Kiln's atomic file writer (src/core/atomic_write.h): a reader sees the old
// file or the whole new one, and a writer killed at any moment leaves no temporary file behind (one left between
// two system calls is removed by the next save into that folder; docs/decisions/atomic-writes.md). RuntimeError
// naming the path when it cannot be written.
void save(const std::string& path, const graph::Graph& g, const std::vector<std::string>& weight_names,
          const std::vector<std::string>& input_names = {}, const std::vector<std::string>& output_names = {});

// A loaded model: its graph compiled by the executor (static memory plan), with its weights bound. Copies share
// the same compiled model. Thread-safe: run() may be called from several threads at once (runs of one Model take
// turns on its planned buffers; separate Models loaded from the same file run in parallel).
class Model {
 public:
  // Reads and validates a model file. RuntimeError "kiln::deploy::load: '<path>': ..." when the file is missing,
  // not a regular file, unreadable or damaged (see the file comment); the message names the first problem found.
  static Model load(const std::string& path);
  // The same, from the bytes of a file; `source` names them in error messages.
  static Model from_bytes(std::string_view bytes, const std::string& source = "<bytes>");

  // The graph's name (the exported network's).
  const std::string& name() const;
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  // The weights' names, in file order.
  std::vector<std::string> weight_names() const;
  // The weight called `name` (shares memory with the model: do not write to it while runs are in flight).
  // ValueError when the model has no such weight.
  Tensor weight(const std::string& name) const;
  // Number of operations in the (optimized) graph.
  size_t num_nodes() const;
  // Readable text of the graph, one line per node (graph::Graph::to_text).
  std::string graph_text() const;

  // Runs the model. `inputs`: one concrete tensor per model input, of exactly that input's shape and dtype (any
  // strides). Returns one new C-contiguous tensor per output, with outputs()[k]'s shape and dtype, sharing memory
  // with neither the inputs nor the weights. ValueError "kiln::deploy::Model::run: ..." naming the input (index
  // and name), what was expected and what was given, for a wrong number of inputs, an undefined tensor or a wrong
  // shape or dtype; a kernel's own run-time error (kiln::Error) names the op and the line that issued it.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

 private:
  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kiln::deploy
