"""Pipeline operations that reorder, select or combine rows: shuffle, repeat, project, rename, zip, concat, take,
skip, split."""
import copy
import numbers

import numpy as np

from .. import config
from ..samplers import RandomSampler, SequentialSampler, SubsetRandomSampler, SubsetSampler
from ._common import INT32_MAX, ColumnError, check_int, column_list, same_type
from .datasets import Dataset, _check_count


class ShuffleDataset(Dataset):
    """The result of `Dataset.shuffle` (MindSpore's buffer shuffle): the first `buffer_size` rows fill a buffer;
    each output is a uniformly drawn buffer slot, which the next input row then takes (once the input is exhausted,
    the slot is filled by the last buffered row). New random order every epoch."""

    def __init__(self, child, buffer_size):
        super().__init__([child])
        self.buffer_size = check_int("shuffle", "buffer_size", buffer_size, 2, INT32_MAX)
        from .sync import sync_notifiers
        if sync_notifiers(child):
            raise RuntimeError("No shuffle after sync operators.")  # MindSpore's rule and words

    def _compute_size(self):
        return self.children[0].get_dataset_size()

    def is_shuffled(self):
        return True

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        rng = ctx.rng()
        size = self.buffer_size

        def epoch():
            buf = []
            for row in child_epoch():
                if len(buf) < size:
                    buf.append(row)
                    continue
                k = int(rng.integers(len(buf)))
                out, buf[k] = buf[k], row
                yield out
            while buf:
                k = int(rng.integers(len(buf)))
                out = buf[k]
                buf[k] = buf[-1]
                buf.pop()
                yield out

        return epoch


class RepeatDataset(Dataset):
    """The result of `Dataset.repeat`."""

    def __init__(self, child, count=None):
        super().__init__([child])
        self.count = _check_count("repeat", count)

    def get_repeat_count(self):
        return self.count

    def _infinite(self):
        return self.count == -1 or self.children[0]._infinite()

    def _compute_size(self):
        n = self.children[0].get_dataset_size()
        return n if self.count == -1 else n * self.count  # an infinite repeat reports one pass (as MindSpore)

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        count = self.count

        def epoch():
            k = 0
            while count == -1 or k < count:
                k += 1
                any_row = False
                for row in child_epoch():
                    any_row = True
                    yield row
                if not any_row:  # an empty input repeated forever would spin without ever yielding
                    return

        return epoch


class ProjectDataset(Dataset):
    """The result of `Dataset.project`."""

    def __init__(self, child, columns):
        super().__init__([child])
        self.columns = column_list("project", "columns", columns, allow_none=False)
        cols = child.get_col_names()
        for c in self.columns:
            if c not in cols:
                raise ColumnError(f"project: column {c!r} does not exist; the dataset's columns are {cols}.")
        self._idx = [cols.index(c) for c in self.columns]

    def get_col_names(self):
        return list(self.columns)

    def _compute_size(self):
        return self.children[0].get_dataset_size()

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        idx = self._idx
        return lambda: (tuple(row[i] for i in idx) for row in child_epoch())


class RenameDataset(Dataset):
    """The result of `Dataset.rename`."""

    def __init__(self, child, input_columns, output_columns):
        super().__init__([child])
        ic = column_list("rename", "input_columns", input_columns, allow_none=False)
        oc = column_list("rename", "output_columns", output_columns, allow_none=False)
        if len(ic) != len(oc):
            raise ValueError(f"rename: input_columns {ic} and output_columns {oc} must have the same length.")
        cols = child.get_col_names()
        for c in ic:
            if c not in cols:
                raise ColumnError(f"rename: column {c!r} does not exist; the dataset's columns are {cols}.")
        m = dict(zip(ic, oc))
        self._cols = [m.get(c, c) for c in cols]
        if len(set(self._cols)) != len(self._cols):
            raise ValueError(f"rename: the result {self._cols} has duplicate column names.")

    def get_col_names(self):
        return list(self._cols)

    def _compute_size(self):
        return self.children[0].get_dataset_size()


class ZipDataset(Dataset):
    """The result of `Dataset.zip` / `kiln.dataset.zip`: rows side by side, as many as the shortest input."""

    def __init__(self, datasets):
        for d in datasets:
            if not isinstance(d, Dataset):
                raise TypeError(f"zip: every input must be a Dataset, but got {type(d).__name__}.")
        super().__init__(datasets)
        cols = [c for d in datasets for c in d.get_col_names()]
        dup = sorted({c for c in cols if cols.count(c) > 1})
        if dup:
            raise ColumnError(f"zip: Invalid data, duplicate column {dup[0]} already exists when zipping datasets; "
                             "rename the columns first.")
        self._cols = cols

    def get_col_names(self):
        return list(self._cols)

    def _infinite(self):
        return all(d._infinite() for d in self.children)

    def _compute_size(self):
        finite = [d for d in self.children if not d._infinite()]  # an endless input never is the shortest
        return min(d.get_dataset_size() for d in (finite or self.children))

    def _make(self, ctx):
        fns = [d._make(ctx) for d in self.children]

        def epoch():
            gens = [f() for f in fns]
            try:
                for parts in zip(*gens):
                    yield tuple(a for p in parts for a in p)
            finally:
                for g in gens:
                    g.close()

        return epoch


class ConcatDataset(Dataset):
    """The result of `Dataset.concat` / `+`: the inputs' rows one after the other."""

    def __init__(self, datasets):
        for d in datasets:
            if not isinstance(d, Dataset):
                raise TypeError(f"concat: every input must be a Dataset, but got {type(d).__name__}.")
        super().__init__(datasets)
        first = datasets[0].get_col_names()
        for d in datasets[1:]:
            if d.get_col_names() != first:
                raise ValueError(f"concat: the column names of the datasets must be the same, but got {first} and "
                                 f"{d.get_col_names()}.")

    def _infinite(self):
        return any(d._infinite() for d in self.children)

    def _compute_size(self):
        return sum(d.get_dataset_size() for d in self.children)

    def _make(self, ctx):
        fns = [d._make(ctx) for d in self.children]
        names = self.get_col_names()

        def epoch():
            types = None
            for k, f in enumerate(fns):
                checked = False
                for row in f():
                    if not checked:  # each input's first row: its column types must match the first input's
                        checked = True
                        if types is None:
                            types = [_col_type(a) for a in row]
                        else:
                            _check_concat_types(names, types, row, k)
                    yield row

        return epoch


def _col_type(a):
    return np.dtype(object) if isinstance(a, dict) else a.dtype  # a dict: a Python-object column


def _check_concat_types(names, types, row, k):
    for name, t, a in zip(names, types, row):
        if not same_type(_col_type(a), t):
            raise RuntimeError(f"concat: column {name!r} is {t} in the first dataset but {_col_type(a)} in dataset {k}; "
                               "the datasets' columns must have the same types (cast with map(TypeCast) first).")


class TakeDataset(Dataset):
    """The result of `Dataset.take`."""

    def __init__(self, child, count=-1):
        super().__init__([child])
        self.count = _check_count("take", count, allow_minus_one=True)

    def _infinite(self):
        return self.count == -1 and self.children[0]._infinite()

    def _compute_size(self):
        if self.count != -1 and self.children[0]._infinite():
            return self.count  # take(n) of an endless input gives n rows
        n = self.children[0].get_dataset_size()
        return n if self.count == -1 else min(n, self.count)

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        count = self.count

        def epoch():
            if count == -1:
                yield from child_epoch()
                return
            if count == 0:
                return
            gen = child_epoch()
            try:
                for k, row in enumerate(gen, 1):
                    yield row
                    if k >= count:
                        return
            finally:
                gen.close()

        return epoch


class SkipDataset(Dataset):
    """The result of `Dataset.skip`."""

    def __init__(self, child, count):
        super().__init__([child])
        self.count = _check_count("skip", count, allow_minus_one=False, lo=0)

    def _compute_size(self):
        return max(0, self.children[0].get_dataset_size() - self.count)

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        count = self.count

        def epoch():
            for k, row in enumerate(child_epoch()):
                if k >= count:
                    yield row

        return epoch


class _PickDataset(Dataset):
    """Rows of the input at the given positions of each epoch, in the order of `positions` (split of a pipeline; with
    randomize the positions come in random order, so the split's rows do too, as MindSpore). Rows that arrive before
    their turn are held (at most the split's own rows)."""

    def __init__(self, child, positions):
        super().__init__([child])
        self.order = [int(p) for p in positions]
        self.positions = frozenset(self.order)

    def _compute_size(self):
        return len(self.positions)

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        pos, order = self.positions, self.order

        def epoch():
            held, nxt = {}, 0
            for k, row in enumerate(child_epoch()):
                if k in pos:
                    held[k] = row
                    while nxt < len(order) and order[nxt] in held:
                        yield held.pop(order[nxt])
                        nxt += 1
                    if nxt == len(order):
                        return

        return epoch


def _absolute_sizes(sizes, n):
    if not isinstance(sizes, list) or not sizes:
        raise TypeError(f"split: sizes must be a non-empty list of int or of float, but got {sizes!r}.")
    if all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in sizes):
        if any(s <= 0 for s in sizes):
            raise ValueError(f"split: sizes must be positive, but got {sizes}.")
        if sum(sizes) != n:
            raise RuntimeError(f"split: Sum of split sizes {sum(sizes)} is not equal to dataset size {n}.")
        return [int(s) for s in sizes]
    if not all(isinstance(s, float) for s in sizes):
        raise TypeError(f"split: sizes must be all int or all float, but got {sizes!r}.")
    if any(not 0 < s <= 1 for s in sizes):
        raise ValueError(f"split: the fractions in sizes must be in (0, 1], but got {sizes}.")
    if abs(sum(sizes) - 1) > 1e-6:
        raise ValueError(f"split: sizes is a list of float, but the percentages do not sum up to 1 ({sizes}).")
    out = []
    for s in sizes:
        k = int(round(s * n))
        if k == 0:
            raise RuntimeError(f"split: Split percentage {s} is too small (0 rows of {n}).")
        out.append(k)
    diff = n - sum(out)
    if diff > 0:
        out[0] += diff
    elif diff < 0:
        for i, k in enumerate(out):
            if k + diff > 0:
                out[i] += diff
                break
    return out


def split_dataset(ds, sizes, randomize):
    """See Dataset.split."""
    from .sources import MappableSource
    if ds.is_sharded():
        raise RuntimeError("split: Dataset should not be sharded before split.")
    n = ds.get_dataset_size()
    if n <= 0:
        raise RuntimeError("split: dataset_size is unknown or 0, unable to split.")
    abs_sizes = _absolute_sizes(sizes, n)
    seed = config._user_seed()
    order = (np.random.default_rng([seed, 0x5]) if seed is not None else np.random.default_rng()).permutation(n) \
        if randomize else np.arange(n)
    sampler = getattr(ds, "sampler", None)
    mappable = isinstance(ds, MappableSource) and (
        (type(sampler) is RandomSampler and not sampler.replacement and sampler.num_samples is None)
        or (type(sampler) is SequentialSampler and sampler.start_index == 0 and sampler.num_samples is None))
    out, start = [], 0
    for k in abs_sizes:
        part = order[start:start + k].tolist()
        start += k
        if mappable:  # the split reads only its rows from the source
            clone = copy.copy(ds)
            clone._size_cache = None
            clone.sampler = SubsetRandomSampler(part) if isinstance(ds.sampler, RandomSampler) else SubsetSampler(part)
            out.append(clone)
        else:
            out.append(_PickDataset(ds, part))
    return tuple(out)
