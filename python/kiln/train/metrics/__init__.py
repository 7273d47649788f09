"""Evaluation metrics (MindSpore's `mindspore.train.metrics`, also exported from kiln.train and kiln.nn).

A metric accumulates over batches on the host (NumPy, float64): `clear()` resets it, `update(y_pred, y)` adds a
batch (Tensors, lists or NumPy arrays), `eval()` returns the result (RuntimeError before any update);
`metric(y_pred, y)` does all three for one batch.

    acc = nn.Accuracy('classification')
    for x, y in data:
        acc.update(net(x), y)
    print(acc.eval())
"""
from .metric import Metric, EvaluationBase, rearrange_inputs
from .accuracy import Accuracy
from .error import MAE, MSE
from .loss import Loss
from .topk import TopKCategoricalAccuracy, Top1CategoricalAccuracy, Top5CategoricalAccuracy

__all__ = ["Metric", "EvaluationBase", "rearrange_inputs", "Accuracy", "MAE", "MSE", "Loss", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "names",
           "get_metric_fn", "get_metrics"]

_METRICS = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "mae": MAE,
    "mse": MSE,
    "loss": Loss,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "topk": TopKCategoricalAccuracy,
}


def names():
    """The names accepted by get_metric_fn, sorted."""
    return sorted(_METRICS)


def get_metric_fn(name, *args, **kwargs):
    """A new metric object by name ('accuracy'/'acc', 'mae', 'mse', 'loss', 'top_1_accuracy',
    'top_5_accuracy'), built with args/kwargs.

    Raises KeyError for an unknown name (listing the known ones)."""
    if name not in _METRICS:
        raise KeyError(f"Unknown Metric function: '{name}'; the supported names are {names()}.")
    return _METRICS[name](*args, **kwargs)


def get_metrics(metrics):
    """{name: metric object} for a set/list of names (or a dict of name → Metric, returned as is); None → None.

    Raises TypeError for another type."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for name, m in metrics.items():
            if not isinstance(name, str) or not isinstance(m, Metric):
                raise TypeError("For 'get_metrics', a dict 'metrics' must map str names to Metric objects.")
        return metrics
    if isinstance(metrics, (set, list, tuple)):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'get_metrics', the 'metrics' must be a set/list of names or a dict, but got "
                    f"{type(metrics).__name__}.")
