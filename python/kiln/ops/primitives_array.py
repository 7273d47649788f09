"""MindSpore's primitive classes for array, comparison and creation ops Kiln has as functions: each instance holds
its attributes (given to __init__, as in MindSpore) and calls the same op as the functional API, so gradients and
Graph mode are those of the function. Argument orders, defaults and output dtypes are MindSpore 2.10's."""
from .._loader import _core
from .._args import dtype_arg, int_arg
from ..common import dtype as mstype
from . import array_func as _af
from . import function as _fn
from .primitives import Primitive, _simple

LogicalAnd = _simple("LogicalAnd", _core.logical_and, "x AND y elementwise (Bool; broadcasting).")
LogicalOr = _simple("LogicalOr", _core.logical_or, "x OR y elementwise (Bool; broadcasting).")
LogicalNot = _simple("LogicalNot", _core.logical_not, "NOT x elementwise (Bool).")
GreaterEqual = _simple("GreaterEqual", _core.greater_equal, "x >= y (Bool; broadcasting).")
LessEqual = _simple("LessEqual", _core.less_equal, "x <= y (Bool; broadcasting).")
NotEqual = _simple("NotEqual", _core.not_equal, "x != y (Bool; broadcasting).")
Sign = _simple("Sign", _core.sign, "sign(x): -1, 0 or 1 in x's dtype.")
Reciprocal = _simple("Reciprocal", _af.reciprocal, "1 / x (integers give float32; see ops.reciprocal).")
Tile = _simple("Tile", _af.tile, "Tile()(input, dims): input repeated dims[i] times along axis i (see ops.tile).")
GatherNd = _simple("GatherNd", _af.gather_nd, "GatherNd()(input_x, indices): slices picked by index tuples "
                   "(see ops.gather_nd).")
Shape = _simple("Shape", _fn.shape, "Shape()(x): x's shape as a tuple of ints.")
DType = _simple("DType", _af.dtype, "DType()(x): x's dtype.")


class Flatten(Primitive):
    """Flatten()(x): x of shape (N, ...) reshaped to (N, prod(...)); a 1-D x gives (N, 1). ValueError for a 0-d x
    (MindSpore raises RuntimeError)."""

    def __call__(self, x):
        x = _fn._tensor_arg(x, "Flatten", "input_x")
        if x.ndim == 0:
            raise ValueError("For 'Flatten', the input must have rank >= 1, but got a 0-d Tensor.")
        n = x.shape[0]
        rest = 1
        for d in x.shape[1:]:
            rest *= d
        return _core.reshape(x, [n, rest])


class BroadcastTo(Primitive):
    """BroadcastTo(shape)(x): x broadcast to `shape` (-1 keeps that dim of x)."""

    def __init__(self, shape):
        super().__init__("BroadcastTo")
        self.shape = tuple(shape)

    def __call__(self, x):
        return _fn.broadcast_to(x, self.shape)


class Stack(Primitive):
    """Stack(axis=0)(tensors): same-shape tensors joined along a new axis."""

    def __init__(self, axis=0):
        super().__init__("Stack")
        self.axis = int_arg("Stack", "axis", axis)

    def __call__(self, tensors):
        return _fn.stack(tensors, self.axis)


class Split(Primitive):
    """Split(axis=0, output_num=1)(x): a tuple of `output_num` equal parts of x along `axis`. ValueError when
    x.shape[axis] is not divisible by output_num."""

    def __init__(self, axis=0, output_num=1):
        super().__init__("Split")
        self.axis = int_arg("Split", "axis", axis)
        self.output_num = int_arg("Split", "output_num", output_num, minimum=1)

    def __call__(self, x):
        x = _fn._tensor_arg(x, "Split", "input_x")
        if not -x.ndim <= self.axis < x.ndim:
            raise ValueError(f"For 'Split', 'axis' must be in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, but "
                             f"got {self.axis}.")
        size = x.shape[self.axis]
        if size % self.output_num:
            raise ValueError(f"For 'Split', x_shape[{self.axis}] must be divisible by output_num = "
                             f"{self.output_num}, but got {size}")
        return tuple(_fn.split(x, [size // self.output_num] * self.output_num, self.axis))


class Fill(Primitive):
    """Fill()(type, shape, value): a tensor of dtype `type` and `shape` filled with `value`."""

    def __call__(self, type, shape, value):
        return _fn.fill(type, shape, value)


class Zeros(Primitive):
    """Zeros()(size, type=None): zeros of shape `size` (an int or tuple) and dtype `type` (float32 when None)."""

    def __call__(self, size, type=None):
        return _fn.zeros(size, type)


class Ones(Primitive):
    """Ones()(size, type=None): ones of shape `size` (an int or tuple) and dtype `type` (float32 when None)."""

    def __call__(self, size, type=None):
        return _fn.ones(size, type)


class Eye(Primitive):
    """Eye()(n, m, t): the n×m identity matrix of dtype t."""

    def __call__(self, n, m, t):
        return _fn.eye(n, m, t)


class OneHot(Primitive):
    """OneHot(axis=-1)(indices, depth, on_value, off_value): see ops.one_hot."""

    def __init__(self, axis=-1):
        super().__init__("OneHot")
        self.axis = int_arg("OneHot", "axis", axis)

    def __call__(self, indices, depth, on_value, off_value):
        return _af.one_hot(indices, depth, on_value, off_value, self.axis)


class Argmax(Primitive):
    """Argmax(axis=-1, output_type=int32)(x): the index of the first maximum along `axis`, in output_type (int32 or
    int64)."""

    def __init__(self, axis=-1, output_type=mstype.int32):
        super().__init__("Argmax")
        self.axis = int_arg("Argmax", "axis", axis)
        self.output_type = dtype_arg("Argmax", "output_type", output_type)
        if self.output_type not in (mstype.int32, mstype.int64):
            raise ValueError(f"For 'Argmax', 'output_type' must be int32 or int64, but got {self.output_type}.")

    def __call__(self, x):
        return _core.cast(_fn.argmax(x, self.axis), self.output_type)


class Argmin(Argmax):
    """Argmin(axis=-1, output_type=int32)(x): the index of the first minimum along `axis`."""

    def __call__(self, x):
        return _core.cast(_fn.argmin(x, self.axis), self.output_type)


class Pad(Primitive):
    """Pad(paddings)(input_x): zero padding by paddings[i] = (before, after) for every dim i (non-negative)."""

    def __init__(self, paddings):
        super().__init__("Pad")
        self.paddings = paddings

    def __call__(self, input_x):
        x = _fn._tensor_arg(input_x, "Pad", "input_x")
        return _af.pad_pairs(x, _af.paddings_arg(self.paddings, x, "Pad"), "constant", None, "Pad")


class Sort(Primitive):
    """Sort(axis=-1, descending=False)(x) → (values, indices Int32): see ops.sort."""

    def __init__(self, axis=-1, descending=False):
        super().__init__("Sort")
        self.axis = int_arg("Sort", "axis", axis)
        if not isinstance(descending, bool):
            raise TypeError(f"For 'Sort', 'descending' must be bool, but got {type(descending).__name__}.")
        self.descending = descending

    def __call__(self, x):
        return _af.sort(x, self.axis, self.descending)


class TopK(Primitive):
    """TopK(sorted=True)(input_x, k) → (values, indices Int32): the k largest along the last axis, in MindSpore
    2.10's order for both `sorted` values (see ops.topk)."""

    def __init__(self, sorted=True):
        super().__init__("TopK")
        self.sorted = bool(sorted)

    def __call__(self, input_x, k):
        return _af.topk(input_x, k, None, True, self.sorted)


class ArgMaxWithValue(Primitive):
    """ArgMaxWithValue(axis=0, keep_dims=False)(x) → (index Int64, value): the first maximum along `axis`. The
    gradient of value goes to that index only."""

    def __init__(self, axis=0, keep_dims=False):
        super().__init__(type(self).__name__)
        self.axis = int_arg(self.name, "axis", axis)
        self.keep_dims = bool(keep_dims)

    def __call__(self, x):
        values, index = _fn.max(x, self.axis, self.keep_dims)
        return index, values


class ArgMinWithValue(ArgMaxWithValue):
    """ArgMinWithValue(axis=0, keep_dims=False)(x) → (index Int64, value): the first minimum along `axis`."""

    def __call__(self, x):
        values, index = _fn.min(x, self.axis, self.keep_dims)
        return index, values


FloorDiv = _simple("FloorDiv", _fn.floor_divide, "FloorDiv()(x, y): floor(x / y) elementwise (broadcasting; integer "
                   "inputs give integers rounded toward -inf, as ops.floor_divide).")


class L2Loss(Primitive):
    """L2Loss()(x) → sum(x ** 2) / 2, a 0-d Tensor of x's dtype (MindSpore's formula). x: a Float16/Float32/Float64
    Tensor of any shape (an empty one gives 0). TypeError for another dtype or a non-Tensor."""

    _FLOATS = (mstype.float16, mstype.float32, mstype.float64)

    def __init__(self):
        super().__init__(type(self).__name__)

    def __call__(self, x):
        from ..common.tensor import Tensor
        if not isinstance(x, Tensor) or x.dtype not in self._FLOATS:
            got = f"Tensor[{x.dtype}]" if isinstance(x, Tensor) else type(x).__name__
            raise TypeError(f"For primitive[L2Loss], the input argument[x] must be a type of "
                            f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got {got}.")
        return _fn.sum(_core.mul(x, x)) * 0.5


__all__ = [n for n, v in list(globals().items()) if isinstance(v, type) and issubclass(v, Primitive)
           and v is not Primitive]
