"""The in-place state ops through kiln._core: assign, depend and the fused optimizer kernels (adam, apply_momentum,
sgd) against a NumPy implementation of MindSpore's formulas (reference §5.2, §5.3) over several steps."""
import numpy as np
import pytest

from helpers import N, T
from kiln import _core

RNG = np.random.default_rng(0)
STEPS = 5


def tol(dtype):
    return {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6),
            np.float16: dict(rtol=5e-3, atol=5e-3)}[dtype]


def scalar(v, dtype=np.float32):
    """A 0-d kiln tensor (as nn.Adam keeps lr and the beta powers)."""
    return T(np.asarray(v, dtype=dtype))


# ---------------------------------------------------------------- NumPy references (MindSpore's formulas)

def adam_ref(p, m, v, b1p, b2p, lr, b1, b2, eps, g, nesterov):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    alpha = lr * np.sqrt(1 - b2p) / (1 - b1p)
    num = b1 * m + (1 - b1) * g if nesterov else m
    return p - alpha * num / (np.sqrt(v) + eps), m, v


def momentum_ref(p, acc, lr, g, mu, nesterov):
    acc = mu * acc + g
    return p - (lr * (g + mu * acc) if nesterov else lr * acc), acc


def sgd_ref(p, acc, first, lr, g, mu, damp, wd, nesterov):
    g = g + wd * p
    if mu > 0:
        acc = g if first else mu * acc + (1 - damp) * g
        g = g + mu * acc if nesterov else acc
    return p - lr * g, acc


# ---------------------------------------------------------------- Adam

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 4)])
def test_adam_matches_mindspore_formula(dtype, nesterov, shape):
    b1, b2, eps = 0.9, 0.999, 1e-8
    p_np = RNG.standard_normal(shape).astype(dtype)
    m_np = np.zeros(shape, dtype)
    v_np = np.zeros(shape, dtype)
    p, m, v = T(p_np), T(m_np), T(v_np)
    ref = [p_np.astype(np.float64), m_np.astype(np.float64), v_np.astype(np.float64)]
    b1p = b2p = 1.0
    for step in range(STEPS):
        g_np = RNG.standard_normal(shape).astype(dtype)
        lr = 0.01 * (step + 1)  # the lr tensor is read at every step
        b1p, b2p = b1p * b1, b2p * b2
        ref = list(adam_ref(*ref, b1p, b2p, lr, b1, b2, eps, g_np.astype(np.float64), nesterov))
        _core.adam(p, m, v, scalar(b1p, np.float64), scalar(b2p, np.float64), scalar(lr, np.float64), b1, b2, eps,
                   T(g_np), nesterov)
    for got, want in zip((p, m, v), ref):
        assert got.dtype == {np.float32: _core.DType.Float32, np.float64: _core.DType.Float64}[dtype]
        np.testing.assert_allclose(N(got), want, **tol(dtype))


def test_adam_float16_computes_in_float32():
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.05
    p_np = RNG.standard_normal((5,)).astype(np.float16)
    p, m, v = T(p_np), T(np.zeros(5, np.float16)), T(np.zeros(5, np.float16))
    ref = [p_np.astype(np.float64), np.zeros(5), np.zeros(5)]
    b1p = b2p = 1.0
    for _ in range(STEPS):
        g = RNG.standard_normal(5).astype(np.float16)
        b1p, b2p = b1p * b1, b2p * b2
        ref = list(adam_ref(*ref, b1p, b2p, lr, b1, b2, eps, g.astype(np.float64), False))
        _core.adam(p, m, v, b1p, b2p, lr, b1, b2, eps, T(g))  # Python floats: weak 0-d float32 tensors
    assert N(p).dtype == np.float16
    np.testing.assert_allclose(N(p), ref[0], **tol(np.float16))
    np.testing.assert_allclose(N(m), ref[1], **tol(np.float16))


def test_adam_first_step_is_lr_sized():
    # With bias correction the first step moves every element by ≈ lr·sign(g) (|m|/√v = 1 at t = 1).
    p = T(np.zeros(4, np.float64))
    g = T(np.array([1e-3, -2.0, 50.0, -0.1]))
    _core.adam(p, T(np.zeros(4)), T(np.zeros(4)), scalar(0.9, np.float64), scalar(0.999, np.float64),
               scalar(0.01, np.float64), 0.9, 0.999, 1e-12, g)
    np.testing.assert_allclose(N(p), -0.01 * np.sign(N(g)), rtol=1e-6)


# ---------------------------------------------------------------- ApplyMomentum

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_momentum_matches_formula(dtype, nesterov):
    mu = 0.9
    p_np = RNG.standard_normal((4, 3)).astype(dtype)
    p, acc = T(p_np), T(np.zeros((4, 3), dtype))
    ref = [p_np.astype(np.float64), np.zeros((4, 3))]
    for step in range(STEPS):
        g = RNG.standard_normal((4, 3)).astype(dtype)
        lr = 0.1 / (step + 1)
        ref = list(momentum_ref(*ref, lr, g.astype(np.float64), mu, nesterov))
        _core.apply_momentum(p, acc, scalar(lr, np.float64), T(g), mu, nesterov)
    np.testing.assert_allclose(N(p), ref[0], **tol(dtype))
    np.testing.assert_allclose(N(acc), ref[1], **tol(dtype))


# ---------------------------------------------------------------- SGD

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mu,damp,wd,nesterov", [
    (0.0, 0.0, 0.0, False),   # plain
    (0.0, 0.0, 0.1, False),   # weight decay only
    (0.9, 0.0, 0.0, False),   # momentum
    (0.9, 0.3, 0.01, False),  # momentum + dampening + weight decay
    (0.8, 0.0, 0.05, True),   # nesterov (+ weight decay)
])
@pytest.mark.parametrize("per_element_stat", [False, True])
def test_sgd_matches_formula(dtype, mu, damp, wd, nesterov, per_element_stat):
    shape = (2, 5)
    p_np = RNG.standard_normal(shape).astype(dtype)
    p, acc = T(p_np), T(np.zeros(shape, dtype))
    # stat: one flag, or one flag per element of the parameter's dtype as MindSpore's nn.SGD keeps it.
    stat = T(np.ones(shape, dtype)) if per_element_stat else T(np.ones((1,), np.float32))
    ref_p, ref_acc = p_np.astype(np.float64), np.zeros(shape)
    lr = 0.05
    for step in range(STEPS):
        g = RNG.standard_normal(shape).astype(dtype)
        ref_p, ref_acc = sgd_ref(ref_p, ref_acc, step == 0, lr, g.astype(np.float64), mu, damp, wd, nesterov)
        _core.sgd(p, T(g), scalar(lr, np.float64), acc, stat, momentum=mu, dampening=damp, weight_decay=wd,
                  nesterov=nesterov)
        if mu > 0:
            assert (N(stat) == 0).all()  # the first momentum step clears the flag
        else:
            assert (N(stat) == 1).all()  # untouched without momentum
    np.testing.assert_allclose(N(p), ref_p, **tol(dtype))
    if mu > 0:
        np.testing.assert_allclose(N(acc), ref_acc, **tol(dtype))


def test_sgd_mixed_per_element_stat():
    p, acc = T(np.ones(4, np.float32)), T(np.full(4, 0.5, np.float32))
    stat = T(np.array([1, 0, 0, 1], np.float32))
    g = np.array([2.0, 2.0, -1.0, 4.0], np.float32)
    _core.sgd(p, T(g), 0.1, acc, stat, momentum=0.9, dampening=0.5)
    want_acc = np.where([True, False, False, True], g, 0.9 * 0.5 + 0.5 * g)
    np.testing.assert_allclose(N(acc), want_acc, rtol=1e-6)
    np.testing.assert_allclose(N(p), 1 - 0.1 * want_acc, rtol=1e-6)
    np.testing.assert_array_equal(N(stat), np.zeros(4))


def test_sgd_stat_reset_restarts_momentum():
    # Setting stat back to 1 makes the next step take accum = g again.
    p, acc, stat = T(np.zeros(2)), T(np.zeros(2)), T(np.ones(1, np.float32))
    _core.sgd(p, T(np.array([1.0, 2.0])), 1.0, acc, stat, momentum=0.5)
    _core.sgd(p, T(np.array([1.0, 2.0])), 1.0, acc, stat, momentum=0.5)
    np.testing.assert_allclose(N(acc), [1.5, 3.0])
    _core.assign(stat, 1.0)
    _core.sgd(p, T(np.array([4.0, 4.0])), 1.0, acc, stat, momentum=0.5)
    np.testing.assert_allclose(N(acc), [4.0, 4.0])
    np.testing.assert_allclose(N(p), [-1 - 1.5 - 4, -2 - 3 - 4])


# ---------------------------------------------------------------- assign / depend

def test_assign_in_place_same_object():
    var = T(np.zeros((2, 3), np.float32))
    arr_view = var.asnumpy()  # shares the storage
    ident = id(var)
    r = _core.assign(var, T(np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert r is var and id(var) == ident
    np.testing.assert_array_equal(N(var), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(arr_view, np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("value,want", [
    (np.array([1, 2, 3], np.int64), np.array([[1, 2, 3], [1, 2, 3]])),       # row broadcast + int → float
    (np.array([[7.0], [8.0]]), np.array([[7, 7, 7], [8, 8, 8]])),               # column broadcast, float64
    (np.array(True), np.ones((2, 3))),                                          # bool 0-d
])
def test_assign_broadcast_and_cast(value, want):
    var = T(np.zeros((2, 3), np.float32))
    _core.assign(var, T(value))
    assert var.dtype == _core.DType.Float32
    np.testing.assert_array_equal(N(var), want.astype(np.float32))


def test_assign_python_scalars_and_int_target():
    var = T(np.zeros(3, np.int32))
    _core.assign(var, 2.9)
    np.testing.assert_array_equal(N(var), [2, 2, 2])
    _core.assign(var, -7)
    np.testing.assert_array_equal(N(var), [-7, -7, -7])
    assert N(var).dtype == np.int32
    h = T(np.zeros(2, np.float16))
    _core.assign(h, T(np.array([1 + 2.0 ** -12, 65504.0])))
    np.testing.assert_array_equal(N(h), np.array([1.0, 65504.0], np.float16))


def test_assign_writes_through_non_contiguous_views():
    base = T(np.arange(12, dtype=np.float64).reshape(3, 4))
    tv = _core.transpose(base, (1, 0))
    assert base._shares_storage(tv) and not tv.is_contiguous()
    _core.assign(tv, T(np.arange(12, dtype=np.float64).reshape(4, 3) * -1))
    np.testing.assert_array_equal(N(base), (np.arange(12).reshape(4, 3) * -1).T)
    col = _core.strided_slice(base, [0, 1], [3, 4], [1, 2])  # base[:, 1::2]
    assert base._shares_storage(col) and tuple(col.shape) == (3, 2)
    _core.assign(col, T(np.array([100.0, 200.0])))
    want = (np.arange(12).reshape(4, 3) * -1).T.astype(np.float64)
    want[:, 1::2] = [100.0, 200.0]
    np.testing.assert_array_equal(N(base), want)


def test_assign_overlapping_source():
    x = T(np.arange(5, dtype=np.float32))
    rev = _core.strided_slice(x, [4], [-1], [-1])  # x[::-1] (slice(None, None, -1).indices(5)), a view of x
    assert x._shares_storage(rev)
    _core.assign(x, rev)  # the source is read before anything is written
    np.testing.assert_array_equal(N(x), [4, 3, 2, 1, 0])
    base = T(np.arange(4, dtype=np.float32).reshape(2, 2))
    _core.assign(base, _core.transpose(base, (1, 0)))  # in-place transpose
    np.testing.assert_array_equal(N(base), np.arange(4).reshape(2, 2).T)


def test_assign_errors():
    var = T(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"Assign.*\[2\].*\[2, 3\]"):
        _core.assign(var, T(np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match=r"Assign.*\[1, 2, 3\]"):
        _core.assign(var, T(np.zeros((1, 2, 3), np.float32)))
    with pytest.raises(TypeError, match="Assign"):
        _core.assign(np.zeros((2, 3)), T(np.ones((2, 3))))
    np.testing.assert_array_equal(N(var), np.zeros((2, 3)))


def test_assign_does_not_give_parameter_a_grad_fn():
    p = T(np.ones(3))
    with _core.GradScope() as s:
        s.watch(p)
        y = _core.mul(p, p)
        assert y._has_grad_fn
        _core.assign(p, T(np.full(3, 2.0)))
        _core.adam(p, T(np.zeros(3)), T(np.zeros(3)), 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, T(np.ones(3)))
        assert not p._has_grad_fn


def test_depend_returns_value_and_routes_gradient_to_value():
    x_np, e_np = np.array([1.0, -2.0, 3.0]), np.array([5.0])
    r = _core.depend(T(x_np), T(e_np))
    np.testing.assert_array_equal(N(r), x_np)
    with _core.GradScope() as s:
        x = s.watch_input(T(x_np))
        e = s.watch_input(T(e_np))
        y = _core.mul(_core.depend(x, e), x)
        gx, ge = _core.gradient([y], [None], [x, e])
    np.testing.assert_allclose(N(gx), 2 * x_np)
    np.testing.assert_array_equal(N(ge), np.zeros(1))


# ---------------------------------------------------------------- bad input

def test_optimizer_errors():
    p, m, v = T(np.zeros((2, 3), np.float32)), T(np.zeros((2, 3), np.float32)), T(np.zeros((2, 3), np.float32))
    g_bad = T(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"Adam.*\[3, 2\].*|Adam.*\[2, 3\].*\[3, 2\]"):
        _core.adam(p, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, g_bad)
    with pytest.raises(ValueError, match="Adam.*'lr'"):
        _core.adam(p, m, v, 0.9, 0.999, T(np.ones(2, np.float32)), 0.9, 0.999, 1e-8, T(np.zeros((2, 3), np.float32)))
    with pytest.raises(TypeError, match="Adam.*'m'"):
        _core.adam(p, T(np.zeros((2, 3))), v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, T(np.zeros((2, 3), np.float32)))
    with pytest.raises(TypeError, match="Adam.*Int32"):
        ip = T(np.zeros(3, np.int32))
        _core.adam(ip, T(np.zeros(3, np.int32)), T(np.zeros(3, np.int32)), 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8,
                   T(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="Adam.*share storage"):
        _core.adam(p, p, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, T(np.zeros((2, 3), np.float32)))
    with pytest.raises(TypeError):  # an in-place target must be a kiln Tensor
        _core.adam(np.zeros((2, 3)), m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, T(np.zeros((2, 3), np.float32)))
    with pytest.raises(ValueError, match=r"ApplyMomentum.*\[4\]"):
        _core.apply_momentum(T(np.zeros(3)), T(np.zeros(3)), 0.1, T(np.zeros(4)), 0.9)
    with pytest.raises(ValueError, match="ApplyMomentum.*accumulation"):
        _core.apply_momentum(T(np.zeros(3)), T(np.zeros(1)), 0.1, T(np.zeros(3)), 0.9)
    acc, stat = T(np.zeros((2, 3), np.float32)), T(np.ones(1, np.float32))
    with pytest.raises(ValueError, match="SGD.*nesterov.*dampening"):
        _core.sgd(p, T(np.zeros((2, 3), np.float32)), 0.1, acc, stat, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="SGD.*'stat'"):
        _core.sgd(p, T(np.zeros((2, 3), np.float32)), 0.1, acc, T(np.ones(2, np.float32)), momentum=0.9)
    with pytest.raises(ValueError, match=r"SGD.*\[3\]"):
        _core.sgd(p, T(np.zeros(3, np.float32)), 0.1, acc, stat, momentum=0.9)
    # Nothing was written by the failed calls.
    for t in (p, m, v, acc):
        np.testing.assert_array_equal(N(t), np.zeros((2, 3)))
    np.testing.assert_array_equal(N(stat), [1.0])
