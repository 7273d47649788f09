"""Training throughput of real model sizes (steps/s): Kiln (PyNative, @jit) against PyTorch (eager, torch.compile)
and MindSpore (PyNative, @jit), on 1 and 2 threads; and a per-op profile of Kiln's step.

Workloads (one full training step per iteration on a fixed batch: forward, loss, backward, optimizer update):
  resnet8      ResNet-8: conv3x3(16)+BN+ReLU, three basic residual blocks (16, 32/2, 64/2; 1x1 conv+BN shortcut where
               the shape changes), global average pool, Dense(64, 10); 3x32x32 images, batch 32, Momentum(lr 0.01,
               momentum 0.9), softmax cross-entropy
  transformer  Transformer encoder: 2 post-LN layers (d_model 128, 4 heads, FFN 512 with tanh-GELU), written from
               Dense / LayerNorm / softmax / matmul so that every framework runs the same math; input (16, 64, 128)
               (batch 16, seq 64), mean over the sequence, Dense(128, 10); Adam(lr 1e-3), cross-entropy
  gru          nn.GRU(64, 128, batch_first) on (32, 32, 64) (batch 32, seq 32), Dense(128, 10) on the last step's
               output; Adam(lr 1e-3), cross-entropy
  lenet        bench_train_step.py's LeNet-style CNN on 1x8x8 digits-sized images (2 conv+BN+ReLU+max-pool blocks,
               Dense 128-64-10), batch 64, Adam(lr 0.005), cross-entropy
The Kiln and MindSpore code is one MindSpore-style definition (`import kiln as ms` / `import mindspore as ms`), the
PyTorch code its line-by-line equivalent. Every framework starts from the same weights (drawn here with NumPy, loaded
in parameter order, shapes checked), so the first step's loss and the loss after one update must agree across
frameworks: the table prints them ("same work"), and a framework whose loss does not go down is reported as failed.

Each (framework, mode, thread count) runs in its own subprocess, with OMP/MKL/OpenBLAS_NUM_THREADS (and
torch.set_num_threads, MindSpore's runtime_num_threads) set to the thread count; it warms up, picks a step count
that takes about --min-time seconds and reports the median steps/s of --repeats such runs. "Kiln best / PyTorch
eager" divides the faster Kiln mode by PyTorch eager, from the same run of this script.

    .venv/bin/python benchmarks/bench_models.py --threads 1,2 --torch-python /work/torchvenv/bin/python \\
        [--ms-python /work/msvenv/bin/python --peers torch,torch-compile,mindspore,mindspore-jit]
    .venv/bin/python benchmarks/bench_models.py --profile resnet8 [--threads 2]   # Kiln's top ops per step
    .venv/bin/python benchmarks/bench_models.py --workloads lenet --peers '' --threads 1 --repeats 1 --warmup 0 \\
        --min-time 0.05                                                          # seconds: does it run?
Kiln runs in --kiln-python (default: this python, i.e. the installed Kiln of .venv/bin/python, tools/setup_env.sh;
benchmarks/_env.py): a kiln that does not import there stops the script with the reason. A peer whose python is
missing or does not import it is "not installed"; one that raises is "failed: ..." -- never a made-up number.
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

from _env import child_env, missing_python, require_kiln, require_kiln_in  # (benchmarks/ is sys.path[0])
from _timing import timed_rates

HERE = os.path.dirname(os.path.abspath(__file__))

WORKLOADS = {
    "resnet8": dict(title="ResNet-8 (16/32/64), 3x32x32, batch 32, Momentum(0.01, 0.9), cross-entropy",
                    batch=32, opt="momentum", lr=0.01),
    "transformer": dict(title="Transformer encoder 2 x (d128, 4 heads, FFN 512, GELU), seq 64, batch 16, Adam(1e-3)",
                        batch=16, seq=64, d=128, heads=4, ffn=512, layers=2, opt="adam", lr=1e-3),
    "gru": dict(title="GRU(64 -> 128), seq 32, batch 32, Dense(128, 10) head, Adam(1e-3), cross-entropy",
                batch=32, seq=32, inp=64, hidden=128, opt="adam", lr=1e-3),
    "lenet": dict(title="LeNet-style CNN on 1x8x8, batch 64, Adam(5e-3), cross-entropy", batch=64, opt="adam",
                  lr=0.005),
}
NUM_CLASSES = 10


def make_data(name):
    """The fixed batch of a workload: (x float32, labels int32)."""
    w = WORKLOADS[name]
    rng = np.random.default_rng(1234)
    shape = {"resnet8": (w["batch"], 3, 32, 32), "transformer": (w["batch"], w.get("seq"), w.get("d")),
             "gru": (w["batch"], w.get("seq"), w.get("inp")), "lenet": (w["batch"], 1, 8, 8)}[name]
    x = rng.standard_normal(shape).astype(np.float32) if name != "lenet" else rng.uniform(0, 1, shape).astype(
        np.float32)
    return x, rng.integers(0, NUM_CLASSES, w["batch"]).astype(np.int32)


def init_weights(names, shapes):
    """The shared initial weights, one per trainable parameter in definition order. Normalization scales (MindSpore
    `gamma`; PyTorch `<bn|ln>*.weight`) are ones, their shifts zeros; every other tensor is U(-1/sqrt(fan_in), +)
    with fan_in = prod(shape[1:]) (the first dimension for vectors), drawn from a generator seeded by its index."""
    out = []
    for i, (name, shape) in enumerate(zip(names, shapes)):
        parts = name.split(".")
        is_norm = any(p.startswith(("bn", "ln")) for p in parts[:-1])
        if parts[-1] == "gamma" or (is_norm and parts[-1] == "weight"):
            out.append(np.ones(shape, np.float32))
        elif parts[-1] == "beta" or (is_norm and parts[-1] == "bias"):
            out.append(np.zeros(shape, np.float32))
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            bound = 1.0 / np.sqrt(fan_in)
            out.append(np.random.default_rng([7, i]).uniform(-bound, bound, shape).astype(np.float32))
    return out


# ---------------------------------------------------------------------------------------------------------------
# MindSpore style: written once for Kiln (`import kiln as ms`) and MindSpore.

def ms_models(ms):
    nn, ops = ms.nn, ms.ops

    class Shortcut(nn.Cell):  # 1x1 convolution + BatchNorm where a block changes the shape
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, 1, stride, has_bias=False)
            self.bn = nn.BatchNorm2d(cout)

        def construct(self, x):
            return self.bn(self.conv(x))

    class Block(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, pad_mode="pad", padding=1, has_bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, pad_mode="pad", padding=1, has_bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.shortcut = Shortcut(cin, cout, stride) if stride != 1 or cin != cout else nn.Identity()

        def construct(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    class ResNet8(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, 1, pad_mode="pad", padding=1, has_bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.relu = nn.ReLU()
            self.layer1 = Block(16, 16, 1)
            self.layer2 = Block(16, 32, 2)
            self.layer3 = Block(32, 64, 2)
            self.fc = nn.Dense(64, NUM_CLASSES)

        def construct(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer3(self.layer2(self.layer1(x)))
            return self.fc(ops.mean(x, (2, 3)))

    class Attention(nn.Cell):
        def __init__(self, d, heads):
            super().__init__()
            self.q, self.k, self.v, self.o = nn.Dense(d, d), nn.Dense(d, d), nn.Dense(d, d), nn.Dense(d, d)
            self.heads, self.dh, self.scale = heads, d // heads, 1.0 / float(np.sqrt(d // heads))

        def split(self, t, b, s):  # (B, S, D) -> (B, H, S, Dh)
            return ops.transpose(ops.reshape(t, (b, s, self.heads, self.dh)), (0, 2, 1, 3))

        def construct(self, x):
            b, s, d = x.shape
            q, k, v = self.split(self.q(x), b, s), self.split(self.k(x), b, s), self.split(self.v(x), b, s)
            att = ops.softmax(ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * self.scale, axis=-1)
            out = ops.reshape(ops.transpose(ops.matmul(att, v), (0, 2, 1, 3)), (b, s, d))
            return self.o(out)

    class EncoderLayer(nn.Cell):
        def __init__(self, d, heads, ffn):
            super().__init__()
            self.attn = Attention(d, heads)
            self.ln1 = nn.LayerNorm((d,), epsilon=1e-5)
            self.ff1 = nn.Dense(d, ffn)
            self.ff2 = nn.Dense(ffn, d)
            self.ln2 = nn.LayerNorm((d,), epsilon=1e-5)
            self.gelu = nn.GELU(approximate=True)

        def construct(self, x):
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.ff2(self.gelu(self.ff1(x))))

    class Transformer(nn.Cell):
        def __init__(self, w):
            super().__init__()
            self.layers = nn.CellList([EncoderLayer(w["d"], w["heads"], w["ffn"]) for _ in range(w["layers"])])
            self.fc = nn.Dense(w["d"], NUM_CLASSES)

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.fc(ops.mean(x, 1))

    class GRUNet(nn.Cell):
        def __init__(self, w):
            super().__init__()
            self.gru = nn.GRU(w["inp"], w["hidden"], batch_first=True)
            self.fc = nn.Dense(w["hidden"], NUM_CLASSES)

        def construct(self, x):
            out, _ = self.gru(x)
            return self.fc(out[:, -1])

    class LeNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same", has_bias=True)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same", has_bias=True)
            self.bn2 = nn.BatchNorm2d(32)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(128, 64)
            self.fc2 = nn.Dense(64, NUM_CLASSES)

        def construct(self, x):
            x = self.pool(self.relu(self.bn1(self.conv1(x))))
            x = self.pool(self.relu(self.bn2(self.conv2(x))))
            return self.fc2(self.relu(self.fc1(self.flatten(x))))

    return {"resnet8": ResNet8, "transformer": Transformer, "gru": GRUNet, "lenet": LeNet}


def build_ms_style(ms, name, use_jit):
    """(step, loss_of_last_step, names, shapes) of the MindSpore-style training step."""
    nn, ops = ms.nn, ms.ops
    w = WORKLOADS[name]
    if name == "gru" and not hasattr(nn, "GRU"):
        raise NotImplementedError(f"skipped: {ms.__name__}.nn.GRU missing")
    cls = ms_models(ms)[name]
    net = cls(w) if name in ("transformer", "gru") else cls()
    params = net.trainable_params()
    names, shapes = [p.name for p in params], [tuple(p.shape) for p in params]
    for p, a in zip(params, init_weights(names, shapes)):
        p.set_data(ms.Tensor(a))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if w["opt"] == "momentum":
        optimizer = nn.Momentum(params, learning_rate=w["lr"], momentum=0.9)
    else:
        optimizer = nn.Adam(params, learning_rate=w["lr"])

    def forward_fn(data, label):
        return loss_fn(net(data), label)

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        return ops.depend(loss, optimizer(grads))

    if use_jit:
        train_step = ms.jit(train_step)
    net.set_train(True)
    x, y = make_data(name)
    xd, yd = ms.Tensor(x), ms.Tensor(y)
    last = {}

    def step():
        last["loss"] = train_step(xd, yd)

    return step, lambda: float(last["loss"].asnumpy()), names, shapes


def build_kiln(name, threads, use_jit=False):
    import kiln as ms
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    return build_ms_style(ms, name, use_jit) + (ms.__version__,)


def build_mindspore(name, threads, use_jit=False):
    os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ logging: errors only
    import mindspore as ms
    if hasattr(ms, "set_device"):
        ms.set_device("CPU")
        ms.set_context(mode=ms.PYNATIVE_MODE)
    else:
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    if threads:
        ms.set_context(runtime_num_threads=threads)
    ms.set_seed(0)
    return build_ms_style(ms, name, use_jit) + (ms.__version__,)


# ---------------------------------------------------------------------------------------------------------------
# PyTorch style: the same networks, parameters declared in the same order.

def torch_models(torch):
    tnn, F = torch.nn, torch.nn.functional

    class Shortcut(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv = tnn.Conv2d(cin, cout, 1, stride, bias=False)
            self.bn = tnn.BatchNorm2d(cout)

        def forward(self, x):
            return self.bn(self.conv(x))

    class Block(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = tnn.Conv2d(cin, cout, 3, stride, padding=1, bias=False)
            self.bn1 = tnn.BatchNorm2d(cout)
            self.conv2 = tnn.Conv2d(cout, cout, 3, 1, padding=1, bias=False)
            self.bn2 = tnn.BatchNorm2d(cout)
            self.shortcut = Shortcut(cin, cout, stride) if stride != 1 or cin != cout else tnn.Identity()

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet8(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = tnn.Conv2d(3, 16, 3, 1, padding=1, bias=False)
            self.bn1 = tnn.BatchNorm2d(16)
            self.layer1 = Block(16, 16, 1)
            self.layer2 = Block(16, 32, 2)
            self.layer3 = Block(32, 64, 2)
            self.fc = tnn.Linear(64, NUM_CLASSES)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.layer3(self.layer2(self.layer1(x)))
            return self.fc(x.mean((2, 3)))

    class Attention(tnn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.q, self.k, self.v, self.o = tnn.Linear(d, d), tnn.Linear(d, d), tnn.Linear(d, d), tnn.Linear(d, d)
            self.heads, self.dh, self.scale = heads, d // heads, 1.0 / float(np.sqrt(d // heads))

        def split(self, t, b, s):
            return t.reshape(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.split(self.q(x), b, s), self.split(self.k(x), b, s), self.split(self.v(x), b, s)
            att = torch.softmax(torch.matmul(q, k.permute(0, 1, 3, 2)) * self.scale, dim=-1)
            return self.o(torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, s, d))

    class EncoderLayer(tnn.Module):
        def __init__(self, d, heads, ffn):
            super().__init__()
            self.attn = Attention(d, heads)
            self.ln1 = tnn.LayerNorm(d, eps=1e-5)
            self.ff1 = tnn.Linear(d, ffn)
            self.ff2 = tnn.Linear(ffn, d)
            self.ln2 = tnn.LayerNorm(d, eps=1e-5)

        def forward(self, x):
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.ff2(F.gelu(self.ff1(x), approximate="tanh")))

    class Transformer(tnn.Module):
        def __init__(self, w):
            super().__init__()
            self.layers = tnn.ModuleList([EncoderLayer(w["d"], w["heads"], w["ffn"]) for _ in range(w["layers"])])
            self.fc = tnn.Linear(w["d"], NUM_CLASSES)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.fc(x.mean(1))

    class GRUNet(tnn.Module):
        def __init__(self, w):
            super().__init__()
            self.gru = tnn.GRU(w["inp"], w["hidden"], batch_first=True)
            self.fc = tnn.Linear(w["hidden"], NUM_CLASSES)

        def forward(self, x):
            out, _ = self.gru(x)
            return self.fc(out[:, -1])

    class LeNet(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = tnn.Conv2d(1, 16, 3, padding=1)
            self.bn1 = tnn.BatchNorm2d(16)
            self.conv2 = tnn.Conv2d(16, 32, 3, padding=1)
            self.bn2 = tnn.BatchNorm2d(32)
            self.fc1 = tnn.Linear(128, 64)
            self.fc2 = tnn.Linear(64, NUM_CLASSES)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2, 2)
            x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2, 2)
            return self.fc2(F.relu(self.fc1(x.flatten(1))))

    return {"resnet8": ResNet8, "transformer": Transformer, "gru": GRUNet, "lenet": LeNet}


def build_torch(name, threads, compiled=False):
    import torch
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    w = WORKLOADS[name]
    cls = torch_models(torch)[name]
    model = cls(w) if name in ("transformer", "gru") else cls()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    names, shapes = [n for n, _ in named], [tuple(p.shape) for _, p in named]
    with torch.no_grad():
        for (_, p), a in zip(named, init_weights(names, shapes)):
            p.copy_(torch.from_numpy(a))
    model.train()
    fwd = torch.compile(model) if compiled else model
    if w["opt"] == "momentum":
        opt = torch.optim.SGD(model.parameters(), lr=w["lr"], momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=w["lr"])
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = make_data(name)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
    last = {}

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(fwd(xt), yt)
        loss.backward()
        opt.step()
        last["loss"] = loss

    return step, lambda: float(last["loss"].detach()), names, shapes, torch.__version__


# name -> (label, framework, builder, kwargs)
VARIANTS = {
    "kiln": ("Kiln PyNative", "kiln", build_kiln, {}),
    "kiln-jit": ("Kiln @jit (Graph)", "kiln", build_kiln, {"use_jit": True}),
    "torch": ("PyTorch eager", "torch", build_torch, {}),
    "torch-compile": ("PyTorch torch.compile", "torch", build_torch, {"compiled": True}),
    "mindspore": ("MindSpore 2 PyNative", "mindspore", build_mindspore, {}),
    "mindspore-jit": ("MindSpore 2 @jit", "mindspore", build_mindspore, {"use_jit": True}),
}


def measure(step, sync, warmup, repeats, min_time):
    """Median steps/s over `repeats` timed runs of n steps each (n chosen so that a run takes about min_time s).
    Also returns the first two losses (before and after the first update) and the last one."""
    step()
    loss0 = sync()
    step()
    loss1 = sync()
    for _ in range(warmup):
        step()
    sync()
    rates, n, loss = timed_rates(step, sync, repeats, min_time)
    # No number for a step that does not train: many steps on one fixed batch lower the loss.
    if not loss < loss0:
        raise AssertionError(f"the loss did not decrease ({loss0:.4g} at the first step, {loss:.4g} at the end)")
    return statistics.median(rates), n, rates, (loss0, loss1, loss)


def worker(variant, name, args):
    """Runs one variant of one workload in this process; prints one JSON line."""
    label, fw, builder, kw = VARIANTS[variant]
    try:
        __import__(fw)
    except ImportError as e:
        print(json.dumps({"status": "not installed", "detail": str(e)}))
        return
    try:
        t0 = time.perf_counter()
        step, sync, names, shapes, version = builder(name, args.worker_threads, **kw)
        rate, n, rates, losses = measure(step, sync, args.warmup, args.repeats, args.min_time)
        print(json.dumps({"status": "ok", "rate": rate, "n": n, "rates": rates, "version": version,
                          "losses": losses, "shapes": [list(s) for s in shapes],
                          "wall": time.perf_counter() - t0}))
    except NotImplementedError as e:
        print(json.dumps({"status": "skipped", "detail": str(e)}))
    except Exception as e:  # noqa: BLE001 - reported in the table
        msg = f"{type(e).__name__}: {e}".splitlines()[0][:140]
        print(json.dumps({"status": "failed", "detail": msg}))


def python_for(fw, args):
    return {"kiln": args.kiln_python, "torch": args.torch_python, "mindspore": args.ms_python}[fw]


def run_variant(variant, name, threads, args):
    py = python_for(VARIANTS[variant][1], args)
    if missing_python(py):
        return {"status": "not installed", "detail": missing_python(py)}
    cmd = [py, os.path.abspath(__file__), "--worker", variant, "--workload", name, "--worker-threads", str(threads),
           "--warmup", str(args.warmup), "--repeats", str(args.repeats), "--min-time", str(args.min_time)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=child_env(threads))
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": f"timed out after {args.timeout:g} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:140]
    return {"status": "failed", "detail": f"exit {p.returncode}: {tail}"}


def combine(rounds):
    """One result from the rounds of a cell: the median of the rounds' medians (all rounds must be ok)."""
    bad = [r for r in rounds if r["status"] != "ok"]
    if bad:
        return bad[0]
    out = dict(rounds[0])
    out["round_rates"] = [r["rate"] for r in rounds]
    out["rate"] = statistics.median(out["round_rates"])
    return out


def same_work_line(results, ref_variant):
    """A line comparing each variant's first two losses with the reference's (the first thread count's run)."""
    ref = results.get(ref_variant)
    if not ref or ref.get("status") != "ok":
        return f"  same work: no {VARIANTS[ref_variant][0]} run to compare with"
    r0, r1 = ref["losses"][0], ref["losses"][1]
    parts = [f"{VARIANTS[ref_variant][0]} loss {r0:.6f} -> {r1:.6f} after one update"]
    for v, r in results.items():
        if v == ref_variant or r.get("status") != "ok":
            continue
        if r["shapes"] != ref["shapes"]:
            parts.append(f"{VARIANTS[v][0]}: PARAMETER SHAPES DIFFER")
            continue
        d0, d1 = abs(r["losses"][0] - r0), abs(r["losses"][1] - r1)
        ok = d0 <= 1e-4 * max(1.0, abs(r0)) and d1 <= 2e-3 * max(1.0, abs(r1))
        parts.append(f"{VARIANTS[v][0]} |d| {d0:.1e}, {d1:.1e}{'' if ok else ' (DIFFERENT)'}")
    return "  same work: " + "; ".join(parts)


def run_table(args, variants, thread_counts):
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > 0.5 * (os.cpu_count() or 1):
        print(f"WARNING: the machine is busy (load average {load:.1f} on {os.cpu_count()} cores): expect noise")
    all_results = {}
    for name in args.workloads:
        print(f"\n{name}: {WORKLOADS[name]['title']}")
        head = "".join(f"{f'{t} thr steps/s':>16}" for t in thread_counts)
        print(f"  {'framework / mode':<24} {'version':<16}{head}")
        print("  " + "-" * (41 + 16 * len(thread_counts)))
        res = {t: {} for t in thread_counts}
        runs = {(t, v): [] for t in thread_counts for v in variants}
        for _ in range(args.rounds):  # rounds interleave the variants, so that a load change hits them all alike
            for v in variants:
                for t in thread_counts:
                    runs[t, v].append(run_variant(v, name, t, args))
        for v in variants:
            for t in thread_counts:
                res[t][v] = combine(runs[t, v])
            cells, version = [], ""
            for t in thread_counts:
                r = res[t][v]
                if r["status"] == "ok":
                    cells.append(f"{r['rate']:>16,.1f}")
                    version = r["version"]
                else:
                    cells.append(f"{r['status']:>16}")
            print(f"  {VARIANTS[v][0]:<24} {version[:16]:<16}{''.join(cells)}")
            notes = {res[t][v].get("detail") for t in thread_counts if res[t][v]["status"] != "ok"}
            for d in sorted(x for x in notes if x):
                print(f"  {'':<24} {d}")
            sys.stdout.flush()
        cells = []
        for t in thread_counts:
            kiln = [res[t][v]["rate"] for v in ("kiln", "kiln-jit") if v in res[t] and res[t][v]["status"] == "ok"]
            ref = res[t].get("torch", {})
            cells.append(f"{max(kiln) / ref['rate']:>16.2f}" if kiln and ref.get("status") == "ok" else f"{'-':>16}")
        print(f"  {'Kiln best / PyTorch eager':<41}{''.join(cells)}")
        print(same_work_line(res[thread_counts[0]], "torch" if "torch" in variants else "kiln"))
        all_results[name] = {str(t): res[t] for t in thread_counts}
    return all_results


# ---------------------------------------------------------------------------------------------------------------
# --profile: Kiln's top ops per step, PyNative and Graph.

def profile_worker(name, args):
    kiln = require_kiln()
    from kiln.runtime import profile
    steps = args.profile_steps
    for use_jit, mode in ((False, "PyNative"), (True, "Graph")):
        try:
            step, sync, *_ = build_kiln(name, args.worker_threads, use_jit=use_jit)
        except NotImplementedError as e:
            print(f"{mode}: {e}")
            return
        for _ in range(args.warmup):
            step()
        sync()
        with profile() as prof:
            for _ in range(steps):
                step()
            sync()
        wall = prof.wall_ms / steps
        rows = prof.stats()
        print(f"\nKiln {kiln.__version__} {mode}, {name}, {args.worker_threads or 'default'} thread(s): "
              f"{wall:.2f} ms per step (mean of {steps}), {prof.total_ms / steps:.2f} ms in kernels")
        # "ran in": Graph for instructions of a compiled graph -- also in PyNative, where Kiln's optimizers run
        # their update as a compiled graph.
        print(f"  {'op':<26} {'ran in':<9} {'calls/step':>10} {'ms/step':>9} {'% of step':>10}")
        for r in rows[:args.top]:
            print(f"  {r['op']:<26} {r['mode']:<9} {r['calls'] / steps:>10g} {r['total_ms'] / steps:>9.3f} "
                  f"{100 * r['total_ms'] / prof.wall_ms:>9.1f}%")
        rest = rows[args.top:]
        if rest:
            ms_ = sum(r["total_ms"] for r in rest) / steps
            print(f"  {f'({len(rest)} other ops)':<26} {'':<9} {sum(r['calls'] for r in rest) / steps:>10g} "
                  f"{ms_:>9.3f} {100 * ms_ / wall:>9.1f}%")
        other = wall - prof.total_ms / steps
        print(f"  {'(outside kernels)':<26} {'':<9} {'':>10} {other:>9.3f} {100 * other / wall:>9.1f}%")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="resnet8,transformer,gru,lenet",
                    help="comma-separated, from: " + ", ".join(WORKLOADS))
    ap.add_argument("--peers", default="torch,torch-compile,mindspore,mindspore-jit",
                    help="comma-separated peer variants (Kiln's two modes always run), from: "
                         "torch, torch-compile, mindspore, mindspore-jit; '' for none")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--kiln-python", default=sys.executable, help="python that imports kiln (default: this one)")
    peers_py = os.path.join(HERE, ".venv-peers", "bin", "python")
    ap.add_argument("--torch-python", default=peers_py if os.path.exists(peers_py) else sys.executable,
                    help="python that imports torch (default: benchmarks/.venv-peers, else this one)")
    ap.add_argument("--ms-python", default=peers_py if os.path.exists(peers_py) else sys.executable,
                    help="python that imports mindspore (default: benchmarks/.venv-peers, else this one)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per variant (median reported; default 5)")
    ap.add_argument("--rounds", type=int, default=1, help="passes over all variants, interleaved; the table shows "
                                                          "the median of the rounds' medians (default 1)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps after the first two (default 10)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per timed run (default 1.0)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per variant run (default 900)")
    ap.add_argument("--quick", action="store_true", help="--repeats 3 --warmup 3 --min-time 0.3")
    ap.add_argument("--profile", metavar="WORKLOAD", help="instead of the table: Kiln's top ops by time per step, "
                                                          "PyNative and Graph, for each --threads count")
    ap.add_argument("--profile-steps", type=int, default=5, help="steps profiled (default 5)")
    ap.add_argument("--top", type=int, default=15, help="ops listed by --profile (default 15)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.warmup, args.min_time = 3, 3, 0.3
    for k in ("repeats", "rounds", "profile_steps", "top"):
        if getattr(args, k) < 1:
            ap.error(f"--{k.replace('_', '-')} must be >= 1, got {getattr(args, k)}")
    if args.warmup < 0 or args.min_time <= 0 or args.timeout <= 0:
        ap.error("--warmup must be >= 0, --min-time and --timeout > 0")
    if args.worker:
        if args.worker == "profile":
            profile_worker(args.workload, args)
        else:
            worker(args.worker, args.workload, args)
        return 0
    try:
        thread_counts = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        ap.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    if not thread_counts or min(thread_counts) < 1:
        ap.error(f"--threads must list thread counts >= 1, got {args.threads!r}")
    if args.profile:
        if args.profile not in WORKLOADS:
            ap.error(f"--profile: unknown workload {args.profile!r}; choose from {list(WORKLOADS)}")
        require_kiln_in(args.kiln_python)
        for t in thread_counts:
            cmd = [args.kiln_python, os.path.abspath(__file__), "--worker", "profile", "--workload", args.profile,
                   "--worker-threads", str(t), "--warmup", str(max(args.warmup, 2)),
                   "--profile-steps", str(args.profile_steps), "--top", str(args.top)]
            p = subprocess.run(cmd, text=True, timeout=args.timeout, env=child_env(t))
            if p.returncode:
                print(f"profile on {t} thread(s) failed (exit {p.returncode})")
                return 1
        return 0
    args.workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown or not args.workloads:
        ap.error(f"--workloads: unknown {unknown}; choose from {list(WORKLOADS)}")
    peers = [v for v in args.peers.split(",") if v]
    bad = [v for v in peers if v not in VARIANTS or v.startswith("kiln")]
    if bad:
        ap.error(f"--peers: unknown {bad}; choose from torch, torch-compile, mindspore, mindspore-jit")
    variants = ["kiln", "kiln-jit"] + [v for v in VARIANTS if v in peers]
    require_kiln_in(args.kiln_python)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; median of "
          f"{args.repeats} runs of ~{args.min_time:g} s after {args.warmup + 2} warm-up steps; each cell its own "
          f"process" + (f"; median of {args.rounds} interleaved rounds" if args.rounds > 1 else ""))
    print(f"pythons: kiln {args.kiln_python}, torch {args.torch_python}, mindspore {args.ms_python}")
    results = run_table(args, variants, thread_counts)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
