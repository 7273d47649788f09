"""Random state of the random data operations (vision's Random*, transforms' RandomApply/Choice/Order).

One NumPy `Generator` per thread and process, all derived from one seed:

* `reseed(seed)` (called by `kiln.dataset.config.set_seed`) starts a new generation: every thread's next draw
  comes from a fresh stream `SeedSequence(seed, spawn_key=(stream, thread_index))`, so a single-threaded pipeline
  repeats exactly after `reseed(s)`.
* Threads never share a generator (NumPy generators are not thread safe): each thread gets its own index in the
  order it first draws after a reseed.
* A process forked (or spawned) from the one that seeded gets different streams: when `_rng()` notices the process
  id changed it derives the stream from the pid, unless the worker called `reseed(seed, stream=k)` itself (the
  engine does that, k = worker index + 1, for reproducible workers).
* Without any seed, generators are seeded from the OS (non-deterministic), as MindSpore does.
"""
import os
import threading

import numpy as np

_lock = threading.Lock()
_state = {"seed": None, "stream": 0, "generation": 0, "pid": os.getpid(), "next_thread": 0}
_local = threading.local()


def reseed(seed, stream=0):
    """Reseeds every data-operation random stream from `seed` (int >= 0, or None for OS entropy).

    `stream` distinguishes independent consumers (e.g. worker processes) seeded with the same seed.
    Raises TypeError / ValueError for a seed that is not a non-negative int."""
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
        raise TypeError(f"reseed: seed must be an int or None, but got {type(seed).__name__}.")
    if seed is not None and seed < 0:
        raise ValueError(f"reseed: seed must be >= 0, but got {seed}.")
    if not isinstance(stream, (int, np.integer)) or isinstance(stream, bool) or stream < 0:
        raise ValueError(f"reseed: stream must be an int >= 0, but got {stream!r}.")
    with _lock:
        _state["seed"] = None if seed is None else int(seed)
        _state["stream"] = int(stream)
        _state["generation"] += 1
        _state["pid"] = os.getpid()
        _state["next_thread"] = 0


def get_seed():
    """The seed last given to `reseed`, or None."""
    return _state["seed"]


def _rng():
    """This thread's `numpy.random.Generator` for data operations (see the module docstring)."""
    pid = os.getpid()
    gen = getattr(_local, "gen", None)
    if gen is not None and _local.generation == _state["generation"] and _local.pid == pid:
        return gen
    with _lock:
        if _state["pid"] != pid:  # a child process that did not reseed itself: its own streams
            _state["pid"] = pid
            _state["stream"] = (_state["stream"] + 1) * 1_000_003 + pid
            _state["next_thread"] = 0
            _state["generation"] += 1
        index = _state["next_thread"]
        _state["next_thread"] += 1
        seed = _state["seed"]
        generation = _state["generation"]
        stream = _state["stream"]
    if seed is None:
        gen = np.random.default_rng()
    else:
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(stream, index))))
    _local.gen = gen
    _local.generation = generation
    _local.pid = pid
    return gen
