"""Global seed and the random-op streams (MindSpore semantics, ../shared/reference/mindspore_api.md §1.5).

Random ops draw from Philox4x32-10 keyed by (seed, offset). Each (op, op_seed) pair is a stream (kiln/random.h):
every execution of a random op — eager or inside a compiled graph — takes the stream's next offset, so reruns after
`set_seed` repeat the same numbers, successive calls differ, and PyNative and Graph mode draw the same sequence.
Without any seed, each call site gets a fresh seed from the OS (non-deterministic), as MindSpore does."""
import os
import threading
import zlib

import numpy as np

from .. import _engine

_global_seed = None
_counters = {}
_counters_lock = threading.Lock()  # stream ids are handed out from any thread
# (op name, op seed, global seed) -> (seed, stream id) of _next_key: the crc32, the 64-bit arithmetic and the lock
# of a repeated call skipped (the per-call cost of ops.standard_normal, normal, ...); a hit counts only while
# _counters still maps the key to that stream. Filled and cleared under _counters_lock (set_seed clears it).
_keys = {}


def set_seed(seed):
    """Sets the global seed: seeds NumPy's global RNG (used by initializers) and resets every random-op stream.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative.
    """
    global _global_seed
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError("The argument 'seed' must be type of int, but got " + type(seed).__name__ + ".")
    if seed < 0:
        raise ValueError(f"The argument 'seed' must be greater than or equal to 0, but got {seed}.")
    np.random.seed(seed % (2**32))
    from ..dataset import config as _dataset_config  # MindSpore's set_seed also seeds the data pipeline
    _dataset_config.set_seed(seed % (2**32))
    _global_seed = seed
    with _counters_lock:
        _counters.clear()
        _keys.clear()
        _engine.reset_random_streams()


def get_seed():
    """The global seed, or None if set_seed was never called."""
    return _global_seed


def _next_key(op_name, op_seed=None):
    """(seed, stream id) for a call of random op `op_name` with optional op-level seed; the offset is taken from
    the stream when the op runs."""
    if op_seed is None or type(op_seed) is int:  # (not bool: True would find the key of 1)
        hit = _keys.get((op_name, op_seed, _global_seed))
        # valid while the stream table still maps the key to that stream (tests restore _counters by hand)
        if hit is not None and _counters.get((op_name, op_seed or 0)) == hit[1]:
            return hit
    if op_seed is not None and (not isinstance(op_seed, int) or isinstance(op_seed, bool) or op_seed < 0):
        raise TypeError(f"For '{op_name}', the 'seed' must be a non-negative int, but got {op_seed!r}.")
    if _global_seed is None and op_seed is None:
        return int.from_bytes(os.urandom(8), "little") >> 1, 0
    key = (op_name, op_seed or 0)
    with _counters_lock:  # two threads must never be handed the same stream id for different keys
        stream = _counters.get(key)
        if stream is None:
            stream = _counters[key] = len(_counters) + 1
        g0 = _global_seed
        g = g0 if g0 is not None else 0
        seed = (g * 0x9E3779B97F4A7C15 + (op_seed or 0) * 0xBF58476D1CE4E5B9 + zlib.crc32(op_name.encode())) % (2**63)
        if (type(op_seed) is int or op_seed is None) and len(_keys) < 4096:  # bounded: a few names x seeds
            _keys[(op_name, op_seed, g0)] = (seed, stream)
    return seed, stream


def _stream_keys():
    """{stream id: (op name, op seed)} of the streams handed out so far (the compile cache on disk stores them)."""
    with _counters_lock:
        return {s: k for k, s in _counters.items()}


def _stream_for(key):
    """The stream id of (op name, op seed) in this process, handing out a new one as _next_key would."""
    key = (str(key[0]), int(key[1]))
    with _counters_lock:
        stream = _counters.get(key)
        if stream is None:
            stream = _counters[key] = len(_counters) + 1
    return stream
