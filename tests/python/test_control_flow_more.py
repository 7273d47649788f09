"""Control flow in Graph mode, continued: nesting with gradients, training a Cell, the IR (text, passes, compile cache),
threads, and errors (see test_control_flow.py)."""
import threading
import warnings

import numpy as np
import pytest

from helpers import central_difference as fd_grad

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


def t64(a):
    return Tensor(np.asarray(a, dtype=np.float64))




def clipped_loop(x, n):
    for i in range(n):
        if x.sum() > 2.0:
            x = x * 0.5
        else:
            x = ops.sin(x) + 1.0
    return (x * x).sum()


def clipped_loop_np(x, n):
    x = np.array(x, dtype=np.float64)
    for _ in range(n):
        x = x * 0.5 if x.sum() > 2.0 else np.sin(x) + 1.0
    return (x * x).sum()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_if_inside_for_range_tensor_gradient(mode, graph_mode):
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
    vg = ms.value_and_grad(clipped_loop, 0)
    xv = [0.4, -0.3]
    for n in (0, 1, 2, 6):
        v, g = vg(t64(xv), Tensor(n))
        np.testing.assert_allclose(v.asnumpy(), clipped_loop_np(xv, n), rtol=1e-12)
        np.testing.assert_allclose(g.asnumpy(), fd_grad(lambda a: clipped_loop_np(a, n), xv), rtol=1e-6, atol=1e-9)


def test_functional_while_loop_gradient_in_graph(graph_mode):
    w = Parameter(t64([0.9, 1.1]), name="w")

    def f(x, n):
        _, y = ops.WhileLoop()(lambda s: s[0] < n, lambda s: (s[0] + 1, ops.tanh(s[1] * w)), (Tensor(0), x))
        return y.sum()

    def f_np(x, wv, n):
        for _ in range(n):
            x = np.tanh(x * wv)
        return x.sum()

    gf = ms.grad(f, 0, w)
    xv = np.array([0.5, -1.0])
    for n in (0, 1, 6):
        gx, gw = gf(t64(xv), Tensor(n))
        np.testing.assert_allclose(gx.asnumpy(), fd_grad(lambda a: f_np(a, w.asnumpy(), n), xv), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(gw.asnumpy(), fd_grad(lambda b: f_np(xv, b, n), w.asnumpy()), rtol=1e-6, atol=1e-9)


class Gated(nn.Cell):
    """A Cell whose construct has a tensor `if` and a tensor-bounded loop; trained in Graph mode."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 3)
        self.steps = 3

    def construct(self, x, n):
        h = x
        for _ in range(n):
            h = ops.tanh(self.dense(h))
        if h.mean() > 0:
            out = h * 2.0
        else:
            out = h - 1.0
        return out


def test_training_a_cell_with_control_flow_matches_pynative(graph_mode):
    def train(mode, steps=3):
        ms.set_context(mode=mode)
        ms.set_seed(1)
        net = Gated()
        opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
        loss_fn = lambda x, n, y: ops.mean((net(x, n) - y) ** 2)
        grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

        def step(x, n, y):
            loss, grads = grad_fn(x, n, y)
            return ops.depend(loss, opt(grads))
        if mode == ms.GRAPH_MODE:
            step = ms.jit(step)
        rng = np.random.default_rng(0)
        losses = []
        for k in range(steps):
            x = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
            y = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
            losses.append(float(step(x, Tensor(k + 1), y).asnumpy()))
        return losses, step
    eager, _ = train(ms.PYNATIVE_MODE)
    graph, jstep = train(ms.GRAPH_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-5)
    assert jstep.trace_count == 1  # trip counts 1, 2, 3 through one graph


def test_ir_text_passes_and_subgraph_optimization():
    @ms.jit
    def f(x, n):
        while n > 0:
            x = x * 1.0 + 0.0  # simplified away inside the body's sub-graph
            x = ops.relu(x)
            n = n - 1
        return x

    np.testing.assert_allclose(f(t64([-1.0, 2.0]), Tensor(3)).asnumpy(), [0.0, 2.0])
    text = f.graphs[0].graph.to_text()
    assert "While(" in text and "<graph while_body" in text
    assert "# body of %" in text and "graph while_body(" in text and "ReLU(" in text  # the sub-graphs follow
    from kiln._loader import _core
    with _core.Trace("t", lift=True) as tr:
        a = tr.input((2,), ms.float64)
        body = tr.finish([ops.relu(a * 1.0 + 0.0)])
    sg = _core.SubGraph(body)
    assert sg.optimized.num_nodes < sg.graph.num_nodes  # the standard passes ran inside the sub-graph


def test_compile_cache_on_disk_keeps_control_flow_in_memory(tmp_path):
    ms.set_context(enable_compile_cache=True, compile_cache_path=str(tmp_path))
    try:
        @ms.jit
        def f(x):
            if x.sum() > 0:
                x = x + 1.0
            return x
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            np.testing.assert_allclose(f(t64([1.0])).asnumpy(), [2.0])
            np.testing.assert_allclose(f(t64([-1.0])).asnumpy(), [-1.0])
        assert any("control flow" in str(x.message) for x in w)
        assert "control flow" in f.disk_skipped
    finally:
        ms.set_context(enable_compile_cache=False)


def test_threads_share_a_compiled_loop():
    @ms.jit
    def f(x, n):
        i = 0
        while i < n:
            x = x + 1.0
            i += 1
        return x

    f(t64([0.0]), Tensor(1))
    errors, results = [], {}

    def work(k):
        try:
            for _ in range(20):
                results[k] = float(f(t64([float(k)]), Tensor(k)).asnumpy()[0])
        except Exception as e:  # noqa: BLE001 (collected and reported below)
            errors.append(e)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert results == {k: 2.0 * k for k in range(4)}
    assert f.trace_count == 1


def test_branch_returns_input_unchanged_is_not_aliased():
    @ms.jit
    def f(x):
        y = x * 2.0
        if y.sum() > 0:
            z = y
        else:
            z = -y
        return z, y

    z, y = f(t64([1.0, 2.0]))
    np.testing.assert_allclose(z.asnumpy(), [2.0, 4.0])
    z2, _ = f(t64([3.0, 1.0]))  # a second run must not overwrite the first run's results
    np.testing.assert_allclose(z.asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(z2.asnumpy(), [6.0, 2.0])


def test_helper_function_with_tensor_if_compiles():
    def helper(v):
        if v.max() > 1.0:
            return v / v.max()
        return v

    @ms.jit
    def f(x):
        return helper(x) + 1.0

    np.testing.assert_allclose(f(t64([1.0, 4.0])).asnumpy(), [1.25, 2.0])
    np.testing.assert_allclose(f(t64([0.5, 0.25])).asnumpy(), [1.5, 1.25])
    assert f.trace_count == 1


def test_variable_defined_in_one_branch_only_is_undefined_after():
    @ms.jit
    def f(x):
        if x.sum() > 0:
            y = x + 1.0
        return y

    with pytest.raises(NameError, match="'y'"):
        f(t64([1.0]))


def test_python_list_changed_in_tensor_loop_is_refused():
    @ms.jit
    def f(x, n):
        outs = []
        while n > 0:
            outs = outs + [x]
            n = n - 1
        return x

    with pytest.raises(TypeError, match=r"variable 'outs' is a list"):
        f(t64([1.0]), Tensor(2))


def tanh_loop(x, w, n):
    i = 0
    while i < n:
        x = ops.tanh(x * w + 0.1)
        i = i + 1
    return x.sum()


def tanh_loop_first_np(x, w, n):
    """d/dx sum(tanh loop) in NumPy (the chain rule written out): the reference the second order is checked on."""
    x = np.array(x, np.float64)
    d = np.ones_like(x)
    for _ in range(n):
        x = np.tanh(x * w + 0.1)
        d = d * (1 - x * x) * w
    return d


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_second_order_through_while(mode, graph_mode):
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
    xv, wv = np.array([0.3, -0.8]), np.array([0.9, 1.3])
    d1 = ms.grad(tanh_loop, 0)
    d2 = ms.grad(lambda x, w, n: d1(x, w, n).sum(), (0, 1))
    for n in (0, 1, 2, 5):
        np.testing.assert_allclose(d1(t64(xv), t64(wv), Tensor(n)).asnumpy(), tanh_loop_first_np(xv, wv, n),
                                   rtol=1e-12)
        gx, gw = d2(t64(xv), t64(wv), Tensor(n))
        np.testing.assert_allclose(gx.asnumpy(), fd_grad(lambda a: tanh_loop_first_np(a, wv, n).sum(), xv),
                                   rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(gw.asnumpy(), fd_grad(lambda b: tanh_loop_first_np(xv, b, n).sum(), wv),
                                   rtol=1e-6, atol=1e-9)


def test_third_order_through_while_pynative_and_graph_refusal(graph_mode):
    xv, wv = np.array([0.3, -0.8]), np.array([0.9, 1.3])

    def second(a, n):
        d1 = ms.grad(tanh_loop, 0)
        return ms.grad(lambda x: d1(x, t64(wv), Tensor(n)).sum())(t64(a)).asnumpy().sum()

    d1 = ms.grad(tanh_loop, 0)
    d2 = ms.grad(lambda x, w, n: d1(x, w, n).sum(), 0)
    d3 = ms.grad(lambda x, w, n: d2(x, w, n).sum(), 0)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for n in (0, 3):
        np.testing.assert_allclose(d3(t64(xv), t64(wv), Tensor(n)).asnumpy(),
                                   fd_grad(lambda a: second(a, n), xv, eps=1e-5), rtol=1e-5, atol=1e-8)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(RuntimeError, match="third or higher order through a tensor-dependent loop"):
        d3(t64(xv), t64(wv), Tensor(3))


def test_second_order_one_graph_for_all_trip_counts():
    d1 = ms.grad(tanh_loop, 0)
    jf = ms.jit(ms.grad(lambda x, w, n: d1(x, w, n).sum(), 0))
    xv, wv = np.array([0.3, -0.8]), np.array([0.9, 1.3])
    for n in (0, 2, 4):
        np.testing.assert_allclose(jf(t64(xv), t64(wv), Tensor(n)).asnumpy(),
                                   fd_grad(lambda a: tanh_loop_first_np(a, wv, n).sum(), xv), rtol=1e-6, atol=1e-9)
    assert jf.trace_count == 1


def test_second_order_through_functional_loops(graph_mode):
    def f(x, n):
        out = ops.WhileLoop()(lambda v: v[1] < n, lambda v: (ops.sin(v[0]) * 1.5, v[1] + 1), (x, Tensor(0)))
        return out[0].sum()

    def first_np(x, n):
        d = np.ones_like(x)
        for _ in range(n):
            d = d * np.cos(x) * 1.5
            x = np.sin(x) * 1.5
        return d

    xv = np.array([0.4, -1.1])
    d2 = ms.grad(lambda x, n: ms.grad(f)(x, n).sum())
    for n in (0, 2, 4):
        np.testing.assert_allclose(d2(t64(xv), Tensor(n)).asnumpy(),
                                   fd_grad(lambda a: first_np(a, n).sum(), xv), rtol=1e-6, atol=1e-9)


def test_return_inside_loop_keeps_python_and_says_where():
    @ms.jit
    def f(x):
        for i in range(3):
            if x.sum() > i:
                return x
        return -x

    with pytest.raises(RuntimeError, match=r"`if` whose branch holds a return.*cannot be compiled.*"
                                           r"test_control_flow_more.py:\d+"):
        f(t64([1.0]))


def test_number_promoted_across_branches_and_trips():
    @ms.jit
    def f(x, n):
        s = 0  # an int that a tensor `if` inside the compiled loop makes a float
        i = 0
        while i < n:
            i += 1
            if i == 2:
                continue
            s = s + x.sum() * i
        return s

    for n, want in ((0, 0.0), (1, 3.0), (3, 12.0)):
        np.testing.assert_allclose(f(Tensor(np.array([1.0, 2.0], np.float32)), Tensor(n)).asnumpy(), want)
    assert f.trace_count == 1


def test_helpers_nested_defs_and_boolean_operators():
    @ms.jit
    def g(x):
        def inner(v):
            return v * 2 if v.sum() > 0 else v * 3
        return inner(x), (x if x.min() > 0 else -x), not (x.sum() > 0), (x.sum() > 0) or (x.sum() < -10)

    for xv in ([1.0, 2.0], [-1.0, 2.0], [-5.0, -6.0]):
        x = np.array(xv)
        y, z, n, o = g(t64(xv))
        np.testing.assert_allclose(y.asnumpy(), x * 2 if x.sum() > 0 else x * 3)
        np.testing.assert_allclose(z.asnumpy(), x if x.min() > 0 else -x)
        assert bool(n.asnumpy()) == (not x.sum() > 0)
        assert bool(o.asnumpy()) == (x.sum() > 0 or x.sum() < -10)
    assert g.trace_count == 1


def test_scan_unroll_false_is_one_while_node_with_gradients():
    def run(x, h, unroll):
        c, ys = ops.Scan()(lambda c, e: (ops.tanh(c * e + 0.5), c * e), h, [x[0], x[1], x[2]], unroll=unroll)
        return (c * c).sum() + (ys[0] * ys[2]).sum()

    rng = np.random.default_rng(3)
    x, h = rng.standard_normal((3, 2)), rng.standard_normal(2)
    jf = ms.jit(lambda x, h: run(x, h, False))
    jf(t64(x), t64(h))
    assert jf.graphs[0].graph.count("While") == 1
    g_loop = ms.jit(ms.grad(lambda x, h: run(x, h, False), (0, 1)))(t64(x), t64(h))
    g_eager = ms.grad(lambda x, h: run(x, h, True), (0, 1))(t64(x), t64(h))
    for a, b in zip(g_loop, g_eager):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(jf(t64(x), t64(h)).asnumpy(), run(t64(x), t64(h), True).asnumpy(), rtol=1e-12)


def test_export_description_refuses_control_flow_clearly():
    @ms.jit
    def f(x):
        if x.sum() > 0:
            x = x + 1.0
        return x

    f(t64([1.0]))
    with pytest.raises(ValueError, match="tensor-dependent control flow.*cannot be described for export"):
        f.graphs[0].graph.describe()


def test_tensor_if_in_a_jit_class_method_compiles():
    @ms.jit_class
    class Acc:
        def __init__(self):
            self.k = Tensor(np.float32(2.0))

        def f(self, x):
            if x > 0:
                return x * self.k
            return x - 1

    a = Acc()
    fn = ms.jit(lambda x: a.f(x))
    assert float(fn(Tensor(np.float32(-1.0))).asnumpy()) == -2.0
    assert float(fn(Tensor(np.float32(3.0))).asnumpy()) == 6.0
