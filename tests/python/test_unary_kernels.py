"""Inverse trig, hyperbolic, expm1, log2, log10 and erfc as single C++ elementwise ops (issue 23, "kernels, not
chains"; src/ops/elementwise_unary.cpp): one traced graph node each under kiln.jit, float32 max ulp error against
float64 references on dense grids (libm in float: <= 4 ulps asserted; the measured maxima are in the comment of
_CASES), float64 equal to NumPy's/SciPy's libm values, float16 computed in float32 then rounded, special values
(NaN, ±inf, domain edges) as NumPy, and gradients of the C++ bprops against float64 finite differences."""
import math
import re

import numpy as np
import pytest
import scipy.special

import kiln
from kiln import Tensor, ops


def _ulps(got, ref):
    """|got − ref| in float32 ulps of the reference (the ulp of the float32 nearest to ref)."""
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


def _grid(lo, hi, n=400_001):
    return np.linspace(lo, hi, n, dtype=np.float32)


# name, graph node, float64 reference, dense float32 grid (within the domain, where the result is finite).
# Measured max ulps (float32 against the float64 reference; glibc libm, AMD EPYC x86-64-v3, 2026-12-07): acos 0.89,
# asin 0.84, atan 0.81, sinh 1.52, cosh 0.99, tan 0.79, asinh 1.22, acosh 1.33, atanh 1.63, expm1 0.76, log2 0.65,
# log10 0.76, erfc 2.58 (at x = 4.09, erfc = 7.3e-9: glibc erfcf). The test asserts <= 4.
_CASES = [
    ("acos", "ACos", np.arccos, _grid(-1.0, 1.0)),
    ("asin", "Asin", np.arcsin, _grid(-1.0, 1.0)),
    ("atan", "Atan", np.arctan, np.concatenate([_grid(-50.0, 50.0), _grid(-1e30, 1e30, 10_001)])),
    ("sinh", "Sinh", np.sinh, _grid(-88.0, 88.0)),
    ("cosh", "Cosh", np.cosh, _grid(-88.0, 88.0)),
    ("tan", "Tan", np.tan, _grid(-1.5, 1.5)),
    ("asinh", "Asinh", np.arcsinh, np.concatenate([_grid(-100.0, 100.0), _grid(-1e30, 1e30, 10_001)])),
    ("acosh", "Acosh", np.arccosh, np.concatenate([_grid(1.0, 100.0), _grid(1.0, 1e30, 10_001)])),
    ("atanh", "Atanh", np.arctanh, _grid(-0.99999, 0.99999)),
    ("expm1", "Expm1", np.expm1, np.concatenate([_grid(-20.0, 88.0), _grid(-1e-3, 1e-3)])),
    ("log2", "Log2", np.log2, np.concatenate([_grid(1e-6, 1e3), (np.float32(2.0) ** np.arange(-126, 128)).astype(np.float32)])),
    ("log10", "Log10", np.log10, _grid(1e-6, 1e6)),
    ("erfc", "Erfc", scipy.special.erfc, _grid(-5.0, 9.0)),
]
_IDS = [c[0] for c in _CASES]


def _f64(ref, x):
    with np.errstate(all="ignore"):
        return ref(x.astype(np.float64))


@pytest.mark.parametrize("name, node, ref, grid", _CASES, ids=_IDS)
def test_one_graph_node(name, node, ref, grid):
    fn = kiln.jit(lambda a: getattr(ops, name)(a))
    x = np.float32([[0.25, 0.5, 0.75], [1.25, 1.5, 2.0]])
    if name in ("acos", "asin", "atanh"):
        x = x / 4
    if name == "acosh":
        x = x + 1
    out = fn(Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), _f64(ref, x), rtol=1e-6)
    names = re.findall(r"= (\w+)\(", fn.graphs[0].graph_before.to_text())
    assert names == [node], names


@pytest.mark.parametrize("name, node, ref, grid", _CASES, ids=_IDS)
def test_float32_ulps_dense_grid(name, node, ref, grid):
    got = getattr(ops, name)(Tensor(grid)).asnumpy()
    assert got.dtype == np.float32
    want = _f64(ref, grid)
    fin = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    assert np.isfinite(got[fin]).all()
    assert _ulps(got[fin], want[fin]).max() <= 4.0, name


def _libm(name, v):
    """Python's math module calls the C library's function of the same name (NaN where it raises a domain error)."""
    try:
        return getattr(math, name)(v)
    except ValueError:
        return math.nan


@pytest.mark.parametrize("name, node, ref, grid", _CASES, ids=_IDS)
def test_float64_is_libm(name, node, ref, grid):
    x = grid[:: max(1, grid.size // 20_000)].astype(np.float64) * (1 + 1e-9)
    got = getattr(ops, name)(Tensor(x)).asnumpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.array([_libm(name, v) for v in x]))


@pytest.mark.parametrize("name, node, ref, grid", _CASES, ids=_IDS)
def test_float16_rounds_float32(name, node, ref, grid):
    with np.errstate(over="ignore"):  # the grids' float32-only magnitudes become ±inf
        x = grid[:: max(1, grid.size // 2000)].astype(np.float16)
    got = getattr(ops, name)(Tensor(x)).asnumpy()
    assert got.dtype == np.float16
    with np.errstate(all="ignore"):
        want = getattr(ops, name)(Tensor(x.astype(np.float32))).asnumpy().astype(np.float16)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, node, ref, grid", _CASES, ids=_IDS)
def test_special_values_as_numpy(name, node, ref, grid):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 1e-30, 1e30], np.float32)
    got = getattr(ops, name)(Tensor(x)).asnumpy()
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)  # the float64 value rounded (overflow: ±inf)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=5e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got[ok & (want == 0)]), np.signbit(want[ok & (want == 0)]))


_DERIV = {
    "acos": lambda x: -1 / np.sqrt(1 - x * x), "asin": lambda x: 1 / np.sqrt(1 - x * x),
    "atan": lambda x: 1 / (1 + x * x), "sinh": np.cosh, "cosh": np.sinh, "tan": lambda x: 1 / np.cos(x) ** 2,
    "asinh": lambda x: 1 / np.sqrt(x * x + 1), "acosh": lambda x: 1 / np.sqrt(x * x - 1),
    "atanh": lambda x: 1 / (1 - x * x), "expm1": np.exp, "log2": lambda x: 1 / (x * np.log(2)),
    "log10": lambda x: 1 / (x * np.log(10)), "erfc": lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x),
}


@pytest.mark.parametrize("name", _IDS)
def test_gradient_float64(name):
    x = np.linspace(-0.9, 0.9, 13)
    if name in ("acosh",):
        x = x + 2.0
    if name in ("log2", "log10"):
        x = x + 1.0
    g = kiln.grad(lambda t: getattr(ops, name)(t).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, _DERIV[name](x), rtol=1e-12)


@pytest.mark.parametrize("name", ["sinh", "tan", "expm1", "asinh", "acosh"])
def test_integer_input_gives_float32(name):
    x = np.array([1, 2, 3], np.int32)
    out = getattr(ops, name)(Tensor(x))
    assert out.dtype == kiln.float32
    np.testing.assert_allclose(out.asnumpy(), dict(_CASES_BY_NAME)[name](x.astype(np.float64)), rtol=1e-6)


_CASES_BY_NAME = [(c[0], c[2]) for c in _CASES]
