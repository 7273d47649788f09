// Print: formatted output of tensors as a side-effecting op, so that it also prints from compiled graphs.
#include <iostream>
#include <sstream>

#include "families.h"
#include "kiln/ops.h"

namespace kiln {
namespace {
using TV = std::vector<Tensor>;

void default_sink(const std::string& s) { std::cout << s << std::flush; }
void (*g_sink)(const std::string&) = default_sink;

// Values as NumPy prints them in MindSpore's graph mode: nested brackets, space separated, no commas.
void format_values(std::ostringstream& s, const Tensor& t, size_t dim, int64_t offset, int depth) {
  const Shape& sh = t.shape();
  if (sh.empty()) {
    s << KILN_DISPATCH_ALL(t.dtype(), [&](auto tag) -> std::string {
      using T = decltype(tag);
      std::ostringstream v;
      if constexpr (std::is_same_v<T, bool>) v << (*reinterpret_cast<const bool*>(t.raw_data()) ? "True" : "False");
      else if constexpr (std::is_integral_v<T>) v << +t.data<T>()[offset - t.offset()];  // exact, as NumPy
      else v << convert_value<double>(t.data<T>()[offset - t.offset()]);
      return v.str();
    });
    return;
  }
  s << "[";
  for (int64_t i = 0; i < sh[dim]; ++i) {
    if (i) s << (dim + 1 == sh.size() ? " " : "\n" + std::string(size_t(depth + 1), ' '));
    int64_t off = offset + i * t.strides()[dim];
    if (dim + 1 == sh.size()) {
      s << KILN_DISPATCH_ALL(t.dtype(), [&](auto tag) -> std::string {
        using T = decltype(tag);
        std::ostringstream v;
        const T* base = static_cast<const T*>(t.impl()->storage->data);
        if constexpr (std::is_same_v<T, bool>) v << (base[off] ? "True" : "False");
        else if constexpr (std::is_integral_v<T>) v << +base[off];  // exact, as NumPy (no 1e+18 for big ints)
        else v << convert_value<double>(base[off]);
        return v.str();
      });
    } else {
      format_values(s, t, dim + 1, off, depth + 1);
    }
  }
  s << "]";
}

std::string format_tensor(const Tensor& t) {
  std::ostringstream s;
  s << "Tensor(shape=" << shape_str(t.shape()) << ", dtype=" << dtype_name(t.dtype()) << ", value=";
  if (t.ndim() > 1) s << "\n";
  format_values(s, t, 0, t.offset(), 0);
  s << ")";
  return s.str();
}

TV print_direct(const TV& in, const Attrs& a) {
  const std::string& text = a.s("text");
  std::string out;
  size_t k = 0, pos = 0;
  while (true) {
    size_t at = text.find('\x1f', pos);
    if (at == std::string::npos) break;
    out += text.substr(pos, at - pos);
    if (k < in.size()) out += format_tensor(in[k++]);
    pos = at + 1;
  }
  out += text.substr(pos);
  g_sink(out + "\n");
  Tensor r = Tensor::empty({}, DType::Int32);
  *r.data<int32_t>() = 0;
  return {r};
}

}  // namespace

namespace ops_impl {
void register_print() {
  OpDef d;
  d.id = OpId::Print;
  d.infer = [](const TV&, const Attrs&) { return std::vector<TensorMeta>{{{}, DType::Int32}}; };
  d.direct = print_direct;
  d.differentiable = false;
  register_op(d);
}
}  // namespace ops_impl

namespace ops {
Tensor print(const std::string& text, const std::vector<Tensor>& tensors) {
  size_t holes = 0;
  for (char c : text) holes += c == '\x1f';
  KILN_CHECK(holes == tensors.size(), Value, "For 'Print', the text has ", holes, " tensor slots but ",
             tensors.size(), " tensors were given.");
  return apply1(OpId::Print, tensors, {{"text", std::string(text)}});
}
void set_print_sink(void (*sink)(const std::string&)) { g_sink = sink ? sink : default_sink; }
}  // namespace ops
}  // namespace kiln
