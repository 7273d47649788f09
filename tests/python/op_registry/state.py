"""Registry entries: creation ops, random ops, state ops (Assign, optimizer kernels) and Print."""
import math

import numpy as np

import kiln
from kiln import Parameter, Tensor, _core, ops


from .base import (
    ALL, BOOL, F16, F32, F64, I32, I64, OpInfo, Sample, UINTS, _as_tuple, arr, register, unary_samples)


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
    a = lambda s, d=dtype: arr(rng, s, d, low)
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


def _assign_acc_run(fn):
    def run(sample, use_jit):
        var, value = sample.args
        p = _param(var, "assign_acc_var")
        return _run_stateful(lambda v: fn(p, v), [p], [value], use_jit)
    return run


def _assign_acc_ref(sign):
    def ref(sample):
        var, value = sample.args
        new = (var + sign * np.broadcast_to(value, var.shape)).astype(var.dtype)
        return [new, new]
    return ref


def _assign_acc_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((2, 3)), a((2, 3))), desc="same shape")
    yield Sample((a((3, 4)), a((4,))), desc="broadcast value")
    yield Sample((a(()), a(())), desc="0-d")


for _name, _op, _sign in (("assign_add", "Add", 1), ("assign_sub", "Sub", -1)):
    register(OpInfo(_name, ("Assign", _op), kind="state", samples=_assign_acc_samples, dtypes=(F32, F64, I32, I64),
                    run=_assign_acc_run(getattr(ops, _name)), ref=_assign_acc_ref(_sign),
                    notes="variable ± value in place (value broadcast); returns the variable (MindSpore 2.10)"))
