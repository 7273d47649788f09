// Kiln — the little-endian byte writer and bounds-checked byte reader shared by the IR serializer
// (serialize.cpp: compile-cache files) and the deployable model format (deploy.cpp: .kiln files). Internal header.
//
// The reader never trusts the bytes: every read checks the bytes left, and `count` refuses an item count that the
// bytes left cannot hold before anything is allocated (so a damaged length cannot make a huge allocation). Errors are
// kiln::Error (RuntimeError) "<prefix>truncated (reading <what> at byte <pos> of <size>)." or "<prefix><what> count
// <n> exceeds the file (byte <pos> of <size>: truncated or damaged).", with the prefix the caller gives. Every
// string is UTF-8 text (names, op and dtype names, source locations, string attributes): `str` refuses one that is
// not ("<prefix><what> is not UTF-8 text (byte <pos> of <size>: damaged)."), so no invalid text reaches a graph, a
// Python str or an error message (docs/decisions/damaged-files.md).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/error.h"

namespace kiln::graph::bytes {

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF)
// at the start of `s`, or 0 when `s` does not start with one.
inline size_t utf8_char_len(std::string_view s) {
  if (s.empty()) return 0;
  auto c = static_cast<unsigned char>(s[0]);
  size_t len = c < 0x80                   ? 1
               : (c >= 0xc2 && c <= 0xdf) ? 2
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xf0 && c <= 0xf4) ? 4
                                          : 0;
  if (len == 0 || len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[k]) >> 6) != 2) return 0;
  if (len > 2) {
    auto c1 = static_cast<unsigned char>(s[1]);
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
      return 0;
  }
  return len;
}

// True when all of `s` is well-formed UTF-8.
inline bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_char_len(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Appends fixed-width little-endian values and length-prefixed strings to `out`.
struct Writer {
  std::string out;
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, 4); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void u64(uint64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  // u64 length, then the bytes.
  void str(const std::string& s) { u64(s.size()); raw(s.data(), s.size()); }
  // u64 count, then each value as i64.
  void ints(const std::vector<int64_t>& v) { u64(v.size()); for (int64_t x : v) i64(x); }
  // u64 count, then each string as str.
  void strs(const std::vector<std::string>& v) { u64(v.size()); for (auto& s : v) str(s); }
};

// Reads what Writer wrote from `in`, from `pos` on; `prefix` starts every error message.
struct Reader {
  std::string_view in;
  size_t pos = 0;
  const char* prefix = "";
  void need(uint64_t n, const char* what) {
    KILN_CHECK(n <= in.size() - pos, Runtime, prefix, "truncated (reading ", what, " at byte ", pos, " of ",
               in.size(), ").");
  }
  void raw(void* p, size_t n, const char* what) { need(n, what); std::memcpy(p, in.data() + pos, n); pos += n; }
  uint8_t u8(const char* what) { uint8_t v; raw(&v, 1, what); return v; }
  uint32_t u32(const char* what) { uint32_t v; raw(&v, 4, what); return v; }
  int32_t i32(const char* what) { int32_t v; raw(&v, 4, what); return v; }
  int64_t i64(const char* what) { int64_t v; raw(&v, 8, what); return v; }
  uint64_t u64(const char* what) { uint64_t v; raw(&v, 8, what); return v; }
  double f64(const char* what) { double v; raw(&v, 8, what); return v; }
  // A u64 count of items of at least `min_item_bytes` each: never more than the bytes left allow.
  uint64_t count(const char* what, uint64_t min_item_bytes) {
    uint64_t n = u64(what);
    KILN_CHECK(n <= (in.size() - pos) / min_item_bytes, Runtime, prefix, what, " count ", n,
               " exceeds the file (byte ", pos, " of ", in.size(), ": truncated or damaged).");
    return n;
  }
  // The next n bytes (a view into `in`).
  std::string_view bytes(uint64_t n, const char* what) {
    need(n, what);
    std::string_view s = in.substr(pos, n);
    pos += n;
    return s;
  }
  // A length-prefixed UTF-8 string.
  std::string str(const char* what) {
    uint64_t n = count(what, 1);
    size_t at = pos;
    std::string_view s = bytes(n, what);
    KILN_CHECK(is_utf8(s), Runtime, prefix, what, " is not UTF-8 text (byte ", at, " of ", in.size(), ": damaged).");
    return std::string(s);
  }
  std::vector<std::string> strs(const char* what) {
    uint64_t n = count(what, 8);
    std::vector<std::string> v;
    for (uint64_t i = 0; i < n; ++i) v.push_back(str(what));
    return v;
  }
  std::vector<int64_t> ints(const char* what) {
    uint64_t n = count(what, 8);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = i64(what);
    return v;
  }
};

}  // namespace kiln::graph::bytes
