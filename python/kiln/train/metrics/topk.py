"""Top-k categorical accuracy (MindSpore's mindspore.train.TopKCategoricalAccuracy, Top1/Top5CategoricalAccuracy)."""
import numpy as np

from .metric import Metric, rearrange_inputs, _check_onehot_data

__all__ = ["TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose true class is among the k highest scores, over all updates since clear().

    Args:
        k: int ≥ 1.
    update(y_pred, y): y_pred (N, C) scores; y (N,) class indices or (N, C) one-hot; Tensors, lists or NumPy arrays.
    Among equal scores the lower class index ranks first (MindSpore documents "the first sample will be chosen").
    eval(): a float (NumPy float64).
    Raises:
        TypeError: k not an int.
        ValueError: k < 1; update without exactly 2 inputs; y_pred not 2-D or y's shape not (N,) / (N, C).
        RuntimeError: eval() before any sample was added.
    """

    def __init__(self, k):
        super().__init__()
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError(f"For 'TopKCategoricalAccuracy', the type of the argument 'k' should be int, but got 'k' "
                            f"type: {type(k)}.")
        if k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', the argument 'k' must be at least 1, but got 'k' value: "
                             f"{k}.")
        self.k = k
        self.clear()

    def clear(self):
        """Clears the accumulated counts."""
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Adds one batch (y_pred, y)."""
        name = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(f"For '{name}.update', it needs 2 inputs (predicted value, true value), but got 'inputs' "
                             f"size: {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim != 2:
            raise ValueError(f"For '{name}.update', y_pred must be (N, C) scores, but got shape {y_pred.shape}.")
        if y_pred.ndim == y.ndim and _check_onehot_data(y):
            y = y.argmax(axis=1)
        if y.shape != (y_pred.shape[0],):
            raise ValueError(f"For '{name}.update', y must be (N,) class indices or (N, C) one-hot for y_pred of shape "
                             f"{y_pred.shape}, but got shape {y.shape}.")
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        self._correct_num += int((top == y.reshape(-1, 1)).any(axis=1).sum())
        self._samples_num += y_pred.shape[0]

    def eval(self):
        """The top-k accuracy. Raises RuntimeError when no sample was added."""
        if self._samples_num == 0:
            raise RuntimeError(f"The '{type(self).__name__}' can not be calculated, because the number of samples is "
                               "0, please check whether your inputs (predicted value, true value) are empty, or has "
                               "called update method before calling eval method.")
        return np.float64(self._correct_num / self._samples_num)


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k = 1."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k = 5."""

    def __init__(self):
        super().__init__(5)
