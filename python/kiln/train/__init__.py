"""kiln.train — MindSpore's `mindspore.train`: evaluation metrics (Accuracy, MAE, MSE, Loss, ...) and checkpoints
(save_checkpoint, load_checkpoint, load_param_into_net), data sink (data_sink)."""
from . import metrics  # noqa: F401
from .metrics import *  # noqa: F401,F403
from . import serialization  # noqa: F401
from .serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401
from .data_sink import data_sink  # noqa: F401,E402  (the function: kiln.train.data_sink is kiln.data_sink)
