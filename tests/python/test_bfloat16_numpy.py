"""A BFloat16 tensor's asnumpy()/numpy()/np.asarray give a NumPy array of ml_dtypes.bfloat16 (MindSpore 2.10 gives
one of its own registered bfloat16 dtype; NumPy itself has none); tolist()/item()/float() give Python floats; str and
repr lay the values out as MindSpore 2.10 does. The expected strings and values are MindSpore 2.10's (CPU wheel,
recorded with /work/ms-venv)."""
import numpy as np
import pytest

import kiln
from kiln import Tensor

ml_dtypes = pytest.importorskip("ml_dtypes")


def _bf16(values):
    return Tensor(np.array(values, np.float32), kiln.bfloat16)


def test_asnumpy_numpy_and_array_protocol_give_bfloat16_arrays():
    t = _bf16([1.5, -2.25, 3.0])
    for a in (t.asnumpy(), t.numpy(), np.array(t), np.asarray(t)):
        assert a.dtype == ml_dtypes.bfloat16 and a.shape == (3,)
        np.testing.assert_array_equal(a.astype(np.float32), [1.5, -2.25, 3.0])
    # the values are the tensor's bits: 0.1 rounds to bfloat16's 0.10009765625, as the cast does
    b = _bf16([0.1, 1e10, np.nan, -np.inf, -0.0]).asnumpy()
    ref = np.array([0.1, 1e10, np.nan, -np.inf, -0.0], np.float32).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(b.view(np.uint16), ref.view(np.uint16))
    assert b.astype(np.float32)[0] == np.float32(0.10009765625)
    # a 0-d tensor gives a 0-d array; float() of the tensor (cast) keeps float32
    s = Tensor(2.5, kiln.bfloat16).asnumpy()
    assert s.shape == () and s.dtype == ml_dtypes.bfloat16 and float(s) == 2.5
    f = t.float().asnumpy()
    assert f.dtype == np.float32 and f.tolist() == [1.5, -2.25, 3.0]
    # a view and a graph-mode result too
    m = _bf16(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(m[:, 1].asnumpy().astype(np.float32), [1.0, 4.0])
    j = kiln.jit(lambda x: x * 2)(m).asnumpy()
    assert j.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(j.astype(np.float32), np.arange(6).reshape(2, 3) * 2)


def test_python_scalars_and_lists():
    t = _bf16([1.5, -2.25, 3.0])
    assert t.tolist() == [1.5, -2.25, 3.0] and all(type(v) is float for v in t.tolist())
    assert t[0].item() == 1.5 and type(t[0].item()) is float
    assert float(t[0]) == 1.5 and int(t[0]) == 1
    assert Tensor(2.5, kiln.bfloat16).item() == 2.5 and Tensor(2.5, kiln.bfloat16).tolist() == 2.5


def test_a_bfloat16_array_makes_a_bfloat16_tensor():
    a = np.array([0.1, -3.5, np.inf], np.float32).astype(ml_dtypes.bfloat16)
    t = Tensor(a)  # MindSpore 2.10: BFloat16
    assert t.dtype == kiln.bfloat16
    np.testing.assert_array_equal(t.asnumpy().view(np.uint16), a.view(np.uint16))
    assert Tensor(a, kiln.float32).dtype == kiln.float32
    np.testing.assert_array_equal(Tensor(a, kiln.float32).asnumpy(), a.astype(np.float32))
    back = Tensor(_bf16([1.25, -7.0]).asnumpy())  # the round trip keeps dtype and bits
    assert back.dtype == kiln.bfloat16 and back.tolist() == [1.25, -7.0]


def test_str_and_repr_are_mindspores():
    # MindSpore 2.10's str: each value as C's "%f", one space apart; repr: "%g" right-aligned to the widest
    t = _bf16([1.5, -2.25, 3.0])
    assert str(t) == "[1.500000 -2.250000 3.000000]"
    assert repr(t) == "Tensor(shape=[3], dtype=BFloat16, value= [  1.5, -2.25,     3])"
    t = _bf16([1e-3, 1e10, np.nan, np.inf])
    assert str(t) == "[0.000999 9999220736.000000 nan inf]"
    assert repr(t) == "Tensor(shape=[4], dtype=BFloat16, value= [0.000999451, 9.99922e+09,         nan,         inf])"
    t = _bf16([0.1, 100.0])
    assert str(t) == "[0.100098 100.000000]"
    assert repr(t) == "Tensor(shape=[2], dtype=BFloat16, value= [0.100098,      100])"
    t = _bf16([[1.0, 2.0], [3.0, 4.0]])
    assert str(t) == "[[1.000000 2.000000]\n [3.000000 4.000000]]"
    assert repr(t) == "Tensor(shape=[2, 2], dtype=BFloat16, value=\n[[1, 2],\n [3, 4]])"
    assert str(Tensor(0.1, kiln.bfloat16)) == "0.100098"
    assert repr(Tensor(0.1, kiln.bfloat16)) == "Tensor(shape=[], dtype=BFloat16, value= 0.100098)"
