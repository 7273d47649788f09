"""Shared data for the MindRecord tests: the fixture folder and the rows its generator wrote."""
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(__file__), "data", "mindrecord_ms210")

# the schema and rows of tests/python/data/mindrecord_ms210/make_ms210_mindrecord.py
SCHEMA = {"label": {"type": "int32"}, "big": {"type": "int64"}, "score": {"type": "float32"},
          "ratio": {"type": "float64"}, "name": {"type": "string"}, "raw": {"type": "bytes"},
          "ids": {"type": "int32", "shape": [-1]}, "mat": {"type": "float32", "shape": [2, 2]},
          "wide": {"type": "int64", "shape": [-1]}}


def fixture_row(i):
    return {"label": i - 3, "big": -(2**40) * i, "score": 0.1 * i, "ratio": 1.0 / (i + 1), "name": "név" + "x" * i,
            "raw": bytes(range(i, i + 3 + i)),
            "ids": np.array([i, -i, 300 * i, -70000 * i, 2**31 - 1][:i + 1], np.int32),
            "mat": np.arange(4, dtype=np.float32).reshape(2, 2) * i - 0.5,
            "wide": np.array([2**40 + i, -5, i], np.int64)}


def write(path, schema, calls, shard_num=1, page_size=None, header_size=None, index=None, desc=None):
    """Writes `calls` (a list of lists of rows) with kiln's FileWriter; returns the writer."""
    from kiln.mindrecord import FileWriter
    w = FileWriter(str(path), shard_num=shard_num, overwrite=True)
    if page_size:
        w.set_page_size(page_size)
    if header_size:
        w.set_header_size(header_size)
    w.add_schema(schema, desc)
    if index:
        w.add_index(index)
    for rows in calls:
        w.write_raw_data(rows)
    w.commit()
    return w


def same(a, b):
    """Equal dtype, shape and values (bytes arrays compared by their bytes)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
