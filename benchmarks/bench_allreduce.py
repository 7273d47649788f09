"""All-reduce time and bandwidth between 2 local processes: Kiln's layer (mindspore.communication.comm_func.all_reduce
on a float32 Tensor, eager, launched by `python -m kiln.msrun`) next to plain Gloo (gloo_allreduce.cpp: the same
gloo::allreduce call, ring algorithm, sum of floats, no Kiln), for 1 KiB … 64 MiB.

    .venv/bin/python benchmarks/bench_allreduce.py [--scale 1.0] [--repeats 3] [--blocks 10] [--held]
        [--sizes 1048576,4194304] [--json FILE]

All sides run in the same two worker processes, in rotating blocks: for each size, `--blocks` rounds of a block of
each side (the order rotating every round). The plain Gloo side is gloo_allreduce.cpp built as a shared library and
called through ctypes (its own Gloo context and TCP connection, rendezvous through a FileStore), two ways:
- "Gloo loop": the whole block in one C++ loop (Python idle): the library's own figure;
- "Gloo/call": one C++ call per all-reduce from a Python loop like Kiln's: what any Python binding of Gloo pays.
So every side meets the same processes, the same scheduling placement and the same machine load; Kiln − Gloo/call is
Kiln's layer (its Python function and argument checks, the op dispatch and output allocation, its reduce function),
Gloo/call − Gloo loop is the cost of returning to Python between all-reduces.

Buffers: each Gloo side writes one output buffer, every call. Kiln's side drops each result before the next call, so
its caching allocator hands the next call the same block: one live output too. A caller that still holds the
previous result while the next all-reduce runs makes two outputs alternate, which is slower in plain Gloo as well
(at 1 MiB: docs/decisions/allreduce-benchmark.md, "All-reduce at 1 MiB"). --held adds that pattern
on both sides: "Kiln held" (`out = all_reduce(x)`, the previous `out` alive during the call) and "Gloo alt" (plain
Gloo writing two output buffers in turn). (Two separate programs are not
comparable on Linux: kiln.msrun starts each worker in its own session, which the kernel schedules as its own
autogroup; a baseline whose two ranks shared one session was 10x slower than Kiln on a loaded machine —
docs/decisions/allreduce-benchmark.md.)

Every all-reduce is timed on its own. Prints, per size and side: the median call and the 10th-percentile call
(seconds), the process CPU time per all-reduce of rank 0 (all its threads, Gloo's transport threads included), Kiln's
overhead = Kiln / Gloo − 1 against both Gloo sides, and the bus bandwidth of the 10th-percentile call
(2·(n−1)/n · bytes / time, NCCL's convention). Each figure is the median over --repeats runs (each run a fresh pair
of processes). On a shared machine the median is mostly scheduling (each call needs both processes on a core at
once); the 10th percentile is the cost of a call that was not preempted.
"""
import argparse
import ctypes
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from _env import CHILD_CWD, child_env, require_kiln

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1024 * 4 ** k for k in range(9)]  # 1 KiB … 64 MiB
SIDES = ("gloo", "gloo_py", "kiln")
HELD_SIDES = ("gloo_alt", "kiln_held")  # --held: two output buffers in turn


def _load_baseline(path):
    lib = ctypes.CDLL(path)
    lib.gab_connect.restype = ctypes.c_void_p
    lib.gab_connect.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
    lib.gab_run.restype = ctypes.c_double
    lib.gab_run.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_double)]
    lib.gab_run_alternating.restype = ctypes.c_double
    lib.gab_run_alternating.argtypes = lib.gab_run.argtypes
    lib.gab_free.argtypes = [ctypes.c_void_p]
    return lib


def _worker(scale, blocks, store, lib_path, sides, sizes):
    import numpy as np
    kiln = require_kiln()
    from kiln.communication import comm_func, get_group_size, get_rank, init
    init()
    rank, size = get_rank(), get_group_size()
    lib = _load_baseline(lib_path)
    handle = lib.gab_connect(rank, size, store.encode())
    if not handle:
        raise RuntimeError("the plain Gloo baseline could not connect")
    for nbytes in sizes:
        n = nbytes // 4
        x = kiln.Tensor(np.full(n, rank + 1, np.float32))
        iters = max(3, int(scale * 2e8 / (nbytes + 200000)))
        nblocks = min(blocks, iters)
        per_block = -(-iters // nblocks)
        buf = (ctypes.c_double * per_block)()
        for _ in range(3):  # warm-up: connections, caches, the allocator's blocks
            out = comm_func.all_reduce(x)
        if lib.gab_run(handle, n, 3, 1, buf) < 0:
            raise RuntimeError("plain Gloo all-reduce failed")
        times = {side: [] for side in sides}
        cpu = dict.fromkeys(sides, 0.0)  # process CPU seconds (all threads: Gloo's transport threads too)
        del out  # no result is held when the blocks start

        def kiln_block():  # each result dropped at once (inside the timed call): one live output, as the Gloo sides
            for _ in range(per_block):
                t0 = time.perf_counter()
                comm_func.all_reduce(x)
                times["kiln"].append(time.perf_counter() - t0)

        held = [None]

        def kiln_held_block():  # the previous result is alive while the next call runs: two outputs in turn
            for _ in range(per_block):
                t0 = time.perf_counter()
                held[0] = comm_func.all_reduce(x)
                times["kiln_held"].append(time.perf_counter() - t0)
            held[0] = None

        def gloo_block():  # the whole block in one C++ loop
            c = lib.gab_run(handle, n, 0, per_block, buf)
            if c < 0:
                raise RuntimeError("plain Gloo all-reduce failed or gave a wrong sum")
            times["gloo"].extend(buf[:per_block])

        def gloo_py_block():  # one C++ call per all-reduce, from the same kind of Python loop as Kiln's
            for _ in range(per_block):
                t0 = time.perf_counter()
                if lib.gab_run(handle, n, 0, 1, buf) < 0:
                    raise RuntimeError("plain Gloo all-reduce failed or gave a wrong sum")
                times["gloo_py"].append(time.perf_counter() - t0)

        def gloo_alt_block():  # the whole block in one C++ loop, two output buffers in turn
            if lib.gab_run_alternating(handle, n, 0, per_block, buf) < 0:
                raise RuntimeError("plain Gloo all-reduce failed or gave a wrong sum")
            times["gloo_alt"].extend(buf[:per_block])

        blocks_of = {"gloo": gloo_block, "gloo_py": gloo_py_block, "kiln": kiln_block, "gloo_alt": gloo_alt_block,
                     "kiln_held": kiln_held_block}
        k = len(sides)
        for b in range(nblocks):  # the order rotates every round: no side always follows the same one
            for side in sides[b % k:] + sides[:b % k]:
                cpu0 = time.process_time()
                blocks_of[side]()
                cpu[side] += time.process_time() - cpu0
        out = comm_func.all_reduce(x)
        want = np.full(n, size * (size + 1) / 2, np.float32)
        if not np.array_equal(out.asnumpy(), want):
            raise RuntimeError(f"Kiln's all-reduce of {nbytes} bytes gave a wrong sum")
        if rank == 0:
            fields = [str(nbytes)]
            for side in sides:
                t = sorted(times[side])
                fields += [f"{t[len(t) // 2]:.9f}", f"{t[len(t) // 10]:.9f}", f"{cpu[side] / len(t):.9f}"]
            print("RESULT", *fields, flush=True)
    lib.gab_free(handle)


def _baseline_library():
    lib = os.path.join(tempfile.gettempdir(), "kiln_gloo_allreduce_bench.so")
    src = os.path.join(HERE, "gloo_allreduce.cpp")
    if not os.path.exists(lib) or os.path.getmtime(lib) < os.path.getmtime(src):
        tmp = f"{lib}.{os.getpid()}"
        subprocess.run(["g++", "-O3", "-std=c++17", "-shared", "-fPIC", "-DGLOO_ALLREDUCE_LIB", src, "-o", tmp,
                        "-lgloo"], check=True)
        os.replace(tmp, lib)
    return lib


def run_once(scale, blocks, lib, sides, sizes):
    """One fresh pair of processes: {bytes: {side: (median, p10, cpu)}}."""
    with tempfile.TemporaryDirectory() as logs, tempfile.TemporaryDirectory() as store:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "kiln.msrun", "--worker_num=2", "--local_worker_num=2",
                               f"--master_port={port}", f"--log_dir={logs}", os.path.abspath(__file__), "--worker",
                               f"--scale={scale}", f"--blocks={blocks}", f"--store={store}", f"--lib={lib}",
                               f"--sizes={','.join(map(str, sizes))}", *(["--held"] if len(sides) > len(SIDES) else [])],
                              env=child_env(), cwd=CHILD_CWD, capture_output=True, text=True, timeout=1800)
        text = open(os.path.join(logs, "worker_0.log")).read()
        if proc.returncode:
            raise RuntimeError(f"the Kiln workers failed:\n{proc.stderr}\n{text}")
    out = {}
    for line in text.splitlines():
        if line.startswith("RESULT"):
            _, b, *v = line.split()
            v = list(map(float, v))
            out[int(b)] = {side: tuple(v[3 * i:3 * i + 3]) for i, side in enumerate(sides)}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=1.0, help="multiplies the number of all-reduces timed")
    p.add_argument("--repeats", type=int, default=3, help="runs, each a fresh pair of processes")
    p.add_argument("--blocks", type=int, default=10, help="alternating Kiln / plain-Gloo blocks per size")
    p.add_argument("--held", action="store_true",
                   help="also time Kiln with the previous result held and plain Gloo with two outputs in turn")
    p.add_argument("--sizes", help="comma-separated sizes in bytes, multiples of 4 (default 1 KiB … 64 MiB)")
    p.add_argument("--json")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    p.add_argument("--lib", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.scale <= 0 or a.repeats < 1 or a.blocks < 1:
        p.error("--scale must be > 0, --repeats and --blocks >= 1")
    sides = SIDES + HELD_SIDES if a.held else SIDES
    try:
        sizes = [int(v) for v in a.sizes.split(",")] if a.sizes else SIZES
    except ValueError:
        p.error(f"--sizes must be comma-separated integers (bytes), got {a.sizes!r}")
    if not sizes or any(v < 4 or v % 4 for v in sizes):
        p.error(f"--sizes must be positive multiples of 4 bytes, got {a.sizes!r}")
    if a.worker:
        _worker(a.scale, a.blocks, a.store, a.lib, sides, sizes)
        return 0
    require_kiln()  # kiln.msrun and the workers run in this python
    lib = _baseline_library()
    load = os.getloadavg()
    if load[0] > (os.cpu_count() or 1) / 2:
        print(f"warning: load average {load[0]:.1f} on {os.cpu_count()} cores: figures are noisy")
    runs = [run_once(a.scale, a.blocks, lib, sides, sizes) for _ in range(a.repeats)]
    load_after = os.getloadavg()
    # per size and side: the median over runs of (median call, 10th-percentile call, CPU seconds per call)
    med = {side: {n: tuple(statistics.median(r[n][side][i] for r in runs) for i in (0, 1, 2)) for n in sizes}
           for side in sides}
    print(f"load average {load[0]:.1f} before, {load_after[0]:.1f} after; {os.cpu_count()} cores; "
          f"median of {a.repeats} runs; seconds per all-reduce")
    print(f"{'size':>8} | {'Gloo loop median':>16} {'p10':>9} {'cpu':>9} | {'Gloo/call median':>16} {'p10':>9} "
          f"{'cpu':>9} | {'Kiln median':>11} {'p10':>9} {'cpu':>9} | Kiln vs Gloo loop: median, p10, cpu | "
          f"vs Gloo/call: median, p10, cpu | busbw p10 MB/s loop, Kiln")
    rows = []
    pct = lambda x, y: f"{100 * (x / y - 1):+6.1f}%"
    for n in sizes:
        (g, gp, gc), (c, cp, cc), (k, kp, kc) = (med[side][n] for side in SIDES)
        bw = lambda s: n / s / 1e6  # 2 processes: busbw = 2·(2−1)/2 · bytes / time = bytes / time
        label = f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"
        print(f"{label:>8} | {g:16.6f} {gp:9.6f} {gc:9.6f} | {c:16.6f} {cp:9.6f} {cc:9.6f} | {k:11.6f} {kp:9.6f} "
              f"{kc:9.6f} | {pct(k, g)} {pct(kp, gp)} {pct(kc, gc)} | {pct(k, c)} {pct(kp, cp)} {pct(kc, cc)} | "
              f"{bw(gp):7.1f} {bw(kp):7.1f}")
        row = {"bytes": n}
        for side in sides:
            m, p10, cpu = med[side][n]
            row.update({f"{side}_median_s": m, f"{side}_p10_s": p10, f"{side}_cpu_s": cpu})
        rows.append(row)
    if a.held:
        print("\nTwo output buffers in turn (--held): Kiln with the previous result held, plain Gloo writing two "
              "outputs alternately (C++ loop)")
        print(f"{'size':>8} | {'Gloo alt median':>16} {'p10':>9} {'cpu':>9} | {'Kiln held median':>16} {'p10':>9} "
              f"{'cpu':>9} | Kiln held vs Gloo alt: median, p10, cpu | Gloo alt vs Gloo loop: median, p10, cpu")
        for n in sizes:
            (g, gp, gc), (k, kp, kc), (l, lp, lc) = med["gloo_alt"][n], med["kiln_held"][n], med["gloo"][n]
            label = f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"
            print(f"{label:>8} | {g:16.6f} {gp:9.6f} {gc:9.6f} | {k:16.6f} {kp:9.6f} {kc:9.6f} | {pct(k, g)} "
                  f"{pct(kp, gp)} {pct(kc, gc)} | {pct(g, l)} {pct(gp, lp)} {pct(gc, lc)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"load_before": load[0], "load_after": load_after[0], "repeats": a.repeats, "held": a.held,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
