"""Throughput of the kiln.dataset engine on pipeline (a) of issue 8 with NumPy functions as the transforms:
MNIST-format idx files (60,000 random 28x28 images, written to a temporary folder) -> MnistDataset -> map(rescale,
normalize, HWC->CHW) -> batch(64) -> tuple iterator (NumPy). Measures the engine (reading, per-row dispatch,
batching, workers), not the transforms' own speed. With --peer-mindspore it runs the same script under MindSpore
when `mindspore` is importable in this interpreter (e.g. /work/msvenv/bin/python; kiln is not imported then).
Without it, it runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh;
benchmarks/_env.py).

    .venv/bin/python benchmarks/bench_dataset_engine.py [--rows 60000] [--repeats 3]
    /work/msvenv/bin/python benchmarks/bench_dataset_engine.py --peer-mindspore
"""
import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from _env import require_kiln


def write_idx(path, arr, magic):
    with open(path, "wb") as f:
        f.write(magic.to_bytes(4, "big"))
        for s in arr.shape:
            f.write(int(s).to_bytes(4, "big"))
        f.write(arr.astype(np.uint8).tobytes())


MEAN, STD = np.float32(0.1307), np.float32(0.3081)


def rescale(x):
    return x.astype(np.float32) * np.float32(1 / 255)


def normalize(x):
    return (x - MEAN) / STD


def hwc2chw(x):
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def run(ds, folder, workers, processes):
    d = ds.MnistDataset(folder, usage="train", shuffle=False)
    kw = {} if workers == 1 else {"num_parallel_workers": workers, "python_multiprocessing": processes}
    d = d.map([rescale, normalize, hwc2chw], input_columns="image", **kw).batch(64)
    t = time.perf_counter()
    n = sum(1 for _ in d.create_tuple_iterator(output_numpy=True, num_epochs=1))
    return n, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=60000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-mindspore", action="store_true")
    a = ap.parse_args()
    if a.peer_mindspore:
        import mindspore.dataset as ds
        name = "MindSpore " + __import__("mindspore").__version__
    else:
        require_kiln()
        import kiln.dataset as ds
        name = "Kiln"
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        write_idx(os.path.join(folder, "train-images-idx3-ubyte"), rng.integers(0, 256, (a.rows, 28, 28)), 2051)
        write_idx(os.path.join(folder, "train-labels-idx1-ubyte"), rng.integers(0, 10, a.rows), 2049)
        print(f"{name}: {a.rows} rows, batch 64, median of {a.repeats} runs; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for workers, processes in ((1, False), (2, False), (2, True)):
            times = []
            for _ in range(a.repeats):
                n, dt = run(ds, folder, workers, processes)
                times.append(dt)
            med = statistics.median(times)
            mode = "inline" if workers == 1 else f"{workers} {'processes' if processes else 'threads'}"
            print(f"  {mode:12s} {n} batches  {med:6.2f} s  {a.rows / med:9.0f} rows/s")


if __name__ == "__main__":
    main()
