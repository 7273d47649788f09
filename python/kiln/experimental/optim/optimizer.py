"""The base of kiln.experimental.optim (MindSpore's mindspore.experimental.optim.Optimizer): PyTorch-style
parameter groups.

    opt = AdamW([{"params": decay_params, "weight_decay": 0.01},
                 {"params": no_decay_params, "weight_decay": 0.0}], lr=1e-3)
    opt(grads)          # grads aligned with opt.parameters (the groups' params, in order)

Each group is a dict holding its 'params' and every option of `defaults` (filled in when missing); its 'lr' is stored
as a 0-d float32 Parameter named `learning_rate_group_<i>` (so a scheduler can change it in place, also between
compiled steps), its 'weight_decay' as a float. The update is compiled once per gradient signature, like
nn.Optimizer's.
"""
from collections import defaultdict
import numbers

from ..._loader import _core
from ...common import dtype as mstype
from ...common._format import shortest_float
from ...common.parameter import Parameter, ParameterTuple
from ...nn.cell import Cell
from ...nn.optim.optimizer import Optimizer as _NnOptimizer

__all__ = ["Optimizer"]


class Optimizer(Cell):
    """Base class of the experimental optimizers.

    Args:
        params: an iterable of Parameters, or of dicts each with 'params' (a Parameter or an ordered iterable of
            them) and per-group options.
        defaults (dict): the default options (used where a group does not set them).
    Attributes: param_groups (list of dicts), parameters (ParameterTuple, the groups' params in order),
        group_start_id (the index in `parameters` where each group starts, plus the total), defaults, state.
    Raises:
        ValueError: params None or empty; a parameter in two groups; a negative lr or weight_decay; a non-0-d lr
            Tensor.
        TypeError: params not iterable; a group not a dict; a set of params; a non-Parameter param; lr or
            weight_decay of another type.
    """

    def __init__(self, params, defaults):
        super().__init__(auto_prefix=False)
        groups = self._parameters_base_check(params, "params")
        self.__dict__["defaults"] = defaults
        self.__dict__["state"] = defaultdict(dict)
        self.__dict__["param_groups"] = []
        self.__dict__["group_start_id"] = [0]
        self.__dict__["_plist"] = []
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for i, group in enumerate(groups):
            self.add_param_group(i, group)
            self.group_start_id.append(self.group_start_id[-1] + len(group["params"]))
        self.parameters = ParameterTuple(self._plist)
        for group in self.param_groups:  # register the lr Parameters with the Cell
            lr = group["lr"]
            setattr(self, lr.name, lr)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key == "params":
                    continue
                val = group[key]
                if key == "lr" and isinstance(val, Parameter):  # float32: shortest form (0.1, not 0.100000001)
                    val = shortest_float(val.asnumpy().item(), str(val.dtype))
                lines.append(f"    {key}: {val}")
        lines.append(")")
        return "\n".join(lines)

    # The same argument checks (and messages) as kiln.nn.Optimizer.
    _parameters_base_check = staticmethod(_NnOptimizer._parameters_base_check)

    def add_param_group(self, group_id, param_group):
        """Adds `param_group` (a dict with 'params') as group `group_id`, filling in the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"Param group must be a dict, but got {type(param_group).__name__}.")
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
                raise TypeError(f"Optimizer can only optimize Parameters, but one of the params is "
                                f"{type(p).__name__}.")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group.")
        param_group["params"] = params
        for key, default in self.defaults.items():
            param_group.setdefault(key, default)
        param_group["lr"] = self._build_single_lr(param_group.get("lr"), "learning_rate_group_" + str(group_id))
        param_group["weight_decay"] = self._preprocess_weight_decay(param_group.get("weight_decay", 0.0))
        self.param_groups.append(param_group)
        self._plist.extend(params)

    def _build_single_lr(self, learning_rate, name):
        if isinstance(learning_rate, Parameter):
            return learning_rate
        if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
            if learning_rate < 0:
                raise ValueError(f"For '{self.cls_name}', the 'learning rate' must be at least 0.0, but got "
                                 f"{learning_rate}.")
            return Parameter(_core.full([], float(learning_rate), mstype.float32), name)
        if isinstance(learning_rate, _core.Tensor):
            if learning_rate.ndim == 0:
                return Parameter(_core.cast(learning_rate, mstype.float32), name)
            raise ValueError("For 'Optimizer', if 'learning_rate' is a Tensor, then it should be scalar Tensor")
        raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be int, float or Tensor, but got "
                        f"{type(learning_rate)}.")

    def _preprocess_weight_decay(self, weight_decay):
        if isinstance(weight_decay, numbers.Real) and not isinstance(weight_decay, bool):
            weight_decay = float(weight_decay)
            if weight_decay < 0:
                raise ValueError(f"For '{self.cls_name}', the 'weight_decay' must be at least 0.0, but got "
                                 f"{weight_decay}.")
            return weight_decay
        raise TypeError(f"For 'Optimizer', the argument 'Weight_decay' must be int or float.but got "
                        f"{type(weight_decay)}")

    def _check_gradients(self, gradients):
        if not isinstance(gradients, (tuple, list)):
            raise TypeError(f"For '{self.cls_name}', the 'gradients' must be a tuple or list of Tensors (one per "
                            f"parameter, in the order of optimizer.parameters), but got {type(gradients).__name__}.")
        if len(gradients) != len(self.parameters):
            raise ValueError(f"For '{self.cls_name}', the number of gradients ({len(gradients)}) must be the same as "
                             f"the number of parameters ({len(self.parameters)}).")
        for i, (g, p) in enumerate(zip(gradients, self.parameters)):
            if not isinstance(g, _core.Tensor):
                raise TypeError(f"For '{self.cls_name}', gradient {i} (for parameter '{p.name}') must be a Tensor, "
                                f"but got {type(g).__name__}.")
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError(f"For '{self.cls_name}', gradient {i} has shape {tuple(g.shape)}, but its parameter "
                                 f"'{p.name}' has shape {tuple(p.shape)}.")

    def _run_construct(self, args, kwargs):
        """The update is compiled once per gradient signature (as nn.Optimizer's), or traced inline when called
        inside a compiled function."""
        if _core.tracing():
            return self.construct(*args, **kwargs)
        return self._compiled_construct()(*args, **kwargs)

    def construct(self, *hyper_params):
        raise NotImplementedError(f"{type(self).__name__}.construct is not implemented.")
