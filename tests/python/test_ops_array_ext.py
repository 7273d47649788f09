"""The array / index / scatter / random / creation ops of kiln/ops/{shape,search,scatter_ext,diag,random}_func.py
beyond their registry rows (tests/python/op_registry/{shapes,indexing,sampling}.py): values pinned against
MindSpore 2.10 (CPU) where its semantics are its own, the Primitive and Tensor-method surfaces, in-place updates of
Parameters, gradients the registry cannot express, and the errors bad arguments raise."""
import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, ops


def T(a, dtype=np.float32):
    return Tensor(np.array(a, dtype))


def I(a, dtype=np.int32):
    return Tensor(np.array(a, dtype))


# ---------------------------------------------------------------------------------------------- MindSpore's values

def test_values_pinned_against_mindspore():
    # ops.unique: first-appearance order and Int32 indices (Int64 for an Int64 input), as MindSpore's CPU kernel
    y, idx = ops.unique(T([3, 1, 3, 2]))
    assert y.asnumpy().tolist() == [3, 1, 2] and idx.asnumpy().tolist() == [0, 1, 0, 2]
    assert idx.dtype == kiln.int32 and ops.unique(I([3, 1], np.int64))[1].dtype == kiln.int64
    y, idx = ops.unique_with_pad(I([1, 1, 2, 3, 3, 3, 4, 5]), 0)
    assert y.asnumpy().tolist() == [1, 2, 3, 4, 5, 0, 0, 0] and idx.asnumpy().tolist() == [0, 0, 1, 2, 2, 2, 3, 4]
    out, inv, cnt = ops.unique_consecutive(I([[1, 1], [1, 1], [2, 3]]), True, True, 0)
    assert out.asnumpy().tolist() == [[1, 1], [2, 3]] and inv.asnumpy().tolist() == [0, 0, 1]
    assert cnt.asnumpy().tolist() == [2, 1] and cnt.dtype == kiln.int64
    # shapes MindSpore gives where NumPy/PyTorch differ
    assert ops.cartesian_prod(I([1, 2])).shape == (2, 1)
    assert ops.combinations(T([1, 2]), 3).shape == (0,)
    assert [p.shape for p in ops.chunk(T(np.arange(6)), 4)] == [(2,), (2,), (2,)]
    assert [p.shape for p in ops.hsplit(T(np.zeros((2, 3))), 2)] == [(2, 2), (2, 1)]
    assert [p.asnumpy().tolist() for p in ops.tensor_split(T(np.arange(7)), [-2, 3])] == \
        [[0, 1, 2, 3, 4], [], [3, 4, 5, 6]]
    assert ops.diag(T(np.arange(6).reshape(2, 3))).shape == (2, 3, 2, 3)
    assert ops.t(T([1, 2])).shape == (2,)
    # bucketize: MindSpore's documented example; searchsorted's sides
    b = ops.bucketize(Tensor(np.array([[3, 6, 9], [3, 6, 9]])), [1.0, 3.0, 5.0, 7.0, 9.0], right=True)
    assert b.dtype == kiln.int32 and b.asnumpy().tolist() == [[2, 3, 5], [2, 3, 5]]
    assert ops.searchsorted(T([1, 2, 3, 4]), T([2.5, 3]), side="right").asnumpy().tolist() == [2, 3]
    assert ops.searchsorted(T([1, 2, 3]), T([np.nan, 2])).asnumpy().tolist() == [3, 1]  # NaN sorts last
    # segment reductions: empty segments hold the dtype's lowest / highest / 1
    mx = ops.unsorted_segment_max(T([[1, 2], [3, 4], [5, 6]]), I([0, 0, 2]), 4).asnumpy()
    assert mx[0].tolist() == [3, 4] and mx[1, 0] == np.finfo(np.float32).min
    assert ops.unsorted_segment_min(I([1, 2]), I([1, 1]), 2).asnumpy().tolist() == [2 ** 31 - 1, 1]
    assert ops.unsorted_segment_prod(T([2, 3, 4]), I([0, 0, 2]), 3).asnumpy().tolist() == [6, 1, 4]
    # reducing scatters: duplicates apply in turn; integer division rounds toward zero
    np.testing.assert_allclose(ops.tensor_scatter_div(T([[1, 2], [3, 4]]), I([[0], [0]]), T([[2, 2], [3, 3]]))
                               .asnumpy(), [[1 / 6, 2 / 6], [3, 4]], rtol=1e-6)
    assert ops.tensor_scatter_div(I([[7, -7], [3, 4]]), I([[0]]), I([[2, 2]])).asnumpy().tolist() == \
        [[3, -3], [3, 4]]
    assert ops.tensor_scatter_min(I([[1, 2], [3, 4]]), I([[0, 1], [1, 1]]), I([0, -3])).asnumpy().tolist() == \
        [[1, 0], [3, -3]]
    # layout ops (MindSpore's outputs)
    x = T(np.arange(16).reshape(1, 1, 4, 4))
    assert ops.space_to_batch_nd(x, 2, [[0, 0], [0, 0]]).asnumpy().reshape(-1)[:8].tolist() == \
        [0, 2, 8, 10, 1, 3, 9, 11]
    assert ops.batch_to_space_nd(T(np.arange(16).reshape(4, 1, 2, 2)), (2, 2), [[0, 0], [0, 1]]).shape == \
        (1, 1, 4, 3)
    assert ops.mirror_pad(T(np.arange(6).reshape(2, 3)), Tensor(np.array([[1, 1], [2, 2]])), "SYMMETRIC") \
        .asnumpy()[0].tolist() == [1, 0, 0, 1, 2, 2, 1]
    assert ops.unfold(x, 2, 1, 0, 2).asnumpy()[0, :, 0].tolist() == [0, 1, 4, 5]
    # windows: MindSpore 2.10's default dtypes differ (hann/kaiser float64, hamming/blackman/bartlett float32)
    assert ops.hann_window(5).dtype == kiln.float64 and ops.hamming_window(5).dtype == kiln.float32
    np.testing.assert_allclose(ops.hann_window(5).asnumpy(), [0, 0.3454915, 0.9045085, 0.9045085, 0.3454915],
                               atol=1e-7)
    np.testing.assert_allclose(ops.hann_window(5, False).asnumpy(), [0, 0.5, 1, 0.5, 0], atol=1e-12)
    assert ops.sequence_mask(I([[1, 3], [2, 0]], np.int64)).shape == (2, 2, 3)


# ---------------------------------------------------------------------------------------------- surfaces

def test_primitives_take_attributes_positionally_and_by_keyword():
    x = T(np.arange(9).reshape(3, 3))
    lens = I([1, 2, 3])
    want = ops.reverse_sequence(x, lens, 1)
    np.testing.assert_array_equal(ops.ReverseSequence(1)(x, lens).asnumpy(), want.asnumpy())
    np.testing.assert_array_equal(ops.ReverseSequence(seq_dim=1, batch_dim=0)(x, lens).asnumpy(), want.asnumpy())
    assert ops.TrilIndices(3, 3)().dtype == kiln.int32  # the Primitive's dtype default is Int32
    assert ops.tril_indices(3, 3).dtype == kiln.int64
    assert ops.Bucketize([1.0, 2.0])(T([0.5, 1.5, 3])).asnumpy().tolist() == [0, 1, 2]
    assert ops.MirrorPad("SYMMETRIC")(T([1, 2]), [[1, 0]]).asnumpy().tolist() == [1, 1, 2]
    with pytest.raises(TypeError, match="ReverseSequence"):
        ops.ReverseSequence(1, 0, 5)
    with pytest.raises(TypeError, match="given twice"):
        ops.ReverseSequence(1, seq_dim=1)


def test_tensor_methods():
    x = T(np.arange(6).reshape(2, 3))
    assert x.swapaxes(0, 1).shape == (3, 2) and x.t().shape == (3, 2)
    assert x.moveaxis(0, 1).shape == (3, 2) and [p.shape for p in x.tensor_split(3, 1)] == [(2, 1)] * 3
    assert x.index_fill(1, I([0]), -1.0).asnumpy()[:, 0].tolist() == [-1, -1]
    assert x.msort().asnumpy().tolist() == x.asnumpy().tolist()
    assert x.diagonal().asnumpy().tolist() == [0, 4]


# ---------------------------------------------------------------------------------------------- in place

def test_parameters_are_updated_in_place():
    p = Parameter(T([[1, 2], [3, 4]]), name="p")
    out = ops.scatter_mul(p, I([0, 0]), T([[2, 2], [3, 3]]))
    assert p.asnumpy().tolist() == [[6, 12], [3, 4]] and out.asnumpy().tolist() == [[6, 12], [3, 4]]
    p = Parameter(T([[1, 2], [3, 4]]), name="q")
    ops.scatter_nd_max(p, I([[0, 1], [1, 0]]), T([5, 0]))
    assert p.asnumpy().tolist() == [[1, 5], [3, 4]]
    p = Parameter(T(np.zeros((2, 3))), name="r")
    ops.index_add(p, I([0, 2, 0]), T(np.ones((2, 3))), 1)
    assert p.asnumpy().tolist() == [[2, 0, 1], [2, 0, 1]]
    t = T([[1, 2], [3, 4]])  # a plain Tensor is written in place too, and returned (MindSpore 2.10 PyNative)
    out = ops.scatter_div(t, I([1]), T([[2, 4]]))
    assert out is t and t.asnumpy().tolist() == [[1, 2], [1.5, 1]]


# ---------------------------------------------------------------------------------------------- gradients

def test_segment_max_ties_share_the_gradient():
    x = T([2.0, 2.0, 1.0, 5.0])
    g = kiln.grad(lambda v: ops.sum(ops.unsorted_segment_max(v, I([0, 0, 0, 1]), 2)))(x)
    assert g.asnumpy().tolist() == [0.5, 0.5, 0, 1]


def test_scatter_max_min_ties_share_the_gradient_as_mindspore():
    # MindSpore 2.10's values (TensorScatterMax/Min bprop): x and the updates equal to the result share the gradient
    # equally at each place (x[0, 0] = 1 ties both updates 1; x[2, 1] = 6 ties the update 6)
    x, idx = T([[1, 2], [3, 4], [5, 6]]), I([[0], [0], [2]])
    u, w = T([[1, 7], [1, 7], [0, 6]]), T(np.arange(6).reshape(3, 2) + 1)
    third = np.float32(1) / np.float32(3)
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_max(a, idx, b) * w), grad_position=(0, 1))(x, u)
    np.testing.assert_allclose(gx.asnumpy(), [[third, 0], [3, 4], [5, 3]], rtol=1e-6)
    np.testing.assert_allclose(gu.asnumpy(), [[third, 1], [third, 1], [0, 3]], rtol=1e-6)
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_min(a, idx, b) * w), grad_position=(0, 1))(x, u)
    np.testing.assert_allclose(gx.asnumpy(), [[third, 2], [3, 4], [0, 3]], rtol=1e-6)
    np.testing.assert_allclose(gu.asnumpy(), [[third, 0], [third, 0], [5, 3]], rtol=1e-6)


def test_scatter_mul_div_gradients_with_repeats_and_zeros():
    # the exact gradient of x * u1 * u2 (MindSpore 2.10's TensorScatterMul/Div bprop gives g * x to every update, as if
    # it were alone on its place: 4.0 here instead of 28.0; Kiln keeps the derivative), and a zero update
    x, idx = T([[1, 2], [3, 4]]), I([[0], [0]])
    u = T([[0, 7], [5, 7]])
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_mul(a, idx, b) * T([[1, 2], [3, 4]])),
                       grad_position=(0, 1))(x, u)
    assert gx.asnumpy().tolist() == [[0, 98], [3, 4]] and gu.asnumpy().tolist() == [[5, 28], [0, 28]]
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_div(a, idx, b)), grad_position=(0, 1))(x, T([[2, 7],
                                                                                                            [5, 7]]))
    np.testing.assert_allclose(gx.asnumpy(), [[0.1, 1 / 49], [1, 1]], rtol=1e-6)
    np.testing.assert_allclose(gu.asnumpy(), [[-1 / 20, -2 / 343], [-1 / 50, -2 / 343]], rtol=1e-6)


def test_scatter_reduce_index_errors_name_the_op_in_both_modes():
    for mode_jit in (False, True):
        f = lambda a: ops.tensor_scatter_max(a, I([[0], [-1]]), T([[1, 2], [3, 4]]))
        with pytest.raises(ValueError, match=r"tensor_scatter_max.*\[-1\].*shape \[2, 2\]"):
            (kiln.jit(f) if mode_jit else f)(T([[1, 2], [3, 4]])).asnumpy()
        g = lambda a: ops.index_add(a, I([0, 2]), T([[1, 2], [3, 4]]), 1)
        with pytest.raises(ValueError, match=r"index_add.*\[-2, 2\).*got 2"):
            (kiln.jit(g) if mode_jit else g)(T([[1, 2], [3, 4]])).asnumpy()


def test_scatter_gradients_reach_data_and_updates():
    x, u = T([[1.0, 2.0], [3.0, 4.0]]), T([[2.0, 5.0]])
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_mul(a, I([[0]]), b)), grad_position=(0, 1))(x, u)
    assert gx.asnumpy().tolist() == [[2, 5], [1, 1]] and gu.asnumpy().tolist() == [[1, 2]]
    gx, gu = kiln.grad(lambda a, b: ops.sum(ops.tensor_scatter_elements(a, I([[1, 0]]), b, 1) * T([[1, 2], [3, 4]])),
                       grad_position=(0, 1))(x, u)
    assert gx.asnumpy().tolist() == [[0, 0], [3, 4]] and gu.asnumpy().tolist() == [[2, 1]]


# ---------------------------------------------------------------------------------------------- random

@pytest.fixture
def seed_state():
    from kiln.common import seed as _seed
    saved = (_seed._global_seed, dict(_seed._counters))
    yield
    _seed._global_seed = saved[0]
    _seed._counters.clear()
    _seed._counters.update(saved[1])


def test_random_ops_follow_the_seed(seed_state):
    kiln.set_seed(5)
    a = [ops.randperm(10).asnumpy(), ops.shuffle(T(np.arange(10))).asnumpy(),
         ops.multinomial(T([1, 2, 3, 4]), 4, False).asnumpy()]
    kiln.set_seed(5)
    b = [ops.randperm(10).asnumpy(), ops.shuffle(T(np.arange(10))).asnumpy(),
         ops.multinomial(T([1, 2, 3, 4]), 4, False).asnumpy()]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert sorted(b[2].tolist()) == [0, 1, 2, 3]  # without replacement: every category once
    kiln.set_seed(5)
    assert not np.array_equal(ops.randperm(50, seed=3).asnumpy(), ops.randperm(50, seed=3, offset=1).asnumpy())
    draws = ops.multinomial(T([[0, 1, 0], [1, 0, 0]]), 3, True).asnumpy()
    assert draws.tolist() == [[1, 1, 1], [0, 0, 0]]


def test_bernoulli_with_a_tensor_probability():
    p = T([0.0, 1.0, 1.0])
    assert ops.bernoulli(T([5.0, 5.0, 5.0]), p).asnumpy().tolist() == [0, 1, 1]


# ---------------------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call, exc, text", [
    (lambda: ops.take(T([1, 2, 3]), I([3])), ValueError, "take"),
    (lambda: ops.index_select(T([1, 2, 3]), 0, I([-4])), ValueError, "index_select"),
    (lambda: ops.index_add(T([1, 2]), I([2]), T([1]), 0), ValueError, "index_add"),
    (lambda: ops.index_fill(T([1, 2]), 0, T([0]), 1.0), TypeError, "index_fill"),
    (lambda: ops.scatter_div(T([[1, 2]]), I([1]), T([[2, 4]])), ValueError, "scatter_div"),
    (lambda: ops.tensor_scatter_elements(T([[1, 2]]), I([[2]]), T([[5]]), 1), ValueError,
     "tensor_scatter_elements"),
    (lambda: ops.tensor_scatter_elements(T([[1, 2]]), I([[0]]), T([[5]]), 1, "mul"), ValueError, "reduction"),
    (lambda: ops.scatter(T([[1, 2]]), 1, I([[0]]), I([[5]])), TypeError, "scatter"),
    (lambda: ops.unsorted_segment_max(T([1, 2]), I([0, 3]), 2), ValueError, "unsorted_segment_max"),
    (lambda: ops.unsorted_segment_sum(T([1, 2]), I([0, -1]), 2), ValueError, "unsorted_segment_sum"),
    (lambda: ops.reverse_sequence(T(np.zeros((2, 3))), I([1, 4]), 1), ValueError, "reverse_sequence"),
    (lambda: ops.select_scatter(T(np.zeros((2, 3))), T([1, 2]), 1, 3), IndexError, "select_scatter"),
    (lambda: ops.slice_scatter(T(np.zeros((4,))), T([1]), 0, 0, 4, 2), ValueError, "slice_scatter"),
    (lambda: ops.diagonal_scatter(T(np.zeros((3, 3))), T([1, 2, 3]), 1), ValueError, "diagonal_scatter"),
    (lambda: ops.masked_select(T([1, 2]), I([1, 0])), TypeError, "masked_select"),
    (lambda: ops.searchsorted(T([1, 2]), T([1]), side="middle"), ValueError, "searchsorted"),
    (lambda: ops.bucketize(T([1]), [2.0, 1.0]), ValueError, "bucketize"),
    (lambda: ops.narrow(T([1, 2, 3]), 0, -1, 1), ValueError, "narrow"),
    (lambda: ops.t(T(np.zeros((1, 2, 3)))), ValueError, "'t'"),
    (lambda: ops.expand(T([[1], [2]]), (3, 3)), ValueError, "expand"),
    (lambda: ops.rot90(T([[1]]), 1, (0, 0)), ValueError, "rot90"),
    (lambda: ops.moveaxis(T(np.zeros((2, 3))), (0, 0), (1, 0)), ValueError, "moveaxis"),
    (lambda: ops.repeat_interleave(T([1, 2]), [1, 2, 3]), ValueError, "repeat_interleave"),
    (lambda: ops.is_nonzero(T([1, 2])), ValueError, "is_nonzero"),
    (lambda: ops.atleast_2d(3), TypeError, "atleast_2d"),
    (lambda: ops.hstack(T([1])), TypeError, "hstack"),
    (lambda: ops.combinations(T([[1, 2]])), ValueError, "combinations"),
    (lambda: ops.block_diag(T(np.zeros((1, 1, 1)))), ValueError, "block_diag"),
    (lambda: ops.pixel_shuffle(T(np.zeros((1, 3, 2, 2))), 2), ValueError, "pixel_shuffle"),
    (lambda: ops.space_to_batch_nd(T(np.zeros((1, 1, 3, 3))), 2, [[0, 0], [0, 0]]), ValueError,
     "space_to_batch_nd"),
    (lambda: ops.mirror_pad(T(np.zeros((2, 2))), [[2, 0], [0, 0]], "REFLECT"), ValueError, "mirror_pad"),
    (lambda: ops.unfold(T(np.zeros((1, 2, 2))), 2), ValueError, "unfold"),
    (lambda: ops.fold(T(np.zeros((1, 4, 3))), (4, 4), 2, 1, 0, 2), ValueError, "fold"),
    (lambda: ops.multinomial(T([1, 2]), 3, False), ValueError, "multinomial"),
    (lambda: ops.rand_like(I([1])), ValueError, "rand_like"),
    (lambda: ops.randint_like(T([1]), 0, 5), ValueError, "randint_like"),
    (lambda: ops.bernoulli(T([1, 2]), 1.5), ValueError, "bernoulli"),
    (lambda: ops.randperm(-1), ValueError, "randperm"),
    (lambda: ops.hann_window(-1), ValueError, "hann_window"),
    (lambda: ops.random_gamma((2,), I([1])), TypeError, "random_gamma"),
    (lambda: ops.random_gamma((2,), T([1.0, 0.0])), ValueError, "random_gamma"),
    (lambda: ops.unique_with_pad(T([1.0]), 0), TypeError, "unique_with_pad"),
])
def test_bad_arguments_raise_naming_the_op(call, exc, text):
    with pytest.raises(exc, match=text):
        call()


def test_bad_index_is_caught_in_graph_mode():
    f = kiln.jit(lambda x, i: ops.take(x, i))
    np.testing.assert_array_equal(f(T([1, 2, 3]), I([-1])).asnumpy(), [3])
    with pytest.raises(ValueError, match="take"):
        f(T([1, 2, 3]), I([5]))


def test_matrix_diag_family_matches_mindspore():
    x = T(np.arange(1, 13).reshape(3, 4))
    k = Tensor(np.array([-1, 2], np.int32))
    assert ops.matrix_diag_part(x, k, T(9)).asnumpy().tolist() == \
        [[9, 3, 8], [2, 7, 12], [1, 6, 11], [5, 10, 9]]
    assert ops.matrix_diag_part(x, k, T(9), "LEFT_RIGHT").asnumpy().tolist() == \
        [[3, 8, 9], [2, 7, 12], [1, 6, 11], [9, 5, 10]]
    assert ops.matrix_diag(T([1, 2, 3]), 1).shape == (4, 4)
    assert ops.matrix_diag(T([[9, 1, 2], [3, 4, 5]]), Tensor(np.array([-1, 0], np.int32))).asnumpy().tolist() == \
        [[9, 0, 0], [3, 1, 0], [0, 4, 2]]
    assert ops.MatrixDiagV3()(T([1, 2]), -1, 3, 4, 7.0).asnumpy().tolist() == \
        [[7, 7, 7, 7], [1, 7, 7, 7], [7, 2, 7, 7]]
    assert ops.matrix_set_diag(x, T([[0, 0, 0], [5, 5, 5]]), (-1, 0)).asnumpy().tolist() == \
        [[0, 2, 3, 4], [5, 0, 7, 8], [9, 5, 0, 12]]
    with pytest.raises(ValueError, match="align"):
        ops.matrix_diag_part(x, 0, 0.0, "UP")
    with pytest.raises(ValueError, match="matrix_set_diag"):
        ops.matrix_set_diag(x, T([1, 2]), 0)


def test_choice_with_mask_and_inplace_rows():
    m = Tensor(np.array([[True, False, True], [False, True, False]]))
    idx, mask = ops.choice_with_mask(m, 5)
    assert idx.dtype == kiln.int32 and idx.shape == (5, 2) and mask.asnumpy().tolist() == [True] * 3 + [False] * 2
    assert sorted(map(tuple, idx.asnumpy()[:3].tolist())) == [(0, 0), (0, 2), (1, 1)]
    assert idx.asnumpy()[3:].tolist() == [[0, 0], [0, 0]]
    idx, mask = ops.RandomChoiceWithMask(2)(m)
    assert mask.asnumpy().all() and all(m.asnumpy()[tuple(i)] for i in idx.asnumpy())
    x = T(np.arange(6).reshape(3, 2))
    assert ops.inplace_add(x, T([[9, 9], [1, 1]]), (0, 0)).asnumpy().tolist() == [[10, 11], [2, 3], [4, 5]]
    assert ops.InplaceUpdate((1,))(x, T([[7, 7]])).asnumpy().tolist() == [[0, 1], [7, 7], [4, 5]]
    assert x.asnumpy().tolist() == [[0, 1], [2, 3], [4, 5]]  # x itself unchanged (MindSpore 2.10)
    with pytest.raises(ValueError, match="inplace_sub"):
        ops.inplace_sub(x, T([[1, 1]]), 3)
    assert ops.vander(I([1, 2, 3]), 2).dtype == kiln.int64
