"""Products and linear algebra built from Kiln's BatchMatMul, Mul, ReduceSum, Transpose and Reshape kernels
(MindSpore 2.10's ops.mm, bmm, mv, dot, inner, outer/ger, addmm, addmv, addr, addbmm, baddbmm, addcdiv, addcmul,
kron, tensor_dot, batch_dot, vecdot, einsum, trace, cross, matrix_power). Gradients come from the building blocks.

Result dtypes are the inputs' (promoted as BatchMatMul/Mul promote); shapes and argument rules are MindSpore 2.10's
(checked against MindSpore 2.10 on CPU). A shape that does not fit raises ValueError naming the op and the shapes;
a non-Tensor input raises TypeError."""
import builtins
import math
import numbers

import numpy as np

from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _static_tables, _tensor_arg
from ._opdef import defop
from .complex_func import conj as _conj

__all__ = ["mm", "bmm", "mv", "dot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm", "baddbmm",
           "addcdiv", "addcmul", "kron", "tensor_dot", "batch_dot", "vecdot", "einsum", "trace", "cross",
           "matrix_power"]


def _ndim(x, op, name, ndims):
    x = _tensor_arg(x, op, name)
    if x.ndim not in ndims:
        want = " or ".join(f"{n}-D" for n in ndims)
        raise ValueError(f"For '{op}', '{name}' must be {want}, but got shape {tuple(x.shape)}.")
    return x


def _match(op, a, b, da, db):
    if a.shape[da] != b.shape[db]:
        raise ValueError(f"For '{op}', the contracted dims must match, but got shapes {tuple(a.shape)} (dim {da}) "
                         f"and {tuple(b.shape)} (dim {db}).")


def _sum(x, axes, keep=False):
    """ReduceSum keeping x's dtype (Kiln's sum widens integers to Int64; MindSpore's products keep them)."""
    out = _core.sum(x, axes, keep)
    return out if out.dtype == x.dtype else _core.cast(out, x.dtype)


def _scaled(t, s):
    """s·t, skipping the multiply for s == 1 (a Python number) so integer products stay integer."""
    k = type(s)
    if ((k is int or k is float) or (isinstance(s, numbers.Number) and not isinstance(s, bool))) and s == 1:
        return t
    return _core.mul(t, s)


def _scalar_arg(op, name, v):
    k = type(v)
    if k is int or k is float or isinstance(v, Tensor) or (isinstance(v, numbers.Number) and not isinstance(v, bool)):
        return v
    raise TypeError(f"For '{op}', '{name}' must be a number or a Tensor, but got {_got(v)}.")


def _beta_alpha(op, inp, prod, beta, alpha):
    """beta·input + alpha·prod; beta == 0 ignores input's values (NaN included), as PyTorch does."""
    beta, alpha = _scalar_arg(op, "beta", beta), _scalar_arg(op, "alpha", alpha)
    inp = _tensor_arg(inp, op, "input")
    try:
        _broadcast_shapes(tuple(inp.shape), tuple(prod.shape))
    except ValueError:
        raise ValueError(f"For '{op}', 'input' of shape {tuple(inp.shape)} does not broadcast to the product's "
                         f"shape {tuple(prod.shape)}.") from None
    p = _scaled(prod, alpha)
    if isinstance(beta, numbers.Number) and beta == 0:
        return _core.add(p, _core.zeros_like(inp))
    return _core.add(_scaled(inp, beta), p)


@defop(tensor="mm", mint="mm")
def mm(input, mat2):
    """MindSpore's ops.mm(input, mat2): the matrix product of 2-D tensors, (n, k) @ (k, m) → (n, m).
    Raises TypeError (non-Tensor), ValueError (not 2-D, or k differs)."""
    a, b = _ndim(input, "mm", "input", (2,)), _ndim(mat2, "mm", "mat2", (2,))
    _match("mm", a, b, 1, 0)
    return _core.matmul(a, b)


@defop(tensor="bmm")
def bmm(input_x, mat2):
    """MindSpore's ops.bmm(input_x, mat2): batched matrix product (..., n, k) @ (..., k, m) → (..., n, m); the batch
    dims must be equal (MindSpore does not broadcast them). Raises TypeError (non-Tensor), ValueError (fewer than 2
    dims, different batch dims, k differs)."""
    a, b = _tensor_arg(input_x, "bmm", "input_x"), _tensor_arg(mat2, "bmm", "mat2")
    if a.ndim < 2 or a.ndim != b.ndim or tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise ValueError(f"For 'bmm', the inputs must have the same number (>= 2) of dims and equal batch dims, but "
                         f"got shapes {tuple(a.shape)} and {tuple(b.shape)}.")
    _match("bmm", a, b, -1, -2)
    return _core.matmul(a, b)


@defop()
def mv(mat, vec):
    """MindSpore's ops.mv(mat, vec): matrix-vector product, (n, m) @ (m,) → (n,). Raises TypeError (non-Tensor),
    ValueError (mat not 2-D, vec not 1-D, m differs)."""
    a, v = _ndim(mat, "mv", "mat", (2,)), _ndim(vec, "mv", "vec", (1,))
    _match("mv", a, v, 1, 0)
    return _core.matmul(a, v)


def _dot_nd(x, y):
    """NumPy's dot for x.ndim >= 1, y.ndim >= 2: contracts x's last dim with y's second-to-last; shape
    x.shape[:-1] + y.shape[:-2] + y.shape[-1:]."""
    if y.ndim == 2:
        return _core.matmul(x, y)
    yt = _core.transpose(y, [y.ndim - 2] + list(range(y.ndim - 2)) + [y.ndim - 1])  # (k, ..., m)
    out = _core.matmul(_core.reshape(x, [-1, x.shape[-1]]), _core.reshape(yt, [y.shape[-2], -1]))
    return _core.reshape(out, list(x.shape[:-1]) + list(y.shape[:-2]) + [y.shape[-1]])


@defop(tensor="dot")
def dot(input, other):
    """MindSpore's ops.dot(input, other): NumPy's dot for inputs of at least 2 dims — contracts input's last dim
    with other's second-to-last; the shape is input.shape[:-1] + other.shape[:-2] + other.shape[-1:].
    Raises TypeError (non-Tensor), ValueError (fewer than 2 dims, contracted dims differ)."""
    x, y = _tensor_arg(input, "dot"), _tensor_arg(other, "dot", "other")
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError(f"For 'dot', the inputs must have at least 2 dims, but got shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)}.")
    _match("dot", x, y, -1, -2)
    return _dot_nd(x, y)


@defop(tensor="inner")
def inner(input, other):
    """MindSpore's ops.inner(input, other): the sum product over the last dims, shape input.shape[:-1] +
    other.shape[:-1]; a 0-d input multiplies. Raises TypeError (non-Tensor), ValueError (last dims differ)."""
    x, y = _tensor_arg(input, "inner"), _tensor_arg(other, "inner", "other")
    if x.ndim == 0 or y.ndim == 0:
        return _core.mul(x, y)
    _match("inner", x, y, -1, -1)
    out = _core.matmul(_core.reshape(x, [-1, x.shape[-1]]),
                       _core.transpose(_core.reshape(y, [-1, y.shape[-1]]), [1, 0]))
    return _core.reshape(out, list(x.shape[:-1]) + list(y.shape[:-1]))


def _outer(op, x, y, yname):
    x, y = _tensor_arg(x, op), _tensor_arg(y, op, yname)
    return _core.mul(_core.reshape(x, [-1, 1]), _core.reshape(y, [1, -1]))


@defop(tensor="outer", mint="outer")
def outer(input, vec2):
    """MindSpore's ops.outer(input, vec2): the outer product of the flattened inputs, shape (input.size, vec2.size).
    Raises TypeError (non-Tensor)."""
    return _outer("outer", input, vec2, "vec2")


@defop(primitive="Ger", tensor="ger")
def ger(input, vec2):
    """MindSpore's ops.ger(input, vec2): the outer product of two 1-D tensors, shape (n, m). Raises TypeError
    (non-Tensor), ValueError (not 1-D)."""
    _ndim(input, "ger", "input", (1,))
    _ndim(vec2, "ger", "vec2", (1,))
    return _outer("ger", input, vec2, "vec2")


@defop(tensor="addmm", mint="addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """MindSpore's ops.addmm(input, mat1, mat2, *, beta=1, alpha=1): beta·input + alpha·(mat1 @ mat2); mat1 (n, k),
    mat2 (k, m), input broadcastable to (n, m). beta = 0 ignores input's values (NaN included).
    Raises TypeError (non-Tensor, non-number beta/alpha), ValueError (shapes)."""
    return _beta_alpha("addmm", input, mm(mat1, mat2), beta, alpha)


@defop(tensor="addmv", mint="addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """MindSpore's ops.addmv(input, mat, vec, *, beta=1, alpha=1): beta·input + alpha·(mat @ vec); mat (n, m),
    vec (m,), input broadcastable to (n,). Raises TypeError, ValueError (shapes)."""
    return _beta_alpha("addmv", input, mv(mat, vec), beta, alpha)


@defop(tensor="addr")
def addr(x, vec1, vec2, *, beta=1, alpha=1):
    """MindSpore's ops.addr(x, vec1, vec2, *, beta=1, alpha=1): beta·x + alpha·outer(vec1, vec2); vec1 (n,),
    vec2 (m,), x broadcastable to (n, m). Raises TypeError, ValueError (shapes)."""
    _ndim(vec1, "addr", "vec1", (1,))
    _ndim(vec2, "addr", "vec2", (1,))
    return _beta_alpha("addr", x, _outer("addr", vec1, vec2, "vec2"), beta, alpha)


def _bmm3(op, b1, b2):
    a, b = _ndim(b1, op, "batch1", (3,)), _ndim(b2, op, "batch2", (3,))
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"For '{op}', batch1 and batch2 must have the same batch size, but got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")
    _match(op, a, b, 2, 1)
    return _core.matmul(a, b)


@defop(tensor="baddbmm")
def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """MindSpore's ops.baddbmm(input, batch1, batch2, beta=1, alpha=1): beta·input + alpha·(batch1 @ batch2) per
    batch; batch1 (b, n, k), batch2 (b, k, m), input broadcastable to (b, n, m). Raises TypeError, ValueError."""
    return _beta_alpha("baddbmm", input, _bmm3("baddbmm", batch1, batch2), beta, alpha)


@defop(tensor="addbmm", mint="addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """MindSpore's ops.addbmm(input, batch1, batch2, *, beta=1, alpha=1): beta·input + alpha·Σ_b batch1[b] @
    batch2[b]; input broadcastable to (n, m). Raises TypeError, ValueError (shapes)."""
    return _beta_alpha("addbmm", input, _sum(_bmm3("addbmm", batch1, batch2), [0]), beta, alpha)


def _add_c(op, input, t1, t2, value, fn):
    x = _tensor_arg(input, op)
    a, b = _tensor_arg(t1, op, "tensor1"), _tensor_arg(t2, op, "tensor2")
    value = _scalar_arg(op, "value", value)
    try:
        _broadcast_shapes(tuple(x.shape), tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"For '{op}', the shapes {tuple(x.shape)}, {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast.") from None
    return _core.add(x, _scaled(fn(a, b), value))


@defop(primitive="Addcdiv", tensor="addcdiv", mint="addcdiv")
def addcdiv(input, tensor1, tensor2, value=1):
    """MindSpore's ops.addcdiv(input, tensor1, tensor2, value=1): input + value·tensor1/tensor2 (broadcasting;
    value a number or Tensor). Raises TypeError (non-Tensor), ValueError (shapes that do not broadcast)."""
    return _add_c("addcdiv", input, tensor1, tensor2, value, _core.div)


@defop(primitive="Addcmul", tensor="addcmul", mint="addcmul")
def addcmul(input, tensor1, tensor2, value=1):
    """MindSpore's ops.addcmul(input, tensor1, tensor2, value=1): input + value·tensor1·tensor2 (broadcasting).
    Raises TypeError (non-Tensor), ValueError (shapes that do not broadcast)."""
    return _add_c("addcmul", input, tensor1, tensor2, value, _core.mul)


@defop()
def kron(input, other):
    """MindSpore's ops.kron(input, other): the Kronecker product; the inputs are padded with leading 1-dims to the
    same rank, and out.shape[i] = input.shape[i]·other.shape[i]. Raises TypeError (non-Tensor)."""
    a, b = _tensor_arg(input, "kron"), _tensor_arg(other, "kron", "other")
    n = builtins.max(a.ndim, b.ndim)
    sa = [1] * (n - a.ndim) + list(a.shape)
    sb = [1] * (n - b.ndim) + list(b.shape)
    ia = [d for s in sa for d in (s, 1)]
    ib = [d for s in sb for d in (1, s)]
    out = _core.mul(_core.reshape(a, ia), _core.reshape(b, ib))
    return _core.reshape(out, [x * y for x, y in zip(sa, sb)])


def _axis_list(op, axes, ndim, name):
    out = []
    for ax in axes:
        if not _is_int(ax) or not -ndim <= ax < ndim:
            raise ValueError(f"For '{op}', {name} axis {_got(ax)} is out of range for a tensor with {ndim} dims.")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"For '{op}', {name} axes {tuple(int(a) for a in axes)} repeat an axis (axes {out} of a "
                         f"tensor with {ndim} dims).")
    return out


def _contract(a, b, ax_a, ax_b):
    """Σ over a's axes ax_a paired with b's ax_b: shape a's other axes + b's other axes."""
    ra = [i for i in range(a.ndim) if i not in ax_a]
    rb = [i for i in range(b.ndim) if i not in ax_b]
    k = math.prod([int(a.shape[i]) for i in ax_a])
    at = _core.reshape(_core.transpose(a, ra + ax_a), [-1, k])
    bt = _core.reshape(_core.transpose(b, ax_b + rb), [k, -1])
    return _core.reshape(_core.matmul(at, bt), [a.shape[i] for i in ra] + [b.shape[i] for i in rb])


@defop()
def tensor_dot(x1, x2, axes):
    """MindSpore's ops.tensor_dot(x1, x2, axes): the sum of products over the given axes. axes: an int n (x1's last n
    dims with x2's first n), or a pair (axes of x1, axes of x2) of ints or sequences. Shape: x1's free dims then
    x2's. Raises TypeError (non-Tensor, malformed axes), ValueError (out-of-range axes, sizes that differ)."""
    a, b = _tensor_arg(x1, "tensor_dot", "x1"), _tensor_arg(x2, "tensor_dot", "x2")
    if _is_int(axes):
        n = int(axes)
        if not 0 <= n <= builtins.min(a.ndim, b.ndim):
            raise ValueError(f"For 'tensor_dot', an int 'axes' must be in [0, {builtins.min(a.ndim, b.ndim)}], but "
                             f"got {n}.")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        pa, pb = ([p] if _is_int(p) else p for p in axes)
        if not all(isinstance(p, (tuple, list)) for p in (pa, pb)) or len(pa) != len(pb):
            raise TypeError(f"For 'tensor_dot', 'axes' must be an int or a pair of equally long int sequences, but "
                            f"got {_got(axes)}.")
        ax_a, ax_b = _axis_list("tensor_dot", pa, a.ndim, "x1"), _axis_list("tensor_dot", pb, b.ndim, "x2")
    else:
        raise TypeError(f"For 'tensor_dot', 'axes' must be an int or a pair of axis sequences, but got {_got(axes)}.")
    for i, j in zip(ax_a, ax_b):
        _match("tensor_dot", a, b, i, j)
    return _contract(a, b, ax_a, ax_b)


@defop()
def batch_dot(x1, x2, axes=None):
    """MindSpore's ops.batch_dot(x1, x2, axes=None): per batch (dim 0, equal sizes), the sum of products over
    x1's axis axes[0] and x2's axis axes[1] (an int means that axis of both). Default axes: (x1.ndim − 1,
    x2.ndim − 2) when x2 has more than 2 dims, else (x1.ndim − 1, x2.ndim − 1). Shape: (batch,) + x1's free dims +
    x2's free dims, and (batch, 1) when none are free. Raises TypeError (non-Tensor, malformed axes), ValueError
    (fewer than 2 dims, batch sizes or contracted sizes that differ, an axis that is the batch axis)."""
    a, b = _tensor_arg(x1, "batch_dot", "x1"), _tensor_arg(x2, "batch_dot", "x2")
    if a.ndim < 2 or b.ndim < 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"For 'batch_dot', the inputs must have at least 2 dims and the same batch size, but got "
                         f"shapes {tuple(a.shape)} and {tuple(b.shape)}.")
    if axes is None:
        axes = (a.ndim - 1, b.ndim - 2 if b.ndim > 2 else b.ndim - 1)
    elif _is_int(axes):
        axes = (axes, axes)
    if not (isinstance(axes, (tuple, list)) and len(axes) == 2 and all(_is_int(v) for v in axes)):
        raise TypeError(f"For 'batch_dot', 'axes' must be None, an int or a pair of ints, but got {_got(axes)}.")
    ia, ib = _axis_list("batch_dot", [axes[0]], a.ndim, "x1")[0], _axis_list("batch_dot", [axes[1]], b.ndim, "x2")[0]
    if ia == 0 or ib == 0:
        raise ValueError(f"For 'batch_dot', 'axes' must not name the batch axis 0, but got {_got(axes)}.")
    _match("batch_dot", a, b, ia, ib)
    ra = [i for i in range(1, a.ndim) if i != ia]
    rb = [i for i in range(1, b.ndim) if i != ib]
    # (batch, rows, k) @ (batch, k, cols); transposes and reshapes only where the layout needs them (the common
    # (B, n, k) x (B, k, m) case is one MatMul)
    at = a if ia == a.ndim - 1 else _core.transpose(a, [0] + ra + [ia])
    if a.ndim != 3:
        at = _core.reshape(at, [a.shape[0], -1, a.shape[ia]])
    bt = b if ib == 1 else _core.transpose(b, [0, ib] + rb)
    if b.ndim != 3:
        bt = _core.reshape(bt, [b.shape[0], b.shape[ib], -1])
    out = _core.matmul(at, bt)
    shape = [a.shape[0]] + [a.shape[i] for i in ra] + [b.shape[i] for i in rb]
    if len(shape) == 1:
        shape.append(1)
    return out if len(shape) == 3 and a.ndim == 3 and b.ndim == 3 else _core.reshape(out, shape)


@defop()
def vecdot(x, y, *, axis=-1):
    """MindSpore's ops.vecdot(x, y, *, axis=-1): Σ conj(x)·y along `axis` (after broadcasting; a complex x is
    conjugated, as MindSpore 2.10 and PyTorch's linalg.vecdot; a real x is used as it is). Raises TypeError
    (non-Tensor), ValueError (shapes that do not broadcast, axis out of range)."""
    a, b = _tensor_arg(x, "vecdot", "x"), _tensor_arg(y, "vecdot", "y")
    try:
        shape = _broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"For 'vecdot', the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast.") \
            from None
    ax = _axis_list("vecdot", [axis], builtins.max(len(shape), 1), "the")[0]
    if mstype.is_complex(a.dtype):
        a = _conj(a)
    return _sum(_core.mul(a, b), [ax])


@defop(primitive="Trace", tensor="trace", mint="trace")
def trace(input):
    """MindSpore's ops.trace(input): the sum of the main diagonal of a 2-D tensor (0-d, input's dtype): ReduceSum
    of the Diagonal view.
    Raises TypeError (non-Tensor), ValueError (not 2-D)."""
    x = _ndim(input, "trace", "input", (2,))
    return _sum(_core.diagonal(x, 0, 0, 1), [0])


@defop(tensor="cross", mint="cross")
def cross(input, other, dim=None):
    """MindSpore's ops.cross(input, other, dim=None): the cross product of 3-vectors along `dim` (None: the first
    dim of size 3), broadcasting the other dims. Raises TypeError (non-Tensor), ValueError (shapes that do not
    broadcast, dim not of size 3 or out of range)."""
    a, b = _tensor_arg(input, "cross"), _tensor_arg(other, "cross", "other")
    try:
        shape = list(_broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ValueError(f"For 'cross', the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast.") \
            from None
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise ValueError(f"For 'cross', no dim has size 3 in shape {tuple(shape)}.")
        d = dims[0]
    else:
        d = _axis_list("cross", [dim], builtins.max(len(shape), 1), "the")[0]
        if shape[d] != 3:
            raise ValueError(f"For 'cross', dim {dim} must have size 3, but got shape {tuple(shape)}.")
    # a × b = a[yzx]·b[zxy] − a[zxy]·b[yzx] along d: four Gathers, two Muls and a Sub (broadcasting by the Muls;
    # an input of size 1 along d is broadcast first)
    nd = len(shape)
    if a.ndim != nd or int(a.shape[d - nd]) != 3:
        a = _core.broadcast_to(a, shape)
    if b.ndim != nd or int(b.shape[d - nd]) != 3:
        b = _core.broadcast_to(b, shape)
    yzx, zxy = _static_tables(("cross",), _cross_rotations)
    return _core.sub(_core.mul(_core.gather(a, yzx, d), _core.gather(b, zxy, d)),
                     _core.mul(_core.gather(a, zxy, d), _core.gather(b, yzx, d)))


def _cross_rotations():
    return Tensor(np.array([1, 2, 0], np.int32)), Tensor(np.array([2, 0, 1], np.int32))


@defop(tensor="matrix_power")
def matrix_power(input, n):
    """MindSpore's ops.matrix_power(input, n): the n-th power of square matrices (..., m, m) by repeated squaring;
    n = 0 gives identity matrices, n < 0 powers the inverse (ops.inverse: float inputs). Raises TypeError
    (non-Tensor, non-int n, a negative n for an integer input), ValueError (not square; n < 0 with an exactly
    singular matrix, as MindSpore 2.10 — checked where the values are known, i.e. not while compiling, where the
    result holds inf/NaN)."""
    x = _tensor_arg(input, "matrix_power")
    if not _is_int(n):
        raise TypeError(f"For 'matrix_power', 'n' must be an int, but got {_got(n)}.")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"For 'matrix_power', the input must be square matrices (..., m, m), but got shape "
                         f"{tuple(x.shape)}.")
    n = int(n)
    if n < 0:
        if not mstype.is_float(x.dtype):
            raise TypeError(f"For 'matrix_power', a negative n needs a float input, but got {_got(x)}.")
        if not (_core.tracing() and x._symbolic) and x.size:
            from .linalg_lu_func import _slogdet
            sign = _slogdet(x)[0].asnumpy()
            if (sign == 0).any():
                bad = np.argwhere(sign.reshape(-1) == 0).reshape(-1)[0] if sign.ndim else 0
                raise ValueError(f"For 'matrix_power', a negative power n={n} needs invertible matrices, but "
                                 f"matrix {int(bad)} (flattened batch index) of the input of shape "
                                 f"{tuple(x.shape)} is singular.")
        x, n = _core.inverse(x), -n  # the MatrixInverse op (any float dtype here)
    if n == 0:
        eye = Tensor(np.eye(x.shape[-1], dtype=mstype.dtype_to_nptype(x.dtype)))
        return _core.add(_core.mul(x, 0), eye) if x.dtype != mstype.bool_ else _core.broadcast_to(eye, list(x.shape))
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else _core.matmul(result, base)
        n >>= 1
        if n:
            base = _core.matmul(base, base)
    return result


# ---------------------------------------------------------------------------------------------- einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(equation, operands):
    if not isinstance(equation, str):
        raise TypeError(f"For 'einsum', 'equation' must be a str, but got {_got(equation)}.")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"For 'einsum', the equation {equation!r} names {len(terms)} operands, but got "
                         f"{len(operands)}.")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, x in zip(terms, operands):
        bad = [c for c in t.replace("...", "") if not c.isalpha()]
        if bad or t.count("...") > 1:
            raise ValueError(f"For 'einsum', the term {t!r} of {equation!r} may hold letters and one '...' only.")
        k = len(t.replace("...", ""))
        if ("..." in t and x.ndim < k) or ("..." not in t and x.ndim != k):
            raise ValueError(f"For 'einsum', the term {t!r} does not fit an operand of shape {tuple(x.shape)}.")
        if "..." in t:
            n_ell = builtins.max(n_ell, x.ndim - k)
    ell = spare[:n_ell]
    labels = []
    for t, x in zip(terms, operands):
        if "..." in t:
            pre, post = t.split("...")
            m = x.ndim - len(pre) - len(post)
            labels.append(list(pre) + ell[n_ell - m:] + list(post))
        else:
            labels.append(list(t))
    counts = {}
    for lab in labels:
        for c in lab:
            counts[c] = counts.get(c, 0) + 1
    if arrow:
        if "..." in rhs:
            pre, post = rhs.split("...")
            out = list(pre) + ell + list(post)
        else:
            out = list(rhs)
        for c in out:
            if c not in counts:
                raise ValueError(f"For 'einsum', the output label {c!r} of {equation!r} is not in any input.")
        if len(set(out)) != len(out):
            raise ValueError(f"For 'einsum', the output of {equation!r} repeats a label.")
    else:
        out = ell + sorted(c for c in counts if counts[c] == 1 and c not in ell)
    return labels, out


def _einsum_diag(x, lab):
    """Repeated labels within one operand: keep their diagonal (x·eye summed over the second axis)."""
    lab = list(lab)
    while True:
        seen = {}
        rep = None
        for i, c in enumerate(lab):
            if c in seen:
                rep = (seen[c], i)
                break
            seen[c] = i
        if rep is None:
            return x, lab
        i, j = rep
        n = x.shape[i]
        shape = [1] * x.ndim
        shape[i], shape[j] = n, n
        eye = Tensor(np.eye(n, dtype=mstype.dtype_to_nptype(x.dtype)).reshape(shape))
        x = _sum(_core.mul(x, eye), [j])
        del lab[j]


def _einsum_sum_out(x, lab, keep):
    drop = [i for i, c in enumerate(lab) if c not in keep]
    if drop:
        x = _sum(x, drop)
        lab = [c for c in lab if c in keep]
    return x, lab


def _broadcast_size(a, b):
    """The broadcast of two sizes of one label (1 broadcasts, so 0 wins over 1; otherwise they are equal). A dynamic
    size (a probe trace's SymInt) is kept as it is, so that no condition on it is recorded: a size 1 there broadcasts
    at run time, and BroadcastTo checks the rest."""
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    if type(a) is not int:
        return a
    if type(b) is not int:
        return b
    return builtins.max(a, b)


def _einsum_pair(a, la, b, lb, keep):
    """Contract two operands, keeping the labels in `keep` (the output's and the remaining operands')."""
    a, la = _einsum_sum_out(a, la, set(lb) | keep)
    b, lb = _einsum_sum_out(b, lb, set(la) | keep)
    size = {}
    for t, lab in ((a, la), (b, lb)):
        for c, s in zip(lab, t.shape):
            size[c] = _broadcast_size(size.get(c, 1), s)
    batch = [c for c in la if c in lb and c in keep]
    con = [c for c in la if c in lb and c not in keep]
    ra = [c for c in la if c not in lb]
    rb = [c for c in lb if c not in la]
    at = _core.transpose(a, [la.index(c) for c in batch + ra + con])
    bt = _core.transpose(b, [lb.index(c) for c in batch + con + rb])
    at = _core.broadcast_to(at, [size[c] for c in batch + ra + con])
    bt = _core.broadcast_to(bt, [size[c] for c in batch + con + rb])
    nb, m, k, n = (int(np.prod([size[c] for c in g], dtype=np.int64)) for g in (batch, ra, con, rb))
    out = _core.matmul(_core.reshape(at, [nb, m, k]), _core.reshape(bt, [nb, k, n]))
    return _core.reshape(out, [size[c] for c in batch + ra + rb]), batch + ra + rb


@defop(mint="einsum")
def einsum(equation, *operands):
    """MindSpore's ops.einsum(equation, *operands): Einstein summation, e.g. 'ij,jk->ik', 'bij,bjk->bik', 'ii->i'
    (diagonal), 'ii' (trace), 'i,j->ij', '...ij,...jk' (broadcast batch dims). Without '->' the output holds the
    '...' dims then the labels that occur once, in alphabetical order. Operands are contracted left to right with
    batched matmuls (labels summed out as soon as no later operand or the output needs them). A list/tuple of
    Tensors as the only operand is accepted. Raises TypeError (non-str equation, non-Tensor operand), ValueError
    (a term that does not fit its operand, an output label not in the inputs, sizes that differ)."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    ops_ = [_tensor_arg(x, "einsum", f"operands[{i}]") for i, x in enumerate(operands)]
    if not ops_:
        raise ValueError("For 'einsum', at least one operand is needed.")
    labels, out = _einsum_parse(equation, ops_)
    sizes = {}
    for x, lab in zip(ops_, labels):
        for c, s in zip(lab, x.shape):
            if c in sizes and s != sizes[c] and 1 not in (s, sizes[c]):
                raise ValueError(f"For 'einsum', label {c!r} of {equation!r} has sizes {sizes[c]} and {s}.")
            sizes[c] = _broadcast_size(sizes[c], s) if c in sizes else s
    items = [_einsum_diag(x, lab) for x, lab in zip(ops_, labels)]
    x, lab = items[0]
    for i in range(1, len(items)):
        keep = set(out).union(*(set(l2) for _, l2 in items[i + 1:]))
        y, ly = items[i]
        x, lab = _einsum_pair(x, lab, y, ly, keep)
    x, lab = _einsum_sum_out(x, lab, set(out))
    x = _core.transpose(x, [lab.index(c) for c in out]) if lab != out else x
    want = [sizes[c] for c in out]
    return x if list(x.shape) == want else _core.broadcast_to(x, want)
