"""File-level API coverage: which real MindSpore programs use no name that Kiln lacks.

    .venv/bin/python tools/api_file_coverage.py SOURCE [SOURCE ...] [--top 40] [--json FILE] \
        [--mindspore-python /path/to/venv-with-mindspore/bin/python]

SOURCE is a directory, or a bare git directory (its HEAD is read with `git ls-tree`/`git cat-file`, e.g. the
mirror that `fetch github:mindspore-ai/models` makes). Every `.py` file that imports `mindspore` counts; a file is
*covered* when every MindSpore name it reaches through a module path resolves in Kiln, as it would under
`python -m kiln.compat` (the `mindspore` -> `kiln` alias of kiln.compat is installed for the check):

- `import mindspore.X[ as Y]` and `from mindspore.X import Y[ as Z]` need `mindspore.X` (and `.Y`);
- every attribute chain rooted in such a binding (`ms.nn.Dense`, `P.ReduceSum`, `nn.Cell.cells_and_names`,
  `mstype.float32`) needs the whole chain; a call or subscript ends the chain (`ms.Tensor(x).asnumpy` needs only
  `mindspore.Tensor`).

With --mindspore-python a second, pessimistic figure is printed: a file also counts as not covered when it uses an
attribute name (`x.foo`, on an object that is not an imported module) that is a method or attribute of MindSpore's Tensor, Parameter or Cell and
not of Kiln's, unless Python's str/list/tuple/dict/set or NumPy's ndarray also have it. The object may not be a
MindSpore one at all, so the truth lies between the two figures.

What it cannot see: a local rebinding of an alias name (rare), methods called on objects (`x.asnumpy()`, `net.set_train()`, where the type of `x` is only
known at run time), names reached through `getattr` with strings or through star imports, and whether a present
name behaves like MindSpore's (that is what the tests are for). So the figure is an upper bound of "runs
unchanged" and a lower bound of nothing; it is exact for "imports and module-path names resolve".
With --mindspore-python, each name Kiln lacks is also looked up in that MindSpore (in a subprocess run from a
temporary directory): a name MindSpore itself does not have (an API removed before 2.x, a private module) is
listed apart and does not count against Kiln -- the file fails under that MindSpore too.
Files that do not parse as Python 3 are reported and left out. "Training scripts" are files named `train*.py`.
Prints the covered share of all files and of training scripts, and the missing names by how many files use them.
"""
import argparse
import ast
import collections
import importlib
import json
import os
import subprocess
import sys

ROOT = "mindspore"


def iter_sources(source):
    """Yields (path, text) for every .py file under a directory or in a bare git directory's HEAD."""
    if os.path.isdir(os.path.join(source, "objects")) and os.path.exists(os.path.join(source, "HEAD")):
        names = subprocess.run(["git", "--git-dir", source, "ls-tree", "-r", "-z", "--name-only", "HEAD"],
                               check=True, capture_output=True).stdout.decode().split("\0")
        names = [n for n in names if n.endswith(".py")]
        proc = subprocess.Popen(["git", "--git-dir", source, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        try:
            for n in names:
                proc.stdin.write(f"HEAD:{n}\n".encode())
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) < 3 or header[1] != b"blob":
                    continue
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)  # the newline after each object
                yield f"{source}:{n}", data.decode("utf-8", "replace")
        finally:
            proc.stdin.close()
            proc.wait()
        return
    if not os.path.isdir(source):
        raise SystemExit(f"api_file_coverage: {source!r} is neither a directory nor a bare git directory")
    for d, _, files in os.walk(source):
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(d, f)
                with open(p, encoding="utf-8", errors="replace") as fh:
                    yield p, fh.read()


def _chain(node):
    """['ms', 'nn', 'Dense'] for the expression ms.nn.Dense; None if it is not a plain dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def attribute_names(tree):
    """The attribute names the module uses on objects (`x.asnumpy()`, `self.net.set_train()` give 'asnumpy',
    'set_train'), leaving out chains rooted in an imported name (`np.random.uniform`, `ops.equal`: module paths)."""
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner = node.value
            while isinstance(inner, ast.Attribute):
                inner = inner.value
            if not (isinstance(inner, ast.Name) and inner.id in imported):
                out.add(node.attr)
    return out


def used_names(tree):
    """The set of dotted `mindspore...` names a module reaches through its imports and attribute chains.

    Returns None when the module does not import mindspore at all.
    """
    aliases = {}  # local name -> dotted mindspore path
    needed = set()
    imports_ms = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == ROOT or a.name.startswith(ROOT + "."):
                    imports_ms = True
                    needed.add(a.name)
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[ROOT] = ROOT
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                (node.module == ROOT or node.module.startswith(ROOT + ".")):
            imports_ms = True
            needed.add(node.module)
            for a in node.names:
                if a.name == "*":
                    continue
                full = f"{node.module}.{a.name}"
                needed.add(full)
                aliases[a.asname or a.name] = full
    if not imports_ms:
        return None
    # Attribute chains: only the outermost Attribute of each chain is looked at (its inner ones are its prefixes).
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if id(node) in inner:
                inner.add(id(node.value))
                continue
            inner.add(id(node.value))
            parts = _chain(node)
            if parts and parts[0] in aliases:
                needed.add(".".join([aliases[parts[0]]] + parts[1:]))
    return needed


_cache = {}


def resolves(dotted):
    """True when `dotted` (a mindspore.* name) resolves in the `mindspore` this interpreter imports (Kiln's under
    the kiln.compat alias)."""
    if dotted in _cache:
        return _cache[dotted]
    parts = dotted.split(".")
    obj, ok = None, False
    for k in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except Exception:  # noqa: BLE001 - any failure to import means "not there"
            continue
        ok = True
        for attr in parts[k:]:
            try:
                obj = getattr(obj, attr)
            except Exception:  # noqa: BLE001 - AttributeError, or a lazy attribute that raises
                ok = False
                break
        break
    _cache[dotted] = ok
    return ok


def member_names():
    """{'Tensor': [...], 'Parameter': [...], 'Cell': [...]}: the public attribute names of the `mindspore` this
    interpreter imports."""
    ms = importlib.import_module(ROOT)
    classes = {"Tensor": ms.Tensor, "Parameter": ms.Parameter, "Cell": importlib.import_module(ROOT + ".nn").Cell}
    return {k: sorted(n for n in dir(c) if not n.startswith("_")) for k, c in classes.items()}


def resolve_in_mindspore(python, names):
    """(the subset of `names` that resolve, member_names()) in the MindSpore installed for `python` (run in a
    temporary directory, where MindSpore's log/rank folders do no harm)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([python, os.path.abspath(__file__), "--resolve-stdin"], input="\n".join(names), text=True,
                           capture_output=True, cwd=tmp, env={**os.environ, "GLOG_v": "3", "PYTHONPATH": ""})
    if p.returncode != 0:
        raise SystemExit(f"api_file_coverage: the MindSpore lookup failed: {p.stderr.strip()[-500:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return set(out["resolved"]), out["members"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="*", help="directories or bare git directories")
    ap.add_argument("--mindspore-python", metavar="PY", help="a python with MindSpore: names it lacks do not count")
    ap.add_argument("--resolve-stdin", action="store_true", help=argparse.SUPPRESS)  # the lookup subprocess
    ap.add_argument("--top", type=int, default=40, help="missing names listed (default 40)")
    ap.add_argument("--json", metavar="FILE", help="also write per-name counts and totals as JSON")
    args = ap.parse_args(argv)
    if args.resolve_stdin:  # in the MindSpore interpreter: print the names that resolve
        names = [n for n in sys.stdin.read().split() if n]
        print(json.dumps({"resolved": [n for n in names if resolves(n)], "members": member_names()}))
        return 0
    if not args.sources:
        ap.error("give at least one SOURCE")

    import kiln.compat
    installed_here = not kiln.compat.is_installed()
    kiln.compat.install()
    try:
        return _report(args)
    finally:
        if installed_here:
            kiln.compat.uninstall()


def _report(args):
    """Scans args.sources and prints the figures (see the module docstring)."""
    per_file = []  # (is_train, [missing names], attribute names used)
    unparsable = 0
    for source in args.sources:
        for path, text in iter_sources(source):
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                unparsable += 1
                continue
            names = used_names(tree)
            if names is None:
                continue
            missing = sorted(n for n in names if not resolves(n))
            per_file.append((os.path.basename(path.split(":")[-1]).startswith("train"), missing,
                             attribute_names(tree)))

    not_in_ms, only_ms_members = set(), set()
    if args.mindspore_python:
        lacking = sorted({n for _, m, _ in per_file for n in m})
        resolved, ms_members = resolve_in_mindspore(args.mindspore_python, lacking)
        not_in_ms = set(lacking) - resolved
        import numpy as np
        kiln_members = member_names()
        common = set().union(*(dir(t) for t in (str, list, tuple, dict, set, np.ndarray)))
        only_ms_members = {n for k, names in ms_members.items() for n in names
                           if n not in kiln_members[k] and n not in common}
    total = covered = train_total = train_covered = covered_strict = train_covered_strict = 0
    missing_files, train_missing, absent_files, member_files = (collections.Counter() for _ in range(4))
    for is_train, missing, attrs in per_file:
        members = attrs & only_ms_members
        for n in members:
            member_files[n] += 1
        for n in missing:
            if n in not_in_ms:
                absent_files[n] += 1
        missing = [n for n in missing if n not in not_in_ms]
        total += 1
        train_total += is_train
        if not missing:
            covered += 1
            train_covered += is_train
            if not members:
                covered_strict += 1
                train_covered_strict += is_train
        for n in missing:
            missing_files[n] += 1
            if is_train:
                train_missing[n] += 1

    def pct(a, b):
        return f"{100.0 * a / b:.1f}%" if b else "-"

    print(f"files importing mindspore: {total}; covered (every module-path name resolves in Kiln): {covered} "
          f"({pct(covered, total)})")
    print(f"training scripts (train*.py): {train_total}; covered: {train_covered} ({pct(train_covered, train_total)})")
    print(f"not parsed as Python 3 (left out): {unparsable}")
    if args.mindspore_python:
        print(f"pessimistic (also no attribute name that only MindSpore's Tensor/Parameter/Cell has): files "
              f"{covered_strict} ({pct(covered_strict, total)}), training scripts {train_covered_strict} "
              f"({pct(train_covered_strict, train_total)}); such names by files: "
              + ", ".join(f"{n} ({c})" for n, c in member_files.most_common(12)))
        print(f"names neither Kiln nor that MindSpore has (not counted against Kiln): {len(absent_files)}, "
              f"used by {sum(1 for _, m, _ in per_file if any(n in not_in_ms for n in m))} files; most used: "
              + ", ".join(f"{n} ({c})" for n, c in absent_files.most_common(8)))
    print(f"\nmissing names by files using them (top {args.top} of {len(missing_files)}):")
    for n, c in missing_files.most_common(args.top):
        print(f"  {c:6d}  {n}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"files": total, "covered": covered, "train_files": train_total, "train_covered": train_covered,
                       "unparsable": unparsable, "missing": dict(missing_files.most_common()),
                       "train_missing": dict(train_missing.most_common()),
                       "not_in_mindspore": dict(absent_files.most_common()),
                       "covered_pessimistic": covered_strict, "train_covered_pessimistic": train_covered_strict,
                       "member_names": dict(member_files.most_common())}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
