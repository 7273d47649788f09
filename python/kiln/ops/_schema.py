"""Kiln's op schema (src/ops/schema/ops.yaml) as compiled into the core, for the Python surfaces derived from it.

`rows()` gives one dict per C++ op (kiln._core.op_schema(): name, op, family, traits, writes, signature, api, dtype,
python, onnx, mindir, doc). The export tables read their coverage from it: `export_table("onnx")` is {op name: the ONNX
operators it becomes} for every op that ONNX export writes, and `refusal("onnx", name)` is the schema's reason for an
op that export refuses ("none: <reason>"). tests/python/test_op_schema.py checks that the emitters, the public
functions and the registry match the schema. docs/adding_an_op.md says how a row is added.
"""
import functools

from .._loader import _core

__all__ = ["rows", "row", "export_table", "refusal", "EXPORT_FORMATS"]

EXPORT_FORMATS = ("onnx", "mindir")


@functools.lru_cache(maxsize=None)
def _rows():
    return tuple(_core.op_schema())


def rows():
    """Every op's schema row (a list of dicts, in OpId order; the dicts are shared: do not modify them)."""
    return list(_rows())


@functools.lru_cache(maxsize=None)
def _by_name():
    return {r["name"]: r for r in _rows()}


def row(name):
    """The schema row of the op named `name` (MindSpore's primitive name, as in graphs). KeyError if none."""
    return _by_name()[name]


def _declared(fmt):
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"export format must be one of {EXPORT_FORMATS}, got {fmt!r}")
    return fmt


def export_table(fmt):
    """{op name: what it is exported as} for the ops that export to `fmt` ("onnx" or "mindir") writes."""
    _declared(fmt)
    return {r["name"]: r[fmt] for r in _rows() if not r[fmt].startswith("none: ")}


def refusal(fmt, name):
    """The schema's reason why export to `fmt` refuses op `name`, or None (exported, or not a schema op)."""
    _declared(fmt)
    r = _by_name().get(name)
    if r is None or not r[fmt].startswith("none: "):
        return None
    return r[fmt][len("none: "):]
