"""The registry's machinery: dtypes, sample generators, the OpInfo entry type, the dtype rules, NumPy references
shared by several families, REGISTRY / register, and the lookups the tests use (entries, samples_of, covered_ops)."""
import dataclasses
import math
from typing import Callable, Optional

import numpy as np
import scipy.special

from kiln import Tensor, _core



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

# Collective ops need communication.init() in several processes, which a registry entry cannot set up: their values,
# MindSpore's gradients and PyNative/Graph runs are tested by tests/python/test_distributed.py (dist_scripts/
# collectives.py on 2 processes under the launcher, and a one-process world). {op: reason}
MULTI_PROCESS_OPS = {n: "collective: tested by tests/python/test_distributed.py" for n in
                     ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Barrier", "Send", "Receive")}
MULTI_PROCESS_OPS.update({n: "collective: tested by tests/python/test_alltoall.py" for n in ("AlltoAll", "AlltoAllV")})
# Ops with sub-graphs (control flow): not functions of tensors alone, so no registry entry; their values, gradients and
# Graph parity are tested in tests/python/test_control_flow*.py.
CONTROL_FLOW_OPS = {
    "If": "made by the Graph-mode rewrite of `if` / ops.switch; values, gradients and grad-of-grad tested in "
          "tests/python/test_control_flow.py",
    "While": "made by the Graph-mode rewrite of `while`/`for`, ops.WhileLoop/ForiLoop; values and gradients (0, 1, 2, "
             "6 trips) tested in tests/python/test_control_flow.py",
    "WhileGrad": "made only by While's bprop; tested through While's gradients in tests/python/test_control_flow.py",
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
        a = lambda s: arr(rng, s, dtype, low, high, away)
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
        a = lambda s: arr(rng, s, dtype, *lhs)
        b = lambda s: arr(rng, s, dtype, *rhs)
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


REGISTRY = []


def register(info):
    REGISTRY.append(info)
    return info



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
