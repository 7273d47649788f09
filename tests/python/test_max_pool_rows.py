"""MaxPool's row path (src/ops/pool.cpp, Note [max pool rows]): the windows of an output row that lie inside the
plane are reduced tap by tap over the whole row; the edge windows keep the per-window path. Both must give the same
values and the same argmax (the first maximum in window order, the first NaN if any) as a direct NumPy loop, at
every stride (1 and 2 are compiled specially), dilation and padding, across the 256-output chunk boundary, for
every float dtype, with ties and NaNs."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops


def _ref(x, k, s, p, d):
    n, c, h, w = x.shape
    oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
    ow = (w + 2 * p - d * (k - 1) - 1) // s + 1
    y = np.full((n, c, oh, ow), -np.inf, x.dtype)
    idx = np.full((n, c, oh, ow), -1, np.int64)
    for a in range(n):
        for b in range(c):
            for i in range(oh):
                for j in range(ow):
                    best, bi = None, -1
                    for u in range(k):
                        r = i * s - p + u * d
                        if not 0 <= r < h:
                            continue
                        for v in range(k):
                            q = j * s - p + v * d
                            if not 0 <= q < w:
                                continue
                            val = x[a, b, r, q]
                            if bi < 0 or val > best or (np.isnan(val) and not np.isnan(best)):
                                best, bi = val, r * w + q
                    y[a, b, i, j], idx[a, b, i, j] = best, bi
    return y, idx


CASES = [(3, 2, 1, 1), (3, 1, 1, 1), (2, 2, 0, 1), (3, 3, 1, 1), (3, 2, 1, 2), (5, 1, 2, 1), (1, 1, 0, 1)]


@pytest.mark.parametrize("k, s, p, d", CASES)
def test_values_and_argmax_match_a_direct_loop(k, s, p, d):
    rng = np.random.default_rng(k * 100 + s * 10 + p + d)
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    x[0, 0, 2, :] = 1.0  # ties: the first maximum in window order wins
    x[1, 2, 4, 5] = np.nan
    x[1, 1, 3, 3:6] = np.nan  # several NaNs in one window: the first
    y, idx = ops.max_pool2d(Tensor(x), k, s, p, d, return_indices=True)
    ry, ridx = _ref(x, k, s, p, d)
    np.testing.assert_array_equal(y.asnumpy(), ry)
    np.testing.assert_array_equal(idx.asnumpy(), ridx)


def test_rows_longer_than_one_chunk():
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 700)).astype(np.float32)
    for s in (1, 2, 3):
        y, idx = ops.max_pool2d(Tensor(x), 3, s, 1, return_indices=True)
        ry, ridx = _ref(x, 3, s, 1, 1)
        np.testing.assert_array_equal(y.asnumpy(), ry)
        np.testing.assert_array_equal(idx.asnumpy(), ridx)


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16, ms.float64])
def test_other_float_dtypes(dtype):
    x = np.random.default_rng(2).standard_normal((2, 2, 8, 10))
    xt = Tensor(x.astype(np.float32)).astype(dtype) if dtype != ms.float64 else Tensor(x)
    x_exact = xt.astype(ms.float64).asnumpy()
    y, idx = ops.max_pool2d(xt, 3, 2, 1, return_indices=True)
    ry, ridx = _ref(x_exact, 3, 2, 1, 1)
    np.testing.assert_array_equal(y.astype(ms.float64).asnumpy(), ry)
    np.testing.assert_array_equal(idx.asnumpy(), ridx)


def test_gradient_routes_to_the_argmax_in_both_modes():
    x = np.random.default_rng(3).standard_normal((1, 2, 7, 9))
    g = np.random.default_rng(4).standard_normal((1, 2, 4, 5))
    _, ridx = _ref(x, 3, 2, 1, 1)
    want = np.zeros_like(x)
    for c in range(2):
        np.add.at(want[0, c].reshape(-1), ridx[0, c].reshape(-1), g[0, c].reshape(-1))
    f = lambda a: ops.sum(ops.max_pool2d(a, 3, 2, 1) * Tensor(g))
    np.testing.assert_allclose(ms.grad(f)(Tensor(x)).asnumpy(), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ms.jit(ms.grad(f))(Tensor(x)).asnumpy(), want, rtol=0, atol=1e-12)
