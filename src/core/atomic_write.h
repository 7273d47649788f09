// Kiln — the one way Kiln replaces a file (internal header). Used by every writer of a whole file: checkpoints,
// MINDIR/ONNX/Kiln-model exports, compile-cache entries (through kiln._core.write_file_atomic and
// kiln/_atomic_write.py) and kiln::deploy::save. Decision record: docs/decisions/atomic-writes.md.
//
// Guarantees, whatever moment the writer is killed at (SIGKILL; power loss after the fsyncs):
//   * the target holds its old content or the whole new content, never a mix or a prefix;
//   * no temporary file stays behind. On Linux the data goes to an *unnamed* file (open(dir, O_TMPFILE)) that the
//     kernel frees when the process dies; only once it is complete and fsynced does it get a name: linked as the
//     target when there is none, else linked under a temporary name and renamed over the target. That name lives for
//     two system calls; a writer killed between them — and every writer on the fallback path (no O_TMPFILE: another
//     OS, a filesystem without it, no /proc, or KILN_ATOMIC_WRITE_NAMED=1 in the environment) — leaves a named
//     temporary file, which the next write_file_atomic into that folder removes (the *sweep*).
//
// Temporary names: ".<target name, first 100 bytes>.kiln-<host tag>-<pid>-<8 hex digits>.tmp". The host tag (8 hex
// digits hashing the host name and the pid namespace) makes the pid meaningful: the sweep removes a temporary file
// only when its tag is this process's and no process has its pid (kill(pid, 0) fails with ESRCH). A live writer's
// file (another thread, another process), a file from another host or container sharing the folder and files that
// are not in this pattern are never touched.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io {

struct AtomicWriteOptions {
  // Permission bits of a new file, before the umask. When the target exists, the new file gets the old file's
  // bits limited to these (never wider: 0600 stays 0600) and, where the process may, the old file's group.
  unsigned mode = 0666;
  size_t chunk_bytes = size_t(1) << 26;  // bytes per write(2)
  // Called before each system call that changes the file system or the file, with its name: "open", "write" (per
  // chunk), "fsync", "link", "rename", "fsync_dir". Tests use it to stop a writer at every step.
  std::function<void(const char*)> before_step;
};

// Replaces the file `path` by `data`, atomically and durably (see above); temporary files of dead writers in its
// folder are removed first. A symbolic link is followed (as MindSpore's os.path.realpath before a save): its target
// is replaced and the link kept; a dangling link's target is created. The folder must exist. Throws std::system_error (errno, message naming the path) when
// the folder or the file cannot be written; the old file is then unchanged and nothing is left.
void write_file_atomic(const std::string& path, std::string_view data, const AtomicWriteOptions& options = {});

// Removes the temporary files of dead writers in `dir` (see above); returns their names. Never throws for a folder
// it cannot list or a file already gone.
std::vector<std::string> sweep_temp_files(const std::string& dir);

// This process's host tag (8 hex digits) and a fresh temporary path beside `path` in the pattern above.
const std::string& temp_host_tag();
std::string temp_path(const std::string& path);

}  // namespace kiln::io
