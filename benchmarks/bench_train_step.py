"""Training-step throughput (steps/s): Kiln PyNative and Kiln @jit against PyTorch, JAX, MLX and MindSpore.

Three cases, each one full training step per iteration (forward, loss, backward, Adam update), on a fixed batch:
  small  the seed document's MLP 10-16(ReLU)-1, batch 32, Adam(lr 0.01), MSE
  large  MLP 784-1024(ReLU)-1024(ReLU)-10, batch 256, Adam(lr 1e-3), MSE against one-hot labels
  lenet  examples/train_lenet_digits.py's CNN on 1x8x8 images (2 conv+BatchNorm+ReLU+max-pool blocks, Dense 128-64-10,
         no dropout), batch 64, Adam(lr 0.005), softmax cross-entropy (Kiln and PyTorch only)
Kiln @jit also reports its compile time (trace + passes + lowering of the whole step, the first call).
Each framework variant runs in its own subprocess (no shared thread pools), warms up, picks a step count that takes
about --min-time seconds, and reports the median steps/s over --repeats such runs. A framework that does not import
is reported as "not installed", one that raises, or whose loss does not go down over the run, as "failed: ..."
-- never a made-up number.

    benchmarks/.venv-peers/bin/python benchmarks/bench_train_step.py [--case small|large|all] [--only kiln,torch,...]
(see benchmarks/README.md; setup_peers.sh makes that venv, with Kiln installed in it). Any python with Kiln installed
works too, e.g. .venv/bin/python (tools/setup_env.sh); the peers it lacks are then "not installed". A kiln that does
not import (or imports from a source tree without its built extension) stops the script with the reason
(benchmarks/_env.py); PYTHONPATH is not needed.
    .venv/bin/python benchmarks/bench_train_step.py --case small --only kiln --repeats 1 --warmup 2 \\
        --min-time 0.05                                                      # seconds: does it run?
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

from _env import child_env, kiln_problem, require_kiln  # (benchmarks/ is sys.path[0] when a script runs)
from _timing import timed_rates

CASES = {
    "small": dict(title="seed MLP 10-16-1, batch 32, Adam(lr 0.01), MSE", sizes=[10, 16, 1], batch=32, lr=0.01,
                  onehot=False),
    "large": dict(title="MLP 784-1024-1024-10, batch 256, Adam(lr 1e-3), MSE on one-hot labels",
                  sizes=[784, 1024, 1024, 10], batch=256, lr=1e-3, onehot=True),
    "lenet": dict(title="LeNet-style CNN on 1x8x8 digits-sized images, batch 64, Adam(lr 0.005), cross-entropy",
                  sizes=[64, 10], batch=64, lr=0.005, onehot=False, cnn=True),
}


def make_data(case):
    rng = np.random.default_rng(0)
    if case.get("cnn"):
        x = rng.uniform(0, 1, (case["batch"], 1, 8, 8)).astype(np.float32)
        return x, rng.integers(0, 10, case["batch"]).astype(np.int32)
    x = rng.standard_normal((case["batch"], case["sizes"][0])).astype(np.float32)
    if case["onehot"]:
        y = np.eye(case["sizes"][-1], dtype=np.float32)[rng.integers(0, case["sizes"][-1], case["batch"])]
    else:
        y = rng.standard_normal((case["batch"], case["sizes"][-1])).astype(np.float32)
    return x, y


COMPILE_SECONDS = [None]  # set by Kiln @jit builds: the first call's trace + compile time


# ---- one builder per framework variant: returns (step, sync, version); step() runs one training step,
# ---- sync() waits for all queued work and returns the last loss as a float.

def build_ms_style(ms, case, x, y, use_jit):
    """The MindSpore 2.x training step, written once for both Kiln (`import kiln as ms`) and MindSpore."""
    nn, ops = ms.nn, ms.ops
    sizes = case["sizes"]
    if case.get("cnn"):
        net = nn.SequentialCell([
            nn.Conv2d(1, 16, 3, pad_mode="same"), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, pad_mode="same"), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(128, 64), nn.ReLU(), nn.Dense(64, 10)])
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    else:
        layers = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Dense(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        net = nn.SequentialCell(layers)
        loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=case["lr"])

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    if use_jit:
        @ms.jit
        def train_step(data, label):
            (loss, _), grads = grad_fn(data, label)
            loss = ops.depend(loss, optimizer(grads))
            return loss
    else:
        def train_step(data, label):
            (loss, _), grads = grad_fn(data, label)
            optimizer(grads)
            return loss

    net.set_train(True)
    xd, yd = ms.Tensor(x), ms.Tensor(y)
    last = {}
    if use_jit:  # the first call traces and compiles the whole step
        t0 = time.perf_counter()
        train_step(xd, yd)
        COMPILE_SECONDS[0] = time.perf_counter() - t0

    def step():
        last["loss"] = train_step(xd, yd)

    def sync():
        return float(last["loss"].asnumpy())

    return step, sync


def build_kiln(case, x, y, use_jit=False):
    import kiln as ms
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    return build_ms_style(ms, case, x, y, use_jit) + (ms.__version__,)


def build_mindspore(case, x, y, use_jit=False):
    os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ logging: errors only
    import mindspore as ms
    if hasattr(ms, "set_device"):
        ms.set_device("CPU")
        ms.set_context(mode=ms.PYNATIVE_MODE)
    else:
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    return build_ms_style(ms, case, x, y, use_jit) + (ms.__version__,)


def build_torch(case, x, y, compiled=False):
    import torch
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    torch.manual_seed(0)
    sizes = case["sizes"]
    tnn = torch.nn
    if case.get("cnn"):
        model = tnn.Sequential(
            tnn.Conv2d(1, 16, 3, padding=1), tnn.BatchNorm2d(16), tnn.ReLU(), tnn.MaxPool2d(2, 2),
            tnn.Conv2d(16, 32, 3, padding=1), tnn.BatchNorm2d(32), tnn.ReLU(), tnn.MaxPool2d(2, 2),
            tnn.Flatten(), tnn.Linear(128, 64), tnn.ReLU(), tnn.Linear(64, 10))
        loss_fn = tnn.CrossEntropyLoss()
        yt = torch.from_numpy(y.astype(np.int64))
    else:
        mods = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            mods.append(tnn.Linear(a, b))
            if i < len(sizes) - 2:
                mods.append(tnn.ReLU())
        model = tnn.Sequential(*mods)
        loss_fn = tnn.MSELoss()
        yt = torch.from_numpy(y)
    model.train()
    fwd = torch.compile(model) if compiled else model
    opt = torch.optim.Adam(model.parameters(), lr=case["lr"])
    xt = torch.from_numpy(x)
    last = {}

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(fwd(xt), yt)
        loss.backward()
        opt.step()
        last["loss"] = loss

    def sync():
        return float(last["loss"].detach())

    return step, sync, torch.__version__


def build_jax(case, x, y):
    if case.get("cnn"):
        raise NotImplementedError("the CNN case is written for Kiln and PyTorch only")
    import jax
    import jax.numpy as jnp
    sizes, lr, b1, b2, eps = case["sizes"], case["lr"], 0.9, 0.999, 1e-8
    key = jax.random.PRNGKey(0)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k1, k2 = jax.random.split(key, 3)
        bound = 1.0 / np.sqrt(a)
        params.append((jax.random.uniform(k1, (a, b), jnp.float32, -bound, bound),
                       jax.random.uniform(k2, (b,), jnp.float32, -bound, bound)))
    tmap = jax.tree_util.tree_map

    def loss_fn(params, xb, yb):
        h = xb
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return jnp.mean((h - yb) ** 2)

    @jax.jit
    def train_step(params, m, v, t, xb, yb):  # Adam as in Kingma & Ba (2015), bias correction folded into lr
        loss, g = jax.value_and_grad(loss_fn)(params, xb, yb)
        t = t + 1
        m = tmap(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = tmap(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        lr_t = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = tmap(lambda p, m_, v_: p - lr_t * m_ / (jnp.sqrt(v_) + eps), params, m, v)
        return params, m, v, t, loss

    state = {"p": params, "m": tmap(jnp.zeros_like, params), "v": tmap(jnp.zeros_like, params),
             "t": jnp.zeros((), jnp.float32)}
    xd, yd = jnp.asarray(x), jnp.asarray(y)

    def step():
        state["p"], state["m"], state["v"], state["t"], state["loss"] = train_step(
            state["p"], state["m"], state["v"], state["t"], xd, yd)

    def sync():
        return float(state["loss"].block_until_ready())

    return step, sync, jax.__version__


def build_mlx(case, x, y, compiled=False):
    if case.get("cnn"):
        raise NotImplementedError("the CNN case is written for Kiln and PyTorch only")
    from functools import partial

    import mlx.core as mx
    import mlx.nn as mnn
    import mlx.optimizers as optim
    mx.set_default_device(mx.cpu)
    mx.random.seed(0)
    sizes = case["sizes"]
    mods = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        mods.append(mnn.Linear(a, b))
        if i < len(sizes) - 2:
            mods.append(mnn.ReLU())
    model = mnn.Sequential(*mods)
    mx.eval(model.parameters())
    opt = optim.Adam(learning_rate=case["lr"])

    def loss_fn(model, xb, yb):
        return mnn.losses.mse_loss(model(xb), yb)

    loss_and_grad = mnn.value_and_grad(model, loss_fn)

    def train_step(xb, yb):
        loss, grads = loss_and_grad(model, xb, yb)
        opt.update(model, grads)
        return loss

    if compiled:
        st = [model.state, opt.state]
        train_step = partial(mx.compile, inputs=st, outputs=st)(train_step)
    xd, yd = mx.array(x), mx.array(y)
    last = {}

    def step():
        loss = train_step(xd, yd)
        mx.eval(loss, model.parameters(), opt.state)  # MLX is lazy: each step is evaluated, as in training
        last["loss"] = loss

    def sync():
        return float(last["loss"].item())

    try:
        from importlib.metadata import version
        ver = version("mlx")
    except Exception:  # noqa: BLE001 (the version is only shown)
        ver = "?"
    return step, sync, ver


# name -> (label, builder, kwargs). The first one is the reference for the Kiln/peer ratio.
VARIANTS = {
    "kiln": ("Kiln PyNative", build_kiln, {}),
    "kiln-jit": ("Kiln @jit (Graph)", build_kiln, {"use_jit": True}),
    "torch": ("PyTorch eager", build_torch, {}),
    "torch-compile": ("PyTorch torch.compile", build_torch, {"compiled": True}),
    "jax": ("JAX jit", build_jax, {}),
    "mlx": ("MLX (CPU)", build_mlx, {}),
    "mlx-compile": ("MLX mx.compile (CPU)", build_mlx, {"compiled": True}),
    "mindspore": ("MindSpore PyNative (CPU)", build_mindspore, {}),
    "mindspore-jit": ("MindSpore @jit (CPU)", build_mindspore, {"use_jit": True}),
}
_IMPORT_NAME = {"kiln": "kiln", "torch": "torch", "jax": "jax", "mlx": "mlx", "mindspore": "mindspore"}


def measure(step, sync, warmup, repeats, min_time):
    """Median steps/s over `repeats` timed runs of n steps each (n chosen so a run takes about min_time s)."""
    for _ in range(warmup):
        step()
    first = sync()
    rates, n, loss = timed_rates(step, sync, repeats, min_time)
    # Sanity check (no number for a step that does not train): many Adam steps on one fixed batch lower the loss.
    if not loss < first:
        raise AssertionError(f"the loss did not decrease ({first:.4g} after warm-up, {loss:.4g} at the end)")
    return statistics.median(rates), n, rates


def worker(variant, case_name, args):
    """Runs one variant on one case in this process; prints one JSON line."""
    label, builder, kw = VARIANTS[variant]
    base = variant.split("-")[0]
    case = CASES[case_name]
    x, y = make_data(case)
    if base == "kiln" and kiln_problem():
        print(json.dumps({"status": "failed", "detail": kiln_problem()}))
        return
    try:
        __import__(_IMPORT_NAME[base])
    except ImportError as e:
        print(json.dumps({"status": "not installed", "detail": str(e)}))
        return
    try:
        t0 = time.perf_counter()
        step, sync, version = builder(case, x, y, **kw)
        rate, n, rates = measure(step, sync, args.warmup, args.repeats, args.min_time)
        print(json.dumps({"status": "ok", "rate": rate, "n": n, "rates": rates, "version": version,
                          "wall": time.perf_counter() - t0, "compile_seconds": COMPILE_SECONDS[0]}))
    except NotImplementedError as e:
        print(json.dumps({"status": "not available", "detail": str(e)}))
    except Exception as e:  # noqa: BLE001 - reported in the table
        msg = f"{type(e).__name__}: {e}".splitlines()[0][:120]
        print(json.dumps({"status": "failed", "detail": msg}))


def run_variant(variant, case_name, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", variant, "--case", case_name,
           "--warmup", str(args.warmup), "--repeats", str(args.repeats), "--min-time", str(args.min_time)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=child_env(args.threads))
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": f"timed out after {args.timeout} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:120]
    return {"status": "failed", "detail": f"exit {p.returncode}: {tail}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=list(CASES) + ["all"], default="all")
    ap.add_argument("--only", default="", help="comma-separated variants, from: " + ", ".join(VARIANTS))
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per variant (median reported; default 5)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first (compilation etc.; default 20)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per timed run (default 1.0)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per variant and case")
    ap.add_argument("--quick", action="store_true", help="--repeats 3 --warmup 5 --min-time 0.2")
    ap.add_argument("--threads", type=int, default=0,
                    help="sets OMP/MKL/OpenBLAS_NUM_THREADS (and torch's threads) for every framework (default: "
                         "each framework's own default, usually all cores)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.warmup, args.min_time = 3, 5, 0.2
    if args.worker:
        worker(args.worker, args.case, args)
        return 0
    variants = [v for v in args.only.split(",") if v] or list(VARIANTS)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; choose from {list(VARIANTS)}")
    if "kiln" not in variants:
        variants.insert(0, "kiln")
    require_kiln()  # every variant runs in this python, Kiln's always
    cases = list(CASES) if args.case == "all" else [args.case]

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"median of {args.repeats} runs of ~{args.min_time:g} s each after {args.warmup} warm-up steps")
    print("Kiln/peer = Kiln PyNative steps/s divided by the peer's; jit/peer = Kiln @jit's (above 1: Kiln is faster)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > 0.5 * (os.cpu_count() or 1):
        print(f"WARNING: the machine is busy (load average {load:.1f} on {os.cpu_count()} cores): "
              "the numbers below are not representative")
    results = {}
    for case_name in cases:
        case = CASES[case_name]
        print(f"\n{case_name}: {case['title']}")
        print(f"  {'framework':<26} {'version':<14} {'steps/s':>11} {'Kiln/peer':>10} {'jit/peer':>9}  {'steps/run':>9}")
        print("  " + "-" * 86)
        ref = None
        ref_jit = None
        if "kiln-jit" in variants:  # measured first so that every row can show jit/peer
            variants = ["kiln", "kiln-jit"] + [v for v in variants if v not in ("kiln", "kiln-jit")]
        results[case_name] = {}
        for v in variants:
            r = run_variant(v, case_name, args)
            results[case_name][v] = r
            label = VARIANTS[v][0]
            if r["status"] == "ok":
                if v == "kiln":
                    ref = r["rate"]
                if v == "kiln-jit":
                    ref_jit = r["rate"]
                ratio = f"{ref / r['rate']:.2f}" if ref else "-"
                ratio_jit = f"{ref_jit / r['rate']:.2f}" if ref_jit else "-"
                print(f"  {label:<26} {r['version'][:14]:<14} {r['rate']:>11,.1f} {ratio:>10} {ratio_jit:>9}  "
                      f"{r['n']:>9}")
                if r.get("compile_seconds") is not None:
                    print(f"  {'':<26} compile (trace + passes + lowering, first call): "
                          f"{r['compile_seconds'] * 1e3:.1f} ms")
            else:
                what = {"not installed": "not installed",
                        "not available": "not available: " + r.get("detail", "")}.get(
                    r["status"], "failed: " + r.get("detail", ""))
                print(f"  {label:<26} {what}")
            sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
