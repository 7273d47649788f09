"""Cell.state_dict / load_state_dict / to: MindSpore 2.10's PyTorch-style state methods (their messages and return
structures are MindSpore's; checked against MindSpore 2.10). Keys are attribute paths ('fc.weight',
'bn.moving_mean'), as Cell.parameters_and_names gives them. The state is the Parameters and the persistent buffers
(Cell.register_buffer, nn/_cell_buffers.py): for each cell, depth first, its own Parameters and then its own
buffers, as MindSpore 2.10 orders them."""
import collections
from collections import OrderedDict

import numpy as np

from ..common.tensor import Tensor as _Tensor
from ..ops import _kernels
from ..common import dtype as mstype


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result: the keys the cell expected but did not get, and the keys it got but does not have."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def state_dict(cell, *args, destination=None, prefix="", keep_vars=False):
    """{path: Parameter} of `cell` and its sub-cells (an OrderedDict, or `destination` updated and returned), keys
    prefixed by `prefix`. The values are the Parameters themselves (references), also with keep_vars=False, as
    MindSpore 2.10 returns them. Positional arguments mean (destination, prefix, keep_vars) (deprecated there)."""
    if args:
        names = ("destination", "prefix", "keep_vars")
        if len(args) > 3:
            raise TypeError(f"For 'state_dict', at most 3 positional arguments, but got {len(args)}.")
        values = dict(zip(names, args))
        destination = values.get("destination", destination)
        prefix = values.get("prefix", prefix)
        keep_vars = values.get("keep_vars", keep_vars)
    if not isinstance(prefix, str):
        raise TypeError(f"For 'state_dict', 'prefix' must be a str, but got {type(prefix).__name__}.")
    out = OrderedDict() if destination is None else destination
    for name, value in _state_items(cell):
        out[prefix + name] = value
    return out


def _state_items(cell):
    """[(path, Parameter or buffer)]: each cell's own Parameters (paths as parameters_and_names gives them, each
    Parameter once) and then its own persistent buffers, cell by cell depth first (MindSpore's order)."""
    from ._cell_buffers import own_buffers
    params = cell.parameters_and_names()
    if not any(own_buffers(c, persistent_only=True) for _, c in cell.cells_and_names()):
        return list(params)  # no buffers: the Parameters, as before
    by_id = {id(p): name for name, p in params}
    items, seen = [], set()
    for cell_name, sub in cell.cells_and_names():
        for _, p in sub.parameters_and_names(expand=False):
            if id(p) in by_id and id(p) not in seen:
                seen.add(id(p))
                items.append((by_id[id(p)], p))
        for name, buf in own_buffers(sub, persistent_only=True):
            items.append((cell_name + "." + name if cell_name else name, buf))
    return items


def _as_array(value, key):
    if isinstance(value, _Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
        from ..common.tensor import Tensor
        return Tensor(np.asarray(value))
    raise TypeError(f"For 'load_state_dict', the value of '{key}' must be a Tensor, Parameter or NumPy array, but got "
                    f"{type(value).__name__}.")


def load_state_dict(cell, state_dict, strict=True):
    """Copies the values of `state_dict` ({path: Tensor/Parameter/array}, e.g. from state_dict()) into the cell's
    Parameters and persistent buffers of the same paths, in place (cast to each one's dtype). Nothing is copied
    unless every matched shape is right. Returns _IncompatibleKeys(missing_keys, unexpected_keys).

    Raises:
        TypeError: state_dict is not a mapping, or a value is not a Tensor/array.
        RuntimeError: a matched key with another shape; with strict=True, any missing or unexpected key (MindSpore's
            "Error(s) in loading state_dict for <Cell>" message).
    """
    if not isinstance(state_dict, collections.abc.Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    own = state_dict_of = OrderedDict(_state_items(cell))
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    errors = []
    updates = []
    for key, param in state_dict_of.items():
        if key not in state_dict:
            continue
        value = _as_array(state_dict[key], key)
        if tuple(value.shape) != tuple(param.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from checkpoint, "
                          f"the shape in current model is {tuple(param.shape)}.")
            continue
        updates.append((param, value))
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(cell).__name__}:\n\t" + "\n\t".join(errors))
    for param, value in updates:
        _kernels.assign(param, value if value.dtype == param.dtype else _kernels.cast(value, param.dtype))
    return _IncompatibleKeys(missing, unexpected)


_DEVICES = ("CPU", "cpu")


def _parse_to_args(args, kwargs):
    """(device, dtype, non_blocking) from the three forms to(device=None, dtype=None, non_blocking=False),
    to(dtype, non_blocking=False), to(tensor, non_blocking=False)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    if kwargs:
        raise TypeError(f"Cell.to() got unexpected keyword argument(s) {sorted(kwargs)}.")
    rest = list(args)
    if rest and isinstance(rest[0], _Tensor):
        t = rest.pop(0)
        dtype = t.dtype
    elif rest and isinstance(rest[0], str):
        device = rest.pop(0)
        if rest and isinstance(rest[0], mstype.Type):
            dtype = rest.pop(0)
    elif rest and isinstance(rest[0], mstype.Type):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"Cell.to() received an invalid combination of arguments: {args!r}; expected to(device=None, "
                        f"dtype=None, non_blocking=False), to(dtype, non_blocking=False) or to(tensor, "
                        f"non_blocking=False).")
    return device, dtype, non_blocking


def to(cell, *args, **kwargs):
    """Casts the floating-point Parameters of `cell` and its sub-cells to `dtype` in place (integer and bool ones
    are kept; floating buffers are replaced by cast copies, as MindSpore does) and checks `device` (Kiln's CPU
    build has the 'CPU' device). References to the Parameters (an optimizer's) see the new values. Returns the
    cell.

    Raises:
        TypeError: a dtype that is not floating point; arguments that match none of the forms.
        RuntimeError: a device this build does not have ('GPU', 'Ascend').
    """
    device, dtype, _ = _parse_to_args(args, dict(kwargs))
    if device is not None:
        name = device.split(":")[0]
        if name not in _DEVICES:
            raise RuntimeError(f"Cell.to: device '{device}' is not available: this Kiln build runs on 'CPU'.")
    if dtype is not None:
        if not mstype.is_float(dtype):
            raise TypeError(f"Cell.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
        changed = False
        for _, p in cell.parameters_and_names():
            if mstype.is_float(p.dtype) and p.dtype != dtype:
                p._rebind(_kernels.cast(p, dtype))
                changed = True
        from ._cell_buffers import own_buffers, register_buffer
        for _, sub in cell.cells_and_names():  # floating buffers: replaced by cast copies, as MindSpore's _apply
            persistent_off = sub.__dict__.get("_non_persistent_buffers", ())
            for name, buf in own_buffers(sub):
                if mstype.is_float(buf.dtype) and buf.dtype != dtype:
                    register_buffer(sub, name, _kernels.cast(buf, dtype), persistent=name not in persistent_off)
                    changed = True
        if changed:
            from .._compiler.guards import _bump_train_state
            _bump_train_state()  # compiled graphs captured the old dtypes
    return cell
