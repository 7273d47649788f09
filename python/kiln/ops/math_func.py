"""Math, creation and state ops built from Kiln's existing kernels (so gradients and Graph mode are theirs):
MindSpore 2.10's ops.round, logsumexp, lerp, isclose, norm, addn, linspace, range, make_range, tuple_len,
tuple_to_array, scalar_to_tensor, assign_add, assign_sub, bias_add, normal, reduce_sum and the Primitive classes
Round, AddN, LinSpace, AssignAdd, AssignSub, BiasAdd, L2Normalize, UniformReal, StandardNormal, TupleToArray,
ScalarToTensor.

Output dtypes and defaults are MindSpore 2.10's (checked against MindSpore 2.10 on CPU)."""
import builtins
import math
import numbers

import numpy as np

from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, _is_int, axes_arg, dtype_arg, int_arg, shape_arg
from ..common import dtype as mstype
from .._autodiff import recompute as _recompute
from ..common import seed as _seed
from ..common.tensor import Tensor
from .function import _tensor_arg, assign
from .primitives import Primitive

__all__ = ["round", "logsumexp", "lerp", "isclose", "norm", "addn", "linspace", "range", "make_range", "tuple_len",
           "tuple_to_array", "scalar_to_tensor", "assign_add", "assign_sub", "bias_add", "normal", "reduce_sum",
           "Round", "AddN", "LinSpace", "AssignAdd", "AssignSub", "BiasAdd", "L2Normalize", "UniformReal",
           "StandardNormal", "TupleToArray", "ScalarToTensor"]


def round(input, *, decimals=0):
    """MindSpore's ops.round(input, *, decimals=0): each element rounded to `decimals` decimal places, halves to
    even (0.5 → 0, 1.5 → 2, 2.5 → 2, −0.5 → −0; NumPy's np.round). One Round kernel (elementwise_unary.cpp:
    std::nearbyint); integer inputs are returned unchanged (a copy) for decimals >= 0 and, for decimals < 0, rounded
    exactly in their dtype to a multiple of 10**-decimals (halves to even: NumPy's value where it fits the dtype).
    Same dtype; zero gradient (as floor).
    decimals ≠ 0 (MindSpore 2.10's CPU kernel raises RuntimeError there; Kiln computes NumPy's value): decimals > 0
    multiplies by 10**decimals, rounds and divides back, decimals < 0 divides by 10**-decimals, rounds and multiplies
    back, as NumPy does. Raises TypeError (non-Tensor input, non-int decimals, complex input as MindSpore 2.10)."""
    x = mstype.refuse_complex(_tensor_arg(input, "round"), "round")
    decimals = int_arg("round", "decimals", decimals)
    if not mstype.is_float(x.dtype):
        return _core.identity(x) if decimals >= 0 or x.dtype == mstype.bool_ else _round_int(x, 10 ** -decimals)
    if not decimals:
        return _core.round(x)
    try:
        scale = 10.0 ** builtins.abs(decimals)
    except OverflowError:  # beyond float64 (|decimals| > 308): inf, so every value is NaN, as NumPy's np.round
        scale = math.inf
    if decimals > 0:
        return _core.div(_core.round(_core.mul(x, scale)), scale)
    return _core.mul(_core.round(_core.div(x, scale)), scale)


def _round_int(x, q):
    """Integer x rounded to a multiple of q (a power of 10 > 1), halves to even, in x's dtype and exactly (NumPy's
    np.round(x, -k) value where the result fits the dtype): t = x truncated-divided by q, r = x − t·q (|r| < q, no
    overflow), t moves one step away from 0 where |r| > q − |r|, or where they tie and t is odd; result t·q."""
    if q > np.iinfo(mstype.dtype_to_nptype(x.dtype)).max:  # every |x| < q / 2: all round to 0
        return _core.zeros_like(x)
    qt = _core.full([], q, x.dtype)
    t = _core.truncate_div(x, qt)
    ar = _core.abs(_core.sub(x, _core.mul(t, qt)))
    rest = _core.sub(qt, ar)
    odd = _core.not_equal(_core.sub(t, _core.mul(_core.truncate_div(t, _core.full([], 2, x.dtype)),
                                                 _core.full([], 2, x.dtype))), _core.zeros_like(t))
    up = _core.logical_or(_core.greater(ar, rest), _core.logical_and(_core.equal(ar, rest), odd))
    t = _core.select(up, _core.add(t, _core.sign(x)), t)
    return _core.mul(t, qt)


def _broadcast_check(op, *ts):
    try:
        _broadcast_shapes(*(tuple(t.shape) for t in ts if isinstance(t, Tensor)))
    except ValueError:
        raise ValueError(f"For '{op}', the shapes {[tuple(t.shape) for t in ts if isinstance(t, Tensor)]} do not "
                         f"broadcast.") from None


def _float_input(x, op):
    x = _tensor_arg(x, op)
    return mstype.as_float_input(x, op)


def logsumexp(input, dim, keepdim=False):
    """MindSpore's ops.logsumexp(input, dim, keepdim=False): log Σ exp(input) over the axes `dim` (an int or a
    tuple), computed as m + log Σ exp(input − m) with m the (finite) maximum, so large inputs do not overflow.
    Integer inputs compute in float32. Gradient softmax(input) over those axes. Raises TypeError / ValueError for
    bad axes."""
    x = _float_input(input, "logsumexp")
    axes = axes_arg("logsumexp", "dim", dim, allow_none=False)
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    for a in axes:
        if not -builtins.max(x.ndim, 1) <= a < builtins.max(x.ndim, 1):
            raise ValueError(f"For 'logsumexp', 'dim' {a} is out of range for input of shape {tuple(x.shape)}.")
    if x.ndim and builtins.any(x.shape[a] == 0 for a in axes):  # log of an empty sum: −inf (NumPy)
        shape = [1 if i in {a % x.ndim for a in axes} else d for i, d in enumerate(x.shape)]
        out = _core.full(shape, float("-inf"), x.dtype)
        return out if keepdim else _core.squeeze(out, sorted(a % x.ndim for a in axes))
    m = _core.stop_gradient(_core.amax(x, axes, True))
    m = _core.select(_core.equal(_core.sub(m, m), 0.0), m, _core.zeros_like(m))  # ±inf/NaN maxima → 0
    out = _core.add(_core.log(_core.sum(_core.exp(_core.sub(x, m)), axes, True)), m)
    return out if keepdim else _core.squeeze(out, [a % builtins.max(x.ndim, 1) for a in axes] if x.ndim else [])


def lerp(input, end, weight):
    """MindSpore's ops.lerp(input, end, weight): input + weight·(end − input) elementwise with broadcasting
    (weight a float or a float Tensor). Raises TypeError for non-Tensor input/end or a bad weight."""
    x = _tensor_arg(input, "lerp")
    e = _tensor_arg(end, "lerp", "end")
    if not isinstance(weight, (Tensor, float)) or isinstance(weight, bool):
        raise TypeError(f"For 'lerp', the 'weight' must be a float or a Tensor, but got {_got(weight)}.")
    _broadcast_check("lerp", x, e, weight)
    return _core.add(x, _core.mul(weight, _core.sub(e, x)))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """MindSpore's ops.isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False): Bool, True where
    |input − other| <= atol + rtol·|other| (or the two are equal, which covers equal infinities); NaNs are close to
    each other only when equal_nan. Broadcasting. Raises TypeError (non-Tensors), ValueError (negative rtol/atol)."""
    a = _tensor_arg(input, "isclose")
    b = _tensor_arg(other, "isclose", "other")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'isclose', '{name}' must be a number, but got {_got(v)}.")
        if v < 0:
            raise ValueError(f"For 'isclose', '{name}' must be >= 0, but got {v}.")
    _broadcast_check("isclose", a, b)
    for t in (a, b):
        if mstype.is_complex(t.dtype):
            raise TypeError(f"For 'isclose', the dtype {t.dtype} is not supported (Kiln's complex ops: "
                            "docs/decisions/complex-dtypes.md).")
    if not mstype.is_float(a.dtype) and not mstype.is_float(b.dtype):
        return _core.logical_or(_core.equal(a, b), _core.less_equal(
            _core.abs(_core.sub(_core.cast(a, mstype.float64), _core.cast(b, mstype.float64))),
            _core.add(_core.mul(_core.abs(_core.cast(b, mstype.float64)), float(rtol)), float(atol))))
    diff = _core.abs(_core.sub(a, b))
    finite = _core.logical_and(_core.equal(_core.sub(a, a), 0.0), _core.equal(_core.sub(b, b), 0.0))
    within = _core.less_equal(diff, _core.add(_core.mul(_core.abs(b), float(rtol)), float(atol)))
    close = _core.logical_or(_core.equal(a, b), _core.logical_and(finite, within))  # infinities: only if equal
    if equal_nan:
        close = _core.logical_or(close, _core.logical_and(_core.not_equal(a, a), _core.not_equal(b, b)))
    return close


def _vector_norm(x, p, axes, keepdim):
    ax = list(axes)
    ax_abs = _core.abs(x)
    if p == math.inf:
        return _core.amax(ax_abs, ax, keepdim)
    if p == -math.inf:
        return _core.amin(ax_abs, ax, keepdim)
    if p == 0:
        return _core.cast(_core.count_nonzero(x, ax, keepdim), x.dtype)
    if p == 1:
        return _core.sum(ax_abs, ax, keepdim)
    if p == 2:
        return _core.sqrt(_core.sum(_core.square(x), ax, keepdim))
    return _core.pow(_core.sum(_core.pow(ax_abs, float(p)), ax, keepdim), 1.0 / p)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """MindSpore's ops.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None) (NumPy's/PyTorch's linalg.norm):

    - ord=None: the 2-norm of the flattened A (dim=None), of each vector along dim (int), or the Frobenius norm of
      the matrices on dim (2-tuple);
    - vector norms (dim an int, or A 1-D with dim=None): ord = p (any number: (Σ|a|^p)^(1/p)), inf (max |a|),
      -inf (min |a|), 0 (the count of non-zeros);
    - matrix norms (dim a 2-tuple, or A 2-D with dim=None): 'fro', 1 / -1 (max / min column sum of |a|), inf / -inf
      (max / min row sum of |a|). 'nuc' and ±2 need singular values, which Kiln has no kernel for yet: ValueError.
    dtype: compute (and return) in this float dtype. Float outputs; integer inputs compute in float32.
    Raises TypeError (non-Tensor, a non-float dtype), ValueError (an ord that does not fit the dims, bad dims)."""
    x = _tensor_arg(A, "norm", "A")
    if dtype is not None:
        dtype = dtype_arg("norm", "dtype", dtype)
        if not mstype.is_float(dtype):
            raise TypeError(f"For 'norm', 'dtype' must be a float dtype, but got {dtype}.")
        x = _core.cast(x, dtype)
    else:
        x = mstype.as_float_input(x, "norm")
    if dim is None:
        if ord is None:
            return _vector_norm(_core.reshape(x, [-1]), 2, [0], False) if not keepdim else \
                _core.reshape(_vector_norm(_core.reshape(x, [-1]), 2, [0], False), [1] * x.ndim)
        if x.ndim == 1:
            dim = 0
        elif x.ndim == 2:
            dim = (0, 1)
        else:
            raise ValueError(f"For 'norm', 'dim' must be given when 'ord' is set and A is not 1-D or 2-D, but got "
                             f"A of shape {tuple(x.shape)}.")
    if _is_int(dim) or (isinstance(dim, (tuple, list)) and builtins.all(_is_int(d) for d in dim)
                        and len(dim) in (1, 2)):
        raw = (int(dim),) if _is_int(dim) else tuple(int(d) for d in dim)
        for d in raw:
            if not -builtins.max(x.ndim, 1) <= d < builtins.max(x.ndim, 1):
                raise ValueError(f"For 'norm', 'dim' {d} is out of range [{-x.ndim}, {x.ndim}) for A of shape "
                                 f"{tuple(x.shape)}.")
        dims = tuple(d % builtins.max(x.ndim, 1) for d in raw)
        if len(set(dims)) != len(dims):
            raise ValueError(f"For 'norm', 'dim' must name different axes, but got {dim}.")
    else:
        raise ValueError(f"For 'norm', 'dim' must be None, an int or a tuple of 1 or 2 ints, but got {_got(dim)}.")
    if len(dims) == 1:
        p = 2 if ord is None else ord
        if isinstance(p, str) or isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise ValueError(f"For 'norm', a vector norm needs a numeric 'ord', but got {ord!r}.")
        return _vector_norm(x, float(p), dims, keepdim)
    r, c = dims
    if ord is None or ord == "fro":
        return _core.sqrt(_core.sum(_core.square(x), list(dims), keepdim))
    if ord in (1, -1, math.inf, -math.inf) and not isinstance(ord, bool):
        summed, red = (r, c) if ord in (1, -1) else (c, r)  # 1: column sums (over rows); inf: row sums
        s = _core.sum(_core.abs(x), [summed], True)
        pick = _core.amax if ord > 0 else _core.amin
        out = pick(s, [red], True)
        return out if keepdim else _core.squeeze(out, sorted(dims))
    raise ValueError(f"For 'norm', the matrix norm ord={ord!r} is not supported (Kiln supports None, 'fro', 1, -1, "
                     f"inf and -inf; 'nuc' and ±2 need singular values).")


def addn(x):
    """MindSpore's ops.addn(x): the elementwise sum of a tuple/list of Tensors of one shape and dtype. Raises
    TypeError (not a non-empty sequence of Tensors, dtypes differ), ValueError (shapes differ)."""
    if not isinstance(x, (tuple, list)) or not x:
        raise TypeError(f"For 'addn', the input must be a non-empty tuple or list of Tensors, but got {_got(x)}.")
    ts = [_tensor_arg(t, "addn", f"x[{i}]") for i, t in enumerate(x)]
    for i, t in enumerate(ts[1:], 1):
        if tuple(t.shape) != tuple(ts[0].shape):
            raise ValueError(f"For 'addn', all inputs must have one shape, but x[0] has {tuple(ts[0].shape)} and "
                             f"x[{i}] has {tuple(t.shape)}.")
        if t.dtype != ts[0].dtype:
            raise TypeError(f"For 'addn', all inputs must have one dtype, but got {ts[0].dtype} and {t.dtype}.")
    out = ts[0]
    for t in ts[1:]:
        out = _core.add(out, t)
    return out if len(ts) > 1 else _core.identity(out)


def _scalar(v, op, name):
    """A Python number from a number or a 0-d Tensor (which must be concrete: not a value of a trace)."""
    if isinstance(v, Tensor):
        if v.ndim != 0:
            raise ValueError(f"For '{op}', '{name}' must be a number or a 0-d Tensor, but got shape "
                             f"{tuple(v.shape)}.")
        return v.asnumpy().item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"For '{op}', '{name}' must be a number or a 0-d Tensor, but got {_got(v)}.")
    return v


def linspace(start, end, steps):
    """MindSpore's ops.linspace(start, end, steps): `steps` evenly spaced float32 values from start to end inclusive
    (start + i·(end − start)/(steps − 1); steps == 1 gives [start]). start/end are numbers or 0-d Tensors (a float
    Tensor start sets the dtype); gradients flow to Tensor start/end. Raises TypeError / ValueError (steps < 1)."""
    steps = int_arg("linspace", "steps", steps.asnumpy().item() if isinstance(steps, Tensor) else steps, 1)
    dt = start.dtype if isinstance(start, Tensor) and mstype.is_float(start.dtype) else mstype.float32
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor):
            if v.ndim != 0:
                raise ValueError(f"For 'linspace', '{name}' must be a number or a 0-d Tensor, but got shape "
                                 f"{tuple(v.shape)}.")
        elif isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'linspace', '{name}' must be a number or a 0-d Tensor, but got {_got(v)}.")
    s = start if isinstance(start, Tensor) else Tensor(np.asarray(start, mstype.dtype_to_nptype(dt)), dt)
    e = end if isinstance(end, Tensor) else Tensor(np.asarray(end, mstype.dtype_to_nptype(dt)), dt)
    s = s if s.dtype == dt else _core.cast(s, dt)
    e = e if e.dtype == dt else _core.cast(e, dt)
    if steps == 1:
        return _core.reshape(s, [1])
    i = _core.arange(0, steps, 1, dt)
    delta = _core.div(_core.sub(e, s), float(steps - 1))
    out = _core.add(s, _core.mul(i, delta))
    # the last value is `end` exactly, as NumPy's linspace (the mask from integers: float16 counts are inexact)
    last = _core.equal(_core.arange(0, steps, 1, mstype.int32), steps - 1)
    return _core.select(last, _core.broadcast_to(e, [steps]), out)


def range(start, end, step, maxlen=1000000):
    """MindSpore's ops.range(start, end, step, maxlen=1000000): the values start, start + step, ... before `end`
    (0-d Tensors or numbers; concrete values — inside a compiled function pass Python numbers). Integer inputs give
    Int64, float inputs Float32 (MindSpore's CPU kernel). Raises ValueError (step 0, a step whose sign cannot reach
    end, more than maxlen values)."""
    vals = [_scalar(v, "range", n) for n, v in (("start", start), ("end", end), ("step", step))]
    is_float = builtins.any(isinstance(v, float) for v in vals) or builtins.any(
        isinstance(t, Tensor) and mstype.is_float(t.dtype) for t in (start, end, step))
    s, e, d = vals
    if d == 0:
        raise ValueError("For 'range', 'step' must not be 0.")
    if (e - s) * d < 0:
        raise ValueError(f"For 'range', 'step' ({d}) cannot go from start ({s}) to end ({e}).")
    n = math.ceil((e - s) / d)
    if n > maxlen:
        raise ValueError(f"For 'range', the output would have {n} values, more than maxlen = {maxlen}.")
    return _core.arange(float(s), float(e), float(d), mstype.float32 if is_float else mstype.int64)


def make_range(*args):
    """MindSpore's ops.make_range(start=0, limit, delta=1): the tuple of Python ints of range(*args) (1 to 3 ints).
    Raises TypeError for non-ints, ValueError for a zero delta."""
    if not 1 <= len(args) <= 3 or not builtins.all(_is_int(a) for a in args):
        raise TypeError(f"For 'make_range', the input must be 1 to 3 ints, but got {_got(args)}.")
    if len(args) == 3 and args[2] == 0:
        raise ValueError("For 'make_range', 'delta' must not be 0.")
    return tuple(builtins.range(*args))


def tuple_len(*args):
    """MindSpore's ops.tuple_len(x): the length of the tuple x (a Python int)."""
    if len(args) != 1 or not isinstance(args[0], (tuple, list)):
        raise TypeError(f"For 'tuple_len', the input must be one tuple, but got {_got(args)}.")
    return len(args[0])


def _number_leaves(x):
    """True when x is a number or a (nested) tuple/list whose leaves are all numbers (bools count, as Python ints)."""
    if isinstance(x, (tuple, list)):
        return builtins.all(_number_leaves(v) for v in x)
    return isinstance(x, numbers.Real)


def tuple_to_array(input_x):
    """MindSpore's ops.tuple_to_array(input_x): a Tensor of the tuple's numbers — Int32 when its first element is a
    Python int or bool, else Float32 (MindSpore 2.10's rule: the first element decides, later ones are converted,
    floats truncated toward 0 for Int32). A tuple of equal-length tuples gives a 2-D (n-D) Float32 Tensor.

    Raises:
        TypeError: not a non-empty tuple/list, an element that is not a number, or ragged nested tuples.
        ValueError: an int outside Int32's range (MindSpore wraps it around).
    """
    if not isinstance(input_x, (tuple, list)) or not input_x or not _number_leaves(input_x):
        raise TypeError(f"For 'tuple_to_array', the input must be a non-empty tuple of numbers (or of equal-length "
                        f"tuples of numbers), but got {_got(input_x)}.")
    try:
        values = np.array(input_x, dtype=np.float64)
    except ValueError:
        raise TypeError(f"For 'tuple_to_array', nested tuples must all have the same length, but got "
                        f"{input_x!r}.") from None
    if isinstance(input_x[0], int):  # bool included
        if not builtins.all(-2**31 <= int(v) < 2**31 for v in np.trunc(values).reshape(-1)):
            raise ValueError(f"For 'tuple_to_array', the values must fit Int32 (the dtype the first element, an int, "
                             f"gives), but got {input_x!r}.")
        return Tensor(np.trunc(values).astype(np.int32))
    return Tensor(values.astype(np.float32))


def scalar_to_tensor(input_x, dtype=mstype.float32):
    """MindSpore's ops.scalar_to_tensor(input_x, dtype=float32): a 0-d Tensor of the number input_x (a bool counts:
    True → 1) in `dtype`. Raises TypeError for a non-number or a bad dtype."""
    if not isinstance(input_x, numbers.Real):
        raise TypeError(f"For 'scalar_to_tensor', the input must be a number, but got {_got(input_x)}.")
    dtype = dtype_arg("scalar_to_tensor", "dtype", dtype)
    return Tensor(np.asarray(input_x, dtype=mstype.dtype_to_nptype(dtype)), dtype)


def _stands_for_parameter(x):
    from .._compiler.capture import stands_for_parameter
    return stands_for_parameter(x)


def _assign_op(variable, value, op, fn):
    from ..common.parameter import Parameter
    if not isinstance(variable, Parameter) and not (_core.tracing() and _stands_for_parameter(variable)):
        raise TypeError(f"For '{op}', 'variable' must be a Parameter, but got {_got(variable)}.")
    if not isinstance(value, Tensor):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"For '{op}', 'value' must be a Tensor or a number, but got {_got(value)}.")
    new = fn(variable, value)
    if new.dtype != variable.dtype:
        new = _core.cast(new, variable.dtype)
    if tuple(new.shape) != tuple(variable.shape):
        raise ValueError(f"For '{op}', 'value' of shape {tuple(value.shape)} does not broadcast to the variable's "
                         f"shape {tuple(variable.shape)}.")
    return assign(variable, new)


def assign_add(variable, value):
    """MindSpore's ops.assign_add(variable, value): variable ← variable + value (the Parameter updated in place, and
    returned; functional under a gradient or in compiled code, as ops.assign). value broadcasts to the variable's
    shape and is cast to its dtype. Raises TypeError (not a Parameter), ValueError (shapes)."""
    return _assign_op(variable, value, "assign_add", _core.add)


def assign_sub(variable, value):
    """MindSpore's ops.assign_sub(variable, value): variable ← variable − value (in place, as ops.assign_add)."""
    return _assign_op(variable, value, "assign_sub", _core.sub)


def bias_add(input_x, bias, data_format="NCHW"):
    """MindSpore's ops.bias_add(input_x, bias) (BiasAdd primitive): the 1-D `bias` (C,) added along the channel axis
    of input_x — axis 1 for 'NCHW'/'NCDHW' (any rank >= 2), the last axis for 'NHWC'. Raises TypeError (non-Tensors,
    dtypes differ), ValueError (rank < 2, bias not 1-D or of the wrong length, a bad data_format)."""
    x = _tensor_arg(input_x, "bias_add", "input_x")
    b = _tensor_arg(bias, "bias_add", "bias")
    if data_format not in ("NCHW", "NHWC", "NCDHW"):
        raise ValueError(f"For 'bias_add', 'data_format' must be 'NCHW', 'NHWC' or 'NCDHW', but got "
                         f"{data_format!r}.")
    if x.ndim < 2:
        raise ValueError(f"For 'bias_add', 'input_x' must have rank >= 2, but got shape {tuple(x.shape)}.")
    axis = x.ndim - 1 if data_format == "NHWC" else 1
    if b.ndim != 1 or b.shape[0] != x.shape[axis]:
        raise ValueError(f"For 'bias_add', 'bias' must be 1-D of length {x.shape[axis]} (the channels of input_x "
                         f"{tuple(x.shape)}), but got shape {tuple(b.shape)}.")
    if b.dtype != x.dtype:
        raise TypeError(f"For 'bias_add', 'input_x' and 'bias' must have one dtype, but got {x.dtype} and {b.dtype}.")
    shape = [1] * x.ndim
    shape[axis] = b.shape[0]
    return _core.add(x, _core.reshape(b, shape))


def normal(shape, mean, stddev, seed=None):
    """MindSpore's ops.normal(shape, mean, stddev, seed=None): Gaussian float32 samples with the given mean and
    standard deviation (numbers or Tensors), of the broadcast of `shape`, mean's and stddev's shapes. The stream
    follows kiln.set_seed / `seed` as the other random ops."""
    for name, v in (("mean", mean), ("stddev", stddev)):
        if not isinstance(v, Tensor) and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise TypeError(f"For 'normal', '{name}' must be a number or a Tensor, but got {_got(v)}.")
    shape = shape_arg("normal", "shape", shape, minimum=0)
    extra = [tuple(v.shape) for v in (mean, stddev) if isinstance(v, Tensor) and v.ndim]  # 0-d ones broadcast freely
    full = _broadcast_shapes(shape, *extra) if extra else shape
    s, stream = _seed._next_key("standard_normal", seed)  # the stream standard_normal(full, seed) would use
    z = _recompute.draw("standard_normal", list(full), mstype.float32, s, 0, stream)
    return _core.add(_core.mul(z, stddev), mean)


def reduce_sum(x, axis=()):
    """MindSpore's ops.reduce_sum(x, axis=()): the sum over `axis` (an int or a tuple; () sums all axes)."""
    x = _tensor_arg(x, "reduce_sum", "x")
    axes = axes_arg("reduce_sum", "axis", axis)
    if axes == () or axes is None:
        axes = None
    return _core.sum(x, None if axes is None else (list(axes) if isinstance(axes, (tuple, list)) else [axes]), False)


# ---------------------------------------------------------------------------------------------- Primitive classes

class Round(Primitive):
    """Round()(input, decimals=0): see ops.round (halves to even); decimals is a call input as in MindSpore 2.10
    (Round()(x, 0) and Round()(x, decimals=0))."""

    def __call__(self, input, decimals=0):
        return round(input, decimals=decimals)


class AddN(Primitive):
    """AddN()(x): see ops.addn."""

    def __call__(self, x):
        return addn(x)


class LinSpace(Primitive):
    """LinSpace()(start, stop, num): see ops.linspace."""

    def __call__(self, start, stop, num):
        return linspace(start, stop, num)


class AssignAdd(Primitive):
    """AssignAdd()(variable, value): see ops.assign_add."""

    def __call__(self, variable, value):
        return assign_add(variable, value)


class AssignSub(Primitive):
    """AssignSub()(variable, value): see ops.assign_sub."""

    def __call__(self, variable, value):
        return assign_sub(variable, value)


class BiasAdd(Primitive):
    """BiasAdd(data_format='NCHW')(input_x, bias): see ops.bias_add."""

    def __init__(self, data_format="NCHW"):
        super().__init__("BiasAdd")
        if data_format not in ("NCHW", "NHWC", "NCDHW"):
            raise ValueError(f"For 'BiasAdd', 'data_format' must be 'NCHW', 'NHWC' or 'NCDHW', but got "
                             f"{data_format!r}.")
        self.data_format = data_format

    def __call__(self, input_x, bias):
        return bias_add(input_x, bias, self.data_format)


class L2Normalize(Primitive):
    """L2Normalize(axis=0, epsilon=1e-4)(x): x / sqrt(max(Σ x², epsilon)) with the sum over `axis` (an int or a
    tuple/list of ints) kept as size-1 axes (MindSpore's formula). Same shape and dtype."""

    def __init__(self, axis=0, epsilon=1e-4):
        super().__init__("L2Normalize")
        self.axis = axes_arg("L2Normalize", "axis", axis, allow_none=False)
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
            raise TypeError(f"For 'L2Normalize', 'epsilon' must be a float, but got {_got(epsilon)}.")
        self.epsilon = float(epsilon)

    def __call__(self, x):
        x = _tensor_arg(x, "L2Normalize", "x")
        axes = list(self.axis) if isinstance(self.axis, (tuple, list)) else [self.axis]
        for a in axes:
            if not -x.ndim <= a < builtins.max(x.ndim, 1):
                raise ValueError(f"For 'L2Normalize', 'axis' {a} is out of range for x of shape {tuple(x.shape)}.")
        ss = _core.sum(_core.square(x), axes, True)
        return _core.mul(x, _core.rsqrt(_core.maximum(ss, self.epsilon)))


def _op_seed(seed, seed2):
    """The op-level seed of a (seed, seed2) pair: None when both are 0 (the global seed decides)."""
    return (seed << 32) | seed2 if seed or seed2 else None


class UniformReal(Primitive):
    """UniformReal(seed=0, seed2=0)(shape): float32 samples uniform in [0, 1) of `shape` (a tuple of ints). seed and
    seed2 both 0 follow the global seed (kiln.set_seed); otherwise they fix the stream, as ops.uniform's seed."""

    def __init__(self, seed=0, seed2=0):
        super().__init__("UniformReal")
        self.seed = int_arg("UniformReal", "seed", seed, 0)
        self.seed2 = int_arg("UniformReal", "seed2", seed2, 0)

    def __call__(self, shape):
        from .function import _shape_arg
        s, stream = _seed._next_key("UniformReal", _op_seed(self.seed, self.seed2))
        return _recompute.draw("uniform_real", list(_shape_arg(shape, "UniformReal", "shape")), mstype.float32, s, 0, stream)


class StandardNormal(Primitive):
    """StandardNormal(seed=0, seed2=0)(shape): float32 samples of N(0, 1) of `shape`; seeds as UniformReal's."""

    def __init__(self, seed=0, seed2=0):
        super().__init__("StandardNormal")
        self.seed = int_arg("StandardNormal", "seed", seed, 0)
        self.seed2 = int_arg("StandardNormal", "seed2", seed2, 0)

    def __call__(self, shape):
        from .function import _shape_arg
        s, stream = _seed._next_key("StandardNormal", _op_seed(self.seed, self.seed2))
        return _recompute.draw("standard_normal", list(_shape_arg(shape, "StandardNormal", "shape")), mstype.float32, s, 0,
                                     stream)


class TupleToArray(Primitive):
    """TupleToArray()(input_x): see ops.tuple_to_array."""

    def __call__(self, input_x):
        return tuple_to_array(input_x)


class ScalarToTensor(Primitive):
    """ScalarToTensor()(input_x, dtype=float32): see ops.scalar_to_tensor."""

    def __call__(self, input_x, dtype=mstype.float32):
        return scalar_to_tensor(input_x, dtype)
