"""nn.Accuracy / train.Accuracy (MindSpore's mindspore.train.Accuracy)."""
import numpy as np

from .metric import EvaluationBase, rearrange_inputs, _check_onehot_data

__all__ = ["Accuracy"]


class Accuracy(EvaluationBase):
    """Fraction of correct predictions over all updates since clear().

    Args:
        eval_type: 'classification' (default): y_pred (N, C, ...) scores, correct when argmax over axis 1 equals
            the label; y either class indices (N, ...) or one-hot (N, C, ...). 'multilabel': y_pred and y (N, C, ...)
            of 0/1 values, a sample is correct when all its C values match.
    update(y_pred, y): Tensors, lists or NumPy arrays. eval(): a float (NumPy float64).
    Raises:
        TypeError: an eval_type other than 'classification'/'multilabel'; inputs of another type.
        ValueError: update without exactly 2 inputs, mismatched shapes, a class count differing from earlier
            updates, non-0/1 values for 'multilabel'.
        RuntimeError: eval() before any sample was added.
    """

    def __init__(self, eval_type="classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self):
        """Clears the accumulated counts."""
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Adds one batch (y_pred, y)."""
        if len(inputs) != 2:
            raise ValueError(f"For 'Accuracy.update', it needs 2 inputs (predicted value, true value), but got "
                             f"{len(inputs)}")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and _check_onehot_data(y):
            y = y.argmax(axis=1)
        self._check_shape(y_pred, y)
        self._check_value(y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For 'Accuracy.update', class number not match, last input predicted data contain "
                             f"{self._class_num} classes, but current predicted data contain {y_pred.shape[1]} "
                             f"classes, please check your predicted value(inputs[0]).")
        if self._type == "classification":
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            last = y_pred.ndim - 1
            y_pred = y_pred.swapaxes(1, last).reshape(-1, self._class_num)
            y = y.swapaxes(1, last).reshape(-1, self._class_num)
            result = np.equal(y_pred, y).all(axis=1) * 1
        self._correct_num += result.sum()
        self._total_num += result.shape[0]

    def eval(self):
        """The accuracy. Raises RuntimeError when no sample was added."""
        if self._total_num == 0:
            raise RuntimeError("The 'Accuracy' can not be calculated, because the number of samples is 0, please "
                               "check whether your inputs(predicted value, true value) are empty, or has called "
                               "update method before calling eval method.")
        return self._correct_num / self._total_num
