// Kiln — shapes, strides and broadcasting.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, not bytes

// The most elements a tensor may have (2^48: far beyond any memory, far from int64 overflow in byte counts).
constexpr int64_t kMaxElements = int64_t(1) << 48;
// Number of elements (1 for a 0-d shape). Throws ValueError if it exceeds kMaxElements (instead of overflowing).
int64_t numel(const Shape& s);
// Row-major (C-contiguous) strides for a shape.
Strides contiguous_strides(const Shape& s);
// "[2, 3]" — MindSpore's shape spelling in messages.
std::string shape_str(const Shape& s);
// NumPy broadcasting of two shapes. Throws ValueError naming `op` and both shapes if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Normalizes a possibly negative axis for a tensor of rank `ndim`; throws IndexError naming `op` if out of range.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);

}  // namespace kiln
