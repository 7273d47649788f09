"""Test helpers for Model/callbacks: a minimal dataset with exactly the protocol Model uses, and small networks."""
import numpy as np

import kiln as ms
from kiln import nn, Tensor


class _ArrayDataset:
    """Batches of NumPy arrays, in order (no shuffling): create_tuple_iterator yields lists of Tensors."""

    def __init__(self, *arrays, batch_size=8):
        self.arrays = [np.ascontiguousarray(a) for a in arrays]
        self.batch_size = batch_size
        self.iterators_made = 0

    def get_dataset_size(self):
        n = len(self.arrays[0])
        return (n + self.batch_size - 1) // self.batch_size

    def get_batch_size(self):
        return self.batch_size

    def get_col_names(self):
        return [f"c{i}" for i in range(len(self.arrays))]

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        self.iterators_made += 1
        n = len(self.arrays[0])
        for b in range(0, n, self.batch_size):
            cols = [a[b:b + self.batch_size] for a in self.arrays]
            yield cols if output_numpy else [Tensor(c) for c in cols]


def regression_data(n=64, d=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    w = rng.standard_normal((d, 1)).astype(np.float32)
    y = (x @ w + 0.5).astype(np.float32)
    return x, y


def classification_data(n=128, d=4, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, d)).astype(np.float32) * 3
    labels = rng.integers(0, classes, n).astype(np.int32)
    x = (centers[labels] + rng.standard_normal((n, d)).astype(np.float32) * 0.5).astype(np.float32)
    return x, labels


class MLP(nn.Cell):
    def __init__(self, d_in=4, hidden=8, d_out=1):
        super().__init__()
        self.fc1 = nn.Dense(d_in, hidden)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden, d_out)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def make_regression_model(seed=1, lr=0.05, opt="momentum", metrics=None):
    ms.set_seed(seed)
    net = MLP()
    loss = nn.MSELoss()
    if opt == "adam":
        optimizer = nn.Adam(net.trainable_params(), learning_rate=lr)
    else:
        optimizer = nn.Momentum(net.trainable_params(), lr, 0.9)
    return ms.Model(net, loss, optimizer, metrics=metrics), net, optimizer
