"""Registry entries of kiln/ops/math_special_func.py (SciPy references) and math_int_func.py (NumPy references)."""
import numpy as np
import scipy.special

from kiln import ops

from .base import BOOL, F16, F32, F64, I32, I64, NC, OpInfo, Sample, arr, np_value, register, \
    unary_samples

FLH = (F32, F64, F16)
_LOW_TOL = {F16: (4e-3, 4e-3)}


def _in_dtype(s):
    return np_value(s.args[0]).dtype


def _un(name, cname, ref, low, high, dtypes=FLH, points=(), **kw):
    """points: extra sample values (the formulas' branch and tie points), gradient-checked too."""
    kw.setdefault("differentiable", True)
    kw.setdefault("tol", _LOW_TOL)
    base = unary_samples(low, high)

    def samples(dtype, rng):
        yield from base(dtype, rng)
        if points:
            yield Sample((np.array(points, dtype),), desc="branch/tie points")
    register(OpInfo(name, cname if isinstance(cname, tuple) else (cname,), getattr(ops, name), ref,
                    samples, dtypes, **kw))


_un("erfc", ("Erfc",), scipy.special.erfc, -3.0, 6.0, out_dtype=_in_dtype)
_un("erfinv", ("Erfinv",), scipy.special.erfinv, -0.999, 0.999, out_dtype=_in_dtype)
_un("lgamma", ("Lgamma",), scipy.special.gammaln, -4.5, 6.0, FLH + (I32,),
    out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32,
    special_ref=lambda x: np.where(x == -np.inf, np.inf, scipy.special.gammaln(x)),
    tol={F16: (4e-3, 4e-3), F32: (1e-5, 1e-5)}, kinks={0.0: None, 1000.0: None, -1000.0: None},
    points=(1.0, 2.0, -0.5, -2.5, 0.5, 3.5))  # lgamma(1) = lgamma(2) = 0 exactly, gradient digamma kept
_un("digamma", ("Digamma",), scipy.special.psi, -4.5, 6.0, out_dtype=_in_dtype,
    tol={F16: (4e-3, 4e-3), F32: (1e-5, 1e-5)}, kinks={0.0: None, -1000.0: None},
    points=(-0.5, -2.5, 0.5, -1.25, -3.75))  # frac(x) = 1/2: the reflection's cot branch point
def _bessel_samples(dtype, rng):
    """Values of one magnitude band per sample (so finite differences of Σ out·cot stay accurate): small, around the
    series/asymptotic switch at |x| = 30, and larger."""
    yield from unary_samples(-5.0, 5.0)(dtype, rng)
    for lo, hi in ((27.0, 33.0), (45.0, 50.0)):
        yield Sample((arr(rng, (2, 3), dtype, -hi, hi, away=lo),), desc=f"|x| in [{lo}, {hi}]")


def _bessel(name, ref, dtypes=(F32, F64), **kw):
    kernel = {"i0": "BesselI0"}.get(name) or "".join(p.capitalize() for p in name.split("_"))  # bessel_i0e: BesselI0e
    register(OpInfo(name, (kernel,), getattr(ops, name), ref, _bessel_samples, dtypes,
                    differentiable=True, out_dtype=_in_dtype, tol=_LOW_TOL,
                    special_ok=lambda s: "|x|" not in s.desc, **kw))  # the band samples' scale hides element 0


# float16 overflows beyond |x| ≈ 12 for I0/I1 (correctly inf): those are tested in float32/float64 only
_bessel("i0", scipy.special.i0)
_bessel("bessel_i0", scipy.special.i0)
_bessel("bessel_i0e", scipy.special.i0e, FLH, kinks={0.0: 0.0})  # e^−|x| has a kink at 0: gradient 0 there (PyTorch)
_bessel("bessel_i1", scipy.special.i1)
_bessel("bessel_i1e", scipy.special.i1e, FLH)


def _zeta_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype, 1.2, 6.0), arr(rng, (2, 3), dtype, 0.1, 5.0)))
    yield Sample((arr(rng, (3, 1), dtype, 1.5, 4.0), arr(rng, (1, 4), dtype, 0.5, 30.0)), desc="broadcast")
    yield Sample((np.array([1.0, 0.5, 2.0, 3.0], dtype), np.array([1.0, 1.0, 0.0, -2.0], dtype)),
                 desc="s = 1, s < 1, q at poles", grad=False)
    # large s: s(s+1)…(s+2j−2) alone overflows float32 (a NaN once); ζ(s, 1) → 1, ζ(60, 1/2) = 2⁶⁰·(1 + ...)
    yield Sample((np.array([20.0, 30.0, 35.0, 40.0, 50.0, 100.0, 40.0], dtype),
                  np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0], dtype)), desc="large s", grad=False)
    if dtype == np.float64:
        yield Sample((np.array([60.0]), np.array([0.5])), desc="large s, q < 1", grad=False)


def _np_zeta(s, q):
    """SciPy's zeta with MindSpore 2.10's values at the poles q = 0, -1, ...: inf for an even integer s, else NaN."""
    s, q = np.broadcast_arrays(np.asarray(s), np.asarray(q))
    pole = (q <= 0) & (q == np.floor(q)) & (s > 1)
    even = (s == np.floor(s)) & (np.fmod(s, 2) == 0)
    return np.where(pole, np.where(even, np.inf, np.nan), scipy.special.zeta(s, q)).astype(s.dtype)


register(OpInfo("zeta", ("Zeta",), ops.zeta, _np_zeta, _zeta_samples, (F32, F64),
                differentiable=True, grad_args=(1,), out_dtype=_in_dtype, tol={F32: (1e-5, 1e-5)},
                special_skip="the samples hold the poles (MindSpore's values: tests/python/test_issue23_kernels.py)",
                notes="gradient checked for q (MindSpore's Zeta has none for s)"))


def _polygamma_samples(dtype, rng):
    for n in (0, 1, 2, 4):
        yield Sample((n, arr(rng, (2, 3), dtype, 0.2, 6.0)), desc=f"n={n}")
    yield Sample((np.array(3, np.int64), arr(rng, (4,), dtype, 0.5, 3.0)), desc="Tensor n", graph=False)
    # negative non-integer x: the reflection formula (DLMF 5.15.6); half-integers are the cot branch points
    neg = np.array([-0.5, -2.5, -1.3, -0.2, -1.5, -3.75], dtype)
    for n in (1, 2, 3):
        yield Sample((n, neg), desc=f"n={n}, x < 0")
    if dtype == np.float64:  # ψ⁽⁴⁰⁾(1) = −40!·ζ(41) ≈ −8.2e47 (beyond float32)
        yield Sample((40, np.array([1.0, 2.5], dtype)), desc="n=40", grad=False)


register(OpInfo("polygamma", ("Polygamma",),
                lambda n, x: ops.polygamma(n, x), lambda n, x: scipy.special.polygamma(n, x),
                _polygamma_samples, (F32, F64), differentiable=True, grad_args=(1,),
                out_dtype=lambda s: np_value(s.args[1]).dtype, tol={F32: (1e-5, 1e-5)},
                # MindSpore 2.10's special values: SciPy's ((−1)ⁿ⁺¹·inf at the poles and −inf) but NaN at +inf for
                # n ≥ 1 (SciPy: the limit 0)
                special_ref=lambda n, x: np.where((np.asarray(x) == np.inf) & (int(np_value(n)) > 0), np.nan,
                                                  scipy.special.polygamma(n, x))))


# ---------------------------------------------------------------------------------------------- integer bit ops

_INTS = (I32, I64, np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.uint8))


def _int_samples(dtype, rng):
    ii = np.iinfo(dtype) if dtype != BOOL else None
    full = (lambda s: rng.integers(ii.min, ii.max, s, dtype=dtype, endpoint=True)) if ii else \
        (lambda s: rng.random(s) < 0.5)
    yield Sample((full((3, 4)), full((3, 4))))
    yield Sample((full((3, 1)), full((1, 4))), desc="broadcast")
    yield Sample((full(()), full((2, 3))), desc="0-d")
    yield Sample((NC(full((3, 4)), "T"), full((3, 4))), desc="view")
    if ii:
        yield Sample((full((2, 3)), 5), desc="python int")


_WIDE = (np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))


def _wide_samples(dtype, rng):
    """uint16/32/64 samples without Python ints (MindSpore refuses them with the wide unsigned types)."""
    return (s for s in _int_samples(dtype, rng) if s.desc != "python int")


for _name, _op in (("and", "BitwiseAnd"), ("or", "BitwiseOr"), ("xor", "BitwiseXor")):
    register(OpInfo(f"bitwise_{_name}", (_op,), getattr(ops, f"bitwise_{_name}"),
                    getattr(np, f"bitwise_{_name}"), _int_samples, _INTS + (BOOL,), out_dtype=_in_dtype))
    register(OpInfo(f"bitwise_{_name}_wide", (_op,), getattr(ops, f"bitwise_{_name}"),
                    getattr(np, f"bitwise_{_name}"), _wide_samples, _WIDE, out_dtype=_in_dtype))


def _shift_samples(dtype, rng):
    ii = np.iinfo(dtype)
    bits = 8 * dtype.itemsize
    x = rng.integers(ii.min, ii.max, (4, 6), dtype=dtype, endpoint=True)
    yield Sample((x, rng.integers(0, bits, (4, 6)).astype(dtype)))
    yield Sample((x, rng.integers(0, bits, (6,)).astype(dtype)), desc="broadcast")
    yield Sample((x, 3), desc="python int")


register(OpInfo("bitwise_left_shift", ("LeftShift",), ops.bitwise_left_shift, np.left_shift, _shift_samples,
                _INTS + _WIDE, out_dtype=_in_dtype))
register(OpInfo("bitwise_right_shift", ("RightShift",), ops.bitwise_right_shift, np.right_shift,
                _shift_samples, _INTS + _WIDE, out_dtype=_in_dtype))


def _full_int(dtype, rng, shape):
    ii = np.iinfo(dtype)
    return rng.integers(ii.min, ii.max, shape, dtype=dtype, endpoint=True)


register(OpInfo("invert", ("Invert",), ops.invert, np.invert,
                lambda dtype, rng: iter([Sample((_full_int(dtype, rng, (3, 4)),)),
                                         Sample((NC(_full_int(dtype, rng, (3, 4)), "T"),), desc="view")]),
                _INTS + _WIDE, out_dtype=_in_dtype))


def _popcount(x):
    bits = 8 * x.dtype.itemsize
    return np.array([bin(int(v) & ((1 << bits) - 1)).count("1") for v in x.reshape(-1)],
                    np.uint8).reshape(x.shape)


register(OpInfo("population_count", ("Gather", "BitwiseAnd", "RightShift"), ops.population_count, _popcount,
                lambda dtype, rng: iter([Sample((_full_int(dtype, rng, (3, 4)),)),
                                         Sample((_full_int(dtype, rng, ()),), desc="0-d")]),
                _INTS, out_dtype=lambda s: np.dtype(np.uint8)))


def _gcd_samples(dtype, rng):
    lim = min(np.iinfo(dtype).max, 10 ** 6)
    a = rng.integers(-lim, lim, (3, 4)).astype(dtype)
    b = rng.integers(-lim, lim, (3, 4)).astype(dtype)
    a.reshape(-1)[:2] = 0
    b.reshape(-1)[1:3] = 0
    yield Sample((a, b), desc="zeros and signs")
    yield Sample((rng.integers(-60, 60, (3, 1)).astype(dtype), rng.integers(-60, 60, (1, 4)).astype(dtype)),
                 desc="broadcast")
    fib = [832040, 514229, 317811, 196418] if np.iinfo(dtype).max > 10 ** 6 else [17711, 10946, 6765, 4181]
    yield Sample((np.array(fib[:3], dtype), np.array(fib[1:], dtype)), desc="consecutive Fibonacci numbers")


register(OpInfo("gcd", ("Gcd",), ops.gcd, np.gcd, _gcd_samples, (I32, I64, np.dtype(np.int16)), out_dtype=_in_dtype))
register(OpInfo("lcm", ("Lcm",), ops.lcm, np.lcm,
                lambda dtype, rng: (s for i, s in enumerate(_gcd_samples(dtype, rng)) if i != 0),
                (I32, I64), out_dtype=_in_dtype))
