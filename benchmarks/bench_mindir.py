"""MindIR export / load costs, and a loaded graph's inference speed against the network it came from.

For the examples' LeNet5 (1x28x28 inputs) at batch --batch: the time of `kiln.export(..., file_format="MINDIR")`,
the file size, the time of `kiln.load`, and the median time per inference call of the original network and of
`nn.GraphCell(load(...))`, both in PyNative and in GRAPH_MODE (median of --repeats runs of --calls calls, after
warm-up). The outputs of the loaded graph must equal the network's (max abs difference printed; the run fails
above 1e-5).

    .venv/bin/python benchmarks/bench_mindir.py [--batch 32] [--calls 50] [--repeats 5]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

from _env import EXAMPLES, require_kiln  # (benchmarks/ is sys.path[0] when a script runs)
from _timing import per_call

sys.path.insert(0, EXAMPLES)  # the examples' LeNet5 (a helper, not the kiln package)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ms = require_kiln()
    from kiln import nn, Tensor
    from train_mnist_model import LeNet5

    ms.set_seed(0)
    net = LeNet5()
    net.set_train(False)
    x = Tensor(np.random.default_rng(0).random((args.batch, 1, 28, 28), dtype=np.float32))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lenet5")
        t0 = time.perf_counter()
        ms.export(net, x, file_name=path, file_format="MINDIR")
        t_export = time.perf_counter() - t0
        size = os.path.getsize(path + ".mindir")
        t0 = time.perf_counter()
        graph = ms.load(path + ".mindir")
        t_load = time.perf_counter() - t0
    cell = nn.GraphCell(graph)
    diff = float(np.abs(cell(x).asnumpy() - net(x).asnumpy()).max())
    print(f"LeNet5, batch {args.batch}: export {t_export * 1e3:.1f} ms, file {size / 1024:.1f} KiB, "
          f"load {t_load * 1e3:.1f} ms, max |loaded - original| = {diff:.2e}")
    for mode_name, mode in (("PyNative", ms.PYNATIVE_MODE), ("GRAPH_MODE", ms.GRAPH_MODE)):
        ms.set_context(mode=mode)
        t_net = per_call(net, x, args.calls, args.repeats)
        t_cell = per_call(cell, x, args.calls, args.repeats)
        print(f"  {mode_name:<10} per call: original {t_net * 1e6:8.1f} us   GraphCell {t_cell * 1e6:8.1f} us   "
              f"ratio {t_cell / t_net:.2f}")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return 0 if diff <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
