"""Runs MindSpore's beginner tutorials, extracted at run time from a checkout of mindspore-ai/docs, under Kiln.

For each tutorial this tool reads the Markdown page from the docs checkout (a work tree, or a bare repository read
with `git show REV:PATH`), takes its ```python code blocks in order, drops notebook shell lines (`!pip ...`,
`%matplotlib ...`), and writes them as one script. The one change made to the tutorial code is the dataset download
step: the `from download import download` import and the `download(url, ...)` call of MNIST_Data.zip are commented
out and the call's result is bound to the directory it would have extracted into; that directory holds local
MNIST-format idx files (MNIST_Data/train, MNIST_Data/test) prepared before the run. The dataset tutorials download
other files; each is replaced the same way (only these, and only where the call's URL and destination are string constants), by local
files of the same layout written into the destination before the run:
  cifar-10-binary.tar.gz -> DEST/cifar-10-batches-bin/: data_batch_1..5.bin, test_batch.bin (10,000 records each,
    CIFAR-10's binary format: a label byte + 3,072 channel-major image bytes; MindSpore reads exactly 10,000 per
    file), batches.meta.txt, readme.html. Images and labels are random (NumPy default_rng(0)), not CIFAR's.
  cifar-10-python.tar.gz -> DEST/cifar-10-batches-py/: the same records as pickled dicts (b"data", b"labels",
    b"filenames", b"batch_label"), batches.meta, readme.html.
  banana.jpg -> the JPEG file DEST: a 400x300 gradient with an ellipse (Pillow).
  84-121123-0000.wav -> the WAV file DEST: 2 s of 16 kHz mono 16-bit PCM (a 220 Hz + 1,760 Hz chord).
Every other line is the tutorial's, unchanged. Notebook pages (.ipynb: record, optimize) are read from their code
cells in order; a failure's place is given as 'cell N:L'. Each script runs in a fresh process, in its own temporary
directory, with a timeout, under `python -m kiln.compat` (or, with --mindspore, plain `python` with a real MindSpore), and a table shows per
tutorial: ok or the line (script and Markdown) and exception it failed with, and the seconds it took.

    python tools/run_tutorials.py --docs DOCS [--only quick_start,train] [--timeout 600] [--data MNIST_DIR]
                                  [--python EXE] [--mindspore] [--keep DIR] [--json FILE] [--pythonpath DIR]
    python tools/run_tutorials.py --docs DOCS --list            # the tutorials and where they come from
    python tools/run_tutorials.py --docs DOCS --show train      # the script that would run

The tutorial code is never stored in this repository: it is read from DOCS each time. Exit status 0 when every
selected tutorial ran to the end, 1 otherwise, 2 for a usage error (no such checkout, unknown tutorial).

Which pages (docs tree of mindspore-ai/docs; DOCS's default revision is its work tree, or HEAD for a bare repo):
  quick_start, dataset, model, train, save_load, mixed_precision: tutorials/source_en/beginner/<name>.md at the default revision.
  transforms: tutorials/source_en/beginner/transforms.md was folded into dataset.md on master in September 2024
    (commit 6328082156); the page is read from release branch r2.3.1, the last one that has it.
  dataset_{augment,sampler,python_objects,eager,cache}: tutorials/source_en/dataset/<name>.md;
    dataset_{record,optimize}: tutorials/source_en/dataset/<name>.ipynb; debug_{profiler,dump}:
    tutorials/source_en/debug/<name>.md (pages of fragments: they use names the page never defines).
  callback, metric: docs/mindspore/source_en/model_train/train_process/model/{callback,metric}.md ("model/callback",
    "model/metric") were removed from master in March 2025 (commit 17ece3a40e); read from r2.5.0, the last release
    branch that has them. A pinned revision is looked up as REV, then origin/REV (a clone's remote branch).
"""
import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# name -> (path in the docs repository, pinned revision or None for the default revision, why)
TUTORIALS = {
    "quick_start": ("tutorials/source_en/beginner/quick_start.md", None, "beginner: quick start"),
    "dataset": ("tutorials/source_en/beginner/dataset.md", None, "beginner: data loading and processing"),
    "transforms": ("tutorials/source_en/beginner/transforms.md", "r2.3.1",
                   "beginner: transforms (on master folded into dataset.md; r2.3.1 is the last branch with it)"),
    "model": ("tutorials/source_en/beginner/model.md", None, "beginner: building a network"),
    "train": ("tutorials/source_en/beginner/train.md", None, "beginner: training"),
    "save_load": ("tutorials/source_en/beginner/save_load.md", None, "beginner: save and load"),
    "mixed_precision": ("tutorials/source_en/beginner/mixed_precision.md", None,
                        "beginner: automatic mixed precision (kiln.amp, issue 12)"),
    "callback": ("docs/mindspore/source_en/model_train/train_process/model/callback.md", "r2.5.0",
                 "model/callback (removed from master in 2025; r2.5.0 is the last branch with it)"),
    "metric": ("docs/mindspore/source_en/model_train/train_process/model/metric.md", "r2.5.0",
               "model/metric (removed from master in 2025; r2.5.0 is the last branch with it)"),
    "autograd": ("tutorials/source_en/beginner/autograd.md", None, "beginner: automatic differentiation"),
    "hook": ("tutorials/source_en/custom_program/hook_program.md", None,
             "custom_program: hooks (HookBackward, Cell forward/backward (pre-)hooks)"),
    "initializer": ("docs/mindspore/source_en/model_train/custom_program/initializer.md", "r2.5.0",
                    "custom_program: parameter initialization (not on master; r2.5.0 is the last branch with it)"),
    "optimizer": ("docs/mindspore/source_en/model_train/custom_program/optimizer.md", "r2.5.0",
                  "custom_program: optimizers (not on master; r2.5.0 is the last branch with it)"),
    "layer": ("docs/mindspore/source_en/model_train/custom_program/network_custom.md", "r2.5.0",
              "custom_program: custom layers/cells (not on master; r2.5.0 is the last branch with it)"),
    "dataset_augment": ("tutorials/source_en/dataset/augment.md", None, "dataset: automatic augmentation"),
    "dataset_sampler": ("tutorials/source_en/dataset/sampler.md", None, "dataset: data loading and sampling"),
    "dataset_python_objects": ("tutorials/source_en/dataset/python_objects.md", None,
                               "dataset: Python objects (dicts) in the pipeline"),
    "dataset_eager": ("tutorials/source_en/dataset/eager.md", None, "dataset: lightweight data processing (eager)"),
    "dataset_record": ("tutorials/source_en/dataset/record.ipynb", None, "dataset: MindRecord format conversion"),
    "dataset_optimize": ("tutorials/source_en/dataset/optimize.ipynb", None, "dataset: data processing performance"),
    "dataset_cache": ("tutorials/source_en/dataset/cache.md", None, "dataset: single-node data cache"),
    "debug_profiler": ("tutorials/source_en/debug/profiler.md", None, "debug: profiler (page of fragments)"),
    "debug_dump": ("tutorials/source_en/debug/dump.md", None, "debug: dump (page of fragments)"),
}

MNIST_URL_SUFFIX = "MNIST_Data.zip"
# URL suffix -> the words of the replacement comment. Only downloads of these files may be replaced; each one's
# destination is filled with local files of the same layout before the run (see prepare_download).
DOWNLOADS = {
    MNIST_URL_SUFFIX: "MNIST",
    "cifar-10-binary.tar.gz": "CIFAR-10 binary",
    "cifar-10-python.tar.gz": "CIFAR-10 python",
    "banana.jpg": "JPEG",
    "84-121123-0000.wav": "WAV",
}
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
_PY_LANGS = {"python", "py", "python3", "ipython", "ipython3"}


class UsageError(Exception):
    """A bad command line or docs checkout (exit status 2)."""


# ---------------------------------------------------------------------------------------------------------------
# Reading pages from the docs checkout

class DocsSource:
    """A mindspore-ai/docs checkout: a work tree (with or without .git) or a bare git repository."""

    def __init__(self, path, rev=None):
        if not os.path.isdir(path):
            raise UsageError(f"--docs {path!r}: no such directory")
        self.path = os.path.abspath(path)
        self.rev = rev
        self.is_git = self._git("rev-parse", "--git-dir") is not None
        bare = self._git("rev-parse", "--is-bare-repository")
        self.is_bare = bare is not None and bare.strip() == "true"
        if not self.is_git and not os.path.isdir(os.path.join(self.path, "tutorials")):
            raise UsageError(f"--docs {path!r} is neither a git repository nor a docs work tree (no tutorials/)")
        if rev is not None and not self.is_git:
            raise UsageError(f"--rev {rev!r} needs a git checkout, but {path!r} is not one")

    def _git(self, *args):
        try:
            out = subprocess.run(["git", "-C", self.path, *args], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode != 0:
            return None
        return out.stdout.decode("utf-8", "replace")

    def read(self, relpath, pinned=None):
        """(text, where) of a page; where is 'REV:PATH' or the file path. Raises FileNotFoundError."""
        if pinned is None and self.rev is None and not self.is_bare:
            full = os.path.join(self.path, relpath)
            if os.path.isfile(full):
                with open(full, encoding="utf-8") as f:
                    return f.read(), relpath
        if not self.is_git:
            raise FileNotFoundError(f"{relpath} is not in {self.path}")
        revs = [pinned, f"origin/{pinned}"] if pinned else [self.rev or "HEAD"]
        for rev in revs:
            text = self._git("show", f"{rev}:{relpath}")
            if text is not None:
                return text, f"{rev}:{relpath}"
        raise FileNotFoundError(f"{' or '.join(r + ':' + relpath for r in revs)} not found in {self.path}")


# ---------------------------------------------------------------------------------------------------------------
# Markdown -> script

def extract_python(markdown, nested=False):
    """The ```python blocks of a Markdown page, in order: (lines, md_line_numbers (1-based), skipped).

    A line whose first non-blank character is `!` or `%` (notebook shell commands and magics) is dropped. A block
    whose fence is indented sits inside a list item: an illustration next to the page's flow (save_load.md shows
    there what MindIR export rejects, ending in an export that raises on purpose). Such blocks are left out unless
    `nested` is True (then they are dedented by the fence's indentation); `skipped` lists their first md lines."""
    lines, numbers, skipped = [], [], []
    in_block, fence, keep, indent = False, None, False, ""
    for i, line in enumerate(markdown.splitlines(), 1):
        m = _FENCE.match(line)
        if not in_block:
            if m:
                in_block, fence, indent = True, m.group(2), m.group(1)
                keep = m.group(3).lower() in _PY_LANGS
                if keep and indent and not nested:
                    keep = False
                    skipped.append(i)
            continue
        if m and m.group(2).startswith(fence[0]) and len(m.group(2)) >= len(fence) and not m.group(3):
            in_block = False
            if keep and lines and lines[-1] != "":
                lines.append("")
                numbers.append(i)
            continue
        if keep:
            if line.lstrip().startswith(("!", "%")):
                continue
            lines.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            numbers.append(i)
    return lines, numbers, skipped


def _is_download_call(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "download")


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def _download_suffix(url):
    return next((suffix for suffix in DOWNLOADS if isinstance(url, str) and url.endswith(suffix)), None)


def replace_download(lines, downloads=None):
    """Comments out the download steps of the files in DOWNLOADS; returns (new_lines, notes).

    `from download import download` becomes a comment; `x = download(url, dest, ...)` becomes `x = dest` (download
    returns the directory it extracted into, where the runner has put the files) with the original as a comment;
    a bare `download(...)` call becomes a comment. Line count and numbering are kept. Only calls whose URL is a
    string constant (or a name bound to one) ending in a DOWNLOADS suffix, with a string-constant destination, are
    replaced; any other download is left as it is and reported in notes. When `downloads` is a list, a
    (suffix, destination) pair is appended to it for each replaced call (the runner prepares those files)."""
    source = "\n".join(lines) + "\n"
    tree = ast.parse(source)
    strings = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _literal(node.value)
            strings.setdefault(node.targets[0].id, []).append((node.lineno, value))
    edits, notes = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "download" and len(node.names) == 1 \
                and node.names[0].name == "download" and node.names[0].asname is None:
            edits.append((node, None, None))
        elif isinstance(node, (ast.Assign, ast.Expr)) and _is_download_call(node.value):
            call = node.value
            url_node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "url"), None)
            url = _literal(url_node) if url_node is not None else None
            if url is None and isinstance(url_node, ast.Name):  # the name's last assignment above the call
                url = max(((ln, v) for ln, v in strings.get(url_node.id, ()) if ln < node.lineno),
                          default=(0, None), key=lambda e: e[0])[1]
            suffix = _download_suffix(url)
            if suffix is None:
                notes.append(f"line {node.lineno}: download of {url!r} left unchanged (not one of "
                             f"{', '.join(DOWNLOADS)})")
                continue
            dest_node = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "path"), None)
            dest = _literal(dest_node) if dest_node is not None else None
            if suffix != MNIST_URL_SUFFIX and not isinstance(dest, str):
                notes.append(f"line {node.lineno}: download() without a constant destination left unchanged")
                continue
            if isinstance(node, ast.Assign) and dest_node is None:
                notes.append(f"line {node.lineno}: download() without a destination left unchanged")
                continue
            edits.append((node, dest_node, suffix))
            if downloads is not None and isinstance(dest, str):
                downloads.append((suffix, dest))
    out = list(lines)
    replaced = []
    for node, dest, suffix in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        first, last = node.lineno - 1, node.end_lineno - 1
        indent = re.match(r"\s*", out[first]).group(0)
        original = [out[k] for k in range(first, last + 1)]
        tag = f"# [run_tutorials: download step replaced by local {DOWNLOADS[suffix or MNIST_URL_SUFFIX]} files]"
        if isinstance(node, ast.Assign):
            targets = " = ".join(ast.get_source_segment(source, t) for t in node.targets)
            new = [f"{indent}{targets} = {ast.get_source_segment(source, dest)}  {tag} {original[0].strip()}"]
        else:
            new = [f"{indent}{tag} {original[0].strip()}"]
        new += [f"{indent}#   {s.strip()}" for s in original[1:]]
        out[first:last + 1] = new
        replaced.append(f"line {node.lineno}: replaced {' '.join(s.strip() for s in original)!r}")
    return out, notes + replaced[::-1]


def extract_notebook(text):
    """The code cells of a Jupyter notebook (JSON text), in order: (lines, cell_line_labels, skipped).

    Labels read 'cell N:L' (N the 1-based index among all cells, L the line in the cell). Shell lines and magics
    (`!`, `%`) are dropped as in extract_python; skipped is always empty (a notebook has no nested blocks)."""
    nb = json.loads(text)
    lines, labels = [], []
    for n, cell in enumerate(nb.get("cells", ()), 1):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        for k, line in enumerate(src.splitlines(), 1):
            if line.lstrip().startswith(("!", "%")):
                continue
            lines.append(line)
            labels.append(f"cell {n}:{k}")
        if lines and lines[-1] != "":
            lines.append("")
            labels.append(f"cell {n}")
    return lines, labels, []


def build_script(markdown, origin, nested=False, downloads=None):
    """(script_text, md_line_of_script_line, notes) for one page; origin names the page in the header comment.

    A page whose origin ends in .ipynb is read as a notebook (its code cells); `downloads` as in replace_download."""
    if origin.endswith(".ipynb"):
        lines, numbers, skipped = extract_notebook(markdown)
    else:
        lines, numbers, skipped = extract_python(markdown, nested)
    if not lines:
        raise ValueError(f"{origin}: no ```python code blocks")
    lines, notes = replace_download(lines, downloads)
    notes += [f"md line {i}: python block inside a list item left out (--nested includes it)" for i in skipped]
    header = [f"# Extracted by kiln tools/run_tutorials.py from {origin}: the page's python code blocks in order.",
              "# Only the download steps are replaced (see the [run_tutorials] comments)."]
    text = "\n".join(header + lines) + "\n"
    return text, [None] * len(header) + numbers, notes


# ---------------------------------------------------------------------------------------------------------------
# Running

_FRAME = re.compile(r'^\s*File "(.*)", line (\d+)')


def failure_of(stderr, script):
    """(script_line, exception_line) of the last traceback frame in the script, from a child's stderr."""
    lines = stderr.rstrip().splitlines()
    start = max((i for i, l in enumerate(lines) if l.startswith("Traceback (most recent call last)")), default=None)
    if start is None:
        tail = [l for l in lines if l.strip()]
        return None, (tail[-1].strip() if tail else "")
    line_no, exc = None, ""
    for l in lines[start:]:
        m = _FRAME.match(l)
        if m and os.path.abspath(m.group(1)) == os.path.abspath(script):
            line_no = int(m.group(2))
    for l in reversed(lines[start:]):
        if l.strip() and not l.startswith(" ") and not l.startswith("Traceback"):
            exc = l.strip()
            break
    return line_no, exc


def run_process(cmd, cwd, env, timeout):
    """(returncode or None on timeout, stdout, stderr) of cmd run in its own session (process group).

    On a timeout or Ctrl-C the whole group is killed (SIGKILL), so worker processes a tutorial started (dataset
    workers) do not outlive it; Ctrl-C is then re-raised."""
    import signal

    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)

    def kill_group():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group()
        out, err = proc.communicate()
        rc = None
    except BaseException:
        kill_group()
        proc.communicate()
        raise
    kill_group()  # anything the tutorial left running in its group
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def prepare_data(run_dir, data_dir):
    """MNIST_Data/train and MNIST_Data/test in run_dir: copies of data_dir's four idx files."""
    sys.path.insert(0, os.path.join(REPO, "examples"))
    try:
        import mnist_files
    finally:
        sys.path.pop(0)
    mnist_files.write_tutorial_layout(run_dir, source=data_dir)


CIFAR10_PER_BATCH = 10000  # records in each file, as in CIFAR-10 (MindSpore reads exactly 10,000 per file)
CIFAR10_CLASSES = [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog", b"frog", b"horse", b"ship",
                   b"truck"]


def cifar10_arrays(seed=0, per_batch=CIFAR10_PER_BATCH):
    """Six (images uint8 (per_batch, 3, 32, 32), labels uint8 (per_batch,)) pairs: data_batch_1..5 and test_batch.

    Random images and labels from NumPy's default_rng(seed): a stand-in of CIFAR-10's layout, not its pictures."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [(rng.integers(0, 256, (per_batch, 3, 32, 32), dtype=np.uint8),
             rng.integers(0, 10, per_batch).astype(np.uint8)) for _ in range(6)]


def _array_as_ndarray_call(arr):
    """An array pickled as numpy.ndarray(shape, dtype name, bytes): a global every NumPy (1.x, 2.x) and MindSpore's
    restricted CIFAR unpickler (module numpy only) accept; NumPy 2's own pickles name numpy._core, which they
    refuse."""
    import numpy as np

    return np.ndarray, (arr.shape, arr.dtype.name, arr.tobytes())


def _cifar10_pickler():
    import pickle

    import numpy as np

    class Pickler(pickle.Pickler):
        def reducer_override(self, obj):
            return _array_as_ndarray_call(obj) if type(obj) is np.ndarray else NotImplemented

    return Pickler


def _Cifar10Pickler(f, protocol):  # a class made on first use: pickle is imported lazily
    return _cifar10_pickler()(f, protocol=protocol)


def write_cifar10(dest, binary):
    """CIFAR-10's archive layout under dest: cifar-10-batches-bin (binary) or cifar-10-batches-py (pickles)."""
    import pickle

    batches = cifar10_arrays()
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    root = os.path.join(dest, "cifar-10-batches-bin" if binary else "cifar-10-batches-py")
    os.makedirs(root, exist_ok=True)
    for name, (images, labels) in zip(names, batches):
        if binary:  # records of 1 label byte + 3072 image bytes (channel-major: 1024 R, 1024 G, 1024 B)
            import numpy as np

            records = np.concatenate([labels[:, None], images.reshape(len(labels), -1)], axis=1)
            with open(os.path.join(root, name + ".bin"), "wb") as f:
                f.write(records.tobytes())
        else:  # the pickled dict of the python archive (bytes keys)
            batch = {b"batch_label": name.encode(), b"labels": [int(v) for v in labels],
                     b"data": images.reshape(len(labels), -1),
                     b"filenames": [f"{name}_{i}.png".encode() for i in range(len(labels))]}
            with open(os.path.join(root, name), "wb") as f:
                _Cifar10Pickler(f, protocol=3).dump(batch)
    if binary:
        with open(os.path.join(root, "batches.meta.txt"), "w", encoding="ascii") as f:
            f.write("\n".join(c.decode() for c in CIFAR10_CLASSES) + "\n")
    else:
        with open(os.path.join(root, "batches.meta"), "wb") as f:
            pickle.dump({b"label_names": CIFAR10_CLASSES, b"num_cases_per_batch": CIFAR10_PER_BATCH,
                         b"num_vis": 3072}, f, protocol=3)
    with open(os.path.join(root, "readme.html"), "w", encoding="ascii") as f:
        f.write("<html><body>Stand-in CIFAR-10 files written by kiln tools/run_tutorials.py</body></html>\n")


def write_jpeg(path):
    """A 400x300 RGB JPEG (a smooth yellow-green gradient with a dark ellipse), Pillow quality 90."""
    import numpy as np
    from PIL import Image

    y, x = np.mgrid[0:300, 0:400]
    rgb = np.stack([200 + 55 * x / 399, 180 + 60 * y / 299, 40 + 0 * x], axis=-1)
    rgb[((x - 200) / 150.0) ** 2 + ((y - 150) / 60.0) ** 2 < 1] *= 0.6
    Image.fromarray(rgb.astype(np.uint8)).save(path, "JPEG", quality=90)


def write_wav(path, rate=16000, seconds=2.0):
    """A mono 16-bit PCM WAV: a 220 Hz + 1,760 Hz chord with a slow envelope, at `rate` Hz for `seconds`."""
    import wave

    import numpy as np

    t = np.arange(int(rate * seconds)) / rate
    signal = (0.5 * np.sin(2 * np.pi * 220 * t) + 0.2 * np.sin(2 * np.pi * 1760 * t)) * np.sin(np.pi * t / seconds)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((signal * 16000).astype("<i2").tobytes())


def prepare_download(run_dir, suffix, dest):
    """Puts in run_dir what `download(URL ending in suffix, dest, ...)` would have left there."""
    target = os.path.normpath(os.path.join(run_dir, dest))
    if not target.startswith(os.path.normpath(run_dir)):
        raise ValueError(f"download destination {dest!r} is outside the run directory")
    if suffix == MNIST_URL_SUFFIX:
        return  # prepare_data already wrote MNIST_Data/ into run_dir
    if suffix in ("cifar-10-binary.tar.gz", "cifar-10-python.tar.gz"):
        write_cifar10(target, binary=suffix == "cifar-10-binary.tar.gz")
    elif suffix == "banana.jpg":
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        write_jpeg(target)
    elif suffix == "84-121123-0000.wav":
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        write_wav(target)
    else:
        raise ValueError(f"no local replacement for a download of {suffix}")


def run_one(name, script_text, md_lines, origin, args, data_dir, keep_root, downloads=()):
    run_dir = tempfile.mkdtemp(prefix=f"tutorial_{name}_")
    result = {"tutorial": name, "source": origin}
    try:
        prepare_data(run_dir, data_dir)
        for suffix, dest in downloads:
            prepare_download(run_dir, suffix, dest)
        script = os.path.join(run_dir, f"{name}.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(script_text)
        cmd = [args.python, script] if args.mindspore else [args.python, "-m", "kiln.compat", script]
        env = dict(os.environ)
        env["MPLBACKEND"] = "Agg"  # plt.show() draws nothing and never blocks
        env["PYTHONIOENCODING"] = "utf-8"
        env["PYTHONUNBUFFERED"] = "1"
        # the child runs in its own directory: relative PYTHONPATH entries are meant relative to ours
        paths = [*args.pythonpath, *env.get("PYTHONPATH", "").split(os.pathsep)]
        if any(paths):
            env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in paths if p)
        start = time.perf_counter()
        rc, stdout, stderr = run_process(cmd, run_dir, env, args.timeout)
        result["seconds"] = round(time.perf_counter() - start, 2)
        result["returncode"] = rc
        if rc == 0:
            result["status"] = "ok"
        elif rc is None:
            result["status"] = f"timeout after {args.timeout} s"
        else:
            line, exc = failure_of(stderr, script)
            md = md_lines[line - 1] if line is not None and 0 < line <= len(md_lines) else None
            result["line"], result["md_line"], result["exception"] = line, md, exc
            where = f"line {line}" + ((f" (md {md})" if isinstance(md, int) else f" ({md})") if md else "") if line is not None else f"exit status {rc}"
            result["status"] = f"failed at {where}: {exc}"
        if args.verbose or (rc != 0 and args.show_output):
            print(f"----- {name}: stdout\n{stdout}\n----- {name}: stderr\n{stderr}", flush=True)
        result["stderr_tail"] = stderr[-4000:]
    finally:
        if keep_root:
            dest = os.path.join(keep_root, name)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(run_dir, dest)
        shutil.rmtree(run_dir, ignore_errors=True)
    return result


def print_table(results):
    rows = [("tutorial", "status", "seconds")]
    rows += [(r["tutorial"], r["status"], "" if r.get("seconds") is None else f"{r['seconds']:.1f}")
             for r in results]
    w0 = max(len(r[0]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    for i, (a, b, c) in enumerate(rows):
        print(f"{a:<{w0}}  {c:>{w2}}  {b}")
        if i == 0:
            print("-" * (w0 + w2 + 12))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--docs", required=True, help="checkout of mindspore-ai/docs (work tree or bare git dir)")
    parser.add_argument("--rev", default=None,
                        help="revision for the unpinned pages (default: the work tree, or HEAD of a bare repo)")
    parser.add_argument("--only", default=None, help=f"comma-separated subset of: {', '.join(TUTORIALS)}")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per tutorial (default 600)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the tutorials (default: this one)")
    parser.add_argument("--mindspore", action="store_true",
                        help="run under the interpreter's real MindSpore (plain `python script.py`), not kiln.compat")
    parser.add_argument("--data", default=None,
                        help="directory with the four MNIST idx files (default: written from scikit-learn's digits "
                             "by examples/mnist_files.py)")
    parser.add_argument("--pythonpath", action="append", default=[],
                        help="directory put first on the tutorials' PYTHONPATH (repeatable)")
    parser.add_argument("--nested", action="store_true",
                        help="also run python blocks nested in list items (illustrations; left out by default)")
    parser.add_argument("--keep", default=None, help="copy each tutorial's run directory (script, files) here")
    parser.add_argument("--json", default=None, help="also write the results as JSON to this file")
    parser.add_argument("--list", action="store_true", help="list the tutorials and their pages, run nothing")
    parser.add_argument("--show", default=None, metavar="NAME", help="print the script of one tutorial, run nothing")
    parser.add_argument("--show-output", action="store_true", help="print the output of failed tutorials")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every tutorial's output")
    args = parser.parse_args(argv)
    try:
        return _main(args)
    except UsageError as e:
        print(f"run_tutorials: {e}", file=sys.stderr)
        return 2


def _main(args):
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be > 0, got {args.timeout}")
    names = list(TUTORIALS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in TUTORIALS]
        if unknown or not names:
            raise UsageError(f"--only: unknown tutorial(s) {unknown or args.only!r}; known: {', '.join(TUTORIALS)}")
    if args.show is not None and args.show not in TUTORIALS:
        raise UsageError(f"--show: unknown tutorial {args.show!r}; known: {', '.join(TUTORIALS)}")
    if args.data is not None and not os.path.isdir(args.data):
        raise UsageError(f"--data {args.data!r}: no such directory")
    docs = DocsSource(args.docs, args.rev)

    if args.list:
        for n in names:
            path, pinned, why = TUTORIALS[n]
            print(f"{n:<12} {(pinned or args.rev or 'default') + ':' + path:<80} {why}")
        return 0

    pages = {}
    for n in ([args.show] if args.show else names):
        path, pinned, _ = TUTORIALS[n]
        try:
            text, origin = docs.read(path, pinned)
            downloads = []
            pages[n] = (origin, *build_script(text, origin, args.nested, downloads), downloads)
        except (FileNotFoundError, ValueError, SyntaxError) as e:
            pages[n] = (path, None, None, [f"cannot extract: {e}"], [])
    if args.show:
        origin, script, _, notes, _ = pages[args.show]
        if script is None:
            raise UsageError(notes[0])
        sys.stdout.write(script)
        return 0

    with tempfile.TemporaryDirectory(prefix="tutorial_data_") as tmp:
        data_dir = args.data
        if data_dir is None:
            sys.path.insert(0, os.path.join(REPO, "examples"))
            try:
                import mnist_files
            finally:
                sys.path.pop(0)
            data_dir = os.path.join(tmp, "mnist")
            mnist_files.write_mnist(data_dir)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
        results = []
        for n in names:
            origin, script, md_lines, notes, downloads = pages[n]
            if script is None:
                results.append({"tutorial": n, "source": origin, "status": notes[0], "seconds": None})
            else:
                print(f"running {n} ({origin}) ...", file=sys.stderr, flush=True)
                r = run_one(n, script, md_lines, origin, args, data_dir, args.keep, downloads)
                r["notes"] = notes
                results.append(r)
    runner = f"{args.python} (MindSpore)" if args.mindspore else f"{args.python} -m kiln.compat"
    print(f"\nTutorials from {docs.path}, run with {runner}:\n")
    print_table(results)
    notes = [(r["tutorial"], note) for r in results for note in r.get("notes", ())]
    if notes:
        print("\nChanges and omissions:")
        for name, note in notes:
            print(f"  {name}: {note}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"runner": runner, "docs": docs.path, "results": results}, f, indent=1)
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
