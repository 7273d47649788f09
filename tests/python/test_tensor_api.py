"""kiln.Tensor's Python API: construction and dtype inference, repr, operators, indexing (vs NumPy)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor


def test_dtype_inference_matches_mindspore():
    assert Tensor(1.5).dtype == ms.float32
    assert Tensor(3).dtype == ms.int64
    assert Tensor(True).dtype == ms.bool_
    assert Tensor([1.0, 2.0]).dtype == ms.float32
    assert Tensor([1, 2]).dtype == ms.int64
    assert Tensor(np.zeros(3)).dtype == ms.float64  # ndarray keeps its dtype
    assert Tensor(np.zeros(3, np.int32)).dtype == ms.int32
    assert Tensor(np.float64(1.0)).dtype == ms.float64
    assert Tensor([1, 2], ms.float16).dtype == ms.float16
    assert Tensor(np.ones(2), dtype=ms.int32).dtype == ms.int32
    assert str(ms.float32) == "Float32" and str(ms.bfloat16) == "BFloat16"


def test_constructor_errors():
    with pytest.raises(ValueError, match="shape"):
        Tensor([1, 2], shape=(2,))
    with pytest.raises(TypeError):
        Tensor(object())
    with pytest.raises(TypeError):
        Tensor(np.array(["a"]))
    with pytest.raises(TypeError):
        Tensor([1], dtype="not a dtype")


def test_shape_and_zero_init():
    t = Tensor(shape=(2, 3), dtype=ms.float32, init=None)
    assert t.shape == (2, 3)
    np.testing.assert_array_equal(t.asnumpy(), np.zeros((2, 3), np.float32))


def test_attributes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor(a)
    assert t.shape == (3, 4) and t.ndim == 2 and t.size == 12 and t.itemsize == 4 and t.nbytes == 48
    assert t.strides == a.strides
    assert len(t) == 3
    np.testing.assert_array_equal(np.asarray(t), a)
    np.testing.assert_array_equal(t.T.asnumpy(), a.T)
    with pytest.raises(TypeError, match="0-D"):
        len(Tensor(1.0))


def test_repr_matches_mindspore_format():
    assert repr(Tensor(np.array([1.0, 2.0, 3.0], np.float32))) == \
        "Tensor(shape=[3], dtype=Float32, value= [ 1.00000000e+00,  2.00000000e+00,  3.00000000e+00])"
    assert repr(Tensor(np.array([1, 2]))) == "Tensor(shape=[2], dtype=Int64, value= [1, 2])"
    assert repr(Tensor(np.float32(0.1))) == "Tensor(shape=[], dtype=Float32, value= 0.1)"
    assert repr(Tensor(np.array([[1, 2], [3, 4]], np.int32))) == \
        "Tensor(shape=[2, 2], dtype=Int32, value=\n[[1, 2],\n [3, 4]])"
    assert str(Tensor(np.array([1.0, 2.0], np.float32))) == "[1. 2.]"


def test_scalar_conversions():
    assert float(Tensor(2.5)) == 2.5 and int(Tensor(7)) == 7 and bool(Tensor(True)) is True
    assert Tensor(np.array([3.0])).item() == 3.0
    assert isinstance(Tensor(3).item(), int)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(Tensor([1.0, 2.0]))
    with pytest.raises(ValueError):
        float(Tensor([1.0, 2.0]))


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!="])
def test_binary_operators_vs_numpy(op):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)  # noqa: F841 (read by the eval below)
    b = rng.uniform(0.5, 2.0, (4,)).astype(np.float32)  # noqa: F841 (read by the eval below)
    got = eval(f"Tensor(a) {op} Tensor(b)").asnumpy()
    want = eval(f"a {op} b")
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got = eval(f"Tensor(a) {op} 1.5").asnumpy()
    np.testing.assert_allclose(got, eval(f"a {op} np.float32(1.5)"), rtol=1e-5)
    got = eval(f"1.5 {op} Tensor(a)").asnumpy()
    np.testing.assert_allclose(got, eval(f"np.float32(1.5) {op} a"), rtol=1e-5)


def test_matmul_operator_and_unary():
    a = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).asnumpy(), a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((-Tensor(a)).asnumpy(), -a)
    np.testing.assert_allclose(abs(Tensor(a)).asnumpy(), np.abs(a))
    m = Tensor(np.array([True, False]))
    np.testing.assert_array_equal((~m).asnumpy(), [False, True])
    np.testing.assert_array_equal((m & True).asnumpy(), [True, False])


def test_weak_scalar_promotion():
    assert (Tensor(np.ones(2, np.float16)) * 2.5).dtype == ms.float16
    assert (Tensor(np.ones(2, np.int32)) * 2.5).dtype == ms.float32
    assert (Tensor(np.ones(2, np.int32)) + 2).dtype == ms.int32
    assert (Tensor(np.ones(2, np.int32)) + Tensor(np.ones(2, np.float32))).dtype == ms.float32
    assert (Tensor(np.ones(2, np.float16)) + Tensor(np.ones(2, np.float32))).dtype == ms.float32


def test_eq_with_foreign_object():
    t = Tensor([1.0])
    assert (t == "x") is False and (t != None) is True  # noqa: E711 (Tensor.__ne__ with None is the test)


INDEX_CASES = [
    (1,), (-1,), (slice(1, 3),), (slice(None, None, -1),), (slice(None, None, 2), 1), (Ellipsis, 0),
    (None, 0), (1, None, slice(0, 2)), ([0, 2],), (np.array([[0, 1], [2, 2]]),), (slice(None), [1, 0]),
    ([0, 1], [1, 2]), (0, [1, 2]), (np.array([True, False, True]),), (slice(None), slice(1, 2), -1),
]


@pytest.mark.parametrize("key", INDEX_CASES, ids=[repr(k) for k in INDEX_CASES])
def test_getitem_vs_numpy(key):
    a = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    got = Tensor(a)[key if len(key) > 1 else key[0]]
    want = a[key if len(key) > 1 else key[0]]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)


S_ = slice(None)
BOOL_INDEX_CASES = [
    True, False, (True, 0), (0, False), (S_, True, 0), (0, S_, True), (True, S_, 0), (True, True), (True, S_, True),
    (None, True, 1), (Ellipsis, True), (True, [0, 1]), (True, Ellipsis, np.array([0, 2])), ([0, 1], True, [1, 2]),
    (S_, True, [0, 2]), (True, S_, [0, 1, 2]), (True, [[0], [1]]), (1, True, [0, 2], False), (False, S_, [0]),
    (True, False), ([0, 1], False),
]


@pytest.mark.parametrize("key", BOOL_INDEX_CASES, ids=[repr(k) for k in BOOL_INDEX_CASES])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["python_bool", "bool_tensor"])
def test_bool_scalar_index_vs_numpy(key, as_tensor):
    """A bool scalar index is NumPy's 0-d boolean index (a new axis of length 1 or 0, an advanced index beside index
    arrays, other bools and ints); a 0-d Bool tensor (or np.bool_) index is that Python bool. x[Tensor(True)] raised
    NumPy's "Calling nonzero on 0d arrays", and bools beside index arrays gave NumPy-less shapes before."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    items = key if isinstance(key, tuple) else (key,)
    tkey = tuple(Tensor(np.bool_(k)) if as_tensor and isinstance(k, bool) else k for k in items)
    try:
        want = a[key]
    except IndexError:
        with pytest.raises(IndexError, match="shape mismatch"):
            Tensor(a)[tkey]
        return
    got = Tensor(a)[tkey]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)
    for value in (-1.0, np.arange(want.shape[-1], dtype=np.float32) if want.ndim else -1.0):
        b = a.copy()
        b[key] = value
        t = Tensor(a.copy())
        t[tkey] = value
        np.testing.assert_array_equal(t.asnumpy(), b)


def test_zero_d_bool_tensor_index_is_the_python_bool():
    x = Tensor(np.zeros((2, 3), np.float32))
    assert x[Tensor(True)].shape == x[True].shape == x[np.True_].shape == x[np.array(True)].shape == (1, 2, 3)
    assert x[Tensor(False)].shape == x[np.False_].shape == (0, 2, 3)
    assert x[Tensor(np.bool_(True)), 1].shape == (1, 3)
    x[Tensor(False)] = 5
    assert not x.asnumpy().any()
    x[Tensor(True), 1] = 5
    np.testing.assert_array_equal(x.asnumpy(), [[0, 0, 0], [5, 5, 5]])
    y = x[0, True]  # NumPy's copy (the bool makes the int an advanced index): writing it leaves x alone
    y[...] = 7
    np.testing.assert_array_equal(x.asnumpy(), [[0, 0, 0], [5, 5, 5]])


def test_getitem_errors():
    t = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        t[2]
    with pytest.raises(IndexError, match="out of bounds"):
        t[:, [0, 5]]
    with pytest.raises(IndexError, match="Too many"):
        t[0, 0, 0]


def test_setitem_in_place():
    a = np.zeros((3, 4), np.float32)
    t = Tensor(a)
    t[1] = 5.0
    t[:, 2] = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    t[[0, 2], 0] = 7.0
    a[1] = 5.0
    a[:, 2] = [1.0, 2.0, 3.0]
    a[[0, 2], 0] = 7.0
    np.testing.assert_array_equal(t.asnumpy(), a)


def test_slice_is_a_view():
    t = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    v = t[:, 1:]
    assert v._shares_storage(t)


def test_tensor_data_shares_storage_outside_autodiff():
    import kiln
    x = kiln.Tensor(np.ones(2, np.float32))
    d = x.data
    d[0] = 5  # writes through, as MindSpore 2.10
    np.testing.assert_array_equal(x.asnumpy(), [5, 1])
    x.data = kiln.Tensor(np.array([7, 8], np.float32))
    np.testing.assert_array_equal(x.asnumpy(), [7, 8])
    with pytest.raises(ValueError, match="shape"):
        x.data = kiln.Tensor(np.zeros(3, np.float32))
    g = kiln.grad(lambda t: (t.data * t).sum())(x)  # .data is a constant for autodiff
    np.testing.assert_array_equal(g.asnumpy(), [7, 8])
    p = kiln.Parameter(kiln.Tensor(np.ones(2, np.float32)), name="p")
    assert p.data is p
