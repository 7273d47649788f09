"""Kernels split over the OpenMP threads (issue 9): BatchMatMul's batch split and its one-GEMM path for a weight
shared by the batch (src/ops/matmul.cpp, Note [batched matmul threads]), elementwise ops whose inner runs are short
(broadcast operands, strided views: cpu::strided_loop_par in src/backend/cpu/loops.h), FusedElementwise's blocks
and Softmax/LogSoftmax rows. Values against NumPy (float64 references), and the same numbers bit for bit on 1 and
2 threads (each product / element / row is computed by the same code whatever the split).

Thread counts are set with libgomp's omp_set_num_threads (the library Kiln's kernels use; it applies to the calling
thread, which runs PyNative kernels) and restored after each test."""
import ctypes

import numpy as np
import pytest

import kiln
from kiln import Tensor, _core, ops

_gomp = ctypes.CDLL("libgomp.so.1")


@pytest.fixture
def threads():
    """set(n): run the kernels of this thread with n OpenMP threads; the previous count is restored after."""
    saved = _gomp.omp_get_max_threads()
    yield _gomp.omp_set_num_threads
    _gomp.omp_set_num_threads(saved)


def _on(threads, n, f):
    threads(n)
    return f()


def _rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _mm_ref(a, b, ta, tb):
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


# (a shape, b shape, transpose_a, transpose_b): attention-sized batches (above the threading threshold of 2·128³
# flops), broadcast batch dims, a batch that does not divide the thread count, and a weight shared by the batch.
BATCHED = [
    ((8, 4, 64, 32), (8, 4, 64, 32), False, True),   # Q·Kᵀ
    ((8, 4, 64, 64), (8, 4, 64, 32), False, False),  # A·V
    ((8, 4, 64, 64), (8, 4, 64, 32), True, False),   # dV = Aᵀ·G
    ((8, 4, 32, 64), (8, 4, 64, 32), True, True),
    ((3, 1, 96, 80), (1, 5, 80, 72), False, False),  # broadcast batch dims, 15 products
    ((3, 128, 96), (3, 96, 128), False, False),      # 3 products on 2 threads
    ((16, 64, 128), (128, 96), False, False),        # shared weight: one (1024, 128)·(128, 96) GEMM
    ((16, 64, 128), (96, 128), False, True),
    ((2, 8, 64, 128), (128, 64), False, False),
    ((16, 128, 64), (128, 96), True, False),         # left operand transposed: no row collapse, batch split
]


@pytest.mark.parametrize("sa,sb,ta,tb", BATCHED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_matmul_matches_numpy_and_is_thread_independent(threads, sa, sb, ta, tb, dtype):
    rng = np.random.default_rng(0)
    a, b = _rand(rng, sa, dtype), _rand(rng, sb, dtype)
    f = lambda: _core.matmul(Tensor(a), Tensor(b), ta, tb).asnumpy()
    two = _on(threads, 2, f)
    one = _on(threads, 1, f)
    ref = _mm_ref(a, b, ta, tb)
    assert two.shape == ref.shape and two.dtype == dtype
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(two, ref, rtol=tol, atol=tol * np.abs(ref).max())
    np.testing.assert_array_equal(two, one)


def test_batched_matmul_strided_operands(threads):
    """Views (the attention heads' transposes) are read in place; a non-row operand is copied first."""
    rng = np.random.default_rng(1)
    q = _rand(rng, (8, 64, 4, 32))
    k = _rand(rng, (8, 64, 4, 32))
    threads(2)
    qt = ops.transpose(Tensor(q), (0, 2, 1, 3))
    kt = ops.transpose(Tensor(k), (0, 2, 3, 1))
    got = ops.matmul(qt, kt).asnumpy()
    ref = np.matmul(q.transpose(0, 2, 1, 3).astype(np.float64), k.transpose(0, 2, 3, 1).astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())
    # A 3-D operand whose batches do not follow each other row after row (every other batch): the batch split.
    x = _rand(rng, (32, 64, 128))
    w = _rand(rng, (128, 64))
    got = ops.matmul(Tensor(x)[::2], Tensor(w)).asnumpy()
    ref = _mm_ref(x[::2], w, False, False)
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())


def test_batched_matmul_integer_and_half(threads):
    rng = np.random.default_rng(2)
    threads(2)
    a = rng.integers(-5, 5, (8, 4, 64, 32)).astype(np.int32)
    b = rng.integers(-5, 5, (8, 4, 32, 64)).astype(np.int32)
    np.testing.assert_array_equal(ops.matmul(Tensor(a), Tensor(b)).asnumpy(), np.matmul(a, b))
    np.testing.assert_array_equal(ops.matmul(Tensor(a), Tensor(b[0, 0])).asnumpy(), np.matmul(a, b[0, 0]))
    h = _rand(rng, (8, 4, 64, 32)).astype(np.float16)
    g = _rand(rng, (8, 4, 32, 64)).astype(np.float16)
    got = ops.matmul(Tensor(h), Tensor(g)).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, np.matmul(h.astype(np.float32), g.astype(np.float32)), rtol=2e-3, atol=2e-2)


def test_batched_matmul_empty_and_zero_inner(threads):
    threads(2)
    z = ops.matmul(Tensor(np.ones((64, 8, 0), np.float32)), Tensor(np.ones((64, 0, 8), np.float32))).asnumpy()
    np.testing.assert_array_equal(z, np.zeros((64, 8, 8), np.float32))
    z = ops.matmul(Tensor(np.ones((64, 8, 0), np.float32)), Tensor(np.ones((0, 8), np.float32))).asnumpy()
    np.testing.assert_array_equal(z, np.zeros((64, 8, 8), np.float32))
    e = ops.matmul(Tensor(np.ones((0, 8, 4), np.float32)), Tensor(np.ones((4, 8), np.float32)))
    assert e.shape == (0, 8, 8)
    e = ops.matmul(Tensor(np.ones((64, 0, 4), np.float32)), Tensor(np.ones((64, 4, 8), np.float32)))
    assert e.shape == (64, 0, 8)
    with pytest.raises(ValueError, match="MatMul"):
        ops.matmul(Tensor(np.ones((64, 8, 5), np.float32)), Tensor(np.ones((4, 8), np.float32)))


@pytest.mark.parametrize("shared_weight", [False, True])
def test_batched_matmul_gradients(threads, shared_weight):
    """d(sum(w ⊙ A·B)) against the NumPy formulas, on the threaded paths (the bprop's products are batched too)."""
    rng = np.random.default_rng(3)
    threads(2)
    a = _rand(rng, (16, 64, 128), np.float64)
    b = _rand(rng, (128, 96) if shared_weight else (16, 128, 96), np.float64)
    w = _rand(rng, (16, 64, 96), np.float64)
    da, db = kiln.grad(lambda x, y: ops.sum(ops.mul(ops.matmul(x, y), Tensor(w))), grad_position=(0, 1))(
        Tensor(a), Tensor(b))
    bt = np.swapaxes(b, -1, -2)
    np.testing.assert_allclose(da.asnumpy(), np.matmul(w, bt), rtol=1e-10)
    ref_db = np.matmul(np.swapaxes(a, -1, -2), w)
    np.testing.assert_allclose(db.asnumpy(), ref_db.sum(0) if shared_weight else ref_db, rtol=1e-10)


# ---- elementwise ops with short inner runs: the runs are split over the threads ----

BROADCASTS = [
    ((64, 64, 128), (128,)),      # bias row
    ((64, 64, 128), (64, 64, 1)),  # per-row statistic (LayerNorm)
    ((256, 1, 130), (1, 257, 1)),  # outer product-like broadcast, odd sizes
    ((3, 40000), (3, 1)),          # long inner runs (parallel_runs inside each)
]


@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_broadcast_binary_ops_thread_independent(threads, sa, sb):
    rng = np.random.default_rng(4)
    a, b = _rand(rng, sa), _rand(rng, sb)
    for op, ref in ((ops.add, np.add), (ops.mul, np.multiply), (ops.sub, np.subtract), (ops.div, np.divide),
                    (ops.maximum, np.maximum), (ops.greater, np.greater)):
        two = _on(threads, 2, lambda: op(Tensor(a), Tensor(b)).asnumpy())
        one = _on(threads, 1, lambda: op(Tensor(a), Tensor(b)).asnumpy())
        np.testing.assert_array_equal(two, ref(a, b))
        np.testing.assert_array_equal(two, one)


def test_strided_unary_and_select_thread_independent(threads):
    rng = np.random.default_rng(5)
    x = _rand(rng, (128, 96, 40))
    xt = np.transpose(x, (2, 0, 1))  # inner runs of stride 40 x 96 elements
    for f, ref in ((ops.exp, np.exp), (ops.neg, np.negative), (ops.tanh, np.tanh), (ops.relu, lambda v: np.maximum(v, 0))):
        two = _on(threads, 2, lambda: f(ops.transpose(Tensor(x), (2, 0, 1))).asnumpy())
        one = _on(threads, 1, lambda: f(ops.transpose(Tensor(x), (2, 0, 1))).asnumpy())
        np.testing.assert_array_equal(two, one)
        np.testing.assert_allclose(two, ref(xt.astype(np.float64)), rtol=4e-7, atol=1e-30)
    c = rng.random((128, 96, 1)) > 0.5
    y = _rand(rng, (96, 40))
    threads(2)
    got = ops.select(Tensor(c), Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_array_equal(got, np.where(c, x, y))


def test_fused_elementwise_blocks_thread_independent(threads):
    """Graph mode fuses the chain into one FusedElementwise op; its blocks split over threads give PyNative's values."""
    rng = np.random.default_rng(6)
    x = _rand(rng, (300, 517))  # 155,100 elements: several chunks of blocks, a partial last block

    def g(t):
        return ops.tanh(ops.mul(ops.add(ops.exp(ops.mul(t, 0.1)), 1.0), t))

    jf = kiln.jit(g)
    two = _on(threads, 2, lambda: jf(Tensor(x)).asnumpy())
    one = _on(threads, 1, lambda: jf(Tensor(x)).asnumpy())
    assert "FusedElementwise" in jf.graphs[0].graph.to_text()
    np.testing.assert_array_equal(two, one)
    np.testing.assert_array_equal(two, _on(threads, 2, lambda: g(Tensor(x)).asnumpy()))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(two, np.tanh((np.exp(x64 * 0.1) + 1.0) * x64), rtol=1e-6, atol=1e-6)


# ---- softmax rows ----

def _softmax_ref(x, axis, log=False):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return (x - m) - np.log(s) if log else e / s


@pytest.mark.parametrize("shape,axis", [((16, 4, 64, 64), -1), ((16, 4, 64, 64), 1), ((33, 1027), 1),
                                        ((70000,), 0), ((5, 3), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_numpy_and_is_thread_independent(threads, shape, axis, log):
    rng = np.random.default_rng(7)
    x = (_rand(rng, shape) * 8).astype(np.float32)
    f = ops.log_softmax if log else ops.softmax
    two = _on(threads, 2, lambda: f(Tensor(x), axis).asnumpy())
    one = _on(threads, 1, lambda: f(Tensor(x), axis).asnumpy())
    np.testing.assert_array_equal(two, one)
    # The row sum is sequential in float32: a 70,000-element row drifts to ~1.5e-5 relative.
    tol = 3e-5 if shape[axis] > 10_000 else 1e-6
    # log_softmax = (x − max) − log(sum): log(sum)'s float32 rounding is absolute (~1e-6 at sums of ~100).
    np.testing.assert_allclose(two, _softmax_ref(x, axis, log), rtol=tol, atol=1e-5 if log else tol)
    if not log:
        np.testing.assert_allclose(two.sum(axis=axis, dtype=np.float64), 1.0, rtol=3 * tol)


def test_softmax_other_dtypes_and_special_values(threads):
    threads(2)
    rng = np.random.default_rng(8)
    x = _rand(rng, (64, 1024), np.float64)
    np.testing.assert_allclose(ops.softmax(Tensor(x), -1).asnumpy(), _softmax_ref(x, -1), rtol=1e-14)
    h = _rand(rng, (64, 1024)).astype(np.float16)
    got = ops.softmax(Tensor(h), -1).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), _softmax_ref(h, -1), rtol=2e-3, atol=1e-5)
    s = np.zeros((40, 1000), np.float32)
    s[0, :3] = [np.inf, 1.0, 2.0]  # inf - inf: NaN row, as NumPy
    s[1, :] = -np.inf
    s[2, 5] = np.nan
    s[3, :] = -1e4
    s[3, 7] = 0.0  # exp(-1e4) underflows to 0 exactly: a one-hot row
    with np.errstate(all="ignore"):
        ref = _softmax_ref(s, -1)
    got = ops.softmax(Tensor(s), -1).asnumpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[3], ref[3].astype(np.float32))
    np.testing.assert_allclose(got[4:], ref[4:], rtol=1e-6)


# ---- reductions split along a kept axis (src/ops/reduce.cpp, Note [threaded reductions]) ----

# (shape, axis, strided): bias gradients (sum over the rows), LayerNorm statistics (the last axis), a middle axis,
# a transposed (non-contiguous) input, a kept axis of 2 (fewer chunks than 4 per thread), a kept axis that does not
# divide the thread count, and a reduction over every axis (stays on one thread).
REDUCTIONS = [
    ((1024, 512), (0,), False),
    ((16, 64, 128), (0, 1), False),
    ((16, 64, 128), (2,), False),
    ((16, 64, 128), (1,), False),
    ((96, 512), (1,), True),
    ((2, 40000), (1,), False),
    ((37, 3, 1001), (0, 2), False),
    ((300, 517), (), False),
]


@pytest.mark.parametrize("shape,axis,strided", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_match_numpy_and_are_thread_independent(threads, shape, axis, strided, dtype):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(shape) * 4).astype(dtype)

    def make():
        t = Tensor(x.T.copy()) if strided else Tensor(x)
        return ops.transpose(t, (1, 0)) if strided else t

    ax = axis if axis else None
    for f, ref in ((lambda t: ops.sum(t, ax, True), lambda a: a.sum(axis=ax, keepdims=True)),
                   (lambda t: ops.mean(t, ax), lambda a: a.mean(axis=ax)),
                   (lambda t: ops.amax(t, ax), lambda a: a.max(axis=ax)),
                   (lambda t: ops.amin(t, ax, True), lambda a: a.min(axis=ax, keepdims=True))):
        two = _on(threads, 2, lambda: f(make()).asnumpy())
        one = _on(threads, 1, lambda: f(make()).asnumpy())
        np.testing.assert_array_equal(two, one)
        want = ref(x.astype(np.float64)) if dtype != np.int32 else ref(x.astype(np.int64))
        if dtype == np.int32:
            np.testing.assert_allclose(two, want, rtol=1e-7)  # the mean is a float
        else:
            np.testing.assert_allclose(two, want, rtol=1e-6 if dtype == np.float32 else 1e-13, atol=1e-5)


def test_reduction_nan_and_empty_kept_axis(threads):
    threads(2)
    x = np.ones((64, 1024), np.float32)
    x[5, 7] = np.nan
    got = ops.sum(Tensor(x), 1).asnumpy()
    assert np.isnan(got[5]) and np.isnan(got).sum() == 1
    np.testing.assert_array_equal(got[:5], 1024.0)
    got = ops.amax(Tensor(x), 1).asnumpy()
    assert np.isnan(got[5]) and np.isnan(got).sum() == 1
    assert ops.sum(Tensor(np.ones((0, 50000), np.float32)), 0).shape == (50000,)
    np.testing.assert_array_equal(ops.sum(Tensor(np.ones((50000, 0), np.float32)), 1).asnumpy(),
                                  np.zeros(50000, np.float32))


def test_strided_copies_thread_independent(threads):
    """A transposed view made contiguous (Reshape of a transpose, .contiguous()) and a dtype-changing copy."""
    rng = np.random.default_rng(10)
    x = _rand(rng, (16, 64, 4, 32))
    want = np.ascontiguousarray(np.transpose(x, (0, 2, 1, 3))).reshape(16, 4, 2048)
    for n in (2, 1):
        threads(n)
        got = ops.reshape(ops.transpose(Tensor(x), (0, 2, 1, 3)), (16, 4, 2048)).asnumpy()
        np.testing.assert_array_equal(got, want)
    big = _rand(rng, (300, 517))
    threads(2)
    np.testing.assert_array_equal(ops.cast(Tensor(big), kiln.float64).asnumpy(), big.astype(np.float64))
    np.testing.assert_array_equal(_core.tensor_copy(Tensor(big)).asnumpy(), big)  # contiguous: memcpy in chunks


# ---- the OpenMP wait policy set by kiln/_loader.py (docs/decisions/openmp-workers-spin.md) ----

@pytest.mark.parametrize("env,want", [({}, "1000"), ({"OMP_WAIT_POLICY": "PASSIVE"}, None)])
def test_loader_sets_a_short_openmp_spin_unless_the_user_chose(env, want):
    import os
    import subprocess
    import sys
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    code = "import os, kiln; print(os.environ.get('GOMP_SPINCOUNT'))"
    out = subprocess.run([sys.executable, "-c", code], env=dict(base, **env), capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == [str(want)]
