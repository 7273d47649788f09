"""ops.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against MindSpore 2.10's values (the window starts
and the chosen elements for fixed `_random_samples`), in PyNative and Graph mode; the registry rows
(op_registry/nnfunc.py) check them against a NumPy reference with finite-difference gradients."""
import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops

# Inputs drawn in this order from RandomState(0); the expected indices are MindSpore 2.10's (CPU) for them.
_rng = np.random.RandomState(0)
X = _rng.rand(2, 3, 9, 8).astype(np.float32)
S = _rng.rand(2, 3, 2).astype(np.float32)
X3 = _rng.rand(2, 2, 7, 6, 8).astype(np.float32)
S3 = _rng.rand(2, 2, 3).astype(np.float32)
XI = (_rng.rand(1, 2, 6, 6) * 3).astype(np.int32)

MS_I0_12 = [[17, 17, 4, 4, 22], [17, 17, 35, 35, 22], [41, 35, 35, 35, 45], [66, 66, 66, 61, 61]]
MS_I1_01 = [[0, 2, 12, 14], [24, 26, 37, 31], [48, 50, 44, 46], [56, 66, 68, 71]]
MS_J1_11 = [[[99, 6], [67, 79], [136, 85]], [[99, 204], [163, 174], [136, 238]], [[152, 204], [257, 174], [179, 238]],
            [[193, 204], [313, 269], [330, 238]]]
MS_IT_01 = [[0, 2, 4, 4], [13, 8, 9, 10], [18, 20, 22, 22], [24, 32, 34, 34]]  # int32 input with ties
MS_YT_01 = [[1, 2, 2, 2], [1, 2, 2, 1], [2, 1, 2, 2], [2, 2, 2, 2]]


def _gathered(x, idx, nd):
    """x's values at the flat indices idx over the trailing nd dims."""
    flat = x.reshape(x.shape[:x.ndim - nd] + (-1,))
    return np.take_along_axis(flat, idx.reshape(idx.shape[:idx.ndim - nd] + (-1,)), -1).reshape(idx.shape)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_matches_mindspore(mode):
    def run(fn, *args):
        return (ms.jit(fn) if mode == "graph" else fn)(*args)

    y, i = run(lambda x, s: ops.fractional_max_pool2d(x, 3, output_size=(4, 5), return_indices=True,
                                                      _random_samples=s), ms.Tensor(X), ms.Tensor(S))
    assert i.dtype == ms.int64 and y.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(i.asnumpy()[1, 2], MS_I0_12)
    np.testing.assert_array_equal(y.asnumpy(), _gathered(X, i.asnumpy(), 2))
    _, i = run(lambda x, s: ops.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.6), return_indices=True,
                                                      _random_samples=s), ms.Tensor(X), ms.Tensor(S))
    np.testing.assert_array_equal(i.asnumpy()[0, 1], MS_I1_01)
    y, j = run(lambda x, s: ops.fractional_max_pool3d(x, (3, 2, 4), output_size=(4, 3, 2), return_indices=True,
                                                      _random_samples=s), ms.Tensor(X3), ms.Tensor(S3))
    np.testing.assert_array_equal(j.asnumpy()[1, 1], MS_J1_11)
    np.testing.assert_array_equal(y.asnumpy(), _gathered(X3, j.asnumpy(), 3))
    y, i = run(lambda x, s: ops.fractional_max_pool2d(x, 2, output_size=(4, 4), return_indices=True,
                                                      _random_samples=s), ms.Tensor(XI), ms.Tensor(S[:1, :2]))
    assert y.dtype == ms.int32
    np.testing.assert_array_equal(i.asnumpy()[0, 1], MS_IT_01)  # ties: the first maximum, h outer, w inner
    np.testing.assert_array_equal(y.asnumpy()[0, 1], MS_YT_01)


def test_cells_and_unbatched_input():
    s1 = ms.Tensor(S[:1])
    net = nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True, _random_samples=s1)
    y, i = net(ms.Tensor(X[1]))  # (C, H, W): samples (1, C, 2)
    yb, ib = ops.fractional_max_pool2d(ms.Tensor(X[1:2]), 3, output_size=(4, 5), return_indices=True,
                                       _random_samples=s1)
    assert y.shape == (3, 4, 5)
    np.testing.assert_array_equal(i.asnumpy(), ib.asnumpy()[0])
    np.testing.assert_array_equal(y.asnumpy(), yb.asnumpy()[0])
    net3 = nn.FractionalMaxPool3d((3, 2, 4), output_size=(4, 3, 2), _random_samples=ms.Tensor(S3))
    want = _gathered(X3[1, 1], np.array(MS_J1_11), 3)
    np.testing.assert_array_equal(net3(ms.Tensor(X3)).asnumpy()[1, 1], want)
    # without samples: fresh starts at every call, each a valid fractional pooling (values are window maxima)
    y = nn.FractionalMaxPool2d(2, output_ratio=0.5)(ms.Tensor(X))
    assert y.shape == (2, 3, 4, 4)
    assert np.all(np.isin(y.asnumpy(), X))


def test_gradient_goes_to_the_chosen_elements():
    x = ms.Tensor(X.astype(np.float64))
    s = ms.Tensor(S)
    g = ms.grad(lambda x: ops.fractional_max_pool2d(x, 3, output_size=(4, 5), _random_samples=s).sum())(x)
    _, i = ops.fractional_max_pool2d(x, 3, output_size=(4, 5), return_indices=True, _random_samples=s)
    want = np.zeros((2, 3, 72))
    ii = i.asnumpy().reshape(2, 3, -1)
    for n in range(2):
        for c in range(3):
            np.add.at(want[n, c], ii[n, c], 1.0)  # overlapping windows that choose one element add up
    np.testing.assert_array_equal(g.asnumpy().reshape(2, 3, -1), want)


def test_bad_input_raises_clear_errors():
    x = ms.Tensor(X)
    with pytest.raises(ValueError, match=r"fractional_max_pool2d.*kernel height 3 \+ output height 8 - 1 must be <= "
                                         r"the input height 9"):
        ops.fractional_max_pool2d(x, 3, output_size=(8, 4), _random_samples=ms.Tensor(S))
    with pytest.raises(ValueError, match=r"'output_ratio\[0\]' must be in range of \(0.0, 1.0\), but got 1.0"):
        ops.fractional_max_pool2d(x, 3, output_ratio=1.0)
    with pytest.raises(ValueError, match="'output_size' and 'output_ratio' can not be None at the same time"):
        ops.fractional_max_pool2d(x, 3)
    with pytest.raises(ValueError, match="'output_size' and 'output_ratio' can not be None at the same time"):
        nn.FractionalMaxPool3d(2)
    with pytest.raises(ValueError, match=r"'_random_samples' must have shape \(2, 3, 2\) for an input of shape "
                                         r"\(2, 3, 9, 8\), but got \(2, 3, 3\)"):
        ops.fractional_max_pool2d(x, 2, output_size=3, _random_samples=ms.Tensor(np.zeros((2, 3, 3), np.float32)))
    with pytest.raises(ValueError, match=r"'_random_samples' must be in \[0, 1\], but got min nan"):
        ops.fractional_max_pool2d(x, 2, output_size=3, _random_samples=ms.Tensor(np.full((2, 3, 2), np.nan,
                                                                                          np.float32)))
    with pytest.raises(ValueError, match=r"must be a 3 or 4-D tensor, but got 2-D"):
        ops.fractional_max_pool2d(ms.Tensor(X[0, 0]), 2, output_size=3)
    with pytest.raises(TypeError, match=r"must be a real number Tensor, but got Bool"):
        ops.fractional_max_pool2d(ms.Tensor(X > 0.5), 2, output_size=3)
    # an output_ratio that leaves an output size of 0: MindSpore 2.10 raises ValueError ("attr 'output_shape' must
    # be an positive int number ..."); Kiln's message used to be the kernel rule "2 + output height 0 - 1 must be
    # <= the input height 9", which holds
    with pytest.raises(ValueError, match=r"the output height must be positive, but output_ratio\[0\] = 1e-09 of the "
                                         r"input height 9 gives 0"):
        ops.fractional_max_pool2d(x, 2, output_ratio=(1e-9, 0.5))
    with pytest.raises(ValueError, match=r"the output width must be positive, but output_ratio\[2\] = 0.1"):
        ops.fractional_max_pool3d(ms.Tensor(np.ones((1, 1, 6, 6, 6), np.float32)), 1, output_ratio=(0.5, 0.5, 0.1))


@pytest.mark.parametrize("shape,op,out", [((0, 3, 8, 8), "fractional_max_pool2d", (4, 4)),
                                          ((2, 0, 8, 8), "fractional_max_pool2d", (4, 4)),
                                          ((0, 8, 8), "fractional_max_pool2d", (4, 4)),
                                          ((0, 1, 4, 4, 4), "fractional_max_pool3d", (2, 2, 2))])
def test_empty_batch_gives_an_empty_result(shape, op, out):
    """An empty batch (or no channels) gives an empty result of the pooled shape, with Int64 indices, in both modes,
    and an empty gradient. Kiln used to raise a cryptic "For 'Reshape', the -1 in the target shape [0, -1] can not
    be inferred"; MindSpore 2.10's CPU kernel dies with SIGFPE (floating point exception) on a (0, 3, 8, 8) input."""
    f = getattr(ops, op)
    x = ms.Tensor(np.ones(shape, np.float32))
    lead = list(shape[:len(shape) - len(out)])
    y, idx = f(x, 2, output_size=out, return_indices=True)
    assert y.shape == tuple(lead) + out and y.dtype == ms.float32 and idx.dtype == ms.int64
    assert ms.jit(lambda t: f(t, 2, output_size=out))(x).shape == tuple(lead) + out
    assert ms.grad(lambda t: f(t, 2, output_size=out).sum())(x).shape == shape
