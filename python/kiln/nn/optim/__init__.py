"""Optimizers (MindSpore's `mindspore.nn.optim`)."""
from .optimizer import Optimizer
from .adam import Adam, AdamWeightDecay
from .sgd import SGD
from .momentum import Momentum
from .rmsprop import RMSProp
from .adagrad import Adagrad
from .lamb import Lamb

__all__ = ["Optimizer", "Adam", "AdamWeightDecay", "SGD", "Momentum", "RMSProp", "Adagrad", "Lamb"]
