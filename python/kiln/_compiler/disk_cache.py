"""The compile cache on disk (`set_context(enable_compile_cache=True, compile_cache_path=...)`, or MindSpore's
environment variables MS_COMPILER_CACHE_ENABLE=1 / MS_COMPILER_CACHE_PATH). Design: docs/compile_cache.md.

One file per (function, signature, configuration) in `<path>/rank_<RANK_ID>/graph_cache/`, named by a SHA-256 of
the *key*: the function's identity (module file, qualified name, class of the bound instance), the argument
structure with non-tensor values, input shapes/dtypes, device, global seed, jit's key_extra, and the configuration
fingerprint: every Cell the function reaches and every value its code can read — functions by code, arrays by
content, attributes, closures, globals (kiln/_compiler/cache_names.py; a value it cannot describe keeps the graph in
memory). Inside, a header that must also
match before the graph is used: Kiln's fingerprint (version + the _core build + the package's Python files) and the
SHA-256 of every source file whose Python code ran while tracing (outside Kiln and the standard library). Then the
optimized graph (C++ serializer, kiln/graph_io.h) with each capture named, the Python structure of the outputs, the
pass log, the random streams the graph's random ops use, and the paths of the Cells called while tracing (their
training flags key the in-memory cache). A SHA-256 of all of it closes the file.

Loading never runs code from the file (JSON + the validating C++ reader). A damaged file — whatever the damage —
warns and is rewritten; a stale one (sources, Kiln or a capture changed) is silently recompiled and rewritten; an
unwritable directory warns once and the graph stays in memory. Writes go through Kiln's atomic writer
(_atomic_write.py): concurrent processes writing one entry each leave a complete file, a killed writer no temporary
file.

The SHA-256 checks integrity, not authenticity: whoever can write the cache folders can change what a program
runs. So Kiln creates them owner-only (0o700) and uses none that another user owns or that its group or others can
write (`check_folders`: the graphs stay in memory, with a warning saying how to fix it); nor a cache file that
another user owns or that its group or others can write (`check_file`, on the opened file: a warning, the graph is
compiled again and the file replaced by an owner-only one). See docs/compile_cache.md,
"Who can change the results"."""
import hashlib
import json
import os
import stat
import struct
import sys
import sysconfig
import threading
import warnings

from .. import _engine
from .. import context
from ..common import seed as _seed
from .. import _atomic_write
from .cache_names import Walk, Unstorable, code_digest as _code_digest  # Unstorable: re-exported

FORMAT = 1
_MAGIC = b"KILNCC01"
_lock = threading.Lock()
_file_hashes = {}  # path -> ((mtime_ns, size), sha256): re-hashed when the file changes
_kiln_fp = [None]
_warned_dirs = set()
_KILN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep

stats = {"loads": 0, "writes": 0, "misses": 0}  # per process: graphs loaded / written / looked up and not usable


def _count(what):
    with _lock:
        stats[what] += 1


# ---------------------------------------------------------------------------------------------------- settings
def cache_dir():
    """The directory of graph files when the cache is on, else None. set_context(enable_compile_cache=...) wins over
    MS_COMPILER_CACHE_ENABLE; an explicit compile_cache_path over MS_COMPILER_CACHE_PATH (MindSpore's precedence)."""
    explicit = context._explicit
    on = context._context["enable_compile_cache"] if "enable_compile_cache" in explicit else \
        os.environ.get("MS_COMPILER_CACHE_ENABLE", "0").strip() == "1"
    if not on:
        return None
    base = context._context["compile_cache_path"] if "compile_cache_path" in explicit else \
        os.environ.get("MS_COMPILER_CACHE_PATH") or context._context["compile_cache_path"]
    rank = os.environ.get("RANK_ID", "0").strip() or "0"
    return os.path.join(os.path.abspath(base), f"rank_{rank}", "graph_cache")


def _folders(directory):
    """The folders of the cache that must be private: compile_cache_path, its rank_<id>, the graph_cache in it."""
    rank = os.path.dirname(directory)
    return [os.path.dirname(rank), rank, directory]


def _owner(uid):
    try:
        import pwd
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def check_folders(directory, create):
    """Makes sure nobody but this user can change the cache in `directory` (cache_dir()): with create=True the
    missing folders (compile_cache_path and the folders above it included) are created with mode 0o700; each of
    compile_cache_path, rank_<id> and graph_cache that exists must be a folder owned by this process's user and not
    writable by its group or by others. Raises Unstorable naming the folder, its mode and owner and the fix (the
    graph then stays in memory); OSError when a folder cannot be created."""
    if os.name != "posix":
        return
    if create:
        missing = []
        p = directory
        while not os.path.exists(p):
            missing.append(p)
            parent = os.path.dirname(p)
            if parent == p:
                break
            p = parent
        for p in reversed(missing):
            try:
                os.mkdir(p, 0o700)
            except FileExistsError:
                pass
    me = os.geteuid()
    for p in _folders(directory):
        try:
            st = os.stat(p)
        except OSError:  # missing, or a file in the way: nothing to read, and writing reports it
            continue
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISDIR(st.st_mode):
            continue  # (writing into it fails: "cannot write" below)
        if st.st_uid != me:
            raise Unstorable(f"the compile cache folder {p} (mode {mode:#o}) is owned by {_owner(st.st_uid)}, not "
                             f"by this process's user {_owner(me)}: whoever can write the cache folder can change "
                             "the graphs this program runs, so Kiln does not use it. Fix: set compile_cache_path "
                             "(or MS_COMPILER_CACHE_PATH) to a folder of your own")
        if mode & 0o022:
            who = {0o022: "its group and by others", 0o020: "its group", 0o002: "others"}[mode & 0o022]
            raise Unstorable(f"the compile cache folder {p} (mode {mode:#o}, owner {_owner(st.st_uid)}) is writable "
                             f"by {who}: whoever can write the cache folder can change the graphs this program "
                             f"runs, so Kiln does not use it. Fix: chmod go-w {p} (or use a folder only you can "
                             "write)")


def _sha_file(path):
    st = os.stat(path)
    stamp = (st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _file_hashes.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    with _lock:
        if len(_file_hashes) > 4096:
            _file_hashes.clear()
        _file_hashes[path] = (stamp, h.hexdigest())
    return h.hexdigest()


def kiln_fingerprint():
    """Kiln's identity for the cache: its version and the size and modification time (ns) of the _core extension
    and of every Python file of the kiln package, hashed (a rebuild or an edit changes them; stat-ing ~200 files takes
    about a millisecond, where hashing the contents took ~100 ms per process). Memoized per process except the
    version, which is read on every call."""
    if _kiln_fp[0] is None:
        h = hashlib.sha256(f"format {FORMAT}".encode())
        files = [os.path.abspath(_engine.core_file)]
        for root, dirs, names in os.walk(_KILN_DIR):
            dirs.sort()
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".py")]
        for f in files:
            st = os.stat(f)
            h.update(f"{os.path.relpath(f, _KILN_DIR)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _kiln_fp[0] = h.hexdigest()
    import kiln
    return _kiln_fp[0] + ":" + str(getattr(kiln, "__version__", "?"))


# ------------------------------------------------------------------------------------------- sources while tracing
class SourceRecorder:
    """Context manager: records the file of every Python function that runs on this thread (sys.setprofile).
    `files` is None when recording was not possible (another profiler is active)."""

    def __enter__(self):
        self.files = set()
        self._prev = sys.getprofile()
        if self._prev is not None:
            self.files = None
            return self
        files = self.files

        def hook(frame, event, arg):
            if event == "call":
                files.add(frame.f_code.co_filename)
        sys.setprofile(hook)
        return self

    def __exit__(self, *exc):
        if self.files is not None:
            sys.setprofile(None)
        return False


def _source_hashes(files):
    out = []
    for f in sorted(files):
        if f.startswith("<frozen"):
            continue
        af = os.path.abspath(f)
        if af.startswith(_KILN_DIR) or af.startswith(_STDLIB):
            continue
        if f.startswith("<") or not os.path.isfile(af):
            raise Unstorable(f"code from {f} ran while tracing and has no source file to check")
        out.append([af, _sha_file(af)])
    return out


# --------------------------------------------------------------------------------------------------- encoding
def encode(obj):
    """JSON form of a jit argument/output structure: _Leaf, tuples, lists, dicts, None/bool/int/float/str (Unstorable
    for anything else: such a signature or output stays in memory)."""
    from .structure import _Leaf, _Same
    from ..common import dtype as mstype
    if isinstance(obj, _Leaf):
        return {"L": obj.index}
    if isinstance(obj, _Same):  # a returned global list/dict: stored as its value (a new process has a new object)
        return encode(obj.obj)
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return {"I": str(obj)}
    if isinstance(obj, float):
        return {"F": repr(obj)}
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return {"T": [encode(v) for v in obj]}
    if isinstance(obj, list):
        return {"A": [encode(v) for v in obj]}
    if isinstance(obj, dict):
        return {"D": [[encode(k), encode(v)] for k, v in obj.items()]}
    if isinstance(obj, mstype.DType):
        return {"dtype": str(obj)}
    raise Unstorable(f"a value of type {type(obj).__name__} in the arguments or outputs")


def decode(obj):
    from .structure import _Leaf
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ValueError(f"bad structure entry {obj!r:.80}")
    (tag, v), = obj.items()
    if tag == "L":
        if not isinstance(v, int) or v < 0:
            raise ValueError("bad output index")
        return _Leaf(v)
    if tag == "I":
        return int(v)
    if tag == "F":
        return float(v)
    if tag == "T":
        return tuple(decode(x) for x in v)
    if tag == "A":
        return [decode(x) for x in v]
    if tag == "D":
        return {decode(k): decode(x) for k, x in v}
    if tag == "dtype":
        from ..common import dtype as mstype
        for name in dir(mstype.DType):
            d = getattr(mstype.DType, name)
            if isinstance(d, mstype.DType) and str(d) == v:
                return d
        raise ValueError(f"unknown dtype {v!r}")
    raise ValueError(f"unknown structure tag {tag!r}")


def _leaves(struct, out):
    from .structure import _Leaf
    if isinstance(struct, _Leaf):
        out.append(struct.index)
    elif isinstance(struct, (tuple, list)):
        for v in struct:
            _leaves(v, out)
    elif isinstance(struct, dict):
        for v in struct.values():
            _leaves(v, out)
    return out


# ------------------------------------------------------------------------------------------------------- keys
class Lookup:
    """The disk key of one call: where its file is, and what the walk found (reused by save)."""

    def __init__(self, jf, struct, tensors, key_extra):
        self.dir = cache_dir()
        check_folders(self.dir, create=False)  # before anything is read from them
        fn = getattr(jf.fn, "__func__", jf.fn)
        code = getattr(fn, "__code__", None)
        if code is None:  # a callable object (`jit(net)`): identified by its class's __call__/construct
            cls = type(fn)
            meth = getattr(cls, "construct", None) or getattr(cls, "__call__", None)  # noqa: B004 (the method itself)
            code = getattr(getattr(meth, "fn", meth), "__code__", None)
            fn = cls
        if code is None:
            raise Unstorable(f"{jf.name} is not Python code")
        target = jf._target()
        owner = "" if target is None else f"{type(target).__module__}.{type(target).__qualname__}"
        self.walk = Walk(jf)
        key = {
            "format": FORMAT,
            # The code object itself (bytecode, constants, names, first line) tells apart functions that
            # share a qualified name, e.g. two lambdas of one scope.
            "fn": [os.path.abspath(code.co_filename), getattr(fn, "__qualname__", jf.name), owner, jf.name,
                   _code_digest(code)],
            "args": encode(struct),
            "tensors": [[list(t.shape), str(t.dtype)] for t in tensors],
            "device": context._context["device_target"],
            "seed": _seed._global_seed,
            "extra": None if key_extra is None else encode(key_extra),
            # The configuration digest: repr of nested lists of strings/numbers is deterministic and ~10x faster to
            # build than JSON for a large network.
            "config": hashlib.sha256(repr(self.walk.fingerprint()).encode()).hexdigest(),
        }
        self.key_json = json.dumps(key, sort_keys=True)
        digest = hashlib.sha256(self.key_json.encode()).hexdigest()[:40]
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in jf.name)[:60]
        self.path = os.path.join(self.dir, f"{safe}-{digest}.kgc")


# ----------------------------------------------------------------------------------------------------- loading
def _warn(msg):
    warnings.warn("Kiln compile cache: " + msg, RuntimeWarning, stacklevel=4)


# What reading a damaged file can raise anywhere in load: bad UTF-8 (UnicodeDecodeError is a ValueError), bad JSON
# or structure, bad lengths (struct.error), huge counts or nesting, the C++ reader's RuntimeError. Each makes the
# file a miss with a warning, never an error of the program (docs/decisions/damaged-files.md).
_DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, RecursionError, MemoryError,
           RuntimeError, OSError, struct.error)


class _Untrusted(Exception):
    """A cache file someone else could have written (another owner, or writable by its group or others)."""


def check_file(fd, path):
    """Raises _Untrusted (naming `path`, its mode and owner and the fix) when the open file `fd` is not owned by
    this process's user or is writable by its group or by others: whoever can write it can change the graph this
    program runs, re-sealing the SHA-256. Checked on the opened file (fstat), so that the file read is the file
    checked."""
    if os.name != "posix":
        return
    st = os.fstat(fd)
    mode = stat.S_IMODE(st.st_mode)
    me = os.geteuid()
    if st.st_uid != me:
        raise _Untrusted(f"the compile cache file {path} (mode {mode:#o}) is owned by {_owner(st.st_uid)}, not by "
                         f"this process's user {_owner(me)}")
    if mode & 0o022:
        who = {0o022: "its group and by others", 0o020: "its group", 0o002: "others"}[mode & 0o022]
        raise _Untrusted(f"the compile cache file {path} (mode {mode:#o}, owner {_owner(st.st_uid)}) is writable "
                         f"by {who}")


def _read(path):
    """(header dict, graph bytes) of a file, or raises ValueError describing the damage (_Untrusted for a file
    others could have written: check_file)."""
    with open(path, "rb") as f:
        check_file(f.fileno(), path)
        data = f.read()
    if len(data) < len(_MAGIC) + 8 + 32 or data[:len(_MAGIC)] != _MAGIC:
        raise ValueError("not a Kiln compile-cache file (bad magic or too short)")
    view = memoryview(data)
    body = view[:-32]
    if hashlib.sha256(body).digest() != data[-32:]:
        raise ValueError("checksum mismatch (truncated or damaged)")
    pos = len(_MAGIC)
    (hlen,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    if hlen > len(body) - pos:
        raise ValueError("header length exceeds the file")
    header = json.loads(bytes(view[pos:pos + hlen]).decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    return header, bytes(body[pos + hlen:])


def load(lookup, recorded_out):
    """The CompiledGraph parts stored for `lookup`: (graph, out_struct, pass_log, input_writes), appending the Cells called while
    tracing to `recorded_out`; None when there is no usable file (a damaged one warns)."""
    path = lookup.path
    if not os.path.exists(path):
        _count("misses")
        return None
    try:
        header, graph_bytes = _read(path)
        if header.get("format") != FORMAT:
            raise ValueError(f"format {header.get('format')!r}")
        if header.get("key") != lookup.key_json:
            raise ValueError("the key inside does not match its name")
        out_struct = decode(header["out_struct"])
        pass_log = [str(x) for x in header["pass_log"]]
        in_writes = tuple(int(i) for i in header.get("input_writes", ()))
        streams = [(int(s), str(op), int(op_seed)) for s, op, op_seed in header["streams"]]
        recorded_paths = [str(p) for p in header["recorded"]]
        sources = [(str(p), str(h)) for p, h in header["sources"]]
        graph, names = _engine.deserialize_graph(graph_bytes)
    except _Untrusted as e:  # refused like a folder others can write; the rewrite gives an owner-only file
        _warn(f"{e}: whoever can write a cache file can change the graphs this program runs, so Kiln does not use "
              "it; compiling again and replacing it with a file only you can write.")
        _count("misses")
        return None
    except _DAMAGE as e:
        _warn(f"ignoring damaged cache file {path} ({type(e).__name__}: {e}); compiling again and rewriting it.")
        _count("misses")
        return None
    # Stale (not damaged): Kiln, a source file or a capture changed. Compile again; the new graph replaces the file.
    try:
        if header.get("kiln") != kiln_fingerprint():
            raise LookupError
        for p, h in sources:
            if not os.path.isfile(p) or _sha_file(p) != h:
                raise LookupError
        by_name = lookup.walk.tensors_by_name()
        caps = []
        for n in names:
            t = by_name.get(n)
            if t is None:
                raise LookupError
            caps.append(t)
        try:
            graph.bind_captures(caps)
        except ValueError:  # a capture's shape or dtype changed (e.g. a Cell's Tensor attribute): stale
            raise LookupError from None
        cells = [lookup.walk.all_cells.get(p) for p in recorded_paths]
        if any(c is None for c in cells):
            raise LookupError
        leaves = _leaves(out_struct, [])
        if sorted(leaves) != list(range(graph.num_outputs)):
            raise ValueError("the output structure does not match the graph's outputs")
        if in_writes and (any(i < 0 for i in in_writes) or not _writes_struct(out_struct, len(in_writes))):
            raise ValueError("the inputs it writes do not match the graph")
    except LookupError:
        _count("misses")
        return None
    except _DAMAGE as e:
        _warn(f"ignoring cache file {path} ({type(e).__name__}: {e}); compiling again and rewriting it.")
        _count("misses")
        return None
    if streams:
        graph.remap_random_streams([s for s, _, _ in streams], [_seed._stream_for((op, sd)) for _, op, sd in streams])
    recorded_out += cells
    _count("loads")
    return graph, out_struct, pass_log, in_writes


def _writes_struct(out_struct, n):
    """True when out_struct has the form of a graph that writes n inputs: (result, (), (n input values))."""
    return (isinstance(out_struct, tuple) and len(out_struct) == 3 and out_struct[1] == ()
            and isinstance(out_struct[2], tuple) and len(out_struct[2]) == n)


# ------------------------------------------------------------------------------------------------------ saving
def save(lookup, graph, out_struct, pass_log, recorded, source_files, input_writes=()):
    """Writes the entry (atomically). `input_writes`: the indices of the inputs the graph writes in place (their
    final values are the last outputs, see capture.py's Note [writes into inputs]). Raises Unstorable when the graph
    cannot be stored faithfully; warns (once per directory) and returns when the directory cannot be written."""
    if source_files is None:
        raise Unstorable("another profiler was active while tracing (sources could not be recorded)")
    sources = _source_hashes(source_files)
    names_of = lookup.walk.tensor_names()
    names = []
    for t in graph.capture_tensors():
        n = names_of.get(t._id)
        if n is None:
            raise Unstorable(f"it reads a {t.dtype}{list(t.shape)} tensor that is neither a Parameter nor a Tensor "
                             "attribute of a Cell the function reaches (e.g. a global Tensor)")
        names.append(n)
    stream_ids = graph.random_streams()
    streams = []
    if stream_ids:
        if _seed._global_seed is None:
            raise Unstorable("it draws random numbers without a global seed (set_seed)")
        keys = _seed._stream_keys()
        for s in sorted(set(stream_ids)):
            if s not in keys:
                raise Unstorable(f"random stream {s} is not one of this process's streams")
            streams.append([s, keys[s][0], keys[s][1]])
    recorded_paths = []
    for c in recorded:
        p = lookup.walk.cell_paths.get(id(c))
        if p is None:
            raise Unstorable(f"the Cell {type(c).__name__} called while tracing is not reachable from the function")
        recorded_paths.append(p)
    header = {
        "format": FORMAT, "key": lookup.key_json, "kiln": kiln_fingerprint(), "sources": sources,
        "out_struct": encode(out_struct), "pass_log": list(pass_log), "streams": streams,
        "recorded": recorded_paths, "input_writes": [int(i) for i in input_writes],
    }
    try:
        graph_bytes = graph.serialize(names)
    except RuntimeError as e:
        raise Unstorable(str(e)) from None
    hb = json.dumps(header).encode("utf-8")
    body = _MAGIC + struct.pack("<Q", len(hb)) + hb + graph_bytes
    data = body + hashlib.sha256(body).digest()
    try:
        check_folders(lookup.dir, create=True)  # Unstorable for a folder others can write
        # Owner-only like its folder; atomic; a killed writer leaves nothing (_atomic_write.py).
        _atomic_write.write_file(lookup.path, data, mode=0o600)
    except OSError as e:
        with _lock:
            first = lookup.dir not in _warned_dirs
            _warned_dirs.add(lookup.dir)
        if first:
            _warn(f"cannot write to {lookup.dir} ({e.strerror or e}); compiled graphs stay in memory.")
        return
    _count("writes")

