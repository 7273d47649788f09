"""MindRecord write and read throughput (rows/s): kiln.mindrecord / kiln.dataset.MindDataset against MindSpore 2.x.

One data set, MNIST-like: --rows rows of {"label": int32, "image": bytes (784 bytes), "box": float32 [-1, 4]
(1..3 boxes), "name": string}, written by FileWriter in calls of 1,000 rows into --shards shards; then read end to
end by MindDataset(shuffle=False) (tuple iterator, NumPy output) and by FileReader.get_next(). Each framework runs
in its own interpreter (the same code, `kiln` or `mindspore` imported) on its own files; the median of --repeats
runs is reported. A framework that does not import (or whose python is missing) is reported as "not installed" --
never a made-up number. Kiln runs in this python (the installed Kiln: .venv/bin/python, benchmarks/_env.py).

    .venv/bin/python benchmarks/bench_mindrecord.py [--mindspore-python /work/msvenv/bin/python] [--rows 20000]
    .venv/bin/python benchmarks/bench_mindrecord.py --rows 1000 --shards 1 --repeats 1    # seconds: does it run?
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile

from _env import CHILD_CWD, child_env, missing_python, require_kiln

_CHILD = r'''
import json, os, sys, time
import numpy as np
impl, folder, rows, shards, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if impl == "kiln":
    from kiln.mindrecord import FileWriter, FileReader
    import kiln.dataset as ds
else:
    from mindspore.mindrecord import FileWriter, FileReader
    import mindspore.dataset as ds
rng = np.random.default_rng(0)
images = rng.integers(0, 256, (1000, 784), dtype=np.uint8)
def row(i):
    return {"label": i % 10, "image": images[i % 1000].tobytes(), "box": np.full((i % 3 + 1, 4), i, np.float32),
            "name": f"img_{i}.png"}
schema = {"label": {"type": "int32"}, "image": {"type": "bytes"}, "box": {"type": "float32", "shape": [-1, 4]},
          "name": {"type": "string"}}
out = {"write": [], "minddataset": [], "filereader": []}
for r in range(repeats):
    name = os.path.join(folder, f"{impl}_{r}.mindrecord")
    t = time.perf_counter()
    w = FileWriter(name, shard_num=shards, overwrite=True)
    w.add_schema(schema, "bench")
    for start in range(0, rows, 1000):
        w.write_raw_data([row(i) for i in range(start, min(rows, start + 1000))])
    w.commit()
    out["write"].append(rows / (time.perf_counter() - t))
    first = name + ("0" if shards > 1 else "")
    t = time.perf_counter()
    n = sum(1 for _ in ds.MindDataset(first, shuffle=False).create_tuple_iterator(output_numpy=True, num_epochs=1))
    out["minddataset"].append(n / (time.perf_counter() - t))
    assert n == rows, n
    t = time.perf_counter()
    reader = FileReader(first)
    n = sum(1 for _ in reader.get_next())
    reader.close()
    out["filereader"].append(n / (time.perf_counter() - t))
    assert n == rows, n
print("RESULT " + json.dumps(out))
'''


def run(python, impl, folder, args):
    if missing_python(python):
        return "not installed"
    # `-c` puts the working directory on sys.path: CHILD_CWD holds no kiln package
    p = subprocess.run([python, "-c", _CHILD, impl, folder, str(args.rows), str(args.shards), str(args.repeats)],
                       capture_output=True, text=True, env=child_env(), cwd=CHILD_CWD, timeout=1800)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return {k: statistics.median(v) for k, v in json.loads(line[7:]).items()}
    if "ModuleNotFoundError" in p.stderr:
        return "not installed"
    return "failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mindspore-python", default="/work/msvenv/bin/python")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    require_kiln()  # the kiln child runs in this python
    with tempfile.TemporaryDirectory() as folder:
        results = {"kiln": run(sys.executable, "kiln", folder, args),
                   "mindspore": run(args.mindspore_python, "mindspore", folder, args)}
    print(f"MindRecord, {args.rows} rows, {args.shards} shards, median of {args.repeats} (rows/s)")
    print(f"{'':12}{'kiln':>15}{'mindspore':>15}{'kiln/ms':>9}")
    for what in ("write", "minddataset", "filereader"):
        k, m = results["kiln"], results["mindspore"]
        kv = f"{k[what]:15.0f}" if isinstance(k, dict) else f"{k:>15}"
        mv = f"{m[what]:15.0f}" if isinstance(m, dict) else f"{m:>15}"
        ratio = f"{k[what] / m[what]:9.2f}" if isinstance(k, dict) and isinstance(m, dict) else ""
        print(f"{what:12}{kv}{mv}{ratio}")


if __name__ == "__main__":
    main()
