"""Determinants and inverses from an LU decomposition with partial pivoting, composed of Kiln's ArgMax, Gather,
Select, Div, Mul, Sub and Concat kernels (MindSpore 2.10's ops.det, slogdet, logdet, inverse and the Tensor methods).

The decomposition is Doolittle's with row pivoting (Golub & Van Loan, "Matrix Computations", Algorithm 3.4.1; the
method of LAPACK's getrf): for k = 0 … n−1 the row holding the largest |a_ik| (i >= k) is swapped to row k, the
multipliers l_ik = a_ik / a_kk are stored below the diagonal and the trailing block is updated, a_ij −= l_ik·a_kj.
It is backward stable in practice, so det, log|det| and the inverse are as accurate as NumPy's (LAPACK's) for
well-conditioned matrices. A zero pivot (an exactly singular matrix) gives det 0, slogdet (0, −inf) and an inverse
of inf/NaN, as LAPACK-based libraries do. The steps are a Python loop over n (each one batched over the leading
dims), so the cost is O(n) kernel launches: meant for the small matrices (n up to a few dozen) models use.
Gradients come from the building blocks (d det = det·A⁻ᵀ, d log|det| = A⁻ᵀ, d A⁻¹ = −A⁻¹·dA·A⁻¹)."""
import numpy as np

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop

__all__ = ["det", "slogdet", "logdet", "inverse"]


def _square(op, x):
    x = _tensor_arg(x, op)
    if not mstype.is_float(x.dtype):
        raise TypeError(f"For '{op}', the input must be a float Tensor, but got {_got(x)}.")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"For '{op}', the input must be square matrices (..., n, n), but got shape "
                         f"{tuple(x.shape)}.")
    return x


def _sl(t, axis, start, stop):
    begin = [0] * t.ndim
    end = list(t.shape)
    begin[axis % t.ndim], end[axis % t.ndim] = start, stop
    return _core.strided_slice(t, begin, end, [1] * t.ndim)


def _lu(a):
    """(LU packed in one tensor, row permutation (..., n) Int64, permutation sign (...,) in a's dtype)."""
    from .index_func import gather_elements
    n = a.shape[-1]
    batch = list(a.shape[:-2])
    rows = Tensor(np.arange(n, dtype=np.int64))
    perm = _core.broadcast_to(rows, batch + [n])
    sign = _core.full(batch, 1.0, a.dtype)
    for k in range(n):
        col = _core.squeeze(_sl(_sl(a, -1, k, k + 1), -2, k, n), [a.ndim - 1])  # (..., n − k)
        p = _core.add(_core.argmax(_core.abs(_core.stop_gradient(col)), -1, True), k)  # (..., 1) Int64
        p = _core.cast(p, mstype.int64)
        kk = _core.full([], float(k), mstype.int64)
        idx = _core.broadcast_to(rows, batch + [n])
        swap = _core.select(_core.equal(idx, kk), _core.broadcast_to(p, batch + [n]),
                            _core.select(_core.equal(idx, p), _core.broadcast_to(kk, batch + [n]), idx))
        a = gather_elements(a, a.ndim - 2, _core.broadcast_to(_core.expand_dims(swap, -1), list(a.shape)))
        perm = gather_elements(perm, perm.ndim - 1, swap)
        moved = _core.not_equal(_core.squeeze(p, [p.ndim - 1]), kk)
        sign = _core.select(moved, _core.neg(sign), sign)
        if k == n - 1:
            break
        pivot = _sl(_sl(a, -2, k, k + 1), -1, k, k + 1)  # (..., 1, 1)
        safe = _core.select(_core.equal(pivot, 0.0), _core.ones_like(pivot), pivot)
        below = _sl(_sl(a, -2, k + 1, n), -1, k, k + 1)  # (..., n−k−1, 1)
        lcol = _core.div(below, safe)
        urow = _sl(_sl(a, -2, k, k + 1), -1, k + 1, n)  # (..., 1, n−k−1)
        block = _core.sub(_sl(_sl(a, -2, k + 1, n), -1, k + 1, n), _core.mul(lcol, urow))
        lower = _core.concat([_sl(_sl(a, -2, k + 1, n), -1, 0, k), lcol, block], a.ndim - 1) if k else \
            _core.concat([lcol, block], a.ndim - 1)
        a = _core.concat([_sl(a, -2, 0, k + 1), lower], a.ndim - 2)
    return a, perm, sign


def _diag(a):
    n = a.shape[-1]
    flat = _core.reshape(a, list(a.shape[:-2]) + [n * n])
    return _core.gather(flat, Tensor((np.arange(n) * (n + 1)).astype(np.int64)), flat.ndim - 1)


def _empty(x):
    """True for 0×0 matrices or an empty batch: det 1 (the empty product), or no matrices at all."""
    return x.shape[-1] == 0 or 0 in tuple(x.shape[:-2])


def _slogdet(x):
    if _empty(x):
        shape = list(x.shape[:-2])
        return _core.full(shape, 1.0, x.dtype), _core.full(shape, 0.0, x.dtype)
    lu, _, sign = _lu(x)
    d = _diag(lu)
    zero = _core.equal(d, 0.0)
    s = _core.mul(sign, _core.prod(_core.sign(d), [d.ndim - 1], False))
    logabs = _core.sum(_core.log(_core.abs(_core.select(zero, _core.ones_like(d), d))), [d.ndim - 1], False)
    singular = _core.reduce_any(zero, [d.ndim - 1], False)
    logabs = _core.select(singular, _core.full(list(logabs.shape), -np.inf, x.dtype), logabs)
    return s, logabs


@defop(tensor="det")
def det(input):
    """MindSpore's ops.det(input): the determinant of square matrices (..., n, n) → (...), from the LU
    decomposition (module docstring): sign(P)·Π diag(U). Float inputs. Raises TypeError (non-Tensor, integer
    input), ValueError (not square)."""
    x = _square("det", input)
    if _empty(x):
        return _core.full(list(x.shape[:-2]), 1.0, x.dtype)
    lu, _, sign = _lu(x)
    d = _diag(lu)
    return _core.mul(sign, _core.prod(d, [d.ndim - 1], False))


@defop(tensor="slogdet")
def slogdet(input):
    """MindSpore's ops.slogdet(input): (sign, log|det|) of square matrices (..., n, n), each of shape (...); a
    singular matrix gives (0, −inf). Float inputs. Raises TypeError (non-Tensor, integer input), ValueError."""
    return _slogdet(_square("slogdet", input))


@defop(tensor="logdet")
def logdet(input):
    """MindSpore's ops.logdet(input): log det of square matrices (..., n, n) → (...): NaN where det < 0, −inf where
    it is 0. Float inputs. Raises TypeError (non-Tensor, integer input), ValueError (not square)."""
    s, logabs = _slogdet(_square("logdet", input))
    return _core.select(_core.less(s, 0.0), _core.full(list(s.shape), np.nan, s.dtype), logabs)


@defop(tensor="inverse", mint="inverse")
def inverse(input):
    """MindSpore's ops.inverse(input): the inverse of square matrices (..., n, n), by the LU decomposition and
    forward/back substitution on the permuted identity (inf/NaN for an exactly singular matrix). Float inputs.
    Raises TypeError (non-Tensor, integer input), ValueError (not square)."""
    from .index_func import gather_elements
    x = _square("inverse", input)
    n = x.shape[-1]
    if _empty(x):
        return _core.identity(x)
    lu, perm, _ = _lu(x)
    eye = _core.broadcast_to(Tensor(np.eye(n, dtype=mstype.dtype_to_nptype(x.dtype))), list(x.shape))
    b = gather_elements(eye, x.ndim - 2, _core.broadcast_to(_core.expand_dims(perm, -1), list(x.shape)))  # P·I
    ys = []
    for i in range(n):  # L y = P b, L unit lower triangular
        bi = _sl(b, -2, i, i + 1)
        if i:
            li = _sl(_sl(lu, -2, i, i + 1), -1, 0, i)  # (..., 1, i)
            bi = _core.sub(bi, _core.matmul(li, _core.concat(ys, x.ndim - 2)))
        ys.append(bi)
    xs = [None] * n
    for i in range(n - 1, -1, -1):  # U x = y
        r = ys[i]
        if i < n - 1:
            ui = _sl(_sl(lu, -2, i, i + 1), -1, i + 1, n)
            r = _core.sub(r, _core.matmul(ui, _core.concat(xs[i + 1:], x.ndim - 2)))
        xs[i] = _core.div(r, _sl(_sl(lu, -2, i, i + 1), -1, i, i + 1))
    return _core.concat(xs, x.ndim - 2)
