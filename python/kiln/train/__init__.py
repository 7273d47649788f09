"""kiln.train — MindSpore's `mindspore.train`: Model, callbacks, evaluation metrics (Accuracy, MAE, MSE, Loss, ...),
checkpoints (save_checkpoint, load_checkpoint, load_checkpoint_async, load_param_into_net), model export/loading
(export, load: MindIR files), data_sink and summaries (SummaryRecord, SummaryCollector: TensorBoard files)."""
from . import metrics  # noqa: F401 (re-export)
from .metrics import *  # noqa: F403 (re-export)
from . import serialization  # noqa: F401 (re-export)
from .serialization import (save_checkpoint, load_checkpoint, load_param_into_net,  # noqa: F401 (re-export)
                            load_checkpoint_async)
from ._export_load import export, load, MindIRGraph, MindIRError  # noqa: F401 (re-export)
from . import callback  # noqa: F401 (re-export)
from .callback import (  # noqa: F401 (re-export)
    Callback, RunContext, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig, EarlyStopping,
    ReduceLROnPlateau, History, LambdaCallback, ProgressBar, LearningRateScheduler, SummaryCollector,
)
from . import summary  # noqa: F401 (re-export)
from .summary import SummaryRecord  # noqa: F401 (re-export)
from .model import Model  # noqa: F401 (re-export)
from .data_sink import data_sink  # noqa: F401 (re-export)
from .dataset_helper import DatasetHelper, connect_network_with_dataset  # noqa: F401 (re-export)
from .loss_scale_manager import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager  # noqa: F401 (re-export)


def __getattr__(name):
    """mindspore.train.merge_sliced_parameter / build_searched_strategy / load_distributed_checkpoint (kept in
    kiln/parallel/checkpoint_transform.py)."""
    if name in ("merge_sliced_parameter", "build_searched_strategy", "load_distributed_checkpoint"):
        from ..parallel import checkpoint_transform
        return getattr(checkpoint_transform, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
