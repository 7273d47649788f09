"""Python objects (dicts) in dataset columns: GeneratorDataset rows, map results, batch and per_batch_map, as
MindSpore 2.x passes them through (tutorial dataset/python_objects.md). Expected values are MindSpore 2.10's (CPU
build), obtained by running the same pipelines with it; checked here with NumPy."""
import re

import numpy as np
import pytest

import kiln
import kiln.dataset as ds


def _rows(d, **kw):
    return list(d.create_dict_iterator(num_epochs=1, output_numpy=True, **kw))


def test_generator_rows_hold_dicts_and_leaves_become_arrays():
    def gen():
        for i in range(3):
            yield {"a": i, "s": "t", "b": b"x", "f": 2.5, "n": np.int32(3), "l": [1, 2], "t": (1, "a"),
                   "o": None}, i

    rows = _rows(ds.GeneratorDataset(gen, ["d", "e"], shuffle=False))
    assert len(rows) == 3
    d = rows[2]["d"]
    # MindSpore 2.10: numbers/str/NumPy values -> arrays, lists/tuples item by item, bytes and objects as they are
    assert d["a"].dtype == np.int64 and d["a"].shape == () and d["a"] == 2
    assert d["s"].dtype.kind == "U" and d["s"] == "t"
    assert d["b"] == b"x" and isinstance(d["b"], bytes)
    assert d["f"].dtype == np.float64 and d["f"] == 2.5
    assert d["n"].dtype == np.int32
    assert isinstance(d["l"], list) and [int(x) for x in d["l"]] == [1, 2] and isinstance(d["l"][0], np.ndarray)
    assert isinstance(d["t"], tuple) and d["t"][1] == "a"
    assert d["o"] is None
    np.testing.assert_array_equal(rows[2]["e"], 2)


def test_map_sees_the_dict_as_yielded_and_tensor_output():
    seen = []

    def gen():
        yield {"a": 1, "l": [1, 2]},

    def look(d):
        seen.append({k: type(v).__name__ for k, v in d.items()})
        return d

    d = ds.GeneratorDataset(gen, ["d"], shuffle=False).map(look, input_columns="d")
    (row,) = list(d.create_tuple_iterator(num_epochs=1))
    assert seen[0] == {"a": "int", "l": "list"}  # MindSpore 2.10: the map function gets the Python values
    assert isinstance(row[0]["a"], kiln.Tensor) and row[0]["a"].asnumpy() == 1
    assert isinstance(row[0]["l"][1], kiln.Tensor)


def test_map_makes_and_consumes_dicts():
    d = ds.GeneratorDataset(lambda: iter(range(3)), ["c"], shuffle=False)
    d = d.map(lambda c: {"orig": c, "sq": c ** 2}, input_columns=["c"])
    assert [(int(r["c"]["orig"]), int(r["c"]["sq"])) for r in _rows(d)] == [(0, 0), (1, 1), (2, 4)]
    d = d.map(lambda c: c["sq"] * 2, input_columns=["c"])
    assert [int(r["c"]) for r in _rows(d)] == [0, 2, 8]


def test_batch_stacks_each_key():
    def gen():
        for i in range(5):
            yield {"powers": np.power(i, [1, 2, 3]), "s": f"x{i}"}, i

    rows = _rows(ds.GeneratorDataset(gen, ["c1", "c2"], shuffle=False).batch(2))
    # MindSpore 2.10: per key np.array of the rows' values; the last batch keeps its one row
    np.testing.assert_array_equal(rows[0]["c1"]["powers"], [[0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(rows[0]["c1"]["s"], ["x0", "x1"])
    np.testing.assert_array_equal(rows[2]["c1"]["powers"], [[4, 16, 64]])
    np.testing.assert_array_equal(rows[1]["c2"], [2, 3])


def test_per_batch_map_dicts_pass_through():
    def pbm(col1, info):
        return {"orig": col1, "index": np.arange(3)}, {"copied": col1}

    d = ds.GeneratorDataset(lambda: iter(range(9)), ["col1"], shuffle=False)
    rows = _rows(d.batch(3, per_batch_map=pbm, output_columns=["col1", "col2"]))
    assert len(rows) == 3
    # MindSpore 2.10: {'original_col1': [array(3), array(4), array(5)], 'index': array([0, 1, 2])}
    assert [int(x) for x in rows[1]["col1"]["orig"]] == [3, 4, 5]
    np.testing.assert_array_equal(rows[1]["col1"]["index"], [0, 1, 2])
    assert [int(x) for x in rows[2]["col2"]["copied"]] == [6, 7, 8]


def test_per_batch_map_gets_dicts_and_a_list_of_dicts_becomes_a_dict_of_lists():
    seen = []

    def pbm(d, e, info):
        seen.append([type(x).__name__ for x in d])
        return d, e

    d = ds.GeneratorDataset(lambda: (({"a": i}, i) for i in range(3)), ["d", "e"], shuffle=False)
    (row,) = _rows(d.batch(3, per_batch_map=pbm, input_columns=["d", "e"]))
    assert seen == [["dict", "dict", "dict"]]
    assert [int(x) for x in row["d"]["a"]] == [0, 1, 2]  # MindSpore 2.10: {'a': [array(0), array(1), array(2)]}
    np.testing.assert_array_equal(row["e"], [0, 1, 2])


@pytest.mark.parametrize("rows, message", [
    ([{"a": 1}, {"b": 2}], "Python dictionary keys do not match when creating a batch: b was not found in "
                           "previous rows."),
    ([{"a": 1, "b": 2}, {"a": 1}], "number of key/value pairs in dictionaries do not match. First row: 2, "
                                   "current row: 1"),
    ([{"a": {"c": 1}}, {"a": {"c": 2}}], "failed to create a NumPy array with primitive types for the dictionary "
                                         "objects in column 'd', key: 'a'"),
    ([{"a": np.ones(1)}, {"a": np.ones(2)}], "Failed to batch Python dictionary: ValueError: setting an array "
                                             "element with a sequence"),
    ([{"a": 1}, 1], "holds a Python dictionary in one row and a value of type ndarray in another"),
])
def test_batch_errors(rows, message):
    d = ds.GeneratorDataset(lambda: ((r,) for r in rows), ["d"], shuffle=False).batch(2)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        _rows(d)


def test_shapes_types_and_a_dict_row():
    d = ds.GeneratorDataset(lambda: (({"a": i}, i) for i in range(3)), ["d", "e"], shuffle=False)
    assert d.output_shapes() == [[0], []]  # MindSpore 2.10's values
    assert d.output_types() == [np.dtype(object), np.dtype(np.int64)]
    assert d.get_dataset_size() == 3
    one = ds.GeneratorDataset(lambda: ({"x": i} for i in range(2)), ["d"], shuffle=False)  # the row is the dict
    assert [int(r["d"]["x"]) for r in _rows(one)] == [0, 1]


def test_dict_refused_by_array_operations():
    from kiln.dataset import transforms
    d = ds.GeneratorDataset(lambda: (({"a": i},) for i in range(2)), ["d"], shuffle=False)
    d = d.map(transforms.TypeCast(kiln.float32), input_columns="d")
    with pytest.raises(Exception, match="TypeCast: invalid user input. Got <class .dict.>"):
        _rows(d)


def test_dict_columns_through_worker_processes():
    d = ds.GeneratorDataset(lambda: iter(range(6)), ["c"], shuffle=False)
    d = d.map(lambda c: {"v": c * 10}, input_columns="c", num_parallel_workers=2, python_multiprocessing=True)
    assert [int(r["c"]["v"]) for r in _rows(d)] == [0, 10, 20, 30, 40, 50]
