"""`mindspore.profiler._ExperimentalConfig`: the extra options of `profile(...)`/`Profiler(...)`
(`experimental_config=`), with MindSpore 2.10's names and defaults.

Kiln uses `mstx` (record mstx marks and ranges), `mstx_domain_include` / `mstx_domain_exclude` (only / not these
domains; include wins when both are given, as MindSpore documents) and `profiler_level`; the others are kept and
change nothing on Kiln's CPU. The values are kept as given; the Profiler
logs a value of the wrong type as a warning and uses the default, as MindSpore does.
"""
from .. import log as _log
from .common import AicoreMetrics, ProfilerLevel

__all__ = ["_ExperimentalConfig"]


class _ExperimentalConfig:
    """_ExperimentalConfig(profiler_level=ProfilerLevel.Level0, aic_metrics=AicoreMetrics.AiCoreNone,
    l2_cache=False, mstx=False, data_simplification=True, export_type=None, mstx_domain_include=None,
    mstx_domain_exclude=None, sys_io=False, sys_interconnection=False, host_sys=None) (module docstring)."""

    def __init__(self, profiler_level=ProfilerLevel.Level0, aic_metrics=AicoreMetrics.AiCoreNone, l2_cache=False,
                 mstx=False, data_simplification=True, export_type=None, mstx_domain_include=None,
                 mstx_domain_exclude=None, sys_io=False, sys_interconnection=False, host_sys=None):
        # kept as given, as MindSpore's: the Profiler checks the values it uses (module docstring)
        self.profiler_level, self.aic_metrics, self.l2_cache = profiler_level, aic_metrics, l2_cache
        self.mstx, self.data_simplification, self.export_type = mstx, data_simplification, export_type
        self.mstx_domain_include, self.mstx_domain_exclude = mstx_domain_include, mstx_domain_exclude
        self.sys_io, self.sys_interconnection, self.host_sys = sys_io, sys_interconnection, host_sys


def _checked(exp):
    """(profiler_level or None, mstx, domains included, domains excluded) of an _ExperimentalConfig; wrong types are
    logged and reset to the defaults (MindSpore's)."""
    level = exp.profiler_level
    if not isinstance(level, ProfilerLevel):
        _log.warning("For Profiler, the type of profiler_level should be <enum 'ProfilerLevel'>, reset to Level0.")
        level = ProfilerLevel.Level0
    mstx = exp.mstx
    if not isinstance(mstx, bool):
        _log.warning("For Profiler, the type of mstx should be <class 'bool'>, but got %s, reset to False.",
                     type(mstx))
        mstx = False
    domains = []
    for name in ("mstx_domain_include", "mstx_domain_exclude"):
        value = getattr(exp, name)
        if value is None:
            value = []
        if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) for d in value):
            _log.warning("For Profiler, %s should be a list of str, reset to [].", name)
            value = []
        domains.append(tuple(value))
    return level, mstx, domains[0], domains[1]
