"""kiln.dataset sources against NumPy/Pillow references: NumpySlicesDataset, GeneratorDataset, MnistDataset,
Cifar10Dataset, ImageFolderDataset, CSVDataset (the file formats are written here with NumPy/Pillow)."""
import io
import os

import numpy as np
import pytest
from PIL import Image

import kiln
import kiln.dataset as ds


def rows(d, **kw):
    return list(d.create_tuple_iterator(output_numpy=True, num_epochs=1, **kw))


def col(d, k=0):
    return [r[k].tolist() for r in rows(d)]


# ---------------------------------------------------------------- NumpySlicesDataset
def test_numpy_slices_list_tuple_dict_array():
    d = ds.NumpySlicesDataset([1, 2, 3], shuffle=False)
    assert d.get_col_names() == ["column_0"]
    assert d.output_types() == [np.dtype(np.int64)] and d.output_shapes() == [[]]
    assert col(d) == [1, 2, 3]
    d = ds.NumpySlicesDataset(([1.5, 2.5], [[1, 2], [3, 4]]), column_names=["f", "v"], shuffle=False)
    assert d.output_types() == [np.dtype(np.float64), np.dtype(np.int64)]
    assert d.output_shapes() == [[], [2]]
    r = rows(d)
    assert r[1][0] == 2.5 and r[1][1].tolist() == [3, 4]
    d = ds.NumpySlicesDataset({"a": np.arange(3, dtype=np.float32), "b": np.array([[1], [2], [3]])}, shuffle=False)
    assert d.get_col_names() == ["a", "b"] and d.get_dataset_size() == 3
    assert rows(d)[2][0].dtype == np.float32 and rows(d)[2][1].tolist() == [3]
    x = np.random.default_rng(0).normal(size=(5, 2, 3)).astype(np.float32)
    got = np.stack(col(ds.NumpySlicesDataset(x, shuffle=False)))
    np.testing.assert_array_equal(got, x)
    assert ds.NumpySlicesDataset([True, False], shuffle=False).output_types() == [np.dtype(bool)]


def test_numpy_slices_tensor_iterator_gives_kiln_tensors():
    d = ds.NumpySlicesDataset(np.arange(6, dtype=np.float32).reshape(3, 2), shuffle=False)
    r = next(iter(d))
    assert isinstance(r, list) and isinstance(r[0], kiln.Tensor)
    assert r[0].dtype == kiln.float32 and r[0].shape == (2,)
    np.testing.assert_array_equal(r[0].asnumpy(), [0, 1])
    dr = next(d.create_dict_iterator())
    assert list(dr) == ["column_0"] and isinstance(dr["column_0"], kiln.Tensor)


def test_numpy_slices_errors():
    with pytest.raises(ValueError, match="Data length in each column is not equal"):
        ds.NumpySlicesDataset(([1, 2], [1, 2, 3]))
    with pytest.raises(TypeError, match="NumpySlicesDataset"):
        ds.NumpySlicesDataset(5)
    with pytest.raises(ValueError, match="column_names"):
        ds.NumpySlicesDataset(([1], [2]), column_names=["a"])
    with pytest.raises(ValueError, match="passed in together"):
        ds.NumpySlicesDataset([1, 2, 3], num_shards=2)
    with pytest.raises(ValueError, match="shard_id"):
        ds.NumpySlicesDataset([1, 2, 3], num_shards=2, shard_id=2)
    with pytest.raises(ValueError, match="Conflicting arguments"):
        ds.NumpySlicesDataset([1, 2, 3], sampler=ds.SequentialSampler(), shuffle=True)
    with pytest.raises(ValueError, match="Conflicting arguments"):
        ds.NumpySlicesDataset([1, 2, 3], sampler=ds.SequentialSampler(), num_shards=2, shard_id=0)
    with pytest.raises(TypeError, match="shuffle"):
        ds.NumpySlicesDataset([1, 2], shuffle="yes")
    with pytest.raises(TypeError, match="num_samples"):
        ds.NumpySlicesDataset([1, 2], num_samples=1.5)


def test_numpy_slices_ragged_rows():
    d = ds.NumpySlicesDataset([[1, 2], [1, 2, 3]], shuffle=False)
    assert col(d) == [[1, 2], [1, 2, 3]]


# ---------------------------------------------------------------- GeneratorDataset
class Source:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return np.array([i, i * i]), i * 1.5

    def __len__(self):
        return self.n


def test_generator_random_access():
    d = ds.GeneratorDataset(Source(5), ["x", "y"], shuffle=False)
    assert d.get_dataset_size() == 5 and d.get_col_names() == ["x", "y"]
    assert d.output_types() == [np.dtype(np.int64), np.dtype(np.float64)]
    assert d.output_shapes() == [[2], []]
    assert [(r[0].tolist(), float(r[1])) for r in rows(d)] == [([i, i * i], i * 1.5) for i in range(5)]
    ds.config.set_seed(3)
    order = [int(r[0][0]) for r in rows(ds.GeneratorDataset(Source(20), ["x", "y"]))]
    assert sorted(order) == list(range(20)) and order != list(range(20))  # shuffled by default


def test_generator_iterable_and_function():
    def gen():
        for i in range(4):
            yield (np.array([i, i]),)

    d = ds.GeneratorDataset(gen, ["x"])
    assert d.get_dataset_size() == 4
    assert col(d) == [[i, i] for i in range(4)]
    assert col(d) == [[i, i] for i in range(4)]  # the function is called again for each epoch
    d = ds.GeneratorDataset(gen, "x", num_samples=2)
    assert col(d) == [[0, 0], [1, 1]] and d.get_dataset_size() == 2
    # bare values are one column; a list of tuples is random access
    assert col(ds.GeneratorDataset(lambda: iter(range(3)), ["v"])) == [0, 1, 2]
    d = ds.GeneratorDataset([(1, 2.0), (3, 4.0)], ["a", "b"], shuffle=False)
    assert [(int(a), float(b)) for a, b in rows(d)] == [(1, 2.0), (3, 4.0)]
    # iterable sources ignore shuffle, as MindSpore
    assert col(ds.GeneratorDataset(gen, ["x"], shuffle=True)) == [[i, i] for i in range(4)]


def test_generator_column_types_and_tensor_values():
    d = ds.GeneratorDataset([(1, 2.0)], ["a", "b"], column_types=[kiln.int32, kiln.float16], shuffle=False)
    a, b = rows(d)[0]
    assert a.dtype == np.int32 and b.dtype == np.float16
    d = ds.GeneratorDataset([(kiln.Tensor(np.ones(2, np.float32)),)], ["t"], shuffle=False)
    assert rows(d)[0][0].dtype == np.float32


def test_generator_errors():
    def gen():
        yield (1,)

    with pytest.raises(ValueError, match="columns_names"):
        ds.GeneratorDataset(gen)
    with pytest.raises(ValueError, match="num_shards is not supported"):
        ds.GeneratorDataset(gen, ["x"], num_shards=2, shard_id=0)
    with pytest.raises(ValueError, match="sampler is not supported"):
        ds.GeneratorDataset(gen, ["x"], sampler=ds.SequentialSampler())
    with pytest.raises(TypeError, match="source"):
        ds.GeneratorDataset(5, ["x"])
    with pytest.raises(ValueError, match="num_parallel_workers"):
        ds.GeneratorDataset(Source(3), ["x", "y"], num_parallel_workers=0)
    with pytest.raises(RuntimeError, match="2 columns"):
        rows(ds.GeneratorDataset(Source(3), ["x"], shuffle=False))

    def failing():
        yield (1,)
        raise KeyError("source broke")

    with pytest.raises(RuntimeError, match="source broke") as e:
        rows(ds.GeneratorDataset(failing, ["x"]))
    assert "in failing" in str(e.value)  # the user's traceback is in the message
    with pytest.raises(TypeError, match="object array"):
        rows(ds.GeneratorDataset([(object(),)], ["x"], shuffle=False))


# ---------------------------------------------------------------- MNIST
def write_idx(path, arr, magic):
    with open(path, "wb") as f:
        f.write(magic.to_bytes(4, "big"))
        for s in arr.shape:
            f.write(int(s).to_bytes(4, "big"))
        f.write(arr.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    rng = np.random.default_rng(0)
    tr_x, tr_y = rng.integers(0, 256, (7, 28, 28)), rng.integers(0, 10, 7)
    te_x, te_y = rng.integers(0, 256, (3, 28, 28)), rng.integers(0, 10, 3)
    write_idx(tmp_path / "train-images-idx3-ubyte", tr_x, 2051)
    write_idx(tmp_path / "train-labels-idx1-ubyte", tr_y, 2049)
    write_idx(tmp_path / "t10k-images-idx3-ubyte", te_x, 2051)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", te_y, 2049)
    return tmp_path, (tr_x, tr_y), (te_x, te_y)


def test_mnist(mnist_dir):
    d, (tr_x, tr_y), (te_x, te_y) = mnist_dir
    m = ds.MnistDataset(str(d), usage="train", shuffle=False)
    assert m.get_col_names() == ["image", "label"] and m.get_dataset_size() == 7
    assert m.output_types() == [np.dtype(np.uint8), np.dtype(np.uint32)]
    assert m.output_shapes() == [[28, 28, 1], []]
    r = rows(m)
    np.testing.assert_array_equal(np.stack([x[0] for x in r])[..., 0], tr_x)
    assert [int(x[1]) for x in r] == tr_y.tolist()
    assert [int(x[1]) for x in rows(ds.MnistDataset(str(d), usage="test", shuffle=False))] == te_y.tolist()
    assert [int(x[1]) for x in rows(ds.MnistDataset(str(d), shuffle=False))] == tr_y.tolist() + te_y.tolist()
    # num_samples and shards
    assert ds.MnistDataset(str(d), "train", num_samples=3, shuffle=False).get_dataset_size() == 3
    parts = [[int(x[1]) for x in rows(ds.MnistDataset(str(d), "all", num_shards=2, shard_id=k, shuffle=False))]
             for k in range(2)]
    assert parts[0] == (tr_y.tolist() + te_y.tolist())[0::2]


def test_mnist_errors(tmp_path, mnist_dir):
    d = mnist_dir[0]
    with pytest.raises(ValueError, match="does not exist"):
        ds.MnistDataset(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="usage"):
        ds.MnistDataset(str(d), usage="val")
    (d / "t10k-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x03" + b"\x00" * 8)
    with pytest.raises(RuntimeError, match="magic number"):
        ds.MnistDataset(str(d), usage="test").get_dataset_size()
    e = tmp_path / "empty"
    e.mkdir()
    with pytest.raises(RuntimeError, match="failed to find"):
        ds.MnistDataset(str(e), usage="train").get_dataset_size()
    write_idx(e / "train-images-idx3-ubyte", np.zeros((2, 28, 28)), 2051)
    with open(e / "train-images-idx3-ubyte", "r+b") as f:
        f.truncate(100)
    write_idx(e / "train-labels-idx1-ubyte", np.zeros(2), 2049)
    with pytest.raises(RuntimeError, match="needs"):
        ds.MnistDataset(str(e), usage="train").get_dataset_size()


# ---------------------------------------------------------------- CIFAR-10
def test_cifar10(tmp_path):
    rng = np.random.default_rng(1)
    imgs = rng.integers(0, 256, (6, 3, 32, 32)).astype(np.uint8)  # CHW, as in the files
    labels = rng.integers(0, 10, 6).astype(np.uint8)
    recs = np.concatenate([labels[:, None], imgs.reshape(6, -1)], axis=1)
    recs[:4].tofile(tmp_path / "data_batch_1.bin")
    recs[4:5].tofile(tmp_path / "data_batch_2.bin")
    recs[5:].tofile(tmp_path / "test_batch.bin")
    c = ds.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False)
    assert c.get_dataset_size() == 5
    assert c.output_types() == [np.dtype(np.uint8), np.dtype(np.uint32)] and c.output_shapes() == [[32, 32, 3], []]
    r = rows(c)
    np.testing.assert_array_equal(np.stack([x[0] for x in r]), imgs[:5].transpose(0, 2, 3, 1))
    assert [int(x[1]) for x in r] == labels[:5].tolist()
    t = rows(ds.Cifar10Dataset(str(tmp_path), usage="test", shuffle=False))
    np.testing.assert_array_equal(t[0][0], imgs[5].transpose(1, 2, 0))
    assert ds.Cifar10Dataset(str(tmp_path)).get_dataset_size() == 6
    (tmp_path / "test_batch.bin").write_bytes(b"\x01" * 100)
    with pytest.raises(RuntimeError, match="3073"):
        ds.Cifar10Dataset(str(tmp_path), usage="test").get_dataset_size()


# ---------------------------------------------------------------- ImageFolder
@pytest.fixture
def image_dir(tmp_path):
    rng = np.random.default_rng(2)
    imgs = {}
    for cls, names in (("dog", ["b.png", "a.png"]), ("cat", ["z.png"]), ("emu", ["c.jpg"])):
        (tmp_path / cls).mkdir()
        for n in names:
            arr = rng.integers(0, 256, (4, 5, 3)).astype(np.uint8)
            Image.fromarray(arr).save(tmp_path / cls / n)
            imgs[(cls, n)] = arr
    (tmp_path / "dog" / "notes.txt").write_text("x")
    return tmp_path, imgs


def test_image_folder(image_dir):
    d, imgs = image_dir
    f = ds.ImageFolderDataset(str(d), shuffle=False, extensions=[".png", ".jpg"])
    assert f.get_col_names() == ["image", "label"] and f.get_dataset_size() == 4
    assert f.get_class_indexing() == {"cat": 0, "dog": 1, "emu": 2}
    r = rows(f)
    assert [int(x[1]) for x in r] == [0, 1, 1, 2]  # sorted classes, sorted files
    assert r[0][0].dtype == np.uint8 and r[0][0].ndim == 1
    assert r[0][0].tobytes() == (d / "cat" / "z.png").read_bytes()
    assert r[0][1].dtype == np.int32
    dec = rows(ds.ImageFolderDataset(str(d), shuffle=False, extensions=[".png"], decode=True))
    np.testing.assert_array_equal(dec[0][0], imgs[("cat", "z.png")])
    np.testing.assert_array_equal(dec[1][0], imgs[("dog", "a.png")])
    np.testing.assert_array_equal(dec[2][0], imgs[("dog", "b.png")])
    jpg = rows(ds.ImageFolderDataset(str(d), shuffle=False, extensions=[".jpg"], decode=True))
    ref = np.asarray(Image.open(io.BytesIO((d / "emu" / "c.jpg").read_bytes())).convert("RGB"))
    np.testing.assert_array_equal(jpg[0][0], ref)
    # no extensions: every file; class_indexing: only these classes, with these labels
    assert ds.ImageFolderDataset(str(d)).get_dataset_size() == 5 and ds.ImageFolderDataset(str(d)).num_classes() == 3
    ci = ds.ImageFolderDataset(str(d), shuffle=False, class_indexing={"dog": 5}, extensions=[".png"])
    assert [int(x[1]) for x in rows(ci)] == [5, 5]
    # decoding in 2 threads keeps the order
    par = rows(ds.ImageFolderDataset(str(d), shuffle=False, extensions=[".png"], decode=True, num_parallel_workers=2))
    for a, b in zip(par, dec):
        np.testing.assert_array_equal(a[0], b[0])


def test_image_folder_errors(image_dir):
    d, _ = image_dir
    with pytest.raises(ValueError, match="class_indexing"):
        ds.ImageFolderDataset(str(d), class_indexing={"wolf": 0})
    with pytest.raises(TypeError, match="decode"):
        ds.ImageFolderDataset(str(d), decode=1)
    with pytest.raises(TypeError, match="extensions"):
        ds.ImageFolderDataset(str(d), extensions=[1])
    with pytest.raises(RuntimeError, match="cannot decode .*notes.txt"):
        rows(ds.ImageFolderDataset(str(d), decode=True, shuffle=False))


# ---------------------------------------------------------------- CSV
def test_csv(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text('1,2.5,x\n3,4.5,"y,z"\n,6.5,w\n')
    d = ds.CSVDataset(str(p), column_names=["i", "f", "s"], shuffle=False)
    assert d.get_col_names() == ["i", "f", "s"]
    r = rows(d)
    assert [x[0].item() for x in r] == ["1", "3", ""] and r[0][0].dtype.kind == "U"  # strings without defaults
    d = ds.CSVDataset(str(p), column_defaults=[7, 0.0, ""], column_names=["i", "f", "s"], shuffle=False)
    assert d.output_types()[:2] == [np.dtype(np.int32), np.dtype(np.float32)]
    r = rows(d)
    assert [x[0].item() for x in r] == [1, 3, 7]  # empty field: the default
    assert [x[1].item() for x in r] == [2.5, 4.5, 6.5] and r[1][2].item() == "y,z"
    # Tensor iterator: numbers become Tensors, strings stay NumPy
    t = next(d.create_tuple_iterator())
    assert isinstance(t[0], kiln.Tensor) and isinstance(t[2], np.ndarray)
    # header line, two files, delimiter
    q1, q2 = tmp_path / "h1.csv", tmp_path / "h2.csv"
    q1.write_text("a;b\n1;2\n3;4\n")
    q2.write_text("a;b\n5;6\n")
    h = ds.CSVDataset([str(q1), str(q2)], field_delim=";", column_defaults=[0, 0], shuffle=False)
    assert h.get_col_names() == ["a", "b"] and [x[0].item() for x in rows(h)] == [1, 3, 5]
    ds.config.set_seed(4)
    g = [x[0].item() for x in rows(ds.CSVDataset([str(q1), str(q2)], field_delim=";", column_defaults=[0, 0]))]
    assert sorted(g) == [1, 3, 5]
    f = [x[0].item() for x in rows(ds.CSVDataset([str(q1), str(q2)], field_delim=";", column_defaults=[0, 0],
                                                  shuffle=ds.Shuffle.FILES))]
    assert f in ([1, 3, 5], [5, 1, 3])
    shards = [[x[0].item() for x in rows(ds.CSVDataset([str(q1), str(q2)], field_delim=";", column_defaults=[0, 0],
                                                         shuffle=False, num_shards=3, shard_id=k))] for k in range(3)]
    assert shards == [[1], [3], [5]]


def test_csv_errors(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("1,x\n2\n")
    with pytest.raises(ValueError, match="line 2 has 1 fields"):
        ds.CSVDataset(str(p), column_names=["a", "b"])
    p.write_text("1,x\nq,y\n")
    with pytest.raises(RuntimeError, match="'q' is not a valid int"):
        ds.CSVDataset(str(p), column_names=["a", "b"], column_defaults=[0, ""])
    with pytest.raises(ValueError, match="does not exist"):
        ds.CSVDataset(str(tmp_path / "none.csv"))
    with pytest.raises(ValueError, match="field_delim"):
        ds.CSVDataset(str(p), field_delim=",,")
    with pytest.raises(TypeError, match="column_defaults"):
        ds.CSVDataset(str(p), column_defaults=[None, 1])


def test_generator_batch_sampler_and_collate_fn():
    class S:
        def __getitem__(self, i):
            return np.array([i, i]), i

        def __len__(self):
            return 7

    # values and sizes as MindSpore 2.10
    d = ds.GeneratorDataset(S(), ["x", "y"], batch_sampler=[[0, 1, 2], [5, 6], [3]])
    assert d.get_dataset_size() == 3 and d.get_batch_size() == -1
    assert [[c.tolist() for c in r] for r in rows(d)] == [[[[0, 0], [1, 1], [2, 2]], [0, 1, 2]],
                                                         [[[5, 5], [6, 6]], [5, 6]], [[[3, 3]], [3]]]

    def coll(x, y):
        return np.stack(x).sum(0), np.array(y) * 10
    d = ds.GeneratorDataset(S(), ["x", "y"], batch_sampler=[[0, 1, 2], [5, 6]], collate_fn=coll)
    assert [[c.tolist() for c in r] for r in rows(d)] == [[[3, 3], [0, 10, 20]], [[11, 11], [50, 60]]]
    par = ds.GeneratorDataset(S(), ["x", "y"], batch_sampler=[[i] for i in range(7)], num_parallel_workers=2)
    assert [int(r[1][0]) for r in rows(par)] == list(range(7))
    with pytest.raises(ValueError, match="mutually exclusive"):
        ds.GeneratorDataset(S(), ["x", "y"], batch_sampler=[[0]], shuffle=True)
    with pytest.raises(ValueError, match="only when batch_sampler"):
        ds.GeneratorDataset(S(), ["x", "y"], collate_fn=coll)
    with pytest.raises(IndexError, match="out of range"):
        rows(ds.GeneratorDataset(S(), ["x", "y"], batch_sampler=[[9]]))


def _write_cifar100(folder, name, n, rng):
    r = np.zeros((n, 3074), np.uint8)
    r[:, 0] = rng.integers(0, 20, n)
    r[:, 1] = rng.integers(0, 100, n)
    r[:, 2:] = rng.integers(0, 256, (n, 3072))
    r.tofile(os.path.join(folder, name))
    return r


def test_cifar100_dataset(tmp_path):
    """Columns, dtypes and order as MindSpore 2.10's Cifar100Dataset (checked on the same files): 'all' reads
    test.bin before train.bin (name order); the image is the record's CHW bytes as HWC."""
    import kiln.dataset as ds
    rng = np.random.default_rng(0)
    train = _write_cifar100(str(tmp_path), "train.bin", 5, rng)
    test = _write_cifar100(str(tmp_path), "test.bin", 3, rng)
    for usage, recs in (("train", train), ("test", test), ("all", np.concatenate([test, train])),
                        (None, np.concatenate([test, train]))):
        d = ds.Cifar100Dataset(str(tmp_path), usage=usage, shuffle=False)
        assert d.get_col_names() == ["image", "coarse_label", "fine_label"]
        assert d.get_dataset_size() == len(recs)
        rows = list(d.create_tuple_iterator(output_numpy=True))
        for (im, coarse, fine), rec in zip(rows, recs):
            assert im.dtype == np.uint8 and im.shape == (32, 32, 3)
            np.testing.assert_array_equal(im, rec[2:].reshape(3, 32, 32).transpose(1, 2, 0))
            assert coarse.dtype == np.uint32 and fine.dtype == np.uint32 and coarse.shape == ()
            assert (int(coarse), int(fine)) == (rec[0], rec[1])
    with pytest.raises(ValueError):
        ds.Cifar100Dataset(str(tmp_path), usage="valid")
    with open(os.path.join(str(tmp_path), "train.bin"), "ab") as f:
        f.write(b"x")
    with pytest.raises(RuntimeError, match="3074"):
        list(ds.Cifar100Dataset(str(tmp_path), usage="train").create_tuple_iterator())
