"""Scatter ops: MindSpore 2.10's ops.tensor_scatter_update / _add / _sub (functional, a new Tensor), scatter_nd_add /
_sub / _update and scatter_add / scatter_update (in place on a Parameter), and their Primitive classes.

Built on Kiln's TensorScatterUpdate and TensorScatterReduce kernels (one op each; additions accumulate duplicate
indices in row order). The in-place forms write with ops.assign (functional under a
gradient or in compiled code, as MindSpore's Parameter updates)."""
from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from .function import _tensor_arg, assign
from .index_func import ScatterNdUpdate
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


def _param(x, op):
    from ..common.parameter import Parameter
    if not isinstance(x, Parameter):
        raise TypeError(f"For '{op}', 'input_x' must be a Parameter, but got {_got(x)}.")
    return x


def _in_place(input_x, indices, updates, op, sign):
    return assign(_param(input_x, op), _accumulate(input_x, indices, updates, op, sign))


def scatter_nd_add(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_add: input_x (a Parameter) += updates at `indices` (as tensor_scatter_add), in
    place; returns input_x."""
    return _in_place(input_x, indices, updates, "scatter_nd_add", 1)


def scatter_nd_sub(input_x, indices, updates, use_locking=False):
    """MindSpore's ops.scatter_nd_sub: input_x (a Parameter) −= updates at `indices`, in place; returns input_x."""
    return _in_place(input_x, indices, updates, "scatter_nd_sub", -1)


def scatter_nd_update(input_x, indices, updates):
    """MindSpore's ops.scatter_nd_update: input_x (a Parameter) gets `updates` at `indices` in place; returns it."""
    return ScatterNdUpdate()(input_x, indices, updates)


def _rows(indices, op):
    idx = _tensor_arg(indices, op, "indices")
    return _core.expand_dims(idx, idx.ndim)  # row indices → (..., 1) coordinates


def scatter_add(input_x, indices, updates):
    """MindSpore's ops.scatter_add(input_x, indices, updates): rows input_x[indices[i]] += updates[i] of the
    Parameter input_x in place (indices of any shape into axis 0; updates of shape indices.shape +
    input_x.shape[1:]; duplicates accumulate). Returns input_x."""
    x, idx, upd = _args(_param(input_x, "scatter_add"), indices, updates, "scatter_add")
    return assign(input_x, _core.tensor_scatter_reduce(x, idx, upd, "add", "scatter_add", True))


def scatter_update(input_x, indices, updates):
    """MindSpore's ops.scatter_update(input_x, indices, updates): rows input_x[indices[i]] = updates[i] of the
    Parameter input_x in place. Returns input_x."""
    _param(input_x, "scatter_update")
    return scatter_nd_update(input_x, _rows(indices, "scatter_update"), updates)


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
