"""Per-op 1 → 2 thread scaling of a bench_models.py workload's Kiln step, both thread counts in ONE process
(libgomp's omp_set_num_threads, alternating every step: a load change hits both columns), per op the min and the
median over --rounds profiled steps (kiln.runtime.profile), ms per step.

    .venv/bin/python benchmarks/bench_op_scaling.py [--workload transformer] [--rounds 20] [--pynative]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).

On a shared machine the 2-thread column needs the second core: run it briefly at real-time priority
(`chrt -f 1 ...`) or when the machine is idle.
"""
import argparse
import ctypes
import statistics

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln  # noqa: E402,F401  (imported before libgomp: kiln/_loader.py sets the OpenMP environment)
import bench_models as bm  # noqa: E402 (after require_kiln())
from kiln.runtime import profile  # noqa: E402 (after require_kiln())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="transformer", choices=sorted(bm.WORKLOADS))
    ap.add_argument("--rounds", type=int, default=20, help="profiled steps per thread count (default 20)")
    ap.add_argument("--pynative", action="store_true", help="profile the PyNative step instead of @jit")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    gomp = ctypes.CDLL("libgomp.so.1")
    step, sync, *_ = bm.build_kiln(args.workload, 2, use_jit=not args.pynative)
    for _ in range(5):
        step()
    sync()
    res, walls = {1: {}, 2: {}}, {1: [], 2: []}
    saved = gomp.omp_get_max_threads()
    try:
        for r in range(args.rounds):
            for nt in ((1, 2) if r % 2 == 0 else (2, 1)):
                gomp.omp_set_num_threads(nt)
                step()
                sync()
                with profile() as p:
                    step()
                    sync()
                walls[nt].append(p.wall_ms)
                for row in p.stats():
                    res[nt].setdefault((row["op"], row["mode"]), []).append(row["total_ms"])
    finally:
        gomp.omp_set_num_threads(saved)
    mode = "PyNative" if args.pynative else "@jit"
    print(f"{args.workload} {mode}: step wall min {min(walls[1]):.1f} ms (1 thr) / {min(walls[2]):.1f} ms (2 thr), "
          f"median {statistics.median(walls[1]):.1f} / {statistics.median(walls[2]):.1f}")
    print(f"{'op':<20}{'mode':<9}{'min 1thr':>9}{'min 2thr':>9}{'ratio':>7}{'med 1thr':>9}{'med 2thr':>9}")
    s1 = s2 = 0.0
    for k in sorted(res[1], key=lambda k: -min(res[1][k])):
        a, b = min(res[1][k]), min(res[2].get(k, [0.0]))
        s1, s2 = s1 + a, s2 + b
        if a < 0.05:
            continue
        print(f"{k[0]:<20}{k[1]:<9}{a:9.2f}{b:9.2f}{a / b if b else 0:7.2f}{statistics.median(res[1][k]):9.2f}"
              f"{statistics.median(res[2].get(k, [0.0])):9.2f}")
    print(f"{'sum of the mins':<29}{s1:9.1f}{s2:9.1f}{s1 / s2 if s2 else 0:7.2f}")


if __name__ == "__main__":
    main()
