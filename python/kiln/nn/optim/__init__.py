"""Optimizers (MindSpore's `mindspore.nn.optim`)."""
from .optimizer import Optimizer  # noqa: F401
from .adam import Adam, AdamWeightDecay  # noqa: F401
from .sgd import SGD  # noqa: F401
from .momentum import Momentum  # noqa: F401
from .rmsprop import RMSProp  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .lamb import Lamb  # noqa: F401

__all__ = ["Optimizer", "Adam", "AdamWeightDecay", "SGD", "Momentum", "RMSProp", "Adagrad", "Lamb"]
