"""Exports the examples' networks to ONNX and checks them with onnxruntime (issue 14; a user-runnable check, not a
unit test: tests/python/test_export_onnx.py holds those).

    .venv/bin/python tools/check_onnx_export.py [--out DIR] [--batch 64] [--repeats 20]

For each network (the examples' own LeNet (digits, 8x8) and LeNet5 (MNIST, 28x28), imported from examples/, and the
MLP of examples/train_mlp.py), in inference mode with randomized weights and BatchNorm statistics: exports it with a
fixed input shape and with a dynamic batch (`Tensor(shape=[None, ...])`), runs each file with onnxruntime (the
dynamic one at batch 1 and --batch), and compares with Kiln's outputs (max abs difference <= 1e-5). Prints one line
per file: the difference, the file size, the export time and the median time of one forward pass of --batch inputs
in Kiln (PyNative) and in onnxruntime (CPU provider, default threads). Exit status 1 if any differs.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

TOL = 1e-5


def networks():
    """name -> (network, input shape without the batch axis)."""
    import kiln as ms
    from kiln import nn, Tensor

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from train_lenet_digits import LeNet  # the examples' networks themselves
    from train_mnist_model import LeNet5
    from train_mlp import SimpleMLP

    ms.set_seed(1)
    rng = np.random.default_rng(0)
    nets = {"LeNet (train_lenet_digits)": (LeNet(), (1, 8, 8)), "LeNet5 (train_mnist_model)": (LeNet5(), (1, 28, 28)),
            "SimpleMLP (train_mlp)": (SimpleMLP(10, 64, 1), (10,))}
    for net, _ in nets.values():
        for _, c in net.cells_and_names():
            if isinstance(c, nn.BatchNorm2d):
                c.moving_mean.set_data(Tensor(rng.normal(0, 0.5, c.moving_mean.shape).astype(np.float32)))
                c.moving_variance.set_data(Tensor(rng.uniform(0.5, 2, c.moving_variance.shape).astype(np.float32)))
        net.set_train(False)
    return nets


def _median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="directory for the .onnx files (default: a temporary one)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)

    import kiln as ms
    from kiln import Tensor
    import onnxruntime as ort

    out_dir = args.out or tempfile.mkdtemp(prefix="kiln_onnx_")
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(1)
    failed = 0
    for name, (net, shape) in networks().items():
        stem = name.split()[0].lower()
        for dynamic in (False, True):
            sig = (Tensor(shape=[None, *shape], dtype=ms.float32) if dynamic
                   else Tensor(rng.random((args.batch, *shape), dtype=np.float32)))
            path = os.path.join(out_dir, stem + ("_dynamic" if dynamic else ""))
            t0 = time.perf_counter()
            ms.export(net, sig, file_name=path, file_format="ONNX")
            export_s = time.perf_counter() - t0
            sess = ort.InferenceSession(path + ".onnx", providers=["CPUExecutionProvider"])
            feed_name = sess.get_inputs()[0].name
            diff = 0.0
            for b in ((1, args.batch) if dynamic else (args.batch,)):
                x = rng.random((b, *shape), dtype=np.float32)
                got = sess.run(None, {feed_name: x})[0]
                diff = max(diff, float(np.abs(got - net(Tensor(x)).asnumpy()).max()))
            x = rng.random((args.batch, *shape), dtype=np.float32)
            xt = Tensor(x)
            kiln_s = _median_time(lambda: net(xt).asnumpy(), args.repeats)
            ort_s = _median_time(lambda: sess.run(None, {feed_name: x}), args.repeats)
            ok = diff <= TOL
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:28s} {'dynamic batch' if dynamic else 'fixed shape  '} "
                  f"max|diff| {diff:.2e}  {os.path.getsize(path + '.onnx') / 1024:8.1f} KiB  export {export_s:.3f} s"
                  f"  forward of {args.batch}: Kiln PyNative {kiln_s * 1e3:.3f} ms, onnxruntime {ort_s * 1e3:.3f} ms")
    print(f"files in {out_dir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
