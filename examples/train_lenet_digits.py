"""Trains a LeNet-style CNN on real images with Kiln, written as a MindSpore 2.x program.

Data: scikit-learn's handwritten digits (1797 grayscale 8x8 images, 10 classes), pixel values scaled to [0, 1],
split 80/20 with a fixed seed. Model: Conv2d(1→16, 3, 'same') → BatchNorm2d → ReLU → MaxPool2d(2) → Conv2d(16→32, 3,
'same') → BatchNorm2d → ReLU → MaxPool2d(2) → Flatten → Dense(128→64) → ReLU → Dropout(0.2) → Dense(64→10);
SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean'); Adam (lr 0.005); batch 64, shuffled.
Prints the loss per epoch and the test accuracy (exit status 1 if it is below 95%).

    python examples/train_lenet_digits.py [--epochs 10] [--seed 1] [--mode pynative|graph] [--print-steps N]
                                          [--export-onnx lenet.onnx]

--mode graph compiles the whole training step (forward, gradients, Adam update) into one graph; the numbers are
the same as PyNative's. --export-onnx writes the trained network as an ONNX file (dynamic batch) and, when
onnxruntime is installed, checks that it gives Kiln's test-set logits.
"""
import argparse
import sys
import time

import numpy as np

import kiln as ms
from kiln import nn, ops, Tensor

MIN_ACCURACY = 0.95


class LeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same")
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same")
        self.bn2 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.dropout = nn.Dropout(p=0.2)
        self.fc2 = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.pool(self.relu(self.bn2(self.conv2(x))))
        x = self.dropout(self.relu(self.fc1(self.flatten(x))))
        return self.fc2(x)


def load_data(split_seed=0, train_fraction=0.8):
    """Digits as (N, 1, 8, 8) float32 in [0, 1] and int32 labels, split with a fixed seed."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = y.astype(np.int32)
    perm = np.random.default_rng(split_seed).permutation(len(x))
    n_train = int(train_fraction * len(x))
    return (x[perm[:n_train]], y[perm[:n_train]]), (x[perm[n_train:]], y[perm[n_train:]])


def export_onnx(net, file_name, x_test, logits):
    """Exports `net` (in inference mode) to ONNX with a free batch size; checks it with onnxruntime if present."""
    ms.export(net, Tensor(shape=[None, 1, 8, 8], dtype=ms.float32), file_name=file_name, file_format="ONNX")
    path = file_name if file_name.endswith(".onnx") else file_name + ".onnx"
    try:
        import onnxruntime as ort
    except ImportError:
        print(f"Exported {path} (onnxruntime is not installed: not checked)")
        return
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    diff = float(np.abs(sess.run(None, {"x": x_test})[0] - logits).max())
    print(f"Exported {path}: onnxruntime's test-set logits differ from Kiln's by at most {diff:.2e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mode", choices=("pynative", "graph"), default="pynative")
    parser.add_argument("--print-steps", type=int, default=0,
                        help="also print the loss of the first N steps (to compare modes)")
    parser.add_argument("--export-onnx", metavar="FILE", default=None,
                        help="write the trained network to FILE as ONNX (batch size free)")
    args = parser.parse_args(argv)

    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_data()

    net = LeNet()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.005)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        return ops.depend(loss, optimizer(grads))

    if args.mode == "graph":
        train_step = ms.jit(train_step)  # the whole step as one graph

    rng = np.random.default_rng(args.seed)
    step = 0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        net.set_train(True)
        perm = rng.permutation(len(x_train))
        losses = []
        for i in range(0, len(perm) - args.batch_size + 1, args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss = train_step(Tensor(x_train[idx]), Tensor(y_train[idx]))
            value = float(loss.asnumpy())
            losses.append(value)
            step += 1
            if step <= args.print_steps:
                print(f"step {step}: loss {value:.9g}")
        print(f"Epoch {epoch + 1}/{args.epochs}: loss {np.mean(losses):.4f}")
    elapsed = time.perf_counter() - start

    net.set_train(False)
    logits = net(Tensor(x_test)).asnumpy()
    accuracy = float((logits.argmax(axis=1) == y_test).mean())
    print(f"Test accuracy: {accuracy:.4f} ({len(y_test)} images; {step} steps in {elapsed:.1f} s, mode {args.mode})")
    if args.export_onnx:
        export_onnx(net, args.export_onnx, x_test, logits)
    if accuracy < MIN_ACCURACY:
        print(f"FAILED: test accuracy {accuracy:.4f} < {MIN_ACCURACY}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
