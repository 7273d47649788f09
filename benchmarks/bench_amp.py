"""Mixed-precision training throughput (steps/s): float32 against O2-bfloat16 (and O2-float16) in Kiln, PyTorch
(torch.autocast(device_type="cpu", dtype=torch.bfloat16)) and MindSpore 2.10 (amp.auto_mixed_precision(net, "O2",
bfloat16)), on the same workloads.

Workloads (one full training step per iteration on a fixed batch: forward, loss, backward, optimizer update):
  mlp    Dense 1024-2048-2048-10 with ReLU, batch 256, Momentum(0.01, 0.9), softmax cross-entropy (matmul-bound)
  lenet  the LeNet example's network (examples/train_lenet_digits.py: 2 conv+BN+ReLU+max-pool blocks, Dense
         128-64-10, dropout 0) on 1x8x8 images, batch 64, Adam(5e-3), cross-entropy
Kiln and MindSpore run the step compiled (kiln.jit / mindspore.jit); PyTorch runs eager. Each (framework, variant)
runs in its own subprocess with OMP/MKL_NUM_THREADS (and torch.set_num_threads) set to --threads; it warms up,
then benchmarks/_timing.py picks a step count of about --min-time seconds and the median steps/s of --repeats runs
is taken; --rounds N repeats the whole pass N times, interleaved, and reports the median of the rounds. A framework
that is missing (its python absent, or the module not importable) or raises is reported as such, never as a number.
Kiln runs in this python (the installed Kiln: .venv/bin/python, benchmarks/_env.py), the peers in theirs.

    .venv/bin/python benchmarks/bench_amp.py --torch-python /work/torchvenv/bin/python \\
        --ms-python /work/msvenv/bin/python [--threads 2] [--workloads mlp,lenet] [--rounds 3] [--quick]
    .venv/bin/python benchmarks/bench_amp.py --frameworks kiln --workloads lenet --variants fp32 \\
        --repeats 1 --warmup 0 --min-time 0.05                     # seconds: does it run?
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

from _env import CHILD_CWD, child_env, missing_python, require_kiln
from _timing import timed_rates

VARIANTS = ("fp32", "o2-bf16", "o2-fp16")


def _data(workload):
    rng = np.random.default_rng(0)
    if workload == "mlp":
        return rng.standard_normal((256, 1024)).astype(np.float32), rng.integers(0, 10, 256).astype(np.int32)
    return rng.random((64, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 64).astype(np.int32)


def ms_step(ms, nn, ops, amp, workload, variant):
    """Kiln or MindSpore (one MindSpore-style definition): returns (step, sync)."""
    ms.set_seed(0)
    if workload == "mlp":
        net = nn.SequentialCell(nn.Dense(1024, 2048), nn.ReLU(), nn.Dense(2048, 2048), nn.ReLU(), nn.Dense(2048, 10))
        opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    else:
        class LeNet(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same")
                self.bn1 = nn.BatchNorm2d(16)
                self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same")
                self.bn2 = nn.BatchNorm2d(32)
                self.relu = nn.ReLU()
                self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
                self.flatten = nn.Flatten()
                self.fc1 = nn.Dense(32 * 2 * 2, 64)
                self.fc2 = nn.Dense(64, 10)

            def construct(self, x):
                x = self.pool(self.relu(self.bn1(self.conv1(x))))
                x = self.pool(self.relu(self.bn2(self.conv2(x))))
                return self.fc2(self.relu(self.fc1(self.flatten(x))))
        net = LeNet()
        opt = nn.Adam(net.trainable_params(), learning_rate=0.005)
    if variant != "fp32":
        net = amp.auto_mixed_precision(net, "O2", ms.bfloat16 if variant == "o2-bf16" else ms.float16)
    net.set_train()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def forward(x, y):
        return loss_fn(net(x), y)
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        return ops.depend(loss, opt(grads))
    xs, ys = _data(workload)
    x, y = ms.Tensor(xs), ms.Tensor(ys)
    last = [None]

    def step():
        last[0] = train_step(x, y)
    return step, lambda: float(last[0].asnumpy())


def torch_step(workload, variant, threads):
    import torch
    from torch import nn
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if workload == "mlp":
        net = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))
        opt = torch.optim.SGD(net.parameters(), 0.01, momentum=0.9)
    else:
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.Adam(net.parameters(), 0.005)
    net.train()
    xs, ys = _data(workload)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys.astype(np.int64))
    loss_fn = nn.CrossEntropyLoss()
    dtype = torch.bfloat16 if variant == "o2-bf16" else torch.float16
    last = [None]

    def step():
        opt.zero_grad(set_to_none=True)
        if variant == "fp32":
            loss = loss_fn(net(x), y)
        else:
            with torch.autocast(device_type="cpu", dtype=dtype):
                loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        last[0] = loss
    return step, lambda: float(last[0].detach().float())


def worker(args):
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.framework == "torch":
        step, sync = torch_step(args.workload, args.variant, args.threads)
    elif args.framework == "kiln":
        ms = require_kiln()
        from kiln import nn, ops, amp
        step, sync = ms_step(ms, nn, ops, amp, args.workload, args.variant)
    else:
        import mindspore as ms
        from mindspore import nn, ops, amp
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
        step, sync = ms_step(ms, nn, ops, amp, args.workload, args.variant)
    first = None
    for i in range(1 + args.warmup):
        step()
        if i == 0:
            first = sync()
    rates, n, loss = timed_rates(step, sync, args.repeats, args.min_time)
    print(json.dumps({"rate": statistics.median(rates), "n": n, "first_loss": first, "loss": loss}))


def run_variant(python, framework, workload, variant, args):
    missing = missing_python(python)
    if missing:
        return {"error": missing}
    env = child_env(args.threads, GLOG_v=3)
    cmd = [python, os.path.abspath(__file__), "--worker", "--framework", framework, "--workload", workload,
           "--variant", variant, "--threads", str(args.threads), "--repeats", str(args.repeats), "--warmup",
           str(args.warmup), "--min-time", str(args.min_time)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout, cwd=CHILD_CWD)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:.0f} s"}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
    if "No module named" in tail:
        return {"error": "not installed"}
    return {"error": "failed: " + tail[:160]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="mlp,lenet")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--frameworks", default="kiln,torch,mindspore")
    ap.add_argument("--torch-python", default=sys.executable)
    ap.add_argument("--ms-python", default=sys.executable)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--rounds", type=int, default=1, help="passes over all variants, interleaved (median shown)")
    ap.add_argument("--quick", action="store_true", help="--repeats 3 --warmup 2 --min-time 0.5")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--framework", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.warmup, args.min_time = 3, 2, 0.5
    if args.worker:
        return worker(args)
    if "kiln" in args.frameworks.split(","):
        require_kiln()  # this python runs Kiln's variants: fail here, clearly, rather than in every child
    pythons = {"kiln": sys.executable, "torch": args.torch_python, "mindspore": args.ms_python}
    results = {}
    rates = {}
    for rnd in range(args.rounds):  # rounds interleave the variants, so that a change of machine load hits all
        for workload in args.workloads.split(","):
            for framework in args.frameworks.split(","):
                for variant in args.variants.split(","):
                    key = (workload, framework, variant)
                    if "error" in results.get(key, {}):
                        continue
                    r = run_variant(pythons[framework], framework, workload, variant, args)
                    if "rate" in r:
                        rates.setdefault(key, []).append(r["rate"])
                        r["rate"] = statistics.median(rates[key])
                        r["rounds"] = rates[key]
                    results[key] = r
                    shown = f"{r['rate']:8.2f} steps/s  loss {r['first_loss']:.4f} -> {r['loss']:.4f}" \
                        if "rate" in r else r["error"]
                    print(f"round {rnd + 1} {workload:6s} {framework:9s} {variant:8s} {shown}", flush=True)
    print(f"\nsteps/s (median of {args.rounds} round(s)), {args.threads} thread(s); speed-up = variant / the same "
          f"framework's fp32")
    print(f"{'workload':8s} {'framework':10s} " + " ".join(f"{v:>18s}" for v in args.variants.split(",")))
    for workload in args.workloads.split(","):
        for framework in args.frameworks.split(","):
            base = results.get((workload, framework, "fp32"), {}).get("rate")
            cells = []
            for v in args.variants.split(","):
                r = results[(workload, framework, v)]
                if "rate" not in r:
                    cells.append(f"{r['error'][:18]:>18s}")
                elif base and v != "fp32":
                    cells.append(f"{r['rate']:9.2f} ({r['rate'] / base:4.2f}x)")
                else:
                    cells.append(f"{r['rate']:18.2f}")
            print(f"{workload:8s} {framework:10s} " + " ".join(cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"|".join(k): v for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
