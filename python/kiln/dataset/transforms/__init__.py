"""kiln.dataset.transforms — MindSpore's `mindspore.dataset.transforms`: general operations on data columns
(`Compose`, `TypeCast`, `OneHot`, `Fill`, `Duplicate`, `Concatenate`, `Mask`, `PadEnd`, `Slice`, `RandomApply`,
`RandomChoice`, `RandomOrder`, `Unique`). Each is a callable object: eager on NumPy arrays, PIL Images or kiln
Tensors, and the `operations` of `dataset.map`."""
from .. import vision  # noqa: F401  (MindSpore's package imports vision too)
from . import transforms  # noqa: F401 (re-export)
from .transforms import (Compose, Concatenate, Duplicate, Fill, Mask, OneHot, PadEnd, RandomApply,  # noqa: F401 (re-export)
                         RandomChoice, RandomOrder, Relational, Slice, TypeCast, Unique)
from ._base import PyTensorOperation, TensorOperation  # noqa: F401 (re-export)
