"""Kiln's one way to replace a file: all or nothing, with nothing left behind by a killed writer.

Every file Kiln writes whole goes through `write_file`: checkpoints (.ckpt, .safetensors), exports (MINDIR, ONNX,
Kiln models) and compile-cache entries; C++'s kiln::deploy::save uses the same writer. The writer itself is C++
(src/core/atomic_write.h, bound as kiln._core.write_file_atomic), so that Python and C++ share one implementation.
Decision record: docs/decisions/atomic-writes.md.

Guarantees, whatever moment the writer is killed at (SIGKILL; power loss after the fsyncs):
  * the target holds its old content or the whole new content, never a mix or a prefix;
  * no temporary file stays behind. On Linux the data goes to an *unnamed* file (open(dir, O_TMPFILE)) that the
    kernel frees when the process dies; once it is complete and fsynced it is linked as the target when there is
    none, else linked under a temporary name and renamed over the target. That name lives for two system calls; a
    writer killed between them — and every writer on the fallback path (no O_TMPFILE: another OS, a filesystem
    without it, no /proc, or KILN_ATOMIC_WRITE_NAMED=1 in the environment) — leaves a named temporary file, which
    the next write into that folder removes (the *sweep*).

Temporary names: `.<target name, first 100 bytes>.kiln-<host tag>-<pid>-<8 hex digits>.tmp` (TEMP_PATTERN). The
sweep removes one only when its host tag (host name and pid namespace) is this process's and no process has its pid;
a live writer's file, another host's or container's, and files not in this pattern are never touched.
"""
import os
import re

from . import _engine

__all__ = ["write_file", "host_tag", "TEMP_PATTERN"]

TEMP_PATTERN = re.compile(r"^\..*\.kiln-(?P<tag>[0-9a-f]{8})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$", re.S)
_CHUNK = 1 << 26  # bytes per write(2)


def write_file(path, data, mode=0o666, *, _before_step=None):
    """Replaces the file `path` by `data` (bytes-like) atomically and durably (see the module docstring).

    `mode`: a new file's permission bits before the umask (0o666: what open() gives; 0o600: owner only). When
    `path` exists, the new file keeps its permission bits, limited to `mode` (never wider), and its group where the
    process may. A symbolic link is followed (MindSpore's os.path.realpath before a save): its target is replaced
    and the link kept; a dangling link's target is created.
    Temporary files of dead writers in the folder are removed first. The folder must exist. Raises OSError (errno
    and path) when the folder or the file cannot be written; the old file is then unchanged and nothing is left.
    `_before_step(name)` (tests only) is called before each system call of the writer."""
    if not isinstance(data, bytes):
        data = bytes(data)
    _engine.write_file_atomic(os.fsencode(os.path.abspath(os.fspath(path))), data, mode, _CHUNK, _before_step)


def host_tag():
    """The 8 hex digits naming this host and pid namespace in temporary names."""
    return _engine.atomic_write_host_tag()
