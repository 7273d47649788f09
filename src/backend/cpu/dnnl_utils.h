// Kiln CPU backend — small helpers over oneDNN's C API (<oneapi/dnnl/dnnl.h>; the C++ header is avoided because
// it is large and slows builds): the process-wide engine and stream, plain-layout memory descriptors, and a cache
// of ready-to-run primitives keyed by shape and attributes.
//
// Note [primitive cache]: creating a oneDNN primitive costs tens of microseconds (primitive-descriptor creation and
// implementation dispatch; JIT kernels are generated once by oneDNN's own cache). Graph mode runs the same shapes
// every step and PyNative training repeats them too, so each op family keeps a PrimCache: key → a primitive with
// one dnnl_memory_t per argument, created with no data handle; a run sets the handles and executes. Entries are
// never freed (a process sees a bounded set of shapes). A cache is guarded by a mutex: kernels may run from several
// threads (the executor is single-threaded today, but nothing forbids two Python threads).
#pragma once
#include <oneapi/dnnl/dnnl.h>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "kiln/error.h"

namespace kiln::cpu::dnnl {

// Throws RuntimeError naming `op` and the oneDNN status when `expr` fails.
#define KILN_DNNL(expr, op)                                                                                  \
  do {                                                                                                       \
    dnnl_status_t kiln_dnnl_st_ = (expr);                                                                    \
    KILN_CHECK(kiln_dnnl_st_ == dnnl_success, Runtime, "For '", op, "', the oneDNN call ", #expr,            \
               " failed with status ", int(kiln_dnnl_st_), ".");                                             \
  } while (0)

// The CPU engine and an in-order stream on it (created once, never destroyed: they outlive static destruction).
inline dnnl_engine_t engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t r = nullptr;
    KILN_DNNL(dnnl_engine_create(&r, dnnl_cpu, 0), "oneDNN engine");
    return r;
  }();
  return e;
}
inline dnnl_stream_t stream() {
  static dnnl_stream_t s = [] {
    dnnl_stream_t r = nullptr;
    KILN_DNNL(dnnl_stream_create(&r, engine(), dnnl_stream_default_flags), "oneDNN stream");
    return r;
  }();
  return s;
}

// A memory descriptor of a dense tensor with the given dims and layout tag (dnnl_nchw, dnnl_oihw, dnnl_goihw, ...).
// The caller destroys it (MemDesc does so automatically).
struct MemDesc {
  dnnl_memory_desc_t md = nullptr;
  MemDesc(const std::vector<int64_t>& dims, dnnl_format_tag_t tag, dnnl_data_type_t dt = dnnl_f32) {
    dnnl_dims_t d{};
    for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i];
    KILN_DNNL(dnnl_memory_desc_create_with_tag(&md, int(dims.size()), d, dt, tag), "oneDNN memory descriptor");
  }
  ~MemDesc() { if (md) dnnl_memory_desc_destroy(md); }
  MemDesc(const MemDesc&) = delete;
  MemDesc& operator=(const MemDesc&) = delete;
};

// A primitive with one memory object per argument (DNNL_ARG_* ids, in the order `run` takes the data pointers).
struct Prim {
  dnnl_primitive_t prim = nullptr;
  std::vector<dnnl_exec_arg_t> args;
  bool ok() const { return prim != nullptr; }
};

// Creates the primitive of `pd` and a handle-less memory object for each (arg id, descriptor) pair. Takes
// ownership of pd (destroyed here). Returns a Prim with prim == nullptr if any step fails (the caller falls back).
inline Prim make_prim(dnnl_primitive_desc_t pd, const std::vector<std::pair<int, const_dnnl_memory_desc_t>>& args) {
  Prim p;
  dnnl_status_t st = dnnl_primitive_create(&p.prim, pd);
  for (auto& a : args) {
    if (st != dnnl_success) break;
    dnnl_memory_t m = nullptr;
    st = dnnl_memory_create(&m, a.second, engine(), DNNL_MEMORY_NONE);
    if (st == dnnl_success) p.args.push_back({a.first, m});
  }
  dnnl_primitive_desc_destroy(pd);
  if (st != dnnl_success) {
    for (auto& a : p.args) dnnl_memory_destroy(a.memory);
    if (p.prim) dnnl_primitive_destroy(p.prim);
    return Prim{};
  }
  return p;
}

// Runs `p` with data pointers given in the order of its args, and waits for completion.
inline void run_prim(const Prim& p, const std::vector<void*>& data, const char* op) {
  for (size_t i = 0; i < p.args.size(); ++i) KILN_DNNL(dnnl_memory_set_data_handle(p.args[i].memory, data[i]), op);
  KILN_DNNL(dnnl_primitive_execute(p.prim, stream(), int(p.args.size()), p.args.data()), op);
  KILN_DNNL(dnnl_stream_wait(stream()), op);
}

// Primitives keyed by a vector of integers (op kind, shapes, attributes). `run` creates on a miss with `make`
// (which may return a Prim with prim == nullptr: the miss is remembered, so a failing configuration is tried once)
// and returns false when the configuration has no primitive (the caller falls back to its own loops).
class PrimCache {
 public:
  // Runs under the cache lock: primitives and their memory objects are not shared between concurrent runs.
  template <typename Make>
  bool run(const std::vector<int64_t>& key, Make&& make, const std::vector<void*>& data, const char* op) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) it = map_.emplace(key, make()).first;
    if (!it->second.ok()) return false;
    run_prim(it->second, data, op);
    return true;
  }

 private:
  std::mutex mu_;
  std::map<std::vector<int64_t>, Prim> map_;
};

}  // namespace kiln::cpu::dnnl
