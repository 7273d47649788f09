"""Padding layers of MindSpore 2.10's nn/layer/padding.py: ConstantPad1d/2d/3d, ZeroPad2d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d. Values against np.pad (constant / reflect / edge, negative amounts cropping first), shapes,
dtypes, attributes and argument errors as MindSpore 2.10 gives them (checked with it on CPU: every output here equal,
in PyNative and Graph mode), gradients against float64 finite differences, Graph mode equal to PyNative."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn

from helpers import central_difference

X4 = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)


def np_pad(x, padding, mode, value=0):
    """np.pad with MindSpore's (left, right, top, bottom, ...) order; negative amounts crop first."""
    x = np.asarray(x)
    pairs = [(0, 0)] * x.ndim
    for k in range(len(padding) // 2):
        pairs[x.ndim - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    crop = tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pairs, x.shape))
    x = x[crop]
    pos = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if mode == "constant":
        return np.pad(x, pos, mode="constant", constant_values=value)
    return np.pad(x, pos, mode={"reflect": "reflect", "replicate": "edge"}[mode])


@pytest.mark.parametrize("cls, padding, value, full", [
    (nn.ConstantPad1d, 1, 0.5, (1, 1)),
    (nn.ConstantPad1d, (-1, 2), 3, (-1, 2)),
    (nn.ConstantPad2d, 1, 0.5, (1, 1, 1, 1)),
    (nn.ConstantPad2d, (-1, 2), 3, (-1, 2)),
    (nn.ConstantPad2d, (1, 0, 2, 1), 1.5, (1, 0, 2, 1)),
    (nn.ConstantPad3d, 1, 0.5, (1, 1, 1, 1, 1, 1)),
    (nn.ConstantPad3d, (1, 0, 2, 1, 0, 1), 1.5, (1, 0, 2, 1, 0, 1)),
    (nn.ConstantPad3d, (1, 0, -2, 1), True, (1, 0, -2, 1)),
])
def test_constant_pad(cls, padding, value, full):
    m = cls(padding, value)
    assert m.padding == full and m.value is value  # MindSpore keeps both as given (an int expanded to a tuple)
    out = m(Tensor(X4))
    assert out.dtype == ms.float32
    np.testing.assert_array_equal(out.asnumpy(), np_pad(X4, full, "constant", float(value)))


def test_constant_pad_mindspore_values():
    # MindSpore 2.10: ConstantPad2d((-1, 2), 3)(X4)[0, 0]
    np.testing.assert_array_equal(nn.ConstantPad2d((-1, 2), 3)(Tensor(X4)).asnumpy()[0, 0],
                                  [[1, 2, 3, 3, 3], [5, 6, 7, 3, 3], [9, 10, 11, 3, 3]])
    # an int input keeps its dtype, the value cast to it (MindSpore: Int32, 2.5 -> 2)
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = nn.ConstantPad1d(1, 2.5)(Tensor(xi))
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), np_pad(xi, (1, 1), "constant", 2))


def test_zero_pad2d():
    m = nn.ZeroPad2d(1)
    assert m.padding == (1, 1, 1, 1) and m.value == 0 and isinstance(m.value, int)
    np.testing.assert_array_equal(m(Tensor(X4)).asnumpy(), np_pad(X4, (1, 1, 1, 1), "constant"))
    np.testing.assert_array_equal(nn.ZeroPad2d((1, 2))(Tensor(X4)).asnumpy(), np_pad(X4, (1, 2), "constant"))
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = nn.ZeroPad2d((1, 2, 0, 1))(Tensor(xi))
    assert out.dtype == ms.int32 and out.shape == (4, 7)
    np.testing.assert_array_equal(out.asnumpy(), np_pad(xi, (1, 2, 0, 1), "constant"))


@pytest.mark.parametrize("cls, nd", [(nn.ReflectionPad1d, 1), (nn.ReflectionPad2d, 2), (nn.ReflectionPad3d, 3)])
@pytest.mark.parametrize("padding", [1, (2, 1), (2, 1, 1, 2), (2, 1, 1, 2, 1, 0), 0])
@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4), (1, 2, 3, 4, 5), (3, 4)])
def test_reflection_pad(cls, nd, padding, shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    full = (padding,) * (2 * nd) if isinstance(padding, int) else padding
    m = cls(padding)
    # MindSpore's attribute: (before, after) lists from the first padded dim on
    assert m.padding == [list(full[i:i + 2]) for i in range(0, len(full), 2)][::-1]
    if len(full) // 2 > len(shape):
        with pytest.raises(ValueError, match=f"For padding with length {len(full)}, the dimension of the tensor "
                                             f"should be at least {len(full) // 2}, but got {len(shape)}"):
            m(Tensor(x))
        return
    padded = list(zip(full[::2], full[1::2]))
    if any(max(p) >= n for p, n in zip(padded, shape[::-1])):
        with pytest.raises(ValueError, match="'reflect' padding of dim"):
            m(Tensor(x))
        return
    np.testing.assert_array_equal(m(Tensor(x)).asnumpy(), np_pad(x, full, "reflect"))


def test_reflection_pad_mindspore_values_and_int_input():
    # MindSpore 2.10: ReflectionPad1d(1) of a rank-1 [0, 1, 2, 3] -> [1, 0, 1, 2, 3, 2]
    np.testing.assert_array_equal(nn.ReflectionPad1d(1)(Tensor(np.arange(4, dtype=np.float32))).asnumpy(),
                                  [1, 0, 1, 2, 3, 2])
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = nn.ReflectionPad2d(1)(Tensor(xi))
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), np_pad(xi, (1, 1, 1, 1), "reflect"))


@pytest.mark.parametrize("cls, padding, shape", [
    (nn.ReplicationPad1d, 1, (2, 3, 4)), (nn.ReplicationPad1d, 1, (3, 4)), (nn.ReplicationPad1d, (1, 2, 2, 1), X4.shape),
    (nn.ReplicationPad2d, 1, X4.shape), (nn.ReplicationPad2d, (2, 1, 1, 2), (2, 3, 4)),
    (nn.ReplicationPad2d, 4, X4.shape), (nn.ReplicationPad2d, -1, X4.shape), (nn.ReplicationPad2d, (-1, 2, 1, -1), X4.shape),
    (nn.ReplicationPad3d, 1, (1, 2, 3, 4, 5)), (nn.ReplicationPad3d, (2, 1, 1, 2, 1, 0), X4.shape),
])
def test_replication_pad(cls, padding, shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    nd = {nn.ReplicationPad1d: 1, nn.ReplicationPad2d: 2, nn.ReplicationPad3d: 3}[cls]
    full = (padding,) * (2 * nd) if isinstance(padding, int) else padding
    m = cls(padding)
    assert m.padding == full
    np.testing.assert_array_equal(m(Tensor(x)).asnumpy(), np_pad(x, full, "replicate"))


def test_replication_pad_mindspore_values():
    # MindSpore 2.10: ReplicationPad2d(-1)(X4) crops one element from every side; (-1, 2, 1, -1) crops, then edges
    np.testing.assert_array_equal(nn.ReplicationPad2d(-1)(Tensor(X4)).asnumpy(), [[[[5, 6]], [[17, 18]]]])
    np.testing.assert_array_equal(nn.ReplicationPad2d((-1, 2, 1, -1))(Tensor(X4)).asnumpy()[0, 0],
                                  [[1, 2, 3, 3, 3], [1, 2, 3, 3, 3], [5, 6, 7, 7, 7]])


@pytest.mark.parametrize("cls, padding, shape, message", [
    (nn.ReplicationPad1d, 1, X4.shape, "the input dims when padding's size equal 2 must be equal to 3, but got 4"),
    (nn.ReplicationPad1d, (1, 1, 1, 1, 1, 1), X4.shape,
     "the input dims when padding's size equal 6 must be equal to 5, but got 4"),
    (nn.ReplicationPad2d, 1, (1, 2, 3, 4, 5), "the input dims when padding's size equal 4 must be equal to 4, but got 5"),
    (nn.ReplicationPad2d, 1, (3, 4), "the input dims for edge, reflect or circular mode must be greater than or equal "
                                     "to 3, but got 2"),
    (nn.ReplicationPad1d, 1, (4,), "must be greater than or equal to 3, but got 1"),
    (nn.ReplicationPad3d, -1, X4.shape, "output size must be greater than 0"),
])
def test_replication_pad_rank_errors(cls, padding, shape, message):
    x = Tensor(np.ones(shape, np.float32))
    with pytest.raises(ValueError, match=message):
        cls(padding)(x)


@pytest.mark.parametrize("make, exc, message", [
    (lambda: nn.ConstantPad1d((1, 0, 2, 1), 1.5), ValueError,
     "For 'ConstantPad1d', the length of parameter 'padding' with tuple type must equal to 2.but got 4"),
    (lambda: nn.ConstantPad2d((1, 0, 2), 1.5), ValueError,
     "For 'ConstantPad2d', the length of parameter 'padding' with tuple type must be a multiple of 2, but got 3"),
    (lambda: nn.ConstantPad2d((1, 0, 2, 1, 0, 1), 1.5), ValueError,
     "For 'ConstantPad2d', the length of parameter 'padding' with tuple type must no more than 4.but got 6"),
    (lambda: nn.ZeroPad2d((1, 2, 0, 1, 1, 1)), ValueError,
     "For 'ZeroPad2d', the length of parameter 'padding' with tuple type must no more than 4.but got 6"),
    (lambda: nn.ConstantPad3d([1, 1], 1.5), TypeError,
     "For 'ConstantPad3d', the type of parameter 'padding' must be in [int, tuple], but got <class 'list'>"),
    (lambda: nn.ConstantPad1d(1, "a"), TypeError,
     "For 'ConstantPad1d', the type of parameter 'value' must be in [int, float], but got <class 'str'>"),
    (lambda: nn.ReflectionPad1d([1, 1]), TypeError,
     "For 'ReflectionPad1d' the input 'padding' must be an integer or tuple, but got list"),
    (lambda: nn.ReflectionPad2d((1, 1, 1)), ValueError,
     "For 'ReflectionPad2d' the length of input 'padding' must be divisible by 2, but got padding of length 3."),
    (lambda: nn.ReflectionPad3d((1.0, 1)), TypeError,
     "For 'ReflectionPad3d' every element in 'padding' must be integer, but got (1.0, 1)."),
    (lambda: nn.ReflectionPad1d(-1), ValueError,
     "For 'ReflectionPad1d' every element in 'padding' must be >= 0. but got (-1, -1)."),
    (lambda: nn.ReplicationPad2d([1, 1]), TypeError,
     "For 'ReplicationPad2d' the input 'padding' must be an integer or tuple, but got list"),
    (lambda: nn.ReplicationPad1d((1.0, 1)), TypeError,
     "For 'ReplicationPad1d' every element in 'padding' must be integer, but got (1.0, 1)."),
])
def test_argument_errors(make, exc, message):
    with pytest.raises(exc) as info:  # MindSpore 2.10's messages
        make()
    assert message in str(info.value)


@pytest.mark.parametrize("padding, message", [((-2, -2), "output size must be greater than 0"),
                                              ((-5, 0), "crops more than its size 4")])
def test_constant_pad_non_positive_output(padding, message):
    with pytest.raises(ValueError, match=message):  # MindSpore 2.10 refuses both (PadV3)
        nn.ConstantPad2d(padding, 1)(Tensor(X4))


@pytest.mark.parametrize("m", [nn.ConstantPad2d((1, -1, 2, 0), 0.5), nn.ZeroPad2d(1), nn.ReflectionPad2d((1, 2, 2, 1)),
                               nn.ReflectionPad1d(2), nn.ReplicationPad2d((2, -1, 1, 3)), nn.ReplicationPad3d(1)],
                         ids=lambda m: type(m).__name__)
def test_gradients_and_graph_mode(m):
    rng = np.random.RandomState(0)
    x = rng.randn(1, 2, 3, 4)
    out = m(Tensor(x))
    w = rng.randn(*out.shape)

    def f(t):
        return (m(t) * Tensor(w)).sum()

    g = ms.grad(f)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, central_difference(lambda a: float(f(Tensor(a)).asnumpy()), x), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_array_equal(ms.jit(lambda t: m(t))(Tensor(x)).asnumpy(), out.asnumpy())
    np.testing.assert_allclose(ms.jit(ms.grad(f))(Tensor(x)).asnumpy(), g, rtol=1e-12, atol=1e-12)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph = m(Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(graph.asnumpy(), out.asnumpy())
