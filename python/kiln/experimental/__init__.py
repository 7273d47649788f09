"""kiln.experimental — MindSpore's `mindspore.experimental`: PyTorch-style optimizers (`experimental.optim`)."""
from . import optim  # noqa: F401 (re-export)
