"""Cell.to_float for a Cell's own Parameters (MindSpore's rule: inside a cell set to float16/bfloat16, every
operator gets its float inputs in that dtype — the Parameters the cell reads too).

A Cell's inputs are cast on entry (Cell._call_slow). Built-in layers that cast their own weights (Dense, the
convolutions: class attribute `_mp_casts_params = True`) need nothing more. For any other cell that owns trainable
Parameters (a user's layer with `self.w = Parameter(...)`, nn.LayerNorm, nn.PReLU, the RNN layers, ...), to_float
gives the instance a subclass of its class (same name, module and qualified name; cached per class) whose
`__getattribute__` returns `self.<param>` cast to the cell's dtype while — and only while — that cell's construct
runs on the current thread (a thread-local set of active cells). Outside construct (optimizers, checkpoints,
`net.w.set_data(...)`) the attribute is the Parameter itself. The cast is an ordinary op, so the gradient comes
back to the float32 Parameter in float32 (the master weight) and a compiled graph shows the Cast node.

Only trainable Parameters (requires_grad=True) are cast: state a construct updates in place (BatchNorm's moving
statistics) must stay the Parameter itself.
"""
import threading
import weakref

from ..ops import _kernels
from ..common import dtype as mstype
from ..common.parameter import Parameter

_local = threading.local()  # .active: {id(cell): depth} of cells whose construct runs with cast Parameters
_SUBCLASSES = weakref.WeakKeyDictionary()  # class -> its casting subclass
_lock = threading.Lock()
_get = object.__getattribute__


def _cast_getattribute(self, name):
    value = _get(self, name)
    if type(value) is Parameter or isinstance(value, Parameter):
        active = getattr(_local, "active", None)
        if active and id(self) in active and value.requires_grad:
            dt = _get(self, "__dict__").get("_mp_dtype")
            if dt is not None and value.dtype != dt and mstype.is_float(value.dtype):
                return _kernels.cast(value, dt)
    return value


def _casting_class(cls):
    with _lock:
        sub = _SUBCLASSES.get(cls)
        if sub is None:
            sub = type(cls.__name__, (cls,), {"__getattribute__": _cast_getattribute, "__module__": cls.__module__,
                                             "__qualname__": cls.__qualname__, "_mp_cast_subclass": True})
            _SUBCLASSES[cls] = sub
    return sub


def enable(cell, dtype):
    """Called by Cell.to_float(dtype) for each cell: cells that own trainable Parameters and do not cast them
    themselves get the casting subclass (low-precision dtypes only)."""
    cls = type(cell)
    if dtype == mstype.float32 or getattr(cls, "_mp_casts_params", False) or getattr(cls, "_mp_cast_subclass", False):
        return
    if not any(p is not None and p.requires_grad for p in cell.__dict__["_params"].values()):
        return
    cell.__class__ = _casting_class(cls)


def run(cell, fn, *args):
    """fn(*args) with `cell`'s Parameters read in its mixed-precision dtype on this thread."""
    active = getattr(_local, "active", None)
    if active is None:
        active = _local.active = {}
    key = id(cell)
    active[key] = active.get(key, 0) + 1
    try:
        return fn(*args)
    finally:
        n = active[key] - 1
        if n:
            active[key] = n
        else:
            del active[key]
