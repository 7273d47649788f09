"""Input-pipeline throughput (samples/s): kiln.dataset against MindSpore 2.x's dataset and PyTorch's DataLoader.

Two pipelines (issue 8), each read end to end once per run (an epoch), batches delivered as NumPy arrays:
  mnist   MNIST-format idx files (60,000 images 28x28x1 uint8) -> Rescale(1/255) -> Normalize(0.1307, 0.3081)
          -> HWC2CHW -> batch 64 (drop_remainder); one worker (the sources' and maps' defaults)
  jpeg    a folder of JPEGs (10 classes, 64 images each, 500x375 RGB, quality 90) -> Decode -> RandomResizedCrop 224
          -> Normalize (ImageNet mean/std) -> HWC2CHW -> batch 32 (drop_remainder), 2 workers
Kiln and MindSpore run the same code (`ms_pipeline`: the MindSpore API, `import kiln.dataset` or
`import mindspore.dataset`); PyTorch runs the equivalent torchvision pipeline (ToTensor does /255 + HWC->CHW) through
`torch.utils.data.DataLoader`. Each framework runs in its own interpreter (its own venv), warms up with one partial
epoch, then reports the median samples/s of --repeats full epochs. A framework that does not import is reported as
"not installed", one that raises as "failed: ..." -- never a made-up number. The `kiln/x` column is Kiln's
samples/s over x's (above 1: Kiln is faster).

    .venv/bin/python benchmarks/bench_dataset.py \\
        [--mindspore-python /path/to/venv-with-mindspore/bin/python] [--torch-python /path/to/venv-with-torch/bin/python]
        [--pipeline mnist|jpeg|all] [--repeats 3]
By default the peers' interpreter is benchmarks/.venv-peers/bin/python (setup_peers.sh; it holds both peers); a
missing one is reported as "not installed". Kiln's is this python (--kiln-python): the installed Kiln
(.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py); one whose kiln does not import stops the script.
The data is written once into --data-dir (default: a temporary directory)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _env import child_env, require_kiln, require_kiln_in

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PIPELINES = {
    "mnist": "MNIST idx files -> Rescale -> Normalize -> HWC2CHW -> batch 64 (1 worker)",
    "jpeg": "JPEG folder -> Decode -> RandomResizedCrop 224 -> Normalize -> HWC2CHW -> batch 32 (2 workers)",
}
MNIST_N = 60000
JPEG_CLASSES, JPEG_PER_CLASS, JPEG_SIZE = 10, 64, (500, 375)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# ---- data ------------------------------------------------------------------------------------------------------

def write_mnist(d):
    """Writes train-images-idx3-ubyte / train-labels-idx1-ubyte (MNIST's idx format, big-endian sizes)."""
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (MNIST_N, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, MNIST_N).astype(np.uint8)
    with open(os.path.join(d, "train-images-idx3-ubyte"), "wb") as f:
        f.write(np.array([2051, MNIST_N, 28, 28], ">u4").tobytes())
        f.write(images.tobytes())
    with open(os.path.join(d, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(np.array([2049, MNIST_N], ">u4").tobytes())
        f.write(labels.tobytes())


def write_jpegs(d):
    """Writes JPEG_CLASSES folders of JPEG_PER_CLASS smooth random RGB images (photo-like enough for JPEG)."""
    from PIL import Image
    rng = np.random.default_rng(0)
    w, h = JPEG_SIZE
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    for c in range(JPEG_CLASSES):
        cd = os.path.join(d, f"class_{c:02d}")
        os.makedirs(cd, exist_ok=True)
        for i in range(JPEG_PER_CLASS):
            fx, fy, ph = rng.uniform(0.005, 0.05, 3)
            base = np.stack([np.sin(xx * fx + ph * k) * np.cos(yy * fy + k) for k in range(3)], -1)
            img = (127.5 + 100 * base + rng.normal(0, 12, base.shape)).clip(0, 255).astype(np.uint8)
            Image.fromarray(img).save(os.path.join(cd, f"{i:04d}.jpg"), quality=90)


def prepare(data_dir):
    mnist, jpeg = os.path.join(data_dir, "mnist"), os.path.join(data_dir, "jpeg")
    if not os.path.exists(os.path.join(mnist, "train-labels-idx1-ubyte")):
        write_mnist(mnist)
    if not os.path.isdir(os.path.join(jpeg, f"class_{JPEG_CLASSES - 1:02d}")):
        write_jpegs(jpeg)
    return {"mnist": mnist, "jpeg": jpeg}


# ---- the pipelines ---------------------------------------------------------------------------------------------

def ms_pipeline(ds, vision, transforms, pipeline, path):
    """The MindSpore-API pipeline (Kiln: ds = kiln.dataset, MindSpore: ds = mindspore.dataset)."""
    if pipeline == "mnist":
        d = ds.MnistDataset(path, usage="train", shuffle=False)
        d = d.map([vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                   vision.HWC2CHW()], input_columns="image")
        d = d.map(transforms.TypeCast(np.int32), input_columns="label")
        return d.batch(64, drop_remainder=True), MNIST_N // 64 * 64
    d = ds.ImageFolderDataset(path, shuffle=True, num_parallel_workers=2)
    d = d.map([vision.Decode(), vision.RandomResizedCrop(224),
               vision.Normalize(mean=[m * 255 for m in IMAGENET_MEAN], std=[s * 255 for s in IMAGENET_STD]),
               vision.HWC2CHW()], input_columns="image", num_parallel_workers=2)
    n = JPEG_CLASSES * JPEG_PER_CLASS
    return d.batch(32, drop_remainder=True), n // 32 * 32


def ms_epochs(framework, pipeline, path):
    """Yields a function that reads one epoch and returns (samples, last batch's image shape)."""
    if framework == "kiln":
        require_kiln()
        import kiln.dataset as ds
        from kiln.dataset import transforms, vision
    else:
        import mindspore.dataset as ds
        from mindspore.dataset import transforms, vision
    ds.config.set_seed(0)
    d, samples = ms_pipeline(ds, vision, transforms, pipeline, path)

    def epoch(limit=None):
        n, shape = 0, None
        for i, (img, label) in enumerate(d.create_tuple_iterator(output_numpy=True, num_epochs=1)):
            n += img.shape[0]
            shape = img.shape
            assert img.dtype == np.float32 and label.dtype == np.int32, (img.dtype, label.dtype)
            if limit is not None and i + 1 >= limit:
                break
        return n, shape
    return epoch, samples


def torch_epochs(pipeline, path):
    import torch
    from torch.utils.data import DataLoader, Dataset
    from torchvision import datasets, transforms as T
    torch.manual_seed(0)
    if pipeline == "mnist":
        with open(os.path.join(path, "train-images-idx3-ubyte"), "rb") as f:
            images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)
        with open(os.path.join(path, "train-labels-idx1-ubyte"), "rb") as f:
            labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int32)
        tf = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])

        class Mnist(Dataset):
            def __len__(self):
                return len(labels)

            def __getitem__(self, i):
                return tf(images[i]), int(labels[i])
        loader = DataLoader(Mnist(), batch_size=64, shuffle=False, drop_last=True, num_workers=0)
        samples = MNIST_N // 64 * 64
    else:
        tf = T.Compose([T.RandomResizedCrop(224), T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
        loader = DataLoader(datasets.ImageFolder(path, transform=tf), batch_size=32, shuffle=True, drop_last=True,
                            num_workers=2, persistent_workers=False)
        samples = JPEG_CLASSES * JPEG_PER_CLASS // 32 * 32

    def epoch(limit=None):
        n, shape = 0, None
        for i, (img, label) in enumerate(loader):
            img = img.numpy()
            n += img.shape[0]
            shape = img.shape
            if limit is not None and i + 1 >= limit:
                break
        return n, shape
    return epoch, samples


def worker(framework, pipeline, path, repeats):
    """Runs in the framework's interpreter: prints one JSON line with the measurement."""
    if framework == "torch":
        epoch, samples = torch_epochs(pipeline, path)
    else:
        epoch, samples = ms_epochs(framework, pipeline, path)
    epoch(limit=4)  # warm-up: imports, worker start, first decode
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        n, shape = epoch()
        dt = time.perf_counter() - t0
        if n != samples:
            raise RuntimeError(f"{framework}: an epoch gave {n} samples, expected {samples}")
        rates.append(n / dt)
    exp = (64, 1, 28, 28) if pipeline == "mnist" else (32, 3, 224, 224)
    if tuple(shape) != exp:
        raise RuntimeError(f"{framework}: batches of shape {tuple(shape)}, expected {exp}")
    print(json.dumps({"samples_per_s": statistics.median(rates), "runs": [round(r, 1) for r in rates]}))


def version_of(py, module):
    r = subprocess.run([py, "-c", f"import {module}; print({module}.__version__)"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def measure(py, framework, pipeline, path, repeats):
    module = {"kiln": "kiln", "mindspore": "mindspore", "torch": "torch"}[framework]
    if py is None or not os.path.exists(py) or version_of(py, module) is None:
        return None, "not installed"
    r = subprocess.run([py, os.path.abspath(__file__), "--worker", framework, "--pipeline", pipeline,
                        "--path", path, "--repeats", str(repeats)], capture_output=True, text=True, env=child_env())
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"failed: {last[:150]}"
    return json.loads(lines[-1])["samples_per_s"], None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipeline", default="all", choices=["mnist", "jpeg", "all"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kiln-python", default=sys.executable)
    peers = os.path.join(HERE, ".venv-peers", "bin", "python")
    ap.add_argument("--mindspore-python", default=peers)
    ap.add_argument("--torch-python", default=peers)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.pipeline, a.path, a.repeats)
        return
    require_kiln_in(a.kiln_python)
    tmp = None
    if a.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="kiln-bench-data-")
        a.data_dir = tmp.name
    paths = prepare(a.data_dir)
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) / 2:
        print(f"warning: load average {load:.1f} on {os.cpu_count()} cores: the figures are not representative")
    pythons = {"kiln": a.kiln_python, "mindspore": a.mindspore_python, "torch": a.torch_python}
    names = {"kiln": "Kiln", "mindspore": "MindSpore dataset", "torch": "PyTorch DataLoader"}
    for p in (["mnist", "jpeg"] if a.pipeline == "all" else [a.pipeline]):
        print(f"\n{p}: {PIPELINES[p]}  (median of {a.repeats} epochs)")
        res = {f: measure(pythons[f], f, p, paths[p], a.repeats) for f in ("kiln", "mindspore", "torch")}
        kiln_rate = res["kiln"][0]
        print(f"  {'framework':<20} {'samples/s':>12} {'kiln/x':>8}")
        for f, (rate, why) in res.items():
            if rate is None:
                print(f"  {names[f]:<20} {why}")
                continue
            ratio = f"{kiln_rate / rate:8.2f}" if kiln_rate else f"{'-':>8}"
            print(f"  {names[f]:<20} {rate:12.1f} {ratio}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
