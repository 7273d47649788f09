"""Registry entries of the math ops of kiln/ops/math_elem_func.py (elementwise), linalg_func.py (products),
math_special_func.py, math_int_func.py and math_reduce_func.py: one row per @defop op, NumPy/SciPy references."""

import numpy as np
import scipy.special

from kiln import ops

from .base import (BOOL, F16, F32, F64, I32, I64, NC, OpInfo, Sample, arr, binary_samples, np_value, register,
                   unary_samples)

FL = (F32, F64)
FLH = (F32, F64, F16)


def _in_dtype(s):
    return np_value(s.args[0]).dtype


def _un(name, cname, ref, dtypes=FLH, low=-2.0, high=2.0, away=0.0, **kw):
    kw.setdefault("differentiable", True)
    register(OpInfo(name, cname if isinstance(cname, tuple) else (cname,), getattr(ops, name), ref,
                    unary_samples(low, high, away), dtypes, **kw))


def _bin(name, cname, ref, dtypes=FLH, lhs=(-2.0, 2.0, 0.0), rhs=(-2.0, 2.0, 0.0), scalars=(2.5, 3), **kw):
    kw.setdefault("differentiable", True)
    register(OpInfo(name, cname if isinstance(cname, tuple) else (cname,), getattr(ops, name), ref,
                    binary_samples(lhs, rhs, scalars), dtypes, **kw))


# ---------------------------------------------------------------------------------------------- inverse trig

_TRIG_TOL = {F16: (4e-3, 4e-3)}
_un("atan", ("Atan",), np.arctan, low=-5.0, high=5.0, tol=_TRIG_TOL)
_un("arctan", ("Atan",), np.arctan, low=-5.0, high=5.0, tol=_TRIG_TOL)
_un("asin", ("Asin",), np.arcsin, low=-0.95, high=0.95, tol=_TRIG_TOL)
_un("arcsin", ("Asin",), np.arcsin, low=-0.95, high=0.95, tol=_TRIG_TOL)
_un("acos", ("ACos",), np.arccos, low=-0.95, high=0.95, tol=_TRIG_TOL)
_un("arccos", ("ACos",), np.arccos, low=-0.95, high=0.95, tol=_TRIG_TOL)
def _atan2_samples(dtype, rng):
    yield from binary_samples(rhs=(-2.0, 2.0, 0.25), scalars=(2.5,))(dtype, rng)
    # |y| == |x|: the gradient (x, −y)/(x² + y²) there (a maximum/minimum split once cut it to 0)
    yield Sample((np.array([1.0, 2.0, -1.0, 0.5, 2.0, -3.0], dtype), np.array([1.0, 2.0, 1.0, -0.5, 1.0, -3.0], dtype)),
                 desc="|y| == |x| ties")


register(OpInfo("atan2", ("Atan2",), ops.atan2, np.arctan2, _atan2_samples, FLH, tol=_TRIG_TOL,
                differentiable=True, kinks={0.0: None}))  # atan2(y, x) jumps by 2π across x < 0, y = 0
_bin("arctan2", ("Atan2",), np.arctan2, rhs=(-2.0, 2.0, 0.25), scalars=(2.5,), tol=_TRIG_TOL,
     kinks={0.0: None})
_un("deg2rad", "Mul", np.deg2rad)
_un("rad2deg", "Mul", np.rad2deg, tol={F16: (2e-3, 2e-2)})

# ---------------------------------------------------------------------------------------------- exp / log

_un("exp2", "Pow", np.exp2, FLH + (I32,), tol={F16: (3e-3, 3e-3)})
_un("log2", ("Log2",), np.log2, low=0.1, high=4.0)
_un("log10", ("Log10",), np.log10, low=0.1, high=4.0)


def _lae_samples(dtype, rng):
    for s in binary_samples()(dtype, rng):
        if all(isinstance(a, (np.ndarray, NC)) for a in s.args):
            yield s


_LAE_TOL = {F16: (3e-3, 3e-3)}
register(OpInfo("logaddexp", ("LogAddExp",), ops.logaddexp, np.logaddexp, _lae_samples, FLH,
                differentiable=True, tol=_LAE_TOL))
register(OpInfo("logaddexp2", ("LogAddExp2",), ops.logaddexp2, np.logaddexp2, _lae_samples, FLH,
                differentiable=True, tol=_LAE_TOL))


def _logit_samples(dtype, rng):
    yield from unary_samples(0.05, 0.95)(dtype, rng)
    yield Sample((arr(rng, (2, 4), dtype, -0.2, 1.2),), dict(eps=0.1), desc="clamped")


def _np_logit(x, eps=None):
    if eps is not None and eps >= 0:
        x = np.clip(x, eps, 1 - eps)
    return scipy.special.logit(x)


register(OpInfo("logit", ("Log", "Log1p"), ops.logit, _np_logit, _logit_samples, FLH, differentiable=True, out_dtype=_in_dtype,
                tol={F16: (4e-3, 4e-3)}, kinks={0.0: None}))

# ---------------------------------------------------------------------------------------------- rounding / remainders

_un("trunc", ("Trunc",), lambda x: np.trunc(x).astype(x.dtype), FLH + (I32, I64, BOOL),
    low=-5.0, high=5.0, differentiable=False)
_un("frac", ("Trunc", "Sub"), lambda x: (x - np.trunc(x)).astype(x.dtype) if x.dtype.kind == "f"
    else np.zeros_like(x, dtype=np.int64 if x.dtype == BOOL else x.dtype), FLH + (I32, BOOL), low=-5.0, high=5.0,
    kinks={1000.0: 1.0, -1000.0: 1.0}, special_ref=lambda x: np.where(np.isinf(x), np.nan, x - np.trunc(x)))

_DIVISOR = (-3.0, 3.0, 0.5)


def _np_trunc_div(a, b):
    q = np.true_divide(a, b)
    dt = np.result_type(a, b)
    if dt.kind == "f":
        return np.trunc(q)
    with np.errstate(invalid="ignore"):
        q = np.trunc(np.where(np.asarray(b) == 0, 0, q)).astype(dt)
    # an integer zero divisor: the dtype's max for a > 0, its lowest for a < 0, 0 for 0 (MindSpore 2.10's Int32
    # values: truncate_div([7, -5, 0], 0) = [2147483647, -2147483648, 0])
    info = np.iinfo(dt)
    return np.where(np.asarray(b) == 0, np.where(np.asarray(a) > 0, info.max, np.where(np.asarray(a) < 0, info.min, 0)),
                    q).astype(dt)


def _trunc_div_samples(dtype, rng):
    yield from binary_samples((-5.0, 5.0, 0.0), _DIVISOR, (2.5, 3))(dtype, rng)
    if dtype.kind == "i":  # MindSpore 2.10: 7/-4 = -1, -7/2 = -3, 7/3 = 2, -5/3 = -1 and the zero divisors above
        yield Sample((np.array([7, -7, 7, -5, 7, -5, 0], dtype), np.array([-4, 2, 3, 3, 0, 0, 0], dtype)),
                     desc="truncation, zero divisors")


register(OpInfo("truncate_div", ("TruncateDiv",), ops.truncate_div, _np_trunc_div, _trunc_div_samples, FLH + (I32, I64),
                special_skip="trunc(x / y): Div's and trunc's special values"))
_bin("truncate_mod", ("Fmod",), np.fmod, FLH + (I32, I64), lhs=(-5.0, 5.0, 0.0), rhs=_DIVISOR,
     kinks={0.0: None, 1000.0: None, -1000.0: None}, tol={F16: (2e-3, 4e-3)})
_bin("fmod", ("Fmod",), np.fmod, FLH + (I32, I64), lhs=(-5.0, 5.0, 0.0), rhs=_DIVISOR,
     kinks={0.0: None, 1000.0: None, -1000.0: None}, tol={F16: (2e-3, 4e-3)})
_bin("fmax", ("Fmax",), np.fmax, FLH + (I32,))
_bin("fmin", ("Fmin",), np.fmin, FLH + (I32,))


def _fp_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype, 0.5, 2.0), arr(rng, (2, 3), dtype)))
    yield Sample((arr(rng, (3, 1), dtype, 0.5, 2.0), arr(rng, (1, 4), dtype)), desc="broadcast")
    yield Sample((arr(rng, (2, 3), dtype, 0.5, 2.0), 2), desc="int exponent")
    yield Sample((2.5, arr(rng, (2, 3), dtype)), desc="number base")


register(OpInfo("float_power", ("Pow", "Cast"), ops.float_power, lambda a, b: np.float_power(a, b), _fp_samples,
                FLH + (I32,), out_dtype=lambda s: F64, differentiable=True, kinks={0.0: None},
                special_skip="Pow's special values, in float64"))

# ---------------------------------------------------------------------------------------------- signs / predicates


def _np_copysign(a, b):
    """NumPy's copysign (the sign bit of b: −0.0 counts as negative; MindSpore 2.10 tests b < 0 instead)."""
    a = np.asarray(a)
    a = a if a.dtype.kind == "f" else a.astype(np.float32)
    return np.copysign(a, np.asarray(b, dtype=np.float64)).astype(a.dtype)


def _copysign_samples(dtype, rng):
    for s in binary_samples()(dtype, rng):
        if isinstance(s.args[0], (np.ndarray, NC)):
            yield s
    if dtype.kind == "f":  # NumPy: [1, -2, 3, 0, 4] with [-0.0, 1, nan, -1, -0.0] gives [-1, 2, 3, -0, -4]
        # (MindSpore 2.10: [1, 2, 3, -0, 4])
        yield Sample((np.array([1.0, -2.0, 3.0, 0.0, 4.0], dtype), np.array([-0.0, 1.0, np.nan, -1.0, -0.0], dtype)),
                     desc="-0.0 and NaN signs", grad=False)


register(OpInfo("copysign", ("Copysign",), ops.copysign, _np_copysign, _copysign_samples, FLH + (I32,),
                differentiable=True, kinks={0.0: 0.0},
                out_dtype=lambda s: _in_dtype(s) if _in_dtype(s).kind == "f" else F32))


def _heaviside_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, -2, 2)
    x.reshape(-1)[:3] = 0
    yield Sample((x, arr(rng, (3, 4), dtype)))
    yield Sample((x, arr(rng, (4,), dtype)), desc="broadcast values")


def _ms_heaviside(x, v):
    """np.heaviside with MindSpore 2.10's (and PyTorch's) 0 where x is NaN: heaviside([-1, 0, 2, nan], [5, 6, 7, 8])
    = [0, 6, 1, 0] (MindSpore 2.10's values)."""
    return np.where(np.isnan(x), 0, np.heaviside(x, v))


register(OpInfo("heaviside", ("Heaviside",), ops.heaviside, _ms_heaviside, _heaviside_samples, FLH + (I32,),
                out_dtype=_in_dtype))
_un("sgn", "Sign", np.sign, FLH + (I32, I64), differentiable=False)
# MindSpore 2.10's signbit is x < 0: signbit([1, -1, 0, -0.0, nan, -nan, inf, -inf]) = [F, T, F, F, F, F, F, T]
_un("signbit", ("Less",), lambda x: np.asarray(x) < 0, FLH + (I32, BOOL), differentiable=False)
_un("isfinite", ("Sub", "Equal"), np.isfinite, FLH + (I32, BOOL), differentiable=False)
_un("isnan", "NotEqual", np.isnan, FLH + (I32, BOOL), differentiable=False)
_un("isinf", ("Abs", "Equal"), np.isinf, FLH + (I32, BOOL), differentiable=False)
_un("isposinf", "Equal", np.isposinf, FLH + (I32,), differentiable=False)
_un("isneginf", "Equal", np.isneginf, FLH + (I32,), differentiable=False)
_un("isreal", "Fill", np.isreal, FLH + (I32, BOOL), differentiable=False)
_un("positive", (), lambda x: x.copy(), FLH + (I32, BOOL), out_dtype=_in_dtype)  # the input itself: no kernel

# ---------------------------------------------------------------------------------------------- misc binary

_bin("hypot", ("Hypot",), np.hypot, FLH, scalars=(2.5,))
_bin("ldexp", ("Pow", "Mul"), lambda a, b: a * (2.0 ** b if isinstance(b, (int, float)) else np.power(2.0, b)), FLH + (I32,), tol={F16: (3e-3, 3e-3)},
     special_skip="x·2^y: Mul's and Pow's special values")


def _nan_to_num_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    yield Sample((x,), grad=False)
    yield Sample((x,), dict(nan=1.5, posinf=7.0, neginf=-8.0), desc="replacements", grad=False)
    yield Sample((NC(x, "T"),), dict(nan=-1.0), desc="view", grad=False)
    yield Sample((arr(rng, (2, 3), dtype),), desc="finite (gradient 1)")


register(OpInfo("nan_to_num", ("Select", "Equal"), ops.nan_to_num,
                lambda x, nan=None, posinf=None, neginf=None: np.nan_to_num(x.astype(x.dtype), nan=nan or 0.0,
                                                                            posinf=posinf, neginf=neginf),
                _nan_to_num_samples, FLH, ref_upcast=False, differentiable=True,
                special_skip="the samples hold NaN and ±inf"))
_un("sinc", ("Sinc",), np.sinc, FLH + (I32,), low=-3.0, high=3.0, tol={F16: (3e-3, 3e-3)},
    special_ok=lambda s: True)
_bin("xdivy", ("Div", "Select"), lambda a, b: np.where(np.asarray(a) == 0, 0.0 * b, np.true_divide(a, b)),
     FLH, rhs=_DIVISOR, scalars=(2.5,), special_skip="x / y with 0 where x == 0: Div's special values")
def _xlogy_samples(dtype, rng):
    yield from binary_samples(rhs=(0.25, 3.0, 0.0), scalars=(2.5, 3))(dtype, rng)
    if dtype.kind == "f":  # x == 0 beside y > 0: value 0, d/dx = log(y) (MindSpore 2.10's gradient)
        yield Sample((np.array([0.0, 0.0, 0.0, 1.5], dtype), np.array([2.0, 0.5, 3.0, 0.75], dtype)), desc="x == 0")


register(OpInfo("xlogy", ("Xlogy",), ops.xlogy, scipy.special.xlogy, _xlogy_samples, FLH + (I32,),
                differentiable=True,
                # a Python number is a float32 Tensor (MindSpore 2.10: xlogy(float16, 2.5) is float32)
                out_dtype=lambda s: max([np_value(a).dtype for a in s.args if isinstance(a, (np.ndarray, NC))
                                         and np_value(a).dtype.kind == "f"]
                                        + [np.dtype(F32) for a in s.args if isinstance(a, (int, float))],
                                        key=lambda d: d.itemsize, default=F32),
                special_skip="x·log y: Mul's and Log's special values"))
_un("inv", "Div", lambda x: np.reciprocal(x) if x.dtype.kind == "f" else np.where(np.abs(x) == 1, x, 0).astype(x.dtype),
    FLH + (I32,), away=0.25)


# ---------------------------------------------------------------------------------------------- products (linalg)

def _lin(name, cname, fn, ref, shapes, dtypes=FL + (I32,), **kw):
    def gen(dtype, rng):
        for i, sh in enumerate(shapes):
            args, kwargs = sh if isinstance(sh, tuple) and len(sh) == 2 and isinstance(sh[1], dict) else (sh, {})
            yield Sample(tuple(arr(rng, s, dtype, -2, 2) if isinstance(s, tuple) else s for s in args), kwargs,
                         desc=str(i))
    kw.setdefault("differentiable", True)
    kw.setdefault("special_skip", "a matmul/sum composite: BatchMatMul's, Mul's and ReduceSum's special values")
    register(OpInfo(name, cname if isinstance(cname, tuple) else (cname,), fn, ref, gen, dtypes, **kw))


_lin("mm", "BatchMatMul", ops.mm, np.matmul, [((2, 3), (3, 4)), ((1, 5), (5, 1)), ((0, 2), (2, 3))])
_lin("bmm", "BatchMatMul", ops.bmm, np.matmul, [((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (2, 1, 3, 2))])
_lin("mv", "BatchMatMul", ops.mv, np.matmul, [((2, 3), (3,)), ((4, 1), (1,))])
_lin("dot", "BatchMatMul", ops.dot, np.dot, [((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 2)), ((3, 2), (2, 2, 3))])
_lin("inner", "BatchMatMul", ops.inner, np.inner, [((2, 3), (4, 3)), ((3,), (3,)), ((2, 2, 3), (3,)),
                                                   ((2, 3), ())])
_lin("outer", "Mul", ops.outer, np.outer, [((3,), (4,)), ((2, 2), (3,))])
_lin("ger", "Mul", ops.ger, np.outer, [((3,), (4,))])


def _ab(ref):
    def f(x, *rest, beta=1, alpha=1):
        return beta * x + alpha * ref(*rest)
    return f


_lin("addmm", ("BatchMatMul", "Add"), lambda x, a, b, **kw: ops.addmm(x, a, b, **kw), _ab(np.matmul),
     [((2, 4), (2, 3), (3, 4)), (((4,), (2, 3), (3, 4)), dict(beta=0.5, alpha=2.0))])
_lin("addmv", ("BatchMatMul", "Add"), lambda x, a, b, **kw: ops.addmv(x, a, b, **kw), _ab(np.matmul),
     [((2,), (2, 3), (3,)), (((2,), (2, 3), (3,)), dict(beta=2, alpha=-1))])
_lin("addr", ("Mul", "Add"), lambda x, a, b, **kw: ops.addr(x, a, b, **kw), _ab(np.outer),
     [((3, 2), (3,), (2,)), (((2,), (3,), (2,)), dict(beta=0.5, alpha=2.0))])
_lin("baddbmm", ("BatchMatMul", "Add"), lambda x, a, b, **kw: ops.baddbmm(x, a, b, **kw), _ab(np.matmul),
     [((2, 2, 4), (2, 2, 3), (2, 3, 4)), (((4,), (2, 2, 3), (2, 3, 4)), dict(beta=0.5, alpha=2.0))])
_lin("addbmm", ("BatchMatMul", "ReduceSum"), lambda x, a, b, **kw: ops.addbmm(x, a, b, **kw),
     _ab(lambda a, b: np.matmul(a, b).sum(0)),
     [((2, 4), (3, 2, 3), (3, 3, 4)), (((2, 4), (3, 2, 3), (3, 3, 4)), dict(beta=0.5, alpha=2.0))],
     out_dtype=lambda s: _in_dtype(s) if "beta" not in s.kwargs or _in_dtype(s).kind == "f" else F32)
_lin("addcdiv", ("Div", "Add"), lambda x, a, b, value=1: ops.addcdiv(x, a, b, value),
     lambda x, a, b, value=1: x + value * a / b,
     [((2, 3), (2, 3), (3,)), (((2, 3), (3,), (2, 1)), dict(value=0.5))], dtypes=FL,
     special_skip="x + v·a/b: Div's special values")
_lin("addcmul", ("Mul", "Add"), lambda x, a, b, value=1: ops.addcmul(x, a, b, value),
     lambda x, a, b, value=1: x + value * a * b,
     [((2, 3), (2, 3), (3,)), (((2, 3), (3,), (2, 1)), dict(value=-2))])
_lin("kron", ("Mul", "Reshape"), ops.kron, np.kron, [((2, 2), (2, 3)), ((2,), (2, 3)), ((2, 1, 2), (3, 2))])
_lin("tensor_dot", ("BatchMatMul", "Transpose"), lambda a, b, axes: ops.tensor_dot(a, b, axes),
     lambda a, b, axes: np.tensordot(a, b, axes),
     [(((2, 3, 4), (4, 3, 2)), dict(axes=((1, 2), (1, 0)))), (((2, 3, 4), (3, 4, 2)), dict(axes=2)),
      (((2, 3), (3, 2)), dict(axes=1)), (((2, 3), (4,)), dict(axes=0))])


def _np_batch_dot(a, b, axes=None):
    if axes is None:
        axes = (a.ndim - 1, b.ndim - 2 if b.ndim > 2 else b.ndim - 1)
    out = np.stack([np.tensordot(a[i], b[i], (axes[0] - 1, axes[1] - 1)) for i in range(a.shape[0])])
    return out.reshape(a.shape[0], 1) if out.ndim == 1 else out


_lin("batch_dot", ("BatchMatMul", "Transpose"), lambda a, b, axes=None: ops.batch_dot(a, b, axes), _np_batch_dot,
     [((2, 3, 4), (2, 4, 5)), (((2, 3, 4), (2, 3, 5)), dict(axes=(1, 1))), ((2, 3), (2, 3)),
      ((2, 3), (2, 3, 4))])
_lin("vecdot", ("Mul", "ReduceSum"), lambda a, b, axis=-1: ops.vecdot(a, b, axis=axis),
     lambda a, b, axis=-1: np.sum(a * b, axis=axis), [((2, 3), (3,)), (((3, 2), (3, 1)), dict(axis=0))],
     out_dtype=_in_dtype)
_lin("einsum", ("BatchMatMul", "Transpose", "ReduceSum"), lambda *xs, eq: ops.einsum(eq, *xs),
     lambda *xs, eq: np.einsum(eq, *xs),
     [(((2, 3), (3, 4)), dict(eq="ij,jk->ik")), (((2, 2, 3), (2, 3, 4)), dict(eq="bij,bjk->bik")),
      (((3, 3),), dict(eq="ii->i")), (((3, 3),), dict(eq="ii")), (((3,), (4,)), dict(eq="i,j->ij")),
      (((2, 1, 2, 3), (3, 3, 2)), dict(eq="...ij,...jk")), (((2, 3, 4),), dict(eq="ijk->kij")),
      (((2, 3), (2, 3), (3,)), dict(eq="ij,ij,j->i")), (((2, 3), (3, 4)), dict(eq="ij,jk"))])
_lin("trace", ("Diagonal", "ReduceSum"), ops.trace, np.trace, [((3, 3),), ((2, 4),), ((4, 2),)],
     out_dtype=_in_dtype)
def _np_cross(a, b, dim=None):
    shape = np.broadcast_shapes(a.shape, b.shape)
    d = dim if dim is not None else [i for i, s in enumerate(shape) if s == 3][0]
    return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=d)


_lin("cross", ("Gather", "Mul", "Sub"), lambda a, b, dim=None: ops.cross(a, b, dim), _np_cross,
     [((2, 3), (2, 3)), (((3, 2), (3, 2)), dict(dim=0)), ((4, 3), (3,))])
_lin("matrix_power", "BatchMatMul", lambda a, n: ops.matrix_power(a, n),
     lambda a, n: np.linalg.matrix_power(a, n),
     [(((3, 3),), dict(n=3)), (((2, 2, 2),), dict(n=0)), (((2, 2),), dict(n=1)), (((2, 3, 3),), dict(n=6))])
register(OpInfo("matrix_power_negative", ("MatrixInverse", "BatchMatMul"), lambda a, n: ops.matrix_power(a, n),
                lambda a, n: np.linalg.matrix_power(a, n),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 3), dtype) + 3 * np.eye(3, dtype=dtype),), dict(n=-2)),
                                         Sample((arr(rng, (2, 2, 2), dtype) + 3 * np.eye(2, dtype=dtype),),
                                                dict(n=-1))]),
                FL, differentiable=True, tol={F32: (1e-4, 1e-5)}, special_skip="as inverse"))


# ---------------------------------------------------------------------------------------------- LU (det, inverse)

def _lu_samples(dtype, rng):
    yield Sample((arr(rng, (3, 3), dtype),))
    yield Sample((arr(rng, (2, 4, 4), dtype),), desc="batched")
    a = arr(rng, (3, 3), dtype)
    a[0, 0] = 0.0
    yield Sample((a,), desc="zero first pivot (row swap)")
    yield Sample((arr(rng, (1, 1), dtype),), desc="1x1")
    yield Sample((np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]], dtype),), desc="permutation-like")


def _spd_samples(dtype, rng):
    """Positive determinants (A·Aᵀ + I), where log det has a gradient; and one negative (NaN, no gradient)."""
    for shape in ((3, 3), (2, 4, 4)):
        a = arr(rng, shape, dtype)
        yield Sample(((a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])).astype(dtype),))
    yield Sample((np.diag([-1.0, 2.0]).astype(dtype),), desc="negative det", grad=False)


def _lu_entry(name, ref, claims, samples=_lu_samples, **kw):
    register(OpInfo(name, claims, getattr(ops, name), ref, samples, FL,
                    differentiable=True, special_skip="a pivoted LU in double: inf/NaN entries give NaN (LAPACK's)",
                    tol={F32: (1e-4, 1e-5)}, **kw))


# one C++ op each since issue 23's stop 33 (src/ops/linalg.cpp); the gradients are MatrixInverse, MatMul, Mul
_lu_entry("det", np.linalg.det, ("MatrixDeterminant", "MatrixInverse"))
_lu_entry("slogdet", lambda a: tuple(np.linalg.slogdet(a)), ("LogMatrixDeterminant", "MatrixInverse"))
_lu_entry("logdet", lambda a: (lambda s, l: np.where(s < 0, np.nan, l))(*np.linalg.slogdet(a)),
          ("LogMatrixDeterminant", "Select", "MatrixInverse"), _spd_samples)
_lu_entry("inverse", np.linalg.inv, ("MatrixInverse",))


def _matrix_solve_samples(dtype, rng):
    """Well-conditioned matrices (A + 3·I) and right-hand sides; adjoint solves with Aᵀ (MindSpore 2.10's
    ops.matrix_solve)."""
    yield Sample((arr(rng, (3, 3), dtype) + 3 * np.eye(3, dtype=dtype), arr(rng, (3, 2), dtype)))
    yield Sample((arr(rng, (2, 4, 4), dtype) + 3 * np.eye(4, dtype=dtype), arr(rng, (2, 4, 1), dtype)),
                 desc="batched")
    yield Sample((arr(rng, (3, 3), dtype) + 3 * np.eye(3, dtype=dtype), arr(rng, (3, 2), dtype)),
                 dict(adjoint=True), desc="adjoint")


register(OpInfo("matrix_solve", ("MatrixInverse", "BatchMatMul"), ops.matrix_solve,
                lambda a, b, adjoint=False: np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b),
                _matrix_solve_samples, FL, differentiable=True,
                special_skip="LU arithmetic: Div's, Mul's and Sub's special values", tol={F32: (1e-4, 1e-5)}))
