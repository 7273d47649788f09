// Kiln — Tensor: a refcounted handle to storage plus shape, strides, offset and dtype.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/shape.h"

namespace kiln {

enum class Device : uint8_t { CPU = 0 };

// A block of device memory obtained from the caching allocator and returned to it on destruction — or, when
// made with the external constructor, memory owned by someone else (a NumPy array shared by Tensor.from_numpy):
// `external_owner` keeps that memory alive until the last view of this Storage goes, and the allocator never
// sees it.
struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device = Device::CPU;
  std::shared_ptr<void> external_owner;  // set only for external memory
  explicit Storage(size_t nbytes, Device device = Device::CPU);
  // External memory: `data` (nbytes, writable, aligned to the element size) stays valid while `owner` lives.
  Storage(void* data, size_t nbytes, std::shared_ptr<void> owner, Device device = Device::CPU);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

namespace autodiff { struct Node; }

// The shared state of a tensor. Several TensorImpls may view one Storage (reshape, transpose, slicing).
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;       // in elements
  int64_t offset = 0;    // in elements
  DType dtype = DType::Float32;
  bool weak = false;     // a 0-d tensor made from a Python scalar (see promote_types)
  uint64_t id;           // unique for the life of the process; identifies the tensor in a gradient tape
  // Autodiff: the tape node that produced this tensor (only while a grad transform records), its output index,
  // and how many active grad transforms watch this tensor as a leaf.
  std::shared_ptr<autodiff::Node> grad_fn;
  int32_t output_nr = 0;
  int32_t watch_count = 0;
  // Graph mode: a symbolic tensor (no storage) stands for value `sym_value` of the graph being traced.
  const void* sym_graph = nullptr;
  int32_t sym_value = -1;
  TensorImpl();
  // Releases grad_fn without recursion: a tape is a chain TensorImpl → Node → input TensorImpl → Node …, and
  // letting shared_ptr destructors walk it would use one C++ stack frame group per op (a 100k-op chain overflows
  // the stack). Nodes whose last owner is this tensor are unlinked on an explicit work list instead.
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
};

// A Tensor is a cheap, copyable handle (shared ownership of a TensorImpl). A default-constructed Tensor is
// "undefined": it stands for "no gradient" (zero) in autodiff and must not be read.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new, uninitialized, contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::CPU);
  // A contiguous tensor holding a copy of `count` elements of type `dtype` at `src` (shape must match count).
  static Tensor from_data(const void* src, const Shape& shape, DType dtype);
  // A contiguous tensor VIEWING memory it does not own (no copy): `data` holds numel(shape) elements of `dtype`,
  // C-contiguous, aligned to the element size, writable; `owner` (non-null) keeps it alive and is released when
  // the last tensor viewing it goes. Writes through the tensor are seen by the owner and vice versa.
  // Errors: ValueError for a negative dimension or a null owner.
  static Tensor from_external(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner);
  // A 0-d tensor holding `v` converted to `dtype`. `weak` marks a Python scalar.
  static Tensor scalar(double v, DType dtype, bool weak = false);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return Device::CPU; }
  int64_t ndim() const { return int64_t(impl_->shape.size()); }
  int64_t numel() const { return kiln::numel(impl_->shape); }
  int64_t dim(int64_t i) const;  // negative i counts from the end
  bool is_contiguous() const;
  bool weak() const { return impl_->weak; }
  // True for a tensor of a graph under construction (it has a shape and dtype but no data).
  bool is_symbolic() const { return impl_->sym_graph != nullptr; }
  uint64_t id() const { return impl_->id; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // Pointer to element 0 of this view (storage base + offset), typed.
  template <typename T> T* data() const { return static_cast<T*>(impl_->storage->data) + impl_->offset; }
  void* raw_data() const { return static_cast<char*>(impl_->storage->data) + impl_->offset * itemsize(dtype()); }

  // This tensor if contiguous, else a contiguous copy (not recorded on the tape).
  Tensor contiguous() const;
  // A new TensorImpl viewing the same storage with no autodiff history (used to save tensors in tape nodes).
  Tensor alias() const;
  // A view with a new shape/strides/offset over the same storage (no copy, no autodiff history).
  Tensor view(const Shape& shape, const Strides& strides, int64_t offset) const;
  // Element 0 converted to double (any dtype). Throws ValueError if numel() != 1.
  double item() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Copies the elements of `src` (any strides) into `dst` (any strides, same shape), converting dtype.
void copy_into(const Tensor& src, const Tensor& dst);

}  // namespace kiln
