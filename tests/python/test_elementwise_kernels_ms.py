"""Elementwise ops moved from Python compositions into one C++ kernel each (issue 23): Sinc, Round, Trunc, Copysign,
Xlogy, Fmax, Fmin, TruncateDiv, Heaviside (and signbit, one Less). The registry rows (tests/python/op_registry)
check values against NumPy, float64 finite-difference gradients, PyNative against Graph mode and the one node; here:
MindSpore 2.10's values at the edges and its gradients where finite differences cannot see them (ties, zeros), in
PyNative and Graph mode. Every expected value below is MindSpore 2.10's (CPU), obtained with the oracle
(/work/shared/tools/ms_oracle.py)."""
import math
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, ops

INF, NAN = math.inf, math.nan
MODES = pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])


def _run(fn, use_jit, *args):
    return (kiln.jit(fn) if use_jit else fn)(*args)


def _t(values, dtype=np.float32):
    return Tensor(np.array(values, dtype))


def _grads(fn, use_jit, *args):
    g = kiln.grad(lambda *a: ops.sum(fn(*a)), grad_position=tuple(range(len(args))))
    out = _run(g, use_jit, *args)
    return [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]


def _traced_ops(fn, *args):
    """The op names of the graph kiln.jit traces for fn(*args), in order."""
    jf = kiln.jit(fn)
    jf(*args)
    return re.findall(r"= (\w+)\(", jf.graphs[0].graph_before.to_text())


@MODES
def test_forward_mindspore_values(use_jit):
    f32 = lambda *v: _t(v)
    cases = [
        # fmax: NaN only where both are NaN
        (ops.fmax, (f32(1.0, NAN, NAN, 2.0), f32(NAN, 3.0, NAN, 1.0)), [1.0, 3.0, NAN, 2.0]),
        # copysign: the sign bit of other (NumPy's; MindSpore 2.10 gives 1.0 for other = −0.0: it tests other < 0)
        (ops.copysign, (f32(1.0, -2.0, 3.0, 0.0, INF), f32(-0.0, 1.0, NAN, -1.0, -1.0)), [-1.0, 2.0, 3.0, -0.0, -INF]),
        # truncate_div on floats: trunc(x / y), x / 0 = ±inf, 0 / 0 = NaN
        (ops.truncate_div, (f32(7.0, -7.0, 7.0, 0.0, 1.0, -1.0), f32(-4.0, 2.0, 0.0, 0.0, 0.1, 0.0)),
         [-1.0, -3.0, INF, NAN, 10.0, -INF]),
        # round: halves to even
        (ops.round, (f32(0.5, 1.5, 2.5, -0.5, -2.5, 1.25, 2.675, 12345.6, NAN, INF),),
         [0.0, 2.0, 2.0, -0.0, -2.0, 1.0, 3.0, 12346.0, NAN, INF]),
        # sinc: πx in float32, so sinc(1) is −2.78e-8, not 0
        (ops.sinc, (f32(0.0, 0.5, 1.0, -1.5, INF, NAN, 1e-8),),
         [1.0, 0.6366197466850281, -2.7827534054836178e-08, -0.21220658719539642, NAN, NAN, 1.0]),
        (ops.trunc, (f32(-2.7, 2.7, -0.5, NAN, INF),), [-2.0, 2.0, -0.0, NAN, INF]),
        # heaviside: 0 where the input is NaN (MindSpore and PyTorch; NumPy gives NaN)
        (ops.heaviside, (f32(-1.0, 0.0, 2.0, NAN, -0.0), f32(5.0, 6.0, 7.0, 8.0, 9.0)), [0.0, 6.0, 1.0, 0.0, 9.0]),
    ]
    for fn, args, want in cases:
        got = _run(fn, use_jit, *args).asnumpy()
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6, equal_nan=True, err_msg=fn.__name__)
        # signed zeros where MindSpore gives them
        np.testing.assert_array_equal(np.signbit(got[np.array(want) == 0]),
                                      np.signbit(np.array(want)[np.array(want) == 0]), err_msg=fn.__name__)
    sb = _run(ops.signbit, use_jit, f32(1.0, -1.0, 0.0, -0.0, NAN, -NAN, INF, -INF)).asnumpy()
    np.testing.assert_array_equal(sb, [False, True, False, False, False, False, False, True])


def test_integer_mindspore_values():
    a, b = _t([7, -7, 7, -5, 7, -5, 0], np.int32), _t([-4, 2, 3, 3, 0, 0, 0], np.int32)
    out = ops.truncate_div(a, b)
    assert out.dtype == kiln.int32
    # an integer zero divisor: the dtype's max for a > 0, its lowest for a < 0, 0 for 0 (MindSpore 2.10, Int32)
    np.testing.assert_array_equal(out.asnumpy(), [-1, -3, 2, -1, 2147483647, -2147483648, 0])
    assert ops.truncate_div(_t([7, -7], np.int32), 2.0).dtype == kiln.float32
    np.testing.assert_array_equal(ops.fmax(_t([1, 5], np.int32), _t([3, 2], np.int32)).asnumpy(), [3, 5])
    f = ops.fmax(_t([1, 5], np.int32), _t([3.0, 2.0]))
    assert f.dtype == kiln.float32 and f.asnumpy().tolist() == [3.0, 5.0]
    c = ops.copysign(_t([1, -2], np.int32), _t([-1, 1], np.int32))
    assert c.dtype == kiln.float32 and c.asnumpy().tolist() == [-1.0, 2.0]
    s = ops.sinc(_t([0, 1, 2], np.int32))
    assert s.dtype == kiln.float32
    np.testing.assert_allclose(s.asnumpy(), [1.0, -2.7827534054836178e-08, 2.7827534054836178e-08], rtol=1e-6)
    r = ops.round(_t([1, 2], np.int32))
    assert r.dtype == kiln.int32 and r.asnumpy().tolist() == [1, 2]


@MODES
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_round_integers_negative_decimals_numpy(dtype, use_jit):
    # decimals < 0 rounds integers to tens/hundreds, halves to even, as np.round (MindSpore 2.10's CPU Round raises
    # for decimals != 0 on every dtype; Kiln computes NumPy's value, and returned integers unchanged before).
    # Values whose rounded result fits the dtype (NumPy wraps beyond it).
    vals = {np.int8: [-125, -115, -105, -50, -15, 0, 5, 15, 25, 45, 55, 64, 124],
            np.uint8: [0, 4, 5, 15, 25, 49, 50, 150, 249, 250]}.get(
        dtype, [-1550, -1250, -149, -50, 0, 49, 50, 150, 250, 1234, 1250, 1350, 32000 if dtype == np.int16 else 99999])
    a = np.array(vals, dtype)
    for d in (-1, -2, -3, -4, -12, 0, 2):
        got = _run(lambda t: ops.round(t, decimals=d), use_jit, Tensor(a))
        assert got.dtype == Tensor(a).dtype
        want = np.round(a.astype(np.float64), d).astype(dtype)  # exact: these values and 10**-d are exact in float64
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=f"decimals={d}")
    if dtype == np.int64:  # beyond float64's 53 bits: exact integer rounding (NumPy goes through float64 there)
        big = np.array([2**62 + 50, -(2**62) - 150, 9_000_000_000_000_000_049], np.int64)
        got = ops.round(Tensor(big), decimals=-2).asnumpy()
        # Python's round() on ints is exact and halves to even
        np.testing.assert_array_equal(got, [round(int(v), -2) for v in big])
        assert got.tolist() == [4611686018427388000, -4611686018427388100, 9_000_000_000_000_000_000]


@MODES
def test_xlogy_python_number_is_float32_as_mindspore(use_jit):
    # MindSpore 2.10's ops.xlogy makes a Python number a float32 Tensor before Xlogy's type promotion: xlogy(float16
    # Tensor, 2.0) is Float32 [0.346574, 1.039721] (not float16), as are xlogy(2.0, float16), xlogy(f16, True) and
    # Tensor.xlogy / mint.xlogy; float64 stays float64; a float32 0-d Tensor promotes float16 the same way
    h = _t([0.5, 1.5], np.float16)
    for fn in (lambda a: ops.xlogy(a, 2.0), lambda a: ops.xlogy(a, 2), lambda a: a.xlogy(2.0),
               lambda a: kiln.mint.xlogy(a, 2.0)):
        out = _run(fn, use_jit, h)
        assert out.dtype == kiln.float32
        np.testing.assert_allclose(out.asnumpy(), [0.34657359, 1.03972077], rtol=1e-6)
    out = _run(lambda a: ops.xlogy(2.0, a), use_jit, h)
    assert out.dtype == kiln.float32
    np.testing.assert_allclose(out.asnumpy(), [-1.38629436, 0.81093022], rtol=1e-6)
    assert _run(lambda a: ops.xlogy(a, True), use_jit, h).dtype == kiln.float32
    assert _run(lambda a: ops.xlogy(a, 2.0), use_jit, _t([0.5], np.float64)).dtype == kiln.float64
    assert ops.xlogy(_t([1, 2], np.int64), 2).dtype == kiln.float32
    assert ops.xlogy(h, h).dtype == kiln.float16  # two float16 Tensors stay float16 (MindSpore 2.10)


@MODES
def test_round_primitive_takes_decimals(use_jit):
    # MindSpore 2.10: ops.Round()(x, 0) and ops.Round()(x, decimals=0) are [2, 2, -0] for [1.5, 2.5, -0.5] (decimals
    # is a call input of its Round primitive); Kiln's Round took x only (TypeError)
    x = _t([1.5, 2.5, -0.5])
    for fn in (lambda a: ops.Round()(a, 0), lambda a: ops.Round()(a, decimals=0), lambda a: ops.Round()(a)):
        got = _run(fn, use_jit, x).asnumpy()
        np.testing.assert_array_equal(got, [2.0, 2.0, -0.0])
        assert np.signbit(got[2])
    np.testing.assert_allclose(_run(lambda a: ops.Round()(a, 1), use_jit, _t([1.25, 2.75])).asnumpy(), [1.2, 2.8],
                               rtol=1e-6)
    with pytest.raises(TypeError, match="round"):
        ops.Round()(x, 0.5)


@MODES
def test_gradients_mindspore_values(use_jit):
    f64 = lambda *v: _t(v, np.float64)
    # fmax: to input where input >= other or other is NaN, else to other: ties (2 vs 2, 0.0 vs -0.0 either way) go
    # to input (MindSpore 2.10: grad of fmax([1, 2, 3, nan, nan, 1, 0, -0], [2, 2, 1, 1, nan, nan, -0, 0]).sum() is
    # [0, 1, 1, 0, 1, 1, 1, 1] and [1, 0, 0, 1, 0, 0, 0, 0], float32 and float64)
    ga, gb = _grads(ops.fmax, use_jit, f64(1.0, 2.0, 3.0, NAN, NAN, 1.0, 0.0, -0.0),
                    f64(2.0, 2.0, 1.0, 1.0, NAN, NAN, -0.0, 0.0))
    np.testing.assert_array_equal(ga, [0, 1, 1, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(gb, [1, 0, 0, 1, 0, 0, 0, 0])
    # broadcast other: the tie's gradient stays with input, other gets the rest summed (MindSpore 2.10: [1, 1, 0], [1])
    ga, gb = _grads(ops.fmax, use_jit, f64(3.0, 2.0, 1.0), f64(2.0))
    np.testing.assert_array_equal(ga, [1, 1, 0])
    np.testing.assert_array_equal(gb, [1])
    # fmin: the mirror rule, ties to input as fmax (MindSpore 2.10's CPU Fmin kernel does not run; PyTorch's fmin
    # backward gives a tie to input too)
    ga, gb = _grads(ops.fmin, use_jit, f64(1.0, 2.0, 3.0, NAN, NAN), f64(2.0, 2.0, 1.0, 1.0, NAN))
    np.testing.assert_array_equal(ga, [1, 1, 0, 0, 1])
    np.testing.assert_array_equal(gb, [0, 0, 1, 1, 0])
    # copysign: sign(x)·(±1), 0 at x = 0; none for other
    ga, gb = _grads(ops.copysign, use_jit, f64(1.0, -2.0, 0.0, 3.0), f64(-1.0, -1.0, -1.0, 2.0))
    np.testing.assert_array_equal(ga, [-1, 1, 0, 1])
    np.testing.assert_array_equal(gb, [0, 0, 0, 0])
    # sinc: 0 at x = 0
    (g,) = _grads(ops.sinc, use_jit, f64(0.0, 0.5, 1.0, -1.5))
    np.testing.assert_allclose(g, [0.0, -1.2732395447351625, -1.0, -0.14147106052612907], rtol=1e-12)
    # xlogy at x = 0 with 0 < y: d/dx = log(y) (MindSpore 2.10), d/dy = 0
    ga, gb = _grads(ops.xlogy, use_jit, f64(0.0, 0.0, 1.0), f64(2.0, 0.5, 3.0))
    np.testing.assert_allclose(ga, [math.log(2.0), math.log(0.5), math.log(3.0)], rtol=1e-12)
    np.testing.assert_allclose(gb, [0.0, 0.0, 1.0 / 3.0], rtol=1e-12)
    # round, trunc: zero gradient (as floor)
    for fn in (ops.round, ops.trunc):
        (g,) = _grads(fn, use_jit, f64(0.3, 1.7, -2.5))
        np.testing.assert_array_equal(g, [0, 0, 0])


@pytest.mark.parametrize("name,fn,args", [
    ("Sinc", ops.sinc, (_t([0.5, 1.0]),)), ("Round", ops.round, (_t([0.5, 1.5]),)), ("Trunc", ops.trunc, (_t([-0.5]),)),
    ("Copysign", ops.copysign, (_t([1.0]), _t([-1.0]))), ("Xlogy", ops.xlogy, (_t([1.0]), _t([2.0]))),
    ("Fmax", ops.fmax, (_t([1.0]), _t([2.0]))), ("Fmin", ops.fmin, (_t([1.0]), _t([2.0]))),
    ("TruncateDiv", ops.truncate_div, (_t([7.0]), _t([2.0]))), ("Heaviside", ops.heaviside, (_t([0.0]), _t([0.5]))),
])
def test_one_node_in_graph_mode(name, fn, args):
    assert _traced_ops(fn, *args) == [name]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_huge_decimals_is_numpys_nan(dtype):
    # |decimals| beyond float64's exponent: 10**decimals overflows; NumPy's np.round gives NaN everywhere (inf·0,
    # inf/inf), Kiln raised a bare OverflowError without the op's name
    x = np.array([1.5, -2.25, 0.0, np.inf, 123.456], dtype)
    for d in (400, -400, 309, 2, -1):
        with np.errstate(all="ignore"):
            want = np.round(x, d)
        np.testing.assert_array_equal(ops.round(Tensor(x), decimals=d).asnumpy(), want)
