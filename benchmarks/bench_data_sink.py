"""Data sink against the per-step @jit loop: training steps per second on the seed MLP.

Model and data as examples/train_mlp.py: the seed document's SimpleMLP 10-16(ReLU)-1, MSE, Adam(lr 0.01), batch 32,
on scikit-learn's diabetes training split (353 rows -> 11 batches of 32 and one of 1 per epoch), standardized.
Both variants read the same dataset object, epoch after epoch:
  per-step  for data, label in dataset.create_tuple_iterator(): loss = train_step(data, label)   (train_step: @jit)
  sink      sink = kiln.data_sink(train_step_fn, dataset, sink_size=dataset.get_dataset_size()); loss = sink()
The dataset is kiln.dataset.NumpySlicesDataset(...).batch(32) when kiln.dataset provides it (--dataset kiln), else
(or with --dataset arrays) a minimal NumPy-backed dataset of the same batches (the protocol data_sink reads).
Each variant warms up (compiles, fills the queue); then timed runs of --epochs epochs alternate between the two,
--repeats each; the best run's steps/s is reported (best-of-N: the least disturbed by other processes on the machine)
with its CPU time per step (all threads of the process), and the ratio sink / per-step.
Both variants must end with the same parameters (checked: bit for bit), so neither skips work.

    .venv/bin/python benchmarks/bench_data_sink.py [--epochs 30] [--repeats 5]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import os
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln as ms  # noqa: E402 (after require_kiln())
from kiln import nn, ops  # noqa: E402 (after require_kiln())


class SimpleMLP(nn.Cell):
    def __init__(self, input_size=10, hidden_size=16, output_size=1):
        super().__init__()
        self.fc1 = nn.Dense(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden_size, output_size)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class ArrayDataset:
    """Batches of a pair of NumPy arrays: create_tuple_iterator (MindSpore's epoch behaviour) and get_dataset_size."""

    def __init__(self, x, y, batch_size):
        n = len(x)
        self.batches = [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, n, batch_size)]

    def get_dataset_size(self):
        return len(self.batches)

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        return _Iter(self.batches, num_epochs, output_numpy)


class _Iter:
    def __init__(self, batches, num_epochs, output_numpy):
        self.batches, self.num_epochs, self.output_numpy = batches, num_epochs, output_numpy
        self.pos, self.epoch = 0, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.pos == len(self.batches):
            self.pos, self.epoch = 0, self.epoch + 1
            raise StopIteration
        if self.num_epochs != -1 and self.epoch >= self.num_epochs:
            raise StopIteration
        b = self.batches[self.pos]
        self.pos += 1
        return [b[0], b[1]] if self.output_numpy else [ms.Tensor(b[0]), ms.Tensor(b[1])]


def load_data():
    try:
        from sklearn.datasets import load_diabetes
        x, y = load_diabetes(return_X_y=True)
        perm = np.random.default_rng(42).permutation(len(x))[:int(0.8 * len(x))]
        x, y = x[perm], y[perm].reshape(-1, 1)
    except ImportError:  # same shape of problem without scikit-learn
        rng = np.random.default_rng(0)
        x = rng.standard_normal((353, 10))
        y = x @ rng.standard_normal((10, 1))
    x = (x - x.mean(0)) / x.std(0)
    y = (y - y.mean()) / y.std()
    return x.astype(np.float32), y.astype(np.float32)


def make_dataset(kind, x, y, batch):
    if kind in ("auto", "kiln"):
        try:
            from kiln import dataset as kds
            d = kds.NumpySlicesDataset({"data": x, "label": y}, shuffle=False).batch(batch)
            return d, "kiln.dataset.NumpySlicesDataset.batch"
        except (ImportError, AttributeError, TypeError, NotImplementedError) as e:
            if kind == "kiln":
                raise SystemExit(f"kiln.dataset is not usable here: {e}")
    return ArrayDataset(x, y, batch), "NumPy-backed ArrayDataset"


def build(seed=1):
    ms.set_seed(seed)
    net = SimpleMLP()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01)
    loss_fn = nn.MSELoss()

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        loss = ops.depend(loss, optimizer(grads))
        return loss

    net.set_train(True)
    return optimizer, train_step


def per_step_runner(dataset):
    """The per-step loop: one Python iteration and one @jit call per batch."""
    optimizer, fn = build()
    train_step = ms.jit(fn)
    it = dataset.create_tuple_iterator(num_epochs=-1)

    def epoch():
        loss = None
        for data, label in it:
            loss = train_step(data, label)
        return loss

    return epoch, optimizer


def sink_runner(dataset):
    """data_sink over one epoch per call."""
    optimizer, fn = build()
    sink = ms.data_sink(fn, dataset, sink_size=dataset.get_dataset_size())
    return sink, optimizer


def timed(epoch_fn, epochs, steps_per_epoch):
    """Steps/s (wall clock) of `epochs` epochs, and CPU microseconds per step: of this (the calling) thread, and of
    the other threads of the process (data_sink's producer thread)."""
    c0, m0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
    for _ in range(epochs):
        loss = epoch_fn()
    float(loss.asnumpy())
    wall, cpu, main = time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0
    steps = epochs * steps_per_epoch
    return steps / wall, main / steps * 1e6, (cpu - main) / steps * 1e6


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=30, help="epochs per timed run (default 30)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per variant; the best is reported (default 5)")
    p.add_argument("--warmup", type=int, default=3, help="untimed epochs first (default 3)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--dataset", choices=["auto", "kiln", "arrays"], default="auto")
    args = p.parse_args(argv)
    x, y = load_data()
    dataset, what = make_dataset(args.dataset, x, y, args.batch_size)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print(f"seed MLP 10-16-1, Adam, batch {args.batch_size}; dataset: {what}, {dataset.get_dataset_size()} "
          f"batches/epoch; {args.epochs} epochs x best of {args.repeats}; {os.cpu_count()} CPUs, load {load:.1f}")
    per_step, opt_a = per_step_runner(dataset)
    sink, opt_b = sink_runner(dataset)
    n = dataset.get_dataset_size()
    for _ in range(args.warmup):  # compiles, fills the queue
        per_step()
        sink()
    runs = {"per-step": [], "sink": []}
    for _ in range(args.repeats):  # alternate, so that both see the same machine load
        for name, fn in (("per-step", per_step), ("sink", sink)):
            runs[name].append(timed(fn, args.epochs, n))
    same = all(np.array_equal(a.asnumpy(), b.asnumpy()) for a, b in zip(opt_a.parameters, opt_b.parameters))
    step_rate, sink_rate = max(r[0] for r in runs["per-step"]), max(r[0] for r in runs["sink"])
    # CPU per step: the least of the runs (the least disturbed), per thread
    step_cpu = min(r[1] + r[2] for r in runs["per-step"])
    sink_main, sink_prod = min(r[1] for r in runs["sink"]), min(r[2] for r in runs["sink"])
    print(f"per-step @jit loop : {step_rate:10.0f} steps/s   CPU/step {step_cpu:5.1f} us (one thread)")
    print(f"data_sink          : {sink_rate:10.0f} steps/s   CPU/step {sink_main:5.1f} us in the step loop + "
          f"{sink_prod:5.1f} us in the producer thread")
    print(f"ratio sink/per-step: {sink_rate / step_rate:10.2f}x   (goal >= 2x; wall clock, best of {args.repeats})")
    print(f"CPU-bound ratio    : {step_cpu / max(sink_main, sink_prod):10.2f}x   (per-step CPU / the busier sink "
          "thread: the ratio with a free core for each thread)")
    print(f"load average after : {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"final parameters equal bit for bit: {same}")
    if not same:
        raise SystemExit("the two variants ended with different parameters")


if __name__ == "__main__":
    main()
