"""kiln.runtime.profile: the per-op profiler (off by default; exact call counts in PyNative and Graph mode; thread-safe
aggregation; its errors)."""
import threading

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, runtime


def _calls(prof, mode=None):
    return {r["op"]: r["calls"] for r in prof.stats(mode)}


@pytest.fixture
def x():
    return ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)


def test_off_by_default_and_nothing_counted_outside_a_block(x):
    assert runtime.is_profiling() is False
    ops.add(x, x)  # runs untimed
    with runtime.profile() as prof:
        assert runtime.is_profiling() is True
    assert runtime.is_profiling() is False
    assert prof.stats() == []
    assert prof.total_ms == 0.0
    assert prof.wall_ms >= 0.0


def test_pynative_counts_each_op_call(x):
    w = ms.Tensor(np.ones((4, 2), np.float32))
    ops.matmul(x, w)  # the first matmul of a shape builds its oneDNN primitive: outside the block
    with runtime.profile() as prof:
        y = ops.add(x, x)
        y = ops.mul(y, y)
        y = ops.mul(y, x)
        z = ops.matmul(y, w)
    assert _calls(prof) == {"Add": 1, "Mul": 2, "BatchMatMul": 1}
    assert {r["mode"] for r in prof.stats()} == {"PyNative"}
    assert prof.stats("Graph") == []
    np.testing.assert_allclose(z.asnumpy(), ((2 * x.asnumpy()) ** 2 * x.asnumpy()) @ np.ones((4, 2)), rtol=1e-6)
    rows = prof.stats()
    assert prof.total_ms > 0 and all(r["total_ms"] >= 0 for r in rows)
    assert prof.total_ms == pytest.approx(sum(r["total_ms"] for r in rows))
    assert prof.wall_ms >= prof.total_ms
    assert [r["total_ms"] for r in rows] == sorted((r["total_ms"] for r in rows), reverse=True)
    for r in rows:
        assert r["mean_us"] == pytest.approx(r["total_ms"] * 1e3 / r["calls"])
        assert r["percent"] == pytest.approx(100 * r["total_ms"] / prof.wall_ms)


def test_graph_mode_counts_each_instruction_per_run(x):
    w = ms.Tensor(np.ones((4, 2), np.float32))

    def f(a, b):
        return ops.matmul(a, b).sum()

    with runtime.profile() as eager:
        want = f(x, w)
    jf = ms.jit(f)
    jf(x, w)  # traces and compiles: not part of the block
    with runtime.profile() as prof:
        for _ in range(3):
            got = jf(x, w)
    assert got.asnumpy() == pytest.approx(want.asnumpy())
    # The same ops as PyNative ran once (this graph has nothing to fuse), each run three times, all in Graph mode.
    assert _calls(prof) == {op: 3 for op in _calls(eager)}
    assert set(_calls(eager)) == {"BatchMatMul", "ReduceSum"}
    assert prof.stats("PyNative") == [] and prof.total_ms > 0


def test_training_step_both_modes_same_kernels():
    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    loss_fn = nn.MSELoss()
    grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

    def step(a, b):
        loss, grads = grad_fn(a, b)
        return ops.depend(loss, opt(grads))

    a = ms.Tensor(np.ones((2, 4), np.float32))
    b = ms.Tensor(np.zeros((2, 3), np.float32))
    step(a, b)
    with runtime.profile() as eager:
        step(a, b)
    jstep = ms.jit(step)
    jstep(a, b)
    with runtime.profile() as graph:
        jstep(a, b)
        jstep(a, b)
    e, g = _calls(eager, "PyNative"), _calls(graph, "Graph")
    assert e and g and _calls(graph, "PyNative") == {}
    # Every call of a graph op ran twice; the matmuls of forward and backward are there in both modes.
    assert all(c % 2 == 0 for c in g.values())
    assert e.get("BatchMatMul", 0) + e.get("MatMul", 0) >= 2
    assert sum(c for op, c in g.items() if "MatMul" in op) >= 4


def test_nested_and_overlapping_profiles(x):
    with runtime.profile() as outer:
        ops.add(x, x)
        with runtime.profile() as inner:
            ops.sub(x, x)
        assert runtime.is_profiling()
        ops.add(x, x)
    assert not runtime.is_profiling()
    assert _calls(inner) == {"Sub": 1}
    assert _calls(outer) == {"Add": 2, "Sub": 1}


def test_threads_aggregate_exactly(x):
    n_threads, n_ops = 4, 200
    barrier = threading.Barrier(n_threads)
    errors = []

    def work():
        try:
            barrier.wait()
            for _ in range(n_ops):
                ops.sub(x, x)
        except Exception as e:  # noqa: BLE001 - reported by the assert below
            errors.append(e)

    with runtime.profile() as prof:
        threads = [threading.Thread(target=work) for _ in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert _calls(prof) == {"Sub": n_threads * n_ops}


def test_profile_per_thread_blocks_see_the_whole_process(x):
    # A block opened in one thread counts the ops of every thread during its span (documented behaviour).
    started, release = threading.Event(), threading.Event()
    result = {}

    def other():
        with runtime.profile() as p:
            started.set()
            release.wait(10)
        result["p"] = p

    t = threading.Thread(target=other)
    t.start()
    started.wait(10)
    ops.neg(x)
    release.set()
    t.join()
    assert _calls(result["p"]) == {"Neg": 1}


def test_table_text(x):
    with runtime.profile() as prof:
        for _ in range(3):
            ops.add(x, x)
        ops.mul(x, x)
    text = prof.table(top=1)
    lines = text.splitlines()
    assert lines[0].split() == ["op", "mode", "calls", "total", "ms", "mean", "us", "%", "wall"]
    assert lines[2].split()[:3] in (["Add", "PyNative", "3"], ["Mul", "PyNative", "1"])
    assert "(1 more ops)" in text and "(outside kernels)" in text and "(wall)" in text


def test_errors_and_disabled_after_an_exception(x):
    prof = runtime.profile()
    with pytest.raises(RuntimeError, match="after the"):
        prof.stats()
    with pytest.raises(ZeroDivisionError):
        with prof:
            ops.add(x, x)
            1 / 0  # noqa: B018 (raises inside the profiler)
    assert not runtime.is_profiling()
    assert _calls(prof) == {"Add": 1}
    with pytest.raises(RuntimeError, match="entered only once"):
        with prof:
            pass
    assert not runtime.is_profiling()
    with pytest.raises(ValueError, match="'mode' must be 'PyNative', 'Graph' or None, but got 'graph'"):
        prof.stats("graph")
    with pytest.raises(TypeError, match="'mode' must be a str or None, but got int"):
        prof.stats(1)
    with pytest.raises(ValueError, match="'top' must be >= 1, but got 0"):
        prof.table(top=0)
    with pytest.raises(TypeError, match="'top' must be an int, but got float"):
        prof.table(top=2.0)
    with pytest.raises(TypeError, match="'top' must be an int, but got bool"):
        prof.table(top=True)
