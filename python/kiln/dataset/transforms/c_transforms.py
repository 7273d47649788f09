"""MindSpore 1.x's deprecated `mindspore.dataset.transforms.c_transforms`: the same operations as
`kiln.dataset.transforms`."""
from .transforms import (Compose, Concatenate, Duplicate, Fill, Mask, OneHot, PadEnd, RandomApply,
                         RandomChoice, Relational, Slice, TypeCast, Unique)

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "Mask", "OneHot", "PadEnd", "RandomApply", "RandomChoice",
           "Relational", "Slice", "TypeCast", "Unique"]
