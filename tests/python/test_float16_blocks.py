"""Float16 elementwise loops and reductions computed in widened blocks (src/ops/elementwise.h, Note [float16
blocks]): the same values, bit for bit, as one float32 operation per element rounded once to float16 (NumPy's
float16 rounding is IEEE round-to-nearest-even, as vcvtps2ph), on runs of every length around the block and lane
sizes, scalar operands, strided views, and NaN/inf; sums against float64 rounded once."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops

LENGTHS = (1, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1000, 8193)


def _f16(rng, n, special=True):
    x = (rng.standard_normal(n) * 3).astype(np.float16)
    if special and n >= 8:
        x[[1, 3, 5]] = [np.nan, np.inf, -np.inf]
        x[6] = np.float16(-0.0)
    return x


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint16)


def _same(got, want):
    got = got.asnumpy() if isinstance(got, Tensor) else got
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    # NaN results are the quiet NaN 0x7e00 with some sign (Half(float)); every other element bit for bit
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])
    if nan.any():
        assert np.all((_bits(got)[nan] & 0x7fff) == 0x7e00)


@pytest.mark.parametrize("n", LENGTHS)
def test_unary_and_binary_runs(n):
    rng = np.random.default_rng(n)
    x, y = _f16(rng, n), _f16(rng, n, special=False)
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    tx, ty = Tensor(x), Tensor(y)
    with np.errstate(all="ignore"):
        _same(ops.relu(tx), np.where(np.isnan(x32), x32, np.maximum(x32, 0)).astype(np.float16))
        _same(ops.exp(tx), np.exp(x32).astype(np.float16))
        _same(tx + ty, (x32 + y32).astype(np.float16))
        _same(tx * ty, (x32 * y32).astype(np.float16))
        _same(tx - 1.5, (x32 - np.float32(1.5)).astype(np.float16))  # a scalar right operand
        _same(2.0 / tx, (np.float32(2.0) / x32).astype(np.float16))  # a scalar left operand
        np.testing.assert_array_equal((tx > ty).asnumpy(), x32 > y32)  # a Bool result
        np.testing.assert_array_equal(tx.astype(ms.float32).asnumpy(), x32)


def test_strided_and_broadcast_operands():
    rng = np.random.default_rng(1)
    x = _f16(rng, 600).reshape(20, 30)
    row = _f16(rng, 30, special=False)
    x32, r32 = x.astype(np.float32), row.astype(np.float32)
    tx = Tensor(x)
    _same(tx + Tensor(row), (x32 + r32).astype(np.float16))
    _same(ops.transpose(tx, (1, 0)) * 3.0, (x32.T * np.float32(3)).astype(np.float16))
    _same(ops.relu(tx[:, ::3]), np.maximum(x32[:, ::3], 0).astype(np.float16))


@pytest.mark.parametrize("n", LENGTHS)
def test_sums_accumulate_in_double(n):
    rng = np.random.default_rng(100 + n)
    x = _f16(rng, n, special=False)
    want = np.float16(np.sum(x.astype(np.float64)))
    got = ops.sum(Tensor(x)).asnumpy()
    assert _bits(got.reshape(1))[0] == _bits(np.array([want]))[0]
    m = _f16(rng, 3 * n, special=False).reshape(3, n)
    _same(ops.sum(Tensor(m), 1), m.astype(np.float64).sum(1).astype(np.float16))   # runs into one accumulator
    _same(ops.sum(Tensor(m), 0), m.astype(np.float64).sum(0).astype(np.float16))   # rows added elementwise
    _same(ops.amax(Tensor(m), 1), m.max(1))
    assert int(ops.count_nonzero(Tensor(m)).asnumpy()) == int(np.count_nonzero(m))


def test_nan_in_sum_and_max():
    x = np.arange(300, dtype=np.float16)
    x[257] = np.nan
    assert np.isnan(ops.sum(Tensor(x)).asnumpy())
    assert np.isnan(ops.amax(Tensor(x)).asnumpy())
