"""kiln.experimental.optim — MindSpore 2.10's `mindspore.experimental.optim`: PyTorch-style optimizers with
`param_groups` (each group's 'lr' a Parameter that the schedulers of `lr_scheduler` change in place), usable
eagerly, compiled, and inside a `@jit` training step.

    optimizer = optim.Adam(net.trainable_params(), lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    loss, grads = grad_fn(data, label); optimizer(grads); scheduler.step()
"""
from .optimizer import Optimizer  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam  # noqa: F401
from .stepwise import ASGD, RMSprop, Rprop  # noqa: F401
from . import lr_scheduler  # noqa: F401

__all__ = ["Optimizer", "Adam", "AdamW", "SGD", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD", "RMSprop",
           "Rprop", "lr_scheduler"]
