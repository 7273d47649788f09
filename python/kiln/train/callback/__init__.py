"""Training callbacks (MindSpore's `mindspore.train.callback`): Callback and RunContext, LossMonitor, TimeMonitor,
ModelCheckpoint + CheckpointConfig, EarlyStopping, ReduceLROnPlateau, LearningRateScheduler, History, LambdaCallback,
SummaryCollector (TensorBoard files) and Kiln's ProgressBar (tqdm).

    from kiln.train import Model, LossMonitor, ModelCheckpoint, CheckpointConfig
    model.train(2, ds, callbacks=[LossMonitor(10), ModelCheckpoint("net", "ckpt", CheckpointConfig(100))])
"""
from ._callback import Callback, RunContext, _CallbackManager, _InternalCallbackParam  # noqa: F401 (re-export)
from ._loss_monitor import LossMonitor, TimeMonitor
from ._checkpoint import CheckpointConfig, ModelCheckpoint
from ._early_stop import EarlyStopping, ReduceLROnPlateau
from ._history import History, LambdaCallback
from ._progress_bar import ProgressBar
from ._lr_scheduler import LearningRateScheduler
from ._summary_collector import SummaryCollector

__all__ = ["Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig", "RunContext",
           "History", "LambdaCallback", "ReduceLROnPlateau", "EarlyStopping", "ProgressBar",
           "LearningRateScheduler", "SummaryCollector"]
