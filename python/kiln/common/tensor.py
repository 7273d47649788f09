"""kiln.Tensor: the C++ tensor (`kiln._core.Tensor`) with MindSpore's Python API attached.

`Tensor(input_data=None, dtype=None, shape=None, init=None)` as MindSpore 2.x (../shared/reference/mindspore_api.md
§2.1): NumPy arrays keep their dtype, Python floats / float lists give Float32, ints Int64, bools Bool; `dtype`
converts. Ops return Tensors of this same class, so there is no wrapping cost per op."""
import numbers

import numpy as np

from .._loader import _core
from . import _indexing
from . import dtype as mstype
from ._format import tensor_repr

Tensor = _core.Tensor


def _scalar_like(x):
    return isinstance(x, (numbers.Number, np.generic, np.ndarray, list, tuple, Tensor))


def _asnumpy_for_print(t):
    if t.dtype == mstype.bfloat16:
        return _core.cast(t, mstype.float32).asnumpy()
    return t.asnumpy()


def _repr(self):
    if self._symbolic:
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=<symbolic: being compiled>)"
    return tensor_repr(_asnumpy_for_print(self), str(self.dtype), self.shape)


def _str(self):
    if self._symbolic:
        return _repr(self)
    return str(_asnumpy_for_print(self))


def _check_one(self, what):
    if self.size != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous."
                         if what == "bool" else "Only one element tensors can be converted to Python scalars")


def _symbolic_error(what):
    from .jit import symbolic_error
    return symbolic_error(what)


def _bool(self):
    if self._symbolic:
        raise _symbolic_error("`if`/`while`/bool()")
    _check_one(self, "bool")
    return bool(self._item())


def _float(self):
    if self._symbolic:
        raise _symbolic_error("float()")
    _check_one(self, "float")
    return float(self._item())


def _int(self):
    if self._symbolic:
        raise _symbolic_error("int()")
    _check_one(self, "int")
    return int(self._item())


def _index(self):
    if self.dtype not in mstype.int_type or self.size != 1:
        raise TypeError("Only integer tensors with one element can be used as an index.")
    return int(self._item())


def _len(self):
    if self.ndim == 0:
        raise TypeError("Not support len of a 0-D tensor")
    return self.shape[0]


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _logical(fn):
    def op(self, other):
        if not isinstance(other, (bool, int, Tensor, np.ndarray)):
            raise TypeError(f"Unsupported operand type(s) for logical op: 'Tensor' and '{type(other).__name__}'")
        return fn(self, other)
    return op


def _item(self, index=None):
    """The value of a one-element tensor as a Python scalar (MindSpore 2.5+; index selects an element)."""
    t = self if index is None else self[index]
    if t._symbolic:
        raise _symbolic_error("item()")
    if t.size != 1:
        raise ValueError("The tensor should have only one element, but got shape "
                         f"{list(t.shape)}; use item(index) or asnumpy().")
    v = t._item()
    if t.dtype == mstype.bool_:
        return bool(v)
    if t.dtype in mstype.int_type:
        return int(v)
    return float(v)


def _astype(self, dtype, copy=True):
    return _core.cast(self, mstype.to_dtype(dtype))


def _reshape(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return _core.reshape(self, list(shape))


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    if not axes:
        axes = tuple(range(self.ndim - 1, -1, -1))
    return _core.transpose(self, list(axes))


def _array(self, dtype=None, copy=None):
    a = _asnumpy_for_print(self)
    return a.astype(dtype) if dtype is not None else a


def _rebuild_tensor(array, dtype_name):
    t = Tensor._from_numpy(np.asarray(array, order="C"))
    return _core.cast(t, getattr(mstype, dtype_name)) if dtype_name == "bfloat16" else t


def _reduce(self):
    """Pickling (and copy.deepcopy): the values and dtype."""
    return (_rebuild_tensor, (_asnumpy_for_print(self).copy(), mstype.dtype_numpy_name(self.dtype)))


def _format(self, spec):
    if self.size == 1 and not self._symbolic:
        return format(self.item(), spec)
    return format(str(self), spec)


_METHODS = {
    "__repr__": _repr,
    "__str__": _str,
    "__bool__": _bool,
    "__float__": _float,
    "__int__": _int,
    "__index__": _index,
    "__len__": _len,
    "__iter__": _iter,
    "__array__": _array,
    "__array_priority__": 100,
    "__getitem__": _indexing.getitem,
    "__setitem__": _indexing.setitem,
    "__pos__": lambda self: self,
    "__and__": _logical(_core.logical_and), "__rand__": _logical(_core.logical_and),
    "__or__": _logical(_core.logical_or), "__ror__": _logical(_core.logical_or),
    "__xor__": _logical(_core.logical_xor), "__rxor__": _logical(_core.logical_xor),
    "item": _item,
    "__reduce__": _reduce,
    "__format__": _format,
    "__deepcopy__": lambda self, memo: _copy(self),
    "__copy__": lambda self: self,
    "numpy": lambda self: self.asnumpy(),
    "tolist": lambda self: _asnumpy_for_print(self).tolist(),
    "astype": _astype,
    "to": lambda self, dtype: _astype(self, dtype),
    "float": lambda self: _core.cast(self, mstype.float32),
    "half": lambda self: _core.cast(self, mstype.float16),
    "int": lambda self: _core.cast(self, mstype.int32),
    "long": lambda self: _core.cast(self, mstype.int64),
    "bool": lambda self: _core.cast(self, mstype.bool_),
    "reshape": _reshape,
    "view": _reshape,
    "transpose": _transpose,
    "permute": _transpose,
    "T": property(lambda self: _transpose(self)),
    "mT": property(lambda self: _core.transpose(self, list(range(self.ndim - 2)) + [self.ndim - 1, self.ndim - 2])),
    "flatten": lambda self, start_dim=0, end_dim=-1: _flatten(self, start_dim, end_dim),
    "ravel": lambda self: _core.reshape(self, [-1]),
    "squeeze": lambda self, axis=None: _core.squeeze(self, [] if axis is None else
                                                     ([axis] if isinstance(axis, int) else list(axis))),
    "expand_dims": lambda self, axis: _core.expand_dims(self, axis),
    "unsqueeze": lambda self, dim: _core.expand_dims(self, dim),
    "broadcast_to": lambda self, shape: _core.broadcast_to(self, list(shape)),
    "expand_as": lambda self, other: _core.broadcast_to(self, list(_other_tensor(other, "expand_as").shape)),
    "sum": lambda self, axis=None, dtype=None, keepdims=False, initial=None:
        _core.sum(self if dtype is None else _core.cast(self, mstype.to_dtype(dtype)), axis, keepdims),
    "mean": lambda self, axis=None, keep_dims=False: _core.mean(self, axis, keep_dims),
    "prod": lambda self, axis=None, keep_dims=False: _core.prod(self, axis, keep_dims),
    "max": lambda self, axis=None, keepdims=False, **kw: _core.amax(self, axis, keepdims),
    "min": lambda self, axis=None, keepdims=False, **kw: _core.amin(self, axis, keepdims),
    "argmax": lambda self, axis=None, keepdims=False: _core.argmax(self, axis, keepdims),
    "argmin": lambda self, axis=None, keepdims=False: _core.argmin(self, axis, keepdims),
    "abs": _core.abs, "exp": _core.exp, "log": _core.log, "sqrt": _core.sqrt, "rsqrt": _core.rsqrt,
    "square": _core.square, "sigmoid": _core.sigmoid, "tanh": _core.tanh, "relu": _core.relu, "neg": _core.neg,
    "sign": _core.sign, "pow": _core.pow, "add": _core.add, "sub": _core.sub, "mul": _core.mul, "div": _core.div,
    "matmul": _core.matmul, "maximum": _core.maximum, "minimum": _core.minimum,
    "clip": lambda self, xmin=None, xmax=None: _core.clip(self, xmin, xmax),
    "clamp": lambda self, min=None, max=None: _core.clip(self, min, max),
    "softmax": lambda self, axis=-1: _core.softmax(self, axis),
    "copy": lambda self: _copy(self),
    "clone": lambda self: _copy(self),
    "dim": lambda self: self.ndim,
    "numel": lambda self: self.size,
    "nelement": lambda self: self.size,
    "is_floating_point": lambda self: mstype.is_float(self.dtype),
    "assign_value": lambda self, value: _core.assign(self, value),
    "set_dtype": lambda self, dtype: _core.cast(self, mstype.to_dtype(dtype)),
}


def _other_tensor(other, op):
    if not isinstance(other, Tensor):
        raise TypeError(f"For 'Tensor.{op}', the argument 'other' must be a Tensor, but got {type(other).__name__}.")
    return other


def _copy(t):
    return _core.Tensor._from_numpy(np.array(t.asnumpy(), copy=True)) if t.dtype != mstype.bfloat16 else \
        _core.cast(_core.cast(t, mstype.float32), mstype.bfloat16)


def _flatten(self, start_dim=0, end_dim=-1):
    nd = self.ndim
    if nd == 0:
        return _core.reshape(self, [1])
    s, e = start_dim % nd, end_dim % nd
    shape = list(self.shape[:s]) + [-1] + list(self.shape[e + 1:])
    return _core.reshape(self, shape)


def _from_numpy(array):
    """A Tensor from a NumPy array (a copy; MindSpore shares memory here — Kiln's allocator owns its buffers)."""
    return Tensor._from_numpy(np.asarray(array, order="C"))


def _as_method(fn):
    # Functions of the C++ module are not descriptors: wrap them so that they bind `self`.
    if type(fn).__name__ == "nb_func":
        def method(self, *args, **kwargs):
            return fn(self, *args, **kwargs)
        method.__name__ = fn.__name__
        method.__doc__ = fn.__doc__
        return method
    return fn


for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _as_method(_fn))
Tensor.from_numpy = staticmethod(_from_numpy)
Tensor.__module__ = "kiln"
Tensor.__doc__ = __doc__
