// Atomic file replacement (core/atomic_write.h).
#include "core/atomic_write.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <system_error>

#include <climits>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::io {

namespace {

constexpr size_t kMaxBaseInName = 100;
constexpr const char* kMarker = ".kiln-";

[[noreturn]] void fail(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), what);
}

std::string dir_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

bool is_hex8(std::string_view s) {
  if (s.size() != 8) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// The pid of a temporary name of this host, or -1 when `name` is not one.
long temp_pid(std::string_view name, std::string_view tag) {
  constexpr std::string_view kTmp = ".tmp";
  if (name.size() < 2 || name[0] != '.' || name.size() < kTmp.size() ||
      name.substr(name.size() - kTmp.size()) != kTmp)
    return -1;
  size_t at = name.rfind(kMarker);
  if (at == std::string_view::npos || at == 0) return -1;
  std::string_view rest = name.substr(at + std::strlen(kMarker));
  rest.remove_suffix(kTmp.size());  // "<tag>-<pid>-<token>"
  if (rest.size() < 8 + 1 + 1 + 1 + 8 || rest.substr(0, 8) != tag || rest[8] != '-') return -1;
  std::string_view token = rest.substr(rest.size() - 8);
  std::string_view pid = rest.substr(9, rest.size() - 9 - 9);
  if (!is_hex8(token) || rest[rest.size() - 9] != '-' || pid.empty() || pid.size() > 9) return -1;
  long v = 0;
  for (char c : pid) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool dead(long pid) {
  if (pid <= 0 || pid == long(::getpid())) return false;
  return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;  // EPERM: another user's live process
}

// Filesystems (st_dev) where O_TMPFILE or linking through /proc failed once: the fallback is used there.
std::mutex g_broken_mu;
std::set<dev_t> g_broken;

bool tmpfile_broken(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return false;  // the open reports it
  std::lock_guard<std::mutex> lock(g_broken_mu);
  return g_broken.count(st.st_dev) > 0;
}

void mark_broken(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return;
  dev_t dev = st.st_dev;
  std::lock_guard<std::mutex> lock(g_broken_mu);
  g_broken.insert(dev);
}

bool force_named() {
  const char* v = std::getenv("KILN_ATOMIC_WRITE_NAMED");
  return v != nullptr && std::string_view(v) == "1";
}

void step(const AtomicWriteOptions& o, const char* name) {
  if (o.before_step) o.before_step(name);
}

// Closes `fd` on every path out.
struct Fd {
  int fd = -1;
  ~Fd() { if (fd >= 0) ::close(fd); }
};

void write_all(int fd, std::string_view data, const AtomicWriteOptions& o, const std::string& shown) {
  size_t chunk = o.chunk_bytes > 0 ? o.chunk_bytes : size_t(1) << 26;
  size_t pos = 0;
  while (pos < data.size()) {
    step(o, "write");
    size_t n = std::min(chunk, data.size() - pos);
    ssize_t w = ::write(fd, data.data() + pos, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(errno, "cannot write '" + shown + "'");
    }
    pos += size_t(w);
  }
  step(o, "fsync");
  if (::fsync(fd) != 0) fail(errno, "cannot write '" + shown + "' (fsync)");
}

void fsync_dir(const std::string& dir, const AtomicWriteOptions& o) {
  step(o, "fsync_dir");
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) (void)::fsync(d.fd);  // best effort: some filesystems refuse fsync on a folder
}

void rename_over(const std::string& tmp, const std::string& path, const AtomicWriteOptions& o) {
  step(o, "rename");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(err, "cannot replace '" + path + "'");
  }
}

// Follows `path` while it is a symbolic link (MindSpore's os.path.realpath before a save): the file written is the
// link's target, and the link stays; a dangling link gives the path of its missing target, which is then created.
// Links in the folders above need nothing: the kernel follows them, and the temporary file goes beside the target.
std::string resolve_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops <= 40; ++hops) {  // Linux's MAXSYMLINKS
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
    if (n < 0) fail(errno, "cannot write '" + path + "' (readlink '" + p + "')");
    if (n == 0 || size_t(n) >= sizeof buf) fail(ENAMETOOLONG, "cannot write '" + path + "'");
    std::string target(buf, size_t(n));
    p = target[0] == '/' ? target : join(dir_of(p), target);
  }
  fail(ELOOP, "cannot write '" + path + "'");
}

// What the new file takes over from the file it replaces: its permission bits (limited to options.mode) and group.
struct Existing {
  bool present = false;
  mode_t mode = 0;
  gid_t gid = 0;
};

Existing existing_file(const std::string& path) {
  Existing e;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    e.present = true;
    e.mode = st.st_mode & 0777;
    e.gid = st.st_gid;
  }
  return e;
}

// The mode to create the file with: when a file is replaced, owner-only until keep_existing has set its final bits
// and group (so that nobody outside them can open it meanwhile); else options.mode (the umask applies).
unsigned create_mode(const Existing& e, const AtomicWriteOptions& o) {
  return e.present ? 0600u & o.mode : o.mode;
}

// Gives the new file `fd` the old file's group (where this process may: best effort) and its permission bits,
// limited to options.mode: re-saving never widens who can read or write the file.
void keep_existing(int fd, const Existing& e, const AtomicWriteOptions& o, const std::string& shown) {
  if (!e.present) return;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_gid != e.gid) (void)::fchown(fd, uid_t(-1), e.gid);  // EPERM: keep ours
  if (::fchmod(fd, e.mode & o.mode & 0777) != 0) fail(errno, "cannot write '" + shown + "' (fchmod)");
}

// The O_TMPFILE path. False (nothing written, nothing left) when this filesystem cannot make unnamed files.
bool write_unnamed(const std::string& path, const std::string& dir, std::string_view data, const Existing& e,
                   const AtomicWriteOptions& o) {
#ifdef O_TMPFILE
  step(o, "open");
  Fd f{::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, create_mode(e, o))};
  if (f.fd < 0) {
    int err = errno;
    if (err == EOPNOTSUPP || err == EISDIR || err == EINVAL) {
      Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
      if (d.fd >= 0) mark_broken(d.fd);
      return false;
    }
    fail(err, "cannot write '" + path + "'");
  }
  keep_existing(f.fd, e, o, path);
  write_all(f.fd, data, o, path);
  std::string proc = "/proc/self/fd/" + std::to_string(f.fd);
  step(o, "link");
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
  int err = errno;
  if (err != EEXIST) {
    if (::access(proc.c_str(), F_OK) != 0) {  // no /proc: name the file the fallback way
      mark_broken(f.fd);
      return false;
    }
    fail(err, "cannot write '" + path + "'");
  }
  std::string tmp = temp_path(path);
  step(o, "link");
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0)
    fail(errno, "cannot write '" + path + "'");
  rename_over(tmp, path, o);
  return true;
#else
  (void)path, (void)dir, (void)data, (void)e, (void)o;
  return false;
#endif
}

void write_named(const std::string& path, std::string_view data, const Existing& e,
                 const AtomicWriteOptions& o) {
  std::string tmp = temp_path(path);
  step(o, "open");
  Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, create_mode(e, o))};
  if (f.fd < 0) fail(errno, "cannot write '" + path + "'");
  try {
    keep_existing(f.fd, e, o, path);
    write_all(f.fd, data, o, path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(f.fd) != 0) {
    int err = errno;
    f.fd = -1;
    ::unlink(tmp.c_str());
    fail(err, "cannot write '" + path + "'");
  }
  f.fd = -1;
  rename_over(tmp, path, o);
}

}  // namespace

const std::string& temp_host_tag() {
  static const std::string tag = [] {
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    struct stat st;
    unsigned long long ns = ::stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
    std::string key = std::string(host) + '\0' + std::to_string(ns);
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    return hex32(uint32_t(h ^ (h >> 32)));
  }();
  return tag;
}

std::string temp_path(const std::string& path) {
  static std::mutex mu;
  static std::mt19937 rng{std::random_device{}()};
  uint32_t token;
  {
    std::lock_guard<std::mutex> lock(mu);
    token = uint32_t(rng());
  }
  std::string base = base_of(path).substr(0, kMaxBaseInName);
  return join(dir_of(path), "." + base + kMarker + temp_host_tag() + "-" + std::to_string(::getpid()) + "-" +
                                hex32(token) + ".tmp");
}

std::vector<std::string> sweep_temp_files(const std::string& dir) {
  std::vector<std::string> removed;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return removed;
  const std::string& tag = temp_host_tag();
  std::vector<std::string> stale;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (dead(temp_pid(name, tag))) stale.emplace_back(name);
  }
  ::closedir(d);
  for (const std::string& name : stale) {
    std::string p = join(dir, name);
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(p.c_str()) == 0) removed.push_back(name);
  }
  return removed;
}

void write_file_atomic(const std::string& given, std::string_view data, const AtomicWriteOptions& options) {
  std::string path = resolve_links(given);
  std::string dir = dir_of(path);
  sweep_temp_files(dir);
  Existing e = existing_file(path);
  bool done = !force_named() && !tmpfile_broken(dir) && write_unnamed(path, dir, data, e, options);
  if (!done) write_named(path, data, e, options);
  fsync_dir(dir, options);
}

}  // namespace kiln::io
