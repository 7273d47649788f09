"""The kernels' per-call dim lists (cpu::DimVec, src/backend/cpu/loops.h) are inline up to 8 dims and on the heap
above: reductions, broadcasting binary ops and Select give NumPy's values on both sides of that limit, on
contiguous, transposed and broadcast inputs."""
import numpy as np
import pytest

import kiln as ms
from kiln import ops


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape,axes", [
    ((3, 4), (0,)),
    ((2, 3, 1, 2, 2, 1, 2, 3), (0, 3, 7)),            # 8 dims: inline
    ((2, 1, 3, 2, 1, 2, 3, 1, 2, 2), (0, 3, 8)),      # 10 dims: heap
    ((2, 1, 3, 2, 1, 2, 3, 1, 2, 2), ()),
])
def test_reductions_match_numpy(shape, axes):
    x = _data(shape)
    t = ms.Tensor(x)
    np.testing.assert_allclose(ops.sum(t, axes or None).asnumpy(), x.sum(axes or None), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.mean(t, axes or None).asnumpy(), x.mean(axes or None), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ops.amax(t, axes or None).asnumpy(), x.max(axes or None))
    # a transposed (non-contiguous) input: the loop orders the dims by stride
    perm = tuple(reversed(range(len(shape))))
    tt = ops.transpose(t, perm)
    xt = x.transpose(perm)
    np.testing.assert_allclose(ops.sum(tt, (1,)).asnumpy(), xt.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((4, 3), (3,)),
    ((2, 1, 3, 1, 2, 2, 1, 2), (3, 2, 1, 2, 1)),
    ((2, 1, 3, 1, 2, 2, 1, 2, 1, 2), (2, 1, 3, 2, 5, 1)),
])
def test_broadcasting_binary_ops_and_select_match_numpy(a_shape, b_shape):
    a, b = _data(a_shape, 1), _data(b_shape, 2)
    ta, tb = ms.Tensor(a), ms.Tensor(b)
    np.testing.assert_array_equal(ops.add(ta, tb).asnumpy(), a + b)
    np.testing.assert_array_equal(ops.mul(ta, tb).asnumpy(), a * b)
    np.testing.assert_array_equal(ops.greater(ta, tb).asnumpy(), a > b)
    out = np.broadcast_shapes(a.shape, b.shape)
    cond = np.broadcast_to(a > 0, out)
    got = ops.select(ms.Tensor(np.ascontiguousarray(cond)), ms.Tensor(np.broadcast_to(a, out).copy()),
                     ms.Tensor(np.broadcast_to(b, out).copy())).asnumpy()
    np.testing.assert_array_equal(got, np.where(cond, a, b))
