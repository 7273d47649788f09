"""Kiln ops -> ONNX operators (opset 20), for kiln/train/_onnx_export.py.

Each entry of EMITTERS is `emit(w, node)` -> the ONNX names of the node's outputs (w: the OnnxWriter, node: one
node of Graph.describe()). Semantics follow Kiln's op definitions (src/ops/); the ONNX operators' are those of
https://onnx.ai/onnx/operators/ at opset 20. ONNX_OPS says which ONNX operators each Kiln op becomes (docs/export.md
prints it; tests check the two agree). An emitter raises ValueError for an attribute combination ONNX cannot
express (the writer adds the op name and the user's line).
"""
import numpy as np

from ..common import dtype as mstype
from ..ops import _schema
from ._onnx_export import INT64_MAX, INT64_MIN, onnx_dtype

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _out_dtype(w, node, i=0):
    return w.values[node["outputs"][i]]["dtype"]


def _rank(w, vid):
    return len(w.values[vid]["shape"])


# --------------------------------------------------------------------------------------------- elementwise
def _same(op):
    """An ONNX operator with Kiln's semantics: operands in the output's dtype."""
    def emit(w, node):
        dt = _out_dtype(w, node)
        return [w.node(op, [w.name_of(i, as_dtype=dt) for i in node["inputs"]])]
    return emit


def _common_dtype(w, node):
    """Operand dtype of a comparison: a 0-d constant takes the other operand's dtype (Kiln's weak scalars)."""
    from .. import _engine
    a, b = node["inputs"]
    va, vb = w.values[a], w.values[b]
    if va["kind"] == "constant" and not va["shape"]:
        return vb["dtype"]
    if vb["kind"] == "constant" and not vb["shape"]:
        return va["dtype"]
    return _engine.promote_types(va["dtype"], vb["dtype"])


def _compare(op, negate=False):
    def emit(w, node):
        dt = _common_dtype(w, node)
        y = w.node(op, [w.name_of(i, as_dtype=dt) for i in node["inputs"]])
        return [w.node("Not", [y]) if negate else y]
    return emit


def _logical(op):
    def emit(w, node):
        return [w.node(op, [w.name_of(i, as_dtype=mstype.bool_) for i in node["inputs"]])]
    return emit


def _bitwise(op, logical):
    """BitwiseAnd/Or/Xor/Not on integers; on Bool (which ONNX's bitwise operators do not take) the logical one."""
    def emit(w, node):
        dt = _out_dtype(w, node)
        name = logical if dt == mstype.bool_ else op
        return [w.node(name, [w.name_of(i, as_dtype=dt) for i in node["inputs"]])]
    return emit


def _unary_chain(*ops):
    def emit(w, node):
        y = w.name_of(node["inputs"][0], as_dtype=_out_dtype(w, node))
        for op in ops:
            y = w.node(op, [y])
        return [y]
    return emit


def _emit_square(w, node):
    x = w.name_of(node["inputs"][0], as_dtype=_out_dtype(w, node))
    return [w.node("Mul", [x, x])]


def _emit_log1p(w, node):
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)
    return [w.node("Log", [w.node("Add", [x, w.const(np.array(1.0), dt)])])]


def _emit_expm1(w, node):
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)
    return [w.node("Sub", [w.node("Exp", [x]), w.const(np.array(1.0), dt)])]


def _log_base(base):
    """log_base(x) as Div(Log(x), ln base) (ONNX has no Log2/Log10)."""
    def emit(w, node):
        dt = _out_dtype(w, node)
        x = w.name_of(node["inputs"][0], as_dtype=dt)
        return [w.node("Div", [w.node("Log", [x]), w.const(np.array(np.log(base)), dt)])]
    return emit


def _emit_erfc(w, node):
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)
    return [w.node("Sub", [w.const(np.array(1.0), dt), w.node("Erf", [x])])]


def _emit_floor_div(w, node):
    dt = _out_dtype(w, node)
    a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    if dt in _FLOATS:
        return [w.node("Floor", [w.node("Div", [a, b])])]
    # integers: (a - floor_mod(a, b)) / b divides exactly, so ONNX's truncating Div gives the floor
    return [w.node("Div", [w.node("Sub", [a, w.node("Mod", [a, b], fmod=0)]), b])]


def _emit_floor_mod(w, node):
    dt = _out_dtype(w, node)
    a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    if dt in _FLOATS:  # a - floor(a / b) * b: the sign of b (Python's %), as Kiln's FloorMod
        return [w.node("Sub", [a, w.node("Mul", [w.node("Floor", [w.node("Div", [a, b])]), b])])]
    return [w.node("Mod", [a, b], fmod=0)]


def _emit_atan2(w, node):
    """ONNX has no Atan2: Atan(min(|y|, |x|)/max(|y|, |x|)) and the quadrant with Where, as Kiln's composite formula
    (0 at (0, 0), ±π/4·(1 or 3) for two infinities). Signed zeros are not seen (Less(−0, 0) is false): atan2(±0, −0)
    gives 0 and atan2(−0, x) gives +0 or π."""
    dt = _out_dtype(w, node)
    y, x = (w.name_of(i, as_dtype=dt) for i in node["inputs"])

    def c(v):
        return w.const(np.array(v), dt)
    ax, ay = w.node("Abs", [x]), w.node("Abs", [y])
    y_big = w.node("Greater", [ay, ax])
    hi, lo = w.node("Where", [y_big, ay, ax]), w.node("Where", [y_big, ax, ay])
    zero = w.node("Equal", [hi, c(0.0)])
    both_inf = w.node("Equal", [lo, c(np.inf)])
    den = w.node("Where", [w.node("Or", [zero, both_inf]), c(1.0), hi])
    num = w.node("Where", [zero, c(0.0), w.node("Where", [both_inf, c(1.0), lo])])
    t = w.node("Atan", [w.node("Div", [num, den])])
    t = w.node("Where", [y_big, w.node("Sub", [c(np.pi / 2), t]), t])
    t = w.node("Where", [w.node("Less", [x, c(0.0)]), w.node("Sub", [c(np.pi), t]), t])
    return [w.node("Where", [w.node("Less", [y, c(0.0)]), w.node("Neg", [t]), t])]


_GILES_A = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
            -0.00417768164, 0.246640727, 1.50140941)
_GILES_B = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
            0.00943887047, 1.00167406, 2.83297682)


def _emit_erfinv(w, node):
    """ONNX has no erfinv: Giles' single-precision polynomials (the float32 kernel's formula, Note [vectorized
    erfinv] in src/ops/vmath.h) written out; float64 models get float32 accuracy (~4e-7 relative)."""
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)

    def c(v):
        return w.const(np.array(v), dt)

    def horner(coefs, t):
        acc = c(coefs[0])
        for k in coefs[1:]:
            acc = w.node("Add", [w.node("Mul", [acc, t]), c(k)])
        return acc
    one = c(1.0)
    lw = w.node("Neg", [w.node("Log", [w.node("Mul", [w.node("Sub", [one, x]), w.node("Add", [one, x])])])])
    p = horner(_GILES_A, w.node("Sub", [lw, c(2.5)]))
    q = horner(_GILES_B, w.node("Sub", [w.node("Sqrt", [lw]), c(3.0)]))
    y = w.node("Mul", [w.node("Where", [w.node("Less", [lw, c(5.0)]), p, q]), x])
    edge = w.node("Equal", [w.node("Abs", [x]), one])
    return [w.node("Where", [edge, w.node("Mul", [x, c(np.inf)]), y])]


def _float_or_alias(emit_float):
    """An emitter for an op that rounds floats and leaves integers unchanged (Round, Trunc): ONNX's rounding
    operators take floats only."""
    def emit(w, node):
        dt = _out_dtype(w, node)
        x = w.name_of(node["inputs"][0], as_dtype=dt)
        return [emit_float(w, x, dt) if dt in _FLOATS else x]
    return emit


def _trunc(w, x, dt):
    # toward zero: Ceil below 0, Floor elsewhere (-0.5 -> -0, as Kiln's std::trunc)
    return w.node("Where", [w.node("Less", [x, w.const(np.array(0.0), dt)]), w.node("Ceil", [x]), w.node("Floor", [x])])


def _emit_sinc(w, node):
    """sin(pi x)/(pi x), 1 at 0; pi x formed in the output dtype, as Kiln's Sinc kernel."""
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)
    y = w.node("Mul", [x, w.const(np.array(np.pi), dt)])
    s = w.node("Div", [w.node("Sin", [y]), y])
    return [w.node("Where", [w.node("Equal", [x, w.const(np.array(0.0), dt)]), w.const(np.array(1.0), dt), s])]


def _emit_copysign(w, node):
    """|a| with b's sign bit, as Kiln's Copysign (C's and NumPy's copysign): b < 0, or b = −0.0 (found as
    1/b = −inf): Mul(Abs(a), 1 − 2·Cast(Or(Less(b, 0), Less(Reciprocal(b), 0)))). ONNX has no bit cast, so a NaN b counts as positive whatever its sign bit."""
    dt = _out_dtype(w, node)
    a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    mag = w.node("Abs", [a])
    zero = w.const(np.array(0.0), dt)
    neg = w.node("Or", [w.node("Less", [b, zero]), w.node("Less", [w.node("Reciprocal", [b]), zero])])
    # |a| * (1 - 2 [b negative]), not a Where: onnxruntime's Where drops the sign of a selected -0.0, which would
    # lose copysign(0, -1) = -0.0
    flag = w.node("Cast", [neg], to=onnx_dtype(dt))
    sgn = w.node("Sub", [w.const(np.array(1.0), dt), w.node("Mul", [w.const(np.array(2.0), dt), flag])])
    return [w.node("Mul", [mag, sgn])]


def _emit_xlogy(w, node):
    """x·log(y), 0 where x = 0 and y is not NaN (SciPy's xlogy, as Kiln's Xlogy)."""
    dt = _out_dtype(w, node)
    x, y = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    zero = w.const(np.array(0.0), dt)
    keep0 = w.node("And", [w.node("Equal", [x, zero]), w.node("Not", [w.node("IsNaN", [y])])])
    return [w.node("Where", [keep0, zero, w.node("Mul", [x, w.node("Log", [y])])])]


def _emit_truncate_div(w, node):
    """a / b rounded toward zero: Trunc(Div) on floats; ONNX's integer Div truncates already (a zero integer
    divisor, which Kiln maps to the dtype's limits, is left to the runtime)."""
    dt = _out_dtype(w, node)
    a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    q = w.node("Div", [a, b])
    return [_trunc(w, q, dt) if dt in _FLOATS else q]


def _fmax_fmin(op):
    """Max/Min that ignore a NaN operand (NaN only when both are), as Kiln's Fmax/Fmin."""
    def emit(w, node):
        dt = _out_dtype(w, node)
        a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
        m = w.node(op, [a, b])
        if dt not in _FLOATS:
            return [m]
        return [w.node("Where", [w.node("IsNaN", [b]), a, w.node("Where", [w.node("IsNaN", [a]), b, m])])]
    return emit


def _emit_heaviside(w, node):
    """0 below 0 (and at NaN), 1 above, `values` at 0, as Kiln's Heaviside."""
    dt = _out_dtype(w, node)
    x, v = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    zero, one = w.const(np.array(0.0), dt), w.const(np.array(1.0), dt)
    y = w.node("Where", [w.node("Greater", [x, zero]), one, w.node("Where", [w.node("Equal", [x, zero]), v, zero])])
    return [y]


def _emit_select(w, node):
    c, x, y = node["inputs"]
    dt = _out_dtype(w, node)
    return [w.node("Where", [w.name_of(c, as_dtype=mstype.bool_), w.name_of(x, as_dtype=dt),
                             w.name_of(y, as_dtype=dt)])]


def _emit_gelu(w, node):
    x = w.name_of(node["inputs"][0])
    return [w.node("Gelu", [x], approximate="tanh" if node["attrs"].get("approximate", True) else "none")]


def _emit_hsigmoid(w, node):
    """relu6(x + 3)/6 = ONNX HardSigmoid with alpha 1/6, beta 0.5 (max(0, min(1, x/6 + 1/2)))."""
    dt = _out_dtype(w, node)
    return [w.node("HardSigmoid", [w.name_of(node["inputs"][0], as_dtype=dt)], alpha=1.0 / 6.0, beta=0.5)]


def _emit_selu(w, node):
    """ONNX Selu with the SeLU constants of Kiln's kernel (MindSpore's: alpha 1.67326..., scale 1.05070...)."""
    dt = _out_dtype(w, node)
    return [w.node("Selu", [w.name_of(node["inputs"][0], as_dtype=dt)], alpha=1.6732632423543772848170429916717,
                   gamma=1.0507009873554804934193349852946)]


def _emit_logsigmoid(w, node):
    """log sigmoid(x) = -softplus(-x): Neg(Softplus(Neg x)) (ONNX has no LogSigmoid)."""
    dt = _out_dtype(w, node)
    x = w.name_of(node["inputs"][0], as_dtype=dt)
    return [w.node("Neg", [w.node("Softplus", [w.node("Neg", [x])])])]


def _emit_cast(w, node):
    return [w.node("Cast", [w.name_of(node["inputs"][0])], to=onnx_dtype(node["attrs"]["dtype"]))]


def _alias(w, node):
    return [w.name_of(node["inputs"][0])]


def _dropped_print(w, node):
    """Print (and the summary ops, which issue it) is dropped: an inference graph prints nothing. Its output, a 0-d
    Int32 0 that a depend may consume, becomes a constant."""
    return [w.const(np.zeros((), np.int32), mstype.int32)]


def _softmax(op):
    def emit(w, node):
        return [w.node(op, [w.name_of(node["inputs"][0])], axis=int(node["attrs"]["axis"]))]
    return emit


# --------------------------------------------------------------------------------------------- reductions
def _reduce(op):
    def emit(w, node):
        x = node["inputs"][0]
        axis = [int(a) for a in node["attrs"]["axis"]] or list(range(_rank(w, x)))
        if not axis:  # a 0-d input: nothing to reduce
            return [w.node("Identity", [w.name_of(x)])]
        return [w.node(op, [w.name_of(x), w.ints(axis)], keepdims=int(bool(node["attrs"]["keep_dims"])))]
    return emit


def _nonzero(op):
    """CountNonZero: ReduceSum of Cast(Cast(x, bool), int64) (ONNX's cast to bool: nonzero, NaN included, is
    true); ReduceAny: that count > 0; ReduceAll: the count of zeros (Not) == 0 (both right for an empty axis)."""
    def emit(w, node):
        x = node["inputs"][0]
        keep = int(bool(node["attrs"]["keep_dims"]))
        axis = [int(a) for a in node["attrs"]["axis"]] or list(range(_rank(w, x)))
        flags = w.name_of(x, as_dtype=mstype.bool_)
        if op == "ReduceAll":
            flags = w.node("Not", [flags])
        count = w.node("Cast", [flags], to=onnx_dtype(mstype.int64))
        if axis:  # (a 0-d input: nothing to reduce)
            count = w.node("ReduceSum", [count, w.ints(axis)], keepdims=keep)
        if op == "CountNonZero":
            return [count]
        zero = w.const(np.array(0), mstype.int64)
        return [w.node("Greater", [count, zero]) if op == "ReduceAny" else w.node("Equal", [count, zero])]
    return emit


def _arg(op):
    def emit(w, node):
        a = node["attrs"]
        x = w.name_of(node["inputs"][0])
        axis = int(a["axis"])
        if not a.get("has_axis", True):  # over the flattened tensor
            x, axis = w.node("Reshape", [x, w.ints([-1])]), 0
        y = w.node(op, [x], axis=axis, keepdims=int(bool(a["keep_dims"])), select_last_index=0)
        dt = _out_dtype(w, node)
        return [y if dt == mstype.int64 else w.node("Cast", [y], to=onnx_dtype(dt))]
    return emit


def _emit_argsort(w, node):
    """ArgSort -> TopK over the whole axis (largest = descending)."""
    x = node["inputs"][0]
    axis = int(node["attrs"]["axis"])
    n = w.values[x]["shape"][axis]
    if w.shape_of(x)[axis] is None:
        raise ValueError("the sorted axis is dynamic")
    _, idx = w.node("TopK", [w.name_of(x), w.ints([n])], n_out=2, axis=axis,
                    largest=int(bool(node["attrs"]["descending"])), sorted=1)
    dt = _out_dtype(w, node)
    return [idx if dt == mstype.int64 else w.node("Cast", [idx], to=onnx_dtype(dt))]


# --------------------------------------------------------------------------------------------- shapes
def _emit_reshape(w, node):
    out = node["outputs"][0]
    shape = w.shape_of(out)
    target = w.shape_tensor(out, allow_infer=True)
    return [w.node("Reshape", [w.name_of(node["inputs"][0]), target], allowzero=int(0 in shape))]


def _emit_transpose(w, node):
    return [w.node("Transpose", [w.name_of(node["inputs"][0])], perm=[int(p) for p in node["attrs"]["perm"]])]


def _emit_broadcast_to(w, node):
    return [w.node("Expand", [w.name_of(node["inputs"][0]), w.shape_tensor(node["outputs"][0])])]


def _emit_concat(w, node):
    return [w.node("Concat", [w.name_of(i, as_dtype=_out_dtype(w, node)) for i in node["inputs"]],
                   axis=int(node["attrs"]["axis"]))]


def _emit_strided_slice(w, node):
    """Kiln's StridedSlice holds resolved Python slice bounds per axis (an end of -1 with a negative step means
    "through index 0"). A bound that differs between the traces of a dynamic export is written relative to the axis
    end when that fits (x[:-1]), else as a run-time value (w.dim_expr: an RNN's t * batch steps)."""
    x = node["inputs"][0]
    attrs = [d["nodes"][w.index]["attrs"] for d in w.descs]
    dims = list(zip(*w.traces(x)))
    starts, ends, axes, steps = [], [], [], []
    for i, step in enumerate(node["attrs"]["step"]):
        step = int(step)
        start = _bound(w, [a["begin"][i] for a in attrs], dims[i], "start", i)
        ends_i = [a["end"][i] for a in attrs]
        if step < 0 and all(e < 0 for e in ends_i):
            end = INT64_MIN  # through index 0
        else:
            end = _bound(w, ends_i, dims[i], "end", i)
        static = len(set(dims[i])) == 1
        if step == 1 and start == 0 and (end == INT64_MAX or (static and isinstance(end, int) and end >= dims[i][0])):
            continue  # the whole axis
        starts.append(start), ends.append(end), axes.append(i), steps.append(step)
    if not axes:
        return [w.node("Identity", [w.name_of(x)])]
    return [w.node("Slice", [w.name_of(x), w.index_vector(starts), w.index_vector(ends), w.ints(axes),
                             w.ints(steps)])]


def _bound(w, vals, dims, what, axis):
    """A slice bound from its values in the traces: the index when equal; else counted from the axis end
    (INT64_MAX for the end itself) when that is equal; else a run-time expression of a dynamic dimension."""
    if len(set(vals)) == 1:
        return int(vals[0])
    rel = {v - d for v, d in zip(vals, dims)}
    if len(rel) == 1:
        r = rel.pop()
        return INT64_MAX if r == 0 else int(r)
    e = w.dim_expr(vals)
    if e is None:
        raise ValueError(f"the slice {what} on axis {axis} depends on a dynamic size in a way ONNX export cannot "
                         "express")
    return e


def _emit_gather(w, node):
    x, idx = node["inputs"]
    return [w.node("Gather", [w.name_of(x), w.name_of(idx)], axis=int(node["attrs"]["axis"]))]


def _emit_gather_d(w, node):
    """GatherD (take_along_axis: gather_elements, sort/topk values) = GatherElements (negative indices count from
    the end in both)."""
    x, idx = node["inputs"]
    return [w.node("GatherElements", [w.name_of(x), w.name_of(idx)], axis=int(node["attrs"]["dim"]))]


def _emit_scatter_update(w, node):
    x, idx, upd = node["inputs"]
    idx = w.name_of(idx, as_dtype=mstype.int64)
    return [w.node("ScatterND", [w.name_of(x), idx, w.name_of(upd, as_dtype=_out_dtype(w, node))])]


def _emit_scatter_reduce(w, node):
    """TensorScatterReduce: ScatterND with ONNX's reduction (opset 16/18: add, mul, max, min; repeats combine in
    turn, as Kiln's kernel); sub as add of Neg(updates); div as Div(x, ScatterND(ones, reduction mul)) (x divided
    by the product of its updates: Kiln's value for floats; integers truncate, as ONNX's Div on integers)."""
    x, idx, upd = node["inputs"]
    red = node["attrs"]["reduction"]
    dt = _out_dtype(w, node)
    ix = w.name_of(idx, as_dtype=mstype.int64)
    u = w.name_of(upd, as_dtype=dt)
    if red == "sub":
        return [w.node("ScatterND", [w.name_of(x, as_dtype=dt), ix, w.node("Neg", [u])], reduction="add")]
    if red == "div":
        ones = w.node("ConstantOfShape", [w.node("Shape", [w.name_of(x)])],
                      value=w.helper.make_tensor("one", onnx_dtype(dt), [1], [1]))
        return [w.node("Div", [w.name_of(x, as_dtype=dt), w.node("ScatterND", [ones, ix, u], reduction="mul")])]
    return [w.node("ScatterND", [w.name_of(x, as_dtype=dt), ix, u], reduction=red)]


def _emit_scatter_elements(w, node):
    """TensorScatterElements: ONNX ScatterElements (reduction none/add; negative indices count from the end in
    both). The slices form (index_add, index_fill) expands its 1-D index along the axis to the updates' shape (and
    index_fill's 0-d value to that shape) first."""
    x, idx, upd = node["inputs"]
    a = node["attrs"]
    rank = _rank(w, x)
    ax = int(a["axis"]) % rank
    dt = _out_dtype(w, node)
    ix = w.name_of(idx, as_dtype=mstype.int64)
    u = w.name_of(upd, as_dtype=dt)
    red = "add" if a["reduction"] == "add" else "none"
    if a.get("slices"):
        shape = list(w.values[x]["shape"])
        m = int(np.prod(w.values[idx]["shape"], dtype=np.int64))
        if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
            raise ValueError("the slices form of TensorScatterElements needs a static input shape for ONNX export")
        shape[ax] = m
        col = [1] * rank
        col[ax] = m
        target = w.ints(shape)
        ix = w.node("Expand", [w.node("Reshape", [ix, w.ints(col)]), target])
        if red == "none":
            u = w.node("Expand", [u, target])
    return [w.node("ScatterElements", [w.name_of(x, as_dtype=dt), ix, u], axis=ax, reduction=red)]


# --------------------------------------------------------------------------------------------- matmul, nn
def _emit_matmul(w, node):
    a, b = node["inputs"]
    dt = _out_dtype(w, node)
    names = []
    for vid, flag in ((a, "transpose_a"), (b, "transpose_b")):
        n = w.name_of(vid, as_dtype=dt)
        if node["attrs"].get(flag):
            r = _rank(w, vid)
            n = w.node("Transpose", [n], perm=list(range(r - 2)) + [r - 1, r - 2])
        names.append(n)
    return [w.node("MatMul", names)]


def _static_spatial(w, vid, what):
    """ValueError when the spatial (H, W) sizes of value `vid` are dynamic: `what` is computed from them."""
    if None in w.shape_of(vid)[2:]:
        raise ValueError(f"{what} depends on the input's height and width, which are dynamic; export with fixed "
                         "spatial sizes")


def _onnx_pads(pad):
    """Kiln's [top, bottom, left, right] -> ONNX's [top, left, bottom, right]."""
    t, b, l, r = (int(p) for p in pad)
    return [t, l, b, r]


def _emit_conv2d(w, node):
    x, wt = node["inputs"]
    a = node["attrs"]
    return [w.node("Conv", [w.name_of(x), w.name_of(wt)], strides=list(a["stride"]), pads=_onnx_pads(a["pad"]),
                   dilations=list(a["dilation"]), group=int(a["groups"]))]


def _emit_conv_transpose(w, node):
    """Conv2DBackpropInput (the gradient of Conv2D by its input: Conv2dTranspose) -> ConvTranspose, with
    output_padding for the rows/columns the stride leaves over (input_shape is the result's shape)."""
    dy, wt = node["inputs"]
    _static_spatial(w, dy, "the output size of a transposed convolution")
    a = node["attrs"]
    stride, dil, pad = list(a["stride"]), list(a["dilation"]), _onnx_pads(a["pad"])
    k = w.values[wt]["shape"][2:]
    out_hw = w.values[node["outputs"][0]]["shape"][2:]
    in_hw = w.values[dy]["shape"][2:]
    extra = []
    for i in range(2):
        base = stride[i] * (in_hw[i] - 1) + (k[i] - 1) * dil[i] + 1 - pad[i] - pad[i + 2]
        extra.append(int(out_hw[i] - base))
    if any(e < 0 or e >= max(stride[i], dil[i]) for i, e in enumerate(extra)):
        raise ValueError(f"output size {list(out_hw)} is not reachable by ConvTranspose")
    return [w.node("ConvTranspose", [w.name_of(dy), w.name_of(wt)], strides=stride, pads=pad, dilations=dil,
                   group=int(a["groups"]), output_padding=extra)]


def _emit_max_pool(w, node):
    a = node["attrs"]
    x = node["inputs"][0]
    attrs = dict(kernel_shape=list(a["kernel"]), strides=list(a["stride"]), pads=_onnx_pads(a["pad"]),
                 dilations=list(a.get("dilation", [1, 1])), ceil_mode=int(bool(a.get("ceil_mode"))))
    if not a.get("return_indices"):
        return [w.node("MaxPool", [w.name_of(x)], **attrs)]
    y, idx = w.node("MaxPool", [w.name_of(x)], n_out=2, **attrs)
    # ONNX's indices count over the whole NCHW tensor; Kiln's within each (n, c) plane (h * W + w).
    _static_spatial(w, x, "the plane size of max-pool indices")
    h, wd = w.values[x]["shape"][2:]
    idx = w.node("Mod", [idx, w.ints([h * wd])], fmod=0)
    dt = _out_dtype(w, node, 1)
    return [y, idx if dt == mstype.int64 else w.node("Cast", [idx], to=onnx_dtype(dt))]


def _emit_avg_pool(w, node):
    a = node["attrs"]
    x = node["inputs"][0]
    d = int(a.get("divisor_override") or 0)
    if d and a.get("ceil_mode"):
        raise ValueError("divisor_override with ceil_mode has no ONNX AveragePool equivalent")
    y = w.node("AveragePool", [w.name_of(x)], kernel_shape=list(a["kernel"]), strides=list(a["stride"]),
               pads=_onnx_pads(a["pad"]), ceil_mode=int(bool(a.get("ceil_mode"))),
               count_include_pad=int(bool(a.get("count_include_pad", True)) or bool(d)))
    if d:  # sum / d = mean over the (padded) window * kh * kw / d
        kh, kw = a["kernel"]
        y = w.node("Mul", [y, w.const(np.array(kh * kw / d), _out_dtype(w, node))])
    return [y]


def _emit_adaptive_avg_pool(w, node):
    """AdaptiveAvgPool2D: AveragePool when the output divides the input, else the separable form (window i of
    an axis of size n into m: [floor(i n / m), ceil((i + 1) n / m))): per-window means along W, then along H."""
    x = node["inputs"][0]
    _static_spatial(w, x, "adaptive pooling's windows")
    in_hw = w.values[x]["shape"][2:]
    out_hw = w.values[node["outputs"][0]]["shape"][2:]
    y = w.name_of(x)
    if all(i % o == 0 for i, o in zip(in_hw, out_hw)):
        k = [i // o for i, o in zip(in_hw, out_hw)]
        return [w.node("AveragePool", [y], kernel_shape=k, strides=k)]
    for axis in (3, 2):
        n, m = in_hw[axis - 2], out_hw[axis - 2]
        parts = []
        for i in range(m):
            lo, hi = (i * n) // m, -(-((i + 1) * n) // m)
            s = w.node("Slice", [y, w.ints([lo]), w.ints([hi]), w.ints([axis])])
            parts.append(w.node("ReduceMean", [s, w.ints([axis])], keepdims=1))
        y = parts[0] if m == 1 else w.node("Concat", parts, axis=axis)
    return [y]


def im2col_table(h, wd, attrs):
    """Im2Col's gather table for an h × wd plane: (kh·kw, L) flat indices into the plane, the padding's cells
    pointing at index h·wd (one zero appended to the flattened plane); and whether any cell is padding. Shared with
    the MindIR writer."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (list(attrs[k]) for k in ("kernel_size", "dilation", "padding",
                                                                        "stride"))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh)[None, None, :, None] - ph
    x = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw)[None, None, None, :] - pw
    y, x = np.broadcast_arrays(y, x)
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < wd)
    table = np.where(inside, y * wd + x, h * wd).reshape(kh * kw, oh * ow).astype(np.int64)
    return table, not inside.all()


def mirror_pad_indices(n, before, after, mode):
    """The source index along an axis of length n of each of MirrorPad's n + before + after positions."""
    return np.pad(np.arange(n), (int(before), int(after)), "reflect" if mode == "REFLECT" else "symmetric")


def _emit_im2col(w, node):
    """Im2Col: x (N, C, H, W) flattened to (N, C, H·W) (+ one zero for the padding's cells), gathered at the
    constant block table (N, C, kh·kw, L), reshaped to (N, C·kh·kw, L)."""
    x = node["inputs"][0]
    _static_spatial(w, x, "Im2Col's block table")
    h, wd = w.values[x]["shape"][2:]
    table, padded = im2col_table(h, wd, node["attrs"])
    y = w.node("Reshape", [w.name_of(x), w.ints([0, 0, h * wd])])
    if padded:
        y = w.node("Pad", [y, w.ints([0, 0, 0, 0, 0, 1])], mode="constant")
    y = w.node("Gather", [y, w.const(table, mstype.int64)], axis=2)
    return [w.node("Reshape", [y, w.ints([0, -1, table.shape[1]])])]


def diagonal_cells(n1, n2, offset):
    """The flat positions (row * n2 + col) of the offset diagonal of an n1 x n2 matrix, in order."""
    k = int(offset)
    length = max(0, min(n1, n2 - k) if k >= 0 else min(n1 + k, n2))
    i = np.arange(length, dtype=np.int64)
    return (i * n2 + i + k) if k >= 0 else ((i - k) * n2 + i)


def _diag_static(w, vid, d1, d2, what):
    shape = w.shape_of(vid)
    if shape[d1] is None or shape[d2] is None:
        raise ValueError(f"{what} depends on the sizes of the two matrix dims, which are dynamic; export with fixed "
                         "sizes there")
    return shape[d1], shape[d2]


def _emit_diagonal(w, node):
    """Diagonal: the two dims moved last (Transpose, unless they are), flattened together (Reshape), the diagonal's
    constant flat positions gathered on the last axis."""
    x = node["inputs"][0]
    a = node["attrs"]
    nd = _rank(w, x)
    d1, d2 = int(a["dim1"]) % nd, int(a["dim2"]) % nd
    n1, n2 = _diag_static(w, x, d1, d2, "Diagonal's gather table")
    perm = [d for d in range(nd) if d not in (d1, d2)] + [d1, d2]
    y = w.name_of(x)
    if perm != list(range(nd)):
        y = w.node("Transpose", [y], perm=perm)
    y = w.node("Reshape", [y, w.ints([0] * (nd - 2) + [n1 * n2])])
    return [w.node("Gather", [y, w.const(diagonal_cells(n1, n2, a["offset"]), mstype.int64)], axis=nd - 2)]


def _emit_diag_embed(w, node):
    """DiagEmbed: the input's last axis gathered at each matrix cell's diagonal slot (a constant table), Where a
    constant mask of the diagonal's cells keeps it (zeros elsewhere), reshaped to matrices and transposed to put
    them at dim1, dim2 (Expand of a zero when the diagonal is empty)."""
    x = node["inputs"][0]
    a = node["attrs"]
    out = node["outputs"][0]
    dt = _out_dtype(w, node)
    r = len(a["shape"])
    d1, d2 = int(a["dim1"]) % r, int(a["dim2"]) % r
    n1, n2 = _diag_static(w, out, d1, d2, "DiagEmbed's scatter table")
    zero = w.const(np.zeros((), mstype.dtype_to_nptype(dt)), dt)
    cells = diagonal_cells(n1, n2, a["offset"])
    if len(cells) == 0:
        return [w.node("Expand", [zero, w.shape_tensor(out)])]
    src_of = np.zeros(n1 * n2, np.int64)
    src_of[cells] = np.arange(len(cells))
    where = np.zeros(n1 * n2, bool)
    where[cells] = True
    y = w.node("Gather", [w.name_of(x), w.const(src_of, mstype.int64)], axis=r - 2)
    y = w.node("Where", [w.const(where, mstype.bool_), y, zero])
    y = w.node("Reshape", [y, w.ints([0] * (r - 2) + [n1, n2])])
    rest = [d for d in range(r) if d not in (d1, d2)]
    src = {d: i for i, d in enumerate(rest)}
    src[d1], src[d2] = r - 2, r - 1
    perm = [src[d] for d in range(r)]
    return [y if perm == list(range(r)) else w.node("Transpose", [y], perm=perm)]


def _emit_mirror_pad(w, node):
    """MirrorPad: one Gather of constant source indices per padded axis (SYMMETRIC has no ONNX Pad mode)."""
    x = node["inputs"][0]
    a = node["attrs"]
    p = list(a["paddings"])
    shape = w.shape_of(x)
    y = w.name_of(x)
    for ax, n in enumerate(shape):
        b, e = p[2 * ax], p[2 * ax + 1]
        if not (b or e):
            continue
        if n is None:
            raise ValueError(f"MirrorPad pads axis {ax}, which is dynamic; export with a fixed size there")
        y = w.node("Gather", [y, w.const(mirror_pad_indices(n, b, e, a["mode"]), mstype.int64)], axis=ax)
    return [y if y != w.name_of(x) else w.node("Identity", [y])]


def resize_taps(attrs, in_sizes, nearest):
    """ResizeNearest's / ResizeLinear's per-axis taps (src/ops/resize.cpp's rules, float64 as there): a list over the
    resized axes of (i0, i1, w) — nearest: i1 = i0, w = 0."""
    coord = attrs["coordinate_transformation_mode"]
    rnd = nearest and attrs.get("nearest_mode") == "round_prefer_ceil"
    taps = []
    for k, (n, m) in enumerate(zip(in_sizes, attrs["size"])):
        n, m, s = int(n), int(m), float(attrs[f"scale_{k}"])
        d = np.arange(m, dtype=np.float64)
        if coord == "asymmetric":
            src = d * s
        elif coord == "half_pixel":
            src = (d + 0.5) * s - 0.5
        else:
            src = d * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m)
        if nearest:
            f = np.floor(((d + 0.5) * s) if rnd and coord == "half_pixel" else src + 0.5 if rnd else src)
            i0 = np.clip(f, 0, n - 1).astype(np.int64)
            taps.append((i0, i0, np.zeros(m)))
        else:
            c = np.clip(src, 0.0, n - 1)
            i0 = np.floor(c).astype(np.int64)
            taps.append((i0, np.minimum(i0 + 1, n - 1), c - i0))
    return taps


def _emit_resize(w, node):
    """ResizeNearest / ResizeLinear: ONNX Resize over the trailing axes (N and C scale 1), the attrs'
    coordinate_transformation_mode, nearest_mode floor or round_prefer_ceil (mode linear: the neighbours clamped at
    the edges, as ONNX's reference); sizes when the coordinate scales are n/m, else the scales 1/s."""
    x = node["inputs"][0]
    a = node["attrs"]
    nearest = node["op"] == "ResizeNearest"
    shape = w.shape_of(x)
    size = [int(v) for v in a["size"]]
    nsp = len(size)
    if any(v is None for v in shape[-nsp:]):
        raise ValueError(f"{node['op']} resizes axes that are dynamic; export with a fixed size there")
    scales = [float(a[f"scale_{k}"]) for k in range(nsp)]
    attrs = dict(mode="nearest" if nearest else "linear",
                 coordinate_transformation_mode=a["coordinate_transformation_mode"])
    if nearest:
        attrs["nearest_mode"] = a["nearest_mode"]
    if all(s == n / m for s, n, m in zip(scales, shape[-nsp:], size)) or a["coordinate_transformation_mode"] == \
            "align_corners":
        sizes = w.node("Concat", [w.node("Slice", [w.node("Shape", [w.name_of(x)]), w.ints([0]), w.ints([2])]),
                                  w.ints(size)], axis=0)
        return [w.node("Resize", [w.name_of(x), "", "", sizes], **attrs)]
    sc = w.const(np.asarray([1.0, 1.0] + [1.0 / s for s in scales], np.float32), mstype.float32)
    return [w.node("Resize", [w.name_of(x), "", sc], **attrs)]


def pdist_pairs(n):
    """Pdist's pairs i < j (row-major) of n rows: the two index vectors."""
    i, j = np.triu_indices(int(n), 1)
    return i.astype(np.int64), j.astype(np.int64)


def _emit_pdist(w, node):
    """Pdist: the differences of the rows gathered at the constant pairs, then the p-norm along axis 1."""
    x = node["inputs"][0]
    n = w.shape_of(x)[0]
    if n is None:
        raise ValueError("Pdist's pairs depend on the number of rows, which is dynamic; export with a fixed size")
    i, j = pdist_pairs(n)
    xn = w.name_of(x)
    d = w.node("Sub", [w.node("Gather", [xn, w.const(i, mstype.int64)], axis=0),
                       w.node("Gather", [xn, w.const(j, mstype.int64)], axis=0)])
    p, ax, dt = float(node["attrs"]["p"]), w.ints([1]), _out_dtype(w, node)
    if p == 2:
        return [w.node("ReduceL2", [d, ax], keepdims=0)]
    if p == 1:
        return [w.node("ReduceL1", [d, ax], keepdims=0)]
    if np.isinf(p):
        return [w.node("ReduceMax", [w.node("Abs", [d]), ax], keepdims=0)]
    if p == 0:
        nz = w.node("Cast", [w.node("Not", [w.node("Equal", [d, w.const(np.array(0), dt)])])], to=onnx_dtype(dt))
        return [w.node("ReduceSum", [nz, ax], keepdims=0)]
    s = w.node("ReduceSum", [w.node("Pow", [w.node("Abs", [d]), w.const(np.array(p), dt)]), ax], keepdims=0)
    return [w.node("Pow", [s, w.const(np.array(1.0 / p), dt)])]


def _emit_batch_norm(w, node):
    a = node["attrs"]
    if a["training"]:
        raise ValueError("BatchNorm in training mode (export traces with set_train(False); a BatchNorm called with "
                         "training=True in construct cannot be exported)")
    x, scale, bias, mean, var = node["inputs"]
    y = w.node("BatchNormalization", [w.name_of(i) for i in node["inputs"]], epsilon=float(a["epsilon"]))
    # Kiln's inference BatchNorm passes the running statistics through as its other outputs.
    return [y, w.name_of(mean), w.name_of(var)][:len(node["outputs"])]


def _emit_layer_norm(w, node):
    # Kiln's LayerNorm outputs (y, mean, rstd), the statistics with kept dims: ONNX's (Y, Mean, InvStdDev).
    a = node["attrs"]
    outs = w.node("LayerNormalization", [w.name_of(i) for i in node["inputs"]], n_out=3,
                  axis=int(a["begin_norm_axis"]), epsilon=float(a["epsilon"]))
    return outs[:len(node["outputs"])]


def _emit_nll_loss(w, node):
    """NLLLoss -> NegativeLogLikelihoodLoss (same reduction and ignore_index; (N, C, ...) inputs: a 1-D input is a
    ValueError), and total_weight = ReduceSum of the kept labels' weights (Equal, Not, Gather, Where; Cast without a
    weight). ONNX has no assertion: the kernel's check of the labels' range is dropped (as CheckRange's)."""
    a = node["attrs"]
    ins = node["inputs"]
    dt = _out_dtype(w, node)
    if _rank(w, ins[0]) < 2:
        raise ValueError("NLLLoss of a 1-D (C,) input (ONNX's NegativeLogLikelihoodLoss takes (N, C, ...); "
                         "give the loss a batch axis)")
    x = w.name_of(ins[0])
    t = w.name_of(ins[1], as_dtype=mstype.int64)
    weight = w.name_of(ins[2], as_dtype=dt) if len(ins) == 3 else None
    ignore = int(a["ignore_index"])
    loss = w.node("NegativeLogLikelihoodLoss", [x, t] + ([weight] if weight else []), reduction=str(a["reduction"]),
                  ignore_index=ignore)
    keep = w.node("Not", [w.node("Equal", [t, w.const(np.array(ignore, np.int64), mstype.int64)])])
    if weight:
        safe = w.node("Where", [keep, t, w.const(np.array(0, np.int64), mstype.int64)])
        zero = w.const(np.zeros((), mstype.dtype_to_nptype(dt)), dt)
        kept = w.node("Where", [keep, w.node("Gather", [weight, safe], axis=0), zero])
    else:
        kept = w.node("Cast", [keep], to=onnx_dtype(dt))
    return [loss, w.node("ReduceSum", [kept], keepdims=0)]


EMITTERS = {
    "Identity": _alias, "StopGradient": _alias, "Depend": _alias, "TensorCopy": _alias, "CheckRange": _alias,
    "Print": _dropped_print,
    "Add": _same("Add"), "Sub": _same("Sub"), "Mul": _same("Mul"), "Div": _same("Div"), "Pow": _same("Pow"),
    "Maximum": _same("Max"), "Minimum": _same("Min"), "FloorDiv": _emit_floor_div, "FloorMod": _emit_floor_mod,
    "Equal": _compare("Equal"), "NotEqual": _compare("Equal", negate=True), "Greater": _compare("Greater"),
    "GreaterEqual": _compare("GreaterOrEqual"), "Less": _compare("Less"), "LessEqual": _compare("LessOrEqual"),
    "LogicalAnd": _logical("And"), "LogicalOr": _logical("Or"), "LogicalXor": _logical("Xor"),
    "LogicalNot": _logical("Not"), "Select": _emit_select,
    "BitwiseAnd": _bitwise("BitwiseAnd", "And"), "BitwiseOr": _bitwise("BitwiseOr", "Or"),
    "BitwiseXor": _bitwise("BitwiseXor", "Xor"), "Invert": _bitwise("BitwiseNot", "Not"),
    "Neg": _same("Neg"), "Exp": _same("Exp"), "Log": _same("Log"), "Sqrt": _same("Sqrt"),
    "Rsqrt": _unary_chain("Sqrt", "Reciprocal"), "Abs": _same("Abs"), "Sign": _same("Sign"),
    "Square": _emit_square, "Erf": _same("Erf"), "Erfinv": _emit_erfinv, "Atan2": _emit_atan2, "ReLU": _same("Relu"), "Sigmoid": _same("Sigmoid"),
    "Tanh": _same("Tanh"), "GeLU": _emit_gelu, "Cast": _emit_cast, "Cos": _same("Cos"), "Sin": _same("Sin"),
    "Floor": _same("Floor"), "Ceil": _same("Ceil"), "Log1p": _emit_log1p,
    "ACos": _same("Acos"), "Asin": _same("Asin"), "Atan": _same("Atan"), "Sinh": _same("Sinh"),
    "Cosh": _same("Cosh"), "Tan": _same("Tan"), "Asinh": _same("Asinh"), "Acosh": _same("Acosh"),
    "Atanh": _same("Atanh"), "Expm1": _emit_expm1, "Log2": _log_base(2.0), "Log10": _log_base(10.0),
    "Erfc": _emit_erfc, "Round": _float_or_alias(lambda w, x, dt: w.node("Round", [x])),
    "Trunc": _float_or_alias(_trunc), "Sinc": _emit_sinc, "Copysign": _emit_copysign, "Xlogy": _emit_xlogy,
    "TruncateDiv": _emit_truncate_div, "Fmax": _fmax_fmin("Max"), "Fmin": _fmax_fmin("Min"),
    "Heaviside": _emit_heaviside,
    "HSwish": _same("HardSwish"), "HSigmoid": _emit_hsigmoid, "SeLU": _emit_selu, "Mish": _same("Mish"),
    "Softplus": _same("Softplus"), "LogSigmoid": _emit_logsigmoid,
    "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "ReduceSum": _reduce("ReduceSum"), "ReduceMean": _reduce("ReduceMean"), "ReduceMax": _reduce("ReduceMax"),
    "ReduceMin": _reduce("ReduceMin"), "ReduceProd": _reduce("ReduceProd"),
    "CountNonZero": _nonzero("CountNonZero"), "ReduceAll": _nonzero("ReduceAll"), "ReduceAny": _nonzero("ReduceAny"),
    "Argmax": _arg("ArgMax"), "Argmin": _arg("ArgMin"), "ArgSort": _emit_argsort,
    "Reshape": _emit_reshape, "Transpose": _emit_transpose, "BroadcastTo": _emit_broadcast_to,
    "Concat": _emit_concat, "StridedSlice": _emit_strided_slice, "Gather": _emit_gather,
    "GatherD": _emit_gather_d, "TensorScatterUpdate": _emit_scatter_update, "TensorScatterReduce": _emit_scatter_reduce,
    "TensorScatterElements": _emit_scatter_elements,
    "Im2Col": _emit_im2col, "MirrorPad": _emit_mirror_pad, "Diagonal": _emit_diagonal, "DiagEmbed": _emit_diag_embed,
    "Pdist": _emit_pdist, "ResizeNearest": _emit_resize, "ResizeLinear": _emit_resize,
    "BatchMatMul": _emit_matmul, "Conv2D": _emit_conv2d, "Conv2DBackpropInput": _emit_conv_transpose,
    "MaxPool": _emit_max_pool, "AvgPool": _emit_avg_pool, "AdaptiveAvgPool2D": _emit_adaptive_avg_pool,
    "BatchNorm": _emit_batch_norm, "LayerNorm": _emit_layer_norm, "NLLLoss": _emit_nll_loss,
}

# Kiln op -> the ONNX operators it is written as: the schema's `onnx` fields (src/ops/schema/ops.yaml) of the ops
# export writes (docs/export.md's table; tests/python/test_export_onnx.py checks that the keys are EMITTERS' and the
# table in the docs is this one).
ONNX_OPS = _schema.export_table("onnx")
