"""Gradients of the ops that select by comparing (max/min reductions, ops.max/min with an axis, Maximum/Minimum,
clamp/clip_by_value, ReLU6/HSigmoid/LeakyReLU/ELU at their corners) with NaN inputs and ties, in PyNative and Graph
mode, against NumPy references of MindSpore's and PyTorch's documented rules:
- a NaN result came from the NaN input(s): a full or axis max/min sends the gradient there only (PyTorch);
- ties: amax/amin and Tensor.max split equally; ops.max/min with an axis give it to the returned index
  (ArgMaxWithValue, PyTorch's max(dim)); Maximum/Minimum give 0.5 to each input (MindSpore and PyTorch);
- Maximum/Minimum: an input gets 0 only where it compares as losing, so where either is NaN both get g;
- clamp: 1 inside [min, max] (bounds included), 0 outside and at NaN (PyTorch's clamp, MindSpore's ops.clamp);
  clip_by_value is max-then-min as ops (MindSpore): 0.5 at a bound, 1 at NaN.
The op-registry tests test_selection_nan_gradient / test_selection_tie_gradient check these for every entry."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops

MODES = pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])


def grad_of(f, *xs, use_jit, pos=0):
    g = ms.grad(f, grad_position=pos)
    out = (ms.jit(g) if use_jit else g)(*[Tensor(np.asarray(x, np.float32)) for x in xs])
    return tuple(o.asnumpy() for o in out) if isinstance(out, tuple) else out.asnumpy()


@MODES
@pytest.mark.parametrize("name,f,nan_rows", [
    ("Tensor.max", lambda t: t.max(), None),
    ("Tensor.min", lambda t: t.min(), None),
    ("ops.amax", lambda t: ops.amax(t), None),
    ("ops.amin", lambda t: ops.amin(t), None),
    ("ops.max(axis=0)", lambda t: ops.max(t, 0)[0], None),
    ("ops.min(axis=0)", lambda t: ops.min(t, 0)[0], None),
])
def test_full_reduction_gradient_goes_to_the_nan(name, f, nan_rows, use_jit):
    """The tester's case: [1, nan, 3, 4] gave NaN for every element; PyTorch gives [0, 1, 0, 0]."""
    got = grad_of(f, [1.0, np.nan, 3.0, 4.0], use_jit=use_jit)
    np.testing.assert_array_equal(got, [0, 1, 0, 0], err_msg=name)


@MODES
def test_axis_reduction_with_nan_rows(use_jit):
    """Per row: a NaN row sends g to its NaN(s) (split between two for amax, the first for ops.max), the other rows
    to their maximum; cotangent c per row."""
    x = np.array([[1.0, np.nan, 3.0], [5.0, 2.0, 4.0], [np.nan, 0.0, np.nan]])
    c = np.array([2.0, 3.0, 4.0], np.float32)
    amax = grad_of(lambda t: (ops.amax(t, 1) * Tensor(c)).sum(), x, use_jit=use_jit)
    np.testing.assert_array_equal(amax, [[0, 2, 0], [3, 0, 0], [2, 0, 2]])
    vmax = grad_of(lambda t: (ops.max(t, 1)[0] * Tensor(c)).sum(), x, use_jit=use_jit)
    np.testing.assert_array_equal(vmax, [[0, 2, 0], [3, 0, 0], [4, 0, 0]])
    amin = grad_of(lambda t: (ops.amin(t, 1) * Tensor(c)).sum(), x, use_jit=use_jit)
    np.testing.assert_array_equal(amin, [[0, 2, 0], [0, 3, 0], [2, 0, 2]])


@MODES
def test_reduction_ties(use_jit):
    """amax splits ties (MindSpore's rule); ops.max with an axis gives all to the first (the returned index)."""
    x = [[4.0, 1.0, 4.0], [2.0, 2.0, 2.0]]
    np.testing.assert_allclose(grad_of(lambda t: ops.amax(t, 1).sum(), x, use_jit=use_jit),
                               [[0.5, 0, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)
    np.testing.assert_array_equal(grad_of(lambda t: ops.max(t, 1)[0].sum(), x, use_jit=use_jit),
                                  [[1, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(grad_of(lambda t: ops.min(t, 1)[0].sum(), x, use_jit=use_jit),
                                  [[0, 1, 0], [1, 0, 0]])


def _np_pair_grads(a, b, is_max):
    """PyTorch's derivatives.yaml rule for maximum/minimum (MindSpore's MaximumGrad agrees): where(a == b, 1/2, 1),
    zeroed for a where a < b (Maximum) / a > b (Minimum), for b where a > b / a < b. NaN compares false."""
    share = np.where(a == b, 0.5, 1.0)
    with np.errstate(invalid="ignore"):
        a_loses, b_loses = (a < b, a > b) if is_max else (a > b, a < b)
    return np.where(a_loses, 0.0, share), np.where(b_loses, 0.0, share)


@MODES
@pytest.mark.parametrize("is_max", [True, False], ids=["maximum", "minimum"])
def test_maximum_minimum_nan_and_ties(is_max, use_jit):
    a = np.array([np.nan, 1.0, 2.0, np.nan, 5.0, -1.0])
    b = np.array([1.0, np.nan, 2.0, np.nan, 3.0, 0.0])
    op = ops.maximum if is_max else ops.minimum
    ga, gb = grad_of(lambda x, y: op(x, y).sum(), a, b, use_jit=use_jit, pos=(0, 1))
    wa, wb = _np_pair_grads(a, b, is_max)
    np.testing.assert_array_equal(ga, wa)
    np.testing.assert_array_equal(gb, wb)
    # against a scalar: the NaN input keeps its gradient (was 0), a tie gives it half
    g = grad_of(lambda x: op(x, 0.0).sum(), [np.nan, -1.0, 0.0, 2.0], use_jit=use_jit)
    np.testing.assert_array_equal(g, [1, 0, 0.5, 1] if is_max else [1, 1, 0.5, 0])


@MODES
def test_clamp_and_clip_by_value_gradients(use_jit):
    x = np.array([np.nan, -1.0, 0.0, 0.5, 1.0, 2.0])
    inside = (x >= 0) & (x <= 1)  # NaN: False
    np.testing.assert_array_equal(grad_of(lambda t: ops.clamp(t, 0.0, 1.0).sum(), x, use_jit=use_jit),
                                  inside.astype(np.float32))
    np.testing.assert_array_equal(
        grad_of(lambda t: ops.clamp(t, Tensor(np.float32([0.0])), Tensor(np.float32([1.0]))).sum(), x,
                use_jit=use_jit), inside.astype(np.float32))
    # clip_by_value = minimum(maximum(x, lo), hi) as ops: the product of their rules
    ga_max, _ = _np_pair_grads(x, np.zeros_like(x), True)
    ga_min, _ = _np_pair_grads(np.maximum(x, 0.0), np.ones_like(x), False)
    np.testing.assert_array_equal(grad_of(lambda t: ops.clip_by_value(t, 0.0, 1.0).sum(), x, use_jit=use_jit),
                                  ga_max * ga_min)
    # values unchanged (NaN stays NaN)
    np.testing.assert_array_equal(ops.clamp(Tensor(x), 0.0, 1.0).asnumpy(), np.clip(x, 0.0, 1.0))
    np.testing.assert_array_equal(ops.clip_by_value(Tensor(x), 0.0, 1.0).asnumpy(), np.clip(x, 0.0, 1.0))


@MODES
def test_clamp_bound_gradients(use_jit):
    """A Tensor bound gets the gradient where it is the result (x beyond it); x gets it inside."""
    x = np.array([-2.0, 0.5, 3.0])
    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])
    gx, glo, ghi = grad_of(lambda t, a, b: ops.clamp(t, a, b).sum(), x, lo, hi, use_jit=use_jit, pos=(0, 1, 2))
    np.testing.assert_array_equal(gx, [0, 1, 0])
    np.testing.assert_array_equal(glo, [1, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 1])


@MODES
def test_activation_corners_keep_their_documented_gradients(use_jit):
    """Activations written with max/min keep the corner gradients of MindSpore's/PyTorch's kernels under the
    0.5/0.5 tie rule: ReLU6 1 at 6 and 0 at 0; HSigmoid 0 at ±3; LeakyReLU (1 + α)/2 at 0 (MindSpore 2.10's
    max(x, αx) shares the tie); ELU (α = 1) 1 at 0."""
    x = [-3.0, 0.0, 3.0, 6.0]
    np.testing.assert_array_equal(grad_of(lambda t: nn.ReLU6()(t).sum(), x, use_jit=use_jit), [0, 0, 1, 1])
    np.testing.assert_allclose(grad_of(lambda t: nn.HSigmoid()(t).sum(), x, use_jit=use_jit), [0, 1 / 6, 0, 0],
                               rtol=1e-6)
    np.testing.assert_allclose(grad_of(lambda t: nn.LeakyReLU(0.2)(t).sum(), x, use_jit=use_jit),
                               [0.2, 0.6, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(grad_of(lambda t: nn.LeakyReLU(2.0)(t).sum(), x, use_jit=use_jit),
                               [2, 1.5, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(grad_of(lambda t: nn.ELU()(t).sum(), x, use_jit=use_jit),
                               [np.exp(-3.0), 1, 1, 1], rtol=1e-6)


@MODES
def test_max_pool_nan_and_ties(use_jit):
    """MaxPool propagates a NaN (PyTorch's rule) and routes the window's gradient to it; ties go to the first."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    pool = nn.MaxPool2d(2, 2)
    g = grad_of(lambda t: pool(t).sum(), x, use_jit=use_jit)
    want = np.zeros((4, 4))
    want[0, 1] = want[1, 3] = want[3, 1] = want[3, 3] = 1
    np.testing.assert_array_equal(g[0, 0], want)
    g = grad_of(lambda t: pool(t).sum(), np.zeros((1, 1, 4, 4)), use_jit=use_jit)
    want = np.zeros((4, 4))
    want[::2, ::2] = 1
    np.testing.assert_array_equal(g[0, 0], want)


def test_ops_max_min_tuple_forms_match_mindspore():
    """MindSpore 2.10's ops.max/min: always a tuple; initial/where with an axis (values pinned with MindSpore 2.10,
    whose axis=None index is always 0 -- Kiln gives the real flat index)."""
    x = Tensor(np.array([[1.0, 5.0], [3.0, -1.0]], np.float32))
    (v, i), (w, j) = ops.max(x), ops.min(x)
    assert float(v.asnumpy()) == 5.0 and int(i.asnumpy()) == 1 and i.dtype == ms.int64
    assert float(w.asnumpy()) == -1.0 and int(j.asnumpy()) == 3
    s = Tensor(np.float32(3.0))
    v, i = ops.max(s)
    assert v is s and int(i.asnumpy()) == 0
    inp = Tensor(np.array([[9, 3, 4, 5], [5, 2, 7, 4], [8, 1, 3, 6]]))
    where = Tensor(np.array([[False], [True], [False]]))
    v, i = ops.max(inp, axis=1, keepdims=True, initial=0, where=where)
    np.testing.assert_array_equal(v.asnumpy(), [[0], [7], [0]])
    np.testing.assert_array_equal(i.asnumpy(), [[0], [2], [0]])
    v, i = ops.max(inp, axis=1, initial=6)
    np.testing.assert_array_equal(v.asnumpy(), [9, 7, 8])
    np.testing.assert_array_equal(i.asnumpy(), [0, 2, 0])
    v, i = ops.min(inp, axis=1, initial=4)
    np.testing.assert_array_equal(v.asnumpy(), [3, 2, 1])
    np.testing.assert_array_equal(i.asnumpy(), [1, 1, 1])
    with pytest.raises(ValueError, match="'initial' must be given with a 'where' mask"):
        ops.max(inp, axis=1, where=where)
    with pytest.raises(TypeError, match="'initial' must be a scalar"):
        ops.min(inp, axis=1, initial=[1])
    with pytest.raises(TypeError, match="For 'max'.*must be a Tensor"):
        ops.max([1, 2])
    # the gradient of the all-elements value still splits among ties
    g = ms.grad(lambda t: ops.max(t)[0])(Tensor(np.array([2.0, 2.0, 1.0], np.float64)))
    np.testing.assert_allclose(g.asnumpy(), [0.5, 0.5, 0.0])
