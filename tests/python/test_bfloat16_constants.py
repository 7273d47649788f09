"""Ops that build a constant Tensor through NumPy keep a bfloat16 dtype. NumPy has no bfloat16, so
mstype.dtype_to_nptype(bfloat16) is float32; these ops used to return (or promote their result to) Float32 for a
bfloat16 input or dtype. MindSpore 2.10: ops.scalar_to_tensor(1.5, bfloat16) is BFloat16 1.5; its CPU kernels of
MaskedFill and LinSpace refuse bfloat16, so the others follow Kiln's documented rule (the input's dtype, or the
dtype asked for), as float16 already did."""
import numpy as np
import pytest

import kiln as ms
import kiln.numpy as mnp
from kiln import Tensor, ops

BF = ms.bfloat16
X = np.array([0.5, 1.5, 2.5], np.float32)
MASK = np.array([False, True, True])

CASES = {
    "masked_fill": (lambda x: ops.masked_fill(x, Tensor(MASK), 0.0), [0.5, 0.0, 0.0]),
    "Tensor.masked_fill": (lambda x: x.masked_fill(Tensor(MASK), 2.0), [0.5, 2.0, 2.0]),
    "index_fill": (lambda x: ops.index_fill(x, 0, Tensor(np.array([1], np.int32)), 7.0), [0.5, 7.0, 2.5]),
    "fills": (lambda x: ops.fills(x, 3.0), [3.0, 3.0, 3.0]),
    "scatter": (lambda x: ops.scatter(x, 0, Tensor(np.array([0], np.int64)), 9.0), [9.0, 1.5, 2.5]),
    "scalar_to_tensor": (lambda x: ops.scalar_to_tensor(1.5, BF), 1.5),  # MindSpore 2.10: BFloat16 1.5
    "linspace": (lambda x: ops.linspace(Tensor(0.0, BF), 1, 3), [0.0, 0.5, 1.0]),
    "logspace": (lambda x: ops.logspace(0, 2, 3, dtype=BF), [1.0, 10.0, 100.0]),
    "hann_window": (lambda x: ops.hann_window(4, dtype=BF), [0.0, 0.5, 1.0, 0.5]),
    "numpy.eye": (lambda x: mnp.eye(2, dtype=BF), [[1.0, 0.0], [0.0, 1.0]]),
    "numpy.tri": (lambda x: mnp.tri(2, dtype=BF), [[1.0, 0.0], [1.0, 1.0]]),
    "numpy.linspace": (lambda x: mnp.linspace(0, 1, 3, dtype=BF), [0.0, 0.5, 1.0]),
    "numpy.linspace step": (lambda x: mnp.linspace(0, 1, 3, dtype=BF, retstep=True)[1], 0.5),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bfloat16_stays_bfloat16(name):
    fn, want = CASES[name]
    y = fn(Tensor(X).astype(BF))
    assert y.dtype == BF, (name, y.dtype)
    np.testing.assert_array_equal(y.astype(ms.float32).asnumpy(), np.array(want, np.float32))


def test_other_dtypes_unchanged():
    assert ops.masked_fill(Tensor(X).astype(ms.float16), Tensor(MASK), 0.0).dtype == ms.float16
    assert ops.scalar_to_tensor(2).dtype == ms.float32 and mnp.eye(2).dtype == ms.float32
    big = ops.masked_fill(Tensor(np.array([1, 2], np.int64)), Tensor(np.array([True, False])), 2**40)
    assert big.dtype == ms.int64 and big.asnumpy().tolist() == [2**40, 2]
