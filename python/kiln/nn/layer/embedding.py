"""nn.Embedding (MindSpore 2.x mindspore/nn/layer/embedding.py): a lookup table of vocab_size rows."""
import numbers

import numpy as np

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ..cell import Cell

__all__ = ["Embedding", "EmbeddingLookup"]


class Embedding(Cell):
    r"""Looks up rows of the `embedding_table` Parameter (vocab_size, embedding_size) by integer ids.

    Args:
        vocab_size, embedding_size (int).
        use_one_hot (bool): compute as one_hot(ids) @ table instead of a Gather (same values). Default False.
        embedding_table: Initializer / name / Tensor; default 'normal' (N(0, 0.01²)).
        dtype: the integer dtype expected of the ids (default int32; any integer dtype is accepted).
        padding_idx (int in [0, vocab_size) or None): that row is initialized to zeros.

    Inputs: ids, an integer Tensor of any shape. Outputs: ids.shape + (embedding_size,), the table's dtype.
    The gradient w.r.t. the table is a scatter-add of the output gradient into the looked-up rows (Gather's bprop).

    Raises:
        TypeError: vocab_size/embedding_size not int, use_one_hot not bool, dtype not an integer type, float ids.
        ValueError: padding_idx out of range.
    """

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal", dtype=mstype.int32,
                 padding_idx=None):
        super().__init__()
        name = self.cls_name
        for n, v in (("vocab_size", vocab_size), ("embedding_size", embedding_size)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"For '{name}', the '{n}' must be int, but got {type(v).__name__}.")
        if not isinstance(use_one_hot, bool):
            raise TypeError(f"For '{name}', the 'use_one_hot' must be bool, but got {type(use_one_hot).__name__}.")
        if dtype not in mstype.int_type:
            raise TypeError(f"For '{name}', the 'dtype' must be an integer type, but got {dtype}.")
        self.vocab_size = int(vocab_size)
        self.embedding_size = int(embedding_size)
        self.use_one_hot = use_one_hot
        self.dtype = dtype
        table = initializer(embedding_table, [vocab_size, embedding_size])
        self.padding_idx = padding_idx
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral) or not (
                    0 <= padding_idx < vocab_size):
                raise ValueError(f"For '{name}', the 'padding_idx' must be in range [0, {vocab_size}), but got "
                                 f"{padding_idx}.")
            arr = np.array(table.asnumpy(), copy=True)
            arr[padding_idx] = 0
            table = _Tensor._from_numpy(arr)
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        if not isinstance(ids, _Tensor) or ids.dtype not in mstype.int_type:
            got = ids.dtype if isinstance(ids, _Tensor) else type(ids).__name__
            raise TypeError(f"For '{self.cls_name}', the input ids must be an integer Tensor, but got {got}.")
        table = self.embedding_table
        flat = _kernels.reshape(ids, [-1])
        if self.use_one_hot:
            # One-hot rows of out-of-range ids would be all zero: check them as Gather does (also in graphs).
            if flat.size:
                flat = _kernels.check_range(flat, self.cls_name, "id", 0.0, float(self.vocab_size))
            classes = _kernels.arange(0.0, float(self.vocab_size), 1.0, ids.dtype)
            one_hot = _kernels.cast(_ops.equal(_kernels.expand_dims(flat, 1), classes), table.dtype)
            out = _kernels.matmul(one_hot, table, False, False)
        else:
            out = _kernels.gather(table, flat, 0)
        return _kernels.reshape(out, list(ids.shape) + [self.embedding_size])

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, use_one_hot={self.use_one_hot}, "
                f"embedding_table={self.embedding_table}, dtype={self.dtype}, padding_idx={self.padding_idx}")


def _positive_int(value, name, cls_name=None):
    prefix = f"For '{cls_name}', the" if cls_name else "The"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{prefix} '{name}' must be int, but got '{type(value).__name__}'")
    if value <= 0:
        raise ValueError(f"{prefix} '{name}' must be int and must > 0, but got '{value}' with type "
                         f"'{type(value).__name__}'.")
    return int(value)


class EmbeddingLookup(Cell):
    r"""A lookup table (MindSpore 2.10's nn.EmbeddingLookup, deprecated there but kept), as used by recommendation
    models: rows of the `embedding_table` Parameter (vocab_size, embedding_size) at integer ids.

    Args:
        vocab_size, embedding_size (int): positive.
        param_init: Initializer / name / number / Tensor for the table. Default 'normal' (N(0, 0.01²)).
        target (str): 'CPU' (default): ids outside [0, vocab_size) give zero rows (MindSpore's EmbeddingLookup
            kernel); 'DEVICE': a Gather, out-of-range ids raise.
        slice_mode, manual_shapes: MindSpore's model-parallel sharding of the table; without a parallel context (the
            only one Kiln runs) MindSpore ignores them, and so does Kiln.
        max_norm (float or None): when given, each looked-up row is scaled down to L2 norm ≤ max_norm (nn.ClipByNorm
            over the embedding axis, by its documented formula; MindSpore 2.10's CPU ClipByNorm kernel gives other
            values when an axis is set, see nn.ClipByNorm). The output is then float32.
        sparse (bool): MindSpore's choice of a sparse gradient (SparseGatherV2); Kiln's gradient is the dense
            scatter-add (the same update). Must be True with target 'CPU'. Default True.
        dtype: the table's dtype (default float32).

    Inputs: ids, an int32 / int64 Tensor of rank ≥ 1. Outputs: ids.shape + (embedding_size,).

    Raises:
        TypeError: sparse not bool; vocab_size / embedding_size not int; max_norm not float; float ids.
        ValueError: non-positive sizes or max_norm; target not 'CPU' / 'DEVICE'; sparse False with target 'CPU';
            0-d ids (target 'CPU').
    """

    BATCH_SLICE = "batch_slice"
    FIELD_SLICE = "field_slice"
    TABLE_ROW_SLICE = "table_row_slice"
    TABLE_COLUMN_SLICE = "table_column_slice"

    def __init__(self, vocab_size, embedding_size, param_init="normal", target="CPU", slice_mode="batch_slice",
                 manual_shapes=None, max_norm=None, sparse=True, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{name}', the type of 'sparse' should be 'bool', but got type "
                            f"'{type(sparse).__name__}'.")
        self.vocab_size = _positive_int(vocab_size, "vocab_size")
        self.target = target
        self.sparse = sparse
        self.forward_unique = False
        if target not in ("CPU", "DEVICE"):
            raise ValueError(f"For '{name}', the 'target' must be str and must be in '['CPU', 'DEVICE']', but got "
                             f"{target!r}.")
        if not sparse and target == "CPU":
            raise ValueError(f"For '{name}', 'sparse' must be True when 'target' is \"CPU\", but got 'sparse': "
                             f"{sparse} and 'target': {target}")
        self.embedding_size = _positive_int(embedding_size, "embedding_size", name)
        self.embedding_table = Parameter(initializer(param_init, [self.vocab_size, self.embedding_size],
                                                     dtype=dtype), name="embedding_table")
        self.max_norm = max_norm
        if max_norm is not None:
            if not isinstance(max_norm, float):
                raise TypeError(f"For '{name}', the 'max_norm' must be float, but got '{type(max_norm).__name__}'")
            if max_norm <= 0:
                raise ValueError(f"For '{name}', the 'max_norm' must be float and must > 0, but got '{max_norm}' "
                                 f"with type 'float'.")
            self.max_norm = _Tensor._from_numpy(np.array(max_norm, np.float32))

    def construct(self, indices):
        if self.target == "CPU":
            from ...ops.lookup_func import embedding_lookup
            out = embedding_lookup(self.embedding_table, indices, 0)
        else:
            if not isinstance(indices, _Tensor) or indices.dtype not in mstype.int_type:
                got = indices.dtype if isinstance(indices, _Tensor) else type(indices).__name__
                raise TypeError(f"For '{self.cls_name}', the indices must be an integer Tensor, but got {got}.")
            flat = _kernels.reshape(indices, [-1])
            out = _kernels.reshape(_kernels.gather(self.embedding_table, flat, 0),
                                list(indices.shape) + [self.embedding_size])
        if self.max_norm is not None:
            from .basic import ClipByNorm
            out = ClipByNorm(tuple(range(indices.ndim, out.ndim)))(out, self.max_norm)
        return out
