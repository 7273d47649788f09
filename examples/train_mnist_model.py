"""Trains LeNet-5 on MNIST-format files with Kiln's dataset pipeline and Model, written as a MindSpore 2.x program.

Pipeline: MNIST idx files -> dataset.MnistDataset -> vision.Rescale(1/255) -> vision.Normalize(mean=(0.1307,),
std=(0.3081,)) -> vision.HWC2CHW on the images, transforms.TypeCast(int32) on the labels -> batch 64. Network: LeNet-5
(Conv2d 1->6 5x5 valid, ReLU, MaxPool 2 -> Conv2d 6->16 5x5 valid, ReLU, MaxPool 2 -> Dense 400->120->84->10 with
ReLU). Training: Model(net, SoftmaxCrossEntropyWithLogits(sparse), Adam(lr 0.003),
metrics={"accuracy"}).train with LossMonitor, TimeMonitor, ModelCheckpoint (one checkpoint per epoch, the last 2
kept), with --progress (the default) Kiln's progress bar, and with --summary DIR a SummaryCollector writing the loss,
learning rate, input images and weight histograms every 10 steps as TensorBoard files (`tensorboard --logdir DIR`),
and with --profile DIR a mindspore.profiler.Profiler around the training (one step per batch) writing its trace and
op tables under DIR (open DIR/*_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json in https://ui.perfetto.dev;
docs/profiling.md). Then the last checkpoint is loaded into a fresh LeNet-5 and Model.eval measures the test
accuracy.

Data: without --data, MNIST-format files are written from scikit-learn's handwritten digits upscaled to 28x28
(examples/mnist_files.py: 1,500 training and 297 test images). With --data DIR, DIR holds MNIST's four files
(train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte), e.g. the real
MNIST.

    python examples/train_mnist_model.py [--epochs 5] [--mode pynative|graph] [--sink] [--data DIR]
                                         [--ckpt-dir DIR] [--no-progress] [--seed 1] [--summary DIR]
                                         [--profile DIR]

The last line printed is `RESULT accuracy=<float> ...`; the exit status is 1 when the accuracy is below 0.90.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import kiln as ms
import kiln.dataset as ds
from kiln import nn
from kiln.dataset import transforms, vision
from kiln.train import CheckpointConfig, LossMonitor, Model, ModelCheckpoint, TimeMonitor

MIN_ACCURACY = 0.90


class LeNet5(nn.Cell):
    """LeNet-5 for (N, 1, 28, 28) float32 images; returns (N, num_classes) logits."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 4 * 4, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def create_dataset(data_dir, usage, batch_size, shuffle, drop_remainder):
    """MnistDataset(usage) -> Rescale -> Normalize -> HWC2CHW (images), TypeCast(int32) (labels) -> batch."""
    dataset = ds.MnistDataset(data_dir, usage=usage, shuffle=shuffle)
    image_ops = [
        vision.Rescale(1.0 / 255.0, 0.0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW(),
    ]
    dataset = dataset.map(operations=image_ops, input_columns="image")
    dataset = dataset.map(operations=transforms.TypeCast(ms.int32), input_columns="label")
    return dataset.batch(batch_size, drop_remainder=drop_remainder)


def write_digits(directory):
    """The four MNIST files made from scikit-learn's digits (examples/mnist_files.py) in `directory`."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import mnist_files
    finally:
        sys.path.pop(0)
    mnist_files.write_mnist(directory)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--mode", choices=("pynative", "graph"), default="pynative")
    parser.add_argument("--sink", action="store_true", help="train with dataset_sink_mode=True")
    parser.add_argument("--data", default=None, help="directory with the four MNIST idx files "
                        "(default: written from scikit-learn's digits into a temporary directory)")
    parser.add_argument("--ckpt-dir", default=None, help="where ModelCheckpoint writes (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                        help="show Kiln's progress bar callback (default on)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--summary", metavar="DIR", default=None,
                        help="write TensorBoard summaries (SummaryCollector, every 10 steps) into DIR")
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="profile the training (mindspore.profiler.Profiler) and write the trace into DIR")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        parser.error(f"--epochs and --batch-size must be >= 1, got {args.epochs} and {args.batch_size}")

    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(args.seed)
    ds.config.set_seed(args.seed)

    cleanup = []
    try:
        data_dir = args.data
        if data_dir is None:
            data_dir = tempfile.mkdtemp(prefix="mnist_digits_")
            cleanup.append(data_dir)
            write_digits(data_dir)
        ckpt_dir = args.ckpt_dir
        if ckpt_dir is None:
            ckpt_dir = tempfile.mkdtemp(prefix="mnist_ckpt_")
            cleanup.append(ckpt_dir)

        train_ds = create_dataset(data_dir, "train", args.batch_size, shuffle=True, drop_remainder=True)
        test_ds = create_dataset(data_dir, "test", args.batch_size, shuffle=False, drop_remainder=False)
        steps = train_ds.get_dataset_size()
        print(f"data: {data_dir} ({steps} batches of {args.batch_size} per epoch), columns {train_ds.get_col_names()}")

        net = LeNet5()
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        optimizer = nn.Adam(net.trainable_params(), learning_rate=0.003)
        model = Model(net, loss_fn=loss_fn, optimizer=optimizer, metrics={"accuracy"})

        config = CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=2)
        ckpt_cb = ModelCheckpoint(prefix="lenet", directory=ckpt_dir, config=config)
        callbacks = [LossMonitor(per_print_times=steps), TimeMonitor(data_size=steps), ckpt_cb]
        if args.progress:
            from kiln.train.callback import ProgressBar
            callbacks.append(ProgressBar())
        if args.summary:
            from kiln.train import SummaryCollector
            callbacks.append(SummaryCollector(args.summary, collect_freq=10))

        profiler = None
        if args.profile:
            from kiln.profiler import Profiler
            from kiln.train.callback import Callback

            class ProfilerStep(Callback):
                """Ends one profiler step per training step (the per-step view of the trace)."""

                def on_train_step_end(self, run_context):
                    profiler.step()
            profiler = Profiler(output_path=args.profile)
            callbacks.append(ProfilerStep())
        start = time.perf_counter()
        model.train(args.epochs, train_ds, callbacks=callbacks, dataset_sink_mode=args.sink)
        train_seconds = time.perf_counter() - start
        if profiler is not None:
            profiler.analyse()
            print(f"profile: {profiler.output_dir}")

        ckpt_file = ckpt_cb.latest_ckpt_file_name
        print(f"checkpoint: {ckpt_file}")
        fresh = LeNet5()
        param_dict = ms.load_checkpoint(ckpt_file)
        not_loaded, _ = ms.load_param_into_net(fresh, param_dict)
        if not_loaded:
            raise RuntimeError(f"parameters not in the checkpoint {ckpt_file}: {not_loaded}")
        eval_model = Model(fresh, loss_fn=loss_fn, metrics={"accuracy"})
        accuracy = eval_model.eval(test_ds)["accuracy"]
    finally:
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)

    print(f"RESULT accuracy={accuracy:.4f} mode={args.mode} sink={args.sink} epochs={args.epochs} "
          f"train_seconds={train_seconds:.1f}")
    if accuracy < MIN_ACCURACY:
        print(f"FAILED: test accuracy {accuracy:.4f} < {MIN_ACCURACY}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
