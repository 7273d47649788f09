"""A tensor that a gradient saved, then written in place, keeps the value the op read (Note [saved tensors and
in-place writes], kiln/autodiff.h). Every in-place path (ops.assign/assign_add/assign_sub, Tensor add_/mul_/copy_/
zero_/clamp_/fill_, item assignment, writes through a view, the optimizer kernels) inside the differentiated function
must give the gradient of the function as written, each read taking the value it had when read — in PyNative (the
tape's storage versions) and in compiled graphs (a TensorCopy recorded before the write). References: float64 central
differences of the NumPy function with the read-time values; MindSpore 2.10's Graph mode gives these values (its
PyNative mode uses the overwritten value: grad x = [5, 5, 5] for sum(w * x) then assign(w, 5))."""
import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, _core, nn, ops

from helpers import central_difference

W0 = np.array([1.0, -2.0, 3.0, 0.5])
X0 = np.array([0.3, 0.7, -1.1, 2.0])

# name: (in-place write of w, the value it leaves as a function of the old one)
WRITES = {
    "assign": (lambda w: ops.assign(w, w * 0 + 5.0), lambda o: np.full_like(o, 5.0)),
    "assign_add": (lambda w: ops.assign_add(w, ops.ones_like(w)), lambda o: o + 1),
    "assign_sub": (lambda w: ops.assign_sub(w, ops.ones_like(w)), lambda o: o - 1),
    "add_": (lambda w: w.add_(1.0), lambda o: o + 1),
    "mul_": (lambda w: w.mul_(3.0), lambda o: 3 * o),
    "copy_": (lambda w: w.copy_(Tensor(np.full(4, 9.0))), lambda o: np.full_like(o, 9.0)),
    "zero_": (lambda w: w.zero_(), lambda o: np.zeros_like(o)),
    "clamp_": (lambda w: w.clamp_(0.0, 1.0), lambda o: np.clip(o, 0.0, 1.0)),
    "fill_": (lambda w: w.fill_(4.0), lambda o: np.full_like(o, 4.0)),
    "setitem_slice": (lambda w: w.__setitem__(slice(1, 3), 7.0), lambda o: np.r_[o[:1], 7.0, 7.0, o[3:]]),
    "setitem_index": (lambda w: w.__setitem__(Tensor(np.array([0, 3])), 2.5), lambda o: np.r_[2.5, o[1:3], 2.5]),
    "view_fill_": (lambda w: w[1:].fill_(0.0), lambda o: np.r_[o[:1], 0.0, 0.0, 0.0]),
    "view_setitem": (lambda w: w[2:].__setitem__(0, -6.0), lambda o: np.r_[o[:2], -6.0, o[3:]]),
}


def _np_f(w):
    return lambda x: float(np.sum(np.sin(w * x) * x))


def _fd(w, x=X0):
    return central_difference(_np_f(w), x)


def _grad_fn(fn, mode):
    g = kiln.grad(fn, grad_position=0)
    return g if mode == "pynative" else kiln.jit(g)


PARAMETER_ONLY = {"assign_add", "assign_sub"}  # MindSpore's ops.assign_add/assign_sub take Parameters only


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("kind,write", [("parameter", w) for w in sorted(WRITES)] +
                         [("outside_tensor", w) for w in sorted(WRITES) if w not in PARAMETER_ONLY])
def test_write_after_read_keeps_the_read_value(mode, kind, write):
    """f(x) = sum(sin(w·x)·x), then w written in place: df/dx uses the w that was read, and the write happens."""
    do, after = WRITES[write]
    w = Parameter(Tensor(W0.copy()), name="w") if kind == "parameter" else Tensor(W0.copy())

    def f(x):
        y = ops.sum(ops.sin(w * x) * x)
        do(w)
        return y

    g = _grad_fn(f, mode)
    np.testing.assert_allclose(g(Tensor(X0)).asnumpy(), _fd(W0), rtol=1e-6, atol=1e-8)
    w1 = after(W0)
    np.testing.assert_array_equal(w.asnumpy(), w1)
    # A second call (the compiled graph runs again) reads the value the first one left.
    np.testing.assert_allclose(g(Tensor(X0)).asnumpy(), _fd(w1), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(w.asnumpy(), after(w1))


@pytest.mark.parametrize("write", ["add_", "setitem_slice", "view_fill_", "assign"])
def test_tensor_made_inside_the_function(write):
    """A tensor made inside f (no history), read by an op and then written in place (PyNative writes its storage)."""
    do, _ = WRITES[write]

    def f(x):
        c = ops.ones_like(x) * Tensor(W0)
        y = ops.sum(ops.sin(c * x) * x)
        do(c)
        return y

    for g in (kiln.grad(f), kiln.jit(kiln.grad(f))):
        np.testing.assert_allclose(g(Tensor(X0)).asnumpy(), _fd(W0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_cell_of_the_report(mode):
    """The reported case: a Cell reads its Parameter, then assigns it; grad x is the old w (MindSpore Graph mode)."""

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.array([1.0, 2.0, 3.0], np.float32)), name="w")

        def construct(self, x):
            y = (self.w * x).sum()
            ops.assign(self.w, self.w * 0 + 5)
            return y

    if mode == "graph":
        kiln.set_context(mode=kiln.GRAPH_MODE)
    try:
        net = Net()
        x = Tensor(np.ones(3, np.float32))
        np.testing.assert_array_equal(kiln.grad(net, grad_position=0)(x).asnumpy(), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(net.w.asnumpy(), [5.0, 5.0, 5.0])
        np.testing.assert_array_equal(kiln.grad(net, grad_position=0)(x).asnumpy(), [5.0, 5.0, 5.0])
        net.w.set_data(Tensor(np.array([1.0, 2.0, 3.0], np.float32)))
        value, gx = kiln.value_and_grad(net, grad_position=0)(x)
        assert float(value.asnumpy()) == 6.0
        np.testing.assert_array_equal(gx.asnumpy(), [1.0, 2.0, 3.0])
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_saved_view_then_root_written(mode):
    """The op saved a view (w[1:]); the root is written: the view's old values are used."""
    w = Parameter(Tensor(W0.copy()), name="w")

    def f(x):
        y = ops.sum(w[1:] * x[1:] * x[1:])
        ops.assign(w, w * 0 - 1)
        return y

    g = _grad_fn(f, mode)(Tensor(X0)).asnumpy()
    np.testing.assert_allclose(g, np.r_[0.0, 2 * W0[1:] * X0[1:]], rtol=1e-12)
    np.testing.assert_array_equal(w.asnumpy(), -np.ones(4))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_reads_between_writes_each_keep_their_value(mode):
    """read w (w0), w ← 2w, read w (2·w0), w ← w + 1: grad = w0 + 2·w0."""
    w = Parameter(Tensor(W0.copy()), name="w")

    def f(x):
        y = ops.sum(w * x)
        ops.assign(w, w * 2)
        y = y + ops.sum(w * x)
        ops.assign_add(w, ops.ones_like(w))
        return y

    np.testing.assert_allclose(_grad_fn(f, mode)(Tensor(X0)).asnumpy(), 3 * W0, rtol=1e-12)
    np.testing.assert_allclose(w.asnumpy(), 2 * W0 + 1, rtol=1e-12)


def _kernel_step(name, w, state):
    """One step of an in-place optimizer kernel on w with a unit gradient (ops.ApplyMomentum; the SGD and Adam kernels
    that nn.SGD / nn.Adam call)."""
    one = ops.ones_like(w)
    if name == "ApplyMomentum":
        ops.ApplyMomentum()(w, state[0], Tensor(0.5, kiln.float64), one, Tensor(0.9, kiln.float64))
    elif name == "SGD":
        _core.sgd(w, one, Tensor(0.5, kiln.float64), state[0], state[1], 0.9)
    else:
        _core.adam(w, state[0], state[1], Tensor(0.9, kiln.float64), Tensor(0.999, kiln.float64),
                   Tensor(0.1, kiln.float64), 0.9, 0.999, 1e-8, one)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("opt", ["ApplyMomentum", "SGD", "Adam", "nn.Momentum", "nn.SGD", "nn.Adam"])
def test_optimizer_step_inside_the_function(mode, opt):
    """An optimizer updates w inside the differentiated function, after w was read: grad x is the old w, and the
    update happened (w changed)."""
    w = Parameter(Tensor(W0.copy()), name="w")
    state = [Parameter(Tensor(np.zeros(4)), name="s0"), Parameter(Tensor(np.ones(4)), name="s1")]
    if opt.startswith("nn."):
        cls = getattr(nn, opt[3:])
        kw = {"momentum": 0.9} if opt == "nn.Momentum" else {}
        optimizer = cls([w], learning_rate=0.5, **kw)

    def f(x):
        y = ops.sum(ops.sin(w * x) * x)
        if opt.startswith("nn."):
            optimizer((ops.ones_like(w),))
        else:
            _kernel_step(opt, w, state)
        return y

    np.testing.assert_allclose(_grad_fn(f, mode)(Tensor(X0)).asnumpy(), _fd(W0), rtol=1e-6, atol=1e-8)
    assert np.all(w.asnumpy() < W0)  # every optimizer moved w against the unit gradient


def test_grad_of_grad_through_a_kept_value():
    """The stand-in that replaces a written tensor keeps its history: a tracked tensor h = 2x is written in place
    (the core Assign, as an in-place kernel would) after sum(h·h) read it; d/dx = 8x and d²/dx² summed = 8."""
    def f(x):
        h = x * 2.0
        y = ops.sum(h * h)
        _core.assign(h, ops.zeros_like(h))
        return y

    x = Tensor(X0)
    np.testing.assert_allclose(kiln.grad(f)(x).asnumpy(), 8 * X0, rtol=1e-12)
    gg = kiln.grad(lambda t: ops.sum(kiln.grad(f)(t)))(x)
    np.testing.assert_allclose(gg.asnumpy(), np.full(4, 8.0), rtol=1e-12)


def test_custom_bprop_gets_the_read_value():
    """A Cell's own bprop gets the inputs as they were read."""
    w = Tensor(W0.copy())

    class Scale(nn.Cell):
        def construct(self, x, s):
            return x * s

        def bprop(self, x, s, out, dout):
            return dout * s, ops.zeros_like(s)

    scale = Scale()

    def f(x):
        y = ops.sum(scale(x, w))
        w.fill_(100.0)
        return y

    np.testing.assert_allclose(kiln.grad(f)(Tensor(X0)).asnumpy(), W0, rtol=1e-12)


# ------------------------------------------------------------------------------------ no copy unless needed

def _copies():
    return _core._write_snapshot_stats()


def test_one_copy_per_write_of_a_saved_value_and_none_otherwise():
    w = Parameter(Tensor(W0.copy()), name="w")
    other = Parameter(Tensor(W0.copy()), name="other")

    def write_other(x):
        y = ops.sum(w * x)
        ops.assign(other, other + 1)  # not saved by any op
        return y

    def write_before_read(x):
        ops.assign(w, w + 1)  # nothing saved w yet
        return ops.sum(w * x)

    def write_after_read(x):
        y = ops.sum(w * x)
        ops.assign(w, w + 1)
        ops.assign(w, w + 1)  # the version the first write left was not saved: no second copy
        return y

    before = _copies()
    for fn in (write_other, write_before_read):
        for _ in range(3):
            kiln.grad(fn)(Tensor(X0))
    assert _copies() == before
    for _ in range(3):
        kiln.grad(write_after_read)(Tensor(X0))
    count, nbytes = _copies()
    assert count - before[0] == 3 and nbytes - before[1] == 3 * 4 * 8  # one copy of w's 4 float64 per call


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_training_step_copies_nothing(mode):
    """value_and_grad then the optimizer (the usual step): the tape is gone before the update, so no copy."""
    net = nn.Dense(4, 3)
    opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    loss_fn = nn.MSELoss()
    vg = kiln.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    def step(x, y):
        loss, grads = vg(x, y)
        opt(grads)
        return loss

    if mode == "graph":
        step = kiln.jit(step)
    x = Tensor(np.random.RandomState(0).randn(8, 4).astype(np.float32))
    y = Tensor(np.zeros((8, 3), np.float32))
    before = _copies()
    losses = [float(step(x, y).asnumpy()) for _ in range(5)]
    assert _copies() == before
    assert losses[-1] < losses[0]
    if mode == "graph":
        assert "TensorCopy(" not in step.graphs[0].graph_before.to_text()


def test_the_compiled_write_after_a_saved_read():
    """Graph mode: the gradient of a read of w followed by a write of w uses the value read (the trace defers the
    Parameter write to the end of the graph, Note [deferred state writes]); a write before the read is seen."""
    w = Parameter(Tensor(W0.copy()), name="w")

    def after(x):
        y = ops.sum(w * x)
        ops.assign(w, w + 1)
        return y

    def before(x):
        ops.assign(w, w + 1)
        return ops.sum(w * x)

    ja, jb = kiln.jit(kiln.grad(after)), kiln.jit(kiln.grad(before))
    for k in range(2):  # the second call runs the compiled graph again
        w0 = w.asnumpy().copy()
        np.testing.assert_allclose(ja(Tensor(X0)).asnumpy(), w0, rtol=1e-12)
        np.testing.assert_allclose(w.asnumpy(), w0 + 1, rtol=1e-12)
        np.testing.assert_allclose(jb(Tensor(X0)).asnumpy(), w0 + 2, rtol=1e-12)
        np.testing.assert_allclose(w.asnumpy(), w0 + 2, rtol=1e-12)
    assert ja.compile_count == 1 and jb.compile_count == 1


def test_memory_stays_flat_over_many_steps(allocator_cache_off):
    """Write-after-read every step (one copy each): the copies go with the tape, memory in use does not grow."""
    w = Parameter(Tensor(np.random.RandomState(1).randn(256, 64)), name="w")
    x = Tensor(np.random.RandomState(2).randn(64, 8))

    def f(x):
        y = ops.sum(ops.matmul(w, x))
        ops.assign_sub(w, w * 1e-3)
        return y

    g = kiln.grad(f)
    for _ in range(20):
        g(x)
    base = kiln.runtime.memory_allocated()
    count0 = _copies()[0]
    for _ in range(200):
        g(x)
    assert _copies()[0] - count0 == 200
    assert kiln.runtime.memory_allocated() <= base


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_write_inside_a_tensor_branch(mode):
    """The write sits in an `if` on a tensor (Graph mode: an If node whose branch graph assigns w): the copy is
    recorded in the enclosing graph before the If, and the gradient uses the w that was read."""
    w = Parameter(Tensor(W0.copy()), name="w")

    def f(x):
        y = ops.sum(ops.sin(w * x) * x)
        if ops.sum(x) > 0:
            ops.assign(w, w * 0 + 5.0)
        return y

    g = _grad_fn(f, mode)
    np.testing.assert_allclose(g(Tensor(X0)).asnumpy(), _fd(W0), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(w.asnumpy(), np.full(4, 5.0))
    np.testing.assert_allclose(g(Tensor(-X0)).asnumpy(), central_difference(_np_f(np.full(4, 5.0)), -X0),
                               rtol=1e-6, atol=1e-8)  # the branch not taken: w stays 5
    np.testing.assert_array_equal(w.asnumpy(), np.full(4, 5.0))
