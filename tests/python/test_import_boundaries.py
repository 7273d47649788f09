"""Import boundaries of the Python package (issue 23): kiln.ops never imports kiln.nn — layers call ops, not the
reverse (the losses' formulas live in kiln/ops/_loss_terms.py and the nn loss Cells call them). Checked on the
source (every import statement, at module level or inside functions) so that a lazy import cannot hide a cycle."""
import ast
import os

import pytest

KILN = os.path.join(os.path.dirname(__file__), "..", "..", "python", "kiln")


def _imports(path, package):
    """(line, absolute module name) of every import in the file at `path` (a module of `package`)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return out


def _modules(subpackage):
    root = os.path.join(KILN, subpackage)
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, KILN)[:-3].replace(os.sep, ".")
                package = "kiln." + (rel.rsplit(".", 1)[0] if f != "__init__.py" else rel[:-len(".__init__")])
                yield path, package


@pytest.mark.parametrize("subpackage,forbidden", [("ops", "kiln.nn")])
def test_no_upward_import(subpackage, forbidden):
    bad = [f"{os.path.relpath(path, KILN)}:{line} imports {mod}"
           for path, package in _modules(subpackage) for line, mod in _imports(path, package)
           if mod == forbidden or mod.startswith(forbidden + ".")]
    assert not bad, f"kiln.{subpackage} must not import {forbidden}: " + "; ".join(bad)


def test_the_check_sees_relative_and_lazy_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from .. import nn\n    from ..nn.cell import Cell\n")
    mods = [m for _, m in _imports(str(f), "kiln.ops")]
    assert "kiln.nn" in mods and "kiln.nn.cell" in mods


# ---- One narrow boundary to the C++ core (issue 23 item 3; docs/decisions/core-boundary.md) -------------------------
# The modules that may import kiln._core: kiln/ops (the op surface: it wraps the kernels, and kiln/ops/_kernels.py
# re-exports the raw kernels other code calls), the Tensor class (common/tensor.py and the two modules that attach its
# methods), kiln/_engine.py (the enumerated engine services that are not ops) and the bootstrap (kiln/_loader.py loads
# the extension; kiln/__init__.py imports it first; kiln/_convert.py installs the converter, argument-error and
# Tensor-factory hooks into the core before kiln.ops can load).
CORE_IMPORTERS = {
    "__init__.py", "_loader.py", "_convert.py", "_engine.py",
    "common/tensor.py", "common/_tensor_methods.py", "common/_tensor_extra.py",
}
# Not converted yet: each stays here until it goes through kiln.ops / kiln._engine (the list only shrinks; empty
# since the communication modules were converted).
CORE_IMPORTERS_LEFT = set()


def _all_modules():
    """(path relative to python/kiln with '/', path, package) of every .py file of kiln."""
    for dirpath, _, files in os.walk(KILN):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, KILN).replace(os.sep, "/")
                package = ".".join(["kiln"] + rel.split("/")[:-1])
                yield rel, path, package


def _core_import_lines(path, package):
    """Lines of `path` that import kiln._core in any form: `from .. import _core`, `from .._loader import _core`,
    `from kiln._core import x`, `import kiln._core`, at module level or inside functions."""
    return sorted({line for line, mod in _imports(path, package)
                   if mod in ("kiln._core", "kiln._loader._core") or mod.startswith("kiln._core.")})


def test_only_the_allowed_modules_import_core():
    allowed = CORE_IMPORTERS | CORE_IMPORTERS_LEFT
    importers = {rel: _core_import_lines(path, package) for rel, path, package in _all_modules()}
    importers = {rel: lines for rel, lines in importers.items() if lines}
    bad = [f"{rel}:{lines[0]}" for rel, lines in sorted(importers.items())
           if rel not in allowed and not rel.startswith("ops/")]
    assert not bad, ("kiln._core is imported outside the boundary (call kiln.ops, kiln.ops._kernels for a raw kernel, "
                     "or kiln._engine for an engine service; docs/decisions/core-boundary.md): " + "; ".join(bad))
    stale = sorted(rel for rel in CORE_IMPORTERS_LEFT if rel not in importers)
    assert not stale, f"no longer imports kiln._core: remove from CORE_IMPORTERS_LEFT: {stale}"


def test_the_core_check_sees_every_import_form(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from .. import _core\nfrom .._loader import _core\nimport kiln._core\n"
                 "def g():\n    from kiln._core import mul\n    from numpy import _core\n")
    assert _core_import_lines(str(f), "kiln.nn") == [1, 2, 3, 5]


def test_kernels_and_engine_list_only_what_crosses():
    """kiln/ops/_kernels.py holds only kernels that kiln.ops does not export as the very object (those are called as
    kiln.ops.<name>), and it and kiln/_engine.py hold no name that nothing outside uses."""
    import re
    import kiln
    from kiln import _engine, _core
    from kiln.ops import _kernels
    same = [n for n in vars(_kernels) if not n.startswith("__") and n != "_core"
            and getattr(kiln.ops, n, None) is getattr(_kernels, n)]
    assert not same, f"call these as kiln.ops.<name>, not through kiln.ops._kernels: {same}"
    sources = "\n".join(open(p, encoding="utf-8").read() for rel, p, _ in _all_modules()
                        if rel not in ("_engine.py", "ops/_kernels.py"))
    for mod, alias in ((_kernels, "_kernels"), (_engine, "_engine")):
        names = [n for n in vars(mod) if not n.startswith("__") and n != "_core"]
        unused = [n for n in names if not re.search(rf"\b{alias}\.{n}\b", sources)]
        assert not unused, f"{alias} exports names nothing uses: {unused}"
        wrong = [n for n in names if vars(mod)[n] is not getattr(_core, "__file__" if n == "core_file" else n)]
        assert not wrong, f"{alias}: not kiln._core's object: {wrong}"
