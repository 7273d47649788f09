"""Containers: SequentialCell (runs its cells in order), CellList (a list of cells), CellDict (a dict of cells),
as MindSpore's (../shared/reference/mindspore_api.md §3.4).

Children are keyed "0", "1", ... (or by the OrderedDict's keys); their Parameters are renamed "<prefix><key>.<path>"
where <prefix> is the container's own prefix, found from the names its children already carry (so that appending to
`net.seq` names the new weights `seq.2.weight`) by MindSpore 2.10's rule, quirks included, so that checkpoints written
by MindSpore load by name (see _prefix_and_index)."""
from collections import OrderedDict

from ...common.tensor import Tensor as _Tensor
from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _valid_cell(cell, op_name):
    if isinstance(cell, Cell):
        return True
    raise TypeError(f"For '{op_name}', each cell must be subclass of Cell, but got {type(cell).__name__}.")


def _valid_index(n, index, op_name):
    if isinstance(index, _Tensor):
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"For '{op_name}', the type of 'index' must be int or slice, but got "
                        f"{type(index).__name__}.")
    if not -n <= index < n:
        raise IndexError(f"For '{op_name}', the value range of 'index' must be [{-n}, {n}), but got {index}.")
    return index % n


def _prefix_and_index(cells):
    """(prefix, index): the name prefix of the container's children and the position of a child's key in its
    Parameters' names, by MindSpore 2.10's rule (mindspore/nn/layer/container.py, _get_prefix_and_index), which
    Kiln follows exactly because a checkpoint's names come from it.

    The first Parameter of the first child that has one (key k1) is split at '.'; every component equal to k1 is a
    candidate position, and the LAST candidate is taken unless the first Parameter of the next child with one (key
    k2) has k2 at an earlier candidate, which is then taken. So a container built empty and filled by append names
    the second child of a nested list `0.blocks.1.blocks.0.weight` (its first child's names `0.blocks.0.weight`
    contain the key '0' twice), as MindSpore does. Where the second name is shorter than a candidate position
    MindSpore raises IndexError (a tree it cannot build); Kiln then uses the first child's path instead (_by_path)."""
    first = second = None
    for key, cell in cells.items():
        if cell is None:
            continue
        param = next((p for _, p in cell.parameters_and_names()), None)
        if param is None:
            continue
        if first is None:
            first = (key, param.name)
            continue
        second = (key, param.name)
        break
    if first is None:
        return "", 0
    prefix, index = "", 0
    parts = first[1].split(".")
    other = second[1].split(".") if second is not None else None
    for idx, part in enumerate(parts):
        if part == first[0]:
            prefix = ".".join(parts[:idx])
            prefix = prefix + "." if prefix else prefix
            index = idx
            if other is not None:
                if idx >= len(other):
                    return _by_path(cells)
                if other[idx] == second[0]:
                    break
    return prefix, index


def _by_path(cells):
    """(prefix, index) from the first child with a Parameter: its name ends with the Parameter's path inside the
    child, after the child's key; ("", 0) when it does not."""
    for key, cell in cells.items():
        if cell is None:
            continue
        for path, p in cell.parameters_and_names():
            parts = p.name.split(".")
            index = len(parts) - len(path.split(".")) - 1
            if index >= 0 and parts[index] == key:
                prefix = ".".join(parts[:index])
                return (prefix + "." if prefix else ""), index
            return "", 0
    return "", 0


def _rekey_child(cell, prefix, key, key_index):
    """Renames a moved child's Parameters as MindSpore 2.10 does: prefix + key + what follows the old key (the name
    components after position key_index)."""
    for _, p in cell.parameters_and_names():
        p.name = prefix + key + "." + ".".join(p.name.split(".")[key_index + 1:])


class SequentialCell(Cell):
    """Runs cells one after another: `construct(x)` feeds x to the first cell, its output to the next, ...

    SequentialCell(cell0, cell1, ...), SequentialCell([cell0, cell1]), SequentialCell(OrderedDict(name=cell)) or
    SequentialCell(cell). Children are named "0", "1", ... (or by the dict keys) and their Parameters renamed
    "0.weight", .... Supports len, indexing (a slice gives a new SequentialCell), `del`, item assignment, append.

    Raises:
        TypeError: an element is not a Cell; a single argument that is not a list, OrderedDict or Cell.
    """

    def __init__(self, *args):
        super().__init__()
        self.__dict__["_is_dynamic_name"] = []
        if len(args) == 1 and not isinstance(args[0], Cell):
            cells = args[0]
            if isinstance(cells, list):
                items = [(str(i), c) for i, c in enumerate(cells)]
                dynamic = True
            elif isinstance(cells, (OrderedDict, dict)):
                items = list(cells.items())
                dynamic = False
            else:
                raise TypeError(f"For '{type(self).__name__}', the 'args[0]' must be list or orderedDict, but got "
                                f"{type(cells).__name__}.")
        else:
            items = [(str(i), c) for i, c in enumerate(args)]
            dynamic = True
        for key, cell in items:
            _valid_cell(cell, type(self).__name__)
            self.insert_child_to_cell(key, cell)
            cell.update_parameters_name(key + ".")
            self._is_dynamic_name.append(dynamic)
        self.__dict__["cell_list"] = list(self._cells.values())

    def _sync(self):
        self.__dict__["cell_list"] = [c for c in self._cells.values()]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._cells.items())[index]))
        index = _valid_index(len(self), index, type(self).__name__)
        return list(self._cells.values())[index]

    def __setitem__(self, index, cell):
        name = type(self).__name__
        _valid_cell(cell, name)
        prefix, _ = _prefix_and_index(self._cells)
        index = _valid_index(len(self), index, name)
        key = list(self._cells.keys())[index]
        self._register_cell(key, cell)
        cell.update_parameters_name(prefix + key + ".")
        self._sync()

    def __delitem__(self, index):
        name = type(self).__name__
        keys = list(self._cells.keys())
        if isinstance(index, slice):
            drop = set(range(len(keys))[index])
        else:
            drop = {_valid_index(len(keys), index, name)}
        kept = OrderedDict((key, self._cells[key]) for i, key in enumerate(keys) if i not in drop)
        dynamic = [d for i, d in enumerate(self._is_dynamic_name) if i not in drop]
        prefix, key_index = _prefix_and_index(kept)
        new = OrderedDict()
        for i, (key, cell) in enumerate(kept.items()):
            if dynamic[i]:  # every numbered child is renamed (MindSpore 2.10), moved or not
                _rekey_child(cell, prefix, str(i), key_index)
                new[str(i)] = cell
            else:
                new[key] = cell
        self._replace_cells(new)
        self.__dict__["_is_dynamic_name"] = dynamic
        self._sync()

    def __len__(self):
        return len(self._cells)

    def __bool__(self):
        return len(self._cells) != 0

    def __iter__(self):
        return iter(list(self._cells.values()))

    def append(self, cell):
        """Appends a cell (named str(len(self)), Parameters renamed accordingly). Returns self."""
        _valid_cell(cell, type(self).__name__)
        prefix, _ = _prefix_and_index(self._cells)
        key = str(len(self))
        cell.update_parameters_name(prefix + key + ".")
        self._is_dynamic_name.append(True)
        self._register_cell(key, cell)
        self._sync()
        return self

    def construct(self, input_data):
        for cell in self.cell_list:
            input_data = cell(input_data)
        return input_data


class CellList(Cell):
    """A list of cells (append, extend, insert, +=, indexing, iteration, len). Children are named "0", "1", ...
    and their Parameters renamed accordingly (unless auto_prefix=False). A CellList is not callable: its
    construct raises NotImplementedError.

    Raises:
        TypeError: an element is not a Cell, or extend() gets something other than a list.
    """

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        if kwargs:
            raise TypeError(f"CellList got unexpected keyword arguments {sorted(kwargs)}.")
        super().__init__(auto_prefix)
        if len(args) == 1:
            self.extend(args[0])
        elif len(args) > 1:
            raise TypeError(f"CellList takes at most one argument (a list of cells), but got {len(args)}.")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._cells.values())[index])
        index = _valid_index(len(self), index, type(self).__name__)
        return self._cells[str(index)]

    def __setitem__(self, index, cell):
        name = type(self).__name__
        _valid_cell(cell, name)
        index = _valid_index(len(self), index, name)
        if self._auto_prefix:
            prefix, _ = _prefix_and_index(self._cells)
            cell.update_parameters_name(prefix + str(index) + ".")
        self._register_cell(str(index), cell)

    def __delitem__(self, index):
        keys = list(self._cells.keys())
        if isinstance(index, slice):
            drop = set(range(len(keys))[index])
        else:
            drop = {_valid_index(len(keys), index, type(self).__name__)}
        kept = [self._cells[key] for i, key in enumerate(keys) if i not in drop]
        prefix, key_index = _prefix_and_index(OrderedDict(  # the remaining children under their old keys
            (key, self._cells[key]) for i, key in enumerate(keys) if i not in drop))
        new = OrderedDict()
        for i, cell in enumerate(kept):
            if self._auto_prefix:  # every child is renamed (MindSpore 2.10), moved or not
                _rekey_child(cell, prefix, str(i), key_index)
            new[str(i)] = cell
        self._replace_cells(new)

    def __len__(self):
        return len(self._cells)

    def __bool__(self):
        return len(self._cells) != 0

    def __iter__(self):
        return iter(list(self._cells.values()))

    def __iadd__(self, cells):
        self.extend(cells)
        return self

    def insert(self, index, cell):
        """Inserts `cell` before position `index` (children after it are renumbered)."""
        name = type(self).__name__
        _valid_cell(cell, name)
        n = len(self)
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"For '{name}', the type of 'index' must be int, but got {type(index).__name__}.")
        if not -n <= index <= n:
            raise IndexError(f"For '{name}', the value range of 'index' must be [{-n}, {n}], but got {index}.")
        index = index + n if index < 0 else index
        cells = list(self._cells.values())
        prefix, key_index = _prefix_and_index(self._cells)
        if self._auto_prefix:  # the children after `index` move up one key (renamed from their old names' tails)
            for i in range(n - 1, index - 1, -1):
                _rekey_child(cells[i], prefix, str(i + 1), key_index)
            cell.update_parameters_name(prefix + str(index) + ".")
        cells.insert(index, cell)
        self._replace_cells(OrderedDict((str(i), c) for i, c in enumerate(cells)))

    def extend(self, cells):
        """Appends every cell of the list `cells`. Returns self."""
        name = type(self).__name__
        if not isinstance(cells, list):
            raise TypeError(f"For '{name}', the new cells wanted to append should be instance of list, but got "
                            f"{type(cells).__name__}.")
        prefix, _ = _prefix_and_index(self._cells)
        for cell in cells:
            _valid_cell(cell, name)
            key = str(len(self))
            if self._auto_prefix:
                cell.update_parameters_name(prefix + key + ".")
            self._register_cell(key, cell)
        return self

    def append(self, cell):
        """Appends one cell."""
        _valid_cell(cell, type(self).__name__)
        key = str(len(self))
        if self._auto_prefix:
            prefix, _ = _prefix_and_index(self._cells)
            cell.update_parameters_name(prefix + key + ".")
        self._register_cell(key, cell)

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container of cells and can not be called; call its elements.")


class CellDict(Cell):
    """An ordered dict of cells {name: cell}; Parameters are renamed "<name>.<path>" (unless auto_prefix=False).
    Not callable (construct raises NotImplementedError).

    Raises:
        TypeError: a key that is not a str or a value that is not a Cell.
        KeyError: an empty key or one containing '.'.
    """

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        super().__init__(auto_prefix)
        if len(args) == 1:
            self.update(args[0])
        elif len(args) > 1:
            raise TypeError(f"CellDict takes at most one argument, but got {len(args)}.")
        if kwargs:
            self.update(kwargs)

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        name = type(self).__name__
        if not isinstance(key, str):
            raise TypeError(f"For '{name}', the type of key must be str, but got {type(key).__name__}.")
        _valid_cell(cell, name)
        if key in self._cells:
            self._unregister(key)
        if self._auto_prefix:
            prefix, _ = _prefix_and_index(self._cells)
            cell.update_parameters_name(prefix + key + ".")
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, key):
        if key not in self._cells:
            raise KeyError(key)
        self._unregister(key)

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells.keys()))

    def __contains__(self, key):
        return key in self._cells

    def clear(self):
        for k in list(self._cells):
            self._unregister(k)

    def pop(self, key):
        cell = self[key]
        del self[key]
        return cell

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def update(self, cells):
        """Adds the (key, cell) pairs of a dict / OrderedDict / CellDict or an iterable of pairs."""
        if isinstance(cells, (dict, CellDict)):
            pairs = list(cells.items())
        else:
            pairs = []
            for i, kv in enumerate(cells):
                if not isinstance(kv, (tuple, list)) or len(kv) != 2:
                    raise ValueError(f"For '{type(self).__name__}', element {i} of the update sequence must be a "
                                     "(key, cell) pair.")
                pairs.append(tuple(kv))
        for k, c in pairs:
            self[k] = c

    def construct(self, *inputs):
        raise NotImplementedError("CellDict is a container of cells and can not be called; call its elements.")
