"""kiln.dataset.config — MindSpore's `mindspore.dataset.config`: the pipeline's global settings.

Seed: `set_seed(seed)` seeds Python's `random`, NumPy's global RNG and every random choice of the data pipeline
(samplers, `shuffle`, `split`), as MindSpore's does. Each random node of a pipeline draws from its own NumPy
`Generator` keyed by (seed, position of the node in the pipeline), created when an iterator is created, so the same
seed gives the same orders in a new process. Without `set_seed`, `get_seed()` returns MindSpore's default 5489 and
the orders differ from run to run (the generators are seeded from the OS), except `DistributedSampler`, which uses
`get_seed()` so that every shard of a run sees the same permutation (as MindSpore)."""
import os
import random
import threading

import numpy as np

_DEFAULT_SEED = 5489  # std::mt19937's default seed, what MindSpore's get_seed() returns before set_seed
_lock = threading.Lock()
_state = {"seed": None, "num_parallel_workers": min(8, os.cpu_count() or 1), "prefetch_size": 16}


def _check_int(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: the argument must be of type int, but got {value!r} ({type(value).__name__}).")
    if not lo <= value <= hi:
        raise ValueError(f"{name}: the argument must be within [{lo}, {hi}], but got {value}.")


def set_seed(seed):
    """Sets the seed of the data pipeline (shuffles, samplers, and the random operations of `kiln.dataset.vision` and
    `kiln.dataset.transforms`), of Python's `random` and of NumPy's global RNG.

    A pipeline whose random operations run in one thread (the default) gives the same rows in a new process with
    the same seed; with `num_parallel_workers` > 1 the rows' assignment to workers is not fixed, so random operations
    draw differently from run to run (shuffles and samplers stay reproducible).

    Args:
        seed (int): in [0, 2**32 - 1].

    Raises:
        TypeError: `seed` is not an int.
        ValueError: `seed` is negative or above 2**32 - 1.
    """
    _check_int("set_seed", seed, 0, 2**32 - 1)
    with _lock:
        _state["seed"] = seed
    random.seed(seed)
    np.random.seed(seed)
    from .vision import _random as _vision_random
    _vision_random.reseed(seed)


def get_seed():
    """The seed set by `set_seed` (also by `kiln.set_seed`), or MindSpore's default 5489 when none was set."""
    s = _state["seed"]
    return _DEFAULT_SEED if s is None else s


def _user_seed():
    """The seed the user set, or None."""
    return _state["seed"]


def _rng(salt):
    """A NumPy Generator for the random node numbered `salt` of a pipeline: keyed by (seed, salt) when a seed was
    set, from OS entropy otherwise."""
    s = _state["seed"]
    if s is None:
        return np.random.default_rng()
    return np.random.default_rng([s, salt])


def set_num_parallel_workers(num):
    """Sets the default number of parallel workers of the pipeline operations (MindSpore's default:
    min(8, number of CPUs)).

    Raises:
        TypeError: `num` is not an int. ValueError: `num` is not positive.
    """
    _check_int("set_num_parallel_workers", num, 1, 2**31 - 1)
    with _lock:
        _state["num_parallel_workers"] = num


def get_num_parallel_workers():
    """The default number of parallel workers (int)."""
    return _state["num_parallel_workers"]


def set_prefetch_size(size):
    """Sets how many rows each parallel operation keeps in flight per worker (bounded queues; default 16).

    Raises:
        TypeError: `size` is not an int. ValueError: `size` is not positive.
    """
    _check_int("set_prefetch_size", size, 1, 2**31 - 1)
    with _lock:
        _state["prefetch_size"] = size


def get_prefetch_size():
    """The prefetch size (int)."""
    return _state["prefetch_size"]


def set_callback_timeout(timeout):
    """Seconds a `sync_wait` gate waits for `sync_update` before it opens for good (default 60, as MindSpore).
    Raises TypeError / ValueError for a non-positive int."""
    from .engine.sync import set_callback_timeout as _set
    _set(timeout)


def get_callback_timeout():
    """The `sync_wait` timeout in seconds (default 60)."""
    from .engine.sync import get_callback_timeout as _get
    return _get()


def _default_start_method():
    import multiprocessing
    import sys
    return "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"


def set_multiprocessing_start_method(start_method="fork"):
    """How worker processes (python_multiprocessing=True in GeneratorDataset, map and batch) are started: 'fork'
    (the functions reach the workers by fork, so lambdas and closures work) or 'spawn' (a fresh interpreter; the
    functions and the source must be picklable). Applies to pools created afterwards.

    Raises:
        TypeError: not a str. ValueError: neither 'fork' nor 'spawn', or 'fork' where the platform lacks it.
    """
    import multiprocessing
    if not isinstance(start_method, str):
        raise TypeError(f"set_multiprocessing_start_method: start_method must be of type str, but got "
                        f"{start_method!r} ({type(start_method).__name__}).")
    if start_method not in ("fork", "spawn"):
        raise ValueError(f"set_multiprocessing_start_method: Input start_method is not within the valid set of "
                         f"['fork', 'spawn'], got {start_method!r}.")
    if start_method not in multiprocessing.get_all_start_methods():
        raise ValueError(f"set_multiprocessing_start_method: this platform has no {start_method!r} start method.")
    with _lock:
        _state["start_method"] = start_method


def get_multiprocessing_start_method():
    """The start method of dataset worker processes ('fork' by default on Linux, 'spawn' where fork is missing or
    unsafe, as on macOS)."""
    return _state.get("start_method") or _default_start_method()


def _max_workers():
    return os.cpu_count() or 1
