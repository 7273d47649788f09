"""kiln.Tensor: the C++ tensor (`kiln._core.Tensor`) with MindSpore's Python API attached.

`Tensor(input_data=None, dtype=None, shape=None, init=None)` as MindSpore 2.x (../shared/reference/mindspore_api.md
§2.1): NumPy arrays keep their dtype, Python floats / float lists give Float32, ints Int64, bools Bool; `dtype`
converts. Ops return Tensors of this same class, so there is no wrapping cost per op."""
import numbers

import numpy as np

from .._loader import _core
from . import _indexing
from .._args import axes_arg, dtype_arg, int_arg, shape_arg
from . import _views
from . import dtype as mstype
from ._format import shortest_float, tensor_repr

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
    """NumPy's str of the values (MindSpore's Tensor.__str__): float32 0.1 prints as 0.1. BFloat16 values print as
    MindSpore 2.10 prints them (NumPy's str of its bfloat16 array): each as C's "%f", one space apart, unpadded:
    `[1.500000 -2.250000 0.100098]`."""
    if self._symbolic:
        return _repr(self)
    a = _asnumpy_for_print(self)
    if self.dtype == mstype.bfloat16:
        return np.array2string(a, separator=" ", formatter={"float_kind": lambda v: "%f" % v})
    return str(a)


def _check_one(self, what):
    if self.size == 0 and what == "bool":  # NumPy 2 (and MindSpore) refuse the truth value of an empty tensor
        raise ValueError("The truth value of an empty Tensor is ambiguous: it has no elements (shape "
                         f"{list(self.shape)}). Use `tensor.size > 0` to check that a Tensor is not empty.")
    if self.size != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous."
                         if what == "bool" else "Only one element tensors can be converted to Python scalars")


def _symbolic_error(what):
    from .._compiler.capture import symbolic_error
    return symbolic_error(what)


def _bool(self):
    if self._symbolic:
        raise _symbolic_error("`if`/`while`/bool()")
    _check_one(self, "bool")
    if mstype.is_complex(self.dtype):  # nonzero when either part is (NumPy, MindSpore 2.10)
        return bool(self.asnumpy().reshape(-1)[0])
    return bool(self._item())


def _float(self):
    if self._symbolic:
        raise _symbolic_error("float()")
    _check_one(self, "float")
    if mstype.is_complex(self.dtype):  # Python's float(complex) refuses too
        raise TypeError(f"float() of a {self.dtype} Tensor: take ops.real or abs first.")
    return float(self._item())


def _exact_int(t):
    """The value of a one-element integer tensor as a Python int, exact (through the double of _item, an Int64 or
    UInt64 value above 2**53 would be rounded)."""
    return int(t.asnumpy().reshape(-1)[0])


def _complex(self):
    if self._symbolic:
        raise _symbolic_error("complex()")
    _check_one(self, "complex")
    if mstype.is_complex(self.dtype):
        return complex(self.asnumpy().reshape(-1)[0])
    return complex(self._item())


def _int(self):
    if self._symbolic:
        raise _symbolic_error("int()")
    _check_one(self, "int")
    if mstype.is_complex(self.dtype):  # Python's int(complex) refuses too
        raise TypeError(f"int() of a {self.dtype} Tensor: take ops.real or abs first.")
    if self.dtype in mstype.int_type:
        return _exact_int(self)
    return int(self._item())


def _index(self):
    if self.dtype not in mstype.int_type or self.size != 1:
        raise TypeError("Only integer tensors with one element can be used as an index.")
    return _exact_int(self)


def _len(self):
    if self.ndim == 0:
        raise TypeError("Not support len of a 0-D tensor")
    return self.shape[0]


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _bitwise(fn, symbol, reflected=False):
    """Tensor's &, |, ^ (MindSpore's BitwiseAnd/Or/Xor): the bitwise result of integer tensors, the logical one of
    Bool tensors, dtypes promoted (int32 & int64 gives Int64; a Python int or bool keeps the tensor's dtype, a Bool
    tensor with an int gives Int64). Float operands raise TypeError naming the op, as MindSpore's."""
    def op(self, other):
        if not isinstance(other, (bool, int, Tensor, np.ndarray)):
            raise TypeError(f"unsupported operand type(s) for {symbol}: 'Tensor' and '{type(other).__name__}'")
        return fn(other, self) if reflected else fn(self, other)
    return op


def _item(self, index=None):
    """The value of a one-element tensor as a Python scalar (MindSpore 2.5+; index selects an element)."""
    t = self if index is None else self[index]
    if t._symbolic:
        raise _symbolic_error("item()")
    if t.size != 1:
        raise ValueError("The tensor should have only one element, but got shape "
                         f"{list(t.shape)}; use item(index) or asnumpy().")
    dt = t.dtype
    if dt in _ITEM_FLOATS:  # the common case first: one identity test for float32 (no scan of the integer dtypes)
        return t._item()
    if dt in mstype.int_type:
        return _exact_int(t)
    if dt in mstype.complex_type:
        return complex(t.asnumpy().reshape(-1)[0])
    v = t._item()
    if dt == mstype.bool_:
        return bool(v)
    return float(v)


# float32 first: `in` on a tuple tests identity before equality, so the most common dtype costs one comparison
_ITEM_FLOATS = (mstype.float32, mstype.float64, mstype.float16, mstype.bfloat16)


def _astype(self, dtype, copy=True):
    """self converted to `dtype`; a new tensor (copy=True, MindSpore's default) even when the dtype is already
    `dtype`, so that a write into the result does not reach self."""
    y = _core.cast(self, dtype_arg("Tensor.astype", "dtype", dtype))
    if copy and not y._symbolic and y._shares_storage(self):
        y = _core.tensor_copy(y)
    return y


# The view methods (reshape/view, transpose/permute, T, mT, squeeze, expand_dims, unsqueeze, flatten, ravel,
# __getitem__ and __setitem__) are C++ (python/src/bind_views.cpp): plain int arguments on a concrete tensor
# outside a trace are handled there with the same ops and view record as the functions below, which are their
# fallbacks (registered with _core._set_view_fallbacks at the end of this module) for every other argument, in
# graph mode and for errors.
def _view_op(self, y, step):
    """y = a view op of self; y remembers self (see _views), so that a functional write through y reaches self."""
    return _views.note_view(self, y, step)


def _reshape_to(self, shape):
    y = _core.reshape(self, list(shape))
    return _view_op(self, y, ("reshape", tuple(y.shape)))


def _reshape(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return _reshape_to(self, shape_arg("Tensor.reshape", "shape", shape))


def _transpose_to(self, axes):
    axes = list(axes)
    y = _core.transpose(self, axes)
    return _view_op(self, y, ("transpose", tuple(axes)))


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    if axes is None or (isinstance(axes, (tuple, list)) and not axes):
        axes = tuple(range(self.ndim - 1, -1, -1))
    return _transpose_to(self, shape_arg("Tensor.transpose", "axes", axes))


def _squeeze(self, axis=None):
    axes = [] if axis is None else list(shape_arg("Tensor.squeeze", "axis", axis))
    y = _core.squeeze(self, axes)
    return _view_op(self, y, ("squeeze", axes, tuple(y.shape)))


def _expand_dims(self, axis):
    axis = int_arg("Tensor.expand_dims", "axis", axis)
    y = _core.expand_dims(self, axis)
    return _view_op(self, y, ("expand_dims", axis, tuple(y.shape)))


def _array(self, dtype=None, copy=None):
    a = self.asnumpy()  # a BFloat16 tensor gives an ml_dtypes.bfloat16 array (MindSpore 2.10: its own bfloat16)
    return a.astype(dtype) if dtype is not None else a


def _rebuild_tensor(array, dtype_name):
    t = Tensor._from_numpy(np.asarray(array, order="C"))
    return _core.cast(t, getattr(mstype, dtype_name)) if dtype_name == "bfloat16" else t


def _reduce(self):
    """Pickling (and copy.deepcopy): the values and dtype."""
    return (_rebuild_tensor, (_asnumpy_for_print(self).copy(), mstype.dtype_numpy_name(self.dtype)))


_FLOAT_TYPES = frozenset("eEfFgGn%")
_INT_TYPES = frozenset("bcdoxXn")


def _format(self, spec):
    """format(tensor, spec) / f-strings. An empty spec gives str(tensor) (f"{t}" == str(t), as MindSpore). A spec
    applies to a one-element tensor's value (f"{loss:.4f}"): with a presentation type (f, e, g, %, d, ...) the exact
    value is formatted; without one (alignment/width only) the value's shortest form in its dtype (float32 0.1 as
    0.1). TypeError for a spec on a tensor of another size; RuntimeError inside compiled code (value unknown)."""
    if not spec:
        return str(self)
    if self._symbolic:
        raise RuntimeError(f"Formatting a tensor's value with the format spec {spec!r} inside a compiled (graph-mode) "
                           "function: the value is not known while compiling. Return the tensor and format it "
                           "outside, or print it at run time with ops.print_.")
    if self.size != 1:
        raise TypeError(f"For 'Tensor.__format__', the format spec {spec!r} applies only to a one-element tensor, but "
                        f"got shape {list(self.shape)}; use f\"{{t}}\" (str) or format the elements of t.asnumpy().")
    v = self.item()
    kind = spec[-1]
    if isinstance(v, bool) and kind not in _INT_TYPES and kind not in _FLOAT_TYPES:
        v = str(v)
    elif isinstance(v, float) and kind not in _FLOAT_TYPES:
        v = shortest_float(v, str(self.dtype))
    return format(v, spec)


def _ops():
    """kiln.ops, imported when a method first needs it (kiln.ops imports this module)."""
    from .. import ops
    return ops


def _tile_dims(dims, reps, extra):
    """Tensor.tile's dims, as MindSpore 2.10 takes them: t.tile((2, 2)), t.tile(2, 2), t.tile(2) (= (2,)), or the
    keyword dims= / reps=."""
    if extra:
        raise TypeError(f"Tensor.tile() got an unexpected keyword argument '{next(iter(extra))}'.")
    if reps is not None:
        if dims:
            raise TypeError("For 'Tensor.tile', give the dims either positionally or as 'reps', not both.")
        dims = (reps,)
    if not dims:
        raise TypeError("For 'Tensor.tile', 'dims' is required (a tuple or list of ints, or ints).")
    if len(dims) == 1:
        d = dims[0]
        return (d,) if isinstance(d, int) and not isinstance(d, bool) else d
    return tuple(dims)


def _reduce_as(kind, x, dtype, axes, keep_dims):
    from .._reduce_dtype import reduce_as  # (it imports kiln.common)
    return reduce_as(kind, x, dtype, axes, keep_dims)


def _logical_reduce():
    from ..ops import logical_reduce  # (ops imports this module)
    return logical_reduce


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
    "__pos__": lambda self: self,
    "__and__": _bitwise(_core.bitwise_and, "&"), "__rand__": _bitwise(_core.bitwise_and, "&", True),
    "__or__": _bitwise(_core.bitwise_or, "|"), "__ror__": _bitwise(_core.bitwise_or, "|", True),
    "__xor__": _bitwise(_core.bitwise_xor, "^"), "__rxor__": _bitwise(_core.bitwise_xor, "^", True),
    "item": _item,
    "__complex__": _complex,
    "__reduce__": _reduce,
    "__format__": _format,
    "__deepcopy__": lambda self, memo: _copy(self),
    "__copy__": lambda self: self,
    "numpy": lambda self: self.asnumpy(),
    "tolist": lambda self: _asnumpy_for_print(self).tolist(),
    "astype": _astype,
    "to": lambda self, dtype: _core.cast(self, dtype_arg("Tensor.to", "dtype", dtype)),
    "float": lambda self: _core.cast(self, mstype.float32),
    "half": lambda self: _core.cast(self, mstype.float16),
    "int": lambda self: _core.cast(self, mstype.int32),
    "long": lambda self: _core.cast(self, mstype.int64),
    "bool": lambda self: _core.cast(self, mstype.bool_),
    "expand_as": lambda self, other: _core.broadcast_to(self, list(_other_tensor(other, "expand_as").shape)),
    "sum": lambda self, axis=None, dtype=None, keepdims=False, initial=None:
        _reduce_as("sum", self, None if dtype is None else dtype_arg("Tensor.sum", "dtype", dtype),
                   axes_arg("Tensor.sum", "axis", axis), keepdims),
    "mean": lambda self, axis=None, keep_dims=False: _core.mean(self, axis, keep_dims),
    "prod": lambda self, axis=None, keep_dims=False: _core.prod(self, axis, keep_dims),
    "all": lambda self, axis=None, keep_dims=False: _logical_reduce().all(self, axis, keep_dims),
    "any": lambda self, axis=None, keep_dims=False: _logical_reduce().any(self, axis, keep_dims),
    "max": lambda self, axis=None, keepdims=False, **kw: _core.amax(self, axis, keepdims),
    "min": lambda self, axis=None, keepdims=False, **kw: _core.amin(self, axis, keepdims),
    "split": lambda self, split_size_or_sections, axis=0, *, dim=None: _ops().split(
        self, split_size_or_sections, axis if dim is None else dim),
    "sort": lambda self, axis=-1, descending=False: _ops().sort(self, axis, descending),
    "argsort": lambda self, axis=-1, descending=False: _ops().argsort(self, axis, descending),
    "topk": lambda self, k, dim=None, largest=True, sorted=True: _ops().topk(self, k, dim, largest, sorted),
    "tile": lambda self, *dims, reps=None, **kw: _ops().tile(self, _tile_dims(dims, kw.pop("dims", reps), kw)),
    "argmax": lambda self, axis=None, keepdims=False: _core.argmax(self, axis, keepdims),
    "argmin": lambda self, axis=None, keepdims=False: _core.argmin(self, axis, keepdims),
    "abs": _core.abs, "exp": _core.exp, "log": _core.log, "sqrt": _core.sqrt, "rsqrt": _core.rsqrt,
    "square": _core.square, "sigmoid": _core.sigmoid, "tanh": _core.tanh, "relu": _core.relu, "neg": _core.neg,
    "sign": _core.sign, "add": _core.add, "sub": _core.sub, "mul": _core.mul,
    "maximum": _core.maximum, "minimum": _core.minimum,
    "clip": lambda self, xmin=None, xmax=None: _core.clip(self, xmin, xmax),
    "softmax": lambda self, axis=-1: _core.softmax(self, axis),
    "copy": lambda self: _copy(self),
    "clone": lambda self: _copy(self),
    "dim": lambda self: self.ndim,
    "numel": lambda self: self.size,
    "nelement": lambda self: self.size,
    "is_floating_point": lambda self: self.dtype in _ITEM_FLOATS,
    "assign_value": lambda self, value: _indexing.assign(self, value, "Tensor.assign_value"),
    "set_dtype": lambda self, dtype: _set_dtype(self, dtype),
    # kiln/ops/index_func.py and math_func.py (see the functions' docstrings)
    "flip": lambda self, dims: _ops().flip(self, dims),
    "roll": lambda self, shifts, dims=None: _ops().roll(self, shifts, dims),
    "tril": lambda self, diagonal=0: _ops().tril(self, diagonal),
    "triu": lambda self, diagonal=0: _ops().triu(self, diagonal),
    "masked_fill": lambda self, mask, value: _ops().masked_fill(self, mask, value),
    "gather_elements": lambda self, dim, index: _ops().gather_elements(self, dim, index),
    "nonzero": lambda self, as_tuple=False: _ops().nonzero(self, as_tuple=as_tuple),
    "unbind": lambda self, dim=0: _ops().unbind(self, dim),
    "norm": lambda self, ord=None, dim=None, keepdim=False, *, dtype=None: _ops().norm(self, ord, dim, keepdim,
                                                                                       dtype=dtype),
    "round": lambda self, decimals=0: _ops().round(self, decimals=decimals),
    "lerp": lambda self, end, weight: _ops().lerp(self, end, weight),
    "isclose": lambda self, x2, rtol=1e-05, atol=1e-08, equal_nan=False: _ops().isclose(self, x2, rtol, atol,
                                                                                        equal_nan),
    "logsumexp": lambda self, axis, keepdims=False: _ops().logsumexp(self, axis, keepdims),
    "cumsum": lambda self, axis=None, dtype=None: _ops().cumsum(_reshape_to(self, [-1]) if axis is None else self,
                                                               0 if axis is None else axis, dtype),
    "cumprod": lambda self, dim, dtype=None: _ops().cumprod(self, dim, dtype),
    # Methods of ops declared with @defop (kiln/ops/_opdef.py) are added by kiln.ops when it is imported (div, pow,
    # clamp, matmul, broadcast_to: kiln/ops/function.py).
}


def _other_tensor(other, op):
    if not isinstance(other, Tensor):
        raise TypeError(f"For 'Tensor.{op}', the argument 'other' must be a Tensor, but got {type(other).__name__}.")
    return other


def _set_dtype(t, dtype):
    """MindSpore's Tensor.set_dtype(dtype) (and Parameter.set_dtype): converts the tensor's values to `dtype` IN
    PLACE (the Python object then holds the cast values; a Parameter keeps its name) and returns the dtype, as
    MindSpore 2.10 does. Raises TypeError for something that is not a Kiln/MindSpore dtype."""
    dtype = dtype_arg("Tensor.set_dtype", "dtype", dtype)
    if dtype != t.dtype:
        t._rebind(_core.cast(t, dtype))
    return dtype


def _copy(t):
    """A new tensor with t's values (the TensorCopy op: differentiable, and traced in compiled functions)."""
    return _core.tensor_copy(t)


def _flatten(self, start_dim=0, end_dim=-1):
    start_dim = int_arg("Tensor.flatten", "start_dim", start_dim)
    end_dim = int_arg("Tensor.flatten", "end_dim", end_dim)
    nd = self.ndim
    if nd == 0:
        return _reshape_to(self, [1])
    s, e = start_dim % nd, end_dim % nd
    shape = list(self.shape[:s]) + [-1] + list(self.shape[e + 1:])
    return _reshape_to(self, shape)


_SHAREABLE_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8,
                                                    np.int16, np.int32, np.int64, np.float16, np.float32, np.float64,
                                                    np.complex64, np.complex128))


def _from_numpy(array):
    """A Tensor SHARING the memory of NumPy array `array` (MindSpore's Tensor.from_numpy): a write to the array is
    seen by the tensor and an in-place write to the tensor (setitem, ops.assign, an optimizer step on a Parameter
    made from it) by the array; the tensor keeps the array's memory alive. Same dtype and shape.

    Shared when the array is C-contiguous, aligned, writable and in native byte order. Otherwise the values are
    COPIED into a new C-contiguous, native-order tensor (MindSpore also copies non-contiguous arrays; Kiln copies
    read-only arrays too, so that an in-place op can never write into memory NumPy marked read-only).

    Raises TypeError for a non-ndarray (use Tensor(data)) and for a dtype Kiln lacks (strings, objects: convert with
    array.astype first)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"For 'Tensor.from_numpy', the input must be a numpy.ndarray, but got "
                        f"{type(array).__name__}; use Tensor(data) for other inputs.")
    native = array.dtype.newbyteorder("=")
    if native not in _SHAREABLE_DTYPES:
        raise TypeError(f"For 'Tensor.from_numpy', the array dtype {array.dtype} is not supported; Kiln supports "
                        "bool, uint8/16/32/64, int8/16/32/64, float16/32/64 and complex64/128 arrays (convert with "
                        "array.astype(...)).")
    f = array.flags
    if f.c_contiguous and f.aligned and f.writeable and array.dtype.isnative:
        return Tensor._share_numpy(array)
    return Tensor._from_numpy(np.array(array, dtype=native, order="C", copy=True))


def _as_method(fn):
    # Functions of the C++ module are not descriptors: wrap them so that they bind `self`.
    if type(fn).__name__ == "nb_func":
        def method(self, *args, **kwargs):
            return fn(self, *args, **kwargs)
        method.__name__ = fn.__name__
        method.__doc__ = fn.__doc__
        return method
    return fn


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False, device=None):
    """MindSpore 2.x's lowercase `mindspore.tensor(...)`: the same as Tensor(input_data, dtype, shape, init,
    const_arg) (see Tensor). `device` may be None or "CPU" (Kiln's one target today); ValueError otherwise."""
    if device not in (None, "CPU"):
        raise ValueError(f"For 'tensor', the 'device' must be None or 'CPU' on this build, but got {device!r}.")
    return Tensor(input_data, dtype=dtype, shape=shape, init=init, const_arg=const_arg)


def _data_get(self):
    """MindSpore's Tensor.data: a Tensor sharing this one's storage, outside autodiff (writes through it change
    this tensor)."""
    return _core.detach(self)


def _data_set(self, value):
    """`t.data = v`: copies v's values into t in place (v broadcast to t's shape and cast to its dtype). Kiln tensors
    keep their shape: a v of another shape raises ValueError (MindSpore would replace t's shape too)."""
    _indexing.assign(self, value, "Tensor.data")


for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _as_method(_fn))
# The Python code of the C++ view methods (bind_views.cpp), for the calls their fast path leaves to it.
_VIEW_FALLBACKS = {
    "__getitem__": _indexing.getitem,
    "__setitem__": _indexing.setitem,
    "reshape": _reshape,  # also Tensor.view
    "transpose": _transpose,  # also Tensor.permute
    "T": lambda self: _transpose(self),
    "mT": lambda self: _transpose_to(self, list(range(self.ndim - 2)) + [self.ndim - 1, self.ndim - 2]),
    "flatten": lambda self, start_dim=0, end_dim=-1: _flatten(self, start_dim, end_dim),
    "ravel": lambda self: _reshape_to(self, [-1]),
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "unsqueeze": lambda self, dim: _expand_dims(self, int_arg("Tensor.unsqueeze", "dim", dim)),
}
_core._set_view_fallbacks(_VIEW_FALLBACKS)
# The in-place `*_` methods and the provisional ones (kiln/common/_tensor_methods.py); a provisional method is
# replaced by the method of an op declared later with @defop(tensor=...) (kiln/ops/_opdef.py).
from ._tensor_methods import INPLACE_METHODS as _INPLACE, PROVISIONAL_METHODS as _PROVISIONAL  # noqa: E402 (after Tensor's methods)
for _name, _fn in _INPLACE.items():
    setattr(Tensor, _name, _fn)
for _name, _fn in _PROVISIONAL.items():
    _fn._provisional = True
    setattr(Tensor, _name, _fn)
Tensor.data = property(_data_get, _data_set)
Tensor.from_numpy = staticmethod(_from_numpy)
# Where the class is found in Python: kiln.common.tensor.Tensor (as MindSpore's is mindspore.common.tensor.Tensor);
# `kiln.Tensor` is the same object. Under `python -m kiln.compat` the name reads mindspore.common.tensor (kiln/compat).
Tensor.__module__ = "kiln.common.tensor"
Tensor.__doc__ = __doc__
from . import _tensor_extra  # noqa: E402  (device, resize, index, init_data)
Tensor.device = property(_tensor_extra.device)
Tensor.resize = _tensor_extra.resize
Tensor.index = _tensor_extra.index
Tensor.init_data = _tensor_extra.tensor_init_data
