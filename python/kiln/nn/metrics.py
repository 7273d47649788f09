"""`mindspore.nn.metrics`: MindSpore keeps this older path to the metrics of `mindspore.train.metrics`
(`from mindspore.nn.metrics import Accuracy`); here it is the same classes and functions as kiln.train.metrics."""
from ..train.metrics import (Accuracy, EvaluationBase, Loss, MAE, MSE, Metric, Top1CategoricalAccuracy,
                             Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, get_metrics, names,
                             rearrange_inputs)

__all__ = ["Accuracy", "EvaluationBase", "Loss", "MAE", "MSE", "Metric", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "TopKCategoricalAccuracy", "get_metric_fn", "get_metrics", "names",
           "rearrange_inputs"]
