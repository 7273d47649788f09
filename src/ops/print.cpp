// Print: formatted output of tensors as a side-effecting op, so that it also prints from compiled graphs.
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include "families.h"
#include "kiln/ops.h"

namespace kiln {
namespace {
using TV = std::vector<Tensor>;

void default_sink(const std::string& s) { std::cout << s << std::flush; }
void (*g_sink)(const std::string&) = default_sink;
// Receives a text whose '\x1e' slots stand for the given tensors, to be formatted as str(tensor) in the front end
// (an f-string / str.format of a tensor in compiled code: NumPy's layout, which the front end owns).
void (*g_text_sink)(const std::string&, const std::vector<Tensor>&) = nullptr;

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

// MindSpore's graph-mode `print` (the built-in print inside a compiled function): a 0-d tensor prints as its bare
// value (C++ stream defaults: 3, 0.1, 1e+20; bools as 1/0); other tensors as `Tensor(shape=..., dtype=..., value=`
// with every element right-aligned to the widest, floats as %.8e with a blank for the sign (`[ 1.50000000e+00
// -2.25000000e+00]`), bools as True/False. Checked against MindSpore 2.10 on CPU.
std::string element_ms(const Tensor& t, const void* base, int64_t off) {
  return KILN_DISPATCH_ALL(t.dtype(), [&](auto tag) -> std::string {
    using T = decltype(tag);
    T v = static_cast<const T*>(base)[off];
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
      return std::to_string(+v);
    } else {
      double d = convert_value<double>(v);
      char buf[64];
      std::snprintf(buf, sizeof buf, std::signbit(d) || std::isnan(d) ? "%.8e" : " %.8e", d);
      return buf;
    }
  });
}

std::string format_tensor_ms(const Tensor& t) {
  const Shape& sh = t.shape();
  const void* base = t.impl()->storage->data;
  if (sh.empty()) {
    std::ostringstream v;
    KILN_DISPATCH_ALL(t.dtype(), [&](auto tag) -> int {
      using T = decltype(tag);
      T x = static_cast<const T*>(base)[t.offset()];
      if constexpr (std::is_same_v<T, bool>) v << (x ? 1 : 0);
      else if constexpr (std::is_integral_v<T>) v << +x;
      else v << convert_value<double>(x);
      return 0;
    });
    return v.str();
  }
  // every element's text, in row-major order, then the widest
  std::vector<std::string> items;
  size_t width = 0;
  std::vector<int64_t> idx(sh.size(), 0);
  int64_t n = 1;
  for (int64_t d : sh) n *= d;
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = t.offset();
    for (size_t d = 0; d < sh.size(); ++d) off += idx[d] * t.strides()[d];
    items.push_back(element_ms(t, base, off));
    width = std::max(width, items.back().size());
    for (size_t d = sh.size(); d-- > 0;) {
      if (++idx[d] < sh[d]) break;
      idx[d] = 0;
    }
  }
  std::ostringstream s;
  s << "Tensor(shape=" << shape_str(sh) << ", dtype=" << dtype_name(t.dtype()) << ", value=";
  if (sh.size() > 1) s << "\n";
  size_t k = 0;
  std::function<void(size_t, int)> rows = [&](size_t dim, int depth) {
    s << "[";
    for (int64_t i = 0; i < sh[dim]; ++i) {
      if (dim + 1 == sh.size()) {
        if (i) s << " ";
        s << std::string(width - items[k].size(), ' ') << items[k];
        ++k;
      } else {
        if (i) s << "\n" << std::string(size_t(depth + 1), ' ');
        rows(dim + 1, depth + 1);
      }
    }
    s << "]";
  };
  rows(0, 0);
  s << ")";
  return s.str();
}

// A text starting with this byte asks for MindSpore's graph-print format (format_tensor_ms); the byte is dropped.
constexpr char kGraphStyle = '\x1d';

TV print_direct(const TV& in, const Attrs& a) {
  const std::string& attr_text = a.s("text");
  const bool ms_style = !attr_text.empty() && attr_text[0] == kGraphStyle;
  const std::string text = ms_style ? attr_text.substr(1) : attr_text;
  std::string out;
  TV as_text;  // the tensors of '\x1e' slots (kept in the text for g_text_sink)
  size_t k = 0, pos = 0;
  while (true) {
    size_t at = text.find_first_of("\x1f\x1e", pos);
    if (at == std::string::npos) break;
    out += text.substr(pos, at - pos);
    if (text[at] == '\x1e') {
      if (k < in.size()) as_text.push_back(in[k++]);
      out += g_text_sink ? std::string(1, '\x1e') : std::string();
    } else if (k < in.size()) {
      out += ms_style ? format_tensor_ms(in[k++]) : format_tensor(in[k++]);
    }
    pos = at + 1;
  }
  out += text.substr(pos);
  if (g_text_sink && !as_text.empty())
    g_text_sink(out + "\n", as_text);
  else
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
  for (char c : text) holes += c == '\x1f' || c == '\x1e';
  KILN_CHECK(holes == tensors.size(), Value, "For 'Print', the text has ", holes, " tensor slots but ",
             tensors.size(), " tensors were given.");
  return apply1(OpId::Print, tensors, {{"text", std::string(text)}});
}
void set_print_sink(void (*sink)(const std::string&)) { g_sink = sink ? sink : default_sink; }
// Declared where it is used (python/src/bind_nn_ops.cpp), to keep kiln/ops.h unchanged.
void set_print_text_sink(void (*sink)(const std::string&, const std::vector<Tensor>&)) { g_text_sink = sink; }
}  // namespace ops
}  // namespace kiln
