"""mindspore.parallel._utils' helpers that data-parallel training scripts import (values from the auto-parallel
context; see kiln/_parallel_context.py)."""
from .._parallel_context import get_auto_parallel_context

__all__ = ["_get_device_num", "_get_gradients_mean", "_get_parallel_mode", "_get_global_rank"]


def _get_device_num():
    """get_auto_parallel_context("device_num"): the number of processes (the world size after init(), else 1)."""
    return get_auto_parallel_context("device_num")


def _get_gradients_mean():
    """get_auto_parallel_context("gradients_mean") (bool)."""
    return get_auto_parallel_context("gradients_mean")


def _get_parallel_mode():
    """get_auto_parallel_context("parallel_mode"): 'stand_alone' or 'data_parallel'."""
    return get_auto_parallel_context("parallel_mode")


def _get_global_rank():
    """get_auto_parallel_context("global_rank"): this process's rank (0 before init())."""
    return get_auto_parallel_context("global_rank")
