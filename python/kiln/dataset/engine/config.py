"""`mindspore.dataset.engine.config`: the older path of `mindspore.dataset.config` (the same functions)."""
from ..config import (get_multiprocessing_start_method, get_num_parallel_workers, get_prefetch_size,
                      get_seed, set_multiprocessing_start_method, set_num_parallel_workers, set_prefetch_size,
                      set_seed)

__all__ = ["get_multiprocessing_start_method", "get_num_parallel_workers", "get_prefetch_size", "get_seed",
           "set_multiprocessing_start_method", "set_num_parallel_workers", "set_prefetch_size", "set_seed"]
