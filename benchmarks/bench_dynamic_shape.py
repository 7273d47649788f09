"""Dynamic shapes (kiln/_compiler/dynamic.py): what one graph for every batch size costs and saves.

A LeNet-style training step (TrainOneStepCell: 2 conv+ReLU+max-pool blocks, Dense 64-32-10, Momentum, sparse softmax
cross-entropy) on 1x16x16 images, run over batch sizes 1..N (each size once, the order shuffled):
  static    no set_inputs: one trace + compile per batch size (Kiln's default, and MindSpore's without set_inputs)
  dynamic   set_inputs(Tensor(shape=[None, 1, 16, 16]), Tensor(shape=[None])): one compile (three probe traces),
            then per new size a specialization (shape re-inference + memory plan)
--model gated: the same network whose construct adds a tensor-dependent `if` (an extra Dense+ReLU when the batch's
mean activation is positive) and a `while` (halving the logits until their largest magnitude is at most 8): If and
While nodes, whose branches and bodies a dynamic graph specializes per size too.
Reported: the time of the first call (compile), the mean time of a call with a new size (static: a compile; dynamic:
a specialization), the median steady-state step time at batch 32 for both (a cached shape: one dict lookup more for
the dynamic graph), and the number of compiles. Medians over --repeats.

    .venv/bin/python benchmarks/bench_dynamic_shape.py [--sizes 24] [--repeats 3] [--model gated]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import statistics
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln as ms  # noqa: E402 (after require_kiln())
from kiln import nn, ops, Tensor  # noqa: E402 (after require_kiln())


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 3, pad_mode="pad", padding=1)
        self.c2 = nn.Conv2d(6, 16, 3, pad_mode="pad", padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.flat = nn.Flatten()
        self.f1 = nn.Dense(16 * 4 * 4, 64)
        self.f2 = nn.Dense(64, 32)
        self.f3 = nn.Dense(32, 10)

    def construct(self, x):
        x = self.pool(ops.relu(self.c1(x)))
        x = self.pool(ops.relu(self.c2(x)))
        return self.f3(ops.relu(self.f2(ops.relu(self.f1(self.flat(x))))))


class GatedLeNet(LeNet):
    def __init__(self):
        super().__init__()
        self.gate = nn.Dense(32, 32)

    def construct(self, x):
        x = self.pool(ops.relu(self.c1(x)))
        x = self.pool(ops.relu(self.c2(x)))
        h = ops.relu(self.f2(ops.relu(self.f1(self.flat(x)))))
        if h.mean() > 0.05:
            h = ops.relu(self.gate(h)) + h
        y = self.f3(h)
        while ops.abs(y).max() > 8.0:
            y = y * 0.5
        return y


def run(dynamic, sizes, rng, model=LeNet):
    ms.set_seed(1)
    net = model()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                               nn.Momentum(net.trainable_params(), 0.01, 0.9))
    if dynamic:
        step.set_inputs(Tensor(shape=[None, 1, 16, 16], dtype=ms.float32), Tensor(shape=[None], dtype=ms.int32))
    data = {n: (Tensor(rng.normal(size=(n, 1, 16, 16)).astype(np.float32)),
                Tensor(rng.integers(0, 10, n).astype(np.int32))) for n in set(sizes) | {32}}
    t0 = time.perf_counter()
    step(*data[32]).asnumpy()
    first = time.perf_counter() - t0
    new = []
    for n in sizes:
        if n == 32:
            continue
        t0 = time.perf_counter()
        step(*data[n]).asnumpy()
        new.append(time.perf_counter() - t0)
    steady = []
    for _ in range(50):
        t0 = time.perf_counter()
        step(*data[32]).asnumpy()
        steady.append(time.perf_counter() - t0)
    return first, statistics.mean(new), statistics.median(steady), step._compiled_construct().compile_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, default=24)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", choices=("lenet", "gated"), default="lenet")
    args = ap.parse_args()
    model = GatedLeNet if args.model == "gated" else LeNet
    ms.set_context(mode=ms.GRAPH_MODE)
    rng = np.random.default_rng(0)
    sizes = list(range(1, args.sizes + 1))
    run(False, [1, 2], rng)  # warm-up: the first convolutions create oneDNN primitives, the first trace imports
    rows = {}
    for dynamic in (False, True):
        res = []
        for _ in range(args.repeats):
            rng.shuffle(sizes)
            res.append(run(dynamic, sizes, rng, model))
        rows["dynamic" if dynamic else "static"] = [statistics.median(r[k] for r in res) for k in range(3)] + \
            [res[0][3]]
    print(f"{model.__name__} train step, batch sizes 1..{args.sizes} once each, then batch 32 steady state "
          f"(median of {args.repeats})")
    print(f"{'':8} {'first call ms':>14} {'new size ms':>12} {'step@32 ms':>11} {'compiles':>9}")
    for name, (first, new, steady, compiles) in rows.items():
        print(f"{name:8} {first * 1e3:14.1f} {new * 1e3:12.2f} {steady * 1e3:11.3f} {compiles:9d}")


if __name__ == "__main__":
    main()
