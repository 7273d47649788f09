"""Loads kiln._core after making its native dependency (oneDNN's libdnnl.so.3 from the onednn-cpu-gomp
wheel) loadable, wherever pip put that wheel's data files."""
import ctypes
import os
import sys
from importlib import metadata


# How long Kiln's OpenMP workers (oneDNN's and Kiln's parallel loops) spin after a parallel region before they sleep
# (docs/decisions/openmp-workers-spin.md). Sleeping at once (OMP_WAIT_POLICY=PASSIVE, the earlier
# setting) made every parallel region pay a futex wake-up of the other core (~25 µs; ~250 regions per Transformer
# step on 2 threads). GNU OpenMP's default spin (300,000 rounds, ~8.5 ms here) let spinning workers steal the cores
# of a busy machine (LeNet step 3–100 ms, erratic; the Transformer's 2-thread step 2–3x slower than with passive
# waiting at 10,000 rounds when the cores were oversubscribed). 1,000 rounds (~30 µs) keep the workers awake across
# the back-to-back regions of a step and bound the waste when the cores are busy. Must be set before libgomp is
# loaded; a user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
KILN_GOMP_SPINCOUNT = "1000"
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = KILN_GOMP_SPINCOUNT


def _preload_dnnl():
    candidates = []
    try:
        dist = metadata.distribution("onednn-cpu-gomp")
        for f in dist.files or ():
            if os.path.basename(str(f)).startswith("libdnnl.so"):
                candidates.append(os.path.abspath(str(dist.locate_file(f))))
    except metadata.PackageNotFoundError:
        pass
    candidates.append(os.path.join(sys.prefix, "lib", "libdnnl.so.3"))
    for path in candidates:
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return
            except OSError:
                continue


from ._cpu import check_x86_64_v3  # noqa: E402 (after the preload helpers it runs before)

check_x86_64_v3()
_preload_dnnl()
from . import _core  # noqa: E402,F401 (loaded only after the CPU check and the oneDNN preload)
