"""Random sampling and creation ops: MindSpore 2.10's ops.bernoulli, multinomial, rand_like, randn_like,
randint_like, randperm, shuffle, standard_laplace, laplace, random_gamma, choice_with_mask, random_categorical
(random ops) and logspace, hann_window,
hamming_window, blackman_window, bartlett_window, kaiser_window (deterministic creation), with their Primitive
classes where MindSpore has them.

Every random op draws from Kiln's Philox kernels (UniformReal, StandardNormal, UniformInt) keyed as the other random
ops are (kiln/common/seed.py): set_seed makes the draws repeat, successive calls differ, an op-level `seed` fixes the
stream, and PyNative and Graph mode draw the same numbers. Distributions are transformations of those draws:
  bernoulli: u < p; multinomial: inverse CDF of the normalised weights (with replacement) or the k smallest
  exponential races −log(u)/w (without: the Gumbel top-k trick, Efraimidis & Spirakis 2006); randperm / shuffle:
  the order of n uniform keys; Laplace: −sign(v)·log(1 − 2|v|), v uniform in (−½, ½) (inverse CDF); gamma:
  Marsaglia & Tsang's method (ACM TOMS 26(3), 2000) with 16 candidate pairs per sample (each accepted with
  probability > 0.95 for alpha >= 1, so all 16 fail with probability < 1e-20; then the last candidate is taken), and
  Gamma(alpha) = Gamma(alpha + 1)·U^(1/alpha) for alpha < 1.
Windows are NumPy's formulas (np.hanning / np.hamming / np.blackman / np.bartlett / np.kaiser; the periodic window of
length N is the symmetric one of length N + 1 without its last point), as constants."""
import math
import numbers

import numpy as np

from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, _is_int, dtype_arg, int_arg, shape_arg
from ..common import dtype as mstype
from .._autodiff import recompute as _recompute
from ..common import seed as _seed
from ..common.tensor import Tensor
from ._opdef import defop
from .function import _tensor_arg
from .primitives import Primitive

__all__ = ["bernoulli", "multinomial", "rand_like", "randn_like", "randint_like", "randperm", "shuffle",
           "standard_laplace", "laplace", "random_gamma", "gamma", "RandomGamma", "Gamma", "logspace", "hann_window", "hamming_window",
           "blackman_window", "bartlett_window", "kaiser_window", "choice_with_mask", "random_categorical"]


def _uniform(shape, dtype, op, seed):
    s, stream = _seed._next_key(op, seed)
    return _recompute.draw("uniform_real", list(shape), dtype, s, 0, stream)


def _seed_arg(seed, op):
    """An op-level seed: None (follow the global seed) or a non-negative int; MindSpore's -1 / 0 mean 'none'."""
    if seed is None:
        return None
    if not _is_int(seed):
        raise TypeError(f"For '{op}', 'seed' must be an int or None, but got {_got(seed)}.")
    seed = int(seed)
    if seed in (-1, 0):
        return None
    if seed < 0:
        raise ValueError(f"For '{op}', 'seed' must be >= -1, but got {seed}.")
    return seed


@defop(primitive="Bernoulli", prim_attrs={"seed": ("seed", -1)})
def bernoulli(input, p=0.5, seed=None):
    """MindSpore's ops.bernoulli(input, p=0.5, seed=None): a Tensor of input's shape and dtype holding 1 with
    probability p and 0 otherwise, independently. p: a float in [0, 1] or a float Tensor of input's shape (or of
    one element). TypeError for a bad p, ValueError for p outside [0, 1] or of another shape."""
    x = _tensor_arg(input, "bernoulli")
    seed = _seed_arg(seed, "bernoulli")
    if isinstance(p, Tensor):
        if p.size != 1 and tuple(p.shape) != tuple(x.shape):
            raise ValueError(f"For 'bernoulli', 'p' must have input's shape {tuple(x.shape)} or one element, but got "
                             f"{tuple(p.shape)}.")
        prob = _core.cast(p, mstype.float32) if p.dtype != mstype.float32 else p
        if p.size == 1:
            prob = _core.reshape(prob, [])
    elif isinstance(p, (int, float, np.number)) and not isinstance(p, bool):
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"For 'bernoulli', 'p' must be in [0, 1], but got {p}.")
        prob = float(p)
    else:
        raise TypeError(f"For 'bernoulli', 'p' must be a float or a Tensor, but got {_got(p)}.")
    u = _uniform(x.shape, mstype.float32, "bernoulli", seed)
    return _core.cast(_core.less(u, prob), x.dtype)


@defop(primitive="Multinomial", prim_attrs={"seed": ("seed", 0)}, tensor="multinomial")
def multinomial(input, num_samples, replacement=True, seed=None):
    """MindSpore's ops.multinomial(input, num_samples, replacement=True, seed=None): Int32 indices drawn from the
    categories of each row of `input` (1-D or 2-D non-negative weights, not necessarily normalised) with
    probability weight / row sum: shape (num_samples,) or (rows, num_samples). Without replacement each index
    appears at most once per row (num_samples <= the number of categories). TypeError for a non-Tensor or bad
    num_samples, ValueError for a bad rank or num_samples, and — where the values are known (not while compiling)
    — for negative, NaN or inf weights, an all-zero row, or fewer non-zero weights in a row than num_samples
    without replacement (PyTorch's checks; MindSpore 2.10 returns unspecified draws there)."""
    x = _tensor_arg(input, "multinomial")
    if x.ndim not in (1, 2):
        raise ValueError(f"For 'multinomial', the input must be 1-D or 2-D, but got shape {tuple(x.shape)}.")
    k = int_arg("multinomial", "num_samples", num_samples, 0)
    seed = _seed_arg(seed, "multinomial")
    w = _core.cast(x, mstype.float32) if x.dtype != mstype.float32 else x
    w2 = w if w.ndim == 2 else _core.reshape(w, [1, -1])
    rows, n = w2.shape
    if not replacement and k > n:
        raise ValueError(f"For 'multinomial', without replacement 'num_samples' ({k}) must be at most the number "
                         f"of categories ({n}).")
    if not (_core.tracing() and w2._symbolic):
        _check_weights(w2, k, replacement)
    if replacement:
        idx = _draw_categorical(w2, k, seed, "multinomial")
    else:
        u = _uniform((rows, n), mstype.float32, "multinomial", seed)
        # exponential races E/w: the k first finishers are a weighted sample without replacement
        keys = _core.div(_core.neg(_core.log1p(_core.neg(u))), w2)
        order = _core.argsort(keys, 1, False)
        idx = _core.cast(_core.strided_slice(order, [0, 0], [rows, k], [1, 1]), mstype.int32)
    return idx if x.ndim == 2 else _core.reshape(idx, [k])


def _check_weights(w2, k, replacement):
    """multinomial's value checks on the (rows, n) weights (PyTorch's rules), ValueError naming the row."""
    v = w2.asnumpy()
    for r, row in enumerate(v):
        if not np.isfinite(row).all() or (row < 0).any():
            bad = row[~np.isfinite(row) | (row < 0)][0]
            raise ValueError(f"For 'multinomial', the weights must be finite and non-negative, but row {r} holds "
                             f"{float(bad):.6g}.")
        nz = int((row > 0).sum())
        if k and nz == 0:
            raise ValueError(f"For 'multinomial', each row needs a positive weight, but row {r} sums to 0.")
        if not replacement and nz < k:
            raise ValueError(f"For 'multinomial', without replacement 'num_samples' ({k}) must be at most the number "
                             f"of non-zero weights, but row {r} has {nz}.")


def _like_dtype(x, dtype, op, want):
    dt = dtype_arg(op, "dtype", dtype, x.dtype)
    ok = mstype.is_float(dt) if want == "float" else dt in mstype.int_type
    if not ok:
        raise ValueError(f"For '{op}', the 'dtype' must be {'a float' if want == 'float' else 'an int'} type, but "
                         f"got {dt}.")
    return dt


@defop()
def rand_like(input, seed=None, *, dtype=None):
    """MindSpore's ops.rand_like(input, seed=None, *, dtype=None): samples uniform in [0, 1) of input's shape, in
    `dtype` (default input's; ValueError if it is not a float type)."""
    x = _tensor_arg(input, "rand_like")
    dt = _like_dtype(x, dtype, "rand_like", "float")
    return _uniform(x.shape, dt, "rand_like", _seed_arg(seed, "rand_like"))


@defop()
def randn_like(input, seed=None, *, dtype=None):
    """MindSpore's ops.randn_like(input, seed=None, *, dtype=None): standard normal samples of input's shape, in
    `dtype` (default input's; ValueError if it is not a float type)."""
    x = _tensor_arg(input, "randn_like")
    dt = _like_dtype(x, dtype, "randn_like", "float")
    s, stream = _seed._next_key("randn_like", _seed_arg(seed, "randn_like"))
    return _recompute.draw("standard_normal", list(x.shape), dt, s, 0, stream)


@defop()
def randint_like(input, low, high, seed=None, *, dtype=None):
    """MindSpore's ops.randint_like(input, low, high, seed=None, *, dtype=None): integers uniform in [low, high) of
    input's shape, in `dtype` (default input's; ValueError if it is not an int type). TypeError for non-int bounds,
    ValueError for high <= low or bounds outside the dtype."""
    x = _tensor_arg(input, "randint_like")
    dt = _like_dtype(x, dtype, "randint_like", "int")
    low = int_arg("randint_like", "low", low)
    high = int_arg("randint_like", "high", high)
    if high <= low:
        raise ValueError(f"For 'randint_like', 'high' must be > 'low', but got low={low}, high={high}.")
    info = np.iinfo(mstype.dtype_to_nptype(dt))
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"For 'randint_like', [{low}, {high}) does not fit {dt}.")
    s, stream = _seed._next_key("randint_like", _seed_arg(seed, "randint_like"))
    return _recompute.draw("uniform_int", list(x.shape), low, high, dt, s, 0, stream)


def _permutation(n, op, seed, offset=0):
    if offset:  # another stream of the same seed (Kiln's streams hand out their own positions)
        seed = ((seed or 0) * 1000003 + offset) % (2 ** 62) + 1
    s, stream = _seed._next_key(op, seed)
    u = _recompute.draw("uniform_real", [n], mstype.float32, s, 0, stream)
    return _core.argsort(u, 0, False)


@defop()
def randperm(n, seed=0, offset=0, dtype=mstype.int64):
    """MindSpore's ops.randperm(n, seed=0, offset=0, dtype=int64): a random permutation of 0 … n−1 (the order of
    n uniform keys; ties, of probability ~n²/2²⁴, keep index order). seed 0 follows the global seed; a non-zero
    `offset` selects another stream of the same seed (Kiln's streams keep their own positions). TypeError for
    non-int arguments or a non-integer dtype, ValueError for n < 0 or offset < 0."""
    n = int_arg("randperm", "n", n, 0)
    offset = int_arg("randperm", "offset", offset, 0)
    dt = dtype_arg("randperm", "dtype", dtype, mstype.int64)
    if dt not in mstype.int_type:
        raise TypeError(f"For 'randperm', 'dtype' must be an integer type, but got {dt}.")
    perm = _permutation(n, "randperm", _seed_arg(seed, "randperm"), offset)
    return perm if dt == mstype.int64 else _core.cast(perm, dt)


@defop()
def shuffle(x, seed=None):
    """MindSpore's ops.shuffle(x, seed=None): x with its slices along axis 0 in a random order (a 0-d x is
    returned as is). Gradient: back through the permutation."""
    x = _tensor_arg(x, "shuffle", "x")
    if x.ndim == 0:
        return _core.identity(x)
    return _core.gather(x, _permutation(x.shape[0], "shuffle", _seed_arg(seed, "shuffle")), 0)


def _std_laplace(shape, op, seed):
    u = _uniform(shape, mstype.float32, op, seed)
    v = _core.sub(u, 0.5)  # (−½, ½); v = −½ has probability 2^-24 and gives +inf·0 guarded below
    a = _core.maximum(_core.sub(1.0, _core.mul(_core.abs(v), 2.0)), 1e-30)
    return _core.mul(_core.neg(_core.sign(v)), _core.log(a))


@defop(primitive="StandardLaplace", prim_attrs={"seed": ("seed", 0)})
def standard_laplace(shape, seed=None):
    """MindSpore's ops.standard_laplace(shape, seed=None): float32 samples of the Laplace distribution with mean 0
    and scale 1 (density e^(−|x|)/2), of `shape` (a tuple of ints or a 1-D int Tensor)."""
    shape = shape_arg("standard_laplace", "shape", shape, 0)
    return _std_laplace(shape, "standard_laplace", _seed_arg(seed, "standard_laplace"))


@defop()
def laplace(shape, mean, lambda_param, seed=None):
    """MindSpore's ops.laplace(shape, mean, lambda_param, seed=None): float32 samples mean + lambda_param·L, L
    standard Laplace, of the broadcast of `shape` with mean's and lambda_param's shapes (Tensors or numbers).
    TypeError for bad arguments."""
    shape = shape_arg("laplace", "shape", shape, 0)
    for name, v in (("mean", mean), ("lambda_param", lambda_param)):
        if not isinstance(v, Tensor) and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise TypeError(f"For 'laplace', '{name}' must be a Tensor or a number, but got {_got(v)}.")
    full = _broadcast_shapes(tuple(shape), *(tuple(v.shape) for v in (mean, lambda_param)
                                                if isinstance(v, Tensor)))
    z = _std_laplace(full, "laplace", _seed_arg(seed, "laplace"))
    return _core.add(_core.mul(z, lambda_param), mean)


_GAMMA_DTYPES = (mstype.float16, mstype.float32, mstype.float64)


def _gamma_param(v, op, name):
    """alpha / beta of the gamma samplers: a Float16/32/64 Tensor (TypeError otherwise, as MindSpore's RandomGamma)."""
    t = _tensor_arg(v, op, name)
    if t.dtype not in _GAMMA_DTYPES:
        raise TypeError(f"For '{op}', '{name}' must be a Float16, Float32 or Float64 Tensor, but got {t.dtype}.")
    return t


def _gamma_shape(op, shape):
    """The sample shape of the gamma samplers: a tuple of non-negative ints as is (the common call, without
    shape_arg's conversions), else shape_arg's forms (a 1-D int Tensor, a list)."""
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        return shape
    return tuple(shape_arg(op, "shape", shape, 0))


def _broadcast(op, *shapes):
    """The broadcast of shapes (NumPy's rule; ValueError naming the op)."""
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for s in shapes:
        for k, d in enumerate(s, nd - len(s)):
            if d != 1:
                if out[k] not in (1, d):
                    raise ValueError(f"For '{op}', shapes {', '.join(str(tuple(x)) for x in shapes)} (shape, alpha's, "
                                     f"beta's) do not broadcast.")
                out[k] = d
    return tuple(out)


def _gamma_draw(op, out_shape, alpha, beta, seed):
    s, stream = _seed._next_key(op, seed)
    return _recompute.draw("random_gamma", list(out_shape), alpha, beta, s, 0, stream)


@defop()
def random_gamma(shape, alpha, seed=None):
    """MindSpore's ops.random_gamma(shape, alpha, seed=None): Gamma(alpha, 1) samples of shape `shape` +
    alpha.shape, in alpha's dtype (Float16, Float32 or Float64). shape: a 1-D int Tensor (MindSpore's) or a tuple of
    ints. One RandomGamma op (src/ops/creation.cpp): Marsaglia & Tsang's method (ACM TOMS 26(3), 2000) with
    Gamma(alpha) = Gamma(alpha + 1)·U^(1/alpha) for alpha < 1, on Kiln's Philox streams (module docstring). Not
    differentiable (MindSpore's RandomGamma has no bprop). TypeError for a non-Tensor or non-float alpha (bfloat16
    included), ValueError for a bad shape and, when the op runs, for an alpha that is not positive (or NaN;
    MindSpore gives 0 or NaN there)."""
    shape = _gamma_shape("random_gamma", shape)
    a = _gamma_param(alpha, "random_gamma", "alpha")
    return _gamma_draw("random_gamma", shape + tuple(a.shape), a, None, _seed_arg(seed, "random_gamma"))


@defop()
def gamma(shape, alpha, beta, seed=None):
    """MindSpore's ops.gamma(shape, alpha, beta, seed=None): samples of the Gamma distribution with shape alpha and
    scale beta (density x^(alpha−1)·e^(−x/beta) / (beta^alpha·Γ(alpha)), MindSpore's Gamma primitive; mean
    alpha·beta, variance alpha·beta²) of the broadcast of `shape` (a tuple of ints) with alpha's and beta's shapes.
    alpha and beta: Tensors of one float dtype (Float16/32/64), the output's. One Gamma op (RandomGamma's sampler
    times beta). Not differentiable. TypeError for non-Tensor or non-float parameters or differing dtypes,
    ValueError for shapes that do not broadcast and, when the op runs, for parameters that are not positive."""
    shape = _gamma_shape("gamma", shape)
    a = _gamma_param(alpha, "gamma", "alpha")
    b = _gamma_param(beta, "gamma", "beta")
    if a.dtype != b.dtype:
        raise TypeError(f"For 'gamma', 'alpha' and 'beta' must have one dtype, but got {a.dtype} and {b.dtype}.")
    return _gamma_draw("gamma", _broadcast("gamma", shape, a.shape, b.shape), a, b, _seed_arg(seed, "gamma"))


def _op_seed(op, seed, seed2):
    """The op-level seed of a Primitive's (seed, seed2): None when both are 0 (the global seed decides)."""
    seed = int_arg(op, "seed", seed, 0)
    seed2 = int_arg(op, "seed2", seed2, 0)
    return (seed << 32) | seed2 if seed or seed2 else None


class RandomGamma(Primitive):
    """MindSpore's RandomGamma(seed=0, seed2=0)(shape, alpha): ops.random_gamma's samples (shape: a 1-D Int32/Int64
    Tensor or a tuple of ints). seed and seed2 both 0 follow the global seed; otherwise they fix the stream.
    TypeError / ValueError for negative or non-int seeds, and as random_gamma."""

    def __init__(self, seed=0, seed2=0):
        super().__init__("RandomGamma")
        self._seed = _op_seed("RandomGamma", seed, seed2)
        self.seed, self.seed2 = seed, seed2

    def __call__(self, shape, alpha):
        shape = _gamma_shape("RandomGamma", shape)
        a = _gamma_param(alpha, "RandomGamma", "alpha")
        return _gamma_draw("RandomGamma", shape + tuple(a.shape), a, None, self._seed)


class Gamma(Primitive):
    """MindSpore's Gamma(seed=0, seed2=0)(shape, alpha, beta): ops.gamma's samples (beta the scale); seeds as
    RandomGamma's."""

    def __init__(self, seed=0, seed2=0):
        super().__init__("Gamma")
        self._seed = _op_seed("Gamma", seed, seed2)
        self.seed, self.seed2 = seed, seed2

    def __call__(self, shape, alpha, beta):
        shape = _gamma_shape("Gamma", shape)
        a = _gamma_param(alpha, "Gamma", "alpha")
        b = _gamma_param(beta, "Gamma", "beta")
        if a.dtype != b.dtype:
            raise TypeError(f"For 'Gamma', 'alpha' and 'beta' must have one dtype, but got {a.dtype} and {b.dtype}.")
        return _gamma_draw("Gamma", _broadcast("Gamma", shape, a.shape, b.shape), a, b, self._seed)


# ---------------------------------------------------------------------------------------------- creation

def _number(v, op, name):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"For '{op}', a Tensor '{name}' must have one element, but got shape {tuple(v.shape)}.")
        return float(v.asnumpy().reshape(-1)[0])
    if isinstance(v, bool) or not isinstance(v, (numbers.Real, np.number)):
        raise TypeError(f"For '{op}', '{name}' must be a number or a one-element Tensor, but got {_got(v)}.")
    return float(v)


@defop()
def logspace(start, end, steps, base=10, *, dtype=mstype.float32):
    """MindSpore's ops.logspace(start, end, steps, base=10, *, dtype=float32): `steps` values base**t for t evenly
    spaced from start to end (inclusive). start/end: numbers or one-element Tensors; steps >= 0; base an int.
    TypeError for bad types, ValueError for steps < 0."""
    s = _number(start, "logspace", "start")
    e = _number(end, "logspace", "end")
    steps = int_arg("logspace", "steps", steps, 0)
    base = int_arg("logspace", "base", base)
    dt = dtype_arg("logspace", "dtype", dtype, mstype.float32)
    t = np.arange(steps, dtype=np.float64)  # np.linspace(s, e, steps)'s values (its formula), without its overhead
    if steps > 1:
        t *= (e - s) / (steps - 1)
        t += s
        t[-1] = e
    elif steps == 1:
        t[0] = s
    vals = np.power(float(base), t)
    return Tensor(vals.astype(mstype.dtype_to_nptype(dt)), dt)


def _window_number(op, name, value, allow_bool=True):
    """A window's real-number argument as a float; TypeError naming op and argument for a non-number (MindSpore 2.10
    raises TypeError for a str or None; its hamming_window refuses a bool, its kaiser_window takes True as 1.0). A
    one-element Tensor is its value."""
    if isinstance(value, Tensor) and value.size == 1 and value.dtype != mstype.bool_:
        return float(value.asnumpy().reshape(()))
    if (isinstance(value, bool) and not allow_bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{op}', the '{name}' must be a number, but got {type(value).__name__} {value!r}.")
    return float(value)


def _window_args(op, window_length, periodic, dtype, default):
    """The windows' checked (length, periodic, dtype)."""
    if isinstance(window_length, Tensor):
        if window_length.size != 1 or window_length.dtype not in mstype.int_type:
            raise TypeError(f"For '{op}', a Tensor 'window_length' must be one integer, but got "
                            f"{_got(window_length)}.")
        window_length = int(window_length.asnumpy().reshape(-1)[0])
    n = int_arg(op, "window_length", window_length, 0)
    if not isinstance(periodic, (bool, np.bool_)):
        raise TypeError(f"For '{op}', 'periodic' must be a bool, but got {_got(periodic)}.")
    dt = dtype_arg(op, "dtype", dtype, default)
    if not mstype.is_float(dt):
        raise TypeError(f"For '{op}', 'dtype' must be a float type, but got {dt}.")
    return n, bool(periodic), dt


def _window(op, window_length, periodic, dtype, default, fn):
    n, periodic, dt = _window_args(op, window_length, periodic, dtype, default)
    if n == 0:
        w = np.zeros((0,))
    elif n == 1:
        w = np.ones((1,))
    else:
        w = fn(n + 1)[:-1] if periodic else fn(n)
    return Tensor(np.asarray(w, np.float64).astype(mstype.dtype_to_nptype(dt)), dt)


@defop()
def hann_window(window_length, periodic=True, *, dtype=None):
    """MindSpore's ops.hann_window(window_length, periodic=True, *, dtype=None): the Hann window 0.5 − 0.5·cos(2πn
    / (N − 1)) (np.hanning; periodic: of length N + 1 without its last point). dtype default float64 (as MindSpore
    2.10 gives). Length 0 gives an empty Tensor, 1 gives [1]. TypeError for bad types, ValueError for a negative
    length."""
    return _window("hann_window", window_length, periodic, dtype, mstype.float64, np.hanning)


@defop(primitive="HammingWindow", prim_attrs={"periodic": ("periodic", True), "alpha": ("alpha", 0.54),
                                              "beta": ("beta", 0.46), "dtype": ("dtype", mstype.float32)})
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None):
    """MindSpore's ops.hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None): the
    generalised Hamming window alpha − beta·cos(2πn / (N − 1)) (periodic as hann_window's). dtype default float32.
    Errors as hann_window."""
    alpha = _window_number("hamming_window", "alpha", alpha, allow_bool=False)
    beta = _window_number("hamming_window", "beta", beta, allow_bool=False)

    def fn(m):
        k = np.arange(m)
        return alpha - beta * np.cos(2 * math.pi * k / (m - 1))
    return _window("hamming_window", window_length, periodic, dtype, mstype.float32, fn)


@defop(primitive="BlackmanWindow", prim_attrs={"periodic": ("periodic", True), "dtype": ("dtype", mstype.float32)})
def blackman_window(window_length, periodic=True, *, dtype=None):
    """MindSpore's ops.blackman_window(window_length, periodic=True, *, dtype=None): the Blackman window 0.42 −
    0.5·cos(2πn / (N − 1)) + 0.08·cos(4πn / (N − 1)) (np.blackman; periodic as hann_window's). window_length: an int
    or a one-element integer Tensor. dtype default float32. Errors as hann_window."""
    return _window("blackman_window", window_length, periodic, dtype, mstype.float32, np.blackman)


@defop(primitive="BartlettWindow", prim_attrs={"periodic": ("periodic", True), "dtype": ("dtype", mstype.float32)})
def bartlett_window(window_length, periodic=True, *, dtype=None):
    """MindSpore's ops.bartlett_window(window_length, periodic=True, *, dtype=None): the triangular window 1 −
    |2n / (N − 1) − 1| (np.bartlett; periodic as hann_window's). dtype default float32. Errors as hann_window."""
    return _window("bartlett_window", window_length, periodic, dtype, mstype.float32, np.bartlett)


@defop()
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None):
    """MindSpore's ops.kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None): the Kaiser window
    I0(beta·√(1 − (2n / (N − 1) − 1)²)) / I0(beta) (np.kaiser's formula; periodic as hann_window's), one KaiserWindow
    op (src/ops/creation.cpp) in double as i0e(x)/i0e(beta)·e^(|x| − |beta|), so a large beta does not overflow
    (np.kaiser gives inf/inf = NaN there). dtype default float64 (as MindSpore 2.10 gives). Errors as
    hann_window."""
    n, periodic, dt = _window_args("kaiser_window", window_length, periodic, dtype, mstype.float64)
    return _core.kaiser_window(n, periodic, _window_number("kaiser_window", "beta", beta), dt)


@defop(primitive="RandomChoiceWithMask", prim_attrs={"count": ("count", 256), "seed": ("seed", 0)})
def choice_with_mask(input_x, count=256, seed=None):
    """MindSpore's ops.choice_with_mask(input_x, count=256, seed=None) (the RandomChoiceWithMask primitive):
    (index, mask): the coordinates (Int32, (count, rank)) of `count` True elements of the Bool input_x (rank 1 to
    5) picked at random without repetition, in random order; when fewer are True, the remaining rows are zeros with
    mask False (mask: Bool (count,)). Fixed-shape, so it compiles: the True positions get uniform keys in [0, 1),
    the others keys >= 2, and the count smallest keys win. TypeError for a non-Bool input or non-int count,
    ValueError for count <= 0 or a rank outside 1..5."""
    x = _tensor_arg(input_x, "choice_with_mask", "input_x")
    if x.dtype != mstype.bool_:
        raise TypeError(f"For 'choice_with_mask', 'input_x' must be a Bool Tensor, but got {x.dtype}.")
    if not 1 <= x.ndim <= 5:
        raise ValueError(f"For 'choice_with_mask', 'input_x' must have rank 1 to 5, but got shape "
                         f"{tuple(x.shape)}.")
    count = int_arg("choice_with_mask", "count", count)
    if count <= 0:
        raise ValueError(f"For 'choice_with_mask', 'count' must be > 0, but got {count}.")
    n = x.size
    flat = _core.reshape(x, [n])
    u = _uniform((n,), mstype.float32, "choice_with_mask", _seed_arg(seed, "choice_with_mask"))
    keys = _core.select(flat, u, _core.add(u, 2.0))
    order = _core.argsort(keys, 0, False)
    if count <= n:
        pick = _core.strided_slice(order, [0], [count], [1])
    else:
        pick = _core.concat([order, _core.full([count - n], 0.0, order.dtype)], 0)
    mask = _core.gather(flat, pick, 0)
    if count > n:
        mask = _core.logical_and(mask, Tensor(np.arange(count) < n))
    coords, rem = [], pick
    for d in range(x.ndim):
        stride = math.prod(x.shape[d + 1:])
        coords.append(_core.floor_div(rem, stride) if stride > 1 else rem)
        rem = _core.mod(rem, stride) if stride > 1 else rem
    idx = _core.stack(coords, 1)
    idx = _core.select(_core.expand_dims(mask, 1), idx, _core.full([], 0.0, idx.dtype))
    return _core.cast(idx, mstype.int32), mask


@defop(primitive="RandomCategorical", prim_attrs={"dtype": ("dtype", mstype.int64)})
def random_categorical(logits, num_sample, seed=0, dtype=mstype.int64):
    """MindSpore's ops.random_categorical(logits, num_sample, seed=0, dtype=int64): `num_sample` category indices
    per row of the 2-D `logits` (batch, classes), drawn with probability softmax(logits) (the inverse CDF of the
    softmax, as ops.multinomial with replacement); shape (batch, num_sample), dtype int16/int32/int64. seed 0
    follows the global seed. ValueError for logits not 2-D or num_sample <= 0, TypeError for bad types."""
    lg = _tensor_arg(logits, "random_categorical", "logits")
    if lg.ndim != 2:
        raise ValueError(f"For 'random_categorical', 'logits' must be 2-D, but got shape {tuple(lg.shape)}.")
    if not mstype.is_float(lg.dtype):
        raise TypeError(f"For 'random_categorical', 'logits' must be a float Tensor, but got {lg.dtype}.")
    k = int_arg("random_categorical", "num_sample", num_sample)
    if k <= 0:
        raise ValueError(f"For 'random_categorical', 'num_sample' must be > 0, but got {k}.")
    dt = dtype_arg("random_categorical", "dtype", dtype, mstype.int64)
    if dt not in (mstype.int16, mstype.int32, mstype.int64):
        raise TypeError(f"For 'random_categorical', 'dtype' must be int16, int32 or int64, but got {dt}.")
    w = _core.exp(_core.sub(lg, _core.amax(lg, [1], True)))
    idx = _draw_categorical(w, k, seed, "random_categorical")
    return _core.cast(idx, dt)


def _draw_categorical(w, k, seed, op):
    """(rows, k) Int32 draws from the rows of the non-negative weights w (rows, n), by the inverse CDF."""
    from .scan_func import cumsum
    w = _core.cast(w, mstype.float32) if w.dtype != mstype.float32 else w
    rows, n = w.shape
    cdf = cumsum(w, 1)
    total = _core.strided_slice(cdf, [0, n - 1], [rows, n], [1, 1])
    u = _core.mul(_uniform((rows, k), mstype.float32, op, _seed_arg(seed, op)), total)
    hit = _core.less_equal(_core.expand_dims(cdf, 1), _core.expand_dims(u, 2))
    idx = _core.cast(_core.count_nonzero(hit, [2], False), mstype.int32)
    return _core.minimum(idx, _core.full([], float(n - 1), mstype.int32))
