"""Kiln's op test registry: one OpInfo per op (PyTorch's OpInfo idea), from which tests/python/test_op_registry.py
generates the forward-vs-NumPy, gradient-vs-finite-difference, PyNative-vs-Graph and dtype-promotion tests.

Every C++ op in `kiln._core.op_names()` must be named in some entry's `ops` (as the op the entry calls, or as a
building block of it: BroadcastTo via broadcast_to, StridedSliceGrad via the gradient of slicing, Fill via zeros/
ones/full, ...), or in PASS_ONLY_OPS with a reason. test_op_registry.py checks that, and that every op named in an
entry really appears in the graph that entry traces (so the registry cannot claim coverage it does not have).

Adding an op = adding one OpInfo here: a callable, a sample generator, a NumPy reference, dtypes, tolerances.

Kinds of entries:
  "op"     (default) a function of tensors: forward vs `ref`, gradient (if differentiable), Graph parity.
  "random" random ops: shape/dtype/range/moments and seed determinism instead of values (PyNative and Graph).
  "state"  in-place ops on Parameters (Assign, optimizer kernels): `run(sample, use_jit)` returns the resulting
           state as NumPy arrays; compared with `ref(sample)` and between PyNative and Graph.

Note [dtype rules]: expected result dtypes are NumPy's (NumPy 2, NEP 50: Python scalars are "weak"), except where
Kiln follows MindSpore, applied in this order by `kiln_result_dtype`:
  R-cat  a float tensor combined with an int/bool tensor keeps the float tensor's dtype (MindSpore/PyTorch's category
         rule; NumPy widens: float16 + int32 -> float64, float32 + int64 -> float64).
  R-f32  Kiln's default float is float32: where NumPy makes float64 although no float64 tensor is an input (true
         division of ints, exp/log/sqrt/mean of ints, int tensor with a Python float), Kiln makes float32.
  R-bool bool (op) bool for Sub/FloorDiv/FloorMod/Pow stays Bool in Kiln (NumPy: int8, or TypeError for
         subtraction); listed per entry in `dtype_exceptions` and not used as forward samples.

Note [special values]: test_op_registry.py runs every "op" entry (float16, float32 and float64 samples) with special values
put into each float input: NaN (element 0), ±inf (first and last element), and 1000 / −1000 / 0 (first, last and
middle element). The result must equal the reference's (NumPy: NaN in gives NaN out unless the op defines otherwise —
comparisons, argmax's first NaN, max/min picking NaN as np.maximum does; overflow to ±inf as the reference's result
rounded to the output dtype), in PyNative and under kiln.jit. For gradients (float64) it puts 0, 1000 and −1000 into
element 0 of each differentiated input: where the function is smooth there (equal one-sided finite differences),
the gradient must equal the central difference (so it is finite where the function is); where it is not (a kink,
a jump or a one-sided domain), the entry must list the point in `kinks` with the derivative Kiln defines there
(None: a singularity, only required not to crash) — an undocumented kink fails. Points where the function value is
not finite (log 0, exp 1000, 1/0) have no gradient to check. Exceptions are per entry (special_skip, special_ok,
special_ref) with their reason.
"""
import dataclasses
import math
from typing import Callable, Optional

import numpy as np
import scipy.special

import kiln
from kiln import Parameter, Tensor, _core, ops

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I32, I64, BOOL = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
FLOATS = (F32, F64, F16)
INTS = (I32, I64)
NUMERIC = FLOATS + INTS
ALL = NUMERIC + (BOOL,)
# MindSpore's UInt16/32/64: only the ops that support them (arithmetic, comparisons, select, casts, data movement,
# indexing, creation, Assign); samples draw them non-negative, and Python scalars with them are bools only (MindSpore
# raises TypeError for a Python int or float with these dtypes: tests/python/test_unsigned_dtypes.py).
U16, U32, U64 = np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)
UINTS = (U16, U32, U64)


def is_wide_uint(dtype):
    """UInt16/32/64 (no implicit conversion with other dtypes but Bool, as in MindSpore)."""
    return np.dtype(dtype) in UINTS

# Ops that only graph passes produce (fusion): no Python callable makes them, so no entry calls them directly. They
# are covered by the pass tests (tests/python/test_graph_passes.py, tests/cpp/test_graph.cpp) and by the composite
# "pattern.*" entries below, whose Graph-parity tests run the fused kernels against PyNative (test_op_registry.py's
# test_pass_only_ops_are_exercised checks that some entry's optimized graph really contains each). {op: reason}
PASS_ONLY_OPS = {
    "MatMulBiasAct": "made by the matmul+bias+activation fusion pass (float32 BatchMatMul+Add+ReLU/GeLU/...); "
                     "exercised by the Graph-parity tests of 'pattern.dense_relu' / 'pattern.dense_gelu'",
    "FusedElementwise": "made by the elementwise-chain fusion pass (float32/float64); exercised by the Graph-parity "
                        "tests of 'pattern.elementwise_chain' (and of the gradients of sigmoid, tanh, gelu, ...)",
}

# Default (rtol, atol) of forward checks against a float64 NumPy reference, by Kiln's output dtype.
DEFAULT_TOL = {F16: (2e-3, 2e-3), F32: (1e-5, 1e-6), F64: (1e-11, 1e-12)}


# ---------------------------------------------------------------------------------------------- samples

class NC:
    """A sample input that reaches the op as a NON-CONTIGUOUS view holding `value`:
    how="T": the transpose (all dims reversed) of a contiguous tensor; "step": every other element along the last
    axis of a tensor twice as wide; "rev": a reversed (negative-stride) view along axis 0."""

    def __init__(self, value, how="T"):
        self.value = np.asarray(value)
        self.how = how

    def __repr__(self):
        return f"NC[{self.how}]{self.value.dtype}{list(self.value.shape)}"


@dataclasses.dataclass
class Sample:
    """One call: op(*args, **kwargs). Args that are np.ndarray / NC become Tensors; anything else (Python scalars,
    which are weak, tuples, dtypes) is passed as is (in Graph mode: a constant of the trace). `grad` marks samples
    small enough for finite differences; `graph=False` keeps a sample out of the Graph-parity test."""
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    desc: str = ""
    grad: bool = True
    graph: bool = True

    def __post_init__(self):  # NumPy scalars (0-d draws) become 0-d arrays, i.e. 0-d tensors (not weak scalars)
        self.args = tuple(np.asarray(a) if isinstance(a, np.generic) else a for a in self.args)

    def __repr__(self):
        parts = [repr(a) if isinstance(a, NC) else
                 (f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a)) for a in self.args]
        kw = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        return f"({', '.join(parts)}{kw}){' ' + self.desc if self.desc else ''}"


def np_value(a):
    """The NumPy value of a sample argument (NC unwrapped)."""
    return a.value if isinstance(a, NC) else a


def to_kiln(a):
    """A sample argument as the op receives it: arrays → Tensors (NC → non-contiguous views), the rest as is."""
    if isinstance(a, NC):
        v = a.value
        if a.how == "T":
            t = _core.transpose(Tensor(np.ascontiguousarray(np.transpose(v))), list(range(v.ndim))[::-1])
        elif a.how == "step":
            wide = np.zeros(v.shape[:-1] + (2 * v.shape[-1],), v.dtype)
            wide[..., ::2] = v
            t = Tensor(wide)[..., ::2]
        elif a.how == "rev":
            t = Tensor(np.ascontiguousarray(v[::-1]))[::-1]
        else:
            raise ValueError(a.how)
        assert v.size <= 1 or not t.is_contiguous(), f"{a} is contiguous"
        np.testing.assert_array_equal(t.asnumpy(), v)
        return t
    if isinstance(a, np.ndarray):
        return Tensor(a)
    return a


def arr(rng, shape, dtype, low=-2.0, high=2.0, away=0.0):
    """Random array: floats uniform in [low, high) with |x| >= away (random sign when away > 0), ints in
    [low, high], bools fair."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo, hi = int(math.floor(low)), int(math.ceil(high))
        if dtype.kind == "u":  # unsigned: the non-negative part of the range
            lo, hi = max(lo, 0), max(hi, 0)
        a = rng.integers(lo, hi + 1, shape)
        if away > 0:
            a = np.where(np.abs(a) < away, int(math.ceil(away)), a)
        return a.astype(dtype)
    if away > 0:
        mag = rng.uniform(away, max(abs(low), abs(high)), shape)
        return (mag * rng.choice([-1.0, 1.0], shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def unary_samples(low=-2.0, high=2.0, away=0.0):
    """Shapes: 2-D, 0-d, empty, size-1 dims, 3-D, and non-contiguous (transposed / stepped / reversed) views."""
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, low, high, away)  # noqa: E731
        yield Sample((a((2, 3)),))
        yield Sample((a(()),), desc="0-d")
        yield Sample((a((0, 4)),), desc="empty")
        yield Sample((a((1, 5, 1)),), desc="size-1 dims")
        yield Sample((NC(a((3, 4)), "T"),), desc="transposed view")
        yield Sample((NC(a((2, 5)), "step"),), desc="stepped view")
        yield Sample((NC(a((4,)), "rev"),), desc="reversed view")
    return gen


def binary_samples(lhs=(-2.0, 2.0, 0.0), rhs=(-2.0, 2.0, 0.0), scalars=(2.5, 3)):
    """Pairs: same shape, broadcasting both ways, trailing broadcast, 0-d, size-1, empty, non-contiguous views, and
    weak Python scalars on either side (floats only for float dtypes; ints for all)."""
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, *lhs)  # noqa: E731
        b = lambda s: arr(rng, s, dtype, *rhs)  # noqa: E731
        yield Sample((a((2, 3)), b((2, 3))))
        yield Sample((a((3, 1)), b((1, 4))), desc="broadcast both")
        yield Sample((a((2, 3, 4)), b((4,))), desc="trailing broadcast")
        yield Sample((a(()), b((2, 3))), desc="0-d lhs")
        yield Sample((a(()), b(())), desc="0-d both")
        yield Sample((a((1,)), b((5,))), desc="size-1")
        yield Sample((a((0, 3)), b((3,))), desc="empty")
        yield Sample((NC(a((3, 4)), "T"), NC(b((3, 4)), "step")), desc="views")
        if is_wide_uint(dtype):  # a Python bool is the only scalar MindSpore combines with UInt16/32/64
            yield Sample((a((2, 3)), True), desc="python bool rhs")
            yield Sample((False, b((2, 3))), desc="python bool lhs")
            return
        for s in scalars:
            if isinstance(s, float) and dtype.kind != "f":
                continue
            sv = abs(s) if rhs[2] > 0 else s
            yield Sample((a((2, 3)), sv), desc="python scalar rhs")
            yield Sample((s, b((2, 3))), desc="python scalar lhs")
    return gen


# ---------------------------------------------------------------------------------------------- the entry type

@dataclasses.dataclass
class OpInfo:
    """One registry entry.

    name: test id; ops: the C++ op names this entry covers (checked against the traced graph); op: the Kiln callable;
    ref: the NumPy reference (called on float64 copies of float inputs unless ref_upcast=False); samples(dtype, rng):
    yields Sample; dtypes: the dtypes samples are drawn in; tol: {dtype: (rtol, atol)} overrides; out_dtype(sample)
    -> expected NumPy dtype where the dtype rules above do not give it; differentiable: gradient-checked (float64,
    central differences, positions `grad_args` or all float array args); graph: may run under kiln.jit (else
    graph_reason says why); dtype_exceptions: documented differences from NumPy's dtype (for the promotion test);
    binary: takes part in the dtype-promotion matrix."""
    name: str
    ops: tuple
    op: Optional[Callable] = None
    ref: Optional[Callable] = None
    samples: Optional[Callable] = None
    dtypes: tuple = FLOATS
    tol: dict = dataclasses.field(default_factory=dict)
    out_dtype: Optional[Callable] = None
    ref_upcast: bool = True
    differentiable: bool = False
    grad_args: Optional[tuple] = None
    grad_eps: float = 1e-6
    grad_tol: tuple = (1e-5, 1e-6)
    graph: bool = True
    graph_reason: str = ""
    kind: str = "op"
    binary: bool = False
    dtype_exceptions: dict = dataclasses.field(default_factory=dict)
    # kind == "random": draw(shape, dtype, seed) -> Tensor; check(np_array, dtype) asserts the distribution.
    draw: Optional[Callable] = None
    check: Optional[Callable] = None
    # kind == "state": run(sample, use_jit) -> list of np arrays (outputs and final state).
    run: Optional[Callable] = None
    notes: str = ""
    # Special values (test_op_registry.py's test_special_values / test_special_gradient; Note [special values]):
    # special_skip: why the entry is left out (empty: it is checked); special_ok(sample) -> bool: which samples are;
    # special_ref: the reference for special-value inputs where `ref` is not the one to use there; kinks: {point:
    # derivative} for elementwise entries whose one-sided derivatives differ at a special point (the gradient Kiln
    # defines there, e.g. relu {0.0: 0.0}).
    special_skip: str = ""
    special_ok: Optional[Callable] = None
    special_args: Optional[tuple] = None  # the input positions that get special values (None: every float input)
    special_ref: Optional[Callable] = None
    kinks: dict = dataclasses.field(default_factory=dict)
    # Selections (test_op_registry.py's test_selection_nan_gradient / test_selection_tie_gradient): nan_wins, the
    # value a NaN in input 0 acts as for the gradient (+inf for max-like, −inf for min-like: the NaN is the result,
    # so it gets the gradient and the others get what they get beside a winning ±inf — finite, never NaN); ties,
    # how a tie shares the gradient: "split" (equally, as amax) or "first" (all to the first, as ArgMaxWithValue).
    nan_wins: Optional[float] = None
    ties: str = ""

    def tolerance(self, dtype):
        dtype = np.dtype(dtype)
        if dtype in self.tol:
            return self.tol[dtype]
        return DEFAULT_TOL.get(dtype, (0.0, 0.0))


# ---------------------------------------------------------------------------------------------- dtype rules

def kiln_result_dtype(np_dtype, args):
    """NumPy's result dtype `np_dtype` adjusted by Note [dtype rules] R-cat and R-f32 for sample args `args`."""
    np_dtype = np.dtype(np_dtype)
    arrays = [np_value(a) for a in args if isinstance(a, (np.ndarray, NC))]
    if np_dtype.kind != "f":
        return np_dtype
    floats = [a.dtype for a in arrays if a.dtype.kind == "f"]
    if floats and any(a.dtype.kind in "biu" for a in arrays):  # R-cat
        widest = max(floats, key=lambda d: d.itemsize)
        return widest
    if np_dtype == F64 and F64 not in floats:  # R-f32
        return F32
    return np_dtype


def _as_tuple(out):
    return out if isinstance(out, (tuple, list)) else (out,)


# ---------------------------------------------------------------------------------------------- NumPy references

def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2)))


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softmax(x, axis=-1):
    return scipy.special.softmax(x, axis=axis) if x.size else x.copy()


def np_log_softmax(x, axis=-1):
    return scipy.special.log_softmax(x, axis=axis) if x.size else x.copy()


def np_log_softmax_plain(x, axis=-1):
    """(x − max) − log Σ exp(x − max), without SciPy's replacement of a non-finite max (PyTorch's result)."""
    if not x.size:
        return x.copy()
    t = x - np.max(x, axis=axis, keepdims=True)
    return t - np.log(np.sum(np.exp(t), axis=axis, keepdims=True))


def np_uss(x, ids, num_segments):
    out = np.zeros((num_segments,) + x.shape[ids.ndim:], x.dtype)
    flat_ids = ids.reshape(-1)
    flat_x = x.reshape((-1,) + x.shape[ids.ndim:])
    for i, s in enumerate(flat_ids):
        if 0 <= s < num_segments:
            out[s] += flat_x[i]
    return out


def np_broadcast_to(x, shape):
    shape = tuple(x.shape[i - (len(shape) - x.ndim)] if d == -1 else d for i, d in enumerate(shape))
    return np.broadcast_to(x, shape).copy()


def np_strided_slice_grad(x, dy, key):
    out = np.zeros_like(x, dtype=dy.dtype)
    out[key] = dy
    return out


# ---------------------------------------------------------------------------------------------- elementwise binary

REGISTRY = []


def register(info):
    REGISTRY.append(info)
    return info


_NONZERO = (-2.0, 2.0, 0.5)  # (low, high, away): |x| in [0.5, 2] with random sign; ints in [-2, 2] without 0
_BOOL_DIFF = ("bool op bool stays Bool (NumPy: int8 for floor_divide/mod/power, TypeError for subtract); MindSpore "
              "rejects arithmetic on Bool")

register(OpInfo("add", ("Add",), ops.add, np.add, binary_samples(), ALL + UINTS, differentiable=True, binary=True))
register(OpInfo("sub", ("Sub",), ops.sub, np.subtract, binary_samples(), NUMERIC + UINTS, differentiable=True,
                binary=True,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}))
register(OpInfo("mul", ("Mul",), ops.mul, np.multiply, binary_samples(), ALL + UINTS, differentiable=True, binary=True))
register(OpInfo("div", ("Div",), ops.div, np.true_divide, binary_samples(rhs=_NONZERO, scalars=(2.5, 3)),
                NUMERIC, differentiable=True, binary=True,
                notes="int / int is Float32 (MindSpore; NumPy float64): rule R-f32"))
register(OpInfo("floor_div", ("FloorDiv",), ops.floor_div, np.floor_divide,
                binary_samples(lhs=(-5.0, 5.0, 0.0), rhs=(-3.0, 3.0, 1.0), scalars=(2.5, 3)), NUMERIC, binary=True,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}))
register(OpInfo("floor_mod", ("FloorMod",), ops.floor_mod, np.mod,
                binary_samples(lhs=(-5.0, 5.0, 0.0), rhs=(-3.0, 3.0, 1.0), scalars=(2.5, 3)), NUMERIC,
                differentiable=True, binary=True, dtype_exceptions={"bool,bool": _BOOL_DIFF},
                tol={F16: (2e-3, 4e-3)}, notes="sign follows the divisor (Python/NumPy floor modulo)",
                kinks={0.0: 1.0, 1000.0: 1.0, -1000.0: 1.0}))  # x mod y jumps where x is a multiple of y (0; ±1000
#                                                              for y = 2.5); d/dx is 1 there too


def _pow_samples(dtype, rng):
    if dtype.kind == "f":
        yield from binary_samples(lhs=(0.5, 2.0, 0.0), rhs=(-2.0, 2.0, 0.0), scalars=(2.0, 0.5))(dtype, rng)
    else:
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), arr(rng, (2, 3), dtype, 0, 3)))
        yield Sample((arr(rng, (3, 1), dtype, -3, 3), arr(rng, (1, 4), dtype, 0, 3)), desc="broadcast")
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), 2), desc="python int exponent")
        yield Sample((2, arr(rng, (2, 3), dtype, 0, 4)), desc="python int base")
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), 0.5), desc="int ** python float → Float32 (R-f32)",
                     graph=True)


def _np_pow_c99(x, y):
    """np.power with the exponent as an array: NumPy (and PyTorch) take sqrt for a scalar exponent 0.5, giving
    pow(−inf, 0.5) = NaN; C99's pow, which Kiln uses, gives +inf (Annex F: pow(−∞, y) = +∞ for y > 0 not odd)."""
    dt = np.result_type(x, y)  # (a Python-scalar exponent stays weak, NEP 50)
    x, ya = np.asarray(x), np.asarray(y)
    return np.power(x, np.array(np.broadcast_to(ya, np.broadcast_shapes(x.shape, ya.shape)), dtype=dt))


register(OpInfo("pow", ("Pow",), ops.pow, np.power, _pow_samples, NUMERIC, differentiable=True, binary=True,
                special_ref=_np_pow_c99,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}, tol={F16: (3e-3, 3e-3)},
                kinks={0.0: None}))  # base 0: x^y is undefined left of 0 (the samples' base domain is x > 0)
register(OpInfo("maximum", ("Maximum",), ops.maximum, np.maximum, binary_samples(), ALL + UINTS, differentiable=True,
                binary=True))
register(OpInfo("minimum", ("Minimum",), ops.minimum, np.minimum, binary_samples(), ALL + UINTS, differentiable=True,
                binary=True))


def _cmp_samples(dtype, rng):
    """Small integers so that ties (equality) occur; also weak scalars and NaN-free floats."""
    vals = [0, 1] if dtype == BOOL else [0, 1, 2, 3] if dtype.kind == "u" else [-1, 0, 1, 2]
    a = lambda s: rng.choice(vals, s).astype(dtype)  # noqa: E731
    yield Sample((a((3, 4)), a((3, 4))))
    yield Sample((a((3, 1)), a((1, 4))), desc="broadcast both")
    yield Sample((a(()), a((2, 3))), desc="0-d lhs")
    yield Sample((a((0, 2)), a((2,))), desc="empty")
    yield Sample((NC(a((3, 4)), "T"), a((4,))), desc="transposed view")
    yield Sample((a((2, 3)), True if dtype == BOOL or is_wide_uint(dtype) else 1), desc="python scalar rhs")
    if dtype.kind in "iu" and not is_wide_uint(dtype):
        yield Sample((a((2, 3)), 0.5), desc="int tensor vs python float")
    if dtype.kind == "f":
        yield Sample((1.0, a((2, 3))), desc="python scalar lhs")


for _name, _op, _ref, _cname in [("equal", ops.equal, np.equal, "Equal"),
                                 ("not_equal", ops.not_equal, np.not_equal, "NotEqual"),
                                 ("greater", ops.greater, np.greater, "Greater"),
                                 ("greater_equal", ops.greater_equal, np.greater_equal, "GreaterEqual"),
                                 ("less", ops.less, np.less, "Less"),
                                 ("less_equal", ops.less_equal, np.less_equal, "LessEqual")]:
    register(OpInfo(_name, (_cname,), _op, _ref, _cmp_samples, ALL + UINTS, binary=True))

for _name, _op, _ref, _cname in [("logical_and", ops.logical_and, np.logical_and, "LogicalAnd"),
                                 ("logical_or", ops.logical_or, np.logical_or, "LogicalOr"),
                                 ("logical_xor", ops.logical_xor, np.logical_xor, "LogicalXor")]:
    register(OpInfo(_name, (_cname,), _op, _ref, _cmp_samples, (BOOL, I32, F32), binary=True,
                    notes="non-bool inputs are truth-tested (nonzero → True), as NumPy"))


# Tensor operators (bound in C++) on a few samples: same ops, incl. reflected operators with a scalar on the left.
def _operator_samples(kind):
    def gen(dtype, rng):
        if kind == "div":
            b = lambda s: arr(rng, s, dtype, *_NONZERO)  # noqa: E731
        else:
            b = lambda s: arr(rng, s, dtype, 0.5 if kind == "pow" else -2.0, 2.0)  # noqa: E731
        a = lambda s: arr(rng, s, dtype, 0.5 if kind == "pow" else -2.0, 2.0)  # noqa: E731
        yield Sample((a((2, 3)), b((3,))), desc="broadcast")
        yield Sample((a((2, 3)), 2.0), desc="python scalar rhs")
        yield Sample((3.0 if kind != "pow" else 1.5, b((2, 3))), desc="reflected (python scalar lhs)")
    return gen


for _name, _fn, _ref, _cname in [("operator.add", lambda x, y: x + y, np.add, "Add"),
                                 ("operator.sub", lambda x, y: x - y, np.subtract, "Sub"),
                                 ("operator.mul", lambda x, y: x * y, np.multiply, "Mul"),
                                 ("operator.truediv", lambda x, y: x / y, np.true_divide, "Div"),
                                 ("operator.pow", lambda x, y: x ** y, np.power, "Pow")]:
    register(OpInfo(_name, (_cname,), _fn, _ref, _operator_samples(_name.split(".")[1]), (F32, F64),
                    differentiable=True, kinks={0.0: None} if _cname == "Pow" else {},
                    special_ref=_np_pow_c99 if _cname == "Pow" else None))
register(OpInfo("operator.floordiv_mod", ("FloorDiv", "FloorMod"), lambda x, y: (x // y, x % y),
                lambda x, y: (np.floor_divide(x, y), np.mod(x, y)), _operator_samples("div"), (F32, I32)))
register(OpInfo("operator.compare", ("Less", "GreaterEqual", "Equal", "NotEqual"),
                lambda x, y: (x < y, x >= y, x == y, x != y),
                lambda x, y: (x < y, x >= y, x == y, x != y), _cmp_samples, (F32, I32)))
register(OpInfo("operator.logic", ("LogicalAnd", "LogicalOr", "LogicalXor"),
                lambda x, y: (x & y, x | y, x ^ y), lambda x, y: (x & y, x | y, x ^ y), _cmp_samples, (BOOL,)))
register(OpInfo("operator.neg", ("Neg",), lambda x: -x, np.negative, unary_samples(), (F32, I32),
                differentiable=True))


def _select_samples(dtype, rng):
    c = lambda s: rng.random(s) < 0.5  # noqa: E731
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((c((2, 3)), a((2, 3)), a((2, 3))))
    yield Sample((c((3, 1)), a((1, 4)), a((3, 4))), desc="broadcast all three")
    yield Sample((c(()), a((2, 3)), a((3,))), desc="0-d condition")
    yield Sample((c((0, 3)), a((3,)), a((1, 3))), desc="empty")
    yield Sample((NC(c((3, 4)), "T"), NC(a((3, 4)), "step"), a((4,))), desc="views")
    yield Sample((c((2, 3)), a((2, 3)), True if is_wide_uint(dtype) else 1 if dtype.kind != "f" else 0.5),
                 desc="python scalar y")


register(OpInfo("where", ("Select",), ops.where, np.where, _select_samples, ALL + UINTS, differentiable=True,
                notes="condition must be Bool (TypeError otherwise); gradients go to x and y"))


def _clip_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)  # noqa: E731
    yield Sample((a((3, 4)),), dict(min=-1, max=1))
    yield Sample((a((2, 3)),), dict(min=0, max=None), desc="lower bound only")
    yield Sample((NC(a((3, 4)), "T"),), dict(min=None, max=1), desc="upper only, view")
    yield Sample((a(()),), dict(min=-1, max=1), desc="0-d")


register(OpInfo("clamp", ("Maximum", "Minimum"), ops.clamp,
                lambda x, min=None, max=None: np.clip(x, min, max),  # noqa: A002
                _clip_samples, NUMERIC, differentiable=True,
                kinks={0.0: 1.0}, notes="gradient 1 at a bound (x == min or max), 0 outside and at NaN, as "
                                        "PyTorch's clamp and MindSpore's ops.clamp"))


# ---------------------------------------------------------------------------------------------- elementwise unary

def _same_dtype(sample):
    """out_dtype for ops whose result has the input's dtype (where the NumPy/SciPy reference widens)."""
    return np_value(sample.args[0]).dtype


def _unary(name, cname, op, ref, dtypes=FLOATS, low=-2.0, high=2.0, away=0.0, diff=True, **kw):
    return register(OpInfo(name, (cname,), op, ref, unary_samples(low, high, away), dtypes, differentiable=diff, **kw))


_unary("neg", "Neg", ops.neg, np.negative, NUMERIC)
_unary("exp", "Exp", ops.exp, np.exp, FLOATS + (I32,), notes="int input → Float32 (R-f32)")
_unary("log", "Log", ops.log, np.log, FLOATS + (I32,), low=0.5, high=3.0)
_unary("sqrt", "Sqrt", ops.sqrt, np.sqrt, FLOATS + (I32,), low=0.5, high=3.0,
       kinks={0.0: np.inf})  # d√x/dx → +∞ at 0 (left of 0 undefined); Kiln gives +inf·dy, as PyTorch
_unary("rsqrt", "Rsqrt", ops.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, low=0.5, high=3.0)
_unary("abs", "Abs", ops.abs, np.abs, NUMERIC, high=2.0, away=0.25, kinks={0.0: 0.0})  # sign(0) = 0
_unary("sign", "Sign", ops.sign, np.sign, NUMERIC, diff=False)
_unary("square", "Square", ops.square, np.square, NUMERIC)
_unary("erf", "Erf", ops.erf, scipy.special.erf, FLOATS, out_dtype=_same_dtype)
_unary("relu", "ReLU", ops.relu, lambda x: np.maximum(x, np.zeros((), x.dtype)), NUMERIC, away=0.1,
       kinks={0.0: 0.0}, notes="relu(nan) = nan (np.maximum, torch.relu); gradient 0 at 0 (MindSpore)")
_unary("sigmoid", "Sigmoid", ops.sigmoid, np_sigmoid, FLOATS)
_unary("tanh", "Tanh", ops.tanh, np.tanh, FLOATS)
_unary("gelu", "GeLU", ops.gelu, np_gelu, FLOATS, out_dtype=_same_dtype)
register(OpInfo("gelu_tanh", ("GeLU",), lambda x: ops.gelu(x, approximate="tanh"),
                lambda x: np_gelu(x, "tanh"), unary_samples(), FLOATS, differentiable=True, out_dtype=_same_dtype))
if hasattr(ops, "sin"):  # (added with the compiled learning-rate schedules)
    _unary("sin", "Sin", ops.sin, np.sin, FLOATS + (I32,), low=-4.0, high=4.0)
    _unary("cos", "Cos", ops.cos, np.cos, FLOATS + (I32,), low=-4.0, high=4.0)
    _unary("floor", "Floor", ops.floor, np.floor, NUMERIC, low=-3.0, high=3.0, diff=False, out_dtype=_same_dtype,
           notes="integer inputs are returned unchanged in their dtype (NumPy: float64)")
    _unary("ceil", "Ceil", ops.ceil, np.ceil, NUMERIC, low=-3.0, high=3.0, diff=False, out_dtype=_same_dtype)
_unary("logical_not", "LogicalNot", ops.logical_not, np.logical_not, (BOOL, I32, F32), diff=False)


def _cast_samples(dtype, rng):
    # Values with fractions and negatives (float → int truncates toward zero), zeros (→ bool False).
    def x(s):
        return np.round(arr(rng, s, F64, -4, 4), 1).astype(dtype) if dtype.kind == "f" else arr(rng, s, dtype, -4, 4)
    for target in (F64, F32, F16, I32, I64, BOOL) + (UINTS if dtype.kind in "biu" else ()):
        if target == dtype:  # (float → unsigned only for non-negative values: test_unsigned_dtypes.py)
            continue
        small = target.kind == "f" and dtype.kind == "f" and dtype == F64
        yield Sample((x((2, 3)),), dict(dtype=target), desc=f"to {target}", grad=small and target == F32)
    yield Sample((NC(x((3, 4)), "T"),), dict(dtype=F64 if dtype != F64 else F32), desc="view", grad=False)
    yield Sample((x(()),), dict(dtype=I32), desc="0-d to int", grad=False)
    yield Sample((x((0, 2)),), dict(dtype=F32 if dtype != F32 else F64), desc="empty", grad=False)


def _np_cast(x, dtype):
    return x.astype(dtype)


register(OpInfo("cast", ("Cast",), lambda x, dtype: ops.cast(x, dtype), _np_cast, _cast_samples, ALL + UINTS,
                out_dtype=lambda s: np.dtype(s.kwargs["dtype"]), ref_upcast=False, differentiable=True,
                grad_eps=1e-2, grad_tol=(1e-5, 1e-5),
                special_ok=lambda s: np.dtype(s.kwargs["dtype"]).kind == "f",
                notes="special values only for float targets (float NaN/inf → int is undefined: NumPy warns); "
                      "float → int truncates toward zero; gradient (float → float) is cast back; FD uses a large "
                      "step since Cast is linear and the float32 result is rounded"))
register(OpInfo("identity", ("Identity",), _core.identity, lambda x: x.copy(), unary_samples(), ALL + UINTS,
                differentiable=True, notes="the Python API reaches it through Tensor(tensor) and Parameter.value()"))
register(OpInfo("tensor_copy_ctor", (), lambda x: Tensor(x), lambda x: x.copy(), unary_samples(),
                (F32, I64)))
register(OpInfo("stop_gradient", ("StopGradient",), ops.stop_gradient, lambda x: x.copy(), unary_samples(), ALL + UINTS,
                notes="not differentiable by design; test_stop_gradient_blocks_gradient checks the zero gradient in "
                      "both modes"))
register(OpInfo("depend", ("Depend",), lambda x, y: ops.depend(x, ops.mul(y, 2.0)), lambda x, y: x.copy(),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype))),
                                         Sample((NC(arr(rng, (3, 2), dtype), "T"), arr(rng, (), dtype)),
                                                desc="view")]),
                FLOATS, differentiable=True, notes="the gradient flows to `value` only (FD of `expr` is zero)"))


# ---------------------------------------------------------------------------------------------- softmax

def _softmax_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)  # noqa: E731
    yield Sample((a((2, 5)),), dict(axis=-1))
    yield Sample((a((3, 4, 2)),), dict(axis=1), desc="middle axis")
    yield Sample((a((3, 4)),), dict(axis=0))
    yield Sample((a((6,)),), dict(axis=0), desc="1-D")
    yield Sample((a((1, 4)),), dict(axis=-2), desc="size-1 axis, negative")
    yield Sample((a((0, 4)),), dict(axis=-1), desc="empty")
    yield Sample((NC(a((4, 3)), "T"),), dict(axis=-1), desc="transposed view")


register(OpInfo("softmax", ("Softmax",), ops.softmax, np_softmax, _softmax_samples, FLOATS, differentiable=True))
register(OpInfo("log_softmax", ("LogSoftmax",), ops.log_softmax, np_log_softmax, _softmax_samples, FLOATS,
                differentiable=True, special_ref=lambda x, axis=-1: np_log_softmax_plain(x, axis),
                notes="special values: (x − max) − log Σ exp(x − max) as PyTorch (a +inf entry gives a NaN row); "
                      "SciPy replaces a non-finite max by 0 and gives −inf for the other entries"))


# ---------------------------------------------------------------------------------------------- activations
# kiln.ops' stable activation functions and kiln.nn's activation cells that compose several ops (the one-op cells —
# ReLU, Sigmoid, Tanh, GELU, Softmax, LogSoftmax — are the op entries above). References are the textbook formulas
# in float64 (np.logaddexp for softplus). x·g(x) forms (SiLU, Mish, FastGelu, HSwish, GELU) give NaN at x = −inf
# (−inf·0), in NumPy, PyTorch and Kiln alike.

def _np_leaky_relu(x):
    return np.where(x >= 0, x, 0.2 * x)


def _np_elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _np_hsigmoid(x):
    return np.clip(x + 3, 0, 6) / 6


def _cell(cls, *args):
    cell = cls(*args)
    return lambda x: cell(x)


def _act_samples(dtype, rng):
    """unary_samples over [−4, 4] (past the corners of relu6/hsigmoid/hswish) without exact corners."""
    yield from unary_samples(-4.0, 4.0)(dtype, rng)


_unary("log1p", "Log1p", ops.log1p, np.log1p, FLOATS + (I32,), low=-0.5, high=2.0,
       notes="accurate for |x| ≪ 1 (C's log1p); int input → Float32 (R-f32)")
register(OpInfo("softplus", ("ReLU", "Log1p", "Exp", "Select", "Greater", "Neg"), ops.softplus,
                lambda x: np.logaddexp(0, x), _act_samples, FLOATS, differentiable=True,
                notes="max(x, 0) + log1p(exp(−|x|)) [Mächler 2012]: no overflow at ±1000; gradient σ(x) (0.5 at 0)"))
register(OpInfo("softplus_beta", ("ReLU", "Log1p", "Exp", "Select", "Greater", "Mul", "Div"),
                lambda x: ops.softplus(x, beta=2, threshold=5),
                lambda x: np.where(2 * x > 5, x, np.logaddexp(0, 2 * x) / 2), _act_samples, (F32, F64),
                differentiable=True, notes="log(1 + exp(βx))/β, and x where βx > threshold"))
register(OpInfo("logsigmoid", ("ReLU", "Log1p", "Exp", "Select", "Neg"), ops.logsigmoid,
                lambda x: -np.logaddexp(0, -x), _act_samples, FLOATS, differentiable=True,
                notes="min(x, 0) − log1p(exp(−|x|)): −1000 → −1000 (gradient 1), 1000 → 0 (gradient 0), "
                      "gradient 0.5 at 0"))
register(OpInfo("nn.LogSigmoid", ("ReLU", "Log1p", "Exp", "Select", "Neg"), _cell(kiln.nn.LogSigmoid),
                lambda x: -np.logaddexp(0, -x), _act_samples, FLOATS, differentiable=True))
register(OpInfo("nn.Softplus", ("ReLU", "Log1p", "Exp", "Select"), _cell(kiln.nn.Softplus),
                lambda x: np.logaddexp(0, x), _act_samples, FLOATS, differentiable=True))
register(OpInfo("nn.Mish", ("Mul", "Tanh", "ReLU", "Log1p", "Exp"), _cell(kiln.nn.Mish),
                lambda x: x * np.tanh(np.logaddexp(0, x)), _act_samples, FLOATS, differentiable=True,
                tol={F16: (4e-3, 4e-3)}))
register(OpInfo("nn.ReLU6", ("ReLU", "Select", "Greater"), _cell(kiln.nn.ReLU6), lambda x: np.clip(x, 0, 6),
                _act_samples, FLOATS, differentiable=True, kinks={0.0: 0.0},
                notes="gradient dy·[0 < x ≤ 6] (MindSpore's ReLU6Grad: 0 at 0)"))
register(OpInfo("nn.HSigmoid", ("ReLU", "Select", "GreaterEqual", "Add", "Div"), _cell(kiln.nn.HSigmoid),
                _np_hsigmoid, _act_samples, FLOATS, differentiable=True,
                notes="gradient dy/6·[−3 < x < 3] (MindSpore's HSigmoidGrad, PyTorch)"))
register(OpInfo("nn.HSwish", ("Mul", "Maximum", "Minimum", "Add", "Div"), _cell(kiln.nn.HSwish),
                lambda x: x * _np_hsigmoid(x), _act_samples, FLOATS, differentiable=True))
register(OpInfo("nn.SiLU", ("Mul", "Sigmoid"), _cell(kiln.nn.SiLU), lambda x: x * np_sigmoid(x), _act_samples,
                FLOATS, differentiable=True))
register(OpInfo("nn.FastGelu", ("Mul", "Sigmoid"), _cell(kiln.nn.FastGelu), lambda x: x * np_sigmoid(1.702 * x),
                _act_samples, FLOATS, differentiable=True, tol={F16: (4e-3, 4e-3)}))
register(OpInfo("nn.ELU", ("Select", "Exp", "Greater"), _cell(kiln.nn.ELU), _np_elu, _act_samples, FLOATS,
                differentiable=True, tol={F16: (3e-3, 3e-3)}, notes="alpha = 1: the derivative is 1 at 0 from both sides"))
register(OpInfo("nn.LeakyReLU", ("Mul", "Select", "Greater"), _cell(kiln.nn.LeakyReLU, 0.2), _np_leaky_relu,
                _act_samples, FLOATS, differentiable=True, kinks={0.0: 0.2}, notes="gradient alpha at 0 (as PyTorch)"))
register(OpInfo("nn.Softsign", ("Div", "Abs", "Add"), _cell(kiln.nn.Softsign), lambda x: x / (1 + np.abs(x)),
                _act_samples, FLOATS, differentiable=True,
                notes="±inf → inf/inf = NaN (the formula x / (1 + |x|), as PyTorch)"))


# ---------------------------------------------------------------------------------------------- reductions

def _reduce_samples(low=-2.0, high=2.0, away=0.0, empty=True):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, low, high, away)  # noqa: E731
        yield Sample((a((3, 4)),), dict(axis=None, keepdims=False), desc="all")
        yield Sample((a((3, 4)),), dict(axis=1, keepdims=True))
        yield Sample((a((2, 3, 4)),), dict(axis=(0, 2), keepdims=False), desc="tuple axis")
        yield Sample((a((2, 3, 4)),), dict(axis=-1, keepdims=False), desc="negative axis")
        yield Sample((a((2, 3, 2)),), dict(axis=(-1, -3), keepdims=True), desc="negative tuple, keepdims")
        yield Sample((a(()),), dict(axis=None, keepdims=False), desc="0-d")
        yield Sample((a((1, 4)),), dict(axis=0, keepdims=False), desc="size-1 axis")
        yield Sample((NC(a((4, 3)), "T"),), dict(axis=0, keepdims=False), desc="transposed view")
        yield Sample((NC(a((2, 6)), "step"),), dict(axis=None, keepdims=True), desc="stepped view, all, keepdims")
        if empty:
            yield Sample((a((0, 3)),), dict(axis=0, keepdims=False), desc="empty reduced axis")
            yield Sample((a((0, 3)),), dict(axis=1, keepdims=True), desc="empty kept axis")
    return gen


def _np_reduce(fn):
    def ref(x, axis=None, keepdims=False):
        return np.asarray(fn(x, axis=axis, keepdims=keepdims))
    return ref


register(OpInfo("sum", ("ReduceSum",), lambda x, axis=None, keepdims=False: ops.sum(x, axis, keepdims),
                _np_reduce(np.sum), _reduce_samples(), ALL + UINTS, differentiable=True,
                notes="int32/bool sums are Int64 (as NumPy on Linux); UInt16/32/64 sums are UInt64 (NumPy)"))
register(OpInfo("tensor.sum", ("ReduceSum",), lambda x, axis=None, keepdims=False: x.sum(axis, keepdims=keepdims),
                _np_reduce(np.sum), _reduce_samples(empty=False), (F32,), differentiable=True))
register(OpInfo("mean", ("ReduceMean",), lambda x, axis=None, keepdims=False: ops.mean(x, axis, keepdims),
                _np_reduce(np.mean), _reduce_samples(empty=False), FLOATS + (I32,) + UINTS, differentiable=True,
                notes="int input → Float32 (R-f32); the mean over an empty axis is NaN (not sampled: NumPy warns)"))
register(OpInfo("prod", ("ReduceProd",), lambda x, axis=None, keepdims=False: ops.prod(x, axis, keepdims),
                _np_reduce(np.prod), _reduce_samples(0.5, 1.5, 0.5), FLOATS + (I32,) + UINTS, differentiable=True,
                tol={F16: (4e-3, 4e-3)}))
register(OpInfo("amax", ("ReduceMax",), lambda x, axis=None, keepdims=False: ops.amax(x, axis, keepdims),
                _np_reduce(np.max), _reduce_samples(empty=False), NUMERIC + (BOOL,) + UINTS, differentiable=True,
                nan_wins=np.inf, ties="split",
                notes="an empty reduced axis raises ValueError (no identity), as NumPy"))
register(OpInfo("amin", ("ReduceMin",), lambda x, axis=None, keepdims=False: ops.amin(x, axis, keepdims),
                _np_reduce(np.min), _reduce_samples(empty=False), NUMERIC + UINTS, differentiable=True,
                nan_wins=-np.inf, ties="split"))


def _arg_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)  # noqa: E731  (ints: ties → the first index, as NumPy)
    yield Sample((a((3, 4)),), dict(axis=None, keepdims=False), desc="flattened")
    yield Sample((a((3, 4)),), dict(axis=1, keepdims=False))
    yield Sample((a((2, 3, 4)),), dict(axis=-2, keepdims=True), desc="negative axis, keepdims")
    yield Sample((a((5,)),), dict(axis=0, keepdims=False), desc="1-D")
    yield Sample((a(()),), dict(axis=None, keepdims=False), desc="0-d")
    yield Sample((NC(a((4, 3)), "T"),), dict(axis=0, keepdims=False), desc="transposed view")


register(OpInfo("argmax", ("Argmax",), lambda x, axis=None, keepdims=False: ops.argmax(x, axis, keepdims),
                lambda x, axis=None, keepdims=False: np.asarray(np.argmax(x, axis=axis, keepdims=keepdims)),
                _arg_samples, NUMERIC + UINTS, ref_upcast=False))
register(OpInfo("argmin", ("Argmin",), lambda x, axis=None, keepdims=False: ops.argmin(x, axis, keepdims),
                lambda x, axis=None, keepdims=False: np.asarray(np.argmin(x, axis=axis, keepdims=keepdims)),
                _arg_samples, NUMERIC + UINTS, ref_upcast=False))
register(OpInfo("max_with_indices", ("Gather", "Argmax"), lambda x, axis: ops.max(x, axis),
                lambda x, axis: (np.max(x, axis), np.argmax(x, axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(axis=1)),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"),), dict(axis=-1))]),
                (F32, F64), ref_upcast=False, differentiable=True, nan_wins=np.inf, ties="first",
                notes="ops.max with an int axis returns (values, indices) as MindSpore 2.x; the gradient goes to "
                      "the returned index (ArgMaxWithValue)"))
register(OpInfo("min_with_indices", ("Gather", "Argmin"), lambda x, axis: ops.min(x, axis),
                lambda x, axis: (np.min(x, axis), np.argmin(x, axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype),), dict(axis=0))]),
                (F32, F64), ref_upcast=False, differentiable=True, nan_wins=-np.inf, ties="first"))


# ---------------------------------------------------------------------------------------------- shapes

def _reshape_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3, 4)),), dict(shape=(6, 4)))
    yield Sample((a((2, 3, 4)),), dict(shape=(-1,)), desc="-1")
    yield Sample((a((2, 6)),), dict(shape=(3, -1, 2)), desc="-1 in the middle")
    yield Sample((a(()),), dict(shape=(1, 1)), desc="0-d to 2-D")
    yield Sample((a((1,)),), dict(shape=()), desc="to 0-d")
    yield Sample((a((0, 3)),), dict(shape=(3, 0)), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), dict(shape=(12,)), desc="transposed view (copies)")
    yield Sample((NC(a((2, 4)), "step"),), dict(shape=(4, 2)), desc="stepped view")


register(OpInfo("reshape", ("Reshape",), ops.reshape, np.reshape, _reshape_samples, ALL + UINTS, differentiable=True))


def _transpose_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3, 4)),), dict(input_perm=(2, 0, 1)))
    yield Sample((a((3, 4)),), dict(input_perm=(1, 0)))
    yield Sample((a(()),), dict(input_perm=()), desc="0-d")
    yield Sample((a((1, 3, 1)),), dict(input_perm=(2, 1, 0)), desc="size-1 dims")
    yield Sample((a((2, 0, 3)),), dict(input_perm=(1, 2, 0)), desc="empty")
    yield Sample((a((2, 3, 4)),), dict(input_perm=(-1, 0, -2)), desc="negative axes")
    yield Sample((NC(a((3, 4, 2)), "T"),), dict(input_perm=(0, 2, 1)), desc="transposed view")


register(OpInfo("transpose", ("Transpose",), ops.transpose, lambda x, input_perm: np.transpose(x, input_perm),
                _transpose_samples, ALL + UINTS, differentiable=True))
register(OpInfo("tensor.T", ("Transpose",), lambda x: x.T, lambda x: x.T,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 4), dtype),)), Sample((arr(rng, (5,), dtype),))]),
                (F32,), differentiable=True))


def _bcast_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((3, 1)),), dict(shape=(2, 3, 4)))
    yield Sample((a((4,)),), dict(shape=(3, 4)))
    yield Sample((a(()),), dict(shape=(2, 2)), desc="0-d")
    yield Sample((a((1, 4)),), dict(shape=(3, -1)), desc="-1 keeps a dim")
    yield Sample((a((1,)),), dict(shape=(2, 0)), desc="to empty")
    yield Sample((NC(a((1, 3)), "step"),), dict(shape=(2, 2, 3)), desc="view")
    yield Sample((a((2, 3)),), dict(shape=(2, 3)), desc="same shape")


register(OpInfo("broadcast_to", ("BroadcastTo",), ops.broadcast_to, np_broadcast_to, _bcast_samples, ALL + UINTS,
                differentiable=True))


def _concat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3)), a((1, 3))), dict(axis=0))
    yield Sample((a((2, 3)), a((2, 1)), a((2, 2))), dict(axis=-1), desc="three, negative axis")
    yield Sample((a((0, 3)), a((2, 3))), dict(axis=0), desc="empty part")
    yield Sample((a((2, 3, 2)), NC(a((2, 3, 2)), "step")), dict(axis=1), desc="view")
    yield Sample((a((3,)),), dict(axis=0), desc="one tensor")
    if dtype.kind == "f":
        yield Sample((a((2, 2)), arr(rng, (1, 2), I32)), dict(axis=0), desc="float with int: promoted")


register(OpInfo("concat", ("Concat",), lambda *xs, axis: ops.concat(xs, axis),
                lambda *xs, axis: np.concatenate(xs, axis), _concat_samples, ALL + UINTS, differentiable=True))
register(OpInfo("stack", ("Reshape", "Concat"), lambda *xs, axis: ops.stack(xs, axis),
                lambda *xs, axis: np.stack(xs, axis),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)), dict(axis=1)),
                                         Sample((arr(rng, (), dtype), arr(rng, (), dtype)), dict(axis=0),
                                                desc="0-d"),
                                         Sample((arr(rng, (3,), dtype), NC(arr(rng, (3,), dtype), "rev")),
                                                dict(axis=-1), desc="negative axis, view")]),
                (F32, F64, I32), differentiable=True))
register(OpInfo("split", ("StridedSlice",), lambda x, sizes, axis: ops.split(x, sizes, axis),
                lambda x, sizes, axis: tuple(np.split(x, np.cumsum(sizes)[:-1] if isinstance(sizes, list) else
                                                      range(sizes, x.shape[axis], sizes), axis)),
                lambda dtype, rng: iter([Sample((arr(rng, (4, 3), dtype),), dict(sizes=2, axis=0)),
                                         Sample((arr(rng, (2, 5), dtype),), dict(sizes=[1, 3, 1], axis=-1),
                                                desc="sections, negative axis"),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"),), dict(sizes=3, axis=1),
                                                desc="uneven, view")]),
                (F32, F64, I32), differentiable=True))
register(OpInfo("expand_dims_squeeze", ("Reshape",),
                lambda x, axis: (ops.expand_dims(x, axis), ops.squeeze(ops.expand_dims(x, axis), axis)),
                lambda x, axis: (np.expand_dims(x, axis), x.copy()),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),), dict(axis=1)),
                                         Sample((arr(rng, (2, 3), dtype),), dict(axis=-1), desc="negative axis"),
                                         Sample((arr(rng, (), dtype),), dict(axis=0), desc="0-d")]),
                (F32, F64, BOOL), differentiable=True))
register(OpInfo("flatten", ("Reshape",), lambda x: ops.flatten(x), lambda x: x.reshape(x.shape[0], -1),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 4), dtype),)),
                                         Sample((NC(arr(rng, (2, 3), dtype), "T"),), desc="view")]),
                (F32, F64), differentiable=True))


# Basic indexing → StridedSlice (views), Reshape for int/None keys.
_BASIC_KEYS = [
    (slice(1, 3),),
    (slice(None, None, -1),),
    (slice(None), slice(None, None, 2)),
    (1, Ellipsis, None),
    (-1,),
    (None, slice(1, None), -2),
    (slice(None, None, -2), 1),
    (Ellipsis, slice(4, 1, -2)),
    (slice(2, 2),),  # empty
]


def _basic_index_samples(dtype, rng):
    for i, key in enumerate(_BASIC_KEYS):
        x = arr(rng, (4, 5), dtype)
        yield Sample((NC(x, "T") if i == 2 else x,), dict(key=key), desc=f"x[{key!r}]")
    yield Sample((arr(rng, (3,), dtype),), dict(key=(Ellipsis,)), desc="x[...]")
    yield Sample((arr(rng, (), dtype),), dict(key=(None,)), desc="0-d x[None]")


register(OpInfo("getitem_basic", ("StridedSlice", "Reshape"), lambda x, key: x[key], lambda x, key: x[key].copy(),
                _basic_index_samples, (F32, F64, F16, I32, BOOL) + UINTS, differentiable=True,
                notes="ints, slices with negative steps, None, Ellipsis; results are views"))

_ADV_KEYS = [
    ([0, 2],),
    (slice(None), [1, 0, 1]),
    (np.array([[0, 1], [3, 2]]),),
    ([0, 1], [1, 3]),
    (np.array([True, False, True, False]),),
    (np.array([[True, False, False, True, True]] * 4),),
    (slice(1, None), np.array([-1, 0])),
    (1, [4, 0]),
]


def _adv_index_samples(dtype, rng):
    for i, key in enumerate(_ADV_KEYS):
        x = arr(rng, (4, 5), dtype)
        yield Sample((NC(x, "T") if i == 1 else x,), dict(key=key), desc=f"x[{key!r}]".replace("\n", ""))


register(OpInfo("getitem_advanced", ("Gather", "Reshape"), lambda x, key: x[key], lambda x, key: x[key],
                _adv_index_samples, (F32, F64, I32, BOOL) + UINTS, differentiable=True,
                notes="integer arrays and boolean masks (converted with np.nonzero in Python, so NonZero is not "
                      "used); gradients scatter back through Gather's bprop (repeated indices accumulate)"))


def _ssg_samples(dtype, rng):
    for key in [(slice(1, None), slice(None, None, 2)), (slice(None, None, -1), 1), (Ellipsis, slice(3, 0, -2))]:
        x = arr(rng, (3, 4), dtype)
        dy = arr(rng, x[key].shape, dtype)
        yield Sample((x, dy), dict(key=key), desc=f"key={key!r}")


def _strided_slice_grad(x, dy, key):
    """The gradient of x[key] with cotangent dy: StridedSliceGrad(dy) (a function of dy, linear)."""
    return kiln.grad(lambda a: ops.sum(ops.mul(a[key], dy)))(x)


register(OpInfo("strided_slice_grad", ("StridedSliceGrad", "StridedSlice"), _strided_slice_grad,
                np_strided_slice_grad, _ssg_samples, (F32, F64), differentiable=True, grad_args=(1,),
                notes="the gradient of basic indexing; differentiating it w.r.t. the cotangent checks "
                      "StridedSliceGrad's own bprop (StridedSlice) — a gradient of a gradient"))


# ---------------------------------------------------------------------------------------------- index ops

def _gather_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((5, 3)), np.array([4, 0, 2, 0])), dict(axis=0), desc="repeated indices")
    yield Sample((a((3, 5)), np.array([[1, 2], [4, 1]], np.int32)), dict(axis=1), desc="2-D int32 indices")
    yield Sample((a((2, 3, 4)), np.array([3, 0])), dict(axis=-1), desc="negative axis")
    yield Sample((a((3, 4)), np.array(2)), dict(axis=0), desc="0-d index")
    yield Sample((a((3, 4)), np.zeros((0,), np.int64)), dict(axis=0), desc="empty indices")
    yield Sample((NC(a((4, 3)), "T"), np.array([1, 1, 2])), dict(axis=1), desc="view")


register(OpInfo("gather", ("Gather",), lambda x, idx, axis: ops.gather(x, idx, axis),
                lambda x, idx, axis: np.take(x, idx, axis=axis), _gather_samples, (F32, F64, F16, I32, BOOL) + UINTS,
                differentiable=True, grad_args=(0,)))


def _tile_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3)),), dict(dims=(2, 2)))
    yield Sample((a((2, 3)),), dict(dims=(3,)), desc="fewer dims than rank: leading 1s")
    yield Sample((a((3,)),), dict(dims=(2, 1, 2)), desc="more dims than rank: input gets leading 1s")
    yield Sample((a((2, 3)),), dict(dims=(0, 2)), desc="zero copies")
    yield Sample((a(()),), dict(dims=(4,)), desc="0-d input")
    yield Sample((NC(a((3, 2)), "T"),), dict(dims=(1, 2)), desc="view")


register(OpInfo("tile", ("Reshape", "BroadcastTo"), lambda x, dims: ops.tile(x, dims),
                lambda x, dims: np.tile(x, dims), _tile_samples, ALL, differentiable=True))


def _repeat_elements_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3)),), dict(rep=2, axis=1))
    yield Sample((a((2, 3)),), dict(rep=3, axis=0))
    yield Sample((a((2, 3, 2)),), dict(rep=1, axis=-1), desc="rep 1, negative axis")
    yield Sample((NC(a((3, 2)), "T"),), dict(rep=2, axis=0), desc="view")


register(OpInfo("repeat_elements", ("Reshape", "BroadcastTo"), lambda x, rep, axis: ops.repeat_elements(x, rep, axis),
                lambda x, rep, axis: np.repeat(x, rep, axis), _repeat_elements_samples, ALL, differentiable=True))


def _one_hot_samples(dtype, rng):
    on, off = np.array(3, dtype), np.array(-1 if dtype.kind != "b" else 0, dtype)
    if dtype.kind == "b":
        on = np.array(True)
    yield Sample((np.array([0, 2, 1, 2], np.int32),), dict(depth=3, on_value=on, off_value=off, axis=-1))
    yield Sample((np.array([[0, 4], [-1, 1]], np.int64),), dict(depth=4, on_value=on, off_value=off, axis=0),
                 desc="out of range and -1 give off rows; axis 0")
    yield Sample((np.array([[1, 0, 2]], np.int32),), dict(depth=3, on_value=on, off_value=off, axis=1),
                 desc="middle axis")
    yield Sample((np.array(2, np.int32),), dict(depth=3, on_value=on, off_value=off, axis=-1), desc="0-d indices")


def np_one_hot(indices, depth, on_value, off_value, axis):
    pos = indices.ndim if axis == -1 else axis
    hit = np.expand_dims(indices, pos) == np.arange(depth).reshape([depth] + [1] * (indices.ndim - pos))
    return np.where(hit, on_value, off_value).astype(np.asarray(on_value).dtype)


register(OpInfo("one_hot", ("Equal", "Select"), lambda i, depth, on_value, off_value, axis: ops.one_hot(
                    i, depth, Tensor(on_value), Tensor(off_value), axis),
                np_one_hot, _one_hot_samples, ALL, ref_upcast=False,
                out_dtype=lambda sample: np.asarray(sample.kwargs["on_value"]).dtype,
                notes="indices outside [0, depth) give a row of off_value (MindSpore 2.10)"))


def _gather_nd_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((3, 4)), np.array([[0, 1], [2, 3], [0, 1]], np.int32)), desc="full index tuples, repeated")
    yield Sample((a((3, 4, 2)), np.array([[2], [0]], np.int64)), desc="partial tuples pick slices")
    yield Sample((a((3, 4)), np.array([[[1, 0]], [[2, 2]]], np.int32)), desc="batched indices")
    yield Sample((a((3, 4)), np.array([1, 3], np.int32)), desc="1-D indices: one tuple")
    yield Sample((NC(a((4, 3)), "T"), np.array([[2, 1]], np.int32)), desc="view")


def np_gather_nd(x, idx):
    idx = np.asarray(idx)
    return x[tuple(np.moveaxis(idx, -1, 0))]


register(OpInfo("gather_nd", ("Gather", "CheckRange"), ops.gather_nd, np_gather_nd, _gather_nd_samples,
                (F32, F64, F16, I32, BOOL), differentiable=True, grad_args=(0,)))


register(OpInfo("reciprocal", ("Div",), ops.reciprocal, lambda x: 1.0 / x, unary_samples(away=0.5), FLOATS,
                differentiable=True))


def _pad_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3)),), dict(padding=(1, 2), mode="constant"))
    yield Sample((a((2, 3)),), dict(padding=(1, 0, 0, 2), mode="constant", value=3), desc="two dims, value")
    yield Sample((a((2, 4)),), dict(padding=(-1, 1), mode="constant"), desc="negative crops")
    yield Sample((a((2, 3)),), dict(padding=(2, 1), mode="reflect"))
    yield Sample((a((3, 3)),), dict(padding=(1, 2, 2, 0), mode="replicate"), desc="replicate two dims")
    yield Sample((a((2, 3)),), dict(padding=(3, 1), mode="circular"), desc="circular, a full wrap")
    yield Sample((NC(a((3, 2)), "T"),), dict(padding=(1, 1), mode="reflect"), desc="view")


def np_pad(x, padding, mode, value=None):
    pairs = [(0, 0)] * x.ndim
    for k in range(len(padding) // 2):
        pairs[x.ndim - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))
    pairs = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if mode == "constant":
        return np.pad(x[crop], pairs, mode="constant", constant_values=0 if value is None else value)
    return np.pad(x, pairs, mode={"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode])


register(OpInfo("pad", ("Gather", "Concat"), lambda x, padding, mode, value=None: ops.pad(x, padding, mode, value),
                np_pad, _pad_samples, ALL, differentiable=True,
                notes="constant mode concatenates fills (Concat), the index modes gather (Gather)"))


def _sort_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    ties = np.array([[3, 1, 2, 1, 3], [0, 0, 2, 2, 1]], dtype)
    yield Sample((a((3, 5)),), dict(axis=-1, descending=False))
    yield Sample((a((4, 3)),), dict(axis=0, descending=True), desc="axis 0, descending")
    # (ties: not differentiable there — a perturbation reorders them — so no finite differences)
    yield Sample((ties,), dict(axis=1, descending=False), desc="ties keep index order", grad=False)
    yield Sample((ties,), dict(axis=1, descending=True), desc="ties keep index order, descending", grad=False)
    yield Sample((a((2, 3, 4)),), dict(axis=1, descending=False), desc="middle axis")
    yield Sample((NC(a((3, 4)), "T"),), dict(axis=-1, descending=True), desc="view")


def np_sort_desc(x, axis, descending):
    """NumPy's stable argsort (NaN last); descending: NaN first, then -x stably, so equal values keep index order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    xf = x.astype(np.float64)
    nan = np.isnan(xf)
    return np.lexsort((np.where(nan, 0.0, -xf), ~nan), axis=axis)  # the last key is the primary one


def np_sort(x, axis, descending):
    idx = np_sort_desc(x, axis, descending)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int32)


register(OpInfo("sort", ("ArgSort", "Gather"), lambda x, axis, descending: ops.sort(x, axis, descending), np_sort,
                _sort_samples, (F32, F64, F16, I32, I64), differentiable=True, ref_upcast=False))
register(OpInfo("argsort", ("ArgSort",), lambda x, axis, descending: ops.argsort(x, axis, descending),
                lambda x, axis, descending: np_sort_desc(x, axis, descending).astype(np.int32), _sort_samples,
                (F32, F64, F16, I32, I64), ref_upcast=False))


def _topk_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((3, 5)),), dict(k=2, dim=None, largest=True))
    yield Sample((a((4, 3)),), dict(k=3, dim=0, largest=False), desc="smallest, along dim 0")
    yield Sample((np.array([[3, 1, 3, 2]], dtype),), dict(k=2, dim=-1, largest=True), desc="ties: lower index first",
                 grad=False)
    yield Sample((a((2, 4)),), dict(k=0, dim=1, largest=True), desc="k = 0")
    yield Sample((NC(a((3, 4)), "T"),), dict(k=4, dim=-1, largest=True), desc="k = n, view")


def np_topk(x, k, dim, largest):
    axis = -1 if dim is None else dim
    idx = np_sort_desc(x, axis, largest)
    idx = np.take(idx, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int32)


register(OpInfo("topk", ("ArgSort", "Gather"), lambda x, k, dim, largest: ops.topk(x, k, dim, largest), np_topk,
                _topk_samples, (F32, F64, F16, I32, I64), differentiable=True, ref_upcast=False))


def _uss_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((5, 3)), np.array([0, 2, 0, 1, 2]), 3))
    yield Sample((a((2, 3, 2)), np.array([[0, 1, 1], [3, 0, 2]], np.int32), 4), desc="2-D ids")
    yield Sample((a((4,)), np.array([0, -1, 2, 5]), 3), desc="ids out of range dropped")
    yield Sample((NC(a((3, 4)), "T"), np.array([1, 1, 0]), 2), desc="view")
    yield Sample((a((3, 2)), np.array([0, 0, 0]), 1), desc="one segment")


register(OpInfo("unsorted_segment_sum", ("UnsortedSegmentSum",), _core.unsorted_segment_sum, np_uss, _uss_samples,
                (F32, F64, I32), differentiable=True, grad_args=(0,),
                notes="not exposed as kiln.ops.unsorted_segment_sum yet (MindSpore has it): called via kiln._core; "
                      "negative / out-of-range ids are dropped (MindSpore)"))


def _nonzero_samples(dtype, rng):
    v = [0, 1] if dtype == BOOL else [0, 0, 1, -2]
    a = lambda s: rng.choice(v, s).astype(dtype)  # noqa: E731
    yield Sample((a((3, 4)),))
    yield Sample((a((6,)),), desc="1-D")
    yield Sample((a((2, 2, 3)),), desc="3-D")
    yield Sample((np.zeros((2, 3), dtype),), desc="all zero")
    yield Sample((a((0, 3)),), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), desc="view")


register(OpInfo("nonzero", ("NonZero",), _core.nonzero, lambda x: np.argwhere(x), _nonzero_samples,
                (BOOL, F32, I32), graph=False,
                graph_reason="data-dependent output shape: cannot be compiled; under jit it raises RuntimeError "
                             "(test_nonzero_in_graph_raises)",
                notes="not exposed as kiln.ops.nonzero (MindSpore has it); boolean-mask indexing does not use it"))


# ---- TensorScatterUpdate, TensorCopy, item assignment (functional: differentiable and traceable) ----

def np_tensor_scatter_update(x, indices, updates):
    y = np.array(x, copy=True)
    n = indices.shape[-1]
    for row, u in zip(indices.reshape(-1, n), updates.reshape((-1,) + x.shape[n:])):
        y[tuple(row)] = u
    return y


def _tsu_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((4, 3)), np.array([[3], [1]]), a((2, 3))), desc="rows")
    yield Sample((a((4, 3)), np.array([[0, 2], [3, 1], [1, 1]], np.int32), a((3,))), desc="elements, int32 indices")
    yield Sample((a((2, 3, 2)), np.array([[[1, 0]], [[0, 2]]]), a((2, 1, 2))), desc="3-D, batched indices")
    yield Sample((a((5,)), np.array([[2], [4], [2]]), a((3,))), desc="repeated index: the last update wins")
    yield Sample((a((4, 3)), np.zeros((0, 1), np.int64), a((0, 3))), desc="no update")
    yield Sample((NC(a((3, 4)), "T"), np.array([[1], [0]]), a((2, 4))), desc="view")


register(OpInfo("tensor_scatter_update", ("TensorScatterUpdate",), _core.tensor_scatter_update,
                np_tensor_scatter_update, _tsu_samples, (F32, F64, F16, I32, BOOL), differentiable=True,
                grad_args=(0, 2), notes="MindSpore's TensorScatterUpdate; out-of-range indices raise IndexError; "
                "the gradient of an update that a repeated index overwrote is zero"))
register(OpInfo("tensor_copy", ("TensorCopy",), lambda x: x.copy(), lambda x: x.copy(), unary_samples(),
                ALL + UINTS, differentiable=True, notes="Tensor.copy()/clone(): a new tensor, differentiable, traced"))


def _setitem_fn(x, value, key):
    y = x.copy()
    y[key] = value
    return y


def _np_setitem(x, value, key):
    y = np.array(x, copy=True)
    y[key] = value
    return y


_SETITEM_CASES = [  # (key, shape of the tensor value; None: a Python scalar)
    ((slice(0, 2),), (2, 5)),
    ((slice(0, 2),), (5,)),
    ((slice(None), 1), None),
    ((Ellipsis, slice(None, None, -2)), (4, 1)),
    ((None, 1, slice(1, 4)), (1, 3)),
    (([0, 2],), (2, 5)),
    ((slice(1, None), [4, 0]), (3, 1)),
    ((np.array([True, False, True, True]),), (5,)),
    ((np.array([[True, False, False, True, True]] * 4),), (12,)),
    (([1, 3, 1],), (3, 5)),
    ((2, [0, 0, 4]), (3,)),
]


def _setitem_samples(dtype, rng):
    for key, vshape in _SETITEM_CASES:
        v = (2.5 if dtype.kind == "f" else 3) if vshape is None else arr(rng, vshape, dtype)
        yield Sample((arr(rng, (4, 5), dtype), v), dict(key=key), desc=f"x[{key!r}] = {vshape}".replace("\n", ""))


register(OpInfo("setitem_functional", ("TensorScatterUpdate", "TensorCopy"), _setitem_fn, _np_setitem,
                _setitem_samples, (F32, F64, I32, BOOL), differentiable=True,
                notes="y = x.copy(); y[key] = value: basic, integer-array and boolean keys, Python-scalar and "
                      "broadcast tensor values, repeated indices (last wins); under a gradient and in graphs it is "
                      "TensorScatterUpdate (gradient zero at overwritten positions; the value's gradient summed over "
                      "its broadcast), in plain PyNative an in-place write"))


def _check_range_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((2, 3)),))
    yield Sample((a(()),), desc="0-d")
    yield Sample((a((0, 4)),), desc="empty")
    yield Sample((NC(a((3, 4)), "T"),), desc="view")


register(OpInfo("check_range", ("CheckRange",), lambda x: _core.check_range(x, "Test", "value", -2.0, 2.0, True),
                lambda x: x.copy(), _check_range_samples, (F32, F64, F16, I32), differentiable=True,
                special_skip="a range check: NaN and values outside [lo, hi] raise ValueError by definition "
                             "(test_setitem_copy_checks.py tests those errors)",
                notes="returns its input after checking the values (ValueError naming the first bad value and "
                      "its index; test_setitem_copy_checks.py checks the errors in both modes)"))


# ---------------------------------------------------------------------------------------------- matmul

def _matmul_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)  # noqa: E731
    yield Sample((a((2, 3)), a((3, 4))))
    yield Sample((a((3,)), a((3, 4))), desc="1-D lhs")
    yield Sample((a((2, 3)), a((3,))), desc="1-D rhs")
    yield Sample((a((3,)), a((3,))), desc="dot → 0-d")
    yield Sample((a((2, 2, 3)), a((3, 4))), desc="batched lhs")
    yield Sample((a((2, 1, 2, 3)), a((3, 3, 2))), desc="broadcast batch")
    yield Sample((NC(a((3, 2)), "T"), NC(a((2, 4)), "step")), desc="views")
    yield Sample((a((0, 3)), a((3, 2))), desc="empty rows")
    yield Sample((a((2, 0)), a((0, 3))), desc="empty contraction → zeros")


register(OpInfo("matmul", ("BatchMatMul",), ops.matmul, np.matmul, _matmul_samples, (F32, F64, F16, I32),
                differentiable=True, tol={F16: (3e-3, 3e-3), F32: (1e-5, 1e-5)}))
register(OpInfo("operator.matmul", ("BatchMatMul",), lambda x, y: x @ y, np.matmul,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3, 2), dtype)))]), (F32, F64),
                differentiable=True))


def _matmul_t_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    yield Sample((a((3, 2)), a((3, 4))), dict(transpose_a=True, transpose_b=False), desc="transpose_a")
    yield Sample((a((2, 3)), a((4, 3))), dict(transpose_a=False, transpose_b=True), desc="transpose_b")
    yield Sample((a((2, 3, 2)), a((2, 4, 3))), dict(transpose_a=True, transpose_b=True), desc="batched, both")


def _np_matmul_t(x, y, transpose_a, transpose_b):
    if transpose_a:
        x = np.swapaxes(x, -1, -2)
    if transpose_b:
        y = np.swapaxes(y, -1, -2)
    return x @ y


register(OpInfo("MatMul_primitive", ("BatchMatMul",),
                lambda x, y, transpose_a, transpose_b: ops.BatchMatMul(transpose_a, transpose_b)(x, y),
                _np_matmul_t, _matmul_t_samples, (F32, F64), differentiable=True))


# ---------------------------------------------------------------------------------------------- fusion patterns
# Composite functions shaped like what the graph passes fuse (matmul+bias+activation; elementwise chains): their
# Graph-parity tests run the optimized graph (fused kernels when the passes fire) against PyNative.

def _dense_samples(dtype, rng):
    yield Sample((arr(rng, (4, 3), dtype), arr(rng, (3, 5), dtype), arr(rng, (5,), dtype)))
    yield Sample((arr(rng, (2, 2, 3), dtype), arr(rng, (3, 2), dtype), arr(rng, (2,), dtype)), desc="batched")


register(OpInfo("pattern.dense_relu", ("BatchMatMul", "Add", "ReLU"),
                lambda x, w, b: ops.relu(ops.add(ops.matmul(x, w), b)),
                lambda x, w, b: np.maximum(x @ w + b, 0), _dense_samples, (F32, F64), differentiable=True))
register(OpInfo("pattern.dense_gelu", ("BatchMatMul", "Add", "GeLU"),
                lambda x, w, b: ops.gelu(ops.matmul(x, w) + b), lambda x, w, b: np_gelu(x @ w + b),
                _dense_samples, (F32, F64), differentiable=True))
register(OpInfo("pattern.elementwise_chain", ("Mul", "Add", "Tanh", "Sigmoid", "Sub", "Exp", "Neg"),
                lambda x, y: ops.sub(ops.mul(ops.tanh(ops.add(ops.mul(x, y), 1.0)), ops.sigmoid(x)),
                                     ops.exp(ops.neg(ops.mul(x, x)))),
                lambda x, y: np.tanh(x * y + 1.0) * np_sigmoid(x) - np.exp(-(x * x)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype))),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), arr(rng, (3, 4), dtype)),
                                                desc="view")]),
                (F32, F64, F16), differentiable=True, tol={F16: (5e-3, 5e-3)}))


# ---------------------------------------------------------------------------------------------- conv / pool / norm
# NCHW. References are direct NumPy loops; the *Grad ops are checked against the adjoint (transpose) of the NumPy
# forward, computed column by column (np_adjoint), so no reference reuses the formulas of the code under test.

def _out_len(n, k, s, p0, p1, d, ceil_mode):
    """Output length of a window sweep (PyTorch's / MindSpore's rule, incl. ceil_mode's last-window clipping)."""
    span = n + p0 + p1 - d * (k - 1) - 1
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p0:
        o -= 1
    return o


def np_adjoint(f, in_shape, y):
    """Jᵀ·y for the linear map f (NumPy): column i of J is f(e_i)."""
    n = int(np.prod(in_shape))
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        cols.append(np.asarray(f(e.reshape(in_shape)), np.float64).reshape(-1))
    jac = np.stack(cols, axis=1) if cols else np.zeros((y.size, 0))
    yv = y.reshape(-1).astype(np.float64)
    if np.isfinite(yv).all():
        return (jac.T @ yv).reshape(in_shape)
    # NaN/±inf in y reach only the entries J connects them to (a structural zero of J times NaN is not NaN)
    with np.errstate(invalid="ignore"):
        prod = np.where(jac.T != 0, jac.T * yv[None, :], 0.0)
    return prod.sum(axis=1).reshape(in_shape)


def np_conv2d(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = _out_len(h, kh, sh, pad[0], pad[1], dh, False)
    ow = _out_len(wd, kw, sw, pad[2], pad[3], dw, False)
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out


def _np_pool_windows(h, w, k, s, pad, d, ceil_mode):
    """For each output (oh, ow): the list of in-bounds (row, col) positions of its window, and the window's clipped
    area on the padded input."""
    oh = _out_len(h, k[0], s[0], pad[0], pad[1], d[0], ceil_mode)
    ow = _out_len(w, k[1], s[1], pad[2], pad[3], d[1], ceil_mode)
    wins = {}
    for a in range(oh):
        for b in range(ow):
            rows = [a * s[0] - pad[0] + i * d[0] for i in range(k[0])]
            cols = [b * s[1] - pad[2] + j * d[1] for j in range(k[1])]
            inside = [(r, c) for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
            area = (sum(1 for r in rows if -pad[0] <= r < h + pad[1]) *
                    sum(1 for c in cols if -pad[2] <= c < w + pad[3]))
            wins[(a, b)] = (inside, area)
    return oh, ow, wins


def np_max_pool2d(x, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False):
    """(values, Int64 indices h·W + w of the first maximum in row-major window order)."""
    n, c, h, w = x.shape
    oh, ow, wins = _np_pool_windows(h, w, kernel, stride, pad, dilation, ceil_mode)
    val = np.zeros((n, c, oh, ow), x.dtype)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for (a, b), (inside, _) in wins.items():
        rows = np.array([r for r, _ in inside])
        cols = np.array([cc for _, cc in inside])
        vals = x[:, :, rows, cols]  # (n, c, window)
        arg = np.argmax(vals, axis=-1)
        val[:, :, a, b] = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
        idx[:, :, a, b] = rows[arg] * w + cols[arg]
    return val, idx


def np_avg_pool2d(x, kernel, stride, pad=(0, 0, 0, 0), ceil_mode=False, count_include_pad=True,
                  divisor_override=0):
    n, c, h, w = x.shape
    oh, ow, wins = _np_pool_windows(h, w, kernel, stride, pad, (1, 1), ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for (a, b), (inside, area) in wins.items():
        total = sum(x[:, :, r, cc].astype(np.float64) for r, cc in inside) if inside else 0.0
        div = divisor_override if divisor_override else (area if count_include_pad else len(inside))
        out[:, :, a, b] = total / div
    return out


def np_adaptive_avg_pool2d(x, out_size):
    n, c, h, w = x.shape
    oh, ow = out_size
    out = np.zeros((n, c, oh, ow))
    for a in range(oh):
        r0, r1 = (a * h) // oh, -(-((a + 1) * h) // oh)
        for b in range(ow):
            c0, c1 = (b * w) // ow, -(-((b + 1) * w) // ow)
            out[:, :, a, b] = x[:, :, r0:r1, c0:c1].astype(np.float64).mean(axis=(2, 3))
    return out


def np_batch_norm(x, scale, bias, mean, var, training, eps):
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1, -1] + [1] * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)
    return y, mean, var


def _pads(padding):
    """ops' padding argument → (top, bottom, left, right)."""
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2:
        return (padding[0], padding[0], padding[1], padding[1])
    return tuple(padding)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


if hasattr(ops, "conv2d"):
    def _conv_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)  # noqa: E731
        yield Sample((a((2, 2, 5, 5)), a((3, 2, 3, 3))), dict(stride=1, padding=0, dilation=1, groups=1))
        yield Sample((a((1, 2, 5, 4)), a((2, 2, 3, 3))), dict(stride=2, padding=1, dilation=1, groups=1),
                     desc="stride 2, pad 1")
        yield Sample((a((1, 1, 6, 6)), a((2, 1, 2, 2))), dict(stride=1, padding=(1, 0, 2, 1), dilation=2, groups=1),
                     desc="dilation 2, asymmetric pads")
        yield Sample((a((1, 4, 4, 4)), a((4, 2, 2, 2))), dict(stride=(1, 2), padding=0, dilation=1, groups=2),
                     desc="groups 2")
        yield Sample((a((1, 3, 3, 3)), a((2, 3, 1, 1))), dict(stride=1, padding=0, dilation=1, groups=1),
                     desc="1x1 kernel")
        yield Sample((NC(a((1, 2, 4, 4)), "step"), NC(a((2, 2, 2, 2)), "T")),
                     dict(stride=1, padding=1, dilation=1, groups=1), desc="views")

    register(OpInfo("conv2d", ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
                    lambda x, w, stride, padding, dilation, groups: ops.conv2d(x, w, None, stride, "pad", padding,
                                                                               dilation, groups),
                    lambda x, w, stride, padding, dilation, groups: np_conv2d(x, w, _pair(stride), _pads(padding),
                                                                              _pair(dilation), groups),
                    _conv_samples, FLOATS, differentiable=True, out_dtype=_same_dtype,
                    tol={F16: (5e-3, 5e-3), F32: (1e-5, 1e-5)},
                    notes="its gradient covers Conv2DBackpropInput (dx) and Conv2DBackpropFilter (dw)"))
    register(OpInfo("conv2d_same_bias", ("Conv2D", "Add"),
                    lambda x, w, b: ops.conv2d(x, w, b, 2, "same"),
                    lambda x, w, b: np_conv2d(x, w, (2, 2), (1, 1, 0, 1), (1, 1)) + b.reshape(1, -1, 1, 1),
                    lambda dtype, rng: iter([Sample((arr(rng, (1, 2, 5, 4), dtype), arr(rng, (3, 2, 3, 2), dtype),
                                                     arr(rng, (3,), dtype)), desc="'same', stride 2, bias")]),
                    (F32, F64), differentiable=True,
                    notes="'same': total pad max(0, (⌈n/s⌉−1)·s + k − n), the odd one at the bottom/right"))

    def _convt_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)  # noqa: E731
        yield Sample((a((1, 3, 3, 3)), a((3, 2, 3, 3))), dict(stride=1, padding=0, output_padding=0))
        yield Sample((a((2, 2, 2, 3)), a((2, 1, 3, 2))), dict(stride=2, padding=1, output_padding=1),
                     desc="stride 2, pad 1, output_padding 1")

    def _np_conv_transpose2d(y, w, stride, padding, output_padding):
        n, cin, h, wd = y.shape
        kh, kw = w.shape[2:]
        s, p, op_ = _pair(stride), _pair(padding), _pair(output_padding)
        out_shape = (n, w.shape[1], (h - 1) * s[0] - 2 * p[0] + kh + op_[0], (wd - 1) * s[1] - 2 * p[1] + kw + op_[1])
        # conv_transpose2d(y, w) is the adjoint of conv2d(·, w) (weight (C_in, C_out, ...) seen as conv's (O, C)).
        return np_adjoint(lambda x: np_conv2d(x, w, s, (p[0], p[0], p[1], p[1])), out_shape, y)

    register(OpInfo("conv_transpose2d", ("Conv2DBackpropInput", "Conv2D", "Conv2DBackpropFilter"),
                    lambda y, w, stride, padding, output_padding: ops.conv_transpose2d(
                        y, w, None, stride, padding, output_padding),
                    _np_conv_transpose2d, _convt_samples, (F32, F64), differentiable=True, special_args=(0,),
                    notes="special values in y only: the reference is the adjoint of a NumPy conv built with w "
                          "fixed, where 0·NaN spreads a NaN/inf of w to every entry; "
                          "Conv2DBackpropInput as a forward op; its gradient uses Conv2D (dy) and "
                          "Conv2DBackpropFilter (dw)"))

    def _cbf_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)  # noqa: E731
        yield Sample((a((2, 3, 3, 3)), a((2, 2, 5, 5))), dict(filter_shape=(3, 2, 3, 3), stride=(1, 1),
                                                             pad=(0, 0, 0, 0), dilation=(1, 1), groups=1))
        yield Sample((a((1, 4, 2, 2)), a((1, 2, 4, 4))), dict(filter_shape=(4, 1, 2, 2), stride=(2, 2),
                                                             pad=(1, 0, 1, 0), dilation=(1, 1), groups=2),
                     desc="groups 2, stride 2, pads")

    def _np_cbf(dy, x, filter_shape, stride, pad, dilation, groups):
        return np_adjoint(lambda w: np_conv2d(x, w, stride, pad, dilation, groups), filter_shape, dy)

    register(OpInfo("conv2d_backprop_filter", ("Conv2DBackpropFilter", "Conv2D"),
                    lambda dy, x, filter_shape, stride, pad, dilation, groups: _core.conv2d_backprop_filter(
                        dy, x, list(filter_shape), list(stride), list(pad), list(dilation), groups),
                    _np_cbf, _cbf_samples, (F32, F64), differentiable=True, special_args=(0,),
                    special_ok=lambda s: not any(s.kwargs["pad"]),
                    notes="special values in dy only (a NaN/inf of x spreads through the reference's 0·NaN), "
                          "unpadded samples only (Kiln's im2col multiplies dy by padded zeros, 0·NaN = NaN, as "
                          "GEMM-based kernels do; the reference skips padding); "
                          "called via kiln._core (no public API); checks Conv2DBackpropFilter's own bprop"))

if hasattr(ops, "max_pool2d"):
    def _maxpool_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731  (random floats: no ties)
        yield Sample((a((2, 2, 4, 4)),), dict(kernel_size=2, stride=None, padding=0, dilation=1, ceil_mode=False))
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False),
                     desc="pad 1 (padding never wins)")
        yield Sample((a((1, 1, 5, 6)),), dict(kernel_size=(2, 3), stride=(1, 2), padding=0, dilation=1,
                                              ceil_mode=False), desc="rectangular")
        yield Sample((a((1, 1, 6, 6)),), dict(kernel_size=2, stride=1, padding=0, dilation=2, ceil_mode=False),
                     desc="dilation 2")
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True),
                     desc="ceil_mode")
        yield Sample((NC(a((1, 2, 4, 4)), "step"),), dict(kernel_size=2, stride=None, padding=0, dilation=1,
                                                          ceil_mode=False), desc="view")

    def _np_maxpool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices=False):
        k = _pair(kernel_size)
        s = k if stride is None else _pair(stride)
        p = _pair(padding)
        x4 = x[None] if x.ndim == 3 else x
        v, i = np_max_pool2d(x4, k, s, (p[0], p[0], p[1], p[1]), _pair(dilation), ceil_mode)
        if x.ndim == 3:
            v, i = v[0], i[0]
        return (v, i) if return_indices else v

    register(OpInfo("max_pool2d", ("MaxPool", "MaxPoolGradWithArgmax"),
                    lambda x, **kw: ops.max_pool2d(x, **kw), _np_maxpool, _maxpool_samples, FLOATS,
                    differentiable=True, ref_upcast=False, nan_wins=np.inf, ties="first",
                    notes="gradient → the first maximum of each window: while a gradient is recorded MaxPool also "
                          "computes its argmax, and the backward scatters dy there (MaxPoolGradWithArgmax)"))
    register(OpInfo("max_pool2d_indices", ("MaxPool",),
                    lambda x, **kw: ops.max_pool2d(x, return_indices=True, **kw),
                    lambda x, **kw: _np_maxpool(x, return_indices=True, **kw),
                    lambda dtype, rng: iter(list(_maxpool_samples(dtype, rng))[:5] +
                                            [Sample((arr(rng, (2, 4, 4), dtype),),
                                                    dict(kernel_size=2, stride=None, padding=0, dilation=1,
                                                         ceil_mode=False), desc="3-D input")]),
                    (F32, F64), differentiable=True, ref_upcast=False,
                    notes="indices are h·W + w in the input plane (Int64)"))

    def _mpg_samples(dtype, rng):
        for kw in [dict(kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0], dilation=[1, 1], ceil_mode=False),
                   dict(kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1], dilation=[1, 1], ceil_mode=False),
                   dict(kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0], dilation=[1, 1], ceil_mode=True)]:
            x = arr(rng, (1, 2, 5, 5), dtype)
            oh, ow, _ = _np_pool_windows(5, 5, kw["kernel"], kw["stride"], kw["pad"], kw["dilation"], kw["ceil_mode"])
            yield Sample((x, arr(rng, (1, 2, oh, ow), dtype)), kw, desc=f"k={kw['kernel']} s={kw['stride']} "
                                                                         f"ceil={kw['ceil_mode']}")

    def _np_mpg(x, dy, kernel, stride, pad, dilation, ceil_mode):
        _, idx = np_max_pool2d(x, kernel, stride, pad, dilation, ceil_mode)
        out = np.zeros(x.shape)
        n, c = x.shape[:2]
        flat = out.reshape(n, c, -1)
        for i in range(n):
            for j in range(c):
                np.add.at(flat[i, j], idx[i, j].reshape(-1), dy[i, j].reshape(-1))
        return out

    register(OpInfo("max_pool2d_grad", ("MaxPoolGrad", "MaxPoolGradGrad"),
                    lambda x, dy, **kw: _core.max_pool2d_grad(x, dy, **kw), _np_mpg, _mpg_samples, (F32, F64),
                    differentiable=True, grad_args=(1,),
                    notes="MaxPoolGrad as a forward op (dy scattered to each window's argmax, overlapping windows "
                          "accumulate); its gradient w.r.t. dy is MaxPoolGradGrad"))

    def _mpga(x, dy, kernel, stride, pad, dilation, ceil_mode):
        """MaxPool's backward as recorded in training: d/dx ⟨max_pool2d(x), dy⟩ — MaxPool keeps its argmax and the
        gradient is MaxPoolGradWithArgmax(x, dy, argmax); a function of dy (its gradient: MaxPoolGradGrad)."""
        p = (pad[0], pad[2]) if pad[0] == pad[1] and pad[2] == pad[3] else None
        if p is None:
            raise ValueError("symmetric pads only")
        return kiln.grad(lambda a: ops.sum(ops.mul(ops.max_pool2d(a, tuple(kernel), tuple(stride), p, tuple(dilation),
                                                                  ceil_mode=ceil_mode), dy)))(x)

    register(OpInfo("max_pool2d_grad_argmax", ("MaxPoolGradWithArgmax", "MaxPool", "MaxPoolGradGrad"),
                    _mpga, _np_mpg, _mpg_samples, (F32, F64), differentiable=True, grad_args=(1,),
                    notes="the gradient of ops.max_pool2d as a forward function of dy: dy scattered at the argmax "
                          "that MaxPool saved (MaxPoolGradWithArgmax; equal to MaxPoolGrad's result); its gradient "
                          "w.r.t. dy is MaxPoolGradGrad"))

    def _mpgg(x, h, dy0, **kw):
        """MaxPoolGradGrad(x, h) = ∂/∂dy ⟨MaxPoolGrad(x, dy), h⟩ — a function of h."""
        return kiln.grad(lambda d: ops.sum(ops.mul(_core.max_pool2d_grad(x, d, **kw), h)))(dy0)

    def _np_mpgg(x, h, dy0, kernel, stride, pad, dilation, ceil_mode):
        _, idx = np_max_pool2d(x, kernel, stride, pad, dilation, ceil_mode)
        n, c = x.shape[:2]
        return np.take_along_axis(h.reshape(n, c, -1), idx.reshape(n, c, -1), -1).reshape(idx.shape)

    register(OpInfo("max_pool2d_grad_grad", ("MaxPoolGradGrad", "MaxPoolGrad"), _mpgg, _np_mpgg,
                    lambda dtype, rng: iter([Sample((s.args[0], arr(rng, s.args[0].shape, dtype), s.args[1]),
                                                    s.kwargs, desc=s.desc) for s in _mpg_samples(dtype, rng)]),
                    (F32, F64), differentiable=True, grad_args=(1,),
                    notes="h read at each window's argmax; its gradient w.r.t. h (MaxPoolGrad) checks "
                          "MaxPoolGradGrad's own bprop — third order through the max pool"))

if hasattr(ops, "avg_pool2d"):
    def _avgpool_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        yield Sample((a((2, 2, 4, 4)),), dict(kernel_size=2, stride=2, padding=0, ceil_mode=False,
                                              count_include_pad=True, divisor_override=0))
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=1, padding=1, ceil_mode=False,
                                              count_include_pad=True, divisor_override=0), desc="pad, include pad")
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=2, padding=1, ceil_mode=False,
                                              count_include_pad=False, divisor_override=0), desc="pad, exclude pad")
        yield Sample((a((1, 1, 5, 5)),), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True,
                                              count_include_pad=True, divisor_override=0), desc="ceil_mode")
        yield Sample((a((1, 1, 4, 5)),), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0, 0, 1),
                                              ceil_mode=False, count_include_pad=True, divisor_override=3),
                     desc="asymmetric pads, divisor_override")
        yield Sample((NC(a((1, 2, 4, 4)), "T"),), dict(kernel_size=2, stride=1, padding=0, ceil_mode=False,
                                                       count_include_pad=True, divisor_override=0), desc="view")

    def _np_avgpool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        k = _pair(kernel_size)
        return np_avg_pool2d(x, k, _pair(stride), _pads(padding), ceil_mode, count_include_pad, divisor_override)

    register(OpInfo("avg_pool2d", ("AvgPool", "AvgPoolGrad"), lambda x, **kw: ops.avg_pool2d(x, **kw), _np_avgpool,
                    _avgpool_samples, FLOATS, differentiable=True, out_dtype=_same_dtype))

    def _apg_samples(dtype, rng):
        for s in list(_avgpool_samples(dtype, rng))[:5]:
            x = np_value(s.args[0])
            kw = s.kwargs
            k = _pair(kw["kernel_size"])
            oh, ow, _ = _np_pool_windows(x.shape[2], x.shape[3], k, _pair(kw["stride"]), _pads(kw["padding"]),
                                         (1, 1), kw["ceil_mode"])
            yield Sample((arr(rng, x.shape[:2] + (oh, ow), dtype),),
                         dict(input_shape=x.shape, kernel=list(k), stride=list(_pair(kw["stride"])),
                              pad=list(_pads(kw["padding"])), ceil_mode=kw["ceil_mode"],
                              count_include_pad=kw["count_include_pad"], divisor_override=kw["divisor_override"]),
                         desc=s.desc)

    def _np_apg(dy, input_shape, kernel, stride, pad, ceil_mode, count_include_pad, divisor_override):
        return np_adjoint(lambda x: np_avg_pool2d(x, kernel, stride, pad, ceil_mode, count_include_pad,
                                                  divisor_override), input_shape, dy)

    register(OpInfo("avg_pool2d_grad", ("AvgPoolGrad", "AvgPool"),
                    lambda dy, input_shape, **kw: _core.avg_pool2d_grad(dy, list(input_shape), **kw), _np_apg,
                    _apg_samples, (F32, F64), differentiable=True,
                    notes="AvgPoolGrad as a forward op (the adjoint of AvgPool); its bprop is AvgPool"))

if hasattr(ops, "adaptive_avg_pool2d"):
    def _aap_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        yield Sample((a((1, 2, 5, 7)),), dict(output_size=(2, 3)), desc="uneven bins")
        yield Sample((a((2, 1, 4, 4)),), dict(output_size=1), desc="global")
        yield Sample((a((1, 1, 3, 4)),), dict(output_size=(3, 4)), desc="identity")
        yield Sample((a((1, 2, 3, 5)),), dict(output_size=(None, 2)), desc="None keeps H")
        yield Sample((a((2, 5, 4)),), dict(output_size=3), desc="3-D input, upsampling-free bins")
        yield Sample((NC(a((1, 2, 4, 6)), "step"),), dict(output_size=(3, 4)), desc="view, overlapping bins")

    def _np_aap(x, output_size):
        squeeze = x.ndim == 3
        x4 = x[None] if squeeze else x
        o = _pair(output_size) if output_size is not None else (None, None)
        o = tuple(x4.shape[2 + i] if o[i] is None else o[i] for i in range(2))
        y = np_adaptive_avg_pool2d(x4, o)
        return y[0] if squeeze else y

    register(OpInfo("adaptive_avg_pool2d", ("AdaptiveAvgPool2D", "AdaptiveAvgPool2DGrad"),
                    lambda x, output_size: ops.adaptive_avg_pool2d(x, output_size), _np_aap, _aap_samples, FLOATS,
                    differentiable=True, out_dtype=_same_dtype))

    def _aapg_samples(dtype, rng):
        for in_shape, out in [((1, 2, 5, 7), (2, 3)), ((1, 1, 4, 6), (3, 4)), ((2, 1, 3, 3), (1, 1))]:
            yield Sample((arr(rng, in_shape[:2] + out, dtype),), dict(input_shape=in_shape), desc=f"{in_shape}→{out}")

    register(OpInfo("adaptive_avg_pool2d_grad", ("AdaptiveAvgPool2DGrad", "AdaptiveAvgPool2D"),
                    lambda dy, input_shape: _core.adaptive_avg_pool2d_grad(dy, list(input_shape)),
                    lambda dy, input_shape: np_adjoint(lambda x: np_adaptive_avg_pool2d(x, dy.shape[2:]),
                                                       input_shape, dy),
                    _aapg_samples, (F32, F64), differentiable=True))

if hasattr(ops, "batch_norm"):
    def _bn_samples(dtype, rng):
        for shape, training in [((4, 3), True), ((2, 3, 2, 2), True), ((3, 2, 2), False), ((2, 3, 2, 2), False)]:
            c = shape[1]
            x = arr(rng, shape, dtype)
            yield Sample((NC(x, "T") if len(shape) == 4 and not training else x, arr(rng, (c,), dtype, 0.5, 1.5),
                          arr(rng, (c,), dtype), arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(training=training, eps=1e-5), desc=f"training={training}")

    register(OpInfo("batch_norm", ("BatchNorm", "BatchNormGrad"),
                    lambda x, scale, bias, mean, var, training, eps: tuple(
                        _core.batch_norm(x, scale, bias, mean, var, training, eps)),
                    np_batch_norm, _bn_samples, (F32, F64, F16), differentiable=True, out_dtype=_same_dtype,
                    tol={F16: (5e-3, 5e-3), F32: (2e-5, 2e-5)}, grad_tol=(1e-5, 1e-5), grad_args=(0, 1, 2),
                    special_args=(0,),  # ±inf in scale/mean/var: Kiln folds y = x·a + b (a = scale/√(var + eps),
                    # b = bias − mean·a, as PyTorch's CPU kernel), so inf − inf = NaN where the unfolded reference
                    # gives ±inf; special values go into x only
                    notes="BatchNorm (y, batch mean, biased batch variance); training: the gradient of y alone is one "
                          "fused kernel (BatchNormGrad) when the backward is not itself differentiated; gradients flow through the "
                          "batch statistics (also from the mean/variance outputs). The mean/variance INPUTS get zero "
                          "gradient, in inference too (MindSpore's bprop: running statistics are state), so they are "
                          "not finite-differenced"))

    def _bn_state_samples(dtype, rng):
        for shape in [(4, 3), (2, 3, 2, 2)]:
            c = shape[1]
            yield Sample((arr(rng, shape, dtype), arr(rng, (c,), dtype, 0.5, 1.5), arr(rng, (c,), dtype),
                          arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(momentum=0.1, eps=1e-5), desc=f"{shape}")

    def _bn_state_run(sample, use_jit):
        x, w, b, m0, v0 = sample.args
        m, v = _param(m0, "bn_mean"), _param(v0, "bn_var")
        wt, bt = Tensor(w), Tensor(b)
        k = sample.kwargs
        return _run_stateful(lambda t: ops.batch_norm(t, m, v, wt, bt, True, k["momentum"], k["eps"]), [m, v], [x],
                             use_jit)

    def _np_unbiased_var(x):
        """The unbiased (ddof=1) per-channel variance over every axis but 1: what running/moving variances get."""
        return x.var(axis=tuple(i for i in range(x.ndim) if i != 1), ddof=1)

    def _bn_state_ref(sample):
        x, w, b, m0, v0 = [a.astype(np.float64) for a in sample.args]
        y, bm, _ = np_batch_norm(x, w, b, m0, v0, True, sample.kwargs["eps"])
        mom = sample.kwargs["momentum"]
        return [y, (1 - mom) * m0 + mom * bm, (1 - mom) * v0 + mom * _np_unbiased_var(x)]

    register(OpInfo("batch_norm_training_update", ("BatchNorm", "Assign"), kind="state", samples=_bn_state_samples,
                    dtypes=(F32, F64), run=_bn_state_run, ref=_bn_state_ref,
                    notes="ops.batch_norm(training=True) updates the running statistics in place: "
                          "running = (1 − momentum)·running + momentum·batch, with the UNBIASED batch variance "
                          "(ddof=1, as MindSpore/PyTorch); the output is normalized with the biased one"))

    def _bn_cell_samples(dtype, rng):
        for shape in [(4, 3), (2, 3, 4), (2, 3, 2, 2), (2, 2)]:
            c = shape[1]
            yield Sample((arr(rng, shape, dtype), arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(momentum=0.9, eps=1e-5), desc=f"{shape}")

    def _bn_cell_run(sample, use_jit):
        """nn.BatchNorm1d/2d in training, called once (eagerly or inside kiln.jit): y, moving_mean, moving_variance."""
        x, m0, v0 = sample.args
        cls = kiln.nn.BatchNorm2d if x.ndim == 4 else kiln.nn.BatchNorm1d
        bn = cls(x.shape[1], momentum=sample.kwargs["momentum"], eps=sample.kwargs["eps"],
                 dtype=kiln.float64 if x.dtype == F64 else kiln.float32)
        bn.set_train(True)
        ops.assign(bn.moving_mean, Tensor(m0))
        ops.assign(bn.moving_variance, Tensor(v0))
        return _run_stateful(bn, [bn.moving_mean, bn.moving_variance], [x], use_jit)

    def _bn_cell_ref(sample):
        x, m0, v0 = [a.astype(np.float64) for a in sample.args]
        c = x.shape[1]
        y, bm, _ = np_batch_norm(x, np.ones(c), np.zeros(c), m0, v0, True, sample.kwargs["eps"])
        mom = sample.kwargs["momentum"]
        return [y, mom * m0 + (1 - mom) * bm, mom * v0 + (1 - mom) * _np_unbiased_var(x)]

    register(OpInfo("nn.BatchNorm_training_update", ("BatchNorm", "Assign"), kind="state", samples=_bn_cell_samples,
                    dtypes=(F32, F64), run=_bn_cell_run, ref=_bn_cell_ref,
                    notes="nn.BatchNorm1d/2d in training: moving = momentum·moving + (1 − momentum)·batch, with the "
                          "UNBIASED batch variance (MindSpore: BatchNorm1d(2, momentum=0.9) on [[1,2],[3,6],[5,7],"
                          "[7,1]] gives moving_variance [1.5667, 1.7667]); the output uses the biased one"))

if hasattr(ops, "layer_norm"):
    def _np_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
        return y * (1 if weight is None else weight) + (0 if bias is None else bias)

    register(OpInfo("layer_norm", (), lambda x, w, b, normalized_shape: ops.layer_norm(x, normalized_shape, w, b),
                    lambda x, w, b, normalized_shape: _np_layer_norm(x, normalized_shape, w, b),
                    lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype),
                                                     arr(rng, (4,), dtype)), dict(normalized_shape=(4,))),
                                             Sample((NC(arr(rng, (2, 3, 2), dtype), "T"), arr(rng, (3, 2), dtype),
                                                     arr(rng, (3, 2), dtype)), dict(normalized_shape=(3, 2)),
                                                    desc="two axes, view")]),
                    (F32, F64), differentiable=True, tol={F32: (2e-5, 2e-5)},
                    notes="composed of Kiln ops (no C++ op of its own)"))

if hasattr(ops, "group_norm"):
    def _np_group_norm(x, num_groups, weight, bias, eps=1e-5):
        n, c = x.shape[:2]
        g = x.reshape(n, num_groups, -1)
        y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
        shape = [1, c] + [1] * (x.ndim - 2)
        return y * weight.reshape(shape) + bias.reshape(shape)

    register(OpInfo("group_norm", (), lambda x, w, b, num_groups: ops.group_norm(x, num_groups, w, b),
                    lambda x, w, b, num_groups: _np_group_norm(x, num_groups, w, b),
                    lambda dtype, rng: iter([Sample((arr(rng, (2, 4, 3), dtype), arr(rng, (4,), dtype),
                                                     arr(rng, (4,), dtype)), dict(num_groups=2))]),
                    (F32, F64), differentiable=True, tol={F32: (2e-5, 2e-5)},
                    notes="composed of Kiln ops (no C++ op of its own)"))


# ---------------------------------------------------------------------------------------------- creation

def _fill_samples(dtype, rng):
    for shape in [(2, 3), (), (0, 2)]:
        yield Sample((), dict(shape=shape, dtype=dtype, value=0), desc=f"zeros{shape}")
    yield Sample((), dict(shape=(3,), dtype=dtype, value=1), desc="ones")
    yield Sample((), dict(shape=(2, 2), dtype=dtype, value=True if dtype == BOOL else 3), desc="full")


def _kiln_fill(shape, dtype, value):
    if value == 0:
        return ops.zeros(shape, dtype)
    if value == 1 and not isinstance(value, bool):
        return ops.ones(shape, dtype)
    return ops.full(shape, value, dtype=dtype)


register(OpInfo("zeros_ones_full", ("Fill",), _kiln_fill, lambda shape, dtype, value: np.full(shape, value, dtype),
                _fill_samples, ALL + UINTS, ref_upcast=False, out_dtype=lambda s: np.dtype(s.kwargs["dtype"])))
register(OpInfo("zeros_like_ones_like", ("Fill",), lambda x: (ops.zeros_like(x), ops.ones_like(x), ops.full_like(x, 2)),
                lambda x: (np.zeros_like(x), np.ones_like(x), np.full_like(x, 2)), unary_samples(), ALL + UINTS,
                ref_upcast=False))


def _arange_samples(dtype, rng):
    if dtype.kind == "f":
        yield Sample((), dict(start=0.5, end=2.0, step=0.25, dtype=dtype))
        yield Sample((), dict(start=5, end=0, step=-1.5, dtype=dtype), desc="negative step")
        yield Sample((), dict(start=0, end=1, step=0.3, dtype=dtype), desc="non-dividing step")
    else:
        yield Sample((), dict(start=0, end=5, step=1, dtype=dtype))
        yield Sample((), dict(start=1, end=8, step=3, dtype=dtype))
        yield Sample((), dict(start=4, end=-3, step=-2, dtype=dtype), desc="negative step")
    yield Sample((), dict(start=3, end=3, step=1, dtype=dtype), desc="empty")


register(OpInfo("arange", ("Range",), lambda start, end, step, dtype: ops.arange(start, end, step, dtype=dtype),
                lambda start, end, step, dtype: np.arange(start, end, step, dtype=np.float64).astype(dtype),
                _arange_samples, (F32, F64, I32, I64), ref_upcast=False,
                out_dtype=lambda s: np.dtype(s.kwargs["dtype"])))
register(OpInfo("arange_default_dtype", ("Range",), lambda **kw: ops.arange(**kw),
                lambda **kw: np.arange(kw["start"], kw["end"], kw["step"]),
                lambda dtype, rng: iter([Sample((), dict(start=0, end=5, step=1), desc="ints → Int64"),
                                         Sample((), dict(start=0, end=2, step=0.5), desc="float → Float32")]),
                (F32,), out_dtype=lambda s: I64 if all(isinstance(v, int) for v in s.kwargs.values()) else F32,
                notes="a float start/end/step gives Float32 (MindSpore; NumPy float64)"))


# ---------------------------------------------------------------------------------------------- random ops

def _check_normal(x, dtype):
    x = x.astype(np.float64)
    n = x.size
    assert np.all(np.isfinite(x))
    assert abs(x.mean()) < 5 / math.sqrt(n), x.mean()
    assert abs(x.std() - 1) < 5 * math.sqrt(0.5 / n) + 0.01, x.std()
    assert 0.1 < (x > 1).mean() < 0.22  # P(X > 1) = 0.1587


def _check_uniform01(x, dtype):
    x = x.astype(np.float64)
    n = x.size
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    hist = np.histogram(x, bins=10, range=(0, 1))[0] / n
    assert np.all(np.abs(hist - 0.1) < 0.02), hist


def _check_uniform_int(x, dtype, low=-3, high=5):
    assert x.min() >= low and x.max() < high
    counts = np.bincount(x.reshape(-1) - low, minlength=high - low) / x.size
    assert np.all(np.abs(counts - 1 / (high - low)) < 0.02), counts


register(OpInfo("randn", ("StandardNormal",), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.randn(*shape, dtype=dtype, seed=seed), check=_check_normal,
                notes="Philox keyed by (seed, per-op counter); Graph and PyNative draw different streams"))
register(OpInfo("standard_normal", ("StandardNormal",), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.standard_normal(shape, seed=seed), check=_check_normal))
register(OpInfo("rand", ("UniformReal",), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.rand(*shape, dtype=dtype, seed=seed),
                check=_check_uniform01))
register(OpInfo("uniform", ("UniformReal", "Mul", "Sub", "Add"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.uniform(shape, Tensor(np.float32(-1)),
                                                                 Tensor(np.float32(3)), seed=seed),
                check=lambda x, d: _check_uniform01((x.astype(np.float64) + 1) / 4, d)))
register(OpInfo("randint", ("UniformInt",), kind="random", dtypes=(I64, I32),
                draw=lambda shape, dtype, seed=None: ops.randint(-3, 5, shape, seed=seed, dtype=dtype),
                check=_check_uniform_int))


# ---------------------------------------------------------------------------------------------- state ops

def _param(a, name):
    return Parameter(Tensor(np.array(a, copy=True)), name=name)


LAST_JIT = [None]  # the JitFunction of the latest compiled state-op run (test_entry_ops_are_traced reads it)


def _run_stateful(step, state, args, use_jit):
    """Runs step(*args) once (eagerly or compiled) and returns [outputs..., final state...] as NumPy."""
    fn = kiln.jit(step) if use_jit else step
    if use_jit:
        LAST_JIT[0] = fn
    out = fn(*[Tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    outs = [o.asnumpy() for o in _as_tuple(out) if isinstance(o, Tensor)] if out is not None else []
    return outs + [p.asnumpy() for p in state]


def _assign_samples(dtype, rng):
    low = 0.0 if dtype.kind == "u" else -2.0  # (a negative float value has no unsigned value: NumPy and C++ differ)
    a = lambda s, d=dtype: arr(rng, s, d, low)  # noqa: E731
    yield Sample((a((2, 3)), a((2, 3))), desc="same shape")
    yield Sample((a((3, 4)), a((4,))), desc="broadcast value")
    yield Sample((a((2, 2)), a(())), desc="0-d value")
    yield Sample((a((2, 3)), a((2, 3), F64 if dtype != F64 else F32)), desc="value cast to the variable's dtype")
    yield Sample((a(()), a(())), desc="0-d variable")


def _assign_run(sample, use_jit):
    var, value = sample.args
    p = _param(var, "assign_var")
    return _run_stateful(lambda v: ops.assign(p, v), [p], [value], use_jit)


def _assign_ref(sample):
    var, value = sample.args
    new = np.broadcast_to(value, var.shape).astype(var.dtype)
    return [new, new]


def _assign_view_run(sample, use_jit):
    """Assign through a non-contiguous view (PyNative only: a view of a Parameter is not graph state)."""
    var, value = sample.args
    t = Tensor(np.ascontiguousarray(var.T))
    ops.assign(t.T, Tensor(value))
    return [t.asnumpy().T]


register(OpInfo("assign", ("Assign",), kind="state", samples=_assign_samples, dtypes=ALL + UINTS, run=_assign_run,
                ref=_assign_ref, notes="returns the variable; value broadcast and cast to its dtype"))
register(OpInfo("assign_view", ("Assign",), kind="state", graph=False,
                graph_reason="writes through a view of a plain Tensor (not a Parameter): PyNative only",
                samples=lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype)))]),
                dtypes=(F32, I32), run=_assign_view_run, ref=lambda s: [s.args[1]]))
register(OpInfo("setitem", ("Assign", "StridedSlice"), kind="state", graph=False,
                graph_reason="Tensor.__setitem__ is a PyNative in-place write",
                samples=lambda dtype, rng: iter([Sample((arr(rng, (4, 5), dtype), arr(rng, (2, 5), dtype)),
                                                        dict(key=(slice(1, 3),))),
                                                 Sample((arr(rng, (4, 5), dtype), arr(rng, (), dtype)),
                                                        dict(key=(slice(None), slice(None, None, -2))))]),
                dtypes=(F32, I32), run=lambda s, j: _setitem_run(s), ref=lambda s: _setitem_ref(s)))


def _setitem_run(sample):
    x, v = sample.args
    t = Tensor(np.array(x, copy=True))
    t[sample.kwargs["key"]] = Tensor(v)
    return [t.asnumpy()]


def _setitem_ref(sample):
    x = np.array(sample.args[0], copy=True)
    x[sample.kwargs["key"]] = sample.args[1]
    return [x]


def _opt_samples(dtype, rng):
    shape_list = [(3, 4), (5,), ()]
    for i, shape in enumerate(shape_list):
        p, g = arr(rng, shape, dtype), arr(rng, shape, dtype)
        m, v = arr(rng, shape, dtype, -0.5, 0.5), arr(rng, shape, dtype, 0.0, 0.5)
        yield Sample((p, m, v, g), dict(nesterov=i == 1), desc=f"nesterov={i == 1}")


def _adam_run(sample, use_jit):
    p0, m0, v0, g = sample.args
    dt = p0.dtype
    p, m, v = _param(p0, "adam_p"), _param(m0, "adam_m"), _param(v0, "adam_v")
    b1p, b2p, lr = Tensor(np.array(0.9 ** 3, dt)), Tensor(np.array(0.999 ** 3, dt)), Tensor(np.array(0.01, dt))
    nest = sample.kwargs["nesterov"]
    return _run_stateful(lambda gr: _core.adam(p, m, v, b1p, b2p, lr, 0.9, 0.999, 1e-8, gr, nest), [p, m, v],
                         [g], use_jit)


def _adam_ref(sample):
    p, m, v, g = [a.astype(np.float64) for a in sample.args]
    b1, b2 = 0.9, 0.999
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    alpha = 0.01 * np.sqrt(1 - b2 ** 3) / (1 - b1 ** 3)
    num = b1 * m + (1 - b1) * g if sample.kwargs["nesterov"] else m
    return [p - alpha * num / (np.sqrt(v) + 1e-8), m, v]


def _momentum_run(sample, use_jit):
    p0, m0, _, g = sample.args
    p, acc = _param(p0, "mom_p"), _param(m0, "mom_acc")
    lr = Tensor(np.array(0.1, p0.dtype))
    nest = sample.kwargs["nesterov"]
    return _run_stateful(lambda gr: _core.apply_momentum(p, acc, lr, gr, 0.9, nest), [p, acc], [g], use_jit)


def _momentum_ref(sample):
    p, acc, _, g = [a.astype(np.float64) for a in sample.args]
    acc = 0.9 * acc + g
    p = p - 0.1 * (g + 0.9 * acc) if sample.kwargs["nesterov"] else p - 0.1 * acc
    return [p, acc]


def _sgd_samples(dtype, rng):
    for i, (first, nest, damp, wd) in enumerate([(True, False, 0.0, 0.0), (False, False, 0.1, 0.01),
                                                 (False, True, 0.0, 0.0), (True, True, 0.0, 0.05)]):
        shape = [(3, 4), (5,), (), (2, 2)][i]
        yield Sample((arr(rng, shape, dtype), arr(rng, shape, dtype, -0.5, 0.5), arr(rng, shape, dtype)),
                     dict(first=first, nesterov=nest, dampening=damp, weight_decay=wd),
                     desc=f"first={first} nesterov={nest}")


def _sgd_run(sample, use_jit):
    p0, a0, g = sample.args
    k = sample.kwargs
    p, acc = _param(p0, "sgd_p"), _param(a0, "sgd_acc")
    stat = _param(np.full(p0.shape, 1.0 if k["first"] else 0.0, p0.dtype), "sgd_stat")
    lr = Tensor(np.array(0.1, p0.dtype))
    return _run_stateful(lambda gr: _core.sgd(p, gr, lr, acc, stat, 0.9, k["dampening"], k["weight_decay"],
                                              k["nesterov"]), [p, acc, stat], [g], use_jit)


def _sgd_ref(sample):
    p, acc, g = [a.astype(np.float64) for a in sample.args]
    k = sample.kwargs
    g = g + k["weight_decay"] * p
    acc = g if k["first"] else 0.9 * acc + (1 - k["dampening"]) * g
    upd = g + 0.9 * acc if k["nesterov"] else acc
    return [p - 0.1 * upd, acc, np.zeros_like(p)]


register(OpInfo("adam_step", ("Adam",), kind="state", samples=_opt_samples, dtypes=(F32, F64), run=_adam_run,
                ref=_adam_ref, notes="_core.adam: the single-step functional entry behind nn.Adam"))
register(OpInfo("apply_momentum_step", ("ApplyMomentum",), kind="state", samples=_opt_samples, dtypes=(F32, F64),
                run=_momentum_run, ref=_momentum_ref, notes="_core.apply_momentum, behind nn.Momentum"))
register(OpInfo("sgd_step", ("SGD",), kind="state", samples=_sgd_samples, dtypes=(F32, F64), run=_sgd_run,
                ref=_sgd_ref, notes="_core.sgd, behind nn.SGD; stat flags the first step"))


# ---------------------------------------------------------------------------------------------- helpers for tests

def entries(kind=None):
    return [e for e in REGISTRY if kind is None or e.kind == kind]


def covered_ops():
    """{C++ op name: [entry names]} over the whole registry."""
    cov = {}
    for e in REGISTRY:
        for o in e.ops:
            cov.setdefault(o, []).append(e.name)
    return cov


def samples_of(entry, dtype, seed=0):
    """The entry's samples in `dtype`, drawn from a generator seeded by (entry, dtype): stable across runs."""
    rng = np.random.default_rng([seed, sum(map(ord, entry.name)), np.dtype(dtype).num])
    return list(entry.samples(np.dtype(dtype), rng))


# ---- Print (a side effect: prints on every run of a compiled graph, in program order) ----
def _print_samples(dtype, rng):
    yield Sample((arr(rng, (3,), dtype),), desc="1-D")
    yield Sample((arr(rng, (2, 2), dtype),), desc="2-D")
    yield Sample((arr(rng, (), dtype),), desc="0-d")


def _print_run(sample, use_jit):
    import contextlib
    import io
    buf = io.StringIO()
    fn = (lambda x: ops.print_("value:", x, 7)) if not use_jit else kiln.jit(lambda x: (ops.print_("value:", x, 7), x)[1])
    if use_jit:
        LAST_JIT[0] = fn
    with contextlib.redirect_stdout(buf):
        fn(Tensor(sample.args[0]))
    want = _print_text(sample)
    assert buf.getvalue() == want, f"printed {buf.getvalue()!r}, expected {want!r}"
    return [sample.args[0]]  # (the printed text is compared above, byte for byte)


def _print_text(sample):
    x = sample.args[0]
    fmt = (lambda v: str(bool(v))) if x.dtype == np.bool_ else \
        (lambda v: f"{float(v):g}") if x.dtype.kind == "f" else (lambda v: str(int(v)))

    def nested(a, depth):
        if a.ndim == 1:
            return "[" + " ".join(fmt(v) for v in a) + "]"
        return "[" + ("\n" + " " * (depth + 1)).join(nested(r, depth + 1) for r in a) + "]"

    body = fmt(x[()]) if x.ndim == 0 else nested(x, 0)
    names = {"float32": "Float32", "float64": "Float64", "int32": "Int32", "int64": "Int64", "bool": "Bool",
             "float16": "Float16"}
    return (f"value: Tensor(shape={list(x.shape)}, dtype={names[str(x.dtype)]}, value="
            f"{chr(10) if x.ndim > 1 else ''}{body}) 7\n")


register(OpInfo("print_", ("Print",), kind="state", samples=_print_samples, dtypes=(F32, F64, I32, BOOL),
                run=_print_run, ref=lambda s: [s.args[0]], notes="MindSpore graph-print format; text compared byte for byte"))
