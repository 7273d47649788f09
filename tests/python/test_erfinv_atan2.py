"""ops.erfinv and ops.atan2 as single C++ ops (issue 23): float32 ulp error over dense grids against float64
references (SciPy's erfinv, NumPy's arctan2), the special values (±1, outside [−1, 1]; the 16 (±0, ±inf) pairs of
atan2), float64 accuracy, and one traced graph node each under kiln.jit."""
import re

import numpy as np
import pytest
import scipy.special

import kiln
from kiln import Tensor, ops


def _ulps(got, ref):
    """|got − ref| in float32 ulps of the reference (ulp of the float32 nearest to ref)."""
    ref32 = np.abs(ref).astype(np.float32)
    spacing = np.spacing(ref32).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


def _erfinv_grid():
    x = np.linspace(-1.0, 1.0, 2_000_001, dtype=np.float32)[1:-1]
    one = np.float32(1.0)
    near = one - np.arange(1, 8_389_000, 97, dtype=np.float64).astype(np.float32) * np.float32(2.0 ** -24)
    near = near[(near > 0.9999) & (near < 1.0)]
    tiny = np.float32(10.0) ** np.linspace(-38, -1, 2001).astype(np.float32)
    return np.concatenate([x, near, -near, tiny, -tiny, np.float32([0.5, -0.5, 0.9999, -0.9999])])


def test_erfinv_float32_ulps_dense_grid():
    x = _erfinv_grid()
    got = ops.erfinv(Tensor(x)).asnumpy()
    assert got.dtype == np.float32
    err = _ulps(got, scipy.special.erfinv(x.astype(np.float64)))
    assert err.max() <= 4.0, (err.max(), x[err.argmax()])


def test_erfinv_float32_strided_and_threaded_agree():
    x = _erfinv_grid()[:300_001]
    full = ops.erfinv(Tensor(x)).asnumpy()
    strided = ops.erfinv(Tensor(x)[::3]).asnumpy()
    np.testing.assert_array_equal(strided, full[::3])


def test_erfinv_special_values():
    for dt in (np.float32, np.float64, np.float16):
        x = np.array([1.0, -1.0, 0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan], dt)
        got = ops.erfinv(Tensor(x)).asnumpy()
        assert got.dtype == dt
        np.testing.assert_array_equal(got[:2], [np.inf, -np.inf])
        assert got[2] == 0 and not np.signbit(got[2]) and got[3] == 0 and np.signbit(got[3])
        assert np.isnan(got[4:]).all()


def test_erfinv_float64_accuracy():
    x = np.concatenate([np.linspace(-1, 1, 200_001)[1:-1], 1 - np.logspace(-16, -1, 2001),
                        -(1 - np.logspace(-16, -1, 2001)), np.logspace(-300, -1, 500)])
    got = ops.erfinv(Tensor(x)).asnumpy()
    ref = scipy.special.erfinv(x)
    rel = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
    assert rel.max() < 1e-14, (rel.max(), x[rel.argmax()])


def _atan2_grid():
    rng = np.random.default_rng(23)
    v = np.concatenate([rng.standard_normal(400_000), rng.uniform(-1e-3, 1e-3, 100_000),
                        rng.uniform(-1e30, 1e30, 100_000)]).astype(np.float32)
    return v[: v.size // 2], v[v.size // 2:]


def test_atan2_float32_ulps_dense_grid():
    y, x = _atan2_grid()
    t = np.linspace(-np.pi, np.pi, 200_001)
    y = np.concatenate([y, np.sin(t).astype(np.float32)])
    x = np.concatenate([x, np.cos(t).astype(np.float32)])
    got = ops.atan2(Tensor(y), Tensor(x)).asnumpy()
    assert got.dtype == np.float32
    err = _ulps(got, np.arctan2(y.astype(np.float64), x.astype(np.float64)))
    assert err.max() <= 2.0, err.max()


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_atan2_signed_zeros_and_infinities(dt):
    v = np.array([0.0, -0.0, np.inf, -np.inf], dt)
    y, x = np.meshgrid(v, v, indexing="ij")
    y, x = y.ravel(), x.ravel()
    got = ops.atan2(Tensor(y), Tensor(x)).asnumpy()
    ref = np.arctan2(y, x)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))
    nan = ops.atan2(Tensor(np.array([np.nan, 1.0], dt)), Tensor(np.array([1.0, np.nan], dt))).asnumpy()
    assert np.isnan(nan).all()


def test_atan2_float64_accuracy():
    rng = np.random.default_rng(5)
    y, x = rng.standard_normal((2, 100_000))
    got = ops.atan2(Tensor(y), Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=4e-16, atol=0)


def test_atan2_grad_at_origin_is_zero():
    y, x = Tensor(np.zeros(3, np.float32)), Tensor(np.array([0.0, 1.0, -2.0], np.float32))
    gy, gx = kiln.grad(lambda a, b: ops.atan2(a, b).sum(), grad_position=(0, 1))(y, x)
    np.testing.assert_allclose(gy.asnumpy(), [0.0, 1.0, -0.5])
    np.testing.assert_allclose(gx.asnumpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("name, args", [
    ("erfinv", (np.linspace(-0.9, 0.9, 64, dtype=np.float32).reshape(8, 8),)),
    ("atan2", (np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8),
               np.linspace(2, -2, 64, dtype=np.float32).reshape(8, 8))),
])
def test_one_graph_node(name, args):
    fn = kiln.jit(lambda *a: getattr(ops, name)(*a))
    fn(*(Tensor(a) for a in args))
    text = fn.graphs[0].graph_before.to_text()
    names = re.findall(r"= (\w+)\(", text)
    assert names == [{"erfinv": "Erfinv", "atan2": "Atan2"}[name]], text
