"""Prints the prefix (a folder with include/ and lib/) of the oneDNN that the PyPI wheels
onednn-devel-cpu-gomp / onednn-cpu-gomp installed, also inside pip's isolated build environments."""
import os
import sys
from importlib import metadata


def prefix_of(dist_name, rel):
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if str(f).replace("\\", "/").endswith(rel):
            full = os.path.abspath(str(dist.locate_file(f)))
            return full[: -len(rel)].rstrip("/")
    return None


for name, rel in (("onednn-devel-cpu-gomp", "include/oneapi/dnnl/dnnl.hpp"),):
    p = prefix_of(name, rel)
    if p:
        print(p)
        break
else:
    print(sys.prefix)
