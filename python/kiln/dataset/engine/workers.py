"""Ordered parallel execution for the pipeline: `map`, `filter`, `batch(per_batch_map=...)` and random-access
`GeneratorDataset` with num_parallel_workers > 1.

Threads (`python_multiprocessing=False`) use `concurrent.futures.ThreadPoolExecutor`; processes use
`concurrent.futures.ProcessPoolExecutor` with the 'fork' start method where the platform has it (the function is
handed to the workers when they are forked, so lambdas and closures work; only the rows travel, pickled), 'spawn'
elsewhere (then the function must be picklable). At most `window` items are in flight (bounded memory), results come
back in input order. A failure in the function comes back as its formatted traceback and is raised in the caller as
RuntimeError with that text; a worker process that dies (crash, os._exit, kill) raises RuntimeError instead of
hanging. Workers ignore SIGINT, so Ctrl-C reaches only the main process, whose iterator shuts the pool down; pools
still open at interpreter exit are shut down by an atexit hook. The main thread's calls into the executor run with
Ctrl-C deferred (`_SigintDeferred`): a KeyboardInterrupt raised between a lock's acquisition and its `with` block
inside `concurrent.futures` or `queue` leaves that lock held, and the executor's manager thread, and with it the
interpreter's exit, then waits forever. (A Ctrl-C whose handler runs inside a weakref callback or `__del__` --
the executor's own thread bookkeeping is a WeakKeyDictionary -- is dropped by CPython with an 'Exception ignored'
message, as in any Python program; the next Ctrl-C stops the pipeline.) A worker exits by itself when the process that
started it dies, even by SIGKILL (see `_die_with_parent`), so no worker outlives its pipeline."""
import atexit
import collections
import concurrent.futures as cf
import multiprocessing
import os
import random
import signal
import sys
import threading
import traceback
import weakref
from concurrent.futures.process import BrokenProcessPool

import numpy as np

_POLL_S = 0.1  # how long a Ctrl-C can wait while the main thread waits for a row (see _SigintDeferred)
_live = weakref.WeakSet()
_live_lock = threading.Lock()
_worker_fn = None  # the function, in a worker process


def _single_thread_openmp():
    """In a forked worker: OpenMP (GNU libgomp, which Kiln's kernels use) is not fork-safe — a parallel region in a
    child of a process that already ran one waits forever for the parent's thread team. Kernels in a worker
    therefore run single-threaded (the workers are the parallelism), as PyTorch's DataLoader workers do."""
    import ctypes
    for name in ("libgomp.so.1", "libgomp.1.dylib", "libomp.so", "libiomp5.so"):
        try:
            lib = ctypes.CDLL(name, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        lib.omp_set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"


def _die_with_parent(parent_pid, parent_main_ident):
    """In a worker process: exit as soon as the process that started the pool is gone (SIGKILL, SIGTERM, a crash),
    so that no worker outlives its pipeline. On Linux, prctl(PR_SET_PDEATHSIG, SIGKILL) makes the kernel kill the
    worker when its parent dies — but only when the forking thread was the parent's main thread (the signal is
    tied to the thread that forked, and a pipeline thread may end long before the process). Everywhere, a daemon
    thread checks os.getppid() twice a second and exits the worker once it changed (the worker was re-parented)."""
    if os.getppid() != parent_pid:  # the parent died before this worker started
        os._exit(1)
    if sys.platform.startswith("linux") and threading.get_ident() == parent_main_ident:
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent_pid:  # died between the first check and prctl
            os._exit(1)

    def watch():
        import time
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="kiln-parent-watch", daemon=True).start()


class _SigintDeferred:
    """Context manager: in the main thread, a SIGINT that arrives inside the block runs its Python handler (by
    default, raises KeyboardInterrupt) when the block ends instead of inside it.

    Python runs signal handlers between bytecodes of the main thread, so Ctrl-C can raise inside the standard
    library's `with lock:` just after the lock was taken and before the block that releases it (CPython issue
    bpo-29988); a lock of the executor's work queue or of a Future left held that way hangs the executor's manager
    thread and the interpreter's exit. Blocking the signal with pthread_sigmask would not help: it is per thread, and
    the kernel then delivers the process-directed SIGINT to another thread, whose flag the main thread still acts on.
    So the Python-level handler is swapped for one that only records the signal; a signal already pending is
    handled by `signal.signal` itself before the swap (raising here, outside any lock). Outside the main thread, or
    when SIGINT has no Python handler (SIG_DFL, SIG_IGN), nothing is swapped: no exception can arrive there."""

    __slots__ = ("_old", "_frame", "_pending")

    def __enter__(self):
        self._old = None
        if threading.current_thread() is threading.main_thread() and callable(signal.getsignal(signal.SIGINT)):
            self._pending = False
            self._old = signal.signal(signal.SIGINT, self._record)
        return self

    def _record(self, signum, frame):
        self._pending = True
        self._frame = frame

    def __exit__(self, *exc):
        old = self._old
        if old is not None:
            self._old = None
            signal.signal(signal.SIGINT, old)
            if self._pending:
                old(signal.SIGINT, self._frame)
        return False


def _init_worker(fn, parent_pid=None, parent_main_ident=None):
    global _worker_fn
    _worker_fn = fn
    if parent_pid is not None:
        _die_with_parent(parent_pid, parent_main_ident)
    _single_thread_openmp()
    # forked workers inherit the parent's RNG states: without a reseed every worker would draw the same "random"
    # crops and flips (the classic DataLoader pitfall)
    random.seed(os.urandom(16))
    np.random.seed(int.from_bytes(os.urandom(4), "little"))
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread (never the case in a worker process)
        pass


def _guarded(fn, item):
    """(True, result) or (False, traceback text): exceptions travel as text, so unpicklable ones do too."""
    try:
        return True, fn(item)
    except Exception:  # noqa: BLE001 — every failure of user code is reported with its traceback
        return False, traceback.format_exc()


def _call_in_process(item):
    return _guarded(_worker_fn, item)


class UserFunctionError(RuntimeError):
    """A user function in the pipeline raised; the message holds the function's traceback."""


def raise_user_error(what, tb_text, cause=None):
    """Raises RuntimeError naming the pipeline operation `what`, with the user's traceback text."""
    raise UserFunctionError(f"Exception thrown from user defined Python function in dataset: {what} failed.\n"
                            f"------------------------------------------------------------------\n"
                            f"- Python Call Stack:\n"
                            f"------------------------------------------------------------------\n{tb_text}") from cause


def call_user(what, fn, *args):
    """fn(*args), with an exception re-raised as RuntimeError naming `what` and holding the traceback."""
    try:
        return fn(*args)
    except UserFunctionError:
        raise
    except Exception as e:  # noqa: BLE001 (the user's function failed: re-raised with its traceback)
        raise_user_error(what, traceback.format_exc(), e)


def _start_method():
    from ..config import get_multiprocessing_start_method
    return get_multiprocessing_start_method()


class OrderedPool:
    """Runs `fn` over items in `num_workers` threads or processes, yielding the results in input order.

    Args:
        fn: item -> result; with processes, its result must be picklable.
        num_workers (int): >= 2.
        processes (bool): worker processes instead of threads.
        window (int): most items in flight at once.
        what (str): the operation's name for error messages.
    """

    def __init__(self, fn, num_workers, processes, window, what):
        self.what = what
        self.processes = processes
        self.window = max(int(window), num_workers)
        self._lock = threading.Lock()
        if processes:
            method = _start_method()
            if method == "spawn":  # the function travels pickled: say which one cannot, before any worker starts
                import pickle
                try:
                    pickle.dumps(fn)
                except Exception as e:  # noqa: BLE001 — PicklingError, AttributeError, TypeError alike
                    raise TypeError(f"{what}: with the 'spawn' start method (kiln.dataset.config."
                                    f"set_multiprocessing_start_method) the functions and sources run by worker "
                                    f"processes must be picklable (module-level functions, no lambdas or "
                                    f"closures), but: {type(e).__name__}: {e}") from None
            ctx = multiprocessing.get_context(method)
            self._ex = cf.ProcessPoolExecutor(num_workers, mp_context=ctx, initializer=_init_worker,
                                              initargs=(fn, os.getpid(), threading.main_thread().ident))
            self._submit = lambda item: self._ex.submit(_call_in_process, item)
        else:
            self._ex = cf.ThreadPoolExecutor(num_workers, thread_name_prefix="kiln-dataset")
            self._submit = lambda item: self._ex.submit(_guarded, fn, item)
        self._closed = False
        with _live_lock:
            _live.add(self)

    def worker_pids(self):
        """Process ids of the worker processes started so far (empty for threads)."""
        procs = getattr(self._ex, "_processes", None) or {}
        return sorted(procs)

    def imap(self, items):
        """Generator of fn(item) for each item of the iterable `items`, in order."""
        pending = collections.deque()
        it = iter(items)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < self.window:
                    try:
                        item = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    pending.append(self._submit_checked(item))
                if not pending:
                    return
                yield self._result(pending.popleft())
        finally:
            with _SigintDeferred():
                for f in pending:
                    f.cancel()

    def _submit_checked(self, item):
        if self._closed:
            raise RuntimeError(f"{self.what}: the worker pool is shut down (its iterator was closed).")
        try:
            with _SigintDeferred():
                return self._submit(item)
        except BrokenProcessPool as e:
            self.close()
            raise RuntimeError(f"{self.what}: a worker process exited unexpectedly (crashed or was killed); "
                               f"{e}") from None

    def _wait(self, fut):
        """fut.result(), polled in steps of _POLL_S with Ctrl-C deferred during each (a Ctrl-C raises between them)."""
        while True:
            with _SigintDeferred():
                try:
                    return fut.result(timeout=_POLL_S)
                except cf.TimeoutError:
                    pass

    def _result(self, fut):
        try:
            ok, value = self._wait(fut)
        except BrokenProcessPool as e:
            self.close()
            raise RuntimeError(f"{self.what}: a worker process exited unexpectedly (crashed, called os._exit or "
                               f"was killed) while running the operation; {e}") from None
        except cf.CancelledError:
            raise RuntimeError(f"{self.what}: the worker pool was shut down while a row was in flight.") from None
        except Exception as e:  # a result that could not be pickled back, and similar transport failures
            self.close()
            raise RuntimeError(f"{self.what}: a worker process could not return its result: "
                               f"{type(e).__name__}: {e}") from e
        if not ok:
            raise_user_error(self.what, value)
        return value

    def close(self):
        """Stops the workers now (queued items are dropped, processes terminated and reaped). Idempotent."""
        with _SigintDeferred():
            self._close()

    def _close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
        ex = self._ex
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.join(timeout=1.0)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5.0)
            if p.is_alive():
                p.kill()
                p.join(timeout=5.0)
        if not self.processes:
            ex.shutdown(wait=True, cancel_futures=True)
        with _live_lock:
            _live.discard(self)


@atexit.register
def _close_all():
    with _live_lock:
        pools = list(_live)
    for p in pools:
        try:
            p.close()
        except Exception:  # noqa: BLE001 — best effort at exit
            pass
