// The op registry, attributes and the eager dispatcher.
#include "kiln/op.h"

#include <array>
#include <sstream>

#include "kiln/autodiff.h"
#include "complex.h"
#include "families.h"
#include "kiln/graph.h"
#include "kiln/op_schema.h"
#include "kiln/profiler.h"

namespace kiln {

namespace autodiff {
// Defined in src/autodiff/tape.cpp: records a node if some input is watched.
void record(const OpDef& def, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Attrs& attrs);
}  // namespace autodiff

namespace {
std::array<OpDef, size_t(OpId::kCount)>& registry() {
  static std::array<OpDef, size_t(OpId::kCount)> r{};
  return r;
}
std::array<bool, size_t(OpId::kCount)>& registered() {
  static std::array<bool, size_t(OpId::kCount)> r{};
  return r;
}
// Registers every family once. An op of the schema that no family registers is a build mistake (its row was added
// without its definition): the first use of the registry names every such op, instead of failing later at a call.
void ensure_registered() {
  static const bool done = [] {
    ops_impl::register_all();
    std::string missing;
    for (size_t i = 0; i < size_t(OpId::kCount); ++i)
      if (!registered()[i]) missing += std::string(missing.empty() ? "" : ", ") + op_info(OpId(i)).name;
    KILN_CHECK(missing.empty(), Runtime, "Kiln: ops of the schema (src/ops/schema/ops.yaml) that no family "
               "registers: ", missing, ".");
    return true;
  }();
  (void)done;
}
}  // namespace

const char* op_name(OpId id) { return op_info(id).name; }

void register_op(const OpDef& def) {
  registry()[size_t(def.id)] = def;
  registered()[size_t(def.id)] = true;
}

bool has_op(OpId id) {
  ensure_registered();
  return registered()[size_t(id)];
}

const OpDef& get_op(OpId id) {
  KILN_CHECK(has_op(id), Runtime, "Kiln: op '", op_name(id), "' has no definition registered.");
  return registry()[size_t(id)];
}

const AttrValue* Attrs::find(const char* name) const {
  for (auto& kv : items)
    if (kv.first == name || std::string_view(kv.first) == name) return &kv.second;
  return nullptr;
}

template <typename T> static const T& get_attr(const Attrs& a, const char* name) {
  const AttrValue* v = a.find(name);
  KILN_CHECK(v != nullptr, Runtime, "Kiln: missing op attribute '", name, "'.");
  const T* p = std::get_if<T>(v);
  KILN_CHECK(p != nullptr, Runtime, "Kiln: op attribute '", name, "' has the wrong type.");
  return *p;
}
int64_t Attrs::i(const char* name) const { return get_attr<int64_t>(*this, name); }
double Attrs::f(const char* name) const { return get_attr<double>(*this, name); }
bool Attrs::b(const char* name) const { return get_attr<bool>(*this, name); }
const std::vector<int64_t>& Attrs::ints(const char* name) const { return get_attr<std::vector<int64_t>>(*this, name); }
DType Attrs::dtype(const char* name) const { return get_attr<DType>(*this, name); }
const std::string& Attrs::s(const char* name) const { return get_attr<std::string>(*this, name); }
const graph::SubGraph& Attrs::graph(const char* name) const {
  return *get_attr<std::shared_ptr<const graph::SubGraph>>(*this, name);
}

std::string Attrs::str() const {
  std::ostringstream s;
  bool first = true;
  for (auto& kv : items) {
    if (!first) s << ", ";
    first = false;
    s << kv.first << "=";
    std::visit([&](auto&& v) {
      using V = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<V, bool>) s << (v ? "True" : "False");
      else if constexpr (std::is_same_v<V, std::vector<int64_t>>) s << shape_str(v);
      else if constexpr (std::is_same_v<V, DType>) s << dtype_name(v);
      else if constexpr (std::is_same_v<V, std::string>) {
        s << '"';
        for (char c : v) s << (c == '\n' ? std::string("\\n") : c == '\x1f' ? std::string("|") : std::string(1, c));
        s << '"';
      }
      else if constexpr (std::is_same_v<V, std::shared_ptr<const graph::SubGraph>>) s << graph::subgraph_label(*v);
      else s << v;
    }, kv.second);
  }
  return s.str();
}

namespace {
KernelBeginHook g_begin = nullptr;
KernelEndHook g_end = nullptr;
int64_t g_min_elements = 0;

// Calls the kernel hooks around one kernel when its tensors hold at least g_min_elements elements.
struct KernelSection {
  void* token = nullptr;
  bool active = false;
  KernelSection(const std::vector<Tensor>& ins, const std::vector<Tensor>& outs) {
    if (!g_begin) return;
    int64_t n = 0;
    for (auto& t : ins) n += t.numel();
    for (auto& t : outs) n += t.numel();
    if (n < g_min_elements) return;
    token = g_begin();
    active = true;
  }
  ~KernelSection() { if (active) g_end(token); }
  KernelSection(const KernelSection&) = delete;
  KernelSection& operator=(const KernelSection&) = delete;
};
}  // namespace

void set_kernel_hooks(KernelBeginHook begin, KernelEndHook end, int64_t min_elements) {
  g_begin = begin && end ? begin : nullptr;
  g_end = begin && end ? end : nullptr;
  g_min_elements = min_elements;
}
int64_t kernel_hook_min_elements() { return g_min_elements; }

std::vector<Tensor> apply(OpId id, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const OpDef& def = get_op(id);
  OpNameScope op_scope(op_name(id));  // names the op in dtype errors raised by promotion and kernels
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].defined(), Value, "For '", op_name(id), "', input ", i, " is an undefined tensor.");
    KILN_CHECK(!inputs[i].is_symbolic() || graph::tracing(), Runtime, "For '", op_name(id),
               "', input ", i, " is a symbolic tensor of a compiled function's trace, used outside that function.");
  }
  // Complex inputs: the op's composition of real ops (its own tape and graph nodes), or TypeError (complex.cpp).
  if (complex_impl::needs_composition(id, inputs)) return complex_impl::apply(id, inputs, attrs);
  std::vector<Tensor> outs;
  if (graph::tracing()) {
    if (autodiff::written_inputs(id)) autodiff::before_traced_write(def, inputs);  // saved tensors it overwrites: copies first
    outs = graph::record(def, inputs, attrs);
  } else if (def.direct) {
    {
      KernelSection section(inputs, {});
      profiler::OpTimer timer(id, profiler::Mode::PyNative);
      outs = def.direct(inputs, attrs);
    }
    for (auto& o : outs) (void)numel(o.shape());  // a view may not exceed the element limit either
  } else {
    std::vector<TensorMeta> metas = def.infer(inputs, attrs);
    outs.reserve(metas.size());
    for (auto& m : metas) outs.push_back(Tensor::empty(m.shape, m.dtype));
    KernelSection section(inputs, outs);
    profiler::OpTimer timer(id, profiler::Mode::PyNative);
    def.cpu(inputs, outs, attrs);
  }
  if (autodiff::grad_level() > 0) autodiff::record(def, inputs, outs, attrs);
  return outs;
}

Tensor apply1(OpId id, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return std::move(apply(id, inputs, attrs)[0]);
}

}  // namespace kiln
