"""Cifar10ToMR: CIFAR-10's Python archive (cifar-10-batches-py) as two MindRecord files, MindSpore's
`mindspore.mindrecord.Cifar10ToMR` (tutorial dataset/optimize.ipynb)."""
import hashlib
import io
import logging
import os
import pickle

import numpy as np

from .errors import ParamValueError, PathNotExistsError
from .filewriter import FileWriter

_log = logging.getLogger("kiln.mindrecord")

# MD5 of the official files; another file only logs a warning (MindSpore's CifarMD5Validator)
_MD5 = {"data_batch_1": "c99cafc152244af753f735de768cd75f", "data_batch_2": "d4bba439e000b95fd0a9bffe97cbabec",
        "data_batch_3": "54ebc095f3ab1f0389bbae665268c751", "data_batch_4": "634d18415352ddfa80567beed471001a",
        "data_batch_5": "482c414d41f54cd18b22e5b47cb7c3cb", "test_batch": "40351d587109b95175f43aff81a1287e"}
_FORBIDDEN = set('\\/:*?"<>|`&\';')


def _check_filename(path):
    """MindSpore's check_filename: a non-empty str, not ending in '/', whose file name has none of \\/:*?"<>|`&;'
    and does not start or end with a space. Raises ParamValueError."""
    if not path:
        raise ParamValueError("File path is not allowed None or empty!")
    if not isinstance(path, str):
        raise ParamValueError(f"File path: {path} is not string.")
    if path.endswith("/"):
        raise ParamValueError("File path can not end with '/'")
    name = os.path.basename(path)
    if set(name) & _FORBIDDEN:
        raise ParamValueError("File name should not contains \\/:*?\\\"<>|`&;\\'")
    if name.startswith(" ") or name.endswith(" "):
        raise ParamValueError("File name should not start/end with space.")


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickles plain data and NumPy arrays only (MindSpore's RestrictedUnpickler): any other global is refused."""

    def find_class(self, module, name):
        if module in ("numpy.core.multiarray", "numpy._core.multiarray") and name == "_reconstruct":
            import importlib
            try:  # NumPy 2 keeps it in numpy._core (numpy.core warns)
                return importlib.import_module("numpy._core.multiarray")._reconstruct
            except ImportError:
                return importlib.import_module("numpy.core.multiarray")._reconstruct
        if module == "numpy":
            return getattr(np, name)
        raise pickle.UnpicklingError(f"global '{module}.{name}' is forbidden")


def _load(folder, name):
    path = os.path.join(folder, name)
    with open(path, "rb") as f:
        raw = f.read()
    if hashlib.md5(raw).hexdigest() != _MD5.get(name):
        _log.warning("The MD5 value of %s does not match the official CIFAR10 file.This file may pose a security "
                     "risk.", name)
    batch = _NumpyOnlyUnpickler(io.BytesIO(raw), encoding="bytes").load()
    images = np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return images, np.asarray(batch[b"labels"], dtype=np.int64).reshape(-1)


class Cifar10ToMR:
    """Converts CIFAR-10's Python version (the pickled data_batch_1..5 and test_batch of cifar-10-python.tar.gz)
    to MindRecord: `destination` gets the 50,000 training images and `destination + "_test"` the 10,000 test
    images, each row {"id": int64 (0-based within the file), "label": int64, "data": bytes (the image as JPEG)},
    schema descriptions "img_train" / "img_test", one shard each, as MindSpore 2.10. The JPEG is OpenCV's
    `imencode(".jpeg", BGR image)` at its defaults, as MindSpore writes it (decode with vision.Decode).

    Training files are read in os.listdir's order, as MindSpore (so the files are byte for byte MindSpore's on the
    same folder; the order of the training rows follows the directory listing, not the file names).
    A file whose MD5 is not the official one logs a warning (as MindSpore); the pickles are read with an
    unpickler that only allows NumPy arrays (as MindSpore's).

    Args:
        source (str): the folder holding data_batch_* and test_batch.
        destination (str): the MindRecord file to write (its folder must exist; no file of that name).

    Raises:
        ParamValueError: a bad source or destination path (MindSpore's check_filename).
        PathNotExistsError: source has no data_batch_* or no test_batch file.
    """

    def __init__(self, source, destination):
        _check_filename(source)
        if not os.path.isdir(source):
            raise PathNotExistsError(source)
        files = os.listdir(source)
        if not any(f.startswith("data_batch_") for f in files):
            raise PathNotExistsError("data_batch_*")
        if not any(f.startswith("test_batch") for f in files):
            raise PathNotExistsError("test_batch")
        _check_filename(destination)
        self.source, self.destination = source, destination

    def transform(self, fields=None):
        """Writes the two MindRecord files; `fields` (list of str, optional) become index fields (FileWriter's
        add_index, e.g. ['label']). Returns SUCCESS (0).

        Raises:
            ValueError: fields not None or a list. FileWriter's errors (an existing file, bad index fields).
        """
        return self.run(fields)

    def run(self, fields=None):
        """Same as transform (MindSpore's name for the work transform runs in a thread)."""
        if fields and not isinstance(fields, list):
            raise ValueError("The parameter fields should be None or list")
        # os.listdir's order, as MindSpore (re.match("data_batch_*")): the same files give the same bytes
        train = [f for f in os.listdir(self.source) if f.startswith("data_batch")]
        parts = [_load(self.source, f) for f in train]
        images = np.concatenate([p[0] for p in parts])
        labels = np.concatenate([p[1] for p in parts])
        test_images, test_labels = _load(self.source, "test_batch")
        self._write(self.destination, images, labels, fields, "img_train")
        self._write(self.destination + "_test", test_images, test_labels, fields, "img_test")
        return 0

    @staticmethod
    def _write(file_name, images, labels, fields, description):
        import cv2
        rows = []
        for i, (img, label) in enumerate(zip(images, labels)):
            ok, jpeg = cv2.imencode(".jpeg", np.ascontiguousarray(img[..., ::-1]))
            if not ok:
                raise RuntimeError(f"Cifar10ToMR: OpenCV could not encode image {i} as JPEG.")
            rows.append({"id": i, "data": jpeg.tobytes(), "label": int(label)})
        writer = FileWriter(file_name, 1)
        writer.add_schema({"id": {"type": "int64"}, "label": {"type": "int64"}, "data": {"type": "bytes"}},
                          description)
        if fields and isinstance(fields, list):
            writer.add_index(fields)
        writer.write_raw_data(rows)
        writer.commit()
