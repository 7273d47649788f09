"""Reductions read their input in its own dtype (issue 22, item 4): counting, all/any and sums with a wider `dtype`
accumulate in registers, never in a widened copy of the input (before: ops.count_nonzero on 64 MiB of int8 peaked
at 576 MiB above its input, a cast to Int64; ops.all/any at 320 MiB, casts to Bool and Int32; ops.sum(x,
dtype=int64) at 512 MiB).

Peaks are the allocator's (kiln.runtime.max_memory_allocated, bytes of tensor blocks) in a fresh interpreter;
values are checked against NumPy's."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, ops

from helpers import subprocess_env

MiB = 1 << 20


def _run(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env=subprocess_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


_PEAKS = """
import numpy as np
import kiln as ms
from kiln import Tensor, ops, runtime
import kiln.numpy as mnp
MiB = 1 << 20
a = np.random.default_rng(0).integers(-2, 3, size=(1024, 64 * 1024), dtype=np.int8)   # 64 MiB, ~40% zeros
x = Tensor(a)
b = a.astype(bool)
xb = Tensor(b)
cases = {
    "count_nonzero": (lambda: ops.count_nonzero(x), np.count_nonzero(a)),
    "count_nonzero axis 0": (lambda: ops.count_nonzero(x, axis=0), np.count_nonzero(a, axis=0)),
    "count_nonzero bool": (lambda: ops.count_nonzero(xb), np.count_nonzero(b)),
    "sum": (lambda: ops.sum(x), a.sum(dtype=np.int64)),
    "sum dtype int64": (lambda: ops.sum(x, dtype=ms.int64), a.sum(dtype=np.int64)),
    "sum dtype float32 axis 1": (lambda: ops.sum(x, 1, dtype=ms.float32), a.sum(axis=1, dtype=np.float32)),
    "Tensor.sum dtype int32": (lambda: x.sum(dtype=ms.int32), a.sum(dtype=np.int64)),
    "mindspore.numpy.sum": (lambda: mnp.sum(x), a.sum(dtype=np.int64)),
    "ReduceSum bool": (lambda: ops.ReduceSum()(xb), b.sum(dtype=np.int64)),
    "all": (lambda: ops.all(x), a.all()),
    "any axis 1": (lambda: ops.any(x, 1), a.any(axis=1)),
    "all bool": (lambda: ops.all(xb, 0), b.all(axis=0)),
    "mean": (lambda: ops.mean(x), np.float32(a.mean())),
    "prod axis 0": (lambda: ops.prod(x[:40], 0), a[:40].prod(axis=0, dtype=np.int64)),
    "amax": (lambda: ops.amax(x), a.max()),
    "argmax axis 1": (lambda: ops.argmax(x, 1), a.argmax(axis=1)),
}
out = {}
for name, (f, want) in cases.items():
    runtime.reset_peak_memory_stats()
    base = runtime.memory_allocated()
    r = f()
    extra = runtime.max_memory_allocated() - base
    got = r.asnumpy()
    out[name] = (extra, str(r.dtype), bool(np.array_equal(got, want) if got.dtype.kind != "f"
                                           else np.allclose(got, want, rtol=1e-6)))
    del r
print(out)
"""

# The output's own bytes are allowed (count_nonzero axis 0: 64 Ki Int64 counts, then their Int32 cast); nothing of
# the input's size is.
_OUTPUT_SLACK = 2 * MiB


def test_reductions_do_not_widen_their_input():
    out = _run(_PEAKS)
    dtypes = {"count_nonzero": "Int32", "count_nonzero axis 0": "Int32", "count_nonzero bool": "Int32",
              "sum": "Int64", "sum dtype int64": "Int64", "sum dtype float32 axis 1": "Float32",
              "Tensor.sum dtype int32": "Int32", "mindspore.numpy.sum": "Int64", "ReduceSum bool": "Int64",
              "all": "Bool", "any axis 1": "Bool", "all bool": "Bool", "mean": "Float32", "prod axis 0": "Int64",
              "amax": "Int8", "argmax axis 1": "Int64"}
    for name, (extra, dtype, equal) in out.items():
        assert equal, name
        assert dtype == dtypes[name], (name, dtype)
        assert extra <= _OUTPUT_SLACK, f"{name}: {extra / MiB:.1f} MiB above its 64 MiB int8 input"


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16, np.float32,
                                np.float64, np.bool_])
def test_count_all_any_values_and_dtypes(dt):
    rng = np.random.default_rng(1)
    a = rng.integers(-1, 2, size=(3, 5, 7)).astype(dt)
    if np.dtype(dt).kind == "f":
        a[0, 0, 0], a[1, 2, 3], a[2, 4, 6] = np.nan, -0.0, np.inf  # NaN and inf count as nonzero, -0.0 as zero
    x = Tensor(a)
    for axis in [None, 0, 1, 2, (0, 2), (1, -1), ()]:
        np_axis = None if axis == () else axis
        c = ops.count_nonzero(x, axis=() if axis is None else axis)
        assert c.dtype == ms.int32
        np.testing.assert_array_equal(c.asnumpy(), np.count_nonzero(a, axis=np_axis).astype(np.int32))
        if axis != ():
            for keep in (False, True):
                al, an = ops.all(x, axis, keep), ops.any(x, axis, keep)
                assert al.dtype == an.dtype == ms.bool_
                np.testing.assert_array_equal(al.asnumpy(), np.all(a, axis=axis, keepdims=keep))
                np.testing.assert_array_equal(an.asnumpy(), np.any(a, axis=axis, keepdims=keep))
    c = ops.count_nonzero(x, axis=1, keep_dims=True, dtype=ms.int64)
    assert c.dtype == ms.int64 and c.shape == (3, 1, 7)
    np.testing.assert_array_equal(c.asnumpy(), np.count_nonzero(a, axis=1, keepdims=True))


def test_count_all_any_edge_cases():
    e = Tensor(np.zeros((0, 3), np.int8))
    np.testing.assert_array_equal(ops.count_nonzero(e, axis=0).asnumpy(), np.zeros(3, np.int32))
    np.testing.assert_array_equal(ops.all(e, 0).asnumpy(), np.ones(3, bool))    # NumPy's identities
    np.testing.assert_array_equal(ops.any(e, 0).asnumpy(), np.zeros(3, bool))
    assert ops.all(e, 1).shape == (0,) and ops.any(e, 1).shape == (0,)
    s = Tensor(np.array(3, np.int16))
    assert int(ops.count_nonzero(s).asnumpy()) == 1 and bool(ops.all(s).asnumpy()) and bool(ops.any(s, 0).asnumpy())
    t = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))[:, 1:3]   # a strided view
    np.testing.assert_array_equal(ops.count_nonzero(t, axis=0).asnumpy(), [3, 3])
    with pytest.raises(ValueError, match="count_nonzero"):
        ops.count_nonzero(Tensor(np.ones((2, 2))), axis=2)
    with pytest.raises(ValueError, match="all"):
        ops.all(Tensor(np.ones((2, 2))), 3)
    with pytest.raises(TypeError, match="count_nonzero"):
        ops.count_nonzero(np.ones(3))


@pytest.mark.parametrize("src", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.float16])
@pytest.mark.parametrize("dst", [ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint32, ms.float32, ms.float64])
def test_sum_with_dtype_equals_cast_then_sum(src, dst):
    """sum(x, dtype=d) is NumPy's np.sum(a, dtype=d): the sum of x cast to d, returned in d (MindSpore: "the desired
    data type of the returned Tensor"), whether or not Kiln skips the cast (it does when the cast keeps every value),
    on axes and over everything."""
    from kiln import _core
    rng = np.random.default_rng(2)
    a = rng.integers(0 if np.dtype(src).kind in "ub" else -300, 300, size=(4, 6)).astype(src)
    x = Tensor(a)
    for axis in (None, 0, (0, 1)):
        np_dst = np.dtype(_core.dtype_numpy_name(dst))
        with np.errstate(all="ignore"):
            want = np.asarray(np.sum(a.astype(np_dst), axis=axis, dtype=np_dst))
        got = ops.sum(x, axis, dtype=dst)
        assert got.dtype == dst, (axis, got.dtype, dst)
        np.testing.assert_array_equal(got.asnumpy(), want)
        got_t = x.sum(axis, dtype=dst)
        assert got_t.dtype == dst
        np.testing.assert_array_equal(got_t.asnumpy(), want)
    # nansum, mint.prod and mint.mean with a dtype: the same rule (the reference casts first).
    from kiln import mint
    xc = _core.cast(x, dst)
    for got, want in ((ops.nansum(x, 1, dtype=dst), _core.cast(ops.nansum(xc, 1), dst)),
                      (mint.prod(x, 0, dtype=dst), _core.cast(mint.prod(xc, 0), dst)),
                      (mint.mean(x, 1, dtype=dst), mint.mean(xc, 1)) if mstype_is_float(dst) else (None, None)):
        if got is None:
            continue
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def mstype_is_float(d):
    return d in (ms.float16, ms.bfloat16, ms.float32, ms.float64)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.bool_, np.int32])
def test_narrow_integer_sums_at_every_length(dt):
    """Sums of 1- and 2-byte integers read directly (as sum(dtype=...) now does): GCC 12 vectorized the kernel's
    lane loop wrongly for them (24 ones of Int8 summed to 9; src/ops/reduce.cpp, Note [GCC 12 narrow-integer
    reductions])."""
    for n in range(1, 81):
        a = (np.arange(n) * 7 % 5 - 2).astype(dt)
        x = Tensor(a)
        assert int(ops.sum(x).asnumpy()) == int(a.sum(dtype=np.int64)), n
        assert int(ops.sum(x.reshape(1, n), 1).asnumpy()[0]) == int(a.sum(dtype=np.int64)), n
        assert int(ops.count_nonzero(x).asnumpy()) == np.count_nonzero(a), n


def test_count_all_any_export_to_onnx(tmp_path):
    """CountNonZero, ReduceAll and ReduceAny export as Cast/ReduceSum (docs/export.md) and onnxruntime agrees."""
    ort = pytest.importorskip("onnxruntime")
    from kiln import nn

    class Net(nn.Cell):
        def construct(self, x):
            return ops.count_nonzero(x, axis=1), ops.all(x, 1), ops.any(x, 0, True), ops.count_nonzero(x)

    x = np.array([[0, 1.5, np.nan, -0.0], [0, 0, 0, 0], [1, 2, 3, 4]], np.float32)
    net = Net()
    ms.export(net, Tensor(x), file_name=str(tmp_path / "cnz"), file_format="ONNX")
    sess = ort.InferenceSession(str(tmp_path / "cnz.onnx"))
    got = sess.run(None, {sess.get_inputs()[0].name: x})
    for g, w in zip(got, net(Tensor(x))):
        assert g.dtype == w.asnumpy().dtype
        np.testing.assert_array_equal(g, w.asnumpy())
