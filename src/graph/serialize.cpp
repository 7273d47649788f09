// The IR's serializer (format and guarantees: kiln/graph_io.h). Reading never trusts the bytes: every count is
// checked against the bytes left, every name against the op list / dtype list, and the graph is verified and its
// node types re-inferred before it is returned.
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include "byte_io.h"
#include "kiln/graph_io.h"

namespace kiln::graph {

namespace {

using bytes::Reader;
using bytes::Writer;

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'G', 'R', 'P', 'H'};
constexpr uint32_t kMaxRank = 64;
enum AttrTag : uint8_t { kInt = 0, kFloat, kBool, kInts, kDType, kString };

// ---- writing ----

void write_meta(Writer& w, const TensorMeta& m) { w.str(dtype_name(m.dtype)); w.ints(m.shape); }

void write_attr(Writer& w, const AttrValue& v) {
  if (auto p = std::get_if<int64_t>(&v)) { w.u8(kInt); w.i64(*p); }
  else if (auto p = std::get_if<double>(&v)) { w.u8(kFloat); w.f64(*p); }
  else if (auto p = std::get_if<bool>(&v)) { w.u8(kBool); w.u8(*p ? 1 : 0); }
  else if (auto p = std::get_if<std::vector<int64_t>>(&v)) { w.u8(kInts); w.ints(*p); }
  else if (auto p = std::get_if<DType>(&v)) { w.u8(kDType); w.str(dtype_name(*p)); }
  else if (auto p = std::get_if<std::string>(&v)) { w.u8(kString); w.str(*p); }
  else
    KILN_FAIL(Runtime, "Kiln graph file: a graph with tensor-dependent control flow (If/While nodes with sub-graphs) "
              "cannot be stored; it is compiled in memory only.");
}

// ---- reading (bytes::Reader checks every count against the bytes left) ----

DType dtype_by_name(const std::string& s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == dtype_name(DType(i))) return DType(i);
  KILN_FAIL(Runtime, "Kiln graph file: unknown dtype '", s, "'.");
}

OpId op_by_name(const std::string& s) {
  static const auto* by_name = [] {
    auto* m = new std::unordered_map<std::string, OpId>();
    for (int i = 0; i < int(OpId::kCount); ++i) m->emplace(op_name(OpId(i)), OpId(i));
    return m;
  }();
  auto it = by_name->find(s);
  KILN_CHECK(it != by_name->end(), Runtime, "Kiln graph file: unknown op '", s,
             "' (written by another Kiln version?).");
  return it->second;
}

// Attribute names are `const char*` owned by the op definitions; names read from a file are interned here (a
// bounded set: a file cannot grow it without limit).
const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string>* names = new std::set<std::string>();
  std::lock_guard<std::mutex> g(mu);
  auto it = names->find(s);
  if (it != names->end()) return it->c_str();
  KILN_CHECK(names->size() < 4096 && s.size() <= 256, Runtime, "Kiln graph file: too many or too long attribute "
             "names ('", s.substr(0, 64), "').");
  return names->insert(s).first->c_str();
}

TensorMeta read_meta(Reader& r) {
  TensorMeta m;
  m.dtype = dtype_by_name(r.str("dtype"));
  m.shape = r.ints("shape");
  KILN_CHECK(m.shape.size() <= kMaxRank, Runtime, "Kiln graph file: rank ", m.shape.size(), " is too large.");
  int64_t n = 1;
  for (int64_t d : m.shape) {
    KILN_CHECK(d >= 0 && (d == 0 || n <= (int64_t(1) << 48) / d), Runtime, "Kiln graph file: bad dimension ", d,
               " in shape ", shape_str(m.shape), ".");
    n *= d;
  }
  return m;
}

AttrValue read_attr(Reader& r) {
  uint8_t tag = r.u8("attribute tag");
  switch (tag) {
    case kInt: return r.i64("int attribute");
    case kFloat: return r.f64("float attribute");
    case kBool: {
      uint8_t b = r.u8("bool attribute");
      KILN_CHECK(b <= 1, Runtime, "Kiln graph file: bad bool attribute ", int(b), ".");
      return b == 1;
    }
    case kInts: return r.ints("ints attribute");
    case kDType: return dtype_by_name(r.str("dtype attribute"));
    case kString: return r.str("string attribute");
    default: KILN_FAIL(Runtime, "Kiln graph file: unknown attribute tag ", int(tag), ".");
  }
}


// Re-infers every node's outputs from its inputs (as tracing did) and compares with the stored metas, so that a
// tampered shape can never make a kernel write past a buffer.
void check_types(const Graph& g) {
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const Node& n = g.nodes[ni];
    const OpDef& def = get_op(n.op);
    KILN_CHECK(def.infer != nullptr, Runtime, "Kiln graph file: op ", op_name(n.op), " cannot appear in a graph.");
    std::vector<Tensor> ins;
    for (int v : n.inputs) {
      const Value& val = g.values[size_t(v)];
      ins.push_back(val.kind == ValueKind::Constant ? val.tensor : symbolic(&g, v, val.meta));
    }
    std::vector<TensorMeta> metas;
    try {
      metas = def.infer(ins, n.attrs);
    } catch (const Error& e) {
      KILN_FAIL(Runtime, "Kiln graph file: node ", ni, " (", op_name(n.op), ") is invalid: ", e.what());
    }
    KILN_CHECK(metas.size() == n.outputs.size(), Runtime, "Kiln graph file: node ", ni, " (", op_name(n.op),
               ") has ", n.outputs.size(), " outputs; the op gives ", metas.size(), ".");
    for (size_t k = 0; k < metas.size(); ++k) {
      const TensorMeta& m = g.values[size_t(n.outputs[k])].meta;
      KILN_CHECK(m.shape == metas[k].shape && m.dtype == metas[k].dtype, Runtime, "Kiln graph file: node ", ni, " (",
                 op_name(n.op), ") output ", k, " is stored as ", dtype_name(m.dtype), shape_str(m.shape),
                 " but the op gives ", dtype_name(metas[k].dtype), shape_str(metas[k].shape), ".");
    }
  }
}

}  // namespace

std::vector<int> capture_ids(const Graph& g) {
  std::vector<int> r;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].kind == ValueKind::Capture) r.push_back(int(i));
  return r;
}

std::string serialize(const Graph& g, const std::vector<std::string>& capture_names) {
  std::vector<int> caps = capture_ids(g);
  KILN_CHECK(caps.size() == capture_names.size(), Value, "serialize: graph ", g.name, " has ", caps.size(),
             " captures but ", capture_names.size(), " names were given.");
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  w.str(g.name);
  w.u64(g.values.size());
  size_t next_cap = 0;
  for (const Value& v : g.values) {
    w.u8(uint8_t(v.kind));
    write_meta(w, v.meta);
    switch (v.kind) {
      case ValueKind::Input: w.i32(v.input_index); break;
      case ValueKind::Node: w.i32(v.node); w.i32(v.output_index); break;
      case ValueKind::Capture: w.str(capture_names[next_cap++]); break;
      case ValueKind::Constant: {
        KILN_CHECK(v.tensor.defined() && !v.tensor.is_symbolic(), Runtime, "serialize: graph ", g.name,
                   " has a constant without a value.");
        Tensor c = v.tensor.contiguous();
        w.u8(c.weak() ? 1 : 0);
        size_t nbytes = size_t(c.numel()) * itemsize(c.dtype());
        w.u64(nbytes);
        w.raw(c.raw_data(), nbytes);
        break;
      }
    }
  }
  w.u64(g.nodes.size());
  for (const Node& n : g.nodes) {
    w.str(op_name(n.op));
    w.u64(n.attrs.items.size());
    for (auto& [name, value] : n.attrs.items) {
      w.str(name);
      write_attr(w, value);
    }
    w.u64(n.inputs.size());
    for (int v : n.inputs) w.i32(v);
    w.u64(n.outputs.size());
    for (int v : n.outputs) w.i32(v);
    w.str(n.loc);
  }
  w.u64(g.inputs.size());
  for (int v : g.inputs) w.i32(v);
  w.u64(g.outputs.size());
  for (int v : g.outputs) w.i32(v);
  return std::move(w.out);
}

LoadedGraph deserialize(std::string_view bytes) {
  Reader r{bytes, 0, "Kiln graph file: "};
  char magic[sizeof kMagic];
  r.raw(magic, sizeof magic, "magic");
  KILN_CHECK(std::memcmp(magic, kMagic, sizeof kMagic) == 0, Runtime, "Kiln graph file: not a Kiln graph (bad magic).");
  uint32_t version = r.u32("version");
  KILN_CHECK(version == kFormatVersion, Runtime, "Kiln graph file: format version ", version, "; this Kiln reads ",
             kFormatVersion, ".");
  LoadedGraph out;
  out.graph = std::make_shared<Graph>();
  Graph& g = *out.graph;
  g.name = r.str("name");
  uint64_t nvalues = r.count("value", 10);
  KILN_CHECK(nvalues < (uint64_t(1) << 31), Runtime, "Kiln graph file: too many values.");
  g.values.resize(nvalues);
  std::vector<int> input_of;  // input position -> value id
  for (uint64_t i = 0; i < nvalues; ++i) {
    Value& v = g.values[i];
    uint8_t kind = r.u8("value kind");
    KILN_CHECK(kind <= uint8_t(ValueKind::Node), Runtime, "Kiln graph file: value %", i, " has unknown kind ",
               int(kind), ".");
    v.kind = ValueKind(kind);
    v.meta = read_meta(r);
    switch (v.kind) {
      case ValueKind::Input: v.input_index = r.i32("input index"); break;
      case ValueKind::Node: v.node = r.i32("node index"); v.output_index = r.i32("output index"); break;
      case ValueKind::Capture: out.capture_names.push_back(r.str("capture name")); break;
      case ValueKind::Constant: {
        bool weak = r.u8("weak flag") != 0;
        uint64_t nbytes = r.u64("constant size");
        uint64_t expect = uint64_t(numel(v.meta.shape)) * itemsize(v.meta.dtype);
        KILN_CHECK(nbytes == expect, Runtime, "Kiln graph file: constant %", i, " holds ", nbytes, " bytes; ",
                   dtype_name(v.meta.dtype), shape_str(v.meta.shape), " needs ", expect, ".");
        r.need(nbytes, "constant data");
        Tensor t = Tensor::empty(v.meta.shape, v.meta.dtype);
        if (nbytes) std::memcpy(t.raw_data(), bytes.data() + r.pos, nbytes);
        r.pos += nbytes;
        t.impl()->weak = weak;
        v.tensor = t;
        break;
      }
    }
  }
  uint64_t nnodes = r.count("node", 32);
  g.nodes.resize(nnodes);
  for (uint64_t ni = 0; ni < nnodes; ++ni) {
    Node& n = g.nodes[ni];
    n.op = op_by_name(r.str("op name"));
    uint64_t nattrs = r.count("attribute", 10);
    for (uint64_t k = 0; k < nattrs; ++k) {
      const char* name = intern(r.str("attribute name"));
      n.attrs.items.emplace_back(name, read_attr(r));
    }
    uint64_t nin = r.count("node input", 4);
    for (uint64_t k = 0; k < nin; ++k) n.inputs.push_back(r.i32("node input"));
    uint64_t nout = r.count("node output", 4);
    for (uint64_t k = 0; k < nout; ++k) n.outputs.push_back(r.i32("node output"));
    n.loc = r.str("location");
  }
  uint64_t nin = r.count("graph input", 4);
  for (uint64_t k = 0; k < nin; ++k) g.inputs.push_back(r.i32("graph input"));
  uint64_t nout = r.count("graph output", 4);
  for (uint64_t k = 0; k < nout; ++k) g.outputs.push_back(r.i32("graph output"));
  KILN_CHECK(r.pos == bytes.size(), Runtime, "Kiln graph file: ", bytes.size() - r.pos, " trailing bytes.");

  // Inputs: each an Input value, at its own position, each position once.
  size_t n_input_values = 0;
  for (size_t i = 0; i < g.values.size(); ++i) n_input_values += g.values[i].kind == ValueKind::Input;
  KILN_CHECK(n_input_values == g.inputs.size(), Runtime, "Kiln graph file: ", n_input_values, " input values but ",
             g.inputs.size(), " graph inputs.");
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    int v = g.inputs[k];
    KILN_CHECK(v >= 0 && size_t(v) < g.values.size() && g.values[size_t(v)].kind == ValueKind::Input &&
                   g.values[size_t(v)].input_index == int(k),
               Runtime, "Kiln graph file: graph input ", k, " is not an input value (%", v, ").");
  }
  // Node values: a node index >= 0 (the executor releases a slot after that node). A value no node defines (left
  // behind by a pass that removed its node) is allowed: verify() guarantees nothing reads it.
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.kind != ValueKind::Node) continue;
    KILN_CHECK(v.node >= 0 && v.output_index >= 0, Runtime, "Kiln graph file: value %", i, " has node ", v.node,
               " and output index ", v.output_index, ".");
  }
  try {
    g.verify();
  } catch (const Error& e) {  // every error of the reader names what it read, whatever check found it
    KILN_FAIL(Runtime, "Kiln graph file: the graph is inconsistent: ", e.what());
  }
  check_types(g);
  return out;
}

void bind_captures(Graph& g, const std::vector<Tensor>& tensors) {
  std::vector<int> caps = capture_ids(g);
  KILN_CHECK(caps.size() == tensors.size(), Value, "bind_captures: graph ", g.name, " has ", caps.size(),
             " captures but ", tensors.size(), " tensors were given.");
  for (size_t k = 0; k < caps.size(); ++k) {
    Value& v = g.values[size_t(caps[k])];
    const Tensor& t = tensors[k];
    KILN_CHECK(t.defined() && !t.is_symbolic(), Value, "bind_captures: capture ", k, " (%", caps[k],
               ") must be a concrete tensor.");
    KILN_CHECK(t.shape() == v.meta.shape && t.dtype() == v.meta.dtype, Value, "bind_captures: capture ", k, " (%",
               caps[k], ") is ", dtype_name(v.meta.dtype), shape_str(v.meta.shape), " but the tensor given is ",
               dtype_name(t.dtype()), shape_str(t.shape()), ".");
    v.tensor = t;
  }
}

int remap_random_streams(Graph& g, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  KILN_CHECK(from.size() == to.size(), Value, "remap_random_streams: ", from.size(), " old ids but ", to.size(),
             " new ones.");
  int changed = 0;
  for (Node& n : g.nodes) {
    if (!is_random(n.op)) continue;
    for (auto& [name, value] : n.attrs.items) {
      if (std::string_view(name) != "stream") continue;
      auto* s = std::get_if<int64_t>(&value);
      if (!s) continue;
      for (size_t k = 0; k < from.size(); ++k)
        if (*s == from[k]) { *s = to[k]; ++changed; break; }
    }
  }
  return changed;
}

}  // namespace kiln::graph
