"""Tensor-dependent control flow compiled into the graph: If/While nodes, their gradients, and the AST rewrite of
`if`/`while`/`for`/break/continue/return/conditional expressions/and/or/not (kiln/_compiler/ast_rewrite.py,
control_flow.py; src/graph/control_flow.cpp). Values against NumPy, gradients against float64 finite differences,
one compiled function reused across inputs that take different paths (the compile count is asserted)."""
import numpy as np
import pytest

from helpers import central_difference as fd_grad

import kiln as ms
from kiln import Parameter, Tensor, nn, ops

F64 = ms.float64


def t64(a):
    return Tensor(np.asarray(a, dtype=np.float64))




# ------------------------------------------------------------------------------------------------ if / else
def branchy(x):
    if x.sum() > 0:
        y = x * 2.0
        z = y + 1.0
    elif x.sum() > -3.0:
        z = -x
    else:
        z = x * x
    return z


def branchy_np(x):
    s = x.sum()
    return x * 2 + 1 if s > 0 else (-x if s > -3 else x * x)


def test_if_elif_else_one_graph_all_paths():
    jf = ms.jit(branchy)
    for v in ([1.0, 2.0], [-1.0, 0.5], [-4.0, -1.0]):
        np.testing.assert_allclose(jf(t64(v)).asnumpy(), branchy_np(np.array(v)), rtol=1e-12)
    assert jf.trace_count == 1
    g = jf.graphs[0].graph
    assert g.count("If") == 1  # the elif is an If inside the else branch's sub-graph
    assert "If" in g.ops


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_if_gradient_both_branches(mode, graph_mode):
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
    w = Parameter(t64([0.5, -1.5]), name="w")

    def loss(x):
        if (x * w).sum() > 0:
            y = ops.sin(x) * w
        else:
            y = x * x * w
        return y.sum()

    def loss_np(x, wv):
        return (np.sin(x) * wv).sum() if (x * wv).sum() > 0 else (x * x * wv).sum()

    gf = ms.grad(loss, 0, w)
    for v in ([1.0, -0.2], [-1.0, 0.3]):  # both branches through one compiled function
        gx, gw = gf(t64(v))
        np.testing.assert_allclose(gx.asnumpy(), fd_grad(lambda a: loss_np(a, w.asnumpy()), v), rtol=1e-6)
        np.testing.assert_allclose(gw.asnumpy(), fd_grad(lambda b: loss_np(np.array(v), b), w.asnumpy()), rtol=1e-6)


def test_grad_of_grad_through_cond(graph_mode):
    def f(x):
        if x.sum() > 0:
            y = x ** 3
        else:
            y = ops.sin(x)
        return y.sum()

    d2 = ms.grad(ms.grad(f))
    for v, want in (([0.5, 1.0], [3.0, 6.0]), ([-1.0, -0.5], list(-np.sin([-1.0, -0.5])))):
        np.testing.assert_allclose(d2(t64(v)).asnumpy(), want, rtol=1e-10)


def test_return_inside_branches_and_conditional_expression():
    @ms.jit
    def f(x, y):
        if x.sum() > y.sum():
            return x - y
        m = x if x.max() > 1.0 else y
        if not (m.min() < -1.0) and m.sum() > 0:
            return m * 10.0
        return m

    for xv, yv in (([3.0], [1.0]), ([0.5], [2.0]), ([0.5], [0.7]), ([-3.0], [-2.0])):
        x, y = np.array(xv), np.array(yv)
        if x.sum() > y.sum():
            want = x - y
        else:
            m = x if x.max() > 1 else y
            want = m * 10 if (not m.min() < -1) and m.sum() > 0 else m
        np.testing.assert_allclose(f(t64(xv), t64(yv)).asnumpy(), want)
    assert f.trace_count == 1


def test_python_condition_still_unrolls():
    @ms.jit
    def f(x, n):
        if n > 2:  # a Python value: chosen while tracing, no If node
            x = x + 1.0
        i = 0
        while i < n:  # Python loop: unrolled
            x = x * 2.0
            i += 1
        return x

    np.testing.assert_allclose(f(t64([1.0]), 3).asnumpy(), [16.0])
    g = f.graphs[0].graph
    assert g.count("If") == 0 and g.count("While") == 0


# ---------------------------------------------------------------------------------------------------- while
def rnn_like(x, n):
    i = 0
    h = x
    while i < n:
        h = ops.tanh(h * 0.9 + 0.1)
        i = i + 1
    return h.sum()


def rnn_like_np(x, n):
    h = np.array(x, dtype=np.float64)
    for _ in range(int(n)):
        h = np.tanh(h * 0.9 + 0.1)
    return h.sum()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_while_values_and_gradients_0_1_2_6_trips(mode, graph_mode):
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
    vg = ms.value_and_grad(rnn_like, 0)
    xv = [0.3, -0.7, 1.2]
    for n in (0, 1, 2, 6):
        v, g = vg(t64(xv), Tensor(n))
        np.testing.assert_allclose(v.asnumpy(), rnn_like_np(xv, n), rtol=1e-12)
        np.testing.assert_allclose(g.asnumpy(), fd_grad(lambda a: rnn_like_np(a, n), xv), rtol=1e-6, atol=1e-9)


def test_while_one_compiled_function_for_all_trip_counts():
    jf = ms.jit(rnn_like)
    for n in (0, 1, 2, 6):
        np.testing.assert_allclose(jf(t64([0.3, -0.7]), Tensor(n)).asnumpy(), rnn_like_np([0.3, -0.7], n),
                                   rtol=1e-12)
    assert jf.trace_count == 1
    assert jf.graphs[0].graph.count("While") == 1


def test_while_gradient_wrt_parameter_read_in_body(graph_mode):
    w = Parameter(t64([[0.5, -0.2], [0.1, 0.3]]), name="w")

    def loss(x, n):
        i = 0
        while i < n:
            x = ops.tanh(ops.matmul(x, w))
            i += 1
        return (x * x).sum()

    def loss_np(x, wv, n):
        for _ in range(n):
            x = np.tanh(x @ wv)
        return (x * x).sum()

    gf = ms.grad(loss, (0,), w)
    xv = np.array([[1.0, -2.0]])
    for n in (0, 2, 6):
        gx, gw = gf(t64(xv), Tensor(n))
        np.testing.assert_allclose(gx.asnumpy(), fd_grad(lambda a: loss_np(a, w.asnumpy(), n), xv), rtol=1e-6,
                                   atol=1e-10)
        np.testing.assert_allclose(gw.asnumpy(), fd_grad(lambda b: loss_np(xv, b, n), w.asnumpy()), rtol=1e-6,
                                   atol=1e-10)


def test_for_range_tensor_break_continue_nested():
    @ms.jit
    def f(x, n):
        acc = x * 0.0
        for i in range(n):
            if i == 1:
                continue
            acc = acc + x * i
            if acc.sum() > 20.0:
                break
            for j in range(2):  # a Python inner loop: unrolled inside the compiled body
                acc = acc + 0.5
        return acc

    def f_np(x, n):
        acc = x * 0.0
        for i in range(n):
            if i == 1:
                continue
            acc = acc + x * i
            if acc.sum() > 20.0:
                break
            for _ in range(2):
                acc = acc + 0.5
        return acc

    x = np.array([1.0, 2.0])
    for n in (0, 1, 3, 10):
        np.testing.assert_allclose(f(t64(x), Tensor(n)).asnumpy(), f_np(x, n))
    assert f.trace_count == 1


def test_nested_tensor_while_loops():
    @ms.jit
    def f(x, n, m):
        i = 0
        while i < n:
            j = 0
            while j < m:
                x = x + 1.0
                j += 1
            x = x * 2.0
            i += 1
        return x

    for n, m in ((0, 3), (2, 0), (3, 2)):
        want = 1.0
        for _ in range(n):
            want = (want + m) * 2
        np.testing.assert_allclose(f(t64([1.0]), Tensor(n), Tensor(m)).asnumpy(), [want])
    assert f.trace_count == 1


class LoopOverParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rows = Parameter(Tensor(np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], np.float32)), name="rows")

    def construct(self, x, limit):
        for r in self.rows:  # over the Parameter's first dimension
            if (x * r).sum() < limit:
                x = x + r
            else:
                x = x - r
        return x


def test_cell_construct_loops_over_parameter(graph_mode):
    net = LoopOverParameter()
    rows = net.rows.asnumpy()
    for xv, lim in (([0.0, 0.0], 1.0), ([3.0, 1.0], 0.0), ([1.0, 1.0], 2.5)):
        x = np.array(xv, np.float32)
        for r in rows:
            x = x + r if (x * r).sum() < lim else x - r
        out = net(Tensor(np.array(xv, np.float32)), Tensor(np.float32(lim)))
        np.testing.assert_allclose(out.asnumpy(), x, rtol=1e-6)
    assert net._jit_construct.trace_count == 1


# ------------------------------------------------------------------------------------------ functional forms
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_while_loop_fori_loop_scan_switch(mode, graph_mode):
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)

    def body(s):
        i, x = s
        return i + 1, x * 1.5

    @ms.jit
    def f(x, n):
        i, y = ops.WhileLoop()(lambda s: s[0] < n, body, (Tensor(0), x))
        z = ops.ForiLoop()(0, n, lambda k, v: v + k, x)
        carry, ys = ops.Scan()(lambda c, e: (c + e, c * e), x, [x, x * 2.0])
        w = ops.switch(x.sum() > 0, ops.sin, ops.cos)(x)
        return i, y, z, carry, ys[1], w

    fn = f if mode == "graph" else f.fn
    for xv, n in (([1.0, 2.0], 3), ([-1.0, 0.5], 0)):
        x = np.array(xv)
        i, y, z, c, y1, w = fn(t64(xv), Tensor(n))
        assert int(i.asnumpy()) == n
        np.testing.assert_allclose(y.asnumpy(), x * 1.5 ** n)
        np.testing.assert_allclose(z.asnumpy(), x + sum(range(n)))
        np.testing.assert_allclose(c.asnumpy(), x + x + 2 * x)
        np.testing.assert_allclose(y1.asnumpy(), (x + x) * (2 * x))
        np.testing.assert_allclose(w.asnumpy(), np.sin(x) if x.sum() > 0 else np.cos(x))


def test_functional_forms_python_values_match_mindspore():
    # the examples of MindSpore's docstrings
    assert ops.WhileLoop()(lambda x: x < 100, lambda v: v + 1, 10) == 100
    assert ops.ForiLoop()(0, 4, lambda i, r: i + r, 0) == 6
    assert ops.Scan()(lambda r, e: (r + e, r + e), 0, [1, 2, 3, 4]) == (10, [1, 3, 6, 10])
    assert ops.Scan()(lambda r, e: (r, e), 5, []) == (5, [])
    assert ops.switch(True, 1, 2) == 1


# ---------------------------------------------------------------------------------------------------- errors
def test_branch_shape_mismatch_names_variable_and_line():
    @ms.jit
    def f(x):
        if x.sum() > 0:
            y = x
        else:
            y = x[:1]
        return y

    with pytest.raises(ValueError, match=r"test_control_flow.py:\d+.*variable 'y'"):
        f(t64([1.0, 2.0]))


def test_loop_variable_must_keep_shape():
    @ms.jit
    def f(x, n):
        while n > 0:
            x = ops.concat((x, x))
            n = n - 1
        return x

    with pytest.raises(ValueError, match=r"loop variable 'x'.*keep its shape"):
        f(t64([1.0]), Tensor(2))


def test_condition_with_several_elements_is_refused():
    @ms.jit
    def f(x):
        if x > 0:
            x = x + 1
        return x

    with pytest.raises(ValueError, match="one element"):
        f(t64([1.0, 2.0]))


def test_bad_functional_arguments():
    with pytest.raises(TypeError, match="ForiLoop.*lower"):
        ops.ForiLoop()(0.5, 3, lambda i, v: v, 0)
    with pytest.raises(TypeError, match="WhileLoop.*cond_func"):
        ops.WhileLoop()(3, lambda v: v, 0)
    with pytest.raises(TypeError, match="Scan.*xs"):
        ops.Scan()(lambda c, e: (c, e), 0, 5)
    with pytest.raises(ValueError, match="switch.*one element"):
        ops.switch(Tensor([True, False]), 1, 2)
