"""kiln.train — MindSpore's `mindspore.train`: evaluation metrics (Accuracy, MAE, MSE, Loss, ...) and checkpoints
(save_checkpoint, load_checkpoint, load_param_into_net)."""
from . import metrics  # noqa: F401
from .metrics import *  # noqa: F401,F403
from . import serialization  # noqa: F401
from .serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401
