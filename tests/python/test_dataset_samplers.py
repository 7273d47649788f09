"""kiln.dataset samplers, sharding and seeds: exact index orders (MindSpore-verified where deterministic), shards
partitioning the data, reproducibility of shuffles under a seed in a new process."""
import json
import subprocess
import sys

import numpy as np
import pytest

import kiln
import kiln.dataset as ds
from helpers import subprocess_env


def ids(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[r[0].item() for r in it] for _ in range(epochs)] if epochs > 1 else [r[0].item() for r in it]


def src(n=10, **kw):
    return ds.NumpySlicesDataset(list(range(n)), **kw)


def test_sequential_subset_samplers():
    assert ids(src(sampler=ds.SequentialSampler())) == list(range(10))
    assert ids(src(sampler=ds.SequentialSampler(2, 3))) == [2, 3, 4]
    assert src(sampler=ds.SequentialSampler(8)).get_dataset_size() == 2
    assert ids(src(sampler=ds.SubsetSampler([5, 1, 7]))) == [5, 1, 7]
    assert ids(src(sampler=ds.SubsetSampler([5, 1, 7], num_samples=2))) == [5, 1]
    assert ids(src(sampler=[9, 0])) == [9, 0]  # a list is a SubsetSampler
    with pytest.raises(IndexError, match="out of range"):
        ids(src(sampler=ds.SubsetSampler([10])))
    with pytest.raises(TypeError, match="indices"):
        ds.SubsetSampler([1.5])
    with pytest.raises(ValueError, match="start_index"):
        ds.SequentialSampler(-1)


def test_random_samplers():
    ds.config.set_seed(0)
    d = src(sampler=ds.RandomSampler())
    e1, e2 = ids(d, epochs=2)
    assert sorted(e1) == sorted(e2) == list(range(10)) and e1 != e2
    d = src(sampler=ds.RandomSampler(replacement=True, num_samples=5))
    r = ids(d)
    assert d.get_dataset_size() == 5 and len(r) == 5 and all(0 <= v < 10 for v in r)
    r = ids(src(sampler=ds.RandomSampler(replacement=True)))
    assert len(r) == 10
    r = ids(src(sampler=ds.SubsetRandomSampler([2, 4, 6, 8])))
    assert sorted(r) == [2, 4, 6, 8]
    assert src(sampler=ds.SubsetRandomSampler([2, 4, 6], num_samples=2)).get_dataset_size() == 2
    # default shuffle with num_samples: random with replacement, at most the dataset size (as MindSpore)
    d = src(num_samples=40)
    assert d.get_dataset_size() == 10 and len(ids(d)) == 10
    assert src(num_samples=4).get_dataset_size() == 4
    with pytest.raises(TypeError, match="replacement"):
        ds.RandomSampler(replacement=1)
    with pytest.raises(ValueError, match="num_samples"):
        ds.RandomSampler(num_samples=-1)


def test_weighted_random_sampler():
    ds.config.set_seed(1)
    r = ids(src(400, sampler=ds.WeightedRandomSampler([0, 1, 0, 3], num_samples=400)))
    assert set(r) == {1, 3} and 250 < r.count(3) < 350
    r = ids(src(4, sampler=ds.WeightedRandomSampler([1, 1, 0, 1], num_samples=3, replacement=False)))
    assert sorted(r) == [0, 1, 3]
    with pytest.raises(ValueError, match="non-negative"):
        ds.WeightedRandomSampler([1, -1])
    with pytest.raises(ValueError, match="all zero"):
        ds.WeightedRandomSampler([0, 0])


def test_user_sampler():
    class Evens(ds.Sampler):
        def __iter__(self):
            return iter(range(0, self.dataset_size, 2))

    assert ids(src(7, sampler=Evens())) == [0, 2, 4, 6]
    assert src(7, sampler=Evens()).get_dataset_size() == 4
    gen = ds.GeneratorDataset([(i,) for i in range(5)], ["x"], sampler=iter_sampler())
    assert ids(gen) == [4, 3]


def iter_sampler():
    class S:
        def __iter__(self):
            return iter([4, 3])
    return S()


def test_distributed_sampler_as_mindspore():
    # MindSpore 2.10: 10 rows, 3 shards, no shuffle -> every shard 4 rows, wrapping to the start
    got = [ids(src(sampler=ds.DistributedSampler(3, k, shuffle=False))) for k in range(3)]
    assert got == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    got = [ids(src(shuffle=False, num_shards=3, shard_id=k)) for k in range(3)]
    assert got == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    got = [ids(src(sampler=ds.DistributedSampler(3, k, shuffle=False, offset=1))) for k in range(3)]
    assert got == [[2, 5, 8], [0, 3, 6, 9], [1, 4, 7]]
    assert ids(src(sampler=ds.DistributedSampler(3, 0, shuffle=False, num_samples=2))) == [0, 3]
    assert src(num_shards=3, shard_id=2).get_dataset_size() == 4
    with pytest.raises(ValueError, match="shard_id"):
        ds.DistributedSampler(2, 2)
    with pytest.raises(TypeError, match="num_shards"):
        ds.DistributedSampler(2.0, 0)


def test_shuffled_shards_partition_every_epoch():
    for n, k in ((12, 3), (64, 4)):
        its = [src(n, num_shards=k, shard_id=s).create_tuple_iterator(num_epochs=2, output_numpy=True)
               for s in range(k)]
        epochs = []
        for _ in range(2):
            parts = [[int(r[0]) for r in it] for it in its]
            assert sorted(sum(parts, [])) == list(range(n))  # an exact partition
            assert all(len(p) == n // k for p in parts)
            epochs.append(parts)
        assert epochs[0] != epochs[1]  # reshuffled each epoch, identically in every shard


def test_shards_of_generator_and_shapes():
    class S:
        def __getitem__(self, i):
            return (np.array([i], np.int32),)

        def __len__(self):
            return 7

    parts = [ids(ds.GeneratorDataset(S(), ["x"], shuffle=False, num_shards=2, shard_id=s)) for s in range(2)]
    assert parts == [[0, 2, 4, 6], [1, 3, 5, 0]]


SCRIPT = """
import sys
import kiln, kiln.dataset as ds
if sys.argv[1] == "ds":
    ds.config.set_seed(123)
else:
    kiln.set_seed(123)
d = ds.NumpySlicesDataset(list(range(30))).shuffle(7).batch(2)
it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
print([r[0].tolist() for r in it])
print([r[0].tolist() for r in it])
"""


def test_seed_reproducible_in_new_process():
    outs = [subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, timeout=120,
                           env=subprocess_env()) for how in ("ds", "ds", "ms")]
    for o in outs:
        assert o.returncode == 0, o.stderr
    assert outs[0].stdout == outs[1].stdout == outs[2].stdout  # kiln.set_seed seeds the pipeline too
    ep1, ep2 = [json.loads(line) for line in outs[0].stdout.strip().splitlines()]
    assert sorted(sum(ep1, [])) == sorted(sum(ep2, [])) == list(range(30)) and ep1 != ep2


def test_config_functions():
    ds.config.set_seed(9)
    assert ds.config.get_seed() == 9
    kiln.set_seed(11)
    assert ds.config.get_seed() == 11
    assert np.random.randint(1000) == np.random.RandomState(11).randint(1000)
    with pytest.raises(TypeError, match="set_seed"):
        ds.config.set_seed(1.0)
    with pytest.raises(ValueError, match="set_seed"):
        ds.config.set_seed(-1)
    old = ds.config.get_num_parallel_workers()
    ds.config.set_num_parallel_workers(3)
    assert ds.config.get_num_parallel_workers() == 3
    ds.config.set_num_parallel_workers(old)
    with pytest.raises(ValueError, match="set_num_parallel_workers"):
        ds.config.set_num_parallel_workers(0)
    ds.config.set_prefetch_size(8)
    assert ds.config.get_prefetch_size() == 8
    ds.config.set_prefetch_size(16)
    with pytest.raises(TypeError, match="set_prefetch_size"):
        ds.config.set_prefetch_size("8")
