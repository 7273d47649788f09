"""Trains a small MLP on real data with Kiln, written exactly as a MindSpore 2.x program.

Data: scikit-learn's diabetes data set (442 patients x 10 features -> disease progression after one year),
split 80/20 with a fixed seed; features and target standardized with the training set's statistics.
Model: the seed document's SimpleMLP (Dense 10 -> 16, ReLU, Dense 16 -> 1), MSE loss, Adam (lr 0.01), batch 32,
shuffled mini-batches. Prints the training loss per epoch and the test R^2 (exit status 1 if it is below 0.3).

    python examples/train_mlp.py [--epochs 20] [--seed 1] [--mode pynative|graph]   (or: ./run.sh train [args])
"""
import argparse
import sys
import time

import numpy as np

import kiln as ms
from kiln import nn, ops, Tensor  # noqa: F401  (ops: the usual MindSpore import line)

MIN_R2 = 0.3  # the example fails (exit status 1) below this test R^2


class SimpleMLP(nn.Cell):
    def __init__(self, input_size, hidden_size, output_size):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Dense(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden_size, output_size)

    def construct(self, x):
        x = self.fc1(x)
        x = self.relu(x)
        x = self.fc2(x)
        return x


def load_data(split_seed=42, train_fraction=0.8):
    """The diabetes data, split (fixed seed) and standardized with the training statistics.

    Returns (x_train (353, 10), y_train (353, 1)), (x_test (89, 10), y_test (89, 1)), all float32, and y's
    training std (to express errors in the original units)."""
    from sklearn.datasets import load_diabetes  # (imported here: it takes a second, and --help needs none of it)

    x, y = load_diabetes(return_X_y=True)
    y = y.reshape(-1, 1)
    perm = np.random.default_rng(split_seed).permutation(len(x))
    n_train = int(train_fraction * len(x))
    train, test = perm[:n_train], perm[n_train:]
    x_mean, x_std = x[train].mean(axis=0), x[train].std(axis=0)
    y_mean, y_std = y[train].mean(), y[train].std()

    def prep(idx):
        return (((x[idx] - x_mean) / x_std).astype(np.float32), ((y[idx] - y_mean) / y_std).astype(np.float32))

    return prep(train), prep(test), float(y_std)


def r2_score(pred, target):
    """Coefficient of determination 1 - SS_res / SS_tot (NumPy)."""
    ss_res = float(np.sum((target - pred) ** 2))
    ss_tot = float(np.sum((target - target.mean()) ** 2))
    return 1.0 - ss_res / ss_tot


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set (default: 20)")
    parser.add_argument("--seed", type=int, default=1,
                        help="seed of the weight initialization and of the batch shuffling (default: 1); "
                             "the train/test split is fixed")
    parser.add_argument("--mode", choices=["pynative", "graph"], default="pynative",
                        help="execution mode: pynative (eager, op by op; the default) or graph "
                             "(set_context(mode=GRAPH_MODE): Cells are compiled into static graphs)")
    parser.add_argument("--batch-size", type=int, default=32, help="mini-batch size (default: 32)")
    parser.add_argument("--print-steps", type=int, default=0,
                        help="also print the loss of each of the first N steps, to 9 digits (to compare modes)")
    args = parser.parse_args(argv)

    ms.set_context(mode={"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}[args.mode])
    ms.set_seed(args.seed)
    shuffle_rng = np.random.default_rng(args.seed)

    (x_train, y_train), (x_test, y_test), y_std = load_data()
    print(f"diabetes data: {len(x_train)} training / {len(x_test)} test samples, {x_train.shape[1]} features")

    net = SimpleMLP(input_size=10, hidden_size=16, output_size=1)
    print(net)
    loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01)

    def forward_fn(data, label):
        logits = net(data)
        loss = loss_fn(logits, label)
        return loss, logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    start = time.perf_counter()
    n = len(x_train)
    step = 0
    for epoch in range(args.epochs):
        net.set_train()
        order = shuffle_rng.permutation(n)
        total = 0.0
        for begin in range(0, n, args.batch_size):
            idx = order[begin:begin + args.batch_size]
            loss = train_step(Tensor(x_train[idx]), Tensor(y_train[idx]))
            value = float(loss.asnumpy())
            total += value * len(idx)
            step += 1
            if step <= args.print_steps:
                print(f"step {step}: loss {value:.9g}")
        print(f"Epoch [{epoch + 1}/{args.epochs}], Loss: {total / n:.4f}")
    elapsed = time.perf_counter() - start

    net.set_train(False)
    pred = net(Tensor(x_test)).asnumpy()
    r2 = r2_score(pred, y_test)
    rmse = float(np.sqrt(np.mean((pred - y_test) ** 2))) * y_std
    print(f"Test R2: {r2:.4f}  (test RMSE {rmse:.1f} disease-progression units; "
          f"{args.epochs} epochs in {elapsed:.2f} s)")
    if r2 < MIN_R2:
        print(f"FAILED: test R2 {r2:.4f} is below {MIN_R2}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
