"""Issue 23's "kernels, not chains" ops as single C++ kernels: Fmod, Lgamma, Digamma, Polygamma, CumSum, CumProd
(+ CumProdGrad), GatherD (+ GatherDGrad), TrilIndices / TriuIndices. The registry rows (tests/python/op_registry)
check values against NumPy/SciPy, float64 finite-difference gradients, PyNative against Graph mode and the one
node; here: MindSpore 2.10's values at the edges (obtained with the oracle, /work/shared/tools/ms_oracle.py),
special values against the math module, the threaded scan path against float64 NumPy, and errors."""
import math

import numpy as np
import pytest

import kiln
from kiln import Tensor, ops

INF, NAN = math.inf, math.nan


def _same(got, want, rtol=1e-6, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype), rtol=rtol, atol=atol,
                               equal_nan=True)


# ---------------------------------------------------------------------------------------------- fmod

def test_fmod_integers_mindspore_values():
    # MindSpore 2.10: ops.fmod on Int32, a zero divisor gives the dividend
    a = Tensor(np.array([7, -7, 7, -7, 0, 5], np.int32))
    b = Tensor(np.array([3, 3, -3, -3, 0, 0], np.int32))
    out = ops.fmod(a, b)
    assert out.dtype == kiln.int32
    np.testing.assert_array_equal(out.asnumpy(), [1, -1, 1, -1, 0, 5])
    # an integer Tensor with a float number gives float32 (MindSpore 2.10: [2, -2, 2, -2, 0, 0])
    out = ops.fmod(a, 2.5)
    assert out.dtype == kiln.float32
    _same(out.asnumpy(), [2.0, -2.0, 2.0, -2.0, 0.0, 0.0])


def test_fmod_float_special_values():
    x = np.array([5.5, -5.5, 0.0, INF, NAN, 3.0, 1.0, -1e30, 1e-30], np.float64)
    y = np.array([2.0, 2.0, 1.0, 2.0, 1.0, INF, 0.0, 3.0, -7.0], np.float64)
    want = [math.fmod(a, b) if not (math.isinf(a) or math.isnan(a) or b == 0) else NAN for a, b in zip(x, y)]
    _same(ops.fmod(Tensor(x), Tensor(y)).asnumpy(), want, rtol=0)
    # the sign of the dividend (MindSpore 2.10: fmod(-5.5, 2) = -1.5); fmod(3, inf) = 3 as C/NumPy/PyTorch (MindSpore
    # 2.10 gives NaN there: a − trunc(a/b)·b)
    f32 = ops.fmod(Tensor(x.astype(np.float32)), Tensor(y.astype(np.float32))).asnumpy()
    assert f32[1] == np.float32(-1.5) and f32[5] == 3.0


def test_fmod_broadcast_and_empty():
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    y = np.array([2.5, -3.0, 4.0, 1.5], np.float32)
    _same(ops.fmod(Tensor(x), Tensor(y)).asnumpy(), np.fmod(x, y))
    assert ops.fmod(Tensor(np.zeros((0, 3), np.float32)), Tensor(y[:3])).shape == (0, 3)
    with pytest.raises(TypeError, match="fmod"):
        ops.fmod(Tensor(np.array([True])), Tensor(np.array([True])))
