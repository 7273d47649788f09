"""All-reduce bandwidth between 2 local processes: Kiln's layer (mindspore.communication.comm_func.all_reduce on a
float32 Tensor, eager, launched by `python -m kiln.msrun`) next to a plain Gloo C++ program (gloo_allreduce.cpp:
the same library, algorithm and reduce, no Kiln), for 1 KiB … 64 MiB.

    .venv/bin/python benchmarks/bench_allreduce.py [--scale 1.0] [--repeats 3] [--json FILE]

Every all-reduce is timed on its own. Prints, per size and side: the median call and the 10th-percentile call
(seconds), the bus bandwidth of the 10th-percentile call (2·(n−1)/n · bytes / time, NCCL's convention), and Kiln's
overhead = Kiln's time / Gloo's − 1 for both. Each figure is the median over --repeats runs. On a shared machine the
median is mostly scheduling (each call needs both processes on a core at once); the 10th percentile is the cost of
a call that was not preempted. `cpu` is the CPU time the rank-0 process (all its threads, Gloo's transport thread
included) spends per all-reduce: the work Kiln's layer adds shows there whatever the machine's load. The C++ baseline is compiled with g++ against Debian's libgloo (-lgloo) on first use.
Kiln's layer adds per call: the Python call, the output Tensor's allocation, and the reduce function for Kiln's
dtypes (Gloo's own uses its vectorized sum). Run on an idle machine: both processes share its cores.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = [1024 * 4 ** k for k in range(9)]  # 1 KiB … 64 MiB


def _worker(scale):
    import numpy as np
    import kiln
    from kiln.communication import comm_func, get_rank, init
    init()
    rank = get_rank()
    for nbytes in SIZES:
        x = kiln.Tensor(np.full(nbytes // 4, rank + 1, np.float32))
        iters = max(3, int(scale * 2e8 / (nbytes + 200000)))
        for _ in range(3):
            out = comm_func.all_reduce(x)
        times = []
        cpu0 = time.process_time()  # the whole process's CPU time (Gloo's transport thread too)
        for _ in range(iters):
            t0 = time.perf_counter()
            out = comm_func.all_reduce(x)
            times.append(time.perf_counter() - t0)
        cpu = (time.process_time() - cpu0) / iters
        times.sort()
        assert float(out[0].asnumpy()) == 3.0
        if rank == 0:
            print(f"RESULT {nbytes} {times[iters // 2]:.9f} {times[iters // 10]:.9f} {cpu:.9f}", flush=True)


def _gloo_binary():
    exe = os.path.join(tempfile.gettempdir(), "kiln_gloo_allreduce_bench")
    src = os.path.join(HERE, "gloo_allreduce.cpp")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run(["g++", "-O3", "-std=c++17", src, "-o", exe, "-lgloo"], check=True)
    return exe


def run_gloo(scale):
    exe = _gloo_binary()
    with tempfile.TemporaryDirectory() as store:
        procs = [subprocess.Popen([exe, str(r), "2", store, str(scale)], stdout=subprocess.PIPE, text=True)
                 for r in range(2)]
        outs = [p.communicate(timeout=600)[0] for p in procs]
        if any(p.returncode for p in procs):
            raise RuntimeError(f"gloo baseline failed: {[p.returncode for p in procs]}")
    return {int(b): tuple(map(float, rest)) for b, *rest in (line.split() for line in outs[0].splitlines())}


def run_kiln(scale):
    with tempfile.TemporaryDirectory() as logs:
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        subprocess.run([sys.executable, "-m", "kiln.msrun", "--worker_num=2", "--local_worker_num=2",
                        f"--master_port={port}", f"--log_dir={logs}", os.path.abspath(__file__), "--worker",
                        f"--scale={scale}"], env=env, check=True, capture_output=True, timeout=900)
        text = open(os.path.join(logs, "worker_0.log")).read()
    return {int(b): tuple(map(float, rest)) for _, b, *rest in (line.split() for line in text.splitlines()
                                                               if line.startswith("RESULT"))}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=1.0, help="multiplies the number of all-reduces timed")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        _worker(a.scale)
        return 0
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) / 2:
        print(f"warning: load average {load:.1f} on {os.cpu_count()} cores: figures are not representative")
    runs = {"gloo": [], "kiln": []}
    for _ in range(a.repeats):
        runs["gloo"].append(run_gloo(a.scale))
        runs["kiln"].append(run_kiln(a.scale))
    # per size and side: the median over runs of (median call, 10th-percentile call, CPU seconds per call)
    med = {k: {n: tuple(statistics.median(r[n][i] for r in v) for i in (0, 1, 2)) for n in SIZES}
           for k, v in runs.items()}
    print(f"{'size':>8} | {'Gloo C++ median':>15} {'p10':>9} {'cpu':>9} | {'Kiln median':>11} {'p10':>9} "
          f"{'cpu':>9} | Kiln overhead: median, p10, cpu | busbw p10 MB/s Gloo, Kiln")
    rows = []
    for n in SIZES:
        (g, gp, gc), (k, kp, kc) = med["gloo"][n], med["kiln"][n]
        bw = lambda s: n / s / 1e6  # noqa: E731  (2 processes: busbw = 2·(2−1)/2 · bytes / time = bytes / time)
        label = f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"
        print(f"{label:>8} | {g:15.6f} {gp:9.6f} {gc:9.6f} | {k:11.6f} {kp:9.6f} {kc:9.6f} | "
              f"{100 * (k / g - 1):+6.1f}% {100 * (kp / gp - 1):+6.1f}% {100 * (kc / gc - 1):+6.1f}% | "
              f"{bw(gp):7.1f} {bw(kp):7.1f}")
        rows.append({"bytes": n, "gloo_median_s": g, "gloo_p10_s": gp, "gloo_cpu_s": gc, "kiln_median_s": k,
                     "kiln_p10_s": kp, "kiln_cpu_s": kc, "overhead_median": k / g - 1, "overhead_p10": kp / gp - 1,
                     "overhead_cpu": kc / gc - 1})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
