"""In-place writes to the inputs of a compiled function (Note [writes into inputs] in kiln/_compiler/capture.py):
ops.assign / assign_add / assign_sub, Tensor in-place methods and item assignment on a Parameter or Tensor passed
as an argument to @jit or to a GRAPH_MODE Cell reach the caller's object after every run, as in PyNative (and as
MindSpore 2.10 does: `x.add_(y)` in a jit function changes the caller's x; ops.assign on a Parameter argument
updates it)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops


@pytest.fixture(autouse=True)
def pynative_after():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def t(values):
    return Tensor(np.asarray(values, np.float32))


def _both(fn, make_args, calls=3):
    """Runs fn eagerly and compiled on fresh arguments `calls` times each; returns (eager, compiled) lists of
    (result, argument values after the call) per call."""
    out = []
    for f in (fn, ms.jit(fn)):
        args = make_args()
        runs = []
        for _ in range(calls):
            r = f(*args)
            flat = []
            _leaves(args, flat)
            runs.append((_np(r), [a.asnumpy().copy() for a in flat]))
        out.append(runs)
    return out


def _leaves(obj, acc):
    if isinstance(obj, Tensor):
        acc.append(obj)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            _leaves(v, acc)
    elif isinstance(obj, dict):
        for v in obj.values():
            _leaves(v, acc)


def _np(r):
    if isinstance(r, Tensor):
        return r.asnumpy().copy()
    if isinstance(r, (tuple, list)):
        return [_np(v) for v in r]
    return r


def _close(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _assert_same(eager, compiled):
    assert len(eager) == len(compiled)
    for (r1, a1), (r2, a2) in zip(eager, compiled):
        _close(r2, r1)
        assert len(a1) == len(a2)
        for x1, x2 in zip(a1, a2):
            np.testing.assert_allclose(x2, x1, rtol=1e-6)


# ---------------------------------------------------------------------------------------------- each write path
def _assign(x, y):
    ops.assign(x, x - 0.5 * y)
    return x * 2


def _assign_add(x, y):
    ops.assign_add(x, y)
    return x + 1


def _assign_sub(x, y):
    ops.assign_sub(x, y)
    return x + 1


def _methods(x, y):
    x.add_(y)
    x.mul_(2.0)
    x.sub_(1.0)
    return x * y


def _copy_zero(x, y):
    r = x + y  # read before the writes: the old value
    x.zero_()
    x.copy_(y * 3)
    return r


def _setitem(x, y):
    x[0] = 7.0
    x[1:] = y[1:] * 2
    return x.sum()


def _view_write(x, y):
    v = x[1:3]
    v.add_(10.0)
    return x + y


def _assign_value(x, y):
    x.assign_value(y + x)
    return x


@pytest.mark.parametrize("fn", [_assign, _assign_add, _assign_sub, _methods, _copy_zero, _setitem, _view_write,
                                _assign_value], ids=lambda f: f.__name__)
@pytest.mark.parametrize("param", [False, True], ids=["tensor", "parameter"])
def test_write_paths_match_pynative(fn, param):
    if fn in (_assign_add, _assign_sub) and not param:
        for f in (fn, ms.jit(fn)):  # a Parameter only, compiled or not (MindSpore's TypeError)
            with pytest.raises(TypeError, match="must be a Parameter"):
                f(t([1.0]), t([1.0]))
        return
    def make():
        x = t([1.0, 2.0, 3.0, 4.0])
        return (Parameter(x, name="x") if param else x, t([0.5, 1.0, 1.5, 2.0]))

    eager, compiled = _both(fn, make)
    _assert_same(eager, compiled)
    assert not np.allclose(eager[0][1][0], [1.0, 2.0, 3.0, 4.0])  # the call did write


def test_issue_reproduction_values():
    # The tester's program; the values MindSpore 2.10 gives.
    net = nn.Dense(3, 1, weight_init="ones", bias_init="zeros")
    params = tuple(net.trainable_params())

    @ms.jit
    def update(ps, gs):
        for p, g in zip(ps, gs):
            ops.assign(p, p - 0.1 * g)
        return True

    assert update(params, tuple(ops.ones_like(p) for p in params)) is True
    np.testing.assert_allclose(params[0].asnumpy(), [[0.9, 0.9, 0.9]], rtol=1e-6)
    np.testing.assert_allclose(params[1].asnumpy(), [-0.1], rtol=1e-6)
    update(params, tuple(ops.ones_like(p) for p in params))
    np.testing.assert_allclose(params[0].asnumpy(), [[0.8, 0.8, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), [-0.2], rtol=1e-5)

    @ms.jit
    def f(x, y):
        x.add_(y)
        return x * 2

    a = t([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(f(a, t([2.0, 2.0, 2.0])).asnumpy(), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(a.asnumpy(), [3.0, 3.0, 3.0])


# ------------------------------------------------------------------------------------------------- structures
def _structures(d, lst, tup):
    d["a"].copy_(lst[0])
    lst[1].zero_()
    ops.assign_add(tup[0], tup[1])
    return d["a"] + tup[0]


def test_inputs_in_dicts_lists_tuples():
    def make():
        return ({"a": t([1.0, 1.0])}, [t([5.0, 6.0]), t([2.0, 2.0])], (Parameter(t([1.0, 2.0]), name="p"),
                                                                       t([0.5, 0.5])))

    eager, compiled = _both(_structures, make)
    _assert_same(eager, compiled)
    np.testing.assert_array_equal(compiled[-1][1], [[5.0, 6.0], [5.0, 6.0], [0.0, 0.0], [2.5, 3.5], [0.5, 0.5]])


def test_view_passed_as_argument_writes_its_base():
    @ms.jit
    def fill(x):
        x.fill_(3.0)
        return x + 0

    base = t([0.0, 0.0, 0.0, 0.0])
    fill(base[1:3])
    np.testing.assert_array_equal(base.asnumpy(), [0.0, 3.0, 3.0, 0.0])


def test_one_tensor_passed_twice_sees_program_order():
    # MindSpore 2.10: x.add_(1); return y * 1 with f(a, a) gives [2, 2, 2] (y is x).
    def f(x, y):
        x.add_(1.0)
        return y * 1

    jf = ms.jit(f)
    a = t([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(jf(a, a).asnumpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(a.asnumpy(), [2.0, 2.0, 2.0])
    b, c = t([1.0, 1.0, 1.0]), t([1.0, 1.0, 1.0])
    for _ in range(2):  # distinct tensors after the aliased call (and the fast path): y is not x
        np.testing.assert_array_equal(jf(b, c).asnumpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(b.asnumpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(jf(a, a).asnumpy(), [3.0, 3.0, 3.0])  # and aliased again after the fast path
    np.testing.assert_array_equal(a.asnumpy(), [3.0, 3.0, 3.0])
    assert jf.trace_count == 2


def test_no_write_no_extra_output():
    @ms.jit
    def f(x):
        return x * 2

    a = t([1.0, 2.0])
    f(a)
    assert f.graphs[0].graph.num_outputs == 1 and not f.graphs[0]._in_writes
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 2.0])


def test_written_input_returned_value_and_repeat_calls_hit_cache():
    @ms.jit
    def step(p, g):
        ops.assign_sub(p, g)
        return p

    p = Parameter(t([10.0, 10.0]), name="p")
    g = t([1.0, 2.0])
    for k in range(1, 5):
        r = step(p, g)
        np.testing.assert_array_equal(r.asnumpy(), [10.0 - k, 10.0 - 2 * k])
        np.testing.assert_array_equal(p.asnumpy(), [10.0 - k, 10.0 - 2 * k])
    assert step.trace_count == 1


# ------------------------------------------------------------------------------------------------ GRAPH_MODE Cells
class _Upd(nn.Cell):
    def construct(self, p, g):
        ops.assign(p, p - g)
        return p


class _InPlace(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([1.0, 1.0]), name="w")

    def construct(self, x, y):
        x.add_(self.w)
        ops.assign_add(self.w, y)  # a captured Parameter: written as before
        x[0] = x[0] * 3
        return x + self.w


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def test_graph_mode_cell_writes_arguments(mode):
    ms.set_context(mode=mode)
    w = Parameter(t([1.0, 1.0]), name="w")
    u = _Upd()
    for _ in range(3):
        r = u(w, t([1.0, 0.5]))
    np.testing.assert_array_equal(w.asnumpy(), [-2.0, -0.5])
    np.testing.assert_array_equal(r.asnumpy(), [-2.0, -0.5])

    net = _InPlace()
    x = t([1.0, 2.0])
    outs = [net(x, t([0.5, 0.5])).asnumpy() for _ in range(2)]
    # Call 1: x = [(1+1)*3, 3] = [6, 3], w = [1.5, 1.5]; call 2: x = [(6+1.5)*3, 4.5], w = [2, 2].
    np.testing.assert_array_equal(x.asnumpy(), [22.5, 4.5])
    np.testing.assert_array_equal(net.w.asnumpy(), [2.0, 2.0])
    np.testing.assert_array_equal(outs[0], [7.5, 4.5])
    np.testing.assert_array_equal(outs[1], [24.5, 6.5])


# ------------------------------------------------------------------------------------------------- gradients
def test_gradient_computed_then_argument_updated():
    def step(w, x):
        loss, g = ms.value_and_grad(lambda v: (v * v * x).sum())(w)
        ops.assign(w, w - 0.1 * g)
        return loss, g

    def make():
        return (Parameter(t([1.0, 2.0, 3.0]), name="w"), t([1.0, 0.5, 2.0]))

    eager, compiled = _both(step, make)
    _assert_same(eager, compiled)
    # First call: g = 2 w x = [2, 2, 12]; w = [0.8, 1.8, 1.8].
    np.testing.assert_allclose(compiled[0][0][1], [2.0, 2.0, 12.0], rtol=1e-6)
    np.testing.assert_allclose(compiled[0][1][0], [0.8, 1.8, 1.8], rtol=1e-6)


def test_gradient_through_function_writing_a_copy_of_its_input():
    def loss(x):
        y = x * 1
        y.mul_(x)  # y = x²
        return y.sum()

    x = t([1.0, -2.0, 3.0])
    g_eager = ms.grad(loss)(x)
    g_jit = ms.jit(ms.grad(loss))(x)
    np.testing.assert_allclose(g_jit.asnumpy(), [2.0, -4.0, 6.0], rtol=1e-6)
    np.testing.assert_allclose(g_eager.asnumpy(), [2.0, -4.0, 6.0], rtol=1e-6)
    np.testing.assert_array_equal(x.asnumpy(), [1.0, -2.0, 3.0])


# ------------------------------------------------------------------------------------- dynamic shapes, disk cache
def test_dynamic_shape_graph_writes_back():
    @ms.jit(input_signature=(Tensor(shape=[None], dtype=ms.float32), Tensor(shape=[None], dtype=ms.float32)))
    def f(x, y):
        x.add_(y)
        return x.sum()

    for n in (3, 5, 3):
        x = t(np.arange(n))
        y = t(np.ones(n))
        for k in range(1, 3):
            s = f(x, y)
            np.testing.assert_allclose(x.asnumpy(), np.arange(n) + k)
            np.testing.assert_allclose(s.asnumpy(), (np.arange(n) + k).sum())
    assert f.compile_count == 1


def _disk_step(p, g):
    p.sub_(g * 0.5)
    return p * 1


def test_graph_from_disk_cache_writes_back(cache_dir):
    first = ms.jit(_disk_step)
    p = Parameter(t([4.0, 4.0]), name="p")
    first(p, t([2.0, 4.0]))
    np.testing.assert_array_equal(p.asnumpy(), [3.0, 2.0])
    again = ms.jit(_disk_step)  # a new function object: what a new process sees
    q = t([4.0, 4.0])
    r = again(q, t([2.0, 4.0]))
    assert again.disk_loads == 1 and again.trace_count == 0
    np.testing.assert_array_equal(q.asnumpy(), [3.0, 2.0])
    np.testing.assert_array_equal(r.asnumpy(), [3.0, 2.0])
    again(q, t([2.0, 4.0]))
    np.testing.assert_array_equal(q.asnumpy(), [2.0, 0.0])


def test_data_sink_step_writing_its_batch_returns_the_result():
    from kiln import dataset as ds

    data = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.float32).reshape(3, 2)}, shuffle=False).batch(1)

    def step(x):
        x.mul_(2.0)
        return x.sum()

    sink = ms.data_sink(step, data, sink_size=1)
    got = [float(sink().asnumpy()) for _ in range(3)]
    assert got == [2.0, 10.0, 18.0]


# --------------------------------------------------------------------------------- tensor-dependent control flow
def _if_setitem(x, c):
    y = x  # another name for the same tensor sees the write, as in PyNative
    if c.sum() > 0:
        x[0] = 5.0
    return x * 1 + y


def _while_setitem(x, n):
    i = Tensor(0, ms.int32)
    while i < n:
        x[1] = x[1] * 2
        i += 1
    return x + 0


def _if_rebind(x, c):
    y = x
    if c.sum() > 0:
        x = x + 1  # a new tensor: the argument is not written
    return x + y


def _if_methods(x, c):
    if c.sum() > 0:
        x.add_(1.0)
    else:
        ops.assign(x, x - 1.0)
    return x * 1


def _while_method(x, n):
    i = Tensor(0, ms.int32)
    while i < n:
        x.mul_(2.0)
        i += 1
    return x + 0


@pytest.mark.parametrize("fn, extra", [(_if_setitem, t([1.0])), (_if_setitem, t([-1.0])),
                                       (_while_setitem, Tensor(3, ms.int32)), (_if_rebind, t([1.0])),
                                       (_if_methods, t([1.0])), (_if_methods, t([-1.0])),
                                       (_while_method, Tensor(2, ms.int32))],
                         ids=["if-true", "if-false", "while", "if-rebind", "if-method-true", "if-method-false",
                              "while-method"])
def test_writes_inside_compiled_control_flow(fn, extra):
    eager, compiled = _both(fn, lambda: (t([1.0, 1.0]), extra), calls=2)
    _assert_same(eager, compiled)
