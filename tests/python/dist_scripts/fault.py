"""Run by tests/python/test_distributed.py under the launcher: trains with all-reduce; rank 1 fails at step 3, by
raising (argv[2] == 'raise') or by killing itself (argv[2] == 'kill'). Every worker writes its pid to
OUT_DIR/pid_<rank> so that the test can check that none is left running."""
import os
import signal
import sys

import numpy as np

from mindspore import Tensor
from mindspore.communication import comm_func, get_rank, init

out_dir, how = sys.argv[1], sys.argv[2]
init()
rank = get_rank()
with open(os.path.join(out_dir, f"pid_{rank}"), "w") as f:
    f.write(str(os.getpid()))
for step in range(100000):
    if rank == 1 and step == 3:
        if how == "raise":
            raise ValueError(f"deliberate failure of rank {rank} at step {step}")
        os.kill(os.getpid(), signal.SIGKILL)
    comm_func.all_reduce(Tensor(np.ones(4, np.float32)))
