"""Metrics (nn.Accuracy, nn.MAE, nn.MSE, nn.Loss; also kiln.train.metrics) against NumPy: clear/update/eval
accumulation over batches, MindSpore's documented examples, input forms, set_indexes, and errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn
from kiln.train import metrics as M

RNG = np.random.default_rng(3)


def test_exports():
    import kiln.train
    assert nn.Accuracy is M.Accuracy is kiln.train.Accuracy
    assert nn.MAE is M.MAE and nn.MSE is M.MSE and nn.Loss is M.Loss
    assert isinstance(M.get_metric_fn("acc"), M.Accuracy)
    assert set(M.get_metrics({"mae", "loss"})) == {"mae", "loss"}
    assert "accuracy" in M.names()
    with pytest.raises(KeyError):
        M.get_metric_fn("bogus")


def test_accuracy_documented_example_and_accumulation():
    x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], np.float32))
    y = Tensor(np.array([1, 0, 1], np.float32))
    metric = nn.Accuracy("classification")
    metric.clear()
    metric.update(x, y)
    assert metric.eval() == pytest.approx(2 / 3)
    # accumulation over batches = accuracy of the concatenation
    metric.clear()
    preds, labels = [], []
    for n in (5, 7, 3):
        p = RNG.standard_normal((n, 4)).astype(np.float32)
        lab = RNG.integers(0, 4, n)
        metric.update(Tensor(p), Tensor(lab.astype(np.int32)))
        preds.append(p)
        labels.append(lab)
    want = (np.concatenate(preds).argmax(1) == np.concatenate(labels)).mean()
    assert metric.eval() == pytest.approx(want)
    # one-hot labels, lists and NumPy arrays, spatial (N, C, d) inputs
    p = RNG.standard_normal((6, 3))
    lab = RNG.integers(0, 3, 6)
    assert nn.Accuracy()(p, np.eye(3)[lab].tolist()) == pytest.approx((p.argmax(1) == lab).mean())
    p3 = RNG.standard_normal((2, 3, 5))
    lab3 = RNG.integers(0, 3, (2, 5))
    assert nn.Accuracy()(Tensor(p3), Tensor(lab3)) == pytest.approx((p3.argmax(1) == lab3).mean())


def test_accuracy_multilabel():
    yp = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1]])
    y = np.array([[0, 1, 1], [1, 1, 1], [0, 0, 1]])
    assert nn.Accuracy("multilabel")(Tensor(yp), Tensor(y)) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        nn.Accuracy("multilabel")(Tensor(yp * 0.5), Tensor(y))


def test_accuracy_errors():
    with pytest.raises(TypeError):
        nn.Accuracy("regression")
    acc = nn.Accuracy()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        acc.eval()
    with pytest.raises(ValueError):
        acc.update(Tensor(np.zeros((2, 3))))
    with pytest.raises(ValueError):
        acc.update(Tensor(np.zeros((2, 3))), Tensor(np.zeros(3)))
    with pytest.raises(TypeError):
        acc.update((1, 2), (1, 2))
    acc.update(Tensor(np.zeros((2, 3))), Tensor(np.array([0, 1])))
    with pytest.raises(ValueError, match="class number"):
        acc.update(Tensor(np.zeros((2, 4))), Tensor(np.array([0, 1])))
    acc.clear()
    with pytest.raises(RuntimeError):
        acc.eval()


def test_mae_mse_documented_examples():
    x = Tensor(np.array([0.1, 0.2, 0.6, 0.9], np.float32))
    mae = nn.MAE()
    mae.clear()
    mae.update(x, Tensor(np.array([0.1, 0.25, 0.7, 0.9], np.float32)))
    assert mae.eval() == pytest.approx(0.0375, rel=1e-5)
    mse = nn.MSE()
    mse.update(x, Tensor(np.array([0.1, 0.25, 0.5, 0.9], np.float32)))
    assert mse.eval() == pytest.approx(0.003125, rel=1e-5)


def test_mae_mse_accumulate_per_sample():
    mae, mse = nn.MAE(), nn.MSE()
    ps, ys = [], []
    for n in (4, 6):
        p = RNG.standard_normal((n, 3))
        y = RNG.standard_normal((n, 3))
        mae.update(Tensor(p), Tensor(y))
        mse.update(p, y)
        ps.append(p)
        ys.append(y)
    p, y = np.concatenate(ps), np.concatenate(ys)
    # MindSpore divides the summed error by the number of samples (rows), not of elements
    assert mae.eval() == pytest.approx(np.abs(p - y).sum() / 10)
    assert mse.eval() == pytest.approx(((p - y) ** 2).sum() / 10)
    # y is reshaped to y_pred's shape, but the sample count is y's first dimension (as MindSpore)
    flat = nn.MSE()
    flat.update(p, y.reshape(-1))
    assert flat.eval() == pytest.approx(((p - y) ** 2).sum() / 30)
    for m in (nn.MAE(), nn.MSE()):
        with pytest.raises(RuntimeError):
            m.eval()
        with pytest.raises(ValueError):
            m.update(Tensor(np.zeros(3)))
        with pytest.raises(ValueError):
            m.update(Tensor(np.zeros(3)), Tensor(np.zeros(4)))


def test_loss_metric():
    loss = nn.Loss()
    loss.clear()
    loss.update(Tensor(np.array(0.2, np.float32)))
    assert loss.eval() == pytest.approx(0.2)
    loss.update(Tensor(np.array([0.4, 0.8], np.float32)))  # a 1-D loss is averaged first
    assert loss.eval() == pytest.approx((0.2 + 0.6) / 2)
    with pytest.raises(ValueError):
        loss.update(Tensor(np.zeros((2, 2))))
    with pytest.raises(ValueError):
        loss.update(Tensor(np.zeros(2)), Tensor(np.zeros(2)))
    loss.clear()
    with pytest.raises(RuntimeError):
        loss.eval()


def test_set_indexes_and_custom_metric():
    acc = nn.Accuracy().set_indexes([0, 2])
    assert acc.indexes == [0, 2]
    p = np.array([[0.1, 0.9], [0.8, 0.2]])
    acc.update(Tensor(p), Tensor(np.array(3.0)), Tensor(np.array([1, 1])))
    assert acc.eval() == pytest.approx(0.5)
    with pytest.raises(ValueError):
        nn.MAE().set_indexes((0, 1))

    class Count(nn.Metric):
        def clear(self):
            self.n = 0

        @nn.rearrange_inputs
        def update(self, *inputs):
            self.n += len(inputs)

        def eval(self):
            return self.n

    assert Count().set_indexes([1])(1, 2, 3) == 1
    with pytest.raises(TypeError):
        nn.Metric()


def test_metrics_during_training_loop():
    ms.set_seed(1)
    net = nn.Dense(4, 3)
    loss_fn = nn.CrossEntropyLoss()
    x = Tensor(RNG.standard_normal((16, 4)).astype(np.float32))
    y = Tensor(RNG.integers(0, 3, 16).astype(np.int32))
    acc, avg = nn.Accuracy(), nn.Loss()
    logits = net(x)
    acc.update(logits, y)
    avg.update(loss_fn(logits, y))
    assert 0.0 <= acc.eval() <= 1.0
    assert avg.eval() == pytest.approx(float(loss_fn(logits, y).asnumpy()))


def test_error_and_loss_metrics_give_python_floats_accumulated_as_mindspore():
    """Each batch's sum in float32, the running sum in double (MindSpore under NumPy 1): a Python float, so that
    json.dumps(model.eval(...)) works, with MindSpore's value."""
    import json
    from kiln.train.metrics import MAE, MSE, Loss
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((5, 1)).astype(np.float32), rng.standard_normal((5, 1)).astype(np.float32))
               for _ in range(3)]
    mse, mae, loss = MSE(), MAE(), Loss()
    for p, y in batches:
        mse.update(p, y)
        mae.update(p, y)
        loss.update(np.float32(((p - y) ** 2).mean()).reshape(1))
    want_mse = sum(float(((y - p) ** 2).sum()) for p, y in batches) / 15
    want_mae = sum(float(np.abs(y - p).sum()) for p, y in batches) / 15
    want_loss = sum(float(np.float32(((p - y) ** 2).mean())) for p, y in batches) / 3
    assert type(mse.eval()) is float and mse.eval() == want_mse
    assert type(mae.eval()) is float and mae.eval() == want_mae
    assert type(loss.eval()) is float and loss.eval() == want_loss
    json.dumps({"mse": mse.eval(), "mae": mae.eval(), "loss": loss.eval()})
