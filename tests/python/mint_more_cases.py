"""Checks of the mint adapters in kiln/mint/_functional_more.py against NumPy (test_mint.CASES includes them)."""
import numpy as np
import pytest

from kiln import Tensor, mint
from kiln.mint.nn import functional as F

RNG = np.random.RandomState(7)
A = RNG.randn(2, 3, 4).astype(np.float32)
B = RNG.randn(2, 4, 5).astype(np.float32)
M = RNG.randn(3, 4).astype(np.float32)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got.asnumpy() if isinstance(got, Tensor) else got, want, rtol=rtol, atol=atol)


def _bmm():
    close(mint.bmm(Tensor(A), Tensor(B)), A @ B)
    with pytest.raises(TypeError, match="mint.bmm"):
        mint.bmm(A, Tensor(B))


def _baddbmm():
    c = RNG.randn(2, 3, 5).astype(np.float32)
    close(mint.baddbmm(Tensor(c), Tensor(A), Tensor(B), beta=0.5, alpha=2.0), 0.5 * c + 2.0 * (A @ B))
    with pytest.raises(TypeError):
        mint.baddbmm(Tensor(c), Tensor(A), Tensor(B), 0.5)  # beta is keyword-only


def _chunk():
    parts = mint.chunk(Tensor(M), 2, dim=1)
    assert len(parts) == 2
    close(parts[0], M[:, :2]), close(parts[1], M[:, 2:])
    assert [p.shape for p in mint.chunk(Tensor(M), 2)] == [(2, 4), (1, 4)]


def _cummax():
    x = np.array([[1.0, 3.0, 2.0, 5.0], [4.0, 1.0, 6.0, 0.0]], np.float32)
    v, i = mint.cummax(Tensor(x), dim=1)
    close(v, np.maximum.accumulate(x, axis=1)), close(i, [[0, 1, 1, 3], [0, 0, 2, 2]])


def _cummin():
    x = np.array([[1.0, 3.0, 0.0, 5.0]], np.float32)
    v, i = mint.cummin(Tensor(x), 1)
    close(v, np.minimum.accumulate(x, axis=1)), close(i, [[0, 0, 2, 2]])


def _diff():
    close(mint.diff(Tensor(M), n=2, dim=0), np.diff(M, n=2, axis=0))
    close(mint.diff(Tensor(M), prepend=Tensor(M[:, :1])), np.diff(M, prepend=M[:, :1]))


def _frac():
    x = np.array([-1.5, 2.25, 3.0], np.float32)
    close(mint.frac(Tensor(x)), x - np.trunc(x))


def _index_select():
    close(mint.index_select(Tensor(M), 1, Tensor(np.array([3, 0], np.int64))), M[:, [3, 0]])


def _isnan():
    x = np.array([1.0, np.nan, np.inf], np.float32)
    np.testing.assert_array_equal(mint.isnan(Tensor(x)).asnumpy(), np.isnan(x))


def _mv():
    v = RNG.randn(4).astype(np.float32)
    close(mint.mv(Tensor(M), Tensor(v)), M @ v)


def _t():
    close(mint.t(Tensor(M)), M.T)
    close(mint.t(Tensor(M[0])), M[0])


def _histc():
    x = np.array([1.0, 2.0, 1.0, 4.0, 2.5], np.float32)
    close(mint.histc(Tensor(x), bins=4, min=0, max=4), np.histogram(x, bins=4, range=(0, 4))[0])


def _cdist():
    y = RNG.randn(2, 4).astype(np.float32)
    want = np.sqrt(((M[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    close(mint.cdist(Tensor(M), Tensor(y)), want, rtol=1e-4)
    with pytest.raises(ValueError, match="compute_mode"):
        mint.cdist(Tensor(M), Tensor(y), compute_mode="fast")


def _nansum():
    x = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    close(mint.nansum(Tensor(x), dim=1, keepdim=True), np.nansum(x, axis=1, keepdims=True))
    close(mint.nansum(Tensor(x)), np.nansum(x))


def _glu_f():
    a, b = M[:, :2], M[:, 2:]
    close(F.glu(Tensor(M)), a / (1 + np.exp(-b)))


def _mish_f():
    close(F.mish(Tensor(M)), M * np.tanh(np.log1p(np.exp(M))), rtol=1e-4)


def _selu_f():
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    close(F.selu(Tensor(M)), scale * np.where(M > 0, M, alpha * (np.exp(M) - 1)), rtol=1e-5)


def _pixel_shuffle_f():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
    want = x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 1, 4, 4)
    close(F.pixel_shuffle(Tensor(x), 2), want)


def _silu_f():
    x = Tensor(M.copy())
    close(F.silu(x), M / (1 + np.exp(-M)))
    F.silu(x, inplace=True)
    close(x, M / (1 + np.exp(-M)))


def _elu_f():
    close(F.elu(Tensor(M), alpha=0.5), np.where(M > 0, M, 0.5 * (np.exp(M) - 1)))


def _hardtanh_f():
    x = Tensor(M.copy())
    F.hardtanh(x, -0.5, 0.5, inplace=True)
    close(x, np.clip(M, -0.5, 0.5))
    with pytest.raises(TypeError, match="inplace"):
        F.hardtanh(x, inplace=1)


def _threshold_f():
    close(F.threshold(Tensor(M), 0.1, 20.0), np.where(M > 0.1, M, 20.0))


def _leaky_relu_f():
    close(F.leaky_relu(Tensor(M)), np.where(M >= 0, M, 0.01 * M))
    close(F.leaky_relu(Tensor(M), 0.3), np.where(M >= 0, M, 0.3 * M))


def _avg_pool1d_f():
    x = RNG.randn(1, 2, 6).astype(np.float32)
    close(F.avg_pool1d(Tensor(x), 2), x.reshape(1, 2, 3, 2).mean(-1))


def _avg_pool3d_f():
    x = RNG.randn(1, 1, 2, 4, 4).astype(np.float32)
    close(F.avg_pool3d(Tensor(x), 2), x.reshape(1, 1, 1, 2, 2, 2, 2, 2).mean((3, 5, 7)))
    close(F.avg_pool3d(Tensor(x), 2, divisor_override=4), x.reshape(1, 1, 1, 2, 2, 2, 2, 2).sum((3, 5, 7)) / 4)


MORE_CASES = {
    "bmm": _bmm, "baddbmm": _baddbmm, "chunk": _chunk, "cummax": _cummax, "cummin": _cummin, "diff": _diff,
    "frac": _frac, "index_select": _index_select, "isnan": _isnan, "mv": _mv, "t": _t,
    "histc": _histc, "cdist": _cdist, "nansum": _nansum,
    "nn.functional.glu": _glu_f, "nn.functional.mish": _mish_f, "nn.functional.selu": _selu_f,
    "nn.functional.pixel_shuffle": _pixel_shuffle_f, "nn.functional.silu": _silu_f, "nn.functional.elu": _elu_f,
    "nn.functional.hardtanh": _hardtanh_f, "nn.functional.threshold": _threshold_f,
    "nn.functional.leaky_relu": _leaky_relu_f, "nn.functional.avg_pool1d": _avg_pool1d_f,
    "nn.functional.avg_pool3d": _avg_pool3d_f,
}
