"""Norms and distances built from Kiln's ReduceSum/ReduceMax/ReduceMin, Abs, Pow, Sqrt and Gather kernels
(MindSpore 2.10's ops.cdist, dist, pdist, renorm, vector_norm, matrix_norm). p = 0 counts non-zeros, p = ±inf takes
the largest/smallest |x|; with p = 2 (and any p) the gradient at a zero vector is 0 (PyTorch's), not the NaN of
√0's derivative times 0."""
import math
import numbers


from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, dtype_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop
from .math_reduce_func import _axes, _axis1, _bool_arg, _float_only, _full_like, _safe_sqrt

__all__ = ["cdist", "dist", "pdist", "renorm", "vector_norm", "matrix_norm"]


# ---------------------------------------------------------------------------------------------- distances and norms

def _pnorm(d, p, axes, keepdim):
    """(Σ|d|^p)^(1/p) over axes, with p = 0 (count of non-zeros), inf, −inf; gradient 0 at a zero vector."""
    a = _core.abs(d)
    if p == math.inf:
        return _core.amax(a, axes, keepdim)
    if p == -math.inf:
        return _core.amin(a, axes, keepdim)
    if p == 0:
        return _core.cast(_core.count_nonzero(d, axes, keepdim), d.dtype)
    if p == 1:
        return _core.sum(a, axes, keepdim)
    if p == 2:
        return _safe_sqrt(_core.sum(_core.square(d), axes, keepdim))
    s = _core.sum(_core.pow(a, float(p)), axes, keepdim)
    zero = _core.equal(s, 0.0)
    r = _core.pow(_core.select(zero, _full_like(s, 1.0), s), 1.0 / p)
    return _core.select(zero, _core.zeros_like(s), r)


def _p_arg(op, p, allow_neg=False):
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"For '{op}', 'p' must be a number, but got {_got(p)}.")
    p = float(p)
    if (p < 0 and not allow_neg) or math.isnan(p):
        raise ValueError(f"For '{op}', 'p' must be >= 0, but got {p}.")
    return p


@defop()
def cdist(x1, x2, p=2.0):
    """MindSpore's ops.cdist(x1, x2, p=2.0): the p-norm distance between each row of x1 (..., P, M) and each row of
    x2 (..., R, M), shape (..., P, R) (batch dims broadcast); p = 0 counts differing coordinates, p = inf takes the
    largest. Float inputs. Gradient 0 at a zero distance. Raises TypeError (non-Tensor, integer inputs, non-number
    p), ValueError (fewer than 2 dims, M differs, p < 0)."""
    a, b = _float_only(x1, "cdist", "x1"), _float_only(x2, "cdist", "x2")
    p = _p_arg("cdist", p)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"For 'cdist', the inputs must be (..., P, M) and (..., R, M), but got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")
    d = _core.sub(_core.expand_dims(a, -2), _core.expand_dims(b, -3))  # (..., P, R, M)
    return _pnorm(d, p, [-1], False)


@defop()
def dist(input, other, p=2):
    """MindSpore's ops.dist(input, other, p=2): the p-norm of input − other (broadcast, flattened), 0-d; p = 0
    counts the non-zero differences, p = inf takes the largest. Float inputs. Gradient 0 where they are equal.
    Raises TypeError (non-Tensor, integer inputs, non-number p), ValueError (shapes that do not broadcast, p < 0)."""
    a, b = _float_only(input, "dist"), _float_only(other, "dist", "other")
    p = _p_arg("dist", p)
    try:
        _broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"For 'dist', the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast.") \
            from None
    d = _core.reshape(_core.sub(a, b), [-1])
    return _pnorm(d, p, [0], False)


@defop(primitive=None)
def pdist(input, p=2.0):
    """MindSpore's ops.pdist(input, p=2.0): the p-norm distances between the rows of a 2-D input (N, M), for the
    pairs i < j in row-major order: N·(N − 1)/2 values; p = 0 counts the differing coordinates, p = inf takes the
    largest |difference|. Float input. One C++ op, Pdist (src/ops/pdist.cpp); its gradient PdistGrad follows
    PyTorch's and MindSpore's pdist backward (0 for a pair at distance 0). Raises TypeError (non-Tensor, integer
    input, non-number p), ValueError (not 2-D, p < 0)."""
    x = _float_only(input, "pdist")
    p = _p_arg("pdist", p)
    if x.ndim != 2:
        raise ValueError(f"For 'pdist', the input must be 2-D, but got shape {tuple(x.shape)}.")
    return _core.pdist(x, p)


@defop(primitive=None, tensor="renorm")
def renorm(input, p, axis, maxnorm):
    """MindSpore's ops.renorm(input, p, axis, maxnorm): each slice input[..., i, ...] along `axis` whose p-norm
    exceeds maxnorm is scaled by maxnorm/(norm + 1e-7) (PyTorch's factor); the others are unchanged. Float input.
    Raises TypeError (non-Tensor, integer input, non-number p or maxnorm), ValueError (p <= 0, maxnorm < 0,
    axis out of range)."""
    x = _float_only(input, "renorm")
    p = _p_arg("renorm", p)
    if p <= 0:
        raise ValueError(f"For 'renorm', 'p' must be > 0, but got {p}.")
    if isinstance(maxnorm, bool) or not isinstance(maxnorm, numbers.Real):
        raise TypeError(f"For 'renorm', 'maxnorm' must be a number, but got {_got(maxnorm)}.")
    if maxnorm < 0:
        raise ValueError(f"For 'renorm', 'maxnorm' must be >= 0, but got {maxnorm}.")
    ax = _axis1("renorm", axis, x.ndim)
    others = [i for i in range(x.ndim) if i != ax]
    nrm = _pnorm(x, p, others, True)
    factor = _core.div(float(maxnorm), _core.add(nrm, 1e-7))
    factor = _core.select(_core.greater(nrm, float(maxnorm)), factor, _full_like(nrm, 1.0))
    return _core.mul(x, factor)


def _norm_dtype(op, x, dtype):
    if dtype is not None:
        dt = dtype_arg(op, "dtype", dtype)
        if not mstype.is_float(dt):
            raise TypeError(f"For '{op}', 'dtype' must be a float dtype, but got {dt}.")
        return _core.cast(x, dt)
    return mstype.as_float_input(x, op)


@defop()
def vector_norm(x, ord=2, axis=None, keepdims=False, *, dtype=None):
    """MindSpore's ops.vector_norm(x, ord=2, axis=None, keepdims=False, *, dtype=None): the vector p-norm over
    `axis` (None: all elements; an int or a tuple), ord any number (0: count of non-zeros), inf (max |x|), -inf
    (min |x|). Integer inputs compute in float32; dtype casts the input first. Gradient 0 at a zero vector (p = 2).
    Raises TypeError (non-Tensor, non-number ord, non-float dtype), ValueError (axis out of range)."""
    t = _norm_dtype("vector_norm", _tensor_arg(x, "vector_norm", "x"), dtype)
    p = _p_arg("vector_norm", ord, allow_neg=True)
    axes = _axes("vector_norm", axis, t.ndim)
    return _pnorm(t, p, axes, _bool_arg("vector_norm", "keepdims", keepdims))


@defop()
def matrix_norm(A, ord="fro", axis=(-2, -1), keepdims=False, *, dtype=None):
    """MindSpore's ops.matrix_norm(A, ord='fro', axis=(-2, -1), keepdims=False, *, dtype=None): the matrix norm of
    the matrices on the two `axis` dims: 'fro' (√Σa²), 1 / -1 (max / min column sum of |a|), inf / -inf (max / min
    row sum). 'nuc' and ±2 need singular values, which Kiln does not compute: ValueError. Integer inputs compute in
    float32. Raises TypeError (non-Tensor, non-float dtype), ValueError (ord, axis not two distinct dims)."""
    t = _norm_dtype("matrix_norm", _tensor_arg(A, "matrix_norm", "A"), dtype)
    keepdims = _bool_arg("matrix_norm", "keepdims", keepdims)
    if not (isinstance(axis, (tuple, list)) and len(axis) == 2):
        raise ValueError(f"For 'matrix_norm', 'axis' must be a pair of dims, but got {_got(axis)}.")
    if t.ndim < 2:
        raise ValueError(f"For 'matrix_norm', A must have at least 2 dims, but got shape {tuple(t.shape)}.")
    r, c = (_axis1("matrix_norm", a, t.ndim) for a in axis)
    if r == c:
        raise ValueError(f"For 'matrix_norm', 'axis' must name two different dims, but got {_got(axis)}.")
    if isinstance(ord, Tensor) or not (isinstance(ord, (str, numbers.Real))):
        raise TypeError(f"For 'matrix_norm', 'ord' must be 'fro' or a number, but got {_got(ord)}.")
    if isinstance(ord, str) and ord == "fro":
        return _safe_sqrt(_core.sum(_core.square(t), [r, c], keepdims))
    if not isinstance(ord, bool) and ord in (1, -1, math.inf, -math.inf):
        summed, red = (r, c) if ord in (1, -1) else (c, r)
        s = _core.sum(_core.abs(t), [summed], True)
        out = (_core.amax if ord > 0 else _core.amin)(s, [red], True)
        return out if keepdims else _core.squeeze(out, sorted((r, c)))
    raise ValueError(f"For 'matrix_norm', ord {_got(ord)} is not supported (Kiln supports 'fro', 1, -1, inf and -inf; "
                     f"'nuc' and ±2 need singular values).")
