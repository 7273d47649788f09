"""Parameter initializers, as MindSpore's `mindspore.common.initializer`.

`initializer(init, shape, dtype)` returns a Tensor filled by `init`: an Initializer instance, its name as a string
('zeros', 'ones', 'normal', 'uniform', 'he_uniform', 'xavier_uniform', ...), a number (every element equals it) or
a Tensor (returned as is after a shape check).

Randomness (as MindSpore, ../shared/reference/mindspore_api.md §1.5): every random initializer draws one 63-bit seed
from NumPy's *global* RNG (`np.random.randint(1, 2**63)`) and fills the array from a Philox generator seeded with it,
in float64, then casts to the requested dtype. So `kiln.set_seed(n)` (which seeds NumPy) or `np.random.seed(n)`
makes initialization reproducible, and any other draw from NumPy's global RNG in between changes it. The numbers are
not MindSpore's (a different Philox stream), but have the same distributions.

Fan computation (`_calculate_fan_in_and_fan_out`) follows MindSpore/PyTorch: for a shape (out, in, *k),
fan_in = in·Πk and fan_out = out·Πk.
"""
import math
import numbers

import numpy as np

from .. import _engine
from ..ops import _kernels
from . import dtype as mstype
from . import _deferred_init

__all__ = ["Initializer", "initializer", "TruncatedNormal", "Normal", "Uniform", "HeUniform", "HeNormal",
           "XavierUniform", "XavierNormal", "One", "Zero", "Constant", "Identity", "Orthogonal", "VarianceScaling"]

_ALIAS = {}


def _register(*aliases):
    """Registers an Initializer class under its lower-cased class name and `aliases`."""
    def deco(cls):
        _ALIAS[cls.__name__.lower()] = cls
        for a in aliases:
            _ALIAS[a] = cls
        return cls
    return deco


def _rng():
    """A Philox generator seeded by one draw from NumPy's global RNG (see the module docstring)."""
    seed = int(np.random.randint(1, 2**63, dtype=np.int64))
    return np.random.Generator(np.random.Philox(seed))


def _assign(arr, data):
    """Writes `data` into the NumPy array `arr` (in place, cast to arr's dtype). A Python int that does not fit an
    integer dtype raises OverflowError (NumPy 2's rule)."""
    if isinstance(data, (bool, int, float)):
        arr[...] = data
    elif arr.shape == ():
        arr[()] = np.asarray(data).reshape(()) if np.size(data) == 1 else data
    else:
        arr[...] = data


def _calculate_fan_in_and_fan_out(shape):
    """(fan_in, fan_out) of a weight of `shape`: (in, out) for 2-D, (in·Πk, out·Πk) for (out, in, *k).

    Raises ValueError for fewer than 2 dimensions."""
    dims = len(shape)
    if dims < 2:
        raise ValueError(f"'fan_in' and 'fan_out' can not be computed for tensor with fewer than 2 dimensions, "
                         f"but got dimensions {dims}.")
    if dims == 2:
        return shape[1], shape[0]
    receptive = 1
    for d in shape[2:]:
        receptive *= d
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(shape, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"For initializer, the argument 'mode' must be 'fan_in' or 'fan_out', but got {mode!r}.")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
    return fan_in if mode == "fan_in" else fan_out


def _calculate_gain(nonlinearity, param=None):
    """The recommended gain for `nonlinearity` (as torch.nn.init.calculate_gain / MindSpore's copy of it):
    linear/conv*/sigmoid → 1, tanh → 5/3, relu → √2, leaky_relu(slope) → √(2/(1+slope²)), selu → 3/4."""
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, numbers.Number):
            raise ValueError(f"For initializer, 'negative_slope' must be a number, but got {param!r}.")
        else:
            slope = float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"For initializer, the argument 'nonlinearity' must be one of linear, conv1d, conv2d, conv3d, "
                     f"conv_transpose1d, conv_transpose2d, conv_transpose3d, sigmoid, tanh, relu, leaky_relu, selu, "
                     f"but got {nonlinearity!r}.")


class Initializer:
    """Base class of initializers. A subclass implements `_initialize(arr)`, which fills the NumPy array `arr`
    in place; `init(arr)` calls it. `initializer(init, shape, dtype)` makes the array and the Tensor."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._seed = None

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    def _initialize(self, arr):
        raise NotImplementedError(f"{type(self).__name__}._initialize(arr) is not implemented.")

    def __call__(self, arr):
        return self._initialize(arr)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


@_register("zeros")
class Zero(Initializer):
    """All zeros."""

    def _initialize(self, arr):
        _assign(arr, 0)


@_register("ones")
class One(Initializer):
    """All ones."""

    def _initialize(self, arr):
        _assign(arr, 1)


@_register()
class Constant(Initializer):
    """Every element equals `value` (a number)."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _initialize(self, arr):
        _assign(arr, self.value)


@_register("eye")
class Identity(Initializer):
    """The identity matrix (2-D shapes only; ValueError otherwise)."""

    def _initialize(self, arr):
        if arr.ndim != 2:
            raise ValueError(f"For Identity initializer, the dimension of the initialized tensor should be 2, "
                             f"but got {arr.ndim}.")
        _assign(arr, np.eye(arr.shape[0], arr.shape[1]))


@_register()
class Uniform(Initializer):
    """U(−scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _initialize(self, arr):
        _assign(arr, _rng().uniform(-self.scale, self.scale, arr.shape))


@_register()
class Normal(Initializer):
    """N(mean, sigma²)."""

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma = sigma
        self.mean = mean

    def _initialize(self, arr):
        _assign(arr, _rng().normal(self.mean, self.sigma, arr.shape))


def _truncated_normal(rng, shape, mean, sigma, a, b):
    """N(mean, sigma²) restricted to [a, b] (absolute bounds), by resampling the values outside."""
    if a >= b:
        raise ValueError(f"For TruncatedNormal, 'a' must be less than 'b', but got a={a}, b={b}.")
    out = rng.normal(mean, sigma, shape)
    bad = (out < a) | (out > b)
    for _ in range(1000):
        n = int(bad.sum())
        if n == 0:
            return out
        out[bad] = rng.normal(mean, sigma, n)
        bad = (out < a) | (out > b)
    return np.clip(out, a, b)


@_register("truncated_normal")
class TruncatedNormal(Initializer):
    """N(mean, sigma²) truncated to [a, b] (values outside are redrawn)."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _initialize(self, arr):
        _assign(arr, _truncated_normal(_rng(), arr.shape, self.mean, self.sigma, self.a, self.b))


@_register("he_uniform")
class HeUniform(Initializer):
    """Kaiming uniform: U(−bound, bound), bound = √3 · gain(nonlinearity, negative_slope) / √fan(mode).

    nn.Dense/Conv use HeUniform(negative_slope=√5): bound = 1/√fan_in."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _initialize(self, arr):
        fan = _calculate_correct_fan(arr.shape, self.mode)
        gain = _calculate_gain(self.nonlinearity, self.negative_slope)
        bound = math.sqrt(3.0) * gain / math.sqrt(fan)
        _assign(arr, _rng().uniform(-bound, bound, arr.shape))


@_register("he_normal")
class HeNormal(Initializer):
    """Kaiming normal: N(0, std²), std = gain(nonlinearity, negative_slope) / √fan(mode)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _initialize(self, arr):
        fan = _calculate_correct_fan(arr.shape, self.mode)
        gain = _calculate_gain(self.nonlinearity, self.negative_slope)
        _assign(arr, _rng().normal(0.0, gain / math.sqrt(fan), arr.shape))


@_register("xavier_uniform")
class XavierUniform(Initializer):
    """Glorot uniform: U(−b, b), b = gain · √(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        _assign(arr, _rng().uniform(-bound, bound, arr.shape))


@_register("xavier_normal")
class XavierNormal(Initializer):
    """Glorot normal: N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        std = self.gain * math.sqrt(2.0 / (fan_in + fan_out))
        _assign(arr, _rng().normal(0.0, std, arr.shape))


@_register()
class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain` (dims after the first are flattened), from the QR decomposition of a
    standard normal matrix. Needs at least 2 dimensions (ValueError)."""

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        if arr.ndim < 2:
            raise ValueError(f"For Orthogonal initializer, the dimension of the initialized tensor should be no less "
                             f"than 2, but got {arr.ndim}.")
        rows = arr.shape[0]
        cols = int(np.prod(arr.shape[1:]))
        flat = _rng().normal(0.0, 1.0, (rows, cols))
        if rows < cols:
            flat = flat.T
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        _assign(arr, (self.gain * q).reshape(arr.shape))


@_register()
class VarianceScaling(Initializer):
    """scale/n variance (n = fan_in, fan_out or their mean by `mode`), from a truncated normal
    ('truncated_normal'), a normal ('untruncated_normal') or a uniform ('uniform') distribution."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        if scale <= 0:
            raise ValueError(f"For VarianceScaling, 'scale' must be greater than 0, but got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"For VarianceScaling, 'mode' must be 'fan_in', 'fan_out' or 'fan_avg', but got {mode!r}.")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"For VarianceScaling, 'distribution' must be 'uniform', 'truncated_normal' or "
                             f"'untruncated_normal', but got {distribution!r}.")
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        n = {"fan_in": fan_in, "fan_out": fan_out}.get(self.mode, (fan_in + fan_out) / 2.0)
        scale = self.scale / max(1.0, n)
        rng = _rng()
        if self.distribution == "truncated_normal":
            std = math.sqrt(scale) / 0.87962566103423978  # std of N(0,1) truncated to [-2, 2]
            data = _truncated_normal(rng, arr.shape, 0.0, std, -2 * std, 2 * std)
        elif self.distribution == "untruncated_normal":
            data = rng.normal(0.0, math.sqrt(scale), arr.shape)
        else:
            limit = math.sqrt(3.0 * scale)
            data = rng.uniform(-limit, limit, arr.shape)
        _assign(arr, data)


def _normalize_shape(shape):
    if shape is None:
        raise ValueError("For 'initializer', the argument 'shape' must be given.")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (list, tuple)):
        shape = tuple(shape)
    else:
        raise TypeError(f"For 'initializer', the argument 'shape' must be an int, tuple or list, but got "
                        f"{type(shape).__name__}.")
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
            raise ValueError(f"For 'initializer', the argument 'shape' is invalid, the value of 'shape' must be "
                             f"positive integer, but got {shape}.")
    return tuple(int(d) for d in shape)


def initializer(init, shape=None, dtype=mstype.float32):
    """A Tensor of `shape` and `dtype` filled by `init`.

    Args:
        init: an Initializer, its registered name (case-insensitive: 'zeros'/'zero', 'ones'/'one', 'normal',
            'uniform', 'truncatednormal', 'he_uniform'/'heuniform', 'he_normal', 'xavier_uniform', 'xavier_normal',
            'identity'/'eye', 'orthogonal', 'variancescaling', 'constant' needs a value so use Constant(v)),
            a number (a constant), or a Tensor (returned unchanged; its shape must equal `shape` when given).
        shape: int, tuple or list of non-negative ints.
        dtype: a Kiln dtype (default float32). Random values are drawn in float64 and cast.
    Returns:
        Tensor: concrete, except inside `nn.no_init_parameters()` where its values are drawn by init_data()
            (kiln/common/_deferred_init.py).
    Raises:
        TypeError: `init` of another type, or a bad `shape` type.
        ValueError: unknown initializer name, negative dims, or a Tensor `init` whose shape differs.
    """
    if isinstance(init, _engine.Tensor):
        if shape is not None:
            want = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            if tuple(init.shape) != want:
                raise ValueError(f"For 'initializer', the shape of the 'init' argument should be same as the argument "
                                 f"'shape', but got the 'init' shape {list(init.shape)} and the 'shape' {list(want)}.")
        return init
    if isinstance(init, bool) or not isinstance(init, (numbers.Number, str, Initializer)):
        raise TypeError(f"For 'initializer', the type of the 'init' argument should be 'Tensor', 'number', 'string' "
                        f"or 'initializer', but got {type(init)}.")
    shape = _normalize_shape(shape)
    dtype = mstype.to_dtype(dtype)
    if isinstance(init, str):
        cls = _ALIAS.get(init.lower())
        if cls is None:
            raise ValueError(f"For 'initializer', the class corresponding to '{init}' was not found.")
        init = cls()
    elif isinstance(init, numbers.Number):
        init = Constant(init)
    if _deferred_init.active():  # nn.no_init_parameters(): zeros now, the values at init_data()
        return _deferred_init.mark_pending(_kernels.full(list(shape), 0, dtype), init, shape, dtype)
    return _deferred_init.mark_initialized(_draw(init, shape, dtype), init)


def _draw(init, shape, dtype):
    """A new Tensor of `shape`/`dtype` filled by Initializer `init` (drawn in float64 for float dtypes, then cast)."""
    np_dtype = np.float64 if mstype.is_float(dtype) else mstype.dtype_to_nptype(dtype)
    arr = np.zeros(shape, dtype=np_dtype)
    try:
        out = init(arr)
    except OverflowError as e:
        raise OverflowError(f"For 'initializer', {e} (dtype {dtype}).") from None
    if isinstance(out, np.ndarray) and out is not arr and out.shape == arr.shape:
        arr = out  # an Initializer whose _initialize returns the data instead of filling arr
    t = _engine.Tensor._from_numpy(np.asarray(arr, order="C"))
    if t.dtype != dtype:
        t = _kernels.cast(t, dtype)
    return t
