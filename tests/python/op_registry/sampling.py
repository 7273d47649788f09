"""Registry entries of kiln/ops/random_func.py: the random ops ("random" entries: shape, dtype, distribution, seed
determinism, Graph = PyNative streams) and the deterministic creation ops (logspace, the windows: NumPy/SciPy
references)."""
import math

import numpy as np
import scipy.signal.windows as sw

import kiln
from kiln import Tensor, ops

from .base import F16, F32, F64, I32, I64, OpInfo, Sample, register
from .state import _check_normal, _check_uniform01, _check_uniform_int


def _n(shape):
    return int(np.prod(shape, dtype=np.int64))


def _check_bernoulli(x, dtype, p=0.3):
    v = x.astype(np.float64)
    assert set(np.unique(v)) <= {0.0, 1.0}
    assert abs(v.mean() - p) < 5 * math.sqrt(p * (1 - p) / v.size)


def _check_categorical(weights):
    w = np.asarray(weights, np.float64) / np.sum(weights)

    def check(x, dtype):
        assert x.min() >= 0 and x.max() < len(w)
        freq = np.bincount(x.reshape(-1), minlength=len(w)) / x.size
        assert np.all(np.abs(freq - w) < 5 * np.sqrt(w * (1 - w) / x.size) + 1e-9), freq
    return check


def _check_permutation(x, dtype):
    np.testing.assert_array_equal(np.sort(x.reshape(-1)), np.arange(x.size))
    if x.size > 100:
        assert np.mean(x.reshape(-1) == np.arange(x.size)) < 0.05  # not the identity


def _check_moments(mean, std, third=None):
    def check(x, dtype):
        x = x.astype(np.float64)
        n = x.size
        assert np.all(np.isfinite(x))
        assert abs(x.mean() - mean) < 6 * std / math.sqrt(n), x.mean()
        assert abs(x.std() - std) < 0.05 * std, x.std()
    return check


W = [0.1, 0.2, 0.3, 0.4]
register(OpInfo("bernoulli", ("UniformReal", "Less", "Cast"), kind="random", dtypes=(F32, I32),
                draw=lambda shape, dtype, seed=None: ops.bernoulli(ops.zeros(tuple(shape), dtype), 0.3, seed),
                check=_check_bernoulli))
register(OpInfo("multinomial", ("UniformReal", "LessEqual", "CountNonZero"), kind="random", dtypes=(I32,),
                draw=lambda shape, dtype, seed=None: ops.reshape(
                    ops.multinomial(Tensor(np.array(W, np.float32)), _n(shape), True, seed), tuple(shape)),
                check=_check_categorical(W)))
register(OpInfo("multinomial_without_replacement", ("UniformReal", "ArgSort"), kind="random", dtypes=(I32,),
                draw=lambda shape, dtype, seed=None: ops.reshape(
                    ops.multinomial(Tensor(np.tile(np.array(W, np.float32), (_n(shape), 1))), 1, False, seed),
                    tuple(shape)),
                check=_check_categorical(W), notes="the first pick of a draw without replacement has the weights' "
                                                   "distribution; distinctness: tests/python/test_ops_array_ext.py"))
register(OpInfo("rand_like", ("UniformReal",), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.rand_like(ops.zeros(tuple(shape), dtype), seed),
                check=_check_uniform01))
register(OpInfo("randn_like", ("StandardNormal",), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.randn_like(ops.zeros(tuple(shape), dtype), seed),
                check=_check_normal))
register(OpInfo("randint_like", ("UniformInt",), kind="random", dtypes=(I32, I64),
                draw=lambda shape, dtype, seed=None: ops.randint_like(ops.zeros(tuple(shape), dtype), -3, 5, seed),
                check=_check_uniform_int))
register(OpInfo("randperm", ("UniformReal", "ArgSort"), kind="random", dtypes=(I64, I32),
                draw=lambda shape, dtype, seed=None: ops.reshape(ops.randperm(_n(shape), seed or 0, dtype=dtype),
                                                                 tuple(shape)),
                check=_check_permutation))
register(OpInfo("shuffle", ("UniformReal", "ArgSort", "Gather"), kind="random", dtypes=(F32, I32),
                draw=lambda shape, dtype, seed=None: ops.reshape(
                    ops.shuffle(Tensor(np.arange(_n(shape)).astype(dtype)), seed), tuple(shape)),
                check=lambda x, d: _check_permutation(x.astype(np.int64), d)))
register(OpInfo("standard_laplace", ("UniformReal", "Log"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.standard_laplace(tuple(shape), seed),
                check=_check_moments(0.0, math.sqrt(2.0))))
register(OpInfo("laplace", ("UniformReal", "Log", "Mul", "Add"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.laplace(tuple(shape), Tensor(np.float32(1.0)),
                                                                 Tensor(np.float32(2.0)), seed),
                check=_check_moments(1.0, 2.0 * math.sqrt(2.0))))
register(OpInfo("random_gamma", ("RandomGamma",), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.random_gamma(tuple(shape), Tensor(np.asarray(2.5, dtype)),
                                                                      seed),
                check=_check_moments(2.5, math.sqrt(2.5))))
register(OpInfo("random_gamma_small_alpha", ("RandomGamma",), kind="random",
                dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.random_gamma(tuple(shape), Tensor(np.float32(0.4)), seed),
                check=_check_moments(0.4, math.sqrt(0.4)), notes="alpha < 1: Gamma(alpha + 1)·U^(1/alpha)"))
register(OpInfo("gamma", ("Gamma",), kind="random", dtypes=(F32, F64),
                draw=lambda shape, dtype, seed=None: ops.gamma(tuple(shape), Tensor(np.asarray(3.0, dtype)),
                                                               Tensor(np.asarray(0.5, dtype)), seed),
                check=_check_moments(1.5, math.sqrt(3.0) * 0.5), notes="beta is the scale: mean alpha·beta"))


# ---------------------------------------------------------------------------------------------- creation

def _creation(name, op, ref, samples, dtypes, covers=(), **kw):
    register(OpInfo(name, covers, op, ref, samples, dtypes, differentiable=False, graph=False,
                    graph_reason="a constant: no kernel to compile", special_skip="no tensor input", **kw))


_creation("logspace", lambda s, e, n, base=10, dtype=None: ops.logspace(s, e, n, base, dtype=dtype or F32),
          lambda s, e, n, base=10, dtype=None: np.logspace(s, e, n, base=base).astype(dtype or F32),
          lambda dtype, rng: iter([Sample((0, 2, 3)), Sample((-1.5, 1, 6, 2), dict(dtype=dtype), desc="base 2"),
                                   Sample((1, 1, 1)), Sample((0, 1, 0), desc="no steps")]),
          (F32, F64), out_dtype=lambda s: s.kwargs.get("dtype", F32), ref_upcast=False)


def _np_window(kind):
    def ref(n, periodic=True, *extra, dtype=None):
        if n == 0:
            return np.zeros((0,))
        if n == 1:
            return np.ones((1,))
        if kind == "hamming":
            alpha, beta = (extra + (0.54, 0.46)[len(extra):]) if extra else (0.54, 0.46)
            return sw.general_hamming(n, alpha, sym=not periodic)
        if kind == "kaiser":
            return sw.kaiser(n, extra[0] if extra else 12.0, sym=not periodic)
        return getattr(sw, {"hann": "hann", "blackman": "blackman", "bartlett": "bartlett"}[kind])(n,
                                                                                                 sym=not periodic)
    return ref


for _kind, _default in (("hann", F64), ("hamming", F32), ("blackman", F32), ("bartlett", F32), ("kaiser", F64)):
    _extra = {"hamming": (0.6, 0.4), "kaiser": (5.0,)}.get(_kind, ())
    _creation(f"{_kind}_window",
              lambda n, periodic=True, *extra, dtype=None, _f=getattr(ops, f"{_kind}_window"):
              _f(n, periodic, *extra, dtype=dtype),
              _np_window(_kind),
              lambda dtype, rng, _extra=_extra: iter(
                  [Sample((7,)), Sample((6, False), desc="symmetric"), Sample((1,)), Sample((0,), desc="empty"),
                   Sample((8, True) + _extra, dict(dtype=dtype), desc="parameters, dtype")]),
              (F32, F64), tol={F32: (1e-6, 1e-6)},
              out_dtype=lambda s, _d=_default: s.kwargs.get("dtype") or _d, ref_upcast=False,
              covers=("KaiserWindow",) if _kind == "kaiser" else ())
register(OpInfo("choice_with_mask", ("UniformReal", "ArgSort", "Gather"), kind="random", dtypes=(I32,),
                draw=lambda shape, dtype, seed=None: ops.reshape(ops.choice_with_mask(
                    Tensor(np.ones((max(_n(shape), 1),), bool)), max(_n(shape), 1), seed)[0][:_n(shape)],
                    tuple(shape)),
                check=_check_permutation, notes="an all-True input: the picks are a random permutation"))
register(OpInfo("random_categorical", ("UniformReal", "LessEqual", "CountNonZero"), kind="random", dtypes=(I64, I32),
                draw=lambda shape, dtype, seed=None: ops.reshape(ops.random_categorical(
                    Tensor(np.log(np.array([W], np.float32))), max(_n(shape), 1), seed or 0, dtype)[:, :_n(shape)],
                    tuple(shape)),
                check=_check_categorical(W)))


# ---------------------------------------------------------------------------------------------- dropout
# Kept elements are scaled by 1 / (1 − p) (inverted dropout, MindSpore 2.10); on an input of ones every value is 0
# or 1 / (1 − p), and the share of zeros is p. dropout2d/3d zero whole channels: the draws below give each channel
# one element (their per-channel masks over larger maps: tests/python/test_nn_dropout*.py).

def _check_dropout(p):
    def check(x, dtype):
        v = x.astype(np.float64)
        keep = 1.0 / (1.0 - p)
        assert np.all((v == 0.0) | np.isclose(v, keep, rtol=1e-3)), np.unique(v)
        zeros = (v == 0.0).mean()
        assert abs(zeros - p) < 5 * math.sqrt(p * (1 - p) / v.size), zeros
    return check


def _channels(shape, extra):
    """ones of shape (n, 1, 1...) with n = prod(shape), `extra` trailing singleton dims: one element per channel."""
    return ops.ones((_n(shape), 1) + (1,) * extra, kiln.float32)


register(OpInfo("dropout", ("UniformReal", "Less", "Cast", "Mul"), kind="random", dtypes=(F32, F64, F16),
                draw=lambda shape, dtype, seed=None: ops.dropout(ops.ones(tuple(shape), dtype), 0.3, True, seed),
                check=_check_dropout(0.3)))
for _name, _extra in (("dropout2d", 2), ("dropout3d", 3)):
    register(OpInfo(_name, ("UniformReal", "Less", "Cast", "Mul"), kind="random", dtypes=(F32,),
                    draw=lambda shape, dtype, seed=None, _f=getattr(ops, _name), _e=_extra:
                        ops.reshape(_f(_channels(shape, _e), 0.4), tuple(shape)),
                    check=_check_dropout(0.4),
                    notes="takes no seed argument (MindSpore 2.10): the op-seed check draws from the global seed"))
