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
