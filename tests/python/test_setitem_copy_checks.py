"""Issue 7 items 8 and 9: Tensor.copy()/clone() and item assignment are ops (differentiable, traced into graphs), and
compiled graphs check at run time the values that PyNative checks (class labels, probabilities, indices), naming the
user's line. NumPy is the forward reference, float64 central differences the gradient reference, PyNative the
reference of Graph mode."""
import re

import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, nn, ops

from helpers import central_difference as _fd

F64 = np.float64



def _modes(fn):
    """The function in PyNative and compiled (kiln.jit)."""
    return [("pynative", fn), ("graph", kiln.jit(fn))]


# ---------------------------------------------------------------------------------------------- copy / clone

@pytest.mark.parametrize("method", ["copy", "clone"])
@pytest.mark.parametrize("use_jit", [False, True])
def test_copy_keeps_the_gradient(method, use_jit):
    a = np.array([1.0, -2.0, 3.0, 0.5])
    grad = kiln.grad(lambda t: ops.sum(ops.mul(getattr(t, method)(), t)))
    if use_jit:
        grad = kiln.jit(grad)
    np.testing.assert_allclose(grad(Tensor(a)).asnumpy(), 2 * a, rtol=0, atol=0)


def test_copy_is_a_new_tensor_and_a_graph_op():
    t = Tensor(np.arange(4.0))
    c = t.copy()
    assert not c._shares_storage(t)
    t[0] = 9.0
    np.testing.assert_array_equal(c.asnumpy(), [0.0, 1.0, 2.0, 3.0])
    jf = kiln.jit(lambda x: x.clone())
    np.testing.assert_array_equal(jf(Tensor(np.arange(3.0))).asnumpy(), [0.0, 1.0, 2.0])
    assert "TensorCopy(" in jf.graphs[0].graph_before.to_text()
    b = Tensor(np.array([1.5, 2.5], np.float32)).astype(kiln.bfloat16)
    np.testing.assert_array_equal(b.copy().astype(kiln.float32).asnumpy(), [1.5, 2.5])


# ---------------------------------------------------------------------------------------------- setitem gradients

def _issue_case(a):
    b = ops.mul(a, 2.0)
    b[0:2] = 5
    return ops.sum(ops.square(b))


@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_gradient_of_the_issue(use_jit):
    """b = 2a; b[0:2] = 5; loss = sum(b²): d loss / d a = [0, 0, 24, 32] (Kiln gave [20, 20, 24, 32])."""
    vg = kiln.value_and_grad(_issue_case)
    if use_jit:
        vg = kiln.jit(vg)
    v, g = vg(Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32)))
    assert float(v) == 25 + 25 + 36 + 64
    np.testing.assert_array_equal(g.asnumpy(), [0.0, 0.0, 24.0, 32.0])


_KEYS = [  # (key, value shape; None: a Python scalar), on a (4, 5) tensor
    ((slice(0, 2),), (5,)),
    ((1,), None),
    ((Ellipsis, 3), (4,)),
    ((None, slice(1, 3), slice(None, None, 2)), (2, 1)),
    (([3, 0],), (2, 5)),
    ((slice(None), [1, 1, 4]), (4, 3)),  # repeated column: the last write wins, the first gets no gradient
    ((np.array([False, True, True, False]),), (1, 5)),  # leading size-1 dim of the value is dropped (NumPy)
    ((np.array([[True, False, True, False, False]] * 4),), (8,)),
    (([0, 2], [4, 1]), (2,)),
]


@pytest.mark.parametrize("key,vshape", _KEYS, ids=[repr(k[0]).replace(" ", "") for k in _KEYS])
@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_gradients_match_finite_differences(key, vshape, use_jit):
    """loss = sum(w · f(x, v)) with f: y = sin(x); y[key] = v·v; y·x — gradients w.r.t. x and v against float64
    central differences; the forward against NumPy."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((4, 5))
    w = rng.standard_normal((4, 5))
    v0 = 1.5 if vshape is None else rng.standard_normal(vshape)

    def np_f(x, v):
        y = np.sin(x)
        y[key] = v * v
        return float(np.sum(w * y * x))

    def f(x, v):
        y = ops.sin(x)
        y[key] = ops.mul(v, v) if isinstance(v, Tensor) else v * v
        return ops.sum(ops.mul(ops.mul(y, x), Tensor(w)))

    pos = (0,) if vshape is None else (0, 1)
    vg = kiln.value_and_grad(f, grad_position=pos)
    if use_jit:
        vg = kiln.jit(vg)
    val, grads = vg(Tensor(x0), Tensor(v0) if vshape is not None else v0)
    grads = grads if isinstance(grads, tuple) else (grads,)
    np.testing.assert_allclose(float(val), np_f(x0, v0), rtol=1e-12)
    np.testing.assert_allclose(grads[0].asnumpy(), _fd(lambda x: np_f(x, v0), x0), rtol=1e-6, atol=1e-8)
    if vshape is not None:
        np.testing.assert_allclose(grads[1].asnumpy(), _fd(lambda v: np_f(x0, v), v0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_keeps_earlier_uses_of_the_old_value(use_jit):
    """c = b·b is taken before b[1:] = a[0]; the tape must differentiate c with the old b, and later uses of b with
    the new one."""
    def f(a):
        b = ops.mul(a, 3.0)
        c = ops.mul(b, b)
        b[1:] = a[0]
        return ops.add(ops.sum(c), ops.sum(ops.mul(b, b)))

    def np_f(a):
        b = 3 * a
        c = b * b
        b = b.copy()
        b[1:] = a[0]
        return float(np.sum(c) + np.sum(b * b))

    a0 = np.array([0.5, -1.0, 2.0])
    g = kiln.grad(f)
    if use_jit:
        g = kiln.jit(g)
    np.testing.assert_allclose(g(Tensor(a0)).asnumpy(), _fd(np_f, a0), rtol=1e-7)


@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_into_a_fresh_tensor_carries_the_value_gradient(use_jit):
    """out = zeros; out[i] = f(x): out is not recorded before the write, but the value is."""
    def f(x):
        out = ops.zeros((3, 2), kiln.float64)
        out[1] = ops.mul(x, x)
        out[[0, 2], 1] = x[0]
        return ops.sum(ops.mul(out, Tensor(np.arange(6.0).reshape(3, 2))))

    x0 = np.array([1.5, -2.0])
    g = kiln.grad(f)
    if use_jit:
        g = kiln.jit(g)
    # out = [[., x0], [x0², x1²], [., x0]] · [[0, 1], [2, 3], [4, 5]] → 1·x0 + 2·x0² + 3·x1² + 5·x0
    np.testing.assert_allclose(g(Tensor(x0)).asnumpy(), [6 + 4 * x0[0], 6 * x0[1]], rtol=1e-12)


@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_on_the_differentiated_argument_itself(use_jit):
    """fn writes into its own argument: the gradient is w.r.t. the value fn was called with (zero where written)."""
    def f(x):
        x[0] = 5.0
        return ops.sum(ops.mul(x, x))

    g = kiln.grad(f)
    if use_jit:
        g = kiln.jit(g)
    np.testing.assert_array_equal(g(Tensor(np.array([1.0, 2.0, 3.0]))).asnumpy(), [0.0, 4.0, 6.0])


def test_setitem_forward_same_in_both_modes_with_tensor_indices():
    def f(x, v):
        idx = Tensor(np.array([2, 0]))  # made inside the function: a constant of the compiled graph
        mask = Tensor(np.array([True, False, True]))
        y = ops.mul(x, 1.0)
        y[idx] = v
        y[mask, 1] = -1.0
        return y

    x = Tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    v = Tensor(np.array([7.0, 8.0, 9.0], np.float32))
    want = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    want[[2, 0]] = [7.0, 8.0, 9.0]
    want[[True, False, True], 1] = -1.0
    for _, fn in _modes(f):
        np.testing.assert_array_equal(fn(x, v).asnumpy(), want)


@pytest.mark.parametrize("use_jit", [False, True])
def test_setitem_with_a_computed_mask(use_jit):
    """y[y < 0] = c (mask computed from the data, symbolic in graphs): values, and gradients w.r.t. x and c."""
    def f(x, c):
        y = ops.mul(x, 2.0)
        y[y < 0] = ops.mul(c, c)
        y[:, ops.sum(x, 0) > 0.5] = 1.0  # a mask over a later axis (NumPy positions in PyNative)
        return ops.sum(ops.mul(y, y))

    def np_f(x, c):
        y = 2 * x
        y[y < 0] = c * c
        y[:, x.sum(0) > 0.5] = 1.0
        return float(np.sum(y * y))

    x0 = np.array([[0.5, -1.0, 2.0], [-0.25, 0.75, -3.0]])
    c0 = np.array(1.5)
    vg = kiln.value_and_grad(f, grad_position=(0, 1))
    if use_jit:
        vg = kiln.jit(vg)
    val, (gx, gc) = vg(Tensor(x0), Tensor(c0))
    np.testing.assert_allclose(float(val), np_f(x0, c0), rtol=1e-12)
    np.testing.assert_allclose(gx.asnumpy(), _fd(lambda x: np_f(x, c0), x0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gc.asnumpy(), _fd(lambda c: np_f(x0, c), c0), rtol=1e-6, atol=1e-8)


def test_setitem_in_plain_pynative_stays_in_place():
    """Without a recorded gradient the write goes into the storage: views see it (NumPy semantics)."""
    t = Tensor(np.zeros((3, 4), np.float32))
    view = t[1]
    t[1, [0, 3]] = Tensor(np.array([1.0, 2.0], np.float32))
    t[1:2, 1] = 5.0
    np.testing.assert_array_equal(view.asnumpy(), [1.0, 5.0, 0.0, 2.0])


def test_setitem_errors():
    t = Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 3]] = 1.0
    with pytest.raises(ValueError, match=r"can not be broadcast to the indexed region of shape \(2, 4\)"):
        t[[0, 1]] = Tensor(np.zeros((3,), np.float32))
    with pytest.raises(IndexError, match="must be integer or bool"):
        t[Tensor(np.array([0.5]))] = 1.0
    p = Parameter(Tensor(np.ones(3, np.float32)), name="w")
    with pytest.raises(RuntimeError, match="Parameter 'w' is being differentiated"):
        kiln.grad(lambda x: ops.sum(_write(p, x)), None, [p])(Tensor(np.ones(3, np.float32)))


def _write(p, x):
    p[0] = 2.0
    return ops.mul(p, x)


def test_setitem_on_a_parameter_in_a_compiled_function_runs_every_call():
    """An advanced-index write into a Parameter inside jit is an Assign in the graph (it was frozen at trace time)."""
    p = Parameter(Tensor(np.zeros(4, np.float32)), name="p")

    @kiln.jit
    def step(v):
        p[[0, 2]] = v
        return ops.sum(p)

    assert float(step(Tensor(np.array([1.0, 2.0], np.float32)))) == 3.0
    assert float(step(Tensor(np.array([5.0, 7.0], np.float32)))) == 12.0
    np.testing.assert_array_equal(p.asnumpy(), [5.0, 0.0, 7.0, 0.0])


def test_tensor_scatter_update_index_out_of_range():
    x = Tensor(np.zeros((3, 2), np.float32))
    with pytest.raises(IndexError, match=r"index \[3\].*\[0, 3\)"):
        kiln._core.tensor_scatter_update(x, Tensor(np.array([[3]])), Tensor(np.zeros((1, 2), np.float32)))
    with pytest.raises(ValueError, match=r"updates must have shape \[1, 2\]"):
        kiln._core.tensor_scatter_update(x, Tensor(np.array([[1]])), Tensor(np.zeros((2,), np.float32)))


# ---------------------------------------------------------------------------------------------- item 9: value checks

def _line_of(fn, text):
    """The line (file.py:N) in this file of the first source line of `fn`'s module that contains `text`."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return f"{__file__}:{start + i}"
    raise AssertionError(text)


def _sce(logits, labels):
    return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(logits, labels)  # LINE-sce


def _ce(logits, labels):
    return nn.CrossEntropyLoss()(logits, labels)  # LINE-ce


def _nll(logits, labels):
    return nn.NLLLoss()(ops.log_softmax(logits, 1), labels)  # LINE-nll


_LOSSES = [("SoftmaxCrossEntropyWithLogits", _sce, "LINE-sce"), ("CrossEntropyLoss", _ce, "LINE-ce"),
           ("NLLLoss", _nll, "LINE-nll")]


@pytest.mark.parametrize("name,fn,marker", _LOSSES, ids=[n for n, _, _ in _LOSSES])
@pytest.mark.parametrize("bad", [10, -1])
def test_class_labels_out_of_range_raise_in_both_modes(name, fn, marker, bad):
    logits = Tensor(np.random.default_rng(0).standard_normal((3, 10)).astype(np.float32))
    good = Tensor(np.array([1, 9, 0], np.int32))
    wrong = Tensor(np.array([1, bad, 0], np.int32))
    jf = kiln.jit(fn)
    np.testing.assert_allclose(jf(logits, good).asnumpy(), fn(logits, good).asnumpy(), rtol=1e-6)
    msg = re.escape(f"For '{name}', every label must be in [0, 10)")
    with pytest.raises(ValueError, match=msg):
        fn(logits, wrong)
    with pytest.raises(ValueError, match=msg) as e:  # the compiled graph of the good call: checked at run time
        jf(logits, wrong)
    assert f"got {bad} at index (1,)" in str(e.value)
    assert _line_of(fn, marker) in str(e.value)
    assert len(jf.graphs) == 1  # no recompilation: the check ran in the compiled graph


@pytest.mark.parametrize("use_jit", [False, True])
def test_ignore_index_labels_pass_the_check(use_jit):
    loss = nn.NLLLoss(ignore_index=-100)
    fn = kiln.jit(loss) if use_jit else loss
    logp = Tensor(np.log(np.full((2, 4), 0.25, np.float32)))
    assert abs(float(fn(logp, Tensor(np.array([-100, 2], np.int32)))) - np.log(4)) < 1e-6
    with pytest.raises(ValueError, match=r"or equal to ignore_index \(-100\), but got -5"):
        fn(logp, Tensor(np.array([-5, 2], np.int32)))


def test_graph_mode_loss_checks_labels_under_value_and_grad():
    net = nn.Dense(4, 3)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    vg = kiln.value_and_grad(lambda x, y: loss_fn(net(x), y), None, net.trainable_params())
    step = kiln.jit(vg)
    x = Tensor(np.ones((2, 4), np.float32))
    step(x, Tensor(np.array([0, 2], np.int32)))
    with pytest.raises(ValueError, match=r"every label must be in \[0, 3\), but got 3"):
        step(x, Tensor(np.array([3, 2], np.int32)))


@pytest.mark.parametrize("use_jit", [False, True])
def test_bce_probabilities_checked_in_both_modes(use_jit):
    fn = nn.BCELoss()
    f = kiln.jit(lambda x, y: fn(x, y)) if use_jit else fn
    y = Tensor(np.array([0.0, 1.0], np.float32))
    f(Tensor(np.array([0.2, 0.7], np.float32)), y)
    with pytest.raises(ValueError, match=r"For 'BCELoss', every value of 'logits' \(a probability\) must be in "
                                         r"\[0, 1\], but got 1.5 at index \(1,\)"):
        f(Tensor(np.array([0.2, 1.5], np.float32)), y)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\], but got nan at index \(0,\)"):  # as PyTorch
        f(Tensor(np.array([np.nan, 0.5], np.float32)), y)


@pytest.mark.parametrize("use_one_hot", [False, True])
def test_embedding_ids_out_of_range_raise_in_graph_mode(use_one_hot):
    emb = nn.Embedding(5, 2, use_one_hot=use_one_hot)
    jf = kiln.jit(lambda ids: emb(ids))  # LINE-emb
    jf(Tensor(np.array([0, 4], np.int32)))
    with pytest.raises((IndexError, ValueError), match="out of range|must be in") as e:
        jf(Tensor(np.array([0, 5], np.int32)))
    assert "test_setitem_copy_checks.py" in str(e.value)


def test_gather_index_error_in_a_compiled_graph_names_the_line():
    def f(x, i):
        return ops.gather(x, i, 0)  # LINE-gather

    jf = kiln.jit(f)
    x = Tensor(np.zeros((3, 2), np.float32))
    jf(x, Tensor(np.array([2])))
    with pytest.raises(IndexError, match=r"For 'Gather', the index 3 is out of range") as e:
        jf(x, Tensor(np.array([3])))
    assert _line_of(f, "LINE-gather") in str(e.value)
