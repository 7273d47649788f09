"""nn.Optimizer: the base class of Kiln's optimizers, with MindSpore's parameter handling, learning-rate forms,
weight decay and loss scale (../shared/reference/mindspore_api.md §5.1).

An optimizer is a Cell (auto_prefix=False, so parameter names are untouched) called with the gradients:
`optimizer(grads)`, where grads is a tuple/list aligned one-to-one with `optimizer.parameters` (a ParameterTuple,
e.g. the weights given to `value_and_grad(..., optimizer.parameters)`). Each call, in this order:

  1. checks grads (a tuple/list of Tensors, one per parameter, each with its parameter's shape);
  2. weight decay (coupled L2):  g ← g + λ'·w  for parameters whose name contains neither 'beta' nor 'gamma'
     (with parameter groups: every parameter of a group with λ > 0), where λ' = λ·loss_scale as MindSpore stores
     it, so that after step 3 the effective decay is λ;
  3. loss scale:  g ← g · (1/loss_scale)  when loss_scale ≠ 1;
  4. reads the learning rate for the current `global_step` (fixed: the `learning_rate` Parameter; a list/1-D
     Tensor: its element global_step, the last one past the end; a LearningRateSchedule: its value at
     global_step), then global_step += 1;
  5. the optimizer's own update (subclasses), done in place on the Parameters by Kiln's fused kernels.

The per-step work in Python is kept small: per-parameter lists (parameters, state, decay flags, learning rates)
are built once in __init__, and the fixed learning rate is a 0-d float32 Parameter passed straight to the kernels.
"""
import functools
import inspect
import numbers
from collections.abc import Iterable

import numpy as np

from ... import _engine
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter, ParameterTuple
from ..cell import Cell
from ..layer.container import CellList
from ..learning_rate_schedule import LearningRateSchedule
from . import _parallel
from ...parallel import _op_shard

__all__ = ["Optimizer", "opt_init_args_register"]

_GROUP_KEYS = ("params", "lr", "weight_decay", "order_params", "grad_centralization")


def opt_init_args_register(fn):
    """MindSpore's decorator for an optimizer's `__init__`: before running it, records the arguments the optimizer
    was made with (model zoos decorate their own optimizers with it, e.g. mindcv's AdamW):

      - `self.init_params = {"params": <the params argument>}` (from `optimizer.init_params` when the argument is
        an `optimizer`, for wrappers);
      - `self.init_learning_rate`: the learning_rate argument (a Tensor as a Python list/number, None for a
        LearningRateSchedule Cell);
      - `self.init_args`: the other arguments by name, defaults applied (a dict).

    Raises TypeError when the call does not match fn's signature (inspect.Signature.bind's message)."""
    @functools.wraps(fn)
    def deco(self, *args, **kwargs):
        bound = inspect.signature(fn).bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(bound.signature.parameters)))  # self
        if "params" in arguments:
            self.init_params = {"params": arguments.pop("params")}
        if "optimizer" in arguments:
            self.init_params = {"params": arguments.pop("optimizer").init_params["params"]}
        if "learning_rate" in arguments:
            lr = arguments.pop("learning_rate")
            if isinstance(lr, _Tensor):
                lr = lr.asnumpy().tolist()
            self.init_learning_rate = None if isinstance(lr, Cell) else lr
        self.init_args = arguments
        fn(self, *args, **kwargs)
    return deco


def _decay_filter(param):
    return "beta" not in param.name and "gamma" not in param.name


class _ConvertToCell(LearningRateSchedule):
    """A fixed learning rate (Parameter) seen as a schedule (used when some parameter groups have dynamic ones)."""

    def __init__(self, learning_rate):
        super().__init__()
        if not isinstance(learning_rate, Parameter):
            raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be Parameter, but got "
                            f"{type(learning_rate).__name__}.")
        self.learning_rate = learning_rate

    def construct(self, global_step):
        return self.learning_rate


class _IteratorLearningRate(LearningRateSchedule):
    """A 1-D learning-rate list: step i uses element min(i, len − 1)."""

    def __init__(self, learning_rate, name):
        super().__init__()
        if not isinstance(learning_rate, _Tensor):
            raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be Tensor, but got "
                            f"{type(learning_rate).__name__}.")
        if learning_rate.ndim != 1:
            raise ValueError(f"For 'Optimizer', the dimension of the argument 'learning_rate' should be 1, but got "
                             f"{learning_rate.ndim}.")
        self.learning_rate = Parameter(learning_rate, name)
        self.__dict__["_last"] = learning_rate.shape[0] - 1

    def construct(self, global_step):
        return _kernels.gather(self.learning_rate, _ops.minimum(global_step, self._last), 0)


class _WrappedWeightDecay(Cell):
    """A weight-decay schedule (Cell) times loss_scale."""

    def __init__(self, weight_decay, loss_scale=1.0):
        super().__init__()
        self.weight_decay = weight_decay
        self.__dict__["_loss_scale"] = loss_scale

    def construct(self, global_step):
        wd = self.weight_decay(global_step)
        return wd if self._loss_scale == 1.0 else _ops.mul(wd, self._loss_scale)



def _repeated_parameter(p):
    """MindSpore's error for a Parameter given to an optimizer twice (the same object or the same name)."""
    return RuntimeError(f"For 'Optimizer', the {p.name} parameter already exists, it does not support repeated "
                        "setting. Please check whether the optimizer parameter has been set multiple times.")

class Optimizer(Cell):
    """Base class for optimizers (subclass it and define construct(gradients), or use Adam, SGD, Momentum).

    Optimizer parallel (set_auto_parallel_context(enable_parallel_optimizer=True) in data-parallel mode with several
    processes; kiln/nn/optim/_parallel.py): `parameters` stay whole, `_parameters` holds slice-shaped working copies
    of the large parameters, from which subclasses make their state (1/N of it per process); gradients may be
    whole (already reduced) or this process's slice (nn.DistributedGradReducer's reduce-scatter). A subclass whose
    update works element by element on `_parameters` sets `_support_parallel_optimizer = True`; the others raise
    RuntimeError when made with the option on.

    Args:
        learning_rate: float/int ≥ 0 (fixed; stored as the float32 Parameter `learning_rate`), a 0-d Tensor
            (fixed), a 1-D Tensor or any iterable of numbers (step i uses element i), or a LearningRateSchedule.
        parameters: an iterable of Parameters, or a list of group dicts with keys 'params' (required), 'lr',
            'weight_decay', 'grad_centralization', or one dict {'order_params': params} giving the final order.
        weight_decay: float/int ≥ 0, or a Cell schedule called with global_step. Without groups it applies only to
            parameters whose name contains neither 'beta' nor 'gamma' (MindSpore's default decay filter: BatchNorm/
            LayerNorm scales and shifts are not decayed), in every optimizer; a group's weight_decay (its own or
            the default) applies to every parameter of the group when > 0.
        loss_scale (float > 0; ints converted): gradients are divided by it.

    Attributes: parameters (ParameterTuple), learning_rate, global_step (Int32 Parameter of shape (1,)),
        weight_decay, loss_scale, decay_flags, dynamic_lr, is_group, is_group_lr.

    Raises:
        ValueError: parameters None or empty; negative learning rate or weight decay; loss_scale ≤ 0; a learning
            rate Tensor with ndim > 1; dynamic group learning rates of different lengths.
        TypeError: parameters not iterable, or mixing Parameters and dicts / other elements; learning_rate,
            weight_decay or loss_scale of another type.
        KeyError: an unknown key in a group dict.
        RuntimeError: a parameter appearing in two groups.
    """

    _support_parallel_optimizer = False

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        parameters = self._parameters_base_check(parameters, "parameters")
        if not all(isinstance(x, Parameter) for x in parameters) and \
                not all(isinstance(x, dict) for x in parameters):
            raise TypeError("For 'Optimizer', all elements of the argument 'parameters' must be 'Parameter' or "
                            "'dict', please check the 'parameters'.")
        if isinstance(parameters[0], Parameter):
            self._check_unique(parameters)
        if isinstance(loss_scale, int) and not isinstance(loss_scale, bool):
            loss_scale = float(loss_scale)
        if not isinstance(loss_scale, float):
            raise TypeError(f"For '{self.cls_name}', the type of 'loss_scale' should be 'float', but got "
                            f"'{loss_scale}' with type '{type(loss_scale).__name__}'.")
        if loss_scale <= 0.0:
            raise ValueError(f"For '{self.cls_name}', the 'loss_scale' must be a positive float, but got "
                             f"{loss_scale}.")
        self.loss_scale = loss_scale
        self.dynamic_weight_decay = False
        self.grad_centralization = False
        self.dynamic_lr = False
        self.is_group = False
        self.is_group_lr = False
        self.is_group_params_ordered = False
        self.global_step = Parameter(initializer(0, [1], mstype.int32), name="global_step")
        learning_rate = self._preprocess_single_lr(learning_rate)
        if isinstance(parameters[0], dict):
            self.is_group = True
            self.__dict__["group_params"] = []
            self.__dict__["group_lr"] = []
            self.__dict__["group_weight_decay"] = []
            self.__dict__["group_grad_centralization"] = []
            self._init_group_params(parameters, learning_rate, weight_decay)
        self._init_opt_attrs(learning_rate, parameters, weight_decay)

    # ------------------------------------------------------------------------------------ construction
    @staticmethod
    def _parameters_base_check(parameters, param_info):
        if parameters is None:
            raise ValueError(f"For 'Optimizer', the argument {param_info} can not be None.")
        if not isinstance(parameters, Iterable):
            raise TypeError(f"For 'Optimizer', the argument {param_info} must be Iterable type, but got "
                            f"{type(parameters)}.")
        parameters = list(parameters)
        if not parameters:
            raise ValueError(f"For 'Optimizer', the argument {param_info} must not be empty.")
        return parameters

    @staticmethod
    def _check_unique(parameters):
        """RuntimeError naming the first Parameter given twice (the same object, or two with one name: their
        optimizer states would collide)."""
        seen = set()
        for p in parameters:
            if p.name in seen:
                raise _repeated_parameter(p)
            seen.add(p.name)

    def _preprocess_weight_decay(self, weight_decay):
        """float λ ≥ 0 → λ·loss_scale; a Cell → a schedule (times loss_scale)."""
        if isinstance(weight_decay, numbers.Real) and not isinstance(weight_decay, bool):
            weight_decay = float(weight_decay)
            if weight_decay < 0:
                raise ValueError(f"For '{self.cls_name}', the 'weight_decay' must be at least 0.0, but got "
                                 f"{weight_decay}.")
            return weight_decay * self.loss_scale
        if isinstance(weight_decay, Cell):
            self.dynamic_weight_decay = True
            return _WrappedWeightDecay(weight_decay, self.loss_scale)
        raise TypeError(f"For 'Optimizer', the argument 'Weight_decay' must be int, float or Cell, but got "
                        f"{type(weight_decay)}.")

    def _preprocess_single_lr(self, learning_rate):
        """Validates a learning rate: a float, a 0-d float32 Tensor, a 1-D float32 Tensor (dynamic) or a
        LearningRateSchedule (dynamic)."""
        if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
            learning_rate = float(learning_rate)
            if learning_rate < 0:
                raise ValueError(f"For '{self.cls_name}', the 'learning_rate' must be at least 0.0, but got "
                                 f"{learning_rate}.")
            return learning_rate
        if isinstance(learning_rate, _Tensor):
            if learning_rate.ndim == 0:
                return _kernels.cast(learning_rate, mstype.float32)
            if learning_rate.ndim > 1:
                raise ValueError(f"For 'Optimizer', if 'learning_rate' is Tensor type, then the dimension of it "
                                 f"should be 0 or 1, but got {learning_rate.ndim}.")
            self.dynamic_lr = True
            return _kernels.cast(learning_rate, mstype.float32)
        if isinstance(learning_rate, LearningRateSchedule):
            self.dynamic_lr = True
            return learning_rate
        if isinstance(learning_rate, Iterable) and not isinstance(learning_rate, (str, bytes, dict)):
            values = list(learning_rate)
            try:
                arr = np.asarray(values, dtype=np.float32)
            except (TypeError, ValueError):
                raise TypeError("For 'Optimizer', a list 'learning_rate' must contain numbers.") from None
            if arr.ndim != 1 or arr.size == 0:
                raise ValueError(f"For 'Optimizer', a list 'learning_rate' must be a non-empty 1-D sequence of "
                                 f"numbers, but got shape {arr.shape}.")
            self.dynamic_lr = True
            return _Tensor._from_numpy(np.asarray(arr, order="C"))
        raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be int, float, Tensor, Iterable or "
                        f"LearningRateSchedule, but got {type(learning_rate)}.")

    def _build_single_lr(self, learning_rate, name):
        """A fixed lr → a 0-d float32 Parameter `name`; a 1-D Tensor → an iterator schedule; schedules as is."""
        if isinstance(learning_rate, float):
            lr = Parameter(_kernels.full([], learning_rate, mstype.float32), name)
        elif isinstance(learning_rate, _Tensor) and learning_rate.ndim == 0:
            lr = Parameter(learning_rate, name)
        elif isinstance(learning_rate, _Tensor):
            return _IteratorLearningRate(learning_rate, name)
        else:
            return learning_rate
        if self.is_group_lr and self.dynamic_lr:
            return _ConvertToCell(lr)
        return lr

    def _init_group_params(self, parameters, learning_rate, weight_decay):
        order = None
        tensor_len = learning_rate.shape[0] if isinstance(learning_rate, _Tensor) and learning_rate.ndim == 1 \
            else 0
        groups = []
        for group in parameters:
            bad = [k for k in group if k not in _GROUP_KEYS]
            if bad:
                raise KeyError(f"For 'Optimizer', the key in group params must be one of in {list(_GROUP_KEYS)}, "
                               f"but got {bad}.")
            if "order_params" in group:
                if len(group) > 1:
                    raise ValueError(f"For 'Optimizer', the order params dict in group parameters should only "
                                     f"include the 'order_params' key, but got {list(group.keys())}.")
                if not isinstance(group["order_params"], Iterable):
                    raise TypeError(f"For 'Optimizer', the value of 'order_params' in group parameters should be "
                                    f"Iterable type, but got {type(group['order_params'])}.")
                order = list(group["order_params"])
                self.is_group_params_ordered = True
                continue
            if "params" not in group:
                raise KeyError("For 'Optimizer', every group dict must have the key 'params'.")
            params = self._parameters_base_check(group["params"], "group `params`")
            for i, p in enumerate(params):
                if not isinstance(p, Parameter):
                    raise TypeError(f"For 'Optimizer', the element in group parameters must be Parameter type, but "
                                    f"got {type(p)} at index {i}.")
            lr = None
            if "lr" in group:
                self.is_group_lr = True
                lr = self._preprocess_single_lr(group["lr"])
                if isinstance(lr, _Tensor) and lr.ndim == 1:
                    if tensor_len == 0:
                        tensor_len = lr.shape[0]
                    elif lr.shape[0] != tensor_len:
                        raise ValueError("For 'Optimizer', the Tensor type dynamic learning rate in group must be the "
                                         "same size as the argument 'learning_rate'.")
            groups.append((group, params, lr))
        default_lr = self._build_single_lr(learning_rate, "learning_rate")
        seen = set()
        for num, (group, params, lr) in enumerate(groups):
            lr = default_lr if lr is None else self._build_single_lr(lr, "learning_rate_group_" + str(num))
            wd = self._preprocess_weight_decay(group.get("weight_decay", weight_decay))
            gc = group.get("grad_centralization", False)
            if not isinstance(gc, bool):
                raise TypeError(f"For 'Optimizer', the 'gradients_centralization' must be bool type, but got "
                                f"{type(gc)}.")
            if gc:
                self.grad_centralization = True
            for p in params:
                if p.name in seen:
                    raise _repeated_parameter(p)
                seen.add(p.name)
                self.group_params.append(p)
                self.group_lr.append(lr)
                self.group_weight_decay.append(wd)
                self.group_grad_centralization.append(gc)
        if order is not None:
            if len(order) != len(self.group_params):
                raise ValueError(f"For 'Optimizer', the length of order parameters must be the same as the length of "
                                 f"group parameters, but got order parameters' length {len(order)}, group "
                                 f"parameters' length {len(self.group_params)}.")
            index = {p.name: i for i, p in enumerate(self.group_params)}
            perm = []
            for p in order:
                if p.name not in index:
                    raise ValueError(f"For 'Optimizer', the parameter {p.name} in 'order_params' is not in any "
                                     "group.")
                perm.append(index[p.name])
            for attr in ("group_params", "group_lr", "group_weight_decay", "group_grad_centralization"):
                vals = self.__dict__[attr]
                self.__dict__[attr] = [vals[i] for i in perm]

    def _init_opt_attrs(self, learning_rate, parameters, weight_decay):
        weight_decay = self._preprocess_weight_decay(weight_decay)
        if self.is_group_lr:
            if self.dynamic_lr:
                self.learning_rate = CellList(self.group_lr, auto_prefix=False)
            else:
                self.learning_rate = ParameterTuple(self.group_lr)
        else:
            self.learning_rate = self._build_single_lr(learning_rate, "learning_rate")
        d = self.__dict__
        if self.is_group:
            self.parameters = ParameterTuple(self.group_params)
            wds = list(self.group_weight_decay)
            d["decay_flags"] = tuple(isinstance(x, Cell) or x > 0 for x in wds)
            d["dynamic_decay_flags"] = tuple(isinstance(x, Cell) for x in wds)
            d["weight_decay"] = tuple(wds)
            d["exec_weight_decay"] = any(d["decay_flags"])
            d["grad_centralization_flags"] = tuple(self.group_grad_centralization)
            d["_wd_per_param"] = wds
        else:
            self.parameters = ParameterTuple(parameters)
            d["decay_flags"] = tuple(_decay_filter(p) for p in self.parameters)
            d["dynamic_decay_flags"] = isinstance(weight_decay, Cell)
            d["exec_weight_decay"] = isinstance(weight_decay, Cell) or weight_decay > 0
            if isinstance(weight_decay, Cell):
                self.weight_decay = weight_decay
            else:
                d["weight_decay"] = weight_decay
            d["grad_centralization_flags"] = (False,) * len(self.parameters)
            d["_wd_per_param"] = [weight_decay] * len(self.parameters)
        d["_parameters"] = self.parameters
        # Optimizer parallel (enable_parallel_optimizer, kiln/nn/optim/_parallel.py): the update runs on slice-shaped
        # working Parameters, from which subclasses clone their (sliced) state.
        shards = _parallel.plan(self.parameters, self.cls_name, self)
        d["_opt_shards"] = shards
        if shards is not None:
            d["_parameters"] = ParameterTuple([p if s is None else _parallel.local_parameter(p, s)
                                               for p, s in zip(self.parameters, shards)])
        d["param_length"] = len(self.parameters)
        d["reciprocal_scale"] = 1.0 / self.loss_scale
        d["need_scale"] = self.loss_scale != 1.0
        # Per-parameter precomputation for the step.
        d["_param_shapes"] = [tuple(p.shape) for p in self._parameters]
        d["_decay_index"] = [i for i, f in enumerate(d["decay_flags"]) if f]
        if self.is_group_lr:
            lrs = list(self.group_lr)
            if self.dynamic_lr:
                uniq = []
                for c in lrs:
                    if all(c is not u for u in uniq):
                        uniq.append(c)
                d["_lr_unique"] = uniq
            d["_lr_per_param"] = lrs
        else:
            d["_lr_per_param"] = [self.learning_rate] * len(self.parameters)

    # ---------------------------------------------------------------------------------- per step
    def _check_gradients(self, gradients):
        """TypeError / ValueError unless gradients is a tuple/list of Tensors aligned with self.parameters."""
        if not isinstance(gradients, (tuple, list)):
            raise TypeError(f"For '{self.cls_name}', the 'gradients' must be a tuple or list of Tensors (one per "
                            f"parameter, in the order of optimizer.parameters), but got {type(gradients).__name__}.")
        n = self.param_length
        if len(gradients) != n:
            raise ValueError(f"For '{self.cls_name}', the number of gradients ({len(gradients)}) must be the same as "
                             f"the number of parameters ({n}); pass the gradients of optimizer.parameters, in that "
                             "order.")
        for i, (g, shape) in enumerate(zip(gradients, self._param_shapes)):
            try:
                gshape = g.shape
            except AttributeError:
                gshape = None
            if gshape != shape:
                p = self._parameters[i]
                if not isinstance(g, _Tensor):
                    raise TypeError(f"For '{self.cls_name}', gradient {i} (for parameter '{p.name}') must be a "
                                    f"Tensor, but got {type(g).__name__}.")
                raise ValueError(f"For '{self.cls_name}', gradient {i} has shape {gshape}, but its parameter "
                                 f"'{p.name}' has shape {shape}.")

    def flatten_gradients(self, gradients):
        """Identity (Kiln does not flatten parameters into chunks)."""
        return gradients

    def decay_weight(self, gradients):
        """g ← g + λ'·w for the parameters selected by decay_flags (see the module docstring). Returns a tuple."""
        if not self.exec_weight_decay:
            return gradients
        grads = list(gradients)
        params = self._parameters
        if self.dynamic_weight_decay:
            wds = self.get_weight_decay()
            if not self.is_group:
                wds = (wds,) * self.param_length
            for i in self._decay_index:
                wd = wds[i]
                if isinstance(wd, _Tensor) and wd.dtype != params[i].dtype:
                    wd = _kernels.cast(wd, params[i].dtype)
                grads[i] = _ops.add(_ops.mul(params[i], wd), grads[i])
        else:
            wds = self._wd_per_param
            for i in self._decay_index:
                grads[i] = _ops.add(_ops.mul(params[i], wds[i]), grads[i])
        return tuple(grads)

    def gradients_centralization(self, gradients):
        """For groups with grad_centralization=True: g ← g − mean(g over all axes but the first), for
        parameters with ≥ 2 dims."""
        if not self.grad_centralization:
            return gradients
        grads = list(gradients)
        for i, flag in enumerate(self.grad_centralization_flags):
            g = grads[i]
            if flag and g.ndim >= 2:
                grads[i] = _ops.sub(g, _kernels.mean(g, tuple(range(1, g.ndim)), True))
        return tuple(grads)

    def scale_grad(self, gradients):
        """g ← g · (1/loss_scale) when loss_scale ≠ 1. Returns a tuple."""
        if not self.need_scale:
            return gradients
        r = self.reciprocal_scale
        return tuple(_ops.mul(g, r) for g in gradients)

    def get_weight_decay(self):
        """The weight decay of this step (λ·loss_scale): a float, a Tensor from a schedule, or a tuple per
        parameter with groups."""
        if self.dynamic_weight_decay:
            gs = self.global_step
            if self.is_group:
                return tuple(w(gs) if isinstance(w, Cell) else w for w in self.weight_decay)
            return self.weight_decay(gs)
        return self.weight_decay

    def _increment_step(self):
        gs = self.global_step
        _kernels.assign(gs, _ops.add(gs, 1))

    def _lrs_for_step(self):
        """The learning rate of each parameter for this step (a list), then global_step += 1."""
        if not self.dynamic_lr:
            lrs = self._lr_per_param
        elif self.is_group_lr:
            gs = self.global_step
            vals = {id(c): c(gs) for c in self._lr_unique}
            lrs = [vals[id(c)] for c in self._lr_per_param]
        else:
            lrs = [self.learning_rate(self.global_step)] * self.param_length
        self._increment_step()
        return lrs

    def _prepare(self, gradients, decay=True):
        """Steps 1–4 of the module docstring: (gradients, per-parameter learning rates)."""
        self._check_gradients(gradients)
        if decay and self.exec_weight_decay:
            gradients = self.decay_weight(gradients)
        if self.grad_centralization:
            gradients = self.gradients_centralization(gradients)
        if self.need_scale:
            gradients = self.scale_grad(gradients)
        return gradients, self._lrs_for_step()

    def get_lr(self):
        """The learning rate of the current step: the `learning_rate` Parameter (fixed), a 0-d Tensor (dynamic), or
        a tuple with one entry per parameter (groups with their own 'lr'). As in MindSpore, with a dynamic
        learning rate or weight decay this also increments global_step (custom optimizers call it once per
        step); Kiln's built-in optimizers step global_step themselves."""
        lr = self.learning_rate
        if self.dynamic_lr:
            gs = self.global_step
            if self.is_group_lr:
                lr = tuple(_kernels.reshape(c(gs), []) for c in self.learning_rate)
            else:
                lr = _kernels.reshape(self.learning_rate(gs), [])
        elif self.is_group_lr:
            lr = tuple(self.learning_rate)
        if self.dynamic_lr or self.dynamic_weight_decay:
            self._increment_step()
        return lr

    def get_lr_parameter(self, param):
        """The learning rate (Parameter, or the schedule when dynamic) used for `param` (a Parameter or a list).

        Raises TypeError for another type, ValueError for a parameter this optimizer does not update."""
        if isinstance(param, Parameter):
            plist = [param]
        elif isinstance(param, list):
            plist = param
        else:
            raise TypeError(f"For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, but got "
                            f"{type(param)}.")
        ids = [id(p) for p in self.parameters]
        out = []
        for p in plist:
            if id(p) not in ids:
                raise ValueError(f"For 'get_lr_parameter', the parameter {getattr(p, 'name', p)} is not in "
                                 "optimizer, please check whether the argument 'param' is correct.")
            lr = self._lr_per_param[ids.index(id(p))]
            if isinstance(lr, (_ConvertToCell, _IteratorLearningRate)):
                lr = lr.learning_rate
            out.append(lr)
        return out if isinstance(param, list) else out[0]

    @property
    def target(self):
        """The device the update runs on ('CPU')."""
        return "CPU"

    @property
    def unique(self):
        return True

    def _run_construct(self, args, kwargs):
        """The update is compiled once per gradient signature in both modes (as MindSpore's @jit-decorated
        optimizer construct): one graph of fused update nodes, run by the C++ executor. A learning-rate schedule
        that computes on the host (`_host_side`) runs eagerly instead."""
        d = self.__dict__
        hsdp = _op_shard.hsdp_config()
        if hsdp is not None and not d.get("_hsdp_applied"):  # stepping inside AutoParallel(...).hsdp()'s call
            d["_hsdp_applied"] = True
            _parallel.enable_late(self, *hsdp)
        if d.get("_kiln_op_gen", 0) != _op_shard._generation[0]:  # operator parallel sliced Parameters since
            _op_shard.sync_optimizer(self)  # the last step: slice their states the same way
        host = d.get("_host_schedules")
        if host is None:  # any learning-rate or weight-decay schedule (groups included) marked _host_side
            cells = list(d.get("_lr_per_param", ())) + list(d.get("_wd_per_param", ()))
            cells += [getattr(c, "weight_decay", None) for c in cells if isinstance(c, _WrappedWeightDecay)]
            host = d["_host_schedules"] = any(getattr(c, "_host_side", False) for c in cells)
        if d.get("_opt_shards") is not None:  # optimizer parallel: slice, update the slices, gather
            if args:
                args = (_parallel.local_gradients(self, args[0]),) + tuple(args[1:])
            _parallel.pull(self)
            if _engine.tracing() or host:
                done = self.construct(*args, **kwargs)
            else:
                done = self._compiled_construct()(*args, **kwargs)
            _parallel.push(self, done)
            return done
        if _engine.tracing() or host:
            return self.construct(*args, **kwargs)
        return self._compiled_construct()(*args, **kwargs)

    def construct(self, *hyper_params):
        raise NotImplementedError(f"{type(self).__name__}.construct is not implemented.")
