"""Dynamic shapes in Graph mode (kiln/_compiler/dynamic.py): `jit(input_signature=...)` / `Cell.set_inputs(...)` with
`Tensor(shape=[None, ...])` compile one graph for every batch size; values equal PyNative's, gradients equal float64
finite differences, the per-shape plans stay bounded, threads share the graph, and what cannot follow a dynamic size
is a clear ValueError naming the line."""
import threading

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor
from kiln._compiler import dynamic as _dynamic
from helpers import central_difference

F64 = ms.float64
RNG = np.random.default_rng(7)


def dyn(*shape, dtype=ms.float32):
    return Tensor(shape=list(shape), dtype=dtype)


def t(a):
    return Tensor(np.ascontiguousarray(a))


# ------------------------------------------------------------------------------------------------ the models
def mlp_loss(x, w1, b1, w2, b2):
    h = ops.tanh(ops.matmul(x, w1) + b1)
    y = ops.matmul(h, w2) + b2
    return (y * y).mean()


def conv_loss(x, k1, k2, w):
    h = ops.relu(ops.conv2d(x, k1, pad_mode="pad", padding=1))
    h = ops.max_pool2d(h, 2, 2)
    h = ops.tanh(ops.conv2d(h, k2, stride=2, pad_mode="pad", padding=1))
    h = h.reshape(x.shape[0], -1)  # the batch size read in Python
    y = ops.matmul(h, w)
    return (y * y).sum() / x.shape[0]


def block_loss(x, wq, wk, wv, wo):
    """A Transformer-ish self-attention block: 2 heads, reshapes by x.shape[0] and x.shape[1]."""
    b, s, e = x.shape
    def heads(w):
        return ops.matmul(x, w).reshape(b, s, 2, e // 2).transpose(0, 2, 1, 3)
    q, k, v = heads(wq), heads(wk), heads(wv)
    att = ops.softmax(ops.matmul(q, k.transpose(0, 1, 3, 2)) / 2.0, axis=-1)
    o = ops.matmul(att, v).transpose(0, 2, 1, 3).reshape(b * s, e)
    y = ops.matmul(o, wo).reshape(b, s, e) + x
    return (y * y).mean()


def mlp_params(dtype=np.float64):
    return [RNG.normal(size=(5, 6)).astype(dtype) * 0.5, RNG.normal(size=(6,)).astype(dtype) * 0.1,
            RNG.normal(size=(6, 3)).astype(dtype) * 0.5, RNG.normal(size=(3,)).astype(dtype) * 0.1]


def conv_params():
    return [RNG.normal(size=(3, 1, 3, 3)) * 0.4, RNG.normal(size=(2, 3, 3, 3)) * 0.4, RNG.normal(size=(8, 4)) * 0.4]


def block_params():
    return [RNG.normal(size=(8, 8)) * 0.3 for _ in range(4)]


def _signature(x_sig, params):
    return (x_sig,) + tuple(Tensor(shape=list(p.shape), dtype=F64) for p in params)


# ------------------------------------------------------------------------------------------------ compile once
def test_one_compile_for_every_batch_size_values_equal_pynative(graph_mode):
    params = mlp_params(np.float32)
    fn = ms.jit(mlp_loss, input_signature=(dyn(None, 5),) + tuple(t(p) for p in params))
    for n in (1, 7, 32, 7, 1):
        x = RNG.normal(size=(n, 5)).astype(np.float32)
        got = fn(t(x), *[t(p) for p in params]).asnumpy()
        assert got.shape == ()  # a mean's fitted count stays a 0-d constant
        ms.set_context(mode=ms.PYNATIVE_MODE)
        want = mlp_loss(t(x), *[t(p) for p in params]).asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert fn.compile_count == 1
    assert fn.trace_count == _dynamic.N_PROBES  # the probe traces of the one compile; no trace per size
    (entry,) = fn.graphs
    assert entry.executable.specializations == 3  # one plan per concrete signature (1, 7, 32)


@pytest.mark.parametrize("loss, make, x_shape, x_sig", [
    (mlp_loss, mlp_params, (5,), (None, 5)),
    (conv_loss, conv_params, (1, 8, 8), (None, 1, 8, 8)),
    (block_loss, block_params, (4, 8), (None, None, 8)),
])
def test_gradients_match_float64_finite_differences(graph_mode, loss, make, x_shape, x_sig):
    params = make()
    grad = ms.jit(ms.grad(loss, grad_position=tuple(range(1 + len(params)))),
                  input_signature=_signature(dyn(*x_sig, dtype=F64), params))
    value = ms.jit(loss, input_signature=_signature(dyn(*x_sig, dtype=F64), params))
    batches = [(1,), (3,), (4,)] if x_sig[1] is not None else [(1, 4), (3, 2), (2, 5)]
    for b in batches:
        shape = b + tuple(x_shape[len(b) - 1:])
        x = RNG.normal(size=shape)
        args = [x] + params
        gs = [g.asnumpy() for g in grad(*[t(a) for a in args])]
        for i, a in enumerate(args):
            def f(v, i=i):
                vals = list(args)
                vals[i] = v
                ms.set_context(mode=ms.PYNATIVE_MODE)
                try:
                    return float(loss(*[t(u) for u in vals]).asnumpy())
                finally:
                    ms.set_context(mode=ms.GRAPH_MODE)
            np.testing.assert_allclose(gs[i], central_difference(f, a), rtol=1e-6, atol=1e-8,
                                       err_msg=f"{loss.__name__} batch {b}, argument {i}")
        ms.set_context(mode=ms.PYNATIVE_MODE)
        want = loss(*[t(a) for a in args]).asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE)
        np.testing.assert_allclose(value(*[t(a) for a in args]).asnumpy(), want, rtol=1e-12)
    assert grad.compile_count == 1 and value.compile_count == 1


# ------------------------------------------------------------------------------------------------ training
class ConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(4)  # batch statistics: a mean over a dynamic size; moving statistics updated
        self.c2 = nn.Conv2d(4, 4, 3, stride=2, pad_mode="pad", padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.flat = nn.Flatten()
        self.fc = nn.Dense(16, 5)

    def construct(self, x):
        x = ops.relu(self.bn(self.c1(x)))
        x = self.pool(ops.relu(self.c2(x)))
        return self.fc(self.flat(x))


def _train_steps(mode, batches, dynamic):
    ms.set_context(mode=mode)
    ms.set_seed(3)
    net = ConvNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    step.set_train()  # batch statistics in the BatchNorm
    if dynamic:
        step.set_inputs(dyn(None, 1, 8, 8), dyn(None, dtype=ms.int32))
    losses = [float(step(t(x), t(y)).asnumpy()) for x, y in batches]
    return step, losses, [p.asnumpy() for p in net.get_parameters()]  # moving mean/variance included


def test_training_step_compiles_once_and_equals_pynative():
    rng = np.random.default_rng(11)
    batches = [(rng.normal(size=(n, 1, 8, 8)).astype(np.float32), rng.integers(0, 5, n).astype(np.int32))
               for n in (8, 7, 32, 1, 8)]
    try:
        step, g_losses, g_params = _train_steps(ms.GRAPH_MODE, batches, True)
        _, p_losses, p_params = _train_steps(ms.PYNATIVE_MODE, batches, False)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    jf = step._compiled_construct()
    assert jf.compile_count == 1 and len(jf.graphs) == 1
    np.testing.assert_allclose(g_losses, p_losses, rtol=2e-5)
    for g, p in zip(g_params, p_params):
        np.testing.assert_allclose(g, p, rtol=1e-4, atol=1e-6)


def test_model_train_with_smaller_last_batch_compiles_once(graph_mode):
    from kiln import dataset as ds
    ms.set_seed(5)
    rng = np.random.default_rng(2)
    data = ds.NumpySlicesDataset({"x": rng.normal(size=(23, 1, 8, 8)).astype(np.float32),
                                  "y": rng.integers(0, 5, 23).astype(np.int32)}, shuffle=False)
    data = data.batch(8, drop_remainder=False)  # 8, 8, 7
    net = ConvNet()
    net.set_inputs(dyn(None, 1, 8, 8))
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.05, 0.9))
    model.train(2, data)
    jf = model.train_network._compiled_construct()
    assert jf.compile_count == 1
    assert jf.graphs[0].executable.specializations == 2  # batches of 8 and of 7


# ------------------------------------------------------------------------------------------------ cache, threads
def test_plans_are_bounded_and_memory_stays_flat(graph_mode, allocator_cache_off):
    from kiln import runtime

    @ms.jit(input_signature=dyn(None, 16))
    def f(x):
        return ops.tanh(x * 2.0 + 1.0).sum(axis=1)

    exe = None
    sizes = list(range(1, 41))
    peaks = []
    for rnd in range(2):
        for n in sizes:
            x = np.full((n, 16), 0.5, np.float32)
            np.testing.assert_allclose(f(t(x)).asnumpy(), np.tanh(2.0) * 16 * np.ones(n), rtol=1e-6)
        exe = f.graphs[0].executable
        assert exe.num_plans == exe.max_plans
        peaks.append(runtime.memory_allocated())
    assert f.compile_count == 1
    assert exe.evictions == 2 * len(sizes) - exe.max_plans
    assert peaks[1] <= peaks[0]  # the second round (the same sizes, plans made again) holds no more memory


def test_threads_run_one_dynamic_graph_with_different_shapes(graph_mode):
    @ms.jit(input_signature=(dyn(None, 3), dyn(None)))
    def f(x, y):
        return (x * x).sum(axis=1) + y * float(2)

    errors = []
    barrier = threading.Barrier(6)

    def work(n):
        try:
            barrier.wait()
            for k in range(30):
                x = np.arange(n * 3, dtype=np.float32).reshape(n, 3) + k
                y = np.full(n, k, np.float32)
                np.testing.assert_allclose(f(t(x), t(y)).asnumpy(), (x * x).sum(1) + 2 * y, rtol=1e-6)
        except Exception as e:  # noqa: BLE001 (collected and reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2, 5, 9, 5, 17)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    assert f.compile_count == 1
    assert f.graphs[0].executable.specializations == 5


# ------------------------------------------------------------------------------------------------ errors
def test_python_branch_on_a_dynamic_size_is_a_clear_error(graph_mode):
    @ms.jit(input_signature=dyn(None, 4))
    def f(x):
        if x.shape[0] > 40:  # the line the error names
            return x * 2
        return x

    with pytest.raises(ValueError, match=r"cannot be compiled once.*static shapes.*`dim0 > 40` at "
                                         r".*test_dynamic_shape\.py:\d+"):
        f(t(np.ones((3, 4), np.float32)))


def test_a_condition_on_a_size_is_a_guard_checked_for_every_new_size(graph_mode):
    @ms.jit(input_signature=dyn(None, 4))
    def f(x):
        b = x.shape[0]
        if b * 2 > 200:  # the same outcome at every probe size: compiled for False, checked per new size
            return x * 2
        return x + float(1)

    x = np.ones((5, 4), np.float32)
    np.testing.assert_array_equal(f(t(x)).asnumpy(), x + 1)
    np.testing.assert_array_equal(f(t(x[:1])).asnumpy(), x[:1] + 1)
    with pytest.raises(ValueError, match=r"under the condition `\(dim0 \* 2\) > 200` being False \(at "
                                         r".*test_dynamic_shape\.py:\d+\), which is True for input shapes \[101, 4\]"):
        f(t(np.ones((101, 4), np.float32)))
    assert f.compile_count == 1


def test_sizes_that_follow_and_sizes_that_cannot(graph_mode):
    @ms.jit(input_signature=dyn(None, 4))
    def square(x):  # a product of two sizes is fitted too
        return ops.zeros((x.shape[0] * x.shape[0], 2), ms.float32) + 1.0, x.reshape(1, -1) * 2

    for n in (1, 3):
        a, b = square(t(np.ones((n, 4), np.float32)))
        np.testing.assert_array_equal(a.asnumpy(), np.ones((n * n, 2)))
        np.testing.assert_array_equal(b.asnumpy(), np.full((1, 4 * n), 2.0))

    @ms.jit(input_signature=dyn(None, 4))
    def halves(x):
        return x.reshape(x.shape[0] // 2, 8)

    with pytest.raises(ValueError, match=r"attribute 'shape' of the op 'Reshape'.*not c0 \+ c1 \* size.*"
                                         r"test_dynamic_shape\.py:\d+"):
        halves(t(np.ones((4, 4), np.float32)))

    @ms.jit(input_signature=dyn(None, 4))
    def positions(x):  # an arithmetic progression follows the size
        return x + ops.arange(0, x.shape[0]).reshape(-1, 1).astype(ms.float32)

    for n in (3, 1, 5):
        np.testing.assert_array_equal(positions(t(np.ones((n, 4), np.float32))).asnumpy(),
                                      1.0 + np.arange(n, dtype=np.float32)[:, None] + np.zeros((n, 4)))
    assert positions.compile_count == 1

    @ms.jit(input_signature=dyn(None, 4))
    def squares(x):
        return x + Tensor(np.arange(x.shape[0], dtype=np.float32).reshape(-1, 1) ** 2)

    with pytest.raises(ValueError, match="holds different values"):
        squares(t(np.ones((3, 4), np.float32)))

    @ms.jit(input_signature=dyn(None, 4))
    def returns_size(x):
        return x * 2, x.shape[0]

    with pytest.raises(ValueError, match="returns a Python value that depends on the size"):
        returns_size(t(np.ones((3, 4), np.float32)))


def test_calls_that_do_not_fit_the_signature(graph_mode):
    @ms.jit(input_signature=(dyn(None, 4), dyn(None)))
    def f(x, y):
        return x.sum(axis=1) + y

    with pytest.raises(ValueError, match=r"argument 0 is Float32\[3, 5\].*Float32\[None, 4\]"):
        f(t(np.ones((3, 5), np.float32)), t(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match=r"argument 1 is Int32\[3\]"):
        f(t(np.ones((3, 4), np.float32)), t(np.ones(3, np.int32)))
    with pytest.raises(ValueError, match="axis 0 must have one size.*argument 0 has 3 and argument 1 has 2"):
        f(t(np.ones((3, 4), np.float32)), t(np.ones(2, np.float32)))

    @ms.jit(input_signature=dyn(None, 6))
    def g(x):
        return x.reshape(-1, 4)  # 6 * n must be divisible by 4

    np.testing.assert_array_equal(g(t(np.ones((2, 6), np.float32))).asnumpy(), np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"cannot run with input shapes \[3, 6\].*Reshape.*test_dynamic_shape\.py"):
        g(t(np.ones((3, 6), np.float32)))
    assert g.compile_count == 1


def test_static_signature_keeps_one_graph_per_shape(graph_mode):
    net = nn.Dense(3, 2)
    net.set_inputs(Tensor(np.zeros((4, 3), np.float32)))  # no None: static, as before
    net(t(np.ones((4, 3), np.float32)))
    net(t(np.ones((5, 3), np.float32)))
    assert net._compiled_construct().compile_count == 2


def test_what_does_not_compile_once_names_the_reason(graph_mode):
    @ms.jit(input_signature=dyn(None, 4))
    def branchy(x):
        if x.sum() > 0:  # tensor-dependent control flow: an If node
            return x * 2
        return x - 1

    # (Tensor-dependent control flow compiles once too: tests/python/test_dynamic_control_flow.py.)
    np.testing.assert_allclose(branchy(t(np.ones((3, 4), np.float32))).asnumpy(), np.full((3, 4), 2.0))
    np.testing.assert_allclose(branchy(t(-np.ones((5, 4), np.float32))).asnumpy(), np.full((5, 4), -2.0))
    assert branchy.compile_count == 1

    @ms.jit(input_signature=dyn(None, 4))
    def prints(x):
        print("inverse batch", 1.0 / x.shape[0])  # a float from a size (a size itself prints: test_graph_dyn_shape)
        return x

    with pytest.raises(ValueError, match=r"a printed text holds a Python number.*test_dynamic_shape\.py:\d+"):
        prints(t(np.ones((3, 4), np.float32)))

    @ms.jit(input_signature=dyn(None, 4))
    def same_size(x):
        y = x * 2
        assert y.shape[0] == x.shape[0]  # the same size on both sides: no guard
        return y

    np.testing.assert_array_equal(same_size(t(np.ones((0, 4), np.float32))).asnumpy(), np.ones((0, 4)))
    assert same_size.graphs[0].executable.guards == ()


def test_graph_specialize_checks_its_arguments(graph_mode):
    @ms.jit
    def f(x):
        return x.reshape(x.shape[0] * 2, -1) * 3.0

    f(t(np.ones((4, 6), np.float32)))
    g = f.graphs[0].graph
    d = g.describe()
    reshape = next(i for i, n in enumerate(d["nodes"]) if n["op"] == "Reshape")
    const = next(i for i, v in enumerate(d["values"]) if v["kind"] == "constant")
    h = g.specialize([[3, 6]], [(reshape, "shape", [6, -1])], [])
    assert h.describe()["values"][h.describe()["outputs"][0]]["shape"] == (6, 3)
    assert g.describe()["values"][0]["shape"] == (4, 6)  # the template is not changed
    with pytest.raises(ValueError, match="takes 1 inputs, but got 2 shapes"):
        g.specialize([[3, 6], [1]], [], [])
    with pytest.raises(ValueError, match="negative dimension"):
        g.specialize([[-1, 6]], [], [])
    with pytest.raises(ValueError, match="no node 99"):
        g.specialize([[3, 6]], [(99, "shape", [6, -1])], [])
    with pytest.raises(ValueError, match="has no attribute 'axis'"):
        g.specialize([[3, 6]], [(reshape, "axis", [6, -1])], [])
    with pytest.raises(TypeError, match=r"attribute 'shape' of node \d+ \(Reshape\) needs a value of its type, "
                                        r"but got float"):
        g.specialize([[3, 6]], [(reshape, "shape", 6.5)], [])
    with pytest.raises(TypeError, match="an attribute patch is a tuple"):
        g.specialize([[3, 6]], [("shape", [6, -1])], [])
    with pytest.raises(ValueError, match="is not a constant"):
        g.specialize([[3, 6]], [], [(0, t(np.ones(1, np.float32)))])
    with pytest.raises(ValueError, match=r"constant %\d+ is Float\d+, but got Int64"):
        g.specialize([[3, 6]], [], [(const, t(np.ones((), np.int64)))])
    with pytest.raises(ValueError, match=r"cannot run with input shapes \[3, 5\].*Reshape"):
        g.specialize([[3, 5]], [(reshape, "shape", [6, -1])], [])  # 15 elements do not fill rows of 6 / 2


# ------------------------------------------------------------------------------------------------ ops over dynamic sizes
_DYN_OPS = {
    "max along a static axis": lambda x: ops.max(x, axis=1)[0],
    "topk": lambda x: ops.topk(x, 2)[0],
    "sort": lambda x: ops.sort(x, axis=1)[0],
    "gather_elements": lambda x: ops.gather_elements(x, 1, ops.argsort(x, axis=1)),
    "std over the dynamic axis": lambda x: ops.std(x, axis=0),
    "var ddof=1": lambda x: ops.var(x, axis=0, ddof=1),
    "first row": lambda x: x[0],
    "last row": lambda x: x[-1],
    "einsum over the batch": lambda x: ops.einsum("bi,bj->ij", x, x),
    "cumsum over the dynamic axis": lambda x: ops.cumsum(x, 0),
    "CumSum exclusive reverse": lambda x: ops.CumSum(exclusive=True, reverse=True)(x, 0),
    "cumsum over a static axis": lambda x: ops.cumsum(x, 1),
    "kl_div batchmean": lambda x: ops.kl_div(ops.log_softmax(x, 1), ops.softmax(x * 2, 1), "batchmean"),
}


@pytest.mark.parametrize("name", sorted(_DYN_OPS))
def test_ops_compile_once_for_every_batch_size_with_gradients(graph_mode, name):
    """Each op in one graph for batches of 4, 2, 1 and 7 (tester findings 8-10: constants that follow the size as an
    arithmetic progression, a weak Python scalar divided by a size, slices and broadcasts that no longer record a
    condition on the size); values and gradients equal PyNative's."""
    op = _DYN_OPS[name]

    def loss(x):
        y = op(x)
        return (y * y).sum()

    fwd = ms.jit(op, input_signature=dyn(None, 3, dtype=F64))
    grad = ms.jit(ms.grad(loss), input_signature=dyn(None, 3, dtype=F64))
    xs = [t(np.random.RandomState(b).randn(b, 3)) for b in (4, 2, 1, 7)]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    wants = [(op(x).asnumpy(), ms.grad(loss)(x).asnumpy()) for x in xs]
    ms.set_context(mode=ms.GRAPH_MODE)
    for x, (want, want_g) in zip(xs, wants):
        np.testing.assert_allclose(fwd(x).asnumpy(), want, rtol=1e-12, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(grad(x).asnumpy(), want_g, rtol=1e-10, atol=1e-12, equal_nan=True)
    assert fwd.compile_count == 1 and grad.compile_count == 1


def test_a_cell_made_by_the_traced_code_does_not_force_a_new_trace(graph_mode):
    """ops.kl_div builds an nn.KLDivLoss on each call: a Cell made while tracing is part of the traced code, not a
    guard of the graph (it made every call trace again, and the guard grew by one dead reference per call)."""
    def f(x):
        return ops.kl_div(ops.log_softmax(x, 1), ops.softmax(x * 2, 1), "batchmean")

    static = ms.jit(f)
    dynamic = ms.jit(f, input_signature=dyn(None, 3, dtype=F64))
    for b in (4, 4, 2, 4):
        x = t(np.random.RandomState(b).randn(b, 3))
        np.testing.assert_allclose(static(x).asnumpy(), dynamic(x).asnumpy(), rtol=1e-12)
    assert static.compile_count == 2  # batch 4 and batch 2
    assert dynamic.compile_count == 1
    assert len(static._guard[0]) == 0 and len(dynamic._guard[0]) == 0
