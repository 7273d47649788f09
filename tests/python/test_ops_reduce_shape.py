"""Reductions, shape ops and softmax of kiln._core: forward vs NumPy, gradients vs float64 finite differences,
views sharing storage, and errors naming the op."""
import numpy as np
import pytest

from kiln import _core
from helpers import N, T, check_grad

rng = np.random.default_rng(0)
D = _core.DType


def S(v, dtype=np.float32):
    """A 0-d tensor (helpers.T gives 1-d for scalars, via np.ascontiguousarray)."""
    return _core.Tensor._from_numpy(np.array(v, dtype=dtype))


def rand(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------------- reductions
REDUCE_CASES = [
    ((3, 4, 5), None),
    ((3, 4, 5), 0),
    ((3, 4, 5), -1),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (-2,)),
    ((3, 4, 5), (2, 0, 1)),
    ((7,), 0),
    ((2, 1, 3), 1),
    ((1, 1), None),
    ((4, 0, 3), 2),
]
NP_REDUCE = {"sum": np.sum, "mean": np.mean, "amax": np.amax, "amin": np.amin, "prod": np.prod}


def np_axis(axis):
    return axis if not isinstance(axis, list) else tuple(axis)


@pytest.mark.parametrize("name", list(NP_REDUCE))
@pytest.mark.parametrize("shape,axis", REDUCE_CASES)
@pytest.mark.parametrize("keep", [False, True])
def test_reduce_forward_float(name, shape, axis, keep):
    a = rand(*shape, dtype=np.float32)
    if name in ("amax", "amin") and 0 in shape:
        return  # no identity (checked in test_reduce_empty)
    got = N(getattr(_core, name)(T(a), axis, keep))
    want = NP_REDUCE[name](a.astype(np.float64), axis=axis, keepdims=keep)
    assert got.dtype == np.float32
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(NP_REDUCE))
def test_reduce_float64_float16(name):
    a = rand(4, 6)
    got = N(getattr(_core, name)(T(a), 1))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, NP_REDUCE[name](a, axis=1), rtol=1e-12)
    h = a.astype(np.float16)
    got = N(getattr(_core, name)(T(h), 0))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), NP_REDUCE[name](h.astype(np.float32), axis=0), rtol=2e-3, atol=2e-3)


def test_reduce_float16_accumulates_in_float32():
    # 4096 ones: a float16 accumulator would stop at 2048.
    h = np.ones((4096,), np.float16)
    assert N(_core.sum(T(h))) == 4096
    assert N(_core.mean(T(h))) == 1


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64])
def test_reduce_integers(dtype):
    a = rng.integers(-5 if dtype != np.uint8 else 0, 6, size=(3, 4)).astype(dtype)
    s = N(_core.sum(T(a), 1))
    assert s.dtype == np.int64  # NumPy's rule: integer sums give int64
    np.testing.assert_array_equal(s, a.sum(1, dtype=np.int64))
    p = N(_core.prod(T(a), 0))
    assert p.dtype == np.int64
    np.testing.assert_array_equal(p, a.prod(0, dtype=np.int64))
    mx = N(_core.amax(T(a), 0))
    assert mx.dtype == a.dtype
    np.testing.assert_array_equal(mx, a.max(0))
    np.testing.assert_array_equal(N(_core.amin(T(a), (0, 1))), a.min())
    m = N(_core.mean(T(a), 1))
    assert m.dtype == np.float32
    np.testing.assert_allclose(m, a.mean(1), rtol=1e-6)


def test_reduce_bool():
    a = rng.random((3, 5)) > 0.5
    s = N(_core.sum(T(a), 0))
    assert s.dtype == np.int64
    np.testing.assert_array_equal(s, a.sum(0))
    np.testing.assert_array_equal(N(_core.amax(T(a), 1)), a.any(1))
    np.testing.assert_array_equal(N(_core.amin(T(a), 1)), a.all(1))


def test_reduce_non_contiguous():
    a = rand(3, 4, 5)
    x = _core.transpose(T(a), (2, 0, 1))
    at = a.transpose(2, 0, 1)
    assert not x.is_contiguous()
    for axis in [None, 0, 1, 2, (0, 2), (1, 2)]:
        np.testing.assert_allclose(N(_core.sum(x, axis)), at.sum(axis), rtol=1e-12)
        np.testing.assert_allclose(N(_core.amax(x, axis, True)), at.max(axis, keepdims=True))
        np.testing.assert_allclose(N(_core.prod(x, axis)), at.prod(axis), rtol=1e-12)
    # a strided slice with a negative step and a broadcast view
    s = _core.strided_slice(T(a), [2, 0], [-1, 4], [-1, 2])
    np.testing.assert_allclose(N(_core.mean(s, 1)), a[::-1, ::2].mean(1), rtol=1e-12)
    b = _core.broadcast_to(T(a[:, :1, :]), (3, 4, 5))
    np.testing.assert_allclose(N(_core.sum(b, 1)), np.broadcast_to(a[:, :1], (3, 4, 5)).sum(1), rtol=1e-12)


def test_reduce_scalar_and_empty():
    s = S(3.0)
    assert s.shape == ()
    assert N(_core.sum(s)).shape == ()
    assert N(_core.sum(s, 0)) == 3.0
    assert N(_core.amax(s, -1, True)).shape == ()
    assert N(_core.argmax(s)) == 0
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(N(_core.sum(T(e), 0)), np.zeros(3))
    np.testing.assert_array_equal(N(_core.prod(T(e), 0)), np.ones(3))
    assert np.isnan(N(_core.mean(T(e)))).all()
    with pytest.raises(ValueError, match="ReduceMax"):
        _core.amax(T(e), 0)
    np.testing.assert_array_equal(N(_core.amax(T(e), 1)), np.zeros((0,)))


def test_reduce_nan_propagates():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    got = N(_core.amax(T(a), 1))
    assert np.isnan(got[0]) and got[1] == 6.0
    assert np.isnan(N(_core.amin(T(a)))).all()
    assert N(_core.argmax(T(a), 1))[0] == 1  # first NaN, as NumPy


def test_reduce_errors():
    x = T(rand(2, 3))
    with pytest.raises(IndexError, match=r"ReduceSum.*\[-2, 1\].*3"):
        _core.sum(x, 3)
    with pytest.raises(ValueError, match="ReduceMean.*duplicate"):
        _core.mean(x, (1, -1))
    with pytest.raises(TypeError, match="ReduceSum"):
        _core.sum(x, 1.5)
    with pytest.raises(ValueError, match="sum_to"):
        _core.sum_to(x, (4,))


@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((5,), None), ((2, 3), None)])
@pytest.mark.parametrize("keep", [False, True])
def test_argmax_argmin(shape, axis, keep):
    a = rng.integers(0, 4, size=shape).astype(np.float32)  # many ties: first occurrence wins
    for name, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        got = N(getattr(_core, name)(T(a), axis, keep))
        assert got.dtype == np.int64
        want = fn(a, axis=axis, keepdims=keep)
        np.testing.assert_array_equal(got, want)
    ai = a.astype(np.int32)
    np.testing.assert_array_equal(N(_core.argmax(T(ai), axis)), np.argmax(ai, axis=axis))


def test_argmax_errors():
    with pytest.raises(ValueError, match="Argmax"):
        _core.argmax(T(np.zeros((0,), np.float32)))
    with pytest.raises(IndexError, match="Argmin"):
        _core.argmin(T(rand(2, 3)), 2)
    with pytest.raises(TypeError, match="Argmax"):
        _core.argmax(T(rand(2, 3)), (0, 1))


def test_sum_to():
    a = rand(2, 3, 4)
    np.testing.assert_allclose(N(_core.sum_to(T(a), (3, 1))), a.sum(axis=(0, 2))[:, None])
    np.testing.assert_allclose(N(_core.sum_to(T(a), (1, 1, 4))), a.sum(axis=(0, 1), keepdims=True))
    np.testing.assert_allclose(N(_core.sum_to(T(a), ())), a.sum())
    assert N(_core.sum_to(T(a), (2, 3, 4))).shape == (2, 3, 4)
    i = rng.integers(0, 5, size=(3, 2)).astype(np.int32)
    got = N(_core.sum_to(T(i), (2,)))
    assert got.dtype == np.int32  # sum_to keeps the dtype
    np.testing.assert_array_equal(got, i.sum(0))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("axis,keep", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_reduce_grad(name, axis, keep):
    a = rand(2, 3, 4)
    w = T(rand(*np.sum(a, axis=axis, keepdims=keep).shape))  # a non-uniform cotangent
    fn = getattr(_core, name)
    check_grad(lambda x: _core.mul(fn(x, axis, keep), w), [a])


def test_reduce_grad_non_contiguous_input():
    a = rand(3, 4)
    w = T(rand(4))
    check_grad(lambda x: _core.sum(_core.mul(_core.amax(_core.transpose(x, (1, 0)), 1), w)), [a])


def test_amax_grad_splits_ties():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    with _core.GradScope() as s:
        x = s.watch_input(T(a))
        (g,) = _core.gradient([_core.amax(x, 1)], [None], [x])
    np.testing.assert_allclose(N(g), [[0, 0.5, 0.5], [1, 0, 0]])
    with _core.GradScope() as s:
        x = s.watch_input(T(a))
        (g,) = _core.gradient([_core.amin(x)], [None], [x])
    np.testing.assert_allclose(N(g), [[0, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("a", [
    np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, -3.0]]),  # one zero, two zeros, none
])
def test_prod_grad_with_zeros(a):
    # Finite differences are exact here (prod is linear in each element).
    check_grad(lambda x: _core.prod(x, 1), [a])
    check_grad(lambda x: _core.prod(x, 0), [a])
    check_grad(lambda x: _core.prod(x), [a], atol=1e-5)


def test_grad_of_grad_sum_of_squares():
    # d²/dx² sum(x³)/… through reduce bprops: the tape records the backward pass.
    a = rand(3)
    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            y = _core.sum(_core.mul(_core.mul(xi, xi), xi))
            (g,) = _core.gradient([y], [None], [xi])
        (gg,) = _core.gradient([_core.sum(g)], [None], [x])
    np.testing.assert_allclose(N(gg), 6 * a, rtol=1e-12)


# --------------------------------------------------------------------------------------------- shape ops
def test_reshape_view_and_infer():
    a = rand(2, 3, 4)
    x = T(a)
    r = _core.reshape(x, (4, -1))
    assert r.shape == (4, 6) and r._shares_storage(x)
    np.testing.assert_array_equal(N(r), a.reshape(4, -1))
    np.testing.assert_array_equal(N(_core.reshape(x, 24)), a.reshape(24))
    np.testing.assert_array_equal(N(_core.reshape(x, (1, 2, 1, 12, 1))), a.reshape(1, 2, 1, 12, 1))
    assert N(_core.reshape(S(2.0), (1, 1))).shape == (1, 1)
    assert N(_core.reshape(T(np.ones((1, 1))), ())).shape == ()
    assert N(_core.reshape(T(np.zeros((0, 3))), (3, 0, 5))).shape == (3, 0, 5)
    assert N(_core.reshape(T(np.zeros((0, 3))), (-1, 6))).shape == (0, 6)
    with pytest.raises(ValueError, match="Reshape.*-1"):  # as NumPy: ambiguous
        _core.reshape(T(np.zeros((0, 3))), (3, 0, -1))


def test_reshape_non_contiguous():
    a = rand(3, 4, 5)
    t = _core.transpose(T(a), (1, 0, 2))  # (4, 3, 5)
    # merging the last two dims of a transposed tensor: not viewable → copy
    r = _core.reshape(t, (4, 15))
    np.testing.assert_array_equal(N(r), a.transpose(1, 0, 2).reshape(4, 15))
    assert not r._shares_storage(t)
    # splitting the last dim stays a view
    v = _core.reshape(t, (4, 3, 5, 1))
    assert v._shares_storage(t)
    np.testing.assert_array_equal(N(v), a.transpose(1, 0, 2).reshape(4, 3, 5, 1))
    s = _core.strided_slice(T(a), [0, 0, 0], [3, 4, 5], [1, 2, 1])  # (3, 2, 5), non-contiguous rows
    v2 = _core.reshape(s, (3, 10))
    np.testing.assert_array_equal(N(v2), a[:, ::2].reshape(3, 10))


def test_reshape_errors():
    x = T(rand(2, 3))
    with pytest.raises(ValueError, match=r"Reshape.*\[2, 3\].*\[4\]"):
        _core.reshape(x, (4,))
    with pytest.raises(ValueError, match="Reshape.*only one"):
        _core.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="Reshape"):
        _core.reshape(x, (-2, -3))
    with pytest.raises(ValueError, match="Reshape"):
        _core.reshape(x, (4, -1))


def test_transpose():
    a = rand(2, 3, 4)
    x = T(a)
    for perm in [(0, 1, 2), (2, 0, 1), (1, 2, 0), (-1, 0, 1)]:
        t = _core.transpose(x, perm)
        assert t._shares_storage(x)
        np.testing.assert_array_equal(N(t), a.transpose(perm))
    with pytest.raises(ValueError, match="Transpose.*permutation"):
        _core.transpose(x, (0, 0, 1))
    with pytest.raises(ValueError, match="Transpose"):
        _core.transpose(x, (0, 1))
    with pytest.raises(IndexError, match="Transpose"):
        _core.transpose(x, (0, 1, 3))


def test_broadcast_to():
    a = rand(3, 1)
    x = T(a)
    b = _core.broadcast_to(x, (2, 3, 4))
    assert b._shares_storage(x) and b.strides[-1] == 0
    np.testing.assert_array_equal(N(b), np.broadcast_to(a, (2, 3, 4)))
    np.testing.assert_array_equal(N(_core.broadcast_to(x, (2, -1, 5))), np.broadcast_to(a, (2, 3, 5)))
    with pytest.raises(ValueError, match="BroadcastTo"):
        _core.broadcast_to(x, (2, 4, 4))
    with pytest.raises(ValueError, match="BroadcastTo"):
        _core.broadcast_to(x, (4,))
    with pytest.raises(ValueError, match="BroadcastTo"):
        _core.broadcast_to(x, (-1, 3, 4))


def test_expand_dims_squeeze():
    a = rand(2, 1, 3)
    x = T(a)
    for ax in [0, 1, 3, -1, -4]:
        np.testing.assert_array_equal(N(_core.expand_dims(x, ax)), np.expand_dims(a, ax))
    with pytest.raises(IndexError, match="ExpandDims"):
        _core.expand_dims(x, 4)
    np.testing.assert_array_equal(N(_core.squeeze(x)), a.squeeze())
    np.testing.assert_array_equal(N(_core.squeeze(x, 1)), a.squeeze(1))
    np.testing.assert_array_equal(N(_core.squeeze(x, (-2,))), a.squeeze(-2))
    assert _core.squeeze(x)._shares_storage(x)
    with pytest.raises(ValueError, match="Squeeze.*must be 1"):
        _core.squeeze(x, 0)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_stack_split(axis):
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    ta = np.concatenate([a, b, c], axis=axis)
    np.testing.assert_array_equal(N(_core.concat([T(a), T(b), T(c)], axis)), ta)
    np.testing.assert_array_equal(N(_core.stack([T(a), T(b), T(c)], axis)), np.stack([a, b, c], axis=axis))
    sizes = [2, 0, 4] if ta.shape[axis] == 6 else [1, 3, 5]
    parts = _core.split(T(ta), sizes, axis)
    want = np.split(ta, np.cumsum(sizes)[:-1], axis=axis)
    assert len(parts) == 3
    for p, w in zip(parts, want):
        np.testing.assert_array_equal(N(p), w)


def test_concat_promotion_and_unequal_sizes():
    a = rng.integers(0, 5, (2, 3)).astype(np.int32)
    b = rand(4, 3, dtype=np.float32)
    r = N(_core.concat([T(a), T(b)], 0))
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.concatenate([a.astype(np.float32), b]))
    h = rand(1, 3, dtype=np.float16)
    assert N(_core.concat([T(h), T(b)])).dtype == np.float32
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(N(_core.concat([T(e), T(b)])), b)
    # non-contiguous inputs
    t = _core.transpose(T(rand(3, 2)), (1, 0))
    np.testing.assert_array_equal(N(_core.concat([t, T(a.astype(np.float64))], 1)),
                                  np.concatenate([N(t), a], 1))


def test_concat_stack_split_errors():
    with pytest.raises(ValueError, match="Concat.*same shape"):
        _core.concat([T(rand(2, 3)), T(rand(2, 4))], 0)
    with pytest.raises(ValueError, match="Concat"):
        _core.concat([], 0)
    with pytest.raises(ValueError, match="Concat.*zero-dimensional"):
        _core.concat([S(1), S(2)])
    with pytest.raises(IndexError, match="Concat"):
        _core.concat([T(rand(2, 3))], 2)
    with pytest.raises(ValueError, match="Stack.*same shape"):
        _core.stack([T(rand(2, 3)), T(rand(3, 2))])
    with pytest.raises(ValueError, match="Split.*sum"):
        _core.split(T(rand(5, 2)), [2, 2], 0)
    with pytest.raises(TypeError, match="Concat"):
        _core.concat(T(rand(2)), 0)


def py_slice_args(shape, slices):
    b, e, s = [], [], []
    for d, sl in zip(shape, slices):
        bb, ee, ss = sl.indices(d)
        b.append(bb), e.append(ee), s.append(ss)
    return b, e, s


@pytest.mark.parametrize("slices", [
    (slice(1, 3), slice(None)),
    (slice(None, None, 2), slice(1, None, 3)),
    (slice(None, None, -1), slice(None)),
    (slice(3, 0, -2), slice(-1, None, -1)),
    (slice(2, 2), slice(None)),
    (slice(10, 20), slice(-100, 100, -1)),
    (slice(-2, None),),
])
def test_strided_slice(slices):
    a = rand(5, 4)
    x = T(a)
    b, e, s = py_slice_args(a.shape, slices)
    r = _core.strided_slice(x, b, e, s)
    assert r._shares_storage(x)
    np.testing.assert_array_equal(N(r), a[slices])
    w = T(rand(*a[slices].shape))
    check_grad(lambda t: _core.mul(_core.strided_slice(t, b, e, s), w), [a])


def test_strided_slice_of_view_and_errors():
    a = rand(4, 6)
    t = _core.transpose(T(a), (1, 0))
    b, e, s = py_slice_args((6, 4), (slice(None, None, -2), slice(1, 3)))
    np.testing.assert_array_equal(N(_core.strided_slice(t, b, e, s)), a.T[::-2, 1:3])
    with pytest.raises(ValueError, match="StridedSlice.*step"):
        _core.strided_slice(T(a), [0], [4], [0])
    with pytest.raises(ValueError, match="StridedSlice"):
        _core.strided_slice(T(a), [0, 0, 0], [1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="StridedSlice"):
        _core.strided_slice(T(a), [0, 0], [1], [1, 1])


def test_strided_slice_grad_of_grad():
    # StridedSliceGrad's bprop is StridedSlice: second derivative of sum(x[1:3]**3) = 6x on the slice, 0 elsewhere.
    a = rand(5)
    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            y = _core.sum(_core.mul(_core.square(_core.strided_slice(xi, [1], [3], [1])),
                                    _core.strided_slice(xi, [1], [3], [1])))
            (g,) = _core.gradient([y], [None], [xi])
        (gg,) = _core.gradient([_core.sum(g)], [None], [x])
    want = np.zeros(5)
    want[1:3] = 6 * a[1:3]
    np.testing.assert_allclose(N(gg), want, rtol=1e-12)


def W(*shape):
    return T(rand(*shape))


@pytest.mark.parametrize("fn,wshape", [
    (lambda x: _core.reshape(x, (4, 6)), (4, 6)),
    (lambda x: _core.transpose(x, (2, 0, 1)), (4, 2, 3)),
    (lambda x: _core.broadcast_to(x, (5, 2, 3, 4)), (5, 2, 3, 4)),
    (lambda x: _core.broadcast_to(_core.reshape(x, (2, 1, 12)), (2, 3, 12)), (2, 3, 12)),
    (lambda x: _core.expand_dims(x, 1), (2, 1, 3, 4)),
    (lambda x: _core.squeeze(_core.reshape(x, (1, 24, 1))), (24,)),
    # reshape of a non-viewable input (copy path) still differentiates
    (lambda x: _core.reshape(_core.transpose(x, (1, 0, 2)), (3, 8)), (3, 8)),
])
def test_shape_op_grads(fn, wshape):
    w = W(*wshape)
    check_grad(lambda x: _core.mul(fn(x), w), [rand(2, 3, 4)])


def test_concat_stack_split_grads():
    a, b = rand(2, 3), rand(2, 2)
    w = T(rand(2, 5))
    check_grad(lambda x, y: _core.mul(_core.concat([x, y], 1), w), [a, b])
    w2 = T(rand(2, 2, 3))
    check_grad(lambda x, y: _core.mul(_core.stack([x, y], 1), w2), [a, rand(2, 3)])

    wq = T(rand(2, 2))

    def f(x):
        p, q = _core.split(x, [1, 2], 1)
        return _core.add(_core.sum(_core.mul(p, p)), _core.sum(_core.mul(q, wq)))

    check_grad(f, [a])


def test_concat_grad_to_int_input_is_none():
    a = rng.integers(0, 3, (2, 3)).astype(np.int32)
    b = rand(1, 3)
    with _core.GradScope() as s:
        y = s.watch_input(T(b))
        (g,) = _core.gradient([_core.concat([T(a), y], 0)], [None], [y])
    np.testing.assert_array_equal(N(g), np.ones((1, 3)))


# --------------------------------------------------------------------------------------------- softmax
def np_softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((7,), 0), ((2, 1), 1), ((), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_forward(shape, axis, dtype):
    a = (rand(*shape) * 3).astype(dtype)
    x = _core.Tensor._from_numpy(np.array(a))
    assert x.shape == shape
    s = N(_core.softmax(x, axis))
    ls = N(_core.log_softmax(x, axis))
    assert s.dtype == dtype and ls.dtype == dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    ax = axis if len(shape) else None
    np.testing.assert_allclose(s, np_softmax(a.astype(np.float64), ax), rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(ls, np.log(np_softmax(a.astype(np.float64), ax)), rtol=rtol, atol=1e-6)


def test_softmax_stable_and_half():
    a = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    np.testing.assert_allclose(N(_core.softmax(T(a))), np_softmax(a.astype(np.float64), -1), rtol=1e-5)
    np.testing.assert_allclose(N(_core.log_softmax(T(a))), np.log(np_softmax(a.astype(np.float64), -1)), rtol=1e-5)
    h = rand(4, 8, dtype=np.float16)
    got = N(_core.softmax(T(h), 1))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), np_softmax(h.astype(np.float64), 1), rtol=5e-3, atol=1e-3)
    t = _core.transpose(T(rand(3, 4)), (1, 0))
    np.testing.assert_allclose(N(_core.softmax(t, 0)), np_softmax(N(t), 0), rtol=1e-12)


def test_softmax_errors():
    with pytest.raises(TypeError, match="Softmax.*Int32"):
        _core.softmax(T(np.arange(4, dtype=np.int32)))
    with pytest.raises(TypeError, match="LogSoftmax.*Bool"):
        _core.log_softmax(T(np.ones(3, bool)))
    with pytest.raises(IndexError, match="Softmax"):
        _core.softmax(T(rand(2, 3)), 2)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_grads(axis):
    a = rand(3, 4)
    w = T(rand(3, 4))
    check_grad(lambda x: _core.mul(_core.softmax(x, axis), w), [a])
    check_grad(lambda x: _core.mul(_core.log_softmax(x, axis), w), [a])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_second_order(name):
    # Hessian-vector product of sum(w·f(x)) vs finite differences of the analytic gradient.
    a = rand(2, 4)
    w = T(rand(2, 4))
    v = T(rand(2, 4))
    fn = getattr(_core, name)

    def grad_at(arr):
        with _core.GradScope() as s:
            x = s.watch_input(T(arr))
            (g,) = _core.gradient([_core.mul(fn(x, 1), w)], [None], [x])
        return N(g)

    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            (g,) = _core.gradient([_core.mul(fn(xi, 1), w)], [None], [xi])
        (hv,) = _core.gradient([_core.mul(g, v)], [None], [x])
    eps = 1e-6
    want = (grad_at(a + eps * N(v)) - grad_at(a - eps * N(v))) / (2 * eps)
    np.testing.assert_allclose(N(hv), want, rtol=1e-5, atol=1e-7)
