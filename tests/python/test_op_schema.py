"""The op schema (src/ops/schema/ops.yaml) is the one list of C++ ops, and every surface agrees with it.

A row that lacks a surface fails here: a public function that is missing or undocumented, an export mapping that
has no emitter (or an emitter for an op the schema says is not exported), a generated binding without its
docstring, a family file that does not exist. (Registration is checked by the core itself: an op of the schema
that no family registers makes the first op call raise, naming it.) docs/adding_an_op.md."""
import os
import subprocess
import sys

import pytest

import kiln
from kiln import _core, ops
from kiln.ops import _schema
from kiln.train import _mindir_export, _onnx_ops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = _schema.rows()


def test_schema_is_the_op_list():
    assert [r["name"] for r in ROWS] == list(_core.op_names())
    assert len({r["op"] for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("r", ROWS, ids=[r["name"] for r in ROWS])
def test_every_op_is_registered_and_documented(r):
    info = _core.op_info(r["name"])
    assert info["has_infer"] or "view" in r["traits"] or "control_flow" in r["traits"] or \
        "collective" in r["traits"] or "inplace" in r["traits"] or info["has_cpu_kernel"], r
    assert len(r["doc"]) >= 10
    assert info["side_effect"] == bool({"side_effect", "random", "collective", "control_flow"} & set(r["traits"]))
    if "inplace" in r["traits"]:
        assert r["writes"], r["name"]
    else:
        assert r["writes"] == [], r["name"]


@pytest.mark.parametrize("r", ROWS, ids=[r["name"] for r in ROWS])
def test_python_surface(r):
    """The public function the schema names exists in kiln.ops and has a docstring; internal ops have none."""
    py = r["python"]
    if py.startswith("none: "):
        assert len(py) > len("none: ") + 5, f"{r['name']}: say why it has no public function"
        return
    assert "internal" not in r["traits"], f"{r['name']} is internal but names a public function {py}"
    fn = getattr(ops, py, None)
    assert callable(fn), f"{r['name']}: kiln.ops.{py} does not exist"
    assert fn.__doc__ and len(fn.__doc__.strip()) > 20, f"kiln.ops.{py} has no docstring"


@pytest.mark.parametrize("r", [r for r in ROWS if r["signature"]], ids=[r["name"] for r in ROWS if r["signature"]])
def test_generated_binding(r):
    """Ops with a generated signature have their binding kiln._core.<api> with the schema's doc, and compute."""
    fn = getattr(_core, r["api"])
    assert r["doc"] in " ".join(fn.__doc__.split()), fn.__doc__
    x = kiln.Tensor([3, 5]) if r["dtype"] == "integer" else kiln.Tensor([0.25, 0.5])
    out = fn(x) if r["signature"] == "unary" else fn(x, x)
    assert tuple(out.shape) == (2,)


def test_generated_binary_names_the_op_in_errors():
    with pytest.raises(ValueError, match="Add"):
        _core.add(kiln.Tensor([1.0, 2.0]), kiln.Tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("fmt, emitters", [("onnx", _onnx_ops.EMITTERS), ("mindir", _mindir_export.EMITTERS)])
def test_export_tables_are_the_schema(fmt, emitters):
    """Each op is exported (an emitter) exactly when the schema gives it a mapping, else the schema says why not."""
    table = _schema.export_table(fmt)
    names = {r["name"] for r in ROWS}
    assert set(table) == set(emitters) & names, (sorted(set(table) - set(emitters)), sorted(set(emitters) & names -
                                                                                             set(table)))
    # Emitter keys that are not Kiln ops would be dead code.
    assert set(emitters) <= names, sorted(set(emitters) - names)
    for r in ROWS:
        if r["name"] not in table:
            assert _schema.refusal(fmt, r["name"])


def test_onnx_refusal_reason_in_error(tmp_path):
    def fn(x):
        return x + ops.randn(x.shape)
    with pytest.raises(ValueError, match=r"no ONNX mapping in Kiln \(random ops are not exported"):
        kiln.export(_Fn(fn), kiln.Tensor([[1.0, 2.0]]), file_name=str(tmp_path / "n"), file_format="ONNX")


class _Fn(kiln.nn.Cell):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, x):
        return self.fn(x)


@pytest.mark.parametrize("r", ROWS, ids=[r["name"] for r in ROWS])
def test_family_file_exists(r):
    here = [os.path.join(ROOT, "src", d, r["family"] + ".cpp") for d in ("ops", "graph")]
    if not os.path.isdir(os.path.join(ROOT, "src")):
        pytest.skip("no source tree beside the tests")
    assert any(os.path.exists(p) for p in here), f"{r['name']}: family {r['family']} has no file {here}"


def _gen(tmp_path, text):
    path = tmp_path / "ops.yaml"
    path.write_text(text)
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_ops.py"), "--schema", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)


_GOOD = """
- op: Foo
  family: elementwise_unary
  traits: [elementwise]
  signature: unary
  api: foo
  dtype: float
  kernel: run_float<FooF>
  bprop: null
  python: foo
  onnx: Foo
  mindir: Foo
  doc: "foo(x), a test row"
"""


@pytest.mark.parametrize("change, message", [
    (("  onnx: Foo\n", ""), "missing field 'onnx'"),
    (("  onnx: Foo\n", "  onnx: none\n"), "without a reason"),
    (("  traits: [elementwise]\n", "  traits: [elementwize]\n"), "unknown trait"),
    (("  dtype: float\n", ""), "signature unary needs 'dtype'"),
    (("  dtype: float\n", "  dtype: floaty\n"), "dtype must be one of"),
    (("  api: foo\n", "  api: foo\n  colour: red\n"), "unknown field"),
    (("  traits: [elementwise]\n", "  traits: [inplace]\n"), "'writes'"),
])
def test_generator_rejects_bad_rows(tmp_path, change, message):
    if not os.path.exists(os.path.join(ROOT, "tools", "gen_ops.py")):
        pytest.skip("no source tree beside the tests")
    pytest.importorskip("yaml")
    assert _gen(tmp_path, _GOOD).returncode == 0
    r = _gen(tmp_path, _GOOD.replace(*change))
    assert r.returncode == 1 and ("op Foo" in r.stderr or "(Foo)" in r.stderr), r.stderr
    assert message in r.stderr, r.stderr


def test_generator_rejects_a_duplicate(tmp_path):
    if not os.path.exists(os.path.join(ROOT, "tools", "gen_ops.py")):
        pytest.skip("no source tree beside the tests")
    pytest.importorskip("yaml")
    r = _gen(tmp_path, _GOOD + _GOOD)
    assert r.returncode == 1 and "defined twice" in r.stderr, r.stderr
