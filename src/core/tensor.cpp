#include "kiln/tensor.h"

#include <atomic>
#include <cstring>

#include "../backend/cpu/loops.h"
#include "kiln/allocator.h"
#include "kiln/autodiff.h"

namespace kiln {

namespace {
std::atomic<uint64_t> g_next_id{1};
}

Storage::Storage(size_t n, Device d) : data(allocator::allocate(n)), nbytes(n), device(d) {}
Storage::Storage(void* d, size_t n, std::shared_ptr<void> owner, Device dev)
    : data(d), nbytes(n), device(dev), external_owner(std::move(owner)) {}
Storage::~Storage() {
  if (!external_owner) allocator::release(data, nbytes);  // external memory goes back to its owner instead
}

TensorImpl::TensorImpl() : id(g_next_id.fetch_add(1, std::memory_order_relaxed)) {}

namespace {
// The work list of the outermost ~TensorImpl on this thread that is releasing a tape (nullptr when none is).
thread_local std::vector<std::shared_ptr<autodiff::Node>>* t_release_list = nullptr;
}  // namespace

TensorImpl::~TensorImpl() {
  if (!grad_fn) return;
  if (t_release_list) {  // inside an outer release: hand the node to its loop instead of recursing
    t_release_list->push_back(std::move(grad_fn));
    return;
  }
  std::vector<std::shared_ptr<autodiff::Node>> pending;
  t_release_list = &pending;
  pending.push_back(std::move(grad_fn));
  while (!pending.empty()) {
    std::shared_ptr<autodiff::Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() != 1) continue;  // someone else still holds the node: it is released with their reference
    // Detach the inputs before the node dies; destroying them here pushes their own nodes onto `pending`.
    std::vector<Tensor> inputs = std::move(n->inputs);
    n.reset();
    inputs.clear();
  }
  t_release_list = nullptr;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Value, "Kiln: a tensor shape must not have negative dimensions, but got ", shape_str(shape), ".");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(size_t(kiln::numel(shape)) * itemsize(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_data(const void* src, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memcpy(t.raw_data(), src, size_t(t.numel()) * itemsize(dtype));
  return t;
}

Tensor Tensor::from_external(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner) {
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Value, "Kiln: a tensor shape must not have negative dimensions, but got ", shape_str(shape), ".");
  KILN_CHECK(owner != nullptr, Value, "Kiln: Tensor::from_external needs an owner that keeps the memory alive.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(data, size_t(kiln::numel(shape)) * itemsize(dtype), std::move(owner));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::scalar(double v, DType dtype, bool weak) {
  Tensor t = empty({}, dtype);
  KILN_DISPATCH_ALL(dtype, [&](auto tag) {
    using T = decltype(tag);
    *t.data<T>() = convert_value<T>(v);
  });
  t.impl()->weak = weak;
  return t;
}

int64_t Tensor::dim(int64_t i) const { return impl_->shape[size_t(normalize_axis(i, ndim(), "Tensor.shape"))]; }

bool Tensor::is_contiguous() const {
  int64_t acc = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] != 1 && impl_->strides[i] != acc) return false;
    acc *= impl_->shape[i];
  }
  return true;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(shape(), dtype());
  copy_into(*this, out);
  return out;
}

Tensor Tensor::alias() const {
  if (is_symbolic()) {
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = impl_->shape;
    impl->strides = impl_->strides;
    impl->dtype = impl_->dtype;
    impl->weak = impl_->weak;
    impl->sym_graph = impl_->sym_graph;
    impl->sym_value = impl_->sym_value;
    return Tensor(std::move(impl));
  }
  return view(shape(), strides(), offset());
}

Tensor Tensor::view(const Shape& shape, const Strides& strides, int64_t offset) const {
  KILN_CHECK(!is_symbolic(), Runtime, "Kiln: a view of a symbolic (graph-mode) tensor can only be made by an op.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = impl_->dtype;
  impl->weak = impl_->weak;
  return Tensor(std::move(impl));
}

double Tensor::item() const {
  KILN_CHECK(!is_symbolic(), Runtime, "Kiln: the value of a tensor is not known while a graph is being compiled.");
  KILN_CHECK(numel() == 1, Value, "Only one element tensors can be converted to Python scalars, but got shape ",
             shape_str(shape()), ".");
  return KILN_DISPATCH_ALL(dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return convert_value<double>(*data<T>());
  });
}

void copy_into(const Tensor& src, const Tensor& dst) {
  KILN_CHECK(src.shape() == dst.shape(), Value, "Kiln copy: shape ", shape_str(src.shape()), " vs ",
             shape_str(dst.shape()), ".");
  if (src.weak() && is_integral(dst.dtype()) && src.numel() > 0 && !src.is_symbolic()) {
    // A Python number (a weak scalar, possibly broadcast) must fit an integer destination, as in NumPy 2
    // (np.uint8 array + 300 and np.array(300, np.uint8) raise OverflowError); floats out of range would be
    // undefined behaviour in C++.
    if (src.dtype() == DType::Int64) {
      const int64_t v = *src.data<int64_t>();
      KILN_CHECK(int_fits(v, dst.dtype()), Overflow, "Python integer ", v, " out of bounds for ",
                 dtype_name(dst.dtype()), ".");
    } else if (src.dtype() == DType::Float64) {
      const double v = *src.data<double>();
      KILN_CHECK(double_fits(v, dst.dtype()), Overflow, "Python float ", v, " out of bounds for ",
                 dtype_name(dst.dtype()), ".");
    }
  }
  KILN_DISPATCH_ALL(src.dtype(), [&](auto stag) {
    using S = decltype(stag);
    KILN_DISPATCH_ALL(dst.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      const S* s = src.data<S>();
      D* d = dst.data<D>();
      std::array<const int64_t*, 2> st{dst.strides().data(), src.strides().data()};
      cpu::strided_loop<2>(dst.shape(), st, [&](const int64_t* off, int64_t n, const int64_t* inner) {
        D* dp = d + off[0];
        const S* sp = s + off[1];
        if (inner[0] == 1 && inner[1] == 1) {
          if constexpr (std::is_same_v<D, S>) std::memcpy(dp, sp, size_t(n) * sizeof(D));
          else for (int64_t i = 0; i < n; ++i) dp[i] = convert_value<D>(sp[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) dp[i * inner[0]] = convert_value<D>(sp[i * inner[1]]);
        }
      });
    });
  });
}

}  // namespace kiln
