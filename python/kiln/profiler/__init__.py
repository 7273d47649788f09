"""`mindspore.profiler` on Kiln: Profiler / profile (start, stop, step, analyse; a context manager), schedule,
tensorboard_trace_handler, ProfilerLevel, ProfilerActivity, ExportType, AicoreMetrics, HostSystem, mstx,
_ExperimentalConfig (profile's experimental_config).

A recorded period is written as a Chrome trace-event JSON (ASCEND_PROFILER_OUTPUT/trace_view.json, opens in
https://ui.perfetto.dev) holding host events (Cell calls, dataset next, callbacks, mstx ranges) and the kernel time
of every op per step, and as MindSpore's per-op-type table (FRAMEWORK/cpu_op_type_info_<rank>.csv) plus a per-step
table. How it works, what it costs and what differs from MindSpore: docs/profiling.md, kiln/profiler/profiler.py.
"""
from .common import AicoreMetrics, ExportType, HostSystem, ProfilerActivity, ProfilerLevel
from .experimental_config import _ExperimentalConfig  # noqa: F401 (mindspore.profiler._ExperimentalConfig, private in MindSpore too)
from ._mstx import mstx
from .profiler import Profiler, profile, tensorboard_trace_handler
from .schedule import ProfilerAction, Schedule as schedule
from . import profiler  # noqa: F401 (mindspore.profiler.profiler, the module path scripts import from)

__all__ = ["Profiler", "profile", "schedule", "tensorboard_trace_handler", "ProfilerLevel", "ProfilerActivity",
           "ProfilerAction", "ExportType", "AicoreMetrics", "HostSystem", "mstx"]
