"""The base of kiln.experimental.optim (MindSpore's mindspore.experimental.optim.Optimizer): PyTorch-style
parameter groups.

    opt = AdamW([{"params": decay_params, "weight_decay": 0.01},
                 {"params": no_decay_params, "weight_decay": 0.0}], lr=1e-3)
    opt(grads)          # grads aligned with opt.parameters (the groups' params, in order)

Each group is a dict holding its 'params' and every option of `defaults` (filled in, in the defaults' order, where
the group does not set them); its 'lr' is stored as a 0-d float32 Parameter named `learning_rate_group_<i>` (also in
`optimizer.lrs`), so a scheduler (kiln.experimental.optim.lr_scheduler) or `ops.assign` can change it in place, also
between compiled steps; its 'weight_decay' as a float. The update is compiled once per gradient signature, like
nn.Optimizer's, and compiled again when a group's other options (betas, eps, weight_decay, ...) or the groups change.
"""
from collections import defaultdict
import numbers

from ... import _engine
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common._format import shortest_float
from ...common.initializer import initializer
from ...common.parameter import Parameter, ParameterTuple
from ...nn.cell import Cell
from ...nn.optim.optimizer import Optimizer as _NnOptimizer

__all__ = ["Optimizer"]


def _frozen(value):
    """A comparable stand-in for a group option (Tensors and Parameters by identity: their values are read at run
    time, not baked into the compiled update)."""
    if isinstance(value, _Tensor):
        return ("tensor", id(value))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return (type(value).__name__, value)


class Optimizer(Cell):
    """Base class of the experimental optimizers (mindspore.experimental.optim.Optimizer).

    A subclass calls `super().__init__(params, defaults)`, creates its per-parameter state with `_param_state` /
    `_scalar_state` (so that `add_param_group` extends it), and defines `construct(gradients)`.

    Args:
        params: an iterable of Parameters, or of dicts each with 'params' (a Parameter or an ordered iterable of
            them) and per-group options. Keys a group sets that the optimizer does not know are kept (as MindSpore
            and PyTorch do: code tags groups, e.g. with a 'name').
        defaults (dict): the default options (used where a group does not set them).
    Attributes: param_groups (list of dicts), parameters (ParameterTuple, the groups' params in order), lrs (the
        groups' lr Parameters), group_start_id (the index in `parameters` where each group starts, plus the total),
        defaults, state.
    Raises:
        ValueError: params None or empty; a parameter in two groups; a negative lr or weight_decay; a non-0-d lr
            Tensor.
        TypeError: params not iterable; a group not a dict; a set of params; a non-Parameter param; lr or
            weight_decay of another type.
        KeyError: a group dict without 'params'.
    """

    def __init__(self, params, defaults):
        super().__init__(auto_prefix=False)
        groups = self._parameters_base_check(params, "params")
        d = self.__dict__
        d["defaults"] = defaults
        d["state"] = defaultdict(dict)
        d["param_groups"] = []
        d["group_start_id"] = [0]
        d["lrs"] = []
        d["_state_specs"] = []  # (attribute, prefix, init, scalar) of each per-parameter state
        d["_hyper_seen"] = None
        self.parameters = ParameterTuple(())
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key == "params":
                    continue
                val = group[key]
                if key == "lr" and isinstance(val, Parameter):  # float32: shortest form (0.1, not 0.100000001)
                    val = shortest_float(val.asnumpy().item(), str(val.dtype))
                text += f"    {key}: {val}\n"
        return text + ")"

    # The same argument checks (and messages) as kiln.nn.Optimizer.
    _parameters_base_check = staticmethod(_NnOptimizer._parameters_base_check)

    def add_param_group(self, param_group):
        """Adds `param_group` (a dict with 'params' and any group options) as the next group: fills in the
        defaults, stores its lr as the Parameter `learning_rate_group_<i>`, and extends `parameters`,
        `group_start_id` and the optimizer's state (zeros, or the optimizer's initial value) to its params.

        Raises: TypeError (not a dict, a set of params, a non-Parameter), KeyError (no 'params'), ValueError (a
        parameter already in a group; lr/weight_decay errors as the constructor's)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"For '{self.cls_name}', a param group must be a dict, but got "
                            f"{type(param_group).__name__}.")
        if "params" not in param_group:
            raise KeyError(f"For '{self.cls_name}', a param group must have the key 'params', but got the keys "
                           f"{sorted(param_group)}.")
        params = param_group["params"]
        if isinstance(params, Parameter):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("Optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"For '{self.cls_name}', the optimizer can only optimize Parameters, but one of the "
                                f"params is {type(p).__name__}.")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group.")
        group_id = len(self.param_groups)
        param_group["params"] = params
        for key, default in self.defaults.items():
            param_group.setdefault(key, default)
        lr = self._build_single_lr(param_group.get("lr"), "learning_rate_group_" + str(group_id))
        param_group["lr"] = lr
        param_group["weight_decay"] = self._preprocess_weight_decay(param_group.get("weight_decay", 0.0))
        self.param_groups.append(param_group)
        self.lrs.append(lr)
        setattr(self, lr.name, lr)  # registered with the Cell (trainable_params, checkpoints)
        self.group_start_id.append(self.group_start_id[-1] + len(params))
        self.parameters = ParameterTuple(tuple(self.parameters) + tuple(params))
        for attr, prefix, init, scalar in self._state_specs:
            new = self._new_state(params, prefix, init(param_group) if callable(init) else init, scalar)
            setattr(self, attr, ParameterTuple(tuple(getattr(self, attr)) + new))

    @staticmethod
    def _new_state(params, prefix, init, scalar):
        if scalar:  # one 0-d float32 value per parameter, named prefix_<name> (MindSpore's names)
            return tuple(Parameter(_kernels.full([], float(init), mstype.float32), prefix + "_" + p.name)
                         for p in params)
        return tuple(Parameter(initializer(init, p.shape, p.dtype), prefix + "." + p.name) for p in params)

    def _adam_state(self):
        """The state of Adam and AdamW, with MindSpore's names (so checkpoints load both ways): first and second
        moments and the AMSGrad maximum per parameter, and the Int32 step counter `state_step`."""
        self._param_state("exp_avg", "exp_avg")
        self._param_state("exp_avg_sq", "exp_avg_sq")
        self._param_state("max_exp_avg_sq", "max_exp_avg_sq")
        self.state_step = Parameter(_kernels.full([], 0, mstype.int32), "state_step")

    def _param_state(self, attr, prefix, init="zeros"):
        """Creates `self.<attr>`: a ParameterTuple of one state Parameter per parameter (its shape and dtype,
        filled by `init` — an initializer name or number, or a function of the parameter's group giving one —
        named `<prefix>.<name>`), extended by add_param_group."""
        self._state_specs.append((attr, prefix, init, False))
        state = []
        for group in self.param_groups:
            state.extend(self._new_state(group["params"], prefix, init(group) if callable(init) else init, False))
        setattr(self, attr, ParameterTuple(state))

    def _scalar_state(self, attr, prefix, value):
        """Creates `self.<attr>`: one 0-d float32 Parameter per parameter (named `<prefix>_<name>`)."""
        self._state_specs.append((attr, prefix, value, True))
        setattr(self, attr, ParameterTuple(self._new_state(self.parameters, prefix, value, True)))

    def _build_single_lr(self, learning_rate, name):
        if isinstance(learning_rate, Parameter):
            return learning_rate
        if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
            if learning_rate < 0:
                raise ValueError(f"For '{self.cls_name}', the 'learning rate' must be at least 0.0, but got "
                                 f"{learning_rate}.")
            return Parameter(_kernels.full([], float(learning_rate), mstype.float32), name)
        if isinstance(learning_rate, _Tensor):
            if learning_rate.ndim == 0:
                return Parameter(_kernels.cast(learning_rate, mstype.float32), name)
            raise ValueError(f"For '{self.cls_name}', if 'learning_rate' is a Tensor, then it should be a scalar "
                             f"Tensor, but got shape {tuple(learning_rate.shape)}.")
        raise TypeError(f"For '{self.cls_name}', the argument 'learning_rate' must be int, float or Tensor, but got "
                        f"{type(learning_rate)}.")

    def _preprocess_weight_decay(self, weight_decay):
        if isinstance(weight_decay, numbers.Real) and not isinstance(weight_decay, bool):
            weight_decay = float(weight_decay)
            if weight_decay < 0:
                raise ValueError(f"For '{self.cls_name}', the 'weight_decay' must be at least 0.0, but got "
                                 f"{weight_decay}.")
            return weight_decay
        raise TypeError(f"For '{self.cls_name}', the argument 'weight_decay' must be int or float, but got "
                        f"{type(weight_decay)}.")

    # ------------------------------------------------------------------------------ helpers for construct
    def _group_lr(self, group, dtype):
        """The group's lr as a 0-d Tensor of `dtype` (its Parameter, read when the update runs; a float set on the
        group by hand is a constant, as MindSpore's)."""
        lr = group["lr"]
        if not isinstance(lr, _Tensor):
            return _kernels.full([], float(lr), dtype)
        if lr.ndim:
            lr = _kernels.reshape(lr, [])
        return lr if lr.dtype == dtype else _kernels.cast(lr, dtype)

    @staticmethod
    def _prepared_gradient(param, grad, weight_decay=0.0, maximize=False):
        """The gradient in the parameter's dtype, negated for maximize, plus weight_decay·param (L2 decay; the
        first steps of MindSpore's experimental optimizers, as PyTorch's)."""
        if grad.dtype != param.dtype:
            grad = _kernels.cast(grad, param.dtype)
        if maximize:
            grad = _ops.neg(grad)
        if weight_decay != 0.0:
            grad = _ops.add(grad, _ops.mul(param, float(weight_decay)))
        return grad

    def _group_ranges(self):
        """(group, start, end) for each group: its params are parameters[start:end]."""
        ids = self.group_start_id
        return [(g, ids[i], ids[i + 1]) for i, g in enumerate(self.param_groups)]

    def _check_gradients(self, gradients):
        if not isinstance(gradients, (tuple, list)):
            raise TypeError(f"For '{self.cls_name}', the 'gradients' must be a tuple or list of Tensors (one per "
                            f"parameter, in the order of optimizer.parameters), but got {type(gradients).__name__}.")
        if len(gradients) != len(self.parameters):
            raise ValueError(f"For '{self.cls_name}', the number of gradients ({len(gradients)}) must be the same as "
                             f"the number of parameters ({len(self.parameters)}).")
        for i, (g, p) in enumerate(zip(gradients, self.parameters)):
            if not isinstance(g, _Tensor):
                raise TypeError(f"For '{self.cls_name}', gradient {i} (for parameter '{p.name}') must be a Tensor, "
                                f"but got {type(g).__name__}.")
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError(f"For '{self.cls_name}', gradient {i} has shape {tuple(g.shape)}, but its parameter "
                                 f"'{p.name}' has shape {tuple(p.shape)}.")

    def _hyper_key(self):
        return (len(self.parameters),
                tuple(tuple((k, _frozen(v)) for k, v in g.items() if k != "params") for g in self.param_groups))

    def _run_construct(self, args, kwargs):
        """The update is compiled once per gradient signature (as nn.Optimizer's), or traced inline when called
        inside a compiled function. The group options other than the lr Parameters are constants of the compiled
        update: when one changes (`param_groups[i]['weight_decay'] = 0.02`) or a group is added, it is compiled
        again."""
        if _engine.tracing():
            return self.construct(*args, **kwargs)
        d = self.__dict__
        key = self._hyper_key()
        if d["_hyper_seen"] != key:
            d["_jit_construct"] = None
            d["_hyper_seen"] = key
        return self._compiled_construct()(*args, **kwargs)

    def construct(self, *hyper_params):
        raise NotImplementedError(f"{type(self).__name__} is the base class of the experimental optimizers: a "
                                  f"subclass defines construct(gradients).")
