"""Bad and extreme input: clear exceptions instead of crashes or silent garbage (found by trying to break Kiln)."""
import copy
import pickle

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


@pytest.mark.parametrize("make", [
    lambda: ops.zeros((2**32, 2**32)),
    lambda: ops.ones((2**31,) * 3),
    lambda: ops.zeros((0, 3)).reshape(2**62, 4),
    lambda: ops.broadcast_to(Tensor(np.ones((1, 1), np.float32)), (2**32, 2**32)),
    lambda: ops.arange(0, 1, 1e-30),
])
def test_element_count_overflow_raises(make):
    with pytest.raises(ValueError, match="more"):
        make()


def test_grad_through_jit_function_called_eagerly():
    f = ms.jit(lambda x: ops.sum(x ** 3))
    g = ms.grad(f)(Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_allclose(g.asnumpy(), [3.0, 12.0])
    np.testing.assert_allclose(f(Tensor(np.array([1.0, 2.0], np.float32))).asnumpy(), 9.0)  # still compiles


def test_batchnorm_rejects_empty_batch_in_training():
    bn = nn.BatchNorm2d(3)
    bn.set_train()
    with pytest.raises(ValueError, match="BatchNorm2d"):
        bn(ops.zeros((0, 3, 2, 2)))
    assert np.isfinite(bn.moving_mean.asnumpy()).all()


def test_pickle_deepcopy_and_format():
    t = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for u in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert u.dtype == t.dtype
        np.testing.assert_array_equal(u.asnumpy(), t.asnumpy())
    assert f"{Tensor(1.5):.2f}" == "1.50"


def test_set_data_refuses_higher_dtype():
    p = Parameter(Tensor(np.zeros(2, np.float32)), name="p")
    with pytest.raises(TypeError, match="implicitly"):
        p.set_data(Tensor(np.ones(2, np.float64)))
    p.set_data(Tensor(np.ones(2, np.float16)))  # lower: cast
    assert p.dtype == ms.float32 and p.asnumpy().tolist() == [1.0, 1.0]


def test_python_int_out_of_range_for_int_tensor():
    with pytest.raises(OverflowError, match="out of bounds for Int32"):  # NumPy 2 raises OverflowError too
        Tensor(np.array([1], np.int32)) + 2**40
    with pytest.raises(OverflowError, match="out of bounds for Int8"):
        Tensor(np.array([1], np.int8)) + 300
    with pytest.raises(OverflowError, match="out of bounds for Int64"):
        Tensor(2**70)


def test_tensor_index_inside_jit_has_clear_error():
    @ms.jit
    def f(x, i):
        return x[ops.argmax(i)]  # one integer computed by the graph: a Gather (a loop counter `xs[t]`, issue 11)

    np.testing.assert_allclose(f(Tensor(np.arange(3, dtype=np.float32)), Tensor(np.array([0, 5, 1], np.float32))
                                 ).asnumpy(), 1.0)

    @ms.jit
    def g(x, i):
        return x[ops.cast(i, ms.int64)]  # an index array computed by the graph: gathered at its run-time values

    np.testing.assert_array_equal(g(Tensor(np.arange(3, dtype=np.float32)), Tensor(np.array([2.0, 0.0, 2.0],
                                                                                            np.float32))).asnumpy(),
                                  [2.0, 0.0, 2.0])

    @ms.jit
    def h(x):
        return x[x > 1]  # a Bool mask computed by the graph: the result's shape depends on the data

    ms.set_context(jit_syntax_level=ms.STRICT)  # (under LAX, the default, h runs in PyNative instead)
    try:
        with pytest.raises(IndexError, match="depends on the data.*ops.select"):
            h(Tensor(np.arange(3, dtype=np.float32)))
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)


def test_matmul_1d_mismatch_names_user_shapes():
    with pytest.raises(ValueError, match=r"\[3\] and y \[4\]"):
        ops.matmul(Tensor(np.ones(3, np.float32)), Tensor(np.ones(4, np.float32)))
