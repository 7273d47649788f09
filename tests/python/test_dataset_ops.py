"""kiln.dataset pipeline operations and iterators against NumPy references (column placement, sizes and orders
checked against MindSpore 2.10)."""
import numpy as np
import pytest

import kiln
import kiln.dataset as ds


def seq(n=10, **kw):
    return ds.NumpySlicesDataset(list(range(n)), shuffle=False, **kw)


def abc():
    return ds.NumpySlicesDataset(([1, 2, 3], [4., 5., 6.], [7, 8, 9]), column_names=["a", "b", "c"], shuffle=False)


def rows(d, **kw):
    return list(d.create_tuple_iterator(output_numpy=True, num_epochs=1, **kw))


def ids(d):
    return [r[0].tolist() for r in rows(d)]


# ---------------------------------------------------------------- map
def test_map_columns_placement_as_mindspore():
    assert abc().map(lambda b: b, input_columns=["b"], output_columns=["bb"]).get_col_names() == ["a", "bb", "c"]
    assert abc().map(lambda c, b: (c, b), input_columns=["c", "b"],
                     output_columns=["x", "y"]).get_col_names() == ["a", "y", "x"]
    assert abc().map(lambda b, c: (b + c,), input_columns=["b", "c"],
                     output_columns=["x"]).get_col_names() == ["x", "a"]
    m = abc().map(lambda b: (b, b * 2), input_columns=["b"], output_columns=["p", "q"])
    assert m.get_col_names() == ["p", "q", "a", "c"]
    assert [r[1].item() for r in rows(m)] == [8., 10., 12.]
    assert [r[2].item() for r in rows(m)] == [1, 2, 3]


def test_map_values_default_column_and_compose():
    m = abc().map(lambda a: a * 10)
    assert m.get_col_names() == ["a", "b", "c"] and ids(m) == [10, 20, 30]
    m = abc().map([lambda b: b + 1, lambda b: b * 2], input_columns="b")
    assert [r[1].item() for r in rows(m)] == [10., 12., 14.]
    # a list of ops where one returns two values feeding the next one's two arguments
    m = abc().map([lambda a: (a, a + 1), lambda x, y: x * y], input_columns="a")
    assert ids(m) == [2, 6, 12]
    # map on images: a NumPy reference
    x = np.random.default_rng(0).integers(0, 256, (4, 6, 5, 3)).astype(np.uint8)
    m = ds.NumpySlicesDataset(x, ["image"], shuffle=False).map(
        lambda im: (im.astype(np.float32) / 255.0).transpose(2, 0, 1))
    got = np.stack([r[0] for r in rows(m)])
    np.testing.assert_allclose(got, (x.astype(np.float32) / 255).transpose(0, 3, 1, 2))
    assert m.output_shapes() == [[3, 6, 5]] and m.output_types() == [np.dtype(np.float32)]


def test_map_errors():
    with pytest.raises(TypeError, match="callable"):
        abc().map(5)
    with pytest.raises(ValueError, match="input column 'zz'"):
        abc().map(lambda x: x, input_columns=["zz"])
    with pytest.raises(TypeError, match="unexpected keyword"):
        abc().map(lambda x: x, column_order=["a"])
    with pytest.raises(ValueError, match="clash"):
        abc().map(lambda a: a, input_columns="a", output_columns="b")
    with pytest.raises(RuntimeError, match="should match the number of 'output_columns'.*1.*2"):
        rows(abc().map(lambda a, b: (a,), input_columns=["a", "b"]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError") as e:
        rows(abc().map(lambda a: 1 // 0))
    assert "Python Call Stack" in str(e.value) and "map operation" in str(e.value)


# ---------------------------------------------------------------- batch
def test_batch_stacking_sizes_and_remainder():
    d = abc().batch(2)
    assert d.get_dataset_size() == 2 and d.get_batch_size() == 2
    r = rows(d)
    assert r[0][0].tolist() == [1, 2] and r[0][0].dtype == np.int64 and r[1][1].tolist() == [6.]
    assert abc().batch(2, drop_remainder=True).get_dataset_size() == 1
    assert len(rows(abc().batch(2, drop_remainder=True))) == 1
    x = np.arange(24, dtype=np.float32).reshape(6, 2, 2)
    b = rows(ds.NumpySlicesDataset(x, shuffle=False).batch(4))
    np.testing.assert_array_equal(b[0][0], x[:4])
    np.testing.assert_array_equal(b[1][0], x[4:])
    assert ds.NumpySlicesDataset(x, shuffle=False).batch(4).output_shapes() == [[4, 2, 2]]


def test_batch_callable_size_and_per_batch_map():
    def bs(info):
        return info.get_batch_num() + 1
    assert ids(seq(10).batch(bs)) == [[0], [1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert seq(10).batch(bs).get_dataset_size() == 4

    def double(a, info):
        return ([v * 2 for v in a],)
    assert ids(seq(5).batch(2, per_batch_map=double, input_columns=["column_0"])) == [[0, 2], [4, 6], [8]]

    def add_col(a, info):
        return a, [v * 2 for v in a]
    d = ds.NumpySlicesDataset((list(range(5)), list(range(5))), column_names=["a", "b"], shuffle=False)
    r = d.batch(2, per_batch_map=add_col, input_columns=["a"], output_columns=["a", "c"])
    assert r.get_col_names() == ["a", "c", "b"]  # as MindSpore: outputs first when the count changes
    assert [x.tolist() for x in rows(r)[0]] == [[0, 1], [0, 2], [0, 1]]

    def all_cols(a, b, info):  # without input_columns, per_batch_map gets every column (MindSpore 2.10)
        return [x * 10 for x in a], [x * 100 for x in b]
    r = rows(d.batch(2, per_batch_map=all_cols))
    assert [[c.tolist() for c in x] for x in r] == [[[0, 10], [0, 100]], [[20, 30], [200, 300]], [[40], [400]]]

    def epoch_of(a, info):
        return ([np.full_like(v, info.get_epoch_num()) for v in a],)
    it = seq(3).batch(3, per_batch_map=epoch_of).create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [r[0].tolist() for r in it] == [[0, 0, 0]]
    assert [r[0].tolist() for r in it] == [[1, 1, 1]]


def test_batch_errors():
    with pytest.raises(ValueError, match="batch_size"):
        abc().batch(0)
    with pytest.raises(TypeError, match="batch_size"):
        abc().batch(2.0)
    with pytest.raises(TypeError, match="drop_remainder"):
        abc().batch(2, drop_remainder=1)
    ragged = ds.GeneratorDataset(lambda: iter([(np.zeros(2),), (np.zeros(3),)]), ["x"])
    with pytest.raises(RuntimeError, match="Cannot batch tensors with different shapes in column 'x'"):
        rows(ragged.batch(2))
    with pytest.raises(RuntimeError, match="per_batch_map returned 1 columns"):
        rows(abc().batch(2, per_batch_map=lambda a, b, info: (a,), input_columns=["a", "b"]))


# ---------------------------------------------------------------- shuffle / repeat / seeds
def test_shuffle_buffer_semantics_and_epochs():
    ds.config.set_seed(0)
    d = seq(10).shuffle(4)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    e1 = [int(r[0]) for r in it]
    e2 = [int(r[0]) for r in it]
    assert sorted(e1) == sorted(e2) == list(range(10))
    assert e1 != e2  # a new order every epoch
    # buffer semantics: the first output comes from the first 4 rows, the k-th output from the first k+3
    for _ in range(5):
        out = [int(r[0]) for r in seq(10).shuffle(4)]
        for k, v in enumerate(out[:7]):
            assert v < k + 4
    # same seed -> same order
    ds.config.set_seed(5)
    a = [int(r[0]) for r in seq(20).shuffle(8)]
    ds.config.set_seed(5)
    assert [int(r[0]) for r in seq(20).shuffle(8)] == a
    with pytest.raises(ValueError, match="buffer_size"):
        seq().shuffle(1)


def test_repeat():
    assert ids(seq(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert seq(3).repeat(3).get_dataset_size() == 9 and seq(3).repeat(2).get_repeat_count() == 2
    assert seq(3).repeat().get_repeat_count() == -1 and seq(3).repeat().get_dataset_size() == 3
    it = iter(seq(3).repeat())
    assert [int(next(it)[0]) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    ds.config.set_seed(1)
    r = ids(ds.NumpySlicesDataset(list(range(6))).repeat(2))
    assert sorted(r[:6]) == sorted(r[6:]) == list(range(6)) and r[:6] != r[6:]  # reshuffled per repetition
    assert ids(seq(4).batch(3).repeat(2)) == [[0, 1, 2], [3], [0, 1, 2], [3]]
    with pytest.raises(ValueError, match="count"):
        seq().repeat(0)
    assert ids(seq(0).repeat()) == []  # an empty dataset repeated forever ends instead of spinning


# ---------------------------------------------------------------- project / rename / zip / concat / take / skip
def test_project_rename():
    assert abc().project(["c", "a"]).get_col_names() == ["c", "a"]
    assert rows(abc().project("c"))[0][0].tolist() == 7
    assert abc().rename(["a", "c"], ["A", "C"]).get_col_names() == ["A", "b", "C"]
    with pytest.raises(ValueError, match="'zz' does not exist"):
        abc().project(["zz"])
    with pytest.raises(ValueError, match="same length"):
        abc().rename(["a"], ["x", "y"])
    with pytest.raises(ValueError, match="duplicate"):
        abc().rename(["a"], ["b"])


def test_zip_concat():
    z = abc().zip(ds.NumpySlicesDataset([7, 8], column_names=["d"], shuffle=False))
    assert z.get_col_names() == ["a", "b", "c", "d"] and z.get_dataset_size() == 2
    assert [[x.item() for x in r] for r in rows(z)] == [[1, 4., 7, 7], [2, 5., 8, 8]]
    z3 = ds.zip((seq(3), seq(5).rename("column_0", "x")))
    assert z3.get_dataset_size() == 3 and len(rows(z3)) == 3
    with pytest.raises(ValueError, match="duplicate column a"):
        abc().zip(abc())
    c = seq(3) + seq(5).skip(3)
    assert ids(c) == [0, 1, 2, 3, 4] and c.get_dataset_size() == 5
    assert ids(seq(2).concat([seq(1), seq(2)])) == [0, 1, 0, 0, 1]
    with pytest.raises(ValueError, match="column names"):
        seq(2).concat(abc())


def test_take_skip():
    assert ids(seq().take(3)) == [0, 1, 2] and ids(seq().skip(8)) == [8, 9]
    assert seq().take(3).get_dataset_size() == 3
    with pytest.warns(UserWarning, match="dataset size is 0"):
        assert seq().skip(12).get_dataset_size() == 0
    assert seq().take(-1).get_dataset_size() == 10 and ids(seq(3).take(-1)) == [0, 1, 2]
    assert ids(seq().take(20)) == list(range(10))
    with pytest.raises(ValueError, match="count"):
        seq().take(0)
    with pytest.raises(ValueError, match="count"):
        seq().skip(-1)
    with pytest.raises(TypeError, match="count"):
        seq().take("3")


def test_filter():
    f = seq().filter(lambda x: x % 2 == 0)
    assert ids(f) == [0, 2, 4, 6, 8] and f.get_dataset_size() == 5
    f = abc().filter(lambda b: b > 4.5, input_columns=["b"])
    assert ids(f) == [2, 3]
    f = seq(100).filter(lambda x: x % 3 == 0, num_parallel_workers=2)
    assert ids(f) == list(range(0, 100, 3))
    with pytest.raises(RuntimeError, match="NameError"):
        rows(seq().filter(lambda x: undefined_name))  # noqa: F821 (the NameError is the test)
    with pytest.raises(TypeError, match="predicate"):
        seq().filter(3)


def test_split():
    a, b = seq().split([0.7, 0.3], randomize=False)
    assert ids(a) == list(range(7)) and ids(b) == [7, 8, 9]
    a, b = seq().split([3, 7], randomize=False)
    assert ids(a) == [0, 1, 2] and a.get_dataset_size() == 3 and b.get_dataset_size() == 7
    a, b, c = seq(10).split([0.33, 0.33, 0.34], randomize=False)  # rounding remainder goes to the first
    assert [s.get_dataset_size() for s in (a, b, c)] == [3, 3, 3] or sum(
        s.get_dataset_size() for s in (a, b, c)) == 10
    ds.config.set_seed(2)
    parts = seq(20).split([0.5, 0.5])
    x, y = ids(parts[0]), ids(parts[1])
    assert sorted(x + y) == list(range(20)) and x != list(range(10))
    assert ids(parts[0]) == x  # the split's order is fixed across epochs (the source does not shuffle)
    # split of a shuffling source: disjoint parts, each reshuffled every epoch
    p, q = ds.NumpySlicesDataset(list(range(20))).split([10, 10])
    it = p.create_tuple_iterator(num_epochs=2, output_numpy=True)
    e1, e2 = [int(r[0]) for r in it], [int(r[0]) for r in it]
    assert sorted(e1) == sorted(e2) and set(e1).isdisjoint(ids(q))
    # split of a pipeline (not a source) keeps the rows of its part
    m1, m2 = seq(6).map(lambda x: x * 10).split([4, 2], randomize=False)
    assert ids(m1) == [0, 10, 20, 30] and ids(m2) == [40, 50]
    with pytest.raises(ValueError, match="sum up to 1"):
        seq().split([0.5, 0.3])
    with pytest.raises(RuntimeError, match="Sum of split sizes 9"):
        seq().split([4, 5])
    with pytest.raises(RuntimeError, match="sharded"):
        seq(num_shards=2, shard_id=0).split([0.5, 0.5])


# ---------------------------------------------------------------- iterators
def test_iterators_epochs_columns_and_tensors():
    it = abc().create_tuple_iterator(num_epochs=2)
    first = list(it)
    assert len(first) == 3 and isinstance(first[0], list) and isinstance(first[0][0], kiln.Tensor)
    assert first[0][1].dtype == kiln.float64 and first[0][0].dtype == kiln.int64 and first[0][0].shape == ()
    assert len(list(it)) == 3
    with pytest.raises(RuntimeError, match="beyond the specified number of epochs"):
        next(it)
    r = next(abc().create_tuple_iterator(columns=["c", "a"], output_numpy=True))
    assert [v.item() for v in r] == [7, 1]
    d = next(abc().create_dict_iterator(output_numpy=True))
    assert list(d) == ["a", "b", "c"] and d["b"].item() == 4.
    with pytest.raises(ValueError, match="'q' does not exist"):
        abc().create_tuple_iterator(columns=["q"])
    with pytest.raises(ValueError, match="num_epochs"):
        abc().create_tuple_iterator(num_epochs=0)
    with pytest.raises(TypeError, match="output_numpy"):
        abc().create_tuple_iterator(output_numpy=1)
    # do_copy gives arrays the pipeline does not share
    x = np.arange(4)
    src = ds.NumpySlicesDataset(x.reshape(2, 2), shuffle=False)
    a = next(src.create_tuple_iterator(output_numpy=True, do_copy=True))[0]
    a[0] = 99
    assert x[0] == 0 and next(src.create_tuple_iterator(output_numpy=True))[0][0] == 0
    # for row in dataset: one epoch of lists of Tensors
    assert [int(r[0].asnumpy()) for r in seq(3)] == [0, 1, 2]


def test_output_shapes_types_sizes_of_pipelines():
    d = ds.NumpySlicesDataset({"x": np.zeros((10, 3), np.float32), "y": np.arange(10, dtype=np.int32)},
                              shuffle=False)
    p = d.map(lambda x: x[:2], input_columns="x").batch(4, drop_remainder=True).repeat(2)
    assert p.get_dataset_size() == 4 and p.get_batch_size() == 4 and p.get_repeat_count() == 2
    assert p.output_shapes() == [[4, 2], [4]] and p.output_types() == [np.dtype(np.float32), np.dtype(np.int32)]
    assert p.get_col_names() == ["x", "y"]
    with pytest.raises(RuntimeError, match="empty"):
        seq(0).output_shapes()


def test_iterator_shared_by_threads_hands_out_each_row_once():
    import threading
    it = ds.NumpySlicesDataset(np.arange(2000), shuffle=False).map(lambda x: x + 1).create_tuple_iterator(
        output_numpy=True, num_epochs=1)
    got, errors = [], []

    def worker():
        while True:
            try:
                got.append(int(next(it)[0]))
            except StopIteration:
                return
            except RuntimeError as e:  # another thread ended the (only) epoch: MindSpore's error past the end
                if "beyond the specified number of epochs" not in str(e):
                    errors.append(e)
                return
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and sorted(got) == list(range(1, 2001))


def test_node_classes_are_exported():
    d = seq(4)
    assert isinstance(d.map(lambda x: x), ds.MapDataset) and isinstance(d.batch(2), ds.BatchDataset)
    assert isinstance(d.shuffle(2), ds.ShuffleDataset) and isinstance(d.repeat(2), ds.RepeatDataset)
    assert isinstance(d.take(1), ds.TakeDataset) and isinstance(d.skip(1), ds.SkipDataset)
    assert isinstance(d + seq(1), ds.ConcatDataset) and isinstance(d.project("column_0"), ds.ProjectDataset)
    assert isinstance(d.rename("column_0", "x"), ds.RenameDataset) and isinstance(d.filter(bool), ds.FilterDataset)
    assert isinstance(d.zip(seq(2).rename("column_0", "y")), ds.ZipDataset) and isinstance(d, ds.Dataset)


def test_len_apply_flags_use_sampler():
    assert len(seq(7).batch(2)) == 4
    assert abc().apply(lambda d: d.project("a")).get_col_names() == ["a"]
    with pytest.raises(TypeError, match="must return a Dataset"):
        abc().apply(lambda d: 5)
    assert not seq().is_shuffled() and seq().shuffle(2).map(lambda x: x).is_shuffled()
    assert ds.NumpySlicesDataset([1, 2]).is_shuffled()
    assert seq(num_shards=2, shard_id=1).batch(2).is_sharded() and not seq().is_sharded()
    d = seq(6)
    d.use_sampler(ds.SubsetSampler([4, 2]))
    assert ids(d) == [4, 2] and d.get_dataset_size() == 2
