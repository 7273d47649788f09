"""Cell buffers (MindSpore 2.10): `Cell.register_buffer`, `buffers`, `named_buffers`, `get_buffer`, and the
assignment of a `mindspore.common.parameter._Buffer` to a Cell attribute; attached to nn.Cell by kiln/nn/cell.py.

A buffer is a Tensor that is part of a Cell's state but not a Parameter (MindSpore's example: BatchNorm's running
mean): it is not in parameters_dict / get_parameters / trainable_params, so optimizers and gradients never see it,
and save_checkpoint does not write it (MindSpore 2.10 writes Parameters only); Cell.state_dict holds the
persistent ones (register_buffer(..., persistent=True), the default) and load_state_dict loads them. Reads in
construct (`self.running`) are attribute reads in both modes. A compiled graph reads the buffer tensor it was traced
with by reference (as other Tensor attributes): an in-place write into it (load_state_dict) is seen by the next
call; a buffer replaced by another tensor object afterwards (register_buffer again, `cell.name = _Buffer(...)`) is
not seen by the graphs already compiled. (MindSpore 2.10's CPU graph mode keeps the value it compiled with in both
cases.)

Storage (as Parameters, Note [attribute storage] in cell.py): `_buffers` (an ordered dict {name: Tensor or None},
made by the first register_buffer) is the source of truth, mirrored into the instance __dict__;
`_non_persistent_buffers` holds the names left out of state_dict. Assigning an existing buffer's name: None clears
it, a _Buffer replaces it, anything else raises TypeError (MindSpore 2.10's rule); `del cell.name` removes it.
"""
from collections import OrderedDict

from ..common.tensor import Tensor as _Tensor
from ..common.parameter import _Buffer


def _buffers(cell):
    return cell.__dict__.get("_buffers")


def register_buffer(self, name, tensor, persistent=True):
    """Adds the buffer `tensor` (a Tensor, or None: a slot left out of state_dict) under `name`: readable as
    `self.<name>`, listed by buffers()/named_buffers(), in state_dict when `persistent` (default True). Registering
    an existing buffer name again replaces it.

    Raises (MindSpore 2.10's messages):
        AttributeError: called before Cell.__init__().
        TypeError: name not a str; tensor neither a Tensor nor None.
        KeyError: name containing "." or empty; name of another attribute of the cell.
    """
    d = self.__dict__
    if "_params" not in d:
        raise AttributeError("cannot assign buffer before Cell.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"buffer name should be a string.But got this type: {type(name)}")
    if "." in name:
        raise KeyError('buffer name can\'t contain "."')
    if name == "":
        raise KeyError('buffer name can\'t be empty string ""')
    buffers = d.get("_buffers")
    if hasattr(self, name) and (buffers is None or name not in buffers):
        raise KeyError(f"attribute '{name}' already exists")
    if tensor is not None and not isinstance(tensor, _Tensor):
        raise TypeError(f"cannot assign '{type(tensor)}' object to buffer '{name}' (mindspore Tensor or None required)")
    if buffers is None:
        buffers = d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers"] = set()
    if tensor is not None:
        tensor._is_buffer = True
    buffers[name] = tensor
    d[name] = tensor
    if persistent:
        d["_non_persistent_buffers"].discard(name)
    else:
        d["_non_persistent_buffers"].add(name)


def assign(cell, name, value):
    """`cell.name = value` for a buffer name or a _Buffer value (MindSpore 2.10's Cell.__setattr__ rules)."""
    if isinstance(value, _Buffer):
        if name in cell.__dict__ and name not in (_buffers(cell) or ()):
            del cell.__dict__[name]
        register_buffer(cell, name, value)  # persistent=True: MindSpore 2.10 does not pass value.persistent here
        return
    if value is not None:
        raise TypeError(f"Buffer '{name}' already exists in network, can not assign this type: '{type(value)}' as "
                        "a buffer.")
    _buffers(cell)[name] = None
    cell.__dict__[name] = None


def delete(cell, name):
    """`del cell.name` for a buffer: removes it. Returns False when name is not a buffer."""
    buffers = _buffers(cell)
    if buffers is None or name not in buffers:
        return False
    del buffers[name]
    cell.__dict__.pop(name, None)
    cell.__dict__["_non_persistent_buffers"].discard(name)
    return True


def own_buffers(cell, persistent_only=False):
    """[(name, tensor)] of the cell's own non-None buffers, in registration order."""
    buffers = _buffers(cell)
    if not buffers:
        return []
    skip = cell.__dict__["_non_persistent_buffers"] if persistent_only else ()
    return [(n, b) for n, b in buffers.items() if b is not None and n not in skip]


def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
    """Yields (path, buffer) for this cell's buffers and (recurse=True) its sub-cells' ('net_b.buffer_b'), depth
    first, each cell's in registration order; `prefix` goes before every path; a buffer object held twice is
    yielded once unless remove_duplicate=False. None buffers are skipped."""
    cells = self.cells_and_names(name_prefix=prefix) if recurse else [(prefix, self)]
    seen = set()
    for cell_name, cell in cells:
        for name, buf in own_buffers(cell):
            if remove_duplicate:
                if id(buf) in seen:
                    continue
                seen.add(id(buf))
            yield (cell_name + "." + name if cell_name else name), buf


def buffers(self, recurse=True):
    """Yields the buffers of named_buffers(recurse=recurse)."""
    for _, buf in named_buffers(self, recurse=recurse):
        yield buf


def get_buffer(self, target):
    """The buffer at the dotted path `target` ('net_b.net_c.buffer_c').

    Raises AttributeError when a cell on the path, or the attribute, does not exist, or the attribute is not a
    buffer (MindSpore's messages)."""
    cell_path, _, buffer_name = target.rpartition(".")
    cell = self
    if cell_path:
        for part in cell_path.split("."):
            children = cell.__dict__["_cells"]
            if part not in children or children[part] is None:
                raise AttributeError(f"{type(cell).__name__} has no attribute `{part}`")
            cell = children[part]
    if not hasattr(cell, buffer_name):
        raise AttributeError(f"{type(cell).__name__} has no attribute `{buffer_name}`")
    if buffer_name not in (_buffers(cell) or ()):
        raise AttributeError(f"`{buffer_name}` is not a buffer")
    return getattr(cell, buffer_name)
