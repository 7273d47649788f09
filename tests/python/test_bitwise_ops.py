"""Bit operations: one C++ op each (BitwiseAnd/Or/Xor, LeftShift, RightShift, Invert, Gcd, Lcm; src/ops/schema/
ops.yaml), Tensor's &, |, ^ (bitwise on integers, as MindSpore's; they were logical ops before), every integer dtype
including uint16/32/64. Expected values are MindSpore 2.10's (CPU), obtained with ../shared/tools/ms_oracle.py, and
NumPy's where MindSpore has no say; each is checked in PyNative and under kiln.jit."""
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, ops

A = np.array([5, -3, 12], np.int32)
B = np.array([3, 6, -7], np.int32)


def both_modes(fn, *args):
    """fn(*args) in PyNative and compiled (kiln.jit); the two results must agree; returns the first."""
    eager = fn(*args)
    graph = kiln.jit(fn)(*args)
    assert eager.dtype == graph.dtype and np.array_equal(eager.asnumpy(), graph.asnumpy()), (eager, graph)
    return eager


@pytest.mark.parametrize("fn, expected", [
    (lambda a, b: a & b, [1, 4, 8]),          # MindSpore 2.10: Tensor & Tensor is BitwiseAnd
    (lambda a, b: a | b, [7, -1, -3]),
    (lambda a, b: a ^ b, [6, -5, -11]),
    (lambda a, b: a ^ 1, [4, -4, 13]),
    (lambda a, b: a & 3, [1, 1, 0]),
    (lambda a, b: ops.bitwise_left_shift(a, 1), [10, -6, 24]),
    (lambda a, b: ops.gcd(a, b), [1, 3, 1]),
    (lambda a, b: ops.lcm(a, b), [15, 6, 84]),
    (lambda a, b: ops.lcm(a, 4), [20, 12, 12]),
    (lambda a, b: ops.BitwiseAnd()(a, a), [5, -3, 12]),
    (lambda a, b: a.bitwise_and(a), [5, -3, 12]),
])
def test_mindspore_values_int32(fn, expected):
    out = both_modes(fn, Tensor(A), Tensor(B))
    assert out.dtype == kiln.int32
    np.testing.assert_array_equal(out.asnumpy(), expected)


@pytest.mark.parametrize("fn, expected, dtype", [
    (lambda: Tensor(A) & Tensor(np.array([1, 2, 3], np.int64)), [1, 0, 0], kiln.int64),   # promoted, as MindSpore
    (lambda: ops.bitwise_and(Tensor(A), Tensor(np.array([1, 2, 3], np.int64))), [1, 0, 0], kiln.int64),
    (lambda: ops.gcd(Tensor(A), Tensor(np.array([1, 2, 3], np.int64))), [1, 1, 3], kiln.int64),
    (lambda: Tensor(np.array([7], np.int8)) & Tensor(np.array([3], np.uint8)), [3], kiln.int16),
    (lambda: Tensor(np.array([True])) & 2, [0], kiln.int64),
    (lambda: Tensor(np.array([True, False])) | 1, [1, 1], kiln.int64),
    (lambda: Tensor(np.array([True])) ^ True, [False], kiln.bool_),
    (lambda: Tensor(np.array([True, False])) & Tensor(np.array([True, True])), [True, False], kiln.bool_),
    (lambda: ops.bitwise_xor(Tensor(np.array([True])), Tensor(np.array([3], np.int8))), [2], kiln.int8),
    (lambda: ops.bitwise_and(Tensor(np.array([7], np.uint64)), Tensor(np.array([True]))), [1], kiln.uint64),
    (lambda: ops.bitwise_or(Tensor(np.array([1], np.uint16)), Tensor(np.array([1], np.uint16))), [1], kiln.uint16),
    (lambda: ops.bitwise_right_shift(Tensor(np.array([200], np.uint8)), 7), [1], kiln.uint8),
    (lambda: ops.bitwise_left_shift(Tensor(np.array([200], np.uint64)), 1), [400], kiln.uint64),
    (lambda: ops.bitwise_left_shift(Tensor(np.array([7], np.uint32)), 2), [28], kiln.uint32),
    (lambda: ops.invert(Tensor(np.array([7], np.uint64))), [18446744073709551608], kiln.uint64),
    (lambda: ops.gcd(Tensor(np.array([-2147483648], np.int32)), Tensor(np.array([0], np.int32))), [-2147483648],
     kiln.int32),
])
def test_mindspore_values_dtypes(fn, expected, dtype):
    out = fn()
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.asnumpy(), np.array(expected, dtype=out.asnumpy().dtype))


def test_invert_operator_is_logical_not_as_mindspore():
    # MindSpore 2.10: ~int_tensor and ~float_tensor are logical NOT (Bool); ops.invert is the bitwise NOT.
    np.testing.assert_array_equal((~Tensor(A)).asnumpy(), [False, False, False])
    np.testing.assert_array_equal((~Tensor(np.array([1.5], np.float32))).asnumpy(), [False])
    np.testing.assert_array_equal(ops.invert(Tensor(A)).asnumpy(), ~A)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_shifts_every_count(dtype):
    """Counts from -3 to bits + 3: inside [0, bits) as C/NumPy; outside, 0 (left) and the sign fill (right)."""
    bits = 8 * np.dtype(dtype).itemsize
    ii = np.iinfo(dtype)
    x = np.array([ii.min, -1 if ii.min < 0 else 1, 0, 1, 77, ii.max], dtype)
    signed = ii.min < 0
    counts = range(-3, bits + 4) if signed else range(0, bits + 4)
    for n in counts:
        nt = Tensor(np.full(x.shape, n, dtype))
        left = both_modes(ops.bitwise_left_shift, Tensor(x), nt).asnumpy()
        right = both_modes(ops.bitwise_right_shift, Tensor(x), nt).asnumpy()
        if 0 <= n < bits:
            want_l = np.left_shift(x, dtype(n))
            want_r = np.right_shift(x, dtype(n))
        else:
            want_l = np.zeros_like(x)
            want_r = np.where(x < 0, dtype(-1) if signed else 0, 0).astype(dtype)
        np.testing.assert_array_equal(left, want_l, err_msg=f"{dtype.__name__} << {n}")
        np.testing.assert_array_equal(right, want_r, err_msg=f"{dtype.__name__} >> {n}")


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_gcd_lcm_against_numpy(dtype):
    rng = np.random.default_rng(0)
    ii = np.iinfo(dtype)
    a = rng.integers(ii.min, ii.max, (50,), dtype=dtype, endpoint=True)
    b = rng.integers(-1000, 1000, (50,)).astype(dtype)
    a[:3] = [0, ii.min, ii.max]
    b[:4] = [0, 0, -1, 0]
    np.testing.assert_array_equal(both_modes(ops.gcd, Tensor(a), Tensor(b)).asnumpy(), np.gcd(a, b))
    if dtype != np.int16:
        np.testing.assert_array_equal(both_modes(ops.lcm, Tensor(a), Tensor(b)).asnumpy(), np.lcm(a, b))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: Tensor(np.array([1.5], np.float32)) & Tensor(np.array([2.5], np.float32)), TypeError,
     "BitwiseAnd.*integer or bool"),
    (lambda: Tensor(A) | Tensor(np.array([1.5, 1, 1], np.float32)), TypeError, "BitwiseOr"),
    (lambda: Tensor(A) & "x", TypeError, "unsupported operand"),
    (lambda: ops.bitwise_and(Tensor(np.array([1.5], np.float32)), 1), TypeError, "must be an integer Tensor"),
    (lambda: ops.bitwise_or(Tensor(np.array([1], np.uint16)), Tensor(np.array([1], np.int32))), TypeError,
     "implicit conversion"),
    (lambda: ops.bitwise_and(Tensor(np.array([7], np.uint16)), 5), TypeError, "implicit conversion"),
    (lambda: ops.bitwise_left_shift(Tensor(A), Tensor(np.array([1, 1, 1], np.int64))), TypeError, "same dtype"),
    (lambda: ops.bitwise_left_shift(Tensor(np.array([True])), 1), TypeError, "integer Tensor"),
    (lambda: ops.bitwise_left_shift(Tensor(np.array([1], np.uint8)), -1), ValueError, "out of the range"),
    (lambda: ops.invert(Tensor(np.array([True]))), TypeError, "integer Tensor"),
    (lambda: ops.invert(Tensor(np.array([1.5], np.float32))), TypeError, "integer Tensor"),
    (lambda: ops.gcd(Tensor(np.array([4], np.uint8)), Tensor(np.array([6], np.uint8))), TypeError, "Int16"),
    (lambda: ops.gcd(Tensor(A), 4), TypeError, "'other' must be an integer Tensor"),
    (lambda: ops.lcm(Tensor(np.array([4], np.int8)), Tensor(np.array([6], np.int8))), TypeError, "Int32"),
    (lambda: ops.bitwise_xor(Tensor(A), Tensor(np.array([1, 2], np.int32))), ValueError, "BitwiseXor"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("fn, name", [
    (lambda a, b: a & b, "BitwiseAnd"), (lambda a, b: a | b, "BitwiseOr"), (lambda a, b: a ^ b, "BitwiseXor"),
    (lambda a, b: ops.gcd(a, b), "Gcd"), (lambda a, b: ops.lcm(a, b), "Lcm"),
    (lambda a, b: ops.bitwise_left_shift(a, b), "LeftShift"), (lambda a, b: ops.bitwise_right_shift(a, b), "RightShift"),
    (lambda a, b: ops.invert(a), "Invert"),
])
def test_one_graph_node_each(fn, name):
    f = kiln.jit(fn)
    f(Tensor(A), Tensor(B))
    text = f.graphs[0].graph_before.to_text()
    assert re.findall(r"= (\w+)\(", text) == [name], text


class _Fn(kiln.nn.Cell):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *xs):
        return self.fn(*xs)


def test_onnx_export_runs_in_onnxruntime(tmp_path):
    """BitwiseAnd/Or/Xor/Not on integers; And/Or/Xor on Bool (ONNX's bitwise operators take no Bool)."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")

    def fn(a, b):
        m = (a > 0) & (b > 0)
        return (a & b) | (a ^ b), ops.invert(a), m | (a < b), m ^ (a == b)
    a, b = Tensor(np.array([5, -3, 12, 0], np.int32)), Tensor(np.array([3, 6, -7, 1], np.int32))
    path = str(tmp_path / "bits")
    kiln.export(_Fn(fn), a, b, file_name=path, file_format="ONNX")
    onnx.checker.check_model(onnx.load(path + ".onnx"), full_check=True)
    sess = ort.InferenceSession(path + ".onnx", providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: x.asnumpy() for i, x in zip(sess.get_inputs(), (a, b))})
    for g, w in zip(got, fn(a, b)):
        np.testing.assert_array_equal(g, w.asnumpy())

