"""Checks that real MindSpore loads and runs the MindIR files Kiln exports (issue 14; not a unit test: it needs
a MindSpore installation).

    .venv/bin/python tools/check_mindir_mindspore.py --ms-python /work/msvenv/bin/python

Kiln side: builds each network (the examples' own LeNet and LeNet5, imported from examples/, the tutorial's MLP,
and networks covering every exported operator), exports it with `kiln.export(..., file_format="MINDIR")`, reloads
it with `kiln.load` + `nn.GraphCell`, and stores the input and Kiln's eager outputs. MindSpore side (the same file
run by --ms-python with --ms-side, importing no Kiln): `mindspore.load` + `nn.GraphCell` on each file, in GRAPH_MODE
and PYNATIVE_MODE, compared with Kiln's outputs (max abs difference <= 1e-5); it also exports two networks built
from MindSpore's own layers, which Kiln then loads and runs. Prints one line per network; exit status 1 if any
failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-5


def kiln_nets():
    """name -> (network, list of input arrays), built with Kiln."""
    import kiln as ms
    from kiln import nn, ops

    ms.set_seed(1)
    rng = np.random.default_rng(0)
    x8 = rng.random((4, 1, 8, 8), dtype=np.float32)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from train_lenet_digits import LeNet  # the examples' networks themselves
    from train_mnist_model import LeNet5

    def mlp():  # the save-and-load tutorial's network
        return nn.SequentialCell(nn.Flatten(), nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                                 nn.Dense(512, 10))

    class Mixed(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, pad_mode="pad", padding=1, has_bias=True)
            self.bn = nn.BatchNorm2d(4)
            self.avg = nn.AvgPool2d(2, 2)
            self.fc = nn.Dense(64, 6)
            self.ln = nn.LayerNorm((6,))

        def construct(self, x):
            y = self.avg(ops.sigmoid(self.bn(self.conv(x))))
            y = self.ln(self.fc(y.reshape(y.shape[0], -1)))
            z = ops.softmax(y * 2 - 1, -1) + ops.tanh(y) / 3
            return z.transpose(1, 0), ops.exp(z).mean(-1, keep_dims=True)

    class Strided(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3, stride=2, pad_mode="same", has_bias=False)
            self.pool = nn.MaxPool2d(3, 1, pad_mode="same")

        def construct(self, x):
            y = self.pool(ops.relu(self.conv(x)))
            peaks = ops.concat((ops.sqrt(ops.abs(y) + 1).max(axis=(2, 3)), y.mean((2, 3))), 1)
            return ops.concat((y, -y), 1).sum((2, 3)) + peaks

    class MathOps(nn.Cell):
        def construct(self, x, y):
            a = ops.maximum(x, y) - ops.minimum(x, y) / (ops.abs(y) + 1)
            b = ops.pow(ops.abs(x) + 1, 1.5) + ops.neg(ops.log(ops.abs(x) + 2)) + ops.rsqrt(ops.square(y) + 1)
            c = ops.erf(x) + ops.sin(x) * ops.cos(y) + ops.floor(x * 3) + ops.ceil(y * 3) + ops.sign(x) \
                + ops.log1p(ops.abs(y))
            d = ops.log_softmax(a + b + c, 1)
            return d, d.max(1), d.min(0), ops.broadcast_to(y.mean(0), (3, 4, 5))

    class PoolMatmul(nn.Cell):
        def __init__(self):
            super().__init__()
            self.adaptive = nn.AdaptiveAvgPool2d((2, 3))
            self.avg_same = nn.AvgPool2d(3, 1, pad_mode="same")
            self.gelu = nn.GELU(approximate=True)

        def construct(self, x):
            p = self.adaptive(self.avg_same(x))  # (2, 3, 2, 3)
            q = ops.matmul(p, p.transpose(0, 1, 3, 2))  # batched (2, 3, 2, 2)
            big = ops.logical_and(q > 0.5, ops.logical_not(q >= p.sum()))
            return (self.gelu(q), ops.cast(q, ms.float16), big.astype(ms.int32) * 3,
                    ops.select(ops.logical_or(q < 0.7, q == 1), q, -q) + (q != 2) - (q <= 3))

    class Norm1d(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(6, 8, activation="relu")
            self.bn = nn.BatchNorm1d(8)
            self.head = nn.Dense(8, 3)

        def construct(self, x):  # x (2, 5, 6): Dense over the last axis of a 3-D input
            y = self.fc(x).reshape(10, 8)
            return self.head(self.bn(y))

    class SliceEmbed(nn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def construct(self, x, ids):
            e = self.emb(ids)  # (3, 4)
            return x[:, 0] * 2, x[..., ::-1], x[1:, -2:, 1::2], e[::-2] + e.sum()

    class Kernels(nn.Cell):  # the one-node elementwise kernels of issue 23, written under MindSpore's names
        def construct(self, a, b):
            return (ops.acos(a), ops.asin(a), ops.atan(a), ops.sinh(a), ops.cosh(a), ops.tan(a), ops.asinh(a),
                    ops.acosh(ops.abs(a) + 1.5), ops.atanh(a), ops.expm1(a), ops.erfc(a), ops.trunc(a * 3),
                    ops.sinc(a), ops.xlogy(a, ops.abs(b) + 0.1), ops.truncate_div(a * 5, ops.abs(b) + 0.5),
                    ops.fmax(a, b), ops.heaviside(a, b))  # Fmin is written too; MindSpore's CPU build lacks it

    class Activations(nn.Cell):  # the activation kernels of issue 23 (LogSigmoid written as Neg(Softplus(Neg x)))
        def construct(self, a):
            return (ops.hardswish(a), ops.hardsigmoid(a), ops.selu(a), ops.mish(a), ops.softplus(a),
                    ops.logsigmoid(a))

    class RoundCopysign(nn.Cell):  # Round(x, decimals=0); Copysign (MindSpore has none) as Select(LogicalOr(...))
        def construct(self, a, b):  # copysign(1, -0.0) = -1 tells Kiln's sign-bit rule from MindSpore's b < 0
            return ops.round(a * 4), ops.copysign(a, b), ops.copysign(ops.ones_like(a), b)

    class Gathers(nn.Cell):  # GatherD (gather_elements; sort/topk values, but MindIR lacks their ArgSort). Negative
        # indices only along the last dim: MindSpore 2.10 PyNative refused a -1 along dim 0 of (3, 4), reporting it as 3
        def construct(self, a, idx):
            return ops.gather_elements(a, 1, idx), ops.gather_elements(a * 2, 0, idx[:2])

    class Resizes(nn.Cell):  # ResizeNearest / ResizeLinear of issue 23, written as their former Gather compositions
        def construct(self, a, v):
            return (ops.interpolate(a, size=(5, 7), mode="bilinear"), ops.interpolate(a, size=(2, 3)),
                    ops.interpolate(a, size=(5, 3), mode="nearest-exact"),
                    ops.interpolate(v, size=(3, 2, 5), mode="trilinear", align_corners=True),
                    ops.ResizeNearestNeighbor((5, 6), align_corners=True)(a), ops.ResizeBilinearV2()(a, (4, 7)))

    nets = {
        "gathers": (Gathers(), [rng.normal(size=(3, 4)).astype(np.float32),
                                np.array([[2, 0, 1, 1], [0, 0, 2, 1], [-3, 1, -1, 2]], np.int32)]),
        "kernels": (Kernels(), [rng.uniform(-0.9, 0.9, size=(3, 4)).astype(np.float32),
                                rng.normal(size=(3, 4)).astype(np.float32)]),
        "resizes": (Resizes(), [rng.normal(size=(2, 3, 3, 4)).astype(np.float32),
                                rng.normal(size=(1, 2, 2, 3, 4)).astype(np.float32)]),
        "round_copysign": (RoundCopysign(), [np.array([0.125, 0.375, 0.625, -0.125, -0.625, 0.4], np.float32),
                                             np.array([-0.0, 0.0, -1.0, 2.0, -np.inf, np.inf], np.float32)]),
        "activations": (Activations(), [rng.uniform(-5, 5, size=(3, 4)).astype(np.float32)]),
        "lenet_digits": (LeNet(), [x8]),
        "lenet5_mnist": (LeNet5(), [rng.random((2, 1, 28, 28), dtype=np.float32)]),
        "tutorial_mlp": (mlp(), [rng.random((1, 1, 28, 28), dtype=np.float32)]),
        "mixed_layers": (Mixed(), [x8]),
        "strided_same": (Strided(), [rng.random((2, 1, 9, 9), dtype=np.float32)]),
        "math_ops": (MathOps(), [rng.normal(size=(4, 5)).astype(np.float32),
                                 rng.normal(size=(4, 5)).astype(np.float32)]),
        "pool_matmul": (PoolMatmul(), [rng.random((2, 3, 6, 6), dtype=np.float32)]),
        "norm1d_dense3d": (Norm1d(), [rng.normal(size=(2, 5, 6)).astype(np.float32)]),
        "slice_embed": (SliceEmbed(), [rng.normal(size=(3, 3, 4)).astype(np.float32),
                                       np.array([7, 0, 3], np.int32)]),
    }
    for net, _ in nets.values():
        for _, c in net.cells_and_names():
            if isinstance(c, (nn.BatchNorm2d, nn.BatchNorm1d)):
                c.moving_mean.set_data(ms.Tensor(rng.normal(0, 0.3, c.moving_mean.shape).astype(np.float32)))
                c.moving_variance.set_data(ms.Tensor(rng.uniform(0.5, 2, c.moving_variance.shape)
                                                     .astype(np.float32)))
    return nets


def kiln_side(workdir):
    import kiln as ms
    from kiln import nn, Tensor
    cases = []
    for name, (net, inputs) in kiln_nets().items():
        net.set_train(False)
        ts = [Tensor(a) for a in inputs]
        out = net(*ts)
        outs = [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]
        path = os.path.join(workdir, name + ".mindir")
        ms.export(net, *ts, file_name=path[:-len(".mindir")], file_format="MINDIR")
        back = nn.GraphCell(ms.load(path))(*ts)
        back = [o.asnumpy() for o in (back if isinstance(back, tuple) else (back,))]
        kiln_diff = max(float(np.abs(a - b).max()) for a, b in zip(outs, back))
        np.savez(os.path.join(workdir, name + ".npz"), **{f"in{i}": a for i, a in enumerate(inputs)},
                 **{f"out{i}": a for i, a in enumerate(outs)})
        cases.append({"name": name, "kiln_reload_diff": kiln_diff, "n_in": len(inputs), "n_out": len(outs)})
    return cases


def ms_side(workdir, cases):
    """Results per network, written to ms_results.json after each one (MindSpore 2.10 may crash at exit)."""
    import mindspore as mms
    from mindspore import nn as mnn
    results = []
    for c in cases:
        data = np.load(os.path.join(workdir, c["name"] + ".npz"))
        ins = [mms.Tensor(data[f"in{i}"]) for i in range(c["n_in"])]
        r = {"name": c["name"]}
        for mode_name, mode in (("graph", mms.GRAPH_MODE), ("pynative", mms.PYNATIVE_MODE)):
            try:
                mms.set_context(mode=mode)
                out = mnn.GraphCell(mms.load(os.path.join(workdir, c["name"] + ".mindir")))(*ins)
                out = out if isinstance(out, (tuple, list)) else (out,)
                if len(out) != c["n_out"]:
                    raise RuntimeError(f"{len(out)} outputs, {c['n_out']} expected")
                r[mode_name] = max(float(np.abs(o.asnumpy() - data[f"out{i}"]).max()) for i, o in enumerate(out))
            except Exception as e:  # noqa: BLE001 — reported per network
                msg = [ln for ln in str(e).splitlines() if ln.strip() and not ln.startswith("-")]
                r[mode_name] = f"{type(e).__name__}: {(msg[0] if msg else '')[:300]}"
        results.append(r)
        with open(os.path.join(workdir, "ms_results.json"), "w") as f:
            json.dump(results, f)
    return results


def ms_exports(workdir):
    """MindSpore side: exports networks written with MindSpore's own layers (the other direction: Kiln must load
    them); returns their names. Each <name>.npz holds the input `x` and MindSpore's outputs out0, out1, ..."""
    import mindspore as mms
    from mindspore import nn as mnn, ops as mops
    mms.set_context(mode=mms.GRAPH_MODE)
    mms.set_seed(0)
    rng = np.random.default_rng(5)

    class Layers(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = mnn.Conv2d(3, 8, 3, pad_mode="same", has_bias=True)
            self.bn = mnn.BatchNorm2d(8)
            self.pool = mnn.MaxPool2d(2, 2)
            self.avg = mnn.AvgPool2d(2, 2)
            self.ada = mnn.AdaptiveAvgPool2d((1, 1))
            self.fc = mnn.Dense(8, 5)
            self.drop = mnn.Dropout(p=0.5)
            self.ln = mnn.LayerNorm((5,))
            self.gelu = mnn.GELU()
            self.sm = mnn.Softmax()
            self.lsm = mnn.LogSoftmax()

        def construct(self, x):
            y = self.ada(self.avg(self.pool(mops.relu(self.bn(self.conv(x))))))
            y = self.drop(y.squeeze(-1).squeeze(-1))
            z = self.ln(self.fc(y))
            a = self.gelu(z) + mops.sigmoid(z) * mops.tanh(z)
            b = mops.concat((self.sm(a), self.lsm(a)), 1)
            return (b.sum(1), b.mean(0), mops.amax(b, 1), mops.expand_dims(b, 0).transpose(1, 0, 2),
                    mops.cast(b, mms.float16))

    class LeNet5(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = mnn.Conv2d(1, 6, 5, pad_mode="valid")
            self.conv2 = mnn.Conv2d(6, 16, 5, pad_mode="valid")
            self.relu = mnn.ReLU()
            self.pool = mnn.MaxPool2d(kernel_size=2, stride=2)
            self.flatten = mnn.Flatten()
            self.fc1 = mnn.Dense(16 * 4 * 4, 120)
            self.fc2 = mnn.Dense(120, 84)
            self.fc3 = mnn.Dense(84, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc3(self.relu(self.fc2(self.relu(self.fc1(self.flatten(x))))))

    class Slicing(mnn.Cell):
        def construct(self, x):
            return x[:, 0] * 2, x[1:, -2:, 1::2], x[0] + x[-1], x[:, :, ::-1]

    names = []
    for name, net, x in (("ms_slicing", Slicing(), rng.normal(size=(3, 3, 4)).astype(np.float32)),
                         ("ms_layers", Layers(), rng.random((2, 3, 8, 8), dtype=np.float32)),
                         ("ms_lenet5", LeNet5(), rng.random((2, 1, 28, 28), dtype=np.float32))):
        net.set_train(False)
        for _, c in net.cells_and_names():
            if isinstance(c, mnn.BatchNorm2d):
                c.moving_mean.set_data(mms.Tensor(rng.normal(0, 0.3, c.moving_mean.shape).astype(np.float32)))
                c.moving_variance.set_data(mms.Tensor(rng.uniform(0.5, 2, c.moving_variance.shape)
                                                      .astype(np.float32)))
        out = net(mms.Tensor(x))
        out = out if isinstance(out, tuple) else (out,)
        mms.export(net, mms.Tensor(x), file_name=os.path.join(workdir, name), file_format="MINDIR")
        np.savez(os.path.join(workdir, name + ".npz"), x=x, **{f"out{i}": o.asnumpy() for i, o in enumerate(out)})
        names.append(name)
    with open(os.path.join(workdir, "ms_exports.json"), "w") as f:
        json.dump(names, f)


def kiln_loads(workdir):
    """Kiln side of the other direction: loads MindSpore's exports; (name, max abs difference or error)."""
    import kiln as ms
    from kiln import nn, Tensor
    try:
        with open(os.path.join(workdir, "ms_exports.json")) as f:
            names = json.load(f)
    except OSError:
        return [("mindspore exports", "not written")]
    out = []
    for name in names:
        data = np.load(os.path.join(workdir, name + ".npz"))
        try:
            got = nn.GraphCell(ms.load(os.path.join(workdir, name + ".mindir")))(Tensor(data["x"]))
            got = got if isinstance(got, tuple) else (got,)
            out.append((name, max(float(np.abs(g.asnumpy().astype(np.float64) - data[f"out{i}"]).max())
                                  for i, g in enumerate(got))))
        except Exception as e:  # noqa: BLE001 — reported per network
            out.append((name, f"{type(e).__name__}: {e}"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ms-python", default="/work/msvenv/bin/python", help="python of a MindSpore installation")
    ap.add_argument("--ms-side", metavar="WORKDIR", help=argparse.SUPPRESS)
    ap.add_argument("--keep", metavar="DIR", help="write the files here (kept) instead of a temporary directory")
    args = ap.parse_args()
    if args.ms_side:
        with open(os.path.join(args.ms_side, "cases.json")) as f:
            cases = json.load(f)
        ms_exports(args.ms_side)
        ms_side(args.ms_side, cases)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        cases = kiln_side(workdir)
        with open(os.path.join(workdir, "cases.json"), "w") as f:
            json.dump(cases, f)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        p = subprocess.run([args.ms_python, os.path.abspath(__file__), "--ms-side", workdir], env=env,
                           capture_output=True, text=True, timeout=900)
        try:
            with open(os.path.join(workdir, "ms_results.json")) as f:
                results = json.load(f)
        except (OSError, ValueError):
            results = []
        if len(results) < len(cases):
            print(p.stderr[-3000:])
            print(f"MindSpore side stopped (exit status {p.returncode}) after {len(results)} of {len(cases)} "
                  "networks")
            results += [{"name": c["name"], "graph": "crashed", "pynative": "crashed"} for c in cases[len(results):]]
        back = kiln_loads(workdir)
    ok = True
    for c, r in zip(cases, results):
        good = all(isinstance(r[m], float) and r[m] <= TOL for m in ("graph", "pynative")) \
            and c["kiln_reload_diff"] <= TOL
        ok &= good

        def fmt(v):
            return f"{v:.2e}" if isinstance(v, float) else v
        print(f"{'OK  ' if good else 'FAIL'} {c['name']:<14} kiln reload {fmt(c['kiln_reload_diff'])}  "
              f"mindspore graph {fmt(r['graph'])}  pynative {fmt(r['pynative'])}")
    for name, diff in back:
        good = isinstance(diff, float) and diff <= TOL
        ok &= good
        print(f"{'OK  ' if good else 'FAIL'} {name:<14} written by MindSpore, run by Kiln: "
              f"{f'{diff:.2e}' if isinstance(diff, float) else diff}")
    print("all networks load and agree in MindSpore and in Kiln" if ok else "some networks FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
