"""Runs every code block of MindSpore's static-graph (Graph mode) tutorials under MindSpore and under Kiln, and
compares what each block prints.

The pages (English, read at run time from a checkout of mindspore-ai/docs; never stored in this repository):
  statements   tutorials/source_en/compile/statements.md                       Graph Mode Syntax - Python Statements
  builtins     tutorials/source_en/compile/python_builtin_functions.md         Graph Mode Syntax - Python Built-in Functions
  static_graph tutorials/source_en/compile/static_graph.md                     Static Graph Syntax Support
  expert       tutorials/source_en/compile/static_graph_expert_programming.md  Advanced Programming Techniques for Static Graphs
  accelerate   tutorials/source_en/beginner/accelerate_with_static_graph.md    Accelerating with Static Graphs

Every ```python (or ``` python) block is one self-contained example on these pages: each runs on its own, in a fresh
process and a fresh temporary directory, unchanged (blocks nested in list items are dedented). A block runs once
under MindSpore (`--ms-python`, plain `python block.py`) and once under Kiln (`--python -m kiln.compat block.py`);
the table shows per page: blocks, how many run to the end (exit status 0) under MindSpore and under Kiln, how many
of the blocks that run under MindSpore run under Kiln and print the same stdout ("same output"), and how many
blocks that fail on purpose under MindSpore (the pages' examples of errors) fail under Kiln with the same exception
type and the same stdout before it ("same error"). Stdout is compared line by line with trailing blanks stripped;
stderr (logs, warnings) is not compared. "other numbers" counts blocks that run in both whose outputs differ only
in their numbers (every number masked): randomly initialized weights and timings cannot print the same values.

MindSpore's results are cached (--ms-cache, keyed by the block's text and the interpreter), so a second run only
runs Kiln. Exit status 0 when every block that runs under MindSpore runs under Kiln with the same output, 1
otherwise, 2 for a usage error.

    python tools/run_static_graph_tutorials.py --docs DOCS [--only statements,builtins] [--details] [-j 2]
        [--ms-python /work/msvenv/bin/python] [--ms-cache FILE] [--timeout 180] [--json FILE] [--keep DIR]
    python tools/run_static_graph_tutorials.py --docs DOCS --show builtins:3     # one block's code
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run_tutorials import DocsSource, UsageError, run_process  # noqa: E402 (after sys.path has tools/)

PAGES = {
    "statements": "tutorials/source_en/compile/statements.md",
    "builtins": "tutorials/source_en/compile/python_builtin_functions.md",
    "static_graph": "tutorials/source_en/compile/static_graph.md",
    "expert": "tutorials/source_en/compile/static_graph_expert_programming.md",
    "accelerate": "tutorials/source_en/beginner/accelerate_with_static_graph.md",
}
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)\s*$")
_PY = {"python", "py", "python3"}


def extract_blocks(markdown):
    """[(md_line_of_first_code_line, code)] of every python block of a page, in order (nested blocks dedented)."""
    blocks, cur, start, fence, keep = [], None, 0, None, False
    for i, line in enumerate(markdown.splitlines(), 1):
        m = _FENCE.match(line)
        if cur is None:
            if m:
                cur, start, fence, keep = [], i + 1, m.group(2), m.group(3).lower() in _PY
            continue
        if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3):
            if keep:
                code = textwrap.dedent("\n".join(l for l in cur if not l.lstrip().startswith(("!", "%"))))
                blocks.append((start, code.strip("\n") + "\n"))
            cur = None
            continue
        cur.append(line)
    return blocks


def _last_exception(stderr):
    """'Type: message' of the last exception in a child's stderr ('' when none)."""
    lines = [l for l in stderr.rstrip().splitlines() if l.strip()]
    start = max((i for i, l in enumerate(lines) if l.startswith("Traceback (most recent call last)")), default=None)
    if start is None:
        return lines[-1].strip() if lines else ""
    for l in reversed(lines[start:]):
        if not l.startswith(" ") and not l.startswith("Traceback") and re.match(r"^[\w.]+(:|$)", l):
            return l.strip()
    return lines[-1].strip()


def _exc_type(exc):
    return exc.split(":", 1)[0].rsplit(".", 1)[-1].strip() if exc else ""


def _norm(stdout):
    return "\n".join(l.rstrip() for l in stdout.rstrip().splitlines())


def run_block(code, python, kiln, timeout, pythonpath, keep=None):
    """{'ok', 'rc', 'stdout', 'exception', 'seconds'} of one block run in a fresh directory."""
    run_dir = tempfile.mkdtemp(prefix="sg_block_")
    try:
        script = os.path.join(run_dir, "block.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(code)
        cmd = [python, "-m", "kiln.compat", script] if kiln else [python, script]
        env = dict(os.environ)
        env.update(MPLBACKEND="Agg", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1", GLOG_v="3")
        if kiln and pythonpath:
            env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(p) for p in pythonpath] +
                                                [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        elif not kiln:
            env.pop("PYTHONPATH", None)
        t0 = time.perf_counter()
        rc, out, err = run_process(cmd, run_dir, env, timeout)
        res = {"ok": rc == 0, "rc": rc, "stdout": out, "seconds": round(time.perf_counter() - t0, 2),
               "exception": "" if rc == 0 else (f"timeout after {timeout} s" if rc is None else _last_exception(err)),
               "stderr_tail": err[-3000:] if rc != 0 else ""}
        return res
    finally:
        if keep:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(run_dir, keep)
        shutil.rmtree(run_dir, ignore_errors=True)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _mask_numbers(text):
    """Text with every number (and the blanks and line breaks around it) replaced by '#': outputs of randomly
    initialized networks and timings compare by layout only (NumPy wraps an array's rows by its numbers' widths,
    and switches to e-notation for some values, so the line breaks between numbers do not count)."""
    return re.sub(r"\s*#\s*", "#", _NUMBER.sub("#", text))


def compare(ms, kl):
    """'same output', 'same error', 'other numbers' (same text once numbers are masked), or why not."""
    if ms["ok"]:
        if not kl["ok"]:
            return "kiln fails"
        if _norm(ms["stdout"]) == _norm(kl["stdout"]):
            return "same output"
        if _mask_numbers(_norm(ms["stdout"])) == _mask_numbers(_norm(kl["stdout"])):
            return "other numbers"
        return "different output"
    if kl["ok"]:
        return "ms fails, kiln runs"
    if _exc_type(ms["exception"]) == _exc_type(kl["exception"]) and _norm(ms["stdout"]) == _norm(kl["stdout"]):
        return "same error"
    return "both fail differently"


def _load_cache(path):
    if path and os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
    return {}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--docs", required=True, help="checkout of mindspore-ai/docs (work tree or bare git dir)")
    p.add_argument("--rev", default=None, help="docs revision (default: the work tree, or HEAD of a bare repo)")
    p.add_argument("--only", default=None, help=f"comma-separated pages, or page:N blocks, of: {', '.join(PAGES)}")
    p.add_argument("--python", default=sys.executable, help="interpreter that runs Kiln (default: this one)")
    p.add_argument("--pythonpath", action="append", default=None,
                   help="put first on Kiln's PYTHONPATH (repeatable; default: this checkout's python/)")
    p.add_argument("--ms-python", default="/work/msvenv/bin/python", help="interpreter with a real MindSpore")
    p.add_argument("--ms-cache", default=os.path.join(tempfile.gettempdir(), "kiln_static_graph_ms_cache.json"),
                   help="JSON cache of MindSpore's results (empty string: no cache)")
    p.add_argument("--no-ms", action="store_true", help="use only cached MindSpore results; skip uncached blocks")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per block and framework (default 180)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="blocks run at once (default 1)")
    p.add_argument("--details", action="store_true", help="list every block with its outcome")
    p.add_argument("--json", default=None, help="write all results here")
    p.add_argument("--keep", default=None, help="keep each block's run directory under this directory")
    p.add_argument("--show", default=None, metavar="PAGE:N", help="print block N (1-based) of PAGE, run nothing")
    args = p.parse_args(argv)
    if args.pythonpath is None:
        args.pythonpath = [os.path.join(REPO, "python")]
    try:
        return _main(args)
    except UsageError as e:
        print(f"run_static_graph_tutorials: {e}", file=sys.stderr)
        return 2


def _select(args):
    if not args.only:
        return {n: None for n in PAGES}
    sel = {}
    for item in (s.strip() for s in args.only.split(",") if s.strip()):
        name, _, num = item.partition(":")
        if name not in PAGES:
            raise UsageError(f"--only: unknown page {name!r}; known: {', '.join(PAGES)}")
        if num:
            if not num.isdigit():
                raise UsageError(f"--only: {item!r}: the block number must be a positive integer")
            if sel.get(name, ()) is not None:
                sel.setdefault(name, set()).add(int(num))
        else:
            sel[name] = None
    return sel


def _main(args):
    if args.timeout <= 0 or args.jobs < 1:
        raise UsageError("--timeout must be > 0 and --jobs >= 1")
    docs = DocsSource(args.docs, args.rev)
    pages = {}
    for name, path in PAGES.items():
        text, origin = docs.read(path)
        pages[name] = (origin, extract_blocks(text))
    if args.show:
        name, _, num = args.show.partition(":")
        if name not in pages or not num.isdigit() or not 1 <= int(num) <= len(pages[name][1]):
            raise UsageError(f"--show {args.show!r}: expected PAGE:N with PAGE in {', '.join(PAGES)}")
        md_line, code = pages[name][1][int(num) - 1]
        print(f"# {pages[name][0]} line {md_line}\n{code}", end="")
        return 0
    sel = _select(args)
    todo = [(name, i + 1, md, code) for name, (origin, blocks) in pages.items() if name in sel
            for i, (md, code) in enumerate(blocks) if sel[name] is None or i + 1 in sel[name]]

    cache = _load_cache(args.ms_cache)
    ms_tag = os.path.realpath(args.ms_python)

    def key(code):
        return hashlib.sha256((ms_tag + "\0" + code).encode()).hexdigest()

    def job(item):
        name, idx, md, code = item
        keep = os.path.join(args.keep, f"{name}_{idx}") if args.keep else None
        k = key(code)
        ms = cache.get(k)
        if ms is None and not args.no_ms:
            ms = run_block(code, args.ms_python, False, args.timeout, [], keep and keep + "_ms")
        kl = run_block(code, args.python, True, args.timeout, args.pythonpath, keep and keep + "_kiln")
        return item, k, ms, kl

    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for n, (item, k, ms, kl) in enumerate(pool.map(job, todo), 1):
            name, idx, md, _ = item
            if ms is not None and k not in cache:
                cache[k] = ms
                if args.ms_cache:
                    tmp = args.ms_cache + ".tmp"
                    with open(tmp, "w", encoding="utf-8") as f:
                        json.dump(cache, f)
                    os.replace(tmp, args.ms_cache)
            verdict = compare(ms, kl) if ms is not None else "no MindSpore result"
            results.append({"page": name, "block": idx, "md_line": md, "ms": ms, "kiln": kl, "verdict": verdict})
            print(f"[{n}/{len(todo)}] {name}:{idx} (md {md}): {verdict}", file=sys.stderr, flush=True)

    rows = [("page", "blocks", "runs in MS", "runs in Kiln", "same output", "other numbers", "same error")]
    tot = [0] * 6
    for name in PAGES:
        rs = [r for r in results if r["page"] == name and r["ms"] is not None]
        if name not in sel:
            continue
        c = [len(rs), sum(r["ms"]["ok"] for r in rs), sum(r["kiln"]["ok"] for r in rs),
             sum(r["verdict"] == "same output" for r in rs), sum(r["verdict"] == "other numbers" for r in rs),
             sum(r["verdict"] == "same error" for r in rs)]
        tot = [a + b for a, b in zip(tot, c)]
        rows.append((name, *map(str, c)))
    rows.append(("total", *map(str, tot)))
    print(f"\nStatic-graph tutorials from {docs.path}: MindSpore = {args.ms_python}, "
          f"Kiln = {args.python} -m kiln.compat\n")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0 or i == len(rows) - 2:
            print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    if args.details:
        print()
        for r in results:
            ms, kl = r["ms"], r["kiln"]
            line = f"{r['page']}:{r['block']:<3} md {r['md_line']:<5} {r['verdict']:<22}"
            if ms is not None and not ms["ok"]:
                line += f" MS: {ms['exception'][:80]}"
            if not kl["ok"]:
                line += f" Kiln: {kl['exception'][:140]}"
            print(line)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    ran_ms = [r for r in results if r["ms"] is not None and r["ms"]["ok"]]
    return 0 if all(r["verdict"] == "same output" for r in ran_ms) else 1


if __name__ == "__main__":
    sys.exit(main())
