"""Determinants and inverses of square matrices from an LU decomposition with partial pivoting: one C++ op each
(src/ops/linalg.cpp: MatrixDeterminant, LogMatrixDeterminant, MatrixInverse; MindSpore 2.10's ops.det, slogdet,
logdet, inverse and the Tensor methods).

The decomposition is Doolittle's with row pivoting (Golub & Van Loan, "Matrix Computations", Algorithm 3.4.1; the
method of LAPACK's getrf), in double per matrix: for k = 0 … n−1 the row holding the largest |a_ik| (i >= k) is
swapped to row k, the multipliers l_ik = a_ik / a_kk are stored below the diagonal and the trailing block is updated,
a_ij −= l_ik·a_kj. It is backward stable in practice, so det, log|det| and the inverse are as accurate as NumPy's
(LAPACK's) for well-conditioned matrices. A zero pivot (an exactly singular matrix) gives det 0, slogdet (0, −inf)
and an inverse of inf/NaN, as LAPACK-based libraries do. Gradients (the ops' bprops, composed of Kiln ops so that
they differentiate again): d det = g·det·A⁻ᵀ, d log|det| = g·A⁻ᵀ, d A⁻¹: −A⁻ᵀ·g·A⁻ᵀ."""
import numpy as np

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
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


def _slogdet(x):
    """(sign, log|det|) of the square float matrices x (checked by the caller): the LogMatrixDeterminant op."""
    s, logabs = _core.slogdet(x)
    return s, logabs  # a tuple, as MindSpore's


@defop(tensor="det")
def det(input):
    """MindSpore's ops.det(input): the determinant of square matrices (..., n, n) → (...), from the LU
    decomposition (module docstring): sign(P)·Π diag(U), one MatrixDeterminant op. Float inputs. Raises TypeError (non-Tensor, integer
    input), ValueError (not square)."""
    return _core.det(_square("det", input))


@defop(tensor="slogdet")
def slogdet(input):
    """MindSpore's ops.slogdet(input): (sign, log|det|) of square matrices (..., n, n), each of shape (...); a
    singular matrix gives (0, −inf); one LogMatrixDeterminant op. Float inputs. Raises TypeError (non-Tensor, integer input), ValueError."""
    return _slogdet(_square("slogdet", input))


@defop(tensor="logdet")
def logdet(input):
    """MindSpore's ops.logdet(input): log det of square matrices (..., n, n) → (...): NaN where det < 0, −inf where
    it is 0 (LogMatrixDeterminant, then a Select). Float inputs. Raises TypeError (non-Tensor, integer input), ValueError (not square)."""
    s, logabs = _slogdet(_square("logdet", input))
    return _core.select(_core.less(s, 0.0), _core.full(list(s.shape), np.nan, s.dtype), logabs)


@defop(tensor="inverse", mint="inverse")
def inverse(input):
    """MindSpore's ops.inverse(input): the inverse of square matrices (..., n, n), by the LU decomposition and
    forward/back substitution on the permuted identity, one MatrixInverse op (inf/NaN for an exactly singular
    matrix). Float32/float64 inputs (MindSpore 2.10's MatrixInverse).
    Raises TypeError (non-Tensor, another dtype), ValueError (not square)."""
    x = _square("inverse", input)
    if x.dtype not in (mstype.float32, mstype.float64):  # MindSpore 2.10's MatrixInverse: no 16-bit floats
        raise TypeError(f"For 'inverse', the input must be a float32 or float64 Tensor, but got {_got(x)}.")
    return _core.inverse(x)
