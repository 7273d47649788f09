"""nn.SGD with MindSpore's formulas (../shared/reference/mindspore_api.md §5.3)."""
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ..cell import Cell
from ._validate import check_type
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum, dampening and Nesterov momentum (MindSpore's SGD
    kernel; the PyTorch formulation of Sutskever et al. 2013):

        g ← g/loss_scale;  g ← g + λ·w                 (λ = weight_decay, for the parameters that nn.Optimizer's
                                                        decay filter selects: not 'beta'/'gamma' names)
        momentum μ > 0:  first step v ← g, later v ← μ·v + (1 − dampening)·g
                         w ← w − lr·(g + μ·v) if nesterov else w − lr·v
        μ = 0:           w ← w − lr·g

    Args:
        params, learning_rate (default 0.1), loss_scale: see nn.Optimizer.
        momentum (float ≥ 0; ints converted), dampening (float ≥ 0; ints converted), weight_decay (float ≥ 0),
        nesterov (bool; needs momentum > 0 and dampening = 0).
    State Parameters: `momentum` (float32 0-d), `accum.<name>` (zeros), `stat.<name>` (ones: "first step" flags).
    Returns True.

    Raises:
        TypeError: momentum/dampening not numbers, nesterov not bool, a Cell (dynamic) weight decay.
        ValueError: momentum or dampening < 0; nesterov with momentum ≤ 0 or dampening ≠ 0.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        name = self.cls_name
        if isinstance(momentum, int) and not isinstance(momentum, bool):
            momentum = float(momentum)
        if isinstance(momentum, bool) or not isinstance(momentum, float):
            raise TypeError(f"For '{name}', the argument 'momentum' must be float type, but got {type(momentum)}.")
        if momentum < 0.0:
            raise ValueError(f"For '{name}', the argument 'momentum' must be at least 0.0, but got {momentum}.")
        if isinstance(dampening, int) and not isinstance(dampening, bool):
            dampening = float(dampening)
        if isinstance(dampening, bool) or not isinstance(dampening, float):
            raise TypeError(f"For '{name}', the argument 'dampening' must be float type, but got "
                            f"{type(dampening)}.")
        if dampening < 0.0:
            raise ValueError(f"For '{name}', the argument 'dampening' must be at least 0.0, but got {dampening}.")
        check_type(nesterov, (bool,), "nesterov", name)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError(f"For '{name}', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must "
                             f"equal to 0.0, but got 'momentum' is {momentum}, 'dampening' is {dampening}.")
        if self.dynamic_weight_decay:
            raise TypeError(f"For '{name}', dynamic weight decay is currently not supported, the argument "
                            "'weight_decay' or 'weight_decay' set in grouped 'params' must be float or int type.")
        self.dampening = dampening
        self.nesterov = nesterov
        self.momentum = Parameter(_kernels.full([], momentum, mstype.float32), name="momentum")
        self.accum = self._parameters.clone(prefix="accum", init="zeros")
        self.stat = self._parameters.clone(prefix="stat", init="ones")
        # The kernel applies the decay itself, with the λ given by the user, to the parameters that nn.Optimizer's
        # decay filter selects (decay_flags: names without 'beta'/'gamma', or every parameter of a group with λ > 0).
        self.__dict__["_sgd_wd"] = [float(w) / self.loss_scale if flag and not isinstance(w, Cell) else 0.0
                                    for w, flag in zip(self._wd_per_param, self.decay_flags)]
        self.__dict__["_momentum_value"] = momentum

    def construct(self, gradients):
        grads, lrs = self._prepare(gradients, decay=False)
        sgd = _kernels.sgd
        mom, damp, nest = self._momentum_value, self.dampening, self.nesterov
        for p, g, lr, acc, st, wd in zip(self._parameters, grads, lrs, self.accum, self.stat, self._sgd_wd):
            sgd(p, g, lr, acc, st, mom, damp, wd, nest)
        return True
