"""Samplers of kiln.dataset (MindSpore's `mindspore.dataset.samplers`): which row indices of a random-access source
an epoch reads, and in which order.

A sampler is a description; the state it draws from (a NumPy Generator) lives in each iterator, so two iterators of
one dataset do not disturb each other and an iterator reshuffles every epoch."""
import numbers

import numpy as np

from . import config
from .engine._common import SampleIndexError

_INT64_MAX = 2**63 - 1


def _check_num_samples(cls, num_samples):
    if num_samples is None:
        return None
    if not isinstance(num_samples, int) or isinstance(num_samples, bool):
        raise TypeError(f"{cls}: num_samples must be integer but was: {num_samples!r}.")
    if num_samples < 0 or num_samples > _INT64_MAX:
        raise ValueError(f"{cls}: num_samples exceeds the boundary between 0 and {_INT64_MAX}(INT64_MAX)! "
                         f"Got {num_samples}.")
    return num_samples or None  # 0 means all, as MindSpore


def _check_indices(cls, indices):
    if isinstance(indices, np.ndarray):
        indices = indices.tolist()
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
        raise TypeError(f"{cls}: indices should be a list or tuple of int, but got {type(indices).__name__}.")
    out = list(indices)
    for i in out:
        if not isinstance(i, numbers.Integral) or isinstance(i, bool):
            raise TypeError(f"{cls}: indices should be a list of int, but got item {i!r} ({type(i).__name__}).")
    return [int(i) for i in out]


class BuiltinSampler:
    """Base class of the built-in samplers.

    Args:
        num_samples (int, optional): at most this many indices per epoch; None or 0: all.
    """

    _salted = False  # True for samplers that draw from the per-iterator Generator

    def __init__(self, num_samples=None):
        self.num_samples = _check_num_samples(type(self).__name__, num_samples)

    def get_num_samples(self):
        """The `num_samples` given (None when all)."""
        return self.num_samples

    def _cap(self, k):
        return k if self.num_samples is None else min(k, self.num_samples)

    def _size(self, n):
        """Indices per epoch over a source of n rows."""
        return self._cap(n)

    def _indices(self, n, rng, epoch):
        """The int64 row indices of epoch number `epoch` (0-based) over a source of n rows (all, in order, for
        this base class)."""
        return np.arange(self._size(n), dtype=np.int64)

    def _check_range(self, idx, n):
        bad = [int(i) for i in idx if i >= n or i < -n]
        if bad:
            raise SampleIndexError(f"{type(self).__name__}: sample index {bad[0]} is out of range for a dataset of {n} "
                             "rows.")
        return [int(i) % n if n else int(i) for i in idx]


class SequentialSampler(BuiltinSampler):
    """Reads rows in order from `start_index`.

    Args:
        start_index (int, optional): first index (default None: 0).
        num_samples (int, optional): at most this many rows (default None: all the rest).

    Raises:
        TypeError/ValueError: non-int or negative arguments.
    """

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            if not isinstance(start_index, int) or isinstance(start_index, bool):
                raise TypeError(f"SequentialSampler: start_index must be integer but was: {start_index!r}.")
            if start_index < 0:
                raise ValueError(f"SequentialSampler: start_index should be no negative, but got {start_index}.")
        self.start_index = start_index or 0
        super().__init__(num_samples)

    def _size(self, n):
        return self._cap(max(0, n - self.start_index))

    def _indices(self, n, rng, epoch):
        if self.start_index >= n and n > 0:
            raise ValueError(f"SequentialSampler: start_index {self.start_index} is out of range for a dataset of "
                             f"{n} rows.")
        return np.arange(self.start_index, self.start_index + self._size(n), dtype=np.int64)


class RandomSampler(BuiltinSampler):
    """Random order, reshuffled every epoch.

    Args:
        replacement (bool): draw with replacement (default False).
        num_samples (int, optional): rows per epoch, at most the dataset size (default None: all).

    Raises:
        TypeError: `replacement` not a bool, `num_samples` not an int. ValueError: negative `num_samples`.
    """

    _salted = True

    def __init__(self, replacement=False, num_samples=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a boolean value but was: {replacement!r}.")
        self.replacement = replacement
        super().__init__(num_samples)

    def _indices(self, n, rng, epoch):
        k = self._size(n)
        if self.replacement:
            return rng.integers(0, n, size=k, dtype=np.int64) if n else np.zeros(0, np.int64)
        return rng.permutation(n)[:k].astype(np.int64)


class DistributedSampler(BuiltinSampler):
    """The part of the rows that shard `shard_id` of `num_shards` reads (data-parallel training).

    Without `offset` (-1), every shard reads ceil(n / num_shards) rows: shard k reads positions k, k + num_shards,
    ... of the (shuffled) order, wrapping to the start so that all shards read equally many rows (MindSpore's
    padding). With `offset` >= 0, row i goes to shard (i + offset) % num_shards and nothing is padded.
    With `shuffle`, the order is a permutation drawn from `kiln.dataset.config.get_seed()` (read when the sampler is
    created) and the epoch number: identical in every shard, different each epoch.

    Args:
        num_shards (int): number of shards, >= 1. With shard_id, both default (None) to the communication
            group's size and this process's rank when data-parallel training is on (see `_group_shards`).
        shard_id (int): in [0, num_shards).
        shuffle (bool): default True.
        num_samples (int, optional): at most this many rows per shard.
        offset (int): default -1.

    Raises:
        TypeError: non-int / non-bool arguments. ValueError: shard_id out of range, num_shards < 1, offset > num_shards.
    """

    _salted = False

    def __init__(self, num_shards=None, shard_id=None, shuffle=True, num_samples=None, offset=-1):
        if num_shards is None and shard_id is None:
            num_shards, shard_id = _group_shards() or (None, None)
            if num_shards is None:
                raise TypeError("DistributedSampler: num_shards and shard_id are required unless data-parallel "
                                "training is on (then they default to the group size and this process's rank).")
        for name, v in (("num_shards", num_shards), ("shard_id", shard_id), ("offset", offset)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"DistributedSampler: {name} must be integer but was: {v!r}.")
        if not isinstance(shuffle, bool):
            raise TypeError(f"DistributedSampler: shuffle must be a boolean value but was: {shuffle!r}.")
        if num_shards <= 0:
            raise ValueError(f"DistributedSampler: num_shards must be a positive integer, but got {num_shards}.")
        if shard_id < 0 or shard_id >= num_shards:
            raise ValueError(f"DistributedSampler: shard_id must be in range [0, {num_shards - 1}], but got "
                             f"{shard_id}.")
        if offset > num_shards:
            raise ValueError(f"DistributedSampler: offset {offset} should be no more than num_shards {num_shards}.")
        self.num_shards, self.shard_id, self.shuffle, self.offset = num_shards, shard_id, shuffle, offset
        self.seed = config.get_seed()
        super().__init__(num_samples)

    def _positions(self, n):
        if self.offset < 0:
            per = -(-n // self.num_shards)
            return [(self.shard_id + i * self.num_shards) % n for i in range(per)] if n else []
        return [i for i in range(n) if (i + self.offset) % self.num_shards == self.shard_id]

    def _size(self, n):
        return self._cap(len(self._positions(n)))

    def _indices(self, n, rng, epoch):
        pos = np.asarray(self._positions(n), dtype=np.int64)
        if self.shuffle and n:
            perm = np.random.default_rng([self.seed, epoch]).permutation(n)
            pos = perm[pos]
        return pos[:self._size(n)]


class SubsetSampler(BuiltinSampler):
    """Reads the given indices in the given order.

    Args:
        indices (list[int]): row indices (negative ones count from the end).
        num_samples (int, optional): at most this many of them.

    Raises:
        TypeError: indices not a sequence of int. IndexError (when iterating): an index out of range.
    """

    def __init__(self, indices, num_samples=None):
        self.indices = _check_indices(type(self).__name__, indices)
        super().__init__(num_samples)

    def _size(self, n):
        return self._cap(len(self.indices))

    def _indices(self, n, rng, epoch):
        return np.asarray(self._check_range(self.indices[:self._size(n)], n), dtype=np.int64)


class SubsetRandomSampler(SubsetSampler):
    """Reads the given indices in a random order, reshuffled every epoch.

    Args:
        indices (list[int]): row indices.
        num_samples (int, optional): at most this many of them.
    """

    _salted = True

    def _indices(self, n, rng, epoch):
        idx = self._check_range(self.indices, n)
        return np.asarray(idx, dtype=np.int64)[rng.permutation(len(idx))][:self._size(n)]


class WeightedRandomSampler(BuiltinSampler):
    """Draws row i with probability weights[i] / sum(weights).

    Args:
        weights (list[float]): one non-negative weight per row (not all zero).
        num_samples (int, optional): rows per epoch (default: len(weights)), at most the dataset's rows (as
            MindSpore 2.10: WeightedRandomSampler(w, 25) over 10 rows gives 10).
        replacement (bool): draw with replacement (default True); without it, num_samples <= number of non-zero
            weights.

    Raises:
        TypeError: weights not numbers. ValueError: a negative weight, all weights zero.
    """

    _salted = True

    def __init__(self, weights, num_samples=None, replacement=True):
        if isinstance(weights, (str, bytes)) or not hasattr(weights, "__iter__"):
            raise TypeError(f"WeightedRandomSampler: weights should be a list of float, got {type(weights).__name__}.")
        w = list(weights)
        if not w or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in w):
            raise TypeError(f"WeightedRandomSampler: weights should be a non-empty list of numbers, got {w!r}.")
        w = np.asarray(w, dtype=np.float64)
        if (w < 0).any() or not np.isfinite(w).all():
            raise ValueError("WeightedRandomSampler: weights must be finite and non-negative.")
        if w.sum() == 0:
            raise ValueError("WeightedRandomSampler: the weights are all zero.")
        if not isinstance(replacement, bool):
            raise TypeError(f"WeightedRandomSampler: replacement must be a boolean value but was: {replacement!r}.")
        self.weights, self.replacement = w, replacement
        super().__init__(num_samples)
        if not replacement and (self.num_samples or len(self.weights)) > int((w > 0).sum()):
            raise ValueError("WeightedRandomSampler: without replacement, num_samples cannot exceed the number of "
                             "non-zero weights.")

    def _size(self, n):
        k = self.num_samples if self.num_samples is not None else len(self.weights)
        return min(k, n)  # MindSpore 2.10: never more samples than the dataset has rows

    def _indices(self, n, rng, epoch):
        if len(self.weights) > n:
            raise IndexError(f"WeightedRandomSampler: {len(self.weights)} weights for a dataset of {n} rows.")
        p = self.weights / self.weights.sum()
        return rng.choice(len(p), size=self._size(n), replace=self.replacement, p=p).astype(np.int64)


class PKSampler(BuiltinSampler):
    """P classes x K samples: for each class of the source's labels (in ascending order, or shuffled with
    `shuffle`), `num_val` row indices drawn uniformly with replacement from that class's rows; MindSpore's
    PKSampler (pk_sampler.cc). The draws come from the iterator's Generator (seeded from
    `kiln.dataset.config.get_seed()`), so a seed gives the same rows every run, but not MindSpore's rows (its
    mt19937 stream).

    Works with the sources that know their rows' labels: MnistDataset, Cifar10Dataset, ImageFolderDataset (their
    "label" column). GeneratorDataset / NumpySlicesDataset raise ValueError, as MindSpore.

    Args:
        num_val (int): K, the samples per class (>= 1).
        num_class (None): must be None (MindSpore raises NotImplementedError too).
        shuffle (bool): shuffle the order of the classes (default False: ascending).
        class_column (str): the label column's name (only "label" is used by these sources).
        num_samples (int, optional): at most this many indices per epoch (default: K x the number of classes).

    Raises:
        TypeError: num_val not an int, shuffle not a bool, class_column not a str.
        ValueError: num_val < 1. NotImplementedError: num_class given.
    """

    _salted = True
    _needs_classes = True

    def __init__(self, num_val, num_class=None, shuffle=False, class_column="label", num_samples=None):
        if not isinstance(num_val, int) or isinstance(num_val, bool):
            raise TypeError(f"num_val must be integer but was: {num_val}.")
        if num_class is not None:
            raise NotImplementedError("Not supported to specify num_class for PKSampler.")
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle should be a boolean value, but got shuffle={shuffle}.")
        if not isinstance(class_column, str):
            raise TypeError(f"class_column must be a str, but got {class_column!r}.")
        if num_val < 1:
            raise ValueError(f"PKSampler: num_val (K, the samples per class) must be greater than 0, but got "
                             f"{num_val}.")
        super().__init__(num_samples)
        self.num_val, self.shuffle, self.class_column = num_val, shuffle, class_column
        self._classes_of = None  # set by the source: () -> int array of each row's label

    def _groups(self):
        if self._classes_of is None:
            raise RuntimeError("PKSampler: the sampler is not attached to a source that knows its rows' labels.")
        labels = np.asarray(self._classes_of()).reshape(-1)
        classes = np.unique(labels)  # ascending
        return classes, {int(c): np.nonzero(labels == c)[0] for c in classes}

    def _size(self, n):
        classes, _ = self._groups()
        return self._cap(len(classes) * self.num_val)

    def _indices(self, n, rng, epoch):
        classes, members = self._groups()
        order = [int(c) for c in classes]
        if self.shuffle:
            order = [order[i] for i in rng.permutation(len(order))]
        k = self._cap(len(order) * self.num_val)
        out = np.empty(k, dtype=np.int64)
        for j in range(k):
            ids = members[order[j // self.num_val]]
            out[j] = ids[rng.integers(len(ids))]
        return out


class Sampler(BuiltinSampler):
    """Base class of user-defined samplers: subclass it and define `__iter__`, yielding row indices; the
    attribute `dataset_size` holds the size of the source when `__iter__` is called.

    Args:
        num_samples (int, optional): at most this many indices per epoch.
    """

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} must define __iter__ yielding row indices.")

    def _size(self, n):
        self.dataset_size = n
        return self._cap(sum(1 for _ in self))

    def _indices(self, n, rng, epoch):
        self.dataset_size = n
        idx = _check_indices(type(self).__name__, list(iter(self)))
        return np.asarray(self._check_range(idx[:self._size(n)], n), dtype=np.int64)


class IterSampler(Sampler):
    """Wraps any iterable of indices given as `sampler=` (MindSpore's IterSampler)."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)


def _group_shards():
    """(group size, rank) when data-parallel training is on (set_auto_parallel_context(parallel_mode=
    DATA_PARALLEL) after communication.init() with more than one process), else None: the default num_shards /
    shard_id of the dataset sources and DistributedSampler, so that each process reads its own part of the data."""
    from ..communication.management import GlobalComm, get_group_size, get_rank
    from .._parallel_context import _is_data_parallel
    if not GlobalComm.INITED or not _is_data_parallel():
        return None
    size = get_group_size()
    return (size, get_rank()) if size > 1 else None


def select_sampler(cls, num_samples, sampler, shuffle, num_shards, shard_id):
    """The sampler a random-access source uses, from its arguments (MindSpore's rules): a given sampler excludes
    num_samples/shuffle/num_shards/shard_id; sharding gives DistributedSampler; shuffle (default) gives
    RandomSampler (with replacement when num_samples is given); else SequentialSampler."""
    if sampler is not None:
        if isinstance(sampler, BuiltinSampler) and any(a is not None for a in (num_shards, shard_id, shuffle,
                                                                                num_samples)):
            raise ValueError(f"{cls}: Conflicting arguments during sampler assignments. num_samples: {num_samples}, "
                             f"num_shards: {num_shards}, shard_id: {shard_id}, shuffle: {shuffle}.")
        if isinstance(sampler, BuiltinSampler):
            return sampler
        if isinstance(sampler, (np.ndarray, list, tuple)):
            return SubsetSampler(sampler, num_samples)
        if isinstance(sampler, int) and not isinstance(sampler, bool):
            return SubsetSampler([sampler])
        if not isinstance(sampler, (str, bytes)) and (hasattr(sampler, "__iter__") or hasattr(sampler, "__getitem__")):
            return IterSampler(sampler, num_samples)  # __getitem__ + __len__: iterated by index, as MindSpore
        raise TypeError(f"{cls}: Unsupported sampler object of type ({type(sampler).__name__}).")
    if shuffle is not False:
        if num_shards is not None:
            return DistributedSampler(num_shards, shard_id, shuffle=True, num_samples=num_samples)
        if num_samples:
            return RandomSampler(replacement=True, num_samples=num_samples)
        return RandomSampler()
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=False, num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)
