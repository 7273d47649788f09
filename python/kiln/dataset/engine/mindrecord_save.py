"""Dataset.save: a pipeline's rows written as MindRecord files (kiln.mindrecord.FileWriter), with MindSpore 2.10's
implicit type casts and schema rules."""
import os

import numpy as np

_CAST = {"b": "int32", "i1": "int32", "u1": "int32", "i2": "int32", "u2": "int32", "i4": "int32", "u4": "int64",
         "i8": "int64", "u8": "int64", "f2": "float32", "f4": "float32", "f8": "float64"}
_CHUNK = 1000  # rows per write_raw_data call (each call spreads its rows over the files)


def _field(name, arr):
    """The MindRecord schema entry of a column from its first value (MindSpore's rules)."""
    kind = arr.dtype.kind
    if kind in "US":
        if arr.size != 1 or arr.ndim > 1:
            raise RuntimeError(f"save: Invalid data, mindrecord can not support multi-dimensional "
                               f"{'string' if kind == 'U' else 'bytes'}: column {name!r} has shape {arr.shape}.")
        return {"type": "string" if kind == "U" else "bytes"}
    key = "b" if kind == "b" else f"{kind}{arr.dtype.itemsize}"
    if key not in _CAST:
        raise RuntimeError(f"save: column {name!r} has dtype {arr.dtype}, which MindRecord cannot store.")
    if arr.ndim == 0:
        return {"type": _CAST[key]}
    return {"type": _CAST[key], "shape": [-1, *arr.shape[1:]]}


def _value(name, spec, arr, row):
    t = spec["type"]
    if t == "string":
        if arr.dtype.kind != "U" or arr.size != 1:
            raise RuntimeError(f"save: row {row} column {name!r}: expected one str like the first row, got "
                               f"{arr.dtype} {arr.shape}.")
        return str(arr.reshape(()))
    if t == "bytes":
        if arr.dtype.kind != "S" or arr.size != 1:
            raise RuntimeError(f"save: row {row} column {name!r}: expected one bytes value like the first row, got "
                               f"{arr.dtype} {arr.shape}.")
        return arr.reshape(()).item()
    if arr.dtype.kind not in "biuf":
        raise RuntimeError(f"save: row {row} column {name!r}: expected numbers like the first row, got {arr.dtype}.")
    if "shape" not in spec:
        if arr.ndim:
            raise RuntimeError(f"save: row {row} column {name!r}: expected a scalar like the first row, got shape "
                               f"{arr.shape}.")
        return arr.astype(t).item()
    if arr.ndim != len(spec["shape"]) or list(arr.shape[1:]) != spec["shape"][1:]:
        raise RuntimeError(f"save: row {row} column {name!r} has shape {arr.shape}; the first row fixed "
                           f"{spec['shape']} (only the first dimension may vary).")
    return np.ascontiguousarray(arr, dtype=t)


def save(dataset, file_name, num_files=1, file_type="mindrecord"):
    """Writes one epoch of `dataset` into MindRecord files (see Dataset.save)."""
    from ...mindrecord import FileWriter
    if not isinstance(file_name, (str, os.PathLike)) or not os.fspath(file_name):
        raise TypeError(f"save: file_name must be a non-empty str, but got {file_name!r}.")
    if not isinstance(num_files, int) or isinstance(num_files, bool):
        raise TypeError(f"save: num_files must be of type int, but got {num_files!r}.")
    if not 1 <= num_files <= 1000:
        raise ValueError(f"save: num_files must be in [1, 1000], but got {num_files}.")
    if file_type != "mindrecord":
        raise ValueError(f"save: file_type must be 'mindrecord' (the only format), but got {file_type!r}.")
    names = dataset.get_col_names()
    writer = FileWriter(os.fspath(file_name), shard_num=num_files, overwrite=False)
    it = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    schema, rows = None, []
    try:
        for k, values in enumerate(it):
            if schema is None:
                schema = {n: _field(n, np.asarray(v)) for n, v in zip(names, values)}
                writer.add_schema(schema, "mindrecord")
            rows.append({n: _value(n, schema[n], np.asarray(v), k) for n, v in zip(names, values)})
            if len(rows) == _CHUNK:
                writer.write_raw_data(rows)
                rows = []
    finally:
        it.stop()
    if schema is None:
        raise RuntimeError("save: the dataset is empty; there is no row to take the schema from.")
    if rows:
        writer.write_raw_data(rows)
    writer.commit()
