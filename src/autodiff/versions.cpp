// Versions of the storages that tape nodes saved, and the snapshots that in-place writes keep for them.
// See kiln/autodiff.h, Note [versions of a storage] and Note [saved tensors and in-place writes].
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/autodiff.h"
#include "kiln/op_schema.h"

namespace kiln::autodiff {

namespace {
struct Entry {
  uint64_t version = 0;                // in-place writes seen while the entry lives
  int64_t saved = 0;                   // live saves (tape nodes' SavedRefs)
  uint64_t saved_version = ~uint64_t(0);  // the latest version a node saved
  std::vector<std::pair<uint64_t, std::shared_ptr<Storage>>> snapshots;  // (version held, its bytes)
};
// An entry exists only while some node holds the storage (a shared_ptr in its SavedRef), so an address is never
// reused while it is a key.
struct Shard {
  std::mutex mu;
  std::unordered_map<const Storage*, Entry> entries;
};
constexpr size_t kShards = 64;
Shard g_shards[kShards];
std::atomic<int64_t> g_entries{0};  // entries in all shards: note_write returns at once while it is 0
std::atomic<uint64_t> g_snapshot_count{0};
std::atomic<uint64_t> g_snapshot_bytes{0};

Shard& shard_of(const Storage* s) { return g_shards[(reinterpret_cast<uintptr_t>(s) >> 6) % kShards]; }
}  // namespace

// The schema's `writes` (src/ops/schema/ops.yaml): the inputs the in-place kernels of src/ops/state.cpp write (each
// calls note_write on them).
uint32_t written_inputs(OpId op) { return op_info(op).writes; }

void note_write(const Tensor& t) {
  const Storage* s = t.impl()->storage.get();
  if (!s || g_entries.load(std::memory_order_acquire) == 0) return;
  Shard& sh = shard_of(s);
  std::lock_guard<std::mutex> lock(sh.mu);
  auto it = sh.entries.find(s);
  if (it == sh.entries.end()) return;  // no node keeps this storage
  Entry& e = it->second;
  // Keep the old bytes only when a node saved the version being overwritten (once per version).
  if (e.saved_version == e.version && (e.snapshots.empty() || e.snapshots.back().first != e.version)) {
    auto copy = std::make_shared<Storage>(s->nbytes, s->device);
    if (s->nbytes) std::memcpy(copy->data, s->data, s->nbytes);
    e.snapshots.emplace_back(e.version, std::move(copy));
    g_snapshot_count.fetch_add(1, std::memory_order_relaxed);
    g_snapshot_bytes.fetch_add(s->nbytes, std::memory_order_relaxed);
  }
  e.version++;
}

WriteSnapshotStats write_snapshot_stats() {
  return {g_snapshot_count.load(std::memory_order_relaxed), g_snapshot_bytes.load(std::memory_order_relaxed)};
}

uint64_t storage_save(const std::shared_ptr<Storage>& storage) {
  const Storage* s = storage.get();
  Shard& sh = shard_of(s);
  std::lock_guard<std::mutex> lock(sh.mu);
  auto [it, fresh] = sh.entries.try_emplace(s);
  if (fresh) g_entries.fetch_add(1, std::memory_order_acq_rel);
  Entry& e = it->second;
  e.saved++;
  e.saved_version = e.version;
  return e.version;
}

void storage_release(const Storage* s) {
  Shard& sh = shard_of(s);
  std::lock_guard<std::mutex> lock(sh.mu);
  auto it = sh.entries.find(s);
  if (it == sh.entries.end()) return;
  if (--it->second.saved > 0) return;
  sh.entries.erase(it);  // its snapshots go with it
  g_entries.fetch_sub(1, std::memory_order_acq_rel);
}

std::shared_ptr<Storage> storage_at_version(const std::shared_ptr<Storage>& storage, uint64_t v) {
  Shard& sh = shard_of(storage.get());
  std::lock_guard<std::mutex> lock(sh.mu);
  auto it = sh.entries.find(storage.get());
  if (it == sh.entries.end() || it->second.version == v) return storage;
  for (auto& [ver, copy] : it->second.snapshots)
    if (ver == v) return copy;
  return nullptr;
}

}  // namespace kiln::autodiff
