"""Metric base classes (MindSpore's mindspore.train.Metric / EvaluationBase / rearrange_inputs)."""
import functools
from abc import ABCMeta, abstractmethod

import numpy as np

from ...common.tensor import Tensor as _Tensor

__all__ = ["Metric", "EvaluationBase", "rearrange_inputs"]

_EVAL_TYPES = ("classification", "multilabel")


def rearrange_inputs(func):
    """Decorator for `update`: passes `inputs[i] for i in self.indexes` when indexes were set (set_indexes)."""
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        if indexes:
            inputs = [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric(metaclass=ABCMeta):
    """Base class of metrics: subclasses define clear(), update(*inputs) and eval().

    `metric(*inputs)` = clear(); update(*inputs); return eval(). `set_indexes([i, j])` picks which of the inputs
    update receives (e.g. [0, 2] from (logits, loss, label))."""

    def __init__(self):
        self._indexes = None

    def _convert_data(self, data):
        """A NumPy array from a Tensor, list or NumPy array. Raises TypeError for another type."""
        if isinstance(data, _Tensor):
            return data.asnumpy()
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return data
        raise TypeError(f"For 'Metric' and its derived classes, the input data type must be tensor, list or "
                        f"numpy.ndarray, but got {type(data)}.")

    @property
    def indexes(self):
        """The input indexes set by set_indexes (None by default)."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """Selects the inputs passed to update. Returns self. Raises ValueError unless a list of ints."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                    for i in indexes):
            raise ValueError("For 'set_indexes', the argument 'indexes' must be a list and all its elements must be "
                             "int, please check whether it is correct.")
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abstractmethod
    def clear(self):
        """Resets the accumulated state."""
        raise NotImplementedError("Must define clear function to use this base class")

    @abstractmethod
    def eval(self):
        """The metric over everything accumulated since clear()."""
        raise NotImplementedError("Must define eval function to use this base class")

    @abstractmethod
    def update(self, *inputs):
        """Accumulates one batch."""
        raise NotImplementedError("Must define update function to use this base class")


class EvaluationBase(Metric):
    """Base of classification metrics: eval_type 'classification' or 'multilabel' (TypeError otherwise)."""

    def __init__(self, eval_type):
        super().__init__()
        if eval_type not in _EVAL_TYPES:
            raise TypeError(f"The argument 'eval_type' must be in {set(_EVAL_TYPES)}, but got {eval_type}")
        self._type = eval_type

    def _check_shape(self, y_pred, y):
        if self._type == "classification":
            if y_pred.ndim != y.ndim + 1:
                raise ValueError(f"In classification case, the dimension of y_pred (predicted value) should equal to "
                                 f"the dimension of y (true value) add 1, but got y_pred dimension: {y_pred.ndim} and "
                                 f"y dimension: {y.ndim}.")
            if y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise ValueError(f"In classification case, y_pred (predicted value) shape and y (true value) shape can "
                                 f"not match, y shape should be equal to y_pred shape that the value at index 1 is "
                                 f"deleted. Such as y_pred shape (1, 2, 3), then y shape should be (1, 3). But got "
                                 f"y_pred shape {y_pred.shape} and y shape {y.shape}")
        else:
            if y_pred.ndim != y.ndim:
                raise ValueError(f"In {self._type} case, the dimension of y_pred (predicted value) should equal to the "
                                 f"dimension of y (true value), but got y_pred dimension: {y_pred.ndim} and y "
                                 f"dimension: {y.ndim}.")
            if y_pred.shape != y.shape:
                raise ValueError(f"In {self._type} case, the shape of y_pred (predicted value) should equal to the "
                                 f"shape of y (true value), but got y_pred shape: {y_pred.shape} and y shape: "
                                 f"{y.shape}.")

    def _check_value(self, y_pred, y):
        if self._type != "classification" and not (np.equal(y_pred ** 2, y_pred).all()
                                                   and np.equal(y ** 2, y).all()):
            raise ValueError("In multilabel case, all elements in y_pred (predicted value) and y (true value) should "
                             "be 0 or 1.Please check whether your inputs y_pred and y are correct.")

    def clear(self):
        raise NotImplementedError

    def update(self, *inputs):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


def _check_onehot_data(data):
    """True if `data` (N, C, ...) is one-hot along axis 1 (0/1 values summing to 1)."""
    if data.ndim > 1 and np.equal(data ** 2, data).all():
        shape = (data.shape[0],) + data.shape[2:]
        if np.equal(np.ones(shape), data.sum(axis=1)).all():
            return True
    return False
