"""Training throughput of real zoo models (steps/s and GFLOP/s): mindcv models on Kiln (through kiln.compat:
`import mindspore` is Kiln) against the same architectures in PyTorch (torchvision / timm), float32 and bfloat16.

Models (batch 16, or --batch N; random fixed batch, 10 classes, Momentum(lr 0.01 -- ResNet-50 0.001, with which its
loss goes down on both frameworks -- momentum 0.9), softmax cross-entropy):
  resnet18      mindcv `resnet18`                 vs torchvision `resnet18`                3x64x64
  resnet50      mindcv `resnet50`                 vs torchvision `resnet50`                3x64x64
                (both ResNets: mindcv's stem max pool pads "same" as TensorFlow does, the odd pixel of padding at the
                bottom/right; torchvision's pads 1 on every side: the windows shift by one pixel, the losses differ
                by ~0.1, the table says DIFFERENT; the FLOPs are the same)
  mobilenet_v3  mindcv `mobilenet_v3_small_100`   vs torchvision `mobilenet_v3_small`      3x64x64
                (the classifier's Dropout(0.2) removed on both sides, so that the step is deterministic;
                torchvision's BatchNorm eps 1e-3 set to mindcv's 1e-5; the losses still differ by ~1e-2, DIFFERENT:
                mindcv's stride-2 depthwise convolutions pad "same", torchvision's (k-1)/2 on every side, as above)
  vit_tiny      mindcv's VisionTransformer class with ViT-Tiny's configuration (patch 16, width 192, depth 12,
                3 heads; mindcv registers only ViT-B/L, too heavy for 2 cores), exact GELU and LayerNorm eps 1e-6
                as in timm, vs timm `vit_tiny_patch16_224` built with img_size=96          3x96x96
(--image-size S: S x S for every model, e.g. 32 for a short run.)
Variants: Kiln PyNative and Kiln @jit (the whole training step -- forward, gradients, optimizer -- one graph), PyTorch
eager and torch.compile; each in float32 and in bfloat16 (Kiln: amp.auto_mixed_precision(net, "O2", bfloat16);
PyTorch: torch.autocast("cpu", bfloat16)).

Same work: the mindcv model is built once (seed 0) and its trainable parameters written to a .npz; every variant
loads them (PyTorch's parameters in definition order, every shape checked: a mismatch is reported and PyTorch then
keeps its own initialisation, and the table says so). Both parameter counts are printed, and the first losses
(before and after the first update) of every variant are compared with Kiln PyNative's.

FLOP rate: the training step's FLOPs are 3 x the forward FLOPs that torch.utils.flop_counter counts once on the
PyTorch model (float32, eager; the usual convention: the backward pass computes the gradients of the inputs and of
the weights, twice the forward's matmul/convolution work; the optimizer update is not counted), used for every
variant of both frameworks (GFLOP/s = that count x steps/s). (flop_counter's own convolution_backward count is not
used: it counts a grouped convolution as a dense one, 32x the forward FLOPs on MobileNetV3's depthwise layers.) Beside it, the machine's float32 matmul rate: a 1024^3 sgemm (Kiln ops.matmul and
torch.mm, each in its own process, per thread count) measured in the same run; "% peak" divides by the faster one.

Each (model, variant, dtype, thread count) runs in its own subprocess, with OMP/MKL/OpenBLAS_NUM_THREADS (and
torch.set_num_threads) set to the thread count; --rounds N interleaves N passes over all cells and reports the median
of the rounds (benchmarks/_timing.py picks each timed run's step count). Kiln runs in --kiln-python (default this
python: the installed Kiln, or the one PYTHONPATH points to; benchmarks/_env.py) under `python -m kiln.compat`, with
mindcv's source folder (--mindcv, default $MINDCV_SRC or /tmp/mindcv_src; else an installed mindcv) on its path.
PyTorch runs in --torch-python (default benchmarks/.venv-peers: benchmarks/setup_peers.sh --only torch installs torch,
torchvision and timm); a missing peer is reported as "not installed", a failure as "failed: ...", never a number.

    .venv/bin/python benchmarks/bench_zoo.py --threads 1,2 [--models resnet18,vit_tiny] [--rounds 3] [--quick]
    .venv/bin/python benchmarks/bench_zoo.py --profile resnet18 [--threads 1] [--dtypes fp32]  # top ops per step
    .venv/bin/python benchmarks/bench_zoo.py --models resnet18 --variants kiln --dtypes fp32 --threads 1 \\
        --repeats 1 --warmup 0 --min-time 0.05                                                 # does it run?
"""
import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _env import CHILD_CWD, child_env, missing_python, require_kiln_in  # (benchmarks/ is sys.path[0])
from _timing import timed_rates

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 16
NUM_CLASSES = 10
LR, MOMENTUM = 0.01, 0.9
VIT_TINY = dict(patch_size=16, embed_dim=192, depth=12, num_heads=3)  # timm vit_tiny_patch16_224

MODELS = {
    "resnet18": dict(size=64, mindcv="resnet18", torch=("torchvision", "resnet18")),
    "resnet50": dict(size=64, mindcv="resnet50", torch=("torchvision", "resnet50"), lr=0.001),
    "mobilenet_v3": dict(size=64, mindcv="mobilenet_v3_small_100", torch=("torchvision", "mobilenet_v3_small")),
    "vit_tiny": dict(size=96, mindcv="VisionTransformer(ViT-Tiny/16)", torch=("timm", "vit_tiny_patch16_224")),
}
# name -> (label, framework, options)
VARIANTS = {
    "kiln": ("Kiln PyNative", "kiln", {}),
    "kiln-jit": ("Kiln @jit", "kiln", {"jit": True}),
    "torch": ("PyTorch eager", "torch", {}),
    "torch-compile": ("torch.compile", "torch", {"compiled": True}),
}
DTYPES = ("fp32", "bf16")


def configure(batch=None, image_size=None):
    """Overrides BATCH (every model) and the image size (every model; else 64, ViT 96): --batch / --image-size,
    which the parent passes on to every child process."""
    global BATCH
    if batch:
        BATCH = batch
    if image_size:
        for m in MODELS.values():
            m["size"] = image_size


def make_data(model):
    """The fixed batch of a model: (x float32 (BATCH, 3, S, S), labels int32 (BATCH,))."""
    size = MODELS[model]["size"]
    rng = np.random.default_rng(1234)
    return (rng.standard_normal((BATCH, 3, size, size)).astype(np.float32),
            rng.integers(0, NUM_CLASSES, BATCH).astype(np.int32))


# ---------------------------------------------------------------------------------------------------------------
# Kiln side (runs under `python -m kiln.compat`: `mindspore` is Kiln)

def build_mindcv(model):
    """The mindcv network of `model` (num_classes 10, dropout removed), built with `import mindspore` (Kiln here)."""
    import mindspore as ms
    from mindspore import nn
    import mindcv
    ms.set_seed(0)
    np.random.seed(0)
    if model == "vit_tiny":
        from mindcv.models.vit import VisionTransformer
        return VisionTransformer(image_size=MODELS[model]["size"], num_classes=NUM_CLASSES,
                                 act_layer=functools.partial(nn.GELU, approximate=False),
                                 norm_layer=functools.partial(nn.LayerNorm, epsilon=1e-6), **VIT_TINY)
    net = mindcv.create_model(MODELS[model]["mindcv"], num_classes=NUM_CLASSES, pretrained=False)
    if model == "mobilenet_v3":  # [Dense, HSwish, Dropout(0.2), Dense] -> without the Dropout
        cls = net.classifier
        net.classifier = nn.SequentialCell([cls[0], cls[1], cls[3]])
    return net


def kiln_step(model, dtype, jit, weights):
    """(step, sync, version, n_params) of the Kiln training step; `weights`: .npz of the initial parameters."""
    import mindspore as ms
    from mindspore import amp, nn, ops
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = build_mindcv(model)
    params = net.trainable_params()
    if weights:
        w = np.load(weights)
        arrays = [w[f"p{i}"] for i in range(len(w.files))]
        if [a.shape for a in arrays] != [tuple(p.shape) for p in params]:
            raise AssertionError("the saved initial parameters do not fit the network")
        for p, a in zip(params, arrays):
            p.set_data(ms.Tensor(a))
    if dtype == "bf16":
        net = amp.auto_mixed_precision(net, "O2", ms.bfloat16)
    net.set_train(True)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(params, learning_rate=MODELS[model].get("lr", LR), momentum=MOMENTUM)

    def forward(x, y):
        return loss_fn(net(x).astype(ms.float32), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        return ops.depend(loss, opt(grads))

    if jit:
        train_step = ms.jit(train_step)
    xs, ys = make_data(model)
    x, y = ms.Tensor(xs), ms.Tensor(ys)
    last = [None]

    def step():
        last[0] = train_step(x, y)

    n_params = sum(int(np.prod(p.shape)) for p in params)
    return step, lambda: float(last[0].asnumpy()), ms.__version__, n_params


def kiln_init(model, path):
    """Builds the mindcv model and writes its trainable parameters (in order) to `path` (.npz, p0, p1, ...)."""
    net = build_mindcv(model)
    params = net.trainable_params()
    np.savez(path, **{f"p{i}": p.asnumpy() for i, p in enumerate(params)})
    return {"status": "ok", "params": sum(int(np.prod(p.shape)) for p in params), "tensors": len(params)}


def kiln_peak(threads):
    import mindspore as ms
    from mindspore import ops
    rng = np.random.default_rng(0)
    a = ms.Tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
    b = ms.Tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
    return _peak(lambda: ops.matmul(a, b), lambda out: out.asnumpy())


def _peak(call, sync):
    """GFLOP/s of a 1024^3 matmul: the best of 5 runs of ~0.3 s each (after 3 warm-up calls)."""
    for _ in range(3):
        sync(call())
    best = 0.0
    for _ in range(5):
        n, t0 = 0, time.perf_counter()
        while True:
            out = call()
            n += 1
            if time.perf_counter() - t0 > 0.3:
                break
        sync(out)
        best = max(best, 2 * 1024 ** 3 * n / (time.perf_counter() - t0) / 1e9)
    return {"status": "ok", "gflops": best}


# ---------------------------------------------------------------------------------------------------------------
# PyTorch side

def build_torch_model(torch, model):
    lib, name = MODELS[model]["torch"]
    if lib == "torchvision":
        import torchvision
        kw = {}
        if model == "mobilenet_v3":  # no dropout; BatchNorm eps 1e-5 as mindcv's (torchvision's MobileNetV3: 1e-3)
            kw = {"dropout": 0.0, "norm_layer": functools.partial(torch.nn.BatchNorm2d, eps=1e-5)}
        return getattr(torchvision.models, name)(num_classes=NUM_CLASSES, **kw), torchvision.__version__
    import timm
    return timm.create_model(name, pretrained=False, num_classes=NUM_CLASSES, img_size=MODELS[model]["size"]), \
        timm.__version__


def torch_step(model, dtype, compiled, threads, weights, count_flops=False):
    """(step, sync, version, n_params, extra) of the PyTorch training step; extra: same_weights, flops."""
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net, lib_version = build_torch_model(torch, model)
    params = [p for p in net.parameters() if p.requires_grad]
    extra = {"same_weights": False}
    if weights:
        w = np.load(weights)
        arrays = [w[f"p{i}"] for i in range(len(w.files))]
        if [a.shape for a in arrays] == [tuple(p.shape) for p in params]:
            with torch.no_grad():
                for p, a in zip(params, arrays):
                    p.copy_(torch.from_numpy(a))
            extra["same_weights"] = True
    net.train()
    xs, ys = make_data(model)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys.astype(np.int64))
    loss_fn = torch.nn.CrossEntropyLoss()
    if count_flops:  # forward FLOPs x 3 (see the module docstring)
        from torch.utils.flop_counter import FlopCounterMode
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            net(x)
        extra["flops"] = 3 * int(fc.get_total_flops())
    fwd = torch.compile(net) if compiled else net
    opt = torch.optim.SGD(net.parameters(), lr=MODELS[model].get("lr", LR), momentum=MOMENTUM)
    last = [None]

    def step():
        opt.zero_grad(set_to_none=True)
        if dtype == "bf16":
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                loss = loss_fn(fwd(x), y)
        else:
            loss = loss_fn(fwd(x), y)
        loss.backward()
        opt.step()
        last[0] = loss

    n_params = sum(p.numel() for p in params)
    version = f"torch {torch.__version__.split('+')[0]}, {MODELS[model]['torch'][0]} {lib_version}"
    return step, lambda: float(last[0].detach().float()), version, n_params, extra


def torch_peak(threads):
    import torch
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(1024, 1024, generator=g), torch.randn(1024, 1024, generator=g)
    return _peak(lambda: torch.mm(a, b), lambda out: float(out[0, 0]))


# ---------------------------------------------------------------------------------------------------------------
# workers (one cell per process; print one JSON line)

def worker(args):
    try:
        if args.worker == "init":
            out = kiln_init(args.model, args.weights)
        elif args.worker == "peak":
            out = (kiln_peak if args.framework == "kiln" else torch_peak)(args.worker_threads)
        else:
            out = worker_step(args)
    except ImportError as e:
        out = {"status": "not installed", "detail": str(e).splitlines()[0][:140]}
    except Exception as e:  # noqa: BLE001 (reported in the table)
        out = {"status": "failed", "detail": f"{type(e).__name__}: {e}".splitlines()[0][:160]}
    print(json.dumps(out), flush=True)


def worker_step(args):
    _, fw, opts = VARIANTS[args.worker]
    t0 = time.perf_counter()
    extra = {}
    if fw == "kiln":
        step, sync, version, n_params = kiln_step(args.model, args.dtype, opts.get("jit", False), args.weights)
    else:
        step, sync, version, n_params, extra = torch_step(
            args.model, args.dtype, opts.get("compiled", False), args.worker_threads, args.weights,
            count_flops=args.count_flops)
    step()
    loss0 = sync()
    step()
    loss1 = sync()
    for _ in range(args.warmup):
        step()
    sync()
    setup = time.perf_counter() - t0
    rates, n, loss = timed_rates(step, sync, args.repeats, args.min_time)
    if not loss < loss0:
        raise AssertionError(f"the loss did not decrease ({loss0:.4g} at the first step, {loss:.4g} at the end)")
    return {"status": "ok", "rate": statistics.median(rates), "rates": rates, "n": n, "version": version,
            "params": n_params, "losses": [loss0, loss1, loss], "setup_s": setup, **extra}


def shape_args(args):
    """The --batch / --image-size options of a child process (those the parent was given)."""
    return (["--batch", str(args.batch)] if args.batch else []) + (
        ["--image-size", str(args.image_size)] if args.image_size else [])


def run_child(args, framework, threads, worker_args):
    py = args.kiln_python if framework == "kiln" else args.torch_python
    why = missing_python(py)
    if why:
        return {"status": "not installed", "detail": why}
    me = os.path.abspath(__file__)
    cmd = ([py, "-m", "kiln.compat", me] if framework == "kiln" else [py, me]) + [
        "--worker-threads", str(threads), "--warmup", str(args.warmup), "--repeats", str(args.repeats),
        "--min-time", str(args.min_time)] + shape_args(args) + worker_args
    path = [args.mindcv] if framework == "kiln" and args.mindcv else []
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=CHILD_CWD,
                           env=child_env(threads, path=path, GLOG_v=3))
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": f"timed out after {args.timeout:g} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:160]
    return {"status": "failed", "detail": f"exit {p.returncode}: {tail}"}


# ---------------------------------------------------------------------------------------------------------------
# the table

def combine(rounds):
    """One result from a cell's rounds: the median of the rounds' rates (the first failure if any failed)."""
    bad = [r for r in rounds if r.get("status") != "ok"]
    if bad:
        return bad[0]
    out = dict(rounds[0])
    out["round_rates"] = [r["rate"] for r in rounds]
    out["rate"] = statistics.median(out["round_rates"])
    return out


def same_work_line(cells, dtype):
    """Compares each variant's first two losses with Kiln PyNative's (same dtype, first thread count)."""
    ref = cells.get("kiln")
    if not ref or ref.get("status") != "ok":
        return f"    same work ({dtype}): no Kiln PyNative run to compare with"
    r0, r1 = ref["losses"][0], ref["losses"][1]
    parts = [f"Kiln PyNative loss {r0:.5f} -> {r1:.5f}"]
    tol = (1e-4, 2e-3) if dtype == "fp32" else (3e-2, 5e-2)
    for v, r in cells.items():
        if v == "kiln" or r.get("status") != "ok":
            continue
        d0, d1 = abs(r["losses"][0] - r0), abs(r["losses"][1] - r1)
        ok = d0 <= tol[0] * max(1.0, abs(r0)) and d1 <= tol[1] * max(1.0, abs(r1))
        parts.append(f"{VARIANTS[v][0]} |d| {d0:.1e}, {d1:.1e}{'' if ok else ' (DIFFERENT)'}")
    return f"    same work ({dtype}): " + "; ".join(parts)


def fmt_rate(r, flops, peak):
    if r.get("status") != "ok":
        return f"{r.get('status', '?')[:22]:>22}"
    g = f"{flops * r['rate'] / 1e9:7.1f}" if flops else f"{'-':>7}"
    pct = f"{100 * flops * r['rate'] / 1e9 / peak:4.0f}%" if flops and peak else f"{'-':>5}"
    return f"{r['rate']:8.2f} {g} {pct}"


def run_table(args):
    threads = args.thread_counts
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start; batch {BATCH}; median of {args.repeats} runs of "
          f"~{args.min_time:g} s after {args.warmup + 2} warm-up steps; each cell its own process"
          + (f"; median of {args.rounds} interleaved rounds" if args.rounds > 1 else ""))
    print(f"pythons: kiln {args.kiln_python} (mindcv from {args.mindcv or 'site-packages'}), "
          f"torch {args.torch_python}")
    frameworks = sorted({VARIANTS[v][1] for v in args.variants})
    tmp = tempfile.mkdtemp(prefix="bench_zoo_")
    inits = {}
    for m in args.models:
        path = os.path.join(tmp, f"{m}.npz")
        inits[m] = run_child(args, "kiln", threads[0], ["--worker", "init", "--model", m, "--weights", path])
        inits[m]["path"] = path if inits[m].get("status") == "ok" else ""
    peaks = {(fw, t): [] for fw in frameworks for t in threads}
    runs = {}
    for rnd in range(args.rounds):  # interleaved: a change of machine load hits every cell alike
        for fw in frameworks:
            for t in threads:
                peaks[fw, t].append(run_child(args, fw, t, ["--worker", "peak", "--framework", fw]))
        for m in args.models:
            for dtype in args.dtypes:
                for v in args.variants:
                    for t in threads:
                        if f"{v}:{dtype}" in args.skip:
                            runs.setdefault((m, dtype, v, t), []).append({"status": "skipped (--skip)"})
                            continue
                        wa = ["--worker", v, "--model", m, "--dtype", dtype, "--weights", inits[m]["path"]]
                        if v == "torch" and dtype == "fp32" and rnd == 0:
                            wa.append("--count-flops")
                        r = run_child(args, VARIANTS[v][1], t, wa)
                        runs.setdefault((m, dtype, v, t), []).append(r)
                        if args.verbose:
                            shown = f"{r['rate']:.2f} steps/s (setup {r['setup_s']:.0f} s)" \
                                if r.get("status") == "ok" else f"{r.get('status')}: {r.get('detail', '')}"
                            print(f"  [round {rnd + 1}] {m} {dtype} {VARIANTS[v][0]} {t} thr: {shown}", flush=True)
    best_peak = {}
    print("\n1024^3 float32 matmul (GFLOP/s, best of 5 runs, median of the rounds):")
    for t in threads:
        cells = []
        for fw in frameworks:
            ok = [p["gflops"] for p in peaks[fw, t] if p.get("status") == "ok"]
            cells.append(f"{fw} {statistics.median(ok):.1f}" if ok else f"{fw} {peaks[fw, t][0].get('status')}")
            if ok:
                best_peak[t] = max(best_peak.get(t, 0.0), statistics.median(ok))
        print(f"  {t} thread(s): " + ", ".join(cells))
    results = {"load_start": load, "peaks": {f"{fw}|{t}": peaks[fw, t] for fw, t in peaks}, "models": {}}
    for m in args.models:
        res = {k[1:]: combine(v) for k, v in runs.items() if k[0] == m}
        flops = next((r["flops"] for r in runs.get((m, "fp32", "torch", threads[0]), [])
                      if r.get("status") == "ok" and "flops" in r), None)
        init = inits[m]
        kp = init.get("params")
        tp = next((r["params"] for r in res.values() if r.get("status") == "ok" and r["version"].startswith("torch")),
                  None)
        same = any(r.get("same_weights") for r in res.values() if r.get("status") == "ok")
        lib, tname = MODELS[m]["torch"]
        size = MODELS[m]["size"]
        print(f"\n{m}: mindcv {MODELS[m]['mindcv']} vs {lib} {tname}, batch {BATCH}, 3x{size}x{size}")
        print(f"  parameters: Kiln/mindcv {kp:,}" if kp else f"  parameters: Kiln/mindcv ({init.get('status')}: "
              f"{init.get('detail', '')})", end="")
        print(f", PyTorch {tp:,}" if tp else ", PyTorch -", end="")
        print("; same initial weights" if same else "; NOT the same initial weights (shapes differ or no run)")
        print("  training-step FLOPs (3 x forward, torch.utils.flop_counter): "
              + (f"{flops / 1e9:.2f} GFLOP" if flops else "not counted (no PyTorch eager fp32 run)"))
        head = "".join(f"{f'{t} thr: steps/s GFLOP/s %peak':>30}" for t in threads)
        print(f"  {'dtype':<5} {'framework / mode':<16} {'version':<34}{head}"
              + ("   2/1 thr" if len(threads) > 1 else ""))
        for dtype in args.dtypes:
            for v in args.variants:
                cells = [res.get((dtype, v, t), {"status": "-"}) for t in threads]
                version = next((c["version"] for c in cells if c.get("status") == "ok"), "")
                line = "".join(f"{fmt_rate(c, flops, best_peak.get(t)):>30}" for c, t in zip(cells, threads))
                if len(threads) > 1 and all(c.get("status") == "ok" for c in cells):
                    line += f"   {cells[-1]['rate'] / cells[0]['rate']:7.2f}x"
                print(f"  {dtype:<5} {VARIANTS[v][0]:<16} {version[:34]:<34}{line}")
                for d in sorted({c.get("detail") for c in cells if c.get("status") != "ok" and c.get("detail")}):
                    print(f"  {'':<57}{d}")
        for dtype in args.dtypes:
            for base in ("torch", "torch-compile"):
                cells = []
                for t in threads:
                    kiln = [res[dtype, k, t]["rate"] for k in ("kiln", "kiln-jit")
                            if res.get((dtype, k, t), {}).get("status") == "ok"]
                    ref = res.get((dtype, base, t), {})
                    cells.append(f"{max(kiln) / ref['rate']:.2f}" if kiln and ref.get("status") == "ok" else "-")
                print(f"  {dtype} Kiln best / {VARIANTS[base][0]}: " + ", ".join(
                    f"{c} ({t} thr)" for c, t in zip(cells, threads)))
        if "bf16" in args.dtypes and "fp32" in args.dtypes:
            for v in args.variants:
                cells = []
                for t in threads:
                    a, b = res.get(("bf16", v, t), {}), res.get(("fp32", v, t), {})
                    cells.append(f"{a['rate'] / b['rate']:.2f}" if a.get("status") == b.get("status") == "ok"
                                 else "-")
                print(f"  bf16 / fp32, {VARIANTS[v][0]}: " + ", ".join(f"{c} ({t} thr)" for c, t in zip(cells,
                                                                                                       threads)))
        for dtype in args.dtypes:
            print(same_work_line({v: res.get((dtype, v, threads[0]), {}) for v in args.variants}, dtype))
        results["models"][m] = {"flops": flops, "params": {"kiln": kp, "torch": tp}, "same_weights": same,
                                "cells": {"|".join(map(str, k)): r for k, r in res.items()}}
        sys.stdout.flush()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    return results


# ---------------------------------------------------------------------------------------------------------------
# --profile: Kiln's top ops per step (kiln.runtime.profile) beside PyTorch eager's (torch.profiler)

def profile_worker(args):
    if args.framework == "torch":
        return profile_torch(args)
    import mindspore as ms
    from kiln.runtime import profile
    for jit, mode in ((False, "PyNative"), (True, "Graph (@jit)")):
        step, sync, version, _ = kiln_step(args.model, args.dtype, jit, None)
        for _ in range(max(args.warmup, 2)):
            step()
        sync()
        with profile() as prof:
            for _ in range(args.profile_steps):
                step()
            sync()
        steps = args.profile_steps
        wall = prof.wall_ms / steps
        rows = prof.stats()
        print(f"\nKiln {ms.__version__} {mode}, {args.model} {args.dtype}, {args.worker_threads} thread(s): "
              f"{wall:.1f} ms per step (mean of {steps}), {prof.total_ms / steps:.1f} ms in kernels")
        print(f"  {'op':<28} {'ran in':<9} {'calls/step':>10} {'ms/step':>9} {'% of step':>10}")
        for r in rows[:args.top]:
            print(f"  {r['op']:<28} {r['mode']:<9} {r['calls'] / steps:>10g} {r['total_ms'] / steps:>9.2f} "
                  f"{100 * r['total_ms'] / prof.wall_ms:>9.1f}%")
        rest = sum(r["total_ms"] for r in rows[args.top:]) / steps
        print(f"  {f'({max(0, len(rows) - args.top)} other ops)':<28} {'':<9} {'':>10} {rest:>9.2f} "
              f"{100 * rest / wall:>9.1f}%")
        sys.stdout.flush()


def profile_torch(args):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step, sync, version, _, _ = torch_step(args.model, args.dtype, False, args.worker_threads, None)
    for _ in range(max(args.warmup, 2)):
        step()
    sync()
    steps = args.profile_steps
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
        sync()
    wall = (time.perf_counter() - t0) * 1e3 / steps
    print(f"\nPyTorch eager ({version}), {args.model} {args.dtype}, {args.worker_threads} thread(s): {wall:.1f} ms "
          f"per step under the profiler (mean of {steps}); top ops by self CPU time")
    print(f"  {'op':<44} {'calls/step':>10} {'ms/step':>9} {'% of step':>10}")
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    for e in rows[:args.top]:
        ms_ = e.self_cpu_time_total / 1e3 / steps
        print(f"  {e.key[:44]:<44} {e.count / steps:>10g} {ms_:>9.2f} {100 * ms_ / wall:>9.1f}%")
    del torch
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, from: " + ", ".join(MODELS))
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    ap.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated, from: fp32, bf16")
    ap.add_argument("--skip", default="", help="comma-separated VARIANT:DTYPE cells not to run, e.g. "
                    "torch:bf16,torch-compile:bf16 on a CPU without AVX512_BF16, where PyTorch's bfloat16 "
                    "autocast runs 4-20x slower than its float32 (docs/benchmarks/zoo.md)")
    ap.add_argument("--batch", type=int, help=f"batch size of every model (default {BATCH})")
    ap.add_argument("--image-size", type=int, help="image height = width of every model, a multiple of 16, at least "
                    "32 (default: 64, ViT 96)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--kiln-python", default=sys.executable, help="python that imports kiln (default: this one)")
    peers_py = os.path.join(HERE, ".venv-peers", "bin", "python")
    ap.add_argument("--torch-python", default=peers_py if os.path.exists(peers_py) else sys.executable,
                    help="python with torch, torchvision and timm (default: benchmarks/.venv-peers, else this one)")
    default_mindcv = os.environ.get("MINDCV_SRC", "/tmp/mindcv_src")
    ap.add_argument("--mindcv", default=default_mindcv if os.path.isdir(default_mindcv) else "",
                    help="mindcv source folder put on the Kiln child's PYTHONPATH (default $MINDCV_SRC or "
                         "/tmp/mindcv_src when it exists; '' for an installed mindcv)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per cell (median; default 5)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved passes over all cells (median; default 1)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps after the first two (default 5)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per timed run (default 1.0)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per cell (default 1800)")
    ap.add_argument("--quick", action="store_true", help="--repeats 3 --warmup 2 --min-time 0.5")
    ap.add_argument("--verbose", action="store_true", help="print each cell's result as it comes")
    ap.add_argument("--profile", metavar="MODEL", help="instead of the table: Kiln's top ops per step (PyNative "
                                                       "and @jit) and PyTorch eager's, for each --threads and --dtypes")
    ap.add_argument("--profile-steps", type=int, default=3, help="steps profiled (default 3)")
    ap.add_argument("--top", type=int, default=15, help="ops listed by --profile (default 15)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    for a in ("--worker", "--model", "--dtype", "--weights", "--framework"):
        ap.add_argument(a, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--count-flops", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.warmup, args.min_time = 3, 2, 0.5
    if args.repeats < 1 or args.rounds < 1 or args.warmup < 0 or args.min_time <= 0 or args.timeout <= 0:
        ap.error("--repeats and --rounds must be >= 1, --warmup >= 0, --min-time and --timeout > 0")
    if args.batch is not None and args.batch < 1:
        ap.error(f"--batch must be >= 1, got {args.batch}")
    if args.image_size is not None and (args.image_size < 32 or args.image_size % 16):
        ap.error(f"--image-size must be a multiple of 16 (ViT's patch) and at least 32 (ResNet and MobileNetV3 "
                 f"downsample 32x), got {args.image_size}")
    configure(args.batch, args.image_size)
    if args.worker:
        if args.worker == "profile":
            profile_worker(args)
        else:
            worker(args)
        return 0
    for opt, allowed in (("models", MODELS), ("variants", VARIANTS), ("dtypes", DTYPES)):
        chosen = [x for x in getattr(args, opt).split(",") if x]
        bad = [x for x in chosen if x not in allowed]
        if bad or not chosen:
            ap.error(f"--{opt}: unknown {bad}; choose from {list(allowed)}")
        setattr(args, opt, chosen)
    args.skip = {c for c in args.skip.split(",") if c}
    bad = [c for c in args.skip if c.partition(":")[0] not in VARIANTS or c.partition(":")[2] not in DTYPES]
    if bad:
        ap.error(f"--skip: not VARIANT:DTYPE cells {bad}; variants {list(VARIANTS)}, dtypes {list(DTYPES)}")
    try:
        args.thread_counts = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        ap.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    if not args.thread_counts or min(args.thread_counts) < 1:
        ap.error(f"--threads must list thread counts >= 1, got {args.threads!r}")
    require_kiln_in(args.kiln_python)
    if args.profile:
        if args.profile not in MODELS:
            ap.error(f"--profile: unknown model {args.profile!r}; choose from {list(MODELS)}")
        me = os.path.abspath(__file__)
        for t in args.thread_counts:
            for dtype in args.dtypes:
                for fw, py in (("kiln", args.kiln_python), ("torch", args.torch_python)):
                    if missing_python(py):
                        print(f"{fw}: {missing_python(py)}")
                        continue
                    cmd = ([py, "-m", "kiln.compat", me] if fw == "kiln" else [py, me]) + [
                        "--worker", "profile", "--framework", fw, "--model", args.profile, "--dtype", dtype,
                        "--worker-threads", str(t), "--warmup", str(args.warmup),
                        "--profile-steps", str(args.profile_steps), "--top", str(args.top)] + shape_args(args)
                    path = [args.mindcv] if fw == "kiln" and args.mindcv else []
                    p = subprocess.run(cmd, text=True, timeout=args.timeout, cwd=CHILD_CWD,
                                       env=child_env(t, path=path, GLOG_v=3))
                    if p.returncode:
                        print(f"{fw} profile on {t} thread(s), {dtype}, failed (exit {p.returncode})")
        return 0
    results = run_table(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
