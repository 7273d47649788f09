"""nn.MAE and nn.MSE (MindSpore's mindspore.train.MAE / MSE)."""
import numpy as np

from .metric import Metric, rearrange_inputs

__all__ = ["MAE", "MSE"]


class _ErrorBase(Metric):
    _name = ""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Clears the accumulated error and sample count."""
        self._error_sum = 0
        self._samples_num = 0

    def _error(self, diff):
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs):
        """Adds one batch (y_pred, y); y is reshaped to y_pred's shape, the batch size is y.shape[0]."""
        if len(inputs) != 2:
            raise ValueError(f"For '{self._name}.update', it needs 2 inputs (predicted value, true value), but got "
                             f"{len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y.size != y_pred.size:
            raise ValueError(f"For '{self._name}.update', y (true value) must have as many elements as y_pred "
                             f"(predicted value), but got shapes {y.shape} and {y_pred.shape}.")
        # each batch's sum in the input's dtype, accumulated in double as MindSpore does (NumPy 1 promotes the
        # int-started sum to float64); eval() then gives a Python float with MindSpore's value
        self._error_sum += float(self._error(y.reshape(y_pred.shape) - y_pred).sum())
        self._samples_num += y.shape[0] if y.ndim else 1

    def eval(self):
        """The error sum divided by the number of samples (batch rows). RuntimeError when none was added."""
        if self._samples_num == 0:
            raise RuntimeError(f"The '{self._name}' can not be calculated, because the number of samples is 0, please "
                               "check whether your inputs(predicted value, true value) are empty, or has called "
                               "update method before calling eval method.")
        return self._error_sum / self._samples_num


class MAE(_ErrorBase):
    """Mean absolute error: Σ|y_pred − y| / n, where n is the number of samples (the batch dimension, summed over
    updates) — so for y of shape (N, k) it is the per-sample sum of k absolute errors, averaged over samples.

    update(y_pred, y): Tensors, lists or NumPy arrays of equal size. eval(): a float.
    Raises ValueError (not 2 inputs, size mismatch), TypeError (input type), RuntimeError (eval before update)."""
    _name = "MAE"

    def _error(self, diff):
        return np.abs(diff)


class MSE(_ErrorBase):
    """Mean squared error: Σ(y_pred − y)² / n, n the number of samples (see MAE).

    Raises ValueError (not 2 inputs, size mismatch), TypeError (input type), RuntimeError (eval before update)."""
    _name = "MSE"

    def _error(self, diff):
        return np.power(diff, 2)
