"""Tensor's in-place `*_` methods (kiln/common/_tensor_methods.py): they really update the tensor — its views, a
Parameter, the same object returned — in PyNative; under a gradient and inside kiln.jit / GRAPH_MODE Cells the write
is traced (the result and the gradient see it); the dtype and shape rules; and the provisional methods (repeat,
swapaxes, swapdims, t, std, var, fill, value) against NumPy (std/var values pinned with MindSpore 2.10)."""
import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, nn, ops

X = np.array([[1., 5., 3.], [4., 2., 6.]], np.float32)


def T(a):
    return Tensor(np.array(a))


def close(got, want, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(got.asnumpy() if isinstance(got, Tensor) else got, want, rtol=rtol, atol=atol)


ARITH = [
    ("add_", lambda t: t.add_(T(np.ones(3, np.float32)), alpha=2), X + 2),
    ("add_ number", lambda t: t.add_(1.5), X + 1.5),
    ("sub_", lambda t: t.sub_(1.0, alpha=3), X - 3),
    ("mul_", lambda t: t.mul_(T(X)), X * X),
    ("div_", lambda t: t.div_(2.0), X / 2),
    ("div_ floor", lambda t: t.div_(4.0, rounding_mode="floor"), np.floor(X / 4)),
    ("floor_divide_", lambda t: t.floor_divide_(4.0), np.floor(X / 4)),
    ("remainder_", lambda t: t.remainder_(4.0), np.mod(X, 4)),
    ("zero_", lambda t: t.zero_(), np.zeros_like(X)),
    ("fill_", lambda t: t.fill_(7), np.full_like(X, 7)),
    ("fill_ tensor", lambda t: t.fill_(T(np.float32(2.5))), np.full_like(X, 2.5)),
    ("copy_", lambda t: t.copy_(T(np.arange(3, dtype=np.int32))), np.broadcast_to(np.arange(3.), X.shape)),
    ("clamp_", lambda t: t.clamp_(2, 4), np.clip(X, 2, 4)),
    ("clamp_ min", lambda t: t.clamp_(min=3), np.maximum(X, 3)),
    ("masked_fill_", lambda t: t.masked_fill_(T(X > 3), 0.0), np.where(X > 3, 0, X)),
    ("exp_", lambda t: t.exp_(), np.exp(X)),
    ("log_", lambda t: t.log_(), np.log(X)),
    ("sigmoid_", lambda t: t.sigmoid_(), 1 / (1 + np.exp(-X))),
    ("tanh_", lambda t: t.tanh_(), np.tanh(X)),
    ("floor_", lambda t: t.floor_(), np.floor(X)),
    ("sign_", lambda t: t.sign_(), np.sign(X)),
]


@pytest.mark.parametrize("name,fn,want", ARITH, ids=[a[0] for a in ARITH])
def test_inplace_updates_the_tensor_and_returns_it(name, fn, want):
    t = T(X)
    assert fn(t) is t
    assert t.dtype == kiln.float32 and t.shape == (2, 3)
    close(t, want, rtol=1e-6)


@pytest.mark.parametrize("name,fn,want", ARITH, ids=[a[0] for a in ARITH])
def test_inplace_in_a_compiled_function(name, fn, want):
    @kiln.jit
    def f(a):
        y = a * 1.0
        fn(y)
        return y

    x = T(X)
    close(f(x), want, rtol=1e-6)
    close(x, X)  # the input is not written


def test_a_write_through_a_view_reaches_the_base():
    base = T(X)
    row = base[1]
    row.add_(10.0)
    close(base, [[1., 5., 3.], [14., 12., 16.]])
    col = base.swapaxes(0, 1)[2]
    col.zero_()
    close(base, [[1., 5., 0.], [14., 12., 0.]])
    close(row, [14., 12., 0.])


def test_parameters_are_updated_in_place():
    p = Parameter(T(X), name="w")
    storage = p.asnumpy().copy()
    assert p.mul_(2) is p and isinstance(p, Parameter)
    close(p, 2 * X)
    p.uniform_(-1, 1)
    a = p.asnumpy()
    assert ((a >= -1) & (a < 1)).all() and a.std() > 0.1
    p.copy_(T(storage))
    close(p, X)


class _Accumulate(nn.Cell):
    def __init__(self):
        super().__init__()
        self.total = Parameter(T(np.zeros(3, np.float32)), name="total")

    def construct(self, x):
        self.total.add_(x)
        self.total.clamp_(max=5.0)
        return self.total * 2


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_inplace_on_a_parameter_inside_a_cell(mode, request):
    if mode == "graph":
        request.getfixturevalue("graph_mode")
    net = _Accumulate()
    x = T(np.array([1., 2., 3.], np.float32))
    close(net(x), [2., 4., 6.])
    close(net(x), [4., 8., 10.])
    close(net.total, [2., 4., 5.])


def test_gradient_sees_the_inplace_write():
    x = T(X)

    def f(a):
        y = a * 1.0
        y.mul_(a)     # y = a²
        y.add_(a, alpha=3)  # y = a² + 3a
        return y.sum()

    close(ops.grad(f)(x), 2 * X + 3)

    def g(a):
        y = a * 1.0
        y[0].zero_()  # through a view
        return (y * y).sum()

    close(ops.grad(g)(x), np.array([[0, 0, 0], [8., 4., 12.]]))


def test_writing_a_differentiated_parameter_is_refused():
    p = Parameter(T(X), name="w")

    def f():
        p.add_(1.0)
        return (p * 1.0).sum()

    with pytest.raises(RuntimeError, match="differentiated"):
        kiln.grad(f, None, [p])()


def test_dtype_and_shape_rules():
    i = T(np.array([1, 2, 3], np.int32))
    with pytest.raises(TypeError, match="Float32 can not be cast to the tensor's dtype Int32"):
        i.div_(2)
    with pytest.raises(TypeError, match="Tensor.add_"):
        i.add_(0.5)
    i.div_(2, rounding_mode="floor")
    close(i, [0, 1, 1])
    assert i.dtype == kiln.int32
    i.fill_(2.7)  # truncated, as a cast
    close(i, [2, 2, 2])
    i.copy_(T(np.array([1.9, -1.9, 0.5], np.float32)))  # copy_ casts any dtype (PyTorch)
    close(i, [1, -1, 0])
    t = T(X)
    with pytest.raises(ValueError, match="shape"):
        t.add_(T(np.ones((3, 2, 3), np.float32)))
    with pytest.raises(TypeError, match="alpha"):
        t.add_(1.0, alpha=None)
    with pytest.raises(ValueError, match="at least one"):
        t.clamp_()
    with pytest.raises(TypeError, match="src"):
        t.copy_([1, 2, 3])
    with pytest.raises(ValueError, match="0-d"):
        t.fill_(T(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="float dtype"):
        T(np.array([1, 2], np.int32)).normal_()
    with pytest.raises(ValueError, match="from_"):
        t.uniform_(2, 1)
    with pytest.raises(ValueError, match="std"):
        t.normal_(0, -1)
    with pytest.raises(TypeError, match="generator"):
        t.uniform_(generator=object())
    close(t, X)  # no failed call wrote anything


def test_random_inplace_follows_the_seed():
    a, b = T(np.zeros((1000,), np.float32)), T(np.zeros((1000,), np.float32))
    kiln.set_seed(5)
    a.normal_(2.0, 3.0)
    kiln.set_seed(5)
    b.normal_(2.0, 3.0)
    close(a, b.asnumpy())
    v = a.asnumpy()
    assert abs(v.mean() - 2.0) < 0.3 and abs(v.std() - 3.0) < 0.3
    u = T(np.zeros((1000,), np.float64)).uniform_(-2, 4).asnumpy()
    assert u.dtype == np.float64 and u.min() >= -2 and u.max() < 4 and abs(u.mean() - 1) < 0.3


# ---------------------------------------------------------------------------------------------- provisional

def test_std_var_match_numpy_and_mindspore():
    t = T(X)
    close(t.std(), 1.7078251838684082)  # MindSpore 2.10: x.std() (ddof 0)
    close(t.std(1), [1.632993221282959] * 2)
    close(t.std(1, ddof=1), [2.0, 2.0])
    close(t.std(dim=1), [1.632993221282959] * 2)  # MindSpore 2.10: correction 0 here too (PyTorch: 1)
    close(t.std(dim=1, correction=1), [2.0, 2.0])  # MindSpore 2.10
    close(t.std(dim=1, correction=0, keepdim=True), X.std(1, keepdims=True), rtol=1e-6)
    close(t.var(), 2.9166667461395264)
    close(t.var((0, 1), 1), X.var(ddof=1), rtol=1e-6)
    close(T(np.array([1, 2, 4], np.int32)).var(), np.var([1, 2, 4]), rtol=1e-6)
    close(ops.grad(lambda a: a.var())(t), 2 * (X - X.mean()) / X.size, rtol=1e-5)
    with pytest.raises(TypeError, match="either"):
        t.std(1, dim=1)
    with pytest.raises(ValueError, match="out of range"):
        t.std(2)


def test_shape_methods():
    t = T(X)
    close(t.t(), X.T)
    close(T(np.arange(3.)).t(), np.arange(3.))
    with pytest.raises(ValueError, match="rank <= 2"):
        T(np.zeros((1, 1, 1))).t()
    close(t.swapaxes(0, 1), X.T)
    close(t.swapdims(-1, 0), X.T)
    a = np.arange(24.).reshape(2, 3, 4)
    close(T(a).swapaxes(0, 2), np.swapaxes(a, 0, 2))
    close(t.repeat(2, 1), np.tile(X, (2, 1)))
    close(t.repeat((1, 2, 2)), np.tile(X, (1, 2, 2)))
    with pytest.raises(ValueError, match="repeats"):
        t.repeat(2)
    close(t.fill(2), np.full_like(X, 2))
    filled = T(np.array([1, 2], np.int32)).fill(2.7)
    assert filled.dtype == kiln.int32
    close(filled, [2, 2])  # MindSpore 2.10: Int32 [2 2]
    assert t.value() is t
    v = t.swapaxes(0, 1)
    v[0, 1] = 50.0
    close(t, [[1., 5., 3.], [50., 2., 6.]])  # swapaxes is a view


def test_provisional_methods_in_graph_mode():
    @kiln.jit
    def f(a):
        return a.std(1), a.swapaxes(0, 1), a.repeat(2, 1), a.t(), a.fill(3.0)

    got = f(T(X))
    for g, w in zip(got, (X.std(1), X.T, np.tile(X, (2, 1)), X.T, np.full_like(X, 3))):
        close(g, w, rtol=1e-6)


def test_methods_that_are_the_ops_functions():
    from kiln.common import _tensor_methods as M
    a = T(np.array([[0.5, -2.0, 3.0], [1.5, 2.0, -0.25]], np.float32))
    b = T(np.array([[1.0, -2.0, 1.0], [2.0, 2.0, 2.0]], np.float32))
    for method, op in M._UNARY.items():
        close(getattr(a if method not in ("arccosh",) else a.abs() + 1.0, method)(),
              getattr(ops, op)(a if method != "arccosh" else a.abs() + 1.0).asnumpy(), rtol=1e-6)
    for method, op in M._BINARY.items():
        close(getattr(a, method)(b), getattr(ops, op)(a, b).asnumpy())
    close(a.gt(b), a.asnumpy() > b.asnumpy())
    close(a.multiply(2), a.asnumpy() * 2)
    close(a.subtract(b, alpha=2), a.asnumpy() - 2 * b.asnumpy())
    close(a.where(a > 0, 0.0), np.where(a.asnumpy() > 0, a.asnumpy(), 0))
    close(a.gather(T(np.array([2, 0])), 1), a.asnumpy()[:, [2, 0]])
    close(a.amax(1), a.asnumpy().max(1)), close(a.amin(), a.asnumpy().min())
    assert a.expand(3, 2, 3).shape == (3, 2, 3) and a.expand((2, -1)).shape == (2, 3)
    assert a.view_as(T(np.zeros(6))).shape == (6,) and a.reshape_as(T(np.zeros((3, 2)))).shape == (3, 2)
    assert a.type_as(T(np.zeros(1, np.int32))).dtype == kiln.int32
    assert a.positive() is a
    b = T(np.array([True]))
    assert b.positive() is b  # MindSpore 2.10: Bool too, the tensor itself
    with pytest.raises(TypeError, match="view_as"):
        a.view_as((6,))


def test_set_dtype_converts_in_place_and_returns_the_dtype():
    # MindSpore 2.10: t.set_dtype(ms.float16) changes t (its values cast) and returns Float16; a Parameter keeps its
    # name and holds the cast values ([1.5, 2.25, 3] → Int32 [1, 2, 3])
    t = Tensor(np.array([1.5, 2.25, 3], np.float32))
    assert t.set_dtype(kiln.float16) == kiln.float16
    assert t.dtype == kiln.float16 and t.asnumpy().tolist() == [1.5, 2.25, 3.0]
    p = Parameter(Tensor(np.array([1.5, 2.25, 3], np.float32)), name="w")
    assert p.set_dtype(kiln.int32) == kiln.int32
    assert p.dtype == kiln.int32 and p.name == "w" and p.asnumpy().tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match="set_dtype"):
        t.set_dtype(3)
