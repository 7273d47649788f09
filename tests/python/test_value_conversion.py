"""Python/NumPy values turned into tensor elements: out-of-range ints raise OverflowError as NumPy 2 does (NEP 50),
on every path that converts a Python value (Tensor(...), ops.full/fill, scalar operands of binary ops, cast,
Parameter.set_data, setitem, initializers); big-endian arrays keep their values; object arrays raise TypeError.
NumPy is the reference for every value and every error."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, ops
from kiln.common.initializer import Constant, initializer

INT_DTYPES = [(ms.uint8, np.uint8), (ms.int8, np.int8), (ms.int16, np.int16), (ms.int32, np.int32),
              (ms.int64, np.int64)]


def _bounds(nd):
    info = np.iinfo(nd)
    return int(info.min), int(info.max)


def _numpy_overflows(fn):
    try:
        fn()
    except OverflowError:
        return True
    return False


@pytest.mark.parametrize("kd,nd", INT_DTYPES, ids=lambda v: str(v))
def test_tensor_from_python_ints_exact_at_bounds_and_overflow_past_them(kd, nd):
    lo, hi = _bounds(nd)
    for v in (lo, hi):
        assert Tensor([v, 0], kd).asnumpy().tolist() == np.array([v, 0], nd).tolist()
        assert Tensor(v, kd).asnumpy().item() == v
        assert Tensor((v,), kd).asnumpy().tolist() == [v]
    for v in (lo - 1, hi + 1, 3_000_000_000 * (1 if hi < 3e9 else 10**10)):
        assert _numpy_overflows(lambda: np.array([v], nd))  # the reference behaviour
        with pytest.raises(OverflowError, match=str(v)):
            Tensor([v], kd)
        with pytest.raises(OverflowError):
            Tensor(v, kd)
        with pytest.raises(OverflowError):
            Tensor([[1, v]], kd)


@pytest.mark.parametrize("kd,nd", INT_DTYPES, ids=lambda v: str(v))
def test_full_and_fill_check_the_fill_value(kd, nd):
    lo, hi = _bounds(nd)
    for v in (lo, hi):
        np.testing.assert_array_equal(ops.full((2,), v, dtype=kd).asnumpy(), np.full((2,), v, nd))
        np.testing.assert_array_equal(ops.fill(kd, (2, 1), v).asnumpy(), np.full((2, 1), v, nd))
    for v in (lo - 1, hi + 1):
        assert _numpy_overflows(lambda: np.full((2,), v, nd))
        with pytest.raises(OverflowError, match=str(v)):
            ops.full((2,), v, dtype=kd)
        with pytest.raises(OverflowError):
            ops.fill(kd, (2,), v)
        with pytest.raises(OverflowError):
            ops.full_like(Tensor(np.zeros(2, nd)), v)
    with pytest.raises(OverflowError):  # a float fill value out of range (undefined in C++: it was INT_MIN)
        ops.full((2,), 1e30, dtype=kd)


def test_full_int64_is_exact_beyond_float64_precision():
    v = 2**62 + 1
    assert ops.full((2,), v, dtype=ms.int64).asnumpy().tolist() == [v, v]
    assert ops.full((1,), -(2**63), dtype=ms.int64).asnumpy().tolist() == [-(2**63)]


@pytest.mark.parametrize("kd,nd", INT_DTYPES[:4], ids=lambda v: str(v))
def test_scalar_operand_of_binary_ops_must_fit_the_tensor_dtype(kd, nd):
    lo, hi = _bounds(nd)
    a = np.array([1, 2], nd)
    t = Tensor(a)
    for v in (lo - 1, hi + 1):
        assert _numpy_overflows(lambda: a + v)
        for fn in (lambda x: x + v, lambda x: v - x, lambda x: x * v, lambda x: ops.add(x, v),
                   lambda x: ops.maximum(x, v), lambda x: ops.sub(v, x)):
            with pytest.raises(OverflowError, match=f"{v} out of bounds for {kd}"):
                fn(t)
        # comparisons are exact (NumPy 2 compares a Python int with any integer array without overflow)
        for cmp in (lambda x: x == v, lambda x: x != v, lambda x: x < v, lambda x: x >= v):
            np.testing.assert_array_equal(cmp(t).asnumpy(), cmp(a))
    for v in (lo, hi):  # in range: NumPy's values (wrapping arithmetic as NumPy's)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal((t + v).asnumpy(), a + v)
            np.testing.assert_array_equal((t == v).asnumpy(), a == v)


def test_scalar_operand_overflow_in_graph_mode():
    @ms.jit
    def f(x):
        return x + 300

    with pytest.raises(OverflowError, match="300 out of bounds for UInt8"):
        f(Tensor(np.array([1], np.uint8)))

    @ms.jit
    def g(x):
        return x + 200

    np.testing.assert_array_equal(g(Tensor(np.array([1], np.uint8))).asnumpy(), np.array([201], np.uint8))


def test_cast_of_python_values_checks_range():
    with pytest.raises(OverflowError):
        ops.cast(300, ms.uint8)
    assert ops.cast(255, ms.uint8).asnumpy().item() == 255
    with pytest.raises(OverflowError):
        Tensor(-1, ms.uint8)


def test_parameter_set_data_and_setitem_with_python_ints():
    p = Parameter(Tensor(np.zeros(2, np.uint8)), name="p")
    with pytest.raises(OverflowError):
        p.set_data(300)
    p.set_data(255)
    assert p.asnumpy().tolist() == [255, 255]
    x = Tensor(np.zeros(3, np.uint8))
    with pytest.raises(OverflowError):
        x[0] = 300
    with pytest.raises(OverflowError):
        x[Tensor(np.array([0, 2]))] = 256
    with pytest.raises(OverflowError):
        x[1:] = -1
    x[0] = 255
    x[Tensor(np.array([1, 2]))] = 7
    assert x.asnumpy().tolist() == [255, 7, 7]


def test_initializers_with_integer_dtypes():
    with pytest.raises(OverflowError, match="initializer"):
        initializer(Constant(300), (2,), ms.uint8)
    with pytest.raises(OverflowError):
        initializer(128, (), ms.int8)
    assert initializer(Constant(-128), (2,), ms.int8).asnumpy().tolist() == [-128, -128]
    assert initializer("ones", (2,), ms.int32).asnumpy().tolist() == [1, 1]


def test_randint_range_must_fit_the_dtype():
    with pytest.raises(ValueError):  # the reference
        np.random.randint(0, 300, (3,), dtype=np.uint8)
    with pytest.raises(ValueError, match="high - 1 = 299 is out of bounds for UInt8"):
        ops.randint(0, 300, (3,), dtype=ms.uint8)
    with pytest.raises(ValueError, match="low = -1"):
        ops.randint(-1, 3, (3,), dtype=ms.uint8)
    v = ops.randint(250, 256, (200,), dtype=ms.uint8).asnumpy()
    assert v.min() >= 250 and v.max() <= 255 and len(set(v.tolist())) == 6


def test_unsigned_numpy_arrays_wider_than_uint8():
    """uint16/32/64 arrays keep their dtype and values (they used to become Int64; 2**64 − 1 raised or was −1)."""
    for nd, kd in ((np.uint16, ms.uint16), (np.uint32, ms.uint32), (np.uint64, ms.uint64)):
        a = np.array([0, 7, np.iinfo(nd).max], nd)
        t = Tensor(a)
        assert t.dtype == kd
        assert t.asnumpy().dtype == nd and t.asnumpy().tolist() == a.tolist()
    assert Tensor(np.array([2**64 - 1], np.uint64)).asnumpy().tolist() == [2**64 - 1]  # was silently -1
    with pytest.raises(TypeError, match="implicit conversion between Int64 and UInt64"):
        ops.add(Tensor([1]), np.array([2**63], np.uint64))  # MindSpore: no implicit conversion with UInt64
    with pytest.raises(OverflowError, match="18446744073709551615"):
        Tensor([2**64 - 1])  # a Python int list is Int64 (pass dtype=uint64)


@pytest.mark.parametrize("code", ["i2", "i4", "i8", "f2", "f4", "f8", "u2"])
def test_big_endian_arrays_keep_their_values(code):
    native = np.array([[1, 2, 3], [4, 5, 100]], "<" + code)
    big = native.astype(">" + code)
    t = Tensor(big)
    assert t.asnumpy().tolist() == native.tolist()
    assert Tensor.from_numpy(big).asnumpy().tolist() == native.tolist()
    assert Tensor(big[:, ::2]).asnumpy().tolist() == native[:, ::2].tolist()  # strided too
    assert t.dtype == Tensor(native).dtype
    np.testing.assert_array_equal(ops.add(Tensor(native), big).asnumpy(), Tensor(native + native).asnumpy())
    np.testing.assert_array_equal(Tensor(big[0, 1]).asnumpy(), native[0, 1])  # a NumPy scalar of that order
    np.testing.assert_array_equal(Tensor([big[0], big[1]]).asnumpy(), Tensor([native[0], native[1]]).asnumpy())


def test_object_and_string_arrays_raise_type_error():
    with pytest.raises(TypeError, match="object"):
        Tensor(np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="object"):
        Tensor([1, None])
    with pytest.raises(TypeError, match="not supported"):
        Tensor(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="ragged"):
        Tensor([[1, 2], [3]])
    with pytest.raises(OverflowError):
        Tensor([1, 2**70])


def test_python_floats_go_straight_into_float64_and_float16():
    """Tensor(list, float64) kept float64's precision only after a float32 round trip before (0.1 → 0.10000000149)."""
    t = ms.Tensor([0.1, 1e-8, 1 / 3], ms.float64)
    assert t.asnumpy().tolist() == [0.1, 1e-8, 1 / 3]
    assert ms.Tensor(0.1, ms.float64).asnumpy().item() == 0.1
    assert ms.Tensor((2.0 ** -30 + 1.0,), ms.float64).asnumpy().item() == 2.0 ** -30 + 1.0
    np.testing.assert_array_equal(ms.Tensor([0.1, 65504.0], ms.float16).asnumpy(),
                                  np.array([0.1, 65504.0], np.float16))
    with pytest.raises(TypeError, match="Tensor"):
        ms.Tensor(["a"], ms.float64)
