"""A test-local dataset for data_sink tests: the protocol kiln.data_sink reads (create_tuple_iterator(num_epochs,
output_numpy) yielding lists of column values, MindSpore's epoch behaviour; get_dataset_size()) over NumPy arrays,
with hooks to fail, to slow down and to count what it produced."""
import threading
import time

import numpy as np

import kiln


class ArrayDataset:
    """Batches of `batch_size` rows of the given column arrays (the last batch partial unless drop_remainder).

    fail_at: batch number (counted over all epochs) at which the iterator raises ValueError("broken batch N");
    delay: seconds slept before each batch; `batch_override`: {batch number in the epoch: list of arrays} replaces
    a batch (to feed one of other shapes). `produced` counts the batches yielded (all epochs)."""

    def __init__(self, columns, batch_size, drop_remainder=False, fail_at=None, delay=0.0, batch_override=None):
        self.columns = [np.ascontiguousarray(c) for c in columns]
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.fail_at = fail_at
        self.delay = delay
        self.batch_override = batch_override or {}
        self.produced = 0
        self._lock = threading.Lock()

    def get_dataset_size(self):
        n = len(self.columns[0])
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def batches(self):
        """One epoch of batches (lists of NumPy arrays)."""
        out = []
        for b in range(self.get_dataset_size()):
            lo = b * self.batch_size
            out.append(self.batch_override.get(b, [c[lo:lo + self.batch_size] for c in self.columns]))
        return out

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        return _Iterator(self, num_epochs, output_numpy)


def broken_batch(n):
    raise ValueError(f"broken batch {n}")


class _Iterator:
    """StopIteration at the end of each epoch; the next call starts the next epoch (as MindSpore's iterator)."""

    def __init__(self, ds, num_epochs, output_numpy):
        self.ds, self.num_epochs, self.output_numpy = ds, num_epochs, output_numpy
        self.epoch, self.pos = 0, 0

    def __iter__(self):
        return self

    def __next__(self):
        ds = self.ds
        if self.num_epochs != -1 and self.epoch >= self.num_epochs:
            raise StopIteration
        if self.pos == 0:
            self.batches = ds.batches()  # one epoch's batches, made when the epoch starts
        batches = self.batches
        if self.pos >= len(batches):
            self.epoch += 1
            self.pos = 0
            raise StopIteration
        if ds.delay:
            time.sleep(ds.delay)
        with ds._lock:
            n = ds.produced
            if ds.fail_at is not None and n == ds.fail_at:
                broken_batch(n)
            ds.produced += 1
        row = batches[self.pos]
        self.pos += 1
        return [np.array(v) for v in row] if self.output_numpy else [kiln.Tensor(v) for v in row]


def regression_data(n=40, features=10, seed=0):
    """x (n, features) and y (n, 1) float32, y a noisy linear function of x."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    w = rng.standard_normal((features, 1)).astype(np.float32)
    y = (x @ w + 0.1 * rng.standard_normal((n, 1))).astype(np.float32)
    return x, y
