"""Writes through views (Tensor.__setitem__ on a view, Tensor.assign_value, ops.assign) under a gradient and in compiled
code: the write reaches the base tensor and every view of it, as in-place writes do in plain PyNative (NumPy,
MindSpore's PyNative view+inplace). Values against NumPy running the same code (NumPy views share memory), gradients
against float64 central differences of that NumPy code, compiled results against the same references."""
import re

import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, ops

from helpers import central_difference

T0 = np.array([[1.0, -2.0, 0.5], [3.0, 1.5, -1.0]])  # t of the cases; every case is (b = t * 1.0; write; loss)


# Each case is written once and runs on NumPy arrays (reference: basic indexing, reshape of a contiguous array and
# transposes are views there) and on Kiln tensors.
def _chained(b, t):
    b[1][0] = 100.0                      # the tester's case: chained indexing


def _chained_value_from_t(b, t):
    b[1][0] = t[0, 1] * 3.0              # the written value depends on t: its gradient flows through the view


def _named_view(b, t):
    c = b[1]
    c[0] = 100.0


def _transposed(b, t):
    c = b.T
    c[0, 1] = t[1, 2] * t[0, 0]


def _reshaped(b, t):
    c = b.reshape(6)
    c[3:5] = t[0, :2] * 2.0


def _view_of_view(b, t):
    c = b.reshape(6)[2:]                 # a view of a view through reshape
    d = c.reshape(2, 2)
    d[1, :] = t[1, 0]


def _slice_then_none(b, t):
    c = b[:, 1:][None]
    c[0, :, 0] = t[:, 2] * -1.0


def _earlier_view_sees_write(b, t):
    c = b[0]                             # taken BEFORE the write; NumPy (and PyNative) show the write in it
    b[0] = 5.0
    b[1, 2] = (c * t[0]).sum()


def _sibling_views(b, t):
    c = b[1]
    d = b.T
    c[0] = t[0, 1] * 2.0
    b[0, 0] = (d[0] * t[:, 0]).sum()     # d sees the write made through c


def _mask_and_arrays_through_views(b, t):
    c = b.T
    c[c < 0] = 0.0                       # a mask computed from the view (in jit: a Select on the view)
    d = b[1]
    d[[0, 2]] = t[0, :2] * 2.0           # integer-array indices into a view
    b[0] += t[1]                         # augmented item assignment (getitem, add, setitem)


CASES = [_chained, _chained_value_from_t, _named_view, _transposed, _reshaped, _view_of_view, _slice_then_none,
         _earlier_view_sees_write, _sibling_views, _mask_and_arrays_through_views]


def _check_value_and_gradient(f, mode, value, grad):
    """f(T0) equals `value` (1e-12) and kiln.grad(f)(T0) equals `grad` (1e-6), eagerly or both under kiln.jit."""
    g = kiln.grad(f)
    if mode == "graph":
        f, g = kiln.jit(f), kiln.jit(g)
    np.testing.assert_allclose(f(Tensor(T0)).asnumpy(), value, rtol=1e-12)
    np.testing.assert_allclose(g(Tensor(T0)).asnumpy(), grad, rtol=1e-6, atol=1e-6)


def _loss_np(case):
    def f(t):
        b = t * 1.0
        case(b, t)
        return float((b * t).sum())
    return f


def _loss_kiln(case):
    def f(t):
        b = t * 1.0
        case(b, t)
        return (b * t).sum()
    return f


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_write_through_a_view_value_and_gradient(case, mode):
    ref_value = _loss_np(case)(T0.copy())
    ref_grad = central_difference(_loss_np(case), T0)
    f = _loss_kiln(case)
    _check_value_and_gradient(f, mode, ref_value, ref_grad)
    vg = kiln.value_and_grad(_loss_kiln(case))
    value, grad = (kiln.jit(vg) if mode == "graph" else vg)(Tensor(T0))
    np.testing.assert_allclose(value.asnumpy(), ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad.asnumpy(), ref_grad, rtol=1e-6, atol=1e-6)


def test_the_tester_case_exactly():
    """b[1][0] = 100 in (b * t).sum() at t = ones: 105 and gradient [2, 2, 2, 100, 2, 2] (MindSpore 2.10 PyNative) in
    every mode (Kiln gave 6.0 in jit and a gradient of 2 everywhere)."""
    x = Tensor(np.ones((2, 3)))
    f = _loss_kiln(_chained)
    expected = np.array([[2.0, 2, 2], [100, 2, 2]])
    for fn, gn in [(f, kiln.grad(f)), (kiln.jit(f), kiln.jit(kiln.grad(f)))]:
        assert float(fn(x)) == 105.0
        np.testing.assert_array_equal(gn(x).asnumpy(), expected)


@pytest.mark.parametrize("make_view", ["ops.reshape", "ops.transpose", "ops.expand_dims", "squeeze", "flatten",
                                       "view", "ops.split", "mT"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_every_view_op_carries_the_write(make_view, mode):
    """Each view-making API: the write through its result reaches the base (value and gradient)."""
    def kiln_write(b, t):
        if make_view == "ops.reshape":
            ops.reshape(b, (6,))[4] = t[0, 0] * 2.0
        elif make_view == "ops.transpose":
            ops.transpose(b, (1, 0))[1, 1] = t[0, 0] * 2.0
        elif make_view == "ops.expand_dims":
            ops.expand_dims(b, 0)[0, 1, 1] = t[0, 0] * 2.0
        elif make_view == "squeeze":
            b[1:2].squeeze(0)[1] = t[0, 0] * 2.0
        elif make_view == "flatten":
            b.flatten()[4] = t[0, 0] * 2.0
        elif make_view == "view":
            b.view(3, 2)[2, 0] = t[0, 0] * 2.0
        elif make_view == "ops.split":
            ops.split(b, [1, 2], 1)[1][1, 0] = t[0, 0] * 2.0
        else:
            b.mT[1, 1] = t[0, 0] * 2.0

    def np_loss(t):  # every variant writes b[1, 1] = 2 t[0, 0]
        b = t * 1.0
        b[1, 1] = t[0, 0] * 2.0
        return float((b * t).sum())

    def f(t):
        b = t * 1.0
        kiln_write(b, t)
        return (b * t).sum()

    _check_value_and_gradient(f, mode, np_loss(T0.copy()), central_difference(np_loss, T0))


def test_earlier_view_sees_the_write_in_plain_pynative_and_jit():
    """c = b[0]; b[0] = 5; (c * t[0]).sum() is 15 at t = ones in PyNative (c is a view) and in jit (Kiln gave 3)."""
    def f(t):
        b = t * 1.0
        c = b[0]
        b[0] = 5.0
        return (c * t[0]).sum()
    x = Tensor(np.ones((2, 3)))
    for fn in (f, kiln.jit(f)):
        assert float(fn(x)) == 15.0
    for gn in (kiln.grad(f), kiln.jit(kiln.grad(f))):
        np.testing.assert_array_equal(gn(x).asnumpy(), [[5.0, 5, 5], [0, 0, 0]])


# ---------------------------------------------------------------------------------------------- assign_value / assign

ASSIGNS = {
    "assign_value": lambda b, v: b.assign_value(v),
    "ops.assign": lambda b, v: ops.assign(b, v),
    "ops.Assign": lambda b, v: ops.Assign()(b, v),
}


@pytest.mark.parametrize("how", sorted(ASSIGNS))
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_assign_is_differentiable(how, mode):
    """b.assign_value(t * 3); (b * b).sum(): value 9 Σt², gradient 18 t (Kiln gave the gradient of the old b)."""
    def f(t):
        b = t * 1.0
        ASSIGNS[how](b, t * 3.0)
        return (b * b).sum()

    def np_loss(t):
        return float(((t * 3.0) ** 2).sum())
    _check_value_and_gradient(f, mode, np_loss(T0), central_difference(np_loss, T0))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_assign_value_through_a_view_and_broadcast(mode):
    """b[0].assign_value(t[1] * 2) writes row 0 of b; a scalar tensor value broadcasts (as Assign)."""
    def f(t):
        b = t * 1.0
        b[0].assign_value(t[1] * 2.0)
        c = b.T
        c[2].assign_value(t[0, 0])
        return (b * t).sum()

    def np_loss(t):
        b = t * 1.0
        b[0] = t[1] * 2.0
        b.T[2] = t[0, 0]
        return float((b * t).sum())
    _check_value_and_gradient(f, mode, np_loss(T0.copy()), central_difference(np_loss, T0))


def test_assign_shape_error_names_the_method():
    def f(t):
        b = t * 1.0
        b.assign_value(Tensor(np.ones((3, 2))))
        return b.sum()
    with pytest.raises(ValueError, match=r"For 'Tensor.assign_value', the shape of 'value' \[3, 2\] can not be "
                                         r"broadcast to the shape of 'variable' \[2, 3\]"):
        kiln.grad(f)(Tensor(T0))


# ---------------------------------------------------------------------------------------------- views made elsewhere

def test_view_taken_in_plain_pynative_written_under_grad():
    """A view taken outside the gradient and written inside it with a recorded value reaches its base."""
    def run(t):
        base = Tensor(np.ones((2, 3)))
        row = base[0]

        def f(t):
            row[1] = t[0, 0] * 3.0
            return (base * t).sum()
        return f, kiln.grad(f)(t), base

    def np_loss(t):
        base = np.ones((2, 3))
        base[0][1] = t[0, 0] * 3.0
        return float((base * t).sum())
    _, grad, base = run(Tensor(T0))
    np.testing.assert_allclose(grad.asnumpy(), central_difference(np_loss, T0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(base.asnumpy(), [[1.0, 3.0, 1.0], [1.0, 1.0, 1.0]])


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_write_through_a_view_of_a_parameter(mode):
    """c = w[0]; c[1] = 7 writes the Parameter (an Assign in the graph, at every call); w.reshape(6), taken earlier,
    sees it."""
    w = Parameter(Tensor(np.ones((2, 3), np.float32)), name="w")

    def f(t):
        flat = w.reshape(6)
        c = w[0]
        c[1] = 7.0
        return (flat * t.reshape(6)).sum()
    fn = kiln.jit(f) if mode == "graph" else f
    t = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ref = np.ones((2, 3), np.float32)
    ref[0, 1] = 7.0
    for _ in range(2):
        w.set_data(Tensor(np.ones((2, 3), np.float32)))
        np.testing.assert_allclose(fn(Tensor(t)).asnumpy(), (ref * t).sum(), rtol=1e-6)
        np.testing.assert_array_equal(w.asnumpy(), ref)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_write_through_a_view_of_a_differentiated_parameter_raises(mode):
    w = Parameter(Tensor(np.ones((2, 3), np.float32)), name="w")

    def f(t):
        c = w[0]
        c[1] = t[0, 0]
        return (w * t).sum()
    g = kiln.grad(f, grad_position=None, weights=[w])
    if mode == "graph":
        g = kiln.jit(g)
    with pytest.raises(RuntimeError, match=r"Tensor setitem: Parameter 'w' is being differentiated, so it can not be "
                                           r"written in place through a view of it .*test_setitem_views\.py:\d+.*"
                                           r"Write into a copy instead"):
        g(Tensor(np.ones((2, 3), np.float32)))


def test_plain_pynative_views_still_share_memory():
    """Outside a gradient, writes stay in place: the base, earlier views and NumPy agree."""
    a = np.arange(6.0).reshape(2, 3)
    b = Tensor(a.copy())
    c, d = b[1], b.T
    c[0] = 100.0
    d[2, 0] = -1.0
    a[1][0] = 100.0
    a.T[2, 0] = -1.0
    np.testing.assert_array_equal(b.asnumpy(), a)
    np.testing.assert_array_equal(c.asnumpy(), a[1])
    np.testing.assert_array_equal(d.asnumpy(), a.T)
    assert c._shares_storage(b) and d._shares_storage(b)


def test_astype_returns_a_copy():
    """x.astype(x.dtype) is a new tensor (MindSpore's copy=True), so a write into it does not reach x."""
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    y = x.astype(kiln.float32)
    y[0] = 9.0
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(y.asnumpy(), [9.0, 2.0, 3.0])


def test_view_records_are_weak_and_stay_out_of_outside_tensors_while_compiling():
    """The base refers to its views weakly; compiling a function that takes views of an outside tensor leaves
    nothing of the trace on that tensor."""
    import gc
    import weakref
    b = Tensor(np.ones((2, 3)))
    v = b[0]
    r = weakref.ref(v)
    del v
    gc.collect()
    assert r() is None
    z = Tensor(np.ones((2, 3)))

    def f(t):
        c = z.T
        c[1, 0] = 7.0
        return (z * t).sum()
    assert float(kiln.jit(f)(Tensor(np.ones((2, 3))))) == 12.0
    assert not z.__dict__.get("_kiln_views")
    np.testing.assert_array_equal(z.asnumpy(), [[1.0, 7.0, 1.0], [1.0, 1.0, 1.0]])


def test_error_message_of_a_bad_value_through_a_view():
    def f(t):
        b = t * 1.0
        b.T[0] = Tensor(np.ones(3))
        return b.sum()
    with pytest.raises(ValueError, match=re.escape("Tensor setitem: the value of shape (3,) can not be broadcast to "
                                                   "the indexed region of shape (2,)")):
        kiln.grad(f)(Tensor(T0))


def test_view_of_a_differentiated_input_taken_before_the_gradient():
    """row = x[0] is taken before grad(f)(x); f writes row[1] = 5 after using x: the gradient of the use is that of
    the value before the write (a functional write; in place it would change x under the recorded product)."""
    x = Tensor(T0.copy())
    row = x[0]

    def f(t):
        y = (t * t).sum()
        row[1] = 5.0
        return y + (t * 1.0).sum()
    grad = kiln.grad(f)(x)
    np.testing.assert_allclose(grad.asnumpy(), central_difference(lambda a: float((a * a).sum() + a.sum()), T0),
                               rtol=1e-6, atol=1e-6)


def test_views_made_outside_a_compiled_function_stay_concrete():
    """zv = z[0] made outside; the compiled function writes zv[1] = 7: z is written at run time (an Assign), zv and
    zt (views of z) show it and are not bound to anything of the trace."""
    z = Tensor(np.ones((2, 3)))
    zv, zt = z[0], z.T

    def f(t):
        zv[1] = 7.0
        return (z * t).sum() + (zt[1] * 1.0).sum()
    jf = kiln.jit(f)
    for _ in range(2):
        assert float(jf(Tensor(np.ones((2, 3))))) == 20.0
        assert not zv._symbolic and not zt._symbolic
        np.testing.assert_array_equal(z.asnumpy(), [[1.0, 7.0, 1.0], [1.0, 1.0, 1.0]])
        np.testing.assert_array_equal(zv.asnumpy(), [1.0, 7.0, 1.0])
        np.testing.assert_array_equal(zt.asnumpy(), [[1.0, 1.0], [7.0, 1.0], [1.0, 1.0]])
