"""Per-call time of compiled act(x·w + b) (MatMulBiasAct) for each activation against no activation, on
Transformer-FFN-sized operands: what the activation pass after oneDNN's product costs (docs/decisions/every-cpu.md).
Rounds are interleaved over the activations (a load change hits all); min and median of --rounds rounds of
--calls calls each, one OpenMP thread unless --threads says otherwise.

    .venv/bin/python benchmarks/bench_fused_matmul_act.py [--shape 1024,512,2048] [--rounds 7] [--calls 5] [--threads 1]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import ctypes
import statistics
import time

import numpy as np

from _env import require_kiln


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="1024,512,2048", help="M,K,N of x (M, K) · w (K, N)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    require_kiln()
    import kiln
    from kiln import Tensor, ops
    from kiln.runtime import cpu_info
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(args.threads)
    m, k, n = (int(v) for v in args.shape.split(","))
    rng = np.random.default_rng(0)
    x, w, b = (Tensor(rng.standard_normal(s).astype(np.float32)) for s in ((m, k), (k, n), (n,)))
    acts = {"none": lambda z: z, "relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh, "gelu": ops.gelu,
            "gelu_tanh": lambda z: ops.gelu(z, approximate="tanh")}
    fns = {name: kiln.jit(lambda x, w, b, f=f: f(ops.add(ops.matmul(x, w), b))) for name, f in acts.items()}
    for f in fns.values():
        f(x, w, b).asnumpy()
    times = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(args.calls):
                f(x, w, b).asnumpy()
            times[name].append((time.perf_counter() - t0) / args.calls * 1e3)
    i = cpu_info()
    print(f"CPU: {i['model']}; flags: {' '.join(i['flags'])}; oneDNN ISA: {i['onednn_isa']}; threads {args.threads}")
    print(f"act(x·w + b), x ({m}, {k}), w ({k}, {n}); ms per call, {args.rounds} rounds of {args.calls}")
    base = min(times["none"])
    for name, v in times.items():
        print(f"  {name:10s} min {min(v):8.3f}  median {statistics.median(v):8.3f}  min - none {min(v) - base:+7.3f}")


if __name__ == "__main__":
    main()
