"""MindSpore 2.10's profiler enums (`mindspore.profiler.ProfilerLevel`, `ProfilerActivity`, `ExportType`)."""
from enum import Enum

__all__ = ["ProfilerLevel", "ProfilerActivity", "ExportType", "AicoreMetrics", "HostSystem"]


class ProfilerLevel(Enum):
    """How much is collected. Kiln records the same host and kernel events at every level (docs/profiling.md)."""
    LevelNone = "LevelNone"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class ProfilerActivity(Enum):
    """Which devices are profiled. Kiln runs on the CPU: CPU selects its host and kernel events; NPU and GPU are
    accepted and add nothing."""
    NPU = "NPU"
    GPU = "GPU"
    CPU = "CPU"


class ExportType(Enum):
    """The export formats: Kiln writes the Text form (trace_view.json and the csv tables) for both."""
    Db = "db"
    Text = "text"


class AicoreMetrics(Enum):
    """Ascend AI Core counters (MindSpore's names); accepted, nothing to collect on Kiln's CPU."""
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"
    MemoryAccess = "MemoryAccess"
    AiCoreNone = "None"


class HostSystem(Enum):
    """Host system data (MindSpore's names); accepted, not collected by Kiln."""
    CPU = "cpu"
    MEM = "mem"
    DISK = "disk"
    NETWORK = "network"
    OSRT = "osrt"
