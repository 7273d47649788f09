"""Top-k categorical accuracy metrics: MindSpore 2.10's documented example values, one-hot labels, ties, errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn
from kiln.train import metrics
import kiln.dataset  # ms.dataset below

X = np.array([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.0], [0.9, 0.6, 0.2, 0.01, 0.3]], np.float32)
Y = np.array([2, 0, 1], np.float32)


@pytest.mark.parametrize("metric,want", [(lambda: nn.TopKCategoricalAccuracy(3), 2 / 3),
                                         (nn.Top1CategoricalAccuracy, 0.0), (nn.Top5CategoricalAccuracy, 1.0)])
def test_mindspore_example_values(metric, want):
    m = metric()
    m.clear()
    m.update(Tensor(X), Tensor(Y, ms.float32))
    got = m.eval()
    assert isinstance(got, np.float64) and got == pytest.approx(want, abs=1e-15)


def test_accumulates_and_takes_one_hot_labels():
    m = nn.TopKCategoricalAccuracy(2)
    m.update(X, np.eye(5)[[3, 2, 4]])  # top-2 rows: {3,1}, {2,1}, {0,1}
    m.update([[1.0, 0.0]], [0])
    assert m.eval() == pytest.approx(3 / 4)


def test_ties_rank_the_lower_index_first():
    m = nn.Top1CategoricalAccuracy()
    m.update(np.array([[0.5, 0.5, 0.1]]), np.array([0]))
    assert m.eval() == 1.0
    m.clear()
    m.update(np.array([[0.5, 0.5, 0.1]]), np.array([1]))
    assert m.eval() == 0.0


def test_names_and_errors():
    assert isinstance(metrics.get_metric_fn("top_1_accuracy"), nn.Top1CategoricalAccuracy)
    assert metrics.get_metric_fn("topk", 4).k == 4
    with pytest.raises(TypeError, match="'k' should be int"):
        nn.TopKCategoricalAccuracy(2.0)
    with pytest.raises(ValueError, match="at least 1"):
        nn.TopKCategoricalAccuracy(0)
    m = nn.Top5CategoricalAccuracy()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        m.eval()
    with pytest.raises(ValueError, match="2 inputs"):
        m.update(X)
    with pytest.raises(ValueError, match=r"y must be \(N,\)"):
        m.update(X, np.array([1, 2]))
    with pytest.raises(ValueError, match=r"y_pred must be \(N, C\)"):
        m.update(np.ones(3), np.array([1, 2, 0]))


def test_in_model_eval():
    net = nn.Dense(5, 5)
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), metrics={"top1": nn.Top1CategoricalAccuracy(), "top5": nn.Top5CategoricalAccuracy()})
    ds = ms.dataset.NumpySlicesDataset((X, Y.astype(np.int32)), column_names=["x", "y"], shuffle=False).batch(3)
    res = model.eval(ds)
    logits = net(Tensor(X)).asnumpy()
    assert res["top5"] == 1.0
    assert res["top1"] == pytest.approx(np.mean(logits.argmax(1) == Y))
