"""kiln.train — MindSpore's `mindspore.train`: evaluation metrics (Accuracy, MAE, MSE, Loss, ...)."""
from . import metrics  # noqa: F401
from .metrics import *  # noqa: F401,F403
