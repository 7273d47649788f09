"""MindSpore 1.x's deprecated `mindspore.dataset.transforms.py_transforms`: the composition operations
(1.x's `OneHotOp` is left out: use `transforms.OneHot`)."""
from .transforms import Compose, RandomApply, RandomChoice, RandomOrder

__all__ = ["Compose", "RandomApply", "RandomChoice", "RandomOrder"]
