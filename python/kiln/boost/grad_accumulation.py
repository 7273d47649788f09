"""`mindspore.boost.grad_accumulation`: gradient accumulation over several steps (MindSpore 2.10's module).

`GradientAccumulation(max_accumulation_step, optimizer)(loss, grads)` adds grads / max_accumulation_step to one
accumulator per optimized Parameter at every call, and every max_accumulation_step-th call runs the optimizer on
the accumulated (so averaged) gradients and clears the accumulators; the loss is returned unchanged. So N steps of
accumulation on batches b1..bN update the weights once with the mean of their gradients: the update of one step on
the concatenated batch when the loss is a mean (tests/python/test_ms_module_layout.py checks it).

`gradient_accumulation_op` (registered for ("Int64", "Tensor", "Tensor"): step count, accumulator, gradient) and
`gradient_clear_op` (("Tensor",): accumulator) are the MultitypeFuncGraphs MindSpore's class maps over the
gradients with HyperMap; model zoos (mindcv's TrainStep, mindone) import them to write their own accumulation cell.
They write the accumulators in place (AssignAdd / Assign) and return them.
"""
from .. import _engine
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from ..nn.cell import Cell
from ..ops import composite as C
from ..ops import functional as F

__all__ = ["GradientAccumulation", "gradient_accumulation_op", "gradient_clear_op"]

gradient_accumulation_op = C.MultitypeFuncGraph("gradient_accumulation_op")


@gradient_accumulation_op.register("Int64", "Tensor", "Tensor")
def cumulative_grad_process(accumulation_step, cumulative_grad, grad):
    """cumulative_grad += grad / accumulation_step (in place); returns cumulative_grad."""
    F.assign_add(cumulative_grad, grad / accumulation_step)
    return cumulative_grad


gradient_clear_op = C.MultitypeFuncGraph("gradient_clear_op")


@gradient_clear_op.register("Tensor")
def clear_grad(cumulative_grad):
    """cumulative_grad = 0 (in place); returns it."""
    return F.assign(cumulative_grad, F.zeros_like(cumulative_grad))


class GradientAccumulation(Cell):
    """GradientAccumulation(max_accumulation_step, optimizer): runs `optimizer` once every max_accumulation_step
    calls, on the mean of the gradients of those calls.

    Args:
        max_accumulation_step (int): the number of steps whose gradients are accumulated (>= 1).
        optimizer (Cell): an optimizer; one zero-initialized accumulator Parameter per Parameter in
            `optimizer.parameters` is made, named "grad_accumulation.<name>" (MindSpore's names).

    Inputs: loss (Tensor), grads (tuple of Tensors, one per optimizer Parameter, as `optimizer(grads)` takes).
    Outputs: loss (after the accumulation and, on the last step of a cycle, the optimizer update).

    Attributes (MindSpore's, which subclasses such as mindcv's use): `_max_accumulation_step`, `optimizer`,
    `weights`, `hyper_map`, `_grad_accumulation` (ParameterTuple of accumulators), `_accumulation_step`
    (int32 Parameter counting the calls of the current cycle).

    Raises:
        TypeError: max_accumulation_step not an int; ValueError: max_accumulation_step < 1.
    """

    def __init__(self, max_accumulation_step, optimizer):
        super().__init__()
        if isinstance(max_accumulation_step, bool) or not isinstance(max_accumulation_step, int):
            raise TypeError("For 'GradientAccumulation', the 'max_accumulation_step' must be int, but got "
                            f"{type(max_accumulation_step).__name__}.")
        if max_accumulation_step < 1:
            raise ValueError("For 'GradientAccumulation', the 'max_accumulation_step' must be >= 1, but got "
                             f"{max_accumulation_step}.")
        self._max_accumulation_step = max_accumulation_step
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.hyper_map = C.HyperMap()
        self._grad_accumulation = self.weights.clone(prefix="grad_accumulation", init="zeros")
        self._accumulation_step = Parameter(Tensor(0, dtype=mstype.int32), name="accumulation_step")
        self.__dict__["_opt_state"] = list(optimizer.get_parameters())  # (not registered: the optimizer's own)

    def construct(self, loss, grads):
        accumulated = self.hyper_map(F.partial(gradient_accumulation_op, self._max_accumulation_step),
                                     self._grad_accumulation, grads)
        loss = F.depend(loss, accumulated)
        step = F.depend(self._accumulation_step + 1, accumulated)
        update = step >= self._max_accumulation_step
        if _engine.tracing():
            # No data-dependent branch in a graph (as TrainOneStepWithLossScaleCell): the optimizer runs on every
            # step and its state (weights, moments, step counters) is put back unless this step ends the cycle.
            olds = [F.depend(p * 1, accumulated) for p in self._opt_state]
            done = self.optimizer(F.depend(tuple(self._grad_accumulation), olds))
            for p, old in zip(self._opt_state, olds):
                F.assign(p, F.depend(F.select(update, p, old), done))
            cleared = [F.assign(a, F.depend(F.select(update, F.zeros_like(a), a), done))
                       for a in self._grad_accumulation]
            F.assign(self._accumulation_step, F.depend(F.select(update, F.zeros_like(step), step), done))
            return F.depend(loss, cleared)
        F.assign(self._accumulation_step, step)
        if bool(update.asnumpy()):
            loss = F.depend(loss, self.optimizer(self._grad_accumulation))
            F.assign(self._accumulation_step, Tensor(0, mstype.int32))
            loss = F.depend(loss, self.hyper_map(F.partial(gradient_clear_op), self._grad_accumulation))
        return loss
