"""Tests generated from the op registry (tests/python/op_registry.py), one per entry × sample × dtype:

  test_forward            Kiln vs the NumPy reference (values within the entry's per-dtype tolerance, exact dtype)
  test_gradient           kiln.grad of sum(out · cotangent) (random cotangent: non-scalar outputs checked fully) vs
                          central finite differences, float64
  test_graph_forward      the same call inside kiln.jit gives the same values (within 1 ulp; today: bitwise) and
                          dtype
  test_graph_gradient     value_and_grad inside @kiln.jit equals the PyNative value and gradient
  test_dtype_promotion    binary ops on every dtype pair and with weak Python scalars: NumPy's result dtype, with
                          the documented exceptions (op_registry Note [dtype rules])
  test_random_*           random ops: shape/dtype/distribution in both modes, set_seed determinism, and (with
                          random streams) the same draws in Graph as in PyNative
  test_state_*            in-place state ops (Assign, Adam, ApplyMomentum, SGD, BatchNorm's running statistics) vs
                          NumPy formulas, and Graph vs PyNative
  test_special_values     NaN, ±inf, ±1000 and 0 in every float input: NumPy's result (NaN propagates), in PyNative
                          and under kiln.jit (op_registry Note [special values])
  test_special_gradient   the gradient at 0 and ±1000 (float64): the central difference where the function is
                          smooth there, the documented value at a kink; PyNative and Graph agree
  test_fused_*_special_values  the fused kernels (FusedElementwise for every fusable op, MatMulBiasAct on both
                          paths) give the unfused ops' results on special values, gradients included
  test_registry_covers_every_op, test_every_differentiable_op_has_a_gradient_test, test_entry_ops_are_traced,
  test_op_info_is_consistent, test_entry_differentiable_flags_match_op_info, test_pass_only_ops_are_exercised
                          the registry's completeness and honesty
  test_nonzero_in_graph_raises, test_int_min_floor_div_does_not_crash, test_stop_gradient_blocks_gradient
                          regression tests for bugs found while building the registry

Runtime: ~7000 tests in ~20 s on 2 cores (samples are small; finite differences only in float64 on `grad` samples).
"""
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import kiln
from kiln import Tensor, _core, ops
from kiln.common import seed as _seed

import op_registry as R
from op_registry import F16, F32, F64, BOOL, NC, np_value, to_kiln

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ---------------------------------------------------------------------------------------------- helpers

def _np_dtype(kdtype):
    return np.dtype(_core.dtype_numpy_name(kdtype))


def _outs(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _as_tensors(outs):
    """Kiln outputs as Tensors: a Python value (the entries of query methods such as Tensor.numel or Tensor.item,
    which return it as Kiln does, so that the benchmark times the method and not a wrapping) becomes the 0-d Tensor of
    its NumPy value (int -> Int64, float -> Float64, bool -> Bool)."""
    return tuple(o if isinstance(o, Tensor) else Tensor(np.asarray(o)) for o in outs)


def _call(entry, sample, args=None):
    args = [to_kiln(a) for a in sample.args] if args is None else args
    return entry.op(*args, **sample.kwargs)


def _reference(entry, sample):
    """(values, NumPy dtypes): values from float64 copies of float inputs (unless ref_upcast=False), dtypes from the
    original dtypes."""
    nargs = [np_value(a) for a in sample.args]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        orig = _outs(entry.ref(*nargs, **sample.kwargs))
        if entry.ref_upcast:
            up = [a.astype(F64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in nargs]
            vals = _outs(entry.ref(*up, **sample.kwargs))
        else:
            vals = orig
    return [np.asarray(v) for v in vals], [np.asarray(o).dtype for o in orig]


def _expected_dtype(entry, sample, np_dtype):
    if entry.out_dtype is not None:
        return np.dtype(entry.out_dtype(sample))
    return R.kiln_result_dtype(np_dtype, sample.args)


def _assert_values(got, want, dtype, rtol, atol, what=""):
    assert got.shape == want.shape, f"{what}shape {got.shape}, expected {want.shape}"
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, want.astype(dtype), err_msg=what)
    else:
        np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=what)


def _assert_ulp(got, want, what="", maxulp=1):
    """PyNative vs Graph: same dtype and shape, ints/bools equal, floats within `maxulp` units in the last place (or,
    for results that cancel to near zero, within maxulp·eps·max|want|)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}dtype {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{what}shape {got.shape} vs {want.shape}"
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(F64), want.astype(F64)
    both_nan = np.isnan(g) & np.isnan(w)
    spacing = np.abs(np.spacing(np.maximum(np.abs(got), np.abs(want)).astype(got.dtype))).astype(F64)
    scale = np.max(np.abs(w[np.isfinite(w)]), initial=0.0)
    tol = np.maximum(maxulp * spacing, maxulp * np.finfo(got.dtype).eps * scale)
    bad = ~both_nan & ~(np.abs(g - w) <= tol) & ~(g == w)
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(f"{what}{int(bad.sum())} of {bad.size} elements differ by more than {maxulp} ulp; first "
                             f"at {tuple(i)}: graph {g[tuple(i)]!r} vs pynative {w[tuple(i)]!r}")


def _params(kind, filt=lambda e, s, d: True):
    out = []
    for e in R.entries(kind):
        for dt in e.dtypes:
            for i, s in enumerate(R.samples_of(e, dt)):
                if filt(e, s, dt):
                    out.append(pytest.param(e, s, dt, id=f"{e.name}-{dt}-{i}"))
    return out


def _grad_positions(entry, sample):
    if entry.grad_args is not None:
        return tuple(entry.grad_args)
    return tuple(i for i, a in enumerate(sample.args)
                 if isinstance(np_value(a), np.ndarray) and np_value(a).dtype.kind == "f")


def _cotangents(entry, sample, args, rng):
    """Random float64 cotangents for the float outputs (None for int/bool outputs)."""
    cots = []
    for o in _outs(_call(entry, sample, args)):
        cots.append(Tensor(rng.standard_normal(o.shape)) if o.dtype in (kiln.float16, kiln.float32, kiln.float64)
                    else None)
    return cots


def _loss_fn(entry, sample, cots):
    """sum over float outputs of sum(out · cotangent): its gradient is the VJP of the op with that cotangent."""
    def loss(*targs):
        total = None
        for o, c in zip(_outs(entry.op(*targs, **sample.kwargs)), cots):
            if c is None:
                continue
            term = ops.sum(ops.mul(o, c))
            total = term if total is None else ops.add(total, term)
        return total
    return loss


def _grad_ok(entry, sample, dtype):
    return entry.differentiable and sample.grad and np.dtype(dtype) == F64 and bool(_grad_positions(entry, sample))


# ---------------------------------------------------------------------------------------------- 1. forward

@pytest.mark.parametrize("entry,sample,dtype", _params("op"))
def test_forward(entry, sample, dtype):
    got = _as_tensors(_outs(_call(entry, sample)))
    want, np_dtypes = _reference(entry, sample)
    assert len(got) == len(want), f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w, nd) in enumerate(zip(got, want, np_dtypes)):
        exp = _expected_dtype(entry, sample, nd)
        what = f"{entry.name}{sample!r} output {k}: "
        assert _np_dtype(g.dtype) == exp, f"{what}dtype {g.dtype}, expected {exp} (NumPy gives {nd})"
        rtol, atol = entry.tolerance(exp)
        _assert_values(g.asnumpy(), w, exp, rtol, atol, what)


# ---------------------------------------------------------------------------------------------- 2. gradient vs FD

def _numeric_grad(loss, sample, pos, eps):
    base = [np.array(np_value(a), copy=True) if isinstance(np_value(a), np.ndarray) else a for a in sample.args]

    def wrap(i, v):
        a = sample.args[i]
        return NC(v, a.how) if isinstance(a, NC) else v

    def f(vals):
        return float(loss(*[to_kiln(wrap(i, v)) for i, v in enumerate(vals)]).asnumpy())

    grads = []
    for p in pos:
        x = base[p]
        g = np.zeros(x.shape, F64)
        for idx in np.ndindex(*x.shape):
            orig = x[idx]
            x[idx] = orig + eps
            fp = f(base)
            x[idx] = orig - eps
            fm = f(base)
            x[idx] = orig
            g[idx] = (fp - fm) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("entry,sample,dtype", _params("op", _grad_ok))
def test_gradient(entry, sample, dtype):
    rng = np.random.default_rng(1)
    args = [to_kiln(a) for a in sample.args]
    cots = _cotangents(entry, sample, args, rng)
    loss = _loss_fn(entry, sample, cots)
    pos = _grad_positions(entry, sample)
    got = kiln.grad(loss, grad_position=pos)(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = _numeric_grad(loss, sample, pos, entry.grad_eps)
    rtol, atol = entry.grad_tol
    for p, g, w in zip(pos, got, want):
        a = args[p]
        assert tuple(g.shape) == tuple(a.shape) and g.dtype == a.dtype, \
            f"gradient of input {p}: {g.dtype}{list(g.shape)}, expected {a.dtype}{list(a.shape)}"
        np.testing.assert_allclose(g.asnumpy(), w, rtol=rtol, atol=atol, err_msg=f"gradient of input {p}")


# ---------------------------------------------------------------------------------------------- 3. PyNative vs Graph

def _jit_of(entry, sample):
    kw = sample.kwargs
    return kiln.jit(lambda *a: entry.op(*a, **kw))


@pytest.mark.parametrize("entry,sample,dtype", _params("op", lambda e, s, d: e.graph and s.graph))
def test_graph_forward(entry, sample, dtype):
    args = [to_kiln(a) for a in sample.args]
    eager = _outs(_call(entry, sample, args))
    graph = _outs(_jit_of(entry, sample)(*args))
    assert len(graph) == len(eager)
    for k, (g, e) in enumerate(zip(graph, eager)):
        _assert_ulp(g.asnumpy(), e.asnumpy(), f"output {k}: ")


def _graph_grad_ok(entry, sample, dtype):
    return (entry.differentiable and entry.graph and sample.graph and sample.grad
            and np.dtype(dtype) in (F32, F64) and bool(_grad_positions(entry, sample)))


@pytest.mark.parametrize("entry,sample,dtype", _params("op", _graph_grad_ok))
def test_graph_gradient(entry, sample, dtype):
    rng = np.random.default_rng(2)
    args = [to_kiln(a) for a in sample.args]
    cots = _cotangents(entry, sample, args, rng)
    pos = _grad_positions(entry, sample)
    vg = kiln.value_and_grad(_loss_fn(entry, sample, cots), grad_position=pos)
    v_e, g_e = vg(*args)

    @kiln.jit
    def step(*a):
        return vg(*a)

    v_g, g_g = step(*args)
    _assert_ulp(v_g.asnumpy(), v_e.asnumpy(), "value: ")
    g_e = g_e if isinstance(g_e, tuple) else (g_e,)
    g_g = g_g if isinstance(g_g, tuple) else (g_g,)
    for p, a, b in zip(pos, g_g, g_e):
        _assert_ulp(a.asnumpy(), b.asnumpy(), f"gradient of input {p}: ", maxulp=2)


# ---------------------------------------------------------------------------------------------- 4. dtype promotion

_DTYPES = (BOOL, np.dtype(np.int32), np.dtype(np.int64), F16, F32, F64)
_SCALARS = (True, 2, 2.5)


def _operand(kind, shape):
    if isinstance(kind, np.dtype):
        return np.array([1, 2, 3][:shape[-1]] * (int(np.prod(shape)) // shape[-1])).reshape(shape).astype(kind)
    return kind


@pytest.mark.parametrize("entry", [e for e in R.entries("op") if e.binary], ids=lambda e: e.name)
def test_dtype_promotion(entry):
    """Every pair of (bool, int32, int64, float16, float32, float64) tensors, and each tensor with a weak Python
    bool/int/float on either side: the result dtype is NumPy's (NEP 50) adjusted by the rules in op_registry, and
    the values match NumPy's. Documented exceptions (entry.dtype_exceptions) are checked to behave as documented."""
    problems = []
    combos = [(a, b) for a in _DTYPES for b in _DTYPES]
    combos += [(a, s) for a in _DTYPES for s in _SCALARS] + [(s, a) for a in _DTYPES for s in _SCALARS]
    for a_kind, b_kind in combos:
        a, b = _operand(a_kind, (2, 3)), _operand(b_kind, (3,))
        key = ",".join(str(k.name if isinstance(k, np.dtype) else type(k).__name__) for k in (a_kind, b_kind))
        sample = R.Sample((a, b))
        got = _outs(entry.op(to_kiln(a), to_kiln(b)))
        exc = entry.dtype_exceptions.get(key.replace("bool,bool", "bool,bool"))
        if exc is not None:  # documented: Kiln keeps Bool
            if any(_np_dtype(g.dtype) != BOOL for g in got):
                problems.append(f"{key}: documented as Bool, got {[str(g.dtype) for g in got]}")
            continue
        want, np_dtypes = _reference(entry, sample)
        for g, w, nd in zip(got, want, np_dtypes):
            exp = R.kiln_result_dtype(nd, sample.args)
            if _np_dtype(g.dtype) != exp:
                problems.append(f"{key}: {g.dtype}, expected {exp} (NumPy: {nd})")
                continue
            try:
                _assert_values(g.asnumpy(), np.broadcast_to(w, g.shape), exp, *entry.tolerance(exp))
            except AssertionError as err:
                problems.append(f"{key}: values differ: {str(err).splitlines()[0]}")
    assert not problems, f"{entry.name}: " + "; ".join(problems)


@pytest.mark.parametrize("entry", [e for e in R.entries("op") if e.binary], ids=lambda e: e.name)
def test_python_int_out_of_range(entry):
    """A Python int just outside an integer tensor's range, on either side of every binary op: OverflowError exactly
    where NumPy 2 raises it (arithmetic converts the int to the tensor's dtype, NEP 50), NumPy's values otherwise
    (comparisons, true division and logical ops see the exact int). It used to wrap silently (uint8 + 300 → 44)."""
    problems = []
    for nd in (np.uint8, np.int8, np.int16, np.int32):
        info = np.iinfo(nd)
        a = np.array([1, 2, 3], nd)
        for v in (int(info.max) + 1, int(info.min) - 1):
            for args in ((a, v), (v, a)):
                key = f"{'tensor' if args[0] is a else v},{v if args[0] is a else 'tensor'} ({np.dtype(nd).name})"
                try:
                    want, _ = _reference(entry, R.Sample(args))
                except OverflowError:
                    want = None
                try:
                    got = _outs(entry.op(*[to_kiln(x) for x in args]))
                except OverflowError as e:
                    if want is not None:
                        problems.append(f"{key}: OverflowError ({e}), NumPy gives {want[0].tolist()}")
                    elif str(v) not in str(e):
                        problems.append(f"{key}: the message does not name the int: {e}")
                    continue
                if want is None:
                    problems.append(f"{key}: no OverflowError (got {[g.asnumpy().tolist() for g in got]})")
                    continue
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g.asnumpy().astype(np.float64), w.astype(np.float64), rtol=1e-6,
                                               err_msg=f"{entry.name} {key}")
    assert not problems, f"{entry.name}: " + "; ".join(problems)


def test_promotion_rules_documented_examples():
    """The exceptions of Note [dtype rules], spelled out once."""
    i32 = Tensor(np.array([1, 2], np.int32))
    f16 = Tensor(np.array([1, 2], np.float16))
    b = Tensor(np.array([True, False]))
    assert ops.div(i32, i32).dtype == kiln.float32             # R-f32 (NumPy: float64)
    assert ops.add(i32, 2.5).dtype == kiln.float32             # R-f32: int tensor + Python float (NumPy: float64)
    assert ops.add(f16, i32).dtype == kiln.float16             # R-cat (NumPy: float64)
    assert ops.add(f16, 2.5).dtype == kiln.float16             # weak scalar (NumPy 2: float16 too)
    assert ops.add(i32, 2).dtype == kiln.int32                 # weak scalar
    assert ops.add(b, 1).dtype == kiln.int64                   # bool + Python int → Int64 (NumPy 2 too)
    assert ops.exp(i32).dtype == kiln.float32                  # R-f32
    assert ops.mean(i32).dtype == kiln.float32                 # R-f32
    assert ops.sub(b, b).dtype == kiln.bool_                   # R-bool (NumPy: TypeError)


# ---------------------------------------------------------------------------------------------- 5. registry checks

def test_registry_covers_every_op():
    names = set(_core.op_names())
    covered = set(R.covered_ops())
    missing = sorted(names - covered - set(R.PASS_ONLY_OPS) - set(R.MULTI_PROCESS_OPS) - set(R.CONTROL_FLOW_OPS))
    assert not missing, f"C++ ops without a registry entry: {missing}"
    unknown = sorted(covered - names)
    assert not unknown, f"registry entries name ops that do not exist: {unknown}"


def test_every_differentiable_op_has_a_gradient_test():
    """An op's bprop is checked when the op is in the FORWARD graph of a differentiable entry's gradient-checked
    sample (being merely called by another op's bprop does not count)."""
    grad_tested = set()
    for e in R.entries("op"):
        if not e.differentiable or F64 not in e.dtypes:
            continue
        for s in R.samples_of(e, F64):
            if not _grad_ok(e, s, F64):
                continue
            if e.graph and s.graph:
                jf = _jit_of(e, s)
                jf(*[to_kiln(a) for a in s.args])
                grad_tested |= _traced_ops(jf)
            else:
                grad_tested.update(e.ops)
    untested = sorted(n for n in _core.op_names()
                      if _core.op_info(n)["differentiable"] and n not in grad_tested and n not in R.PASS_ONLY_OPS
                      and n not in R.MULTI_PROCESS_OPS and n not in R.CONTROL_FLOW_OPS)
    assert not untested, f"differentiable ops without a gradient test: {untested}"


def test_op_info_is_consistent():
    """Every op can run (a CPU kernel or a direct implementation) and has shape inference; a differentiable op has a
    bprop; an op with a bprop is marked differentiable."""
    bad = []
    for n in _core.op_names():
        info = _core.op_info(n)
        if not info.get("has_infer", True):
            bad.append(f"{n}: no infer")
        if not (info.get("has_cpu_kernel") or info.get("has_direct") or info.get("has_decomposition")):
            bad.append(f"{n}: no CPU kernel / decomposition")
        if info["differentiable"] != info["has_bprop"]:
            bad.append(f"{n}: differentiable={info['differentiable']} but has_bprop={info['has_bprop']}")
    assert not bad, bad


def test_entry_differentiable_flags_match_op_info():
    """An entry for exactly one op is gradient-checked iff op_info says the op is differentiable."""
    bad = []
    for e in R.entries("op"):
        if len(e.ops) == 1 and e.differentiable != _core.op_info(e.ops[0])["differentiable"]:
            bad.append(f"{e.name}: entry differentiable={e.differentiable}, op_info says the opposite")
    assert not bad, bad


_OP_RE = re.compile(r"= (\w+)\(")


def _traced_ops(jf):
    names = set()
    for g in jf.graphs:
        names.update(_OP_RE.findall(g.graph_before.to_text()))
    return names


@pytest.mark.parametrize("entry", [e for e in R.entries() if e.graph], ids=lambda e: e.name)
def test_entry_ops_are_traced(entry):
    """The ops an entry claims to cover appear in the graphs its calls trace (forward, or gradient when the entry
    is differentiable): the registry cannot claim coverage it does not have."""
    seen = set()
    dtype = F32 if F32 in entry.dtypes else entry.dtypes[0]
    if entry.kind == "random":
        jf = kiln.jit(lambda: entry.draw((4, 3), dtype))
        jf()
        seen |= _traced_ops(jf)
    elif entry.kind == "state":
        for s in R.samples_of(entry, dtype):
            entry.run(s, True)
            seen |= _traced_ops(R.LAST_JIT[0])
    else:
        for s in R.samples_of(entry, dtype):
            if not s.graph:
                continue
            args = [to_kiln(a) for a in s.args]
            jf = _jit_of(entry, s)
            jf(*args)
            seen |= _traced_ops(jf)
            if entry.differentiable and _grad_positions(entry, s):
                cots = _cotangents(entry, s, args, np.random.default_rng(0))
                if any(c is not None for c in cots):
                    vg = kiln.value_and_grad(_loss_fn(entry, s, cots), grad_position=_grad_positions(entry, s))
                    jg = kiln.jit(vg)
                    jg(*args)
                    seen |= _traced_ops(jg)
    missing = set(entry.ops) - seen
    assert not missing, f"{entry.name} claims {sorted(missing)} but its graphs only hold {sorted(seen)}"


@pytest.mark.parametrize("op_name", sorted(R.PASS_ONLY_OPS))
def test_pass_only_ops_are_exercised(op_name):
    """Each pass-only (fused) op that exists is produced by the optimized graph of some registry entry, so the
    Graph-parity tests of that entry run its kernel against PyNative."""
    if op_name not in _core.op_names():
        pytest.skip(f"{op_name} is not in this build")
    for e in R.entries("op"):
        if not e.graph:
            continue
        for dt in e.dtypes:
            for s in R.samples_of(e, dt):
                if not s.graph:
                    continue
                jf = _jit_of(e, s)
                jf(*[to_kiln(a) for a in s.args])
                if op_name in _OP_RE.findall(jf.graphs[0].graph.to_text()):
                    return
    pytest.fail(f"no registry entry's optimized graph contains {op_name}")


# ---------------------------------------------------------------------------------------------- special cases

@pytest.mark.parametrize("use_jit", [False, True])
def test_stop_gradient_blocks_gradient(use_jit):
    x = Tensor(np.array([[1.0, -2.0], [3.0, 0.5]]))
    vg = kiln.value_and_grad(lambda a: ops.sum(ops.mul(ops.stop_gradient(a), a)))
    v, g = (kiln.jit(vg) if use_jit else vg)(x)
    np.testing.assert_allclose(v.asnumpy(), np.sum(x.asnumpy() ** 2))
    np.testing.assert_array_equal(g.asnumpy(), x.asnumpy())  # d/da (c·a) with c = stop_gradient(a)


def test_nonzero_in_graph_raises():
    """NonZero's output shape depends on the data: under jit it must raise a clear error (run in a subprocess: it
    used to crash the interpreter)."""
    code = ("import numpy as np, kiln\nfrom kiln import _core, Tensor\n"
            "kiln.set_context(jit_syntax_level=kiln.STRICT)\n"  # (under LAX it runs in PyNative instead)
            "try:\n    kiln.jit(lambda a: _core.nonzero(a))(Tensor(np.ones((2, 2))))\n"
            "except RuntimeError as e:\n    print('RuntimeError:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"crashed with return code {r.returncode}: {r.stderr[-500:]}"
    assert "RuntimeError:" in r.stdout and "NonZero" in r.stdout, r.stdout + r.stderr


def test_int_min_floor_div_does_not_crash():
    """INT_MIN // -1 and INT_MIN % -1 trap (SIGFPE) in C++ if done naively; NumPy wraps to INT_MIN and gives 0.
    (Run in a subprocess: it used to kill the interpreter.)"""
    code = ("import numpy as np\nfrom kiln import ops, Tensor\n"
            "for dt in (np.int32, np.int64):\n"
            "    a = Tensor(np.array([np.iinfo(dt).min, 7], dt)); b = Tensor(np.array([-1, -1], dt))\n"
            "    print(ops.floor_div(a, b).asnumpy().tolist(), ops.floor_mod(a, b).asnumpy().tolist())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"crashed with return code {r.returncode}: {r.stderr[-500:]}"
    assert r.stdout.split("\n")[:2] == [f"[{-2**31}, -7] [0, 0]", f"[{-2**63}, -7] [0, 0]"], r.stdout


# ---------------------------------------------------------------------------------------------- special values
# op_registry Note [special values].

_SPECIAL_DTYPES = (F32, F64, F16)
_SPECIAL_TOL = {F32: (1e-4, 1e-3), F64: (1e-9, 1e-9), F16: (4e-3, 2e-2)}  # values up to ~1000: error ~1000·eps per op


def _float_array_positions(sample):
    return [i for i, a in enumerate(sample.args)
            if isinstance(np_value(a), np.ndarray) and np_value(a).dtype.kind == "f" and np_value(a).size]


def _with_values(sample, pos, values):
    """`sample` with arg `pos` (an ndarray or NC) holding `values` at the given flat indices: {index: value}."""
    a = sample.args[pos]
    v = np.array(np_value(a), copy=True)
    flat = v.reshape(-1)
    for k, x in values.items():
        flat[k] = x
    new = NC(v, a.how) if isinstance(a, NC) else v
    args = tuple(new if i == pos else b for i, b in enumerate(sample.args))
    return R.Sample(args, sample.kwargs, sample.desc, sample.grad, sample.graph)


def _special_patterns(n):
    last, mid = n - 1, n // 2
    yield "nan", {0: np.nan}
    yield "inf", {0: np.inf, last: -np.inf} if n > 1 else {0: np.inf}
    yield "-inf", {0: -np.inf}
    big = {0: 1000.0}
    if n > 1:
        big[last] = -1000.0
    if n > 2:
        big[mid] = 0.0
    yield "large", big


def _special_params():
    out = []
    for e in R.entries("op"):
        if e.special_skip:
            continue
        for dt in e.dtypes:
            if np.dtype(dt) in _SPECIAL_DTYPES:
                out.append(pytest.param(e, dt, id=f"{e.name}-{dt}"))
    return out


@pytest.mark.parametrize("entry,dtype", _special_params())
def test_special_values(entry, dtype):
    """NaN/±inf/±1000/0 in each float input: values and dtype as the reference's (NaN where NumPy gives NaN), and
    kiln.jit gives PyNative's results (fused kernels included)."""
    dtype = np.dtype(dtype)
    rtol, atol = _SPECIAL_TOL[dtype]
    ref_entry = entry if entry.special_ref is None else R.OpInfo(entry.name, entry.ops, entry.op, entry.special_ref)
    problems, checked = [], 0
    for sample in R.samples_of(entry, dtype):
        if entry.special_ok is not None and not entry.special_ok(sample):
            continue
        for pos in _float_array_positions(sample):
            if entry.special_args is not None and pos not in entry.special_args:
                continue
            n = np_value(sample.args[pos]).size
            for pattern, values in _special_patterns(n):
                s = _with_values(sample, pos, values)
                what = f"{entry.name}{s!r}, {pattern} in input {pos}: "
                args = [to_kiln(a) for a in s.args]
                got = _outs(_call(entry, s, args))
                want, np_dtypes = _reference(ref_entry, s)
                checked += 1
                for k, (g, w, nd) in enumerate(zip(got, want, np_dtypes)):
                    exp = _expected_dtype(entry, s, nd)
                    try:
                        with np.errstate(all="ignore"):
                            w = w.astype(exp)  # the reference rounded to the output dtype (overflow → inf)
                        _assert_values(g.asnumpy(), w, exp, rtol, atol, f"{what}output {k}: ")
                    except AssertionError:
                        problems.append(f"{what}output {k}: got " + " ".join(
                            f"{g.asnumpy().reshape(-1)[:8]}, expected {w.reshape(-1)[:8]}".split()))
                if entry.graph and s.graph:
                    graph = _outs(_jit_of(entry, s)(*args))
                    for k, (g, e) in enumerate(zip(graph, got)):
                        try:
                            _assert_ulp(g.asnumpy(), e.asnumpy(), f"{what}Graph vs PyNative output {k}: ")
                        except AssertionError as err:
                            problems.append(str(err).strip().splitlines()[0])
    if not checked:
        pytest.skip("no sample with a non-empty float input")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:12])


def _special_grad_params():
    out = []
    for e in R.entries("op"):
        if e.special_skip or not e.differentiable or F64 not in e.dtypes:
            continue
        for point in (0.0, 1000.0, -1000.0):
            out.append(pytest.param(e, point, id=f"{e.name}-{point:g}"))
    return out


@pytest.mark.parametrize("entry,point", _special_grad_params())
def test_special_gradient(entry, point):
    """The gradient (float64) at `point` put into element 0 of each differentiated input: equal to the central
    finite difference where the one-sided differences agree (so finite wherever the function is smooth), to
    entry.kinks[point] at a documented kink (elementwise entries), never NaN/inf where the function and both
    one-sided differences are finite; and the same under kiln.jit."""
    problems, checked = [], 0
    rtol, atol = entry.grad_tol
    for si, sample in enumerate(R.samples_of(entry, F64)):
        if not _grad_ok(entry, sample, F64) or (entry.special_ok is not None and not entry.special_ok(sample)):
            continue
        for pos in _grad_positions(entry, sample):
            if pos not in _float_array_positions(sample):
                continue
            s = _with_values(sample, pos, {0: point})
            args = [to_kiln(a) for a in s.args]
            cots = _cotangents(entry, s, args, np.random.default_rng(3))
            loss = _loss_fn(entry, s, cots)
            with np.errstate(all="ignore"):
                f0 = float(loss(*args).asnumpy())
            if not np.isfinite(f0):
                continue  # no gradient where the function value is not finite (log 0, exp 1000, x / 0)
            checked += 1
            what = f"{entry.name} sample {si} {s!r}, input {pos}[0] = {point:g}: "
            g = kiln.grad(loss, grad_position=pos)(*args)
            g0 = float(g.asnumpy().reshape(-1)[0])
            h = entry.grad_eps * max(1.0, abs(point))

            def at(v):
                t = [to_kiln(a) for a in _with_values(s, pos, {0: v}).args]
                return float(loss(*t).asnumpy())

            with np.errstate(all="ignore"):
                fp, fm = at(point + h), at(point - h)
                right, left, central = (fp - f0) / h, (f0 - fm) / h, (fp - fm) / (2 * h)
            smooth = np.isfinite(right) and np.isfinite(left) and abs(right - left) <= 1e-2 * (1 + abs(right) + abs(left))
            if smooth:
                if not np.isclose(g0, central, rtol=max(rtol, 1e-5), atol=max(atol, 1e-6) * (1 + abs(central))):
                    problems.append(f"{what}gradient {g0!r}, central difference {central!r}")
            elif point not in entry.kinks:
                problems.append(f"{what}the function is not smooth here (one-sided differences {left!r}, "
                                f"{right!r}) and the entry documents no gradient for it (OpInfo.kinks); Kiln "
                                f"gives {g0!r}")
            else:
                d = entry.kinks[point]
                outs = _outs(entry.op(*args, **s.kwargs))
                elementwise = len(outs) == 1 and tuple(outs[0].shape) == tuple(args[pos].shape)
                if d is not None and elementwise:
                    want = float(cots[0].asnumpy().reshape(-1)[0]) * d
                    if not (g0 == want or np.isclose(g0, want, rtol=1e-12, atol=1e-12)):
                        problems.append(f"{what}gradient {g0!r} at the kink, documented {d!r}·dy = {want!r}")
            if entry.graph and s.graph:
                gg = kiln.jit(kiln.grad(loss, grad_position=pos))(*args)
                try:
                    _assert_ulp(gg.asnumpy(), g.asnumpy(), f"{what}Graph vs PyNative gradient: ", maxulp=2)
                except AssertionError as err:
                    problems.append(str(err).strip().splitlines()[0])
    if not checked:
        pytest.skip("no gradient sample with a finite value at this point")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:12])


# The fused kernels of Graph mode on special values: each op FusedElementwise takes, and MatMulBiasAct on both of
# its kernels (sgemm + loop for small problems, oneDNN's primitive for large ones), against the unfused ops.
_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1000.0, -1000.0, 1.0, -1.0, 0.5, -2.5, 30.0])
_EW_UNARY = {"Neg": ops.neg, "Exp": ops.exp, "Log": ops.log, "Sqrt": ops.sqrt, "Rsqrt": ops.rsqrt, "Abs": ops.abs,
             "Square": ops.square, "Erf": ops.erf, "ReLU": ops.relu, "Sigmoid": ops.sigmoid, "Tanh": ops.tanh,
             "GeLU": ops.gelu, "GeLU(tanh)": lambda x: ops.gelu(x, approximate="tanh"), "Log1p": ops.log1p}
_EW_BINARY = {"Add": ops.add, "Sub": ops.sub, "Mul": ops.mul, "Div": ops.div, "Pow": ops.pow,
              "Maximum": ops.maximum, "Minimum": ops.minimum}


def _fused_text(jf):
    return jf.graphs[0].graph.to_text()


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name", list(_EW_UNARY) + list(_EW_BINARY))
def test_fused_elementwise_special_values(name, dtype):
    """op(x) (and op(x, y) over every pair of special values) inside a fused chain: the same values as PyNative's
    unfused op, NaN and ±inf included; and the same gradients."""
    if name in _EW_UNARY:
        f = _EW_UNARY[name]
        xs = (Tensor(_SPECIALS.astype(dtype)),)

        def chain(x):
            return ops.mul(f(ops.mul(x, 1.5)), 0.5)
    else:
        f = _EW_BINARY[name]
        xs = (Tensor(np.repeat(_SPECIALS, _SPECIALS.size).astype(dtype)),
              Tensor(np.tile(_SPECIALS, _SPECIALS.size).astype(dtype)))

        def chain(x, y):
            return ops.mul(f(ops.mul(x, 1.5), y), 0.5)
    jf = kiln.jit(chain)
    graph = jf(*xs)
    assert "FusedElementwise" in _fused_text(jf), _fused_text(jf)
    _assert_ulp(graph.asnumpy(), chain(*xs).asnumpy(), f"{name}: fused vs PyNative: ", maxulp=0)
    # gradients through the fused op (its bprop re-runs the unfused ops) on the finite special values
    finite = [Tensor(np.nan_to_num(x.asnumpy(), nan=0.25, posinf=3.0, neginf=-3.0)) for x in xs]
    c = Tensor(np.linspace(-1, 1, finite[0].shape[0]).astype(dtype))
    vg = kiln.value_and_grad(lambda *a: ops.sum(ops.mul(chain(*a), c)), grad_position=tuple(range(len(xs))))
    (v_e, g_e), (v_g, g_g) = vg(*finite), kiln.jit(vg)(*finite)
    _assert_ulp(v_g.asnumpy(), v_e.asnumpy(), f"{name} value: ")
    for a, b in zip(g_g, g_e):
        _assert_ulp(a.asnumpy(), b.asnumpy(), f"{name} gradient: ", maxulp=2)


@pytest.mark.parametrize("act", ["none", "relu", "sigmoid", "tanh", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("mkn", [(6, 5, 4), (96, 80, 72)], ids=["sgemm", "primitive"])
def test_fused_matmul_bias_act_special_values(act, mkn):
    """act(x·w + b) compiled to MatMulBiasAct with NaN, ±inf and ±1000 in x: NaN and ±inf where the unfused ops give
    them (relu(NaN) = NaN on both kernels), finite values as the unfused ops'."""
    fns = {"none": lambda z: z, "relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh, "gelu": ops.gelu,
           "gelu_tanh": lambda z: ops.gelu(z, approximate="tanh")}
    M, K, N = mkn
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    x[0, 0], x[1, 0], x[2, 0], x[3, 0], x[4, 1] = np.nan, np.inf, -np.inf, 1000.0, -1000.0
    w = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    w[0, 1] = 0.0  # inf·0 = NaN in one column
    b = rng.uniform(-1, 1, (N,)).astype(np.float32)
    f = fns[act]

    def dense(x, w, b):
        return f(ops.add(ops.matmul(x, w), b))
    jf = kiln.jit(dense)
    args = (Tensor(x), Tensor(w), Tensor(b))
    got, want = jf(*args).asnumpy(), dense(*args).asnumpy()
    assert "MatMulBiasAct" in _fused_text(jf), _fused_text(jf)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{act}: NaN positions")
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want), err_msg=f"{act}: +inf positions")
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want), err_msg=f"{act}: -inf positions")
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4 * (1 + np.abs(want[fin]).max()))
    assert np.isnan(want[0]).all()  # the NaN row stays NaN through every activation


# The named values of issue 7 (items 2 and 3) and the corners the registry's points (0, ±1000) do not reach.

def _value_and_grad(fn, x, use_jit):
    vg = kiln.value_and_grad(lambda a: ops.sum(fn(a)))
    v, g = (kiln.jit(vg) if use_jit else vg)(x)
    y = (kiln.jit(fn) if use_jit else fn)(x)
    return y.asnumpy(), g.asnumpy()


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_named_special_values(dtype, use_jit):
    """relu([nan, 1]) = [nan, 1]; sign(nan) = nan; LogSigmoid at 0/−1000/1000 = −log 2/−1000/0 with gradients
    0.5/1/0; ReLU6's gradient 0 at 0 and 1 at 6, HSigmoid's 0 at ±3 (MindSpore's ReLU6Grad/HSigmoidGrad);
    float floor division as Python's (1 // 0.1 = 9, −1000 // inf = −1)."""
    t = lambda v: Tensor(np.array(v, dtype))
    run = (lambda f, *a: kiln.jit(f)(*a)) if use_jit else (lambda f, *a: f(*a))
    np.testing.assert_array_equal(run(ops.relu, t([np.nan, 1.0, -1.0])).asnumpy(), [np.nan, 1.0, 0.0])
    np.testing.assert_array_equal(run(ops.sign, t([np.nan, -2.0, 0.0])).asnumpy(), [np.nan, -1.0, 0.0])
    y, g = _value_and_grad(kiln.nn.LogSigmoid(), t([0.0, -1000.0, 1000.0]), use_jit)
    np.testing.assert_allclose(y, [-np.log(2.0), -1000.0, 0.0], rtol=1e-7)
    np.testing.assert_array_equal(g, [0.5, 1.0, 0.0])
    y, g = _value_and_grad(kiln.nn.ReLU6(), t([0.0, 6.0, 3.0, -1.0, 7.0, np.nan]), use_jit)
    np.testing.assert_array_equal(y, [0.0, 6.0, 3.0, 0.0, 6.0, np.nan])
    np.testing.assert_array_equal(g[:5], [0.0, 1.0, 1.0, 0.0, 0.0])
    y, g = _value_and_grad(kiln.nn.HSigmoid(), t([-3.0, 3.0, 0.0]), use_jit)
    np.testing.assert_allclose(y, [0.0, 1.0, 0.5])
    np.testing.assert_allclose(g, [0.0, 0.0, 1 / 6], rtol=1e-7)
    y, g = _value_and_grad(kiln.nn.HSwish(), t([-3.0, 3.0, 0.0]), use_jit)  # MindSpore's (and PyTorch's) corners
    np.testing.assert_allclose(g, [-0.5, 1.5, 0.5], rtol=1e-7)
    q = run(ops.floor_div, t([1.0, -1000.0, 1000.0, 7.0, -7.0]), t([0.1, np.inf, np.inf, -2.0, 0.0])).asnumpy()
    np.testing.assert_array_equal(q, [9.0, -1.0, 0.0, -4.0, -np.inf])


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_with_a_masked_entry(log, use_jit):
    """A row with one −inf: softmax [0.5, 0.5, 0] / log_softmax [−log 2, −log 2, −inf], no NaN; the gradient is
    finite (softmax: y·(g − Σ g·y), 0 at the masked entry; log_softmax: g − exp(y)·Σ g with exp(−inf) = 0).
    A row of −inf only is NaN (0/0), as NumPy/SciPy and PyTorch."""
    f = ops.log_softmax if log else ops.softmax
    x = Tensor(np.array([[0.0, 0.0, -np.inf], [1.0, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf]]))
    c = Tensor(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [0.0, 0.0, 0.0]]))
    vg = kiln.value_and_grad(lambda a: ops.sum(ops.mul(f(a, -1)[:2], c[:2])))
    y = (kiln.jit(lambda a: f(a, -1)) if use_jit else (lambda a: f(a, -1)))(x).asnumpy()
    _, g = (kiln.jit(vg) if use_jit else vg)(x)
    xv = x.asnumpy()[:2]
    e = np.exp(xv - xv.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    want = np.log(p) if log else p
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(y[:2], want, rtol=1e-12)
    assert np.isnan(y[2]).all()
    cv = c.asnumpy()[:2]
    want_g = cv - p * cv.sum(axis=1, keepdims=True) if log else p * (cv - (cv * p).sum(axis=1, keepdims=True))
    g = g.asnumpy()
    assert np.isfinite(g[:2]).all(), g
    np.testing.assert_allclose(g[:2], want_g, rtol=1e-12, atol=1e-15)
    if not log:  # (log_softmax_k = x_k − LSE: its own cotangent reaches a masked x_k, as the formula says)
        assert g[0, 2] == 0 and g[1, 1] == 0


def test_softplus_and_logsigmoid_keep_tiny_tails():
    """log1p, not log(1 + ·): softplus(−x) = exp(−x)(1 − …) and logsigmoid(x) = −exp(−x)(…) for x = 20..700
    (log(1 + 2e-9) rounds to 0), float64, to 1e-12 relative."""
    x = np.array([20.0, 40.0, 100.0, 700.0])
    want = np.log1p(np.exp(-x))
    np.testing.assert_allclose(ops.softplus(Tensor(-x)).asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(ops.logsigmoid(Tensor(x)).asnumpy(), -want, rtol=1e-12)
    np.testing.assert_allclose(kiln.nn.LogSigmoid()(Tensor(x)).asnumpy(), -want, rtol=1e-12)


# ------------------------------------------------------------------------------------ selections: NaN and ties

def _selection_params(field):
    return [pytest.param(e, id=e.name) for e in R.entries("op") if getattr(e, field) and F64 in e.dtypes]


def _selection_grad(entry, sample, use_jit, cot_rng_seed=5):
    """The gradient of input 0 of sum(out · cot) for `sample` (float64), eagerly or under kiln.jit."""
    args = [to_kiln(a) for a in sample.args]
    cots = _cotangents(entry, sample, args, np.random.default_rng(cot_rng_seed))
    g = kiln.grad(_loss_fn(entry, sample, cots), grad_position=0)
    return (kiln.jit(g) if use_jit else g)(*args).asnumpy()


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("entry", _selection_params("nan_wins"))
def test_selection_nan_gradient(entry, use_jit):
    """A NaN in the input of a max/min-like selection is the result (the forward propagates NaN), so the gradient
    goes to it: equal to the gradient with the NaN replaced by entry.nan_wins (±inf, which wins the same way) —
    finite everywhere, non-zero at the NaN, 0 at the positions it beat; was NaN for every element."""
    checked = nan_got_gradient = 0
    for sample in R.samples_of(entry, F64):
        if not _grad_ok(entry, sample, F64) or 0 not in _grad_positions(entry, sample):
            continue
        size = np_value(sample.args[0]).size
        for k in sorted({0, size // 2, size - 1}):
            with np.errstate(all="ignore"):
                got = _selection_grad(entry, _with_values(sample, 0, {k: np.nan}), use_jit)
                want = _selection_grad(entry, _with_values(sample, 0, {k: entry.nan_wins}), use_jit)
            what = f"{entry.name} {sample!r}, NaN at flat index {k}"
            assert np.isfinite(got).all(), f"{what}: gradient {got}"
            np.testing.assert_array_equal(got, want, err_msg=what)
            checked += 1
            nan_got_gradient += bool(got.reshape(-1)[k] != 0)  # 0 only where no output reads it (pool strides)
    assert checked, f"{entry.name}: no sample checked"
    assert nan_got_gradient, f"{entry.name}: the NaN never got a gradient"


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("entry", _selection_params("ties"))
def test_selection_tie_gradient(entry, use_jit):
    """All-equal input (every element ties) with a cotangent of ones: the gradient conserves the cotangent (sums to
    the number of outputs); "split" entries share it equally (a uniform gradient, each element being in one slice),
    "first" entries give each output's whole cotangent to one element (whole numbers: the first of each tie)."""
    checked = 0
    for sample in R.samples_of(entry, F64):
        if not _grad_ok(entry, sample, F64) or 0 not in _grad_positions(entry, sample):
            continue
        x = np_value(sample.args[0])
        s = _with_values(sample, 0, {k: 1.5 for k in range(x.size)})
        args = [to_kiln(a) for a in s.args]
        outs = _outs(_call(entry, s, args))
        cots = [Tensor(np.ones(o.shape)) if o.dtype == kiln.float64 else None for o in outs]
        g = kiln.grad(_loss_fn(entry, s, cots), grad_position=0)
        got = (kiln.jit(g) if use_jit else g)(*args).asnumpy()
        n_out = sum(int(np.prod(o.shape)) for o, c in zip(outs, cots) if c is not None)
        what = f"{entry.name} {s!r}"
        np.testing.assert_allclose(got.sum(), n_out, rtol=1e-12, err_msg=what)
        if entry.ties == "split":
            np.testing.assert_allclose(got, np.full(got.shape, n_out / got.size), rtol=1e-12, err_msg=what)
        else:
            np.testing.assert_array_equal(got, np.round(got), err_msg=what)
            assert (got == 0).any() or n_out == got.size, f"{what}: the gradient is split, not given to the first"
        checked += 1
    assert checked, f"{entry.name}: no sample checked"


# ---------------------------------------------------------------------------------------------- random ops

@pytest.fixture
def seed_state():
    saved = (_seed._global_seed, dict(_seed._counters))
    yield
    _seed._global_seed = saved[0]
    _seed._counters.clear()
    _seed._counters.update(saved[1])


def _random_params():
    return [pytest.param(e, dt, id=f"{e.name}-{dt}") for e in R.entries("random") for dt in e.dtypes]


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("entry,dtype", _random_params())
def test_random_distribution(entry, dtype, use_jit, seed_state):
    kiln.set_seed(123)
    draw = (lambda s: kiln.jit(lambda: entry.draw(s, dtype))()) if use_jit else (lambda s: entry.draw(s, dtype))
    x = draw((200, 100))
    assert tuple(x.shape) == (200, 100) and _np_dtype(x.dtype) == np.dtype(dtype)
    entry.check(x.asnumpy(), dtype)
    for shape in [(), (0, 3), (1,)]:
        y = draw(shape)
        assert tuple(y.shape) == shape and _np_dtype(y.dtype) == np.dtype(dtype)


@pytest.mark.parametrize("entry,dtype", _random_params())
def test_random_seed_determinism(entry, dtype, seed_state):
    """set_seed makes draws repeat (PyNative; and a freshly compiled graph), successive draws differ, op seeds work."""
    def eager():
        return entry.draw((64,), dtype).asnumpy()

    kiln.set_seed(7)
    a, b = eager(), eager()
    kiln.set_seed(7)
    np.testing.assert_array_equal(eager(), a)
    assert not np.array_equal(a, b)
    kiln.set_seed(7)
    c = entry.draw((64,), dtype, seed=3).asnumpy()
    kiln.set_seed(7)
    np.testing.assert_array_equal(entry.draw((64,), dtype, seed=3).asnumpy(), c)

    kiln.set_seed(7)
    f1 = kiln.jit(lambda: entry.draw((64,), dtype))
    g1, g2 = f1().asnumpy(), f1().asnumpy()
    assert not np.array_equal(g1, g2), "a compiled random op must draw anew on each run"
    kiln.set_seed(7)
    f2 = kiln.jit(lambda: entry.draw((64,), dtype))
    np.testing.assert_array_equal(f2().asnumpy(), g1)


@pytest.mark.parametrize("entry,dtype", _random_params())
def test_random_graph_matches_pynative_stream(entry, dtype, seed_state):
    """With random streams (a draw takes its stream's next offset when the kernel runs, eagerly or in a graph), the
    same program draws the same numbers in both modes after the same set_seed."""
    if not hasattr(_core, "reset_random_streams"):
        pytest.skip("this build keys random draws at trace time: Graph and PyNative draw different streams")

    def prog():
        return entry.draw((3, 5), dtype), entry.draw((4,), dtype)

    kiln.set_seed(11)
    eager = [t.asnumpy() for t in prog() + prog()]
    kiln.set_seed(11)
    jf = kiln.jit(prog)
    graph = [t.asnumpy() for t in jf() + jf()]
    for k, (g, e) in enumerate(zip(graph, eager)):
        np.testing.assert_array_equal(g, e, err_msg=f"draw {k}")


# ---------------------------------------------------------------------------------------------- state ops

def _state_params(graph_only=False):
    return [pytest.param(e, s, dt, id=f"{e.name}-{dt}-{i}")
            for e in R.entries("state") if not graph_only or e.graph
            for dt in e.dtypes for i, s in enumerate(R.samples_of(e, dt))]


@pytest.mark.parametrize("entry,sample,dtype", _state_params())
def test_state_forward(entry, sample, dtype):
    got = entry.run(sample, False)
    want = entry.ref(sample)
    assert len(got) == len(want)
    dtype = np.dtype(dtype)
    rtol, atol = (2e-5, 2e-6) if dtype == F32 else R.DEFAULT_TOL.get(dtype, (0, 0))  # a few ops in float32
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == dtype, f"output {k}: dtype {g.dtype}, expected {dtype} (state keeps its dtype)"
        _assert_values(g, np.asarray(w), dtype, rtol, atol, f"output {k}: ")


@pytest.mark.parametrize("entry,sample,dtype", _state_params(graph_only=True))
def test_state_graph(entry, sample, dtype):
    eager = entry.run(sample, False)
    graph = entry.run(sample, True)
    for k, (g, e) in enumerate(zip(graph, eager)):
        _assert_ulp(g, e, f"output/state {k}: ")
