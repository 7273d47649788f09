"""The two paths of bfloat16/float16 MatMul, BatchMatMul and Conv2D (forward, both gradients): "native" (oneDNN's
bf16/f16 primitives, float32 accumulation) and "float32" (widen, float32 kernel, one rounding); the choice between
them (kiln.runtime.low_precision / set_low_precision, KILN_LOW_PRECISION; docs/amp.md, "What runs natively in low
precision on this CPU").

Every path runs against float64 NumPy references computed from the same (already rounded) inputs, with tolerances of
the output dtype's unit roundoff (float16 2^-11, bfloat16 2^-8) times a factor for the sum's length. The native path
runs where oneDNN creates the dtype's primitives and is skipped elsewhere (an AVX2-only CPU: oneDNN 3.2 has no
bf16/f16 matmul or convolution there, not even its reference kernels); its code is dtype-generic, and the test hook
`_set_route_float32_through_native` runs Float32 products through it on any CPU."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops
from kiln import runtime
from kiln._loader import _core

UNIT = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
DTYPES = {"float16": ms.float16, "bfloat16": ms.bfloat16}
SUPPORTED = {d: _core._native_low_precision_supported(d) for d in UNIT}


@pytest.fixture
def path_mode():
    """Yields a setter of the low-precision mode; restores the mode in effect before the test."""
    before = _core._low_precision_mode()
    yield runtime.set_low_precision
    _core._set_low_precision_mode(before)


def _params():
    for d in UNIT:
        yield pytest.param("float32", d, id=f"float32-{d}")
        yield pytest.param("native", d, id=f"native-{d}", marks=pytest.mark.skipif(
            not SUPPORTED[d], reason=f"oneDNN creates no {d} matmul/convolution primitives on this CPU "
                                     f"(it needs avx512_bf16/amx_bf16 resp. avx512_fp16/amx_fp16; "
                                     f"kiln.runtime.cpu_info()['flags'] = {runtime.cpu_info()['flags']})"))


def _force(set_mode, path, dname):
    if path == "native" and dname == "float16" and not SUPPORTED["bfloat16"]:
        pytest.skip("set_low_precision('native') needs bfloat16 primitives")
    set_mode(path)
    assert runtime.low_precision()[dname] == path


def _low(x, dtype):
    """(Kiln tensor in `dtype`, float64 NumPy copy of exactly its values)."""
    t = Tensor(np.asarray(x, np.float32)).astype(dtype)
    return t, t.astype(ms.float32).asnumpy().astype(np.float64)


def _check(out, ref, dtype, unit, k):
    """out (Kiln, in dtype) against the float64 reference: |out - ref| <= k·u·(|ref| + max|ref|)."""
    assert out.dtype == dtype
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    assert got.shape == ref.shape
    scale = np.abs(ref).max() if ref.size else 1.0
    np.testing.assert_array_less(np.abs(got - ref), k * unit * (np.abs(ref) + scale) + 1e-30)


@pytest.mark.parametrize("path, dname", list(_params()))
def test_matmul_paths(path_mode, path, dname):
    _force(path_mode, path, dname)
    dtype, unit = DTYPES[dname], UNIT[dname]
    rng = np.random.default_rng(11)
    k = 4 * np.sqrt(70)
    a, a64 = _low(rng.standard_normal((33, 70)), dtype)
    b, b64 = _low(rng.standard_normal((70, 20)), dtype)
    _check(ops.matmul(a, b), a64 @ b64, dtype, unit, k)
    # every transpose flag, through the primitive's strides (no copies)
    at, at64 = _low(rng.standard_normal((70, 33)), dtype)
    bt, bt64 = _low(rng.standard_normal((20, 70)), dtype)
    for ta, tb in [(False, True), (True, False), (True, True)]:
        x, x64 = (at, at64.T) if ta else (a, a64)
        y, y64 = (bt, bt64.T) if tb else (b, b64)
        _check(ops.MatMul(transpose_a=ta, transpose_b=tb)(x, y), x64 @ y64, dtype, unit, k)
    # a row-strided view and a transposed view as operands
    wide, wide64 = _low(rng.standard_normal((33, 140)), dtype)
    _check(ops.matmul(wide[:, ::2], b), wide64[:, ::2] @ b64, dtype, unit, k)
    _check(ops.matmul(a, bt.T), a64 @ bt64.T, dtype, unit, k)
    # batched, with a broadcast weight and with broadcast batch dims
    x3, x364 = _low(rng.standard_normal((3, 5, 70)), dtype)
    _check(ops.matmul(x3, b), x364 @ b64, dtype, unit, k)
    y3, y364 = _low(rng.standard_normal((2, 1, 70, 6)), dtype)
    _check(ops.matmul(x3, y3), x364 @ y364, dtype, unit, k)
    # an empty inner dimension gives zeros, an empty batch an empty result
    z, _ = _low(np.zeros((4, 0)), dtype)
    zz, _ = _low(np.zeros((0, 3)), dtype)
    _check(ops.matmul(z, zz), np.zeros((4, 3)), dtype, unit, 1)
    e, _ = _low(np.zeros((0, 4, 70)), dtype)
    assert ops.matmul(e, b).shape == (0, 4, 20)
    # gradients (BatchMatMul's bprop is again matmuls)
    ga, gb = ms.grad(lambda p, q: ops.sum(ops.matmul(p, q).astype(ms.float32)), (0, 1))(a, b)
    _check(ga, np.ones((33, 20)) @ b64.T, dtype, unit, 4 * np.sqrt(20))
    _check(gb, a64.T @ np.ones((33, 20)), dtype, unit, 4 * np.sqrt(33))


def _np_conv2d(x, w, pad, stride=1):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride],
                             w[:, :, i, j])
    return out


@pytest.mark.parametrize("path, dname", list(_params()))
def test_conv_paths(path_mode, path, dname):
    _force(path_mode, path, dname)
    dtype, unit = DTYPES[dname], UNIT[dname]
    rng = np.random.default_rng(12)
    x, x64 = _low(rng.standard_normal((2, 16, 9, 9)), dtype)
    w, w64 = _low(rng.standard_normal((8, 16, 3, 3)) * 0.2, dtype)
    for stride in (1, 2):
        _check(ops.conv2d(x, w, stride=stride, padding=1, pad_mode="pad"), _np_conv2d(x64, w64, 1, stride), dtype,
               unit, k=4 * np.sqrt(144))
    g, g64 = _low(rng.standard_normal((2, 8, 9, 9)), dtype)
    gx, gw = ms.grad(lambda a, b: ops.sum(ops.conv2d(a, b, padding=1, pad_mode="pad").astype(ms.float32) *
                                          g.astype(ms.float32)), (0, 1))(x, w)
    gw_ref = np.zeros_like(w64)
    xp = np.pad(x64, ((0, 0), (0, 0), (1, 1), (1, 1)))
    gxp = np.zeros_like(xp)
    for i in range(3):
        for j in range(3):
            gw_ref[:, :, i, j] = np.einsum("nchw,nohw->oc", xp[:, :, i:i + 9, j:j + 9], g64)
            gxp[:, :, i:i + 9, j:j + 9] += np.einsum("nohw,oc->nchw", g64, w64[:, :, i, j])
    _check(gx, gxp[:, :, 1:-1, 1:-1], dtype, unit, k=4 * np.sqrt(72))
    _check(gw, gw_ref, dtype, unit, k=4 * np.sqrt(162))
    # a non-finite filter with padding keeps 0·inf = NaN at the border (Note [conv special values])
    wbad = w64.copy()
    wbad[0, 0, 0, 0] = np.inf
    y = ops.conv2d(x, Tensor(wbad.astype(np.float32)).astype(dtype), padding=1, pad_mode="pad")
    assert np.isnan(y.astype(ms.float32).asnumpy()[:, 0, 0, 0]).all()


def test_native_matmul_code_on_float32(path_mode):
    """The native path's matmul code (oneDNN matmul primitives on the operands' strides, once per batch, cached)
    run with Float32 operands through the test hook: the same NumPy references as above, within float32's bound."""
    rng = np.random.default_rng(13)
    _core._set_route_float32_through_native(True)
    try:
        a = rng.standard_normal((33, 70)).astype(np.float32)
        b = rng.standard_normal((70, 20)).astype(np.float32)
        tol = dict(rtol=1e-4, atol=1e-4)
        for _ in range(2):  # the second run takes the cached primitive
            np.testing.assert_allclose(ops.matmul(Tensor(a), Tensor(b)).asnumpy(), a @ b, **tol)
        np.testing.assert_allclose(ops.matmul(Tensor(a.T.copy()).T, Tensor(b)).asnumpy(), a @ b, **tol)
        np.testing.assert_allclose(ops.matmul(Tensor(a), Tensor(b.T.copy()).T).asnumpy(), a @ b, **tol)
        wide = rng.standard_normal((33, 140)).astype(np.float32)
        np.testing.assert_allclose(ops.matmul(Tensor(wide)[:, ::2], Tensor(b)).asnumpy(), wide[:, ::2] @ b, **tol)
        x3 = rng.standard_normal((3, 5, 70)).astype(np.float32)
        y3 = rng.standard_normal((2, 1, 70, 6)).astype(np.float32)
        np.testing.assert_allclose(ops.matmul(Tensor(x3), Tensor(b)).asnumpy(), x3 @ b, **tol)
        np.testing.assert_allclose(ops.matmul(Tensor(x3), Tensor(y3)).asnumpy(), x3 @ y3, **tol)
        # batches that are not rows of one product (a shared weight, every other batch of a view); a long batch of
        # small products, split over the threads (Note [batched matmul threads])
        x6 = rng.standard_normal((6, 5, 70)).astype(np.float32)
        np.testing.assert_allclose(ops.matmul(Tensor(x6)[::2], Tensor(b)).asnumpy(), x6[::2] @ b, **tol)
        p = rng.standard_normal((16, 64, 64)).astype(np.float32)
        q = rng.standard_normal((16, 64, 48)).astype(np.float32)  # 16 products of 2·64·64·48 flops: split
        for _ in range(2):
            np.testing.assert_allclose(ops.matmul(Tensor(p), Tensor(q)).asnumpy(), p @ q, rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(ops.matmul(Tensor(np.ones((4, 0), np.float32)),
                                                 Tensor(np.ones((0, 3), np.float32))).asnumpy(), np.zeros((4, 3)))
        # empty batches and rows, and K = 0 in a batch (MindSpore 2.10's float32 BatchMatMul gives these shapes and
        # zeros for K = 0)
        for xs, ys, out in [((2, 0, 3), (2, 3, 4), (2, 0, 4)), ((0, 2, 3), (0, 3, 4), (0, 2, 4)),
                            ((2, 4, 0), (2, 0, 3), (2, 4, 3)), ((2, 3, 5), (2, 5, 0), (2, 3, 0))]:
            r = ops.BatchMatMul()(Tensor(np.ones(xs, np.float32)), Tensor(np.ones(ys, np.float32)))
            assert r.shape == out
            np.testing.assert_array_equal(r.asnumpy(), np.zeros(out, np.float32))
    finally:
        _core._set_route_float32_through_native(False)


def test_auto_takes_native_exactly_where_it_is_fast(path_mode):
    path_mode("auto")
    lp = runtime.low_precision()
    assert lp["mode"] == "auto"
    for d in UNIT:
        assert lp[d] == ("native" if lp["fast"][d] and lp["supported"][d] else "float32")
    # "fast" is read with CPUID; the kernel's /proc/cpuinfo flags and vendor say the same (bfloat16: AMX, or
    # AVX512_BF16 on AMD only -- on Intel cores without AMX the float32 path is faster: docs/amp.md)
    flags = runtime.cpu_info()["flags"]
    if flags:
        with open("/proc/cpuinfo") as f:
            amd = "AuthenticAMD" in f.read()
        assert lp["fast"]["bfloat16"] == (("avx512_bf16" in flags and amd) or "amx_bf16" in flags)
        assert lp["fast"]["float16"] == ("avx512_fp16" in flags)  # (cpu_info does not list amx_fp16)
    assert runtime.cpu_info()["low_precision"] == lp


def test_forced_float32_reports_float32(path_mode):
    path_mode("float32")
    lp = runtime.low_precision()
    assert lp["mode"] == "float32" and lp["bfloat16"] == "float32" and lp["float16"] == "float32"


def test_set_low_precision_rejects_bad_modes(path_mode):
    with pytest.raises(ValueError, match="set_low_precision"):
        path_mode("bf16")
    with pytest.raises(ValueError, match="set_low_precision"):
        path_mode(None)


def test_set_low_precision_takes_any_case_as_the_environment_variable(path_mode):
    """set_low_precision("FLOAT32") / ("Auto") as KILN_LOW_PRECISION=Float32 (test_env_float32_and_bad_values):
    one rule for both, any case."""
    path_mode("FLOAT32")
    assert runtime.low_precision()["mode"] == "float32"
    path_mode("Auto")
    assert runtime.low_precision()["mode"] == "auto"
    if SUPPORTED["bfloat16"]:
        path_mode("NATIVE")
        assert runtime.low_precision()["mode"] == "native"
    else:
        with pytest.raises(RuntimeError, match=r"avx512_bf16 or amx_bf16.*this CPU has"):
            path_mode("NATIVE")  # a known mode (not ValueError): this CPU cannot run it


@pytest.mark.skipif(SUPPORTED["bfloat16"], reason="this CPU runs oneDNN's bfloat16 primitives")
def test_forcing_native_where_the_cpu_cannot_names_the_missing_flags(path_mode):
    before = runtime.low_precision()["mode"]
    with pytest.raises(RuntimeError, match=r"avx512_bf16 or amx_bf16.*this CPU has"):
        path_mode("native")
    assert runtime.low_precision()["mode"] == before  # left unchanged


def _run(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


@pytest.mark.skipif(SUPPORTED["bfloat16"], reason="this CPU runs oneDNN's bfloat16 primitives")
def test_env_native_where_the_cpu_cannot_raises_in_each_kernel():
    code = """
import numpy as np, kiln as ms
from kiln import Tensor, ops, runtime
lp = runtime.low_precision()
assert lp["mode"] == "native" and lp["bfloat16"].startswith("unavailable: "), lp
x = Tensor(np.ones((4, 4), np.float32)).astype(ms.bfloat16)
ops.matmul(Tensor(np.ones((4, 4), np.float32)), Tensor(np.ones((4, 4), np.float32)))  # float32 unaffected
for name, f in [("MatMul", lambda: ops.matmul(x, x)),
                ("BatchMatMul", lambda: ops.BatchMatMul()(x.reshape(1, 4, 4), x.reshape(1, 4, 4))),
                ("BatchMatMul", lambda: ops.matmul(x.reshape(2, 2, 4), x)),
                ("Conv2D", lambda: ops.conv2d(x.reshape(1, 1, 4, 4), x[:3, :3].reshape(1, 1, 3, 3)))]:
    try:
        f()
    except RuntimeError as e:
        assert f"For '{name}'" in str(e) and "avx512_bf16" in str(e) and "this CPU has" in str(e), str(e)
    else:
        raise AssertionError(name + " did not raise")
# empty operands: nothing to compute, the float32 path's result (an empty tensor; zeros for K = 0), as Conv2D
e = Tensor(np.ones((2, 0, 4), np.float32)).astype(ms.bfloat16)
r = ops.BatchMatMul()(e, Tensor(np.ones((2, 4, 3), np.float32)).astype(ms.bfloat16))
assert r.shape == (2, 0, 3) and r.dtype == ms.bfloat16, (r.shape, r.dtype)
r = ops.matmul(Tensor(np.ones((4, 0), np.float32)).astype(ms.bfloat16),
               Tensor(np.ones((0, 3), np.float32)).astype(ms.bfloat16))
assert r.shape == (4, 3) and r.dtype == ms.bfloat16 and (r.astype(ms.float32).asnumpy() == 0).all()
print("ok")
"""
    r = _run(code, KILN_LOW_PRECISION="native")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_env_float32_and_bad_values():
    r = _run("from kiln import runtime; print(runtime.low_precision()['mode'], runtime.low_precision()['bfloat16'])",
             KILN_LOW_PRECISION="Float32")
    assert r.returncode == 0 and r.stdout.split() == ["float32", "float32"], r.stderr
    r = _run("from kiln import runtime; runtime.low_precision()", KILN_LOW_PRECISION="fast")
    assert r.returncode != 0 and "KILN_LOW_PRECISION must be 'auto', 'native' or 'float32'" in r.stderr


def test_onednn_isa_cap_below_avx512_gives_float32_in_auto():
    """ONEDNN_MAX_CPU_ISA=AVX2 leaves oneDNN no bf16/f16 primitives on any x86 CPU: auto falls back to float32."""
    r = _run("from kiln import runtime; lp = runtime.low_precision(); print(lp['bfloat16'], lp['float16'], "
             "lp['supported']['bfloat16'])", ONEDNN_MAX_CPU_ISA="AVX2", KILN_LOW_PRECISION="auto")
    assert r.returncode == 0 and r.stdout.split() == ["float32", "float32", "False"], r.stderr
