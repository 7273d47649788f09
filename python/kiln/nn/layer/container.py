"""Containers: SequentialCell (runs its cells in order), CellList (a list of cells), CellDict (a dict of cells),
as MindSpore's (../shared/reference/mindspore_api.md §3.4).

Children are keyed "0", "1", ... (or by the OrderedDict's keys); their Parameters are renamed "<prefix><key>.<path>"
where <prefix> is the container's own prefix (found from the names its children already carry, so that appending to
`net.seq` names the new weights `seq.2.weight`)."""
from collections import OrderedDict

from ..._loader import _core
from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _valid_cell(cell, op_name):
    if isinstance(cell, Cell):
        return True
    raise TypeError(f"For '{op_name}', each cell must be subclass of Cell, but got {type(cell).__name__}.")


def _valid_index(n, index, op_name):
    if isinstance(index, _core.Tensor):
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"For '{op_name}', the type of 'index' must be int or slice, but got "
                        f"{type(index).__name__}.")
    if not -n <= index < n:
        raise IndexError(f"For '{op_name}', the value range of 'index' must be [{-n}, {n}), but got {index}.")
    return index % n


def _prefix_and_depth(cells):
    """(prefix, depth): the name prefix the container's children carry ('' at top level, 'seq.' inside `seq`) and
    the number of name components before the child's key. Found from the first child that has a Parameter."""
    for key, cell in cells.items():
        if cell is None:
            continue
        for path, p in cell.parameters_and_names():
            parts = p.name.split(".")
            n_path = len(path.split("."))
            depth = len(parts) - n_path - 1
            if depth >= 0 and parts[depth] == key:
                prefix = ".".join(parts[:depth])
                return (prefix + "." if prefix else ""), depth
            return "", 0
    return "", 0


def _rename_child(cell, prefix, key):
    for path, p in cell.parameters_and_names():
        p.name = prefix + key + "." + path


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
        prefix, _ = _prefix_and_depth(self._cells)
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
        prefix, _ = _prefix_and_depth(self._cells)
        new = OrderedDict()
        dynamic = []
        for i, key in enumerate(keys):
            if i in drop:
                continue
            cell = self._cells[key]
            if self._is_dynamic_name[i]:
                new_key = str(len(new))
                if new_key != key:
                    _rename_child(cell, prefix, new_key)
                new[new_key] = cell
            else:
                new[key] = cell
            dynamic.append(self._is_dynamic_name[i])
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
        prefix, _ = _prefix_and_depth(self._cells)
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
            prefix, _ = _prefix_and_depth(self._cells)
            cell.update_parameters_name(prefix + str(index) + ".")
        self._register_cell(str(index), cell)

    def __delitem__(self, index):
        keys = list(self._cells.keys())
        if isinstance(index, slice):
            drop = set(range(len(keys))[index])
        else:
            drop = {_valid_index(len(keys), index, type(self).__name__)}
        prefix, _ = _prefix_and_depth(self._cells)
        new = OrderedDict()
        for i, key in enumerate(keys):
            if i in drop:
                continue
            cell = self._cells[key]
            new_key = str(len(new))
            if new_key != key and self._auto_prefix:
                _rename_child(cell, prefix, new_key)
            new[new_key] = cell
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
        cells.insert(index, cell)
        prefix, _ = _prefix_and_depth(self._cells) if n else ("", 0)
        new = OrderedDict()
        for i, c in enumerate(cells):
            key = str(i)
            if self._auto_prefix and (i >= index):
                _rename_child(c, prefix, key)
            new[key] = c
        self._replace_cells(new)

    def extend(self, cells):
        """Appends every cell of the list `cells`. Returns self."""
        name = type(self).__name__
        if not isinstance(cells, list):
            raise TypeError(f"For '{name}', the new cells wanted to append should be instance of list, but got "
                            f"{type(cells).__name__}.")
        prefix, _ = _prefix_and_depth(self._cells)
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
            prefix, _ = _prefix_and_depth(self._cells)
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
            prefix, _ = _prefix_and_depth(self._cells)
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
