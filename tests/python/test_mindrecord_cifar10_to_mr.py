"""kiln.mindrecord.Cifar10ToMR (tutorial dataset/optimize.ipynb), checked against MindSpore 2.10's converter:
rows {"id", "label", "data": OpenCV JPEG of the BGR image}, files DEST and DEST_test, index fields, errors. On the
same folder MindSpore 2.10 and Kiln wrote byte-identical DEST and DEST_test files (tools/run_tutorials.py's
stand-in archive)."""
import os
import pickle

import cv2
import numpy as np
import pytest

import kiln.dataset as ds
from kiln.mindrecord import Cifar10ToMR, FileReader, ParamValueError, PathNotExistsError


def _write(folder, n=4, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    out = {}
    for name in ("data_batch_1", "data_batch_2", "test_batch"):
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, 10, n)]
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({b"data": data, b"labels": labels, b"batch_label": name.encode()}, f, protocol=3)
        out[name] = (data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), labels)
    return out


def _rows(path):
    r = FileReader(path)
    try:
        return list(r.get_next())
    finally:
        r.close()


def test_cifar10_to_mr_rows(tmp_path):
    src = str(tmp_path / "cifar-10-batches-py")
    batches = _write(src)
    dst = str(tmp_path / "cifar10.record")
    assert Cifar10ToMR(src, dst).transform(["label"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["cifar-10-batches-py", "cifar10.record", "cifar10.record.db",
                                            "cifar10.record_test", "cifar10.record_test.db"]
    order = [f for f in os.listdir(src) if f.startswith("data_batch")]  # MindSpore's order: os.listdir's
    images = np.concatenate([batches[f][0] for f in order])
    labels = sum((batches[f][1] for f in order), [])
    rows = _rows(dst)
    assert [int(r["id"]) for r in rows] == list(range(8))
    assert [int(r["label"]) for r in rows] == labels
    for r, img in zip(rows, images):  # MindSpore: cv2.imencode(".jpeg", img[..., [2, 1, 0]])
        assert r["data"] == cv2.imencode(".jpeg", np.ascontiguousarray(img[..., ::-1]))[1].tobytes()
    test = _rows(dst + "_test")
    assert [int(r["label"]) for r in test] == batches["test_batch"][1] and int(test[-1]["id"]) == 3
    d = ds.MindDataset(dst, shuffle=False).map(ds.vision.Decode(), input_columns="data")
    first = next(d.create_dict_iterator(output_numpy=True))
    # the bytes field comes as one bytes value (dtype S, shape (1,)) and Decode takes it, as in MindSpore 2.10
    assert first["data"].shape == (32, 32, 3) and first["data"].dtype == np.uint8 and int(first["label"]) == labels[0]


def test_cifar10_to_mr_errors(tmp_path):
    src = str(tmp_path / "py")
    os.makedirs(src)
    with pytest.raises(PathNotExistsError, match=r"Invalid path. data_batch_\*"):
        Cifar10ToMR(src, str(tmp_path / "x"))
    _write(src, 1)
    os.remove(os.path.join(src, "test_batch"))
    with pytest.raises(PathNotExistsError, match="Invalid path. test_batch"):
        Cifar10ToMR(src, str(tmp_path / "x"))
    _write(src, 1)
    with pytest.raises(ParamValueError, match="File name should not contains"):
        Cifar10ToMR(src, str(tmp_path / "a:b"))
    with pytest.raises(ValueError, match="The parameter fields should be None or list"):
        Cifar10ToMR(src, str(tmp_path / "x")).transform("label")
    with open(os.path.join(src, "data_batch_1"), "wb") as f:  # a pickle naming another global is refused
        pickle.dump({b"data": os.getcwd}, f)
    with pytest.raises(pickle.UnpicklingError, match="is forbidden"):
        Cifar10ToMR(src, str(tmp_path / "y")).transform()
