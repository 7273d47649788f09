#!/usr/bin/env python3
"""Every `# noqa` names its codes and says why (issue 23, "Habits"; docs/decisions/python-lint.md).

The accepted form is the codes, then a reason of at least a few words' worth of text:

    import kiln  # noqa: E402 (kiln must load before libgomp)
    except Exception as e:  # noqa: BLE001 -- reported in the table
    except Exception as e:  # noqa: BLE001 — the user's code failed: re-raised with its traceback

The reason may be wrapped in parentheses or follow `-`, `--`, `—` or `:`. Ruff has no such rule yet
(astral-sh/ruff#5182); ruff's own PGH004 rejects a bare `# noqa` and RUF100 an unused one.

Usage: tools/check_noqa.py [PATH ...]   (default: the tracked *.py files of the repository).
Exit status 1 when a directive lacks codes or a reason; each is printed as `path:line: text`."""
import io
import os
import re
import subprocess
import sys
import tokenize

NOQA = re.compile(r"#\s*noqa\b(?P<tail>.*)$", re.IGNORECASE)
CODES = re.compile(r"^:\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*")
REASON = re.compile(r"^\s*(?:\(|--|—|-|:)?\s*(?P<text>.*?)\)?\s*$")


def problem(comment):
    """None when the `# noqa` of this comment (if any) is well formed, else what is wrong with it."""
    m = NOQA.search(comment)
    if not m:
        return None
    tail = m.group("tail")
    codes = CODES.match(tail)
    if not codes:
        return "names no codes (write `# noqa: CODE (reason)`)"
    text = REASON.match(tail[codes.end():]).group("text")
    if len(re.findall(r"[^\W\d_]", text)) < 3:
        return "gives no reason (write `# noqa: CODE (reason)`)"
    return None


def comments(path):
    """(line, text) of each comment of a Python file; by lines when the file does not tokenize."""
    with open(path, "rb") as f:
        src = f.read()
    if b"noqa" not in src.lower():
        return
    try:
        for tok in tokenize.tokenize(io.BytesIO(src).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        for i, line in enumerate(src.decode("utf-8", "replace").splitlines(), 1):
            if "#" in line:
                yield i, line[line.index("#"):]


def python_files(root):
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], cwd=root, capture_output=True, check=True)
        return [os.path.join(root, p) for p in out.stdout.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return [os.path.join(d, f) for d, _, fs in os.walk(root) if "/." not in d for f in fs if f.endswith(".py")]


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = argv or python_files(root)
    bad = 0
    for path in paths:
        if not os.path.exists(path):  # deleted but still tracked
            continue
        for line, text in comments(path):
            why = problem(text)
            if why:
                bad += 1
                print(f"{os.path.relpath(path, root)}:{line}: `{text.strip()}` {why}")
    if bad:
        print(f"check_noqa: {bad} `# noqa` without codes or reason", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
