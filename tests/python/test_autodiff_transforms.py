"""vjp, jvp, jacrev, jacfwd and vmap (kiln/_autodiff/functional_ad.py, vmap.py): values against NumPy and float64
finite differences, MindSpore 2.10's return structures (pinned with /work/msvenv), PyNative vs Graph, vmap vs a
Python loop, and the errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor, Parameter

from helpers import central_difference

rng = np.random.default_rng(7)


def t64(a):
    return Tensor(np.asarray(a, np.float64))


def f_np(x, y):
    return np.sin(x) * y ** 2 + np.exp(x * 0.3)


def f_ms(x, y):
    return ops.sin(x) * y ** 2 + ops.exp(x * 0.3)


def numeric_jac(f, xs, k):
    """d f(xs) / d xs[k] by central differences, shape out.shape + xs[k].shape."""
    out = f(*xs)
    jac = np.zeros(out.shape + xs[k].shape)
    for idx in np.ndindex(*out.shape):
        def scalar(v, idx=idx):
            a = list(xs)
            a[k] = v
            return f(*a)[idx]
        jac[idx] = central_difference(scalar, xs[k])
    return jac


# ------------------------------------------------------------------------------------------------------- vjp
def test_vjp_values_and_structure():
    x, y = rng.normal(size=(3,)), rng.normal(size=(3,))
    out, fn = ms.vjp(f_ms, t64(x), t64(y))
    np.testing.assert_allclose(out.asnumpy(), f_np(x, y), rtol=1e-12)
    v = rng.normal(size=(3,))
    g = fn(t64(v))
    assert isinstance(g, tuple) and len(g) == 2
    np.testing.assert_allclose(g[0].asnumpy(), v * (np.cos(x) * y ** 2 + 0.3 * np.exp(0.3 * x)), rtol=1e-10)
    np.testing.assert_allclose(g[1].asnumpy(), v * np.sin(x) * 2 * y, rtol=1e-10)
    # the tape is kept: a second call gives the same products for another v
    g2 = fn(t64(2 * v))
    np.testing.assert_allclose(g2[0].asnumpy(), 2 * g[0].asnumpy(), rtol=1e-12)


def test_vjp_single_input_is_a_tuple_and_multiple_outputs():
    x = np.array([1.0, 2.0])
    _, fn = ms.vjp(lambda a: a ** 2, t64(x))
    g = fn(t64(np.ones(2)))
    assert isinstance(g, tuple) and len(g) == 1
    np.testing.assert_allclose(g[0].asnumpy(), 2 * x)

    def two(a, b):
        return a * b, a + b
    out, fn = ms.vjp(two, t64([1.0, 2.0]), t64([3.0, 4.0]))
    assert isinstance(out, tuple) and len(out) == 2
    v = (t64([1.0, 1.0]), t64([2.0, 2.0]))
    for g in (fn(v), fn(*v)):  # one tuple, or one Tensor per output (MindSpore accepts both)
        np.testing.assert_allclose(g[0].asnumpy(), [5.0, 6.0])
        np.testing.assert_allclose(g[1].asnumpy(), [3.0, 4.0])


def test_vjp_has_aux_and_weights():
    x = t64([1.0, 2.0])
    out, fn, aux = ms.vjp(lambda a: (a ** 2, a * 3), x, has_aux=True)
    np.testing.assert_allclose(out.asnumpy(), [1.0, 4.0])
    np.testing.assert_allclose(aux.asnumpy(), [3.0, 6.0])  # two outputs: aux is the second one, not a tuple
    np.testing.assert_allclose(fn(x)[0].asnumpy(), [2.0, 8.0])
    _, _, aux3 = ms.vjp(lambda a: (a, a * 2, a * 3), x, has_aux=True)
    assert isinstance(aux3, tuple) and len(aux3) == 2

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(t64([2.0, 3.0]), name="w")

        def construct(self, a):
            return a * self.w
    net = Net()
    _, fn = ms.vjp(net, x, weights=net.trainable_params())
    gi, gw = fn(t64([1.0, 1.0]))
    np.testing.assert_allclose(gi[0].asnumpy(), [2.0, 3.0])
    np.testing.assert_allclose(gw[0].asnumpy(), [1.0, 2.0])


def test_vjp_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(TypeError, match="vjp"):
        ms.vjp(lambda a: a, 3.0)
    with pytest.raises(ValueError, match="has_aux"):
        ms.vjp(lambda a: a, x, has_aux=True)
    _, fn = ms.vjp(lambda a: a * 2, x)
    with pytest.raises(ValueError, match="shape"):
        fn(t64([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="number"):
        fn(x, x)
    with pytest.raises(TypeError):
        fn(np.ones(2))


# ------------------------------------------------------------------------------------------------------- jvp
def test_jvp_against_jacobian():
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    vx, vy = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    out, jv = ms.jvp(f_ms, (t64(x), t64(y)), (t64(vx), t64(vy)))
    np.testing.assert_allclose(out.asnumpy(), f_np(x, y), rtol=1e-12)
    want = (np.cos(x) * y ** 2 + 0.3 * np.exp(0.3 * x)) * vx + np.sin(x) * 2 * y * vy
    np.testing.assert_allclose(jv.asnumpy(), want, rtol=1e-10)


def test_jvp_nonelementwise_and_structures():
    a = rng.normal(size=(3, 4))
    w = rng.normal(size=(4, 2))
    v = rng.normal(size=(3, 4))

    def fn(x):
        return ops.matmul(ops.tanh(x), t64(w)), x.sum()
    out, jv = ms.jvp(fn, t64(a), t64(v))
    assert isinstance(out, tuple) and isinstance(jv, tuple) and len(jv) == 2
    np.testing.assert_allclose(jv[0].asnumpy(), ((1 - np.tanh(a) ** 2) * v) @ w, rtol=1e-10)
    np.testing.assert_allclose(jv[1].asnumpy(), v.sum(), rtol=1e-12)
    out, jv, aux = ms.jvp(lambda x: (x ** 3, x + 1), t64([1.0, 2.0]), t64([1.0, 1.0]), has_aux=True)
    np.testing.assert_allclose(jv.asnumpy(), [3.0, 12.0])
    np.testing.assert_allclose(aux.asnumpy(), [2.0, 3.0])


def test_jvp_is_differentiable():
    # d/dx sum(jvp(x**3, x, v=x)) = d/dx sum(3 x^3) = 9 x^2
    x = np.array([1.0, 2.0, -0.5])
    g = ms.grad(lambda a: ms.jvp(lambda b: b ** 3, a, a)[1].sum())(t64(x))
    np.testing.assert_allclose(g.asnumpy(), 9 * x ** 2, rtol=1e-10)


def test_jvp_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(TypeError, match="jvp"):
        ms.jvp(lambda a: a, 1.0, x)
    with pytest.raises(ValueError, match="number"):
        ms.jvp(lambda a, b: a, (x, x), (x,))
    with pytest.raises(ValueError, match="shape"):
        ms.jvp(lambda a: a, x, t64([1.0]))


# ------------------------------------------------------------------------------------------- jacrev / jacfwd
@pytest.mark.parametrize("jac", [ms.jacrev, ms.jacfwd])
def test_jacobians_against_finite_differences(jac):
    x, y = rng.normal(size=(3,)), rng.normal(size=(2, 3))

    def fn_np(a, b):
        return np.tanh(a[None, :] * b) @ np.arange(1.0, 4.0)

    def fn_ms(a, b):
        return ops.matmul(ops.tanh(a.reshape((1, 3)) * b), t64(np.arange(1.0, 4.0)))
    j = jac(fn_ms, grad_position=(0, 1))(t64(x), t64(y))
    assert isinstance(j, tuple) and len(j) == 2
    assert j[0].shape == (2, 3) and j[1].shape == (2, 2, 3)
    np.testing.assert_allclose(j[0].asnumpy(), numeric_jac(fn_np, [x, y], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(j[1].asnumpy(), numeric_jac(fn_np, [x, y], 1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jac", [ms.jacrev, ms.jacfwd])
def test_jacobian_structures_as_mindspore(jac):
    # pinned with MindSpore 2.10: outputs (x[:,None]*y, sum(x**2)), positions (0, 1)
    x, y = t64([1.0, 2.0]), t64([[3.0, 4.0, 5.0]])

    def f(a, b):
        return a.reshape((2, 1)) * b, (a ** 2).sum()
    r = jac(f, grad_position=(0, 1))(x, y)
    assert [[tuple(b.shape) for b in a] for a in r] == [[(2, 3, 2), (2, 3, 1, 3)], [(2,), (1, 3)]]
    r = jac(f)(x, y)
    assert isinstance(r, tuple) and [tuple(a.shape) for a in r] == [(2, 3, 2), (2,)]
    np.testing.assert_allclose(r[1].asnumpy(), [2.0, 4.0])
    single = jac(lambda a: a ** 2)(x)
    np.testing.assert_allclose(single.asnumpy(), [[2.0, 0.0], [0.0, 4.0]])
    j, aux = jac(lambda a: (a ** 2, a * 3), has_aux=True)(x)
    np.testing.assert_allclose(j.asnumpy(), [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_allclose(aux.asnumpy(), [3.0, 6.0])


def test_jacobian_errors():
    with pytest.raises(TypeError):
        ms.jacrev(lambda a: a, grad_position="0")
    with pytest.raises(TypeError):
        ms.jacfwd(lambda a: a)(3.0)
    with pytest.raises(IndexError):
        ms.jacrev(lambda a: a, grad_position=1)(t64([1.0]))


def test_transforms_graph_mode_match_pynative(graph_mode):
    x, y = rng.normal(size=(3,)), rng.normal(size=(3,))

    @ms.jit
    def all_in_one(a, b):
        out, fn = ms.vjp(f_ms, a, b)
        g = fn(ops.ones_like(out))
        _, jv = ms.jvp(f_ms, (a, b), (a, b))
        jr = ms.jacrev(f_ms)(a, b)
        jf = ms.jacfwd(f_ms)(a, b)
        return g[0], g[1], jv, jr, jf
    got = all_in_one(t64(x), t64(y))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = all_in_one.__wrapped__(t64(x), t64(y)) if hasattr(all_in_one, "__wrapped__") else None
    dx = np.cos(x) * y ** 2 + 0.3 * np.exp(0.3 * x)
    dy = np.sin(x) * 2 * y
    np.testing.assert_allclose(got[0].asnumpy(), dx, rtol=1e-10)
    np.testing.assert_allclose(got[1].asnumpy(), dy, rtol=1e-10)
    np.testing.assert_allclose(got[2].asnumpy(), dx * x + dy * y, rtol=1e-10)
    np.testing.assert_allclose(got[3].asnumpy(), np.diag(dx), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got[4].asnumpy(), np.diag(dx), rtol=1e-10, atol=1e-14)
    if want is not None:
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12)


# ------------------------------------------------------------------------------------------------------ vmap
def test_vmap_in_out_axes_against_loop():
    x = rng.normal(size=(3, 2)).astype(np.float32)
    y = rng.normal(size=(2, 3)).astype(np.float32)
    z = rng.normal(size=(2,)).astype(np.float32)
    out = ms.vmap(lambda a, b, c: a + b + c, in_axes=(0, 1, None), out_axes=1)(Tensor(x), Tensor(y), Tensor(z))
    want = np.stack([x[i] + y[:, i] + z for i in range(3)], axis=1)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    # the MindSpore docstring example
    x = Tensor(np.array([[1, 2], [3, 4], [5, 6]]).astype(np.float32))
    y = Tensor(np.array([[-3, -2, -1], [3, 2, 1]]).astype(np.float32))
    z = Tensor(np.array([0, 3]).astype(np.float32))
    out = ms.vmap(lambda a, b, c: a + b + c, in_axes=(0, 1, None), out_axes=1)(x, y, z)
    np.testing.assert_array_equal(out.asnumpy(), [[-2, 1, 4], [8, 9, 10]])


def test_vmap_families_against_loop():
    a = rng.normal(size=(4, 3, 5))
    w = rng.normal(size=(5, 2))

    def fn(x, m):
        h = ops.matmul(ops.relu(x), m)           # matmul + elementwise
        return h.sum(axis=0), ops.softmax(h, -1), ops.transpose(h, (1, 0))  # reduction, softmax, shape op
    got = ms.vmap(fn, in_axes=(0, None), out_axes=(0, 1, -1))(t64(a), t64(w))
    loops = [fn(t64(a[i]), t64(w)) for i in range(4)]
    for k, axis in enumerate((0, 1, -1)):
        want = np.stack([l_[k].asnumpy() for l_ in loops], axis=axis)
        np.testing.assert_allclose(got[k].asnumpy(), want, rtol=1e-12)


def test_vmap_nested_in_axes_out_axes_none_and_celllist():
    p = (Tensor(np.ones((3, 2), np.float32)), Tensor(np.full((2, 3), 2.0, np.float32)))
    out = ms.vmap(lambda t: t[0] * t[1], in_axes=((0, 1),))(p)
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 2), 2.0))
    o1, o2 = ms.vmap(lambda a, b: (a * 2, b), in_axes=(0, None), out_axes=(0, None))(
        Tensor(np.ones((3, 2), np.float32)), Tensor(np.arange(2, dtype=np.float32)))
    assert o1.shape == (3, 2) and o2.shape == (2,)

    cells = nn.CellList([nn.Dense(2, 1, weight_init="ones", bias_init="zeros"),
                         nn.Dense(2, 1, weight_init="zeros", bias_init="ones")])
    out = ms.vmap(cells, in_axes=0)(Tensor(np.array([[[1.0, 2.0]], [[3.0, 4.0]]], np.float32)))
    np.testing.assert_allclose(out.asnumpy(), [[[3.0]], [[1.0]]])


def test_vmap_composes_with_grad():
    x = rng.normal(size=(4, 3))
    g = ms.vmap(ms.grad(lambda v: (ops.sin(v) * v).sum()))(t64(x))
    np.testing.assert_allclose(g.asnumpy(), np.cos(x) * x + np.sin(x), rtol=1e-12)
    gg = ms.grad(lambda v: ms.vmap(lambda r: (r ** 2).sum())(v).sum())(t64(x))
    np.testing.assert_allclose(gg.asnumpy(), 2 * x, rtol=1e-12)


def test_vmap_graph_mode(graph_mode):
    x = rng.normal(size=(3, 4)).astype(np.float32)

    @ms.jit
    def f(a):
        return ms.vmap(lambda r: ops.exp(r).sum(), in_axes=0)(a)
    np.testing.assert_allclose(f(Tensor(x)).asnumpy(), np.exp(x).sum(1), rtol=1e-5)


def test_vmap_errors():
    x = Tensor(np.ones((3, 2), np.float32))
    with pytest.raises(RuntimeError, match="axis_size"):
        ms.vmap(lambda a, b: a + b, in_axes=(0, 0))(x, Tensor(np.ones((2, 2), np.float32)))
    with pytest.raises(ValueError, match="None"):
        ms.vmap(lambda a: a, in_axes=None)
    with pytest.raises(ValueError, match="base elements"):
        ms.vmap(lambda a: a, in_axes="0")
    with pytest.raises(ValueError, match="length of 'in_axes'"):
        ms.vmap(lambda a: a, in_axes=(0, 0))(x)
    with pytest.raises(ValueError, match="out of bounds"):
        ms.vmap(lambda a: a, in_axes=2)(x)
    with pytest.raises(TypeError):
        ms.vmap(3)
    assert ops.vmap is ms.vmap and ops.vjp is ms.vjp and ops.jacrev is ms.jacrev


def test_vmap_out_axes_none_must_not_depend_on_mapped_input(graph_mode):
    x = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    y = Tensor(np.ones(2, np.float32))

    def g(a, b):
        return a * 2, b + 1
    with pytest.raises(RuntimeError, match="out_axes can not be None"):
        ms.vmap(lambda a, b: (a * 2, a + b), in_axes=(0, None), out_axes=(0, None))(x, y)  # PyNative: values differ
    o1, o2 = ms.vmap(g, in_axes=(0, None), out_axes=(0, None))(x, y)
    np.testing.assert_allclose(o2.asnumpy(), [2.0, 2.0])

    @ms.jit
    def traced(a, b):
        return ms.vmap(lambda p, q: (p * 2, p + q), in_axes=(0, None), out_axes=(0, None))(a, b)
    with pytest.raises(RuntimeError, match="out_axes can not be None"):
        traced(x, y)  # while tracing: the tape says the second output depends on the mapped input

    @ms.jit
    def traced_ok(a, b):
        return ms.vmap(g, in_axes=(0, None), out_axes=(0, None))(a, b)
    np.testing.assert_allclose(traced_ok(x, y)[1].asnumpy(), [2.0, 2.0])


def test_vjp_single_parameter_weights():
    w = Parameter(t64([2.0, 3.0]), name="w")
    _, fn = ms.vjp(lambda a: a * w, t64([1.0, 2.0]), weights=w)
    gi, gw = fn(t64([1.0, 1.0]))
    assert isinstance(gi, tuple) and isinstance(gw, Tensor)  # MindSpore 2.10: a single Parameter's gradient alone
    np.testing.assert_allclose(gw.asnumpy(), [1.0, 2.0])
