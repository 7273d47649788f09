"""Dynamic shapes in Graph mode: one compiled graph for every size of a dynamic (None) input dimension.

`jit(input_signature=...)` or `Cell.set_inputs(...)` with `Tensor(shape=[None, 10], dtype=...)` compiles the function
once; each new concrete input-shape signature then only re-infers shapes and makes a static memory plan (an
Executable) for them, kept in a bounded, locked LRU cache attached to the compiled graph (`DynamicExecutable`).

Note [dynamic shapes by probe traces] (docs/decisions/dynamic-shapes.md; docs/graph_mode.md):
Kiln's IR has static shapes, and shapes reach op attributes and constants at many places (a reshape to
`(x.shape[0] * 4, -1)`, the count a mean's gradient divides by, the input shape of a convolution's data gradient).
So the function is traced N_PROBES (4) times, symbolically (no data is computed), with the dynamic dimensions set to
four probe sizes, and each trace goes through the standard passes. The optimized graphs must have the same
structure (ops, edges, captured Parameters); an attribute or constant that differs is a function of the dynamic
sizes, fitted on some traces and checked on the others (_fit_ints, _fit_floats): `c0 + c1 * m` (integer c0, c1 for
ints), `c / m`, or for float64 values `(p0 + p1 * m) / (1 + q * m)` (a batch norm's M / (M - 1)), where m is one
dynamic size or the product of two. At run time a new signature instantiates the template with the fitted
values (`Graph.specialize`: attributes and constants replaced, every node's shape inferred again by the ops' own
infer functions) and plans its memory. Anything else — Python control flow on `x.shape[0]`, a size computed
non-linearly from it, a constant whose values depend on it — makes the traces differ, and compiling raises
ValueError naming the user's line and what to write instead.

Note [control flow in dynamic graphs]: an If/While node holds its branches (loop body, and a WhileGrad its
reverse body) as sub-graphs with static shapes, each optimized and compiled on its own. The probe traces make one per
size; they are fitted as the enclosing graph is (recursively: build_template over the sub-graphs' optimized forms),
and their input shapes are fitted per dimension. A plan for new sizes specializes each sub-graph whose shapes or
values vary to those sizes (Graph.specialize, then optimized and compiled again as a SubGraph) and patches it into
its node before the node's shapes are inferred; a sub-graph that is the same at every probe is shared. So the
outer graph's structure rule holds inside the branches too (the same ops at every probe size, fitted attributes).

Dimensions are identified by axis: every dynamic dimension at axis k of any input is one size (the batch of `x` and
of `label` are the same symbol); a call whose inputs disagree on it raises ValueError.
"""
import collections
import threading

import numpy as np

from .. import _engine
from .. import _convert
from .symint import SymInt, common_guards, guard_locations  # noqa: F401  (used by capture.py)
from . import symint as _symint

N_PROBES = 4
DEFAULT_MAX_PLANS = 8  # concrete signatures whose plans one dynamic graph keeps (least recently used dropped)

# Random ops' bookkeeping attributes: each trace draws its own stream id; the first trace's are used.
_TRACE_LOCAL_ATTRS = {"stream", "seed", "offset"}


def probe_size(axis, trace):
    """Size a dynamic dimension at `axis` takes in probe trace `trace` (0..N_PROBES-1). Batch axis: 38, 46, 58, 74
    (even, so that reshapes by 2 still divide; never 1, so that broadcasting decisions are those of a real batch);
    axis a >= 1: 36, 49, 62, 75 shifted by 60, 61, 63, 67 per further axis. No two axes' sizes lie on one line
    (c0 + c1 * other), so a fitted value names its dimension without ambiguity, and on axes >= 1 their remainders
    modulo 2..5 differ between traces, so a size-dependent padding is refused rather than frozen."""
    if axis == 0:
        return (38, 46, 58, 74)[trace]
    return (36 + 60 * (axis - 1), 49 + 61 * (axis - 1), 62 + 63 * (axis - 1), 75 + 67 * (axis - 1))[trace]


def probing(trace, axes):
    """Context for probe trace number `trace` of a signature with dynamic `axes` (see _symint.probing)."""
    return _symint.probing({probe_size(a, trace): a for a in axes})


class Spec:
    """The dynamic input signature of a jit function: per tensor argument, its shape with None where dynamic and its
    dtype (from `input_signature` or `Cell.set_inputs`); `axes` are the axes that hold a dynamic dimension."""

    def __init__(self, shapes, dtypes):
        self.shapes = tuple(shapes)
        self.dtypes = tuple(dtypes)
        self.axes = sorted({a for s in self.shapes for a, d in enumerate(s) if d is None})

    @property
    def dynamic(self):
        return bool(self.axes)


def spec_of(signature):
    """The Spec of an input signature (a Tensor or a tuple/list of Tensors, dynamic placeholders included); None
    when the signature is None or has no dynamic dimension."""
    if signature is None:
        return None
    sig = list(signature) if isinstance(signature, (tuple, list)) else [signature]
    shapes, dtypes = [], []
    for t in sig:
        if not isinstance(t, _engine.Tensor):
            return None  # a non-tensor signature entry: keyed per value as before
        dyn = _convert.dynamic_shape(t)
        shapes.append(tuple(dyn) if dyn is not None else tuple(t.shape))
        dtypes.append(t.dtype)
    spec = Spec(shapes, dtypes)
    return spec if spec.dynamic else None


def check_call(spec, tensors, name):
    """The call's shapes with the dynamic dimensions replaced by None (the cache key), after checking the tensors
    against the signature. ValueError naming the argument, what the signature says and what was given."""
    if len(tensors) != len(spec.shapes):
        raise ValueError(f"For jit '{name}', the input signature (set_inputs / input_signature) has "
                         f"{len(spec.shapes)} tensors but the call passes {len(tensors)}.")
    sizes = {}
    out = []
    for i, (s, dt, t) in enumerate(zip(spec.shapes, spec.dtypes, tensors)):
        shape = tuple(t.shape)
        if t.dtype != dt or len(shape) != len(s) or any(a is not None and a != b for a, b in zip(s, shape)):
            sig = "[" + ", ".join("None" if d is None else str(d) for d in s) + "]"
            raise ValueError(f"For jit '{name}', argument {i} is {t.dtype}{list(shape)} but the input signature "
                             f"(set_inputs / input_signature) says {dt}{sig}.")
        for a, d in enumerate(s):
            if d is None:
                prev = sizes.setdefault(a, (shape[a], i))
                if prev[0] != shape[a]:
                    raise ValueError(
                        f"For jit '{name}', the dynamic dimensions at axis {a} must have one size in a call (Kiln "
                        f"compiles every dynamic dimension at one axis as one size), but argument {prev[1]} has "
                        f"{prev[0]} and argument {i} has {shape[a]}.")
        out.append(tuple(None if d is None else d for d in s))
    return tuple(out)


# ------------------------------------------------------------------------------------------------ fitting
def _terms(axes):
    """(name, function of the probe-trace index -> size) for every dynamic size and product of two."""
    terms = []
    for a in axes:
        terms.append(((a,), [probe_size(a, t) for t in range(N_PROBES)]))
    for i, a in enumerate(axes):
        for b in axes[i:]:
            terms.append(((a, b), [probe_size(a, t) * probe_size(b, t) for t in range(N_PROBES)]))
    return terms


def _fit_ints(vals, axes):
    """A function sizes -> int for integers that are `vals` in the probe traces, or None."""
    vals = [int(v) for v in vals]
    for term, ms in _terms(axes):
        dm = ms[0] - ms[1]
        dv = vals[0] - vals[1]
        if dv % dm:
            continue
        c1 = dv // dm
        c0 = vals[0] - c1 * ms[0]
        if all(v == c0 + c1 * m for v, m in zip(vals, ms)):
            return lambda sizes, term=term, c0=c0, c1=c1: c0 + c1 * _prod(sizes, term)
    return None


def _close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=0.0, equal_nan=True)


def _fit_floats(arrs, axes, integral, exact=False):
    """A function sizes -> array for arrays that are `arrs` (one per probe trace, same shape) in the traces,
    elementwise, for one term m (a dynamic size or a product of two), the simplest form first: c0 + c1·m (fitted on
    two traces), c / m (on one), and, for float64 values (`exact`), (p0 + p1·m) / (1 + q·m) (on three: the unbiased-
    variance factor M / (M − 1) of a batch norm); every other trace checks the fit. None when none fits."""
    a = [np.asarray(x, dtype=np.float64) for x in arrs]
    terms = _terms(axes)
    for term, ms in terms:
        c1 = (a[0] - a[1]) / (ms[0] - ms[1])
        c0 = a[0] - c1 * ms[0]
        if integral and not (np.array_equal(c1, np.round(c1)) and np.array_equal(c0, np.round(c0))):
            continue
        if all(_close(c0 + c1 * m, x) for m, x in zip(ms, a)):
            return lambda sizes, term=term, c0=c0, c1=c1: c0 + c1 * _prod(sizes, term)
    if integral:
        return None
    for term, ms in terms:
        c = a[0] * ms[0]
        if all(_close(c / m, x) for m, x in zip(ms, a)):
            return lambda sizes, term=term, c=c: c / _prod(sizes, term)
    if not exact:
        return None
    for term, ms in terms:
        coef = _mobius(ms, a)
        if coef is not None and all(np.allclose(_mobius_eval(coef, m), x, rtol=1e-9, atol=0.0, equal_nan=True)
                                    for m, x in zip(ms[3:], a[3:])):
            return lambda sizes, term=term, coef=coef: _mobius_eval(coef, _prod(sizes, term))
    return None


def _mobius(ms, a):
    """(p0, p1, q) per element with v = (p0 + p1·m) / (1 + q·m) through the first three traces, or None."""
    v = np.stack([np.ravel(x) for x in a[:3]])  # (3, n)
    m = np.asarray(ms[:3], np.float64)[:, None] * np.ones_like(v)
    mat = np.stack([np.ones_like(v), m, -m * v], axis=-1).transpose(1, 0, 2)  # (n, 3, 3)
    try:
        sol = np.linalg.solve(mat, v.T[..., None])[..., 0]  # (n, 3)
    except np.linalg.LinAlgError:
        return None
    if not np.isfinite(sol).all():
        return None
    return tuple(sol[:, k].reshape(np.shape(a[0])) for k in range(3))


def _mobius_eval(coef, m):
    p0, p1, q = coef
    return (p0 + p1 * m) / (1.0 + q * m)


def _prod(sizes, term):
    p = 1
    for a in term:
        p *= sizes[a]
    return p


class StructureError(ValueError):
    pass


def _where(node):
    return f" (at {node['loc']})" if node.get("loc") else ""


_ADVICE = ("A dynamic (None) dimension's size is not known while compiling: do not branch, loop or compute Python "
           "numbers on x.shape[...] in a way that changes the graph (Kiln fits sizes of the form c0 + c1 * dim, "
           "c / dim, and in float64 (p0 + p1 * dim) / (1 + q * dim)); write the computation with tensor ops "
           "(reshape with -1, ops.mean), or give static shapes "
           "(drop the None from set_inputs / input_signature: one graph per shape).")


def _fail(name, what, node=None):
    raise StructureError(f"For jit '{name}', the graph cannot be compiled once for every size of its dynamic "
                         f"dimensions: {what}{_where(node) if node else ''}. {_ADVICE}")


def with_guards(err, states):
    """`err` with the Python conditions on dynamic sizes that the probe traces evaluated (the first six), which is
    usually why their structures differ."""
    conds = guard_locations(states)
    if not conds:
        return err
    shown = "; ".join(conds[:6]) + (f"; ... ({len(conds) - 6} more)" if len(conds) > 6 else "")
    return StructureError(f"{err} Python conditions on dynamic sizes: {shown}. (A loop over a dynamic size compiles "
                          "once as `for i in range(x.shape[0])`, `for row in x` or a `while` on a tensor counter.)")


def _numpy(t):
    return t.asnumpy()


def build_template(name, descs, axes):
    """(attribute fits [(node, attr, fn)], constant fits [(value id, fn)]) from the describe() dicts of the probe
    traces; StructureError when they differ in structure or in a way no fit explains."""
    d0 = descs[0]
    n_nodes = len(d0["nodes"])
    for d in descs[1:]:
        if len(d["nodes"]) != n_nodes or len(d["values"]) != len(d0["values"]):
            j = next((k for k, (a, b) in enumerate(zip(d0["nodes"], d["nodes"]))
                      if a["op"] != b["op"] or a["inputs"] != b["inputs"]), min(n_nodes, len(d["nodes"])))
            node = d0["nodes"][j] if j < n_nodes else d["nodes"][j] if j < len(d["nodes"]) else None
            if len(d["nodes"]) == n_nodes:
                _fail(name, f"the traces with different sizes have {len(d0['values'])} and {len(d['values'])} values "
                            "(inputs, captured tensors and constants) for the same operations")
            _fail(name, f"the traces with different sizes have {n_nodes} and {len(d['nodes'])} operations (the first "
                        f"difference at the op '{node['op'] if node else '?'}')", node)
    attr_fits = []
    for j, node in enumerate(d0["nodes"]):
        others = [d["nodes"][j] for d in descs[1:]]
        for o in others:
            if o["op"] != node["op"] or o["inputs"] != node["inputs"] or o["outputs"] != node["outputs"] \
                    or set(o["attrs"]) != set(node["attrs"]):
                _fail(name, f"the traces with different sizes differ at the op '{node['op']}' vs '{o['op']}'", node)
        for key, v0 in node["attrs"].items():
            vals = [v0] + [o["attrs"][key] for o in others]
            if isinstance(v0, _engine.SubGraph):  # a branch or loop body of an If/While/WhileGrad node
                fit = _subgraph_fit(name, vals, axes, node)
                if fit is not None:
                    attr_fits.append((j, key, fit))
                continue
            if all(v == v0 for v in vals[1:]) or key in _TRACE_LOCAL_ATTRS:
                continue
            fit = _fit_attr(vals, axes)
            if fit is None and node["op"] == "Print":
                _fail(name, "a printed text holds a Python number computed from a dynamic size (print(x.shape[0]) "
                            "prints the size the graph was compiled with); print a Tensor instead", node)
            if fit is None:
                _fail(name, f"the attribute '{key}' of the op '{node['op']}' is {' / '.join(map(str, vals))} in the "
                            f"traces, not c0 + c1 * size of a dynamic dimension", node)
            attr_fits.append((j, key, fit))
    const_fits = []
    users = {}
    for node in d0["nodes"]:
        for v in node["inputs"]:
            users.setdefault(v, node)
    for vid, v0 in enumerate(d0["values"]):
        vs = [d["values"][vid] for d in descs]
        if any(v["kind"] != v0["kind"] or v["dtype"] != v0["dtype"] for v in vs):
            _fail(name, "the traces with different sizes make different values", users.get(vid))
        if v0["kind"] == "capture":
            if any(v["tensor"]._id != v0["tensor"]._id for v in vs):
                from ..common.parameter import Parameter
                if any(isinstance(v["tensor"], Parameter) for v in vs):
                    _fail(name, "the traces with different sizes read different Parameters or tensors", users.get(vid))
                # A tensor made while tracing (in a sub-graph: the count a mean's gradient divides by): a value
                # of the trace, fitted as a constant.
                fit = _constant_fit(name, [_numpy(v["tensor"]) for v in vs], v0["dtype"], axes, users.get(vid))
                if fit is not None:
                    const_fits.append((vid, fit))
        elif v0["kind"] == "constant":
            fit = _constant_fit(name, [_numpy(v["tensor"]) for v in vs], v0["dtype"], axes, users.get(vid))
            if fit is not None:
                const_fits.append((vid, fit))
    return attr_fits, const_fits


def _subgraph_fit(name, sgs, axes, node):
    """The sub-graph attribute of a control-flow node (Note [control flow in dynamic graphs]): None when the probe
    traces made the same sub-graph up to its shapes never varying (the first trace's serves every size); else a
    function sizes -> SubGraph for those sizes. StructureError when the traces' sub-graphs differ in structure or in
    a way no fit explains."""
    graphs = [sg.optimized for sg in sgs]
    descs = [describe(g, name) for g in graphs]
    d0 = descs[0]
    if any(len(d["inputs"]) != len(d0["inputs"]) or len(d["outputs"]) != len(d0["outputs"]) for d in descs):
        _fail(name, f"the traces with different sizes give the op '{node['op']}' sub-graphs with different inputs "
                    "or outputs", node)
    in_fits, varies = [], False
    for k, vid in enumerate(d0["inputs"]):
        shapes = [d["values"][d["inputs"][k]]["shape"] for d in descs]
        if any(len(s) != len(shapes[0]) for s in shapes):
            _fail(name, f"an input of a sub-graph of the op '{node['op']}' changes rank with the size", node)
        dims = []
        for a in range(len(shapes[0])):
            col = [s[a] for s in shapes]
            f = _fit_column(col, axes)
            if f is None:
                _fail(name, f"an input of a sub-graph of the op '{node['op']}' has sizes {' / '.join(map(str, col))} "
                            "in the traces, not c0 + c1 * size of a dynamic dimension", node)
            dims.append(f)
            varies = varies or any(c != col[0] for c in col)
        in_fits.append(dims)
    attr_fits, const_fits = build_template(name, descs, axes)
    if not (varies or attr_fits or const_fits):
        return None
    template = graphs[0]

    def make(sizes):
        shapes = [[int(d(sizes)) for d in dims] for dims in in_fits]
        g = template.specialize(shapes, [(j, key, fit(sizes)) for j, key, fit in attr_fits],
                                [(vid, fit(sizes)) for vid, fit in const_fits])
        return _engine.SubGraph(g)  # optimized again for these shapes, with its own Executable
    return make


def _fit_attr(vals, axes):
    v0 = vals[0]
    if isinstance(v0, bool) or isinstance(v0, str):
        return None
    if isinstance(v0, int):
        return _fit_ints(vals, axes)
    if isinstance(v0, float):
        f = _fit_floats([np.float64(v) for v in vals], axes, False, exact=True)
        return None if f is None else (lambda sizes, f=f: float(f(sizes)))
    if isinstance(v0, list) and all(isinstance(v, list) and len(v) == len(v0) for v in vals):
        parts = [_fit_column([v[k] for v in vals], axes) for k in range(len(v0))]
        if any(p is None for p in parts):
            return None
        return lambda sizes, parts=parts: [p(sizes) for p in parts]
    return None


def _fit_column(col, axes):
    """sizes -> int for one integer across the traces: the constant when every trace agrees, else _fit_ints's
    c0 + c1 * size fit (None when there is none)."""
    if all(c == col[0] for c in col):
        return lambda sizes, c=col[0]: c
    return _fit_ints(col, axes)


def _constant_fit(name, arrs, dtype, axes, user):
    """None for a constant equal in every trace; else a function sizes -> Tensor."""
    a0 = arrs[0]
    if all(a.shape == a0.shape for a in arrs):
        if all(np.array_equal(a, a0, equal_nan=True) for a in arrs[1:]):
            return None
        integral = a0.dtype.kind in "iub"
        f = _fit_floats(arrs, axes, integral, exact=a0.dtype == np.float64)
        if f is None and a0.size <= _ELEMENTWISE_FIT_MAX:  # e.g. ops.dyn_shape of [None, None]: each its own size
            f = _fit_elementwise(arrs, axes, integral, a0.dtype == np.float64)
        if f is None:
            _fail(name, "a constant's values depend on the size of a dynamic dimension in a way Kiln cannot fit "
                        "(c0 + c1 * size, c / size, (p0 + p1 * size) / (1 + q * size) in float64)", user)
        npdt = a0.dtype
        return lambda sizes, f=f, npdt=npdt, dtype=dtype: _tensor(
            np.round(f(sizes)) if npdt.kind in "iu" else f(sizes), npdt, dtype)
    # A size-shaped constant made while tracing: one value filled (zeros((x.shape[0], h))), or an arithmetic
    # progression (the flat offsets arange(0, m·n, n) of a gather along an axis, over the whole array or along one
    # axis), of a fitted shape; its value(s) may follow the size too (the folded gradient of a mean: 1 / batch).
    if any(a.ndim != a0.ndim for a in arrs) or any(a.size == 0 for a in arrs):
        _fail(name, "a constant's shape depends on the size of a dynamic dimension", user)
    integral = a0.dtype.kind in "iub"
    exact = a0.dtype == np.float64

    def fit_scalars(vals):
        if all(v == vals[0] or (np.isnan(v) and np.isnan(vals[0])) for v in vals):
            return lambda sizes, v=vals[0]: v
        f = _fit_floats([np.asarray(v) for v in vals], axes, integral, exact=exact)
        if f is None:
            _fail(name, "a constant's value depends on the size of a dynamic dimension in a way Kiln cannot fit "
                        "(c0 + c1 * size, c / size, (p0 + p1 * size) / (1 + q * size) in float64)", user)
        return f

    firsts = [a.reshape(-1)[0] for a in arrs]
    if all((a == f).all() or (np.isnan(f) and np.isnan(a).all()) for a, f in zip(arrs, firsts)):
        value, prog = fit_scalars(firsts), None
    else:
        prog = _progression(arrs)
        if prog is None:
            _fail(name, "a constant whose shape depends on the size of a dynamic dimension holds different values "
                        "(only filled constants, such as zeros of a batch-sized shape, and arithmetic progressions, "
                        "such as arange(size), can follow the size)", user)
        prog = (prog[0], fit_scalars(prog[1]), fit_scalars(prog[2]))
    dims = []
    for k in range(a0.ndim):
        col = [a.shape[k] for a in arrs]
        if all(c == col[0] for c in col):
            dims.append(lambda sizes, c=col[0]: c)
        else:
            f = _fit_ints(col, axes)
            if f is None:
                _fail(name, "a constant's shape depends non-linearly on the size of a dynamic dimension", user)
            dims.append(f)
    npdt = a0.dtype

    def make(sizes):
        shape = tuple(int(d(sizes)) for d in dims)
        if prog is None:
            return _tensor(np.full(shape, _cast_value(value(sizes), npdt), dtype=npdt), npdt, dtype)
        axis, start, step = prog
        if axis is None:
            idx = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        else:
            idx = np.broadcast_to(np.arange(shape[axis], dtype=np.float64).reshape(
                [-1 if k == axis else 1 for k in range(len(shape))]), shape)
        return _tensor(_cast_value(np.float64(start(sizes)) + np.float64(step(sizes)) * idx, npdt), npdt, dtype)
    return make


def _progression(arrs):
    """(axis, starts, steps) when every trace's array is start + step · index -- over the flattened array (axis
    None) or along one axis and the same along the others -- with at least two elements there; else None."""
    a0 = arrs[0]
    for axis in [None] + list(range(a0.ndim)):
        starts, steps = [], []
        for a in arrs:
            v = a.astype(np.float64)
            if axis is None:
                v = v.reshape(-1)
            else:
                v = np.moveaxis(v, axis, 0).reshape(v.shape[axis], -1)
                if not (v == v[:, :1]).all():
                    break
                v = v[:, 0]
            d = np.diff(v)
            if v.size < 2 or not np.isfinite(v).all() or not (d == d[0]).all():
                break
            starts.append(v[0])
            steps.append(d[0])
        else:
            return axis, starts, steps
    return None


_ELEMENTWISE_FIT_MAX = 64


def _fit_elementwise(arrs, axes, integral, exact):
    """_fit_floats element by element (each element may follow another dynamic size), for small constants; None
    when an element fits no form."""
    shape = arrs[0].shape
    fits = []
    for i in range(arrs[0].size):
        g = _fit_floats([np.asarray(a).reshape(-1)[i:i + 1] for a in arrs], axes, integral, exact=exact)
        if g is None:
            return None
        fits.append(g)
    return lambda sizes, fits=fits, shape=shape: np.concatenate(
        [np.asarray(g(sizes), np.float64).reshape(-1) for g in fits]).reshape(shape)


def _cast_value(v, npdt):
    v = np.asarray(v, dtype=np.float64) if np.dtype(npdt).kind == "f" else np.round(np.asarray(v, np.float64))
    return v.astype(npdt)


def _tensor(arr, npdt, dtype):
    return _engine.Tensor._from_numpy(np.array(np.asarray(arr).astype(npdt), order="C"))  # keeps 0-d (ascontiguous
    # would make it 1-d)


# ------------------------------------------------------------------------------------------------ runtime
class DynamicExecutable:
    """One compiled graph with dynamic dimensions and its per-signature plans.

    `run(args)` looks up the Executable of the arguments' shapes (made on first use: the template specialized to
    them — attributes and constants fitted, shapes re-inferred — and its static memory plan), keeping at most
    `max_plans` of them (least recently used dropped; thread-safe: two threads with different shapes run two
    Executables at once, two with the same shape take turns on one). `specializations` counts the plans made."""

    def __init__(self, name, template, axes, spec, attr_fits, const_fits, guards=(), max_plans=DEFAULT_MAX_PLANS):
        self.name = name
        self.guards = tuple(guards)  # (location, text, function sizes -> bool, outcome compiled for)
        self.template = template
        self.axes = axes
        self.spec = spec
        self._attr_fits = attr_fits
        self._const_fits = const_fits
        self.max_plans = max_plans
        self._plans = collections.OrderedDict()  # input shapes -> Executable, least recently used first
        self._lock = threading.Lock()
        self.specializations = 0
        self.evictions = 0
        self._last = None
        self._mru = None  # the signature whose plan is last in the LRU order (a hint; read without the lock)

    def _sizes(self, shapes):
        sizes = {}
        for s, sig in zip(shapes, self.spec.shapes):
            for a, d in enumerate(sig):
                if d is None:
                    sizes[a] = s[a]
        return sizes

    def plan(self, shapes):
        """The Executable for these concrete input shapes (made and cached on first use)."""
        with self._lock:
            exe = self._plans.get(shapes)
            if exe is not None:
                self._plans.move_to_end(shapes)
                self._mru = shapes
                return exe
        sizes = self._sizes(shapes)
        for loc, text, fn, result in self.guards:
            if bool(fn(sizes)) != result:
                names = ", ".join(f"dim{a} = {d}" for a, d in sorted(sizes.items()))
                raise ValueError(
                    f"For jit '{self.name}', the graph was compiled with dynamic dimensions under the condition "
                    f"`{text}` being {result}{' (at ' + loc + ')' if loc else ''}, which is {not result} for input "
                    f"shapes {', '.join(str(list(s)) for s in shapes)} ({names}). A Python condition on a dynamic "
                    "size is fixed while compiling: write it with tensor ops (ops.select, an `if` on a tensor), or "
                    "give static shapes (drop the None from set_inputs / input_signature: one graph per shape).")
        attrs = [(j, key, fit(sizes)) for j, key, fit in self._attr_fits]
        consts = [(vid, fit(sizes)) for vid, fit in self._const_fits]
        graph = self.template.specialize([list(s) for s in shapes], attrs, consts)
        exe = _engine.Executable(graph)
        with self._lock:
            other = self._plans.get(shapes)
            if other is not None:  # another thread made it meanwhile
                self._plans.move_to_end(shapes)
                self._mru = shapes
                return other
            self._plans[shapes] = exe
            self._mru = shapes
            self.specializations += 1
            while len(self._plans) > self.max_plans:
                self._plans.popitem(last=False)
                self.evictions += 1
        return exe

    def run(self, args):
        shapes = tuple([a.shape for a in args])
        exe = self._plans.get(shapes)  # a plain read (the GIL makes it atomic); misses and LRU order under the lock
        if exe is None:
            exe = self.plan(shapes)
        elif self._mru != shapes:  # another signature ran last: refresh this one's LRU place
            with self._lock:
                if shapes in self._plans:
                    self._plans.move_to_end(shapes)
                self._mru = shapes
        self._last = exe
        return exe.run(args)

    @property
    def num_plans(self):
        """Number of concrete signatures planned and kept now."""
        with self._lock:
            return len(self._plans)

    @property
    def planned_peak_bytes(self):
        """Peak bytes of the most recently used plan (0 before the first run)."""
        exe = self._last
        return 0 if exe is None else exe.planned_peak_bytes


class _Probe:
    """A stand-in for a tensor argument in a probe trace (capture.trace reads .shape and .dtype)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype


def probe_tensors(spec, trace):
    return [_Probe(tuple(probe_size(a, trace) if d is None else d for a, d in enumerate(s)), dt)
            for s, dt in zip(spec.shapes, spec.dtypes)]


def describe(graph, name):
    """graph.describe() with the sub-graphs of control-flow nodes as SubGraph objects (fitted by _subgraph_fit)."""
    return graph.describe(subgraphs=True)

