"""Empty batches in the linalg ops, value checks of matrix_power / multinomial / mint one_hot, and user weight_init
Tensors of the transposed convolutions (tester round 4). Expected values: NumPy; error rules: MindSpore 2.10 /
PyTorch as each docstring says."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops


def _z(*shape):
    return Tensor(np.zeros(shape, np.float32))


@pytest.mark.parametrize("fn,shape", [
    (ops.det, (0,)), (ops.logdet, (0,)), (ops.inverse, (0, 2, 2)),
    (lambda x: ops.matrix_power(x, 2), (0, 2, 2)), (lambda x: ops.matrix_power(x, -1), (0, 2, 2)),
])
def test_linalg_empty_batch(fn, shape):
    out = fn(_z(0, 2, 2))
    assert out.shape == shape and out.asnumpy().size == 0


def test_slogdet_empty_batch_and_kron():
    s, l = ops.slogdet(_z(3, 0, 2, 2))
    assert s.shape == (3, 0) and l.shape == (3, 0)
    assert ops.kron(_z(0, 2), Tensor(np.ones((2, 2), np.float32))).shape == (0, 4)
    np.testing.assert_array_equal(ops.det(_z(3, 0, 0)).asnumpy(), np.ones(3, np.float32))


@pytest.mark.parametrize("eq,shapes", [("ij,jk->ik", [(0, 3), (3, 2)]), ("ij,jk->ik", [(2, 0), (0, 2)]),
                                       ("bij,bjk->bik", [(0, 2, 3), (0, 3, 4)]), ("ij,j->i", [(3, 0), (0,)]),
                                       ("i,j->ij", [(0,), (3,)])])
def test_einsum_zero_sizes_as_numpy(eq, shapes):
    arrs = [np.ones(s, np.float32) for s in shapes]
    out = ops.einsum(eq, *[Tensor(a) for a in arrs])
    ref = np.einsum(eq, *arrs)
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out.asnumpy(), ref)


def test_matrix_power_negative_singular_raises():
    with pytest.raises(ValueError, match=r"matrix_power.*n=-1.*matrix 1 .*singular"):
        ops.matrix_power(Tensor(np.array([np.eye(2), np.zeros((2, 2))], np.float32)), -1)
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(ops.matrix_power(Tensor(a), -2).asnumpy(), np.linalg.matrix_power(a, -2), rtol=1e-12)


def test_matrix_power_singular_in_graph_mode_gives_nonfinite():
    f = ms.jit(lambda x: ops.matrix_power(x, -1))
    out = f(Tensor(np.zeros((2, 2), np.float32))).asnumpy()
    assert not np.isfinite(out).all()


def test_multinomial_value_checks():
    with pytest.raises(ValueError, match=r"multinomial.*num_samples' \(2\).*non-zero weights.*row 0 has 1"):
        ops.multinomial(Tensor(np.array([0.2, 0.0, 0.0], np.float32)), 2, replacement=False)
    with pytest.raises(ValueError, match=r"multinomial.*non-negative.*row 1 holds -0\.1"):
        ops.multinomial(Tensor(np.array([[0.2, 0.3, 0.5], [0.2, -0.1, 0.5]], np.float32)), 2)
    with pytest.raises(ValueError, match=r"multinomial.*row 0 sums to 0"):
        ops.multinomial(Tensor(np.zeros(3, np.float32)), 1)
    with pytest.raises(ValueError, match=r"multinomial.*finite.*nan"):
        ops.multinomial(Tensor(np.array([0.5, np.nan], np.float32)), 1)
    # exactly as many non-zero weights as samples: the non-zero classes, each once
    out = ops.multinomial(Tensor(np.array([0.0, 0.3, 0.0, 0.7], np.float32)), 2, replacement=False).asnumpy()
    assert sorted(out.tolist()) == [1, 3]


def test_mint_one_hot_out_of_range_raises():
    F = ms.mint.nn.functional
    with pytest.raises(ValueError, match=r"one_hot.*\[0, num_classes=3\).*-1"):
        F.one_hot(Tensor(np.array([-1, 2])), 3)
    with pytest.raises(ValueError, match=r"one_hot.*\[0, num_classes=3\).*got 3"):
        F.one_hot(Tensor(np.array([0, 3])), 3)
    np.testing.assert_array_equal(F.one_hot(Tensor(np.array([2, 0])), 3).asnumpy(), [[0, 0, 1], [1, 0, 0]])


@pytest.mark.parametrize("name,args,wshape,group", [
    ("Conv3dTranspose", (4, 2, (2, 3, 2)), (4, 2, 2, 3, 2), 1), ("Conv3dTranspose", (4, 6, (2, 3, 2)), (4, 3, 2, 3, 2), 2),
    ("Conv2dTranspose", (4, 2, (2, 3)), (4, 2, 2, 3), 1), ("Conv1dTranspose", (4, 2, 3), (4, 2, 3), 1),
    ("Conv1dTranspose", (4, 6, 3), (4, 3, 1, 3), 2), ("Conv1d", (4, 2, 3), (2, 4, 3), 1),
])
def test_transposed_conv_weight_init_tensor(name, args, wshape, group):
    w = np.random.default_rng(0).standard_normal(wshape).astype(np.float32)
    layer = getattr(nn, name)(*args, group=group, weight_init=Tensor(w))
    want = wshape if len(wshape) != 3 else (wshape[0], wshape[1], 1, wshape[2])
    assert tuple(layer.weight.shape) == want
    np.testing.assert_array_equal(layer.weight.asnumpy(), w.reshape(want))


def test_conv3d_transpose_user_weight_is_used():
    w = np.random.default_rng(1).standard_normal((2, 3, 1, 1, 1)).astype(np.float32)
    layer = nn.Conv3dTranspose(2, 3, 1, weight_init=Tensor(w))
    x = np.random.default_rng(2).standard_normal((1, 2, 2, 2, 2)).astype(np.float32)
    ref = np.einsum("ncdhw,co->nodhw", x, w[:, :, 0, 0, 0])
    np.testing.assert_allclose(layer(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        nn.Conv3dTranspose(2, 3, 1, weight_init=Tensor(np.zeros((3, 2, 1, 1, 1), np.float32)))
