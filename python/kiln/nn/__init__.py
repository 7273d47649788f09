"""kiln.nn — MindSpore's `mindspore.nn`: Cell, containers, layers, losses, optimizers and learning-rate schedules.

    from kiln import nn
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(10, 1)
        def construct(self, x):
            return self.fc(x)
"""
from .cell import Cell  # noqa: F401 (re-export)
from .layer import *  # noqa: F403 (re-export)
from .loss import *  # noqa: F403 (re-export)
from .optim import *  # noqa: F403 (re-export)
from .learning_rate_schedule import *  # noqa: F403 (re-export)
from .dynamic_lr import *  # noqa: F403 (re-export)
from .wrap import *  # noqa: F403 (re-export)
from .graph_cell import GraphCell  # noqa: F401 (re-export)
from . import layer, loss, optim, learning_rate_schedule, dynamic_lr, wrap  # noqa: F401 (re-export)
from ..train.metrics import (  # noqa: F401  (MindSpore keeps the metrics importable from nn)
    Metric, Accuracy, MAE, MSE, Loss, rearrange_inputs, get_metric_fn, names,
    TopKCategoricalAccuracy, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
)
from . import metrics  # noqa: F401  (the module path mindspore.nn.metrics)
from .utils import no_init_parameters  # noqa: F401  (also nn.utils.no_init_parameters)
from . import utils  # noqa: F401 (re-export)
