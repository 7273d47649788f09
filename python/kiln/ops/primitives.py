"""MindSpore's primitive classes (`ops.Add()(x, y)`, `ops.MatMul(transpose_b=True)(a, b)`, ...): each instance
holds its attributes and calls the same C++ op as the functional API."""
from .._loader import _core
from . import function as _fn
from .._args import dtype_arg, int_arg, shape_arg, tensors_arg


class Primitive:
    """Base of Kiln's primitives: `name` is MindSpore's primitive name; `__call__` runs the op."""

    def __init__(self, name=None):
        self.name = name or type(self).__name__

    def __repr__(self):
        return f"Prim[{self.name}]"

    def add_prim_attr(self, name, value):
        setattr(self, name, value)
        return self

    def shard(self, in_strategy=None, out_strategy=None):
        """MindSpore's Primitive.shard(in_strategy, out_strategy=None): the operator-parallel strategy of this
        primitive, per Tensor input the number of slices of each dimension (e.g. MatMul ((2, 4), (4, 1))). It acts
        with parallel_mode='semi_auto_parallel' (or inside parallel.auto_parallel.AutoParallel) and more than one
        process: each process computes its block and the output is made whole on every process; a Parameter input
        is stored sliced from its first use (kiln/parallel/_op_shard.py, docs/distributed.md "Operator parallel").
        Otherwise it changes nothing (as MindSpore outside its parallel modes). Returns the primitive.

        Raises:
            TypeError: in_strategy not a tuple of tuples of ints.
            ValueError: a strategy value < 1; out_strategy not None (Kiln keeps outputs whole). At call time:
                a primitive Kiln cannot shard, a strategy whose length differs from its input's rank, a dimension
                not divisible by its strategy value, a strategy whose product does not divide the device number,
                op-specific rules (MatMul's reduce dimension, Softmax's axis, broadcast dimensions).
        """
        from ..parallel import _op_shard
        _op_shard.check_strategy_type(self.name, in_strategy, out_strategy)
        self.__dict__["_kiln_in_strategy"] = in_strategy
        self.__dict__["_kiln_out_strategy"] = out_strategy
        cls = type(self)
        if not cls.__dict__.get("_kiln_sharded_class"):
            self.__class__ = _sharded_class(cls)
        return self


_SHARDED_CLASSES = {}


def _sharded_class(base):
    """A subclass of the primitive class `base` whose __call__ runs sharded when operator parallel is active."""
    cls = _SHARDED_CLASSES.get(base)
    if cls is None:
        base_call = base.__call__

        def __call__(self, *args, **kwargs):
            from ..parallel import _op_shard
            if _op_shard.active():
                if kwargs or not _op_shard.supported(self):
                    raise ValueError(f"For '{self.name}', operator parallel (shard {self._kiln_in_strategy!r}) is not "
                                     f"supported by Kiln for this primitive{' with keyword arguments' if kwargs else ''}"
                                     f"; Kiln shards {sorted(_op_shard.supported_names())}.")
                return _op_shard.call(self, base_call, args)
            _op_shard.check_inactive(self, args)
            return base_call(self, *args, **kwargs)

        cls = type(base.__name__, (base,), {"__call__": __call__, "_kiln_sharded_class": True,
                                            "__module__": base.__module__, "__doc__": base.__doc__})
        _SHARDED_CLASSES[base] = cls
    return cls


def _simple(name, fn, doc):
    def __call__(self, *args):
        return fn(*args)
    return type(name, (Primitive,), {"__call__": __call__, "__doc__": doc})


Add = _simple("Add", _core.add, "x + y (broadcasting).")
Sub = _simple("Sub", _core.sub, "x - y (broadcasting).")
Mul = _simple("Mul", _core.mul, "x * y (broadcasting).")
Div = _simple("Div", _core.div, "x / y (broadcasting).")
RealDiv = _simple("RealDiv", _core.div, "x / y (broadcasting).")
Neg = _simple("Neg", _core.neg, "-x.")
Exp = _simple("Exp", _core.exp, "exp(x).")
Log = _simple("Log", _core.log, "log(x).")
Sqrt = _simple("Sqrt", _core.sqrt, "sqrt(x).")
Rsqrt = _simple("Rsqrt", _core.rsqrt, "1/sqrt(x).")
Square = _simple("Square", _core.square, "x².")
Abs = _simple("Abs", _core.abs, "|x|.")
Pow = _simple("Pow", _core.pow, "x ** y.")
Maximum = _simple("Maximum", _core.maximum, "max(x, y) elementwise.")
Minimum = _simple("Minimum", _core.minimum, "min(x, y) elementwise.")
Equal = _simple("Equal", _core.equal, "x == y (Bool).")
Greater = _simple("Greater", _core.greater, "x > y (Bool).")
Less = _simple("Less", _core.less, "x < y (Bool).")
ReLU = _simple("ReLU", _core.relu, "max(x, 0).")
Sigmoid = _simple("Sigmoid", _core.sigmoid, "1/(1+exp(-x)).")
Tanh = _simple("Tanh", _core.tanh, "tanh(x).")
Select = _simple("Select", _core.select, "cond ? x : y.")
StopGradient = _simple("StopGradient", _fn.stop_gradient,
                       "x without gradient (a Tensor or a tuple/list/dict structure; see ops.stop_gradient).")
Depend = _simple("Depend", _fn.depend,
                 "value, ordered after expr (Tensors or structures; see ops.depend).")
Assign = _simple("Assign", lambda var, val: _fn.assign(var, val), "var ← val (in place; functional under a gradient "
                 "or in compiled code, as ops.assign).")


class Print(Primitive):
    """Print()(*inputs): prints Tensors and strings, also at run time of compiled graphs (see ops.print_)."""

    def __call__(self, *inputs):
        from .function import print_
        print_(*inputs)


class GeLU(Primitive):
    """MindSpore's GeLU primitive: GELU by the tanh approximation."""

    def __call__(self, x):
        return _core.gelu(x, True)


class MatMul(Primitive):
    """MatMul(transpose_a=False, transpose_b=False)(a, b): a 2-D matrix product."""

    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__("MatMul")
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def __call__(self, a, b):
        return _core.matmul(a, b, self.transpose_a, self.transpose_b)


class BatchMatMul(MatMul):
    """BatchMatMul(transpose_a=False, transpose_b=False)(a, b): batched matrix product."""


class _Reduce(Primitive):
    _fn = None

    def __init__(self, keep_dims=False):
        super().__init__()
        self.keep_dims = keep_dims

    def __call__(self, x, axis=()):
        axis = None if axis == () or axis == [] else axis
        return type(self)._fn(x, axis, self.keep_dims)


class ReduceSum(_Reduce):
    """ReduceSum(keep_dims=False)(x, axis=()): sum over axis (() = all)."""
    _fn = staticmethod(_core.sum)


class ReduceMean(_Reduce):
    """ReduceMean(keep_dims=False)(x, axis=()): mean over axis (() = all)."""
    _fn = staticmethod(_core.mean)


class ReduceMax(_Reduce):
    """ReduceMax(keep_dims=False)(x, axis=()): max over axis (() = all)."""
    _fn = staticmethod(_core.amax)


class ReduceMin(_Reduce):
    """ReduceMin(keep_dims=False)(x, axis=()): min over axis (() = all)."""
    _fn = staticmethod(_core.amin)


class Softmax(Primitive):
    """Softmax(axis=-1)(x)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = int_arg(type(self).__name__, "axis", axis[0] if isinstance(axis, (tuple, list)) and axis else axis)

    def __call__(self, x):
        return _core.softmax(x, self.axis)


class LogSoftmax(Softmax):
    """LogSoftmax(axis=-1)(x)."""

    def __call__(self, x):
        return _core.log_softmax(x, self.axis)


class Reshape(Primitive):
    """Reshape()(x, shape)."""

    def __call__(self, x, shape):
        return _core.reshape(x, list(shape_arg("Reshape", "shape", shape)))


class Transpose(Primitive):
    """Transpose()(x, perm)."""

    def __call__(self, x, perm):
        return _core.transpose(x, list(shape_arg("Transpose", "perm", perm)))


class Cast(Primitive):
    """Cast()(x, dtype)."""

    def __call__(self, x, dtype):
        return _core.cast(x, dtype_arg("Cast", "dtype", dtype))


class Concat(Primitive):
    """Concat(axis=0)(tensors)."""

    def __init__(self, axis=0):
        super().__init__()
        self.axis = int_arg("Concat", "axis", axis)

    def __call__(self, tensors):
        return _core.concat(tensors_arg("Concat", "tensors", tensors), self.axis)


class ExpandDims(Primitive):
    """ExpandDims()(x, axis)."""

    def __call__(self, x, axis):
        return _core.expand_dims(x, int_arg("ExpandDims", "axis", axis))


class Squeeze(Primitive):
    """Squeeze(axis=())(x)."""

    def __init__(self, axis=()):
        super().__init__()
        self.axis = list(shape_arg("Squeeze", "axis", axis))

    def __call__(self, x):
        return _core.squeeze(x, self.axis)


class Gather(Primitive):
    """Gather()(params, indices, axis)."""

    def __call__(self, params, indices, axis):
        return _core.gather(params, indices, int_arg("Gather", "axis", axis))


class OnesLike(Primitive):
    """OnesLike()(x)."""

    def __call__(self, x):
        return _core.ones_like(x)


class ZerosLike(Primitive):
    """ZerosLike()(x)."""

    def __call__(self, x):
        return _core.zeros_like(x)


__all__ = [n for n, v in list(globals().items()) if isinstance(v, type) and issubclass(v, Primitive)]
