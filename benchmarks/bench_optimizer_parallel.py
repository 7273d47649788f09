"""Optimizer parallel (set_auto_parallel_context(enable_parallel_optimizer=True), ZeRO-1) against plain data
parallel, for 1, 2 and 4 processes on this machine, each run started by `python -m kiln.msrun`.

    .venv/bin/python benchmarks/bench_optimizer_parallel.py [--procs 1,2,4] [--hidden 1024] [--layers 4]
        [--batch 64] [--steps 10] [--optimizer adam] [--mode graph]
    .venv/bin/python benchmarks/bench_optimizer_parallel.py --procs 1,2 --hidden 64 --steps 3   # does it run?

The model is an MLP of --layers Dense(hidden, hidden) layers with Tanh, trained with MSE on a fixed global batch
(--batch rows, split over the processes; gradients averaged by nn.DistributedGradReducer). For each process count
both variants run (with 1 process they are the same: nothing is sliced). Reported per rank 0:
  - state MB: the bytes of the optimizer's state Parameters (Adam's moment1/moment2, Momentum's moments, ...) on one
    process, measured from the Parameters (kiln.nn.optim._parallel.state_bytes);
  - ms/step: the median over --steps timed steps after 2 warm-up steps (the first compiles); the two variants'
    steps alternate, so that the other jobs of a shared machine slow both alike;
  - comm MB/step: the bytes each process sends in the collectives of one step by the ring algorithms' count
    (all-reduce 2(N-1)/N·B, reduce-scatter and all-gather (N-1)/N·B each, B = the gradient bytes), so the two
    variants move the same volume: optimizer parallel trades the all-reduce for a reduce-scatter + all-gather;
  - max |w_zero - w_dp|: the largest weight difference between the variants after the same steps.
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
    from kiln import Tensor, nn, ops
    from kiln.communication import get_group_size, get_rank, init
    from kiln.nn.optim import _parallel
    init()
    rank, size = get_rank(), get_group_size()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    rng = np.random.RandomState(0)
    x = rng.randn(args.batch, args.hidden).astype(np.float32)
    y = rng.randn(args.batch, args.hidden).astype(np.float32)
    per = args.batch // size
    xs, ys = Tensor(x[rank * per:(rank + 1) * per]), Tensor(y[rank * per:(rank + 1) * per])
    runs = {}
    for zero in (False, True):  # both made first (each reads the context when made), then timed alternately
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                     enable_parallel_optimizer=zero)
        ms.set_seed(1)
        layers = []
        for _ in range(args.layers):
            layers += [nn.Dense(args.hidden, args.hidden), nn.Tanh()]
        net = nn.SequentialCell(layers[:-1])
        if args.optimizer == "adam":
            opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
        else:
            opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
        loss_fn = nn.MSELoss()
        grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)
        reducer = nn.DistributedGradReducer(opt.parameters, mean=True)

        def step(a, b):
            loss, grads = grad_fn(a, b)
            return ops.depend(loss, opt(reducer(grads)))
        step = ms.jit(step) if args.mode == "graph" else step
        for _ in range(2):
            step(xs, ys).asnumpy()
        runs[zero] = (step, opt, [])
    for _ in range(args.steps):  # alternating, so that the load of the shared machine hits both alike
        for zero in (False, True):
            step, _, times = runs[zero]
            t0 = time.perf_counter()
            step(xs, ys).asnumpy()
            times.append(time.perf_counter() - t0)
    for zero in (False, True):
        _, opt, times = runs[zero]
        grad_bytes = sum(int(p.nbytes) for p in opt.parameters)
        sliced = opt._opt_shards is not None
        comm = 2 * (size - 1) / size * grad_bytes  # all-reduce, or reduce-scatter + all-gather: the same volume
        if rank == 0:
            print(f"RESULT {size} {'zero' if zero else 'dp'} {_parallel.state_bytes(opt)} "
                  f"{1e3 * float(np.median(times)):.3f} {comm} {int(sliced)}", flush=True)
    if rank == 0:
        diff = max(float(np.abs(a.asnumpy() - b.asnumpy()).max())
                   for a, b in zip(runs[False][1].parameters, runs[True][1].parameters))
        print(f"DIFF {size} {diff:.3g}", flush=True)


def _run(n, args):
    text, threads = run_msrun_workers(__file__, n, [f"--hidden={args.hidden}", f"--layers={args.layers}",
                                                    f"--batch={args.batch}", f"--steps={args.steps}",
                                                    f"--optimizer={args.optimizer}", f"--mode={args.mode}"])
    rows = [line.split()[1:] for line in text.splitlines() if line.startswith("RESULT")]
    diff = next(line.split()[2] for line in text.splitlines() if line.startswith("DIFF"))
    return rows, diff, threads


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--procs", default="1,2,4")
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--optimizer", choices=("adam", "momentum"), default="adam")
    p.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    procs = [int(v) for v in args.procs.split(",")]
    if any(args.batch % n or args.hidden % n for n in procs):
        p.error("--batch and --hidden must be divisible by every --procs count")
    if args.worker:
        _worker(args)
        return 0
    require_kiln()  # kiln.msrun and the workers run in this python
    warn_if_busy()
    print(f"MLP {args.layers} x Dense({args.hidden}, {args.hidden}), {args.optimizer}, global batch {args.batch}, "
          f"mode {args.mode}, {os.cpu_count()} cores")
    print(f"{'procs':>5} {'threads':>7} {'variant':>7} {'sliced':>6} {'state MB':>9} {'ms/step':>9} "
          f"{'comm MB/step':>12} {'max|w_zero-w_dp|':>17}")
    for n in procs:
        rows, diff, threads = _run(n, args)
        for size, variant, state, ms_step, comm, sliced in rows:
            print(f"{size:>5} {threads:>7} {variant:>7} {'yes' if sliced == '1' else 'no':>6} "
                  f"{int(state) / 2 ** 20:>9.2f} {float(ms_step):>9.2f} {float(comm) / 2 ** 20:>12.2f} "
                  f"{diff if variant == 'zero' else '':>17}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
