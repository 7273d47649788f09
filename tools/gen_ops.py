#!/usr/bin/env python3
"""Generates the C++ sources that derive from Kiln's op schema (src/ops/schema/ops.yaml).

Run by CMake at build time (the `kiln_gen` target) whenever the schema or this script changes:

    python tools/gen_ops.py --schema src/ops/schema/ops.yaml --out <build>/generated

Writes (only files whose text changed, so that an unchanged schema recompiles nothing):
    kiln/op_list.h              KILN_OP(Id, "Name") per op, in schema order: the OpId enum and op names
    kiln/op_schema_table.inc    one OpInfo row per op (include/kiln/op_schema.h): traits, writes, names, export, doc
    kiln/ops_generated.h        declarations of the `signature: unary|binary` ops' C++ API (inside kiln::ops)
    ops_api_generated.cpp       their definitions (kiln::ops::<api> -> apply1(OpId::<op>, ...))
    registry_<family>.inc       per family with generated ops: their OpDef registrations (kernel, dtype rule,
                                bprop), included by the family's register_<family>()
    families.inc                KILN_FAMILY(<family>) per family: the registrars register_all() calls
    fuse_table.inc              KILN_FUSE(<op>, <EwOp>) / KILN_FUSE_ATTR(<op>, "attr", <true>, <false>)
    act_table.inc               KILN_ACT(<op>, <Act>) / KILN_ACT_ATTR(...): the MatMulBiasAct epilogues
    bind_ops_generated.inc      the nanobind bindings kiln._core.<api> of the generated ops, with `doc`

The schema is checked here first: every error names the row and the field (SchemaError, exit status 1).
Needs PyYAML (a build requirement: pyproject.toml, tools/setup_env.sh).
"""
import argparse
import os
import re
import sys

import yaml

TRAITS = ("elementwise", "reduction", "view", "inplace", "side_effect", "random", "collective", "control_flow",
          "internal")
SIGNATURES = ("unary", "binary")
DTYPE_RULES = {"same": "Same", "float": "Float", "promote": "Promote", "promote_float": "PromoteFloat",
               "bool": "Bool", "integer": "Integer"}
REQUIRED = ("op", "family", "doc", "python", "onnx", "mindir")
FIELDS = set(REQUIRED) | {"name", "traits", "writes", "signature", "api", "dtype", "kernel", "bprop", "fuse", "act"}
GENERATED_FIELDS = ("api", "dtype", "kernel", "bprop")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SchemaError(Exception):
    pass


def _c_string(s):
    """A C++ string literal of `s` (UTF-8 bytes escaped as octal where not printable ASCII)."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def _check_declaration(row, field):
    v = row[field]
    if not isinstance(v, str) or not v.strip():
        raise SchemaError(f"op {row['op']}: '{field}' must be a non-empty string (a name or 'none: <reason>')")
    if v.startswith("none") and not re.match(r"^none: \S", v):
        raise SchemaError(f"op {row['op']}: '{field}' declares no mapping without a reason: write 'none: <reason>'")


def _check_attr_choice(row, field):
    v = row[field]
    if isinstance(v, str):
        if not IDENT.match(v):
            raise SchemaError(f"op {row['op']}: '{field}' must be an identifier, got {v!r}")
        return
    if not (isinstance(v, dict) and set(v) == {"attr", "true", "false"}):
        raise SchemaError(f"op {row['op']}: '{field}' must be an identifier or {{attr, true, false}}, got {v!r}")


def load(path):
    with open(path, encoding="utf-8") as f:
        rows = yaml.safe_load(f)
    if not isinstance(rows, list) or not rows:
        raise SchemaError(f"{path}: the schema must be a non-empty list of op rows")
    seen_ops, seen_names, seen_api = set(), set(), set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise SchemaError(f"row {i}: not a mapping")
        for k in REQUIRED:
            if k not in row:
                raise SchemaError(f"row {i} ({row.get('op', '?')}): missing field '{k}'")
        unknown = set(row) - FIELDS
        if unknown:
            raise SchemaError(f"op {row['op']}: unknown field(s) {sorted(unknown)}")
        op = row["op"]
        if not IDENT.match(str(op)):
            raise SchemaError(f"row {i}: op {op!r} is not a C++ identifier")
        row.setdefault("name", op)
        row.setdefault("traits", [])
        row.setdefault("writes", [])
        if op in seen_ops or row["name"] in seen_names:
            raise SchemaError(f"op {op}: defined twice (op or name {row['name']!r})")
        seen_ops.add(op)
        seen_names.add(row["name"])
        if not IDENT.match(row["family"]):
            raise SchemaError(f"op {op}: family {row['family']!r} is not a file stem")
        bad = [t for t in row["traits"] if t not in TRAITS]
        if bad:
            raise SchemaError(f"op {op}: unknown trait(s) {bad}; known: {', '.join(TRAITS)}")
        if bool(row["writes"]) != ("inplace" in row["traits"]):
            raise SchemaError(f"op {op}: 'writes' lists the written inputs exactly when the op has the trait inplace")
        if any(not isinstance(w, int) or not 0 <= w < 32 for w in row["writes"]):
            raise SchemaError(f"op {op}: 'writes' must be input indices in [0, 32)")
        for k in ("python", "onnx", "mindir"):
            _check_declaration(row, k)
        if not isinstance(row["doc"], str) or len(row["doc"]) < 10:
            raise SchemaError(f"op {op}: 'doc' must say what the op computes")
        sig = row.get("signature")
        if sig is not None:
            if sig not in SIGNATURES:
                raise SchemaError(f"op {op}: signature must be one of {SIGNATURES}, got {sig!r}")
            if "view" in row["traits"]:
                if "api" not in row:
                    raise SchemaError(f"op {op}: a generated view op needs 'api'")
            else:
                for k in GENERATED_FIELDS:
                    if k not in row:
                        raise SchemaError(f"op {op}: signature {sig} needs '{k}'")
                if row["dtype"] not in DTYPE_RULES:
                    raise SchemaError(f"op {op}: dtype must be one of {sorted(DTYPE_RULES)}, got {row['dtype']!r}")
            if not IDENT.match(row["api"]) or row["api"] in seen_api:
                raise SchemaError(f"op {op}: api {row['api']!r} is not an identifier or is used twice")
            seen_api.add(row["api"])
        else:
            extra = [k for k in GENERATED_FIELDS if k in row]
            if extra:
                raise SchemaError(f"op {op}: {extra} only apply to rows with a signature")
        for k in ("fuse", "act"):
            if k in row:
                _check_attr_choice(row, k)
                if "elementwise" not in row["traits"]:
                    raise SchemaError(f"op {op}: '{k}' is for elementwise ops (the fused kernels are elementwise)")
    return rows


def _write(path, text, written):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    written.append(path)


HEADER = "// Generated by tools/gen_ops.py from src/ops/schema/ops.yaml. Do not edit: edit the schema.\n"


def _comment(doc, indent=""):
    words, lines, cur = doc.split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > 110:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return "".join(f"{indent}// {ln}\n" for ln in lines)


def _params(row):
    return "const Tensor& x" if row["signature"] == "unary" else "const Tensor& a, const Tensor& b"


def _args(row):
    return "{x}" if row["signature"] == "unary" else "{a, b}"


def generate(rows, out):
    written = []
    families = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
    gen = [r for r in rows if r.get("signature")]

    _write(os.path.join(out, "kiln", "op_list.h"), HEADER +
           "// The single list of Kiln ops: KILN_OP(Id, \"name\"), in schema order. (No include guard: included with\n"
           "// different KILN_OP definitions.) Ops are saved by name, never by number (kiln/graph_io.h).\n" +
           "".join(f'KILN_OP({r["op"]}, "{r["name"]}")\n' for r in rows), written)

    table = []
    for r in rows:
        traits = " | ".join(f"kTrait{''.join(p.title() for p in t.split('_'))}" for t in r["traits"]) or "0"
        writes = sum(1 << w for w in r["writes"])
        table.append("  {%s, %s, %s, %s, %du, %s, %s, %s, %s, %s, %s, %s},\n" % (
            _c_string(r["name"]), _c_string(r["op"]), _c_string(r["family"]), traits, writes,
            _c_string(r.get("signature") or ""), _c_string(r.get("api") or ""), _c_string(r.get("dtype") or ""),
            _c_string(r["python"]),
            _c_string(r["onnx"]), _c_string(r["mindir"]), _c_string(r["doc"])))
    _write(os.path.join(out, "kiln", "op_schema_table.inc"), HEADER + "".join(table), written)

    decl = [HEADER, "// The C++ API of the ops with a generated signature (included by kiln/ops.h inside kiln::ops).\n"]
    for r in gen:
        decl.append(_comment(r["doc"]))
        decl.append(f"Tensor {r['api']}({_params(r)});\n")
    _write(os.path.join(out, "kiln", "ops_generated.h"), "".join(decl), written)

    impl = [HEADER, '#include "kiln/ops.h"\n\nnamespace kiln::ops {\n']
    for r in gen:
        impl.append(f"Tensor {r['api']}({_params(r)}) {{ return apply1(OpId::{r['op']}, {_args(r)}); }}\n")
    impl.append("}  // namespace kiln::ops\n")
    _write(os.path.join(out, "ops_api_generated.cpp"), "".join(impl), written)

    for fam in families:
        regs = [r for r in gen if r["family"] == fam and "view" not in r["traits"]]
        if not regs:
            continue
        body = [HEADER, f"// The registrations of {fam}'s generated ops; included inside its register_{fam}(), "
                        "where the kernels, bprops\n// and schema_infer<> (src/ops/elementwise.h) are visible.\n"]
        for r in regs:
            arity = 1 if r["signature"] == "unary" else 2
            body.append(f"ew::schema_register(OpId::{r['op']}, &ew::schema_infer<OpId::{r['op']}, {arity}, "
                        f"ew::DTypeRule::{DTYPE_RULES[r['dtype']]}>, {r['kernel']}, "
                        f"{r['bprop'] if r['bprop'] else 'nullptr'});\n")
        _write(os.path.join(out, f"registry_{fam}.inc"), "".join(body), written)

    _write(os.path.join(out, "families.inc"), HEADER +
           "".join(f"KILN_FAMILY({f})\n" for f in families), written)

    for field, macro, name in (("fuse", "KILN_FUSE", "fuse_table.inc"), ("act", "KILN_ACT", "act_table.inc")):
        lines = [HEADER]
        for r in rows:
            v = r.get(field)
            if v is None:
                continue
            if isinstance(v, str):
                lines.append(f"{macro}({r['op']}, {v})\n")
            else:
                lines.append(f'{macro}_ATTR({r["op"]}, "{v["attr"]}", {v["true"]}, {v["false"]})\n')
        _write(os.path.join(out, name), "".join(lines), written)

    binds = [HEADER, "// Inside bind_elementwise(m): kiln._core.<api> for each op with a generated signature.\n"]
    for r in gen:
        doc = _c_string(f"{r['name']}: {r['doc']}")
        if r["signature"] == "unary":
            binds.append(f'm.def("{r["api"]}", [](TL x) {{ return ops::{r["api"]}(x); }}, nb::arg("x"), {doc});\n')
        else:
            binds.append(f'm.def("{r["api"]}", [](TL a, TL b) {{ return with_op_name("{r["api"]}", [&] {{ '
                         f'return ops::{r["api"]}(a, b); }}); }}, nb::arg("x"), nb::arg("y"), {doc});\n')
    _write(os.path.join(out, "bind_ops_generated.inc"), "".join(binds), written)
    return written


def outputs(rows):
    """The paths (relative to --out) that `generate` writes: CMake's BYPRODUCTS of the kiln_gen step."""
    fams = []
    for r in rows:
        if r.get("signature") and "view" not in r["traits"] and r["family"] not in fams:
            fams.append(r["family"])
    return (["kiln/op_list.h", "kiln/op_schema_table.inc", "kiln/ops_generated.h", "ops_api_generated.cpp",
             "families.inc", "fuse_table.inc", "act_table.inc", "bind_ops_generated.inc"]
            + [f"registry_{f}.inc" for f in fams])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--schema", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--check", action="store_true", help="only check the schema")
    p.add_argument("--list", action="store_true", help="print the generated files (;-separated, for CMake)")
    p.add_argument("--stamp", help="a file touched after each run (CMake's OUTPUT of the step)")
    a = p.parse_args(argv)
    try:
        rows = load(a.schema)
    except SchemaError as e:
        print(f"gen_ops.py: {a.schema}: {e}", file=sys.stderr)
        return 1
    if a.list:
        print(";".join(os.path.join(a.out, f) for f in outputs(rows)))
        return 0
    if not a.check:
        written = generate(rows, a.out)
        missing = [f for f in outputs(rows) if not os.path.exists(os.path.join(a.out, f))]
        assert not missing, f"outputs() and generate() disagree: {missing}"
        if a.stamp:
            with open(a.stamp, "w", encoding="utf-8") as f:
                f.write("".join(w + "\n" for w in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
