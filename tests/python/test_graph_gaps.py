"""Graph mode: the gaps docs/graph_mode.md listed (issue 11), closed — a `break` in an inner loop of a tensor `while`,
lambdas given to jit, graph built-ins under jit(grad(f)), f-strings / str.format of graph tensors in print,
`y[i] = v` with a loop counter, a number loop variable that takes the body's shape — and the static-graph tutorial
behaviours (dict methods, tuple() of a NumPy array, a returned global list, a global read before assignment,
grad_position on a Python number next to tensors). Values against NumPy / Python references, gradients against
float64 finite differences, both modes, compile counts where one compiled function serves several inputs."""
import numpy as np
import pytest

from helpers import central_difference as fd_grad

import kiln as ms
from kiln import Tensor, ops


def t64(a):
    return Tensor(np.asarray(a, dtype=np.float64))


def set_mode(mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)


# ------------------------------------------------------------------------ break in an inner loop of a tensor while
def inner_break(x, n):
    while n > 0:
        j = 0
        while j < 4:
            if j >= 2:
                break
            x = ops.sin(x) + 0.5 * x
            j = j + 1
        n = n - 1
    return x.sum()


def inner_break_np(x, n):
    x = np.array(x, np.float64)
    for _ in range(n):
        for j in range(4):
            if j >= 2:
                break
            x = np.sin(x) + 0.5 * x
    return x.sum()


def inner_break_tensor_cond(x, n):
    while n > 0:
        for _ in range(5):
            if x.sum() > 4.0:
                break
            x = x * 1.5
        n = n - 1
    return x.sum()


def inner_break_tensor_cond_np(x, n):
    x = np.array(x, np.float64)
    for _ in range(n):
        for _ in range(5):
            if x.sum() > 4.0:
                break
            x = x * 1.5
    return x.sum()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_break_in_inner_loop_of_tensor_while(mode, graph_mode):
    set_mode(mode)
    xv = [0.3, -0.2]
    for fn, ref in ((inner_break, inner_break_np), (inner_break_tensor_cond, inner_break_tensor_cond_np)):
        vg = ms.value_and_grad(fn, 0)
        for n in (0, 2, 6):
            v, g = vg(t64(xv), Tensor(n))
            np.testing.assert_allclose(v.asnumpy(), ref(xv, n), rtol=1e-12)
            np.testing.assert_allclose(g.asnumpy(), fd_grad(lambda a: ref(a, n), xv), rtol=1e-6, atol=1e-8)


def test_inner_break_one_compiled_function():
    jf = ms.jit(inner_break_tensor_cond)
    for n in (0, 1, 3):
        np.testing.assert_allclose(jf(t64([0.5, 0.25]), Tensor(n)).asnumpy(),
                                   inner_break_tensor_cond_np([0.5, 0.25], n), rtol=1e-12)
    assert jf.trace_count == 1
    assert jf.graphs[0].graph.count("While") == 1  # the outer loop (its body holds the inner one)


def test_break_flags_of_nested_loops_are_independent():
    # An inner `break` must not end the outer loop (each loop has its own flag).
    @ms.jit
    def f(x):
        for i in range(3):
            for j in range(3):
                if j == 1:
                    break
                x = x + 1.0
            if i == 5:
                break
            x = x * 2.0
        return x

    np.testing.assert_allclose(f(t64([1.0])).asnumpy(), [22.0])  # ((1+1)*2+1)*2+1)*2

    @ms.jit
    def g(x, n):
        while n > 0:
            for j in range(4):
                if x.sum() > 100.0:
                    break
                x = x + 1.0
            if x.sum() > 6.0:
                break
            n = n - 1
        return x

    np.testing.assert_allclose(g(t64([0.0]), Tensor(5)).asnumpy(), [8.0])  # outer break after the 2nd trip
    np.testing.assert_allclose(g(t64([0.0]), Tensor(1)).asnumpy(), [4.0])


# --------------------------------------------------------------------------------------------- lambdas given to jit
def doubling(x, n):
    while n > 0:
        x = x * 2.0
        n = n - 1
    return x


def adding(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


def test_functions_called_from_a_lambda_are_rewritten():
    k = 3.0
    fs = [ms.jit(lambda x, n: doubling(x, n)), ms.jit(lambda x, n: adding(x, n) * k)]  # two lambdas, one line
    for n in (0, 2, 5):
        np.testing.assert_allclose(fs[0](t64([1.5]), Tensor(n)).asnumpy(), [1.5 * 2 ** n])
        np.testing.assert_allclose(fs[1](t64([1.5]), Tensor(n)).asnumpy(), [(1.5 + n) * 3.0])
    assert fs[0].trace_count == 1 and fs[1].trace_count == 1
    assert fs[0].graphs[0].graph.count("While") == 1
    with_default = ms.jit(lambda x, n=Tensor(3): doubling(x, n) + 1.0)
    np.testing.assert_allclose(with_default(t64([1.0])).asnumpy(), [9.0])


def test_lambda_gradient_through_called_loop(graph_mode):
    g = ms.grad(lambda x, n: doubling(x * x, n).sum())
    for n in (0, 3):
        np.testing.assert_allclose(g(t64([0.5, -1.0]), Tensor(n)).asnumpy(), 2 ** n * 2 * np.array([0.5, -1.0]))


# ----------------------------------------------------------------------------------- graph built-ins in jit(grad(f))
def extremes(x):
    return max(x[0], x[1]) * 2.0 + min(x[0], x[1]) + sum(x * x) + max(x)


def extremes_np(x):
    return max(x[0], x[1]) * 2.0 + min(x[0], x[1]) + (x * x).sum() + x.max()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_graph_builtins_inside_jit_of_grad(mode, graph_mode):
    set_mode(mode)
    jg = ms.jit(ms.grad(extremes))
    for xv in ([1.0, 3.0, -2.0], [4.0, -1.0, 0.5]):
        np.testing.assert_allclose(jg(t64(xv)).asnumpy(), fd_grad(extremes_np, xv), rtol=1e-6, atol=1e-8)
    vg = ms.jit(ms.value_and_grad(extremes))
    v, _ = vg(t64([1.0, 3.0, -2.0]))
    np.testing.assert_allclose(v.asnumpy(), extremes_np(np.array([1.0, 3.0, -2.0])))


# ------------------------------------------------------------------------------ y[i] = v with the loop counter i
def fill_rows(x, n):
    y = ops.zeros((5, 2), ms.float64)
    i = 0
    while i < n:
        y[i] = x * (i + 1)
        i = i + 1
    return y


def fill_rows_np(x, n):
    y = np.zeros((5, 2))
    for i in range(n):
        y[i] = np.asarray(x) * (i + 1)
    return y


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_setitem_with_loop_counter(mode, graph_mode):
    set_mode(mode)
    xv = [0.5, -1.5]
    w = np.arange(10.0).reshape(5, 2)
    for n in (0, 2, 5):
        np.testing.assert_allclose(fill_rows(t64(xv), Tensor(n)).asnumpy(), fill_rows_np(xv, n))
        g = ms.grad(lambda x, n: (fill_rows(x, n) * Tensor(w)).sum())(t64(xv), Tensor(n))
        np.testing.assert_allclose(g.asnumpy(), fd_grad(lambda a: (fill_rows_np(a, n) * w).sum(), xv), atol=1e-8)


def test_setitem_loop_counter_one_graph_columns_and_negative_index():
    jf = ms.jit(fill_rows)
    for n in (1, 3):
        np.testing.assert_allclose(jf(t64([1.0, 2.0]), Tensor(n)).asnumpy(), fill_rows_np([1.0, 2.0], n))
    assert jf.trace_count == 1

    @ms.jit
    def cols(x, n):
        y = ops.zeros((2, 4), ms.float32)
        i = 0
        while i < n:
            y[:, i] = x
            y[0, -1 - i] = 7.0
            i = i + 1
        return y

    want = np.zeros((2, 4), np.float32)
    want[:, :2] = [[1.0, 1.0], [2.0, 2.0]]
    want[0, -1], want[0, -2] = 7.0, 7.0
    np.testing.assert_allclose(cols(Tensor(np.array([1.0, 2.0], np.float32)), Tensor(2)).asnumpy(), want)

    @ms.jit
    def out_of_range(x, i):
        y = ops.zeros((3,), ms.float32)
        while i < 10:
            y[i] = x
            i = i + 1
        return y

    with pytest.raises(IndexError, match=r"dimension 0 \(size 3\).*must be in \[-3, 3\), but got 3"):
        out_of_range(Tensor(1.0, ms.float32), Tensor(0))


# -------------------------------------------------------------------------- number loop variable: shape promotion
def accumulate(x, n):
    s = 0
    i = 0
    while i < n:
        s = s + x * x
        i = i + 1
    return s


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_number_loop_variable_takes_the_body_shape(mode, graph_mode):
    set_mode(mode)
    xv = np.array([0.5, -2.0])
    for n in (1, 3):
        np.testing.assert_allclose(accumulate(t64(xv), Tensor(n)).asnumpy(), n * xv * xv)
        g = ms.grad(lambda x, n: accumulate(x, n).sum())(t64(xv), Tensor(n))
        np.testing.assert_allclose(g.asnumpy(), 2 * n * xv)


def test_number_loop_variable_zero_trips_and_one_graph():
    jf = ms.jit(accumulate)
    np.testing.assert_allclose(jf(t64([0.5, -2.0]), Tensor(0)).asnumpy(), [0.0, 0.0])  # the promoted start value
    np.testing.assert_allclose(jf(t64([0.5, -2.0]), Tensor(2)).asnumpy(), [0.5, 8.0])
    assert jf.trace_count == 1

    @ms.jit
    def grows(x, n):
        s = 0
        while n > 0:
            s = ops.concat((ops.reshape(s, (-1,)), x))
            n = n - 1
        return s

    with pytest.raises(ValueError, match="loop variable 's' enters the loop as"):
        grows(t64([1.0]), Tensor(2))


# ------------------------------------------------------------------ print of f-strings / str.format in graphs
def test_fstring_and_format_print_the_run_time_values(capsys):
    @ms.jit
    def f(x):
        print(f"x is {x}, sum {x.sum()}!", "tail")
        print("two: {} and {k}".format(x * 2, k=x[0]))
        print(f"static {1.5:.2f} {'s'!r}")
        ops.print_(f"op {x}", x[1])
        return x

    for v in ([1.0, 2.0], [3.0, -0.5]):
        capsys.readouterr()
        f(Tensor(np.array(v, np.float32)))
        out = capsys.readouterr().out
        x = Tensor(np.array(v, np.float32))
        assert out == (f"x is {x}, sum {x.sum()}!\ntail\ntwo: {x * 2} and {x[0]}\nstatic 1.50 's'\n"
                       f"op {x} Tensor(shape=[], dtype=Float32, value={v[1]:g})\n")
    assert f.trace_count == 1


def test_print_in_helper_called_from_graph_is_a_graph_print(capsys):
    def helper(x):
        print("h", x)
        return x + 1.0

    @ms.jit
    def f(x):
        return helper(x)

    capsys.readouterr()
    f(Tensor(np.array([1.0], np.float32)))
    f(Tensor(np.array([2.0], np.float32)))
    out = capsys.readouterr().out
    assert out == ("h\nTensor(shape=[1], dtype=Float32, value=[ 1.00000000e+00])\n"
                   "h\nTensor(shape=[1], dtype=Float32, value=[ 2.00000000e+00])\n")


# -------------------------------------------------------------------------- static-graph tutorial behaviours
GLOBAL_LIST = [1, 2, 3]
GLOBAL_Z = Tensor(np.ones((2,), np.float64))
GLOBAL_W = Tensor(np.ones((5,), np.float32))


def test_dict_methods_are_graph_forms():
    d = {"a": t64([1.0]), "b": t64([2.0])}

    @ms.jit
    def f():
        keys, values, items = d.keys(), d.values(), d.items()
        has = d.has_key("a"), d.has_key("z")
        d.update({"a": t64([0.0])})
        return keys, values, items, has

    keys, values, items, has = f()
    assert keys == ("a", "b") and has == (True, False)
    assert isinstance(values, tuple) and values[0].asnumpy().tolist() == [1.0]  # taken before the update
    assert isinstance(items, list) and [k for k, _ in items] == ["a", "b"]


def test_tuple_and_list_of_a_numpy_array_give_python_numbers():
    @ms.jit
    def f():
        return tuple(np.array([1, 2])), list(np.array([1.5, 2.0])), tuple(np.array([[1, 2]]))

    a, b, c = f()
    assert a == (1, 2) and type(a[0]) is int
    assert b == [1.5, 2.0] and type(b[0]) is float
    assert isinstance(c[0], np.ndarray)  # rows of a 2-D array stay arrays (as MindSpore)


def test_returned_global_list_is_that_list_and_global_read_in_loop():
    @ms.jit
    def f():
        GLOBAL_LIST.reverse()
        return GLOBAL_LIST, [1, 2]

    out, local = f()
    assert out is GLOBAL_LIST and out == [3, 2, 1]
    local.append(3)
    assert f()[1] == [1, 2]  # a list made inside the function is a fresh one per call

    @ms.jit
    def g():
        for i in (1, 2, 3):
            GLOBAL_Z += i  # noqa: F823 (MindSpore's graph mode reads the global first)
        return GLOBAL_Z

    np.testing.assert_allclose(g().asnumpy(), [7.0, 7.0])
    np.testing.assert_allclose(GLOBAL_Z.asnumpy(), [1.0, 1.0])  # the global itself is unchanged

    @ms.jit
    def h(x, n):
        while n > 0:
            GLOBAL_W = x * 2.0  # assigned before it is read: local to the body, the global (shape [5]) is not used
            x = GLOBAL_W + 1.0
            n = n - 1
        return x

    np.testing.assert_allclose(h(t64([1.0, 0.0]), Tensor(2)).asnumpy(), [7.0, 3.0])


def test_grad_position_on_python_number_next_to_tensors(graph_mode):
    def f(x, y, z):
        return (x * y + z * z).sum()

    @ms.jit
    def g(x, y, z):
        return ms.grad(f, grad_position=(0, 1, 2))(x, y, z)

    gx, gz = g(t64([1.0, 2.0]), 3, t64([0.5, -1.0]))
    np.testing.assert_allclose(gx.asnumpy(), [3.0, 3.0])
    np.testing.assert_allclose(gz.asnumpy(), [1.0, -2.0])


def test_calling_a_jit_class_object_without_call_is_mindspores_value_error(graph_mode):
    @ms.jit_class
    class Inner:
        def __init__(self, k):
            self.k = k

    class Net(ms.nn.Cell):
        def construct(self, x):
            return Inner(2)(x)

    with pytest.raises(ValueError, match="MsClassObject: 'Inner' has no __call__ function"):
        Net()(Tensor(2))
    with pytest.raises(TypeError):  # outside compiled code: Python's error
        Inner(2)(Tensor(2))


# A lambda continued on the next line (here: an index applied after a line break): inspect returns only its first
# line, which parses to a shorter lambda; the rewrite must then leave it alone rather than drop the continuation.
_CONTINUED = dict(
    fn=lambda x: ops.mul(x, 2.0)
    [..., 0])


def test_jit_of_a_lambda_calling_a_lambda_continued_on_the_next_line():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    want = np.arange(6, dtype=np.float32).reshape(3, 2)[..., 0] * 2
    np.testing.assert_array_equal(_CONTINUED["fn"](x).asnumpy(), want)
    got = ms.jit(lambda t: _CONTINUED["fn"](t))(x)
    assert got.shape == (3,)
    np.testing.assert_array_equal(got.asnumpy(), want)
