"""Deferred parameter initialization: MindSpore 2.10's `nn.no_init_parameters()` (also `nn.utils.no_init_parameters`)
and `Tensor.init_data` / `Parameter.init_data`.

Kiln's `initializer(init, shape, dtype)` draws the values at once. Inside `with nn.no_init_parameters():` it does
not: it returns a Tensor of zeros of that shape and dtype that remembers its Initializer ("pending"), and a
Parameter built from such a Tensor stays pending (no values drawn, no float64 scratch array: the point is to skip the
cost of initializing a large network whose values a checkpoint then replaces). A pending Parameter is initialized
  - by `param.init_data()` or `cell.init_parameters_data()` (the Initializer runs then, drawing its seed from NumPy's
    global RNG at that moment, see kiln/common/initializer.py), or
  - automatically by the first call of a Cell holding it (MindSpore: "If the network is executed, the framework will
    automatically call this interface"), and before any function is compiled (jit / GRAPH_MODE: every pending
    Parameter alive is initialized first, since an initialization inside a trace would become a graph write), or
  - never, when `param.set_data(...)` (load_checkpoint / load_param_into_net / load_state_dict) replaces the values
    first: set_data ends the pending state.
Until then the Parameter holds zeros. A plain Tensor made by initializer() inside the context (not wrapped in a
Parameter) is pending as well: call `init_data()` on it before reading it.

The switch is per thread (a counter, so the context nests): one thread constructing a network without
initialization does not change what another thread's initializer() does. (MindSpore sets a class attribute, global
to the process.)"""
import contextlib
import threading
import weakref

_state = threading.local()
_pending = {}  # id -> weak reference of every pending Tensor/Parameter alive (for materialize_all); by id, since
# a Tensor's == is elementwise (a WeakSet would compare them)
_pending_lock = threading.RLock()  # reentrant: a weakref callback may run (GC) while it is held


def active():
    """True inside `nn.no_init_parameters()` in this thread."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def no_init_parameters():
    """MindSpore's `nn.no_init_parameters()`: a context manager under which `initializer(...)` (and therefore every
    Parameter a Cell creates from an initializer: Dense, Conv, BatchNorm, ...) defers drawing its values; see the
    module docstring for when they are drawn. Parameters made from a Tensor, a NumPy array or a number are not
    affected (their values exist already). Yields None; per thread; nests."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def mark_pending(tensor, init, shape, dtype):
    """Records on `tensor` the (Initializer, shape, dtype) that init_data() will run."""
    tensor.__dict__["_kiln_pending_init"] = (init, shape, dtype)
    key = id(tensor)

    def gone(_, key=key):
        with _pending_lock:
            if _pending.get(key) is ref:
                del _pending[key]

    ref = weakref.ref(tensor, gone)
    with _pending_lock:
        _pending[key] = ref
    return tensor


def mark_initialized(tensor, init):
    """Records that `tensor` came from initializer(`init`) with its values already drawn: init_data() returns it once
    (MindSpore: init_data can be called once for a Tensor made by initializer)."""
    tensor.__dict__["_kiln_init"] = init
    return tensor


def pending(tensor):
    """The pending (Initializer, shape, dtype) of `tensor`, or None."""
    d = getattr(tensor, "__dict__", None)
    return None if d is None else d.get("_kiln_pending_init")


def clear(tensor):
    d = tensor.__dict__
    d.pop("_kiln_pending_init", None)
    d.pop("_kiln_init", None)
    with _pending_lock:
        ref = _pending.get(id(tensor))
        if ref is not None and ref() is tensor:
            del _pending[id(tensor)]


def materialize_all():
    """Draws the values of every pending Tensor/Parameter alive. Run (eagerly) before a function is traced for
    compilation: a Parameter initialized inside a trace would become a write in the graph, repeated at every run."""
    if not _pending:
        return
    with _pending_lock:
        pending = [r() for r in _pending.values()]
    for t in pending:
        if t is not None:
            materialize(t)


def materialize(tensor):
    """Runs the pending Initializer of `tensor` into its storage (in place); no-op when nothing is pending."""
    spec = pending(tensor)
    if spec is None:
        return tensor
    from .. import _engine
    from ..ops import _kernels
    if _engine.tracing():
        raise RuntimeError("init_data: a Parameter whose initialization was deferred (nn.no_init_parameters) can not "
                           "be initialized inside a function being compiled; call init_data() or "
                           "net.init_parameters_data() before.")
    from .initializer import _draw
    init, shape, dtype = spec
    _kernels.assign(tensor, _draw(init, shape, dtype))
    clear(tensor)
    return tensor


def tensor_init_data(self, slice_index=None, shape=None, opt_shard_group=None):
    """MindSpore's Tensor.init_data(slice_index=None, shape=None, opt_shard_group=None): the initialized Tensor for a
    Tensor made by `initializer(...)`: draws its values now if they were deferred (`nn.no_init_parameters`), and
    returns the Tensor itself. Once only, as MindSpore: a second call, or a call on a Tensor not made by
    initializer(), raises TypeError. `slice_index`, `shape` and `opt_shard_group` select a slice of a parameter in
    auto-parallel mode; Kiln runs stand-alone, so they must be None (ValueError otherwise)."""
    for name, value in (("slice_index", slice_index), ("shape", shape), ("opt_shard_group", opt_shard_group)):
        if value is not None:
            raise ValueError(f"For 'Tensor.init_data', '{name}' selects a parameter slice in auto-parallel mode; "
                             f"Kiln runs stand-alone and takes None, but got {value!r}.")
    d = self.__dict__
    if "_kiln_pending_init" not in d and "_kiln_init" not in d:
        raise TypeError("init_data must be set Tensor.init, init can't be None (Tensor.init_data: this Tensor was "
                        "not made by initializer(), or init_data was already called on it).")
    materialize(self)
    clear(self)
    return self
