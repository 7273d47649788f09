"""Complex64 / Complex128 tensors (issue 24): dtypes and promotion, NumPy round trips, printing, casts, the
complex functions (real, imag, conj, angle, abs, Complex, ComplexAbs, view_as_real), arithmetic, comparisons,
exp/log/sqrt, matmul and sum/mean against NumPy in PyNative and under kiln.jit, gradients against float64 central
differences on the real and imaginary parts, and the clear TypeError of ops that do not take complex inputs.
Values marked "MindSpore 2.10" were read from MindSpore 2.10 (CPU) with ../shared/tools/ms_oracle.py."""
import numpy as np
import pytest

import kiln
from kiln import Tensor, ops
from kiln.common import dtype as mstype

RNG = np.random.default_rng(24)


def _c(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def both_modes(fn, *args):
    """fn(*args) in PyNative and compiled (kiln.jit): the two must agree; returns the PyNative result."""
    eager = fn(*args)
    graph = kiln.jit(fn)(*args)
    eo = eager if isinstance(eager, (tuple, list)) else (eager,)
    go = graph if isinstance(graph, (tuple, list)) else (graph,)
    for e, g in zip(eo, go):
        assert e.dtype == g.dtype
        np.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=1e-6, atol=1e-6)
    return eager


# ---------------------------------------------------------------------------------------------- dtypes, NumPy

def test_dtype_names_and_types():
    assert str(kiln.complex64) == "Complex64" and str(kiln.complex128) == "Complex128"
    assert mstype.complex64 is kiln.complex64
    assert mstype.complex64 in mstype.number_type and mstype.complex64 not in mstype.float_type
    assert mstype.dtype_to_nptype(kiln.complex64) is np.complex64
    assert mstype.pytype_to_dtype(complex) == kiln.complex128
    assert kiln._core.dtype_itemsize(kiln.complex64) == 8 and kiln._core.dtype_itemsize(kiln.complex128) == 16


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_numpy_round_trip_is_bit_exact(dt):
    a = np.array([1 + 2j, -3 + 0.5j, complex(np.inf, -0.0), complex(np.nan, 1e-30), -0.0 - 0.0j], dt)
    t = Tensor(a)
    assert t.dtype == (kiln.complex64 if dt is np.complex64 else kiln.complex128)
    b = t.asnumpy()
    assert b.dtype == dt and b.tobytes() == a.tobytes()
    s = Tensor.from_numpy(a)  # shares the array's memory (MindSpore 2.10: Tensor.from_numpy of complex64 works)
    assert s.dtype == t.dtype and s.asnumpy().tobytes() == a.tobytes()
    a[0] = 5 - 5j
    assert complex(s[0]) == 5 - 5j
    m = _c((3, 4), dt)
    np.testing.assert_array_equal(Tensor(m).T.asnumpy(), m.T)  # a strided view made contiguous
    np.testing.assert_array_equal(Tensor(m)[1:, ::2].asnumpy(), m[1:, ::2])


def test_tensor_from_python_complex():
    # MindSpore 2.10: Tensor(1+2j) and Tensor([1+2j, 3j]) are Complex128; dtype= converts real lists.
    assert Tensor(1 + 2j).dtype == kiln.complex128 and Tensor(1 + 2j).item() == 1 + 2j
    t = Tensor([1 + 2j, 3j])
    assert t.dtype == kiln.complex128 and t.tolist() == [1 + 2j, 3j]
    u = Tensor([1.0, 2.0], kiln.complex64)
    assert u.dtype == kiln.complex64
    np.testing.assert_array_equal(u.asnumpy(), np.array([1, 2], np.complex64))
    z = ops.zeros((2,), kiln.complex64)
    assert z.dtype == kiln.complex64 and z.asnumpy().tolist() == [0j, 0j]
    assert ops.ones((2,), kiln.complex128).asnumpy().tolist() == [1 + 0j, 1 + 0j]


def test_repr_and_str():
    # MindSpore 2.10's reprs.
    a = Tensor(np.array([[0.1 + 0.2j, -1.5j], [3, 1e10 + 1j]], np.complex64))
    assert repr(a) == "Tensor(shape=[2, 2], dtype=Complex64, value=\n[[0.1+0.2j, -0-1.5j],\n [3+0j, 1e+10+1j]])"
    assert repr(Tensor(np.array(0.1 + 2j, np.complex64))) == "Tensor(shape=[], dtype=Complex64, value= 0.1+2j)"
    assert repr(Tensor(np.array([0.1 + 0.2j, -1j], np.complex128))) == \
        "Tensor(shape=[2], dtype=Complex128, value= [0.1+0.2j, -0-1j])"
    assert str(Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))) == str(np.array([1 + 2j, -3 + 0.5j], np.complex64))


def test_promotion():
    # MindSpore 2.10: Complex64 with Float64 -> Complex128; with Float16, Int32, Bool, a Python float or int ->
    # Complex64; Complex64 with Complex128 -> Complex128.
    x = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    cases = [(Tensor(np.array([1.5, 2.0])), kiln.complex128, [2.5 + 2j, -1 + 0.5j]),
             (Tensor(np.array([1, 2], np.int32)), kiln.complex64, [2 + 2j, -1 + 0.5j]),
             (Tensor(np.array([1, 2], np.float16)), kiln.complex64, [2 + 2j, -1 + 0.5j]),
             (Tensor(np.array([True, False])), kiln.complex64, [2 + 2j, -3 + 0.5j]),
             (2.0, kiln.complex64, [3 + 2j, -1 + 0.5j]), (2, kiln.complex64, [3 + 2j, -1 + 0.5j]),
             (x.astype(kiln.complex128), kiln.complex128, [2 + 4j, -6 + 1j])]
    for other, dt, want in cases:
        r = x + other
        assert r.dtype == dt, (other, r.dtype)
        np.testing.assert_allclose(r.asnumpy(), np.array(want), rtol=1e-6)
        r = other + x
        assert r.dtype == dt
    # A Python complex is a weak scalar (NumPy 2's rule; MindSpore 2.10 refuses complex scalars in Add/Mul).
    for t, dt in ((x, kiln.complex64), (Tensor(np.array([1.0, 2.0], np.float32)), kiln.complex64),
                  (Tensor(np.array([1.0, 2.0])), kiln.complex128), (Tensor(np.array([1, 2], np.int32)), kiln.complex64)):
        r = t * (1 - 2j)
        assert r.dtype == dt and (1j + t).dtype == dt
        np.testing.assert_allclose(r.asnumpy(), t.asnumpy() * (1 - 2j), rtol=1e-6)


def test_astype():
    # MindSpore 2.10: complex -> real keeps the real part; -> Bool is "nonzero"; real -> complex has imag 0.
    a = np.array([1 + 2j, -3.7 + 0.5j, 0j, 1j], np.complex64)
    x = Tensor(a)
    for dt, want in ((kiln.float32, a.real), (kiln.float64, a.real.astype(np.float64)),
                     (kiln.int32, a.real.astype(np.int32)), (kiln.bool_, a != 0),
                     (kiln.complex128, a.astype(np.complex128)), (kiln.float16, a.real.astype(np.float16))):
        r = x.astype(dt)
        assert r.dtype == dt
        np.testing.assert_array_equal(r.asnumpy(), want)
    f = Tensor(np.array([1.5, 2.0])).astype(kiln.complex64)
    assert f.dtype == kiln.complex64 and f.asnumpy().tolist() == [1.5 + 0j, 2 + 0j]


# ---------------------------------------------------------------------------------------------- functions

def test_parts_and_complex_functions():
    a = _c((2, 3), np.complex64)
    x = Tensor(a)
    re = both_modes(ops.real, x)
    assert re.dtype == kiln.float32
    np.testing.assert_array_equal(re.asnumpy(), a.real)
    np.testing.assert_array_equal(both_modes(ops.imag, x).asnumpy(), a.imag)
    np.testing.assert_array_equal(x.real().asnumpy(), a.real)
    np.testing.assert_array_equal(x.imag().asnumpy(), a.imag)
    np.testing.assert_array_equal(both_modes(ops.conj, x).asnumpy(), np.conj(a))
    np.testing.assert_allclose(both_modes(ops.angle, x).asnumpy(), np.angle(a), rtol=1e-6)
    np.testing.assert_array_equal(ops.view_as_real(x).asnumpy(), np.stack([a.real, a.imag], -1))
    ca = ops.ComplexAbs()(x)
    assert ca.dtype == kiln.float32
    np.testing.assert_allclose(ca.asnumpy(), np.abs(a), rtol=1e-6)
    # MindSpore 2.10: ops.abs of a complex tensor is complex, |x| + 0j.
    ab = both_modes(ops.abs, x)
    assert ab.dtype == kiln.complex64
    np.testing.assert_allclose(ab.asnumpy(), np.abs(a).astype(np.complex64), rtol=1e-6)
    c = ops.Complex()(Tensor(np.array([1.0, 2.0], np.float32)), Tensor(np.array([3.0, 4.0], np.float32)))
    assert c.dtype == kiln.complex64 and c.asnumpy().tolist() == [1 + 3j, 2 + 4j]
    assert ops.is_complex(x) and not ops.is_complex(re)
    np.testing.assert_array_equal(ops.isreal(Tensor(np.array([1 + 0j, 1j], np.complex64))).asnumpy(), [True, False])
    # Real inputs (MindSpore 2.10): real is the input, imag zeros, conj the input.
    f = Tensor(np.array([1.5, 2.0], np.float32))
    assert ops.real(f).asnumpy().tolist() == [1.5, 2.0] and ops.imag(f).asnumpy().tolist() == [0.0, 0.0]
    assert ops.conj(f).asnumpy().tolist() == [1.5, 2.0]


def test_complex_function_errors():
    f = Tensor(np.array([1.5, 2.0], np.float32))
    with pytest.raises(TypeError, match="Angle"):
        ops.angle(f)
    with pytest.raises(TypeError, match="view_as_real"):
        ops.view_as_real(f)
    with pytest.raises(TypeError, match="same"):
        ops.Complex()(f, Tensor(np.array([1.0, 2.0])))
    with pytest.raises(TypeError, match="Int64"):
        ops.Complex()(Tensor(np.array([1, 2])), Tensor(np.array([1, 2])))
    with pytest.raises(TypeError, match="ComplexAbs"):
        ops.ComplexAbs()(f)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_arithmetic_against_numpy(dt):
    a, b = _c((3, 4), dt), _c((4,), dt)
    tol = 1e-5 if dt is np.complex64 else 1e-12
    x, y = Tensor(a), Tensor(b)
    for fn, ref in ((lambda p, q: p + q, a + b), (lambda p, q: p - q, a - b), (lambda p, q: p * q, a * b),
                    (lambda p, q: p / q, a / b), (lambda p, q: ops.mul(ops.neg(p), 2.5) - q, -a * 2.5 - b),
                    (lambda p, q: ops.square(p) + q * 2, a * a + b * 2)):
        r = both_modes(fn, x, y)
        assert r.dtype == x.dtype
        np.testing.assert_allclose(r.asnumpy(), ref, rtol=tol, atol=tol)
    w = np.where(np.arange(12).reshape(3, 4) % 2 == 0, a, a + 1j)
    eq, ne = both_modes(lambda p, q: (p == q, p != q), x, Tensor(w))
    np.testing.assert_array_equal(eq.asnumpy(), a == w)
    np.testing.assert_array_equal(ne.asnumpy(), a != w)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_exp_log_sqrt(dt):
    a = _c((5,), dt)
    tol = 2e-5 if dt is np.complex64 else 1e-12
    x = Tensor(a)
    for fn, ref in ((ops.exp, np.exp), (ops.log, np.log), (ops.sqrt, np.sqrt)):
        np.testing.assert_allclose(both_modes(fn, x).asnumpy(), ref(a), rtol=tol, atol=tol)
    # MindSpore 2.10's values.
    m = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    np.testing.assert_allclose(ops.exp(m).asnumpy(), [-1.1312044 + 2.4717267j, 0.04369226 + 0.02386919j], rtol=1e-6)
    np.testing.assert_allclose(ops.log(m).asnumpy(), [0.804719 + 1.1071488j, 1.1123118 + 2.976444j], rtol=1e-6)
    np.testing.assert_allclose(ops.sqrt(m).asnumpy(), [1.2720196 + 0.7861514j, 0.14384238 + 1.7380134j], rtol=1e-6)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_matmul_and_reductions(dt):
    tol = 1e-5 if dt is np.complex64 else 1e-12
    a, b, c = _c((3, 4), dt), _c((4, 5), dt), _c((2, 3, 4), dt)
    np.testing.assert_allclose(both_modes(ops.matmul, Tensor(a), Tensor(b)).asnumpy(), a @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(both_modes(ops.matmul, Tensor(c), Tensor(b)).asnumpy(), c @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(both_modes(lambda p, q: p @ q, Tensor(a), Tensor(b)).asnumpy(), a @ b, rtol=tol,
                               atol=tol)
    np.testing.assert_allclose((Tensor(a) @ Tensor(b.real.astype(np.float64))).asnumpy(), a @ b.real, rtol=tol,
                               atol=tol)
    x = Tensor(c)
    np.testing.assert_allclose(both_modes(lambda t: t.sum(), x).asnumpy(), c.sum(), rtol=tol)
    np.testing.assert_allclose(both_modes(lambda t: t.sum(axis=1), x).asnumpy(), c.sum(1), rtol=tol)
    np.testing.assert_allclose(both_modes(lambda t: t.sum(axis=(0, -1), keepdims=True), x).asnumpy(),
                               c.sum((0, -1), keepdims=True), rtol=tol)
    np.testing.assert_allclose(both_modes(lambda t: t.mean(), x).asnumpy(), c.mean(), rtol=tol)
    np.testing.assert_allclose(both_modes(lambda t: ops.mean(t, -2), x).asnumpy(), c.mean(-2), rtol=tol)
    # MindSpore 2.10's values.
    m = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    assert m.sum().asnumpy() == np.complex64(-2 + 2.5j) and m.mean().asnumpy() == np.complex64(-1 + 1.25j)
    np.testing.assert_allclose(ops.matmul(m.reshape(1, 2), m.reshape(2, 1)).asnumpy(), [[5.75 + 1j]])


def test_shape_ops():
    a = _c((2, 3), np.complex64)
    x = Tensor(a)
    np.testing.assert_array_equal(both_modes(lambda t: t.reshape(3, 2), x).asnumpy(), a.reshape(3, 2))
    np.testing.assert_array_equal(both_modes(lambda t: t.T, x).asnumpy(), a.T)
    np.testing.assert_array_equal(both_modes(lambda t: t[1:, 1:], x).asnumpy(), a[1:, 1:])
    np.testing.assert_array_equal(both_modes(lambda t: ops.cat([t, t], 1), x).asnumpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(both_modes(lambda t: ops.stack([t, t]), x).asnumpy(), np.stack([a, a]))
    np.testing.assert_array_equal(both_modes(lambda t: ops.broadcast_to(t, (2, 2, 3)), x).asnumpy(),
                                  np.broadcast_to(a, (2, 2, 3)))
    np.testing.assert_array_equal(ops.where(Tensor(np.array([True, False, True])), x, -x).asnumpy(),
                                  np.where([True, False, True], a, -a))


def test_python_level_ops():
    a = np.array([1 + 2j, 3 - 1j, -2j], np.complex64)
    x = Tensor(a)
    np.testing.assert_allclose(both_modes(ops.reciprocal, x).asnumpy(), 1 / a, rtol=1e-6)
    np.testing.assert_array_equal(ops.cumsum(x, 0).asnumpy(), np.cumsum(a))
    assert complex(x[1]) == 3 - 1j and x[2].item() == -2j
    with pytest.raises(TypeError, match="float"):
        float(x[0])
    # Helpers that would cast an integer input to float32 refuse complex inputs (no silent loss of the imaginary part)
    for fn, name in ((ops.norm, "norm"), (lambda t: t.std(), "Tensor.std"), (lambda t: t.var(), "Tensor.var"),
                     (lambda t: ops.isclose(t, t), "isclose")):
        with pytest.raises(TypeError, match=rf"For '{name}', the dtype Complex64 is not supported"):
            fn(x)


def test_gather_and_its_gradient():
    a = _c((4, 3))
    idx = Tensor(np.array([2, 0, 2]))
    np.testing.assert_array_equal(both_modes(lambda t, i: ops.gather(t, i, 0), Tensor(a), idx).asnumpy(), a[[2, 0, 2]])
    np.testing.assert_array_equal(both_modes(lambda t, i: ops.gather(t, i, 1), Tensor(a), idx).asnumpy(),
                                  a[:, [2, 0, 2]])
    np.testing.assert_array_equal(Tensor(a)[idx].asnumpy(), a[[2, 0, 2]])
    w = _c((3, 3))

    def loss(t, ww):
        return ops.real(ops.gather(t, idx, 0) * ww).sum() + ops.imag(ops.gather(t, idx, 1)).sum()

    want = _fd(loss, (a, w), 0)
    for g in (kiln.grad(loss)(Tensor(a), Tensor(w)), kiln.jit(kiln.grad(loss))(Tensor(a), Tensor(w))):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_unsupported_ops_raise_type_error():
    x = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    for fn, name in ((ops.relu, "ReLU"), (ops.sin, "Sin"), (lambda t: t < t, "Less"), (lambda t: t.max(), "Max"),
                     (ops.sigmoid, "Sigmoid"), (lambda t: t // t, "FloorDiv"), (lambda t: t ** 2, "Pow")):
        with pytest.raises(TypeError, match=rf"(?s){name}.*Complex64"):
            fn(x)
        with pytest.raises(TypeError, match="Complex64"):
            kiln.jit(fn)(x)


# ---------------------------------------------------------------------------------------------- gradients

def _fd(loss, args, pos, eps=1e-6):
    """Central differences of the real loss over the real and imaginary parts of args[pos] (complex128):
    dL/dx + i dL/dy (MindSpore's convention)."""
    a = [np.array(v) for v in args]
    g = np.zeros_like(a[pos])
    for idx in np.ndindex(a[pos].shape):
        for unit in (1.0, 1j):
            hi = [v.copy() for v in a]
            lo = [v.copy() for v in a]
            hi[pos][idx] += unit * eps
            lo[pos][idx] -= unit * eps
            d = (float(loss(*[Tensor(v) for v in hi]).asnumpy()) -
                 float(loss(*[Tensor(v) for v in lo]).asnumpy())) / (2 * eps)
            g[idx] += d * (1 if unit == 1.0 else 1j)
    return g


LOSSES = {
    "real(x*w)": lambda x, w: ops.real(x * w).sum(),
    "imag(x/w)": lambda x, w: ops.imag(x / w).sum(),
    "abs(x-w)": lambda x, w: ops.ComplexAbs()(x - w).sum(),
    "angle(x*w)": lambda x, w: ops.angle(x * w).sum(),
    "real(exp(x)*conj(w))": lambda x, w: ops.real(ops.exp(x) * ops.conj(w)).sum(),
    "imag(log(x)+sqrt(w))": lambda x, w: ops.imag(ops.log(x) + ops.sqrt(w)).sum(),
    "real(matmul)": lambda x, w: ops.real(ops.matmul(x.reshape(2, 2), w.reshape(2, 2)) * (1 + 0j)).sum() +
    ops.imag(ops.matmul(x.reshape(2, 2), w.reshape(2, 2))).sum() * 0.5,
    "sum/mean": lambda x, w: ops.real(x.sum() * w.mean()),
    "abs(x)*abs(w)": lambda x, w: ops.real(ops.abs(x) * ops.abs(w)).sum(),
    "Complex": lambda x, w: ops.imag(ops.Complex()(ops.real(x), ops.imag(w)) * x).sum(),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradients_against_finite_differences(name):
    loss = LOSSES[name]
    x, w = _c((4,)), _c((4,))
    want = [_fd(loss, (x, w), 0), _fd(loss, (x, w), 1)]
    g = kiln.grad(loss, grad_position=(0, 1))(Tensor(x), Tensor(w))
    gj = kiln.jit(kiln.grad(loss, grad_position=(0, 1)))(Tensor(x), Tensor(w))
    for got in (g, gj):
        for gi, wi in zip(got, want):
            assert gi.dtype == kiln.complex128
            np.testing.assert_allclose(gi.asnumpy(), wi, rtol=1e-6, atol=1e-7)


def test_gradients_match_mindspore():
    # MindSpore 2.10's gradients (its convention: dL/dx + i dL/dy for z = x + iy).
    x = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    w = Tensor(np.array([0.5 - 1j, 2 + 1j], np.complex64))
    g = kiln.grad(lambda a: ops.abs(a).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), [0.4472136 + 0.8944272j, -0.98639387 + 0.16439898j], rtol=1e-6)
    g = kiln.grad(lambda a: ops.angle(a).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), [-0.4 + 0.2j, -0.05405406 - 0.3243243j], rtol=1e-6)
    g = kiln.grad(lambda a: ops.real(ops.exp(a)).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), [-1.1312044 - 2.4717267j, 0.04369226 - 0.02386919j], rtol=1e-6)
    gx, gw = kiln.grad(lambda a, b: ops.real(a / b).sum(), grad_position=(0, 1))(x, w)
    np.testing.assert_allclose(gx.asnumpy(), [0.4 - 0.8j, 0.4 + 0.2j], rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), [1.76 - 0.32j, 0.28 + 0.54j], rtol=1e-6)
    gx, gw = kiln.grad(lambda a, b: ops.real(ops.matmul(a.reshape(1, 2), b.reshape(2, 1))).sum(),
                       grad_position=(0, 1))(x, w)
    np.testing.assert_allclose(gx.asnumpy(), [0.5 + 1j, 2 - 1j], rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), [1 - 2j, -3 - 0.5j], rtol=1e-6)
    assert kiln.grad(lambda a: ops.real(-a).sum())(x).asnumpy().tolist() == [-1 + 0j, -1 + 0j]


class _ComplexNet(kiln.nn.Cell):
    """A complex weight (a Parameter) used by matmul, a reduction, division, conj and angle."""

    def __init__(self, w):
        super().__init__()
        self.w = kiln.Parameter(Tensor(w), name="w")

    def construct(self, x):
        y = ops.matmul(x, self.w) * x.sum() - x / (self.w + 1)
        return ops.real(y * ops.conj(y)).mean() + ops.angle(y).sum()


def test_cell_with_complex_parameter_in_both_modes():
    a, w = _c((3, 3), np.complex64), _c((3, 3), np.complex64)
    net = _ComplexNet(w)
    assert net.w.dtype == kiln.complex64
    np.testing.assert_array_equal(net.w.asnumpy(), w)
    loss = net(Tensor(a))
    gx = kiln.grad(net)(Tensor(a))
    gw = kiln.grad(net, None, net.trainable_params())(Tensor(a))[0]
    assert gw.dtype == kiln.complex64
    # float64 central differences on the weight's real and imaginary parts
    a64, w64 = a.astype(np.complex128), w.astype(np.complex128)
    want = _fd(lambda x, ww: _ComplexNet(ww.asnumpy())(x), (a64, w64), 1)
    np.testing.assert_allclose(gw.asnumpy(), want, rtol=2e-3, atol=2e-3)
    kiln.set_context(mode=kiln.GRAPH_MODE)
    try:
        net2 = _ComplexNet(w)
        np.testing.assert_allclose(net2(Tensor(a)).asnumpy(), loss.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(kiln.grad(net2)(Tensor(a)).asnumpy(), gx.asnumpy(), rtol=1e-5, atol=1e-6)
        gw2 = kiln.grad(net2, None, net2.trainable_params())(Tensor(a))[0]
        np.testing.assert_allclose(gw2.asnumpy(), gw.asnumpy(), rtol=1e-5, atol=1e-6)
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)
    net.w.set_data(Tensor(w * 2))  # Assign of a complex value
    np.testing.assert_array_equal(net.w.asnumpy(), w * 2)
