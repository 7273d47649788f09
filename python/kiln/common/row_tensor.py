"""`mindspore.RowTensor` (MindSpore 2.10): a set of slices of a dense tensor along its first dimension, the form of a
sparse gradient (an Embedding's rows). `dense[indices[i], ...] = values[i, ...]`; the other rows are zero.

A container, as MindSpore's: it holds the three parts and gives them back (`indices`, `values`, `dense_shape`).
Kiln adds `to_dense()` (the dense tensor, through a scatter-add, so repeated indices add up as gradients do) and
checks the parts at construction (MindSpore accepts inconsistent parts and fails later, sometimes with a crash)."""
from .. import _engine
from ..ops import _kernels
from .._args import _got, _is_int
from . import dtype as mstype

__all__ = ["RowTensor"]


class RowTensor:
    """RowTensor(indices=None, values=None, shape=None, row_tensor=None).

    Args:
        indices (Tensor): 1-D integer Tensor (d0,): the rows of the dense tensor held.
        values (Tensor): (d0, d1, ..., dn), any dtype: the rows' values.
        shape (tuple[int]): the dense shape (l0, d1, ..., dn).
        row_tensor (RowTensor): copy its parts instead (the other arguments must then be None).
    Raises:
        TypeError: indices/values not Tensors, indices not integer, shape not a tuple of ints, row_tensor not a
            RowTensor.
        ValueError: indices not 1-D, values' first dim ≠ len(indices), shape's rank/trailing dims ≠ values', or a
            negative dim."""

    def __init__(self, indices=None, values=None, shape=None, row_tensor=None):
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensor):
                raise TypeError(f"For 'RowTensor', 'row_tensor' must be a RowTensor, but got {_got(row_tensor)}.")
            if indices is not None or values is not None or shape is not None:
                raise ValueError("For 'RowTensor', give either 'row_tensor' or 'indices', 'values' and 'shape'.")
            indices, values, shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        if not isinstance(indices, _engine.Tensor) or not isinstance(values, _engine.Tensor):
            raise TypeError(f"For 'RowTensor', 'indices' and 'values' must be Tensors, but got {_got(indices)} and "
                            f"{_got(values)}.")
        if indices.dtype not in mstype.int_type:
            raise TypeError(f"For 'RowTensor', 'indices' must be an integer Tensor, but got {indices.dtype}.")
        if indices.ndim != 1:
            raise ValueError(f"For 'RowTensor', 'indices' must be 1-D, but got shape {tuple(indices.shape)}.")
        if not isinstance(shape, tuple) or not all(_is_int(d) for d in shape):
            raise TypeError(f"For 'RowTensor', 'shape' must be a tuple of ints, but got {shape!r}.")
        if any(d < 0 for d in shape):
            raise ValueError(f"For 'RowTensor', 'shape' must have non-negative dims, but got {shape!r}.")
        if values.ndim == 0 or values.shape[0] != indices.shape[0]:
            raise ValueError(f"For 'RowTensor', 'values' must have one row per index ({indices.shape[0]}), but got "
                             f"shape {tuple(values.shape)}.")
        if len(shape) != values.ndim or tuple(shape[1:]) != tuple(values.shape[1:]):
            raise ValueError(f"For 'RowTensor', the dense 'shape' {shape!r} must be (rows,) + values.shape[1:] = "
                             f"(rows,) + {tuple(values.shape[1:])}.")
        self._indices, self._values, self._shape = indices, values, tuple(int(d) for d in shape)

    @property
    def indices(self):
        """The row indices (1-D integer Tensor)."""
        return self._indices

    @property
    def values(self):
        """The rows' values (Tensor (d0, d1, ..., dn))."""
        return self._values

    @property
    def dense_shape(self):
        """The dense shape (tuple of ints)."""
        return self._shape

    def to_dense(self):
        """The dense Tensor of `dense_shape` (values' dtype): zeros, plus values[i] added at row indices[i] (repeated
        indices add up). A Kiln addition (MindSpore's RowTensor has no to_dense). Raises IndexError (from the
        scatter) for an index outside [0, rows)."""
        from .. import ops
        dense = _kernels.full(list(self._shape), 0, self._values.dtype)
        idx = _kernels.reshape(_kernels.cast(self._indices, mstype.int64), [-1, 1])
        return ops.tensor_scatter_add(dense, idx, self._values)

    def __repr__(self):
        return f"RowTensor(indices={self._indices!r}, values={self._values!r}, dense_shape={self._shape})"
