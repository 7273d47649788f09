"""MindSpore's fused sparse optimizer primitives (issue 24): FusedSparseAdam, FusedSparseLazyAdam, FusedSparseFtrl and
FusedSparseProximalAdagrad. Each updates its Parameters in place from the rows `grad` of a gradient given at the row
`indices` of `var` (duplicate indices are summed first, as MindSpore 2.10's CPU kernels do), and returns the updated
Parameters.

They are composed of Kiln's UnsortedSegmentSum (the summed sparse gradient, scattered densely), elementwise ops,
Select (rows that got no gradient) and Assign, so they run with static shapes in PyNative and in compiled functions.
The formulas are MindSpore 2.10's CPU kernels' (checked against its values in tests/python/test_primitives_issue24.py):

  FusedSparseAdam (every row; g = 0 for rows without a gradient):
      m ← β1·m + (1 − β1)·g,  v ← β2·v + (1 − β2)·g²,  lr_t = lr·√(1 − β2ᵖ)/(1 − β1ᵖ)
      var ← var − lr_t·m/(√v + ε);   use_nesterov: var ← var − lr_t·m_t/(√v + ε), with m_t = β1·m + (1 − β1)·g on
      the rows given and 0 elsewhere (MindSpore's kernel: those rows' var stays, their m and v still decay)
  FusedSparseLazyAdam: the same on the rows given only (other rows of var, m, v unchanged); nesterov uses
      β1·m + (1 − β1)·g on those rows.
  FusedSparseFtrl (TensorFlow's SparseApplyFtrl, rows given): a ← accum + g²,
      linear ← linear + g − (a^(−p) − accum^(−p))/lr·var,  q = a^(−p)/lr + 2·l2,
      var ← (sign(linear)·l1 − linear)/q where |linear| > l1 else 0,  accum ← a   (p = lr_power)
  FusedSparseProximalAdagrad (rows given): accum ← accum + g², η = lr/√accum, u = var − η·g,
      var ← sign(u)·max(|u| − η·l1, 0)/(1 + η·l2)
"""
from .._loader import _core
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ["FusedSparseAdam", "FusedSparseLazyAdam", "FusedSparseFtrl", "FusedSparseProximalAdagrad"]


def _check_bool(op, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"For '{op}', the type of '{name}' should be 'bool', but got type '{type(value).__name__}'.")
    return value


def _check_float(op, name, value):
    if not isinstance(value, float):
        raise TypeError(f"For '{op}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    return value


def _param(op, name, value, like=None):
    if not isinstance(value, Parameter):
        raise TypeError(f"For '{op}', '{name}' must be a Parameter (it is updated in place), but got "
                        f"{type(value).__name__}.")
    if value.dtype != mstype.float32:
        raise TypeError(f"For primitive[{op}], the input argument[{name}] must be a type of {{Tensor[Float32]}}, "
                        f"but got Tensor[{value.dtype}].")
    if like is not None and tuple(value.shape) != tuple(like.shape):
        raise ValueError(f"For '{op}', '{name}' must have the shape of 'var' {tuple(like.shape)}, but got "
                         f"{tuple(value.shape)}.")
    return value


def _scalar(op, name, value):
    """A float32 0-d Tensor from a number or a Tensor with one element."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"For '{op}', '{name}' must hold one value, but got shape {tuple(value.shape)}.")
        t = _core.reshape(value, [])
        return t if t.dtype == mstype.float32 else _core.cast(t, mstype.float32)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _core.full([], float(value), mstype.float32)
    raise TypeError(f"For '{op}', '{name}' must be a Tensor or a number, but got {type(value).__name__}.")


def _sparse(op, var, grad, indices):
    """(the summed gradient scattered into var's shape, the Bool rows that got a gradient, broadcastable to var)."""
    if not isinstance(grad, Tensor) or grad.dtype != mstype.float32:
        raise TypeError(f"For primitive[{op}], 'grad' must be a Float32 Tensor, but got "
                        f"{getattr(grad, 'dtype', type(grad).__name__)}.")
    if not isinstance(indices, Tensor) or indices.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For primitive[{op}], 'indices' must be an Int32 Tensor, but got "
                        f"{getattr(indices, 'dtype', type(indices).__name__)}.")
    if indices.ndim != 1:
        raise ValueError(f"For '{op}', 'indices' must be 1-D, but got shape {tuple(indices.shape)}.")
    want = (indices.shape[0],) + tuple(var.shape[1:])
    if tuple(grad.shape) != want:
        raise ValueError(f"For '{op}', 'grad' must have shape (len(indices),) + var.shape[1:] = {want}, but got "
                         f"{tuple(grad.shape)}.")
    if not _core.tracing():
        import numpy as np
        iv = np.asarray(indices.asnumpy())
        if iv.size and (iv.min() < 0 or iv.max() >= var.shape[0]):
            raise ValueError(f"For '{op}', 'indices' must be in [0, {var.shape[0]}), but got {iv.tolist()}.")
    rows = var.shape[0]
    g = _core.unsorted_segment_sum(grad, indices, rows)
    count = _core.unsorted_segment_sum(_core.full([indices.shape[0]], 1.0, mstype.float32), indices, rows)
    hit = _core.reshape(_core.greater(count, 0.0), [rows] + [1] * (var.ndim - 1))
    return g, _core.broadcast_to(hit, list(var.shape))


class _SparseAdamBase(Primitive):
    _lazy = False

    def __init__(self, use_locking=False, use_nesterov=False):
        super().__init__(type(self).__name__)
        self.use_locking = _check_bool(self.name, "use_locking", use_locking)
        self.use_nesterov = _check_bool(self.name, "use_nesterov", use_nesterov)

    def __call__(self, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, indices):
        op = self.name
        var = _param(op, "var", var)
        m, v = _param(op, "m", m, var), _param(op, "v", v, var)
        b1p, b2p, lr, b1, b2, eps = (_scalar(op, n, x) for n, x in (
            ("beta1_power", beta1_power), ("beta2_power", beta2_power), ("lr", lr), ("beta1", beta1),
            ("beta2", beta2), ("epsilon", epsilon)))
        g, hit = _sparse(op, var, grad, indices)
        one = _core.full([], 1.0, mstype.float32)
        lr_t = _core.div(_core.mul(lr, _core.sqrt(_core.sub(one, b2p))), _core.sub(one, b1p))
        m1 = _core.add(_core.mul(m, b1), _core.mul(g, _core.sub(one, b1)))
        v1 = _core.add(_core.mul(v, b2), _core.mul(_core.square(g), _core.sub(one, b2)))
        num = _core.add(_core.mul(m1, b1), _core.mul(g, _core.sub(one, b1))) if self.use_nesterov else m1
        if self.use_nesterov and not self._lazy:
            num = _core.select(hit, num, _core.zeros_like(num))
        var1 = _core.sub(var, _core.div(_core.mul(lr_t, num), _core.add(_core.sqrt(v1), eps)))
        if self._lazy:
            m1, v1, var1 = (_core.select(hit, new, old) for new, old in ((m1, m), (v1, v), (var1, var)))
        _core.assign(m, m1)
        _core.assign(v, v1)
        _core.assign(var, var1)
        return var, m, v


class FusedSparseAdam(_SparseAdamBase):
    """MindSpore's FusedSparseAdam(use_locking=False, use_nesterov=False)(var, m, v, beta1_power, beta2_power, lr,
    beta1, beta2, epsilon, grad, indices): Adam with a sparse gradient (rows `indices` of var get `grad`, summed over
    duplicates; every row's m and v decay), updating the float32 Parameters var, m, v in place; returns (var, m, v).
    Formula: the module docstring. Raises TypeError (flags not bool, var/m/v not float32 Parameters, grad not
    float32, indices not int32/int64), ValueError (shapes that do not match, an index outside var's rows)."""


class FusedSparseLazyAdam(_SparseAdamBase):
    """MindSpore's FusedSparseLazyAdam(use_locking=False, use_nesterov=False)(var, m, v, beta1_power, beta2_power,
    lr, beta1, beta2, epsilon, grad, indices): Adam on the rows `indices` only (other rows of var, m and v stay);
    returns (var, m, v). Formula and errors: FusedSparseAdam's, on those rows."""
    _lazy = True


class FusedSparseFtrl(Primitive):
    """MindSpore's FusedSparseFtrl(lr, l1, l2, lr_power, use_locking=False)(var, accum, linear, grad, indices): FTRL
    on the rows `indices` (TensorFlow's SparseApplyFtrl; duplicates summed), updating the float32 Parameters var,
    accum, linear in place; returns (var, accum, linear). Formula: the module docstring.

    Raises TypeError (lr, l1, l2, lr_power not float, use_locking not bool, and the input errors of
    FusedSparseAdam), ValueError (lr <= 0, l1 < 0, l2 < 0, lr_power > 0, shapes that do not match)."""

    def __init__(self, lr, l1, l2, lr_power, use_locking=False):
        super().__init__("FusedSparseFtrl")
        op = self.name
        for n, x in (("lr", lr), ("l1", l1), ("l2", l2), ("lr_power", lr_power)):
            _check_float(op, n, x)
        if lr <= 0.0:
            raise ValueError(f"For '{op}', the 'lr' must be float and must > 0, but got '{lr}'.")
        for n, x in (("l1", l1), ("l2", l2)):
            if x < 0.0:
                raise ValueError(f"For '{op}', the '{n}' must be float and must >= 0, but got '{x}'.")
        if lr_power > 0.0:
            raise ValueError(f"For '{op}', the 'lr_power' must be float and must <= 0, but got '{lr_power}'.")
        self.lr, self.l1, self.l2, self.lr_power = lr, l1, l2, lr_power
        self.use_locking = _check_bool(op, "use_locking", use_locking)

    def __call__(self, var, accum, linear, grad, indices):
        op = self.name
        var = _param(op, "var", var)
        accum, linear = _param(op, "accum", accum, var), _param(op, "linear", linear, var)
        g, hit = _sparse(op, var, grad, indices)
        a = _core.add(accum, _core.square(g))
        p = -self.lr_power
        pa, pacc = _core.pow(a, p), _core.pow(accum, p)
        lin = _core.sub(_core.add(linear, g), _core.mul(_core.div(_core.sub(pa, pacc), self.lr), var))
        q = _core.add(_core.div(pa, self.lr), 2.0 * self.l2)
        shrunk = _core.div(_core.sub(_core.mul(_core.sign(lin), self.l1), lin), q)
        new_var = _core.select(_core.greater(_core.abs(lin), self.l1), shrunk, _core.zeros_like(shrunk))
        _core.assign(var, _core.select(hit, new_var, var))
        _core.assign(accum, _core.select(hit, a, accum))
        _core.assign(linear, _core.select(hit, lin, linear))
        return var, accum, linear


class FusedSparseProximalAdagrad(Primitive):
    """MindSpore's FusedSparseProximalAdagrad(use_locking=False)(var, accum, lr, l1, l2, grad, indices): proximal
    Adagrad on the rows `indices` (duplicates summed), updating the float32 Parameters var and accum in place;
    returns (var, accum). Formula: the module docstring. Raises TypeError (use_locking not bool, and the input
    errors of FusedSparseAdam), ValueError (shapes that do not match, an index outside var's rows)."""

    def __init__(self, use_locking=False):
        super().__init__("FusedSparseProximalAdagrad")
        self.use_locking = _check_bool(self.name, "use_locking", use_locking)

    def __call__(self, var, accum, lr, l1, l2, grad, indices):
        op = self.name
        var = _param(op, "var", var)
        accum = _param(op, "accum", accum, var)
        lr, l1, l2 = (_scalar(op, n, x) for n, x in (("lr", lr), ("l1", l1), ("l2", l2)))
        g, hit = _sparse(op, var, grad, indices)
        a = _core.add(accum, _core.square(g))
        eta = _core.div(lr, _core.sqrt(a))
        u = _core.sub(var, _core.mul(eta, g))
        mag = _core.maximum(_core.sub(_core.abs(u), _core.mul(eta, l1)), _core.zeros_like(u))
        new_var = _core.div(_core.mul(_core.sign(u), mag), _core.add(_core.mul(eta, l2), 1.0))
        _core.assign(var, _core.select(hit, new_var, var))
        _core.assign(accum, _core.select(hit, a, accum))
        return var, accum
