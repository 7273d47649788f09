#!/usr/bin/env python3
"""Which of the MindSpore names listed in api_priority.md (the names real code uses, with the number of files using
each) Kiln provides: a name counts as present when getattr on kiln resolves it, as in api_priority.md ("presence is
not correctness"). Needs Kiln only (not MindSpore).

    .venv/bin/python tools/api_coverage.py [path/to/api_priority.md] [--min-files 8] [--missing]

Name forms in the file: `mindspore.a.b` (kiln.a.b), `ops.X` (kiln.ops.X), `nn.Cell.x` (kiln.nn.Cell.x),
`Tensor.x` (kiln.Tensor.x). Prints one line per name (present/missing, files, name), grouped by section, then the
totals: names and the sum of their file counts, present and missing. Exit status 0."""
import argparse
import importlib
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# ../shared/reference/api_priority.md next to the checkout (/work/main), or two levels up (a worktree /work/wt/<name>)
_CANDIDATES = [os.path.join(_HERE, *[".."] * up, "shared", "reference", "api_priority.md") for up in (2, 3)]
_DEFAULT = next((c for c in _CANDIDATES if os.path.exists(c)), _CANDIDATES[0])
_ENTRY = re.compile(r"`([A-Za-z_][\w.]*)`\s+(\d+)")


def parse(text):
    """[(section, name, files)] from the markdown: each `name` count pair under a '## section' heading."""
    out, section = [], ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if not section:
            continue
        for name, files in _ENTRY.findall(line):
            out.append((section, name, int(files)))
    return out


def _kiln_path(name):
    if name.startswith("mindspore."):
        return "kiln" + name[len("mindspore"):]
    if name == "mindspore":
        return "kiln"
    return "kiln." + name  # ops.X, nn.Cell.x, Tensor.x


def present(name):
    """True when the name resolves on kiln by attribute access (importing submodules on the way)."""
    parts = _kiln_path(name).split(".")
    obj = importlib.import_module(parts[0])
    path = parts[0]
    for p in parts[1:]:
        path += "." + p
        try:
            obj = getattr(obj, p)
            continue
        except AttributeError:
            pass
        try:
            obj = importlib.import_module(path)
        except ImportError:
            return False
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=_DEFAULT)
    ap.add_argument("--min-files", type=int, default=8)
    ap.add_argument("--missing", action="store_true", help="list the missing names only")
    a = ap.parse_args(argv)
    with open(a.path, encoding="utf-8") as f:
        entries = [e for e in parse(f.read()) if e[2] >= a.min_files]
    tot = {True: [0, 0], False: [0, 0]}
    section = None
    for sec, name, files in entries:
        ok = present(name)
        tot[ok][0] += 1
        tot[ok][1] += files
        if a.missing and ok:
            continue
        if sec != section:
            print(f"## {sec}")
            section = sec
        print(f"  {'present' if ok else 'MISSING':7s} {files:5d}  {name}")
    n = tot[True][0] + tot[False][0]
    print(f"\nnames used by >= {a.min_files} files: {n}; present {tot[True][0]}, missing {tot[False][0]}; "
          f"file-uses present {tot[True][1]}, missing {tot[False][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
