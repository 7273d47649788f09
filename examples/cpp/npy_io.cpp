// .npy reading and writing (format: numpy.lib.format, "NEP 1 — A Simple File Format for NumPy Arrays").
#include "npy_io.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace kiln_example {

using kiln::DType;
using kiln::Tensor;

namespace {

struct Descr {
  const char* npy;
  DType dtype;
};
// '|' (not applicable) and '<' (little-endian) spellings as NumPy writes them; '=' (native: this is x86-64 only,
// little-endian) is accepted too.
constexpr Descr kDescrs[] = {
    {"b1", DType::Bool},    {"u1", DType::UInt8},   {"i1", DType::Int8},    {"i2", DType::Int16},
    {"i4", DType::Int32},   {"i8", DType::Int64},   {"f2", DType::Float16}, {"f4", DType::Float32},
    {"f8", DType::Float64}, {"u2", DType::UInt16},  {"u4", DType::UInt32},  {"u8", DType::UInt64},
};

[[noreturn]] void fail(const std::string& path, const std::string& msg) {
  throw std::runtime_error("'" + path + "': " + msg);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot be opened: " + std::string(std::strerror(errno)));
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) fail(path, "read error");
  return s;
}

// The text after `'key':` in the header dict, with leading spaces skipped.
size_t find_key(const std::string& h, const std::string& key, const std::string& path) {
  size_t p = h.find("'" + key + "'");
  if (p == std::string::npos) fail(path, "the .npy header has no '" + key + "' entry: " + h);
  p = h.find(':', p);
  if (p == std::string::npos) fail(path, "malformed .npy header: " + h);
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  return p;
}

DType parse_descr(const std::string& h, const std::string& path) {
  size_t p = find_key(h, "descr", path);
  if (p >= h.size() || h[p] != '\'') fail(path, "the .npy descr is not a simple dtype string: " + h);
  size_t e = h.find('\'', p + 1);
  if (e == std::string::npos) fail(path, "malformed .npy header: " + h);
  std::string d = h.substr(p + 1, e - p - 1);
  if (d.size() == 3 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) {
    for (const Descr& x : kDescrs)
      if (d.compare(1, 2, x.npy) == 0) {
        if (d[0] == '|' && itemsize(x.dtype) != 1) break;
        return x.dtype;
      }
  }
  fail(path, "the array's dtype '" + d + "' is not one Kiln reads (little-endian bool, int8-64, uint8-64, "
             "float16/32/64)");
}

kiln::Shape parse_shape(const std::string& h, const std::string& path) {
  size_t p = find_key(h, "shape", path);
  if (p >= h.size() || h[p] != '(') fail(path, "malformed .npy shape: " + h);
  size_t e = h.find(')', p);
  if (e == std::string::npos) fail(path, "malformed .npy shape: " + h);
  kiln::Shape shape;
  std::string inner = h.substr(p + 1, e - p - 1);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    size_t j = i;
    while (j < inner.size() && inner[j] >= '0' && inner[j] <= '9') ++j;
    if (j == i || j - i > 15) fail(path, "malformed .npy shape: " + h);
    shape.push_back(std::stoll(inner.substr(i, j - i)));
    i = j;
    if (i < inner.size() && inner[i] != ',' && inner[i] != ' ') fail(path, "malformed .npy shape: " + h);
  }
  if (shape.size() > 64) fail(path, "the .npy array has rank " + std::to_string(shape.size()));
  return shape;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::string s = read_file(path);
  if (s.size() < 10 || std::memcmp(s.data(), "\x93NUMPY", 6) != 0) fail(path, "not a .npy file (bad magic)");
  uint8_t major = uint8_t(s[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = uint8_t(s[8]) | (size_t(uint8_t(s[9])) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (s.size() < 12) fail(path, "truncated .npy header");
    hlen = 0;
    for (int k = 0; k < 4; ++k) hlen |= size_t(uint8_t(s[8 + k])) << (8 * k);
    hstart = 12;
  } else {
    fail(path, ".npy format version " + std::to_string(major) + " is not known");
  }
  if (hlen > s.size() - hstart) fail(path, "truncated .npy header");
  std::string h = s.substr(hstart, hlen);
  DType dt = parse_descr(h, path);
  size_t fo = find_key(h, "fortran_order", path);
  if (h.compare(fo, 4, "True") == 0) fail(path, "Fortran-order arrays are not read (save with np.ascontiguousarray)");
  if (h.compare(fo, 5, "False") != 0) fail(path, "malformed .npy header: " + h);
  kiln::Shape shape = parse_shape(h, path);
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (uint64_t(1) << 48) / uint64_t(d)) fail(path, "the .npy shape is too large");
    n *= uint64_t(d);
  }
  size_t nbytes = size_t(n) * kiln::itemsize(dt);
  size_t have = s.size() - hstart - hlen;
  if (have != nbytes)
    fail(path, "the .npy header says " + std::string(kiln::dtype_name(dt)) + kiln::shape_str(shape) + " (" +
                   std::to_string(nbytes) + " bytes) but the file holds " + std::to_string(have) + " data bytes");
  return Tensor::from_data(s.data() + hstart + hlen, shape, dt);
}

void write_npy(const std::string& path, const Tensor& t) {
  Tensor c = t;
  if (t.dtype() == DType::BFloat16) {
    c = Tensor::empty(t.shape(), DType::Float32);
    kiln::copy_into(t, c);
  } else if (!t.is_contiguous()) {
    c = t.contiguous();
  }
  const char* descr = nullptr;
  for (const Descr& x : kDescrs)
    if (x.dtype == c.dtype()) descr = x.npy;
  std::string shape = "(";  // NumPy's tuple repr: (), (3,), (2, 3)
  for (size_t i = 0; i < c.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(c.shape()[i]);
  shape += c.shape().size() == 1 ? ",)" : ")";
  std::string h = std::string("{'descr': '") + (kiln::itemsize(c.dtype()) == 1 ? "|" : "<") + descr +
                  "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(path, "cannot be written: " + std::string(std::strerror(errno)));
  char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(h.size() & 0xff), char(h.size() >> 8)};
  f.write(pre, 10);
  f.write(h.data(), std::streamsize(h.size()));
  f.write(static_cast<const char*>(c.raw_data()), std::streamsize(size_t(c.numel()) * kiln::itemsize(c.dtype())));
  if (!f.good()) fail(path, "write error");
}

Tensor read_raw(const std::string& path, const kiln::Shape& shape, DType dtype) {
  std::string s = read_file(path);
  size_t want = size_t(kiln::numel(shape)) * kiln::itemsize(dtype);
  if (s.size() != want)
    fail(path, "a raw input of " + std::string(kiln::dtype_name(dtype)) + kiln::shape_str(shape) + " must hold " +
                   std::to_string(want) + " bytes, but the file has " + std::to_string(s.size()));
  return Tensor::from_data(s.data(), shape, dtype);
}

}  // namespace kiln_example
