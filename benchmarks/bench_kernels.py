"""Kiln-only kernel microbenchmarks: forward and forward+backward time (µs, median) of the elementwise activations,
MaxPool and BatchNorm, at 1M elements and at a small size, on 1 and 2 threads.

Each thread count runs in its own subprocess with OMP_NUM_THREADS set (oneDNN and Kiln's OpenMP loops read it at
start-up). "fwd" times one op call (PyNative, the result materialized); "fwd+bwd" times `kiln.grad` of sum(op(x)),
i.e. the forward, the sum, its (broadcast) cotangent and the op's backward. The median over --repeats timed runs of
enough iterations to take about --min-time seconds is printed; the machine's load average is printed with it, since
timings on a loaded machine are noisy (compare figures from runs at similar load).

    PYTHONPATH=python .venv/bin/python benchmarks/bench_kernels.py [--threads 1,2] [--only relu,gelu] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BIG = 1 << 20  # 1M elements
SMALL = 4096


def _cases(kiln):
    ops, nn = kiln.ops, kiln.nn
    gelu_t = lambda x: ops.gelu(x, approximate="tanh")  # noqa: E731
    gelu_e = lambda x: ops.gelu(x, approximate="none")  # noqa: E731
    eltwise = {
        "relu": ops.relu, "relu6": ops.relu6, "leaky_relu": nn.LeakyReLU(0.1), "hardsigmoid": ops.hardsigmoid,
        "hswish": nn.HSwish(), "exp": ops.exp, "log": lambda x: ops.log(ops.abs(x)), "tanh": ops.tanh,
        "sigmoid": ops.sigmoid, "erf": ops.erf, "gelu_tanh": gelu_t, "gelu_erf": gelu_e, "softplus": ops.softplus,
        "silu": nn.SiLU(), "add": lambda x: ops.add(x, x), "mul": lambda x: ops.mul(x, x),
        "sum": lambda x: ops.sum(x),
    }
    cases = {}
    for name, f in eltwise.items():
        cases[name] = [(n, (n,), f) for n in (BIG, SMALL)]
    pool = nn.MaxPool2d(kernel_size=2, stride=2)
    cases["maxpool2d"] = [(BIG, (64, 16, 32, 32), pool), (SMALL, (4, 4, 16, 16), pool)]
    bn_big, bn_small = nn.BatchNorm2d(16), nn.BatchNorm2d(4)
    cases["batchnorm2d"] = [(BIG, (64, 16, 32, 32), bn_big), (SMALL, (4, 4, 16, 16), bn_small)]
    return cases


def _time(fn, min_time, repeats):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / 4 or n >= 1 << 16:
            break
        n *= 2
    n = max(1, int(n * (min_time / max(dt, 1e-9))))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def worker(args):
    import kiln
    kiln.set_context(mode=kiln.PYNATIVE_MODE)
    rng = np.random.default_rng(0)
    out = {}
    only = set(args.only.split(",")) if args.only else None
    for name, sizes in _cases(kiln).items():
        if only and name not in only:
            continue
        for n, shape, f in sizes:
            x = kiln.Tensor(rng.standard_normal(shape).astype(np.float32))
            if hasattr(f, "set_train"):
                f.set_train(True)
            g = kiln.grad(lambda t: kiln.ops.sum(f(t)))
            out[f"{name}/{n}/fwd"] = _time(lambda: f(x), args.min_time, args.repeats)
            out[f"{name}/{n}/fwd+bwd"] = _time(lambda: g(x), args.min_time, args.repeats)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default="")
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    results = {}
    for t in args.threads.split(","):
        env = dict(os.environ, OMP_NUM_THREADS=t)
        cmd = [sys.executable, __file__, "--worker", "--min-time", str(args.min_time), "--repeats",
               str(args.repeats), "--only", args.only]
        load0 = os.getloadavg()[0]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"threads={t}: failed:\n{p.stderr[-2000:]}")
            continue
        results[t] = json.loads(p.stdout.strip().splitlines()[-1])
        results[t]["_load"] = [load0, os.getloadavg()[0]]
    keys = sorted({k for r in results.values() for k in r if not k.startswith("_")},
                  key=lambda k: (k.split("/")[0], -int(k.split("/")[1]), k))
    ts = list(results)
    print(f"{'op/size/pass':34s}" + "".join(f"{'µs @' + t + ' thr':>14s}" for t in ts))
    for k in keys:
        print(f"{k:34s}" + "".join(f"{results[t].get(k, float('nan')):14.1f}" for t in ts))
    for t in ts:
        print(f"load average during the {t}-thread run: {results[t]['_load'][0]:.1f} -> {results[t]['_load'][1]:.1f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
