"""MNIST-format idx files made from scikit-learn's handwritten digits, for programs and tutorials that read MNIST.

scikit-learn ships 1,797 grayscale 8x8 digits (values 0..16, 10 classes) with the package, so no download is needed.
Each digit is scaled to 0..255, resized to 20x20 with Pillow (bicubic; the images are square, so the aspect ratio is
kept) and centred in a 28x28 uint8 image with a 4-pixel zero border, as MNIST centres its 20x20 digits in 28x28. A
fixed-seed permutation splits them into 1,500 training and 297 test images.

The files are the uncompressed idx format of http://yann.lecun.com/exdb/mnist/ (the format MindSpore's
`MnistDataset` reads): a big-endian uint32 magic number (2051 for images: 0x0803 = unsigned byte, 3 dimensions; 2049
for labels: 0x0801, 1 dimension), one big-endian uint32 per dimension, then the uint8 values in C order.

    python examples/mnist_files.py OUT_DIR [--layout flat|tutorial] [--seed 0] [--test-size 297]

`flat` (the default) writes the four files into OUT_DIR; `tutorial` writes the layout MindSpore's tutorials have
after their download step: OUT_DIR/MNIST_Data/train/train-{images-idx3,labels-idx1}-ubyte and
OUT_DIR/MNIST_Data/test/t10k-{images-idx3,labels-idx1}-ubyte.
"""
import argparse
import os
import struct
import sys

import numpy as np

__all__ = ["digits_as_mnist", "write_idx", "read_idx", "write_mnist", "write_tutorial_layout", "FILE_NAMES",
           "IMAGE_MAGIC", "LABEL_MAGIC"]

IMAGE_MAGIC = 2051  #: idx magic number of an (N, rows, cols) uint8 file
LABEL_MAGIC = 2049  #: idx magic number of an (N,) uint8 file
#: file names MnistDataset looks for, by (split, kind)
FILE_NAMES = {
    ("train", "images"): "train-images-idx3-ubyte",
    ("train", "labels"): "train-labels-idx1-ubyte",
    ("test", "images"): "t10k-images-idx3-ubyte",
    ("test", "labels"): "t10k-labels-idx1-ubyte",
}
IMAGE_SIZE = 28  # MNIST's image side
DIGIT_BOX = 20  # side of the box MNIST fits each digit into
DEFAULT_TEST_SIZE = 297  # 1797 digits -> 1500 train + 297 test


def digits_as_mnist(seed=0, test_size=DEFAULT_TEST_SIZE):
    """scikit-learn's digits as MNIST-like arrays, split with a fixed seed.

    Args:
        seed (int): seed of the NumPy `default_rng` permutation that splits the 1,797 digits. Default 0.
        test_size (int): number of test images, 1..1796. Default 297 (leaving 1,500 for training).

    Returns:
        ((train_images, train_labels), (test_images, test_labels)): images uint8 (N, 28, 28) in 0..255 (a 20x20
        bicubic Pillow resize of the 8x8 digit times 255/16, rounded, centred with a 4-pixel zero border), labels
        uint8 (N,) in 0..9.

    Raises:
        TypeError: `seed` or `test_size` is not an int.
        ValueError: `test_size` is outside 1..1796 or `seed` is negative.
    """
    from PIL import Image
    from sklearn.datasets import load_digits

    for name, value in (("seed", seed), ("test_size", test_size)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"digits_as_mnist(): {name} must be an int, got {type(value).__name__} {value!r}")
    if seed < 0:
        raise ValueError(f"digits_as_mnist(): seed must be >= 0, got {seed}")
    digits = load_digits()
    x, y = digits.images, digits.target
    if not 1 <= test_size < len(x):
        raise ValueError(f"digits_as_mnist(): test_size must be in 1..{len(x) - 1}, got {test_size}")
    small = np.rint(x * (255.0 / 16.0)).astype(np.uint8)  # (N, 8, 8) in 0..255
    images = np.zeros((len(x), IMAGE_SIZE, IMAGE_SIZE), np.uint8)
    lo = (IMAGE_SIZE - DIGIT_BOX) // 2
    for i, img in enumerate(small):
        big = Image.fromarray(img).resize((DIGIT_BOX, DIGIT_BOX), Image.Resampling.BICUBIC)
        images[i, lo:lo + DIGIT_BOX, lo:lo + DIGIT_BOX] = np.asarray(big)
    labels = y.astype(np.uint8)
    perm = np.random.default_rng(seed).permutation(len(x))
    test, train = perm[:test_size], perm[test_size:]
    return (images[train], labels[train]), (images[test], labels[test])


def write_idx(path, array):
    """Writes a uint8 array of 1 or 3 dimensions as an uncompressed idx file (the MNIST format).

    Args:
        path (str): the file to write (replaced if present; written to `path + '.tmp'` and renamed, so a crash never
            leaves a truncated file under `path`).
        array (numpy.ndarray): uint8, shape (N,) (labels, magic 2049) or (N, rows, cols) (images, magic 2051).

    Raises:
        TypeError: `array` is not a uint8 NumPy array.
        ValueError: `array` has a number of dimensions other than 1 or 3.
    """
    if not isinstance(array, np.ndarray) or array.dtype != np.uint8:
        raise TypeError(f"write_idx(): array must be a uint8 numpy.ndarray, got "
                        f"{type(array).__name__} {getattr(array, 'dtype', '')}".rstrip())
    if array.ndim not in (1, 3):
        raise ValueError(f"write_idx(): array must have 1 (labels) or 3 (images) dimensions, got shape {array.shape}")
    header = struct.pack(">I", 0x0800 | array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        f.write(np.ascontiguousarray(array).tobytes())
    os.replace(tmp, path)


def read_idx(path):
    """Reads an uncompressed uint8 idx file (magic 0x08 type byte, 1 to 4 dimensions).

    Returns:
        numpy.ndarray: uint8 with the dimensions in the header.

    Raises:
        FileNotFoundError: `path` does not exist.
        ValueError: the magic number is not that of a uint8 idx file, or the file size does not match its header
            (truncated or trailing bytes); the message names the file.
    """
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise ValueError(f"read_idx(): {path}: {len(data)} bytes is too short for an idx header")
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    if magic >> 8 != 0x08 or not 1 <= ndim <= 4:
        raise ValueError(f"read_idx(): {path}: magic number {magic} is not that of a uint8 idx file "
                         f"(expected {LABEL_MAGIC} for labels or {IMAGE_MAGIC} for images)")
    offset = 4 + 4 * ndim
    if len(data) < offset:
        raise ValueError(f"read_idx(): {path}: truncated header ({len(data)} bytes, need {offset})")
    shape = struct.unpack(f">{ndim}I", data[4:offset])
    expected = offset + int(np.prod(shape, dtype=np.int64))
    if len(data) != expected:
        raise ValueError(f"read_idx(): {path}: {len(data)} bytes, but the header {shape} needs {expected}")
    return np.frombuffer(data, np.uint8, offset=offset).reshape(shape).copy()


def _check_dir(func, directory):
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"{func}(): directory must be a str or os.PathLike, got {type(directory).__name__}")
    directory = os.fspath(directory)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"{func}(): {directory!r} exists and is not a directory")
    return directory


def write_mnist(directory, seed=0, test_size=DEFAULT_TEST_SIZE):
    """Writes the four MNIST files (see FILE_NAMES) made from the digits into `directory` (created if missing).

    Returns:
        dict: {(split, kind): path} of the files written, split in ("train", "test"), kind in ("images", "labels").

    Raises:
        TypeError / ValueError: as digits_as_mnist, or `directory` is not a path / is an existing non-directory.
    """
    directory = _check_dir("write_mnist", directory)
    arrays = digits_as_mnist(seed=seed, test_size=test_size)
    os.makedirs(directory, exist_ok=True)
    paths = {}
    for split, (images, labels) in zip(("train", "test"), arrays):
        for kind, array in (("images", images), ("labels", labels)):
            paths[split, kind] = os.path.join(directory, FILE_NAMES[split, kind])
            write_idx(paths[split, kind], array)
    return paths


def write_tutorial_layout(root, seed=0, test_size=DEFAULT_TEST_SIZE, source=None):
    """Writes the directory layout MindSpore's tutorials have after downloading MNIST_Data.zip.

    root/MNIST_Data/train holds train-images-idx3-ubyte and train-labels-idx1-ubyte, root/MNIST_Data/test holds
    t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte.

    Args:
        root (str): the directory that receives MNIST_Data (created if missing).
        seed, test_size: as digits_as_mnist (used when `source` is None).
        source (str, optional): a directory holding the four MNIST files (e.g. the real MNIST): they are copied
            instead of writing the digits. Default None.

    Returns:
        str: the path of root/MNIST_Data.

    Raises:
        FileNotFoundError: `source` lacks one of the four files.
    """
    import shutil

    root = _check_dir("write_tutorial_layout", root)
    base = os.path.join(root, "MNIST_Data")
    if source is None:
        arrays = digits_as_mnist(seed=seed, test_size=test_size)
    else:
        source = _check_dir("write_tutorial_layout", source)
        missing = [n for n in FILE_NAMES.values() if not os.path.isfile(os.path.join(source, n))]
        if missing:
            raise FileNotFoundError(f"write_tutorial_layout(): {source!r} lacks {', '.join(missing)}")
    for i, split in enumerate(("train", "test")):
        d = os.path.join(base, split)
        os.makedirs(d, exist_ok=True)
        for j, kind in enumerate(("images", "labels")):
            path = os.path.join(d, FILE_NAMES[split, kind])
            if source is None:
                write_idx(path, arrays[i][j])
            else:
                shutil.copyfile(os.path.join(source, FILE_NAMES[split, kind]), path)
    return base


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="directory to write into (created if missing)")
    parser.add_argument("--layout", choices=("flat", "tutorial"), default="flat",
                        help="flat: the four files in OUT_DIR; tutorial: OUT_DIR/MNIST_Data/{train,test}/")
    parser.add_argument("--seed", type=int, default=0, help="seed of the train/test split (default 0)")
    parser.add_argument("--test-size", type=int, default=DEFAULT_TEST_SIZE,
                        help=f"number of test images (default {DEFAULT_TEST_SIZE})")
    args = parser.parse_args(argv)
    try:
        if args.layout == "flat":
            paths = sorted(write_mnist(args.out_dir, seed=args.seed, test_size=args.test_size).values())
        else:
            base = write_tutorial_layout(args.out_dir, seed=args.seed, test_size=args.test_size)
            paths = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(base) for f in fs)
    except (TypeError, ValueError, OSError) as e:
        print(f"mnist_files: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
