"""Complex inputs to functions written in Python over real ops: none may silently drop the imaginary part or treat a
complex tensor as an integer one (a fresh tester's findings). Each function either computes the complex result
(values from NumPy, or MindSpore 2.10 read with ../shared/tools/ms_oracle.py where marked) or raises the TypeError
naming the op."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, mint, ops
import kiln.numpy as mnp

Z = np.array([[1.4 + 2.6j, -3.7 + 0.5j, 0j], [2 - 1j, 0.5 + 0.5j, -1 - 1j]], np.complex64)
W = np.array([[1 + 1j, 2 + 0j, 1j], [1, 2, 3]], np.complex64)
SPECIAL = np.array([complex(np.nan, 0), complex(0, np.nan), complex(np.inf, 1), complex(1, -np.inf), 1 + 1j,
                    complex(-np.inf, np.nan)], np.complex64)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("where", ["ops", "tensor", "mint", "mnp"])
def test_nan_inf_predicates_of_complex_follow_numpy(name, where):
    # NumPy: a complex element is NaN / inf when either part is; finite when both are (MindSpore 2.10's kernels
    # refuse complex; before the fix Kiln answered as for an integer tensor: never NaN, always finite)
    for dt in (np.complex64, np.complex128):
        x = Tensor(SPECIAL.astype(dt))
        fn = {"ops": getattr(ops, name), "mint": getattr(mint, name, None), "mnp": getattr(mnp, name),
              "tensor": lambda t: getattr(t, name)()}[where]
        if fn is None:
            continue
        got = fn(x)
        assert got.dtype == kiln.bool_
        np.testing.assert_array_equal(got.asnumpy(), getattr(np, name)(SPECIAL.astype(dt)))
        np.testing.assert_array_equal(kiln.jit(fn)(x).asnumpy(), got.asnumpy())


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_signed_inf_predicates_refuse_complex(name):
    with pytest.raises(TypeError, match=f"For '{name}', the dtype Complex64 is not supported"):
        getattr(ops, name)(Tensor(SPECIAL))


@pytest.mark.parametrize("call, op", [
    (lambda z, w: ops.round(z), "round"), (lambda z, w: z.round(), "round"), (lambda z, w: ops.trunc(z), "trunc"),
    (lambda z, w: ops.frac(z), "frac"), (lambda z, w: ops.lgamma(z), "lgamma"),
    (lambda z, w: ops.tanhshrink(z), "tanhshrink"), (lambda z, w: ops.histc(z), "histc"),
    (lambda z, w: ops.copysign(z, w), "copysign"), (lambda z, w: ops.ldexp(z, w), "ldexp"),
    (lambda z, w: ops.xlogy(z, w), "xlogy"), (lambda z, w: ops.xlogy(ops.real(z), w), "xlogy"),
    (lambda z, w: ops.float_power(z, w), "float_power"), (lambda z, w: ops.float_power(2.0, w), "float_power"),
    (lambda z, w: mint.float_power(ops.real(z), w), "float_power"), (lambda z, w: ops.ldexp(z, 2), "ldexp"),
])
def test_real_only_functions_refuse_complex(call, op):
    # before the fix: round/trunc returned the input unchanged and frac zeros (the integer path); lgamma,
    # tanhshrink, histc, copysign, ldexp, xlogy and float_power computed on the real part alone (a cast to float)
    with pytest.raises(TypeError, match=f"For '{op}'.*Complex(64|128)"):
        call(Tensor(Z), Tensor(W))


def test_vecdot_conjugates_a_complex_first_argument():
    # MindSpore 2.10: ops.vecdot(z, w) = [-3.4-2.2j, 3j] (sum of conj(z) * w); axis=0: [6-0.2j, -6.4-2j, -3+3j]
    z, w = Tensor(Z), Tensor(W)
    np.testing.assert_allclose(ops.vecdot(z, w).asnumpy(), [-3.4 - 2.2j, 3j], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ops.vecdot(z, w, axis=0).asnumpy(), [6 - 0.2j, -6.4 - 2j, -3 + 3j], rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(ops.vecdot(z, w).asnumpy(), np.sum(np.conj(Z) * W, -1), rtol=1e-6)
    np.testing.assert_allclose(kiln.jit(lambda a, b: ops.vecdot(a, b))(z, w).asnumpy(), np.sum(np.conj(Z) * W, -1),
                               rtol=1e-6)
    # a real first argument: no conjugation of the complex second one
    r = np.real(Z)
    np.testing.assert_allclose(ops.vecdot(Tensor(r), w).asnumpy(), np.sum(r * W, -1), rtol=1e-6)


def test_inv_of_complex_is_one_over_z():
    # MindSpore 2.10: ops.inv(z)[0, 0] = 0.1606-0.2982j, [1, 2] = -0.5+0.5j
    got = ops.inv(Tensor(Z)).asnumpy()
    nz = Z != 0
    np.testing.assert_allclose(got[nz], 1 / Z[nz], rtol=1e-6)
    assert got.dtype == np.complex64


def test_mindspore_numpy_sum_of_complex():
    # MindSpore 2.10: mindspore.numpy.sum(z) = -0.8+1.6j (Complex64), axis 0: [3.4+1.6j, -3.2+1j, -1-1j];
    # before the fix Kiln summed in Int64 (-1)
    got = mnp.sum(Tensor(Z))
    assert got.dtype == kiln.complex64
    np.testing.assert_allclose(got.asnumpy(), -0.8 + 1.6j, rtol=1e-6)
    np.testing.assert_allclose(mnp.sum(Tensor(Z), 0).asnumpy(), [3.4 + 1.6j, -3.2 + 1j, -1 - 1j], rtol=1e-6)


# ---------------------------------------------------------------------------------------------- the C++ compositions

def _both(fn, *args):
    eager = fn(*args)
    graph = kiln.jit(fn)(*args)
    np.testing.assert_array_equal(graph.asnumpy(), eager.asnumpy())
    return eager.asnumpy()


def _fd_grad(f, z, eps=1e-6):
    """dL/dx + i dL/dy of a real function f of a complex128 array, by central differences."""
    g = np.zeros_like(z)
    for k in range(z.size):
        for unit in (1, 1j):
            e = np.zeros_like(z)
            e.flat[k] = unit * eps
            d = (f(z + e) - f(z - e)) / (2 * eps)
            g.flat[k] += d * unit
    return g


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sum_and_mean_of_a_0d_complex_tensor(dt):
    # MindSpore 2.10: Tensor(complex64(3+4j)).sum() = 3+4j (Kiln summed the pair into one float and failed)
    z = Tensor(np.array(3 + 4j, dt))
    for fn in (lambda t: t.sum(), lambda t: t.mean(), lambda t: ops.sum(t), lambda t: ops.ReduceSum(True)(t)):
        got = _both(fn, z)
        assert got.shape == () and got.dtype == dt and got == 3 + 4j
    g = kiln.grad(lambda t: ops.real(t.sum() * (2 - 1j)))(z)
    assert g.asnumpy() == 2 + 1j  # d Re((2-i) z) = 2 dx + 1 dy


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_abs_does_not_overflow_or_underflow(dt):
    # MindSpore 2.10's ops.abs: [5e30+0j, 5e-30+0j] in complex64 (sqrt(x^2 + y^2) gave [inf, 0]); ComplexAbs gives
    # NumPy's |z| too (MindSpore 2.10's ComplexAbs kernel overflows: [inf, 0])
    big = 1e300 if dt == np.complex128 else 1e30
    z = np.array([3 * big + 4j * big, 3 / big + 4j / big, 0j], dt)
    np.testing.assert_allclose(_both(ops.abs, Tensor(z)), np.abs(z).astype(dt), rtol=1e-6)
    np.testing.assert_allclose(_both(ops.ComplexAbs(), Tensor(z)), np.abs(z), rtol=1e-6)
    np.testing.assert_allclose(_both(ops.log, Tensor(z[:2])), np.log(z[:2]), rtol=1e-6)
    # gradient z/|z| (MindSpore 2.10), 0 at z = 0
    g = kiln.grad(lambda t: ops.ComplexAbs()(t).sum())(Tensor(np.array([3 + 4j, 0j, -4 + 0j], dt))).asnumpy()
    np.testing.assert_allclose(g, [0.6 + 0.8j, 0, -1], rtol=1e-6)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sqrt_is_exact_on_the_axes_and_matches_numpy(dt):
    # MindSpore 2.10: sqrt(-4+0j) = 2j, sqrt(-4-0j) = -2j (the polar form gave -8.7e-8+2j in complex64)
    z = np.array([-4 + 0j, complex(-4, -0.0), 4 + 0j, 0j, 1j, -1j, complex(1, np.inf), complex(-np.inf, 1),
                  complex(np.inf, -1), complex(np.nan, 1)], dt)
    got = _both(ops.sqrt, Tensor(z))
    np.testing.assert_array_equal(got[:4], np.sqrt(z[:4]))  # exact on the real axis
    np.testing.assert_array_equal(np.signbit(got[:6].imag), np.signbit(np.sqrt(z[:6]).imag))
    np.testing.assert_allclose(got, np.sqrt(z), rtol=1e-6)
    rng = np.random.default_rng(3)
    w = ((rng.standard_normal(500) + 1j * rng.standard_normal(500)) * 10.0 ** rng.integers(-15, 15, 500)).astype(dt)
    np.testing.assert_allclose(ops.sqrt(Tensor(w)).asnumpy(), np.sqrt(w), rtol=3e-7 if dt == np.complex64 else 1e-15)


def test_sqrt_and_exp_gradients():
    # MindSpore 2.10: d Re sqrt(z) at z = 3+4j, -4+0j: [0.2+0.1j, 0.25j]; d Im sqrt: [-0.1+0.2j, -0.25];
    # d Im exp(z) at 1+0j, 2+1j: [2.7182817j, 6.217676+3.9923239j]
    z = Tensor(np.array([3 + 4j, -4 + 0j], np.complex64))
    np.testing.assert_allclose(kiln.grad(lambda t: ops.real(ops.sqrt(t)).sum())(z).asnumpy(), [0.2 + 0.1j, 0.25j],
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(kiln.grad(lambda t: ops.imag(ops.sqrt(t)).sum())(z).asnumpy(), [-0.1 + 0.2j, -0.25],
                               rtol=1e-6, atol=1e-7)
    e = Tensor(np.array([1 + 0j, 2 + 1j], np.complex64))
    np.testing.assert_allclose(kiln.grad(lambda t: ops.imag(ops.exp(t)).sum())(e).asnumpy(),
                               [2.7182817j, 6.217676 + 3.9923239j], rtol=1e-6)
    # float64 finite differences away from the branch cut
    x = np.array([0.3 + 1.2j, -2 + 0.5j, 1.5 - 0.7j])
    for f_k, f_np in ((lambda t: ops.real(ops.sqrt(t) * (1 - 2j)).sum(), lambda v: np.real(np.sqrt(v) * (1 - 2j)).sum()),
                      (lambda t: ops.imag(ops.exp(t) * (0.5 + 1j)).sum(), lambda v: np.imag(np.exp(v) * (0.5 + 1j)).sum())):
        np.testing.assert_allclose(kiln.grad(f_k)(Tensor(x)).asnumpy(), _fd_grad(f_np, x), rtol=1e-6)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_exp_of_a_real_infinite_argument(dt):
    # MindSpore 2.10 and C99 cexp: exp(100+0j) = inf+0j in complex64 (Kiln gave inf+nanj: inf * sin 0)
    big = 1000.0 if dt == np.complex128 else 100.0
    z = np.array([big + 0j, complex(big, -0.0), complex(np.inf, 0), complex(-np.inf, 0), 1 + 0j], dt)
    got = _both(ops.exp, Tensor(z))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.exp(z))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(z.imag))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_division_scales_as_numpy(dt):
    # NumPy's Smith division: (1+2j) / (1e-30+1e-30j) = 1.5e30+5e29j in complex64 (a conj(b) / |b|^2 gave inf+infj,
    # and 0 for a divisor near 1e30); division by 0 gives NumPy's infinities / NaNs (was NaN+NaNj throughout)
    rng = np.random.default_rng(5)
    lim = 280 if dt == np.complex128 else 30
    a = ((rng.standard_normal((3, 1, 4)) + 1j * rng.standard_normal((3, 1, 4))) * 10.0 ** rng.integers(-lim, lim, (3, 1, 4))).astype(dt)
    b = ((rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))) * 10.0 ** rng.integers(-lim, lim, (5, 4))).astype(dt)
    b[1, 1], b[2, 2] = 3, 2j
    with np.errstate(all="ignore"):
        ref = a / b
    got = _both(lambda x, y: x / y, Tensor(a), Tensor(b))
    ok = np.isfinite(ref) & (np.abs(ref) > np.finfo(dt).tiny * 1e6)
    np.testing.assert_allclose(got[ok], ref[ok], rtol=3e-7 if dt == np.complex64 else 1e-15)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(ref))
    num = np.array([1 + 2j, 1 + 0j, 0j, -1 - 1j, 1j], dt)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_both(lambda x, y: x / y, Tensor(num), Tensor(np.zeros(5, dt))), num / dt(0))
    # MindSpore 2.10: ops.reciprocal(0j) = inf+nanj
    r = ops.reciprocal(Tensor(np.array([0j, 2j], dt))).asnumpy()
    assert np.isposinf(r[0].real) and np.isnan(r[0].imag) and r[1] == -0.5j


def test_division_gradient_in_both_branches():
    # |br| >= |bi| and |br| < |bi| take different Smith formulas: both against float64 finite differences, and a
    # real divisor (bi = 0) keeps a finite gradient
    a = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])
    b = np.array([3 + 0.5j, 0.2 - 4j, 1.5 + 0j])
    f_np = lambda v: np.imag(v / b * (1 + 1j)).sum()
    g = kiln.grad(lambda t: ops.imag(t / Tensor(b) * (1 + 1j)).sum())(Tensor(a)).asnumpy()
    np.testing.assert_allclose(g, _fd_grad(f_np, a), rtol=1e-6)
    f_np = lambda v: np.real(a / v).sum()
    g = kiln.grad(lambda t: ops.real(Tensor(a) / t).sum())(Tensor(b)).asnumpy()
    np.testing.assert_allclose(g, _fd_grad(f_np, b), rtol=1e-6)
    assert np.all(np.isfinite(g))


# ---------------------------------------------------------------------------------------------- writes, fills, bool

ZN = np.array([[1 + 2j, 3 - 1j, 0.5j], [2 + 0j, -1 - 1j, 4 + 4j]], np.complex64)


def test_masked_and_indexed_assignment_and_tensor_scatter_update():
    # MindSpore 2.10: z[mask] = 9j, ops.tensor_scatter_update on complex (Kiln refused TensorScatterUpdate)
    mask = np.array([[True, False, True], [False, False, True]])
    z = Tensor(ZN.copy())
    z[Tensor(mask)] = Tensor(np.complex64(9j))
    want = ZN.copy()
    want[mask] = 9j
    np.testing.assert_array_equal(z.asnumpy(), want)
    idx = Tensor(np.array([[0, 0], [1, 2]], np.int32))
    upd = Tensor(np.array([5j, 6], np.complex64))
    want = ZN.copy()
    want[0, 0], want[1, 2] = 5j, 6
    np.testing.assert_array_equal(_both(ops.tensor_scatter_update, Tensor(ZN), idx, upd), want)
    # gradients: written slices get nothing from x, the updates get the output's gradient there
    gx, gu = kiln.grad(lambda x, u: ops.real(ops.tensor_scatter_update(x, idx, u) * (1 + 2j)).sum(),
                       grad_position=(0, 1))(Tensor(ZN), upd)
    np.testing.assert_array_equal(gu.asnumpy(), [1 - 2j, 1 - 2j])
    np.testing.assert_array_equal(gx.asnumpy(), np.where([[0, 1, 1], [1, 1, 0]], 1 - 2j, 0).astype(np.complex64))


def test_full_with_a_complex_fill_value():
    # MindSpore 2.10: ops.full((2,), 1+2j, dtype=complex64) = [1+2j, 1+2j]; ops.fill(complex64, (2,), 3j);
    # full_like of a complex tensor with 2-1j. Without a dtype Kiln gives NumPy's Complex128 (MindSpore 2.10 gives
    # Int64 [1, 1], dropping the imaginary part); a real dtype raises instead of dropping it.
    np.testing.assert_array_equal(ops.full((2,), 1 + 2j, dtype=kiln.complex64).asnumpy(),
                                  np.full(2, 1 + 2j, np.complex64))
    assert ops.full((2,), 1 + 2j).dtype == kiln.complex128
    np.testing.assert_array_equal(ops.fill(kiln.complex64, (2,), 3j).asnumpy(), [3j, 3j])
    np.testing.assert_array_equal(ops.full_like(Tensor(ZN), 2 - 1j).asnumpy(), np.full(ZN.shape, 2 - 1j))
    with pytest.raises(TypeError, match="For 'full', a complex fill_value .* needs a complex dtype"):
        ops.full((2,), 1 + 2j, dtype=kiln.float32)


def test_python_bool_and_int_of_a_complex_tensor():
    # MindSpore 2.10 / NumPy: bool(0+2j) is True, bool(0j) False (Kiln raised "this operation does not support")
    assert bool(Tensor(np.complex64(2j))) and not bool(Tensor(np.complex128(0j)))
    with pytest.raises(TypeError, match=r"int\(\) of a Complex64 Tensor"):
        int(Tensor(np.complex64(3 + 0j)))
