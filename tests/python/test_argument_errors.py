"""Errors for values that do not fit and wrong arguments (issue 7 items 5 and 18): Python ints beyond Int64 in
arithmetic, NaN/inf/out-of-range floats into integer tensors, Parameter.set_data of arrays, empty-tensor truth
values, graph-mode advice per construct, ragged index lists, all-False masks, abs(-0.0), pooling padding."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


def _float():
    return Tensor(np.array([1.0, -2.0], np.float32))


@pytest.mark.parametrize("op, fn", [("Add", lambda a, b: a + b), ("Sub", lambda a, b: a - b),
                                    ("Mul", lambda a, b: a * b), ("Div", lambda a, b: a / b),
                                    ("Add", lambda a, b: b + a), ("Mul", lambda a, b: b * a),
                                    ("Add", ops.add), ("Mul", ops.mul), ("Sub", ops.sub)])
def test_big_python_int_against_a_float_tensor_is_a_float(op, fn):
    """NumPy: a Python int beyond int64 against a float array is the float float(x)."""
    big = 2**70
    x = _float()
    expected = fn(x.asnumpy(), np.float32(float(big)))
    np.testing.assert_allclose(fn(x, big).asnumpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype, big, np_dtype", [(ms.uint8, 2**70, np.uint8), (ms.int64, 2**63, np.int64),
                                                  (ms.int32, -2**64, np.int32)])
@pytest.mark.parametrize("op, fn", [("Add", lambda a, b: a + b), ("Mul", lambda a, b: a * b),
                                    ("Add", lambda a, b: b + a), ("Mul", ops.mul), ("Sub", ops.sub)])
def test_big_python_int_against_an_integer_tensor_raises_overflow_naming_the_op(op, fn, dtype, big, np_dtype):
    x = Tensor(np.array([1, 2], np_dtype))
    with pytest.raises(OverflowError):  # NumPy 2 raises too
        fn(x.asnumpy(), big)
    with pytest.raises(OverflowError, match=f"For '{op}', Python integer {big} out of bounds for {dtype}"):
        fn(x, big)


def test_python_int_out_of_the_tensor_dtype_names_the_op():
    u8 = Tensor(np.array([1, 2], np.uint8))
    for fn, op in ((lambda: u8 + 300, "Add"), (lambda: ops.mul(u8, -1), "Mul"), (lambda: 300 - u8, "Sub")):
        with pytest.raises(OverflowError, match=f"^For '{op}', Python integer -?300|^For '{op}', Python integer -1"):
            fn()
    np.testing.assert_array_equal((u8 + 200).asnumpy(), np.array([1, 2], np.uint8) + 200)


def test_tensor_of_a_big_int_names_tensor():
    with pytest.raises(OverflowError, match="^For 'Tensor', Python integer 18446744073709551616 out of bounds"):
        Tensor(2**64)


@pytest.mark.parametrize("data, dtype, np_dtype, kind, match", [
    ([float("nan")], ms.int32, np.int32, ValueError, "cannot convert float NaN to integer"),
    (float("nan"), ms.uint8, np.uint8, ValueError, "cannot convert float NaN to integer"),
    ([float("inf")], ms.int32, np.int32, OverflowError, "Python float inf out of bounds for Int32"),
    ([1e20], ms.int32, np.int32, OverflowError, r"Python float 1e\+20 out of bounds for Int32\.$"),
    ([True, 300.0], ms.uint8, np.uint8, OverflowError, r"Python float 300.0 out of bounds for UInt8\.$"),
    ([-1.5], ms.uint8, np.uint8, OverflowError, r"Python float -1.5 out of bounds for UInt8\.$"),
])
def test_python_floats_that_do_not_fit_an_integer_dtype_raise_as_numpy(data, dtype, np_dtype, kind, match):
    with pytest.raises(kind):
        np.array(data, dtype=np_dtype)
    with pytest.raises(kind, match="^For 'Tensor', " + match):
        Tensor(data, dtype)


def test_python_floats_that_fit_are_truncated_as_numpy():
    for data in ([255.9, -0.5], [0.0, 254.2]):
        np.testing.assert_array_equal(Tensor(data, ms.uint8).asnumpy(), np.array(data, dtype=np.uint8))


def test_set_data_of_an_array_follows_the_tensor_rule():
    p = Parameter(Tensor(np.array([1, 2], np.uint8)), name="p")
    with pytest.raises(TypeError, match="can not be converted to current dtype implicitly"):
        p.set_data(np.array([300, 1]))  # int64 array, as Tensor(np.array([300, 1]))
    with pytest.raises(TypeError, match="can not be converted to current dtype implicitly"):
        p.set_data(Tensor(np.array([300, 1])))
    np.testing.assert_array_equal(p.asnumpy(), [1, 2])
    p.set_data(np.array([7, 9], np.uint8))
    np.testing.assert_array_equal(p.asnumpy(), [7, 9])
    q = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="q")
    q.set_data(np.array([3, 4], np.int64))  # a lower category widens implicitly, as with a Tensor
    np.testing.assert_array_equal(q.asnumpy(), [3.0, 4.0])
    with pytest.raises(OverflowError, match="300"):
        Parameter(Tensor(np.array(1, np.uint8)), name="r").set_data(300)


def test_truth_value_of_an_empty_tensor_says_it_is_empty():
    with pytest.raises(ValueError):
        bool(np.zeros(0))
    with pytest.raises(ValueError, match="empty"):
        bool(Tensor(np.zeros(0, np.float32)))
    with pytest.raises(ValueError, match="more than one element"):
        bool(Tensor(np.zeros(2, np.float32)))
    assert bool(Tensor(np.ones(1, np.float32)))


@pytest.mark.parametrize("construct, advice", [("item", "Keep the value as a Tensor"),
                                               ("float", "Keep the value as a Tensor"),
                                               ("bool", "ops.select")])
def test_graph_mode_value_errors_give_advice_for_the_construct(construct, advice):
    # (`if x > 0:` itself compiles since issue 11: tests/python/test_control_flow.py, and so does bool() of a
    # one-element tensor: test_graph_python.py; bool() of several elements has no truth value.)
    def f(x):
        if construct == "item":
            return x * x.item()
        if construct == "float":
            return x * float(x)
        if bool(x > 0):  # x has 2 elements: no truth value (one element would be a tensor condition)
            return x
        return -x
    # Under jit_syntax_level=LAX (the default) a value read runs the function in PyNative (tests/python/
    # test_graph_python.py); STRICT gives the error.
    ms.set_context(jit_syntax_level=ms.STRICT)
    try:
        with pytest.raises(RuntimeError) as info:
            ms.jit(f)(Tensor(np.float32(2.0)) if construct != "bool" else Tensor(np.float32([2.0, 3.0])))
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)
    msg = str(info.value)
    assert advice in msg, msg
    if construct != "bool":
        assert "ops.select" not in msg, msg
    if construct != "bool":
        np.testing.assert_allclose(f(Tensor(np.float32(2.0))).asnumpy(), 4.0)


def test_ragged_index_list_raises_index_error():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(ValueError):
        np.zeros((2, 3))[[[0], [1, 2]]]
    with pytest.raises(IndexError, match="ragged"):
        x[[[0], [1, 2]]]
    with pytest.raises(IndexError, match="ragged"):
        x[[[0], [1, 2]]] = 1.0
    np.testing.assert_array_equal(x[[[0], [1]]].asnumpy(), x.asnumpy()[[[0], [1]]])


def test_all_false_mask_assignment_checks_the_value_shape():
    x = Tensor(np.ones(3, np.float32))
    mask = np.zeros(3, bool)
    with pytest.raises(ValueError):
        x.asnumpy().copy()[mask] = np.ones(2, np.float32)
    with pytest.raises(ValueError, match="can not be broadcast"):
        x[Tensor(mask)] = Tensor(np.ones(2, np.float32))
    x[Tensor(mask)] = Tensor(np.ones(1, np.float32))  # broadcasts to the empty region: nothing changes
    x[Tensor(mask)] = 5.0
    np.testing.assert_array_equal(x.asnumpy(), np.ones(3, np.float32))


@pytest.mark.parametrize("np_dtype", [np.float16, np.float32, np.float64])
def test_abs_of_negative_zero_is_positive_zero(np_dtype):
    x = np.array([-0.0, 0.0, -1.5, np.nan], np_dtype)
    for y in (ops.abs(Tensor(x)), ms.jit(lambda t: ops.abs(t) * 1)(Tensor(x))):
        r = y.asnumpy()
        np.testing.assert_array_equal(np.signbit(r), np.signbit(np.abs(x)))
        np.testing.assert_array_equal(r, np.abs(x))


def test_avg_pool_padding_rule_matches_max_pool():
    """MindSpore refuses pads larger than half the kernel for both poolings (AvgPool at call, MaxPool too)."""
    for cls in (nn.AvgPool2d, nn.MaxPool2d):
        with pytest.raises(ValueError, match="at most half of 'kernel_size'"):
            cls(2, 1, pad_mode="pad", padding=3)
        y = cls(2, 1, pad_mode="pad", padding=1)(Tensor(np.ones((1, 1, 4, 4), np.float32)))
        assert y.shape == (1, 1, 5, 5)
    with pytest.raises(ValueError, match="For 'avg_pool2d'"):
        ops.avg_pool2d(Tensor(np.ones((1, 1, 4, 4), np.float32)), 2, 1, 3)


def test_pow_of_integers_to_negative_powers_follows_mindspore():
    """MindSpore returns the C integer power (2 ** -1 = 0, 1 ** -1 = 1, (-1) ** -1 = -1); NumPy raises. Kiln
    follows MindSpore (documented in ops.pow)."""
    x = Tensor(np.array([2, 1, -1, 3], np.int64))
    np.testing.assert_array_equal(ops.pow(x, -1).asnumpy(), [0, 1, -1, 0])


@pytest.mark.parametrize("op, call", [
    ("Select", lambda u8: ops.where(Tensor(np.array([True, False])), u8, 300)),
    ("ClipByValue", lambda u8: ops.clamp(u8, 0, 300)),
    ("Maximum", lambda u8: ops.maximum(u8, 300)),
    ("Assign", lambda u8: ops.assign(u8, 300)),
    ("Add", lambda u8: u8 + (-1)),
    ("Pow", lambda u8: u8 ** 300),
])
def test_python_int_out_of_range_names_the_op_of_every_scalar_argument(op, call):
    """The range check of a Python number against an integer tensor (NumPy 2's rule) names the op it was passed to."""
    u8 = Tensor(np.array([1, 2], np.uint8))
    with pytest.raises(OverflowError, match=f"^For '{op}', Python integer -?[0-9]+ out of bounds for UInt8"):
        call(u8)
    np.testing.assert_array_equal(u8.asnumpy(), [1, 2])


@pytest.mark.parametrize("np_dtype", [np.uint8, np.int32, np.int64, np.float32])
@pytest.mark.parametrize("big", [2**63, 2**70, -2**63 - 1, -2**70])
def test_comparisons_with_a_big_python_int_are_exact_as_numpy(np_dtype, big):
    a = np.array([0, 1, np.iinfo(np.int64).max if np_dtype == np.int64 else 1], np_dtype)
    x = Tensor(a)
    for fn in (lambda p, q: p < q, lambda p, q: p <= q, lambda p, q: p > q, lambda p, q: p >= q,
               lambda p, q: p == q, lambda p, q: p != q, lambda p, q: q < p, lambda p, q: q >= p):
        r = fn(x, big)
        assert isinstance(r, Tensor)
        np.testing.assert_array_equal(r.asnumpy(), fn(a, big))
    np.testing.assert_array_equal(ops.less(x, big).asnumpy(), a < big)
    np.testing.assert_array_equal(ops.greater(big, x).asnumpy(), big > a)
