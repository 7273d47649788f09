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
