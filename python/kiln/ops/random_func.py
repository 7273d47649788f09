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
from .._args import _got, _is_int, dtype_arg, int_arg, shape_arg
from ..common import dtype as mstype
from .._autodiff import recompute as _recompute
from ..common import seed as _seed
from ..common.tensor import Tensor
from ._opdef import defop
from .function import _tensor_arg

__all__ = ["bernoulli", "multinomial", "rand_like", "randn_like", "randint_like", "randperm", "shuffle",
           "standard_laplace", "laplace", "random_gamma", "logspace", "hann_window", "hamming_window",
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
    full = np.broadcast_shapes(tuple(shape), *(tuple(v.shape) for v in (mean, lambda_param)
                                                if isinstance(v, Tensor)))
    z = _std_laplace(full, "laplace", _seed_arg(seed, "laplace"))
    return _core.add(_core.mul(z, lambda_param), mean)


_GAMMA_TRIES = 16


@defop()
def random_gamma(shape, alpha, seed=None):
    """MindSpore's ops.random_gamma(shape, alpha, seed=None): Gamma(alpha, 1) samples of shape `shape` +
    alpha.shape (alpha: a positive float Tensor; its dtype is the output's). Method: Marsaglia & Tsang (module
    docstring). TypeError for a non-Tensor or non-float alpha, ValueError for a bad shape or an alpha that is not
    positive (or NaN)."""
    shape = tuple(shape_arg("random_gamma", "shape", shape, 0))
    a = _tensor_arg(alpha, "random_gamma", "alpha")
    if not mstype.is_float(a.dtype):
        raise TypeError(f"For 'random_gamma', 'alpha' must be a float Tensor, but got {a.dtype}.")
    seed = _seed_arg(seed, "random_gamma")
    if a.size:  # alpha must be positive (checked when the op runs, in both modes)
        a = _core.check_range(a, "random_gamma", "alpha", 1e-38, float("inf"), True, None)
    out_shape = list(shape) + list(a.shape)
    a32 = _core.cast(a, mstype.float32) if a.dtype != mstype.float32 else a
    a32 = _core.broadcast_to(a32, out_shape)
    small = _core.less(a32, 1.0)
    ab = _core.select(small, _core.add(a32, 1.0), a32)  # boost alpha < 1 to alpha + 1
    d = _core.sub(ab, 1.0 / 3.0)
    c = _core.div(1.0, _core.sqrt(_core.mul(d, 9.0)))
    s, stream = _seed._next_key("random_gamma", seed)
    z = _recompute.draw("standard_normal", [_GAMMA_TRIES] + out_shape, mstype.float32, s, 0, stream)
    s2, stream2 = _seed._next_key("random_gamma.accept", seed)
    u = _recompute.draw("uniform_real", [_GAMMA_TRIES + 1] + out_shape, mstype.float32, s2, 0, stream2)
    result = None
    for t in reversed(range(_GAMMA_TRIES)):  # the first accepted candidate wins: fill from the last one back
        zt = _core.reshape(_core.strided_slice(z, [t] + [0] * len(out_shape), [t + 1] + out_shape,
                                               [1] * (len(out_shape) + 1)), out_shape)
        ut = _core.reshape(_core.strided_slice(u, [t] + [0] * len(out_shape), [t + 1] + out_shape,
                                               [1] * (len(out_shape) + 1)), out_shape)
        v = _core.add(_core.mul(c, zt), 1.0)
        v3 = _core.mul(_core.mul(v, v), v)
        pos = _core.greater(v, 0.0)
        v3s = _core.select(pos, v3, _core.full([], 1.0, mstype.float32))
        lhs = _core.log(_core.maximum(ut, 1e-30))
        rhs = _core.add(_core.mul(_core.square(zt), 0.5), _core.mul(d, _core.add(_core.sub(1.0, v3s),
                                                                                   _core.log(v3s))))
        ok = _core.logical_and(pos, _core.less(lhs, rhs))
        cand = _core.mul(d, v3s)
        result = cand if result is None else _core.select(ok, cand, result)
    last = _core.reshape(_core.strided_slice(u, [_GAMMA_TRIES] + [0] * len(out_shape),
                                             [_GAMMA_TRIES + 1] + out_shape, [1] * (len(out_shape) + 1)), out_shape)
    boost = _core.pow(_core.maximum(last, 1e-30), _core.div(1.0, a32))
    result = _core.select(small, _core.mul(result, boost), result)
    return result if a.dtype == mstype.float32 else _core.cast(result, a.dtype)


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
    vals = np.power(float(base), np.linspace(s, e, steps))
    return Tensor(vals.astype(mstype.dtype_to_nptype(dt)), dt)


def _window(op, window_length, periodic, dtype, default, fn):
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
    alpha = float(alpha)
    beta = float(beta)

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
    I0(beta·√(1 − (2n / (N − 1) − 1)²)) / I0(beta) (np.kaiser's formula, I0 from the BesselI0e kernel; periodic as
    hann_window's). dtype default float64 (as
    MindSpore 2.10 gives). Errors as hann_window."""
    beta = float(beta)
    return _window("kaiser_window", window_length, periodic, dtype, mstype.float64, lambda m: _kaiser(m, beta))


def _kaiser(m, beta):
    """np.kaiser(m, beta) with I0 from Kiln's BesselI0e kernel (double; NumPy's i0 costs ~0.1 ms a call): the ratio
    I0(x)/I0(beta) formed as i0e(x)/i0e(beta)·e^(|x| − |beta|) (I0 is even; |x| <= |beta|), so a large beta does
    not overflow (np.kaiser gives inf/inf = NaN there)."""
    t = np.arange(m, dtype=np.float64) * (2.0 / (m - 1)) - 1.0
    x = beta * np.sqrt(np.maximum(1.0 - t * t, 0.0))
    e = _core.bessel_i0e(Tensor(np.append(x, beta))).asnumpy()
    return e[:-1] / e[-1] * np.exp(np.abs(x) - abs(beta))


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
