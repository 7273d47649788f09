"""nn.Pad, ops.Pad, ops.pad errors and nn.ClipByNorm: values MindSpore 2.10 gives (checked with ms_oracle.py),
NumPy references, gradients, Graph mode."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops

X = np.arange(6, dtype=np.float32).reshape(1, 2, 3)


def test_nn_pad_modes_match_numpy_and_mindspore():
    x = Tensor(X)
    np.testing.assert_array_equal(nn.Pad(((0, 0), (1, 1), (2, 0)))(x).asnumpy(),
                                  np.pad(X, ((0, 0), (1, 1), (2, 0))))
    got = nn.Pad(((0, 0), (1, 1), (2, 1)), mode="REFLECT")(x).asnumpy()
    np.testing.assert_array_equal(got, np.pad(X, ((0, 0), (1, 1), (2, 1)), mode="reflect"))
    np.testing.assert_array_equal(got[0, 0], [5, 4, 3, 4, 5, 4])  # MindSpore 2.10's first row
    got = nn.Pad(((0, 0), (1, 1), (2, 1)), mode="SYMMETRIC")(x).asnumpy()
    np.testing.assert_array_equal(got, np.pad(X, ((0, 0), (1, 1), (2, 1)), mode="symmetric"))
    assert repr(nn.Pad(((0, 0), (1, 1), (2, 0)))) == "Pad()"


def test_pad_errors():
    x = Tensor(X)
    with pytest.raises(ValueError, match="'reflect' padding of dim 1 \\(size 2\\) must be at most 1"):
        nn.Pad(((0, 0), (2, 2), (0, 0)), mode="REFLECT")(x)
    with pytest.raises(ValueError, match="length of 'paddings' must be equal to the rank of 'input_x', but got 2 vs 3"):
        nn.Pad(((0, 0), (1, 1)))(x)
    with pytest.raises(ValueError, match="Pad.*mode"):
        nn.Pad(((0, 0),), mode="EDGE")
    with pytest.raises(TypeError, match="Pad.*pairs"):
        nn.Pad(((0, 0), (1,), (0, 0)))(x)
    with pytest.raises(ValueError, match="Pad"):
        nn.Pad(((0, 0), (-1, 0), (0, 0)))(x)
    with pytest.raises(ValueError, match="pad.*even length"):
        ops.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="pad.*negative padding is only supported in 'constant'"):
        ops.pad(x, (-1, 1), mode="reflect")
    with pytest.raises(ValueError, match="pad.*'value' is only used in 'constant' mode"):
        ops.pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(ValueError, match="pad.*mode"):
        ops.pad(x, (1, 1), mode="edge")
    with pytest.raises(ValueError, match="crops more than its size"):
        ops.pad(x, (-2, -2))


def test_ops_pad_primitive_and_int_dtype():
    np.testing.assert_array_equal(ops.Pad(((0, 0), (1, 0), (0, 1)))(Tensor(X)).asnumpy(),
                                  np.pad(X, ((0, 0), (1, 0), (0, 1))))
    got = ops.pad(Tensor(np.arange(3, dtype=np.int32)), (1, 1), value=2)
    assert got.dtype == ms.int32 and got.asnumpy().tolist() == [2, 0, 1, 2, 2]


def test_pad_gradient_adds_the_copies_and_graph_mode_matches():
    x = Tensor(X)
    g = ms.grad(lambda a: nn.Pad(((0, 0), (0, 0), (2, 1)), mode="REFLECT")(a).sum())(x).asnumpy()
    # reflect (2, 1) on [0, 1, 2] gives [2, 1, 0, 1, 2, 1]: element 1 appears 3 times, 2 twice, 0 once
    np.testing.assert_array_equal(g[0, 0], [1, 3, 2])
    f = lambda a: (nn.Pad(((0, 0), (1, 1), (2, 1)), mode="SYMMETRIC")(a), ops.pad(a, (1, -1), value=3.0))
    for e, c in zip(f(x), ms.jit(f)(x)):
        np.testing.assert_array_equal(e.asnumpy(), c.asnumpy())


def np_clip_by_norm(x, clip, axis=None):
    norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axis, keepdims=True))
    return x * clip / np.maximum(norm, clip)


def test_clip_by_norm_values():
    y = np.array([[3.0, 4.0], [0.3, 0.4]], np.float32)
    got = nn.ClipByNorm()(Tensor(y), Tensor(1.0)).asnumpy()
    np.testing.assert_allclose(got, [[0.59702235, 0.7960298], [0.05970224, 0.07960298]], rtol=1e-6)  # MindSpore
    np.testing.assert_allclose(nn.ClipByNorm(axis=1)(Tensor(y), Tensor(1.0)).asnumpy(), np_clip_by_norm(y, 1.0, 1),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.ClipByNorm(axis=(0,))(Tensor(y), Tensor(np.array([1.0], np.float32))).asnumpy(),
                               np_clip_by_norm(y, 1.0, 0), rtol=1e-6)
    np.testing.assert_array_equal(nn.ClipByNorm()(Tensor(y), Tensor(100.0)).asnumpy(), y)
    out = nn.ClipByNorm()(Tensor(y).astype(ms.float16), Tensor(1.0))
    assert out.dtype == ms.float32


def test_clip_by_norm_zero_input_has_finite_gradient():
    z = Tensor(np.zeros(3, np.float32))
    assert nn.ClipByNorm()(z, Tensor(1.0)).asnumpy().tolist() == [0, 0, 0]
    g = ms.grad(lambda a: nn.ClipByNorm()(a, Tensor(1.0)).sum())(z).asnumpy()
    np.testing.assert_array_equal(g, [1, 1, 1])


def test_clip_by_norm_gradient_against_finite_differences():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3))
    clip = 0.5
    g = ms.grad(lambda a: (nn.ClipByNorm()(a, Tensor(clip)) * Tensor(np.arange(6.0).reshape(2, 3))).sum())(
        Tensor(x.astype(np.float32))).asnumpy()
    w = np.arange(6.0).reshape(2, 3)
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        num[i] = ((np_clip_by_norm(x + e, clip) * w).sum() - (np_clip_by_norm(x - e, clip) * w).sum()) / 2e-6
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-5)


def test_clip_by_norm_errors():
    with pytest.raises(TypeError, match="ClipByNorm.*axis"):
        nn.ClipByNorm(axis=1.5)
    with pytest.raises(TypeError, match="ClipByNorm.*tensor"):
        nn.ClipByNorm()(Tensor(np.ones(2, np.float32)), 1.0)


@pytest.mark.parametrize("bad", [None, 1.5, "x", [1.0, 2.0], np.ones(2, np.float32), (Tensor(1.0),)])
def test_clip_by_norm_bad_inputs_raise_type_error(bad):
    clip = nn.ClipByNorm()
    with pytest.raises(TypeError, match="ClipByNorm"):
        clip(bad, Tensor(1.0))
    with pytest.raises(TypeError, match="ClipByNorm"):
        clip(Tensor(np.ones(2, np.float32)), bad)


def test_index_modes_refuse_an_empty_dim_clearly():
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(ValueError, match=f"'{mode}' padding needs a non-empty dim 1"):
            ops.pad(Tensor(np.zeros((2, 0), np.float32)), (1, 1), mode=mode)
