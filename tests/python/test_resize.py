"""ops.interpolate, ops.ResizeNearestNeighbor, ops.ResizeBilinearV2 and nn.Upsample: the exact outputs MindSpore 2.10
gives for a 3×4 ramp (values computed by the op registry's independent NumPy reference are checked there), scale
factors, and bad input."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, nn, ops

X = Tensor(np.arange(12).reshape(1, 1, 3, 4).astype(np.float32))

# MindSpore 2.10 (CPU), rounded to 4 decimals
MS = {
    "nearest": [0, 0, 1, 2, 2, 3, 0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 10, 11],
    "nearest-exact": [0, 1, 1, 2, 3, 3, 0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 9, 10, 11, 11, 8, 9, 9, 10, 11, 11],
    "bilinear": [0.0, 0.5, 1.1667, 1.8333, 2.5, 3.0, 1.6, 2.1, 2.7667, 3.4333, 4.1, 4.6, 4.0, 4.5, 5.1667, 5.8333,
                 6.5, 7.0, 6.4, 6.9, 7.5667, 8.2333, 8.9, 9.4, 8.0, 8.5, 9.1667, 9.8333, 10.5, 11.0],
    "bilinear_ac": [0.0, 0.6, 1.2, 1.8, 2.4, 3.0, 2.0, 2.6, 3.2, 3.8, 4.4, 5.0, 4.0, 4.6, 5.2, 5.8, 6.4, 7.0, 6.0, 6.6,
                    7.2, 7.8, 8.4, 9.0, 8.0, 8.6, 9.2, 9.8, 10.4, 11.0],
    "rnn_ac": [0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 4, 5, 5, 6, 6, 7, 8, 9, 9, 10, 10, 11, 8, 9, 9, 10, 10, 11],
    "rbl": [0.0, 0.6667, 1.3333, 2.0, 2.6667, 3.0, 2.4, 3.0667, 3.7333, 4.4, 5.0667, 5.4, 4.8, 5.4667, 6.1333, 6.8,
            7.4667, 7.8, 7.2, 7.8667, 8.5333, 9.2, 9.8667, 10.2, 8.0, 8.6667, 9.3333, 10.0, 10.6667, 11.0],
}


def _close(t, want):
    np.testing.assert_allclose(np.round(t.asnumpy().ravel(), 4), want, atol=1e-4)


def test_values_match_mindspore():
    _close(ops.interpolate(X, size=(5, 6), mode="nearest"), MS["nearest"])
    _close(ops.interpolate(X, size=(5, 6), mode="nearest-exact"), MS["nearest-exact"])
    _close(ops.interpolate(X, size=(5, 6), mode="bilinear"), MS["bilinear"])
    _close(ops.interpolate(X, size=(5, 6), mode="bilinear", align_corners=True), MS["bilinear_ac"])
    _close(ops.interpolate(X, size=(2, 3), mode="bilinear"), [1.1667, 2.5, 3.8333, 7.1667, 8.5, 9.8333])
    _close(ops.interpolate(X, size=(2, 2), mode="area"), [2.5, 4.5, 6.5, 8.5])
    _close(ops.interpolate(Tensor(np.arange(4).reshape(1, 1, 4).astype(np.float32)), size=7, mode="linear"),
           [0.0, 0.3571, 0.9286, 1.5, 2.0714, 2.6429, 3.0])
    _close(ops.ResizeNearestNeighbor((5, 6))(X), MS["nearest"])
    _close(ops.ResizeNearestNeighbor((5, 6), align_corners=True)(X), MS["rnn_ac"])
    _close(ops.ResizeBilinearV2()(X, (5, 6)), MS["rbl"])
    _close(ops.ResizeBilinearV2(half_pixel_centers=True)(X, (5, 6)), MS["bilinear"])
    _close(ops.interpolate(X, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
           [0.0, 0.5, 1.1667, 1.8333, 2.5, 3.0, 2.5, 3.0, 3.6667, 4.3333, 5.0, 5.5, 5.5, 6.0, 6.6667, 7.3333, 8.0,
            8.5, 8.0, 8.5, 9.1667, 9.8333, 10.5, 11.0])


def test_scale_factor_uses_the_factor_unless_recomputed():
    # PyTorch's rule: source = (d + 0.5)/scale − 0.5 with the given scale (here 1.5 on 3 → 4 rows: 4/3 ≠ 1.5)
    y = ops.interpolate(X, scale_factor=(1.5, 1.5), mode="bilinear")
    assert y.shape == (1, 1, 4, 6)
    col0 = [max((d + 0.5) / 1.5 - 0.5, 0.0) * 4 for d in range(4)]
    np.testing.assert_allclose(y.asnumpy()[0, 0, :, 0], col0, rtol=1e-6)
    up = nn.Upsample(scale_factor=2.0)(X)
    np.testing.assert_array_equal(up.asnumpy()[0, 0], np.repeat(np.repeat(X.asnumpy()[0, 0], 2, 0), 2, 1))


def test_graph_mode_and_gradient_of_a_resize_in_a_network():
    net = nn.SequentialCell([nn.Conv2d(1, 2, 3), nn.Upsample(size=(6, 8), mode="bilinear")])
    x = Tensor(np.random.default_rng(0).standard_normal((2, 1, 3, 4)).astype(np.float32))
    eager = net(x).asnumpy()
    np.testing.assert_allclose(kiln.jit(lambda a: net(a))(x).asnumpy(), eager, rtol=1e-6, atol=1e-6)
    grads = kiln.value_and_grad(lambda a: net(a).sum(), None, net.trainable_params())(x)[1]
    assert all(np.isfinite(g.asnumpy()).all() for g in grads)
    assert np.abs(grads[0].asnumpy()).sum() > 0


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        ops.interpolate(X, size=(2, 2), scale_factor=2.0)
    with pytest.raises(ValueError, match="exactly one"):
        ops.interpolate(X)
    with pytest.raises(ValueError, match="mode"):
        ops.interpolate(X, size=(2, 2), mode="cubic")
    with pytest.raises(ValueError, match="bicubic"):
        ops.interpolate(X, size=(2, 2), mode="bicubic")
    with pytest.raises(ValueError, match="3-D"):
        ops.interpolate(X, size=(2, 2), mode="linear")
    with pytest.raises(ValueError, match="align_corners"):
        ops.interpolate(X, size=(2, 2), mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="size"):
        ops.interpolate(X, size=(2, 0), mode="bilinear")
    with pytest.raises(TypeError, match="float"):
        ops.interpolate(Tensor(np.zeros((1, 1, 2, 2), np.int32)), size=(3, 3))
    with pytest.raises(ValueError, match="size"):
        ops.ResizeNearestNeighbor((2,))
    with pytest.raises(ValueError, match="both"):
        ops.ResizeBilinearV2(align_corners=True, half_pixel_centers=True)
    with pytest.raises(ValueError, match="4-D"):
        ops.ResizeBilinearV2()(Tensor(np.zeros((2, 2), np.float32)), (3, 3))
