"""Cost of the saved-tensor versions (Note [saved tensors and in-place writes]) on the PyNative tape: a chain of small
ops differentiated with kiln.grad (every op records a node and counts its saved tensors), and the write-after-read
step that makes one copy. Prints the median time per call over repeated runs.

    .venv/bin/python benchmarks/bench_tape_saved_versions.py [--reps 30]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import statistics
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln  # noqa: E402 (after require_kiln())
from kiln import Parameter, Tensor, ops  # noqa: E402 (after require_kiln())


def median_time(fn, reps=30, inner=5):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t0) / inner)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="timed runs (of 5 calls) per case, median shown")
    args = ap.parse_args()
    if args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    reps = args.reps
    w = Parameter(Tensor(np.random.RandomState(0).randn(16).astype(np.float32)), name="w")
    x = Tensor(np.random.RandomState(1).randn(16).astype(np.float32))

    def chain(x):
        y = x
        for _ in range(100):
            y = ops.sin(y * w) + y
        return ops.sum(y)

    g = kiln.grad(chain)
    print(f"grad of a 300-op chain (16 elements): {median_time(lambda: g(x), reps) * 1e3:.3f} ms")

    big = Parameter(Tensor(np.random.RandomState(2).randn(512, 512).astype(np.float32)), name="big")
    xb = Tensor(np.random.RandomState(3).randn(512, 8).astype(np.float32))

    def write_after_read(x):
        y = ops.sum(ops.matmul(big, x))
        ops.assign_sub(big, big * 1e-6)
        return y

    def write_before_read(x):
        ops.assign_sub(big, big * 1e-6)
        return ops.sum(ops.matmul(big, x))

    for name, f in (("write after read (one 1 MiB copy)", write_after_read),
                    ("write before read (no copy)", write_before_read)):
        gf = kiln.grad(f)
        print(f"{name}: {median_time(lambda: gf(xb), reps) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
