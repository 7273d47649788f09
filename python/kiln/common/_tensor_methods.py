"""Tensor methods added by kiln/common/tensor.py: the in-place `*_` methods of MindSpore 2.10 (PyTorch's
semantics: the result is written into the tensor itself, which is returned) and a few shape/statistics methods
(repeat, swapaxes, swapdims, t, std, var, fill, value, view_as, type_as, expand, ...) and the methods of ops
Kiln has whose Tensor method was missing (cos, sin, eq, gt, divide, multiply, ...: the ops function itself).

In-place rule (kiln/common/_indexing.py's assign): in PyNative the tensor's storage is overwritten (every view of it,
and a Parameter, sees the new values); under a gradient or inside a compiled function the write is functional — the
tensor object is rebound to the new value (reaching its root when it is a view), so autodiff and the trace see it.
The new value keeps the tensor's dtype and shape: a result of a wider kind (a float result for an integer tensor,
any non-Bool result for a Bool one) raises TypeError, as PyTorch ("result type Float can't be cast to Int"); a
broadcast that would change the shape raises ValueError.

Fast path (issue 23: an in-place call within 2x of PyTorch's): every method ends in _write or _commit, which first
try _core._write_same (python/src/bind_views.cpp). In plain PyNative (no grad transform, no trace, nothing symbolic)
a result of the tensor's own dtype whose shape broadcasts to the tensor's is exactly what the general path would
hand to the Assign kernel after its checks, so one C++ call checks that and runs the kernel; anything else (a cast,
an error, a gradient, a trace) takes the general path unchanged. tests/python/test_inplace_fast_path.py.

Methods marked PROVISIONAL stand in for a functional op Kiln does not have yet (ops.std, ops.swapaxes, ...): when an
op is declared with @defop(tensor="<name>"), its method replaces the provisional one (kiln/ops/_opdef.py's
install), so Tensor.<name> is then the same op as the functional form."""
import numbers

import numpy as np

from .._loader import _core
from .._args import axes_arg, int_arg
from . import _indexing
from . import dtype as mstype

__all__ = ["INPLACE_METHODS", "PROVISIONAL_METHODS"]


_OPS = []


def _ops():
    if not _OPS:
        from .. import ops
        _OPS.append(ops)
    return _OPS[0]


def _kind(dtype):
    if dtype == mstype.bool_:
        return 0
    if dtype in mstype.int_type:
        return 1
    return 2


_write_same = _core._write_same  # the fast path: see python/src/bind_views.cpp's write_same


def _commit(self, value, what):
    """_indexing.assign(self, value, what) after the fast path (_core._write_same: a value of self's dtype and
    shape in plain PyNative goes straight to the Assign kernel); returns self."""
    if _write_same(self, value):
        return self
    return _indexing.assign(self, value, what)


def _write(self, value, op):
    """self ← value (a Tensor) in place (module docstring); returns self. Checks that value fits self's dtype kind
    and shape (TypeError, ValueError), then _indexing.assign; a value of self's dtype and shape in plain PyNative
    takes the fast path of _commit."""
    if _write_same(self, value):
        return self
    if not isinstance(value, _core.Tensor):
        value = _core.Tensor._from_numpy(np.asarray(value, order="C")) if not isinstance(value, numbers.Number) \
            else _core.full([], float(value), self.dtype)
    if _kind(value.dtype) > _kind(self.dtype):
        raise TypeError(f"For 'Tensor.{op}', the result type {value.dtype} can not be cast to the tensor's dtype "
                        f"{self.dtype} in place; use the out-of-place form, or astype first.")
    if tuple(value.shape) != tuple(self.shape):
        try:
            ok = np.broadcast_shapes(tuple(value.shape), tuple(self.shape)) == tuple(self.shape)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"For 'Tensor.{op}', the result of shape {list(value.shape)} can not be written into a "
                             f"tensor of shape {list(self.shape)} in place (the broadcast would change its shape).")
    return _indexing.assign(self, value, f"Tensor.{op}")


def _alpha_times(other, alpha, op):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        raise TypeError(f"For 'Tensor.{op}', 'alpha' must be a number, but got {type(alpha).__name__}.")
    if alpha == 1:
        return other
    if isinstance(other, numbers.Number) and not isinstance(other, bool):
        return other * alpha  # a Python number stays weak (does not widen the tensor's dtype)
    return _core.mul(other, alpha)


def add_(self, other, *, alpha=1):
    """self ← self + alpha·other in place (other a Tensor or a number, broadcast to self's shape); returns self."""
    if alpha.__class__ is not int or alpha != 1:
        other = _alpha_times(other, alpha, "add_")
    return _write(self, _core.add(self, other), "add_")


def sub_(self, other, *, alpha=1):
    """self ← self − alpha·other in place; returns self."""
    if alpha.__class__ is not int or alpha != 1:
        other = _alpha_times(other, alpha, "sub_")
    return _write(self, _core.sub(self, other), "sub_")


def mul_(self, other):
    """self ← self · other in place; returns self."""
    return _write(self, _core.mul(self, other), "mul_")


def div_(self, other, *, rounding_mode=None):
    """self ← self / other in place (rounding_mode None, 'floor' or 'trunc', as ops.div); an integer tensor takes
    only a rounded division (true division is a float: TypeError); returns self."""
    q = _core.div(self, other) if rounding_mode is None else _ops().div(self, other, rounding_mode=rounding_mode)
    return _write(self, q, "div_")


def floor_divide_(self, other):
    """self ← floor(self / other) in place (ops.floor_divide); returns self."""
    return _write(self, _core.floor_div(self, other), "floor_divide_")


def remainder_(self, other):
    """self ← self − floor(self / other)·other in place (ops.remainder: the sign of other); returns self."""
    return _write(self, _core.mod(self, other), "remainder_")


_ZEROS = {}  # dtype -> a concrete 0-d zero of it: zero_'s fast path writes it (broadcast), no full-size tensor made


def zero_(self):
    """self ← 0 in place; returns self."""
    zero = _ZEROS.get(self.dtype)
    if zero is None and not _core.tracing():  # (made outside a trace: a concrete tensor, never a graph node)
        zero = _ZEROS[self.dtype] = _core.full([], 0.0, self.dtype)
    if zero is not None and _write_same(self, zero):
        return self
    return _write(self, _core.zeros_like(self), "zero_")


def _fill_value(value, op):
    if isinstance(value, _core.Tensor):
        if value.ndim != 0:
            raise ValueError(f"For 'Tensor.{op}', 'value' must be a number or a 0-d Tensor, but got a Tensor of "
                             f"shape {list(value.shape)}.")
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"For 'Tensor.{op}', 'value' must be a bool, int, float or 0-d Tensor, but got "
                        f"{type(value).__name__}.")
    return value


def _filled(self, value, op, whole=True):
    """value (a number or a 0-d Tensor) in self's dtype: a tensor of self's shape, or (whole=False) a 0-d one that
    assign broadcasts."""
    value = _fill_value(value, op)
    if isinstance(value, _core.Tensor):
        v = value if value.dtype == self.dtype else _core.cast(value, self.dtype)
        if not whole:
            return v
        return _core.broadcast_to(v, list(self.shape)) if self.ndim else _core.tensor_copy(v)
    return _core.full(list(self.shape) if whole else [], float(value), self.dtype)


def fill_(self, value):
    """self ← value everywhere in place (a number, or a 0-d Tensor whose gradient is the sum of self's; converted to
    self's dtype, floats truncated toward zero for an integer tensor); returns self."""
    if value.__class__ is float or value.__class__ is int:  # (the common case, as _filled makes it)
        return _commit(self, _core.full([], float(value), self.dtype), "Tensor.fill_")
    return _commit(self, _filled(self, value, "fill_", whole=False), "Tensor.fill_")


def fill(self, value):
    """A new tensor of self's shape and dtype filled with `value` (a number or a 0-d Tensor; floats truncated
    toward zero for an integer dtype, as MindSpore's Tensor.fill)."""
    out = _filled(self, value, "fill")
    return _core.tensor_copy(out) if out is self else out


def copy_(self, src, non_blocking=False):
    """self ← src in place (src a Tensor broadcast to self's shape and cast to self's dtype, any dtype, as
    PyTorch's copy_); returns self. non_blocking has no effect (Kiln's CPU copies are synchronous)."""
    if not isinstance(src, _core.Tensor):
        raise TypeError(f"For 'Tensor.copy_', 'src' must be a Tensor, but got {type(src).__name__}.")
    return _commit(self, src, "Tensor.copy_")


def clamp_(self, min=None, max=None):
    """self ← min(max(self, min), max) in place (ops.clamp; one bound may be None, not both: ValueError); returns
    self."""
    return _write(self, _ops().clamp(self, min, max), "clamp_")


def _float_self(self, op):
    if not mstype.is_float(self.dtype):
        raise TypeError(f"For 'Tensor.{op}', the tensor must have a float dtype, but got {self.dtype}.")


def uniform_(self, from_=0, to=1, *, generator=None):
    """self ← samples of U[from_, to) in place (float tensors; the global seed of kiln.set_seed: Kiln has no
    Generator objects, so generator must be None); returns self. ValueError if from_ > to."""
    _float_self(self, "uniform_")
    if generator is not None:
        raise TypeError("For 'Tensor.uniform_', Kiln takes no 'generator' object (the random state is kiln.set_seed's); "
                        f"got {type(generator).__name__}.")
    for name, v in (("from_", from_), ("to", to)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'Tensor.uniform_', '{name}' must be a number, but got {type(v).__name__}.")
    if from_ > to:
        raise ValueError(f"For 'Tensor.uniform_', 'from_' must be <= 'to', but got from_={from_}, to={to}.")
    u = _ops().rand(*self.shape, dtype=self.dtype) if self.ndim else _ops().rand((), dtype=self.dtype)
    return _commit(self, _core.add(_core.mul(u, float(to - from_)), float(from_)), "Tensor.uniform_")


def normal_(self, mean=0, std=1, *, generator=None):
    """self ← samples of N(mean, std²) in place (float tensors; generator must be None, as uniform_); returns self.
    ValueError for std < 0."""
    _float_self(self, "normal_")
    if generator is not None:
        raise TypeError("For 'Tensor.normal_', Kiln takes no 'generator' object (the random state is kiln.set_seed's); "
                        f"got {type(generator).__name__}.")
    for name, v in (("mean", mean), ("std", std)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For 'Tensor.normal_', '{name}' must be a number, but got {type(v).__name__}.")
    if std < 0:
        raise ValueError(f"For 'Tensor.normal_', 'std' must be >= 0, but got {std}.")
    z = _ops().randn(*self.shape, dtype=self.dtype) if self.ndim else _ops().randn((), dtype=self.dtype)
    return _commit(self, _core.add(_core.mul(z, float(std)), float(mean)), "Tensor.normal_")


def masked_fill_(self, mask, value):
    """self ← value where the Bool `mask` (broadcast to self's shape) is True, in place (ops.masked_fill); returns
    self."""
    return _write(self, _ops().masked_fill(self, mask, value), "masked_fill_")


def _unary_(name, fn, doc):
    def method(self):
        return _write(self, fn(self), name)
    method.__name__ = name
    method.__doc__ = doc
    return method


INPLACE_METHODS = {
    "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "floor_divide_": floor_divide_,
    "remainder_": remainder_, "zero_": zero_, "fill_": fill_, "copy_": copy_, "clamp_": clamp_,
    "uniform_": uniform_, "normal_": normal_, "masked_fill_": masked_fill_,
    "exp_": _unary_("exp_", _core.exp, "self ← eˢᵉˡᶠ in place (float tensors: an integer one raises TypeError); "
                                       "returns self."),
    "log_": _unary_("log_", _core.log, "self ← log(self) in place (float tensors); returns self."),
    "sigmoid_": _unary_("sigmoid_", _core.sigmoid, "self ← 1/(1 + e⁻ˢᵉˡᶠ) in place (float tensors); returns self."),
    "tanh_": _unary_("tanh_", _core.tanh, "self ← tanh(self) in place (float tensors); returns self."),
    "floor_": _unary_("floor_", lambda x: _ops().floor(x), "self ← floor(self) in place; returns self."),
    "sign_": _unary_("sign_", _core.sign, "self ← sign(self) (−1, 0 or 1) in place; returns self."),
}


# ---------------------------------------------------------------------------------------------- provisional methods

def _swap(self, a, b, op):
    nd = self.ndim
    a, b = int_arg(f"Tensor.{op}", "axis0", a), int_arg(f"Tensor.{op}", "axis1", b)
    for d in (a, b):
        if not -max(nd, 1) <= d < max(nd, 1):
            raise ValueError(f"For 'Tensor.{op}', the axis {d} is out of range for a {nd}-D tensor.")
    if nd == 0:
        return self.view(())
    perm = list(range(nd))
    perm[a % nd], perm[b % nd] = perm[b % nd], perm[a % nd]
    return self.transpose(perm)


def swapaxes(self, axis0, axis1):
    """The tensor with dims axis0 and axis1 exchanged (a view; MindSpore's Tensor.swapaxes)."""
    return _swap(self, axis0, axis1, "swapaxes")


def swapdims(self, dim0, dim1):
    """The same as swapaxes (PyTorch's name)."""
    return _swap(self, dim0, dim1, "swapdims")


def t(self):
    """The transpose of a tensor of at most 2 dims (0-D and 1-D are returned as they are; a view). ValueError for
    more dims."""
    if self.ndim > 2:
        raise ValueError(f"For 'Tensor.t', the tensor must have at most 2 dims, but got {self.ndim}.")
    return self.transpose((1, 0)) if self.ndim == 2 else self.view(self.shape)


def repeat(self, *repeats):
    """PyTorch's repeat (MindSpore 2.10's Tensor.repeat(*repeats)): the tensor tiled repeats[i] times along dim i;
    repeats given as ints or one tuple/list, at least self.ndim of them (extra ones add leading dims). ValueError
    for fewer repeats than dims or a negative one (ops.tile computes it)."""
    if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)):
        repeats = tuple(repeats[0])
    if not repeats:
        raise TypeError("For 'Tensor.repeat', 'repeats' is required (ints, or one tuple/list of ints).")
    if len(repeats) < self.ndim:
        raise ValueError(f"For 'Tensor.repeat', the number of repeats ({len(repeats)}) can not be smaller than the "
                         f"number of dims of the tensor ({self.ndim}).")
    return _ops().tile(self, tuple(repeats))


def _moments(self, axis, ddof, keepdims, op):
    """(x − mean) squared, summed over axis / (n − ddof): the variance; n − ddof ≤ 0 gives inf/NaN as NumPy. An int
    ddof below n is one VarMean op; the rest (float ddof, n − ddof ≤ 0, repeated axes: their errors) the composition."""
    x = mstype.as_float_input(self, f"Tensor.{op}")
    axes = axes_arg(f"Tensor.{op}", "axis", axis)
    if isinstance(ddof, bool) or not isinstance(ddof, numbers.Real):
        raise TypeError(f"For 'Tensor.{op}', 'ddof'/'correction' must be a number, but got {type(ddof).__name__}.")
    if axes is None:
        n = self.size
    else:
        ax = (axes,) if isinstance(axes, int) else tuple(axes)
        n = 1
        for a in ax:
            if not -max(self.ndim, 1) <= a < max(self.ndim, 1):
                raise ValueError(f"For 'Tensor.{op}', the axis {a} is out of range for a {self.ndim}-D tensor.")
            n *= self.shape[a] if self.ndim else 1
    if type(ddof) is int and 0 <= ddof < n and mstype.is_float(x.dtype):  # one VarMean (two passes in double)
        ax = None if axes is None else [axes] if isinstance(axes, int) else list(axes)
        if ax is None or len({a % max(self.ndim, 1) for a in ax}) == len(ax):
            return _core.var_mean(x, ax, ddof, bool(keepdims), False)[0]
    mean = _core.mean(x, axes, True)
    ss = _core.sum(_core.square(_core.sub(x, mean)), axes, bool(keepdims))
    return _core.div(ss, float(n - ddof))


def _stat_args(axis, ddof, keepdims, dim, correction, keepdim, op):
    """MindSpore 2.10's two overloads: (axis=None, ddof=0, keepdims=False) and (dim=None, *, correction, keepdim=False)
    — the second when any of dim/correction/keepdim is given. MindSpore 2.10 computes x.std(dim=1) with correction 0
    (measured on its CPU build: [[1, 5, 3], [4, 2, 6]] gives 1.633, not PyTorch's 2.0), so correction defaults to 0."""
    if dim is not None or correction is not None or keepdim is not None:
        if axis is not None or ddof != 0 or keepdims is not False:
            raise TypeError(f"Tensor.{op}() takes either (axis, ddof, keepdims) or (dim, correction, keepdim), not a "
                            f"mix of them")
        return dim, 0 if correction is None else correction, bool(keepdim)
    return axis, ddof, keepdims


def var(self, axis=None, ddof=0, keepdims=False, *, dim=None, correction=None, keepdim=None):
    """The variance over `axis` (None: all): Σ(x − mean)² / (n − ddof) (ddof 0 by default, MindSpore's
    Tensor.var(axis, ddof, keepdims)); with dim=/correction=/keepdim= the second form, correction 0 by default
    (MindSpore 2.10's value).
    Integer tensors compute in Float32. n − ddof ≤ 0 gives inf or NaN (NumPy's)."""
    a, d, k = _stat_args(axis, ddof, keepdims, dim, correction, keepdim, "var")
    return _moments(self, a, d, k, "var")


def std(self, axis=None, ddof=0, keepdims=False, *, dim=None, correction=None, keepdim=None):
    """The standard deviation √var (see Tensor.var for the arguments; MindSpore's Tensor.std(axis=None, ddof=0,
    keepdims=False), or std(dim=..., correction=0, keepdim=False) — MindSpore 2.10's default correction)."""
    a, d, k = _stat_args(axis, ddof, keepdims, dim, correction, keepdim, "std")
    return _core.sqrt(_moments(self, a, d, k, "std"))


def value(self):
    """The tensor itself (MindSpore's Tensor.value(): its value; for a Parameter, the Parameter)."""
    return self


def _same_op(method, op, doc):
    """Tensor.<method>(*args) = ops.<op>(self, *args): the ops function itself, with self first."""
    def fn(self, *args, **kwargs):
        return getattr(_ops(), op)(self, *args, **kwargs)
    fn.__name__ = method
    fn.__doc__ = f"ops.{op}(self, ...): {doc}"
    return fn


def subtract(self, other, *, alpha=1):
    """self − alpha·other (MindSpore's Tensor.subtract / ops.subtract with alpha); broadcasting."""
    return _core.sub(self, _alpha_times(other, alpha, "subtract"))


def where(self, condition, y):
    """ops.where(condition, self, y): self where the Bool condition is True, else y (MindSpore's Tensor.where)."""
    return _ops().where(condition, self, y)


def gather(self, input_indices, axis, batch_dims=0):
    """ops.gather(self, input_indices, axis, batch_dims): slices of self along `axis` picked by integer indices."""
    return _ops().gather(self, input_indices, axis, batch_dims)


def view_as(self, other):
    """self viewed with other's shape (a view; ValueError when the sizes differ)."""
    if not isinstance(other, _core.Tensor):
        raise TypeError(f"For 'Tensor.view_as', 'other' must be a Tensor, but got {type(other).__name__}.")
    return self.view(other.shape)


def reshape_as(self, other):
    """self reshaped to other's shape (as view_as)."""
    if not isinstance(other, _core.Tensor):
        raise TypeError(f"For 'Tensor.reshape_as', 'other' must be a Tensor, but got {type(other).__name__}.")
    return self.reshape(other.shape)


def type_as(self, other):
    """self cast to other's dtype."""
    if not isinstance(other, _core.Tensor):
        raise TypeError(f"For 'Tensor.type_as', 'other' must be a Tensor, but got {type(other).__name__}.")
    return _core.cast(self, other.dtype)


def expand(self, *size):
    """self broadcast to `size` (ints or one tuple; -1 keeps a dim), PyTorch's expand (a view)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return _ops().broadcast_to(self, tuple(size))


def positive(self):
    """The tensor itself (+self); TypeError for a Bool tensor, as MindSpore."""
    if self.dtype == mstype.bool_:
        raise TypeError("For 'Tensor.positive', the tensor must not be Bool.")
    return self


def amax(self, axis=None, keepdims=False):
    """ops.amax(self, axis, keepdims): the maximum over `axis` (None: all)."""
    return _ops().amax(self, axis, keepdims)


def amin(self, axis=None, keepdims=False):
    """ops.amin(self, axis, keepdims): the minimum over `axis` (None: all)."""
    return _ops().amin(self, axis, keepdims)


def scatter_add(self, *args, **kwargs):
    """MindSpore 2.10's two overloads: Tensor.scatter_add(indices, updates) is ops.tensor_scatter_add(self, indices,
    updates) (a new Tensor; indices of shape (..., k)); Tensor.scatter_add(dim, index, src) -- an int first, or
    dim= -- is PyTorch's, ops.tensor_scatter_elements(self, index, src, dim, reduction="add") (a new Tensor).
    TypeError for other argument lists."""
    if "dim" in kwargs or (args and isinstance(args[0], numbers.Integral) and not isinstance(args[0], bool)):
        names = ("dim", "index", "src")
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in vals:
                raise TypeError(f"For 'Tensor.scatter_add', got an unexpected or repeated argument '{k}'.")
            vals[k] = v
        if len(args) > 3 or set(vals) != set(names):
            raise TypeError("For 'Tensor.scatter_add', use scatter_add(indices, updates) or scatter_add(dim, index, "
                            f"src), but got {len(args)} positional arguments and keywords {sorted(kwargs)}.")
        return _ops().tensor_scatter_elements(self, vals["index"], vals["src"], int_arg("Tensor.scatter_add", "dim",
                                                                                         vals["dim"]),
                                              reduction="add")
    return _ops().tensor_scatter_add(self, *args, **kwargs)


def scatter_sub(self, indices, updates):
    """ops.tensor_scatter_sub(self, indices, updates): a copy of self with `updates` subtracted at the index tuples
    `indices` (MindSpore 2.10's Tensor.scatter_sub)."""
    return _ops().tensor_scatter_sub(self, indices, updates)


_UNARY = {"absolute": "abs", "arccosh": "arccosh", "arcsinh": "arcsinh", "arctanh": "arctanh", "ceil": "ceil",
          "cos": "cos", "erf": "erf", "floor": "floor", "log1p": "log1p", "logical_not": "logical_not",
          "negative": "neg", "reciprocal": "reciprocal", "sin": "sin"}
_BINARY = {"divide": "div", "true_divide": "div", "multiply": "mul", "eq": "equal", "ne": "not_equal",
           "not_equal": "not_equal", "ge": "greater_equal", "gt": "greater", "le": "less_equal", "lt": "less",
           "greater": "greater", "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
           "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
           "floor_divide": "floor_divide", "remainder": "remainder"}

PROVISIONAL_METHODS = {"swapaxes": swapaxes, "swapdims": swapdims, "t": t, "repeat": repeat, "var": var,
                       "std": std, "fill": fill, "value": value, "subtract": subtract, "where": where,
                       "gather": gather, "view_as": view_as, "reshape_as": reshape_as, "type_as": type_as,
                       "expand": expand, "positive": positive, "amax": amax, "amin": amin,
                       "scatter_add": scatter_add, "scatter_sub": scatter_sub}
PROVISIONAL_METHODS.update({m: _same_op(m, op, "elementwise, as the ops function") for m, op in _UNARY.items()})
PROVISIONAL_METHODS.update({m: _same_op(m, op, "elementwise with broadcasting, as the ops function")
                            for m, op in _BINARY.items()})
