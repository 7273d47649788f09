// Kiln — the error type of the C++ core. The Python bindings map each kind to a Python exception.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

enum class ErrorKind { Value, Type, Index, Runtime, Overflow };

// An error with a kind that maps to Python's ValueError / TypeError / IndexError / RuntimeError / OverflowError
// (Overflow: a value that does not fit the element type it is converted to, as NumPy 2 raises).
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
 private:
  ErrorKind kind_;
};

namespace detail {
inline void cat(std::ostringstream&) {}
template <typename T, typename... R> void cat(std::ostringstream& s, const T& v, const R&... r) { s << v; cat(s, r...); }
template <typename... A> std::string str(const A&... a) { std::ostringstream s; cat(s, a...); return s.str(); }
}  // namespace detail

}  // namespace kiln

// KILN_CHECK(cond, Value, "For 'matmul', ...", x, "...") throws kiln::Error of that kind when cond is false.
#define KILN_CHECK(COND, KIND, ...) \
  do { if (!(COND)) throw ::kiln::Error(::kiln::ErrorKind::KIND, ::kiln::detail::str(__VA_ARGS__)); } while (0)
#define KILN_FAIL(KIND, ...) throw ::kiln::Error(::kiln::ErrorKind::KIND, ::kiln::detail::str(__VA_ARGS__))
