"""UInt16 / UInt32 / UInt64 (MindSpore 2.x's mindspore.uint16/32/64): creation with range checks, exact round trips
(2**64 − 1 used to become −1), from_numpy sharing, printing, casts to and from every dtype, arithmetic, comparisons
and reductions within one dtype, MindSpore's promotion errors in PyNative and Graph mode, and a clear TypeError
from the kernels that do not support them. NumPy is the reference for values; MindSpore 2.x (checked in
/work/msvenv) for the promotion rule and the printed form."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, ops
from kiln.common import dtype as mstype

UINTS = [(kiln.uint16, np.uint16), (kiln.uint32, np.uint32), (kiln.uint64, np.uint64)]
OTHER = [(kiln.bool_, np.bool_), (kiln.uint8, np.uint8), (kiln.int8, np.int8), (kiln.int16, np.int16),
         (kiln.int32, np.int32), (kiln.int64, np.int64), (kiln.float16, np.float16), (kiln.float32, np.float32),
         (kiln.float64, np.float64)]
ids = [str(k) for k, _ in UINTS]


def _big(nd, n=12, seed=0):
    """Values over the whole range of `nd`, its maximum included (wrap-around in arithmetic)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(nd)
    v = rng.integers(0, int(info.max), n, dtype=nd, endpoint=True)
    v[0], v[1], v[2] = info.max, 0, 1
    return v


def test_exported_like_uint8():
    for kd, nd in UINTS:
        name = np.dtype(nd).name
        assert getattr(kiln, name) is kd and getattr(mstype, name) is kd and getattr(kiln.common.dtype, name) is kd
        assert str(kd) == "U" + name[1:].capitalize() == repr(kd)  # "UInt16", as MindSpore
        assert kiln.dtype_to_nptype(kd) is nd
        assert kiln.pytype_to_dtype(nd) is kd and kiln.pytype_to_dtype(np.dtype(nd)) is kd
        assert kd in mstype.int_type and kd in mstype.number_type
        assert kiln._core.dtype_itemsize(kd) == np.dtype(nd).itemsize
        assert kiln._core.dtype_numpy_name(kd) == name


@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_creation_bounds_and_round_trip(kd, nd):
    hi = int(np.iinfo(nd).max)
    t = Tensor([0, 1, hi], dtype=kd)
    assert t.dtype == kd
    got = t.asnumpy()
    assert got.dtype == nd and got.tolist() == [0, 1, hi]
    assert Tensor(hi, dtype=kd).item() == hi and int(Tensor(hi, dtype=kd)) == hi  # exact, not through a double
    for bad in (-1, hi + 1):
        with pytest.raises(OverflowError, match=f"{bad} out of bounds for {kd}"):
            Tensor([0, bad], dtype=kd)
        with pytest.raises(OverflowError):
            Tensor(bad, dtype=kd)
    a = _big(nd)
    t = Tensor(a)  # a NumPy array keeps its dtype and values
    assert t.dtype == kd and t.asnumpy().dtype == nd
    np.testing.assert_array_equal(t.asnumpy(), a)
    assert Tensor(nd(hi)).dtype == kd and Tensor(nd(hi)).asnumpy().tolist() == hi
    assert Tensor(a[::-3]).asnumpy().tolist() == a[::-3].tolist()  # strided
    assert Tensor(a.astype(a.dtype.newbyteorder(">"))).asnumpy().tolist() == a.tolist()  # big-endian
    z = ops.zeros((2, 3), kd)
    assert z.dtype == kd and z.asnumpy().tolist() == np.zeros((2, 3), nd).tolist()
    f = ops.full((2,), hi, dtype=kd)
    assert f.dtype == kd and f.asnumpy().tolist() == [hi, hi]
    with pytest.raises(OverflowError):
        ops.full((2,), -1, dtype=kd)


def test_uint64_max_is_not_minus_one():
    """The issue's case: a uint64 array of 2**64 − 1 became −1."""
    a = np.array([2**64 - 1, 2**63], np.uint64)
    t = Tensor(a)
    assert t.dtype == kiln.uint64
    assert t.asnumpy().tolist() == [2**64 - 1, 2**63]
    assert t[0].item() == 2**64 - 1 and t.max().asnumpy().tolist() == 2**64 - 1
    assert Tensor([2**64 - 1], dtype=kiln.uint64).asnumpy().tolist() == [2**64 - 1]


@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_from_numpy_shares(kd, nd):
    a = np.array([1, 2, 3], nd)
    t = Tensor.from_numpy(a)
    assert t.dtype == kd
    a[0] = np.iinfo(nd).max
    assert t.asnumpy().tolist() == a.tolist()  # the write to the array is seen: shared memory
    t[1] = 7
    assert a.tolist() == [np.iinfo(nd).max, 7, 3]


def test_repr_and_str_like_mindspore():
    t = Tensor(np.array([0, 2**64 - 1], np.uint64))
    # MindSpore 2.x prints exactly this (NumPy's layout of the values)
    assert repr(t) == "Tensor(shape=[2], dtype=UInt64, value= [                   0, 18446744073709551615])"
    assert str(t) == "[                   0 18446744073709551615]"
    for kd, nd in UINTS:
        a = _big(nd, 5)
        assert str(Tensor(a)) == str(a)
        assert f"dtype={kd}" in repr(Tensor(a))


@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_casts_to_and_from_every_dtype(kd, nd):
    a = _big(nd)
    for od, ond in OTHER + UINTS:
        got = ops.cast(Tensor(a), od)
        assert got.dtype == od
        with np.errstate(over="ignore"):  # (to float16: inf, as NumPy)
            want = a.astype(ond)
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=f"{kd} -> {od}")
        # from `od`: ints (negative ones wrap as NumPy's astype), bools, and non-negative in-range floats
        if np.dtype(ond).kind == "f":
            src = np.array([0.0, 0.5, 1.9, 7.0, 255.0, 1000.25], ond)
        elif np.dtype(ond).kind == "b":
            src = np.array([True, False, True])
        else:
            info = np.iinfo(ond)
            src = np.array([0, 1, info.max, info.min, -1 if info.min < 0 else 2], ond)
        back = Tensor(src).astype(kd)
        assert back.dtype == kd
        np.testing.assert_array_equal(back.asnumpy(), src.astype(nd), err_msg=f"{od} -> {kd}")


_BINARY = [("add", ops.add, np.add), ("sub", ops.sub, np.subtract), ("mul", ops.mul, np.multiply),
           ("floor_div", ops.floor_div, np.floor_divide), ("floor_mod", ops.floor_mod, np.mod),
           ("maximum", ops.maximum, np.maximum), ("minimum", ops.minimum, np.minimum),
           ("equal", ops.equal, np.equal), ("not_equal", ops.not_equal, np.not_equal),
           ("greater", ops.greater, np.greater), ("less_equal", ops.less_equal, np.less_equal)]


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_binary_ops_within_one_dtype(kd, nd, use_jit):
    """Full-range values: +, −, × wrap modulo 2^bits as NumPy (uint16 × uint16 is not a signed-int overflow)."""
    a, b = _big(nd, 12, 1), _big(nd, 12, 2)
    b[b == 0] = 3  # (NumPy warns on integer division by zero)
    for name, op, ref in _BINARY:
        fn = kiln.jit(op) if use_jit else op
        got = fn(Tensor(a), Tensor(b))
        want = ref(a, b)
        assert got.dtype == mstype.pytype_to_dtype(want.dtype), name
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=name)
    e = np.array([0, 1, 2, 3, 5, 63], nd)
    np.testing.assert_array_equal(ops.pow(Tensor(a[:6]), Tensor(e)).asnumpy(), np.power(a[:6], e))
    np.testing.assert_array_equal((Tensor(a) + True).asnumpy(), a + True)  # a Python bool is allowed
    assert (Tensor(a) + Tensor(np.ones(12, bool))).dtype == kd
    c = np.arange(12) % 2 == 0
    np.testing.assert_array_equal(ops.where(Tensor(c), Tensor(a), Tensor(b)).asnumpy(), np.where(c, a, b))


@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_reductions(kd, nd):
    a = _big(nd, 12, 3).reshape(3, 4)
    for axis in (None, 0, 1):
        ax = axis
        s = ops.sum(Tensor(a), ax)
        assert s.dtype == kiln.uint64  # NumPy's sum dtype for unsigned
        np.testing.assert_array_equal(s.asnumpy(), np.sum(a, axis))
        np.testing.assert_array_equal(ops.prod(Tensor(a), ax).asnumpy(), np.prod(a, axis))
        np.testing.assert_array_equal(ops.amax(Tensor(a), ax).asnumpy(), np.max(a, axis))
        np.testing.assert_array_equal(ops.amin(Tensor(a), ax).asnumpy(), np.min(a, axis))
        assert ops.amax(Tensor(a), ax).dtype == kd
        m = ops.mean(Tensor(a), ax)  # accumulated in double (a wrapped integer sum gave a wrong mean)
        assert m.dtype == kiln.float32
        np.testing.assert_allclose(m.asnumpy(), np.mean(a.astype(np.float64), axis), rtol=1e-6)
    np.testing.assert_array_equal(ops.argmax(Tensor(a), 1).asnumpy(), np.argmax(a, 1))
    np.testing.assert_array_equal(ops.argmin(Tensor(a), 0).asnumpy(), np.argmin(a, 0))


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_promotion_errors_like_mindspore(kd, nd, use_jit):
    """MindSpore 2.x: UInt16/32/64 combine only with the same dtype or Bool; a Python int or float, uint8, any
    signed int, any float and another wide unsigned type raise TypeError "Type implicit conversion between X and
    UInt64 is not supported"."""
    x = np.array([1, 2], nd)
    add = kiln.jit(ops.add) if use_jit else ops.add
    others = [(od, np.array([1, 0], ond)) for od, ond in OTHER + UINTS if od not in (kd, kiln.bool_)]
    for od, y in others:
        for args, names in (((x, y), (kd, od)), ((y, x), (od, kd))):
            with pytest.raises(TypeError, match=rf"For 'Add', type implicit conversion between {names[0]} and "
                                                rf"{names[1]} is not supported"):
                add(Tensor(args[0]), Tensor(args[1]))
    for scalar, name in ((3, r"Tensor\[Int64\]"), (2.5, r"Tensor\[Float32\]")):
        with pytest.raises(TypeError, match=rf"between {kd} and {name} is not supported"):
            Tensor(x) + scalar
        with pytest.raises(TypeError, match=rf"between {name} and {kd} is not supported"):
            scalar * Tensor(x)
        with pytest.raises(TypeError, match="type implicit conversion"):
            ops.less(Tensor(x), scalar)
    assert add(Tensor(x), Tensor(x)).dtype == kd
    assert add(Tensor(x), Tensor(np.array([True, False]))).dtype == kd
    with pytest.raises(TypeError, match="type implicit conversion"):
        ops.concat((Tensor(x), Tensor(np.array([1], np.int32))))


@pytest.mark.parametrize("kd,nd", UINTS, ids=ids)
def test_unsupported_kernels_raise_type_error(kd, nd):
    """A kernel that has no unsigned instance names the op and the dtype (it never computes garbage)."""
    x = Tensor(np.array([1, 4], nd))
    for fn, op in ((ops.neg, "Neg"), (ops.abs, "Abs"), (ops.square, "Square"), (ops.sign, "Sign"),
                   (lambda v: ops.matmul(v.reshape(1, 2), v.reshape(2, 1)), "BatchMatMul")):
        with pytest.raises(TypeError, match=rf"For '{op}', the kernel does not support the dtype {kd}"):
            fn(x)
        with pytest.raises(TypeError, match=rf"For '{op}', the kernel does not support the dtype {kd}"):
            kiln.jit(fn)(x)
    # float-only ops compute in Float32, as for the other integer dtypes (NumPy's float64 for uint32/64: R-f32)
    e = ops.exp(x)
    assert e.dtype == kiln.float32
    np.testing.assert_allclose(e.asnumpy(), np.exp(np.array([1.0, 4.0])), rtol=1e-6)


def test_shape_ops_and_indexing_keep_values():
    a = _big(np.uint64, 12, 4).reshape(3, 4)
    t = Tensor(a)
    np.testing.assert_array_equal(t.T.asnumpy(), a.T)
    np.testing.assert_array_equal(t[1:, ::-2].asnumpy(), a[1:, ::-2])
    np.testing.assert_array_equal(t[[2, 0]].asnumpy(), a[[2, 0]])
    np.testing.assert_array_equal(ops.concat((t, t), 1).asnumpy(), np.concatenate((a, a), 1))
    np.testing.assert_array_equal(ops.reshape(t, (2, 6)).asnumpy(), a.reshape(2, 6))
    np.testing.assert_array_equal(ops.gather(t, Tensor([3, 0]), 1).asnumpy(), np.take(a, [3, 0], 1))
    p = kiln.Parameter(Tensor(np.zeros((3, 4), np.uint64)), name="u64p")
    ops.assign(p, t)
    np.testing.assert_array_equal(p.asnumpy(), a)
    t2 = Tensor(a.copy())
    t2[0, 0] = 2**64 - 2
    assert t2.asnumpy()[0, 0] == 2**64 - 2


@pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])
def test_print_op_prints_big_integers_exactly(use_jit):
    """ops.print_ (the Print kernel under kiln.jit) printed integers through a double: 2**64 − 1 came out as
    1.84467e+19 and 2**62 + 1 as 4.61169e+18. Integers now print exactly, as NumPy's str."""
    import contextlib
    import io

    u = np.array([0, 2**64 - 1], np.uint64)
    i = np.array([[2**62 + 1, -(2**63)]], np.int64)

    def f(a, b):
        ops.print_(a, b)
        return a

    g = kiln.jit(f) if use_jit else f
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        g(Tensor(u), Tensor(i))
    out = buf.getvalue()
    for v in (2**64 - 1, 2**62 + 1, -(2**63)):
        assert str(v) in out, out
    assert "e+" not in out, out


def test_integer_mean_and_prod_do_not_wrap_in_the_accumulator():
    """Means of integers accumulate in double (NumPy's): the int64 sum of [2**62] * 4 wrapped to 0 before the
    division, giving mean 0. Integer products wrap modulo 2**64 as NumPy's (no signed-overflow UB)."""
    a = np.full((4,), 2**62, np.int64)
    np.testing.assert_allclose(ops.mean(Tensor(a)).asnumpy(), np.mean(a), rtol=1e-6)
    b = np.array([2**40, 2**40, 3], np.int64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(ops.prod(Tensor(b)).asnumpy(), np.prod(b))
