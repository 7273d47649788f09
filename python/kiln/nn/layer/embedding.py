"""nn.Embedding (MindSpore 2.x mindspore/nn/layer/embedding.py): a lookup table of vocab_size rows."""
import numbers

import numpy as np

from ..._loader import _core
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ..cell import Cell

__all__ = ["Embedding"]


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
            table = _core.Tensor._from_numpy(arr)
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        if not isinstance(ids, _core.Tensor) or ids.dtype not in mstype.int_type:
            got = ids.dtype if isinstance(ids, _core.Tensor) else type(ids).__name__
            raise TypeError(f"For '{self.cls_name}', the input ids must be an integer Tensor, but got {got}.")
        table = self.embedding_table
        flat = _core.reshape(ids, [-1])
        if self.use_one_hot:
            # One-hot rows of out-of-range ids would be all zero: check them as Gather does (also in graphs).
            if flat.size:
                flat = _core.check_range(flat, self.cls_name, "id", 0.0, float(self.vocab_size))
            classes = _core.arange(0.0, float(self.vocab_size), 1.0, ids.dtype)
            one_hot = _core.cast(_core.equal(_core.expand_dims(flat, 1), classes), table.dtype)
            out = _core.matmul(one_hot, table, False, False)
        else:
            out = _core.gather(table, flat, 0)
        return _core.reshape(out, list(ids.shape) + [self.embedding_size])

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, use_one_hot={self.use_one_hot}, "
                f"embedding_table={self.embedding_table}, dtype={self.dtype}, padding_idx={self.padding_idx}")
