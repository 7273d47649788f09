"""Data-parallel scaling of the LeNet example (examples/train_lenet_digits.py: scikit-learn digits, LeNet, Adam)
from 1 to N processes on this machine, each run started by `python -m kiln.msrun`.

    .venv/bin/python benchmarks/bench_lenet_scaling.py [--procs 1,2] [--epochs 4] [--batch 64] [--mode graph]
    .venv/bin/python benchmarks/bench_lenet_scaling.py --procs 1 --epochs 2 --batch 256   # seconds: does it run?

The global batch stays --batch (each of N processes takes batch/N rows of it, gradients averaged by
nn.DistributedGradReducer), so every run does the same training (the same weights after each step, up to float
rounding). Reported: training images per second over the epochs after the first (the first compiles), the speed-up
over 1 process, the time share of the gradient all-reduce (measured separately on rank 0: the same reducer call
timed on its own) and the test accuracy. Each process gets OMP_NUM_THREADS = cores / N, so that N processes do not
oversubscribe the cores.
"""
import argparse
import os
import sys
import time

from _env import EXAMPLES, require_kiln, run_msrun_workers, warn_if_busy


def _worker(args):
    sys.path.insert(0, EXAMPLES)  # train_lenet_digits (a helper, not the kiln package)
    import numpy as np
    ms = require_kiln()
    from kiln import Tensor, nn, ops
    from kiln.communication import get_group_size, get_rank, init
    from train_lenet_digits import LeNet, load_data
    init()
    rank, size = get_rank(), get_group_size()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    ms.set_seed(1)
    (x_train, y_train), (x_test, y_test) = load_data()
    net = LeNet()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), learning_rate=0.005)
    grad_fn = ms.value_and_grad(lambda d, l: loss_fn(net(d), l), None, opt.parameters)
    reducer = nn.DistributedGradReducer(opt.parameters)

    def step(d, l):
        loss, grads = grad_fn(d, l)
        return ops.depend(loss, opt(reducer(grads)))
    step = ms.jit(step) if args.mode == "graph" else step
    per = args.batch // size
    rng = np.random.default_rng(1)
    times, images = [], 0
    for epoch in range(args.epochs):
        perm = rng.permutation(len(x_train))
        t0 = time.perf_counter()
        n = 0
        for i in range(0, len(perm) - args.batch + 1, args.batch):
            idx = perm[i + rank * per:i + (rank + 1) * per]
            step(Tensor(x_train[idx]), Tensor(y_train[idx])).asnumpy()
            n += args.batch
        if epoch:
            times.append(time.perf_counter() - t0)
            images += n
    # the all-reduce's share: the reducer alone on gradients of the model's shapes
    grads = tuple(ms.Tensor(np.ones(p.shape, np.float32)) for p in opt.parameters)
    reduce_fn = ms.jit(lambda *g: reducer(g)) if args.mode == "graph" else (lambda *g: reducer(g))
    for _ in range(5):
        reduce_fn(*grads)
    t0 = time.perf_counter()
    reps = 50
    for _ in range(reps):
        reduce_fn(*grads)
    t_reduce = (time.perf_counter() - t0) / reps
    steps_per_epoch = len(x_train) // args.batch
    net.set_train(False)
    acc = float((net(Tensor(x_test)).asnumpy().argmax(1) == y_test).mean())
    if rank == 0:
        total = sum(times)
        share = t_reduce * steps_per_epoch * len(times) / total
        print(f"RESULT {size} {images / total:.1f} {share:.4f} {acc:.4f} {t_reduce * 1e3:.3f}", flush=True)


def _run(n, args):
    text, threads = run_msrun_workers(__file__, n, [f"--epochs={args.epochs}", f"--batch={args.batch}",
                                                    f"--mode={args.mode}"])
    line = next(l for l in text.splitlines() if l.startswith("RESULT"))
    _, size, ips, share, acc, ms_reduce = line.split()
    return float(ips), float(share), float(acc), float(ms_reduce), threads


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--procs", default="1,2")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.epochs < 2:
        p.error("--epochs must be >= 2 (the first epoch compiles and is not timed)")
    if args.worker:
        _worker(args)
        return 0
    require_kiln()  # kiln.msrun and the workers run in this python
    warn_if_busy()
    base = None
    print(f"LeNet digits, global batch {args.batch}, mode {args.mode}, {os.cpu_count()} cores")
    print(f"{'procs':>5} {'threads':>7} {'images/s':>9} {'speed-up':>8} {'all-reduce':>10} {'ms/reduce':>9} {'acc':>6}")
    for n in (int(v) for v in args.procs.split(",")):
        ips, share, acc, ms_reduce, threads = _run(n, args)
        base = base or ips
        print(f"{n:>5} {threads:>7} {ips:>9.1f} {ips / base:>7.2f}x {100 * share:>9.1f}% {ms_reduce:>9.3f} {acc:>6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
