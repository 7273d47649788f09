"""The sign of zero of Kiln's elementwise ops, bit for bit against NumPy (np.signbit), PyNative and Graph mode.

MindSpore 2.10 agrees with NumPy for every op here except copysign (its `other < 0` rule), fmod (−0.0 dividend) and
remainder (negative divisor), where its CPU kernels give +0.0 (docs/decisions/differences-from-mindspore.md)."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, ops

X = np.array([-0.0, 0.0, -0.4, 0.4, -1e-45, -np.nan, np.nan, -np.inf], np.float32)
Z = np.zeros_like(X)
O = np.ones_like(X)

CASES = [
    ("round", lambda x: ops.round(x), lambda x: np.round(x)),
    ("trunc", lambda x: ops.trunc(x), np.trunc),
    ("ceil", lambda x: ops.ceil(x), np.ceil),
    ("floor", lambda x: ops.floor(x), np.floor),
    ("neg", lambda x: ops.neg(x), np.negative),
    ("mul_scalar0", lambda x: ops.mul(x, 0.0), lambda x: x * np.float32(0)),
    ("mul_tensor0", lambda x: x * Tensor(Z), lambda x: x * Z),
    ("abs", lambda x: ops.abs(x), np.abs),
    ("copysign_one", lambda x: ops.copysign(Tensor(O), x), lambda x: np.copysign(O, x)),
    ("copysign_zero", lambda x: ops.copysign(Tensor(Z), x), lambda x: np.copysign(Z, x)),
    ("copysign_x", lambda x: ops.copysign(x, Tensor(-Z)), lambda x: np.copysign(x, -Z)),
    ("fmod_1", lambda x: ops.fmod(x, 1.0), lambda x: np.fmod(x, np.float32(1))),
    ("fmod_m1", lambda x: ops.fmod(x, -1.0), lambda x: np.fmod(x, np.float32(-1))),
    ("remainder_1", lambda x: ops.remainder(x, 1.0), lambda x: np.remainder(x, np.float32(1))),
    ("remainder_m1", lambda x: ops.remainder(x, -1.0), lambda x: np.remainder(x, np.float32(-1))),
    ("maximum_neg0", lambda x: ops.maximum(x, Tensor(-Z)), lambda x: np.maximum(x, -Z)),
    ("minimum_pos0", lambda x: ops.minimum(x, Tensor(Z)), lambda x: np.minimum(x, Z)),
    ("minimum_neg0", lambda x: ops.minimum(x, Tensor(-Z)), lambda x: np.minimum(x, -Z)),
]


def _check(got, want, name):
    got = np.asarray(got, np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    fin = ~np.isnan(want)
    np.testing.assert_array_equal(got[fin], want[fin], err_msg=name)
    np.testing.assert_array_equal(np.signbit(got[fin]), np.signbit(want[fin]), err_msg=f"{name}: sign of zero")


@pytest.mark.parametrize("name,kfn,nfn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
def test_sign_of_zero_matches_numpy(name, kfn, nfn, use_jit):
    with np.errstate(invalid="ignore"):
        want = nfn(X.copy())
    f = kiln.jit(kfn) if use_jit else kfn
    _check(f(Tensor(X)).asnumpy(), want, name)


def test_relu_and_sign_of_zeros():
    x = Tensor(X[:5])
    # relu(−0.0) is +0.0 in NumPy's maximum(x, 0), PyTorch and MindSpore 2.10
    assert not np.signbit(ops.relu(x).asnumpy()).any()
    # sign(±0.0) is +0.0 (NumPy, MindSpore 2.10)
    np.testing.assert_array_equal(np.signbit(ops.sign(x).asnumpy()), np.signbit(np.sign(X[:5])))


def test_copysign_sign_bit_of_nan_other():
    # NumPy reads the sign bit of a NaN `other` (MindSpore 2.10 gives +1 for both)
    other = np.array([np.nan, -np.nan], np.float32)
    got = ops.copysign(Tensor(np.ones(2, np.float32)), Tensor(other)).asnumpy()
    np.testing.assert_array_equal(got, np.copysign(np.ones(2, np.float32), other))
