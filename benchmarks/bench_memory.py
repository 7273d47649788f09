"""Memory held after freeing, and peak memory of reductions (issue 22; docs/decisions/allocator-cache.md).

    .venv/bin/python benchmarks/bench_memory.py            # prints both reports

1. The tester's scenario (tests/python/test_allocator_memory.py): ~128 MiB of float32 tensors in five block sizes
   (64 KiB, 256 KiB, 1 MiB, 3 MiB, 12 MiB) held at once, then freed; then ~64 MiB in four other sizes (200 KiB,
   700 KiB, 2 MiB, 5 MiB), then freed. RSS (from /proc/self/statm) above the baseline after each step, the
   allocator's cached bytes and bound, and the system allocations the second phase needed.
2. The allocator's peak (kiln.runtime.max_memory_allocated) above a 64 MiB int8 input for reductions.

Each report runs in its own interpreter, so that one does not see the other's cache."""
import argparse
import subprocess
import sys

from _env import child_env, require_kiln

_RSS = r"""
import gc, os
import kiln as ms
from kiln import ops, runtime
MiB = 1 << 20
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def make(sizes, total):
    out = []
    for s in sizes:
        out += [ops.zeros((s // 4,), ms.float32) for _ in range(max(1, total // len(sizes) // s))]
    return out
ops.zeros((4,), ms.float32)
runtime.empty_cache()
base = rss()
ts = make([64 << 10, 256 << 10, 1 << 20, 3 * MiB, 12 * MiB], 128 * MiB)
held, peak = sum(t.nbytes for t in ts), rss() - base
del ts; gc.collect()
s1 = runtime.memory_stats(); freed = rss() - base
ts = make([200 << 10, 700 << 10, 2 * MiB, 5 * MiB], 64 * MiB)
held2, n2 = sum(t.nbytes for t in ts), len(ts)
s2 = runtime.memory_stats(); rss2 = rss() - base
del ts; gc.collect()
s3 = runtime.memory_stats(); freed2 = rss() - base
runtime.empty_cache()
print(f"baseline RSS {base / MiB:.0f} MiB; cache limit now {s1['cache_limit'] / MiB:.0f} MiB")
print(f"held {held / MiB:.0f} MiB in 5 sizes: RSS +{peak / MiB:.0f} MiB")
print(f"freed: RSS +{freed / MiB:.0f} MiB, cached {s1['total_idle_memory'] / MiB:.0f} MiB")
print(f"held {held2 / MiB:.0f} MiB in 4 other sizes ({n2} tensors): RSS +{rss2 / MiB:.0f} MiB, "
      f"{s2['system_alloc_count'] - s1['system_alloc_count']} system allocations")
print(f"freed: RSS +{freed2 / MiB:.0f} MiB, cached {s3['total_idle_memory'] / MiB:.0f} MiB")
print(f"after empty_cache(): RSS +{(rss() - base) / MiB:.0f} MiB")
"""

_PEAKS = r"""
import numpy as np
import kiln as ms
from kiln import Tensor, ops, runtime
import kiln.numpy as mnp
MiB = 1 << 20
a = np.random.default_rng(0).integers(-2, 3, size=(1024, 64 * 1024), dtype=np.int8)
x = Tensor(a)
cases = [("ops.count_nonzero(x)", lambda: ops.count_nonzero(x)),
         ("ops.count_nonzero(x, axis=0)", lambda: ops.count_nonzero(x, axis=0)),
         ("ops.all(x)", lambda: ops.all(x)), ("ops.any(x, 1)", lambda: ops.any(x, 1)),
         ("ops.sum(x)", lambda: ops.sum(x)), ("ops.sum(x, dtype=int64)", lambda: ops.sum(x, dtype=ms.int64)),
         ("ops.sum(x, 1, dtype=float32)", lambda: ops.sum(x, 1, dtype=ms.float32)),
         ("Tensor.sum(dtype=int32)", lambda: x.sum(dtype=ms.int32)), ("mindspore.numpy.sum(x)", lambda: mnp.sum(x)),
         ("ops.mean(x)", lambda: ops.mean(x)), ("ops.amax(x)", lambda: ops.amax(x))]
print("peak above the 64 MiB int8 input (allocator bytes):")
for name, f in cases:
    runtime.reset_peak_memory_stats()
    base = runtime.memory_allocated()
    r = f()
    print(f"  {name:30s} {(runtime.max_memory_allocated() - base) / MiB:8.2f} MiB   -> {r.dtype}")
    del r
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("rss", "peaks"), help="run one of the two reports")
    args = ap.parse_args()
    require_kiln()
    codes = {"rss": _RSS, "peaks": _PEAKS}
    for name, code in codes.items():
        if args.only and name != args.only:
            continue
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env())
        sys.stdout.write(out.stdout)
        if out.returncode:
            sys.stdout.write(out.stderr)
            return out.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
