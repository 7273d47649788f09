"""Table lookup with zero rows for out-of-range ids: the computation of MindSpore 2.10's EmbeddingLookup primitive
(`ops.EmbeddingLookup()(input_params, input_indices, offset)`), behind nn.EmbeddingLookup's default target 'CPU'
(kiln/nn/layer/embedding.py)."""
import numbers

from .._loader import _core
from ..common import dtype as mstype
from .function import _tensor_arg

__all__ = []


def embedding_lookup(input_params, input_indices, offset=0, op="EmbeddingLookup"):
    """Rows of input_params (vocab, *) at input_indices − offset; ids outside [offset, offset + vocab) give
    all-zero rows (MindSpore's EmbeddingLookup kernel). Output: input_indices.shape + input_params.shape[1:], the
    table's dtype. Gradient to the table: the output gradient scatter-added into the looked-up rows (none for the
    out-of-range ids).

    Raises TypeError for non-Tensor arguments, ids that are not int32 / int64 or a non-int offset; ValueError for
    0-d ids (MindSpore's message)."""
    table = _tensor_arg(input_params, op, "input_params")
    ids = _tensor_arg(input_indices, op, "input_indices")
    if ids.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For primitive[{op}], the input argument[indices] must be a type of {{Tensor[Int32], "
                        f"Tensor[Int64]}}, but got Tensor[{ids.dtype}].")
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise TypeError(f"For '{op}', the 'offset' must be an int, but got {type(offset).__name__}.")
    if ids.ndim == 0:
        raise ValueError(f"For primitive[{op}], the dimension of indices  must be greater than 0 , but got 0.")
    vocab = table.shape[0]
    flat = _core.reshape(ids, [-1])
    if offset:
        flat = _core.sub(flat, _core.full([], float(offset), flat.dtype))
    zero = _core.full([], 0.0, flat.dtype)
    valid = _core.logical_and(_core.greater_equal(flat, zero), _core.less(flat, _core.full([], float(vocab),
                                                                                          flat.dtype)))
    safe = _core.select(valid, flat, zero)
    rows = _core.gather(table, safe, 0)
    mask = _core.reshape(_core.cast(valid, table.dtype), [-1] + [1] * (table.ndim - 1))
    out = _core.mul(rows, mask)
    return _core.reshape(out, list(ids.shape) + list(table.shape[1:]))
