"""Per-call time of Kiln's MatMul/BatchMatMul on the Transformer encoder's shapes (bench_models.py's `transformer`:
d 128, 4 heads, FFN 512, seq 64, batch 16), on 1 and 2 OpenMP threads in the same process (libgomp's
omp_set_num_threads, interleaved: a load change hits both), best of --reps runs of 5 calls each.

    .venv/bin/python benchmarks/bench_matmul_shapes.py [--reps 15] [NAME_FILTER ...]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import ctypes
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
from kiln import Tensor, _core  # noqa: E402 (after require_kiln())

_gomp = ctypes.CDLL("libgomp.so.1")  # after kiln (kiln/_loader.py sets the OpenMP environment)


def cases():
    rng = np.random.default_rng(0)

    def t(*s):
        return Tensor(rng.standard_normal(s).astype(np.float32))

    return {
        "dense fwd 1024x128x128 (N,T)": (t(1024, 128), t(128, 128), False, True),
        "dense dX 1024x128x128 (N,N)": (t(1024, 128), t(128, 128), False, False),
        "dense dW 128x128 K1024 (T,N)": (t(1024, 128), t(1024, 128), True, False),
        "ff1 fwd 1024x512x128": (t(1024, 128), t(512, 128), False, True),
        "ff1 dW 512x128 K1024": (t(1024, 512), t(1024, 128), True, False),
        "ff2 dX 1024x512 K128": (t(1024, 128), t(128, 512), False, False),
        "ff2 dW 128x512 K1024 (T,N)": (t(1024, 128), t(1024, 512), True, False),
        "attn QK^T b64 64x64x32": (t(16, 4, 64, 32), t(16, 4, 64, 32), False, True),
        "attn AV b64 64x32x64": (t(16, 4, 64, 64), t(16, 4, 64, 32), False, False),
        "attn dV b64 (T,N) 32x64 K64": (t(16, 4, 64, 64), t(16, 4, 64, 32), True, False),
        "3d x 2d (16,64,128)x(128,512)": (t(16, 64, 128), t(128, 512), False, False),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15, help="timed runs of 5 calls per thread count (best shown)")
    ap.add_argument("filters", nargs="*", help="only cases whose name contains one of these")
    args = ap.parse_args()
    if args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    saved = _gomp.omp_get_max_threads()
    try:
        for name, (a, b, ta, tb) in cases().items():
            if args.filters and not any(f in name for f in args.filters):
                continue
            best = {1: float("inf"), 2: float("inf")}
            for _ in range(args.reps):
                for nt in (1, 2):
                    _gomp.omp_set_num_threads(nt)
                    _core.matmul(a, b, ta, tb)
                    t0 = time.perf_counter()
                    for _ in range(5):
                        _core.matmul(a, b, ta, tb)
                    best[nt] = min(best[nt], (time.perf_counter() - t0) / 5)
            print(f"{name:34s} 1 thr {best[1] * 1e6:8.1f} us  2 thr {best[2] * 1e6:8.1f} us  "
                  f"speedup {best[1] / best[2]:.2f}", flush=True)
    finally:
        _gomp.omp_set_num_threads(saved)


if __name__ == "__main__":
    main()
