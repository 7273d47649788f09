"""kiln.experimental.optim — MindSpore 2.10's `mindspore.experimental.optim`: PyTorch-style optimizers with
`param_groups` (each group's 'lr' a Parameter that the schedulers of `lr_scheduler` change in place), usable
eagerly, compiled, and inside a `@jit` training step.

    optimizer = optim.Adam(net.trainable_params(), lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    loss, grads = grad_fn(data, label); optimizer(grads); scheduler.step()
"""
from .optimizer import Optimizer
from .adam import Adam
from .adamw import AdamW
from .sgd import SGD
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam
from .stepwise import ASGD, RMSprop, Rprop
from . import lr_scheduler

__all__ = ["Optimizer", "Adam", "AdamW", "SGD", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD", "RMSprop",
           "Rprop", "lr_scheduler"]
