"""Run by tests/python/test_distributed.py under the launcher with a short --cluster_time_out: rank 1 stops taking
part in collectives (it sleeps), so rank 0's all-reduce must fail with a timeout instead of waiting forever."""
import time

import numpy as np

from mindspore import Tensor
from mindspore.communication import comm_func, get_rank, init

init()
comm_func.barrier()
if get_rank() == 1:
    time.sleep(120)
comm_func.all_reduce(Tensor(np.ones(4, np.float32)))
