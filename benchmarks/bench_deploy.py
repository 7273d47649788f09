"""C++ deployment (file_format="KILN"): the exported LeNet run by the C++ example against Kiln's Python modes.

For the LeNet of examples/train_lenet_digits.py at batch --batch (digits, 1x8x8): the time of
`kiln.export(..., file_format="KILN")`, the file size, then the mean time per inference of
  * the C++ example program (examples/cpp/kiln_run_model --repeat N: kiln::deploy::Model::run, no Python),
  * the network in GRAPH_MODE (the same optimized graph, called from Python) and in PyNative,
each the median of --repeats measurements of --calls calls after warm-up. The C++ outputs must equal Graph mode's
bit for bit (the run fails otherwise). Needs the example binary (tools/dev_build.sh --tests, or --binary PATH).

    .venv/bin/python benchmarks/bench_deploy.py [--batch 64] [--calls 200] [--repeats 5]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
The C++ binary and the installed Kiln should come from the same source (run tools/setup_env.sh after changing it).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _env import EXAMPLES, ROOT, require_kiln  # (benchmarks/ is sys.path[0] when a script runs)
from _timing import per_call

sys.path.insert(0, EXAMPLES)  # train_lenet_digits (a helper, not the kiln package)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--binary", default=None, help="kiln_run_model (default: the newest build/*/kiln_run_model)")
    args = ap.parse_args()
    binary = args.binary or max(glob.glob(os.path.join(ROOT, "build", "*", "kiln_run_model")),
                                key=os.path.getmtime, default=None)
    if binary is None:
        sys.exit("bench_deploy: no kiln_run_model binary (build it with tools/dev_build.sh --tests)")

    ms = require_kiln()
    from kiln import Tensor
    from train_lenet_digits import LeNet, load_data

    ms.set_seed(1)
    (x, _), _ = load_data()
    x = np.ascontiguousarray(np.resize(x, (args.batch, 1, 8, 8)))
    net = LeNet()
    net.set_train(False)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        ms.export(net, Tensor(x), file_name=os.path.join(d, "lenet"), file_format="KILN")
        export_s = time.perf_counter() - t0
        model = os.path.join(d, "lenet.kiln")
        np.save(os.path.join(d, "x.npy"), x)
        cpp = []
        for _ in range(args.repeats):
            p = subprocess.run([binary, model, os.path.join(d, "x.npy"), "--repeat", str(args.calls), "--save",
                                os.path.join(d, "out")], capture_output=True, text=True, check=True)
            cpp.append(float(re.search(r"runs: ([0-9.]+) ms per run", p.stdout).group(1)) / 1e3)
        cpp_out = np.load(os.path.join(d, "out0.npy"))
        size = os.path.getsize(model)

    ms.set_context(mode=ms.GRAPH_MODE)
    graph_out = net(Tensor(x)).asnumpy()
    graph_s = per_call(net, Tensor(x), args.calls, args.repeats)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    pynative_s = per_call(net, Tensor(x), args.calls, args.repeats)
    same = np.array_equal(cpp_out, graph_out)

    print(f"LeNet (digits), batch {args.batch}: export {export_s * 1e3:.1f} ms, file {size} bytes")
    print(f"  C++ kiln_run_model (Model::run)  {statistics.median(cpp) * 1e3:8.3f} ms per inference")
    print(f"  Python GRAPH_MODE                {graph_s * 1e3:8.3f} ms per inference")
    print(f"  Python PyNative                  {pynative_s * 1e3:8.3f} ms per inference")
    print(f"  C++ outputs equal GRAPH_MODE's bit for bit: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
