// Kiln CPU backend — small helpers over oneDNN's C API (<oneapi/dnnl/dnnl.h>; the C++ header is avoided because
// it is large and slows builds): the process-wide engine, a stream per thread, plain-layout memory descriptors,
// and a bounded cache of ready-to-run primitives keyed by shape and attributes.
//
// Note [primitive cache]: creating a oneDNN primitive costs tens of microseconds (primitive-descriptor creation and
// implementation dispatch; JIT kernels are generated once by oneDNN's own cache). Graph mode runs the same shapes
// every step and PyNative training repeats them too, so each op family keeps a PrimCache: key → a primitive and
// the memory descriptors of its arguments. The cache holds at most PrimCache::kCapacity entries (least recently
// used ones are dropped; an entry in use stays alive until its run ends).
//
// Note [threads]: kernels run from any thread, at the same time (two Python threads, with the GIL released around
// kernels). oneDNN allows a primitive to execute concurrently only if each execution has its own scratchpad and
// its own memory objects, on a stream of its thread. So: every primitive is created with a user-managed
// scratchpad (make_prim refuses one that is not: `Attr` makes the attribute), a run takes a private set of memory
// objects from the entry's pool (made on demand; returned after the run) and a scratchpad block from Kiln's
// allocator, and executes on stream(), which is per thread. The cache's map is guarded by a mutex; execution runs
// outside it.
#pragma once
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kiln/allocator.h"
#include "kiln/error.h"

namespace kiln::cpu::dnnl {

// Throws RuntimeError naming `op` and the oneDNN status when `expr` fails.
#define KILN_DNNL(expr, op)                                                                                  \
  do {                                                                                                       \
    dnnl_status_t kiln_dnnl_st_ = (expr);                                                                    \
    KILN_CHECK(kiln_dnnl_st_ == dnnl_success, Runtime, "For '", op, "', the oneDNN call ", #expr,            \
               " failed with status ", int(kiln_dnnl_st_), ".");                                             \
  } while (0)

// The CPU engine (created once, never destroyed: it outlives static destruction). oneDNN engines are thread-safe.
inline dnnl_engine_t engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t r = nullptr;
    KILN_DNNL(dnnl_engine_create(&r, dnnl_cpu, 0), "oneDNN engine");
    return r;
  }();
  return e;
}

// An in-order stream of the calling thread (a oneDNN stream must not be used by two threads at once).
inline dnnl_stream_t stream() {
  struct Holder {
    dnnl_stream_t s = nullptr;
    ~Holder() { if (s) dnnl_stream_destroy(s); }
  };
  thread_local Holder h;
  if (!h.s) KILN_DNNL(dnnl_stream_create(&h.s, engine(), dnnl_stream_default_flags), "oneDNN stream");
  return h.s;
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

// A primitive attribute with a user-managed scratchpad — what every primitive that Kiln caches must be created
// with (Note [threads]). Add post-ops etc. to `a` before creating the primitive descriptor.
struct Attr {
  dnnl_primitive_attr_t a = nullptr;
  Attr() {
    KILN_DNNL(dnnl_primitive_attr_create(&a), "oneDNN primitive attribute");
    KILN_DNNL(dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user), "oneDNN primitive attribute");
  }
  ~Attr() { if (a) dnnl_primitive_attr_destroy(a); }
  Attr(const Attr&) = delete;
  Attr& operator=(const Attr&) = delete;
};

// A primitive, the memory descriptors of its arguments (DNNL_ARG_* ids, in the order `run_prim` takes the data
// pointers) and of its scratchpad, and a pool of memory-object sets not in use by any run.
struct Prim {
  dnnl_primitive_t prim = nullptr;
  std::vector<int> arg_ids;
  std::vector<dnnl_memory_desc_t> mds;  // owned clones
  dnnl_memory_desc_t scratch_md = nullptr;
  size_t scratch_bytes = 0;
  std::mutex pool_mu;
  std::vector<std::vector<dnnl_exec_arg_t>> pool;  // each: one memory object per argument (+ the scratchpad)

  Prim() = default;
  Prim(const Prim&) = delete;
  Prim& operator=(const Prim&) = delete;
  ~Prim() {
    for (auto& set : pool)
      for (auto& a : set) dnnl_memory_destroy(a.memory);
    for (auto m : mds) dnnl_memory_desc_destroy(m);
    if (scratch_md) dnnl_memory_desc_destroy(scratch_md);
    if (prim) dnnl_primitive_destroy(prim);
  }
};
using PrimPtr = std::shared_ptr<Prim>;

// Creates the primitive of `pd` and keeps a copy of each (arg id, descriptor). Takes ownership of pd (destroyed
// here). Returns nullptr if oneDNN fails (the caller falls back to its own loops). Throws RuntimeError (an internal
// error) if pd was not created with a user-managed scratchpad (`Attr`): such a primitive is unsafe across threads.
inline PrimPtr make_prim(dnnl_primitive_desc_t pd, const std::vector<std::pair<int, const_dnnl_memory_desc_t>>& args) {
  struct PdGuard {
    dnnl_primitive_desc_t pd;
    ~PdGuard() { dnnl_primitive_desc_destroy(pd); }
  } guard{pd};
  const_dnnl_primitive_attr_t attr = nullptr;
  dnnl_scratchpad_mode_t mode = dnnl_scratchpad_mode_library;
  KILN_DNNL(dnnl_primitive_desc_get_attr(pd, &attr), "oneDNN primitive");
  KILN_DNNL(dnnl_primitive_attr_get_scratchpad_mode(attr, &mode), "oneDNN primitive");
  KILN_CHECK(mode == dnnl_scratchpad_mode_user, Runtime,
             "Kiln internal error: a cached oneDNN primitive must use a user-managed scratchpad (dnnl::Attr).");
  auto p = std::make_shared<Prim>();
  if (dnnl_primitive_create(&p->prim, pd) != dnnl_success) { p->prim = nullptr; return nullptr; }
  for (auto& a : args) {
    dnnl_memory_desc_t m = nullptr;
    if (dnnl_memory_desc_clone(&m, a.second) != dnnl_success) return nullptr;
    p->arg_ids.push_back(a.first);
    p->mds.push_back(m);
  }
  const_dnnl_memory_desc_t smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (smd && dnnl_memory_desc_get_size(smd) > 0) {
    if (dnnl_memory_desc_clone(&p->scratch_md, smd) != dnnl_success) return nullptr;
    p->scratch_bytes = dnnl_memory_desc_get_size(smd);
  }
  return p;
}

// Runs `p` with data pointers given in the order of its args, on this thread's stream, and waits for completion.
// Safe to call from several threads at once on the same Prim (Note [threads]).
inline void run_prim(Prim& p, const std::vector<void*>& data, const char* op) {
  std::vector<dnnl_exec_arg_t> args;
  {
    std::lock_guard<std::mutex> g(p.pool_mu);
    if (!p.pool.empty()) {
      args = std::move(p.pool.back());
      p.pool.pop_back();
    }
  }
  // Returns the memory-object set to the pool (or destroys it if it is incomplete) however the run ends.
  struct Lease {
    Prim& p;
    std::vector<dnnl_exec_arg_t>& args;
    size_t want;
    ~Lease() {
      if (args.size() != want) {
        for (auto& a : args) dnnl_memory_destroy(a.memory);
        return;
      }
      std::lock_guard<std::mutex> g(p.pool_mu);
      p.pool.push_back(std::move(args));
    }
  } lease{p, args, p.mds.size() + (p.scratch_md ? 1 : 0)};
  if (args.empty()) {
    for (size_t i = 0; i < p.mds.size(); ++i) {
      dnnl_memory_t m = nullptr;
      KILN_DNNL(dnnl_memory_create(&m, p.mds[i], engine(), DNNL_MEMORY_NONE), op);
      args.push_back({p.arg_ids[i], m});
    }
    if (p.scratch_md) {
      dnnl_memory_t m = nullptr;
      KILN_DNNL(dnnl_memory_create(&m, p.scratch_md, engine(), DNNL_MEMORY_NONE), op);
      args.push_back({DNNL_ARG_SCRATCHPAD, m});
    }
  }
  struct Scratch {
    void* ptr;
    size_t n;
    ~Scratch() { if (ptr) allocator::release(ptr, n); }
  } scratch{p.scratch_bytes ? allocator::allocate(p.scratch_bytes) : nullptr, p.scratch_bytes};
  for (size_t i = 0; i < data.size(); ++i) KILN_DNNL(dnnl_memory_set_data_handle(args[i].memory, data[i]), op);
  if (p.scratch_md) KILN_DNNL(dnnl_memory_set_data_handle(args.back().memory, scratch.ptr), op);
  dnnl_stream_t s = stream();
  KILN_DNNL(dnnl_primitive_execute(p.prim, s, int(args.size()), args.data()), op);
  KILN_DNNL(dnnl_stream_wait(s), op);
}

// Values (primitives, or plans of several primitives) keyed by a vector of integers (op kind, shapes, attributes),
// least recently used dropped beyond kCapacity. `get` creates on a miss with `make` (which may return nullptr: the
// miss is remembered, so a failing configuration is tried once). The OpenMP team size is appended to every key
// (see `get`). Thread-safe: the map is guarded by a mutex; a value handed out stays alive while its user holds it.
template <typename V>
class LruCache {
 public:
  static constexpr size_t kCapacity = 256;

  template <typename Make>
  std::shared_ptr<V> get(const std::vector<int64_t>& config, Make&& make) {
    // The OpenMP team size a primitive is created for is part of its identity: oneDNN primitives keep it, and in a
    // forked child (kiln.dataset worker processes) a team of more than one thread waits forever (libgomp is not
    // fork-safe); workers switch to one thread, so they must not reuse the parent's primitives.
    std::vector<int64_t> key(config);
    key.push_back(omp_get_max_threads());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
      return it->second->second;
    }
    std::shared_ptr<V> p = make();
    lru_.emplace_front(key, p);
    map_.emplace(key, lru_.begin());
    while (lru_.size() > kCapacity) {  // a running entry survives through its user's own reference
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return p;
  }
  // Number of cached configurations (for tests).
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }

 private:
  using Entry = std::pair<std::vector<int64_t>, std::shared_ptr<V>>;
  std::mutex mu_;
  std::list<Entry> lru_;
  std::map<std::vector<int64_t>, typename std::list<Entry>::iterator> map_;
};

// Single primitives keyed by configuration: `run` creates on a miss with `make` and returns false when the
// configuration has no primitive (the caller falls back to its own loops). Thread-safe (Note [threads]).
class PrimCache {
 public:
  static constexpr size_t kCapacity = LruCache<Prim>::kCapacity;

  template <typename Make>
  bool run(const std::vector<int64_t>& config, Make&& make, const std::vector<void*>& data, const char* op) {
    PrimPtr p = cache_.get(config, make);
    if (!p) return false;
    run_prim(*p, data, op);
    return true;
  }
  size_t size() { return cache_.size(); }

 private:
  LruCache<Prim> cache_;
};

// A reorder primitive from layout `from` to layout `to` (same dims and data type), or nullptr when the two
// layouts are the same (no reorder needed). Sets *failed when oneDNN cannot make it. Arguments: {from, to}.
inline PrimPtr make_reorder(const_dnnl_memory_desc_t from, const_dnnl_memory_desc_t to, bool* failed) {
  if (dnnl_memory_desc_equal(from, to)) return nullptr;
  Attr attr;
  dnnl_primitive_desc_t pd = nullptr;
  if (dnnl_reorder_primitive_desc_create(&pd, from, engine(), to, engine(), attr.a) != dnnl_success) {
    *failed = true;
    return nullptr;
  }
  PrimPtr p = make_prim(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  if (!p) *failed = true;
  return p;
}

// A block of Kiln-allocator memory for the duration of a scope (a blocked-layout temporary); empty when n == 0.
struct TempBuffer {
  void* ptr = nullptr;
  size_t n = 0;
  explicit TempBuffer(size_t bytes) : ptr(bytes ? allocator::allocate(bytes) : nullptr), n(bytes) {}
  ~TempBuffer() { if (ptr) allocator::release(ptr, n); }
  TempBuffer(const TempBuffer&) = delete;
  TempBuffer& operator=(const TempBuffer&) = delete;
};

}  // namespace kiln::cpu::dnnl
