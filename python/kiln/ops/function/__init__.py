"""kiln.ops: MindSpore 2.x's functional op API (`mindspore.ops.xxx`), on Kiln's C++ ops.

Every function dispatches to one C++ op (kiln._core); arguments may be Tensors, Python scalars (weak: they do not
widen a tensor's dtype), NumPy arrays or lists. Shape/dtype errors raise ValueError/TypeError naming the op.

This is `kiln.ops.function` (MindSpore's `mindspore.ops.function` package): its submodules (math_func, nn_func,
array_func, grad, ...) hold kiln.ops's functions where MindSpore 2.10 keeps them (kiln/ops/_ms_layout.py)."""
import numbers

import numpy as np

from ..._loader import _core
from ...common import dtype as mstype
from ...common import seed as _seed
from ..._autodiff import recompute as _recompute
from ...common.tensor import Tensor
from ..._args import axes_arg, dtype_arg, int_arg, number_arg, shape_arg, tensors_arg
from .._opdef import defop as _defop

def _tensor_arg(x, op, name="input"):
    """`x` if it is a Tensor; else TypeError in MindSpore's style naming the op and the argument."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the argument '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


_STATIC = {}


def _static_tables(key, build):
    """What `build()` returns (index or mask Tensors made with NumPy), built once per `key`: a tuple of the op's name
    and the static values (shapes, offsets) the tables depend on. The diagonal and triangle ops index with such
    tables; building them per call (NumPy, then a Tensor from the array) cost more than the ops' kernels on small
    inputs. The tables are constants that no op writes. At most 1024 keys are kept (then the cache starts over)."""
    v = _STATIC.get(key)
    if v is None:
        if len(_STATIC) >= 1024:
            _STATIC.clear()
        v = _STATIC[key] = build()
    return v


# ---- elementwise arithmetic ----
add = _core.add
sub = _core.sub
subtract = _core.sub
mul = _core.mul
multiply = _core.mul
neg = _core.neg
negative = _core.neg
exp = _core.exp
log = _core.log
sqrt = _core.sqrt
rsqrt = _core.rsqrt
abs = _core.abs
absolute = _core.abs
square = _core.square
sign = _core.sign
erf = _core.erf
maximum = _core.maximum
minimum = _core.minimum
floor_div = _core.floor_div
floor_divide = _core.floor_div
floor_mod = _core.mod
remainder = _core.mod


@_defop(tensor="div", mint=("div", "divide"), aliases=("divide",))
def div(input, other, *, rounding_mode=None):
    """input / other (true division: integers give Float32); rounding_mode 'floor' or 'trunc' rounds the quotient."""
    if rounding_mode is None:
        return _core.div(input, other)
    if rounding_mode == "floor":
        return _core.floor_div(input, other)
    if rounding_mode == "trunc":
        q = _core.div(input, other)
        return _core.mul(_core.sign(q), _core.floor_div(_core.abs(q), 1.0))
    raise ValueError(f"For 'div', rounding_mode must be None, 'floor' or 'trunc', but got {rounding_mode!r}.")


true_divide = _core.div


@_defop(tensor="pow", mint="pow")
def pow(input, exponent):
    """input ** exponent, broadcasting; either may be a Python number.

    Integer tensors to negative integer powers give the C integer power, as MindSpore (2 ** -1 = 0,
    1 ** -1 = 1, (-1) ** -1 = -1); NumPy raises ValueError instead."""
    return _core.pow(input, exponent)


# ---- comparisons and logic ----
equal = _core.equal
eq = _core.equal
not_equal = _core.not_equal
ne = _core.not_equal
greater = _core.greater
gt = _core.greater
greater_equal = _core.greater_equal
ge = _core.greater_equal
less = _core.less
lt = _core.less
less_equal = _core.less_equal
le = _core.less_equal
logical_and = _core.logical_and
logical_or = _core.logical_or
logical_xor = _core.logical_xor
logical_not = _core.logical_not


def _as_bool_cond(cond, op):
    if not isinstance(cond, Tensor):
        if cond is None or isinstance(cond, (str, dict)):
            raise TypeError(f"For '{op}', the condition must be a Bool Tensor (or bools), but got "
                            f"{type(cond).__name__}.")
        cond = Tensor(cond)
    if cond.dtype != mstype.bool_:
        raise TypeError(f"For '{op}', the condition must be a Bool tensor, but got {cond.dtype}.")
    return cond


def where(condition, x, y):
    """condition ? x : y elementwise, broadcasting all three. condition must be Bool (TypeError otherwise)."""
    return _core.select(_as_bool_cond(condition, "where"), x, y)


def select(cond, x, y):
    """Same as where (MindSpore's ops.select)."""
    return _core.select(_as_bool_cond(cond, "select"), x, y)


@_defop(tensor="clamp", mint=("clamp", "clip", "nn.functional.clamp"))
def clamp(input, min=None, max=None):
    """min(max(input, min), max); either bound may be None (not both: ValueError). Gradient of input (MindSpore's
    ops.clamp, PyTorch's clamp): 1 where min <= input <= max, bounds included; 0 outside and where input is NaN."""
    if min is None and max is None:
        raise ValueError("For 'clamp', at least one of 'min' and 'max' must not be None.")
    return _core.clip(input, min, max)


clip = clamp


# ---- activations ----
relu = _core.relu
sigmoid = _core.sigmoid
tanh = _core.tanh


def gelu(input_x, approximate="none"):
    """GELU: x·Φ(x) with erf ('none', default) or the tanh approximation ('tanh') [Hendrycks & Gimpel 2016]."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For 'gelu', approximate must be 'none' or 'tanh', but got {approximate!r}.")
    return _core.gelu(input_x, approximate == "tanh")


def softmax(x, axis=-1, *, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along `axis` (float input)."""
    if dtype is not None:
        x = _core.cast(x, dtype_arg("softmax", "dtype", dtype))
    return _core.softmax(x, int_arg("softmax", "axis", axis))


def log_softmax(logits, axis=-1):
    """x - max - log(sum(exp(x - max))) along `axis` (float input)."""
    return _core.log_softmax(logits, int_arg("log_softmax", "axis", axis))


# ---- reductions ----
def _axes(axis, op):
    return axes_arg(op, "axis", axis)


@_defop(mint="sum")
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over `dim` (None = all; int or tuple), keeping reduced dims as size 1 with keepdim. `dtype`: the sum of
    input cast to it (without a widened copy of input where the cast keeps its values: kiln/_reduce_dtype.py).
    Integer and Bool inputs sum to Int64 (UInt64 for UInt16/32/64), floats keep their dtype."""
    axes = _axes(dim, "sum")
    if dtype is not None:
        from ..._reduce_dtype import reduce_as
        return reduce_as("sum", input, dtype_arg("sum", "dtype", dtype), axes, keepdim)
    return _core.sum(input, axes, keepdim)


def mean(input, axis=None, keep_dims=False):
    """Arithmetic mean over `axis` (None = all)."""
    return _core.mean(input, _axes(axis, "mean"), keep_dims)


def prod(input, axis=None, keep_dims=False):
    """Product over `axis` (None = all)."""
    return _core.prod(input, _axes(axis, "prod"), keep_dims)


def amax(input, axis=None, keepdims=False):
    """Maximum over `axis` (None = all)."""
    return _core.amax(input, _axes(axis, "amax"), keepdims)


def amin(input, axis=None, keepdims=False):
    """Minimum over `axis` (None = all)."""
    return _core.amin(input, _axes(axis, "amin"), keepdims)


def _value_at_index(x, index, axis, keepdims):
    """x's value at `index` (Int64, keep_dims shape) along the int `axis`, as MindSpore's ArgMaxWithValue /
    ArgMinWithValue give it: the gradient goes to that one position (the first extreme, or the first NaN, which is
    the result then), not split among ties as amax's. A Gather from the rows of x with `axis` moved last, so the
    value is exact (−0.0, ±inf, NaN, integers) and Gather's gradient is a scatter to that position."""
    if x.ndim == 0:
        return x
    ax = _core_axis(axis, x.ndim)
    n = x.shape[ax]
    perm = [d for d in range(x.ndim) if d != ax] + [ax]
    rows = _core.reshape(_core.transpose(x, perm), [-1])
    m = x.size // n
    flat = _core.add(_core.reshape(index, [m]), _core.arange(0.0, float(m * n), float(n), mstype.int64))
    out_shape = [1 if d == ax else s for d, s in enumerate(x.shape)]
    if not keepdims:
        del out_shape[ax]
    return _core.reshape(_core.gather(rows, flat, 0), out_shape)


def _core_axis(axis, ndim):
    """An int axis already checked by argmax/argmin, made non-negative (0-d tensors take axis 0 or −1)."""
    return axis % ndim if ndim else 0


def _init_and_select(op, input, initial, where, combine):
    """MindSpore's `initial` / `where` of ops.max/min with an axis: each element is first combined with `initial`
    (max/min: maximum/minimum), then the elements where `where` is False are replaced by `initial`."""
    if initial is not None:
        if isinstance(initial, bool) or not isinstance(initial, numbers.Number):
            raise TypeError(f"For '{op}', 'initial' must be a scalar, but got {type(initial).__name__}.")
        input = combine(input, _core.full(list(input.shape), initial, input.dtype))
    if where is not None:
        if not isinstance(where, Tensor):
            where = Tensor(np.asarray(where, dtype=np.bool_))
        if where.shape or not bool(where.asnumpy()):
            if initial is None:
                raise ValueError(f"For '{op}', 'initial' must be given with a 'where' mask.")
            input = _core.select(_core.broadcast_to(_core.cast(where, mstype.bool_), list(input.shape)), input,
                                 _core.full(list(input.shape), initial, input.dtype))
    return input


def _reduce_with_index(op, input, axis, keepdims, initial, where, reduce_all, arg, combine):
    _tensor_arg(input, op)
    if not input.shape:  # a 0-d input: itself, index 0 (MindSpore 2.10)
        return input, Tensor(np.array(0, np.int64))
    if axis is None:
        # MindSpore 2.10 returns (the value over all elements, index); its index is always 0, Kiln's the position
        # of the first extreme element in the flattened input. keepdims/initial/where do not apply (as MindSpore).
        return reduce_all(input, None, False), arg(input, None, False)
    axis = int_arg(op, "axis", axis)
    input = _init_and_select(op, input, initial, where, combine)
    indices = arg(input, axis, keepdims)
    index = indices if keepdims else arg(input, axis, True)
    return _value_at_index(input, index, axis, keepdims), indices


def max(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore 2.10 ops.max: a tuple (values, indices).

    axis=None: (the maximum over all elements, a 0-d Tensor whose gradient is split among ties (to the NaN inputs
    when the result is NaN); the Int64 index of the first maximum in the flattened input -- MindSpore 2.10 returns 0
    there); keepdims, initial and where are not used. An int axis: (values, Int64 indices) along it, the gradient
    of the values going to the returned index only (MindSpore's ArgMaxWithValue, PyTorch's max(dim)); `initial`
    (a number): each element is first max(element, initial); `where` (Bool, broadcast to input; needs `initial`):
    elements where it is False count as `initial`. A 0-d input gives (input, 0).

    Raises:
        TypeError: input not a Tensor; axis not an int; initial not a number.
        ValueError: axis out of range; where without initial.
    """
    return _reduce_with_index("max", input, axis, keepdims, initial, where, _core.amax, _core.argmax,
                              _core.maximum)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):
    """As max, for the minimum: (values, indices) (MindSpore's ArgMinWithValue); `initial` combines by minimum."""
    return _reduce_with_index("min", input, axis, keepdims, initial, where, _core.amin, _core.argmin,
                              _core.minimum)


@_defop(mint="argmax")
def argmax(input, dim=None, keepdim=False):
    """Index (Int64) of the first maximum along `dim` (None: over the flattened tensor)."""
    return _core.argmax(input, None if dim is None else int_arg("argmax", "dim", dim), keepdim)


def argmin(input, axis=None, keepdims=False):
    """Index (Int64) of the first minimum along `axis` (None: over the flattened tensor)."""
    return _core.argmin(input, None if axis is None else int_arg("argmin", "axis", axis), keepdims)


# ---- shapes ----
@_defop(mint="reshape")
def reshape(input, shape):
    """A tensor with the same data and a new shape (one dim may be -1); a view when the strides allow."""
    y = _core._view_reshape(input, shape)  # C++ for a concrete tensor and plain ints (python/src/bind_views.cpp)
    if y is not NotImplemented:
        return y
    shape = shape_arg("reshape", "shape", shape)
    if isinstance(input, _core.Tensor):
        return input.reshape(list(shape))  # a view that a write under a gradient / in a graph reaches through
    return _core.reshape(input, list(shape))


def transpose(input, input_perm):
    """Permutes the dims: output dim i is input dim input_perm[i]. A view."""
    y = _core._view_transpose(input, input_perm)  # C++ for a concrete tensor and plain ints
    if y is not NotImplemented:
        return y
    input_perm = shape_arg("transpose", "input_perm", input_perm)
    if isinstance(input, _core.Tensor):
        return input.transpose(list(input_perm))
    return _core.transpose(input, list(input_perm))


def permute(input, axis):
    """Same as transpose."""
    y = _core._view_transpose(input, axis)  # C++ for a concrete tensor and plain ints
    if y is not NotImplemented:
        return y
    return transpose(input, shape_arg("permute", "axis", axis))


@_defop(tensor="broadcast_to", mint=("broadcast_to", "nn.functional.broadcast_to"))
def broadcast_to(input, shape):
    """Broadcasts to `shape` (-1 keeps a dim). A view."""
    return _core.broadcast_to(input, list(shape_arg("broadcast_to", "shape", shape)))


def expand_dims(input_x, axis):
    """Inserts a size-1 dim at `axis`."""
    y = _core._view_expand_dims(input_x, axis)  # C++ for a concrete tensor and a plain int
    if y is not NotImplemented:
        return y
    axis = int_arg("expand_dims", "axis", axis)
    if isinstance(input_x, _core.Tensor):
        return input_x.expand_dims(axis)
    return _core.expand_dims(input_x, axis)


def unsqueeze(input, dim):
    """Same as expand_dims."""
    y = _core._view_expand_dims(input, dim)  # C++ for a concrete tensor and a plain int
    if y is not NotImplemented:
        return y
    return expand_dims(input, int_arg("unsqueeze", "dim", dim))


def squeeze(input, axis=None):
    """Removes size-1 dims (all, or those in `axis`; ValueError if one is not size 1)."""
    y = _core._view_squeeze(input, axis)  # C++ for a concrete tensor and plain ints
    if y is not NotImplemented:
        return y
    axes = [] if axis is None else list(shape_arg("squeeze", "axis", axis))
    if isinstance(input, _core.Tensor):
        return input.squeeze(axes)
    return _core.squeeze(input, axes)


def flatten(input, order="C", *, start_dim=1, end_dim=-1):
    """Flattens dims start_dim..end_dim into one (MindSpore default keeps dim 0)."""
    return _tensor_arg(input, "flatten").flatten(start_dim, end_dim)


def concat(tensors, axis=0):
    """Joins tensors along an existing axis (dtypes promoted)."""
    return _core.concat(tensors_arg("concat", "tensors", tensors), int_arg("concat", "axis", axis))


cat = concat


def stack(tensors, axis=0):
    """Joins same-shape tensors along a new axis."""
    return _core.stack(tensors_arg("stack", "tensors", tensors), int_arg("stack", "axis", axis))


def split(tensor, split_size_or_sections, axis=0):
    """Splits along `axis` into chunks of size split_size_or_sections (int; the last may be smaller) or of the
    given section sizes (list/tuple). Returns a tuple."""
    _tensor_arg(tensor, "split", "tensor")
    axis = int_arg("split", "axis", axis)
    if not -tensor.ndim <= axis < tensor.ndim:
        raise ValueError(f"For 'split', the 'axis' must be in [{-tensor.ndim}, {tensor.ndim}), but got {axis}.")
    n = tensor.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)) and not isinstance(split_size_or_sections, bool):
        if split_size_or_sections <= 0:
            raise ValueError(f"For 'split', split_size_or_sections must be > 0, but got {split_size_or_sections}.")
        s = split_size_or_sections
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(shape_arg("split", "split_size_or_sections", split_size_or_sections))
    pieces = _core.split(tensor, sizes, axis)
    # The pieces are views of `tensor` (a write into one under a gradient / in a graph reaches it, see _views).
    from ...common import _views
    ax = axis % tensor.ndim if tensor.ndim else 0
    out, start = [], 0
    for piece, size in zip(pieces, sizes):
        key = (slice(None),) * ax + (slice(start, start + size),)
        out.append(_views.note_view(tensor, piece, ("getitem", key)))
        start += size
    return tuple(out)


def gather(input_params, input_indices, axis, batch_dims=0):
    """Slices of input_params along `axis` picked by integer input_indices (any shape)."""
    if batch_dims != 0:
        raise ValueError("For 'gather', Kiln supports batch_dims=0 only.")
    return _core.gather(input_params, input_indices, int_arg("gather", "axis", axis))


def cast(input, dtype):
    """input converted to `dtype` (float → int truncates toward zero)."""
    return _core.cast(input, dtype_arg("cast", "dtype", dtype))


def _map_tensors(fn, value):
    """value with fn applied to every Tensor inside nested tuples/lists/dicts (containers keep their type; other
    leaves — numbers, None, strings, arrays — are returned unchanged)."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, tuple):
        items = [_map_tensors(fn, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # namedtuples keep their type
    if isinstance(value, list):
        return [_map_tensors(fn, v) for v in value]
    if isinstance(value, dict):
        return type(value)((k, _map_tensors(fn, v)) for k, v in value.items())
    return value


def _tensors_in(value):
    """The Tensors inside nested tuples/lists/dicts, in order."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []


def stop_gradient(value):
    """value with no gradient flowing through it: a Tensor, or any nesting of tuples/lists/dicts whose Tensors are
    each stopped (other elements are returned unchanged), as MindSpore's ops.stop_gradient. Same in PyNative and
    inside compiled code."""
    return _map_tensors(_core.stop_gradient, value)


@_defop(tensor="matmul", mint="matmul")
def matmul(input, other):
    """Matrix product with NumPy semantics (batched, broadcasting batch dims, 1-D operands)."""
    return _core.matmul(input, other)


def numel(input):
    """Number of elements."""
    return _tensor_arg(input, "numel").size


def shape(input_x):
    """The shape as a tuple of ints."""
    return _tensor_arg(input_x, "shape", "input_x").shape


def rank(input_x):
    """The number of dims."""
    return _tensor_arg(input_x, "rank", "input_x").ndim


# ---- creation ----
def _size(size, op):
    """The shape of randn(*size)/rand(*size): ints, or one tuple/list of ints."""
    if len(size) == 1 and not isinstance(size[0], (int, np.integer)):
        size = size[0]
    return shape_arg(op, "size", size, minimum=0)


def _shape_arg(size, op, name="size"):
    """A created tensor's shape: an int, a tuple/list of ints or a 1-D integer Tensor; dims >= 0."""
    return shape_arg(op, name, size, minimum=0)


def zeros(size, dtype=None):
    """A tensor of zeros (dtype default float32)."""
    return _core.full(list(_shape_arg(size, "zeros")), 0.0, dtype_arg("zeros", "dtype", dtype, mstype.float32))


def ones(shape, dtype=None):
    """A tensor of ones (dtype default float32)."""
    return _core.full(list(_shape_arg(shape, "ones", "shape")), 1.0, dtype_arg("ones", "dtype", dtype, mstype.float32))


def _fill(shape, fill_value, dtype, op):
    """A tensor of `shape` and Kiln `dtype` filled with the Python number / 0-d Tensor `fill_value`.

    An int that does not fit an integer dtype raises OverflowError, as NumPy 2's np.full; ints beyond float64's
    53-bit mantissa are stored exactly. A complex fill_value needs a complex dtype (MindSpore 2.10 fills
    Complex64/128 with it); with a real dtype it raises TypeError (its imaginary part would be dropped)."""
    if isinstance(fill_value, Tensor):
        if fill_value.size != 1:
            raise ValueError(f"For '{op}', fill_value must be a number or a Tensor with one element, but got shape "
                             f"{fill_value.shape}.")
        fill_value = fill_value.item()
    if isinstance(fill_value, (np.generic,)):
        fill_value = fill_value.item()
    if isinstance(fill_value, complex):
        if not mstype.is_complex(dtype):
            raise TypeError(f"For '{op}', a complex fill_value {fill_value!r} needs a complex dtype, but got {dtype}.")
        return Tensor(np.full(tuple(shape), fill_value, dtype=mstype.dtype_to_nptype(dtype)))
    if not isinstance(fill_value, (bool, int, float)):
        raise TypeError(f"For '{op}', fill_value must be a bool, int, float or complex, but got "
                        f"{type(fill_value).__name__}.")
    if isinstance(fill_value, int) and not isinstance(fill_value, bool) and dtype in mstype.int_type:
        info = np.iinfo(mstype.dtype_to_nptype(dtype))
        if not info.min <= fill_value <= info.max:
            raise OverflowError(f"For '{op}', Python integer {fill_value} out of bounds for {dtype}.")
        if not -2**53 <= fill_value <= 2**53:  # not exact through the float64 fill value: build it in NumPy
            return Tensor(np.full(shape, fill_value, dtype=mstype.dtype_to_nptype(dtype)))
    return _core.full(list(shape), float(fill_value), dtype)


def full(size, fill_value, *, dtype=None):
    """A tensor filled with fill_value (dtype: from fill_value when None: bool → Bool, int → Int64, float → Float32,
    complex → Complex128).

    Raises OverflowError for an int fill_value outside an integer dtype's range (NumPy 2's rule), TypeError for a
    complex fill_value with a real dtype."""
    if dtype is None:
        dtype = (mstype.pytype_to_dtype(type(fill_value)) if isinstance(fill_value, (bool, int, float, complex))
                 else mstype.float32)
    return _fill(_shape_arg(size, "full"), fill_value, dtype_arg("full", "dtype", dtype), "full")


def fill(type, shape, value):
    """MindSpore's ops.fill(type, shape, value): a tensor of dtype `type` and `shape` filled with `value`."""
    return _fill(_shape_arg(shape, "fill", "shape"), value, dtype_arg("fill", "type", type), "fill")


def zeros_like(input, *, dtype=None):
    """Zeros with input's shape (and dtype unless given)."""
    return _core.full(list(_tensor_arg(input, "zeros_like").shape), 0.0, dtype_arg("zeros_like", "dtype", dtype, input.dtype))


def ones_like(input, *, dtype=None):
    """Ones with input's shape (and dtype unless given)."""
    return _core.full(list(_tensor_arg(input, "ones_like").shape), 1.0, dtype_arg("ones_like", "dtype", dtype, input.dtype))


def full_like(input, fill_value, *, dtype=None):
    """fill_value with input's shape (and dtype unless given)."""
    return _fill(_tensor_arg(input, "full_like").shape, fill_value,
                 dtype_arg("full_like", "dtype", dtype, input.dtype), "full_like")


@_defop(mint="arange")
def arange(start=0, end=None, step=1, *, dtype=None):
    """[start, end) with `step` (arange(n) = [0, n)); dtype Int64 when all are ints, else Float32, unless given."""
    if end is None:
        start, end = 0, start
    vals = []
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, Tensor):
            if v.size != 1:
                raise ValueError(f"For 'arange', the '{name}' must be a number or a Tensor with one element, but got "
                                 f"a Tensor of shape {list(v.shape)}.")
            v = v.item()
        number_arg("arange", name, v)
        vals.append(v)
    if dtype is None:
        dtype = mstype.int64 if all(isinstance(v, numbers.Integral) for v in vals) else mstype.float32
    if vals[2] == 0:
        raise ValueError("For 'arange', the step must not be 0.")
    return _core.arange(float(vals[0]), float(vals[1]), float(vals[2]), dtype_arg("arange", "dtype", dtype))


def eye(n, m=None, dtype=None):
    """The n×m identity matrix (ones on the main diagonal), of `dtype` (None: Float32, as MindSpore)."""
    n = int_arg("eye", "n", n, minimum=0)
    m = n if m is None else int_arg("eye", "m", m, minimum=0)
    return Tensor(np.eye(n, m), dtype_arg("eye", "dtype", dtype, mstype.float32))


# ---- random (Philox, seeded by set_seed; see kiln.common.seed) ----
def _float_dtype(dtype, op):
    dtype = dtype_arg(op, "dtype", dtype, mstype.float32)
    if not mstype.is_float(dtype):
        raise ValueError(f"For '{op}', the dtype must be a float type, but got {dtype}.")
    return dtype


def randn(*size, dtype=None, seed=None):
    """Standard normal samples of shape `size` (ints or one tuple); dtype default float32 (non-float: ValueError)."""
    shape = _size(size, "randn")
    s, stream = _seed._next_key("randn", seed)
    return _recompute.draw("standard_normal", list(shape), _float_dtype(dtype, "randn"), s, 0, stream)


def standard_normal(shape, seed=None):
    """Standard normal float32 samples."""
    s, stream = _seed._next_key("standard_normal", seed)
    return _recompute.draw("standard_normal", list(_shape_arg(shape, "standard_normal", "shape")), mstype.float32, s, 0, stream)


def rand(*size, dtype=None, seed=None):
    """Uniform [0, 1) samples of shape `size`."""
    shape = _size(size, "rand")
    s, stream = _seed._next_key("rand", seed)
    return _recompute.draw("uniform_real", list(shape), _float_dtype(dtype, "rand"), s, 0, stream)


def uniform(shape, minval, maxval, seed=None, dtype=mstype.float32):
    """Uniform samples in [minval, maxval) (Tensors or numbers; broadcast)."""
    s, stream = _seed._next_key("uniform", seed)
    u = _recompute.draw("uniform_real", list(_shape_arg(shape, "uniform", "shape")), _float_dtype(dtype, "uniform"), s, 0, stream)
    return _core.add(_core.mul(u, _core.sub(maxval, minval)), minval)


_INT_LIMITS = {}


def _int_limits(dtype):
    """(min, max) of an integer dtype (cached: np.iinfo costs microseconds per call), None for other dtypes."""
    lim = _INT_LIMITS.get(dtype, False)
    if lim is False:
        lim = None
        if dtype in mstype.int_type:
            info = np.iinfo(mstype.dtype_to_nptype(dtype))
            lim = (int(info.min), int(info.max))
        _INT_LIMITS[dtype] = lim  # a handful of dtypes: bounded
    return lim


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers uniform in [low, high) of shape `size` (dtype default Int64). ValueError if high <= low."""
    if not isinstance(low, numbers.Integral) or not isinstance(high, numbers.Integral):
        raise TypeError("For 'randint', 'low' and 'high' must be ints.")
    s, stream = _seed._next_key("randint", seed)
    dtype = dtype_arg("randint", "dtype", dtype, mstype.int64)
    lim = _int_limits(dtype)
    if lim is not None:  # NumPy's rule: the range must fit the dtype (values would wrap otherwise)
        for what, v in (("low", low), ("high - 1", high - 1)):
            if not lim[0] <= v <= lim[1]:
                raise ValueError(f"For 'randint', {what} = {v} is out of bounds for {dtype}.")
    return _recompute.draw("uniform_int", list(_shape_arg(size, "randint")), int(low), int(high), dtype, s, 0, stream)


# ---- printing ----
def print_(*input_x):
    """Prints its arguments (Tensors, strings, numbers) separated by spaces, as MindSpore's ops.print_.

    A side effect that also works inside compiled functions and GRAPH_MODE Cells: there it prints on every run,
    in program order, with the values of that run (a plain Python print() inside traced code runs once, while
    compiling). Tensors print as `Tensor(shape=[3], dtype=Float32, value=[1 2 3])`. Returns None."""
    tensors = []
    _core.print_(" ".join(_print_text(x, tensors) for x in input_x), tensors)


def _print_text(x, tensors):
    """print_'s text for x: each Tensor (also inside tuples/lists/dicts, so that compiled code prints their run-time
    values) becomes the placeholder \x1f and is appended to `tensors`; other values print as str()."""
    if isinstance(x, Tensor):
        tensors.append(x)
        return "\x1f"
    from ..._compiler.graph_python import GraphText
    if isinstance(x, GraphText):  # an f-string of graph tensors: each prints as str(tensor) at run time
        text = []
        for p in x.pieces:
            if isinstance(p, Tensor):
                tensors.append(p)
                text.append("\x1e")
            else:
                text.append(str(p).replace("\x1f", " ").replace("\x1e", " "))
        return "".join(text)
    if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
        inner = ", ".join(_print_text(v, tensors) for v in x)
        if isinstance(x, list):
            return "[" + inner + "]"
        return "(" + inner + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_print_text(v, tensors)}" for k, v in x.items()) + "}"
    return str(x).replace("\x1f", " ").replace("\x1e", " ")


# ---- state ----
def assign(variable, value):
    """Writes value (broadcast, cast to variable's dtype) into variable; returns variable. In place in plain PyNative
    and for Parameters; under a gradient or inside compiled code a functional write that the variable object is
    rebound to (so the gradient sees it), as Tensor.__setitem__."""
    from ...common import _indexing
    return _indexing.assign(variable, value)


def depend(value, expr):
    """Returns value; in a compiled graph, value is computed after expr (ordering of side effects).

    value: a Tensor or any nesting of tuples/lists/dicts (each Tensor inside gets the dependency; other elements are
    returned unchanged); expr: a Tensor, a structure of Tensors, or anything else (no Tensor: nothing to wait for),
    as MindSpore's ops.depend. Gradients flow to value only."""
    deps = _tensors_in(expr)
    if not deps:
        return value

    def dep(t):
        for e in deps:
            t = _core.depend(t, e)
        return t
    return _map_tensors(dep, value)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and _n not in ("np", "numbers", "mstype", "Tensor")
           and getattr(_v, "__module__", None) != "kiln._args"]  # the argument validators are not ops
