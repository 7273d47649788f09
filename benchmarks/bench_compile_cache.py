"""Compile time cold vs from the compile cache on disk (set_context(enable_compile_cache=True), docs/compile_cache.md).

Two programs, each the MindSpore 2.x training step `value_and_grad` + optimizer under `@jit`:
  seed   the seed document's MLP 10-16(ReLU)-1, batch 32, Adam(lr 0.01), MSE
  lenet  the LeNet-style CNN of benchmarks/bench_train_step.py (2 conv+BatchNorm+ReLU+max-pool blocks, Dense
         128-64-10) on 1x8x8 images, batch 64, Adam(lr 0.005), sparse softmax cross-entropy
  deep   a deeper graph: 24 blocks Dense(64, 64) + BatchNorm1d + ReLU, Dense(64, 10), batch 32, Adam, cross-entropy
         (tracing cost grows with the number of ops; loading with the graph's size)
For each repeat, three fresh processes: one with the cache off (off: trace + passes + lowering), one with an empty
cache directory (cold: the same, plus recording the sources and writing the file), then one with the filled
directory (cached: read, validate, bind the file; no trace). Reported: the median over --repeats of the jit entry's
compile_seconds and of the whole first call (compile + one step), and off/cached ratios. Each warm run must have
traced nothing and produced the cold run's losses bit for bit, else the case is reported as failed.

    .venv/bin/python benchmarks/bench_compile_cache.py [--case seed|lenet|deep|all] [--repeats 5]
    .venv/bin/python benchmarks/bench_compile_cache.py --case seed --repeats 1      # seconds: does it run?
Every process runs this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _env import child_env, require_kiln

CASES = {"seed": "seed MLP 10-16-1, batch 32, Adam, MSE", "lenet": "LeNet-style CNN 1x8x8, batch 64, Adam, CE",
         "deep": "MLP 24x(Dense 64+BatchNorm+ReLU), batch 32, Adam"}


def child(case, cache_dir):
    import numpy as np
    ms = require_kiln()
    from kiln import nn, ops
    if cache_dir != "off":
        ms.set_context(enable_compile_cache=True, compile_cache_path=cache_dir)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    if case == "lenet":
        net = nn.SequentialCell([
            nn.Conv2d(1, 16, 3, pad_mode="same"), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, pad_mode="same"), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(128, 64), nn.ReLU(), nn.Dense(64, 10)])
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        x = rng.uniform(0, 1, (64, 1, 8, 8)).astype(np.float32)
        y = rng.integers(0, 10, 64).astype(np.int32)
        lr = 0.005
    elif case == "deep":
        layers = []
        for _ in range(24):
            layers += [nn.Dense(64, 64), nn.BatchNorm1d(64), nn.ReLU()]
        net = nn.SequentialCell(layers + [nn.Dense(64, 10)])
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        x = rng.standard_normal((32, 64)).astype(np.float32)
        y = rng.integers(0, 10, 32).astype(np.int32)
        lr = 0.001
    else:
        net = nn.SequentialCell([nn.Dense(10, 16), nn.ReLU(), nn.Dense(16, 1)])
        loss_fn = nn.MSELoss()
        x = rng.standard_normal((32, 10)).astype(np.float32)
        y = rng.standard_normal((32, 1)).astype(np.float32)
        lr = 0.01
    optimizer = nn.Adam(net.trainable_params(), learning_rate=lr)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        loss = ops.depend(loss, optimizer(grads))
        return loss

    net.set_train(True)
    xd, yd = ms.Tensor(x), ms.Tensor(y)
    t0 = time.perf_counter()
    losses = [train_step(xd, yd).asnumpy().tobytes().hex()]
    first_call = time.perf_counter() - t0
    losses += [train_step(xd, yd).asnumpy().tobytes().hex() for _ in range(4)]
    (entry,) = train_step.graphs
    print("RESULT " + json.dumps({"compile": entry.compile_seconds, "first_call": first_call, "losses": losses,
                                  "traces": train_step.trace_count, "loads": train_step.disk_loads}))


def run_child(case, cache_dir):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, cache_dir], capture_output=True,
                       text=True, env=child_env(), timeout=300)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def bench(case, repeats):
    cold, warm, off = [], [], []
    for _ in range(repeats):
        off.append(run_child(case, "off"))
        with tempfile.TemporaryDirectory(prefix="kiln-cc-bench-") as d:
            c = run_child(case, d)
            w = run_child(case, d)
            if c["traces"] != 1 or w["traces"] != 0 or w["loads"] != 1:
                raise RuntimeError(f"warm run traced ({w['traces']}) or did not load ({w['loads']})")
            if w["losses"] != c["losses"] or off[-1]["losses"] != c["losses"]:
                raise RuntimeError("losses with the cache differ from the run without it")
            cold.append(c)
            warm.append(w)
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    return {k: (med(off, k), med(cold, k), med(warm, k)) for k in ("compile", "first_call")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", default="all", choices=["all", *CASES])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    if a.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {a.repeats}")
    require_kiln()
    print("compile = the jit entry's compile_seconds (trace+passes+lowering, or load+lowering); 1st call = compile + "
          "one step. Milliseconds, median of --repeats fresh processes each.")
    print(f"{'case':<40} {'off':>7} {'cold':>7} {'cached':>7} {'off/cached':>10}   {'1st call off':>12} "
          f"{'cached':>7} {'ratio':>6}")
    for case in (CASES if a.case == "all" else [a.case]):
        try:
            r = bench(case, a.repeats)
        except Exception as e:  # noqa: BLE001 (reported, never a made-up number)
            print(f"{CASES[case]:<40} failed: {e}")
            continue
        (oc, cc, wc), (of, _cf, wf) = r["compile"], r["first_call"]
        print(f"{CASES[case]:<40} {oc * 1e3:7.1f} {cc * 1e3:7.1f} {wc * 1e3:7.1f} {oc / wc:9.1f}x   "
              f"{of * 1e3:12.1f} {wf * 1e3:7.1f} {of / wf:5.1f}x")


if __name__ == "__main__":
    main()
