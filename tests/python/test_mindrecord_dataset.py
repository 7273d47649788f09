"""kiln.dataset.MindDataset: output columns as MindSpore 2.10 gives them (the fixture it wrote), file order, shuffle
modes, shards, num_samples, samplers, padded samples, workers, pipelines, the compat alias and bad input."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln.dataset as ds
from kiln.dataset import MindDataset, Shuffle
from kiln.dataset.engine._common import ColumnError
from mindrecord_helpers import FIXTURES, same, write

from helpers import subprocess_env

FILES = [os.path.join(FIXTURES, f) for f in ("ms210.mindrecord0", "ms210.mindrecord1")]
SCHEMA = {"label": {"type": "int32"}, "name": {"type": "string"}, "v": {"type": "float64", "shape": [-1]}}


def _rows(data, col="label"):
    return [int(r[col]) for r in data.create_dict_iterator(output_numpy=True, num_epochs=1)]


@pytest.fixture
def three_files(tmp_path):
    """Files a (rows 0-3), b (4-6), c (7-9) of one schema."""
    mk = lambda i: {"label": i, "name": f"r{i}", "v": np.arange(i % 3, dtype=np.float64) + i}
    paths = []
    for name, rng in (("a.mr", range(0, 4)), ("b.mr", range(4, 7)), ("c.mr", range(7, 10))):
        write(tmp_path / name, SCHEMA, [[mk(i) for i in rng]], page_size=1 << 15, header_size=1 << 14)
        paths.append(str(tmp_path / name))
    return paths


def test_reads_mindspore_files_exactly():
    expected = np.load(os.path.join(FIXTURES, "ms210_expected.npz"))
    data = MindDataset(FILES, shuffle=False)
    assert data.get_col_names() == list(expected["__columns__"])
    assert data.get_dataset_size() == 5
    rows = list(data.create_tuple_iterator(output_numpy=True))
    assert len(rows) == 5
    for r, values in enumerate(rows):
        for c, v in zip(data.get_col_names(), values):
            assert same(v, expected[f"{r}/{c}"]), (r, c, v, expected[f"{r}/{c}"])
    # the types MindSpore 2.10 gives: 0-d scalars, '<U' strings, bytes as shape (1,) 'S<n>'
    first = dict(zip(data.get_col_names(), rows[0]))
    assert first["label"].dtype == np.int32 and first["label"].shape == ()
    assert first["name"].dtype.kind == "U" and first["name"].shape == ()
    assert first["raw"].dtype.kind == "S" and first["raw"].shape == (1,)
    assert first["mat"].shape == (2, 2) and first["mat"].dtype == np.float32


def test_one_file_name_reads_every_shard_in_header_order():
    label = lambda d: _rows(d)
    both = label(MindDataset(FILES, shuffle=False))
    assert label(MindDataset(FILES[1], shuffle=False)) == both
    sizes = np.load(os.path.join(FIXTURES, "ms210_expected.npz"))["__sizes__"]
    assert label(MindDataset([FILES[1]], shuffle=False)) == both[sizes[0]:]
    assert label(MindDataset([FILES[1], FILES[0]], shuffle=False)) == both[sizes[0]:] + both[:sizes[0]]
    assert sorted(both) == [-3, -2, -1, 0, 1]


def test_columns_list_order_and_random_access(three_files):
    data = MindDataset(three_files, columns_list=["v", "label"], shuffle=False)
    assert data.get_col_names() == ["v", "label"]
    rows = list(data.create_tuple_iterator(output_numpy=True))
    assert [int(r[1]) for r in rows] == list(range(10))
    assert all(same(r[0], np.arange(i % 3, dtype=np.float64) + i) for i, r in enumerate(rows))
    item = MindDataset(three_files, shuffle=False)[5]
    assert [x.tolist() for x in item] == [5, "r5", [5.0, 6.0]]
    with pytest.raises(IndexError, match="out of range for 10 rows"):
        MindDataset(three_files)[10]
    with pytest.raises(ValueError, match="index cannot be negative"):
        MindDataset(three_files)[-1]


def test_shards_num_samples_and_samplers(three_files):
    # MindSpore 2.10, 4 rows in 3 shards without shuffle: [0, 3], [1, 0], [2, 1]
    four = three_files[:1]
    assert [_rows(MindDataset(four, shuffle=False, num_shards=3, shard_id=k)) for k in range(3)] == [
        [0, 3], [1, 0], [2, 1]]
    shards = [_rows(MindDataset(three_files, shuffle=False, num_shards=2, shard_id=k)) for k in range(2)]
    assert shards == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    assert _rows(MindDataset(four, shuffle=False, num_samples=3, num_shards=2, shard_id=1)) == [1, 3]
    assert _rows(MindDataset(three_files, shuffle=False, num_samples=4)) == [0, 1, 2, 3]
    assert _rows(MindDataset(three_files, sampler=ds.SubsetSampler([3, 1, 8]))) == [3, 1, 8]
    assert _rows(MindDataset(three_files, sampler=ds.SequentialSampler(2, 3))) == [2, 3, 4]
    shuffled = [_rows(MindDataset(three_files, num_shards=2, shard_id=k, shuffle=True)) for k in range(2)]
    assert sorted(shuffled[0] + shuffled[1]) == list(range(10))  # the shards of one epoch partition the rows
    # MindSpore 2.10: shuffle + num_samples draws with replacement, even more rows than the files hold
    drawn = _rows(MindDataset(three_files, num_samples=30))
    assert len(drawn) == 30 and set(drawn) <= set(range(10)) and len(set(drawn)) < 30
    assert MindDataset(three_files, num_samples=30).get_dataset_size() == 30


def test_shuffle_modes(three_files):
    ds.config.set_seed(5)
    data = MindDataset(three_files)  # default: global shuffle, a new order every epoch
    it = data.create_dict_iterator(output_numpy=True, num_epochs=2)
    epochs = [[int(r["label"]) for r in it] for _ in range(2)]
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(10)) and epochs[0] != epochs[1]
    ds.config.set_seed(5)
    assert _rows(MindDataset(three_files)) == epochs[0]  # the seed reproduces the order
    files = [list(range(0, 4)), list(range(4, 7)), list(range(7, 10))]
    seen_files, seen_infile = set(), set()
    for seed in range(8):
        ds.config.set_seed(seed)
        got = _rows(MindDataset(three_files, shuffle=Shuffle.FILES))
        order = [k for k in (0, 1, 2) for f in [files[k]] if got[got.index(f[0]):got.index(f[0]) + len(f)] == f]
        assert len(order) == 3  # whole files, each in its own order
        order.sort(key=lambda k: got.index(files[k][0]))
        assert got == sum((files[k] for k in order), [])
        seen_files.add(tuple(order))
        got = _rows(MindDataset(three_files, shuffle=Shuffle.INFILE))
        assert [sorted(got[a:b]) for a, b in ((0, 4), (4, 7), (7, 10))] == files  # files stay in order
        seen_infile.add(tuple(got))
    assert len(seen_files) > 1 and len(seen_infile) > 1


def test_padded_samples(tmp_path, three_files):
    pad = {"label": -1, "name": "pad", "v": np.array([9.0, 9.0])}
    got = [[(int(r["label"]), str(r["name"])) for r in MindDataset(three_files[:1], columns_list=["label", "name"],
                                                                    shuffle=False, num_shards=3, shard_id=k,
                                                                    padded_sample=pad, num_padded=2)
            .create_dict_iterator(output_numpy=True)] for k in range(3)]
    # MindSpore 2.10: 4 rows + 2 padded over 3 shards: shard 0 [0, 3], shard 2 [2, padded]
    assert got == [[(0, "r0"), (3, "r3")], [(1, "r1"), (-1, "pad")], [(2, "r2"), (-1, "pad")]]
    row = MindDataset(three_files[:1], columns_list=["v", "label"], shuffle=False, num_shards=3, shard_id=2,
                      padded_sample=pad, num_padded=2)[5]
    assert same(row[0], np.array([9.0, 9.0])) and same(row[1], np.array(-1, np.int32))
    kw = dict(num_shards=3, shard_id=0)
    with pytest.raises(RuntimeError, match="requires columns_list"):
        MindDataset(three_files[:1], padded_sample=pad, num_padded=2, **kw)
    with pytest.raises(RuntimeError, match="requires num_padded"):
        MindDataset(three_files[:1], columns_list=["label"], padded_sample=pad, **kw)
    with pytest.raises(RuntimeError, match="num_padded is specified but padded_sample is not"):
        MindDataset(three_files[:1], num_padded=2, **kw)
    with pytest.raises(ValueError, match="padded_sample cannot match columns_list"):
        MindDataset(three_files[:1], columns_list=["label"], padded_sample={"v": 1.0}, num_padded=2, **kw)
    with pytest.raises(RuntimeError, match="must be divisible by num_shards 3"):
        MindDataset(three_files[:1], columns_list=["label"], padded_sample=pad, num_padded=1, **kw)
    with pytest.raises(RuntimeError, match="must be distributed"):
        MindDataset(three_files[:1], columns_list=["label"], padded_sample=pad, num_padded=2)
    with pytest.raises(TypeError, match=r"padded_sample\['name'\] must be a str"):
        MindDataset(three_files[:1], columns_list=["name"], padded_sample={"name": 5}, num_padded=2, **kw)
    with pytest.raises(ValueError, match=r"padded_sample\['label'\] must be a scalar"):
        MindDataset(three_files[:1], columns_list=["label"], padded_sample={"label": [1, 2]}, num_padded=2, **kw)


def test_workers_pipeline_and_sizes(three_files):
    seq = MindDataset(three_files, columns_list=["label", "v"], shuffle=False)
    par = MindDataset(three_files, columns_list=["label", "v"], shuffle=False, num_parallel_workers=2)
    a = list(seq.create_tuple_iterator(output_numpy=True))
    b = list(par.create_tuple_iterator(output_numpy=True))
    assert all(same(x, y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)) and len(a) == len(b) == 10
    pipe = MindDataset(three_files, columns_list=["label"], shuffle=False).map(lambda x: x * 10, "label").batch(4)
    assert pipe.get_dataset_size() == 3
    batches = [r[0] for r in pipe.create_tuple_iterator(output_numpy=True)]
    assert [b.tolist() for b in batches] == [[0, 10, 20, 30], [40, 50, 60, 70], [80, 90]]
    assert batches[0].dtype == np.int32
    tensors = next(MindDataset(three_files, columns_list=["label", "name"], shuffle=False).create_tuple_iterator())
    assert tensors[0].asnumpy().tolist() == 0 and str(tensors[1]) == "r0"  # text stays a NumPy array


def test_kiln_written_multi_shard_files(tmp_path):
    write(tmp_path / "m.mr", SCHEMA, [[{"label": i, "name": "é" * i, "v": np.full(i, 0.5)} for i in range(7)]],
          shard_num=3)
    data = MindDataset(str(tmp_path / "m.mr1"), shuffle=False)
    rows = list(data.create_dict_iterator(output_numpy=True))
    assert [int(r["label"]) for r in rows] == list(range(7))  # shards 0..2 hold runs 0-2, 3-4, 5-6
    assert all(str(r["name"]) == "é" * int(r["label"]) and same(r["v"], np.full(int(r["label"]), 0.5))
               for r in rows)


def test_bad_arguments_and_files(tmp_path, three_files):
    with pytest.raises(ValueError, match="does not exist or permission denied"):
        MindDataset(str(tmp_path / "none.mr"))
    with pytest.raises(ValueError, match="empty list"):
        MindDataset([])
    with pytest.raises(TypeError, match="must be a str or a list of str"):
        MindDataset(5)
    with pytest.raises(ValueError, match="names a file twice"):
        MindDataset([three_files[0], three_files[0]])
    with pytest.raises(ColumnError, match="column name: zz can not found in schema") as e:
        MindDataset(three_files, columns_list=["zz"])
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(TypeError, match="shuffle must be of boolean or enum"):
        MindDataset(three_files, shuffle="yes")
    with pytest.raises(ValueError, match="cannot be specified at the same time"):
        MindDataset(three_files, shuffle=Shuffle.FILES, num_samples=3)
    with pytest.raises(ValueError, match="Conflicting arguments"):
        MindDataset(three_files, shuffle=False, sampler=ds.SequentialSampler())
    with pytest.raises(ValueError, match="num_shards and shard_id need to be passed in together"):
        MindDataset(three_files, num_shards=2)
    with pytest.raises(ValueError, match="cache"):
        MindDataset(three_files, cache=object())
    os.remove(three_files[1] + ".db")
    with pytest.raises(RuntimeError, match="b.mr.db is not exists"):
        MindDataset(three_files)
    with open(three_files[2], "r+b") as f:
        f.truncate(os.path.getsize(three_files[2]) - 1)
    with pytest.raises(RuntimeError, match="c.mr is truncated"):
        MindDataset([three_files[2]])
    write(tmp_path / "other.mr", {"label": {"type": "int64"}}, [[{"label": 1}]])
    with pytest.raises(RuntimeError, match="different from others"):
        MindDataset([three_files[0], str(tmp_path / "other.mr")])
    write(tmp_path / "s.mr", SCHEMA, [[{"label": 0, "name": "x", "v": np.zeros(1)}]], shard_num=2)
    os.remove(tmp_path / "s.mr1")
    with pytest.raises(RuntimeError, match="s.mr1 is missing. Pass a list of files"):
        MindDataset(str(tmp_path / "s.mr0"))


def test_mindspore_names_under_the_compat_alias(tmp_path):
    code = ("from mindspore.mindrecord import FileWriter, FileReader\n"
            "from mindspore.dataset import MindDataset\n"
            "import mindspore.mindrecord, kiln.mindrecord\n"
            "assert mindspore.mindrecord is kiln.mindrecord\n"
            "w = FileWriter('t.mindrecord', shard_num=1, overwrite=True)\n"
            "w.add_schema({'x': {'type': 'int32'}}, 'd')\n"
            "w.write_raw_data([{'x': 4}])\n"
            "w.commit()\n"
            "print([int(r['x']) for r in MindDataset('t.mindrecord').create_dict_iterator(output_numpy=True)])\n")
    r = subprocess.run([sys.executable, "-m", "kiln.compat", "-c", code], cwd=tmp_path, env=subprocess_env(()),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[4]"


def _gen_rows():
    for i in range(5):
        yield (np.array(i, np.int64), np.full((2, 3, 3), i, np.uint8), np.arange(i + 1, dtype=np.float32),
               np.array(f"s{i}"), np.array(i % 2 == 0), np.array([i, -i], np.int8), np.array(1.5, np.float16),
               np.array(7, np.uint32), np.full((i + 1, 2), i, np.int32), np.array([b"b%d" % i]))


def test_save_writes_mindspore_schema_and_rows(tmp_path):
    from kiln.mindrecord import FileReader
    names = ["i", "img", "v", "s", "flag", "i8", "h", "u32", "m", "raw"]
    data = ds.GeneratorDataset(_gen_rows, names, shuffle=False)
    data.save(str(tmp_path / "sv.mr"))
    reader = FileReader(str(tmp_path / "sv.mr"))
    # the schema MindSpore 2.10's save makes for these columns (its implicit casts; first dimension -1)
    assert reader.schema() == {"flag": {"type": "int32"}, "h": {"type": "float32"}, "i": {"type": "int64"},
                               "i8": {"shape": [-1], "type": "int32"}, "img": {"shape": [-1, 3, 3], "type": "int32"},
                               "m": {"shape": [-1, 2], "type": "int32"}, "s": {"type": "string"},
                               "u32": {"type": "int64"}, "v": {"shape": [-1], "type": "float32"},
                               "raw": {"type": "bytes"}}
    reader.close()
    back = list(MindDataset(str(tmp_path / "sv.mr"), columns_list=names, shuffle=False)
                .create_tuple_iterator(output_numpy=True))
    assert len(back) == 5
    for want, got in zip(_gen_rows(), back):
        for w, g in zip(want[:9], got[:9]):
            assert np.array_equal(w, g) and g.shape == w.shape
        assert got[1].dtype == np.int32 and got[6].dtype == np.float32 and got[7].dtype == np.int64
        assert same(got[9], want[9])
    many = ds.NumpySlicesDataset(np.arange(24).reshape(12, 2), ["x"], shuffle=False)
    many.save(str(tmp_path / "m.mr"), num_files=3)
    per = [[r[0].tolist() for r in MindDataset([str(tmp_path / f"m.mr{k}")], shuffle=False)
            .create_tuple_iterator(output_numpy=True)] for k in range(3)]
    assert per == [[[0, 1], [2, 3], [4, 5], [6, 7]], [[8, 9], [10, 11], [12, 13], [14, 15]],
                   [[16, 17], [18, 19], [20, 21], [22, 23]]]


def test_save_errors(tmp_path):
    data = ds.NumpySlicesDataset(np.arange(4), ["x"], shuffle=False)
    data.save(str(tmp_path / "a.mr"))
    with pytest.raises(RuntimeError, match="already exist"):
        data.save(str(tmp_path / "a.mr"))
    with pytest.raises(ValueError, match="file_type must be 'mindrecord'"):
        data.save(str(tmp_path / "b.mr"), file_type="tfrecord")
    with pytest.raises(ValueError, match=r"num_files must be in \[1, 1000\]"):
        data.save(str(tmp_path / "b.mr"), num_files=0)
    texts = ds.GeneratorDataset(lambda: iter([(np.array(["a", "b"]),)]), ["t"])
    with pytest.raises(RuntimeError, match="can not support multi-dimensional string"):
        texts.save(str(tmp_path / "t.mr"))
    ragged = ds.GeneratorDataset(lambda: iter([(np.zeros((1, 2)),), (np.zeros((1, 3)),)]), ["r"])
    with pytest.raises(RuntimeError, match=r"row 1 column 'r' has shape \(1, 3\); the first row fixed \[-1, 2\]"):
        ragged.save(str(tmp_path / "r.mr"))
    with pytest.raises(RuntimeError, match="the dataset is empty"):
        data.filter(lambda x: False, "x").save(str(tmp_path / "e.mr"))
