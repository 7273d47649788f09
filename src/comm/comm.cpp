// The process's communication groups: the world (made by init) and those made by create_group. See kiln/comm.h.
#include <algorithm>
#include <map>
#include <mutex>

#include "kiln/comm.h"
#include "kiln/error.h"

namespace kiln::comm {
namespace {
struct Group {
  std::vector<int64_t> ranks;  // world ranks by group rank
  std::unique_ptr<Communicator> comm;
  std::mutex run_mu;           // one collective at a time on this communicator
};

struct State {
  std::mutex mu;  // guards everything below (not held during collectives)
  bool initialized = false;
  InitOptions opts;
  std::unique_ptr<Backend> backend;
  std::map<std::string, std::shared_ptr<Group>> groups;
  std::map<std::string, int> generation;  // times each name was created: fresh rendezvous keys for a re-created group
  int world_rank = 0;
};
State& state() {
  static State* s = new State();  // never destroyed: no teardown order problems at exit
  return *s;
}
const char* kWorld = "world";

std::shared_ptr<Group> find_group(State& s, const std::string& name) {
  KILN_CHECK(s.initialized, Runtime,
             "Kiln communication: not initialized; call mindspore.communication.init() first (under the launcher: "
             "python -m kiln.msrun).");
  auto it = s.groups.find(name);
  KILN_CHECK(it != s.groups.end(), Value, "Kiln communication: unknown group '", name,
             "' (create it with create_group, or use the world group).");
  return it->second;
}
}  // namespace

void init(const InitOptions& o) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  KILN_CHECK(!s.initialized, Runtime, "Kiln communication: init() was already called in this process.");
  KILN_CHECK(o.size >= 1, Value, "Kiln communication: the world size must be >= 1, got ", o.size, ".");
  KILN_CHECK(o.rank >= 0 && o.rank < o.size, Value, "Kiln communication: rank ", o.rank,
             " is outside the world of size ", o.size, ".");
  KILN_CHECK(o.timeout_ms > 0, Value, "Kiln communication: the timeout must be > 0 ms, got ", o.timeout_ms, ".");
  auto backend = make_backend(o);
  auto g = std::make_shared<Group>();
  g->comm = backend->connect(std::string(kWorld) + "/0", o.rank, o.size);
  for (int64_t r = 0; r < o.size; ++r) g->ranks.push_back(r);
  s.backend = std::move(backend);
  s.groups[kWorld] = g;
  s.opts = o;
  s.world_rank = o.rank;
  s.initialized = true;
}

void release() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.groups.clear();
  s.backend.reset();
  s.initialized = false;
}

bool initialized() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.initialized;
}

int64_t timeout_ms() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.opts.timeout_ms;
}

void create_group(const std::string& name, const std::vector<int64_t>& ranks) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mu);
  KILN_CHECK(s.initialized, Runtime, "Kiln communication: not initialized; call init() before create_group.");
  KILN_CHECK(!name.empty(), Value, "For 'create_group', the group name must not be empty.");
  KILN_CHECK(s.groups.find(name) == s.groups.end(), Value, "For 'create_group', the group '", name,
             "' already exists.");
  KILN_CHECK(!ranks.empty(), Value, "For 'create_group', 'rank_ids' must not be empty.");
  std::vector<int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  KILN_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), Value,
             "For 'create_group', 'rank_ids' must not repeat a rank.");
  KILN_CHECK(sorted.front() >= 0 && sorted.back() < s.opts.size, Value,
             "For 'create_group', 'rank_ids' must be in [0, ", s.opts.size, "), got a rank ",
             sorted.front() < 0 ? sorted.front() : sorted.back(), ".");
  auto me = std::find(ranks.begin(), ranks.end(), int64_t(s.world_rank));
  KILN_CHECK(me != ranks.end(), Value, "For 'create_group', this process (world rank ", s.world_rank,
             ") is not in 'rank_ids': only the members of a group create it.");
  int gen = s.generation[name]++;
  Backend* backend = s.backend.get();
  lock.unlock();  // the rendezvous waits for the other members: do not block other threads' queries meanwhile
  auto g = std::make_shared<Group>();
  g->ranks = ranks;
  g->comm = backend->connect("group/" + name + "/" + std::to_string(gen), int(me - ranks.begin()), int(ranks.size()));
  lock.lock();
  KILN_CHECK(s.initialized && s.backend.get() == backend, Runtime,
             "Kiln communication: release() ran while create_group was connecting.");
  s.groups[name] = std::move(g);
}

void destroy_group(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  KILN_CHECK(name != kWorld, Value, "For 'destroy_group', the world group cannot be destroyed (use release()).");
  find_group(s, name);
  s.groups.erase(name);
}

bool has_group(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.initialized && s.groups.count(name) > 0;
}

int group_rank(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return find_group(s, name)->comm->rank();
}

int group_size(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return find_group(s, name)->comm->size();
}

std::vector<int64_t> group_ranks(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return find_group(s, name)->ranks;
}

void with_group(const std::string& name, const std::function<void(Communicator&)>& f) {
  std::shared_ptr<Group> g;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    g = find_group(s, name);
  }
  // The group stays alive while in use, even if destroyed meanwhile. Two threads of this process in collectives on
  // one group at once: the processes pair collectives by their order, so the other processes would pair unrelated
  // ones (Gloo aborts the process on a size mismatch, or mixes the data): a clear error in the second thread
  // instead, before it sends anything (a collective from one thread after another's has ended is not detected).
  std::unique_lock<std::mutex> run(g->run_mu, std::try_to_lock);
  KILN_CHECK(run.owns_lock(), Runtime, "Kiln communication: a collective on group '", name,
             "' was started while another thread of this process is running one on the same group. The processes "
             "pair their collectives by order, so collectives (and distributed training steps) from two threads of "
             "one process at once would pair unrelated collectives across the processes (Gloo then aborts a "
             "process or mixes the data): issue a process's collectives from one thread, or serialize them "
             "(docs/distributed.md, 'mismatched calls').");
  f(*g->comm);
}

}  // namespace kiln::comm
