"""Operator parallel (Primitive.shard strategies, semi-auto parallel; kiln/parallel/_op_shard.py): memory per process
and time per step for 1, 2 and 4 processes on this machine, each run started by `python -m kiln.msrun`.

    .venv/bin/python benchmarks/bench_operator_parallel.py [--procs 1,2,4] [--hidden 1024] [--layers 4]
        [--batch 64] [--steps 5]
    .venv/bin/python benchmarks/bench_operator_parallel.py --procs 1,2 --hidden 64 --steps 2   # does it run?

The model: --layers MatMul layers (hidden x hidden weights, ReLU between) cut Megatron-style over N processes:
odd layers by columns (strategy ((1, 1), (1, N)): no reduction), even layers by rows (((1, N), (N, 1)): partial sums
all-reduced); Adam; MSE on a fixed batch (every process the whole batch: full_batch=True), PyNative. Reported by
rank 0:
  - param+state MB: the bytes of the network's Parameters and the optimizer's state Parameters on one process
    (measured from the Parameters after the first step, when they are sliced);
  - alloc MB: kiln.runtime.memory_allocated() after a step (everything alive: weights, states, data);
  - peak MB: kiln.runtime.max_memory_allocated() during one step (reset before it);
  - ms/step: the median over --steps timed steps after one warm-up step;
  - comm MB/step: the bytes this process sends in the step's collectives by the ring algorithms' count.
Each process gets OMP_NUM_THREADS = cores / N.
"""
import argparse
import os
import sys
import time

from _env import require_kiln, run_msrun_workers, warn_if_busy


def _worker(args):
    import numpy as np
    ms = require_kiln()
    from kiln import Parameter, Tensor, nn, ops
    from kiln.communication import get_group_size, get_rank, init
    from kiln.parallel import _op_shard
    init()
    rank, n = get_rank(), get_group_size()
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    rng = np.random.RandomState(0)
    h = args.hidden

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weights = [Parameter(Tensor((rng.randn(h, h) / np.sqrt(h)).astype(np.float32)), name=f"w{i}")
                            for i in range(args.layers)]
            for i, w in enumerate(self.weights):
                setattr(self, f"w{i}", w)
            self.mms = [ops.MatMul().shard(((1, 1), (1, n)) if i % 2 == 0 else ((1, n), (n, 1)))
                        for i in range(args.layers)]
            self.relu = ops.ReLU()

        def construct(self, x):
            for i, (mm, w) in enumerate(zip(self.mms, self.weights)):
                x = mm(x, w)
                if i + 1 < len(self.mms):
                    x = self.relu(x)
            return x

    net = Net()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    loss_fn = nn.MSELoss()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    x = Tensor(rng.randn(args.batch, h).astype(np.float32))
    y = Tensor(rng.randn(args.batch, h).astype(np.float32))
    step(x, y).asnumpy()  # slices the weights and the optimizer states
    nbytes = sum(int(p.nbytes) for p in opt.get_parameters() if p.ndim == 2)
    times = []
    rt = ms.runtime
    for _ in range(args.steps):
        rt.reset_peak_memory_stats()
        c0 = _op_shard.comm_bytes[0]
        t0 = time.perf_counter()
        step(x, y).asnumpy()
        times.append(time.perf_counter() - t0)
        comm = _op_shard.comm_bytes[0] - c0
    if rank == 0:
        print(f"RESULT {n} {nbytes} {rt.memory_allocated()} {rt.max_memory_allocated()} "
              f"{1e3 * float(np.median(times)):.3f} {comm}", flush=True)


def _run(n, args):
    text, threads = run_msrun_workers(__file__, n, [f"--hidden={args.hidden}", f"--layers={args.layers}",
                                                    f"--batch={args.batch}", f"--steps={args.steps}"])
    return [line.split()[1:] for line in text.splitlines() if line.startswith("RESULT")][0], threads


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--procs", default="1,2,4")
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    procs = [int(v) for v in args.procs.split(",")]
    if any(args.hidden % n for n in procs):
        p.error("--hidden must be divisible by every --procs count")
    if args.worker:
        _worker(args)
        return 0
    require_kiln()
    warn_if_busy()
    print(f"{args.layers} MatMul layers {args.hidden}x{args.hidden} (Megatron-style cuts), Adam, batch {args.batch}, "
          f"PyNative, {os.cpu_count()} cores")
    print(f"{'procs':>5} {'threads':>7} {'param+state MB':>14} {'alloc MB':>9} {'peak MB':>8} {'ms/step':>9} "
          f"{'comm MB/step':>12}")
    mib = 2 ** 20
    for n in procs:
        (size, nbytes, alloc, peak, ms_step, comm), threads = _run(n, args)
        print(f"{size:>5} {threads:>7} {int(nbytes) / mib:>14.2f} {int(alloc) / mib:>9.2f} {int(peak) / mib:>8.2f} "
              f"{float(ms_step):>9.2f} {int(comm) / mib:>12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
