"""Graph mode and @jit: tracing, the compile cache, side effects, errors, inspection, and parity with PyNative."""
import os

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


def rand(*shape, seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_jit_matches_eager_and_caches():
    def f(x, y):
        return ops.sum(ops.relu(x @ y) * 2.0 + 1.0, 1)

    jf = ms.jit(f)
    x, y = rand(4, 3), rand(3, 5, seed=1)
    np.testing.assert_allclose(jf(x, y).asnumpy(), f(x, y).asnumpy(), rtol=1e-6)
    jf(x, y)
    jf(rand(4, 3, seed=2), y)
    assert jf.trace_count == 1 and len(jf.graphs) == 1  # same signature: no retrace
    jf(rand(6, 3), y)  # new batch size
    assert jf.trace_count == 2
    jf(Tensor(np.ones((4, 3))), Tensor(np.ones((3, 5))))  # new dtype (float64)
    assert jf.trace_count == 3
    assert jf.graphs[2].graph.to_text().count("Float64") > 0


def test_python_values_are_constants_and_key_the_cache():
    calls = []

    @ms.jit
    def f(x, n, flag=True):
        calls.append(1)
        for _ in range(n):  # unrolled at trace time
            x = x * 2.0
        return x + 1.0 if flag else x

    x = rand(3)
    np.testing.assert_allclose(f(x, 3).asnumpy(), x.asnumpy() * 8 + 1, rtol=1e-6)
    f(x, 3)
    assert len(calls) == 1
    np.testing.assert_allclose(f(x, 2, flag=False).asnumpy(), x.asnumpy() * 4, rtol=1e-6)
    assert len(calls) == 2


def test_tensor_if_compiles_and_bool_raises_with_location():
    @ms.jit
    def f(x):
        if ops.sum(x) > 0:  # compiled into an If node since issue 11 (tests/python/test_control_flow.py)
            return x
        return -x

    x = rand(3)
    want = x.asnumpy() if x.asnumpy().sum() > 0 else -x.asnumpy()
    np.testing.assert_allclose(f(x).asnumpy(), want)

    @ms.jit
    def g(x):
        if bool(ops.sum(x) > 0):  # bool() of one element: the same tensor condition (as MindSpore)
            return x
        return -x

    np.testing.assert_allclose(g(x).asnumpy(), want)

    @ms.jit
    def h(x):
        if bool(x > 0):  # several elements have no truth value
            return x
        return -x

    with pytest.raises(RuntimeError, match=r"test_graph_mode\.py:\d+.*ops\.select"):
        h(rand(3))


def test_shape_error_while_tracing_names_op_and_line():
    @ms.jit
    def f(x, y):
        return ops.matmul(x, y)

    with pytest.raises(ValueError, match=r"MatMul.*\n.*test_graph_mode\.py:\d+"):
        f(rand(2, 3), rand(4, 5))


def test_side_effect_order_read_assign_read():
    p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")

    @ms.jit
    def f(x):
        before = p * 1.0
        ops.assign(p, p + x)
        after = p * 1.0
        return before, after

    b, a = f(Tensor(np.array([10.0, 10.0], np.float32)))
    np.testing.assert_array_equal(b.asnumpy(), [1.0, 2.0])
    np.testing.assert_array_equal(a.asnumpy(), [11.0, 12.0])
    np.testing.assert_array_equal(p.asnumpy(), [11.0, 12.0])
    b, a = f(Tensor(np.array([1.0, 1.0], np.float32)))  # parameters are read by reference at every run
    np.testing.assert_array_equal(b.asnumpy(), [11.0, 12.0])
    np.testing.assert_array_equal(p.asnumpy(), [12.0, 13.0])


def test_cse_does_not_merge_reads_across_assign():
    p = Parameter(Tensor(np.array([1.0], np.float32)), name="q")

    @ms.jit
    def f():
        a = p + 0.5
        ops.assign(p, Tensor(np.array([5.0], np.float32)))
        return a, p + 0.5

    a, b = f()
    assert a.asnumpy()[0] == 1.5 and b.asnumpy()[0] == 5.5


def test_random_ops_draw_anew_each_run():
    @ms.jit
    def f(x):
        return x + ops.randn(4)

    x = Tensor(np.zeros(4, np.float32))
    assert not np.array_equal(f(x).asnumpy(), f(x).asnumpy())


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(10, 16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(16, 1)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def _train(mode, steps=50, jit_step=False):
    ms.set_context(mode=mode)
    try:
        ms.set_seed(11)
        net = MLP()
        loss_fn = nn.MSELoss()
        opt = nn.Adam(net.trainable_params(), learning_rate=0.01)

        def forward(x, y):
            out = net(x)
            return loss_fn(out, y), out

        grad_fn = ms.value_and_grad(forward, None, opt.parameters, has_aux=True)

        def step(x, y):
            (loss, _), grads = grad_fn(x, y)
            return ops.depend(loss, opt(grads))

        if jit_step:
            step = ms.jit(step)
        rng = np.random.default_rng(5)
        x = Tensor(rng.standard_normal((32, 10)).astype(np.float32))
        y = Tensor(rng.standard_normal((32, 1)).astype(np.float32))
        return np.array([float(step(x, y).asnumpy()) for _ in range(steps)]), net
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_training_parity_pynative_graph_jit():
    eager, _ = _train(ms.PYNATIVE_MODE)
    graph, net = _train(ms.GRAPH_MODE)
    jitted, _ = _train(ms.PYNATIVE_MODE, jit_step=True)
    np.testing.assert_allclose(graph, eager, rtol=1e-6)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)
    assert eager[-1] < eager[0]


def test_cell_in_graph_mode_compiles_and_keys_training_flag(graph_mode):
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(p=0.5), nn.ReLU()])
    x = rand(8, 4)
    net.set_train(False)
    a = net(x).asnumpy()
    np.testing.assert_array_equal(a, net(x).asnumpy())  # eval: no dropout, deterministic
    n_eval = len(net._jit_construct.graphs)
    net.set_train(True)
    net(x)
    assert len(net._jit_construct.graphs) == n_eval + 1  # a new graph for training


def test_grad_of_graph_matches_pynative(graph_mode):
    w = Parameter(rand(3, 2), name="w")

    def f(x):
        return ops.mean(ops.tanh(x @ w) ** 2)

    x = rand(5, 3, seed=3)
    v_g, g_g = ms.value_and_grad(f, 0, w)(x)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    v_e, g_e = ms.value_and_grad(f, 0, w)(x)
    np.testing.assert_allclose(v_g.asnumpy(), v_e.asnumpy(), rtol=1e-6)
    for a, b in zip(g_g, g_e):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_save_graphs_writes_text_and_dot(tmp_path):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path))
    try:
        @ms.jit
        def g(x):
            return ops.relu(x) + 1.0

        g(rand(3))
    finally:
        ms.set_context(save_graphs=False)
    files = sorted(os.listdir(tmp_path))
    assert any(f.endswith("_before.ir") for f in files) and any(f.endswith("_after.dot") for f in files)
    text = open(os.path.join(tmp_path, [f for f in files if f.endswith("_before.ir")][0])).read()
    assert "ReLU" in text and "test_graph_mode.py:" in text


def test_input_signature():
    sig = (Tensor(shape=(2, 3), dtype=ms.float32),)

    def f(x):
        return x * 2.0

    jf = ms.jit(f, input_signature=sig)
    np.testing.assert_allclose(jf(rand(2, 3)).asnumpy(), rand(2, 3).asnumpy() * 2)
    with pytest.raises(ValueError, match="input_signature"):
        jf(rand(3, 3))


def test_symbolic_tensor_cannot_escape():
    leaked = []

    @ms.jit
    def f(x):
        leaked.append(x)
        return x + 1.0

    f(rand(2))
    with pytest.raises(RuntimeError, match="outside"):
        ops.exp(leaked[0])


def test_planned_peak_bytes_reported():
    @ms.jit
    def f(x):
        return ops.sum(ops.exp(x) * 2.0 + ops.exp(x))

    f(rand(256, 256))
    assert 0 < f.graphs[0].planned_peak_bytes <= 3 * 256 * 256 * 4


def test_print_runs_on_every_execution_in_program_order(capsys):
    @ms.jit
    def f(x):
        y = x * 2.0
        ops.print_("y:", y)
        return y + 1.0

    f(Tensor(np.array([1.0, 2.0], np.float32)))
    f(Tensor(np.array([3.0, 4.0], np.float32)))
    out = capsys.readouterr().out
    assert out == ("y: Tensor(shape=[2], dtype=Float32, value=[2 4])\n"
                   "y: Tensor(shape=[2], dtype=Float32, value=[6 8])\n")
    assert f.graphs[0].graph.count("Print") == 1
