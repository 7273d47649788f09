"""Ops whose output shape depends on the input's values (nonzero, masked_select, argwhere, unique,
unique_consecutive, x[mask] with a mask computed in the graph) inside jit / GRAPH_MODE: under jit_syntax_level=LAX
(the default, as MindSpore's) the function runs in PyNative for that signature, with one RuntimeWarning naming the
op and the user's line, and gives MindSpore 2.10's values; under STRICT tracing raises the op's precise error
(docs/graph_mode.md, "Ops with value-dependent output shapes")."""
import warnings

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops

X = np.array([3, 1, 3, 0, 2, 1], np.int32)
# MindSpore 2.10's values for X (GRAPH_MODE, CPU)
MS_UNIQUE = ([3, 1, 0, 2], [0, 1, 0, 2, 3, 1])  # values in first-appearance order, and the inverse indices
MS_NONZERO = [[0], [1], [2], [4], [5]]
MS_MASKED = [3, 3, 2]  # masked_select(X, X > 1)

CASES = {
    "nonzero": (lambda x: ops.nonzero(x), [MS_NONZERO]),
    "Tensor.nonzero": (lambda x: x.nonzero(), [MS_NONZERO]),
    "argwhere": (lambda x: ops.argwhere(x), [MS_NONZERO]),
    "masked_select": (lambda x: ops.masked_select(x, x > 1), [MS_MASKED]),
    "bool mask index": (lambda x: x[x > 1], [MS_MASKED]),
    "unique": (lambda x: ops.unique(x), list(MS_UNIQUE)),
    "unique_consecutive": (lambda x: ops.unique_consecutive(x), [[3, 1, 3, 0, 2, 1]]),
}


def _outs(r):
    return [o.asnumpy().tolist() for o in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("name", list(CASES))
def test_lax_runs_in_pynative_with_one_warning(name):
    fn, want = CASES[name]
    f = ms.jit(fn)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = _outs(f(ms.Tensor(X)))
        again = _outs(f(ms.Tensor(X[::-1].copy())))  # the same signature: no second warning, fresh values
    assert got == want
    assert again == _outs(fn(ms.Tensor(X[::-1].copy())))
    msgs = [str(m.message) for m in w if issubclass(m.category, RuntimeWarning)]
    assert len(msgs) == 1, msgs
    assert "whose output shape depends on tensor values" in msgs[0] and "PyNative" in msgs[0]
    assert __file__ in msgs[0]  # the user's line, not Kiln's


def test_lax_fallback_warns_once_when_threads_meet_the_function_at_once():
    """Threads that first call the same LAX-fallback function together each trace it, but only one EagerEntry enters
    the compile cache, and only its thread warns: exactly one RuntimeWarning (four before the fix), pointing at the
    caller's file; every thread gets the PyNative values."""
    import threading
    import time

    @ms.jit
    def f(x):
        time.sleep(0.05)  # the threads are tracing together when they reach the value read
        return x * int(x.sum())

    x = ms.Tensor(np.ones(3, np.float32))
    n = 4
    barrier = threading.Barrier(n)
    outs = [None] * n

    def run(i):
        barrier.wait()
        outs[i] = f(x).asnumpy()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    msgs = [m for m in w if issubclass(m.category, RuntimeWarning)]
    assert len(msgs) == 1, [str(m.message) for m in msgs]
    assert "reads a tensor's value in Python" in str(msgs[0].message) and msgs[0].filename == __file__
    for o in outs:
        np.testing.assert_array_equal(o, [3.0, 3.0, 3.0])


def test_a_graph_mode_cell_and_its_gradient():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.array([0.5, -1.0, 2.0, 1.5, -0.5, 3.0], np.float32)), name="w")

        def construct(self, x):
            return (ops.masked_select(self.w * x, x > 1) ** 2).sum()

    net = Net()
    x = ms.Tensor(X.astype(np.float32))
    grad_fn = ms.value_and_grad(net, None, net.trainable_params())
    loss_py, (g_py,) = grad_fn(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            loss_g, (g_g,) = ms.jit(grad_fn)(x)
            out = net(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    w, xv = net.w.asnumpy(), X.astype(np.float32)
    m = xv > 1
    want_g = np.where(m, 2 * w * xv * xv, 0.0)  # d/dw Σ_{x>1} (w·x)²
    np.testing.assert_allclose(loss_g.asnumpy(), np.sum((w * xv)[m] ** 2), rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), loss_py.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(g_g.asnumpy(), want_g, rtol=1e-6)
    np.testing.assert_array_equal(g_g.asnumpy(), g_py.asnumpy())


@pytest.mark.parametrize("name,exc", [("nonzero", RuntimeError), ("masked_select", RuntimeError),
                                      ("bool mask index", IndexError), ("unique", ValueError),
                                      ("unique_consecutive", ValueError)])
def test_strict_keeps_the_precise_error(name, exc):
    ms.set_context(jit_syntax_level=ms.STRICT)
    try:
        with pytest.raises(exc, match="depends on the"):
            ms.jit(CASES[name][0])(ms.Tensor(X))
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)


def test_unique_keeps_every_nan_apart():
    """MindSpore 2.10's ops.unique (and the Unique primitive) treat each NaN as a value of its own (NaN != NaN):
    [inf, nan, -inf, inf, nan] gives [inf, nan, -inf, nan] with idx [0, 1, 2, 0, 3]; [[nan, 2], [2, nan]] (float64)
    gives [nan, 2, nan], idx [[0, 1], [1, 2]]; -0.0 and 0.0 are one value ([-0, 0, 1, -0] -> [-0, 1], idx
    [0, 0, 1, 0]). Kiln used to merge the NaNs ([inf, nan, -inf], idx [0, 1, 2, 0, 1]). Also a bfloat16 input
    (read as float32), in both modes (LAX runs the function in PyNative)."""
    cases = [(np.array([np.inf, np.nan, -np.inf, np.inf, np.nan], np.float32),
              [np.inf, np.nan, -np.inf, np.nan], [0, 1, 2, 0, 3]),
             (np.array([[np.nan, 2.0], [2.0, np.nan]]), [np.nan, 2.0, np.nan], [[0, 1], [1, 2]]),
             (np.array([-0.0, 0.0, 1.0, -0.0], np.float32), [-0.0, 1.0], [0, 0, 1, 0])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a, want_y, want_idx in cases:
            for f in (ops.unique, ops.Unique(), ms.jit(lambda t: ops.unique(t))):
                y, idx = f(ms.Tensor(a))
                np.testing.assert_array_equal(y.asnumpy(), np.array(want_y, a.dtype))
                assert idx.asnumpy().tolist() == want_idx and idx.dtype == ms.int32
        y, idx = ops.unique(ms.Tensor(np.array([np.nan, 1.0, np.nan, 1.0], np.float32)).astype(ms.bfloat16))
        assert y.dtype == ms.bfloat16 and idx.asnumpy().tolist() == [0, 1, 2, 1]
        np.testing.assert_array_equal(y.astype(ms.float32).asnumpy(), [np.nan, 1.0, np.nan])
