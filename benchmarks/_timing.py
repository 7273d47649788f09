"""The timing loop the benchmark scripts share: calibrate a run length, then time repeated runs."""
import statistics
import time

import numpy as np


def timed_rates(step, sync, repeats, min_time):
    """Steps/s of `repeats` timed runs of n steps each, n chosen (by doubling, then scaling) so that a run takes
    about `min_time` seconds; `sync()` waits for the last step and returns its loss. Returns (rates, n, last loss).
    Raises FloatingPointError when the loss is not finite at the end."""
    n = 1
    while True:  # calibrate
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync()
        dt = time.perf_counter() - t0
        if dt >= min_time / 4 or n >= 1 << 20:
            break
        n *= 2
    n = max(1, int(round(n * min_time / max(dt, 1e-9))))
    rates = []
    loss = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        loss = sync()
        rates.append(n / (time.perf_counter() - t0))
    if not np.isfinite(loss):
        raise FloatingPointError(f"loss became {loss}")
    return rates, n, loss


def per_call(fn, x, calls, repeats):
    """Median seconds per call of fn(x) over `repeats` runs of `calls` calls each, after 5 warm-up calls; the last
    output of each run is read back (asnumpy) so that queued work is counted."""
    for _ in range(5):
        fn(x).asnumpy()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            out = fn(x)
        out.asnumpy()
        runs.append((time.perf_counter() - t0) / calls)
    return statistics.median(runs)


def calls_for(call, sync, min_time, warmup=3):
    """How many calls of call() take about `min_time` seconds: `warmup` untimed calls, then runs of 1, 2, 4, ...
    calls until one takes a quarter of min_time, scaled to min_time. sync(out) waits for the last call's output."""
    out = None
    for _ in range(warmup):
        out = call()
    sync(out)
    n = 1
    while True:
        dt = time_calls(call, sync, n) * n
        if dt >= min_time / 4 or n >= 1 << 22:
            break
        n *= 2
    return max(1, int(round(n * min_time / max(dt, 1e-9))))


def time_calls(call, sync, n):
    """Seconds per call of one run of n calls of call(); sync(out) is applied to the last output, so queued work
    is counted."""
    t0 = time.perf_counter()
    for _ in range(n):
        out = call()
    sync(out)
    return (time.perf_counter() - t0) / n
