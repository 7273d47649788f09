"""Tensor-dependent control flow inside dynamic-shape graphs (kiln/_compiler/dynamic.py, Note [control flow in dynamic
graphs]): `if`/`while`/`for` on tensor values in a function compiled with `jit(input_signature=...)` /
`Cell.set_inputs(...)` and None dimensions compile once; every batch size gives PyNative's values and gradients
(float64 finite differences), inputs of one size take different paths through the one graph, and what cannot follow
a size is a clear ValueError naming the line."""
import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor
from kiln._compiler import dynamic as _dynamic
from helpers import central_difference

F64 = ms.float64
RNG = np.random.default_rng(11)


def dyn(*shape, dtype=F64):
    """An input_signature entry: a Tensor spec of this shape (None: a dynamic dimension)."""
    return Tensor(shape=list(shape), dtype=dtype)


fixed = dyn  # the same spec, named for a shape without None


def t(a):
    return Tensor(np.array(a, order="C"))  # (ascontiguousarray would make a 0-d array 1-d)


def pynative(fn, *args):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        return fn(*args)
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)


def grads_match_pynative(grad, loss, positions, *arrays):
    """The compiled gradient `grad` of `loss` at `arrays` (NumPy, as Tensors) equals PyNative's; returns it."""
    gs = grad(*[t(a) for a in arrays])
    want = pynative(ms.grad(loss, grad_position=positions), *[t(a) for a in arrays])
    for g, r in zip(gs, want):
        np.testing.assert_allclose(g.asnumpy(), r.asnumpy(), rtol=1e-10, atol=1e-12)
    return gs


# ------------------------------------------------------------------------------------------------ the functions
def branch_loss(x, w):
    """An `if` on a value of the batch; both branches use batch-sized intermediates and a mean over the batch."""
    h = ops.matmul(x, w)
    if h.mean() > 0:
        y = ops.tanh(h) * 2 + h.mean()
    else:
        y = h * h - x.mean()
    return (y * y).mean()


def loop_loss(x, w):
    """A `while` whose trip count depends on the data (0 trips for large inputs), with a per-batch sum divided by
    x.shape[0] (a fitted size) after it."""
    h = ops.matmul(x, w)
    while (h * h).mean() < 4.0:
        h = h * 1.5 + x.mean()
    return (h * h).sum() / x.shape[0]


def for_loss(x, w, n):
    """`for i in range(n)` with a tensor n (a While with a counter) holding a tensor `if` (nested sub-graphs)."""
    h = ops.matmul(x, w)
    for _ in range(n):
        h = ops.tanh(h) * w.sum() + x.mean()
        if h.sum() > 0:
            h = h - 0.5
    return (h * h).mean()


SIG = (dyn(None, 4), fixed(4, 3))


def _x(b, scale):
    return RNG.normal(size=(b, 4)) * scale


W = RNG.normal(size=(4, 3))


# ------------------------------------------------------------------------------------------------ values
def test_if_compiles_once_and_takes_both_branches_at_every_batch_size(graph_mode):
    f = ms.jit(branch_loss, input_signature=SIG)
    taken = set()
    for b in (1, 3, 8, 3, 5):
        for sign in (1.0, -1.0):
            x = np.abs(_x(b, 1.0)) * sign
            h = x @ W
            taken.add(bool(h.mean() > 0))
            got = f(t(x), t(W)).asnumpy()
            np.testing.assert_allclose(got, pynative(branch_loss, t(x), t(W)).asnumpy(), rtol=1e-12)
            y = np.tanh(h) * 2 + h.mean() if h.mean() > 0 else h * h - x.mean()
            np.testing.assert_allclose(got, (y * y).mean(), rtol=1e-12)  # NumPy reference
    assert taken == {True, False}
    assert f.compile_count == 1 and f.trace_count == _dynamic.N_PROBES
    (entry,) = f.graphs
    assert "If" in entry.graph.to_text()
    assert entry.executable.specializations == 4  # batch 1, 3, 8, 5: a plan each, no compile


@pytest.mark.parametrize("scale, trips", [(5.0, 0), (0.27, 2), (0.05, 6)])
def test_while_runs_the_trips_the_data_asks_for_at_every_batch_size(graph_mode, scale, trips):
    f = ms.jit(loop_loss, input_signature=SIG)
    for b in (2, 7, 1):
        base = np.ones((b, 4)) * scale
        x = base + RNG.normal(size=(b, 4)) * 1e-3 * scale
        h, n = x @ np.abs(W), 0
        while (h * h).mean() < 4.0:
            h, n = h * 1.5 + x.mean(), n + 1
        assert n == trips, n  # the input was chosen to take this many trips
        got = f(t(x), t(np.abs(W))).asnumpy()
        np.testing.assert_allclose(got, (h * h).sum() / b, rtol=1e-12)
        np.testing.assert_allclose(got, pynative(loop_loss, t(x), t(np.abs(W))).asnumpy(), rtol=1e-12)
    assert f.compile_count == 1


def test_for_over_a_tensor_range_with_an_if_inside(graph_mode):
    f = ms.jit(for_loss, input_signature=SIG + (fixed(dtype=ms.int64),))
    for b in (4, 1, 6):
        for n in (0, 2, 5):
            x, nt = _x(b, 0.7), t(np.array(n, np.int64))
            np.testing.assert_allclose(f(t(x), t(W), nt).asnumpy(),
                                       pynative(for_loss, t(x), t(W), nt).asnumpy(), rtol=1e-12)
    assert f.compile_count == 1


# ------------------------------------------------------------------------------------------------ gradients
@pytest.mark.parametrize("loss, extra, scales", [
    (branch_loss, (), (1.0, -1.0)),
    (loop_loss, (), (0.27, 0.05, 5.0)),
    (for_loss, (np.array(3, np.int64),), (0.7, -0.7)),
])
def test_gradients_equal_pynative_and_finite_differences(graph_mode, loss, extra, scales):
    sig = SIG + tuple(fixed(dtype=ms.int64) for _ in extra)
    grad = ms.jit(ms.grad(loss, grad_position=(0, 1)), input_signature=sig)
    w = np.abs(W) if loss is loop_loss else W
    for b in (1, 3, 5):
        for s in scales:
            x = (np.ones((b, 4)) + RNG.normal(size=(b, 4)) * 0.1) * s if loss is loop_loss else _x(b, 1.0) * s
            if loss is branch_loss:
                x = np.abs(x) * s
            args = [x, w]
            gs = [g.asnumpy() for g in grad(*[t(a) for a in args], *[t(e) for e in extra])]
            want = pynative(ms.grad(loss, grad_position=(0, 1)), *[t(a) for a in args], *[t(e) for e in extra])
            for i, a in enumerate(args):
                assert gs[i].shape == a.shape
                np.testing.assert_allclose(gs[i], want[i].asnumpy(), rtol=1e-10, atol=1e-12)

                def f(v, i=i):
                    vals = list(args)
                    vals[i] = v
                    return float(pynative(loss, *[t(u) for u in vals], *[t(e) for e in extra]).asnumpy())
                np.testing.assert_allclose(gs[i], central_difference(f, a), rtol=1e-6, atol=1e-7,
                                           err_msg=f"{loss.__name__} batch {b} scale {s} argument {i}")
    assert grad.compile_count == 1


# ------------------------------------------------------------------------------------------------ Cells
class Gate(nn.Cell):
    """A Cell whose construct branches on its batch's mean activation."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = ops.relu(h) * 2
        else:
            h = h - h.mean()
        return h


def test_a_cell_with_set_inputs_trains_with_a_smaller_last_batch(graph_mode):
    ms.set_seed(3)
    net = Gate()
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    loss_fn = nn.MSELoss()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    step.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32), Tensor(shape=[None, 3], dtype=ms.float32))
    ref = Gate()
    ref.fc.weight.set_data(net.fc.weight.copy())
    ref.fc.bias.set_data(net.fc.bias.copy())
    w, bias = net.fc.weight.asnumpy().astype(np.float64), net.fc.bias.asnumpy().astype(np.float64)
    for b in (8, 8, 3, 8, 3):  # an epoch of 8-batches whose last is smaller
        x = RNG.normal(size=(b, 4)).astype(np.float32)
        y = RNG.normal(size=(b, 3)).astype(np.float32)
        out = net(t(x)).asnumpy()
        h = x.astype(np.float64) @ w.T + bias
        want = np.maximum(h, 0) * 2 if h.mean() > 0 else h - h.mean()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
        step(t(x), t(y))
        # PyNative reference step on a twin network
        ms.set_context(mode=ms.PYNATIVE_MODE)
        try:
            def lossf(xx, yy):
                return loss_fn(ref(xx), yy)
            _, g = ms.value_and_grad(lossf, None, ref.trainable_params())(t(x), t(y))
            for p, gp in zip(ref.trainable_params(), g):
                p.set_data(p - 0.1 * gp)
        finally:
            ms.set_context(mode=ms.GRAPH_MODE)
        np.testing.assert_allclose(net.fc.weight.asnumpy(), ref.fc.weight.asnumpy(), rtol=1e-5, atol=1e-6)
        w, bias = net.fc.weight.asnumpy().astype(np.float64), net.fc.bias.asnumpy().astype(np.float64)
    assert net._compiled_construct().compile_count == 1
    assert step._compiled_construct().compile_count == 1


# ------------------------------------------------------------------------------------------------ what is refused
def test_a_python_condition_on_a_size_inside_a_branch_names_the_line(graph_mode):
    @ms.jit(input_signature=dyn(None, 4))
    def sized(x):
        if x.sum() > 0:
            if x.shape[0] > 50:  # a Python condition on the size: the probe traces differ
                x = x * 2
            x = x + 1
        return x

    with pytest.raises(ValueError, match=r"cannot be compiled once for every size.*test_dynamic_control_flow\.py:\d+"):
        sized(t(np.ones((3, 4))))


def test_unvarying_branches_are_shared_and_plans_stay_bounded(graph_mode):
    @ms.jit(input_signature=(dyn(None, 4), fixed(dtype=ms.int64)))
    def count(x, n):
        k = ops.zeros((), ms.int64)
        while k < n:  # the loop touches no batch-sized value: one sub-graph serves every size
            k = k + 1
        return x * k.astype(F64)

    for b in range(1, 12):
        np.testing.assert_allclose(count(t(np.ones((b, 4))), t(np.array(b % 4, np.int64))).asnumpy(),
                                   np.full((b, 4), b % 4))
    (entry,) = count.graphs
    assert count.compile_count == 1
    assert entry.executable.num_plans == entry.executable.max_plans  # 11 sizes, the LRU keeps 8


def _halve_until_small(x):
    h = x
    while ops.abs(h).max() > 1.0:  # trips depend on the data: log2 of the largest magnitude
        h = h * 0.5
    if h.sum() > 0:
        h = h + 1.0
    return h


def _halve_reference(x):
    h = x.copy()
    while np.abs(h).max() > 1.0:
        h = h * 0.5
    return h + 1.0 if h.sum() > 0 else h


def test_threads_and_many_sizes_share_one_graph_and_memory_stays_flat(graph_mode, allocator_cache_off):
    import threading
    from kiln import runtime
    f = ms.jit(_halve_until_small, input_signature=dyn(None, 3))
    errors = []
    barrier = threading.Barrier(5)

    def work(n):
        try:
            barrier.wait()
            for k in range(12):
                x = (np.arange(n * 3, dtype=np.float64).reshape(n, 3) - n) * (k + 1)
                np.testing.assert_allclose(f(t(x)).asnumpy(), _halve_reference(x), rtol=1e-12)
        except Exception as e:  # noqa: BLE001 (collected and reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2, 7, 2, 13)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    peaks = []
    for _ in range(2):
        for n in range(1, 21):  # more sizes than the plan cache keeps: plans (with their sub-graphs) are dropped
            x = RNG.normal(size=(n, 3)) * 9
            np.testing.assert_allclose(f(t(x)).asnumpy(), _halve_reference(x), rtol=1e-12)
        peaks.append(runtime.memory_allocated())
    exe = f.graphs[0].executable
    assert f.compile_count == 1 and exe.num_plans == exe.max_plans
    assert peaks[1] <= peaks[0]


def test_float32_loop_scaled_by_a_python_number_keeps_its_dtype_under_a_gradient(graph_mode):
    # The reverse loop body reads the Python scalar 0.5 of the forward body: it stays weak (float32 * 0.5 is float32)
    # when the body is specialized to a new size.
    def scaled(x, w):
        y = ops.matmul(x, w)
        while ops.abs(y).max() > 8.0:
            y = y * 0.5
        return y.mean()

    sig = (dyn(None, 3, dtype=ms.float32), fixed(3, 2, dtype=ms.float32))
    grad = ms.jit(ms.grad(scaled, grad_position=1), input_signature=sig)
    w = np.ones((3, 2), np.float32)
    for b, v in ((2, 10.0), (5, 1.0), (3, 100.0)):
        x = np.full((b, 3), v, np.float32)
        trips = 0
        while np.abs(x @ w).max() * 0.5 ** trips > 8.0:
            trips += 1
        got = grad(t(x), t(w))
        assert got.dtype == ms.float32
        np.testing.assert_allclose(got.asnumpy(), np.full((3, 2), v * 0.5 ** trips / 2), rtol=1e-6)
    assert grad.compile_count == 1


def rows_loss(x, w):
    """`for row in x` over a dynamic first dimension (a While over the run-time batch), with an `if` per row and a
    `break` once the running sum grows large."""
    s = ops.zeros((3,), F64)
    for row in x:
        if row.sum() > 0:
            s = s + ops.tanh(row * w)
        else:
            s = s - row
        if (s * s).sum() > 6.0:
            break
    return (s * s).sum()


def _rows_reference(x, w, rows_run=None):
    """rows_loss in NumPy; appends to `rows_run` how many rows the loop ran before its break (if given)."""
    s, n = np.zeros(3), 0
    for row in x:
        s, n = (s + np.tanh(row * w) if row.sum() > 0 else s - row), n + 1
        if (s * s).sum() > 6.0:
            break
    if rows_run is not None:
        rows_run.append(n)
    return (s * s).sum()


def test_for_over_the_rows_of_a_dynamic_batch_is_one_loop_with_gradients(graph_mode):
    sig = (dyn(None, 3), fixed(3))
    f = ms.jit(rows_loss, input_signature=sig)
    grad = ms.jit(ms.grad(rows_loss, grad_position=(0, 1)), input_signature=sig)
    w = np.array([0.5, -1.0, 2.0])
    rng = np.random.default_rng(5)  # (its own stream: the batches below break early or not whatever ran before)
    broke = set()
    for b, scale in ((1, 0.5), (4, 0.5), (9, 3.0), (2, 0.5)):
        x = rng.normal(size=(b, 3)) * scale
        ran = []
        np.testing.assert_allclose(f(t(x), t(w)).asnumpy(), _rows_reference(x, w, ran), rtol=1e-12)
        broke.add(ran[0] < b)
        gs = grads_match_pynative(grad, rows_loss, (0, 1), x, w)
        np.testing.assert_allclose(gs[1].asnumpy(), central_difference(lambda v: _rows_reference(x, v), w),
                                   rtol=1e-6, atol=1e-7)
    assert broke == {True, False}  # the large batch breaks early, the small ones run every row
    assert f.compile_count == 1 and grad.compile_count == 1
    assert "While" in f.graphs[0].graph.to_text()


def indexed_loss(x, w):
    """`for i in range(x.shape[0])` (and a strided range from a size expression) in a dynamic-shape graph."""
    s = ops.zeros((3,), F64)
    for i in range(x.shape[0]):
        s = s * 0.5 + ops.tanh(x[i] * w)
    for i in range(1, x.shape[0] - 1, 2):
        s = s + x[i]
    return (s * s).sum()


def _indexed_reference(x, w):
    s = np.zeros(3)
    for i in range(x.shape[0]):
        s = s * 0.5 + np.tanh(x[i] * w)
    for i in range(1, x.shape[0] - 1, 2):
        s = s + x[i]
    return (s * s).sum()


def test_range_of_a_dynamic_size_is_one_loop_with_gradients(graph_mode):
    sig = (dyn(None, 3), fixed(3))
    f = ms.jit(indexed_loss, input_signature=sig)
    grad = ms.jit(ms.grad(indexed_loss, grad_position=(0, 1)), input_signature=sig)
    w = np.array([0.5, -1.0, 2.0])
    for b in (1, 2, 5, 8):
        x = RNG.normal(size=(b, 3))
        np.testing.assert_allclose(f(t(x), t(w)).asnumpy(), _indexed_reference(x, w), rtol=1e-12)
        gs = grads_match_pynative(grad, indexed_loss, (0, 1), x, w)
        np.testing.assert_allclose(gs[0].asnumpy(), central_difference(lambda v: _indexed_reference(v, w), x),
                                   rtol=1e-6, atol=1e-7)
    assert f.compile_count == 1 and grad.compile_count == 1

    @ms.jit(input_signature=dyn(None, 3))
    def stepped(x):
        s = x[0]
        for i in range(0, 6, x.shape[0]):  # a step that is a size: refused clearly
            s = s + x[0]
        return s

    with pytest.raises(ValueError, match=r"range\(\) with a step that depends on a tensor or a dynamic size.*"
                                         r"test_dynamic_control_flow\.py:\d+.*Python int step"):
        stepped(t(np.ones((2, 3))))


def paired_loss(x, y, w):
    """enumerate / zip over dynamic batches in `for` headers (compiled loops over the run-time size)."""
    s = ops.zeros((3,), F64)
    for i, row in enumerate(x):
        s = s * 0.5 + ops.tanh(row * w) * i
    for a, b in zip(x, y):
        if b.sum() > 0:
            s = s + a * b
    for k, row in enumerate(y, 1):
        s = s + row * k
    return (s * s).sum()


def _paired_reference(x, y, w):
    s = np.zeros(3)
    for i, row in enumerate(x):
        s = s * 0.5 + np.tanh(row * w) * i
    for a, b in zip(x, y):
        if b.sum() > 0:
            s = s + a * b
    for k, row in enumerate(y, 1):
        s = s + row * k
    return (s * s).sum()


def test_enumerate_and_zip_over_dynamic_batches_are_compiled_loops(graph_mode):
    sig = (dyn(None, 3), dyn(None, 3), fixed(3))
    f = ms.jit(paired_loss, input_signature=sig)
    grad = ms.jit(ms.grad(paired_loss, grad_position=(0, 1, 2)), input_signature=sig)
    w = np.array([0.5, -1.0, 2.0])
    for b in (1, 3, 6):
        x, y = RNG.normal(size=(b, 3)), RNG.normal(size=(b, 3))
        np.testing.assert_allclose(f(t(x), t(y), t(w)).asnumpy(), _paired_reference(x, y, w), rtol=1e-12)
        grads_match_pynative(grad, paired_loss, (0, 1, 2), x, y, w)
    assert f.compile_count == 1 and grad.compile_count == 1
    # With static shapes the same function unrolls as before (no While node), with the same values.
    static = ms.jit(paired_loss)
    x, y = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    np.testing.assert_allclose(static(t(x), t(y), t(w)).asnumpy(), _paired_reference(x, y, w), rtol=1e-12)
    assert "While" not in static.graphs[0].graph.to_text()


def test_a_python_counter_loop_over_a_dynamic_size_is_a_short_error_that_names_the_way_out():
    # (fresh tester) `while i < x.shape[0]` with a Python int unrolls differently in each probe trace: the error
    # lists a few of the size conditions (it listed ~225, 20 KB) and says which loops compile
    def f(x):
        i, acc = 0, x[0] * 0
        while i < x.shape[0]:
            acc, i = acc + x[i], i + 1
        return acc.sum()

    for fn in (ms.jit(f, input_signature=dyn(None, 4)), ms.jit(ms.grad(f), input_signature=dyn(None, 4))):
        with pytest.raises(ValueError, match=r"more\)\. \(A loop over a dynamic size compiles once as `for i in "
                                             r"range\(x\.shape\[0\]\)`") as info:
            fn(t(np.ones((3, 4))))
        assert len(str(info.value)) < 1500 and "and 0 operations" not in str(info.value)
