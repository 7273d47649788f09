"""Replacing a file leaves the old file or the whole new one, and nothing else, whenever the writer is killed
(kiln/_atomic_write.py; docs/decisions/atomic-writes.md).

A child process saves a 16 MiB checkpoint in a loop. Before each system call of the writer (open, each write of
4 MiB, fsync, link, rename, the folder's fsync) it stops at a *pause point* (the writer's step hook), says so and
waits for the parent. The parent lets whole saves run, then
SIGKILLs the child at the k-th pause point of a save over an existing checkpoint, for every k (every moment between
two system calls of the writer), on both paths: the unnamed O_TMPFILE file and the named-temp fallback
(KILN_ATOMIC_WRITE_NAMED=1). After each kill the folder holds the checkpoint of the last completed save, loadable and
equal to it, and at most one temporary file in Kiln's pattern naming the dead process (only where the writer can
have given its data a name: the fallback, or between the link and the rename); the next save into the folder
removes it. In process: the sweep removes a dead writer's file and keeps a live writer's, another host's and files
that are not Kiln's; a write that fails (file size limit) keeps the old file and leaves nothing; new files get the
mode asked for, less the umask; every whole-file writer of Kiln goes through the one helper."""
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import nn, Tensor
from kiln import _atomic_write

from helpers import subprocess_env

CHILD = r'''
import os, sys
import numpy as np
import kiln as ms
from kiln import _atomic_write

_atomic_write._CHUNK = 4 << 20  # 16 MiB in 4 writes: pause points inside the data
real_write_file = _atomic_write.write_file


def pause(step):
    sys.stdout.write(f"PAUSE {step}\n")
    sys.stdout.flush()
    if sys.stdin.readline().strip() != "go":
        os._exit(3)


def pausing_write_file(path, data, mode=0o666):
    return real_write_file(path, data, mode, _before_step=pause)


_atomic_write.write_file = pausing_write_file
path, first = sys.argv[1], int(sys.argv[2])
i = first
while True:
    ms.save_checkpoint({"w": np.full(1 << 22, float(i), np.float32), "step": i}, path)
    sys.stdout.write(f"SAVED {i}\n")
    sys.stdout.flush()
    i += 1
'''

KILN_TEMP = _atomic_write.TEMP_PATTERN  # .<name>.kiln-<host tag>-<pid>-<8 hex>.tmp


class Child:
    """The saving child; `points` collects the pause points of the save in progress."""

    def __init__(self, path, first, named):
        env = subprocess_env()
        env.pop("KILN_ATOMIC_WRITE_NAMED", None)
        if named:
            env["KILN_ATOMIC_WRITE_NAMED"] = "1"
        self.p = subprocess.Popen([sys.executable, "-c", CHILD, path, str(first)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.saved = []
        self.points = []

    def next_event(self):
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError(f"the child died: {self.p.stderr.read()}")
        kind, arg = line.split()
        if kind == "SAVED":
            self.saved.append(int(arg))
            self.last_points, self.points = self.points, []
        else:
            self.points.append(arg)
        return kind, arg

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        self.p.stdin.close()
        self.p.stdout.close()
        self.p.stderr.close()


def _values_of(path):
    loaded = ms.load_checkpoint(path)
    w = loaded["w"].asnumpy()
    step = int(loaded["step"].asnumpy())
    assert w.shape == (1 << 22,) and (w == step).all()
    return step


def _run_until(child, folder, name, saves, kill_at=None):
    """Lets `saves` saves complete, then kills the child at pause point `kill_at` (1-based) of the next save (or
    right after the last save when kill_at is None). At the first pause point of every save after the first it
    checks that the folder holds only the checkpoint: what a previous kill left was swept, and a writer that has
    not yet written leaves nothing. Returns the pause points the kill came after (the calls that did run)."""
    while True:
        kind, _ = child.next_event()
        if kind == "SAVED":
            if len(child.saved) == saves and kill_at is None:
                child.kill()
                return []
            continue
        if len(child.points) == 1 and child.saved:
            assert sorted(os.listdir(folder)) == [name], "a temporary file outlived the save that followed"
        if len(child.saved) == saves and len(child.points) == kill_at:
            child.kill()
            return child.points[:-1]
        child.go()


@pytest.mark.parametrize("named", [False, True], ids=["unnamed-tmpfile", "named-fallback"])
def test_killed_saves_leave_the_old_checkpoint_and_no_temp(tmp_path, named):
    folder = str(tmp_path)
    name = "net.ckpt"
    path = os.path.join(folder, name)
    # Two whole saves (the second replaces the first): the pause points of a save over an existing file.
    child = Child(path, 0, named)
    _run_until(child, folder, name, saves=2)
    points = child.last_points
    assert _values_of(path) == 1
    assert sorted(os.listdir(folder)) == [name]
    assert points.count("write") >= 4 and "fsync" in points and "rename" in points, points
    first, leftovers_seen = 10, 0
    for k in range(1, len(points) + 1):
        child = Child(path, first, named)
        done = _run_until(child, folder, name, saves=1, kill_at=k)
        moment = f"killed at pause point {k} after {done}"
        # The save in progress replaced the file only if its rename ran.
        want = child.saved[-1] + (1 if "rename" in done else 0)
        assert _values_of(path) == want, moment
        extra = sorted(set(os.listdir(folder)) - {name})
        if extra:
            # Only a Kiln temp of the dead writer, only where it can have named its data.
            assert len(extra) == 1 and KILN_TEMP.match(extra[0]), (moment, extra)
            assert int(KILN_TEMP.match(extra[0])["pid"]) == child.p.pid, (moment, extra)
            assert named or done[-1:] == ["link"], (moment, extra)
            leftovers_seen += 1
        first += 10
    if named:
        assert leftovers_seen > 0  # the fallback does leave files behind: the sweep is what removes them
    else:
        assert "link" in points, points  # the data went to an unnamed file, named only when complete
    # The next save removes what the last kill left (checked at its first pause point by _run_until).
    child = Child(path, 1000, named)
    _run_until(child, folder, name, saves=2)
    assert sorted(os.listdir(folder)) == [name] and _values_of(path) == 1001


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    try:
        os.kill(p.pid, 0)
    except ProcessLookupError:
        return p.pid
    pytest.skip("the pid of a finished child was reused at once")


def test_sweep_removes_dead_writers_temps_and_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_ATOMIC_WRITE_NAMED", "1")  # the fallback path (it must sweep too)
    path = str(tmp_path / "net.ckpt")
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        tag = _atomic_write.host_tag()
        other_tag = "0" * 8 if tag != "0" * 8 else "1" * 8
        dead = _dead_pid()
        files = {
            "dead": f".net.ckpt.kiln-{tag}-{dead}-0123abcd.tmp",
            "dead_other_file": f".model.mindir.kiln-{tag}-{dead}-89abcdef.tmp",
            "live": f".net.ckpt.kiln-{tag}-{live.pid}-0123abcd.tmp",
            "mine": f".net.ckpt.kiln-{tag}-{os.getpid()}-0123abcd.tmp",
            "other_host": f".net.ckpt.kiln-{other_tag}-{dead}-0123abcd.tmp",
            "not_kiln": ".net.ckpt.x8f2k1.tmp",
            "user": "notes.tmp",
        }
        for f in files.values():
            (tmp_path / f).write_bytes(b"partial")
        ms.save_checkpoint({"a": Tensor(np.arange(6, dtype=np.float32))}, path)
        left = set(os.listdir(tmp_path))
        assert files["dead"] not in left and files["dead_other_file"] not in left
        assert left == {"net.ckpt"} | {files[k] for k in ("live", "mine", "other_host", "not_kiln", "user")}
        np.testing.assert_array_equal(ms.load_checkpoint(path)["a"].asnumpy(), np.arange(6, dtype=np.float32))
    finally:
        live.stdin.close()
        live.wait()
    # Once its writer is gone, the next save removes the formerly live writer's file too.
    ms.save_checkpoint({"a": Tensor(np.zeros(2, np.float32))}, path)
    assert files["live"] not in os.listdir(tmp_path)


FAILING_CHILD = r'''
import os, resource, signal, sys
import numpy as np
import kiln as ms
path = sys.argv[1]
ms.save_checkpoint({"a": np.ones(4, np.float32)}, path)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, resource.RLIM_INFINITY))  # writes past 64 KiB fail: EFBIG
try:
    ms.save_checkpoint({"a": np.zeros(1 << 16, np.float32)}, path)  # 256 KiB
except OSError as e:
    print("OSError", e.errno, e.filename)
else:
    print("saved")
'''


@pytest.mark.parametrize("named", ["0", "1"], ids=["unnamed-tmpfile", "named-fallback"])
def test_failed_write_keeps_the_old_file_and_leaves_nothing(tmp_path, named):
    import errno
    path = str(tmp_path / "net.ckpt")
    env = subprocess_env()
    env["KILN_ATOMIC_WRITE_NAMED"] = named
    out = subprocess.run([sys.executable, "-c", FAILING_CHILD, path], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["OSError", str(errno.EFBIG), path]
    assert os.listdir(tmp_path) == ["net.ckpt"]
    np.testing.assert_array_equal(ms.load_checkpoint(path)["a"].asnumpy(), np.ones(4, np.float32))


def test_named_fallback_in_process(tmp_path, monkeypatch):
    """KILN_ATOMIC_WRITE_NAMED=1 (the path taken where O_TMPFILE is missing): whole files, nothing left."""
    monkeypatch.setenv("KILN_ATOMIC_WRITE_NAMED", "1")
    path = tmp_path / "a.ckpt"
    for v in (1.0, 2.0):
        ms.save_checkpoint({"a": Tensor(np.full(3, v, np.float32))}, str(path))
    assert os.listdir(tmp_path) == ["a.ckpt"]
    np.testing.assert_array_equal(ms.load_checkpoint(str(path))["a"].asnumpy(), np.full(3, 2.0, np.float32))


def test_new_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        _atomic_write.write_file(tmp_path / "x.bin", b"abc")
        _atomic_write.write_file(tmp_path / "y.bin", b"abc", mode=0o600)
        _atomic_write.write_file(tmp_path / "y.bin", b"abcd", mode=0o600)  # over an existing file
    finally:
        os.umask(old)
    assert (tmp_path / "x.bin").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "y.bin").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "y.bin").read_bytes() == b"abcd"


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x):
        return self.fc(x)


@pytest.mark.parametrize("fmt", ["MINDIR", "ONNX", "KILN", "ckpt", "safetensors", "compile_cache"])
def test_every_whole_file_writer_uses_the_shared_helper(tmp_path, monkeypatch, fmt):
    written = []
    real = _atomic_write.write_file

    def recording(path, data, *a, **k):
        written.append(os.path.basename(os.fspath(path)))
        return real(path, data, *a, **k)

    monkeypatch.setattr(_atomic_write, "write_file", recording)
    net = _Net()
    x = Tensor(np.ones((1, 3), np.float32))
    if fmt in ("ckpt", "safetensors"):
        ms.save_checkpoint(net, str(tmp_path / "net"), format=fmt)
        want = [f"net.{fmt}"]
    elif fmt == "compile_cache":
        ms.set_context(enable_compile_cache=True, compile_cache_path=str(tmp_path))
        try:
            ms.jit(lambda a: net(a) * 2)(x)
        finally:
            ms.set_context(enable_compile_cache=False, compile_cache_path=".")
            ms.context._explicit.discard("enable_compile_cache")
            ms.context._explicit.discard("compile_cache_path")
        want = [f for f in written if f.endswith(".kgc")]
        assert len(want) == 1
    else:
        ms.export(net, x, file_name=str(tmp_path / "net"), file_format=fmt)
        want = ["net." + {"MINDIR": "mindir", "ONNX": "onnx", "KILN": "kiln"}[fmt]]
    assert written == want
    for root, _, names in os.walk(tmp_path):
        assert not [n for n in names if n.endswith(".tmp") or ".tmp" in n], names


# ------------------------------------------------------------------------- symbolic links and permission bits
@pytest.fixture(params=["0", "1"], ids=["unnamed-tmpfile", "named-fallback"])
def both_paths(request, monkeypatch):
    monkeypatch.setenv("KILN_ATOMIC_WRITE_NAMED", request.param)


def _ckpt(v):
    return {"a": Tensor(np.full(3, v, np.float32))}


def _loaded(path):
    return float(ms.load_checkpoint(str(path))["a"].asnumpy()[0])


def test_saving_to_a_symlink_updates_its_target_and_keeps_the_link(tmp_path, both_paths):
    """MindSpore saves to os.path.realpath(ckpt_file_name): the link stays, its target gets the new content (the
    writer replaced the link with a regular file). Relative links and chains of links alike."""
    real = tmp_path / "store"
    real.mkdir()
    ms.save_checkpoint(_ckpt(1.0), str(real / "net.ckpt"))
    os.symlink("store/net.ckpt", tmp_path / "mid.ckpt")
    os.symlink("mid.ckpt", tmp_path / "net.ckpt")  # net.ckpt -> mid.ckpt -> store/net.ckpt
    ms.save_checkpoint(_ckpt(2.0), str(tmp_path / "net.ckpt"))
    assert os.readlink(tmp_path / "net.ckpt") == "mid.ckpt" and os.readlink(tmp_path / "mid.ckpt") == "store/net.ckpt"
    assert _loaded(real / "net.ckpt") == 2.0 and _loaded(tmp_path / "net.ckpt") == 2.0
    assert sorted(os.listdir(tmp_path)) == ["mid.ckpt", "net.ckpt", "store"] and os.listdir(real) == ["net.ckpt"]


def test_saving_to_a_dangling_symlink_creates_its_target(tmp_path, both_paths):
    (tmp_path / "store").mkdir()
    os.symlink(str(tmp_path / "store" / "new.ckpt"), tmp_path / "net.ckpt")
    ms.save_checkpoint(_ckpt(3.0), str(tmp_path / "net.ckpt"))
    assert os.path.islink(tmp_path / "net.ckpt") and _loaded(tmp_path / "store" / "new.ckpt") == 3.0


def test_export_to_a_symlink_keeps_the_link(tmp_path, both_paths):
    """Every caller of the one writer follows links: export (MINDIR here) like save_checkpoint."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "net.mindir").write_bytes(b"old")
    os.symlink("store/net.mindir", tmp_path / "net.mindir")
    ms.export(_Net(), Tensor(np.ones((1, 3), np.float32)), file_name=str(tmp_path / "net"), file_format="MINDIR")
    assert os.path.islink(tmp_path / "net.mindir")
    assert (tmp_path / "store" / "net.mindir").read_bytes() != b"old"
    ms.load(str(tmp_path / "net.mindir"))


def _mode(p):
    return os.stat(p).st_mode & 0o7777


def test_resaving_keeps_the_files_permission_bits(tmp_path, both_paths):
    """A checkpoint chmod'ed 0o600 stayed 0o600 no more after the next save (it became 0o644): the new file takes
    the old one's bits (never wider than the writer's mode); new files get mode & ~umask."""
    path = str(tmp_path / "net.ckpt")
    old_umask = os.umask(0o022)
    try:
        ms.save_checkpoint(_ckpt(1.0), path)
        assert _mode(path) == 0o644  # new: 0o666 & ~umask
        for bits in (0o600, 0o640, 0o664, 0o400):  # 0o664: wider than the umask gives, kept too
            os.chmod(path, bits)
            ms.save_checkpoint(_ckpt(bits), path)
            assert _mode(path) == bits, (oct(bits), oct(_mode(path)))
            assert _loaded(path) == bits
        # a writer asking for owner-only (the compile cache) never widens: 0o666 -> 0o600
        _atomic_write.write_file(tmp_path / "e.kgc", b"x")
        os.chmod(tmp_path / "e.kgc", 0o666)
        _atomic_write.write_file(tmp_path / "e.kgc", b"y", mode=0o600)
        assert _mode(tmp_path / "e.kgc") == 0o600
    finally:
        os.umask(old_umask)
    assert sorted(os.listdir(tmp_path)) == ["e.kgc", "net.ckpt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another group needs root (or membership)")
def test_resaving_keeps_the_files_group(tmp_path, both_paths):
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(_ckpt(1.0), path)
    os.chown(path, -1, 65534)
    os.chmod(path, 0o640)
    ms.save_checkpoint(_ckpt(2.0), path)
    st = os.stat(path)
    assert st.st_gid == 65534 and st.st_mode & 0o777 == 0o640 and _loaded(path) == 2.0
