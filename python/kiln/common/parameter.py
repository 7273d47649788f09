"""Parameter and ParameterTuple (../shared/reference/mindspore_api.md §2.2–2.3).

A Parameter is a Tensor subclass with a name and `requires_grad`. Its storage is updated in place by optimizers
(`ops.assign`, fused optimizer ops), so every holder of the Parameter object sees the new values."""
import numbers

import numpy as np

from .. import _engine
from ..ops import _kernels
from . import dtype as mstype
from .tensor import Tensor
from . import _deferred_init

_PLACEHOLDER = "Parameter"


class Parameter(Tensor):
    """Parameter(default_input, name=None, requires_grad=True, layerwise_parallel=False, parallel_optimizer=True).

    default_input: Tensor (copied), float (0-d Float32), int (0-d Int64), NumPy array or list.
    Raises:
        ValueError: bool data, or a name that is not a str / longer than 1024 characters.
        TypeError: other data types.
    """

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True):
        if isinstance(default_input, bool):
            raise ValueError("Parameter data can not be `bool`")
        if not isinstance(parallel_optimizer, bool):
            raise TypeError("The argument `parallel_optimizer` must be bool type.")
        pending = None
        if isinstance(default_input, Tensor):
            pending = _deferred_init.pending(default_input)
            if pending is not None and not _deferred_init.active():  # made pending, wrapped after the context
                _deferred_init.materialize(default_input)
                pending = None
            data = _copy_tensor(default_input)
        elif isinstance(default_input, (numbers.Number, np.ndarray, np.generic, list, tuple)):
            data = Tensor(default_input)
        else:
            raise TypeError(f"Parameter: default_input of type {type(default_input).__name__!r} is not supported; "
                            "expected a Tensor, number, NumPy array or list.")
        super().__init__(data)
        self._name = None
        self.name = _PLACEHOLDER if name is None or name == "" else name
        self.requires_grad = requires_grad
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer
        if pending is not None:  # nn.no_init_parameters(): the values are drawn by init_data() (_deferred_init.py)
            _deferred_init.mark_pending(self, *pending)

    @property
    def name(self):
        """The parameter's name (str)."""
        return self._name

    @name.setter
    def name(self, value):
        if value is None or value == "":
            value = _PLACEHOLDER
        if not isinstance(value, str):
            raise ValueError(f"The type of the Parameter's name should be 'str', but got {type(value).__name__}.")
        if len(value) > 1024:
            raise ValueError("The length of the Parameter's name should be less than 1024.")
        self._name = value

    @property
    def comm_fusion(self):
        """The fusion type (int >= 0, default 1) of the communication operators inserted for this parameter's
        gradient (MindSpore's Parameter.comm_fusion). Kiln keeps it but fuses by its own buckets (the gradient
        reducer's bucket size), so it changes nothing.

        Raises:
            TypeError: a value that is not an int (or is a bool).
            ValueError: a negative value.
        """
        return getattr(self, "_comm_fusion", 1)

    @comm_fusion.setter
    def comm_fusion(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"For 'Parameter.comm_fusion', the input value must be int, but got "
                            f"'{type(value).__name__}'.")
        if value < 0:
            raise ValueError(f"For 'Parameter.comm_fusion', the input value must be int and must >= 0, but got "
                             f"'{value}'.")
        self._comm_fusion = value

    @property
    def requires_grad(self):
        """Whether the optimizer/trainable_params include this parameter (bool)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"The 'requires_grad' must be bool, but got {type(value).__name__}.")
        self._requires_grad = value

    def __repr__(self):
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __deepcopy__(self, memo):
        """A new Parameter with a copy of the values and the same name, requires_grad and flags (MindSpore's
        Parameter.__deepcopy__); copying a Cell with copy.deepcopy gives it Parameters of its own."""
        new = Parameter(self, name=self.name, requires_grad=self.requires_grad,
                        layerwise_parallel=self.layerwise_parallel, parallel_optimizer=self.parallel_optimizer)
        memo[id(self)] = new
        return new

    def __reduce__(self):
        return (_rebuild_parameter, (self.asnumpy() if self.dtype != mstype.bfloat16 else
                                     _kernels.cast(self, mstype.float32).asnumpy(), self.name, self.requires_grad))

    @property
    def data(self):
        """The Parameter itself (MindSpore's `.data`)."""
        return self

    def value(self):
        """The current value, as a Tensor sharing storage."""
        return _kernels.identity(self)

    def set_data(self, data, slice_shape=False):
        """Replaces the values in place (same shape; dtype cast like MindSpore). Returns self.

        Raises:
            TypeError: data is not a Tensor/array/int/float, or (a Tensor or NumPy array) would need an implicit cast to
                a lower type or a narrower dtype.
            OverflowError: a Python int outside the Parameter dtype's range.
            ValueError: the shape differs.
        """
        if isinstance(data, bool) or not isinstance(data, (Tensor, numbers.Number, np.ndarray)):
            raise TypeError(f"Parameter.set_data: data must be a Tensor, int or float, but got {type(data).__name__}.")
        if isinstance(data, (np.ndarray, np.generic)):
            data = Tensor(data)  # an array keeps its dtype and follows the Tensor rule below (int64 → uint8 refused)
        if not isinstance(data, Tensor):
            if isinstance(data, float) and self.dtype in mstype.int_type:
                raise TypeError("Parameter.set_data: a float can not be set into an integer Parameter.")
            data = Tensor(data, self.dtype)
        elif data.dtype != self.dtype and _engine.promote_types(data.dtype, self.dtype) != self.dtype:
            raise TypeError(f"Incoming Parameter dtype can not be converted to current dtype implicitly. Current "
                            f"dtype is {self.dtype}, and incoming is {data.dtype}. Use .set_dtype(xxx) to change the "
                            "dtype, or cast the data first.")
        if tuple(data.shape) != tuple(self.shape) and not (data.ndim == 0 or slice_shape):
            raise ValueError(f"Can not change the shape of Parameter which has been initialized. Current shape is "
                             f"{self.shape}, and incoming is {data.shape}.")
        _kernels.assign(self, data)
        _deferred_init.clear(self)  # new values: a deferred initialization must not overwrite them
        return self

    def clone(self, init="same"):
        """A new Parameter with the same name, requires_grad and values (init='same')."""
        p = Parameter(_copy_tensor(self), name=self.name, requires_grad=self.requires_grad)
        if init != "same":
            from .initializer import initializer
            p.set_data(initializer(init, self.shape, self.dtype))
        return p

    def copy(self):
        return self.clone()

    @property
    def has_init(self):
        """True while the Parameter's values are deferred (made inside `nn.no_init_parameters()` and neither
        initialized by init_data() nor replaced by set_data() yet), as MindSpore's Parameter.has_init."""
        return _deferred_init.pending(self) is not None

    def init_data(self, layout=None, set_sliced=False):
        """MindSpore's Parameter.init_data(layout=None, set_sliced=False): draws the values of a Parameter whose
        initialization was deferred by `nn.no_init_parameters()` (in place) and returns the Parameter; an initialized
        Parameter is returned as is. `layout` describes a slice in auto-parallel mode: Kiln runs stand-alone, so
        it must be None (TypeError for a non-tuple, ValueError for a tuple, as no layout applies)."""
        if layout is not None:
            if not isinstance(layout, tuple):
                raise TypeError(f"For 'Parameter.init_data', the 'layout' must be a tuple or None, but got "
                                f"{type(layout).__name__}.")
            raise ValueError("For 'Parameter.init_data', a 'layout' applies in auto-parallel mode only; Kiln runs "
                             f"stand-alone and takes layout=None, but got {layout!r}.")
        _deferred_init.materialize(self)
        return self


def _copy_tensor(t):
    out = _kernels.full(list(t.shape), 0.0, t.dtype)
    _kernels.assign(out, t)
    return out


def _rebuild_parameter(arr, name, requires_grad):
    return Parameter(Tensor(arr), name=name, requires_grad=requires_grad)


class ParameterTuple(tuple):
    """A tuple of Parameters with unique names (optimizers expose theirs as `optimizer.parameters`).

    Raises:
        TypeError: an element is not a Parameter.
        ValueError: two different Parameters share a name.
    """

    def __new__(cls, iterable):
        data = tuple(iterable)
        seen = {}
        for x in data:
            if not isinstance(x, Parameter):
                raise TypeError(f"ParameterTuple input should be a Parameter or ParameterTuple, but got "
                                f"{type(x).__name__}.")
            other = seen.get(x.name)
            if other is not None and other is not x:
                raise ValueError(f"The value {x} , its name '{x.name}' already exists. Please set a unique name "
                                 "for the parameter.")
            seen[x.name] = x
        return tuple.__new__(cls, data)

    def clone(self, prefix, init="same"):
        """A new ParameterTuple of copies named `prefix + '.' + name` (initialized by `init`)."""
        out = []
        for p in self:
            c = p.clone(init)
            c.name = prefix + "." + p.name
            shard = getattr(p, "_opt_shard", None)
            if shard is not None:  # optimizer parallel: the state of a slice is a slice (nn/optim/_parallel.py)
                c._opt_shard = shard
            out.append(c)
        return ParameterTuple(out)


class _Buffer(Tensor):
    """`mindspore.common.parameter._Buffer(data, *, persistent=True)`: a Tensor that, assigned to a Cell attribute,
    becomes a buffer of the Cell (as Cell.register_buffer(name, data, persistent) does; see kiln/nn/_cell_buffers.py):
    part of the Cell's state (state_dict when persistent), never a Parameter.

    The value is `data` with the gradient stopped (ops.stop_gradient), as MindSpore's. MindSpore returns a plain
    Tensor flagged as a buffer and makes `isinstance(t, _Buffer)` true for every registered buffer; Kiln's _Buffer is
    a Tensor subclass, so `isinstance(t, _Buffer)` is true for _Buffer objects (a Tensor given to register_buffer
    stays a Tensor).

    Raises ValueError for data None and TypeError for data that is not a Tensor (MindSpore's messages)."""

    def __init__(self, data, *, persistent=True):
        if data is None:
            raise ValueError("For create Buffer, input data should not be None")
        if not isinstance(data, Tensor):
            raise TypeError("For create Buffer, type of input data should be Tensor")
        super().__init__(_kernels.stop_gradient(data))
        self._is_buffer = True
        self.persistent = persistent
