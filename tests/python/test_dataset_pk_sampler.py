"""PKSampler and samplers given as plain objects with __getitem__/__len__ (tutorial dataset/sampler.md), checked
against MindSpore 2.10's behaviour on the same inputs (its values noted in the comments)."""
import numpy as np
import pytest

import kiln.dataset as ds


def _cifar(tmp_path, labels):
    n = len(labels)
    imgs = np.arange(n * 3072, dtype=np.int64).reshape(n, 3, 32, 32).astype(np.uint8)
    imgs[:, 0, 0, 0] = np.arange(n)  # the row's index in its first pixel
    recs = np.concatenate([np.asarray(labels, np.uint8)[:, None], imgs.reshape(n, -1)], axis=1)
    recs.tofile(tmp_path / "data_batch_1.bin")
    return str(tmp_path)


def _pairs(d):
    return [(int(r["label"]), int(r["image"][0, 0, 0])) for r in d.create_dict_iterator(output_numpy=True)]


LABELS = [3, 0, 1, 0, 3, 1, 1, 0, 2, 3, 2, 0]


def test_pk_sampler_k_rows_of_each_class_in_label_order(tmp_path):
    root = _cifar(tmp_path, LABELS)
    ds.config.set_seed(0)
    d = ds.Cifar10Dataset(root, sampler=ds.PKSampler(2))
    assert d.get_dataset_size() == 8  # 4 classes x 2, as MindSpore (K x classes)
    pairs = _pairs(d)
    # MindSpore 2.10: classes ascending, each K times ([0, 0, 1, 1, 2, 2, 3, 3] on this data)
    assert [lab for lab, _ in pairs] == [0, 0, 1, 1, 2, 2, 3, 3]
    for lab, idx in pairs:  # each drawn from its class's rows
        assert LABELS[idx] == lab
    ds.config.set_seed(0)
    assert _pairs(ds.Cifar10Dataset(root, sampler=ds.PKSampler(2))) == pairs  # a seed gives the same rows
    # K larger than a class: drawn with replacement (MindSpore: uniform_int_distribution over the class's rows)
    big = _pairs(ds.Cifar10Dataset(root, sampler=ds.PKSampler(5)))
    assert [lab for lab, _ in big] == [c for c in range(4) for _ in range(5)]
    assert all(LABELS[i] == lab for lab, i in big)


def test_pk_sampler_num_samples_and_shuffle(tmp_path):
    root = _cifar(tmp_path, LABELS)
    d = ds.Cifar10Dataset(root, sampler=ds.PKSampler(2, num_samples=5))
    assert d.get_dataset_size() == 5
    assert [lab for lab, _ in _pairs(d)] == [0, 0, 1, 1, 2]  # MindSpore 2.10: cut after 5
    ds.config.set_seed(3)
    labs = [lab for lab, _ in _pairs(ds.Cifar10Dataset(root, sampler=ds.PKSampler(2, shuffle=True)))]
    assert sorted(labs) == [0, 0, 1, 1, 2, 2, 3, 3] and labs[0::2] == labs[1::2]  # classes shuffled, K each
    assert ds.PKSampler(2).get_num_samples() is None


def test_pk_sampler_argument_errors_and_sources_without_labels():
    with pytest.raises(TypeError, match="num_val must be integer but was: 2.5."):  # MindSpore's words
        ds.PKSampler(2.5)
    with pytest.raises(NotImplementedError, match="Not supported to specify num_class for PKSampler."):
        ds.PKSampler(2, num_class=3)
    with pytest.raises(ValueError, match="must be greater than 0"):
        ds.PKSampler(0)
    with pytest.raises(ValueError, match="GeneratorDataset doesn't support PKSampler."):  # MindSpore's words
        ds.GeneratorDataset([np.array(i) for i in range(3)], ["a"], sampler=ds.PKSampler(1))
    with pytest.raises(ValueError, match="doesn't support PKSampler."):
        ds.NumpySlicesDataset({"a": [1, 2], "label": [0, 1]}, sampler=ds.PKSampler(1))


def test_pk_sampler_image_folder(tmp_path):
    from PIL import Image
    for c, n in (("cat", 3), ("dog", 1)):
        (tmp_path / c).mkdir()
        for i in range(n):
            Image.new("RGB", (4, 4), (i, 0, 0)).save(tmp_path / c / f"{i}.png")
    d = ds.ImageFolderDataset(str(tmp_path), sampler=ds.PKSampler(2), decode=True)
    assert [int(r["label"]) for r in d.create_dict_iterator(output_numpy=True)] == [0, 0, 1, 1]


def test_sampler_object_with_getitem_and_len():
    class MySampler:  # the tutorial's: no __iter__, only __getitem__/__len__
        def __init__(self):
            self.index_ids = [3, 4, 3, 2, 0, 11, 5, 5, 5, 9, 1, 11, 11, 11, 11, 8]

        def __getitem__(self, index):
            return self.index_ids[index]

        def __len__(self):
            return len(self.index_ids)

    data = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]
    d = ds.NumpySlicesDataset(data, column_names=["data"], sampler=MySampler())
    # MindSpore 2.10 prints: d e d c a l f f f j b l l l l i
    assert [str(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == list("dedcalfffjbllll") + ["i"]
