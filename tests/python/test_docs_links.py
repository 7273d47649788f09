"""The documentation's links and the decision records hold together (issue 23, item 4; docs/decisions/README.md).

Pure Python, no kiln import, about a second:
- every relative Markdown link in docs/ and README.md names a file or folder that exists (links inside code blocks
  and code spans are code, not links; http(s)/mailto links, in-page anchors and links that leave the repository are
  not checked);
- every `docs/decisions/<file>.md` that a document, a docstring or a comment mentions (docs/, README.md, python/,
  src/, include/, tests/, tools/, benchmarks/, examples/ and the build files) exists;
- nothing points at the old one-file docs/decisions.md any more (it is a pointer to the folder; its sections are
  files under docs/decisions/), so a reference cannot silently name a section that moved;
- every file in docs/decisions/ starts with a `# ` title and has a `Status:` and a `Revisit when:` line in its
  header, and docs/decisions/README.md links every such file exactly once.
"""
import functools
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ROOT / "docs" / "decisions"

# Where references to decision files may appear, and which files there are text worth reading.
SCAN_DIRS = ("docs", "python", "src", "include", "tests", "tools", "benchmarks", "examples", ".ci")
SCAN_FILES = ("README.md", "CMakeLists.txt", "run.sh", "pyproject.toml")
TEXT_SUFFIXES = {".md", ".py", ".pyi", ".cpp", ".cc", ".c", ".h", ".hpp", ".inc", ".yaml", ".yml", ".toml", ".txt",
                 ".sh", ".cmake", ".cfg", ".ini", ".json"}
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis", "node_modules", "data"}

LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DECISION_PATH = re.compile(r"docs/decisions/([A-Za-z0-9_.\-]+\.md)")
# docs/decisions.md or a bare decisions.md (as in `decisions.md, "Title"`), not docs/decisions/<file>.md.
OLD_FILE = re.compile(r"(?<![\w/.-])(?:docs/|\.\./)?decisions\.md\b")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)


def _text_files():
    for name in SCAN_FILES:
        path = ROOT / name
        if path.is_file():
            yield path
    for top in SCAN_DIRS:
        base = ROOT / top
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
            for name in filenames:
                path = Path(dirpath, name)
                if path.suffix in TEXT_SUFFIXES:
                    yield path


def _markdown_files():
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


@functools.lru_cache(maxsize=None)
def _read(path):
    return path.read_text(encoding="utf-8", errors="replace")


def _without_code(text):
    """The Markdown text with fenced blocks and code spans blanked (newlines kept, so line numbers stay right)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return CODE_SPAN.sub(blank, FENCE.sub(blank, text))


def _line(text, pos):
    return text.count("\n", 0, pos) + 1


def _decision_files():
    return sorted(p for p in DECISIONS.glob("*.md") if p.name != "README.md")


def test_relative_markdown_links_exist():
    broken = []
    for md in _markdown_files():
        text = _without_code(_read(md))
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # http:, https:, mailto:, in-page anchors
            path = target.split("#", 1)[0]
            if not path:
                continue
            resolved = (md.parent / path).resolve()
            if not resolved.is_relative_to(ROOT):
                continue  # outside the repository (README's ../shared/DESIGN.md): the checkout's surroundings
            if not resolved.exists():
                broken.append(f"{md.relative_to(ROOT)}:{_line(text, m.start())}: {target}")
    assert not broken, "relative links to missing files:\n" + "\n".join(broken)


def test_mentioned_decision_files_exist():
    missing = []
    for path in _text_files():
        text = _read(path)
        if "docs/decisions/" not in text:
            continue
        for m in DECISION_PATH.finditer(text):
            if not (DECISIONS / m.group(1)).is_file():
                missing.append(f"{path.relative_to(ROOT)}:{_line(text, m.start())}: docs/decisions/{m.group(1)}")
    assert not missing, "mentions of decision files that do not exist:\n" + "\n".join(missing)


def test_nothing_points_at_the_old_decisions_file():
    pointer = ROOT / "docs" / "decisions.md"
    stale = []
    for path in _text_files():
        if path == pointer or path == Path(__file__).resolve():
            continue
        text = _read(path)
        if "decisions.md" not in text:
            continue
        for m in OLD_FILE.finditer(text):
            stale.append(f"{path.relative_to(ROOT)}:{_line(text, m.start())}")
    assert not stale, ("these still cite docs/decisions.md; name the file under docs/decisions/ instead:\n"
                       + "\n".join(stale))


@pytest.mark.parametrize("path", _decision_files(), ids=lambda p: p.name)
def test_decision_file_has_status_and_revisit(path):
    lines = _read(path).splitlines()
    assert lines and lines[0].startswith("# ") and lines[0][2:].strip(), f"{path.name}: the first line is not a title"
    header = lines[:12]  # the title, a blank line, Status and Revisit when (each possibly wrapped), a blank line
    assert any(re.match(r"Status: \S", line) for line in header), f"{path.name}: no 'Status:' line in its header"
    assert any(re.match(r"Revisit when: \S", line) for line in header), \
        f"{path.name}: no 'Revisit when:' line in its header"


def test_the_index_lists_every_decision_file_once():
    text = _read(DECISIONS / "README.md")
    linked = re.findall(r"^\| \[[^\]]*\]\(([^)/]+)\) \|", text, re.M)  # each row's first cell
    files = [p.name for p in _decision_files()]
    assert sorted(set(linked)) == files, (
        f"not in the index: {sorted(set(files) - set(linked))}; "
        f"in the index but not a file: {sorted(set(linked) - set(files))}")
    twice = sorted({name for name in linked if linked.count(name) > 1})
    assert not twice, f"listed more than once: {twice}"
