"""CPU time per training step of bench_models.py's workloads: a comparison that a loaded machine distorts less than
wall-clock steps/s.

Each (build, variant, thread count) runs in its own process with OMP_WAIT_POLICY=passive (OpenMP workers sleep
instead of spinning, so CPU time is work, not waiting) and reports, per step, the CPU time of the calling thread,
of the whole process, and the wall time (the best of 3 runs of --steps steps after 4 warm-up steps, by the calling
thread's CPU time). The calling thread runs every serial part of the step and its share of each parallel region,
so its CPU time per step approximates the step's wall time on an idle machine (it omits the time the thread waits
for a slower worker or for a wake-up, so it flatters threaded code somewhat); process CPU - thread CPU is the work
done by the other threads. Use it to compare builds (--kiln NAME=PATH, several times) and frameworks when the
machine is shared; quote bench_models.py's steps/s when it is idle.

Which Kiln: by default the one this python imports -- the installed Kiln (.venv/bin/python, tools/setup_env.sh;
benchmarks/_env.py). --kiln NAME=PATH measures another build: PATH goes on PYTHONPATH for that build's runs and must
hold a built kiln for this python (PATH/kiln/_core*.so: a site-packages of another install, or a source tree's python/
after tools/dev_build.sh; a plain source tree's python/ has no _core and is refused). NAME= (an empty PATH) is the
installed Kiln again, so `--kiln before=/tmp/before/python --kiln after=` compares an old build with the installed one.

    .venv/bin/python benchmarks/bench_cpu_step.py --workloads transformer --threads 1,2 \\
        --kiln before=/path/to/built/python --kiln after= --torch-python /work/torchvenv/bin/python
    .venv/bin/python benchmarks/bench_cpu_step.py --workloads lenet --threads 1 --steps 1   # seconds: does it run?
"""
import argparse
import json
import os
import subprocess
import sys
import time

from _env import child_env, kiln_path_problem, missing_python, require_kiln


def worker(variant, workload, threads, steps):
    import bench_models as bm  # benchmarks/ is sys.path[0]

    if variant.startswith("kiln"):
        require_kiln()
        step, sync, *_ = bm.build_kiln(workload, threads, use_jit=variant == "kiln-jit")
    else:
        step, sync, *_ = bm.build_torch(workload, threads, compiled=False)
    for _ in range(4):
        step()
    sync()
    best = None
    for _ in range(3):
        w0, t0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        for _ in range(steps):
            step()
        sync()
        row = [(time.thread_time() - t0) / steps * 1e3, (time.process_time() - p0) / steps * 1e3,
               (time.perf_counter() - w0) / steps * 1e3]
        best = row if best is None or row[0] < best[0] else best
    print(json.dumps(best))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="transformer", help="comma-separated, from bench_models.py")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=6, help="steps per timed run (default 6)")
    ap.add_argument("--kiln", action="append", default=[], metavar="NAME=PATH",
                    help="a Kiln build to measure (repeatable): PATH is put on PYTHONPATH and must hold a built kiln "
                         "(PATH/kiln/_core*.so); an empty PATH is this python's installed kiln. Default: only the "
                         "installed kiln, named 'kiln'")
    ap.add_argument("--torch-python", default="", help="python with torch (PyTorch eager); omitted if empty")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        v, w, t, s = args.worker
        worker(v, w, int(t), int(s))
        return
    builds = []
    for spec in args.kiln or ["kiln="]:
        name, sep, path = spec.partition("=")
        if not sep or not name:
            ap.error(f"--kiln must be NAME=PATH (PATH empty: the installed kiln), got {spec!r}")
        if path and kiln_path_problem(path):
            ap.error(f"--kiln {spec}: {kiln_path_problem(path)}")
        builds.append((name, path))
    if any(not path for _, path in builds):
        require_kiln()  # the installed kiln of this python is measured
    try:
        threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        ap.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    if not threads or min(threads) < 1:
        ap.error(f"--threads must list thread counts >= 1, got {args.threads!r}")
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    runs = [(name, sys.executable, path, v) for name, path in builds for v in ("kiln", "kiln-jit")]
    if args.torch_python:
        runs.append(("torch", args.torch_python, None, "torch"))
    print(f"ms per step: calling thread's CPU / process CPU / wall (OMP_WAIT_POLICY=passive); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")
    for wl in args.workloads.split(","):
        for t in threads:
            for name, py, path, v in runs:
                env = child_env(t, path=[path] if path else (), OMP_WAIT_POLICY="passive")
                cmd = [py, os.path.abspath(__file__), "--worker", v, wl, str(t), str(args.steps)]
                missing = missing_python(py)
                try:
                    if missing:
                        raise FileNotFoundError(missing)
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
                    thr, proc, wall = json.loads(p.stdout.strip().splitlines()[-1])
                    res = f"{thr:9.2f} {proc:9.2f} {wall:9.2f}"
                except subprocess.TimeoutExpired:
                    res = "timed out"
                except FileNotFoundError:
                    res = missing
                except (IndexError, ValueError):
                    res = "failed: " + (p.stderr.strip().splitlines() or ["no output"])[-1][:120]
                print(f"{wl:12s} {t} thr  {name:10s} {v:9s} {res}   (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
