"""Kiln: a deep-learning framework with a C++ core that implements the MindSpore 2.x programming model.

    import kiln as ms
    from kiln import nn, ops, Tensor

Existing MindSpore scripts run unchanged with `python -m kiln.compat script.py`."""
from ._loader import _core
from . import _convert  # noqa: F401  (registers the Python→Tensor converters with the core)
from .common import dtype  # noqa: F401 (re-export)
from .common.dtype import (  # noqa: F401 (re-export)
    bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64, half, single,
    double, complex64, complex128, float_, int_,
    dtype_to_nptype, pytype_to_dtype,
)
from .common.tensor import Tensor, tensor  # noqa: F401 (re-export)
from .common.parameter import Parameter, ParameterTuple  # noqa: F401 (re-export)
from .common.row_tensor import RowTensor  # noqa: F401 (re-export)
from .common.seed import set_seed, get_seed  # noqa: F401 (re-export)
from .common.api import value_and_grad, grad, get_grad  # noqa: F401 (re-export)
from ._autodiff.functional_ad import vjp, jvp, jacfwd, jacrev  # noqa: F401 (re-export)
from ._autodiff.vmap import vmap  # noqa: F401 (re-export)
from ._autodiff.recompute import recompute  # noqa: F401 (re-export)
from .context import (  # noqa: F401 (re-export)
    set_context, get_context, set_device, GRAPH_MODE, PYNATIVE_MODE, STRICT, COMPATIBLE, LAX,
)
from . import context  # noqa: F401 (re-export)
from ._parallel_context import (  # noqa: F401  (data-parallel training: see kiln.communication)
    ParallelMode, set_auto_parallel_context, get_auto_parallel_context, reset_auto_parallel_context,
    set_algo_parameters, get_algo_parameters, reset_algo_parameters, set_ps_context, get_ps_context, reset_ps_context,
)
from . import common  # noqa: F401 (re-export)
from . import ops  # noqa: F401 (re-export)
from ._compiler.jit import jit  # noqa: F401 (re-export)
from ._compiler.call_depth import set_recursion_limit  # noqa: F401 (re-export)
from .common.jit_class import jit_class  # noqa: F401 (re-export)
from .common.mutable import mutable  # noqa: F401 (re-export)
from .common.lazy_inline import lazy_inline  # noqa: F401 (re-export)
from .common.jit_config import JitConfig  # noqa: F401 (re-export)
from . import nn  # noqa: F401 (re-export)
from . import runtime  # noqa: F401 (re-export)
from . import train  # noqa: F401 (re-export)
from . import numpy  # noqa: F401  (mindspore.numpy)
from . import communication  # noqa: F401 (re-export)
from . import amp  # noqa: F401  (mindspore.amp: mixed precision and loss scaling)
from . import mint  # noqa: F401  (mindspore.mint: the PyTorch-flavoured API; after ops and nn)
from . import log  # noqa: F401  (mindspore.log: the framework logger scripts also use)
from . import parallel  # noqa: F401  (mindspore.parallel: imported by `import mindspore`; under 1 ms)
from .parallel import shard  # noqa: F401  (mindspore.shard: the same function as mindspore.parallel.shard)
from .parallel.checkpoint_transform import (  # noqa: F401  (mindspore.<name>: MindSpore exports them at top level)
    build_searched_strategy, load_distributed_checkpoint, merge_sliced_parameter, rank_list_for_transform,
    transform_checkpoint_by_rank, transform_checkpoints)
from . import boost, _checkparam  # noqa: F401  (mindspore.boost / mindspore._checkparam: imported by `import mindspore`)
from .profiler import Profiler  # noqa: F401  (mindspore.Profiler / mindspore.profiler.Profiler)
from .train.serialization import (save_checkpoint, load_checkpoint, load_param_into_net,  # noqa: F401 (re-export)
                                  load_checkpoint_async)
from .train._export_load import export, load  # noqa: F401  (mindspore.export / mindspore.load: MindIR files)
from .train import Model, data_sink, DatasetHelper, connect_network_with_dataset  # noqa: F401  (mindspore.Model, ...)
from .train.loss_scale_manager import (  # noqa: F401 (re-export)
    LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager,
)
from .train.callback import (  # noqa: F401  (MindSpore exports the callbacks at top level too)
    Callback, RunContext, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig, EarlyStopping,
    ReduceLROnPlateau, History, LambdaCallback, LearningRateScheduler, SummaryCollector,
)
from .train.summary import SummaryRecord  # noqa: F401  (mindspore.SummaryRecord)
import os as _os
import importlib as _importlib

# `import mindspore` also makes `mindspore.dataset` and `mindspore.mindrecord` attributes (its __init__ imports them)
# and puts mindrecord's FileWriter/FileReader at top level. Here they load on first use (PEP 562): kiln.dataset
# alone would add ~0.2 s to every `import kiln`.
_LAZY_SUBMODULES = ("dataset", "mindrecord")
_LAZY_NAMES = {"FileWriter": "mindrecord", "FileReader": "mindrecord"}


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module("." + name, __name__)  # the import also sets it as an attribute
    if name in _LAZY_NAMES:
        value = getattr(_importlib.import_module("." + _LAZY_NAMES[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_NAMES))


_core._set_source_root(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)

__version__ = "0.1.0"
