"""Indexing with an integer tensor computed inside a compiled function (issue 22, item 7): `x[idx]`, `x[idx] = v`,
`x[idx] += v` where idx comes from ops of the same graph, alone or beside ints, slices, None, Ellipsis and other
index arrays (NumPy's advanced-indexing rules). Each key pattern runs three ways — kiln.jit(f), f in PyNative and
NumPy — and its gradients (w.r.t. x, and the value v for setitem) are checked against float64 finite differences in
PyNative and in Graph mode. Also: one compiled graph serves other index values, an nn.Cell in GRAPH_MODE, run-time
IndexErrors for out-of-range values (also where linearizing several index arrays would hide them), the error for a
Bool mask computed in the graph (data-dependent shape), and a computed index inside a compiled while loop.

Before this change every case here raised IndexError ("... is not supported yet") while compiling."""
import types

import numpy as np
import pytest

from helpers import central_difference as fd_grad

import kiln as ms
from kiln import Parameter, Tensor, nn, ops

RNG = np.random.default_rng(22)
X = RNG.standard_normal((4, 5, 6))
A = np.array([3, 0, 5, 2, 1, 4], np.int32)  # the data the index is computed from (not differentiated)
Y = np.array([0.3, -1.2, 2.5, 0.1])  # argsort: [1, 3, 0, 2], a permutation of dim 0 (unique indices)

# The index computations, written once: KP for Kiln (graph ops when compiled), NP for NumPy.
KP = types.SimpleNamespace(argsort=lambda y: ops.cast(ops.argsort(y), ms.int32))
NP = types.SimpleNamespace(argsort=lambda y: np.argsort(y, kind="stable").astype(np.int32))

# ------------------------------------------------------------------------------------------------------- getitem
GET = {
    "1d": lambda x, a, y, P: x[P.argsort(y)],
    "1d_int64": lambda x, a, y, P: x[(a * 2) % 4 if P is NP else ops.cast((a * 2) % 4, ms.int64)],
    "2d": lambda x, a, y, P: x[((a * 3) % 4).reshape(2, 3)],
    "repeats": lambda x, a, y, P: x[a % 3],
    "negative": lambda x, a, y, P: x[a % 4 - 4],
    "idx_slice": lambda x, a, y, P: x[a % 4, 1:4],
    "slice_idx": lambda x, a, y, P: x[:, a % 5],
    "slices_idx_negative": lambda x, a, y, P: x[1:, ::2, a - 6],
    "two_arrays_broadcast": lambda x, a, y, P: x[((a * 3) % 4).reshape(2, 3)[:, :1], a % 5],
    "three_arrays": lambda x, a, y, P: x[P.argsort(y)[:, None], a[:3] % 5, a[3:] - 3].sum(0),
    "separated_by_slice": lambda x, a, y, P: x[a % 4, :, a % 6],
    "int_then_idx": lambda x, a, y, P: x[1, a % 5],
    "idx_int_separated": lambda x, a, y, P: x[a % 4, :, -2],
    "none_ellipsis_idx": lambda x, a, y, P: x[None, ..., a % 6],
    "ellipsis_idx_none_slice": lambda x, a, y, P: x[..., a % 5, None, :],
    "list_and_idx": lambda x, a, y, P: x[[0, 3, 3, 1, 2, 0], :, a % 6],
    "bool_array_and_idx": lambda x, a, y, P: x[np.array([True, False, True, True]), a[:3] % 5],
    "scalar_idx": lambda x, a, y, P: x[a[2] % 4 - 4],
    "one_element_idx": lambda x, a, y, P: x[:, a[1:2] + 2],
    "zero_d_idx_in_tuple": lambda x, a, y, P: x[:, a[0] % 5],
    "zero_d_idx_int_separated": lambda x, a, y, P: x[a[0], :, 2],
    "zero_d_and_1d_idx": lambda x, a, y, P: x[a[1], a % 5],
    "idx_of_idx": lambda x, a, y, P: x[:, (a % 5)[P.argsort(y)]],
}


def kfn(case, table=GET):
    return lambda x, a, y: table[case](x, a, y, KP)


def nfn(case, table=GET):
    return lambda x, a, y: table[case](x, a, y, NP)


def t64(v):
    return Tensor(np.asarray(v, np.float64))


def set_mode(mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)


@pytest.mark.parametrize("case", GET)
def test_getitem_values_graph_pynative_numpy(case):
    want = nfn(case)(X, A, Y)
    f = kfn(case)
    eager = f(t64(X), Tensor(A), t64(Y))
    compiled = ms.jit(f)(t64(X), Tensor(A), t64(Y))
    assert eager.shape == want.shape and compiled.shape == want.shape
    np.testing.assert_array_equal(eager.asnumpy(), want)
    np.testing.assert_array_equal(compiled.asnumpy(), want)


@pytest.mark.parametrize("case", GET)
def test_getitem_gradients_accumulate_pynative_and_graph(case):
    w = RNG.standard_normal(nfn(case)(X, A, Y).shape)
    want = fd_grad(lambda xv: (nfn(case)(xv, A, Y) * w).sum(), X)
    f = kfn(case)

    def loss(x, a, y):
        return (f(x, a, y) * Tensor(w)).sum()

    eager = ms.grad(loss)(t64(X), Tensor(A), t64(Y))
    compiled = ms.jit(ms.grad(loss))(t64(X), Tensor(A), t64(Y))
    np.testing.assert_allclose(eager.asnumpy(), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(compiled.asnumpy(), eager.asnumpy(), rtol=1e-12, atol=1e-12)


def test_repeated_indices_sum_their_cotangents():
    """d x[idx] / dx is a scatter-add: a row picked three times gets three cotangents."""
    g = ms.jit(ms.grad(lambda x, a: x[a % 2].sum()))(t64(np.ones((3, 2))), Tensor(np.array([0, 2, 4, 1], np.int32)))
    np.testing.assert_array_equal(g.asnumpy(), [[3.0, 3.0], [1.0, 1.0], [0.0, 0.0]])


def test_grad_of_jit_and_graph_mode_context(graph_mode):
    f = kfn("separated_by_slice")
    w = RNG.standard_normal(nfn("separated_by_slice")(X, A, Y).shape)
    jf = ms.jit(f)
    g = ms.grad(lambda x, a, y: (jf(x, a, y) * Tensor(w)).sum())(t64(X), Tensor(A), t64(Y))
    want = fd_grad(lambda xv: (nfn("separated_by_slice")(xv, A, Y) * w).sum(), X)
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6, atol=1e-8)


def test_one_graph_serves_every_index_value():
    jf = ms.jit(kfn("separated_by_slice"))
    for a in (A, A[::-1].copy(), np.array([5, 5, 5, 0, 0, 1], np.int32)):
        np.testing.assert_array_equal(jf(t64(X), Tensor(a), t64(Y)).asnumpy(), nfn("separated_by_slice")(X, a, Y))
    assert jf.trace_count == 1


# ------------------------------------------------------------------------------------------------------- setitem
def _set(key_fn, value_op="="):
    def body(x, v, a, y, P):
        out = x * 1.0
        key = key_fn(a, y, P)
        if value_op == "=":
            out[key] = v
        else:
            out[key] += v
        return out
    return body


# name: (body, value shape, unique indices: the value's gradient is checked)
SET = {
    "set_1d": (_set(lambda a, y, P: P.argsort(y)), (4, 1, 6), True),
    "set_negative": (_set(lambda a, y, P: P.argsort(y) - 4), (5, 6), True),
    "set_slice_idx": (_set(lambda a, y, P: (slice(None), slice(1, 3), (a * 5) % 6)), (6,), True),
    "set_two_arrays_separated": (_set(lambda a, y, P: (P.argsort(y), slice(None), a[:4] % 6)), (4, 5), True),
    "set_idx_none_ellipsis": (_set(lambda a, y, P: (None, a[:3] - 2, ...)), (3, 5, 6), True),
    "set_iadd": (_set(lambda a, y, P: P.argsort(y), "+="), (4, 5, 6), True),
    "set_iadd_2d_idx": (_set(lambda a, y, P: (slice(None), P.argsort(y).reshape(2, 2)), "+="), (1, 2, 2, 6), True),
    # Repeated indices: the last write (row-major) wins, as NumPy; MindSpore's TensorScatterUpdate leaves the order
    # undefined, so only the values and the gradient w.r.t. x (zero at every written position) are checked.
    "set_repeats": (_set(lambda a, y, P: a % 3), (6, 5, 6), False),
    "set_iadd_repeats": (_set(lambda a, y, P: (a % 3, 2), "+="), (6, 6), False),
}
V = {name: RNG.standard_normal(vs) for name, (_, vs, _) in SET.items()}


def set_k(case):
    return lambda x, v, a, y: SET[case][0](x, v, a, y, KP)


def set_n(case):
    return lambda x, v, a, y: SET[case][0](np.array(x, np.float64), v, a, y, NP)


@pytest.mark.parametrize("case", SET)
def test_setitem_values_graph_pynative_numpy(case):
    want = set_n(case)(X, V[case], A, Y)
    eager = set_k(case)(t64(X), t64(V[case]), Tensor(A), t64(Y))
    compiled = ms.jit(set_k(case))(t64(X), t64(V[case]), Tensor(A), t64(Y))
    np.testing.assert_array_equal(eager.asnumpy(), want)
    np.testing.assert_array_equal(compiled.asnumpy(), want)


@pytest.mark.parametrize("case", SET)
def test_setitem_gradients_pynative_and_graph(case):
    w = RNG.standard_normal(X.shape)
    v = V[case]
    unique = SET[case][2]

    def loss(x, v, a, y):
        return (set_k(case)(x, v, a, y) * Tensor(w)).sum()

    pos = (0, 1) if unique else 0
    eager = ms.grad(loss, grad_position=pos)(t64(X), t64(v), Tensor(A), t64(Y))
    compiled = ms.jit(ms.grad(loss, grad_position=pos))(t64(X), t64(v), Tensor(A), t64(Y))
    eager = eager if unique else (eager,)
    compiled = compiled if unique else (compiled,)
    want = [fd_grad(lambda xv: (set_n(case)(xv, v, A, Y) * w).sum(), X)]
    if unique:
        want.append(fd_grad(lambda vv: (set_n(case)(X, vv, A, Y) * w).sum(), v))
    for e, c, wg in zip(eager, compiled, want):
        np.testing.assert_allclose(e.asnumpy(), wg, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(c.asnumpy(), e.asnumpy(), rtol=1e-12, atol=1e-12)


def test_setitem_scalar_value_and_one_graph():
    @ms.jit
    def f(x, a):
        y = x * 1.0
        y[a % 4, 1:3] = 7.0
        return y

    for a in (A, np.array([1, 1, 1, 2, 2, 2], np.int32)):
        want = X.copy()
        want[a % 4, 1:3] = 7.0
        np.testing.assert_array_equal(f(t64(X), Tensor(a)).asnumpy(), want)
    assert f.trace_count == 1


# ------------------------------------------------------------------------------------------------- nn.Cell, GRAPH_MODE
class Lookup(nn.Cell):
    """An embedding-like lookup and a scatter of the looked-up rows, both at indices computed in construct."""

    def __init__(self):
        super().__init__()
        self.table = Parameter(Tensor(np.arange(12.0).reshape(6, 2)), name="table")

    def construct(self, x, ids):
        rows = self.table[(ids * 5) % 6]  # (4, 2); ids with repeats give repeated rows
        out = x * 1.0
        out[:, ops.cast(ops.argsort(ids), ms.int32)] = rows.T * 2.0
        return (out * rows.sum()).sum() + rows[ids % 2 - 2, 1].sum()


def lookup_np(table, x, ids):
    rows = table[(ids * 5) % 6]
    out = x.copy()
    out[:, np.argsort(ids, kind="stable")] = rows.T * 2.0
    return (out * rows.sum()).sum() + rows[ids % 2 - 2, 1].sum()


def test_cell_in_graph_mode_values_and_parameter_gradient(graph_mode):
    net = Lookup()
    table = np.arange(12.0).reshape(6, 2)
    x = RNG.standard_normal((2, 4))
    ids = np.array([3, 0, 3, 5], np.int32)
    np.testing.assert_allclose(net(t64(x), Tensor(ids)).asnumpy(), lookup_np(table, x, ids), rtol=1e-12)
    grads = ms.grad(net, grad_position=None, weights=net.trainable_params())(t64(x), Tensor(ids))
    want = fd_grad(lambda tv: lookup_np(tv, x, ids), table)
    np.testing.assert_allclose(grads[0].asnumpy(), want, rtol=1e-6, atol=1e-6)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = ms.grad(net, grad_position=None, weights=net.trainable_params())(t64(x), Tensor(ids))
    np.testing.assert_allclose(eager[0].asnumpy(), grads[0].asnumpy(), rtol=1e-12)


# ------------------------------------------------------------------------------------------------- while loop
def test_computed_index_inside_a_compiled_while_loop():
    @ms.jit
    def f(x, n):
        s = x[0] * 0.0
        i = 0
        while i < n:
            s = s + x[(Tensor(np.arange(3, dtype=np.int32)) + i) % 4].sum(0)
            i = i + 1
        return s

    for n in (0, 1, 5):
        want = sum((X[(np.arange(3) + i) % 4].sum(0) for i in range(n)), np.zeros((5, 6)))
        np.testing.assert_allclose(f(t64(X), Tensor(n)).asnumpy(), want, rtol=1e-12)
    assert f.trace_count == 1


# ------------------------------------------------------------------------------------------------- dynamic shapes
def test_dynamic_batch_one_graph_wraps_and_checks_with_the_run_time_size():
    @ms.jit(input_signature=(Tensor(shape=[None, 3], dtype=ms.float64), Tensor(shape=[4], dtype=ms.int32)))
    def f(x, a):
        y = x * 1.0
        y[a - 2, a % 3] = -1.0
        return y[a % 3 - 3, :2]

    for b in (3, 5, 8):
        x = np.arange(b * 3.0).reshape(b, 3)
        a = np.array([0, 1, 2, 4], np.int32)
        y = x.copy()
        y[a - 2, a % 3] = -1.0
        np.testing.assert_array_equal(f(t64(x), Tensor(a)).asnumpy(), y[a % 3 - 3, :2])
    assert f.compile_count == 1
    with pytest.raises(IndexError, match=r"dimension 0 \(a dynamic size\) must be in \[-2, 2\), but got -3"):
        f(t64(np.ones((2, 3))), Tensor(np.array([0, 1, 2, 0], np.int32)))


# ------------------------------------------------------------------------------------------------- errors
def test_out_of_range_index_raises_index_error_when_the_graph_runs():
    f = ms.jit(lambda x, a: x[:, a + 1])
    np.testing.assert_array_equal(f(t64(X), Tensor(np.array([3, -6], np.int32))).asnumpy(), X[:, [4, -5]])
    with pytest.raises(IndexError, match=r"index into dimension 1 \(size 5\).*must be in \[-5, 5\), but got 5"):
        f(t64(X), Tensor(np.array([0, 4], np.int32)))
    with pytest.raises(IndexError, match=r"must be in \[-5, 5\), but got -6"):
        f(t64(X), Tensor(np.array([-7], np.int32)))
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 5"):  # PyNative: NumPy's check
        (lambda x, a: x[:, a + 1])(t64(X), Tensor(np.array([0, 4], np.int32)))
    # The dimension is x's (as NumPy's axis), not that of x with the new axes inserted.
    g = ms.jit(lambda x, a: x[None, :, None, a * 1])
    with pytest.raises(IndexError, match=r"dimension 1 \(size 5\) of the tensor of shape \(4, 5, 6\).*got 9"):
        g(t64(X), Tensor(np.array([9], np.int32)))
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 5"):
        t64(X)[None, :, None, [9]]


def test_out_of_range_is_caught_for_each_of_several_index_arrays():
    """(0, 6) into a (4, 5, 6) tensor's first two dims would linearize to the valid (1, 1): it must raise."""
    f = ms.jit(lambda x, a: x[a[:1] * 0, a[:1] * 2])
    with pytest.raises(IndexError, match=r"index into dimension 1 \(size 5\).*but got 6"):
        f(t64(X), Tensor(np.array([3], np.int32)))


def test_out_of_range_one_element_index_raises():
    """A loop-counter style index (one element): -7 into a size of 4 raises (wrapping it once gave -3, a valid index
    that picked the wrong row before)."""
    f = ms.jit(lambda x, k: x[k - 7])
    with pytest.raises(IndexError, match="out of range"):
        f(t64(X), Tensor(0))
    np.testing.assert_array_equal(f(t64(X), Tensor(4)).asnumpy(), X[-3])


def test_out_of_range_setitem_raises():
    @ms.jit
    def f(x, a):
        y = x * 1.0
        y[:, a] = 0.0
        return y

    with pytest.raises(IndexError, match=r"dimension 1 \(size 5\).*but got 5"):
        f(t64(X), Tensor(np.array([1, 5], np.int32)))


def _set_at(x, i):
    y = x * 1.0
    y[0, 0, i] = -1.0
    return y


def _set_none_at(x, i):
    y = x * 1.0
    y[None, i, 1:] = -1.0  # the dimension named is x's, not that of x with the new axis
    return y


@pytest.mark.parametrize("fn,dim,size", [
    (lambda x, i: x[0, 0, i], 2, 6), (lambda x, i: x[:, i], 1, 5), (_set_at, 2, 6), (_set_none_at, 0, 4),
], ids=["getitem", "getitem_slice", "setitem", "setitem_none"])
@pytest.mark.parametrize("shape", [(), (1,), (3,)], ids=["0d", "one_element", "array"])
def test_out_of_range_error_shows_the_users_index_and_range(fn, dim, size, shape):
    """Every graph index (one element or an array, getitem or setitem) is checked before negative values are wrapped:
    the message names the user's value and [-n, n). The one-element setitem path wrapped first, and TensorScatterUpdate
    then reported -7 into a size of 6 as the index [0, 0, -1] before."""
    f = ms.jit(fn)
    for bad in (-7, size, -12):
        if bad >= -size and bad != size:
            continue
        i = np.full(shape, bad, np.int64)
        if len(shape) and shape[0] > 1:
            i[0] = 1  # the bad value at index (1,), after a good one
        where = r"\(\)" if not shape else r"\(0,\)" if shape == (1,) else r"\(1,\)"
        with pytest.raises(IndexError, match=rf"For 'Tensor indexing', every index into dimension {dim} \(size "
                                             rf"{size}\) .*must be in \[-{size}, {size}\), but got {bad} at index "
                                             rf"{where}"):
            f(t64(X), Tensor(i))
    for good in (-size, size - 1):  # the ends of the range still index
        i = Tensor(np.full(shape, good, np.int64))
        np.testing.assert_array_equal(f(t64(X), i).asnumpy(), fn(t64(X), i).asnumpy())


def test_bool_mask_computed_in_the_graph_is_a_clear_error():
    # under jit_syntax_level=STRICT (under LAX, the default, the function runs in PyNative instead:
    # test_graph_dynamic_shape_ops.py)
    ms.set_context(jit_syntax_level=ms.STRICT)
    try:
        f = ms.jit(lambda x: x[x > 0])
        with pytest.raises(IndexError, match="shape depends on the data.*ops.select") as e:
            f(t64(X))
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)
    assert "not supported yet" not in str(e.value)


def test_bool_mask_argument_of_a_compiled_function_under_strict():
    """x[mask] with the mask passed to the compiled function (jit_syntax_level=STRICT): the error says the mask is an
    input of the function or computed in it (not "computed inside"), and a mask of the wrong shape gets the shape
    mismatch error first, the same text as in PyNative."""
    ms.set_context(jit_syntax_level=ms.STRICT)
    try:
        f = ms.jit(lambda x, m: x[m])
        with pytest.raises(IndexError, match=r"boolean mask tensor of a compiled \(graph-mode\) function \(an input "
                                             r"of the function, or computed in it; a Bool tensor of shape \(4, 5\)\)"
                                             r".*shape depends on the data.*ops.select"):
            f(t64(X), Tensor(X[:, :, 0] > 0))
        with pytest.raises(IndexError, match=r"^The boolean index of shape \(5,\) does not match the indexed "
                                             r"dimensions \(4,\)\.$"):
            f(t64(X), Tensor(X[0, :, 0] > 0))
        g = ms.jit(lambda x, m: x[:, m])  # a mask after a slice: checked against dim 1
        with pytest.raises(IndexError, match=r"^The boolean index of shape \(4,\) does not match the indexed "
                                             r"dimensions \(5,\)\.$"):
            g(t64(X), Tensor(X[:, 0, 0] > 0))
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)
    with pytest.raises(IndexError, match=r"^The boolean index of shape \(5,\) does not match the indexed "
                                         r"dimensions \(4,\)\.$"):
        t64(X)[Tensor(X[0, :, 0] > 0)]  # PyNative: the same text


def test_zero_d_bool_tensor_input_of_a_compiled_function():
    """A 0-d Bool tensor passed to a compiled function: x[b] has a shape that depends on b's value (an axis of length
    1 or 0), so reading raises a clear IndexError that names the 0-d bool (not the boolean-mask text about counting
    True elements) under jit_syntax_level=STRICT, and runs in PyNative under LAX (the default; NumPy's values);
    x[b] = v compiles (a Select) and follows NumPy for both values, in one graph."""
    for key in (lambda b: b, lambda b: (b, 0), lambda b: (0, b)):
        f = ms.jit(lambda x, b: x[key(b)])
        ms.set_context(jit_syntax_level=ms.STRICT)
        try:
            with pytest.raises(IndexError, match=r"0-d Bool tensor.*length 1 \(True\) or 0 \(False\).*Python bool"):
                f(t64(X), Tensor(True))
        finally:
            ms.set_context(jit_syntax_level=ms.LAX)
        g = ms.jit(lambda x, b: x[key(b)])
        with pytest.warns(RuntimeWarning, match="whose output shape depends on tensor values"):
            np.testing.assert_array_equal(g(t64(X), Tensor(True)).asnumpy(), X[key(True)])

    @ms.jit
    def s(x, b):
        y = x * 1.0
        y[b] = -1.0
        return y

    for flag in (True, False, np.bool_(True)):
        want = X.copy()
        want[flag] = -1.0
        np.testing.assert_array_equal(s(t64(X), Tensor(flag)).asnumpy(), want)
    assert s.trace_count == 1
    # A Python bool is a constant of the function: NumPy's shapes.
    np.testing.assert_array_equal(ms.jit(lambda x: x[True, :, [0, 2]])(t64(X)).asnumpy(), X[True, :, [0, 2]])


def test_index_arrays_that_do_not_broadcast_and_float_index():
    with pytest.raises(IndexError, match=r"shape mismatch.*\(2,\) \(3,\)"):
        ms.jit(lambda x, a: x[a[:2], a[:3]])(t64(X), Tensor(A))
    with pytest.raises(IndexError, match="integer or bool"):
        ms.jit(lambda x, a: x[a * 1.5])(t64(X), Tensor(A))
