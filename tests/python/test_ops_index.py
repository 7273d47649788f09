"""Gather, UnsortedSegmentSum and NonZero of kiln._core: forward vs NumPy, gradients, errors."""
import numpy as np
import pytest

from kiln import _core
from helpers import N, T, check_grad

rng = np.random.default_rng(1)


def rand(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def I(a, dtype=np.int64):
    """An index tensor; 0-d stays 0-d (helpers.T would make it 1-d)."""
    return _core.Tensor._from_numpy(np.array(a, dtype=dtype))


@pytest.mark.parametrize("shape,axis,idx", [
    ((5,), 0, [4, 0, -1, 2]),
    ((4, 3), 0, [[0, 1], [3, -4]]),
    ((4, 3), 1, [2, 2, 0]),
    ((4, 3), -1, [[1], [0]]),
    ((2, 3, 4), 1, [[0, 2, 1]]),
    ((2, 3, 4), 2, 3),  # a 0-d index drops the axis
    ((2, 3, 4), 0, np.zeros((0,), np.int64)),
])
@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32])
def test_gather_forward(shape, axis, idx, idx_dtype):
    a = rand(*shape, dtype=np.float32)
    idx = np.array(idx, dtype=idx_dtype)
    got = N(_core.gather(T(a), I(idx, idx_dtype), axis))
    want = np.take(a, idx, axis=axis)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_gather_dtypes_and_views():
    for dt in (np.int32, np.bool_, np.float16, np.float64, np.uint8):
        a = (rand(4, 3) * 5).astype(dt)
        np.testing.assert_array_equal(N(_core.gather(T(a), I([3, 1]), 0)), a[[3, 1]])
    a = rand(4, 5)
    t = _core.transpose(T(a), (1, 0))
    np.testing.assert_array_equal(N(_core.gather(t, I([4, 0]), 0)), a.T[[4, 0]])
    np.testing.assert_array_equal(N(_core.gather(t, I([3, 0]), 1)), a.T[:, [3, 0]])


def test_gather_errors():
    x = T(rand(4, 3))
    with pytest.raises(IndexError, match=r"Gather.*index 4.*size 4"):
        _core.gather(x, I([0, 4]), 0)
    with pytest.raises(IndexError, match=r"Gather.*index -5.*size 4"):
        _core.gather(x, I([-5]), 0)
    with pytest.raises(TypeError, match="Gather.*Float32"):
        _core.gather(x, T(np.array([0.0], np.float32)), 0)
    with pytest.raises(IndexError, match="Gather"):
        _core.gather(x, I([0]), 2)


@pytest.mark.parametrize("shape,axis,idx", [
    ((5,), 0, [4, 0, -1, 4]),          # repeated indices accumulate
    ((4, 3), 0, [[0, 1], [3, 0]]),
    ((4, 3), 1, [2, -1, 0, 2]),
    ((2, 3, 4), 1, [[0, 2], [1, 1]]),
    ((2, 3, 4), 2, 3),
])
def test_gather_grad(shape, axis, idx):
    a = rand(*shape)
    idx = np.array(idx)
    w = T(rand(*np.take(a, idx, axis=axis).shape))
    check_grad(lambda x: _core.mul(_core.gather(x, I(idx), axis), w), [a])


def np_segment_sum(x, ids, n):
    out = np.zeros((n,) + x.shape[ids.ndim:], x.dtype)
    for pos in np.ndindex(*ids.shape):
        if 0 <= ids[pos] < n:
            out[ids[pos]] += x[pos]
    return out


@pytest.mark.parametrize("xshape,ids,n", [
    ((6,), [0, 2, 2, 1, 0, 3], 4),
    ((5, 3), [1, 1, 0, 4, 2], 5),
    ((2, 3, 4), [[0, 1, 0], [2, 2, 1]], 3),
    ((4, 2), [0, -1, 7, 1], 2),       # out-of-range ids are dropped (MindSpore)
    ((3, 2), [0, 1, 2], 0),
])
def test_unsorted_segment_sum(xshape, ids, n):
    a = rand(*xshape)
    ids = np.array(ids)
    got = N(_core.unsorted_segment_sum(T(a), I(ids, np.int32), n))
    np.testing.assert_allclose(got, np_segment_sum(a, ids, n), rtol=1e-12)
    if n > 0:
        w = T(rand(*got.shape))
        check_grad(lambda x: _core.mul(_core.unsorted_segment_sum(x, I(ids), n), w), [a])


def test_unsorted_segment_sum_dtypes_and_errors():
    a = rng.integers(0, 5, (4, 2)).astype(np.int32)
    got = N(_core.unsorted_segment_sum(T(a), I([0, 1, 0, 1]), 2))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np_segment_sum(a, np.array([0, 1, 0, 1]), 2))
    h = rand(4, 2, dtype=np.float16)
    np.testing.assert_allclose(N(_core.unsorted_segment_sum(T(h), I([1, 1, 1, 0]), 2)).astype(np.float32),
                               np_segment_sum(h.astype(np.float32), np.array([1, 1, 1, 0]), 2), rtol=2e-3)
    with pytest.raises(ValueError, match="UnsortedSegmentSum.*prefix"):
        _core.unsorted_segment_sum(T(rand(4, 2)), I([0, 1, 2]), 3)
    with pytest.raises(TypeError, match="UnsortedSegmentSum.*Float32"):
        _core.unsorted_segment_sum(T(rand(4)), T(np.zeros(4, np.float32)), 3)
    with pytest.raises(ValueError, match="UnsortedSegmentSum.*num_segments"):
        _core.unsorted_segment_sum(T(rand(4)), I([0, 0, 0, 0]), -1)


def test_gather_uss_grad_of_grad():
    # Gather's bprop is UnsortedSegmentSum and vice versa: the second derivative of sum(gather(x)^3) is
    # 6·x[i]·count(i) at each gathered position i.
    a = rand(4)
    idx = np.array([1, 1, 3])
    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            gth = _core.gather(xi, I(idx), 0)
            y = _core.sum(_core.mul(_core.square(gth), gth))
            (g,) = _core.gradient([y], [None], [xi])
        (gg,) = _core.gradient([_core.sum(g)], [None], [x])
    counts = np.bincount(idx, minlength=4)
    np.testing.assert_allclose(N(gg), 6 * a * counts, rtol=1e-12)


@pytest.mark.parametrize("a", [
    np.array([0.0, 1.5, 0.0, -2.0]),
    np.array([[0, 1, 0], [3, 0, 4]], np.int32),
    np.array([[True, False], [False, False]]),
    np.zeros((2, 3)),
    np.ones((2, 0, 3), np.float32),
    rng.random((3, 4, 2)) > 0.5,
])
def test_nonzero(a):
    got = N(_core.nonzero(T(a)))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argwhere(a))
    assert got.shape == (np.count_nonzero(a), a.ndim)


def test_nonzero_of_view_and_not_differentiable():
    a = rand(3, 4)
    a[a < 0] = 0
    t = _core.transpose(T(a), (1, 0))
    np.testing.assert_array_equal(N(_core.nonzero(t)), np.argwhere(a.T))
    with _core.GradScope() as s:
        x = s.watch_input(T(a))
        nz = _core.nonzero(x)
        assert not nz._has_grad_fn
