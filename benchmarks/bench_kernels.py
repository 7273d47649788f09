"""Kernel microbenchmarks: forward and forward+backward time (µs, median) of the elementwise activations,
MaxPool and BatchNorm, at 1M elements and at a small size, and ResNet-8's convolutions (forward, backward data,
backward filter), BatchNorm and MaxPool at batch 32, on 1 and 2 threads. `--framework torch` runs the ResNet-8
cases in PyTorch eager for comparison (same names; use a python that has torch).

Each thread count runs in its own subprocess with OMP_NUM_THREADS set (oneDNN and Kiln's OpenMP loops read it at
start-up). "fwd" times one op call (PyNative, the result materialized); "fwd+bwd" times `kiln.grad` of sum(op(x)),
i.e. the forward, the sum, its (broadcast) cotangent and the op's backward. The median over --repeats timed runs of
enough iterations to take about --min-time seconds is printed; the machine's load average is printed with it, since
timings on a loaded machine are noisy (compare figures from runs at similar load).

    .venv/bin/python benchmarks/bench_kernels.py [--threads 1,2] [--only relu,conv*] [--json out.json]
    /work/torchvenv/bin/python benchmarks/bench_kernels.py --framework torch --only 'conv*,bn_resnet,maxpool_resnet'
(--only takes names, or prefixes ending in '*'). Kiln runs in this python: the installed Kiln (.venv/bin/python,
tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from _env import child_env, require_kiln

BIG = 1 << 20  # 1M elements
SMALL = 4096


def _cases(kiln):
    ops, nn = kiln.ops, kiln.nn
    gelu_t = lambda x: ops.gelu(x, approximate="tanh")
    gelu_e = lambda x: ops.gelu(x, approximate="none")
    eltwise = {
        "relu": ops.relu, "relu6": ops.relu6, "leaky_relu": nn.LeakyReLU(0.1), "hardsigmoid": ops.hardsigmoid,
        "hswish": nn.HSwish(), "exp": ops.exp, "log": lambda x: ops.log(ops.abs(x)), "tanh": ops.tanh,
        "sigmoid": ops.sigmoid, "erf": ops.erf, "gelu_tanh": gelu_t, "gelu_erf": gelu_e, "softplus": ops.softplus,
        "silu": nn.SiLU(), "add": lambda x: ops.add(x, x), "mul": lambda x: ops.mul(x, x),
        "sum": lambda x: ops.sum(x),
    }
    cases = {}
    for name, f in eltwise.items():
        cases[name] = [(n, (n,), f) for n in (BIG, SMALL)]
    pool = nn.MaxPool2d(kernel_size=2, stride=2)
    cases["maxpool2d"] = [(BIG, (64, 16, 32, 32), pool), (SMALL, (4, 4, 16, 16), pool)]
    bn_big, bn_small = nn.BatchNorm2d(16), nn.BatchNorm2d(4)
    cases["batchnorm2d"] = [(BIG, (64, 16, 32, 32), bn_big), (SMALL, (4, 4, 16, 16), bn_small)]
    cases.update(_resnet_cases(kiln))
    return cases


# ResNet-8's layers at batch 32 (3x32x32 images, channels 16/32/64): the convolutions (3x3 pad 1; the stem from 3
# channels; the stride-2 ones that open stages 2 and 3) and BatchNorm / MaxPool on the first stage's activation.
# Conv cases time the forward ("fwd"), dx (the "fwd+bwd" of the grad of sum(conv(x)) w.r.t. x), and the two backward
# kernels on their own: conv_bwd_data / conv_bwd_filter "fwd" = one Conv2DBackpropInput / Conv2DBackpropFilter call.
RESNET_CONVS = {  # name: (input shape, out channels, stride)
    "stem3-16": ((32, 3, 32, 32), 16, 1),
    "16-16": ((32, 16, 32, 32), 16, 1),
    "16-32s2": ((32, 16, 32, 32), 32, 2),
    "32-32": ((32, 32, 16, 16), 32, 1),
    "64-64": ((32, 64, 8, 8), 64, 1),
}
RESNET_ACT = (32, 16, 32, 32)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _resnet_cases(kiln):
    nn, core = kiln.nn, kiln._core
    rng = np.random.default_rng(1)
    cases = {}
    for name, (shape, cout, stride) in RESNET_CONVS.items():
        n = _numel(shape)
        conv = nn.Conv2d(shape[1], cout, 3, stride, pad_mode="pad", padding=1, has_bias=False)
        oh, ow = (shape[2] - 1) // stride + 1, (shape[3] - 1) // stride + 1
        wshape = [cout, shape[1], 3, 3]
        w = kiln.Tensor(rng.standard_normal(wshape).astype(np.float32))
        dy = kiln.Tensor(rng.standard_normal((shape[0], cout, oh, ow)).astype(np.float32))
        args = ([stride, stride], [1, 1, 1, 1], [1, 1])
        cases[f"conv{name}"] = [(n, shape, conv)]
        cases[f"conv_bwd_data{name}"] = [(n, shape, lambda x, w=w, dy=dy, a=args: core.conv2d_backprop_input(
            dy, w, list(x.shape), *a, 1), False)]
        cases[f"conv_bwd_filter{name}"] = [(n, shape, lambda x, dy=dy, ws=wshape, a=args: core.conv2d_backprop_filter(
            dy, x, ws, *a, 1), False)]
    cases["bn_resnet"] = [(_numel(RESNET_ACT), RESNET_ACT, nn.BatchNorm2d(RESNET_ACT[1]))]
    cases["maxpool_resnet"] = [(_numel(RESNET_ACT), RESNET_ACT, nn.MaxPool2d(kernel_size=2, stride=2))]
    return cases


def _torch_cases():
    """The same ResNet-8 layer cases in PyTorch (eager), for --framework torch."""
    import torch
    tnn = torch.nn
    g = torch.Generator().manual_seed(1)
    cases = {}
    for name, (shape, cout, stride) in RESNET_CONVS.items():
        n = _numel(shape)
        conv = tnn.Conv2d(shape[1], cout, 3, stride, 1, bias=False)
        oh, ow = (shape[2] - 1) // stride + 1, (shape[3] - 1) // stride + 1
        w = torch.randn(cout, shape[1], 3, 3, generator=g)
        dy = torch.randn(shape[0], cout, oh, ow, generator=g)
        cases[f"conv{name}"] = [(n, shape, conv)]
        cases[f"conv_bwd_data{name}"] = [(n, shape, lambda x, w=w, dy=dy, s=stride: torch.ops.aten.convolution_backward(
            dy, x, w, None, [s, s], [1, 1], [1, 1], False, [0, 0], 1, [True, False, False])[0], False)]
        cases[f"conv_bwd_filter{name}"] = [(n, shape, lambda x, w=w, dy=dy, s=stride:
                                            torch.ops.aten.convolution_backward(
            dy, x, w, None, [s, s], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])[1], False)]
    cases["bn_resnet"] = [(_numel(RESNET_ACT), RESNET_ACT, tnn.BatchNorm2d(RESNET_ACT[1]))]
    cases["maxpool_resnet"] = [(_numel(RESNET_ACT), RESNET_ACT, tnn.MaxPool2d(2, 2))]
    return cases


def _time(fn, min_time, repeats):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / 4 or n >= 1 << 16:
            break
        n *= 2
    n = max(1, int(n * (min_time / max(dt, 1e-9))))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def _selected(name, only):
    return not only or name in only or any(o.endswith("*") and name.startswith(o[:-1]) for o in only)


def worker(args):
    rng = np.random.default_rng(0)
    out = {}
    only = set(args.only.split(",")) if args.only else None
    if args.framework == "torch":
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        for name, sizes in _torch_cases().items():
            if not _selected(name, only):
                continue
            for n, shape, f, *rest in sizes:
                x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
                xg = x.clone().requires_grad_(True)
                out[f"{name}/{n}/fwd"] = _time(lambda: f(x), args.min_time, args.repeats)
                if not rest:
                    out[f"{name}/{n}/fwd+bwd"] = _time(lambda: torch.autograd.grad(f(xg).sum(), xg),
                                                       args.min_time, args.repeats)
        print(json.dumps(out))
        return
    kiln = require_kiln()
    kiln.set_context(mode=kiln.PYNATIVE_MODE)
    for name, sizes in _cases(kiln).items():
        if not _selected(name, only):
            continue
        for n, shape, f, *rest in sizes:  # rest = (False,): no fwd+bwd case
            x = kiln.Tensor(rng.standard_normal(shape).astype(np.float32))
            if hasattr(f, "set_train"):
                f.set_train(True)
            g = kiln.grad(lambda t: kiln.ops.sum(f(t)))
            out[f"{name}/{n}/fwd"] = _time(lambda: f(x), args.min_time, args.repeats)
            if not rest:
                out[f"{name}/{n}/fwd+bwd"] = _time(lambda: g(x), args.min_time, args.repeats)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default="")
    ap.add_argument("--framework", default="kiln", choices=["kiln", "torch"],
                    help="torch: the ResNet-8 layer cases in PyTorch eager (run with a python that has torch)")
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.framework == "kiln":
        require_kiln()
    results = {}
    for t in args.threads.split(","):
        env = child_env(OMP_NUM_THREADS=t)
        cmd = [sys.executable, __file__, "--worker", "--min-time", str(args.min_time), "--repeats",
               str(args.repeats), "--only", args.only, "--framework", args.framework]
        load0 = os.getloadavg()[0]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"threads={t}: failed:\n{p.stderr[-2000:]}")
            continue
        results[t] = json.loads(p.stdout.strip().splitlines()[-1])
        results[t]["_load"] = [load0, os.getloadavg()[0]]
    keys = sorted({k for r in results.values() for k in r if not k.startswith("_")},
                  key=lambda k: (k.split("/")[0], -int(k.split("/")[1]), k))
    ts = list(results)
    print(f"{'op/size/pass':34s}" + "".join(f"{'µs @' + t + ' thr':>14s}" for t in ts))
    for k in keys:
        print(f"{k:34s}" + "".join(f"{results[t].get(k, float('nan')):14.1f}" for t in ts))
    for t in ts:
        print(f"load average during the {t}-thread run: {results[t]['_load'][0]:.1f} -> {results[t]['_load'][1]:.1f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
