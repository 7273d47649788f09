"""The issue-8 parts together: kiln.dataset pipelines (with vision/transforms operations) feeding Model.train/eval,
data_sink and the random operations' seeding, in both modes.

Each part has its own tests (test_dataset_*, test_model, test_callbacks, test_data_sink); these check the seams: the
real datasets through the protocol Model and data_sink use, and one seed controlling shuffles and random crops."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln as ms
import kiln.dataset as ds
from kiln import nn
from kiln.dataset import transforms, vision
from helpers import subprocess_env


@pytest.fixture(params=[ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def mode(request):
    old = ms.get_context("mode")
    ms.set_context(mode=request.param)
    yield request.param
    ms.set_context(mode=old)


def _blobs(n=256, seed=0):
    """Three Gaussian blobs in 4-D (float32 features, int32 labels): linearly separable."""
    rng = np.random.default_rng(seed)
    centers = np.array([[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0]], np.float32)
    y = rng.integers(0, 3, n).astype(np.int32)
    x = (centers[y] + rng.normal(0, 0.5, (n, 4))).astype(np.float32)
    return x, y


def _model(seed=1):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    return ms.Model(net, loss, opt, metrics={"accuracy"}), net


class _Losses(ms.Callback):
    def __init__(self):
        self.values = []

    def on_train_step_end(self, run_context):
        self.values.append(float(run_context.original_args().net_outputs.asnumpy()))


def _train_losses(mode_sink, epochs=3):
    x, y = _blobs()
    model, net = _model()
    data = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(32)
    rec = _Losses()
    model.train(epochs, data, callbacks=[rec], dataset_sink_mode=mode_sink)
    acc = model.eval(ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(64))["accuracy"]
    return rec.values, acc, [p.asnumpy() for p in net.trainable_params()]


def test_model_trains_on_a_real_dataset_in_both_modes(mode):
    losses, acc, _ = _train_losses(False)
    assert len(losses) == 3 * 8
    assert losses[-1] < 0.5 * losses[0]
    assert acc > 0.95


def test_model_sink_mode_equals_the_per_step_loop_on_a_real_dataset():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        per_step, acc1, params1 = _train_losses(False)
        sink, acc2, params2 = _train_losses(True)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    # sink mode: one step_end per sink of sink_size (= the dataset size) steps, with the last step's loss
    assert sink == [per_step[7], per_step[15], per_step[23]]
    assert acc1 == acc2
    for a, b in zip(params1, params2):
        np.testing.assert_array_equal(a, b)


def test_pynative_and_graph_give_the_same_losses_on_a_real_dataset():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager, _, _ = _train_losses(False, epochs=2)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph, _, _ = _train_losses(False, epochs=2)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-6)


def test_data_sink_over_a_batched_mnist_style_pipeline():
    """uint8 HWC images -> Rescale -> HWC2CHW, TypeCast labels -> batch: the sink's step sees exactly the batches a
    plain iterator gives (the sum of each batch's pixels, compared through the outputs)."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (20, 6, 6, 1), dtype=np.uint8)
    labels = rng.integers(0, 10, 20).astype(np.uint32)

    def pipeline():
        d = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
        d = d.map([vision.Rescale(1 / 255, 0), vision.HWC2CHW()], input_columns="image")
        d = d.map(transforms.TypeCast(ms.int32), input_columns="label")
        return d.batch(8)  # 8, 8, 4 rows

    expected = [(b[0].sum(), b[1].sum()) for b in pipeline().create_tuple_iterator(output_numpy=True)]
    assert [e[0].dtype for e in expected] == [np.float32] * 3
    sink = ms.data_sink(lambda img, lab: (img.sum(), lab.sum()), pipeline(), sink_size=1)
    got = [tuple(float(t.asnumpy()) for t in sink()) for _ in range(4)]
    want = [(float(a), float(b)) for a, b in expected + expected[:1]]
    np.testing.assert_allclose(got, want, rtol=1e-6)


_SEED_SCRIPT = """
import numpy as np, kiln as ms, kiln.dataset as ds
from kiln.dataset import vision
ms.set_seed(11)
d = ds.NumpySlicesDataset({"image": np.arange(12 * 8 * 8 * 3, dtype=np.uint8).reshape(12, 8, 8, 3)}, shuffle=True)
d = d.map([vision.RandomCrop(5), vision.RandomHorizontalFlip(0.5)], input_columns="image")
print([int(r[0].astype(np.int64).sum()) for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)])
"""


def test_one_seed_fixes_shuffle_and_random_crops_across_processes():
    runs = [subprocess.run([sys.executable, "-c", textwrap.dedent(_SEED_SCRIPT)], capture_output=True, text=True,
                           env=subprocess_env(), timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout == runs[1].stdout
    sums = eval(runs[0].stdout)
    assert len(sums) == 12 and len(set(sums)) > 1


def test_seed_controls_random_operations_in_process():
    def draw(seed):
        ds.config.set_seed(seed)
        d = ds.NumpySlicesDataset({"image": np.arange(6 * 8 * 8 * 3, dtype=np.uint8).reshape(6, 8, 8, 3)},
                                  shuffle=False)
        d = d.map(vision.RandomCrop(4), input_columns="image")
        return [r[0].copy() for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]

    a, b, c = draw(3), draw(3), draw(4)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert not all(np.array_equal(p, q) for p, q in zip(a, c))


def test_compat_runs_a_mindspore_dataset_program(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import numpy as np
        import mindspore as ms
        import mindspore.dataset as ds
        import mindspore.dataset.vision as vision
        from mindspore.dataset.transforms import TypeCast
        from mindspore.train import Model, LossMonitor
        x = np.random.default_rng(0).integers(0, 256, (16, 4, 4, 1), dtype=np.uint8)
        y = (x.reshape(16, -1).mean(1) > 127).astype(np.uint32)
        d = ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False)
        d = d.map(vision.Rescale(1 / 255, 0), "image").map(vision.HWC2CHW(), "image")
        d = d.map(TypeCast(ms.int32), "label").batch(8)
        net = ms.nn.SequentialCell([ms.nn.Flatten(), ms.nn.Dense(16, 2)])
        model = Model(net, ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      ms.nn.SGD(net.trainable_params(), 0.1), metrics={"accuracy"})
        model.train(2, d, callbacks=[LossMonitor(1)])
        print("acc", model.eval(d)["accuracy"])
    """))
    r = subprocess.run([sys.executable, "-m", "kiln.compat", str(prog)], capture_output=True, text=True,
                       env=subprocess_env(), timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sum(ln.startswith("epoch: ") for ln in lines) == 4
    assert lines[-1].startswith("acc ") and 0.0 <= float(lines[-1].split()[1]) <= 1.0
    assert os.path.exists(prog)
