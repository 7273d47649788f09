"""Training speed of a loop compiled as a While node vs the same loop unrolled vs PyTorch eager (issue 11).

The model: an RNN-style loop h <- tanh(x_t @ Wx + h @ Wh + b) over 50 steps, batch 32, input 128, hidden 128, loss
mean(h_T^2), one SGD step (lr 0.01) per training step. Forms:
  while     @jit, `while t < steps:` with `steps` a Tensor: one While node (loop body compiled once; the gradient is a
            WhileGrad node running the body's vjp over the saved trips)
  unrolled  @jit, `for t in range(50):` with a Python int: 50 copies of the cell in the graph (today's tracing)
  torch     the same loop in PyTorch eager (loss.backward(), in-place SGD), if --torch-python (default
            /work/torchvenv/bin/python) exists; a missing one is reported as "not installed"
Reported: steps/s (median of --repeats runs of about --min-time s each, benchmarks/_timing.py; the two Kiln forms
alternate run by run), compile time of the
first call, and the loss of the first step of each form (they must agree: same data, same initial weights).

    .venv/bin/python benchmarks/bench_control_flow.py [--repeats 5] [--min-time 1.0] [--threads N]
    (torch: /work/torchvenv/bin/python benchmarks/bench_control_flow.py --torch-only, run by this script itself)
The Kiln forms run in this python: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import json
import os
import subprocess
import time

import numpy as np

from _env import child_env, missing_python, require_kiln
from _timing import timed_rates

STEPS, BATCH, IN, HID, LR = 50, 32, 128, 128, 0.01


def data(seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((STEPS, BATCH, IN)).astype(np.float32)
    wx = (rng.standard_normal((IN, HID)) / np.sqrt(IN)).astype(np.float32)
    wh = (rng.standard_normal((HID, HID)) / np.sqrt(HID)).astype(np.float32)
    b = np.zeros(HID, np.float32)
    return xs, wx, wh, b


def kiln_step(form):
    ms = require_kiln()
    from kiln import Parameter, Tensor, ops
    xs_np, wx_np, wh_np, b_np = data()
    wx, wh, b = (Parameter(Tensor(a), name=n) for a, n in ((wx_np, "wx"), (wh_np, "wh"), (b_np, "b")))
    params = [wx, wh, b]
    xs = Tensor(xs_np)
    h0 = Tensor(np.zeros((BATCH, HID), np.float32))
    steps = Tensor(STEPS)

    if form == "while":
        def loss_fn(xs, h, steps):
            t = 0
            while t < steps:
                h = ops.tanh(ops.matmul(xs[t], wx) + ops.matmul(h, wh) + b)
                t = t + 1
            return ops.mean(h * h)
    else:
        def loss_fn(xs, h, steps):
            for t in range(STEPS):
                h = ops.tanh(ops.matmul(xs[t], wx) + ops.matmul(h, wh) + b)
            return ops.mean(h * h)

    grad_fn = ms.value_and_grad(loss_fn, None, params)

    @ms.jit
    def train(xs, h, steps):
        loss, grads = grad_fn(xs, h, steps)
        updates = [ops.assign(p, p - LR * g) for p, g in zip(params, grads)]
        return ops.depend(loss, updates)

    t0 = time.perf_counter()
    loss = train(xs, h0, steps)
    first_loss = float(loss.asnumpy())  # the loss at the initial weights: must agree between the forms
    compile_s = time.perf_counter() - t0
    box = [loss]

    def step():
        box[0] = train(xs, h0, steps)

    def sync():
        return float(box[0].asnumpy())
    return step, sync, compile_s, train, first_loss


def torch_step():
    import torch
    xs_np, wx_np, wh_np, b_np = data()
    wx, wh, b = (torch.tensor(a, requires_grad=True) for a in (wx_np, wh_np, b_np))
    xs = torch.tensor(xs_np)
    h0 = torch.zeros(BATCH, HID)
    box = [None]

    def step():
        h = h0
        for t in range(STEPS):
            h = torch.tanh(xs[t] @ wx + h @ wh + b)
        loss = (h * h).mean()
        loss.backward()
        with torch.no_grad():
            for p in (wx, wh, b):
                p -= LR * p.grad
                p.grad = None
        box[0] = loss

    def sync():
        return float(box[0].detach())
    return step, sync


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    ap.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-python", default="/work/torchvenv/bin/python")
    a = ap.parse_args()
    if a.torch_only:
        import torch
        if a.threads:
            torch.set_num_threads(a.threads)
        step, sync = torch_step()
        step()
        first_loss = sync()
        rates, n, loss = timed_rates(step, sync, a.repeats, a.min_time)
        print(json.dumps({"form": "torch eager", "steps_per_s": float(np.median(rates)), "first_loss": first_loss,
                          "torch": torch.__version__, "threads": torch.get_num_threads()}))
        return
    require_kiln()
    results = []
    forms = {form: kiln_step(form) for form in ("while", "unrolled")}
    rates = {form: [] for form in forms}
    for _ in range(a.repeats):  # the forms alternate, so that other load on the machine hits both alike
        for form, (step, sync, *_rest) in forms.items():
            r, n, loss = timed_rates(step, sync, 1, a.min_time)
            rates[form] += r
    for form, (step, sync, compile_s, train, first_loss) in forms.items():
        g = train.graphs[0].graph
        results.append({"form": f"kiln jit {form}", "steps_per_s": float(np.median(rates[form])),
                        "first_loss": first_loss, "compile_s": round(compile_s, 3), "graph_nodes": g.num_nodes,
                        "while_nodes": g.count("While")})
    if missing_python(a.torch_python):
        results.append({"form": "torch eager", "error": missing_python(a.torch_python)})
    else:
        cmd = [a.torch_python, os.path.abspath(__file__), "--torch-only", "--repeats", str(a.repeats),
               "--min-time", str(a.min_time), "--threads", str(a.threads)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=600)
        if out.returncode == 0:
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        else:
            results.append({"form": "torch eager", "error": out.stderr.strip().splitlines()[-1:]})
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
