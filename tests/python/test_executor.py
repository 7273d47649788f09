"""The executor's run state (src/graph/executor.cpp): stable values bound once, views of the planned buffers made
once, nothing kept alive between runs, errors in the middle of a run, concurrent runs."""
import threading

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, ops
from kiln import _core


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def f_view(x, y):
    # x @ y is a planned intermediate; its Reshape is a view of that buffer (made once by the executor)
    z = ops.reshape(ops.matmul(x, y), (-1,))
    return ops.sum(z * z) + ops.sum(z)


def ref_view(x, y):
    z = (x.astype(np.float64) @ y.astype(np.float64)).reshape(-1)
    return (z * z).sum() + z.sum()


def test_view_of_planned_buffer_follows_each_runs_inputs():
    jf = ms.jit(f_view)
    for seed in range(4):
        x, y = arr(5, 3, seed=seed), arr(3, 4, seed=seed + 10)
        np.testing.assert_allclose(jf(Tensor(x), Tensor(y)).asnumpy(), ref_view(x, y), rtol=1e-5)
    assert jf.trace_count == 1
    assert "Reshape" in jf.graphs[0].graph.to_text()


def test_capture_read_by_reference_after_set_data():
    p = Parameter(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="p")

    @ms.jit
    def f(x):
        return ops.reshape(p, (3, 2)) * x  # a view of a capture: made at every run

    x = Tensor(np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(f(x).asnumpy(), np.arange(6, dtype=np.float32).reshape(3, 2))
    p.set_data(Tensor(np.full((2, 3), 7.0, np.float32)))
    np.testing.assert_array_equal(f(x).asnumpy(), np.full((3, 2), 7.0, np.float32))
    ops.assign(p, Tensor(np.full((2, 3), -1.0, np.float32)))
    np.testing.assert_array_equal(f(x).asnumpy(), np.full((3, 2), -1.0, np.float32))
    assert f.trace_count == 1


def test_run_keeps_no_reference_to_arguments_or_results():
    jf = ms.jit(lambda x: ops.exp(x) * 2.0 + ops.reshape(ops.matmul(x, x), (-1, 512)))
    jf(Tensor(arr(512, 512)))  # compile, materialize the planned buffers
    exe = jf.graphs[0].executable
    base = _core._allocator_stats()["bytes_in_use"]
    x = Tensor(arr(512, 512, seed=1))
    out = exe.run([x])
    assert _core._allocator_stats()["bytes_in_use"] >= base + 2 * 512 * 512 * 4
    xn = x.asnumpy()
    np.testing.assert_allclose(out[0].asnumpy(), np.exp(xn) * 2 + xn @ xn, rtol=1e-4, atol=1e-3)
    del x, out, xn  # (asnumpy may view the tensor's memory)
    assert _core._allocator_stats()["bytes_in_use"] == base


def test_wrong_arguments_are_refused_and_the_next_run_works():
    jf = ms.jit(f_view)
    x, y = arr(5, 3), arr(3, 4, seed=1)
    jf(Tensor(x), Tensor(y))
    exe = jf.graphs[0].executable
    with pytest.raises(ValueError, match=r"argument 1 must be Float32\[3, 4\], but got Float32\[4, 3\]"):
        exe.run([Tensor(x), Tensor(arr(4, 3))])
    with pytest.raises(ValueError, match="takes 2 tensor arguments, but got 1"):
        exe.run([Tensor(x)])
    np.testing.assert_allclose(exe.run([Tensor(x), Tensor(y)])[0].asnumpy(), ref_view(x, y), rtol=1e-5)


def test_kernel_error_mid_run_names_the_line_and_the_next_run_works():
    @ms.jit
    def f(table, idx):
        t = ops.reshape(ops.matmul(table, table), (-1,))  # some planned work before the failing op
        return ops.gather(t, idx, 0) * 2.0

    table = Tensor(arr(3, 3))
    with pytest.raises((ValueError, IndexError), match="test_executor.py"):
        f(table, Tensor(np.array([0, 99], np.int32)))
    good = f(table, Tensor(np.array([8, 0], np.int32))).asnumpy()
    tn = table.asnumpy()
    np.testing.assert_allclose(good, (tn @ tn).reshape(-1)[[8, 0]] * 2, rtol=1e-5)


def test_concurrent_runs_of_one_executable():
    jf = ms.jit(f_view)
    inputs = [(arr(5, 3, seed=s), arr(3, 4, seed=s + 50)) for s in range(8)]
    jf(Tensor(inputs[0][0]), Tensor(inputs[0][1]))
    exe = jf.graphs[0].executable
    errors = []

    def work(k):
        try:
            x, y = inputs[k]
            for _ in range(50):
                r = exe.run([Tensor(x), Tensor(y)])[0].asnumpy()
                np.testing.assert_allclose(r, ref_view(x, y), rtol=1e-5)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
