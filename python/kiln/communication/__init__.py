"""kiln.communication — MindSpore's `mindspore.communication`: process groups and collectives for data-parallel
training across processes and machines, on Gloo. Start the processes with `python -m kiln.msrun` (MindSpore's
msrun flags), call `init()`, then use get_rank()/get_group_size(), the collective ops (ops.AllReduce, comm_func) or
data-parallel training (set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)).
See docs/distributed.md."""
from .management import *  # noqa: F403 (re-export)
from . import management  # noqa: F401 (re-export)
from . import comm_func  # noqa: F401 (re-export)
