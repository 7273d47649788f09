"""`kiln.data_sink` (MindSpore's `mindspore.data_sink` / `mindspore.train.data_sink`): runs `sink_size` training
steps per call with no Python per step.

How it runs (docs/data_sink.md):
* the step `fn` is compiled as `@jit` compiles it (kiln.jit: one graph per input signature, the same cache);
* a producer thread iterates the dataset (`create_tuple_iterator(num_epochs=-1, output_numpy=True)`, epoch after
  epoch, without end), turns each row into Tensors and pushes them into a bounded C++ queue (kiln._core.BatchQueue:
  at most 16 batches and 512 MiB; the thread waits without the GIL while the queue is full);
* each call runs a C++ loop (kiln._core.run_sink) without the GIL: pop a batch, run the graph compiled for its
  shapes, repeat `sink_size` times. A batch of new shapes (the last, partial batch of an epoch) returns to Python
  once to compile its graph (or to reuse jit's cached one), then the loop goes on; Ctrl-C is checked about every
  20 ms between steps.
Numbers: each step is exactly the call `jit(fn)(*batch)` (same graph, same kernels, same random streams), so losses,
parameters and optimizer state equal the per-step @jit loop bit for bit.

Note [data sink lifetime]: the queue and the thread live as long as the sink function (they prefetch the batches of
the next call). They are shut down (queue closed, thread joined) when the sink function is garbage collected, at
interpreter exit, and after any exception out of a call (a dataset error, a step error, KeyboardInterrupt): a sink
function that raised refuses further calls with a RuntimeError; make a new one with data_sink."""
import functools
import threading
import weakref

from .. import _engine
from .. import context
from .._compiler import jit as _jit, guards as _guards, compiled as _compiled, structure as _structure
from ..common import seed as _seed
from ..common.tensor import Tensor

__all__ = ["data_sink"]

_tensors_from_arrays = _engine._tensors_from_arrays

QUEUE_CAPACITY = 16  # batches prefetched at most (MindSpore's device queue: 100 batches / 2 GB)
QUEUE_MAX_BYTES = 512 << 20  # bytes of batch data prefetched at most (a single larger batch still passes)
MAX_SIGNATURES = 8  # compiled graphs (input shapes) one sink function switches between without Python
_JOIN_SECONDS = 10.0  # how long a shutdown waits for the producer thread (it may be inside the dataset's next())


class _Box:
    """What the producer thread shares with its sink: the exception that stopped it, and the rows it produced."""
    __slots__ = ("error", "produced")

    def __init__(self):
        self.error = None
        self.produced = 0


def _as_tensor(value, column):
    if isinstance(value, Tensor):
        return value
    try:
        return Tensor(value)
    except (TypeError, ValueError) as e:  # same kind: TypeError for an element type, ValueError for a ragged list
        raise type(e)(f"For 'data_sink', column {column} of the dataset holds {type(value).__name__} that does not "
                      f"convert to a Tensor: {e}") from e


def _produce(dataset, queue, box):
    """The producer thread: rows of the dataset, epoch after epoch, into `queue` until it is closed."""
    try:
        it = dataset.create_tuple_iterator(num_epochs=-1, output_numpy=True)
        in_epoch = 0
        restarted = False
        while True:
            try:
                row = next(it)
            except StopIteration:
                # End of an epoch: MindSpore's iterator goes on with the next epoch on the next call. An epoch
                # without rows means the iterator is spent (or the dataset empty): once, ask for a fresh iterator.
                if in_epoch == 0:
                    if restarted:
                        raise ValueError("For 'data_sink', the dataset yields no batches (an epoch ended before "
                                         "its first batch).") from None
                    it = dataset.create_tuple_iterator(num_epochs=-1, output_numpy=True)
                    restarted = True
                in_epoch = 0
                continue
            in_epoch += 1
            restarted = False
            if not isinstance(row, (list, tuple)):
                raise TypeError(f"For 'data_sink', the dataset's iterator must yield lists of column values, but "
                                f"yielded {type(row).__name__}.")
            batch = _tensors_from_arrays(row)  # C++ copies of plain NumPy arrays; None: Python's converter
            if batch is None:
                batch = [_as_tensor(v, k) for k, v in enumerate(row)]
            box.produced += 1
            if not queue.push(batch):  # closed: the sink is shutting down
                return
    except BaseException as e:  # noqa: BLE001 -- everything reaches the caller, with its traceback
        box.error = e
        queue.fail(f"{type(e).__name__}: {e}")


def _describe(tensors):
    return ", ".join(f"{t.dtype}{list(t.shape)}" for t in tensors)


def _check_signature_batch(signature, batch, index):
    """MindSpore's check of the dataset against input_signature: TypeError for a dtype, ValueError for a rank or a
    dimension (-1 / None: any)."""
    sig = list(signature) if isinstance(signature, (list, tuple)) else [signature]
    if len(sig) != len(batch):
        raise ValueError(f"For 'data_sink', input_signature has {len(sig)} tensors but batch {index} of the dataset "
                         f"has {len(batch)} columns ({_describe(batch)}).")
    for i, (s, t) in enumerate(zip(sig, batch)):
        if s.dtype != t.dtype:
            raise TypeError(f"For 'data_sink', column {i} of batch {index} is {t.dtype}{list(t.shape)} but "
                            f"input_signature expects {s.dtype}{list(s.shape)}.")
        if len(s.shape) != len(t.shape) or any(a not in (None, -1) and a != b for a, b in zip(s.shape, t.shape)):
            raise ValueError(f"For 'data_sink', column {i} of batch {index} has shape {list(t.shape)} but "
                             f"input_signature expects {list(s.shape)} (batch: {_describe(batch)}).")


def _rewrap(e, message):
    """`e`'s own type with a message that names the batch (ValueError/TypeError/RuntimeError/IndexError), else e."""
    if type(e) in (ValueError, TypeError, RuntimeError, IndexError):
        return type(e)(message)
    return e


class _Sink:
    """The state of one sink function: its compiled step, queue, producer thread and graphs by input shapes."""

    def __init__(self, jf, dataset, sink_size, input_signature, name):
        self.jf = jf
        self.dataset = dataset
        self.sink_size = sink_size
        self.input_signature = input_signature
        self.name = name
        self.queue = None
        self.thread = None
        self.box = _Box()
        self.lock = threading.Lock()  # one call at a time per sink function
        self.table = {}  # batch signature -> (CompiledGraph, "Float32[32, 10], ..."), oldest first
        self.ctx = None  # (training flags, device, seed) the table was filled under
        self.consumed = 0  # batches taken from the queue so far
        self.dead = None  # why the sink was shut down (its calls then raise)

    # ------------------------------------------------------------------------------------------ lifetime
    def start(self):
        if self.queue is not None:
            return
        self.queue = _engine.BatchQueue(QUEUE_CAPACITY, QUEUE_MAX_BYTES)
        self.thread = threading.Thread(target=_produce, args=(self.dataset, self.queue, self.box), daemon=True,
                                       name=f"kiln-data-sink[{self.name}]")
        self.thread.start()

    def shutdown(self):
        """Closes the queue (the producer's next push returns False) and joins the producer thread."""
        q, t = self.queue, self.thread
        if q is not None:
            q.close()
        if t is not None and t is not threading.current_thread():
            t.join(_JOIN_SECONDS)
        self.table.clear()

    # --------------------------------------------------------------------------------------------- calls
    def call(self):
        with self.lock:
            if self.dead is not None:
                raise RuntimeError(f"For 'data_sink', this sink function of '{self.name}' was shut down by an "
                                   f"earlier {self.dead}; create a new one with kiln.data_sink(fn, dataset, ...).")
            self.start()
            try:
                return self._run(self.sink_size)
            except BaseException as e:
                self.dead = type(e).__name__
                self.shutdown()
                raise

    def _context(self):
        jf = self.jf
        g = jf._guard
        flags = g[2] if g[1] == _guards._flags_epoch[0] else jf._train_flags()
        return (flags, context._context["device_target"], _seed._global_seed)

    def _refresh_table(self):
        ctx = self._context()
        if ctx != self.ctx:  # training flags, device or seed changed: graphs are looked up afresh
            self.table.clear()
            self.ctx = ctx

    def _run(self, steps):
        self._refresh_table()
        check_signals = threading.current_thread() is threading.main_thread()
        result = None
        while steps > 0:
            entries = list(self.table.values())
            status, n, k, outs, pending = _engine.run_sink([e.executable for e, _ in entries], self.queue, steps,
                                                         check_signals)
            steps -= n
            self.consumed += n
            if n:
                entry = entries[k][0]
                entry._used = next(_compiled._clock)  # keep jit's LRU stamp fresh, as a per-step call would
                # (a graph that writes attributes or its inputs: the attributes are set; the batches are the sink's)
                result = _compiled._write_back(entry, outs, None) if entry._post else \
                    _structure._unflatten(entry._out_struct, outs)
            if status == "done":
                break
            if status == "needs_compile":
                result = self._step_in_python(pending)
                steps -= 1
                continue
            if status == "failed":
                err = self.box.error
                if err is not None:
                    raise err  # the dataset's own exception, its traceback reaching into the producer thread
                raise RuntimeError(f"For 'data_sink', the dataset failed: {self.queue.error}")
            raise RuntimeError(f"For 'data_sink', the batch queue of '{self.name}' ended ({status}) before "
                               f"{self.sink_size} steps ran.")
        return result

    def _expected(self):
        """What the batches were expected to look like, for an error message (None before the first graph)."""
        if self.input_signature is not None:
            sig = self.input_signature if isinstance(self.input_signature, (list, tuple)) else [self.input_signature]
            return "input_signature " + ", ".join(f"{s.dtype}{list(s.shape)}" for s in sig)
        if self.table:
            return "the step was compiled for " + " or ".join(desc for _, desc in self.table.values())
        return None

    def _step_in_python(self, batch):
        """One step on a batch of shapes no compiled graph of this sink takes: jit(fn)(*batch) traces (or finds in
        jit's cache) the graph for them and runs it; the graph joins the table for the following batches."""
        index = self.consumed
        self.consumed += 1
        if self.input_signature is not None:
            _check_signature_batch(self.input_signature, batch, index)
        expected = self._expected()
        try:
            out = self.jf(*batch)
        except Exception as e:
            where = (f"on batch {index} of the dataset ({_describe(batch)})" if expected is None else
                     f"batch {index} of the dataset has inputs {_describe(batch)}, but {expected}; on the new "
                     "shapes")
            new = _rewrap(e, f"For 'data_sink' of '{self.name}': {where} the step failed: {e}")
            if new is e:  # another kind of error (KeyError, a user's own): as it is
                raise
            raise new from e
        entry = _fast_entry(self.jf, batch)
        self._refresh_table()
        if entry is not None:
            sig = _engine._tensor_signature(*batch)
            self.table.pop(sig, None)
            self.table[sig] = (entry, _describe(batch))
            while len(self.table) > MAX_SIGNATURES:
                del self.table[next(iter(self.table))]
        return out


def _fast_entry(jf, batch):
    """The CompiledGraph that `jf(*batch)` runs: the lookup of JitFunction.__call__'s fast path (positional
    Tensors only), or None when the function has no fast path (a Cell's key_extra): its batches then run through
    jf(*batch), one Python call per step."""
    if jf._key_extra is not None:
        return None
    g = jf._guard
    flags = g[2] if g[1] == _guards._flags_epoch[0] else jf._train_flags()
    key = (_engine._tensor_signature(*batch), flags, context._context["device_target"], _seed._global_seed)
    return jf._fast.get(key)


def _check_args(fn, dataset, sink_size, jit_config, input_signature):
    if not callable(fn):
        raise TypeError(f"For 'data_sink', the argument 'fn' must be callable, but got {type(fn).__name__}.")
    if not (hasattr(dataset, "create_tuple_iterator") and hasattr(dataset, "get_dataset_size")):
        raise TypeError(f"For 'data_sink', the argument 'dataset' must be a Dataset (kiln.dataset), but got "
                        f"{type(dataset).__name__}.")
    if isinstance(sink_size, bool) or not isinstance(sink_size, int):
        raise TypeError(f"For 'data_sink', the type of 'sink_size' should be 'int', but got type "
                        f"'{type(sink_size).__name__}'.")
    if sink_size <= 0:
        raise ValueError(f"For 'data_sink', the 'sink_size' must be positive, but got sink_size {sink_size}.")
    if jit_config is not None and not isinstance(getattr(jit_config, "jit_config_dict", None), dict):
        raise TypeError(f"For 'data_sink', the argument 'jit_config' must be None or a JitConfig, but got "
                        f"{type(jit_config).__name__}.")
    if input_signature is not None:
        sig = input_signature if isinstance(input_signature, (list, tuple)) else [input_signature]
        for s in sig:
            if not isinstance(s, Tensor):
                raise TypeError(f"For 'data_sink', 'input_signature' must be a Tensor or a list/tuple of Tensors, "
                                f"but got an element of type {type(s).__name__}.")
    size = dataset.get_dataset_size()
    if isinstance(size, int) and size == 0:
        raise ValueError("For 'data_sink', the dataset is empty (get_dataset_size() is 0).")


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """Returns a function that, on each call, runs `fn` on the next `sink_size` batches of `dataset` and returns
    the outputs of the last of those steps (MindSpore's `data_sink`).

    Args:
        fn (Callable): the step, called as `fn(*columns)` with the dataset's columns of one batch as Tensors
            (positional, in column order); it may return Tensors or any structure of them (a tuple, a dict).
            It is compiled as `kiln.jit` compiles it (a JitFunction is used as is); see kiln.jit for what a
            compiled function may do.
        dataset (Dataset): a kiln.dataset pipeline (anything with `create_tuple_iterator(num_epochs, output_numpy)`
            and `get_dataset_size()`). It is read epoch after epoch without end: step k of the sink function's
            life uses batch k mod (batches per epoch), as MindSpore's data queue does.
        sink_size (int): steps per call, > 0. Default 1.
        jit_config (JitConfig): accepted for compatibility (a MindSpore JitConfig, or None). Kiln always compiles
            the step (MindSpore runs it in PyNative when None; the numbers are the same up to float rounding).
        input_signature (Tensor | list/tuple of Tensors): the shapes/dtypes the batches must have (-1 or None in a
            shape: any size); a batch that differs raises TypeError (dtype) or ValueError (shape). Default None.

    Returns:
        Function: `sink_process()`, taking no arguments; each call returns the last step's outputs (what `fn`
        returns). Unlike MindSpore (Ascend/GPU only), it runs on every device, the CPU included.

    Raises:
        TypeError: `fn` not callable, `dataset` not a Dataset, `sink_size` not an int, a bad `jit_config` or
            `input_signature`; ValueError: `sink_size` <= 0, an empty dataset.
        From a call: the dataset's own exception (with its traceback) when the dataset fails; the step's error
        (ValueError/TypeError...) naming the batch's shapes and the shapes compiled so far when the step cannot run
        on a batch; KeyboardInterrupt on Ctrl-C (checked between steps). After any of these the sink function is
        shut down (its thread joined) and further calls raise RuntimeError.
    """
    _check_args(fn, dataset, sink_size, jit_config, input_signature)
    jf = fn if isinstance(fn, _jit.JitFunction) else _jit.JitFunction(fn, input_signature)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    state = _Sink(jf, dataset, sink_size, input_signature, name)

    @functools.wraps(fn, updated=())
    def sink_process(*args, **kwargs):
        if args or kwargs:
            raise TypeError(f"For 'data_sink', the sink function of '{name}' takes no arguments (its inputs come "
                            f"from the dataset), but got {len(args)} positional and {len(kwargs)} keyword.")
        return state.call()

    sink_process._kiln_sink = state  # for tests and kiln.train.Model
    weakref.finalize(sink_process, state.shutdown)
    return sink_process
