"""kiln.experimental.optim — MindSpore's `mindspore.experimental.optim`: optimizers with PyTorch-style
`param_groups` (each group's 'lr' is a Parameter that schedulers may change in place)."""
from .optimizer import Optimizer  # noqa: F401
from .adamw import AdamW  # noqa: F401

__all__ = ["Optimizer", "AdamW"]
