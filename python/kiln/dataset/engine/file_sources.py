"""File sources of kiln.dataset: MnistDataset (idx files), Cifar10Dataset (binary batches), ImageFolderDataset (one
folder per class) and CSVDataset. Files are read with NumPy (binary formats), Pillow (image decoding) and Python's
csv module; a source reads its files once, when first needed, and keeps them (read-only) for all its iterators."""
import csv
import enum
import io
import math
import os
import threading

import numpy as np

from .cache import check_cache
from ..samplers import BuiltinSampler, DistributedSampler, RandomSampler, SequentialSampler
from ._common import FileRow, column_list
from .sources import MappableSource, _check_source_args


def _check_dir(cls, dataset_dir):
    if not isinstance(dataset_dir, (str, os.PathLike)):
        raise TypeError(f"{cls}: dataset_dir must be a str path, but got {type(dataset_dir).__name__}.")
    d = os.fspath(dataset_dir)
    if not os.path.isdir(d):
        raise ValueError(f"{cls}: The folder {d} does not exist or is not a directory or permission denied!")
    return d


def _check_usage(cls, usage, allowed=("train", "test", "all")):
    if usage is None:
        return "all"
    if not isinstance(usage, str):
        raise TypeError(f"{cls}: usage must be a str, but got {type(usage).__name__}.")
    if usage not in allowed:
        raise ValueError(f"{cls}: Input usage is not within the valid set of {list(allowed)}, got {usage!r}.")
    return usage


class _Lazy:
    """Loads a source's arrays once, thread-safely."""

    def __init__(self, load):
        self._load, self._value, self._lock = load, None, threading.Lock()

    def get(self):
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
        return self._value

    def __getstate__(self):  # travels to spawned workers loaded
        return {"_value": self.get()}

    def __setstate__(self, state):
        self._load, self._value, self._lock = None, state["_value"], threading.Lock()


def _read_idx(path, magic, ndim):
    with open(path, "rb") as f:
        data = f.read()
    head = 4 + 4 * ndim
    if len(data) < head:
        raise RuntimeError(f"MnistDataset: Invalid file, {path} is too short ({len(data)} bytes) for an idx header.")
    got = int.from_bytes(data[:4], "big")
    if got != magic:
        raise RuntimeError(f"MnistDataset: Invalid file, {path} has magic number {got}; expected {magic}.")
    dims = [int.from_bytes(data[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim)]
    need = math.prod(dims)  # a Python int: huge damaged dims cannot wrap around
    if len(data) - head < need:
        raise RuntimeError(f"MnistDataset: Invalid file, {path} holds {len(data) - head} data bytes; its header "
                           f"{dims} needs {need}.")
    return np.frombuffer(data, np.uint8, need, head).reshape(dims)


def _find(d, names):
    for n in names:
        p = os.path.join(d, n)
        if os.path.isfile(p):
            return p
    return None


class _ImageLabelArrays(MappableSource):
    """A source whose files load (lazily, once: `self._data`) into an image array and a label array: columns
    "image" (a copy of one image) and "label" (a 0-d array)."""

    def get_col_names(self):
        return ["image", "label"]

    def _num_rows(self):
        return len(self._data.get()[1])

    def _read(self, i):
        im, lb = self._data.get()
        return im[i].copy(), np.asarray(lb[i])

    def _class_ids(self):
        """Each row's label (PKSampler)."""
        return self._data.get()[1]


class MnistDataset(_ImageLabelArrays):
    """The MNIST idx files in `dataset_dir`: train-images-idx3-ubyte / train-labels-idx1-ubyte and
    t10k-images-idx3-ubyte / t10k-labels-idx1-ubyte (names with '.idx3-ubyte' also accepted).

    Columns: "image" uint8 (28, 28, 1) HWC, "label" uint32 (0-d), as MindSpore.

    Args:
        dataset_dir (str): the folder.
        usage (str, optional): 'train' (60,000 rows in real MNIST), 'test' (10,000) or 'all' (train then test;
            default None = 'all').
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as NumpySlicesDataset.

    Raises:
        ValueError: dataset_dir missing, bad usage. RuntimeError (when first read): a file missing, a wrong magic
        number, a truncated file, image and label counts differing.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        check_cache("MnistDataset", cache)
        super().__init__("MnistDataset", num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        self.dataset_dir = _check_dir("MnistDataset", dataset_dir)
        self.usage = _check_usage("MnistDataset", usage)
        self._data = _Lazy(self._load)

    def _load(self):
        prefixes = {"train": ["train"], "test": ["t10k"], "all": ["train", "t10k"]}[self.usage]
        images, labels = [], []
        for p in prefixes:
            ip = _find(self.dataset_dir, [f"{p}-images-idx3-ubyte", f"{p}-images.idx3-ubyte"])
            lp = _find(self.dataset_dir, [f"{p}-labels-idx1-ubyte", f"{p}-labels.idx1-ubyte"])
            if ip is None or lp is None:
                if self.usage == "all" and ip is None and lp is None:
                    continue
                kind, name = ("image", "images-idx3") if ip is None else ("label", "labels-idx1")
                raise RuntimeError(f"MnistDataset: Invalid file, failed to find the mnist {kind} file "
                                   f"{p}-{name}-ubyte in {self.dataset_dir}.")
            im, lb = _read_idx(ip, 2051, 3), _read_idx(lp, 2049, 1)
            if len(im) != len(lb):
                raise RuntimeError(f"MnistDataset: Invalid data, {ip} holds {len(im)} images but {lp} holds "
                                   f"{len(lb)} labels.")
            images.append(im[..., None])
            labels.append(lb.astype(np.uint32))
        if not images:
            raise RuntimeError(f"MnistDataset: Invalid file, no mnist files found in {self.dataset_dir}.")
        return np.concatenate(images), np.concatenate(labels)


def _cifar_records(op, folder, files, n_labels):
    """The CIFAR binary records of `files` in `folder`: `n_labels` label bytes, then a CHW 3x32x32 uint8 image.
    Returns (images uint8 (N, 32, 32, 3) HWC, labels uint32 (N, n_labels)). RuntimeError naming `op` for a file
    whose size is not a multiple of the record."""
    record = n_labels + 3072
    recs = []
    for n in files:
        raw = np.fromfile(os.path.join(folder, n), dtype=np.uint8)
        if raw.size % record:
            raise RuntimeError(f"{op}: Invalid file, {n} has {raw.size} bytes, not a multiple of the {record}-byte "
                               "record.")
        recs.append(raw.reshape(-1, record))
    r = np.concatenate(recs)
    images = np.ascontiguousarray(r[:, n_labels:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return images, r[:, :n_labels].astype(np.uint32)


class Cifar10Dataset(_ImageLabelArrays):
    """The CIFAR-10 binary batches in `dataset_dir`: data_batch_1.bin ... data_batch_5.bin (train) and test_batch.bin
    (test); each record is 1 label byte then 3072 bytes of a CHW 3x32x32 image.

    Columns: "image" uint8 (32, 32, 3) HWC, "label" uint32 (0-d), as MindSpore.

    Args:
        dataset_dir (str): the folder.
        usage (str, optional): 'train', 'test' or 'all' (default None = 'all': train then test).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as NumpySlicesDataset.

    Raises:
        ValueError: dataset_dir missing, bad usage. RuntimeError (when first read): no batch file, a file whose size is
        not a multiple of 3073 bytes.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        check_cache("Cifar10Dataset", cache)
        super().__init__("Cifar10Dataset", num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id)
        self.dataset_dir = _check_dir("Cifar10Dataset", dataset_dir)
        self.usage = _check_usage("Cifar10Dataset", usage)
        self._data = _Lazy(self._load)

    def _load(self):
        names = sorted(os.listdir(self.dataset_dir))
        train = [n for n in names if n.startswith("data_batch") and n.endswith(".bin")]
        test = [n for n in names if n.startswith("test_batch") and n.endswith(".bin")]
        files = {"train": train, "test": test, "all": train + test}[self.usage]
        if not files:
            raise RuntimeError(f"Cifar10Dataset: Invalid file, no {self.usage} batch file (data_batch_*.bin / "
                               f"test_batch.bin) in {self.dataset_dir}.")
        images, labels = _cifar_records("Cifar10Dataset", self.dataset_dir, files, 1)
        return images, labels[:, 0]


class Cifar100Dataset(_ImageLabelArrays):
    """The CIFAR-100 binary files in `dataset_dir`: train.bin and test.bin; each record is the coarse label byte, the
    fine label byte, then 3072 bytes of a CHW 3x32x32 image.

    Columns: "image" uint8 (32, 32, 3) HWC, "coarse_label" and "fine_label" uint32 (0-d), as MindSpore 2.10. With
    usage 'all' the files are read in name order, test.bin then train.bin, as MindSpore reads them.

    Args:
        dataset_dir (str): the folder.
        usage (str, optional): 'train', 'test' or 'all' (default None = 'all').
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as NumpySlicesDataset.

    Raises:
        ValueError: dataset_dir missing, bad usage. RuntimeError (when first read): no train.bin / test.bin, a file
        whose size is not a multiple of 3074 bytes.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        check_cache("Cifar100Dataset", cache)
        super().__init__("Cifar100Dataset", num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id)
        self.dataset_dir = _check_dir("Cifar100Dataset", dataset_dir)
        self.usage = _check_usage("Cifar100Dataset", usage)
        self._data = _Lazy(self._load)

    _class_ids = None  # two label columns: no PKSampler (ValueError)

    def get_col_names(self):
        return ["image", "coarse_label", "fine_label"]

    def _read(self, i):
        im, lb = self._data.get()
        return im[i].copy(), np.asarray(lb[i, 0]), np.asarray(lb[i, 1])

    def _load(self):
        files = {"train": ["train.bin"], "test": ["test.bin"], "all": ["test.bin", "train.bin"]}[self.usage]
        files = [n for n in files if os.path.isfile(os.path.join(self.dataset_dir, n))]
        if not files:
            raise RuntimeError(f"Cifar100Dataset: Invalid file, no {self.usage} file (train.bin / test.bin) in "
                               f"{self.dataset_dir}.")
        return _cifar_records("Cifar100Dataset", self.dataset_dir, files, 2)


def decode_image(data):
    """Encoded image bytes (np.uint8 1-D) -> RGB uint8 HWC array, with Pillow."""
    from PIL import Image
    with Image.open(io.BytesIO(data.tobytes() if isinstance(data, np.ndarray) else data)) as img:
        return np.asarray(img.convert("RGB"))


class _ImageReader:
    def __init__(self, files, decode):
        self.files, self.decode = files, decode

    def __call__(self, i):
        path, label = self.files[i]
        with open(path, "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8)
        if self.decode:
            try:
                img = decode_image(raw)
            except Exception as e:  # noqa: BLE001 (any decoder failure: re-raised with the path)
                raise RuntimeError(f"ImageFolderDataset: cannot decode {path}: {type(e).__name__}: {e}") from None
            return img, np.asarray(label, dtype=np.int32)
        return FileRow((raw, np.asarray(label, dtype=np.int32)), path)


class ImageFolderDataset(MappableSource):
    """Images in class folders: dataset_dir/<class name>/<file>. Classes are the sorted folder names numbered from 0
    (or `class_indexing`); files are read in sorted order within each class.

    Columns: "image" (decode=False: the file's raw bytes as uint8 1-D; decode=True: RGB uint8 HWC, decoded with
    Pillow) and "label" int32 (0-d), as MindSpore.

    Args:
        dataset_dir (str): the folder.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as NumpySlicesDataset; with
            num_parallel_workers > 1 the files are read (and decoded) in that many threads.
        extensions (list[str], optional): keep only files ending with one of these (case-sensitive, e.g. ".JPEG");
            default: every file.
        class_indexing (dict[str, int], optional): class folder name -> label; only these folders are read.
        decode (bool): decode the images (default False).

    Raises:
        ValueError: dataset_dir missing, a class_indexing folder missing. TypeError: bad argument types.
        RuntimeError (when iterating): a file Pillow cannot decode.
    """

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None):
        check_cache("ImageFolderDataset", cache)
        super().__init__("ImageFolderDataset", num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id)
        self.dataset_dir = _check_dir("ImageFolderDataset", dataset_dir)
        if extensions is not None:
            if isinstance(extensions, str):
                extensions = [extensions]
            if not isinstance(extensions, (list, tuple)) or not all(isinstance(e, str) for e in extensions):
                raise TypeError(f"ImageFolderDataset: extensions must be a list of str, got {extensions!r}.")
        if class_indexing is not None:
            if not isinstance(class_indexing, dict) or not all(
                    isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                    for k, v in class_indexing.items()):
                raise TypeError(f"ImageFolderDataset: class_indexing must be a dict of str to int, got "
                                f"{class_indexing!r}.")
        if not isinstance(decode, bool):
            raise TypeError(f"ImageFolderDataset: decode must be of type bool, but got {decode!r}.")
        self.extensions, self.decode = extensions, decode
        classes = sorted(e for e in os.listdir(self.dataset_dir) if os.path.isdir(os.path.join(self.dataset_dir, e)))
        if class_indexing is None:
            self.class_indexing = {c: i for i, c in enumerate(classes)}
        else:
            missing = [c for c in class_indexing if c not in classes]
            if missing:
                raise ValueError(f"ImageFolderDataset: class_indexing names folder {missing[0]!r}, which is not in "
                                 f"{self.dataset_dir}.")
            self.class_indexing = dict(class_indexing)
        files = []
        for c in classes:
            if c not in self.class_indexing:
                continue
            folder = os.path.join(self.dataset_dir, c)
            for name in sorted(os.listdir(folder)):
                p = os.path.join(folder, name)
                if os.path.isfile(p) and (extensions is None or any(name.endswith(e) for e in extensions)):
                    files.append((p, self.class_indexing[c]))
        self._files = files

    def get_col_names(self):
        return ["image", "label"]

    def get_class_indexing(self):
        """dict: class folder name -> label."""
        return dict(self.class_indexing)

    def num_classes(self):
        """Number of classes read (int)."""
        return len(self.class_indexing)

    def _num_rows(self):
        return len(self._files)

    def _class_ids(self):
        """Each row's label (PKSampler)."""
        return np.array([label for _, label in self._files], dtype=np.int64)

    def _reader(self):
        return _ImageReader(self._files, self.decode)

    def _read(self, i):
        return self._reader()(i)


class Shuffle(str, enum.Enum):
    """Shuffle modes of CSVDataset: GLOBAL (all rows, every epoch), FILES (file order only), INFILE (rows within
    each file, file order kept)."""
    GLOBAL = "global"
    FILES = "files"
    INFILE = "infile"


class _GroupShuffleSampler(BuiltinSampler):
    """Row order for Shuffle.FILES / Shuffle.INFILE over rows grouped by file (then sharded like
    DistributedSampler without shuffle)."""

    _salted = True

    def __init__(self, groups, mode, num_shards, shard_id, num_samples):
        self.groups, self.mode = groups, mode
        self.shard = DistributedSampler(num_shards, shard_id, shuffle=False) if num_shards else None
        super().__init__(num_samples)

    def _size(self, n):
        return self._cap(self.shard._size(n) if self.shard else n)

    def _indices(self, n, rng, epoch):
        if self.mode == Shuffle.FILES:
            order = np.concatenate([self.groups[g] for g in rng.permutation(len(self.groups))] or [[]])
        else:
            order = np.concatenate([g[rng.permutation(len(g))] for g in self.groups] or [[]])
        order = order.astype(np.int64)
        if self.shard:
            order = order[self.shard._indices(n, None, epoch)]
        return order[:self._size(n)]


def shuffle_mode(cls, shuffle):
    """The Shuffle mode of a file source's `shuffle` argument: True → GLOBAL, False → None, a Shuffle as is.
    TypeError otherwise."""
    if isinstance(shuffle, bool):
        return Shuffle.GLOBAL if shuffle else None
    if isinstance(shuffle, Shuffle):
        return shuffle
    raise TypeError(f"{cls}: shuffle must be a bool or a Shuffle mode, got {shuffle!r}.")


def file_sampler(mode, groups, num_samples, num_shards=None, shard_id=None):
    """The sampler of a file source: by Shuffle mode (FILES / INFILE over the rows grouped by file, GLOBAL, None: in
    order), sharded like DistributedSampler when num_shards is given."""
    num_samples = num_samples or None
    if mode in (Shuffle.FILES, Shuffle.INFILE):
        return _GroupShuffleSampler(groups, mode, num_shards, shard_id, num_samples)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=mode is Shuffle.GLOBAL, num_samples=num_samples)
    if mode is Shuffle.GLOBAL:
        return RandomSampler(num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)


def _parse(value, default, where):
    if value == "":
        return default
    try:
        return type(default)(value)
    except ValueError:
        raise RuntimeError(f"CSVDataset: {where}: {value!r} is not a valid {type(default).__name__} (the type of "
                           "its column_defaults entry).") from None


def _csv_records(cls, path, delim):
    """(record number from 1, fields) of the non-empty records of the CSV file `path`. ValueError naming the file
    and the line for a file that is not UTF-8 text or not CSV (docs/decisions/damaged-files.md)."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ValueError(f"{cls}: {path} line {line} is not UTF-8 text (byte {e.start}: "
                         f"{data[e.start:e.start + 1]!r}).") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        for lineno, rec in enumerate(reader, 1):
            if rec:
                yield lineno, rec
    except csv.Error as e:
        raise ValueError(f"{cls}: {path} line {reader.line_num} is not valid CSV: {e}.") from None


class CSVDataset(MappableSource):
    """Rows of CSV files (parsed with Python's csv module: quotes and escaped delimiters handled).

    Columns are strings (NumPy '<U' arrays, which stay np.ndarray in Tensor iterators) unless `column_defaults`
    gives a value per column: int → int32, float → float32, str → str, as MindSpore; an empty field takes the
    default.

    Args:
        dataset_files (str | list[str]): the files, read in this order.
        field_delim (str): one character (default ',').
        column_defaults (list, optional): one int/float/str per column.
        column_names (list[str], optional): default: the first line of each file is a header naming the columns.
        num_samples (int, optional): rows per epoch.
        num_parallel_workers (int, optional): accepted (files are parsed once).
        shuffle (bool | Shuffle): Shuffle.GLOBAL / True (default): all rows in a new random order every epoch;
            Shuffle.FILES: file order only; Shuffle.INFILE: rows within each file; False: in order.
        num_shards, shard_id (int, optional): read one shard of the rows.

    Raises:
        ValueError: a file missing, an empty file list, field_delim not one character, a row with the wrong number
        of fields, a file that is not UTF-8 text or not CSV (naming the file and the line). TypeError: bad argument
        types. RuntimeError: a field not parsing as its column_defaults type.
    """

    def __init__(self, dataset_files, field_delim=",", column_defaults=None, column_names=None, num_samples=None,
                 num_parallel_workers=None, shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None):
        cls = "CSVDataset"
        if isinstance(dataset_files, (str, os.PathLike)):
            dataset_files = [dataset_files]
        if not isinstance(dataset_files, (list, tuple)) or not dataset_files:
            raise TypeError(f"{cls}: dataset_files must be a str or a non-empty list of str, got {dataset_files!r}.")
        files = [os.fspath(f) for f in dataset_files]
        for f in files:
            if not os.path.isfile(f):
                raise ValueError(f"{cls}: The file {f} does not exist or permission denied!")
        if not isinstance(field_delim, str) or len(field_delim) != 1 or field_delim in "\r\n\"":
            raise ValueError(f"{cls}: field_delim must be one character other than quote/newline, got "
                             f"{field_delim!r}.")
        if column_defaults is not None:
            if not isinstance(column_defaults, (list, tuple)) or not all(
                    isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in column_defaults):
                raise TypeError(f"{cls}: column_defaults must be a list of int, float or str, got "
                                f"{column_defaults!r}.")
        names = column_list(cls, "column_names", column_names)
        mode = shuffle_mode(cls, shuffle)
        _check_source_args(cls, num_samples, None, num_shards, shard_id)
        rows, groups = [], []
        header = names
        for f in files:
            start = len(rows)
            for lineno, rec in _csv_records(cls, f, field_delim):
                if names is None and lineno == 1:
                    header = header or rec
                    continue
                rows.append((f, lineno, rec))
            groups.append(np.arange(start, len(rows)))
        if header is None:
            raise ValueError(f"{cls}: no column_names and no header line in {files[0]}.")
        ncols = len(header)
        where = "" if names is not None else f" (the header line of {files[0]})"
        if column_defaults is not None and len(column_defaults) != ncols:
            raise ValueError(f"{cls}: {len(column_defaults)} column_defaults for {ncols} columns {header}{where}.")
        cols = [[] for _ in range(ncols)]
        for f, lineno, rec in rows:
            if len(rec) != ncols:
                raise ValueError(f"{cls}: {f} line {lineno} has {len(rec)} fields; expected {ncols} ({header}).")
            for k, v in enumerate(rec):
                cols[k].append(v if column_defaults is None else
                               _parse(v, column_defaults[k], f"{f} line {lineno} column {header[k]!r}"))
        dtypes = [(np.int32 if isinstance(d, int) else np.float32 if isinstance(d, float) else np.str_)
                  for d in (column_defaults or [""] * ncols)]
        self._cols = [np.asarray(c, dtype=t) if c else np.zeros(0, t) for c, t in zip(cols, dtypes)]
        self._names = list(header)
        if len(set(self._names)) != ncols:
            raise ValueError(f"{cls}: duplicate column names {self._names}{where}.")
        sampler = file_sampler(mode, groups, num_samples, num_shards, shard_id)
        super().__init__(cls, None, num_parallel_workers, None, sampler)
        self.num_shards, self.shard_id = num_shards, shard_id
        self.num_parallel_workers = 1

    def get_col_names(self):
        return list(self._names)

    def _num_rows(self):
        return len(self._cols[0])

    def _read(self, i):
        return tuple(np.asarray(c[i]) for c in self._cols)
