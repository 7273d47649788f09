"""The low-precision kernels mixed precision runs on: float16/bfloat16 casts (bit-exact: NumPy's float16, and
round-to-nearest-even bfloat16 computed here with integer arithmetic), and matmul (+bias, +ReLU), convolution with
its gradients, max/avg pooling, elementwise ops and reductions in float16 and bfloat16 against float64 references
computed from the same (already rounded) inputs, with tolerances of the output dtype's precision: float16 has a
10-bit mantissa (unit roundoff 2^-11 ≈ 4.9e-4), bfloat16 a 7-bit one (2^-8 ≈ 3.9e-3). On this CPU (AVX2, no
AVX512_BF16/FP16) these kernels convert to float32, compute, and round the result once (docs/amp.md)."""
import numpy as np
import pytest

import kiln as ms
from kiln import ops, Tensor

LOW = [(ms.float16, 4.9e-4), (ms.bfloat16, 3.9e-3)]


def _bf16_bits(x):
    """Round-to-nearest-even bfloat16 bits of float32 array x (NaN: the quieted upper half)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def _low(x, dtype):
    """(Kiln tensor in `dtype`, float64 NumPy copy of exactly its values)."""
    t = Tensor(np.asarray(x, np.float32)).astype(dtype)
    return t, t.astype(ms.float32).asnumpy().astype(np.float64)


def _check(out, ref, dtype, unit, k=8):
    """out (Kiln, in dtype) against the float64 reference: |out - ref| <= k·u·(|ref| + scale)."""
    assert out.dtype == dtype
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    scale = np.abs(ref).max() if ref.size else 1.0
    np.testing.assert_array_less(np.abs(got - ref), k * unit * (np.abs(ref) + scale) + 1e-30)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 40000, 100003])
def test_casts_are_bit_exact(n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-9, 6, n)).astype(np.float32)
    specials = np.array([np.nan, -np.inf, np.inf, 65504, 65520, -70000, 6e-8, 1e-9, -0.0, 3.4e38], np.float32)
    x[:min(n, specials.size)] = specials[:n]
    t = Tensor(x)
    h = t.astype(ms.float16).asnumpy()
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16)
    same = (h.view(np.uint16) == ref.view(np.uint16)) | (np.isnan(h) & np.isnan(ref))
    assert same.all()
    np.testing.assert_array_equal(t.astype(ms.float16).astype(ms.float32).asnumpy(), ref.astype(np.float32))
    b = t.astype(ms.bfloat16).astype(ms.float32).asnumpy()
    np.testing.assert_array_equal(b.view(np.uint32) >> 16, _bf16_bits(x))
    # back and forth through float32 is the identity on 16-bit values
    np.testing.assert_array_equal(Tensor(b).astype(ms.bfloat16).astype(ms.float32).asnumpy().view(np.uint32),
                                  b.view(np.uint32))
    # a strided (non-contiguous) source converts the same
    if n >= 9:
        np.testing.assert_array_equal(Tensor(x)[::2].astype(ms.float16).asnumpy().view(np.uint16),
                                      h[::2].view(np.uint16))


@pytest.mark.parametrize("dtype, unit", LOW)
def test_matmul_bias_relu(dtype, unit):
    rng = np.random.default_rng(1)
    a, a64 = _low(rng.standard_normal((33, 70)), dtype)
    w, w64 = _low(rng.standard_normal((20, 70)) * 0.2, dtype)
    b, b64 = _low(rng.standard_normal(20), dtype)
    ref = np.maximum(a64 @ w64.T + b64, 0)
    _check(ops.relu(ops.matmul(a, w.T) + b), ref, dtype, unit, k=4 * np.sqrt(70))
    f = ms.jit(lambda x, y, z: ops.relu(ops.add(ops.matmul(x, y.T), z)))
    _check(f(a, w, b), ref, dtype, unit, k=4 * np.sqrt(70))
    batched, b3 = _low(rng.standard_normal((3, 5, 70)), dtype)
    _check(ops.matmul(batched, w.T), b3 @ w64.T, dtype, unit, k=4 * np.sqrt(70))


def _np_conv2d(x, w, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + out.shape[2], j:j + out.shape[3]], w[:, :, i, j])
    return out


@pytest.mark.parametrize("dtype, unit", LOW)
def test_conv2d_and_its_gradients(dtype, unit):
    rng = np.random.default_rng(2)
    x, x64 = _low(rng.standard_normal((2, 3, 7, 7)), dtype)
    w, w64 = _low(rng.standard_normal((4, 3, 3, 3)) * 0.3, dtype)
    _check(ops.conv2d(x, w, padding=1, pad_mode="pad"), _np_conv2d(x64, w64, 1), dtype, unit, k=30)
    g, g64 = _low(rng.standard_normal((2, 4, 7, 7)), dtype)
    gx, gw = ms.grad(lambda a, b: ops.sum(ops.conv2d(a, b, padding=1, pad_mode="pad").astype(ms.float32) *
                                          g.astype(ms.float32)), (0, 1))(x, w)
    # references: d/dx <conv(x, w), g> (g correlated back through w) and d/dw (x correlated with g), float64
    gw_ref = np.zeros_like(w64)
    xp = np.pad(x64, ((0, 0), (0, 0), (1, 1), (1, 1)))
    gxp = np.zeros_like(xp)
    for i in range(3):
        for j in range(3):
            gw_ref[:, :, i, j] = np.einsum("nchw,nohw->oc", xp[:, :, i:i + 7, j:j + 7], g64)
            gxp[:, :, i:i + 7, j:j + 7] += np.einsum("nohw,oc->nchw", g64, w64[:, :, i, j])
    gx_ref = gxp[:, :, 1:-1, 1:-1]
    _check(gx, gx_ref, dtype, unit, k=40)
    _check(gw, gw_ref, dtype, unit, k=40)


@pytest.mark.parametrize("dtype, unit", LOW)
def test_pooling(dtype, unit):
    rng = np.random.default_rng(3)
    x, x64 = _low(rng.standard_normal((2, 3, 6, 6)), dtype)
    mx = x64.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5))
    out = ops.max_pool2d(x, 2, 2)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.astype(ms.float32).asnumpy(), mx)  # a max is exact
    avg = ops.avg_pool2d(x, 2, 2)
    _check(avg, x64.reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5)), dtype, unit, k=2)
    gx = ms.grad(lambda a: ops.sum(ops.max_pool2d(a, 2, 2).astype(ms.float32)))(x)
    assert gx.dtype == dtype and float(gx.astype(ms.float32).asnumpy().sum()) == 2 * 3 * 9


@pytest.mark.parametrize("dtype, unit", LOW)
def test_elementwise_and_reductions_accumulate_in_float32(dtype, unit):
    rng = np.random.default_rng(4)
    x, x64 = _low(rng.standard_normal((64, 513)), dtype)
    y, y64 = _low(rng.standard_normal((64, 513)), dtype)
    _check(x * y + x, x64 * y64 + x64, dtype, unit, k=2)
    _check(ops.exp(x * 0.5), np.exp(x64 * 0.5), dtype, unit, k=4)
    _check(ops.tanh(x), np.tanh(x64), dtype, unit, k=4)
    _check(ops.softmax(x, -1), np.exp(x64) / np.exp(x64).sum(-1, keepdims=True), dtype, unit, k=8)
    # a 32832-element sum: accumulated in float16/bfloat16 it would be off by far more than one rounding
    ones, _ = _low(np.full((32832,), 1.0), dtype)
    s = ops.sum(ones)
    want = float(np.float16(32832)) if dtype == ms.float16 else \
        float((_bf16_bits(np.array([32832.0], np.float32)).astype(np.uint32) << 16).view(np.float32)[0])
    assert want in (32832.0, 32768.0)  # (a float16 accumulator would stop at 2048, a bfloat16 one at 256)
    assert s.dtype == dtype and float(s.astype(ms.float32).asnumpy()) == want
    total = ops.sum(x)
    _check(total, np.array(x64.sum()), dtype, unit, k=2)
    _check(ops.mean(x, 1), x64.mean(1), dtype, unit, k=2)


def test_float16_scalar_conversions_match_numpy_for_every_value():
    """Elementwise kernels convert element by element (Half(float) / float(Half)): all 65536 float16 values through
    negation, and sums of random pairs rounded back to float16, equal NumPy's (which also computes in float32)."""
    allh = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    neg = ops.neg(Tensor(allh)).asnumpy()
    finite = ~np.isnan(allh)
    np.testing.assert_array_equal(neg[finite].view(np.uint16), (-allh[finite]).view(np.uint16))
    assert np.isnan(neg[~finite]).all()
    rng = np.random.default_rng(5)
    a = allh[rng.integers(0, 65536, 200000)]
    b = allh[rng.integers(0, 65536, 200000)]
    with np.errstate(all="ignore"):
        ref = a + b
    got = (Tensor(a) + Tensor(b)).asnumpy()
    same = (got.view(np.uint16) == ref.view(np.uint16)) | (np.isnan(got) & np.isnan(ref))
    assert same.all()
