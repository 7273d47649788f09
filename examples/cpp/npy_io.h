// NumPy .npy files for the C++ example (read an input, write an output): format version 1.0–3.0, C order,
// little-endian, the dtypes Kiln and NumPy share (bool, int8–64, uint8–64, float16/32/64). Every check throws
// std::runtime_error with a message naming the file and what is wrong.
#pragma once
#include <string>

#include "kiln/tensor.h"

namespace kiln_example {

// Reads a .npy file into a new contiguous tensor. Errors: not an .npy file, a truncated or malformed header, a
// dtype without a Kiln equivalent (e.g. '<c8', '>f4' big-endian, object arrays), Fortran order, or a data size
// that disagrees with the header's shape.
kiln::Tensor read_npy(const std::string& path);

// Writes `t` (any strides; BFloat16 has no NumPy dtype and is written as float32) as a version 1.0 .npy file.
void write_npy(const std::string& path, const kiln::Tensor& t);

// Reads a raw file: exactly numel(shape) · itemsize(dtype) bytes, little-endian, C order.
kiln::Tensor read_raw(const std::string& path, const kiln::Shape& shape, kiln::DType dtype);

}  // namespace kiln_example
