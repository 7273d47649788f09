"""Two Python threads training conv nets at once (issue 7, item 13): every cached kernel object (oneDNN primitives,
their scratchpads, streams, the allocator, random streams, compiled graphs) must be safe to use from any thread, and
kernels run without the GIL so that the threads really overlap. Each thread's run must equal the same run alone."""
import threading

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops, _core

STEPS = 12


class ConvNet(nn.Cell):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3, pad_mode="pad", padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(channels, 8, 3, pad_mode="same")
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8 * 4 * 4, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(self.flatten(self.relu(self.conv2(x))))


def make_job(seed, mode):
    """A net, its data and a `run()` that trains it and returns (losses, final parameters)."""
    ms.set_seed(seed)  # initializers draw from NumPy's global RNG: nets are built in the main thread
    net = ConvNet(4 + seed)
    rng = np.random.RandomState(seed)
    x = Tensor(rng.randn(16, 1, 8, 8).astype(np.float32))
    y = Tensor(rng.randint(0, 10, 16).astype(np.int32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

    def step(a, b):
        loss, grads = grad_fn(a, b)
        opt(grads)
        return loss

    if mode == "graph":
        step = ms.jit(step)

    def run():
        losses = [float(step(x, y).asnumpy()) for _ in range(STEPS)]
        return losses, {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    return run


def run_concurrently(jobs):
    results, errors = [None] * len(jobs), []
    barrier = threading.Barrier(len(jobs))

    def body(i):
        try:
            barrier.wait()
            results[i] = jobs[i]()
        except BaseException as e:  # noqa: BLE001 — re-raised in the main thread
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.fixture
def release_gil_for_every_kernel():
    old = _core._gil_release_threshold()
    _core._set_gil_release_threshold(0)  # every kernel without the GIL: the most overlap, the most races exposed
    yield
    _core._set_gil_release_threshold(old)


@pytest.mark.parametrize("modes", [("pynative", "pynative"), ("graph", "graph"), ("pynative", "graph")])
def test_two_threads_train_conv_nets_as_alone(modes, release_gil_for_every_kernel):
    alone = [make_job(seed, mode)() for seed, mode in enumerate(modes)]
    together = run_concurrently([make_job(seed, mode) for seed, mode in enumerate(modes)])
    for (la, pa), (lt, pt) in zip(alone, together):
        assert all(np.isfinite(la))
        np.testing.assert_allclose(lt, la, rtol=1e-6, atol=1e-7)
        assert pa.keys() == pt.keys()
        for k in pa:
            np.testing.assert_allclose(pt[k], pa[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_same_compiled_function_from_two_threads(release_gil_for_every_kernel):
    # One Executable shared by two threads: runs of it are serialized (its memory plan is shared), results exact.
    w = Tensor(np.random.RandomState(0).randn(8, 1, 3, 3).astype(np.float32))
    f = ms.jit(lambda a: ops.sum(ops.relu(ops.conv2d(a, w, pad_mode="pad", padding=1)), (1, 2, 3)))
    xs = [Tensor(np.random.RandomState(i).randn(4, 1, 12, 12).astype(np.float32)) for i in range(2)]
    want = [f(x).asnumpy() for x in xs]

    def job(x):
        return lambda: [f(x).asnumpy() for _ in range(40)]
    got = run_concurrently([job(x) for x in xs])
    for g, w_ in zip(got, want):
        for r in g:
            np.testing.assert_array_equal(r, w_)


def test_kernels_release_the_gil():
    # While this thread is inside a long kernel, another thread's Python code runs. The switch interval is made huge
    # so that the GIL changes hands only where a thread gives it up itself (the spinner after every tick, through
    # time.sleep(0); this thread only if the kernel releases it): ticks seen while `inside` is set are ticks made
    # during the kernel.
    import sys
    import time
    big = Tensor(np.random.RandomState(0).randn(2, 32, 64, 64).astype(np.float32))
    w = Tensor(np.random.RandomState(1).randn(32, 32, 3, 3).astype(np.float32))
    inside, done, ticks = [False], threading.Event(), [0]

    def spin():
        while not done.is_set():
            if inside[0]:
                ticks[0] += 1
            time.sleep(0)
    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    sys.setswitchinterval(1000.0)
    try:
        for _ in range(3):
            inside[0] = True
            ops.conv2d(big, w, pad_mode="pad", padding=1)
            inside[0] = False
    finally:
        sys.setswitchinterval(old)
        done.set()
        t.join()
    assert ticks[0] > 0
