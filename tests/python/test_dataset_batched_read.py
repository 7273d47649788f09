"""`NumpySlicesDataset(...).batch(n)` reads each batch at once (Note [batched read] in
kiln/dataset/engine/sources.py): the batches equal, bit for bit and in the same order, those of the row-by-row path
(each row read alone, then np.stack), for every sampler, shuffle and epoch, and the pipeline above them sees the
same random streams."""
import numpy as np
import pytest

import kiln.dataset as ds
from kiln.dataset import samplers


def _columns(n=37):
    rng = np.random.default_rng(n)
    return {"x": rng.standard_normal((n, 3, 2)).astype(np.float32),
            "y": np.arange(n, dtype=np.int64),
            "w": rng.integers(0, 255, n).astype(np.uint8),
            "b": rng.integers(0, 2, n).astype(bool),
            "c": (rng.standard_normal(n) + 1j).astype(np.complex64)}


def _per_row(d):
    """The same source read row by row: its batch reader switched off."""
    d._batch_reader = lambda: None
    return d


def _epochs(pipeline, epochs=3):
    it = pipeline.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    return [[list(row) for row in it] for _ in range(epochs)]


def _assert_same(got, want):
    assert len(got) == len(want)
    for eg, ew in zip(got, want):
        assert len(eg) == len(ew)
        for rg, rw in zip(eg, ew):
            assert len(rg) == len(rw)
            for a, b in zip(rg, rw):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(a, b)


SOURCES = {
    "sequential": dict(shuffle=False),
    "shuffle": dict(shuffle=True),
    "default_shuffle": dict(),
    "num_samples": dict(shuffle=True, num_samples=23),
    "shards": dict(num_shards=3, shard_id=1),
    "shards_no_shuffle": dict(num_shards=4, shard_id=3, shuffle=False),
    "random_replacement": dict(sampler=samplers.RandomSampler(replacement=True)),
    "subset_random": dict(sampler=samplers.SubsetRandomSampler([5, 0, 36, 7, 7, -1, 12, 3, 30])),
    "subset": dict(sampler=samplers.SubsetSampler([4, 2, 9, -2, 33, 1])),
    "weighted": dict(sampler=samplers.WeightedRandomSampler([0.1 * (i % 5) + 0.05 for i in range(37)], 20)),
    "sequential_sampler": dict(sampler=samplers.SequentialSampler(start_index=5, num_samples=17)),
    "index_list": dict(sampler=[3, 1, 4, 1, 5, 9, 2, 6]),
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
@pytest.mark.parametrize("batch_size,drop", [(4, False), (5, True), (64, False)])
def test_batches_equal_the_row_by_row_path(kind, batch_size, drop):
    ds.config.set_seed(7)
    fast = ds.NumpySlicesDataset(_columns(), **SOURCES[kind]).batch(batch_size, drop_remainder=drop)
    got = _epochs(fast)
    ds.config.set_seed(7)
    slow = _per_row(ds.NumpySlicesDataset(_columns(), **SOURCES[kind])).batch(batch_size, drop_remainder=drop)
    want = _epochs(slow)
    _assert_same(got, want)
    assert len(got[0]) == fast.get_dataset_size() == slow.get_dataset_size()


def test_sequential_batches_are_numpy_slices_and_fresh_arrays():
    cols = _columns(10)
    got = _epochs(ds.NumpySlicesDataset(cols, shuffle=False).batch(4), epochs=1)[0]
    assert [b[1].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    for k, b in enumerate(got):
        for name, arr in zip(cols, b):
            np.testing.assert_array_equal(arr, cols[name][4 * k:4 * k + 4])
            assert arr.dtype == cols[name].dtype
            assert arr.flags.c_contiguous and arr.flags.owndata  # never a view of the user's data


def test_shuffled_epochs_differ_and_each_is_a_permutation():
    ds.config.set_seed(3)
    epochs = _epochs(ds.NumpySlicesDataset(_columns(), shuffle=True).batch(5), epochs=3)
    orders = [np.concatenate([b[1] for b in e]) for e in epochs]
    for o in orders:
        assert sorted(o.tolist()) == list(range(37))
    assert orders[0].tolist() != orders[1].tolist() != orders[2].tolist()


@pytest.mark.parametrize("above", ["shuffle", "repeat", "map", "take_skip"])
def test_random_streams_of_the_pipeline_above_are_unchanged(above):
    def pipe(source):
        d = source.batch(3)
        if above == "shuffle":
            return d.shuffle(4)
        if above == "repeat":
            return d.repeat(2)
        if above == "map":
            return d.map(lambda y: y * 2, input_columns="y")
        return d.skip(2).take(6)

    ds.config.set_seed(11)
    got = _epochs(pipe(ds.NumpySlicesDataset(_columns(), shuffle=True)))
    ds.config.set_seed(11)
    want = _epochs(pipe(_per_row(ds.NumpySlicesDataset(_columns(), shuffle=True))))
    _assert_same(got, want)


def test_tuple_and_single_column_data():
    x = np.arange(24, dtype=np.float64).reshape(12, 2)
    got = _epochs(ds.NumpySlicesDataset((x, [1.5] * 12), shuffle=False).batch(5), epochs=1)[0]
    assert [b[0].shape for b in got] == [(5, 2), (5, 2), (2, 2)]
    assert got[0][1].dtype == np.float64 and got[0][1].tolist() == [1.5] * 5
    one = _epochs(ds.NumpySlicesDataset([1, 2, 3, 4, 5], shuffle=False).batch(2), epochs=1)[0]
    assert [b[0].tolist() for b in one] == [[1, 2], [3, 4], [5]] and one[0][0].dtype == np.int64


def test_which_pipelines_read_batches_at_once():
    from kiln.dataset.engine._common import Ctx
    arrays = ds.NumpySlicesDataset(_columns(), shuffle=False)
    assert arrays._make_batches(Ctx(), 4, False) is not None
    ragged = ds.NumpySlicesDataset({"v": [np.zeros(2), np.zeros(3)]}, shuffle=False)
    assert ragged._make_batches(Ctx(), 2, False) is None  # rows of different shapes: row by row
    # ...which then raises batch's own error for them
    with pytest.raises(RuntimeError, match="different shapes"):
        _epochs(ragged.batch(2), epochs=1)
    # text: a batch of strings read row by row is as wide as its longest string, not as the column
    text = ds.NumpySlicesDataset({"t": ["a", "bbb", "cc", "dddd", "e"], "y": np.arange(5)}, shuffle=False)
    assert text._make_batches(Ctx(), 2, False) is None
    got = _epochs(text.batch(2), epochs=1)[0]
    assert [b[0].dtype.str for b in got] == ["<U3", "<U4", "<U1"]
    assert [b[0].tolist() for b in got] == [["a", "bbb"], ["cc", "dddd"], ["e"]]


def test_out_of_range_index_raises_as_row_by_row():
    d = ds.NumpySlicesDataset(_columns(5), sampler=[0, 1, 9], shuffle=None).batch(2)
    with pytest.raises(IndexError, match="out of range"):
        _epochs(d, epochs=1)


def test_per_batch_map_and_callable_batch_size_still_work():
    x = np.arange(10, dtype=np.int32)
    d = ds.NumpySlicesDataset({"x": x}, shuffle=False).batch(
        4, per_batch_map=lambda xs, info: ([v + info.get_batch_num() for v in xs],))
    assert [b[0].tolist() for b in _epochs(d, epochs=1)[0]] == [[0, 1, 2, 3], [5, 6, 7, 8], [10, 11]]
    d = ds.NumpySlicesDataset({"x": x}, shuffle=False).batch(lambda info: 3 + info.get_batch_num())
    assert [b[0].tolist() for b in _epochs(d, epochs=1)[0]] == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]


def test_split_parts_batch_as_row_by_row():
    ds.config.set_seed(5)
    fast = [p.batch(4) for p in ds.NumpySlicesDataset(_columns(), shuffle=True).split([0.6, 0.4])]
    got = [_epochs(p, epochs=2) for p in fast]
    ds.config.set_seed(5)
    slow = [_per_row(p).batch(4) for p in ds.NumpySlicesDataset(_columns(), shuffle=True).split([0.6, 0.4])]
    want = [_epochs(p, epochs=2) for p in slow]
    for g, w in zip(got, want):
        _assert_same(g, w)
    rows = sorted(np.concatenate([b[1] for b in got[0][0]] + [b[1] for b in got[1][0]]).tolist())
    assert rows == list(range(37))
