"""ops.iou / IOU, bounding_box_encode / BoundingBoxEncode, bounding_box_decode / BoundingBoxDecode, check_valid /
CheckValid, FloatStatus and scalar_cast: the values MindSpore 2.10 (CPU) gives for the same calls, a round trip,
gradients against float64 finite differences, Graph mode, and bad input."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, ops

A = Tensor(np.array([[0, 0, 10, 10], [5, 5, 15, 15], [0, 0, 2, 2]], np.float32))
G = Tensor(np.array([[0, 0, 10, 10], [6, 4, 12, 14]], np.float32))
MEANS, STDS = (0.1, 0.0, 0.0, 0.2), (0.1, 0.1, 0.2, 0.2)


def test_values_match_mindspore():
    np.testing.assert_allclose(ops.IOU()(A, G).asnumpy(), [[1.0, 0.17475729, 0.07438017], [0.21472393, 0.546875, 0.0]],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.iou(A, G, mode="iof").asnumpy(),
                               [[1.0, 0.29752067, 0.07438017], [0.45454547, 0.90909094, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(ops.IOU()(Tensor(np.array([[0, 0, 3, 3]], np.float32)),
                                         Tensor(np.array([[4, 4, 6, 6], [3, 3, 5, 5]], np.float32))).asnumpy(),
                               [[0.0], [0.04166667]], rtol=1e-6)
    enc = ops.BoundingBoxEncode(MEANS, STDS)(A[:2], G)
    np.testing.assert_allclose(enc.asnumpy(), [[-1.0, 0.0, 0.0, -1.0], [-1.9090909, -0.90909094, -2.2599256, -1.0]],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.BoundingBoxDecode((12, 13), MEANS, STDS)(A[:2], enc).asnumpy(),
                               [[0, 0, 10, 10], [6, 4, 12, 12]], atol=1e-5)
    a2 = A[:2]
    np.testing.assert_allclose(
        ops.bounding_box_decode(a2, Tensor(np.array([[0.0, 0, 2, -10], [0.5, -0.5, 0.1, 0.2]], np.float32)),
                                (100, 100)).asnumpy(),
        [[0.0, 5.412, 45.13981, 4.588], [9.92156, 0.0, 21.07844, 10.717715]], rtol=1e-5)
    np.testing.assert_allclose(
        ops.bounding_box_decode(a2, Tensor(np.array([[0.5, 0.5, 0, 0], [-2.0, -2, 0, 0]], np.float32)),
                                (12, 9)).asnumpy(), [[5.5, 5.5, 9.0, 12.0], [0, 0, 0, 0]], atol=1e-6)
    valid = ops.CheckValid()(Tensor(np.array([[0, 0, 10, 10], [0, 0, 11, 9], [0, 0, 11.5, 9], [0, -0.5, 3, 3]],
                                             np.float32)), Tensor(np.array([10, 12, 1], np.float32)))
    assert valid.dtype == kiln.bool_ and valid.asnumpy().tolist() == [False, True, False, False]
    assert ops.check_valid(Tensor(np.array([[0, 0, 23, 10]], np.float32)),
                           Tensor(np.array([10, 12, 2], np.float32))).asnumpy().tolist() == [True]


def test_encode_decode_round_trip():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (20, 2))
    wh = rng.uniform(2, 30, (20, 2))
    anchors = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    gts = (anchors + rng.uniform(-3, 3, anchors.shape)).clip(0, 90).astype(np.float32)
    gts[:, 2:] = np.maximum(gts[:, 2:], gts[:, :2] + 1)
    d = ops.bounding_box_encode(Tensor(anchors), Tensor(gts), MEANS, STDS)
    back = ops.bounding_box_decode(Tensor(anchors), d, (100, 100), MEANS, STDS)
    np.testing.assert_allclose(back.asnumpy(), gts, atol=1e-3)


def test_iou_gradient_and_graph_mode():
    rng = np.random.default_rng(1)
    a = np.array([[0.0, 0.0, 10.0, 10.0], [3.0, 2.0, 8.0, 9.0]])
    g = np.array([[1.0, 1.5, 9.0, 12.0]])
    w = rng.standard_normal((1, 2))

    def f(x):
        return float((ops.iou(Tensor(x), Tensor(g)).asnumpy() * w).sum())

    grad = kiln.grad(lambda x: (ops.iou(x, Tensor(g)) * Tensor(w)).sum())(Tensor(a)).asnumpy()
    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        ap, am = a.copy(), a.copy()
        ap[i] += 1e-6
        am[i] -= 1e-6
        num[i] = (f(ap) - f(am)) / 2e-6
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-8)
    dec = lambda x, y: ops.bounding_box_decode(x, y, (50, 60), MEANS, STDS)
    d = Tensor(rng.standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_allclose(kiln.jit(dec)(A, d).asnumpy(), dec(A, d).asnumpy(), rtol=1e-6)


def test_float_status_and_scalar_cast():
    assert ops.FloatStatus()(Tensor(np.array([1.0, np.inf], np.float32))).asnumpy().tolist() == [1.0]
    assert ops.FloatStatus()(Tensor(np.array([np.nan, 1.0], np.float16))).asnumpy().tolist() == [1.0]
    ok = ops.FloatStatus()(Tensor(np.array([1.0, -2.0], np.float32)))
    assert ok.shape == (1,) and ok.dtype == kiln.float32 and ok.asnumpy().tolist() == [0.0]
    assert ops.FloatStatus()(Tensor(np.zeros((0,), np.float32))).asnumpy().tolist() == [0.0]
    assert ops.scalar_cast(3.7, kiln.int32) == 3 and ops.ScalarCast()(3, kiln.float32) == 3.0
    assert isinstance(ops.scalar_cast(3, kiln.float32), float)
    with pytest.raises(TypeError, match="float"):
        ops.FloatStatus()(Tensor(np.array([1, 2], np.int32)))


def test_bad_input():
    with pytest.raises(ValueError, match="mode"):
        ops.IOU(mode="giou")
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        ops.iou(Tensor(np.zeros((2, 3), np.float32)), G)
    with pytest.raises(ValueError, match="one shape"):
        ops.bounding_box_encode(A, G)
    with pytest.raises(TypeError, match="means"):
        ops.BoundingBoxEncode(means=(0.0, 0.0))
    with pytest.raises(TypeError, match="max_shape"):
        ops.bounding_box_decode(A, A, 5)
    with pytest.raises(TypeError, match="wh_ratio_clip"):
        ops.bounding_box_decode(A, A, (5, 5), wh_ratio_clip=0)
    with pytest.raises(ValueError, match="img_metas"):
        ops.check_valid(A, Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="scalar_cast"):
        ops.scalar_cast("3", kiln.int32)
