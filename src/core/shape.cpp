#include "kiln/shape.h"

#include "kiln/error.h"

namespace kiln {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : s) zero = zero || d == 0;
  if (zero) return 0;
  for (int64_t d : s) {
    // Overflow would wrap to a small count and let kernels read past their buffers.
    KILN_CHECK(!__builtin_mul_overflow(n, d, &n) && n <= kMaxElements, Value, "Kiln: the shape ", shape_str(s),
               " has more elements than a tensor can hold (at most 2^48).");
  }
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) { st[i] = acc; acc *= s[i]; }
  return st;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) { if (i) r += ", "; r += std::to_string(s[i]); }
  return r + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK(da == db || da == 1 || db == 1, Value, "For '", op, "', the shapes ", shape_str(a), " and ",
               shape_str(b), " can not broadcast: dimension ", i, " is ", da, " vs ", db, ".");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  KILN_CHECK(axis >= lo && axis <= hi, Index, "For '", op, "', the axis must be in range [", lo, ", ", hi,
             "] for a tensor of rank ", ndim, ", but got ", axis, ".");
  return axis < 0 ? axis + (ndim == 0 ? 1 : ndim) : axis;
}

}  // namespace kiln
