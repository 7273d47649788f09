"""What kiln.profiler costs: a small LeNet-like training loop (PyNative, batch 16, 28x28x1) timed without a
Profiler, then inside `with Profiler(...)` calling `prof.step()` each step, in alternating blocks.

    .venv/bin/python benchmarks/bench_profiler.py [--steps 20] [--blocks 5]

Prints the median step time of each side and the overhead (on / off - 1). "off" runs with no Profiler object at all
(no hooks are installed then: kiln/profiler/_trace.py); "on" records host events (every Cell call, the optimizer)
and the per-op kernel counters, and finishes each block with analyse() (not timed: it writes files).
"""
import argparse
import statistics
import tempfile
import time

import numpy as np

from _env import require_kiln  # (benchmarks/ is sys.path[0] when a script runs)


def lenet(nn):
    """LeNet-5 (1x28x28 -> 10) as a kiln Cell."""
    class LeNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 4 * 4, 120)
            self.fc2 = nn.Dense(120, 84)
            self.fc3 = nn.Dense(84, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            x = self.flatten(x)
            return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))
    return LeNet()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="timed steps per block")
    ap.add_argument("--blocks", type=int, default=5, help="blocks per side (alternating)")
    args = ap.parse_args()
    kiln = require_kiln()
    from kiln import nn
    from kiln.profiler import Profiler
    net = lenet(nn)
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    grad = kiln.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)
    rng = np.random.default_rng(0)
    x = kiln.Tensor(rng.standard_normal((16, 1, 28, 28)).astype(np.float32))
    y = kiln.Tensor(rng.integers(0, 10, 16).astype(np.int32))

    def step():
        loss, g = grad(x, y)
        opt(g)
        return loss
    for _ in range(5):
        step()
    times = {"off": [], "on": []}
    with tempfile.TemporaryDirectory() as tmp:
        for b in range(args.blocks):
            for side in (("off", "on") if b % 2 == 0 else ("on", "off")):
                if side == "off":
                    for _ in range(args.steps):
                        t0 = time.perf_counter()
                        step()
                        times["off"].append(time.perf_counter() - t0)
                else:
                    prof = Profiler(output_path=tmp)
                    for _ in range(args.steps):
                        t0 = time.perf_counter()
                        step()
                        prof.step()
                        times["on"].append(time.perf_counter() - t0)
                    prof.analyse()
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print(f"step median: off {off * 1e3:.3f} ms, on {on * 1e3:.3f} ms, overhead {100 * (on / off - 1):+.1f}%")


if __name__ == "__main__":
    main()
