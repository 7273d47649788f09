"""Activation functions moved from Python compositions into one C++ kernel each (issue 23): HSwish (hardswish),
HSigmoid (hardsigmoid), SeLU (selu), Mish (mish), Softplus (softplus at beta 1 / threshold 20) and LogSigmoid
(logsigmoid). The registry rows (tests/python/op_registry) check values against NumPy, float64 finite-difference
gradients, PyNative against Graph mode and the one node; here: MindSpore 2.10's values at the edges (large |x|, 0,
±inf, NaN; float16, float32, float64) and its gradients at the kinks, in PyNative and Graph mode. Every expected value
below is MindSpore 2.10's (CPU), obtained with the oracle (/work/shared/tools/ms_oracle.py), except where a comment
says Kiln keeps its own (stable) value and what MindSpore gives there."""
import math
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, nn, ops

INF, NAN = math.inf, math.nan
MODES = pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
X = [-1000.0, -3.0, -2.5, -1.0, -0.0, 0.0, 0.5, 3.0, 3.5, 20.0, 20.5, 1000.0, INF, -INF, NAN]
GX = [-1000.0, -3.0, -2.9, -1.0, 0.0, 1.0, 2.9, 3.0, 20.0, 1000.0]  # gradient points (MindSpore's ms.grad)


def _run(fn, use_jit, *args):
    return (kiln.jit(fn) if use_jit else fn)(*args)


def _t(values, dtype=np.float32):
    return Tensor(np.array(values, dtype))


def _grad(fn, use_jit, x):
    return _run(kiln.grad(lambda a: ops.sum(fn(a))), use_jit, x).asnumpy()


def _traced_ops(fn, *args):
    jf = kiln.jit(fn)
    jf(*args)
    return re.findall(r"= (\w+)\(", jf.graphs[0].graph_before.to_text())


# MindSpore 2.10's float32 values at X; `None` marks where Kiln keeps its own value (see KEPT below).
MS_F32 = {
    "hardswish": [0.0, 0.0, -0.20833333, -0.33333334, -0.0, 0.0, 0.29166666, 3.0, 3.5, 20.0, 20.5, 1000.0, INF, 0.0,
                  NAN],
    "hardsigmoid": [0.0, 0.0, 0.083333336, 0.33333334, 0.5, 0.5, 0.5833333, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, NAN],
    "selu": [-1.7580993, -1.6705687, -1.6137857, -1.1113307, -0.0, 0.0, 0.5253505, 3.1521029, 3.6774535, 21.014021,
             21.539371, 1050.701, INF, -1.7580993, NAN],
    "mish": [-0.0, -0.14564738, -0.19681597, -0.30340102, -0.0, 0.0, 0.3752452, 2.986535, 3.493991, 20.0, 20.5,
             None, None, NAN, NAN],
    "softplus": [0.0, 0.04858733, 0.078889638, 0.31326121, 0.693147, 0.693147, 0.97407687, 3.0485871, 3.5297503, 20.0,
                 20.5, 1000.0, INF, 0.0, None],
}
# Where Kiln keeps its value: mish(1000) and mish(inf) are 1000 and inf (MindSpore 2.10's CPU Mish overflows exp to
# NaN there); softplus(NaN) is NaN (MindSpore's gives +inf); logsigmoid(−1000) is −1000 (MindSpore's Sigmoid + Log
# gives −inf; its gradient there NaN, Kiln's 1).
KEPT = {"mish": {11: 1000.0, 12: INF}, "softplus": {14: NAN}}
FUNCS = {"hardswish": ops.hardswish, "hardsigmoid": ops.hardsigmoid, "selu": ops.selu, "mish": ops.mish,
         "softplus": ops.softplus, "logsigmoid": ops.logsigmoid}


@MODES
@pytest.mark.parametrize("name", sorted(MS_F32))
def test_float32_mindspore_values(name, use_jit):
    want = [KEPT.get(name, {}).get(i, v) if v is None else v for i, v in enumerate(MS_F32[name])]
    got = _run(FUNCS[name], use_jit, _t(X)).asnumpy()
    assert got.dtype == np.float32
    # MindSpore 2.10's float32 Mish and Softplus are up to 1.5e-6 off the float64 value (mish(−1) −0.30340102 for
    # −0.3034014614, softplus(−1) 0.31326121 for 0.3132616875); Kiln's are float32 roundings of it (the registry
    # rows check them against the float64 formula)
    want = np.array(want, np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    signed = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))  # −0.0 where MindSpore gives it


@MODES
def test_logsigmoid_mindspore_float64_values(use_jit):
    # MindSpore 2.10's float64 values (its float32 ones lose digits to log(sigmoid)); −1000: Kiln −1000, MindSpore −inf
    x = [-1000.0, -30.0, -20.5, -3.0, -1.0, 0.0, 0.5, 3.0, 20.0, 30.0, 1000.0, INF, -INF, NAN]
    want = [-1000.0, -30.000000000000092, -20.500000001250154, -3.048587351573742, -1.3132616875182228,
            -0.6931471805599453, -0.47407698418010663, -0.04858735157374191, -2.0611536942919273e-09,
            -9.348077867344255e-14, 0.0, 0.0, -INF, NAN]
    got = _run(ops.logsigmoid, use_jit, _t(x, np.float64)).asnumpy()
    # MindSpore's float64 tails are log(σ(x)) rounded: 3.6e-8 off at x = 20, 1e-3 at 30 (exact: −9.3576e-14); Kiln's
    # log1p form is NumPy's logaddexp to 1e-14 there
    np.testing.assert_allclose(got[:8], want[:8], rtol=1e-14, atol=0)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=0)
    np.testing.assert_allclose(got, -np.logaddexp(0.0, -np.array(x)), rtol=1e-14, atol=0)
    np.testing.assert_allclose(_run(ops.logsigmoid, use_jit, _t(x)).asnumpy()[:9], np.array(want[:9], np.float32),
                               rtol=2e-7, atol=0)


def test_float16_and_float64_mindspore_values():
    x = [-3.0, -2.5, -1.0, 0.0, 0.5, 3.0]
    ms_f16 = {"hardswish": [0.0, -0.2084, -0.3333, 0.0, 0.2917, 3.0], "hardsigmoid": [0.0, 0.0833, 0.3333, 0.5, 0.5835, 1.0],
              "selu": [-1.670, -1.613, -1.111, 0.0, 0.5254, 3.152], "mish": [-0.1456, -0.1968, -0.3035, 0.0, 0.3752, 2.986],
              "softplus": [0.04858, 0.07892, 0.3132, 0.6934, 0.9741, 3.049],
              "logsigmoid": [-3.049, -2.578, -1.313, -0.6934, -0.4739, -0.04852]}
    for name, want in ms_f16.items():
        got = FUNCS[name](_t(x, np.float16)).asnumpy()
        assert got.dtype == np.float16, name
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-3, atol=1e-4, err_msg=name)
    # float64: MindSpore 2.10's float64 hardswish/hardsigmoid (exact); its selu rounds the constants (1e-8), its mish and
    # softplus compute in float32: Kiln's float64 kernels are checked against the float64 formulas instead
    xd = np.array(x)
    np.testing.assert_array_equal(ops.hardswish(_t(x, np.float64)).asnumpy(),
                                  [0.0, -0.20833333333333334, -0.3333333333333333, 0.0, 0.2916666666666667, 3.0])
    np.testing.assert_array_equal(ops.hardsigmoid(_t(x, np.float64)).asnumpy(),
                                  [0.0, 0.08333333333333333, 0.3333333333333333, 0.5, 0.5833333333333334, 1.0])
    np.testing.assert_allclose(ops.selu(_t(x, np.float64)).asnumpy(),
                               [-1.6705687566394984, -1.6137857193456251, -1.1113307123827565, 0.0, 0.52535049,
                                3.15210294], rtol=5e-8)  # MindSpore's constants are rounded (2.4e-8)
    s, a = 1.0507009873554804934, 1.6732632423543772848
    np.testing.assert_allclose(ops.selu(_t(x, np.float64)).asnumpy(), np.where(xd >= 0, s * xd, s * a * np.expm1(xd)),
                               rtol=1e-15)
    np.testing.assert_allclose(ops.mish(_t(x, np.float64)).asnumpy(), xd * np.tanh(np.logaddexp(0, xd)), rtol=1e-15)
    np.testing.assert_allclose(ops.softplus(_t(x, np.float64)).asnumpy(), np.logaddexp(0, xd), rtol=1e-15)


def test_integer_inputs_as_mindspore():
    xi = Tensor(np.array([-4, -1, 0, 2, 5], np.int32))
    # MindSpore 2.10 raises TypeError for mish and softplus of an int32 Tensor, as Kiln; its CPU HSwish and SeLU
    # truncate (int32 [0 0 0 1 5], [0 0 0 2 5]), which Kiln refuses with TypeError (kept, see the docstrings)
    for f in (ops.mish, ops.softplus, ops.hardswish, ops.selu):
        with pytest.raises(TypeError, match=r"must be a float"):
            f(xi)
    # hardsigmoid and logsigmoid of integers give float32 in Kiln (MindSpore: HSigmoid int32 [0 0 0 0 1]; logsigmoid
    # raises in its Sigmoid kernel)
    np.testing.assert_allclose(ops.hardsigmoid(xi).asnumpy(), np.clip(np.array([-4, -1, 0, 2, 5]) + 3, 0, 6) / 6,
                               rtol=1e-7)
    assert ops.logsigmoid(xi).dtype == kiln.float32


# MindSpore 2.10's float32 gradients at GX (kinks included). SeLU: Kiln's is the derivative scale·α·eˣ below 0,
# MindSpore's CPU SeLUGrad differs there (−0.117 at −1), so only x ≥ 0 is MindSpore's; logsigmoid at −1000: Kiln 1
# (MindSpore NaN).
MS_GRAD = {
    "hardswish": [0.0, -0.5, -0.4666667, 0.16666667, 0.5, 0.8333333, 1.4666667, 1.5, 1.0, 1.0],
    "hardsigmoid": [0.0, 0.0, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 0.0, 0.0, 0.0],
    "mish": [0.0, -0.09339305, -0.09730056, 0.059216082, 0.6, 1.0490364, 1.0243156, 1.0211017, 1.0, 1.0],
    "softplus": [0.0, 0.047425848, 0.052153524, 0.26894155, 0.5, 0.7310589, 0.9478465, 0.95257413, 1.0, 1.0],
    "logsigmoid": [1.0, 0.95257413, 0.9478465, 0.7310585, 0.5, 0.2689411, 0.052153528, 0.047425866, 2.0611537e-09,
                   0.0],
}


@MODES
@pytest.mark.parametrize("name", sorted(MS_GRAD))
def test_gradients_mindspore_values(name, use_jit):
    got = _grad(FUNCS[name], use_jit, _t(GX))
    # MindSpore's Mish gradient cancels in float32 (1e-5 off at x = −1: 0.0592161 for 0.0592168)
    np.testing.assert_allclose(got, np.array(MS_GRAD[name], np.float32), rtol=2e-5 if name == "mish" else 3e-6,
                               atol=1e-7)


@MODES
def test_selu_gradient(use_jit):
    got = _grad(ops.selu, use_jit, _t(GX, np.float64))
    s, a = 1.0507009873554804934, 1.6732632423543772848
    x = np.array(GX)
    np.testing.assert_allclose(got, np.where(x >= 0, s, s * a * np.exp(x)), rtol=1e-15)
    assert got[4] == s  # MindSpore 2.10: 1.0507009873554805 at 0 (and at every x ≥ 0)


@MODES
def test_softplus_beta_threshold_mindspore_values(use_jit):
    x = _t([-3.0, 0.0, 1.0, 2.5, 3.0, 6.0, 20.0])
    cases = {(2, 5): [1.237826e-03, 0.3465735, 1.063464, 2.5033576, 3.0, 6.0, 20.0],
             (0.5, 3): [0.40282643, 1.386294, 1.9481537, 3.0038579, 3.402827, 6.0971756, 20.0],
             (1, 5): [0.04858733, 0.693147, 1.313261, 2.5788891, 3.0485878, 6.0, 20.0]}
    for (beta, thr), want in cases.items():
        got = _run(lambda a: ops.softplus(a, beta, thr), use_jit, x).asnumpy()
        # MindSpore's softplus(−3, beta 2) is 0.0012378260, 1.3e-5 off log1p(e⁻⁶)/2 = 0.0012378410 (Kiln's)
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=2e-5, err_msg=f"beta={beta}, threshold={thr}")
        b = np.float64(beta)
        x64 = np.array([-3.0, 0.0, 1.0, 2.5, 3.0, 6.0, 20.0])
        np.testing.assert_allclose(got, np.where(b * x64 > thr, x64, np.logaddexp(0, b * x64) / b), rtol=1e-6)


@MODES
def test_softplus_beta_zero_raises_as_mindspore(use_jit):
    # MindSpore 2.10: ops.softplus(x, 0) raises ValueError "For 'softplus', the value of 'beta' cannot be 0." (PyNative
    # and Graph mode; mint.nn.functional.softplus(x, 0.0) too, "'beta' must not be 0"); Kiln gave inf everywhere
    x = _t([-3.0, 0.0, 2.0])
    for beta in (0, 0.0, -0.0):
        with pytest.raises(ValueError, match=r"For 'softplus'.*'beta'.*0"):
            _run(lambda a: ops.softplus(a, beta), use_jit, x)
        with pytest.raises(ValueError, match=r"For 'softplus'.*'beta'.*0"):
            _run(lambda a: kiln.mint.nn.functional.softplus(a, beta), use_jit, x)
    # a tiny or negative beta is a value, as MindSpore: softplus(x, −1) = −softplus(−x) (−0.048587, −0.693147,
    # −2.126928 in MindSpore 2.10)
    np.testing.assert_allclose(ops.softplus(x, -1.0).asnumpy(), [-3.0485873, -0.6931472, -0.126928], rtol=1e-6)


@MODES
def test_softplus_one_element_tensor_beta_threshold(use_jit):
    # MindSpore 2.10 takes a one-element Tensor for beta / threshold (ops.softplus and mint's): softplus(x,
    # Tensor(2.0)) is [0, 1.237826e-03, 2.429366e-02, 0.3465735, 0.8102089, 3.001239, 12] (Kiln's stable value at
    # −25: 9.64e-23), Tensor(2), Tensor([2.0]) the same; threshold Tensor(3.0) gives x where x > 3; a 2-element
    # Tensor raises ValueError ("only one element"), Tensor(0.0) the beta-is-0 ValueError
    x = _t([-25.0, -3.0, -1.5, 0.0, 0.7, 3.0, 12.0])
    want = [9.643749e-23, 1.237826e-03, 2.429366e-02, 0.3465735, 0.8102089, 3.001239, 12.0]
    for beta in (Tensor(2.0), Tensor(np.array(2, np.int32)), Tensor(np.array([2.0], np.float32)),
                 Tensor(np.array(2.0))):
        got = _run(lambda a: ops.softplus(a, beta), use_jit, x).asnumpy()
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=2e-5)
        got = _run(lambda a: kiln.mint.nn.functional.softplus(a, beta), use_jit, x).asnumpy()
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=2e-5)
    got = _run(lambda a: ops.softplus(a, 1, Tensor(3.0)), use_jit, x).asnumpy()
    np.testing.assert_allclose(got, [1.388794e-11, 0.048587, 0.201413, 0.693147, 1.103186, 3.048587, 12.0], rtol=2e-5)
    with pytest.raises(ValueError, match=r"For 'softplus'.*'beta'.*one element"):
        ops.softplus(x, Tensor(np.array([2.0, 1.0], np.float32)))
    with pytest.raises(ValueError, match=r"For 'softplus'.*'beta'.*0"):
        ops.softplus(x, Tensor(0.0))
    with pytest.raises(TypeError, match=r"For 'softplus'.*'beta'"):
        ops.softplus(x, Tensor(True))


def test_non_tensor_input_raises_naming_the_op():
    # MindSpore 2.10 raises TypeError for a list, a Python float, a NumPy array or None as the input of ops.log1p,
    # ops.logsigmoid, ops.relu6 and ops.hardsigmoid ("Failed calling HSigmoid with HSigmoid()(input=float)"); Kiln
    # computed them (hardsigmoid([1.0, 2.0]) was a Tensor), as no other activation of these modules does
    for name in ("log1p", "logsigmoid", "relu6", "hardsigmoid"):
        for v in ([1.0, 2.0], 1.5, np.array([1.0], np.float32), None):
            with pytest.raises(TypeError, match=rf"For '{name}', the 'input' must be a Tensor"):
                getattr(ops, name)(v)


CELLS = {"hardswish": nn.HSwish, "hardsigmoid": nn.HSigmoid, "selu": nn.SeLU, "mish": nn.Mish,
         "softplus": nn.Softplus, "logsigmoid": nn.LogSigmoid}
OPNAME = {"hardswish": "HSwish", "hardsigmoid": "HSigmoid", "selu": "SeLU", "mish": "Mish", "softplus": "Softplus",
          "logsigmoid": "LogSigmoid"}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_one_node_and_cells_call_the_same_kernel(name):
    x = _t([-4.0, -3.0, -0.5, 0.0, 2.0, 3.0, 25.0])
    cell = CELLS[name]()
    assert _traced_ops(FUNCS[name], x) == [OPNAME[name]]
    assert _traced_ops(lambda a: cell(a), x) == [OPNAME[name]]
    np.testing.assert_array_equal(cell(x).asnumpy(), FUNCS[name](x).asnumpy())


def test_nn_softplus_takes_beta_and_threshold():
    # Kiln's nn.Softplus (MindSpore 2.10 has none) takes PyTorch's arguments; values against NumPy's formula
    x = np.linspace(-4, 4, 17).astype(np.float64)
    beta, threshold = 2.0, 3.0
    want = np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)
    got = nn.Softplus(beta, threshold)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nn.Softplus()(Tensor(x)).asnumpy(), np.logaddexp(0, x), rtol=1e-12)
    with pytest.raises(ValueError, match="beta"):
        nn.Softplus(0.0)
    with pytest.raises(TypeError, match="threshold"):
        nn.Softplus(1.0, "20")
