"""Scatter ops: MindSpore 2.10's ops.tensor_scatter_update / _add / _sub (functional, a new Tensor), scatter_nd_add /
_sub / _update and scatter_add / scatter_update (in place into input_x, a Parameter or a Tensor), and their Primitive
classes.

Built on Kiln's TensorScatterUpdate and TensorScatterReduce kernels (one op each; additions accumulate duplicate
indices in row order). Note [scatter writes]: every in-place scatter (these, scatter_mul/div/max/min,
scatter_nd_mul/div/max/min, index_add) writes into input_x and returns it, whether input_x is a Parameter or a plain
Tensor, as MindSpore 2.10 does in PyNative (checked: ops.scatter_mul(Tensor) changes the Tensor). A Parameter is
written with ops.assign, a Tensor with the in-place rule of Tensor methods (kiln/common/_tensor_methods.py): storage
overwritten in PyNative, functional (the object rebound) under a gradient or in compiled code, where the written
value reaches the caller's Tensor after the run (docs/decisions/writes-into-graph-inputs.md)."""
from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from .function import _tensor_arg, assign
from .index_func import nd_update
from .primitives import Primitive

__all__ = ["tensor_scatter_update", "tensor_scatter_add", "tensor_scatter_sub", "scatter_nd_add", "scatter_nd_sub",
           "scatter_nd_update", "scatter_add", "scatter_update",
           "TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "ScatterNdAdd", "ScatterNdSub",
           "ScatterAdd", "ScatterUpdate"]


def _args(input_x, indices, updates, op):
    x = _tensor_arg(input_x, op, "input_x")
    idx = _tensor_arg(indices, op, "indices")
    upd = _tensor_arg(updates, op, "updates")
    if idx.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the 'indices' must be int32 or int64, but got {idx.dtype}.")
    if upd.dtype != x.dtype:
        raise TypeError(f"For '{op}', 'updates' must have the dtype of 'input_x' ({x.dtype}), but got {upd.dtype}.")
    return x, idx, upd


def tensor_scatter_update(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_update(input_x, indices, updates): a copy of input_x whose slices at `indices`
    (shape (..., k), k <= rank) are replaced by `updates` (shape indices.shape[:-1] + input_x.shape[k:]); with a
    repeated index the last update wins. IndexError for an index out of range."""
    x, idx, upd = _args(input_x, indices, updates, "tensor_scatter_update")
    return _core.tensor_scatter_update(x, idx, upd)


def _accumulate(input_x, indices, updates, op, sign):
    x, idx, upd = _args(input_x, indices, updates, op)
    # one TensorScatterReduce op (src/ops/scatter.cpp): it checks the shapes and every index (ValueError naming op)
    return _core.tensor_scatter_reduce(x, idx, upd, "add" if sign > 0 else "sub", op)


def tensor_scatter_add(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_add: a copy of input_x with `updates` added at `indices` (duplicates
    accumulate). Shapes as tensor_scatter_update. ValueError for an index out of range (checked in both modes)."""
    return _accumulate(input_x, indices, updates, "tensor_scatter_add", 1)


def tensor_scatter_sub(input_x, indices, updates):
    """MindSpore's ops.tensor_scatter_sub: a copy of input_x with `updates` subtracted at `indices`."""
    return _accumulate(input_x, indices, updates, "tensor_scatter_sub", -1)


def write_into(input_x, value, op):
    """input_x <- value in place (Note [scatter writes]): ops.assign for a Parameter, the Tensor-method rule for a
    Tensor; returns input_x."""
    from ..common.parameter import Parameter
    if isinstance(input_x, Parameter):
        return assign(input_x, value)
    from ..common._tensor_methods import _commit
    return _commit(input_x, value, op)


def _in_place(input_x, indices, updates, op, sign):
    return write_into(input_x, _accumulate(input_x, indices, updates, op, sign), op)


def scatter_nd_add(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_add: input_x (a Parameter or a Tensor) += updates at `indices` (as
    tensor_scatter_add), in place (Note [scatter writes]); returns input_x."""
    return _in_place(input_x, indices, updates, "scatter_nd_add", 1)


def scatter_nd_sub(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_sub: input_x (a Parameter or a Tensor) −= updates at `indices`, in place (Note
    [scatter writes]); returns input_x."""
    return _in_place(input_x, indices, updates, "scatter_nd_sub", -1)


def scatter_nd_update(input_x, indices, updates):
    """MindSpore's ops.scatter_nd_update: input_x (a Parameter or a Tensor) gets `updates` at `indices` in place
    (Note [scatter writes]); returns it."""
    return nd_update(input_x, indices, updates, "scatter_nd_update")


def _rows(indices, op):
    idx = _tensor_arg(indices, op, "indices")
    return _core.expand_dims(idx, idx.ndim)  # row indices → (..., 1) coordinates


def scatter_add(input_x, indices, updates):
    """MindSpore's ops.scatter_add(input_x, indices, updates): rows input_x[indices[i]] += updates[i] of input_x (a
    Parameter or a Tensor) in place (indices of any shape into axis 0; updates of shape indices.shape +
    input_x.shape[1:]; duplicates accumulate; Note [scatter writes]). Returns input_x."""
    x, idx, upd = _args(input_x, indices, updates, "scatter_add")
    return write_into(input_x, _core.tensor_scatter_reduce(x, idx, upd, "add", "scatter_add", True), "scatter_add")


def scatter_update(input_x, indices, updates):
    """MindSpore's ops.scatter_update(input_x, indices, updates): rows input_x[indices[i]] = updates[i] of input_x
    (a Parameter or a Tensor) in place (Note [scatter writes]). Returns input_x."""
    _tensor_arg(input_x, "scatter_update", "input_x")
    return nd_update(input_x, _rows(indices, "scatter_update"), updates, "scatter_update")


class TensorScatterUpdate(Primitive):
    """TensorScatterUpdate()(input_x, indices, updates): see ops.tensor_scatter_update."""

    def __call__(self, input_x, indices, updates):
        return tensor_scatter_update(input_x, indices, updates)


class TensorScatterAdd(Primitive):
    """TensorScatterAdd()(input_x, indices, updates): see ops.tensor_scatter_add."""

    def __call__(self, input_x, indices, updates):
        return tensor_scatter_add(input_x, indices, updates)


class TensorScatterSub(Primitive):
    """TensorScatterSub()(input_x, indices, updates): see ops.tensor_scatter_sub."""

    def __call__(self, input_x, indices, updates):
        return tensor_scatter_sub(input_x, indices, updates)


class _Locking(Primitive):
    def __init__(self, use_locking=False):
        super().__init__(type(self).__name__)
        if not isinstance(use_locking, bool):
            raise TypeError(f"For '{self.name}', 'use_locking' must be bool, but got {_got(use_locking)}.")
        self.use_locking = use_locking


class ScatterNdAdd(_Locking):
    """ScatterNdAdd(use_locking=False)(input_x, indices, updates): see ops.scatter_nd_add."""

    def __call__(self, input_x, indices, updates):
        return scatter_nd_add(input_x, indices, updates)


class ScatterNdSub(_Locking):
    """ScatterNdSub(use_locking=False)(input_x, indices, updates): see ops.scatter_nd_sub."""

    def __call__(self, input_x, indices, updates):
        return scatter_nd_sub(input_x, indices, updates)


class ScatterAdd(_Locking):
    """ScatterAdd(use_locking=False)(input_x, indices, updates): see ops.scatter_add."""

    def __call__(self, input_x, indices, updates):
        return scatter_add(input_x, indices, updates)


class ScatterUpdate(_Locking):
    """ScatterUpdate(use_locking=True)(input_x, indices, updates): see ops.scatter_update."""

    def __init__(self, use_locking=True):
        super().__init__(use_locking)

    def __call__(self, input_x, indices, updates):
        return scatter_update(input_x, indices, updates)
