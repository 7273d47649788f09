"""examples/mnist_files.py: exact idx format (magic numbers, big-endian sizes, uint8 C-order payload), the digits
upscaled as documented (Pillow bicubic 20x20 in a 28x28 zero border), a deterministic disjoint split, the tutorial
directory layout, the reader's round trip and its errors on damaged files."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from helpers import subprocess_env

pytest.importorskip("sklearn")
from PIL import Image
from sklearn.datasets import load_digits

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
sys.path.insert(0, EXAMPLES)
import mnist_files  # noqa: E402 (after sys.path has examples/)

sys.path.remove(EXAMPLES)


@pytest.fixture(scope="module")
def arrays():
    return mnist_files.digits_as_mnist()


@pytest.fixture(scope="module")
def flat(tmp_path_factory, arrays):
    d = tmp_path_factory.mktemp("mnist")
    paths = mnist_files.write_mnist(str(d))
    return d, paths


def parse_idx(path):
    """Independent reader: header fields and payload as written on disk."""
    raw = open(path, "rb").read()
    magic = struct.unpack(">I", raw[:4])[0]
    ndim = raw[3]
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    return magic, dims, raw[4 + 4 * ndim:]


def test_split_sizes_disjoint_and_complete(arrays):
    (xtr, ytr), (xte, yte) = arrays
    assert xtr.shape == (1500, 28, 28) and xte.shape == (297, 28, 28)
    assert ytr.shape == (1500,) and yte.shape == (297,)
    assert xtr.dtype == xte.dtype == ytr.dtype == yte.dtype == np.uint8
    digits = load_digits()
    # together, the two splits are exactly the 1797 digits: the label histogram matches scikit-learn's
    np.testing.assert_array_equal(np.bincount(np.concatenate([ytr, yte]), minlength=10),
                                  np.bincount(digits.target, minlength=10))
    assert set(np.unique(yte)) == set(range(10))


def test_images_are_the_digits_resized_with_pillow_and_centred(arrays):
    (xtr, ytr), (xte, yte) = arrays
    digits = load_digits()
    perm = np.random.default_rng(0).permutation(len(digits.images))
    test_idx, train_idx = perm[:297], perm[297:]
    for out, labels, idx in ((xtr, ytr, train_idx), (xte, yte, test_idx)):
        np.testing.assert_array_equal(labels, digits.target[idx])
        for k in (0, 1, len(idx) - 1):
            src = np.rint(digits.images[idx[k]] * 255.0 / 16.0).astype(np.uint8)
            want = np.asarray(Image.fromarray(src).resize((20, 20), Image.Resampling.BICUBIC))
            np.testing.assert_array_equal(out[k, 4:24, 4:24], want)
    for x in (xtr, xte):
        border = np.ones((28, 28), bool)
        border[4:24, 4:24] = False
        assert x[:, border].max() == 0  # MNIST-like: the digit sits in the central 20x20 box
        assert x.max() == 255


def test_split_is_deterministic_and_seeded(arrays):
    (xtr, ytr), _ = mnist_files.digits_as_mnist()
    np.testing.assert_array_equal(xtr, arrays[0][0])
    np.testing.assert_array_equal(ytr, arrays[0][1])
    (_, ytr2), _ = mnist_files.digits_as_mnist(seed=1)
    assert not np.array_equal(ytr2, ytr)
    (xs, _), (xt, _) = mnist_files.digits_as_mnist(test_size=100)
    assert len(xs) == 1697 and len(xt) == 100


def test_idx_headers_and_payload_exact(flat, arrays):
    d, paths = flat
    assert sorted(os.listdir(d)) == ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
                                     "train-images-idx3-ubyte", "train-labels-idx1-ubyte"]
    (xtr, ytr), (xte, yte) = arrays
    for (split, kind), arr in {("train", "images"): xtr, ("train", "labels"): ytr,
                               ("test", "images"): xte, ("test", "labels"): yte}.items():
        magic, dims, payload = parse_idx(paths[split, kind])
        assert magic == (2051 if kind == "images" else 2049)
        assert dims == arr.shape
        assert payload == arr.tobytes()
        assert os.path.getsize(paths[split, kind]) == 4 + 4 * arr.ndim + arr.size
        raw = open(paths[split, kind], "rb").read(8)
        assert raw[:4] == (b"\x00\x00\x08\x03" if kind == "images" else b"\x00\x00\x08\x01")
        assert int.from_bytes(raw[4:8], "big") == len(arr)


def test_read_idx_round_trip(flat, arrays, tmp_path):
    _, paths = flat
    np.testing.assert_array_equal(mnist_files.read_idx(paths["train", "images"]), arrays[0][0])
    np.testing.assert_array_equal(mnist_files.read_idx(paths["test", "labels"]), arrays[1][1])
    odd = np.arange(2 * 3 * 5, dtype=np.uint8).reshape(2, 3, 5)
    p = str(tmp_path / "odd")
    mnist_files.write_idx(p, odd)
    back = mnist_files.read_idx(p)
    assert back.shape == (2, 3, 5) and back.dtype == np.uint8
    np.testing.assert_array_equal(back, odd)
    assert not os.path.exists(p + ".tmp")


def test_read_idx_rejects_damaged_files(flat, tmp_path):
    _, paths = flat
    raw = open(paths["test", "images"], "rb").read()
    cases = {"truncated": raw[:-1], "trailing": raw + b"\0", "short": raw[:2], "header_cut": raw[:10],
             "magic": b"\x00\x00\x0d\x03" + raw[4:], "float_magic": struct.pack(">I", 0x0D01) + raw[4:]}
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ValueError, match=name):
            mnist_files.read_idx(str(p))
    with pytest.raises(FileNotFoundError):
        mnist_files.read_idx(str(tmp_path / "missing"))


def test_bad_arguments():
    with pytest.raises(TypeError, match="uint8"):
        mnist_files.write_idx("/nonexistent/x", np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="uint8"):
        mnist_files.write_idx("/nonexistent/x", [1, 2])
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        mnist_files.write_idx("/nonexistent/x", np.zeros((2, 2), np.uint8))
    with pytest.raises(ValueError, match="test_size"):
        mnist_files.digits_as_mnist(test_size=0)
    with pytest.raises(ValueError, match="test_size"):
        mnist_files.digits_as_mnist(test_size=1797)
    with pytest.raises(TypeError, match="seed"):
        mnist_files.digits_as_mnist(seed=1.5)
    with pytest.raises(ValueError, match="seed"):
        mnist_files.digits_as_mnist(seed=-1)


def test_tutorial_layout_and_copy_from_source(flat, tmp_path):
    d, paths = flat
    base = mnist_files.write_tutorial_layout(str(tmp_path / "run"), source=str(d))
    assert base == str(tmp_path / "run" / "MNIST_Data")
    assert sorted(os.listdir(os.path.join(base, "train"))) == ["train-images-idx3-ubyte", "train-labels-idx1-ubyte"]
    assert sorted(os.listdir(os.path.join(base, "test"))) == ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    for split, name in (("train", "train-images-idx3-ubyte"), ("test", "t10k-labels-idx1-ubyte")):
        assert open(os.path.join(base, split, name), "rb").read() == open(os.path.join(d, name), "rb").read()
    (tmp_path / "partial").mkdir()
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        mnist_files.write_tutorial_layout(str(tmp_path / "run2"), source=str(tmp_path / "partial"))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        mnist_files.write_mnist(str(tmp_path / "afile"))


def test_command_line(tmp_path, capsys):
    script = os.path.join(EXAMPLES, "mnist_files.py")
    out = subprocess.run([sys.executable, script, str(tmp_path / "t"), "--layout", "tutorial"],
                         capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split()
    assert len(listed) == 4 and all(os.path.isfile(p) for p in listed)
    assert os.path.isfile(tmp_path / "t" / "MNIST_Data" / "test" / "t10k-images-idx3-ubyte")
    assert mnist_files.main([str(tmp_path / "u"), "--test-size", "5000"]) == 2
    assert "test_size must be in 1..1796, got 5000" in capsys.readouterr().err
