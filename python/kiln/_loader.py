"""Loads kiln._core after making its native dependency (oneDNN's libdnnl.so.3 from the onednn-cpu-gomp
wheel) loadable, wherever pip put that wheel's data files."""
import ctypes
import os
import sys
from importlib import metadata


# Kiln's OpenMP threads (oneDNN's and Kiln's parallel loops) sleep between parallel regions instead of spinning:
# on a 2-core machine a spinning worker (GNU OpenMP spins for a while after each region by default) steals the
# core that the Python thread needs for the serial part of a step — measured: LeNet training step 3.5 ms with
# passive waiting, 3–100 ms (erratic) with spinning. Must be set before libgomp is loaded; a user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


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


_preload_dnnl()
from . import _core  # noqa: E402,F401
