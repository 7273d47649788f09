"""Who can change the compile cache (docs/compile_cache.md, "Who can change the results"): the folders Kiln creates
are owner-only (0o700, files 0o600); a cache folder its group or others can write, or that another user owns, is
refused — nothing is read from it or written to it, the graph stays in memory, and a RuntimeWarning names the
folder, its mode and owner and the fix (chmod go-w). A folder of the user's with mode 0o755 is used."""
import glob
import os
import pwd
import stat
import warnings

import numpy as np
import pytest

import kiln as ms
from kiln import context, nn, Tensor


@pytest.fixture
def cache_at():
    """cache_at(path): the compile cache on at `path`; switched off (and no longer counted as set) after the test."""
    def on(path):
        ms.set_context(enable_compile_cache=True, compile_cache_path=str(path))
    yield on
    ms.set_context(enable_compile_cache=False, compile_cache_path=".")
    context._explicit.discard("enable_compile_cache")
    context._explicit.discard("compile_cache_path")


def _make_f():
    """The same jit function built afresh (what a new process sees)."""
    ms.set_seed(2)
    net = nn.Dense(3, 2)

    @ms.jit
    def f(x):
        return net(x) + 1

    return f


X = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


def _mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def _run(expect_warning=None):
    f = _make_f()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(X).asnumpy()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    if expect_warning is None:
        assert messages == []
    else:
        assert len(messages) == 1 and expect_warning in messages[0], messages
    return f, out, messages


def test_fresh_folders_are_created_owner_only(tmp_path, cache_at):
    base = tmp_path / "made" / "by" / "kiln"
    cache_at(base)
    f, want, _ = _run()
    assert f.trace_count == 1 and f.disk_skipped is None
    for p in (tmp_path / "made", tmp_path / "made" / "by", base, base / "rank_0", base / "rank_0" / "graph_cache"):
        assert _mode(p) == 0o700, (p, oct(_mode(p)))
    (entry,) = glob.glob(str(base / "rank_0" / "graph_cache" / "*.kgc"))
    assert _mode(entry) == 0o600
    g, got, _ = _run()
    assert g.trace_count == 0 and g.disk_loads == 1
    np.testing.assert_array_equal(got, want)


def test_folder_writable_by_others_is_refused(tmp_path, cache_at):
    base = tmp_path / "shared"
    base.mkdir()
    os.chmod(base, 0o777)
    cache_at(base)
    me = pwd.getpwuid(os.geteuid()).pw_name
    f, out, (msg,) = _run(expect_warning=f"the compile cache folder {base} (mode 0o777, owner {me}")
    assert "writable by its group and by others" in msg and f"chmod go-w {base}" in msg
    assert f.disk_skipped is not None and "chmod go-w" in f.disk_skipped
    assert os.listdir(base) == []  # nothing written
    ms.set_context(enable_compile_cache=False)
    np.testing.assert_array_equal(out, _make_f()(X).asnumpy())  # the same result as without the cache


def test_entry_in_a_folder_that_became_writable_is_not_loaded(tmp_path, cache_at):
    base = tmp_path / "c"
    cache_at(base)
    _, want, _ = _run()
    (entry,) = glob.glob(str(base / "rank_0" / "graph_cache" / "*.kgc"))
    os.chmod(base / "rank_0", 0o770)  # now its group could have replaced the entry
    f, out, _ = _run(expect_warning=f"the compile cache folder {base / 'rank_0'} (mode 0o770")
    assert f.trace_count == 1 and f.disk_loads == 0  # compiled, not loaded
    np.testing.assert_array_equal(out, want)
    os.chmod(base / "rank_0", 0o755)  # the fix the message gives (chmod go-w)
    g, _, _ = _run()
    assert g.trace_count == 0 and g.disk_loads == 1 and os.path.isfile(entry)


def test_existing_0o755_folder_of_the_user_is_used(tmp_path, cache_at):
    base = tmp_path / "mine"
    base.mkdir()
    os.chmod(base, 0o755)
    cache_at(base)
    f, _, _ = _run()
    assert f.disk_skipped is None and _mode(base) == 0o755  # left as it is
    assert _mode(base / "rank_0") == 0o700
    g, _, _ = _run()
    assert g.disk_loads == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_folder_owned_by_another_user_is_refused(tmp_path, cache_at):
    base = tmp_path / "theirs"
    base.mkdir(mode=0o755)
    os.chown(base, 65534, 65534)
    cache_at(base)
    f, _, (msg,) = _run(expect_warning=f"the compile cache folder {base} (mode 0o755) is owned by")
    assert "uid 65534" in msg and "a folder of your own" in msg
    assert os.listdir(base) == []


# A cache file (not only its folders): the tester made an entry 0o666, changed a constant in it, re-sealed its
# SHA-256, and the next run printed the forged result. A file another user owns, or that its group or others can
# write, is refused on the opened file (fstat): a warning, the graph compiles again and replaces the file.
def _entry(base):
    (entry,) = glob.glob(str(base / "rank_0" / "graph_cache" / "*.kgc"))
    return entry


@pytest.mark.parametrize("bits, who", [(0o666, "its group and by others"), (0o620, "its group"), (0o602, "others")])
def test_cache_file_writable_by_others_is_refused(tmp_path, cache_at, bits, who):
    base = tmp_path / "c"
    cache_at(base)
    _, want, _ = _run()
    entry = _entry(base)
    os.chmod(entry, bits)
    f, out, (msg,) = _run(expect_warning=f"the compile cache file {entry} (mode {bits:#o}")
    assert f"is writable by {who}" in msg and "compiling again" in msg
    assert f.trace_count == 1 and f.disk_loads == 0  # compiled, not loaded
    np.testing.assert_array_equal(out, want)
    assert _mode(entry) == 0o600  # rewritten owner-only: the next run uses it
    g, _, _ = _run()
    assert g.trace_count == 0 and g.disk_loads == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user owns needs root")
def test_cache_file_owned_by_another_user_is_refused(tmp_path, cache_at):
    base = tmp_path / "c"
    cache_at(base)
    _, want, _ = _run()
    entry = _entry(base)
    os.chown(entry, 65534, 65534)  # mode stays 0o600: only its owner (not us) can write it
    f, out, (msg,) = _run(expect_warning=f"the compile cache file {entry} (mode 0o600) is owned by")
    assert "uid 65534" in msg
    assert f.trace_count == 1 and f.disk_loads == 0
    np.testing.assert_array_equal(out, want)
    assert os.stat(entry).st_uid == os.geteuid() and _mode(entry) == 0o600  # replaced by our own file
    g, _, _ = _run()
    assert g.disk_loads == 1


def test_cache_file_is_checked_on_the_opened_file(tmp_path, cache_at, monkeypatch):
    """No check-then-open race: the ownership and mode checked are those of the file descriptor read from."""
    from kiln._compiler import disk_cache as _disk_cache
    base = tmp_path / "c"
    cache_at(base)
    _run()
    seen = []
    real = _disk_cache.check_file

    def recording(fd, path):
        seen.append((os.fstat(fd).st_ino, path))
        return real(fd, path)

    monkeypatch.setattr(_disk_cache, "check_file", recording)
    g, _, _ = _run()
    entry = _entry(base)
    assert g.disk_loads == 1 and seen == [(os.stat(entry).st_ino, entry)]
