// Deployable model files (format and guarantees: kiln/deploy.h). The graph section is the IR serializer's
// (graph_io.h), which validates ops, dtypes, value ids and re-infers every node's types; this file adds the names,
// the weights and the checks that make the graph a self-contained inference model.
#include "kiln/deploy.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <unordered_set>

#include "byte_io.h"
#include "core/atomic_write.h"
#include "kiln/graph_io.h"

namespace kiln::deploy {

namespace {

using graph::bytes::Reader;
using graph::bytes::Writer;

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'M', 'O', 'D', 'L'};
constexpr uint32_t kMaxRank = 64;

DType dtype_by_name(const std::string& s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == dtype_name(DType(i))) return DType(i);
  KILN_FAIL(Runtime, "unknown dtype '", s.substr(0, 64), "'.");
}

// Ops a deployable (inference) graph may not hold: they write their inputs (weights would change between runs and
// runs from several threads would race), draw random numbers (their streams belong to the process that traced) or
// print. CheckRange (an index check, e.g. of an Embedding's ids) is kept: it only throws.
const char* forbidden_reason(OpId op) {
  if (graph::is_random(op)) return "draws random numbers";
  if (op == OpId::Print) return "prints";
  if (graph::has_side_effect(op) && op != OpId::CheckRange) return "writes its inputs (a state update)";
  return nullptr;
}

void check_names(const std::vector<std::string>& names, size_t want, const char* what, const char* fn) {
  KILN_CHECK(names.size() == want, Value, fn, ": the graph has ", want, " ", what, "s but ", names.size(),
             " names were given.");
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    KILN_CHECK(!names[i].empty(), Value, fn, ": the name of ", what, " ", i, " is empty.");
    KILN_CHECK(seen.insert(names[i]).second, Value, fn, ": the ", what, " name '", names[i], "' is given twice.");
  }
}

std::vector<std::string> default_names(size_t n, const char* prefix) {
  std::vector<std::string> r;
  for (size_t i = 0; i < n; ++i) r.push_back(prefix + std::to_string(i));
  return r;
}

// `s` with every byte that is not part of valid UTF-8 text (or is a control character other than newline)
// written as \xNN: messages quote names and bytes read from a damaged file, and must stay printable text.
std::string printable(std::string_view s) {
  std::string r;
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = graph::bytes::utf8_char_len(s.substr(i));
    if (len > 0 && (len > 1 || (c >= 0x20 && c != 0x7f) || c == '\n')) {
      r.append(s.substr(i, len));
      i += len;
    } else {
      static const char* hex = "0123456789abcdef";
      r += "\\x";
      r += hex[c >> 4];
      r += hex[c & 15];
      ++i;
    }
  }
  return r;
}

std::string shape_dtype(DType dt, const Shape& s) { return std::string(dtype_name(dt)) + shape_str(s); }

}  // namespace

std::string to_bytes(const graph::Graph& g, const std::vector<std::string>& weight_names,
                     const std::vector<std::string>& input_names, const std::vector<std::string>& output_names) {
  const char* fn = "kiln::deploy::to_bytes";
  g.verify();
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const graph::Node& n = g.nodes[ni];
    const char* why = forbidden_reason(n.op);
    KILN_CHECK(why == nullptr, Value, fn, ": node ", ni, " (", op_name(n.op), n.loc.empty() ? "" : ", issued at ",
               n.loc, ") ", why, "; a deployable model is an inference graph (export the network in inference mode, "
               "without state updates, random ops or prints).");
  }
  std::vector<int> caps = graph::capture_ids(g);
  check_names(weight_names, caps.size(), "weight", fn);
  std::vector<std::string> ins = input_names.empty() ? default_names(g.inputs.size(), "x") : input_names;
  std::vector<std::string> outs = output_names.empty() ? default_names(g.outputs.size(), "output") : output_names;
  check_names(ins, g.inputs.size(), "input", fn);
  check_names(outs, g.outputs.size(), "output", fn);

  std::string graph_bytes = graph::serialize(g, weight_names);  // RuntimeError for a capture with no tensor
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(kModelFormatVersion);
  w.strs(ins);
  w.strs(outs);
  w.u64(graph_bytes.size());
  w.raw(graph_bytes.data(), graph_bytes.size());
  w.u64(caps.size());
  for (size_t k = 0; k < caps.size(); ++k) {
    const graph::Value& v = g.values[size_t(caps[k])];
    Tensor t = v.tensor.contiguous();
    w.str(weight_names[k]);
    w.str(dtype_name(t.dtype()));
    w.u64(t.shape().size());
    for (int64_t d : t.shape()) w.i64(d);
    size_t nbytes = size_t(t.numel()) * itemsize(t.dtype());
    w.u64(nbytes);
    w.raw(t.raw_data(), nbytes);
  }
  return std::move(w.out);
}

void save(const std::string& path, const graph::Graph& g, const std::vector<std::string>& weight_names,
          const std::vector<std::string>& input_names, const std::vector<std::string>& output_names) {
  std::string bytes = to_bytes(g, weight_names, input_names, output_names);
  try {
    io::write_file_atomic(path, bytes);
  } catch (const std::system_error& e) {
    KILN_FAIL(Runtime, "kiln::deploy::save: cannot write '", path, "': ", e.code().message(), ".");
  }
}

// ---- loading ----

struct Model::Impl {
  std::shared_ptr<graph::Graph> graph;
  std::unique_ptr<graph::Executable> exe;  // its run() is internally synchronized
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::pair<std::string, Tensor>> weights;
  std::unordered_set<const Storage*> owned;  // storages of weights and constants (never handed out by run)
};

Model Model::from_bytes(std::string_view bytes, const std::string& source) {
  auto impl = std::make_shared<Impl>();
  try {
    Reader r{bytes};
    char magic[sizeof kMagic];
    r.raw(magic, sizeof magic, "the magic");
    KILN_CHECK(std::memcmp(magic, kMagic, sizeof kMagic) == 0, Runtime, "not a Kiln model file (its first bytes "
               "are not \"KILNMODL\"; Kiln writes these files with kiln.export(..., file_format=\"KILN\")).");
    uint32_t version = r.u32("the format version");
    KILN_CHECK(version == kModelFormatVersion, Runtime, "format version ", version, "; this Kiln reads version ",
               kModelFormatVersion, ".");
    std::vector<std::string> in_names = r.strs("input name");
    std::vector<std::string> out_names = r.strs("output name");
    uint64_t glen = r.u64("the graph size");
    std::string_view gbytes = r.bytes(glen, "the graph");
    graph::LoadedGraph lg;
    try {
      lg = graph::deserialize(gbytes);
    } catch (const Error& e) {
      KILN_FAIL(Runtime, "its graph is invalid: ", e.what());
    }
    graph::Graph& g = *lg.graph;
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
      const char* why = forbidden_reason(g.nodes[ni].op);
      KILN_CHECK(why == nullptr, Runtime, "node ", ni, " (", op_name(g.nodes[ni].op), ") ", why,
                 ": not an inference graph.");
    }
    KILN_CHECK(in_names.size() == g.inputs.size() && out_names.size() == g.outputs.size(), Runtime, "it names ",
               in_names.size(), " inputs and ", out_names.size(), " outputs, but its graph has ", g.inputs.size(),
               " and ", g.outputs.size(), ".");
    uint64_t nweights = r.count("weight", 32);
    KILN_CHECK(nweights == lg.capture_names.size(), Runtime, "it holds ", nweights, " weights but its graph reads ",
               lg.capture_names.size(), ".");
    std::vector<Tensor> tensors;
    for (uint64_t k = 0; k < nweights; ++k) {
      std::string name = r.str("weight name");
      KILN_CHECK(name == lg.capture_names[k], Runtime, "weight ", k, " is named '", name.substr(0, 128),
                 "' but the graph reads '", lg.capture_names[k].substr(0, 128), "' there.");
      DType dt = dtype_by_name(r.str("weight dtype"));
      uint64_t rank = r.count("weight rank", 8);
      KILN_CHECK(rank <= kMaxRank, Runtime, "weight '", name, "' has rank ", rank, ".");
      Shape shape;
      for (uint64_t i = 0; i < rank; ++i) shape.push_back(r.i64("weight shape"));
      // The graph's capture meta was validated by deserialize; a weight must match it exactly.
      const TensorMeta& m = g.values[size_t(graph::capture_ids(g)[k])].meta;
      KILN_CHECK(shape == m.shape && dt == m.dtype, Runtime, "weight '", name, "' is stored as ",
                 shape_dtype(dt, shape), " but the graph reads it as ", shape_dtype(m.dtype, m.shape), ".");
      uint64_t nbytes = r.u64("weight size");
      uint64_t expect = uint64_t(numel(shape)) * itemsize(dt);
      KILN_CHECK(nbytes == expect, Runtime, "weight '", name, "' holds ", nbytes, " bytes; ", shape_dtype(dt, shape),
                 " needs ", expect, ".");
      std::string_view data = r.bytes(nbytes, "weight data");
      Tensor t = Tensor::empty(shape, dt);
      if (nbytes) std::memcpy(t.raw_data(), data.data(), nbytes);
      tensors.push_back(t);
      impl->weights.emplace_back(name, t);
    }
    KILN_CHECK(r.pos == bytes.size(), Runtime, bytes.size() - r.pos, " bytes follow the model (damaged file).");
    std::set<std::string> seen;
    for (auto* names : {&in_names, &out_names}) {
      seen.clear();
      for (auto& n : *names) KILN_CHECK(seen.insert(n).second, Runtime, "the name '", n.substr(0, 128),
                                        "' is given to two inputs or two outputs.");
    }
    graph::bind_captures(g, tensors);
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const TensorMeta& m = g.values[size_t(g.inputs[k])].meta;
      impl->inputs.push_back({in_names[k], m.shape, m.dtype});
    }
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const TensorMeta& m = g.values[size_t(g.outputs[k])].meta;
      impl->outputs.push_back({out_names[k], m.shape, m.dtype});
    }
    for (auto& v : g.values)
      if ((v.kind == graph::ValueKind::Capture || v.kind == graph::ValueKind::Constant) && v.tensor.defined())
        impl->owned.insert(v.tensor.impl()->storage.get());
    impl->graph = lg.graph;
    impl->exe = std::make_unique<graph::Executable>(std::shared_ptr<const graph::Graph>(lg.graph));
  } catch (const Error& e) {
    KILN_FAIL(Runtime, "kiln::deploy::load: '", source, "': ", printable(e.what()));
  } catch (const std::bad_alloc&) {
    KILN_FAIL(Runtime, "kiln::deploy::load: '", source, "': out of memory while reading the model.");
  } catch (const std::exception& e) {
    KILN_FAIL(Runtime, "kiln::deploy::load: '", source, "': ", printable(e.what()));
  }
  return Model(std::move(impl));
}

Model Model::load(const std::string& path) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  KILN_CHECK(!ec && std::filesystem::exists(st), Runtime, "kiln::deploy::load: '", path, "': no such file.");
  KILN_CHECK(std::filesystem::is_regular_file(st), Runtime, "kiln::deploy::load: '", path,
             "': not a regular file.");
  std::ifstream f(path, std::ios::binary);
  KILN_CHECK(f.good(), Runtime, "kiln::deploy::load: '", path, "': cannot be opened: ", std::strerror(errno), ".");
  std::string bytes;
  try {
    bytes.resize(size_t(std::filesystem::file_size(path)));
  } catch (const std::exception& e) {
    KILN_FAIL(Runtime, "kiln::deploy::load: '", path, "': cannot be read: ", e.what());
  }
  f.read(bytes.data(), std::streamsize(bytes.size()));
  KILN_CHECK(size_t(f.gcount()) == bytes.size(), Runtime, "kiln::deploy::load: '", path, "': read error (",
             f.gcount(), " of ", bytes.size(), " bytes read).");
  return from_bytes(bytes, path);
}

const std::string& Model::name() const { return impl_->graph->name; }
const std::vector<TensorSpec>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorSpec>& Model::outputs() const { return impl_->outputs; }
size_t Model::num_nodes() const { return impl_->graph->nodes.size(); }
std::string Model::graph_text() const { return impl_->graph->to_text(); }

std::vector<std::string> Model::weight_names() const {
  std::vector<std::string> r;
  for (auto& [n, t] : impl_->weights) r.push_back(n);
  return r;
}

Tensor Model::weight(const std::string& name) const {
  for (auto& [n, t] : impl_->weights)
    if (n == name) return t;
  KILN_FAIL(Value, "kiln::deploy::Model::weight: the model '", impl_->graph->name, "' has no weight named '", name,
            "'.");
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) const {
  const char* fn = "kiln::deploy::Model::run";
  const auto& specs = impl_->inputs;
  KILN_CHECK(inputs.size() == specs.size(), Value, fn, ": the model '", impl_->graph->name, "' takes ",
             specs.size(), " input(s), but ", inputs.size(), " were given.");
  std::vector<Tensor> args;
  args.reserve(inputs.size());
  std::unordered_set<const Storage*> arg_storage;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    const TensorSpec& s = specs[i];
    KILN_CHECK(x.defined() && !x.is_symbolic(), Value, fn, ": input ", i, " ('", s.name,
               "') must be a tensor with data, but got ", x.defined() ? "a symbolic tensor" : "an undefined tensor",
               ".");
    KILN_CHECK(x.shape() == s.shape && x.dtype() == s.dtype, Value, fn, ": input ", i, " ('", s.name, "') must be ",
               shape_dtype(s.dtype, s.shape), ", but got ", shape_dtype(x.dtype(), x.shape()), ".");
    args.push_back(x.is_contiguous() ? x : x.contiguous());
    arg_storage.insert(x.impl()->storage.get());
  }
  std::vector<Tensor> out = impl_->exe->run(args);
  std::unordered_set<const Storage*> out_storage;  // two outputs never share memory either
  for (Tensor& t : out) {
    const Storage* st = t.impl()->storage.get();
    if (!t.is_contiguous() || impl_->owned.count(st) || arg_storage.count(st) || !out_storage.insert(st).second) {
      Tensor c = Tensor::empty(t.shape(), t.dtype());
      copy_into(t, c);
      t = c;
    }
  }
  return out;
}

}  // namespace kiln::deploy
